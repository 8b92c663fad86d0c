package access

import (
	"slices"
	"strconv"

	"github.com/creatormusic/platform/fault"
)

// Grant is one permission held at a grant scope.
type Grant struct {
	Permission Permission
	Scope      GrantScope
}

// RoleGrantSet is one row of the role table: a workspace role and its grants.
type RoleGrantSet struct {
	Role   Role
	Grants []Grant
}

// g builds grants of several permissions at one scope (table shorthand).
func g(s GrantScope, ps ...Permission) []Grant {
	out := make([]Grant, len(ps))
	for i, p := range ps {
		out[i] = Grant{Permission: p, Scope: s}
	}
	return out
}

// developerPermissions returns the developer.* set.
func developerPermissions() []Permission {
	return []Permission{
		DeveloperPortalRead, DeveloperAPIKeyRead, DeveloperAPIKeyManage, DeveloperWebhookRead,
		DeveloperWebhookManage, DeveloperUsageRead, DeveloperLogsRead, DeveloperProviderRead,
		DeveloperProviderManage,
	}
}

// ownerOnly returns the workspace permissions only OWNER (role or template) holds.
func ownerOnly() []Permission { return []Permission{TreasuryManage, BillingManage} }

// noRole returns the permissions no role or template holds.
func noRole() []Permission { return []Permission{InternalEvents} }

// allBut returns every permission at scope s except those in the excluded lists.
func allBut(s GrantScope, excluded ...[]Permission) []Grant {
	var out []Grant
	for _, p := range permissions {
		skip := false
		for _, ex := range excluded {
			if slices.Contains(ex, p) {
				skip = true
			}
		}
		if !skip {
			out = append(out, Grant{Permission: p, Scope: s})
		}
	}
	return out
}

