package access

import "slices"

// Permission is a resource.action identifier such as "project.read"
// (spec, Identity, workspace and access projections). Permissions are held
// through workspace roles and role-template assignments, each at a GrantScope.
type Permission string

// The spec's permissions.
const (
	// ProjectRead reads projects, tracks and submissions.
	ProjectRead Permission = "project.read"
	// ProjectUpdate edits projects, tracks and submissions.
	ProjectUpdate Permission = "project.update"
	// ProjectPublish publishes a project or submits it.
	ProjectPublish Permission = "project.publish"
	// TrackGenerate starts music generation and sound operations.
	TrackGenerate Permission = "track.generate"
	// MarketplaceCreateListing lists rights or works on the marketplace.
	MarketplaceCreateListing Permission = "marketplace.create_listing"
	// RewardAllocate allocates challenge rewards.
	RewardAllocate Permission = "reward.allocate"
	// RewardClaim claims a reward allocated to the caller.
	RewardClaim Permission = "reward.claim"
	// RewardReconcile reconciles reward payouts.
	RewardReconcile Permission = "reward.reconcile"
	// TreasuryRead reads treasury balances and movements.
	TreasuryRead Permission = "treasury.read"
	// TreasuryManage moves treasury funds and changes treasury settings.
	TreasuryManage Permission = "treasury.manage"
	// AuditRead reads the audit log.
	AuditRead Permission = "audit.read"
	// DeveloperPortalRead opens the developer portal.
	DeveloperPortalRead Permission = "developer.portal.read"
	// DeveloperAPIKeyRead lists and reads API keys.
	DeveloperAPIKeyRead Permission = "developer.api_key.read"
	// DeveloperAPIKeyManage creates, updates, rotates and revokes API keys.
	DeveloperAPIKeyManage Permission = "developer.api_key.manage"
	// DeveloperWebhookRead reads webhook registrations.
	DeveloperWebhookRead Permission = "developer.webhook.read"
	// DeveloperWebhookManage changes webhook registrations.
	DeveloperWebhookManage Permission = "developer.webhook.manage"
	// DeveloperUsageRead reads API usage.
	DeveloperUsageRead Permission = "developer.usage.read"
	// DeveloperLogsRead reads request logs.
	DeveloperLogsRead Permission = "developer.logs.read"
	// DeveloperProviderRead reads provider connections.
	DeveloperProviderRead Permission = "developer.provider.read"
	// DeveloperProviderManage changes provider connections and credentials.
	DeveloperProviderManage Permission = "developer.provider.manage"
)

// Permissions the platform needs beyond the spec's examples.
const (
	// WorkspaceRead reads the workspace, its subscription summary and flags.
	WorkspaceRead Permission = "workspace.read"
	// MemberRead lists members and their roles.
	MemberRead Permission = "member.read"
	// MemberInvite invites members (never with super_admin).
	MemberInvite Permission = "member.invite"
	// MemberManage changes members' roles, assignments and status.
	MemberManage Permission = "member.manage"
	// BillingRead reads plans, subscription and invoices.
	BillingRead Permission = "billing.read"
	// BillingManage changes the subscription and payment method.
	BillingManage Permission = "billing.manage"
	// FeePolicyRead reads the marketplace fee policy. Changing it needs
	// super_admin (Input.RequireSuperAdmin), not a workspace permission.
	FeePolicyRead Permission = "fee_policy.read"
	// WalletSign prepares transactions for the caller's verified wallet to sign
	// (swap, chain payment).
	WalletSign Permission = "wallet.sign"
	// InternalEvents lists and marks outbox events. No role or template holds
	// it: only API keys with ScopeInternal, issued by the host's operator.
	InternalEvents Permission = "internal.events"
)

// permissions lists every permission, in declaration order, for Permissions.
var permissions = []Permission{
	ProjectRead, ProjectUpdate, ProjectPublish, TrackGenerate, MarketplaceCreateListing,
	RewardAllocate, RewardClaim, RewardReconcile, TreasuryRead, TreasuryManage, AuditRead,
	DeveloperPortalRead, DeveloperAPIKeyRead, DeveloperAPIKeyManage, DeveloperWebhookRead,
	DeveloperWebhookManage, DeveloperUsageRead, DeveloperLogsRead, DeveloperProviderRead,
	DeveloperProviderManage,
	WorkspaceRead, MemberRead, MemberInvite, MemberManage, BillingRead, BillingManage,
	FeePolicyRead, WalletSign, InternalEvents,
}

// Permissions returns every permission the platform knows, in a stable order.
func Permissions() []Permission { return slices.Clone(permissions) }

// Valid reports whether p is a known permission.
func (p Permission) Valid() bool { return slices.Contains(permissions, p) }

// GrantScope bounds the resources a grant reaches. Scopes are ordered from
// narrowest to broadest; each includes the ones before it.
type GrantScope string

const (
	// GrantOwn reaches resources the user owns (Resource.OwnerUserID).
	GrantOwn GrantScope = "own"
	// GrantAssigned adds resources the user is assigned to
	// (Resource.AssigneeUserIDs), and a project the user holds a
	// project-scoped assignment to (Resource.IsProject).
	GrantAssigned GrantScope = "assigned"
	// GrantProject adds every resource of a project in which the user holds a
	// project-scoped role-template assignment.
	GrantProject GrantScope = "project"
	// GrantWorkspace reaches every resource of the workspace.
	GrantWorkspace GrantScope = "workspace"
	// GrantAny is privileged: it reaches resources of any workspace. No
	// workspace role or template grants it; it exists for platform
	// administration and is never granted through the API.
	GrantAny GrantScope = "any"
)

// grantScopes is the breadth order of grant scopes.
var grantScopes = []GrantScope{GrantOwn, GrantAssigned, GrantProject, GrantWorkspace, GrantAny}

// GrantScopes returns the grant scopes from narrowest to broadest.
func GrantScopes() []GrantScope { return slices.Clone(grantScopes) }

// rank is the breadth of s: 0 for an unknown scope, 1 for GrantOwn, up to 5.
func (s GrantScope) rank() int { return slices.Index(grantScopes, s) + 1 }

// Valid reports whether s is a known grant scope.
func (s GrantScope) Valid() bool { return s.rank() > 0 }

// Covers reports whether s reaches at least as far as o.
func (s GrantScope) Covers(o GrantScope) bool { return s.Valid() && s.rank() >= o.rank() }
