package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
)

// The account ports of sign-up, login, sessions, the handoff and password
// reset; invitations, onboarding and administration are in admin.go.
var (
	_ account.SignupStore    = (*Tx)(nil)
	_ account.LoginStore     = (*Tx)(nil)
	_ account.SessionAdmin   = (*Tx)(nil)
	_ account.HandoffStore   = (*Tx)(nil)
	_ account.ResetMailStore = (*Tx)(nil)
	_ account.ResetStore     = (*Tx)(nil)
)

// UserDefaultWorkspace implements account.LoginStore: the user's oldest
// active membership, "" when none.
func (tx *Tx) UserDefaultWorkspace(ctx context.Context, userID string) (string, error) {
	var ws []string
	err := tx.idb.NewRaw(`SELECT m.workspace_id FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = ? AND m.status = ? ORDER BY m.created_at, m.workspace_id LIMIT 1`,
		userID, access.MembershipActive).Scan(ctx, &ws)
	if err != nil {
		return "", errf("store.UserDefaultWorkspace", err)
	}
	if len(ws) == 0 {
		return "", nil
	}
	return ws[0], nil
}

// CredentialInsert implements account.SignupStore and account.ResetStore.
func (tx *Tx) CredentialInsert(ctx context.Context, c account.PasswordCredential) error {
	const op = "store.CredentialInsert"
	res, err := tx.idb.NewRaw(`INSERT INTO user_credentials (user_id, password_hash, email_verified_at, password_changed_at)
		VALUES (?, ?, ?, ?) ON CONFLICT (user_id) DO NOTHING`, c.UserID, c.PasswordHash, c.EmailVerifiedAt, c.PasswordChangedAt).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.E(op, fault.Conflict, "The user already has a password.")
	}
	return nil
}

// CredentialGet implements account.LoginStore, account.ResetStore and
// account.JoinStore.
func (tx *Tx) CredentialGet(ctx context.Context, userID string) (account.PasswordCredential, error) {
	var r struct {
		UserID            string     `bun:"user_id"`
		PasswordHash      string     `bun:"password_hash"`
		EmailVerifiedAt   *time.Time `bun:"email_verified_at"`
		PasswordChangedAt time.Time  `bun:"password_changed_at"`
	}
	err := tx.idb.NewRaw(`SELECT user_id, password_hash, email_verified_at, password_changed_at FROM user_credentials
		WHERE user_id = ?`, userID).Scan(ctx, &r)
	if err != nil {
		return account.PasswordCredential{}, notFound("store.CredentialGet", err)
	}
	return account.PasswordCredential{UserID: r.UserID, PasswordHash: r.PasswordHash, EmailVerifiedAt: utcPtr(r.EmailVerifiedAt),
		PasswordChangedAt: r.PasswordChangedAt.UTC()}, nil
}

// CredentialEmailVerified implements account.SignupStore and
// account.ResetStore.
func (tx *Tx) CredentialEmailVerified(ctx context.Context, userID string, at time.Time) error {
	res, err := tx.idb.NewRaw(`UPDATE user_credentials SET email_verified_at = COALESCE(email_verified_at, ?) WHERE user_id = ?`,
		at, userID).Exec(ctx)
	return affected("store.CredentialEmailVerified", res, err)
}

// CredentialPasswordSet implements account.ResetStore.
func (tx *Tx) CredentialPasswordSet(ctx context.Context, userID, hash string, at time.Time) error {
	res, err := tx.idb.NewRaw(`UPDATE user_credentials SET password_hash = ?, password_changed_at = ? WHERE user_id = ?`,
		hash, at, userID).Exec(ctx)
	return affected("store.CredentialPasswordSet", res, err)
}

