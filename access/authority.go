package access

import (
	"slices"
	"sort"
)

// Assignment is a role-template assignment: workspace-wide when ProjectID is
// "", otherwise limited to that project.
type Assignment struct {
	Template  Template
	ProjectID string
}

// Authority is the authority snapshot of one user in one workspace of one
// tenant, in one environment, loaded by Store.AuthorityLoad and cached by Cache until the
// workspace's or the platform's authority version changes. Treat it as read
// only: cached snapshots are shared between requests.
type Authority struct {
	TenantID    string
	WorkspaceID string
	// Environment is the environment the snapshot was loaded for: it selects
	// the entitlements (a workspace's plan, and so its entitlements, can
	// differ between test and live).
	Environment Environment
	// WorkspaceState is the workspace's state; "" when the workspace does not
	// exist in the tenant.
	WorkspaceState string
	UserID         string
	// MembershipStatus is MembershipActive, MembershipSuspended or "" (none).
	MembershipStatus string
	// Roles are the membership's workspace roles.
	Roles []Role
	// Assignments are the user's role-template assignments in the workspace.
	Assignments []Assignment
	// Denies are explicit denies; they beat every grant.
	Denies []Permission
	// Entitlements are the workspace's entitlement identifiers ("ai.basic")
	// in Environment: those held in both environments plus those held in
	// Environment only. They never grant administrative authority.
	Entitlements []string
	// Plan is the plan in effect for the workspace in Environment; "" when
	// none. The entitlement step asks Offers whether it is a paid plan.
	Plan string
	// Flags are the feature flags in effect: platform defaults overridden by
	// the workspace's own rows.
	Flags map[string]bool
	// SuperAdmin reports the super_admin platform role.
	SuperAdmin bool
	// WalletCount is the number of verified wallets of the user in the tenant.
	WalletCount int
	// Version is the authority version the snapshot was loaded at.
	Version int64

	// prepared holds the grants and effective permissions computed once by
	// prepare, so a cached snapshot answers without rebuilding role tables.
	prepared *preparedGrants
}

type preparedGrants struct {
	grants    []boundGrant
	effective []Permission
}

// prepare computes the snapshot's grants and effective permissions once.
// The cache calls it before sharing a snapshot between requests.
func (a *Authority) prepare() {
	a.prepared = nil
	p := &preparedGrants{grants: a.grants()}
	a.prepared = p
	p.effective = a.Effective()
}

// boundGrant is a grant as the authority holds it: from a role or a
// workspace-wide assignment (ProjectID ""), or from a project-scoped
// assignment, capped at GrantProject and bound to that project.
type boundGrant struct {
	Grant
	ProjectID string
}

// grants returns every grant a holds, before denies, when a has an active
// membership; a member that is not active holds nothing.
func (a *Authority) grants() []boundGrant {
	if a == nil || a.MembershipStatus != MembershipActive {
		return nil
	}
	if a.prepared != nil {
		return a.prepared.grants
	}
	var out []boundGrant
	for _, r := range a.Roles {
		for _, gr := range RoleGrants(r) {
			out = append(out, boundGrant{Grant: gr})
		}
	}
	for _, as := range a.Assignments {
		t, ok := TemplateFor(as.Template)
		if !ok || (as.ProjectID != "" && !t.ProjectAssignable) {
			continue
		}
		for _, gr := range t.Grants {
			if as.ProjectID != "" && gr.Scope.Covers(GrantProject) {
				gr.Scope = GrantProject
			}
			out = append(out, boundGrant{Grant: gr, ProjectID: as.ProjectID})
		}
	}
	return out
}

// Denied reports whether p is explicitly denied.
func (a *Authority) Denied(p Permission) bool {
	return a != nil && slices.Contains(a.Denies, p)
}

