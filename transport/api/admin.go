package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
)

// MemberView is a workspace member as administration shows it.
type MemberView struct {
	// UserID is the member's user id.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// Email is the member's sign-in email address.
	Email string `json:"email" example:"ada@example.com"`
	// DisplayName is the member's display name.
	DisplayName string `json:"displayName" example:"Ada"`
	// Roles are the member's workspace roles.
	Roles []string `json:"roles" example:"CREATOR"`
	// Status is active or suspended.
	Status string `json:"status" example:"active" enum:"active,suspended"`
	// JoinedAt is when the member joined the workspace.
	JoinedAt time.Time `json:"joinedAt"`
}

// MemberPage is one page of members, by user id.
type MemberPage struct {
	// Items are the page's members, in user id order.
	Items []MemberView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOnVzcl8wMWpk"`
}

// GrantView is one permission held at a grant scope.
type GrantView struct {
	// Permission is the permission, a resource.action identifier.
	Permission string `json:"permission" example:"project.read"`
	// Scope is where the permission applies: the holder's own resources, those assigned to them,
	// one project, the whole workspace, or any.
	Scope string `json:"scope" example:"workspace" enum:"own,assigned,project,workspace,any"`
}

// RoleView is a workspace role and its grants.
type RoleView struct {
	// Role is the workspace role.
	Role string `json:"role" example:"CREATOR"`
	// Grants are the permissions the role holds, each at its scope.
	Grants []GrantView `json:"grants"`
}

// TemplateView is a role template of the access policy.
type TemplateView struct {
	// Name is the template's identifier.
	Name string `json:"name" example:"project_lead"`
	// Title is the template's human-readable name.
	Title string `json:"title" example:"Project Lead"`
	// DefaultScope is where the template is usually assigned.
	DefaultScope string `json:"defaultScope" example:"project" enum:"workspace,project"`
	// ProjectAssignable says whether it may be assigned to one project.
	ProjectAssignable bool `json:"projectAssignable" example:"true"`
	// Grants are the permissions the template grants, each at its scope.
	Grants []GrantView `json:"grants"`
}

// RoleCatalog is the access policy's roles and templates, as data.
type RoleCatalog struct {
	// Roles are the eight workspace roles.
	Roles []RoleView `json:"roles"`
	// Templates are the nine role templates.
	Templates []TemplateView `json:"templates"`
	// PlatformRoles are the platform roles, granted only by the host's
	// operator, never through the API.
	PlatformRoles []string `json:"platformRoles" example:"super_admin"`
}

// AuditActor is who did something: a user, through an API key when KeyID
// is set; an empty user is the host's operator.
type AuditActor struct {
	// UserID is the acting user's id; empty for the host's operator.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// KeyID is the API key the user acted through; empty for a session.
	KeyID string `json:"keyId" example:""`
}

// AuditTarget is what an audit event acted on: a user (id: the user id), a
// workspace, an invitation (id: the invited email), a feature flag (id: the
// flag's name, set by the host's operator), a subscription, a policy (id:
// the policy id, such as fees.marketplace or ai.routing), a project (id:
// the project id), a submission (id: the submission id), a model of the AI
// registry (id: the model id), a rights policy (id: the policy id), a
// license offer, a marketplace listing, a cross-chain transfer, a proof
// verification, an AI artifact, a challenge or a reward (id: theirs). The enum is every target a
// domain writes (TestAuditTargetsDocumented keeps them equal).
type AuditTarget struct {
	// Type is the kind of resource acted on.
	Type string `json:"type" example:"user" enum:"user,workspace,invitation,feature_flag,subscription,policy,project,submission,ai_model,rights_policy,license,listing,cctp_transfer,zk_verification,ai_artifact,challenge,reward,release"`
	// ID is the id of the resource acted on.
	ID string `json:"id" example:"usr_01jd0000000000000000000001"`
}

// AuditEventView is one event of the append-only audit log. It never
// carries a secret.
type AuditEventView struct {
	// ID is the audit event's id.
	ID string `json:"id" example:"aud_01jd0000000000000000000000"`
	// Action names what was done, as resource.verb.
	Action string `json:"action" example:"member.roles_changed"`
	// Actor is who did it.
	Actor AuditActor `json:"actor"`
	// Target is what it was done to.
	Target AuditTarget `json:"target"`
	// RequestID is the request that made the change.
	RequestID string `json:"requestId" example:"req_01jd0000000000000000000000"`
	// Before and After are the authority before and after the change
	// (null when not applicable).
	Before json.RawMessage `json:"before"`
	// After is the authority after the change; null when not applicable.
	After json.RawMessage `json:"after"`
	// CreatedAt is when it was done.
	CreatedAt time.Time `json:"createdAt"`
}

// AuditPage is one page of the audit log, newest first.
type AuditPage struct {
	// Items are the page's audit events, newest first.
	Items []AuditEventView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOmF1ZF8wMWpk"`
}

// InviteRequest invites an email address with workspace roles.
type InviteRequest struct {
	// Email is the address the invitation code is mailed to.
	Email string `json:"email" example:"ada@example.com"`
	// Roles are workspace roles within the inviter's authority; super_admin
	// is not a workspace role and is refused.
	Roles []access.Role `json:"roles" example:"CREATOR"`
}