// CodeInsert implements account.SignupStore, account.HandoffStore,
// account.ResetMailStore and account.InviteStore.
func (tx *Tx) CodeInsert(ctx context.Context, c account.Code) error {
	payload := c.Payload
	if payload == "" {
		payload = "{}"
	}
	_, err := tx.idb.NewRaw(`INSERT INTO account_codes (digest, purpose, user_id, email, tenant_id, workspace_id, session_id,
		payload, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Digest, string(c.Purpose), c.UserID, c.Email, c.TenantID, c.WorkspaceID, c.SessionID, payload, c.CreatedBy,
		c.CreatedAt, c.ExpiresAt).Exec(ctx)
	return errf("store.CodeInsert", err)
}

// CodeConsume implements account.CodeConsumer with one compare-and-set UPDATE:
// of concurrent consumers exactly one sees a row affected.
func (tx *Tx) CodeConsume(ctx context.Context, purpose account.Purpose, digest string, at time.Time) (account.Code, bool, error) {
	const op = "store.CodeConsume"
	res, err := tx.idb.NewRaw(`UPDATE account_codes SET used_at = ? WHERE digest = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?`,
		at, digest, string(purpose), at).Exec(ctx)
	if err != nil {
		return account.Code{}, false, errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return account.Code{}, false, errf(op, err)
	}
	var r struct {
		Digest      string     `bun:"digest"`
		Purpose     string     `bun:"purpose"`
		UserID      string     `bun:"user_id"`
		Email       string     `bun:"email"`
		TenantID    string     `bun:"tenant_id"`
		WorkspaceID string     `bun:"workspace_id"`
		SessionID   string     `bun:"session_id"`
		Payload     string     `bun:"payload"`
		CreatedBy   string     `bun:"created_by"`
		CreatedAt   time.Time  `bun:"created_at"`
		ExpiresAt   time.Time  `bun:"expires_at"`
		UsedAt      *time.Time `bun:"used_at"`
	}
	err = tx.idb.NewRaw(`SELECT digest, purpose, user_id, email, tenant_id, workspace_id, session_id, payload, created_by,
		created_at, expires_at, used_at FROM account_codes WHERE digest = ? AND purpose = ?`, digest, string(purpose)).Scan(ctx, &r)
	if err != nil {
		return account.Code{}, false, notFound(op, err)
	}
	return account.Code{Digest: r.Digest, Purpose: account.Purpose(r.Purpose), UserID: r.UserID, Email: r.Email,
		TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, SessionID: r.SessionID, Payload: r.Payload, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), UsedAt: utcPtr(r.UsedAt)}, n == 1, nil
}

// SessionGet implements account.SessionReader.
func (tx *Tx) SessionGet(ctx context.Context, id string) (account.Session, error) {
	sa, err := tx.sessionBy(ctx, "store.SessionGet", "id", "", id)
	return sa.Session, err
}

// SessionListActive implements account.SessionAdmin.
func (tx *Tx) SessionListActive(ctx context.Context, userID string, now time.Time) ([]account.Session, error) {
	const op = "store.SessionListActive"
	rows, err := tx.idb.QueryContext(ctx, sessionSelect+` WHERE s.user_id = ? AND s.revoked_at IS NULL AND s.expires_at > ?
		ORDER BY s.created_at DESC, s.id DESC`, userID, now)
	if err != nil {
		return nil, errf(op, err)
	}
	defer rows.Close()
	var out []account.Session
	for rows.Next() {
		sa, _, err := scanSession(rows)
		if err != nil {
			return nil, errf(op, err)
		}
		out = append(out, sa.Session)
	}
	return out, errf(op, rows.Err())
}

// SessionRevoke implements account.SessionAdmin.
func (tx *Tx) SessionRevoke(ctx context.Context, id string, at time.Time) error {
	res, err := tx.idb.NewRaw(`UPDATE sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, at, id).Exec(ctx)
	if err := affected("store.SessionRevoke", res, err); err != nil {
		return err
	}
	return errf("store.SessionRevoke", tx.credentialsChanged(ctx, "s:"+id))
}

// SessionRevokeOthers implements account.SessionAdmin and
// account.ResetStore.
func (tx *Tx) SessionRevokeOthers(ctx context.Context, userID, keepID string, at time.Time) (int, error) {
	const op = "store.SessionRevokeOthers"
	res, err := tx.idb.NewRaw(`UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND id <> ? AND revoked_at IS NULL AND expires_at > ?`,
		at, userID, keepID, at).Exec(ctx)
	if err != nil {
		return 0, errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, errf(op, err)
	}
	if n > 0 {
		err = tx.credentialsChanged(ctx, "u:"+userID)
	}
	return int(n), errf(op, err)
}

// SessionWorkspaceSet implements account.JoinStore.
func (tx *Tx) SessionWorkspaceSet(ctx context.Context, id, workspaceID string) error {
	res, err := tx.idb.NewRaw(`UPDATE sessions SET workspace_id = ? WHERE id = ?`, workspaceID, id).Exec(ctx)
	if err := affected("store.SessionWorkspaceSet", res, err); err != nil {
		return err
	}
	return errf("store.SessionWorkspaceSet", tx.credentialsChanged(ctx, "s:"+id))
}