// Effective returns the permissions a holds: the union of its roles' and
// templates' grants, minus its denies, sorted. It is empty without an
// active membership.
func (a *Authority) Effective() []Permission {
	if a != nil && a.prepared != nil && a.prepared.effective != nil {
		return slices.Clone(a.prepared.effective)
	}
	var out []Permission
	for _, gr := range a.grants() {
		if !a.Denied(gr.Permission) && !slices.Contains(out, gr.Permission) {
			out = append(out, gr.Permission)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Has reports whether a holds p and the broadest scope it holds it at. A
// denied permission is not held.
func (a *Authority) Has(p Permission) (GrantScope, bool) {
	if a.Denied(p) {
		return "", false
	}
	var best GrantScope
	for _, gr := range a.grants() {
		if gr.Permission == p && gr.Scope.rank() > best.rank() {
			best = gr.Scope
		}
	}
	return best, best != ""
}

// HasRole reports whether the membership holds role r. A membership that is
// not active holds no role.
func (a *Authority) HasRole(r Role) bool {
	return a != nil && a.MembershipStatus == MembershipActive && slices.Contains(a.Roles, r)
}

// HasEntitlement reports whether the workspace holds entitlement e in the
// snapshot's environment.
func (a *Authority) HasEntitlement(e string) bool {
	return a != nil && slices.Contains(a.Entitlements, e)
}

// FlagEnabled reports whether feature flag f is on. A flag with no row is off.
func (a *Authority) FlagEnabled(f string) bool { return a != nil && a.Flags[f] }

// SafePermissions returns the effective permission identifiers as strings,
// for the auth context and saas me projections. InternalEvents is never
// among them.
func (a *Authority) SafePermissions() []string {
	eff := a.Effective()
	out := make([]string, 0, len(eff))
	for _, p := range eff {
		if p != InternalEvents {
			out = append(out, string(p))
		}
	}
	return out
}

// Resource describes the resource a request acts on, for the resource-scope
// step. Zero fields are unknown and match nothing narrower than the
// workspace.
type Resource struct {
	// OwnerUserID is the user who owns the resource.
	OwnerUserID string
	// AssigneeUserIDs are users assigned to the resource (collaborators).
	AssigneeUserIDs []string
	// ProjectID is the project the resource belongs to; "" for none.
	ProjectID string
	// IsProject says the resource is project ProjectID itself, not a
	// resource inside it: a user holding a project-scoped assignment to
	// that project counts as assigned to it, so an assigned grant (a
	// collaborator's project.read and project.update) reaches the project
	// without listing its members in AssigneeUserIDs.
	IsProject bool
	// WorkspaceID is the resource's workspace; "" means the request's.
	WorkspaceID string
}

// reaches reports whether a reaches resource r with permission p: some
// grant of p whose scope covers r. Denies are checked by the caller.
func (a *Authority) reaches(p Permission, r *Resource) bool {
	if r == nil {
		return true
	}
	for _, gr := range a.grants() {
		if gr.Permission == p && gr.reaches(a, r) {
			return true
		}
	}
	return false
}

// reaches reports whether one grant covers resource r.
func (gr boundGrant) reaches(a *Authority, r *Resource) bool {
	if gr.Scope == GrantAny {
		return true
	}
	if r.WorkspaceID != "" && r.WorkspaceID != a.WorkspaceID {
		return false
	}
	if gr.ProjectID != "" && r.ProjectID != gr.ProjectID {
		return false
	}
	own := r.OwnerUserID != "" && r.OwnerUserID == a.UserID
	assigned := own || (a.UserID != "" && slices.Contains(r.AssigneeUserIDs, a.UserID)) ||
		(r.IsProject && r.ProjectID != "" && a.assignedToProject(r.ProjectID))
	switch gr.Scope {
	case GrantOwn:
		return own
	case GrantAssigned:
		return assigned
	case GrantProject:
		if assigned {
			return true
		}
		return r.ProjectID != "" && a.assignedToProject(r.ProjectID)
	case GrantWorkspace:
		return true
	}
	return false
}

// assignedToProject reports whether a holds a project-scoped assignment to
// project id.
func (a *Authority) assignedToProject(id string) bool {
	for _, as := range a.Assignments {
		if as.ProjectID == id {
			return true
		}
	}
	return false
}

// Covers reports whether a holds in full the authority that a key with
// scopes has when creator made it: everything such a key can do, a can do
// itself. A key acts with its creator's current authority narrowed by its
// scopes, so handing its secret to a must not widen what a can do. It
// holds when a and creator are the same user of the same workspace, or
// when all of these hold:
//   - creator is not super_admin, or a is;
//   - a holds each gating role (GatingRoles) creator holds;
//   - for each permission a scope stands for that creator holds, a holds it
//     at workspace scope or broader and at least as broad as creator's. A
//     grant narrower than the workspace (own, assigned, project) reaches
//     resources relative to its holder, which a reaches only with a
//     workspace-wide grant.
//
// A nil creator (no authority left in the workspace) holds nothing, so a
// covers it. Unknown scopes stand for no permission; callers validate them.
func (a *Authority) Covers(creator *Authority, scopes []string) bool {
	if creator == nil || creator.MembershipStatus != MembershipActive {
		return true
	}
	if a == nil || a.MembershipStatus != MembershipActive {
		return false
	}
	if a.TenantID == creator.TenantID && a.WorkspaceID == creator.WorkspaceID && a.UserID == creator.UserID {
		return true
	}
	if creator.SuperAdmin && !a.SuperAdmin {
		return false
	}
	for _, r := range GatingRoles() {
		if creator.HasRole(r) && !a.HasRole(r) {
			return false
		}
	}
	for _, sc := range scopes {
		ps, _ := ScopePermissions(sc)
		for _, p := range ps {
			theirs, ok := creator.Has(p)
			if !ok {
				continue
			}
			mine, ok := a.Has(p)
			if !ok || !mine.Covers(GrantWorkspace) || !mine.Covers(theirs) {
				return false
			}
		}
	}
	return true
}

// Reaches reports whether principal p, holding a, may use permission perm
// on resource r: perm is not denied, an API key's scopes stand for it, and
// some grant of perm covers r (own, assigned, project, workspace or any).
// Domains whose moves need different permissions on one route (a status
// table whose rows name their permission) ask it for the move's own.
func (a *Authority) Reaches(p *Principal, perm Permission, r *Resource) bool {
	if a == nil || p == nil || a.Denied(perm) {
		return false
	}
	if p.Kind == CredentialAPIKey && !keyAllows(p.Scopes, perm) {
		return false
	}
	return a.reaches(perm, r)
}
