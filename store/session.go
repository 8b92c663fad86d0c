package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
)

var _ account.SessionStore = (*Tx)(nil)

// SessionInsert implements account.SessionStore.
func (tx *Tx) SessionInsert(ctx context.Context, s account.Session) error {
	var token any
	if s.TokenDigest != "" {
		token = s.TokenDigest
	}
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO sessions (id, user_id, tenant_id, workspace_id, kind, cookie_digest,
		token_digest, token_expires_at, user_agent, client_ip, created_at, last_seen_at, authenticated_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.UserID, s.TenantID, s.WorkspaceID, s.Kind, s.CookieDigest, token, s.TokenExpiresAt, s.UserAgent,
		s.ClientIP, s.CreatedAt, s.LastSeenAt, s.AuthenticatedAt, s.ExpiresAt)
	return errf("store.SessionInsert", err)
}

// sessionSelect reads a session with its workspace's authority stamps.
const sessionSelect = `SELECT s.id, s.user_id, s.tenant_id, s.workspace_id, s.kind, s.cookie_digest,
	COALESCE(s.token_digest, ''), s.token_expires_at, s.user_agent, s.client_ip, s.created_at, s.last_seen_at,
	s.authenticated_at, s.expires_at, s.revoked_at,
	CAST(COALESCE((SELECT v.version FROM authz_versions v WHERE v.scope = s.workspace_id), 0) AS BIGINT), ` + globalStamp + `
	FROM sessions s`

// sessionStamps are the authority stamps a session row was read with.
type sessionStamps struct{ workspace, global int64 }

func scanSession(row interface{ Scan(...any) error }) (account.SessionAuth, sessionStamps, error) {
	var (
		st                  sessionStamps
		sa                  account.SessionAuth
		tokExp, revoked     sql.NullTime
		created, seen, auth time.Time
		expires             time.Time
	)
	s := &sa.Session
	err := row.Scan(&s.ID, &s.UserID, &s.TenantID, &s.WorkspaceID, &s.Kind, &s.CookieDigest, &s.TokenDigest, &tokExp,
		&s.UserAgent, &s.ClientIP, &created, &seen, &auth, &expires, &revoked, &st.workspace, &st.global)
	if err != nil {
		return sa, st, err
	}
	sa.AuthzVersion = st.workspace + st.global
	s.CreatedAt, s.LastSeenAt, s.AuthenticatedAt, s.ExpiresAt = created.UTC(), seen.UTC(), auth.UTC(), expires.UTC()
	if tokExp.Valid {
		t := tokExp.Time.UTC()
		s.TokenExpiresAt = &t
	}
	if revoked.Valid {
		t := revoked.Time.UTC()
		s.RevokedAt = &t
	}
	return sa, st, nil
}

// sessionBy reads the session whose column holds digest. On the read
// handle it answers from the credential cache (credcache.go) when it can,
// under lookup (a letter naming the column, and the digest), and keeps
// what it read otherwise. An empty lookup reads without the cache.
func (tx *Tx) sessionBy(ctx context.Context, op, column, lookup, digest string) (account.SessionAuth, error) {
	cached := lookup != "" && tx.cachedLookups()
	var gen uint64
	if cached {
		c := tx.db.creds
		if c.has(lookup+digest) && (tx.ahead || c.current(ctx)) {
			if sa, ok := c.session(lookup+digest, GlobalAuthzScope); ok {
				return sa, nil
			}
		}
		gen = c.begin()
	}
	sa, st, err := scanSession(tx.idb.QueryRowContext(ctx, sessionSelect+` WHERE s.`+column+` = ?`, digest))
	if errors.Is(err, sql.ErrNoRows) {
		return sa, fault.E(op, fault.NotFound, "")
	}
	if err != nil {
		return sa, errf(op, err)
	}
	if cached {
		s := sa.Session
		tx.db.creds.put(gen, lookup+digest, &credEntry{session: &s, tags: []string{"s:" + s.ID, "u:" + s.UserID}},
			map[string]int64{s.WorkspaceID: st.workspace, GlobalAuthzScope: st.global})
	}
	return sa, nil
}

// SessionByCookie implements account.SessionStore.
func (tx *Tx) SessionByCookie(ctx context.Context, digest string) (account.SessionAuth, error) {
	return tx.sessionBy(ctx, "store.SessionByCookie", "cookie_digest", "c", digest)
}

// SessionByToken implements account.SessionStore.
func (tx *Tx) SessionByToken(ctx context.Context, digest string) (account.SessionAuth, error) {
	return tx.sessionBy(ctx, "store.SessionByToken", "token_digest", "t", digest)
}

// SessionTouch implements account.SessionStore. On the read handle it runs
// in its own short unit of work, and then marks the cached session seen
// at at on this host. The last-seen time decides only when the next touch
// is due, so a touch logs no credential change: each host touches a session
// at most once per account's touch interval, and the row keeps the
// latest.
func (tx *Tx) SessionTouch(ctx context.Context, id string, at time.Time) error {
	q := `UPDATE sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?`
	if tx.idb == tx.db.readIDB() {
		err := tx.db.InTx(ctx, func(w *Tx) error {
			_, err := w.idb.ExecContext(ctx, q, at, id, at)
			return errf("store.SessionTouch", err)
		})
		if err == nil {
			tx.db.creds.seen(id, at)
		}
		return err
	}
	_, err := tx.idb.ExecContext(ctx, q, at, id, at)
	return errf("store.SessionTouch", err)
}
