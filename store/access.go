package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Tx implements the access domain's port.
var _ access.Store = (*Tx)(nil)

// GlobalAuthzScope is the authz_versions scope bumped by platform-wide
// changes: platform feature-flag defaults and platform roles.
const GlobalAuthzScope = "global"

// AuthzBump increments the authority version of scope (a workspace id or
// GlobalAuthzScope), creating it at 1. Every writer of authority calls it in
// its own transaction; callers changing authority elsewhere (subscriptions,
// route policies) call it themselves. Provider credential writes raise it
// too, for the caches keyed by it (store/credential.go).
func (tx *Tx) AuthzBump(ctx context.Context, scope string) error {
	if _, err := tx.idb.NewRaw(`INSERT INTO authz_versions (scope, version) VALUES (?, 1)
		ON CONFLICT (scope) DO UPDATE SET version = authz_versions.version + 1`, scope).Exec(ctx); err != nil {
		return errf("store.AuthzBump", err)
	}
	return errf("store.AuthzBump", tx.credentialsChanged(ctx, "a:"+scope))
}

// AuthzVersion implements access.Store: the workspace's stamp plus the
// global stamp, missing rows counting 0.
func (tx *Tx) AuthzVersion(ctx context.Context, workspaceID string) (int64, error) {
	var v int64
	err := tx.idb.NewRaw(`SELECT COALESCE(SUM(version), 0) FROM authz_versions WHERE scope IN (?, ?)`,
		workspaceID, GlobalAuthzScope).Scan(ctx, &v)
	return v, errf("store.AuthzVersion", err)
}

