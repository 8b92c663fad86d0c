package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
)

var (
	_ account.AuditWriter       = (*Tx)(nil)
	_ account.AuditReader       = (*Tx)(nil)
	_ account.AdminStore        = (*Tx)(nil)
	_ account.OnboardingRecords = (*Tx)(nil)
	_ account.InviteStore       = (*Tx)(nil)
	_ account.JoinStore         = (*Tx)(nil)
	_ account.OnboardingStore   = (*Tx)(nil)
)

// AuditInsert implements account.AuditWriter. The audit log is
// append-only: no method of the store updates or deletes its rows. Each row
// carries its event's environment (migration 0016), which AuditList scopes
// by.
func (tx *Tx) AuditInsert(ctx context.Context, e account.AuditEvent) error {
	_, err := tx.idb.NewRaw(`INSERT INTO audit_events (id, tenant_id, workspace_id, environment, actor_user_id, actor_key_id,
		action, target_type, target_id, request_id, before_state, after_state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.TenantID, e.WorkspaceID, string(e.Environment), e.ActorUserID, e.ActorKeyID, e.Action, e.TargetType, e.TargetID,
		e.RequestID, nullJSON(e.Before), nullJSON(e.After), e.CreatedAt).Exec(ctx)
	return errf("store.AuditInsert", err)
}

func nullJSON(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

type auditRow struct {
	ID          string         `bun:"id"`
	TenantID    string         `bun:"tenant_id"`
	WorkspaceID string         `bun:"workspace_id"`
	Environment string         `bun:"environment"`
	ActorUserID string         `bun:"actor_user_id"`
	ActorKeyID  string         `bun:"actor_key_id"`
	Action      string         `bun:"action"`
	TargetType  string         `bun:"target_type"`
	TargetID    string         `bun:"target_id"`
	RequestID   string         `bun:"request_id"`
	Before      sql.NullString `bun:"before_state"`
	After       sql.NullString `bun:"after_state"`
	CreatedAt   time.Time      `bun:"created_at"`
}

// AuditList implements account.AuditReader: one tenant, workspace and
// environment.
func (tx *Tx) AuditList(ctx context.Context, sc access.Scope, before string, limit int) ([]account.AuditEvent, error) {
	q := `SELECT id, tenant_id, workspace_id, environment, actor_user_id, actor_key_id, action, target_type, target_id, request_id,
		before_state, after_state, created_at FROM audit_events WHERE tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	var rows []auditRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.AuditList", err)
	}
	out := make([]account.AuditEvent, 0, len(rows))
	for _, r := range rows {
		e := account.AuditEvent{ID: r.ID, TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment),
			ActorUserID: r.ActorUserID, ActorKeyID: r.ActorKeyID, Action: r.Action, TargetType: r.TargetType, TargetID: r.TargetID,
			RequestID: r.RequestID, CreatedAt: r.CreatedAt.UTC()}
		if r.Before.Valid {
			e.Before = json.RawMessage(r.Before.String)
		}
		if r.After.Valid {
			e.After = json.RawMessage(r.After.String)
		}
		out = append(out, e)
	}
	return out, nil
}

type memberRow struct {
	UserID      string    `bun:"user_id"`
	Email       string    `bun:"email"`
	DisplayName string    `bun:"display_name"`
	Status      string    `bun:"status"`
	CreatedAt   time.Time `bun:"created_at"`
}

const memberSelect = `SELECT m.user_id, u.email, u.display_name, m.status, m.created_at
	FROM memberships m JOIN users u ON u.id = m.user_id`

// members reads the roles of rows and returns them as members.
func (tx *Tx) members(ctx context.Context, op, workspaceID string, rows []memberRow) ([]account.Member, error) {
	out := make([]account.Member, 0, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.UserID
	}
	var rs []struct {
		UserID string `bun:"user_id"`
		Role   string `bun:"role"`
	}
	if err := tx.idb.NewRaw(`SELECT user_id, role FROM membership_roles WHERE workspace_id = ? AND user_id IN (?)
		ORDER BY user_id, role`, workspaceID, bun.In(ids)).Scan(ctx, &rs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	roles := map[string][]access.Role{}
	for _, r := range rs {
		roles[r.UserID] = append(roles[r.UserID], access.Role(r.Role))
	}
	for _, r := range rows {
		rl := roles[r.UserID]
		if rl == nil {
			rl = []access.Role{}
		}
		slices.Sort(rl)
		out = append(out, account.Member{UserID: r.UserID, Email: r.Email, DisplayName: r.DisplayName, Roles: rl,
			Status: r.Status, JoinedAt: r.CreatedAt.UTC()})
	}
	return out, nil
}

// MemberList implements account.AdminStore.
func (tx *Tx) MemberList(ctx context.Context, workspaceID, after string, limit int) ([]account.Member, error) {
	const op = "store.MemberList"
	q := memberSelect + ` WHERE m.workspace_id = ?`
	args := []any{workspaceID}
	if after != "" {
		q += ` AND m.user_id > ?`
		args = append(args, after)
	}
	q += ` ORDER BY m.user_id LIMIT ?`
	args = append(args, limit)
	var rows []memberRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	return tx.members(ctx, op, workspaceID, rows)
}

// MemberGet implements account.AdminStore.
func (tx *Tx) MemberGet(ctx context.Context, workspaceID, userID string) (account.Member, error) {
	const op = "store.MemberGet"
	var rows []memberRow
	if err := tx.idb.NewRaw(memberSelect+` WHERE m.workspace_id = ? AND m.user_id = ?`, workspaceID, userID).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return account.Member{}, errf(op, err)
	}
	if len(rows) == 0 {
		return account.Member{}, fault.E(op, fault.NotFound, "")
	}
	ms, err := tx.members(ctx, op, workspaceID, rows)
	if err != nil {
		return account.Member{}, err
	}
	return ms[0], nil
}

