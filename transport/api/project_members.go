package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport"
)

// ProjectMemberView is a member's role on a project: a project-scoped
// role template assignment.
type ProjectMemberView struct {
	// ID is the assignment's id.
	ID string `json:"id" example:"ra_01JD0000000000000000000000"`
	// Object is always "project_member".
	Object string `json:"object" example:"project_member"`
	// ProjectID is the project.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// UserID is the member, a user of the project's workspace.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000001"`
	// Template is the member's role template on the project: project_lead, creator or collaborator (the
	// roles route lists each one's grants).
	Template string `json:"template" example:"collaborator"`
	// AssignedAt is when the member got this role; the audit log (action project.member_changed) says who
	// gave it.
	AssignedAt time.Time `json:"assignedAt"`
}

// ProjectMemberPage is one page of a project's members, by user id.
type ProjectMemberPage struct {
	// Items are the page's members, in user id order.
	Items []ProjectMemberView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOnVzcl8wMWpk"`
}

// ProjectMemberRequest is the body of PUT /api/v1/projects/{id}/members/{userId}.
type ProjectMemberRequest struct {
	// Template is the member's role on the project, replacing the one it holds.
	Template string `json:"template" example:"collaborator" enum:"project_lead,creator,collaborator"`
}

func projectMemberView(m project.Member) ProjectMemberView {
	return ProjectMemberView{ID: m.ID, Object: "project_member", ProjectID: m.ProjectID, UserID: m.UserID,
		Template: string(m.Template), AssignedAt: m.AssignedAt}
}

func exampleProjectMember() ProjectMemberView {
	return ProjectMemberView{ID: "ra_01JD0000000000000000000000", Object: "project_member", ProjectID: "prj_01jd0000000000000000000000",
		UserID: "usr_01jd0000000000000000000001", Template: "collaborator", AssignedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// projectMemberChangeRules is what the set and remove routes' documents
// share: who may change a project role.
const projectMemberChangeRules = "The project must be of the caller's workspace and environment and read by the caller, else 404 " +
	"(a public project of another workspace included). Nobody changes their own role (403 ACCESS_DENIED, details.reason " +
	"self_role_change). The caller's project.publish must reach the project: workspace OWNER and ADMIN, a CREATOR owning it, " +
	"a project lead of it; else 403 ACCESS_DENIED with details.permission project.publish. No API key scope stands for " +
	"project.publish, so an API key (which needs projects:write to get this far) is refused the same way. No escalation: " +
	"the caller must hold on the project every permission of the role it gives and of the role the member holds now " +
	"(a CREATOR owning the project may make collaborators and creators, not a project lead, which carries reward.allocate), " +
	"else 403 ACCESS_DENIED with details.reason template_exceeds_caller, details.template and details.permission. " +
	"The change, its audit record (action project.member_changed, target the project, before and after: userId and " +
	"template) and its outbox event project.member_changed commit together and invalidate the member's authority: " +
	"it applies from the member's very next request, on every host. An Idempotency-Key replays the first answer."

// projectMemberRoutes are the routes of a project's members: the
// workspace members holding a project-scoped role template on it
// (project_lead, creator, collaborator), one each. The list needs
// project.read (API keys: scope read); changes need project.publish
// reaching the project (API keys: scope projects:write, and no key holds
// project.publish) and take an optional Idempotency-Key. Package project
// documents the rules (Members).
func projectMemberRoutes(svc *project.Service) []Route {
	if svc == nil {
		return nil
	}
	route := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagProjects, transport.AuthSessionOrKey, true
		return r
	}
	write := func(r Route) Route {
		r = route(r)
		r.Permission, r.Scope, r.Idempotency = access.ProjectPublish, access.ScopeProjectsWrite, transport.IdempotencyOptional
		return r
	}
	ex := exampleProjectMember()
	change := func(c *Call) project.MemberChange {
		return project.MemberChange{ProjectID: c.PathValue("id"), UserID: c.PathValue("userId"), RequestID: c.RequestID}
	}
	return []Route{
		route(Route{Method: http.MethodGet, Pattern: "/api/v1/projects/{id}/members", OperationID: "listProjectMembers",
			Permission: access.ProjectRead, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary: "List a project's members",
			Description: "The members of a project of the caller's workspace and environment with their role on it (project_lead, " +
				"creator or collaborator), by user id, with cursor pagination (limit 1 to 100, default 20; cursor is the previous " +
				"page's nextCursor, anything else is 400 INVALID_INPUT). Needs project.read reaching the project (its owner, a member " +
				"of it, a workspace-wide reader such as OWNER, ADMIN, CREATOR, MODERATOR or VIEWER). A project of another workspace, " +
				"public or not, or one the caller cannot read is 404; a public project of the workspace the caller's grant does not " +
				"reach is 403 ACCESS_DENIED.",
			Query:    pageQuery("Y3Vyc29yOnVzcl8wMWpk"),
			Response: ProjectMemberPage{Items: []ProjectMemberView{ex}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				ms, more, next, err := transport.PageOf(c, "usr_", func(after string, n int) ([]project.Member, error) {
					return svc.Members(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"), after, n)
				}, func(m project.Member) string { return m.UserID })
				if err != nil {
					return nil, err
				}
				page := ProjectMemberPage{Items: []ProjectMemberView{}, HasMore: more, NextCursor: next}
				for _, m := range ms {
					page.Items = append(page.Items, projectMemberView(m))
				}
				return page, nil
			}}),
		write(Route{Method: http.MethodPut, Pattern: "/api/v1/projects/{id}/members/{userId}", OperationID: "setProjectMember",
			Summary: "Set a member's role on a project",
			Description: "Makes template (project_lead, creator or collaborator; anything else is 400 INVALID_INPUT with " +
				"details.field template) the only role of user userId on the project, replacing the one it holds in the same " +
				"unit of work; the answer is the member's role as it now stands (200). Setting the role the member already holds " +
				"changes and writes nothing. userId must be an active member of the project's workspace, else 404 NOT_FOUND with " +
				"details.field userId (a user of another workspace or tenant is never one). " + projectMemberChangeRules,
			Request:  ProjectMemberRequest{Template: "collaborator"},
			Response: ex,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ProjectMemberRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				ch := change(c)
				ch.Template = access.Template(in.Template)
				m, err := svc.SetMember(ctx, c.Tx, c.Principal, c.Authority, ch)
				if err != nil {
					return nil, err
				}
				return projectMemberView(m), nil
			}}),
		write(Route{Method: http.MethodDelete, Pattern: "/api/v1/projects/{id}/members/{userId}", OperationID: "removeProjectMember",
			Summary: "Remove a member's role on a project",
			Description: "Removes the role of user userId on the project and answers the removed role (200). A user holding no " +
				"role on the project is 404 NOT_FOUND with details.field userId. A suspended member's role may be removed. " +
				projectMemberChangeRules,
			Response: ex,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				m, err := svc.RemoveMember(ctx, c.Tx, c.Principal, c.Authority, change(c))
				if err != nil {
					return nil, err
				}
				return projectMemberView(m), nil
			}}),
	}
}