// concat joins grant lists.
func concat(lists ...[]Grant) []Grant {
	var out []Grant
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// roleTable is the grants of each workspace role. It is built on each call
// so that callers can never mutate shared state.
func roleTable() []RoleGrantSet {
	return []RoleGrantSet{
		{RoleOwner, allBut(GrantWorkspace, noRole())},
		{RoleAdmin, concat(
			allBut(GrantWorkspace, noRole(), ownerOnly(), []Permission{WalletSign}),
			g(GrantOwn, WalletSign),
		)},
		{RoleCreator, concat(
			g(GrantWorkspace, WorkspaceRead, MemberRead, ProjectRead, FeePolicyRead),
			g(GrantOwn, ProjectUpdate, ProjectPublish, TrackGenerate, MarketplaceCreateListing, RewardClaim, WalletSign),
		)},
		{RoleDeveloper, concat(
			g(GrantWorkspace, WorkspaceRead),
			g(GrantWorkspace, developerPermissions()...),
			g(GrantOwn, ProjectRead),
		)},
		{RoleFinance, g(GrantWorkspace,
			WorkspaceRead, MemberRead, ProjectRead, TreasuryRead, BillingRead, AuditRead,
			RewardReconcile, FeePolicyRead, DeveloperUsageRead)},
		{RoleModerator, g(GrantWorkspace, WorkspaceRead, MemberRead, ProjectRead, ProjectUpdate)},
		{RoleMember, concat(
			g(GrantWorkspace, WorkspaceRead, MemberRead),
			g(GrantAssigned, ProjectRead, ProjectUpdate),
			g(GrantOwn, TrackGenerate, RewardClaim, WalletSign),
		)},
		{RoleViewer, g(GrantWorkspace, WorkspaceRead, MemberRead, ProjectRead)},
	}
}

// RoleTable returns the grants of every workspace role, as data. It is what
// the roles route and the architecture route serve.
func RoleTable() []RoleGrantSet { return roleTable() }

// RoleGrants returns the grants of role r, or nil for an unknown role.
func RoleGrants(r Role) []Grant {
	for _, row := range roleTable() {
		if row.Role == r {
			return row.Grants
		}
	}
	return nil
}

// Template names one of the nine role templates of the access policy.
type Template string

// The role templates.
const (
	TemplateOwner        Template = "owner"        // the workspace owner's grants
	TemplateAdmin        Template = "admin"        // the workspace admin's grants
	TemplateProjectLead  Template = "project_lead" // runs a project: edit, publish, allocate rewards
	TemplateCreator      Template = "creator"      // creates tracks in a project
	TemplateCollaborator Template = "collaborator" // works on what it is assigned in a project
	TemplateFinance      Template = "finance"      // reads treasury, billing and audit
	TemplateAnalyst      Template = "analyst"      // reads projects and usage
	TemplateSupport      Template = "support"      // reads members, projects, audit and logs
	TemplateViewer       Template = "viewer"       // reads the workspace and its projects
)

// AssignmentScope says whether a template assignment covers the whole
// workspace or one project.
type AssignmentScope string

const (
	// AssignWorkspace assignments (project id "") apply across the workspace.
	AssignWorkspace AssignmentScope = "workspace"
	// AssignProject assignments apply within one project: their grants are
	// capped at GrantProject and reach only that project's resources.
	AssignProject AssignmentScope = "project"
)

// TemplateSpec is one row of the template table.
type TemplateSpec struct {
	// Name is the template's identifier; Title its display name.
	Name  Template
	Title string
	// DefaultScope is where the template is usually assigned.
	DefaultScope AssignmentScope
	// ProjectAssignable says whether the template may be assigned to a
	// project. Owner and Admin are workspace-wide by nature.
	ProjectAssignable bool
	// Grants are the template's permissions.
	Grants []Grant
}

// templateTable is the nine role templates, built on each call.
func templateTable() []TemplateSpec {
	return []TemplateSpec{
		{TemplateOwner, "Owner", AssignWorkspace, false, allBut(GrantWorkspace, noRole())},
		{TemplateAdmin, "Admin", AssignWorkspace, false, concat(
			allBut(GrantWorkspace, noRole(), ownerOnly(), []Permission{WalletSign}),
			g(GrantOwn, WalletSign),
		)},
		{TemplateProjectLead, "Project Lead", AssignProject, true, concat(
			g(GrantProject, ProjectRead, ProjectUpdate, ProjectPublish, TrackGenerate,
				MarketplaceCreateListing, RewardAllocate),
			g(GrantWorkspace, WorkspaceRead, MemberRead),
		)},
		{TemplateCreator, "Creator", AssignProject, true, concat(
			g(GrantProject, ProjectRead),
			g(GrantAssigned, ProjectUpdate),
			g(GrantOwn, TrackGenerate, MarketplaceCreateListing, RewardClaim),
			g(GrantWorkspace, WorkspaceRead),
		)},
		{TemplateCollaborator, "Collaborator", AssignProject, true, concat(
			g(GrantAssigned, ProjectRead, ProjectUpdate),
			g(GrantOwn, TrackGenerate, RewardClaim),
			g(GrantWorkspace, WorkspaceRead),
		)},
		{TemplateFinance, "Finance", AssignWorkspace, true, g(GrantWorkspace,
			WorkspaceRead, TreasuryRead, BillingRead, AuditRead, RewardReconcile, FeePolicyRead)},
		{TemplateAnalyst, "Analyst", AssignWorkspace, true, g(GrantWorkspace,
			WorkspaceRead, ProjectRead, DeveloperUsageRead)},
		{TemplateSupport, "Support", AssignWorkspace, true, g(GrantWorkspace,
			WorkspaceRead, MemberRead, ProjectRead, AuditRead, DeveloperLogsRead)},
		{TemplateViewer, "Viewer", AssignWorkspace, true, g(GrantWorkspace, WorkspaceRead, ProjectRead)},
	}
}

// Templates returns the nine role templates, as data.
func Templates() []TemplateSpec { return templateTable() }

// TemplateFor returns the template named t.
func TemplateFor(t Template) (TemplateSpec, bool) {
	for _, s := range templateTable() {
		if s.Name == t {
			return s, true
		}
	}
	return TemplateSpec{}, false
}

// ValidateAssignment checks a template assignment: the template must exist
// and, for a project id other than "", be project-assignable. It returns
// INVALID_INPUT naming "template" or "projectId".
func ValidateAssignment(t Template, projectID string) error {
	const op = "access.ValidateAssignment"
	s, ok := TemplateFor(t)
	if !ok {
		return fault.Invalid(op, "template", "Unknown role template.")
	}
	if projectID != "" && !s.ProjectAssignable {
		return fault.Invalid(op, "projectId", "This role template applies to the whole workspace.")
	}
	return nil
}

// ValidateRoles checks workspace roles, returning INVALID_INPUT naming
// "roles[i]" for the first unknown one, or "roles" for an empty list.
func ValidateRoles(roles []Role) error {
	const op = "access.ValidateRoles"
	if len(roles) == 0 {
		return fault.Invalid(op, "roles", "At least one role is required.")
	}
	for i, r := range roles {
		if !r.Valid() {
			return fault.Invalid(op, "roles["+strconv.Itoa(i)+"]", "Unknown workspace role.")
		}
	}
	return nil
}
