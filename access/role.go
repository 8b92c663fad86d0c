package access

import "slices"

// Role is one of the spec's eight workspace roles. A membership can hold
// several; its grants are the union of theirs (see RoleGrants).
type Role string

// The workspace roles.
const (
	// RoleOwner holds every workspace permission, including treasury and
	// billing management.
	RoleOwner Role = "OWNER"
	// RoleAdmin administers the workspace but cannot manage treasury or billing.
	RoleAdmin Role = "ADMIN"
	// RoleCreator makes and publishes music.
	RoleCreator Role = "CREATOR"
	// RoleDeveloper uses the developer portal: keys, webhooks, providers,
	// usage and logs. It holds no finance, admin, owner, wallet-signing or
	// treasury permission (spec, Authentication 6).
	RoleDeveloper Role = "DEVELOPER"
	// RoleFinance reads treasury, billing and audit, and reconciles rewards.
	RoleFinance Role = "FINANCE"
	// RoleModerator reviews and edits workspace content.
	RoleModerator Role = "MODERATOR"
	// RoleMember works on what it owns or is assigned to.
	RoleMember Role = "MEMBER"
	// RoleViewer reads the workspace and its projects.
	RoleViewer Role = "VIEWER"
)

// Roles returns the eight workspace roles.
func Roles() []Role {
	return []Role{RoleOwner, RoleAdmin, RoleCreator, RoleDeveloper, RoleFinance, RoleModerator, RoleMember, RoleViewer}
}

// Valid reports whether r is one of the eight workspace roles.
func (r Role) Valid() bool { return slices.Contains(Roles(), r) }

// SuperAdmin is the platform role, distinct from workspace administration.
// It is granted only by the host's operator, never through the API.
const SuperAdmin = "super_admin"

// GatingRoles returns the roles a route may require by name
// (Input.RequiredRoles): DEVELOPER, which gates the developer portal (spec,
// Authentication 6). Every other rule is a permission. The route-policy
// step refuses a route that requires any other role, so a role gates
// nothing this list does not name, and Authority.Covers compares exactly
// these roles.
func GatingRoles() []Role { return []Role{RoleDeveloper} }

// Administrator reports whether the membership holds a workspace
// administration role (OWNER or ADMIN). super_admin is a platform role and
// does not count.
func (a *Authority) Administrator() bool { return a.HasRole(RoleOwner) || a.HasRole(RoleAdmin) }
