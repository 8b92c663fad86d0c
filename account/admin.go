package account

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Member is a user's membership of a workspace, as administration shows it.
type Member struct {
	UserID      string
	Email       string
	DisplayName string
	// Roles are the membership's workspace roles, sorted.
	Roles []access.Role
	// Status is access.MembershipActive or access.MembershipSuspended.
	Status   string
	JoinedAt time.Time
}

// AdminStore is the port of member administration. Every read and write
// is scoped to one workspace; a user of another workspace is NOT_FOUND.
type AdminStore interface {
	AuditWriter
	// MemberList returns up to limit members of workspaceID with user ids
	// above after ("" for the first), by user id.
	MemberList(ctx context.Context, workspaceID, after string, limit int) ([]Member, error)
	// MemberGet returns one member of workspaceID; NOT_FOUND otherwise.
	MemberGet(ctx context.Context, workspaceID, userID string) (Member, error)
	// MemberOwnerCount counts the active members of workspaceID holding
	// OWNER, other than exceptUserID.
	MemberOwnerCount(ctx context.Context, workspaceID, exceptUserID string) (int, error)
	// MembershipRolesSet replaces a membership's roles and bumps the
	// workspace's authority version (store.Tx's access writer).
	MembershipRolesSet(ctx context.Context, workspaceID, userID string, roles []access.Role) error
}

// Grantable reports whether a holder of authority a may give role r to
// someone: every grant of r must be held by a at a scope at least as
// broad. An ADMIN may therefore grant ADMIN or CREATOR but not OWNER
// (treasury and billing management); nobody grants super_admin, which is
// not a workspace role.
func Grantable(a *access.Authority, r access.Role) bool {
	if !r.Valid() || a == nil {
		return false
	}
	for _, gr := range access.RoleGrants(r) {
		held, ok := a.Has(gr.Permission)
		if !ok || !held.Covers(gr.Scope) {
			return false
		}
	}
	return true
}

// checkRoles validates roles requested for a member: INVALID_INPUT
// (details.field "roles[i]") for an unknown role, super_admin included, or
// a duplicate, "roles" for an empty list; ACCESS_DENIED (details.field
// "roles[i]") for a role beyond the caller's authority (Grantable).
func checkRoles(op string, a *access.Authority, roles []access.Role) error {
	if err := access.ValidateRoles(roles); err != nil {
		return fault.Wrap(op, err)
	}
	for i, r := range roles {
		field := "roles[" + strconv.Itoa(i) + "]"
		if slices.Index(roles, r) != i {
			return fault.Invalid(op, field, "A role is listed twice.")
		}
		if !Grantable(a, r) {
			return fault.E(op, fault.AccessDenied, "You cannot grant a role beyond your own authority.").
				With("field", field).With("role", string(r))
		}
	}
	return nil
}

// sortedRoles returns roles sorted, as the store and the audit log keep them.
func sortedRoles(roles []access.Role) []access.Role {
	out := slices.Clone(roles)
	slices.Sort(out)
	return out
}

// MemberList lists the caller's workspace's members (see AdminStore).
func (s *Service) MemberList(ctx context.Context, st AdminStore, p *access.Principal, after string, limit int) ([]Member, error) {
	ms, err := st.MemberList(ctx, p.WorkspaceID, after, limit)
	if err != nil {
		return nil, fault.Wrap("account.MemberList", err)
	}
	return ms, nil
}

// RoleChange is one change of a member's roles.
type RoleChange struct {
	// UserID is the member whose roles change.
	UserID string
	// Roles replace the member's roles.
	Roles []access.Role
	// RequestID is the gateway's request id, recorded in the audit log.
	RequestID string
}

// ChangeRoles replaces a member's roles in the caller's workspace, in the
// caller's unit of work, with its audit event (before and after roles) and
// the authority version bump that makes the change effective on the
// affected account's next request. a is the caller's authority.
//
// Errors: NOT_FOUND when the user is not a member of the caller's
// workspace (another workspace's account included); ACCESS_DENIED with
// details.reason "self_role_change" when callers change their own roles,
// and (details.field "roles[i]" or "userId") when the new roles or the
// member's current ones are beyond the caller's authority (an ADMIN cannot
// make or unmake an OWNER); INVALID_INPUT (details.field "roles[i]") for
// an unknown role, super_admin included; CONFLICT with details.reason
// "last_owner" when the change would leave the workspace without an
// active OWNER.
func (s *Service) ChangeRoles(ctx context.Context, st AdminStore, p *access.Principal, a *access.Authority, in RoleChange) (Member, error) {
	const op = "account.ChangeRoles"
	m, err := st.MemberGet(ctx, p.WorkspaceID, in.UserID)
	if err != nil {
		return Member{}, fault.Wrap(op, err)
	}
	if in.UserID == p.UserID {
		return Member{}, fault.E(op, fault.AccessDenied, "You cannot change your own roles; ask another administrator.").
			With("reason", "self_role_change")
	}
	if err := checkRoles(op, a, in.Roles); err != nil {
		return Member{}, err
	}
	for _, r := range m.Roles {
		if !Grantable(a, r) {
			return Member{}, fault.E(op, fault.AccessDenied, "The member holds a role beyond your own authority.").
				With("field", "userId").With("role", string(r))
		}
	}
	next := sortedRoles(in.Roles)
	if slices.Contains(m.Roles, access.RoleOwner) && !slices.Contains(next, access.RoleOwner) && m.Status == access.MembershipActive {
		n, err := st.MemberOwnerCount(ctx, p.WorkspaceID, in.UserID)
		if err != nil {
			return Member{}, fault.Wrap(op, err)
		}
		if n == 0 {
			return Member{}, fault.E(op, fault.Conflict, "The workspace must keep at least one owner.").With("reason", "last_owner")
		}
	}
	if err := st.MembershipRolesSet(ctx, p.WorkspaceID, in.UserID, next); err != nil {
		return Member{}, fault.Wrap(op, err)
	}
	err = Audit(ctx, st, p, AuditEntry{Action: ActionMemberRolesChanged, TargetType: TargetUser, TargetID: in.UserID,
		RequestID: in.RequestID, Before: RolesState{Roles: m.Roles}, After: RolesState{Roles: next}})
	if err != nil {
		return Member{}, fault.Wrap(op, err)
	}
	m.Roles = next
	return m, nil
}

// AuditList reads the audit log of the caller's workspace and environment,
// newest first: a test credential reads test events only, a live one live
// events only.
func (s *Service) AuditList(ctx context.Context, st AuditReader, p *access.Principal, before string, limit int) ([]AuditEvent, error) {
	es, err := st.AuditList(ctx, p.Scope(), before, limit)
	if err != nil {
		return nil, fault.Wrap("account.AuditList", err)
	}
	return es, nil
}
