package project

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// EventMemberChanged: a member's role on a project was set, replaced or
// removed. Payload: projectId, userId, template (null when removed) and
// previousTemplate (null when there was none).
const EventMemberChanged = "project.member_changed"

// ActionMemberChanged: a member's role on a project was set, replaced or
// removed. Target: the project. Before and after: userId and template
// (before null for a new member, after null for a removed one).
const ActionMemberChanged = "project.member_changed"

// MemberTemplates returns the role templates a project's members hold:
// those the access policy assigns to one project by default (Project
// Lead, Creator, Collaborator).
func MemberTemplates() []access.Template {
	var out []access.Template
	for _, t := range access.Templates() {
		if t.DefaultScope == access.AssignProject && t.ProjectAssignable {
			out = append(out, t.Name)
		}
	}
	return out
}

// Member is one project-scoped role assignment: a workspace member's role
// on one project.
type Member struct {
	// ID is the assignment's id.
	ID string
	// ProjectID and UserID are the project and the member.
	ProjectID string
	UserID    string
	// Template is the member's role on the project.
	Template access.Template
	// AssignedAt is when the member got this role.
	AssignedAt time.Time
}

// Assignee is a workspace member as a change of its project role reads it
// (MemberStore.ProjectMemberLock).
type Assignee struct {
	// Active reports an active membership of the workspace.
	Active bool
	// Roles are the member's assignments to the project, oldest first:
	// at most one, unless written outside this package.
	Roles []Member
}

// MemberStore is the port project roles are read and changed through,
// bound to one unit of work (or the read pool for reads). Errors are
// *fault.Error: NOT_FOUND for a missing row.
type MemberStore interface {
	outbox.Writer
	account.AuditWriter
	// ProjectGet reads a project by id in environment env, of any tenant;
	// NOT_FOUND when none (as Store.ProjectGet).
	ProjectGet(ctx context.Context, env access.Environment, id string) (Project, error)
	// ProjectMemberList returns up to limit assignments to project
	// projectID of workspaceID with user ids above after ("" for the
	// first), by user id.
	ProjectMemberList(ctx context.Context, workspaceID, projectID, after string, limit int) ([]Member, error)
	// ProjectMemberLock reads user userID of tenantID as a member of
	// workspaceID, with its assignments to project projectID, and keeps
	// its membership locked until the unit of work ends, so that changes
	// of one member's roles run one after the other. NOT_FOUND when the
	// user is not a member of the workspace (or is of another tenant).
	ProjectMemberLock(ctx context.Context, tenantID, workspaceID, projectID, userID string) (Assignee, error)
	// ProjectMemberSet makes m.Template the only assignment of m.UserID
	// to m.ProjectID in workspaceID, in one unit of work, and bumps the
	// workspace's authority version; it returns the stored assignment.
	ProjectMemberSet(ctx context.Context, workspaceID string, m Member) (Member, error)
	// ProjectMemberDelete removes every assignment of userID to project
	// projectID in workspaceID and bumps the workspace's authority
	// version. NOT_FOUND when there is none.
	ProjectMemberDelete(ctx context.Context, workspaceID, projectID, userID string) error
	// AuthzVersion reads workspaceID's authority version (the outbox
	// event's aggregate version: it rises with every change).
	AuthzVersion(ctx context.Context, workspaceID string) (int64, error)
}

// workspaceProject returns project id of p's workspace and environment
// and whether p's project.read grant reaches it: NOT_FOUND for a project
// of another workspace (public ones included), and for one of p's
// workspace p cannot read at all.
func workspaceProject(ctx context.Context, st MemberStore, op string, p *access.Principal, a *access.Authority, id string) (Project, bool, error) {
	pr, err := st.ProjectGet(ctx, p.Environment, id)
	if err != nil {
		return Project{}, false, fault.Wrap(op, err)
	}
	if pr.Scope.TenantID != p.TenantID || pr.Scope.WorkspaceID != p.WorkspaceID {
		return Project{}, false, fault.E(op, fault.NotFound, "No such project.")
	}
	reads := a.Reaches(p, access.ProjectRead, pr.Resource())
	if !reads && pr.Visibility != VisibilityPublic {
		return Project{}, false, fault.E(op, fault.NotFound, "No such project.")
	}
	return pr, reads, nil
}