// bumpUserWorkspaces bumps every workspace userID is a member of, for
// changes that follow the user (wallet links).
func (tx *Tx) bumpUserWorkspaces(ctx context.Context, op, userID string) error {
	var ws []string
	if err := tx.idb.NewRaw(`SELECT workspace_id FROM memberships WHERE user_id = ? ORDER BY workspace_id`, userID).Scan(ctx, &ws); err != nil {
		return errf(op, err)
	}
	for _, w := range ws {
		if err := tx.AuthzBump(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// TenantInsert creates a tenant.
func (tx *Tx) TenantInsert(ctx context.Context, id, name string) error {
	_, err := tx.idb.NewRaw(`INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)`, id, name, tx.now).Exec(ctx)
	return errf("store.TenantInsert", err)
}

// WorkspaceInsert creates an active workspace in tenantID.
func (tx *Tx) WorkspaceInsert(ctx context.Context, id, tenantID, name string) error {
	const op = "store.WorkspaceInsert"
	_, err := tx.idb.NewRaw(`INSERT INTO workspaces (id, tenant_id, name, state, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, tenantID, name, access.WorkspaceActive, tx.now).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	return tx.AuthzBump(ctx, id)
}

// WorkspaceStateSet changes a workspace's state (access.WorkspaceActive or
// access.WorkspaceSuspended) and bumps its version. NOT_FOUND if the
// workspace does not exist; INVALID_INPUT for another state.
func (tx *Tx) WorkspaceStateSet(ctx context.Context, workspaceID, state string) error {
	const op = "store.WorkspaceStateSet"
	if state != access.WorkspaceActive && state != access.WorkspaceSuspended {
		return fault.Invalid(op, "state", "Unknown workspace state.")
	}
	res, err := tx.idb.NewRaw(`UPDATE workspaces SET state = ? WHERE id = ?`, state, workspaceID).Exec(ctx)
	if err := affected(op, res, err); err != nil {
		return err
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// WorkspaceGet returns a workspace of tenantID; NOT_FOUND when it does not
// exist or belongs to another tenant.
func (tx *Tx) WorkspaceGet(ctx context.Context, tenantID, workspaceID string) (access.Workspace, error) {
	var w struct {
		ID        string    `bun:"id"`
		TenantID  string    `bun:"tenant_id"`
		Name      string    `bun:"name"`
		State     string    `bun:"state"`
		CreatedAt time.Time `bun:"created_at"`
	}
	err := tx.idb.NewRaw(`SELECT id, tenant_id, name, state, created_at FROM workspaces WHERE id = ? AND tenant_id = ?`,
		workspaceID, tenantID).Scan(ctx, &w)
	if err != nil {
		return access.Workspace{}, notFound("store.WorkspaceGet", err)
	}
	return access.Workspace{ID: w.ID, TenantID: w.TenantID, Name: w.Name, State: w.State, CreatedAt: w.CreatedAt.UTC()}, nil
}

// UserInsert creates a user in tenantID. CONFLICT if the email is taken.
func (tx *Tx) UserInsert(ctx context.Context, id, tenantID, email, displayName string) error {
	const op = "store.UserInsert"
	res, err := tx.idb.NewRaw(`INSERT INTO users (id, tenant_id, email, display_name, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (email) DO NOTHING`, id, tenantID, email, displayName, tx.now).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.E(op, fault.Conflict, "The email is already registered.")
	}
	return nil
}

type userRow struct {
	ID          string    `bun:"id"`
	TenantID    string    `bun:"tenant_id"`
	Email       string    `bun:"email"`
	DisplayName string    `bun:"display_name"`
	CreatedAt   time.Time `bun:"created_at"`
}

func (r userRow) user() access.User {
	return access.User{ID: r.ID, TenantID: r.TenantID, Email: r.Email, DisplayName: r.DisplayName, CreatedAt: r.CreatedAt.UTC()}
}

// UserGet returns a user of tenantID; NOT_FOUND when it does not exist or
// belongs to another tenant.
func (tx *Tx) UserGet(ctx context.Context, tenantID, userID string) (access.User, error) {
	var r userRow
	err := tx.idb.NewRaw(`SELECT id, tenant_id, email, display_name, created_at FROM users WHERE id = ? AND tenant_id = ?`,
		userID, tenantID).Scan(ctx, &r)
	if err != nil {
		return access.User{}, notFound("store.UserGet", err)
	}
	return r.user(), nil
}

// UserGetByEmail returns the user with email (emails are unique across the
// platform); NOT_FOUND when none.
func (tx *Tx) UserGetByEmail(ctx context.Context, email string) (access.User, error) {
	var r userRow
	err := tx.idb.NewRaw(`SELECT id, tenant_id, email, display_name, created_at FROM users WHERE email = ?`, email).Scan(ctx, &r)
	if err != nil {
		return access.User{}, notFound("store.UserGetByEmail", err)
	}
	return r.user(), nil
}

// MembershipInsert makes userID an active member of workspaceID with roles
// and bumps the workspace's version. INVALID_INPUT for an empty or unknown
// role; CONFLICT if the membership exists.
func (tx *Tx) MembershipInsert(ctx context.Context, workspaceID, userID string, roles []access.Role) error {
	const op = "store.MembershipInsert"
	if err := access.ValidateRoles(roles); err != nil {
		return fault.Wrap(op, err)
	}
	res, err := tx.idb.NewRaw(`INSERT INTO memberships (workspace_id, user_id, status, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id, user_id) DO NOTHING`, workspaceID, userID, access.MembershipActive, tx.now).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.E(op, fault.Conflict, "The user is already a member of the workspace.")
	}
	if err := tx.insertRoles(ctx, op, workspaceID, userID, roles); err != nil {
		return err
	}
	return tx.AuthzBump(ctx, workspaceID)
}

func (tx *Tx) insertRoles(ctx context.Context, op, workspaceID, userID string, roles []access.Role) error {
	for _, r := range roles {
		if _, err := tx.idb.NewRaw(`INSERT INTO membership_roles (workspace_id, user_id, role) VALUES (?, ?, ?)
			ON CONFLICT (workspace_id, user_id, role) DO NOTHING`, workspaceID, userID, string(r)).Exec(ctx); err != nil {
			return errf(op, err)
		}
	}
	return nil
}

// MembershipRolesSet replaces the membership's roles and bumps the
// workspace's version. NOT_FOUND without a membership; INVALID_INPUT for an
// empty or unknown role.
func (tx *Tx) MembershipRolesSet(ctx context.Context, workspaceID, userID string, roles []access.Role) error {
	const op = "store.MembershipRolesSet"
	if err := access.ValidateRoles(roles); err != nil {
		return fault.Wrap(op, err)
	}
	if err := tx.membershipExists(ctx, op, workspaceID, userID); err != nil {
		return err
	}
	if _, err := tx.idb.NewRaw(`DELETE FROM membership_roles WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Exec(ctx); err != nil {
		return errf(op, err)
	}
	if err := tx.insertRoles(ctx, op, workspaceID, userID, roles); err != nil {
		return err
	}
	return tx.AuthzBump(ctx, workspaceID)
}

func (tx *Tx) membershipExists(ctx context.Context, op, workspaceID, userID string) error {
	var status string
	err := tx.idb.NewRaw(`SELECT status FROM memberships WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Scan(ctx, &status)
	return notFoundOrNil(op, err)
}

// MembershipStatusSet sets the membership's status (access.MembershipActive
// or access.MembershipSuspended) and bumps the workspace's version.
// NOT_FOUND without a membership; INVALID_INPUT for another status.
func (tx *Tx) MembershipStatusSet(ctx context.Context, workspaceID, userID, status string) error {
	const op = "store.MembershipStatusSet"
	if status != access.MembershipActive && status != access.MembershipSuspended {
		return fault.Invalid(op, "status", "Unknown membership status.")
	}
	res, err := tx.idb.NewRaw(`UPDATE memberships SET status = ? WHERE workspace_id = ? AND user_id = ?`,
		status, workspaceID, userID).Exec(ctx)
	if err := affected(op, res, err); err != nil {
		return err
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// AssignmentInsert assigns a role template to a member, workspace-wide
// (projectID "") or for one project, and bumps the workspace's version. An
// existing identical assignment is kept. INVALID_INPUT for an unknown
// template or a project assignment of a workspace-only template; NOT_FOUND
// without a membership.
func (tx *Tx) AssignmentInsert(ctx context.Context, workspaceID, userID, template, projectID string) error {
	const op = "store.AssignmentInsert"
	if err := access.ValidateAssignment(access.Template(template), projectID); err != nil {
		return fault.Wrap(op, err)
	}
	if err := tx.membershipExists(ctx, op, workspaceID, userID); err != nil {
		return err
	}
	_, err := tx.idb.NewRaw(`INSERT INTO role_assignments (id, workspace_id, user_id, template, project_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, user_id, template, project_id) DO NOTHING`,
		"ra_"+ulid.Make().String(), workspaceID, userID, template, projectID, tx.now).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// AssignmentDelete removes a template assignment and bumps the workspace's
// version. NOT_FOUND when there is no such assignment.
func (tx *Tx) AssignmentDelete(ctx context.Context, workspaceID, userID, template, projectID string) error {
	const op = "store.AssignmentDelete"
	res, err := tx.idb.NewRaw(`DELETE FROM role_assignments WHERE workspace_id = ? AND user_id = ? AND template = ? AND project_id = ?`,
		workspaceID, userID, template, projectID).Exec(ctx)
	if err := affected(op, res, err); err != nil {
		return err
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// DenyInsert records an explicit deny of permission for userID in
// workspaceID and bumps the workspace's version. INVALID_INPUT for an
// unknown permission.
func (tx *Tx) DenyInsert(ctx context.Context, workspaceID, userID string, permission access.Permission) error {
	const op = "store.DenyInsert"
	if !permission.Valid() {
		return fault.Invalid(op, "permission", "Unknown permission.")
	}
	_, err := tx.idb.NewRaw(`INSERT INTO permission_denies (workspace_id, user_id, permission) VALUES (?, ?, ?)
		ON CONFLICT (workspace_id, user_id, permission) DO NOTHING`, workspaceID, userID, string(permission)).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// DenyDelete lifts an explicit deny and bumps the workspace's version.
// NOT_FOUND when there is no such deny.
func (tx *Tx) DenyDelete(ctx context.Context, workspaceID, userID string, permission access.Permission) error {
	const op = "store.DenyDelete"
	res, err := tx.idb.NewRaw(`DELETE FROM permission_denies WHERE workspace_id = ? AND user_id = ? AND permission = ?`,
		workspaceID, userID, string(permission)).Exec(ctx)
	if err := affected(op, res, err); err != nil {
		return err
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// EntitlementSet turns an entitlement of workspaceID on in env (recording
// its source, such as a plan or a grant) or off, and bumps the workspace's
// version. env is "test" or "live" for one environment, or "" for an
// entitlement held in both; each is its own row, so turning one off leaves
// the others.
func (tx *Tx) EntitlementSet(ctx context.Context, workspaceID, entitlement, source, env string, on bool) error {
	const op = "store.EntitlementSet"
	if env != "" && !access.Environment(env).Valid() {
		return fault.Invalid(op, "environment", "An entitlement's environment is test, live or both.")
	}
	var err error
	if on {
		_, err = tx.idb.NewRaw(`INSERT INTO entitlements (workspace_id, entitlement, environment, source, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, entitlement, environment) DO UPDATE SET source = excluded.source`,
			workspaceID, entitlement, env, source, tx.now).Exec(ctx)
	} else {
		_, err = tx.idb.NewRaw(`DELETE FROM entitlements WHERE workspace_id = ? AND entitlement = ? AND environment = ?`,
			workspaceID, entitlement, env).Exec(ctx)
	}
	if err != nil {
		return errf(op, err)
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// FlagSet sets a feature flag for workspaceID, or its platform default when
// workspaceID is "", and bumps that workspace's version or the global one.
func (tx *Tx) FlagSet(ctx context.Context, flag, workspaceID string, enabled bool) error {
	const op = "store.FlagSet"
	_, err := tx.idb.NewRaw(`INSERT INTO feature_flags (flag, workspace_id, enabled, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (flag, workspace_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
		flag, workspaceID, enabled, tx.now).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	if workspaceID == "" {
		return tx.AuthzBump(ctx, GlobalAuthzScope)
	}
	return tx.AuthzBump(ctx, workspaceID)
}

// FlagDefault sets a feature flag's platform default to enabled unless the
// platform already has a default for it (an operator's choice survives
// restarts), and bumps the global version when it wrote one. Hosts
// seeding the same defaults at once converge on one row.
func (tx *Tx) FlagDefault(ctx context.Context, flag string, enabled bool) error {
	const op = "store.FlagDefault"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO feature_flags (flag, workspace_id, enabled, updated_at) VALUES (?, '', ?, ?)
		ON CONFLICT (flag, workspace_id) DO NOTHING`, flag, enabled, tx.now)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errf(op, err)
	}
	return tx.AuthzBump(ctx, GlobalAuthzScope)
}

// PlatformRoleGrant grants a platform role (only access.SuperAdmin exists)
// and bumps the global version. It is for the host's operator; no API route
// calls it. INVALID_INPUT for another role.
func (tx *Tx) PlatformRoleGrant(ctx context.Context, userID, role string) error {
	const op = "store.PlatformRoleGrant"
	if role != access.SuperAdmin {
		return fault.Invalid(op, "role", "Unknown platform role.")
	}
	_, err := tx.idb.NewRaw(`INSERT INTO platform_roles (user_id, role, granted_at) VALUES (?, ?, ?)
		ON CONFLICT (user_id, role) DO NOTHING`, userID, role, tx.now).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	return tx.AuthzBump(ctx, GlobalAuthzScope)
}

// PlatformRoleRevoke revokes a platform role and bumps the global version.
// NOT_FOUND when the user does not hold it.
func (tx *Tx) PlatformRoleRevoke(ctx context.Context, userID, role string) error {
	const op = "store.PlatformRoleRevoke"
	res, err := tx.idb.NewRaw(`DELETE FROM platform_roles WHERE user_id = ? AND role = ?`, userID, role).Exec(ctx)
	if err := affected(op, res, err); err != nil {
		return err
	}
	return tx.AuthzBump(ctx, GlobalAuthzScope)
}

// WalletLinkInsert records a verified wallet of userID in tenantID, verified
// now, and bumps the version of every workspace the user belongs to (the
// auth context counts wallets). Linking the same address to the same user
// again is a no-op; CONFLICT when another user of the tenant holds it.
func (tx *Tx) WalletLinkInsert(ctx context.Context, id, tenantID, userID, network, address string) error {
	const op = "store.WalletLinkInsert"
	res, err := tx.idb.NewRaw(`INSERT INTO wallet_links (id, tenant_id, user_id, network, address, verified_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, network, address) DO NOTHING`, id, tenantID, userID, network, address, tx.now).Exec(ctx)
	if err != nil {
		return errf(op, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var holder string
		if err := tx.idb.NewRaw(`SELECT user_id FROM wallet_links WHERE tenant_id = ? AND network = ? AND address = ?`,
			tenantID, network, address).Scan(ctx, &holder); err != nil {
			return errf(op, err)
		}
		if holder != userID {
			return fault.E(op, fault.Conflict, "The wallet is linked to another account.")
		}
		return nil
	}
	return tx.bumpUserWorkspaces(ctx, op, userID)
}

// NewWalletLinkID returns a fresh wallet-link id ("wl_" + ULID).
func NewWalletLinkID() string { return "wl_" + ulid.Make().String() }

// AuthorityLoad implements access.Store. It reads the version first, then
// the snapshot of environment env (see access.Store). An unknown workspace, one of another
// tenant, or a user of another tenant yields a snapshot without membership.
func (tx *Tx) AuthorityLoad(ctx context.Context, tenantID, workspaceID, userID string, env access.Environment) (access.Authority, error) {
	const op = "store.AuthorityLoad"
	a := access.Authority{TenantID: tenantID, WorkspaceID: workspaceID, UserID: userID, Environment: env, Flags: map[string]bool{}}
	v, err := tx.AuthzVersion(ctx, workspaceID)
	if err != nil {
		return access.Authority{}, err
	}
	a.Version = v

	var state string
	err = tx.idb.NewRaw(`SELECT state FROM workspaces WHERE id = ? AND tenant_id = ?`, workspaceID, tenantID).Scan(ctx, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return a, nil
	}
	if err != nil {
		return access.Authority{}, errf(op, err)
	}
	a.WorkspaceState = state

	var status string
	err = tx.idb.NewRaw(`SELECT m.status FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = ? AND m.user_id = ? AND u.tenant_id = ?`, workspaceID, userID, tenantID).Scan(ctx, &status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return access.Authority{}, errf(op, err)
	default:
		a.MembershipStatus = status
		if err := tx.loadMembership(ctx, &a); err != nil {
			return access.Authority{}, errf(op, err)
		}
	}

	if err := tx.loadWorkspaceAuthority(ctx, &a); err != nil {
		return access.Authority{}, errf(op, err)
	}
	return a, nil
}

// loadMembership reads roles, assignments, denies, the platform role and the
// wallet count of a member.
func (tx *Tx) loadMembership(ctx context.Context, a *access.Authority) error {
	var roles []string
	if err := tx.idb.NewRaw(`SELECT role FROM membership_roles WHERE workspace_id = ? AND user_id = ? ORDER BY role`,
		a.WorkspaceID, a.UserID).Scan(ctx, &roles); err != nil {
		return err
	}
	for _, r := range roles {
		a.Roles = append(a.Roles, access.Role(r))
	}
	var as []struct {
		Template  string `bun:"template"`
		ProjectID string `bun:"project_id"`
	}
	if err := tx.idb.NewRaw(`SELECT template, project_id FROM role_assignments WHERE workspace_id = ? AND user_id = ?
		ORDER BY template, project_id`, a.WorkspaceID, a.UserID).Scan(ctx, &as); err != nil {
		return err
	}
	for _, x := range as {
		a.Assignments = append(a.Assignments, access.Assignment{Template: access.Template(x.Template), ProjectID: x.ProjectID})
	}
	var denies []string
	if err := tx.idb.NewRaw(`SELECT permission FROM permission_denies WHERE workspace_id = ? AND user_id = ? ORDER BY permission`,
		a.WorkspaceID, a.UserID).Scan(ctx, &denies); err != nil {
		return err
	}
	for _, d := range denies {
		a.Denies = append(a.Denies, access.Permission(d))
	}
	var n int
	if err := tx.idb.NewRaw(`SELECT COUNT(*) FROM platform_roles WHERE user_id = ? AND role = ?`, a.UserID, access.SuperAdmin).Scan(ctx, &n); err != nil {
		return err
	}
	a.SuperAdmin = n > 0
	return tx.idb.NewRaw(`SELECT COUNT(*) FROM wallet_links WHERE tenant_id = ? AND user_id = ?`, a.TenantID, a.UserID).Scan(ctx, &a.WalletCount)
}

// loadWorkspaceAuthority reads the workspace's entitlements in a's
// environment (rows for both environments and for that one), its plan in
// that environment, and the flags in effect: platform defaults, overridden
// by the workspace's rows.
func (tx *Tx) loadWorkspaceAuthority(ctx context.Context, a *access.Authority) error {
	if err := tx.idb.NewRaw(`SELECT DISTINCT entitlement FROM entitlements WHERE workspace_id = ? AND environment IN ('', ?)
		ORDER BY entitlement`, a.WorkspaceID, string(a.Environment)).Scan(ctx, &a.Entitlements); err != nil {
		return err
	}
	var plans []string
	if err := tx.idb.NewRaw(`SELECT plan_id FROM workspace_plans WHERE workspace_id = ? AND environment = ?`,
		a.WorkspaceID, string(a.Environment)).Scan(ctx, &plans); err != nil {
		return err
	}
	if len(plans) > 0 {
		a.Plan = plans[0]
	}
	var flags []flagRow
	if err := tx.idb.NewRaw(`SELECT flag, workspace_id, enabled FROM feature_flags WHERE workspace_id IN ('', ?)`,
		a.WorkspaceID).Scan(ctx, &flags); err != nil {
		return err
	}
	// Defaults first, then overrides.
	slices.SortStableFunc(flags, func(x, y flagRow) int { return strings.Compare(x.WorkspaceID, y.WorkspaceID) })
	for _, f := range flags {
		a.Flags[f.Flag] = f.Enabled
	}
	return nil
}

// flagRow is one feature_flags row.
type flagRow struct {
	Flag        string `bun:"flag"`
	WorkspaceID string `bun:"workspace_id"`
	Enabled     bool   `bun:"enabled"`
}

// affected maps an update or delete that touched no row to NOT_FOUND.
func affected(op string, res sql.Result, err error) error {
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return errf(op, err)
	} else if n == 0 {
		return fault.E(op, fault.NotFound, "")
	}
	return nil
}

// notFoundOrNil is notFound for a lookup whose success needs no value.
func notFoundOrNil(op string, err error) error {
	if err == nil {
		return nil
	}
	return notFound(op, err)
}