// ThrottleUpdate implements account.ThrottleStore. It makes every subject's row
// exist, then reads them all with their rows locked (FOR UPDATE on
// PostgreSQL; SQLite's single writer serializes units of work), in subject
// order so that two updates sharing subjects never wait on each other in a
// cycle; a concurrent update of a subject waits for this one's commit and
// then reads its result. Counters fn returns at zero without a lock are
// deleted, so idle subjects leave no row.
func (tx *Tx) ThrottleUpdate(ctx context.Context, subjects []string, fn func(now time.Time, cur []account.Throttle) ([]account.Throttle, error)) error {
	const op = "store.ThrottleUpdate"
	if len(subjects) == 0 {
		return nil
	}
	if tx.idb == tx.db.readIDB() {
		return tx.db.InTx(ctx, func(w *Tx) error { return w.ThrottleUpdate(ctx, subjects, fn) })
	}
	sorted := slices.Compact(slices.Sorted(slices.Values(subjects)))
	values := strings.TrimSuffix(strings.Repeat("(?, 0, ?), ", len(sorted)), ", ")
	args := make([]any, 0, 2*len(sorted))
	for _, sub := range sorted {
		args = append(args, sub, tx.now)
	}
	if _, err := tx.idb.NewRaw(`INSERT INTO login_throttle (subject, failures, window_started_at) VALUES `+values+
		` ON CONFLICT (subject) DO NOTHING`, args...).Exec(ctx); err != nil {
		return errf(op, err)
	}
	var rows []struct {
		Subject         string     `bun:"subject"`
		Failures        int        `bun:"failures"`
		WindowStartedAt time.Time  `bun:"window_started_at"`
		LockedUntil     *time.Time `bun:"locked_until"`
	}
	if err := tx.idb.NewRaw(`SELECT subject, failures, window_started_at, locked_until FROM login_throttle
		WHERE subject IN (?) ORDER BY subject`+tx.rowLock(), bun.In(sorted)).Scan(ctx, &rows); err != nil {
		return errf(op, err)
	}
	bySubject := make(map[string]account.Throttle, len(rows))
	for _, r := range rows {
		t := account.Throttle{Subject: r.Subject, Failures: r.Failures, LockedUntil: utcPtr(r.LockedUntil)}
		if r.Failures > 0 || r.LockedUntil != nil {
			t.WindowStartedAt = r.WindowStartedAt.UTC()
		}
		bySubject[r.Subject] = t
	}
	cur := make([]account.Throttle, len(subjects))
	for i, sub := range subjects {
		cur[i] = bySubject[sub]
		cur[i].Subject = sub
	}
	out, err := fn(tx.now, cur)
	if err != nil {
		return err
	}
	for _, t := range out {
		if _, ok := bySubject[t.Subject]; !ok {
			return fault.Wrap(op, fmt.Errorf("counter %q was not one of the subjects", t.Subject))
		}
		var err error
		if t.Failures == 0 && t.LockedUntil == nil {
			_, err = tx.idb.NewRaw(`DELETE FROM login_throttle WHERE subject = ?`, t.Subject).Exec(ctx)
		} else {
			_, err = tx.idb.NewRaw(`UPDATE login_throttle SET failures = ?, window_started_at = ?, locked_until = ? WHERE subject = ?`,
				t.Failures, t.WindowStartedAt, t.LockedUntil, t.Subject).Exec(ctx)
		}
		if err != nil {
			return errf(op, err)
		}
	}
	return nil
}

// ThrottlePrune deletes up to limit counters that started before before and
// hold no lock ending after it: spent counters whose window and backoff are
// long over. It reports how many it deleted.
func (tx *Tx) ThrottlePrune(ctx context.Context, before time.Time, limit int) (int, error) {
	const op = "store.ThrottlePrune"
	res, err := tx.idb.ExecContext(ctx, `DELETE FROM login_throttle WHERE subject IN
		(SELECT subject FROM login_throttle WHERE window_started_at < ? AND (locked_until IS NULL OR locked_until < ?)
		ORDER BY window_started_at LIMIT ?)`, before, before, limit)
	if err != nil {
		return 0, errf(op, err)
	}
	n, err := res.RowsAffected()
	return int(n), errf(op, err)
}