// Members returns up to limit members of project id of p's workspace,
// by user id, with user ids above after (package doc, Members).
// NOT_FOUND for a project of another workspace or one p cannot read;
// ACCESS_DENIED for a public project of p's workspace that p's
// project.read grant does not reach.
func (s *Service) Members(ctx context.Context, st MemberStore, p *access.Principal, a *access.Authority, id, after string, limit int) ([]Member, error) {
	const op = "project.Members"
	pr, reads, err := workspaceProject(ctx, st, op, p, a, id)
	if err != nil {
		return nil, err
	}
	if !reads {
		return nil, fault.E(op, fault.AccessDenied, "").With("permission", string(access.ProjectRead))
	}
	out, err := st.ProjectMemberList(ctx, pr.Scope.WorkspaceID, pr.ID, after, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}

// MemberChange sets or removes one member's role on a project.
type MemberChange struct {
	// ProjectID and UserID name the project and the member.
	ProjectID string
	UserID    string
	// Template is the role to set (one of MemberTemplates); SetMember
	// only.
	Template access.Template
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// SetMember makes in.Template in.UserID's only role on project
// in.ProjectID of p's workspace, replacing any other in the same unit of
// work, with an audit record, the outbox event project.member_changed and
// the authority version bump that applies it from the member's next
// request. A member already holding exactly that role is answered as it
// stands, and nothing is written.
//
// Errors (package doc, Members): INVALID_INPUT (details.field template)
// for a template not in MemberTemplates; NOT_FOUND for a project of
// another workspace or one p cannot read, and (details.field userId) for
// a user who is not an active member of the workspace; ACCESS_DENIED
// with details.reason self_role_change for p's own role, with
// details.permission project.publish when p's grant does not reach the
// project, and with details.reason template_exceeds_caller (details.template,
// details.permission) when the new role or the member's current one
// holds more than p does on the project (access.Authority.CanAssign).
func (s *Service) SetMember(ctx context.Context, st MemberStore, p *access.Principal, a *access.Authority, in MemberChange) (Member, error) {
	const op = "project.SetMember"
	if !slices.Contains(MemberTemplates(), in.Template) {
		return Member{}, fault.Invalid(op, "template", "template must be project_lead, creator or collaborator.")
	}
	if err := access.ValidateAssignment(in.Template, in.ProjectID); err != nil {
		return Member{}, fault.Wrap(op, err)
	}
	pr, cur, err := s.changeable(ctx, st, op, p, a, in)
	if err != nil {
		return Member{}, err
	}
	if !cur.Active {
		return Member{}, fault.E(op, fault.NotFound, "No such member of the workspace.").With("field", "userId")
	}
	if len(cur.Roles) == 1 && cur.Roles[0].Template == in.Template {
		return cur.Roles[0], nil
	}
	m, err := st.ProjectMemberSet(ctx, pr.Scope.WorkspaceID, Member{ProjectID: pr.ID, UserID: in.UserID, Template: in.Template})
	if err != nil {
		return Member{}, fault.Wrap(op, err)
	}
	return m, memberChanged(ctx, st, op, p, pr, in, cur.Roles, &m)
}

// RemoveMember removes in.UserID's role on project in.ProjectID of p's
// workspace, with an audit record, the outbox event
// project.member_changed and the authority version bump, and returns the
// removed assignment. Errors as SetMember's, and NOT_FOUND
// (details.field userId) when the user holds no role on the project; a
// suspended member's role may be removed.
func (s *Service) RemoveMember(ctx context.Context, st MemberStore, p *access.Principal, a *access.Authority, in MemberChange) (Member, error) {
	const op = "project.RemoveMember"
	pr, cur, err := s.changeable(ctx, st, op, p, a, in)
	if err != nil {
		return Member{}, err
	}
	if len(cur.Roles) == 0 {
		return Member{}, fault.E(op, fault.NotFound, "The user holds no role on this project.").With("field", "userId")
	}
	if err := st.ProjectMemberDelete(ctx, pr.Scope.WorkspaceID, pr.ID, in.UserID); err != nil {
		return Member{}, fault.Wrap(op, err)
	}
	return cur.Roles[0], memberChanged(ctx, st, op, p, pr, in, cur.Roles, nil)
}

// changeable runs the checks every change of a member's role shares: the
// project is of p's workspace and p reads it, p is not the member, p's
// project.publish grant reaches the project, p may give in.Template (when
// set) and take away each role the member holds on it. It returns the
// project and the member, locked.
func (s *Service) changeable(ctx context.Context, st MemberStore, op string, p *access.Principal, a *access.Authority, in MemberChange) (Project, Assignee, error) {
	pr, _, err := workspaceProject(ctx, st, op, p, a, in.ProjectID)
	if err != nil {
		return Project{}, Assignee{}, err
	}
	if in.UserID == p.UserID {
		return Project{}, Assignee{}, fault.E(op, fault.AccessDenied, "You cannot change your own role on a project; ask its owner or lead.").
			With("reason", "self_role_change")
	}
	if !a.Reaches(p, access.ProjectPublish, pr.Resource()) {
		return Project{}, Assignee{}, fault.E(op, fault.AccessDenied, "").With("permission", string(access.ProjectPublish))
	}
	if in.Template != "" {
		if err := canAssign(op, p, a, pr, in.Template, "template"); err != nil {
			return Project{}, Assignee{}, err
		}
	}
	cur, err := st.ProjectMemberLock(ctx, pr.Scope.TenantID, pr.Scope.WorkspaceID, pr.ID, in.UserID)
	if err != nil {
		if fault.Is(err, fault.NotFound) {
			return Project{}, Assignee{}, fault.E(op, fault.NotFound, "No such member of the workspace.").With("field", "userId")
		}
		return Project{}, Assignee{}, fault.Wrap(op, err)
	}
	for _, m := range cur.Roles {
		if in.Template != "" && m.Template == in.Template {
			continue
		}
		if err := canAssign(op, p, a, pr, m.Template, "userId"); err != nil {
			return Project{}, Assignee{}, err
		}
	}
	return pr, cur, nil
}

// canAssign is access.Authority.CanAssign as an error naming field.
func canAssign(op string, p *access.Principal, a *access.Authority, pr Project, t access.Template, field string) error {
	if missing, ok := a.CanAssign(p, t, pr.Resource()); !ok {
		return fault.E(op, fault.AccessDenied, "This role holds more than you do on the project.").
			With("reason", "template_exceeds_caller").With("field", field).With("template", string(t)).
			With("permission", string(missing))
	}
	return nil
}

// memberState is the before or after of a member change, as the audit
// log records it.
type memberState struct {
	UserID   string          `json:"userId"`
	Template access.Template `json:"template"`
}

// memberChanged writes the audit record and the outbox event of a change
// of in.UserID's role on pr from the roles before to after (nil: removed).
func memberChanged(ctx context.Context, st MemberStore, op string, p *access.Principal, pr Project, in MemberChange, before []Member, after *Member) error {
	e := account.AuditEntry{Action: ActionMemberChanged, TargetType: TargetProject, TargetID: pr.ID, RequestID: in.RequestID}
	body := map[string]any{"projectId": pr.ID, "userId": in.UserID, "template": nil, "previousTemplate": nil}
	if len(before) > 0 {
		e.Before = memberState{UserID: in.UserID, Template: before[0].Template}
		body["previousTemplate"] = before[0].Template
	}
	if after != nil {
		e.After = memberState{UserID: in.UserID, Template: after.Template}
		body["template"] = after.Template
	}
	if err := account.Audit(ctx, st, p, e); err != nil {
		return fault.Wrap(op, err)
	}
	version, err := st.AuthzVersion(ctx, pr.Scope.WorkspaceID)
	if err != nil {
		return fault.Wrap(op, err)
	}
	payload, _ := json.Marshal(body) // strings and nulls only
	if _, err := st.OutboxInsert(ctx, outbox.Event{TenantID: pr.Scope.TenantID, WorkspaceID: pr.Scope.WorkspaceID,
		Environment: string(pr.Scope.Environment), Type: EventMemberChanged, SchemaVersion: 1, AggregateID: pr.ID,
		AggregateVersion: version, OccurredAt: st.Now(), Payload: payload}); err != nil {
		return fault.Wrap(op, err)
	}
	return nil
}