// InvitationView is a sent invitation. Its code is mailed to the invited
// address only.
type InvitationView struct {
	// WorkspaceID is the workspace the invitation joins.
	WorkspaceID string `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	// Email is the invited address.
	Email string `json:"email" example:"ada@example.com"`
	// Roles are the workspace roles the invitee gets on accepting.
	Roles []string `json:"roles" example:"CREATOR"`
	// InvitedBy is the inviting user's id.
	InvitedBy string `json:"invitedBy" example:"usr_01jd0000000000000000000000"`
	// ExpiresAt is when the invitation's code stops working.
	ExpiresAt time.Time `json:"expiresAt"`
}

// RolesRequest replaces a member's roles.
type RolesRequest struct {
	// Roles are the member's new workspace roles, replacing the current ones; each must be within
	// the caller's authority.
	Roles []access.Role `json:"roles" example:"MODERATOR"`
}

func memberView(m account.Member) MemberView {
	return MemberView{UserID: m.UserID, Email: m.Email, DisplayName: m.DisplayName, Roles: roleNames(m.Roles),
		Status: m.Status, JoinedAt: m.JoinedAt}
}

func roleNames(rs []access.Role) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

func grantViews(gs []access.Grant) []GrantView {
	out := make([]GrantView, len(gs))
	for i, g := range gs {
		out[i] = GrantView{Permission: string(g.Permission), Scope: string(g.Scope)}
	}
	return out
}

func auditView(e account.AuditEvent) AuditEventView {
	return AuditEventView{ID: e.ID, Action: e.Action, Actor: AuditActor{UserID: e.ActorUserID, KeyID: e.ActorKeyID},
		Target: AuditTarget{Type: e.TargetType, ID: e.TargetID}, RequestID: e.RequestID, Before: e.Before, After: e.After,
		CreatedAt: e.CreatedAt}
}

// roleCatalog is the roles route's answer, from the access policy's tables.
func roleCatalog() RoleCatalog {
	out := RoleCatalog{PlatformRoles: []string{access.SuperAdmin}}
	for _, r := range access.RoleTable() {
		out.Roles = append(out.Roles, RoleView{Role: string(r.Role), Grants: grantViews(r.Grants)})
	}
	for _, t := range access.Templates() {
		out.Templates = append(out.Templates, TemplateView{Name: string(t.Name), Title: t.Title, DefaultScope: string(t.DefaultScope),
			ProjectAssignable: t.ProjectAssignable, Grants: grantViews(t.Grants)})
	}
	return out
}

// pageQuery documents limit and cursor.
func pageQuery(example string) []transport.Param {
	return []transport.Param{{Name: "limit", Description: "Page size, 1 to 100 (default 20).", Example: "20"},
		{Name: "cursor", Description: "The nextCursor of the previous page.", Example: example}}
}

// adminRoutes are the membership half of the spec's Administration: members,
// invitations, roles, the audit log and role changes. Every route acts in
// the caller's workspace only: another workspace's account ids are 404, and
// naming another workspace (X-Workspace-Id) is WORKSPACE_ACCESS_DENIED.
// They need a signed-in user, except the audit log, which an API key with
// the audit:read scope may also read.
func adminRoutes(accounts *account.Service) []Route {
	admin := func(r Route) Route {
		r.Tag, r.Private = transport.TagAccount, true
		if r.Auth == "" {
			r.Auth = transport.AuthSession
		}
		if r.Idempotency == "" {
			r.Idempotency = transport.IdempotencyNone
		}
		return r
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	member := MemberView{UserID: "usr_01jd0000000000000000000001", Email: "ada@example.com", DisplayName: "Ada",
		Roles: []string{"CREATOR"}, Status: "active", JoinedAt: t}
	return []Route{
		admin(Route{Method: http.MethodGet, Pattern: "/api/v1/admin/members", OperationID: "listMembers", Permission: access.MemberRead,
			Summary: "List the workspace's members", Description: "Members of the caller's workspace with their roles and status, by user id, with cursor pagination. Needs member.read.",
			Query: pageQuery("Y3Vyc29yOnVzcl8wMWpk"), Response: MemberPage{Items: []MemberView{member}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				ms, more, next, err := transport.PageOf(c, "usr_", func(after string, n int) ([]account.Member, error) {
					return accounts.MemberList(ctx, c.Tx, c.Principal, after, n)
				}, func(m account.Member) string { return m.UserID })
				if err != nil {
					return nil, err
				}
				page := MemberPage{Items: []MemberView{}, HasMore: more, NextCursor: next}
				for _, m := range ms {
					page.Items = append(page.Items, memberView(m))
				}
				return page, nil
			}}),
		admin(Route{Method: http.MethodPost, Pattern: "/api/v1/admin/members/invite", OperationID: "inviteMember", Status: http.StatusCreated,
			Permission: access.MemberInvite, Idempotency: transport.IdempotencyOptional,
			Summary: "Invite a member",
			Description: "Mails a single-use invitation link (valid 7 days) to an email address, for workspace roles within the inviter's own authority " +
				"(an ADMIN cannot invite an OWNER: ACCESS_DENIED). super_admin is a platform role, never granted through the API: asking for it, " +
				"or for any unknown role, is INVALID_INPUT with details.field roles[i]. The invitation is audited. Needs member.invite.",
			Request:  InviteRequest{Email: "ada@example.com", Roles: []access.Role{access.RoleCreator}},
			Response: InvitationView{WorkspaceID: "ws_01jd0000000000000000000000", Email: "ada@example.com", Roles: []string{"CREATOR"}, InvitedBy: "usr_01jd0000000000000000000000", ExpiresAt: t},
			Errors:   []string{string(fault.Conflict), string(fault.ServiceUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in InviteRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				inv, err := accounts.Invite(ctx, c.Tx, c.Principal, c.Authority, account.InviteInput{Email: in.Email, Roles: in.Roles, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return InvitationView{WorkspaceID: inv.WorkspaceID, Email: inv.Email, Roles: roleNames(inv.Roles), InvitedBy: inv.InvitedBy,
					ExpiresAt: inv.ExpiresAt}, nil
			}}),
		admin(Route{Method: http.MethodGet, Pattern: "/api/v1/admin/roles", OperationID: "listRoles", Permission: access.MemberRead,
			Summary: "List roles and role templates", Description: "The eight workspace roles and the nine role templates of the access policy with their grants (permission and scope), as data. Needs member.read.",
			Response: RoleCatalog{Roles: []RoleView{{Role: "VIEWER", Grants: []GrantView{{Permission: "project.read", Scope: "workspace"}}}},
				Templates:     []TemplateView{{Name: "viewer", Title: "Viewer", DefaultScope: "workspace", ProjectAssignable: true, Grants: []GrantView{{Permission: "project.read", Scope: "workspace"}}}},
				PlatformRoles: []string{access.SuperAdmin}},
			Handle: func(ctx context.Context, c *Call) (any, error) { return roleCatalog(), nil }}),
		admin(Route{Method: http.MethodGet, Pattern: "/api/v1/admin/audit", OperationID: "listAuditEvents", Permission: access.AuditRead,
			Auth: transport.AuthSessionOrKey, Scope: access.ScopeAuditRead,
			Summary: "Read the audit log",
			Description: "The append-only audit log of the caller's workspace and environment (a test credential reads the events made in test mode, " +
				"a live one those made in live mode), newest first, with cursor pagination: who (user, and API key when one acted), " +
				"what (action and target), when, the request id, and the before and after of authority changes. It never holds a secret. " +
				"Needs audit.read (API keys: scope audit:read).",
			Query: pageQuery("Y3Vyc29yOmF1ZF8wMWpk"),
			Response: AuditPage{Items: []AuditEventView{{ID: "aud_01jd0000000000000000000000", Action: account.ActionMemberRolesChanged,
				Actor: AuditActor{UserID: "usr_01jd0000000000000000000000"}, Target: AuditTarget{Type: account.TargetUser, ID: "usr_01jd0000000000000000000001"},
				RequestID: "req_01jd0000000000000000000000", Before: json.RawMessage(`{"roles":["CREATOR"]}`), After: json.RawMessage(`{"roles":["MODERATOR"]}`), CreatedAt: t}}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				es, more, next, err := transport.PageOf(c, "aud_", func(before string, n int) ([]account.AuditEvent, error) {
					return accounts.AuditList(ctx, c.Tx, c.Principal, before, n)
				}, func(e account.AuditEvent) string { return e.ID })
				if err != nil {
					return nil, err
				}
				page := AuditPage{Items: []AuditEventView{}, HasMore: more, NextCursor: next}
				for _, e := range es {
					page.Items = append(page.Items, auditView(e))
				}
				return page, nil
			}}),
		admin(Route{Method: http.MethodPatch, Pattern: "/api/v1/admin/accounts/{id}/role", OperationID: "setMemberRoles",
			Permission: access.MemberManage, Idempotency: transport.IdempotencyOptional,
			Summary: "Change a member's roles",
			Description: "Replaces the roles of a member of the caller's workspace (id is the user id; a user of another workspace is 404). " +
				"Privileged: the new roles and the member's current ones must be within the caller's authority (ACCESS_DENIED), " +
				"nobody changes their own roles (ACCESS_DENIED, details.reason self_role_change), super_admin is refused (INVALID_INPUT), " +
				"and the last active OWNER stays (CONFLICT, details.reason last_owner). The change and its audit event (before and after) " +
				"commit together and invalidate the member's authority: it applies from the member's very next request. Needs member.manage.",
			Request: RolesRequest{Roles: []access.Role{access.RoleModerator}}, Response: member,
			Errors: []string{string(fault.NotFound), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in RolesRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				m, err := accounts.ChangeRoles(ctx, c.Tx, c.Principal, c.Authority, account.RoleChange{UserID: c.PathValue("id"),
					Roles: in.Roles, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return memberView(m), nil
			}}),
	}
}