// MemberOwnerCount implements account.AdminStore.
func (tx *Tx) MemberOwnerCount(ctx context.Context, workspaceID, exceptUserID string) (int, error) {
	var n int
	err := tx.idb.NewRaw(`SELECT COUNT(*) FROM memberships m JOIN membership_roles r
		ON r.workspace_id = m.workspace_id AND r.user_id = m.user_id
		WHERE m.workspace_id = ? AND m.status = ? AND r.role = ? AND m.user_id <> ?`,
		workspaceID, access.MembershipActive, string(access.RoleOwner), exceptUserID).Scan(ctx, &n)
	return n, errf("store.MemberOwnerCount", err)
}

// OnboardingInsert implements account.OnboardingRecords.
func (tx *Tx) OnboardingInsert(ctx context.Context, o account.Onboarding) error {
	_, err := tx.idb.NewRaw(`INSERT INTO workspace_onboarding (workspace_id, user_id, goal, selected_plan, created_at)
		VALUES (?, ?, ?, ?, ?)`, o.WorkspaceID, o.UserID, string(o.Goal), o.SelectedPlan, o.CreatedAt).Exec(ctx)
	return errf("store.OnboardingInsert", err)
}

// OnboardingByUser implements account.OnboardingRecords.
func (tx *Tx) OnboardingByUser(ctx context.Context, userID string) (account.Onboarding, error) {
	var r struct {
		WorkspaceID  string    `bun:"workspace_id"`
		Name         string    `bun:"name"`
		UserID       string    `bun:"user_id"`
		Goal         string    `bun:"goal"`
		SelectedPlan string    `bun:"selected_plan"`
		CreatedAt    time.Time `bun:"created_at"`
	}
	err := tx.idb.NewRaw(`SELECT o.workspace_id, w.name, o.user_id, o.goal, o.selected_plan, o.created_at
		FROM workspace_onboarding o JOIN workspaces w ON w.id = o.workspace_id
		WHERE o.user_id = ? ORDER BY o.created_at, o.workspace_id LIMIT 1`, userID).Scan(ctx, &r)
	if err != nil {
		return account.Onboarding{}, notFound("store.OnboardingByUser", err)
	}
	return account.Onboarding{WorkspaceID: r.WorkspaceID, WorkspaceName: r.Name, UserID: r.UserID, Goal: account.Goal(r.Goal),
		SelectedPlan: r.SelectedPlan, CreatedAt: r.CreatedAt.UTC()}, nil
}

// UserTenantSet moves a user and their sessions into tenantID (a person
// who signed up alone and then accepts an invitation joins the inviting
// organization). NOT_FOUND when the user does not exist.
func (tx *Tx) UserTenantSet(ctx context.Context, userID, tenantID string) error {
	const op = "store.UserTenantSet"
	res, err := tx.idb.NewRaw(`UPDATE users SET tenant_id = ? WHERE id = ?`, tenantID, userID).Exec(ctx)
	if err := affected(op, res, err); err != nil {
		return err
	}
	if _, err = tx.idb.NewRaw(`UPDATE sessions SET tenant_id = ? WHERE user_id = ?`, tenantID, userID).Exec(ctx); err != nil {
		return errf(op, err)
	}
	return errf(op, tx.credentialsChanged(ctx, "u:"+userID))
}

// UserMembershipCount counts the workspaces userID is a member of.
func (tx *Tx) UserMembershipCount(ctx context.Context, userID string) (int, error) {
	var n int
	err := tx.idb.NewRaw(`SELECT COUNT(*) FROM memberships WHERE user_id = ?`, userID).Scan(ctx, &n)
	return n, errf("store.UserMembershipCount", err)
}
