package api

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport"
)

// ProjectView is a project.
type ProjectView struct {
	// ID is the project's id.
	ID string `json:"id" example:"prj_01jd0000000000000000000000"`
	// Object is always "project".
	Object string `json:"object" example:"project"`
	// OwnerUserID is the user who created the project (from the session or the key's creator, never from a body).
	OwnerUserID string `json:"ownerUserId" example:"usr_01jd0000000000000000000000"`
	// WorkspaceID is the project's workspace.
	WorkspaceID string `json:"workspaceId" example:"wks_01jd0000000000000000000000"`
	// Environment is the environment (test or live) the project belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Title is the project's title, 1 to 200 characters.
	Title string `json:"title" example:"Night Drive video"`
	// Type is what the project makes.
	Type string `json:"type" example:"music_video" enum:"music_video,album,single,remix,soundtrack,other"`
	// Description is the project's description, at most 5000 characters.
	Description string `json:"description" example:"A video for the single Night Drive."`
	// Visibility is workspace (read only inside the workspace) or public (also read by signed-in callers of any tenant in the same environment).
	Visibility string `json:"visibility" example:"public" enum:"workspace,public"`
	// Status is where the project stands in its status table.
	Status string `json:"status" example:"DRAFT" enum:"DRAFT,OPEN,IN_PRODUCTION,REVIEW,COMPLETED,ARCHIVED"`
	// Version counts the project's writes, from 1.
	Version int64 `json:"version" example:"1"`
	// CreatedAt is when the project was created.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the project last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// ProjectPage is one page of projects, newest first.
type ProjectPage struct {
	// Items are the page's projects, newest first.
	Items []ProjectView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor, with the same filters, to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"cHJqOnByal8wMWpkOmFiYw"`
}

// CreateProjectRequest is the body of POST /api/v1/projects.
type CreateProjectRequest struct {
	// Title is the project's title, 1 to 200 characters after trimming.
	Title string `json:"title" example:"Night Drive video"`
	// Type is what the project makes.
	Type string `json:"type" example:"music_video" enum:"music_video,album,single,remix,soundtrack,other"`
	// Description is the project's description, at most 5000 characters.
	Description string `json:"description,omitempty" example:"A video for the single Night Drive."`
	// Visibility is workspace (the default) or public.
	Visibility string `json:"visibility,omitempty" example:"public" enum:"workspace,public"`
}

// ProjectStatusRequest is the body of POST /api/v1/projects/{id}/status.
type ProjectStatusRequest struct {
	// Status is the status asked for: the next one in the table.
	Status string `json:"status" example:"OPEN" enum:"DRAFT,OPEN,IN_PRODUCTION,REVIEW,COMPLETED,ARCHIVED"`
}

func projectView(p project.Project) ProjectView {
	return ProjectView{ID: p.ID, Object: "project", OwnerUserID: p.OwnerUserID, WorkspaceID: p.Scope.WorkspaceID,
		Environment: string(p.Scope.Environment), Title: p.Title, Type: string(p.Type), Description: p.Description,
		Visibility: string(p.Visibility), Status: string(p.Status), Version: p.Version, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func exampleProject() ProjectView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return ProjectView{ID: "prj_01jd0000000000000000000000", Object: "project", OwnerUserID: "usr_01jd0000000000000000000000",
		WorkspaceID: "wks_01jd0000000000000000000000", Environment: "test", Title: "Night Drive video", Type: "music_video",
		Description: "A video for the single Night Drive.", Visibility: "public", Status: "DRAFT", Version: 1, CreatedAt: t, UpdatedAt: t}
}

// projectCursorPrefix marks a project list cursor.
const projectCursorPrefix = "prj:"

// projectListBinding is what a project list cursor is bound to: the
// caller's tenant, workspace and environment and the list's filters
// (visibility included), as a short digest. A cursor read under another
// binding is refused, so a cursor never carries a position into another
// tenant's list, another filter's, or between the workspace's list and
// the public one. Forging one gains nothing: the list is scoped by the
// caller whatever the cursor says.
func projectListBinding(p *access.Principal, f project.Filter) string {
	return cursorBinding("projects", p.TenantID, p.WorkspaceID, string(p.Environment), string(f.Visibility), string(f.Status),
		f.CreatorUserID, string(f.Type))
}

// cursorBinding returns the short digest of parts that a list cursor is
// bound to.
func cursorBinding(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// projectCursor returns the position a project list cursor stands for:
// "" for none; INVALID_INPUT for a cursor this API did not return for
// this caller and these filters.
func projectCursor(s, binding string) (string, error) {
	if s == "" {
		return "", nil
	}
	bad := fault.Invalid("transport.projectCursor", "cursor", "cursor is not a cursor this API returned for this list.")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", bad
	}
	rest, ok := strings.CutPrefix(string(b), projectCursorPrefix)
	pos, bind, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || bind != binding || !id.Valid(project.IDPrefix, pos) {
		return "", bad
	}
	return pos, nil
}

func encodeProjectCursor(pos, binding string) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(projectCursorPrefix + pos + ":" + binding))
	return &s
}

// projectPage answers one keyset page of a project list whose cursor is
// bound to binding: it reads limit and cursor (INVALID_INPUT for a bad
// one), asks list for one project more than the page holds, and returns
// the page.
func projectPage(c *Call, binding string, list func(before string, n int) ([]project.Project, error)) (ProjectPage, error) {
	limit, err := transport.PageLimit(c)
	if err != nil {
		return ProjectPage{}, err
	}
	before, err := projectCursor(c.Query("cursor"), binding)
	if err != nil {
		return ProjectPage{}, err
	}
	ps, err := list(before, limit+1)
	if err != nil {
		return ProjectPage{}, err
	}
	page := ProjectPage{Items: []ProjectView{}}
	if len(ps) > limit {
		ps = ps[:limit]
		page.HasMore, page.NextCursor = true, encodeProjectCursor(ps[limit-1].ID, binding)
	}
	for _, p := range ps {
		page.Items = append(page.Items, projectView(p))
	}
	return page, nil
}

// projectRoutes are the project routes (spec, Projects and submissions):
// create, read, list and move a project's status. Reads need project.read
// (API keys: scope read); writes need project.update (scope
// projects:write) and take an optional Idempotency-Key.
func projectRoutes(svc *project.Service) []Route {
	if svc == nil {
		return nil
	}
	read := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagProjects, transport.AuthSessionOrKey, true
		r.Permission, r.Scope, r.Idempotency = access.ProjectRead, access.ScopeRead, transport.IdempotencyNone
		return r
	}
	write := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagProjects, transport.AuthSessionOrKey, true
		r.Permission, r.Scope, r.Idempotency = access.ProjectUpdate, access.ScopeProjectsWrite, transport.IdempotencyOptional
		return r
	}
	ex := exampleProject()
	return []Route{
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/projects", OperationID: "createProject", Status: http.StatusCreated,
			Summary: "Create a project",
			Description: "Creates a DRAFT project in the caller's workspace and environment, owned by the caller's user (the session's, " +
				"or an API key's creator): an owner or wallet in the body is never authority. Needs project.update reaching a project " +
				"of the caller's own (OWNER, ADMIN, CREATOR, MODERATOR, MEMBER; not VIEWER). title is 1 to 200 characters after " +
				"trimming, description at most 5000, type one of music_video, album, single, remix, soundtrack, other, visibility " +
				"workspace (default) or public; anything else is 400 INVALID_INPUT naming the field. The same Idempotency-Key and body " +
				"return the same project. Writes the outbox event project.created and an audit record.",
			Request:  CreateProjectRequest{Title: "Night Drive video", Type: "music_video", Visibility: "public"},
			Response: ex,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CreateProjectRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				p, err := svc.Create(ctx, c.Tx, c.Principal, c.Authority, project.CreateRequest{Title: in.Title, Type: project.Type(in.Type),
					Description: in.Description, Visibility: project.Visibility(in.Visibility), RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return projectView(p), nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/projects", OperationID: "listProjects",
			Summary: "List projects",
			Description: "The projects of the caller's workspace and environment, newest first (by id, which orders by creation to the millisecond). A caller whose project.read grant is " +
				"narrower than the workspace (MEMBER, DEVELOPER) sees its own, those it holds a project role on, and the public ones. With visibility=public the list is " +
				"instead the community's: the public projects of every tenant in the caller's environment, in the same order, where " +
				"creators find projects of other tenants to take part in; a workspace project never appears in it, and nothing of the " +
				"other environment does. Filters: status, creator (a user id: the owner) and type; an unknown status or type, or a " +
				"visibility other than public, is 400 INVALID_INPUT. limit is 1 to 100 (default 20). cursor is the " +
				"previous page's nextCursor: it is bound to the caller's tenant, workspace, environment and the filters (visibility " +
				"included), and any other cursor (forged, another tenant's, or read with other filters) is 400 INVALID_INPUT. Public " +
				"projects of other tenants are also read by id.",
			Query: append(pageQuery("cHJqOnByal8wMWpkOmFiYw"),
				transport.Param{Name: "status", Description: "Keeps projects in this status (DRAFT, OPEN, IN_PRODUCTION, REVIEW, COMPLETED, ARCHIVED).", Example: "OPEN"},
				transport.Param{Name: "creator", Description: "Keeps projects owned by this user id.", Example: "usr_01jd0000000000000000000000"},
				transport.Param{Name: "type", Description: "Keeps projects of this type (music_video, album, single, remix, soundtrack, other).", Example: "music_video"},
				transport.Param{Name: "visibility", Description: "public lists the public projects of every tenant in the caller's environment instead of the caller's workspace's projects; the only value taken.", Example: "public"}),
			Response: ProjectPage{Items: []ProjectView{ex}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				f := project.Filter{Status: project.Status(c.Query("status")), CreatorUserID: c.Query("creator"), Type: project.Type(c.Query("type")),
					Visibility: project.Visibility(c.Query("visibility"))}
				return projectPage(c, projectListBinding(c.Principal, f), func(before string, n int) ([]project.Project, error) {
					return svc.List(ctx, c.Tx, c.Principal, c.Authority, f, before, n)
				})
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/projects/{id}", OperationID: "getProject",
			Summary: "Get a project",
			Description: "A project of the caller's workspace that the caller's project.read grant reaches, or that is public; or a " +
				"public project of any other tenant in the caller's environment. Anything else, and anything of the other environment, " +
				"is 404.",
			Response: ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, err := svc.Get(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return projectView(p), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/projects/{id}/status", OperationID: "setProjectStatus",
			Summary: "Move a project's status",
			Description: "Moves a project of the caller's workspace one step along its table: DRAFT -> OPEN -> IN_PRODUCTION -> REVIEW -> " +
				"COMPLETED -> ARCHIVED. Any other move (a skip, a step back, the same status) is 409 INVALID_STATE_TRANSITION for " +
				"every caller holding project.update, before any check of the project's grant. Opening (DRAFT -> OPEN) needs project.publish, every other move project.update, each reaching the project " +
				"(OWNER and ADMIN any project; CREATOR its own; MEMBER its own but cannot open; MODERATOR any but cannot open; VIEWER " +
				"none), else 403 ACCESS_DENIED. API keys hold no scope for project.publish, so they cannot open a project. A project " +
				"of another workspace is 404 even when public. Writes the outbox event project.status_changed and an audit record.",
			Request:  ProjectStatusRequest{Status: "OPEN"},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.InvalidState)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ProjectStatusRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				p, err := svc.Move(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"),
					project.MoveRequest{Status: project.Status(in.Status), RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return projectView(p), nil
			}}),
	}
}
