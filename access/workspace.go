package access

import "time"

// Workspace states.
const (
	// WorkspaceActive workspaces serve requests.
	WorkspaceActive = "active"
	// WorkspaceSuspended workspaces refuse every request with
	// WORKSPACE_ACCESS_DENIED.
	WorkspaceSuspended = "suspended"
)

// Membership statuses. The empty status means no membership.
const (
	// MembershipActive members pass the membership step.
	MembershipActive = "active"
	// MembershipSuspended members keep their roles but are refused.
	MembershipSuspended = "suspended"
)

// Workspace is a workspace record.
type Workspace struct {
	ID        string
	TenantID  string
	Name      string
	State     string
	CreatedAt time.Time
}

// User is a user record. Users belong to one tenant.
type User struct {
	ID          string
	TenantID    string
	Email       string
	DisplayName string
	CreatedAt   time.Time
}
