package project_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/project"
)

// memMembers is an in-memory project.MemberStore: projects by id, members
// of ws_1 (active or not) and their project roles.
type memMembers struct {
	projects map[string]project.Project
	active   map[string]bool     // user id -> active member of ws_1
	roles    map[string][]string // project id + "/" + user id -> templates
	audits   []account.AuditEvent
	events   []outbox.Event
	version  int64
	n        int
}

var _ project.MemberStore = (*memMembers)(nil)

func (m *memMembers) Now() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
func (m *memMembers) NewID(prefix string) string {
	m.n++
	return fmt.Sprintf("%s%d", prefix, m.n)
}
func (m *memMembers) AuditInsert(_ context.Context, e account.AuditEvent) error {
	m.audits = append(m.audits, e)
	return nil
}
func (m *memMembers) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	m.events = append(m.events, e)
	return e, nil
}
func (m *memMembers) ProjectGet(_ context.Context, env access.Environment, id string) (project.Project, error) {
	p, ok := m.projects[id]
	if !ok || p.Scope.Environment != env {
		return project.Project{}, fault.E("mem.ProjectGet", fault.NotFound, "")
	}
	return p, nil
}
func (m *memMembers) member(projectID, userID string, tmpl string) project.Member {
	return project.Member{ID: "ra_" + userID, ProjectID: projectID, UserID: userID, Template: access.Template(tmpl), AssignedAt: m.Now()}
}
func (m *memMembers) ProjectMemberList(_ context.Context, _, projectID, after string, limit int) ([]project.Member, error) {
	var out []project.Member
	for k, ts := range m.roles {
		for _, t := range ts {
			if p, u, _ := strings.Cut(k, "/"); p == projectID && u > after {
				out = append(out, m.member(p, u, t))
			}
		}
	}
	slices.SortFunc(out, func(a, b project.Member) int { return strings.Compare(a.UserID, b.UserID) })
	return out[:min(limit, len(out))], nil
}
func (m *memMembers) ProjectMemberLock(_ context.Context, tenantID, workspaceID, projectID, userID string) (project.Assignee, error) {
	active, ok := m.active[userID]
	if !ok || tenantID != "ten_1" || workspaceID != "ws_1" {
		return project.Assignee{}, fault.E("mem.ProjectMemberLock", fault.NotFound, "")
	}
	a := project.Assignee{Active: active}
	for _, t := range m.roles[projectID+"/"+userID] {
		a.Roles = append(a.Roles, m.member(projectID, userID, t))
	}
	return a, nil
}
func (m *memMembers) ProjectMemberSet(_ context.Context, _ string, mb project.Member) (project.Member, error) {
	m.roles[mb.ProjectID+"/"+mb.UserID] = []string{string(mb.Template)}
	m.version++
	return m.member(mb.ProjectID, mb.UserID, string(mb.Template)), nil
}
func (m *memMembers) ProjectMemberDelete(_ context.Context, _, projectID, userID string) error {
	if len(m.roles[projectID+"/"+userID]) == 0 {
		return fault.E("mem.ProjectMemberDelete", fault.NotFound, "")
	}
	delete(m.roles, projectID+"/"+userID)
	m.version++
	return nil
}
func (m *memMembers) AuthzVersion(context.Context, string) (int64, error) { return m.version, nil }

// membersFixture is prj_1 (a workspace project of ws_1 owned by usr_1,
// with usr_4 its project lead), prj_2 (a public project of ws_2), usr_2 an
// active member without a role, usr_3 a suspended one.
func membersFixture() *memMembers {
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	return &memMembers{
		projects: map[string]project.Project{
			"prj_1": {ID: "prj_1", Scope: sc, OwnerUserID: "usr_1", Visibility: project.VisibilityWorkspace, Version: 1},
			"prj_2": {ID: "prj_2", Scope: access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test},
				OwnerUserID: "usr_9", Visibility: project.VisibilityPublic, Version: 1},
		},
		active:  map[string]bool{"usr_1": true, "usr_2": true, "usr_3": false, "usr_4": true},
		roles:   map[string][]string{"prj_1/usr_4": {string(access.TemplateProjectLead)}},
		version: 7,
	}
}

// caller is a principal of ws_1 and its authority with roles.
func caller(userID string, roles ...access.Role) (*access.Principal, *access.Authority) {
	p := &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: userID, Environment: access.Test}
	return p, &access.Authority{TenantID: "ten_1", WorkspaceID: "ws_1", WorkspaceState: access.WorkspaceActive, UserID: userID,
		MembershipStatus: access.MembershipActive, Roles: roles}
}

// TestMemberChangesRefused: each refusal has its code and details, in the
// order the package doc gives, and writes nothing.
func TestMemberChangesRefused(t *testing.T) {
	ctx := context.Background()
	owner, ownerA := caller("usr_1", access.RoleCreator)
	keyP, keyA := caller("usr_5", access.RoleOwner)
	keyP.Kind, keyP.Scopes = access.CredentialAPIKey, []string{access.ScopeProjectsWrite, access.ScopeRead}
	viewer, viewerA := caller("usr_6", access.RoleViewer)
	plain, plainA := caller("usr_7", access.RoleMember)
	change := func(user string, tmpl access.Template) project.MemberChange {
		return project.MemberChange{ProjectID: "prj_1", UserID: user, Template: tmpl}
	}
	cases := []struct {
		name    string
		p       *access.Principal
		a       *access.Authority
		in      project.MemberChange
		remove  bool
		code    fault.Code
		details map[string]any
	}{
		{"a workspace-only template", owner, ownerA, change("usr_2", access.TemplateViewer), false, fault.InvalidInput, map[string]any{"field": "template"}},
		{"a project of another workspace", owner, ownerA, project.MemberChange{ProjectID: "prj_2", UserID: "usr_2", Template: access.TemplateCollaborator},
			false, fault.NotFound, nil},
		{"a project the caller cannot read", plain, plainA, change("usr_2", access.TemplateCollaborator), false, fault.NotFound, nil},
		{"one's own role", owner, ownerA, change("usr_1", access.TemplateCollaborator), false, fault.AccessDenied, map[string]any{"reason": "self_role_change"}},
		{"one's own removal", owner, ownerA, change("usr_1", ""), true, fault.AccessDenied, map[string]any{"reason": "self_role_change"}},
		{"a reader without publish", viewer, viewerA, change("usr_2", access.TemplateCollaborator), false, fault.AccessDenied,
			map[string]any{"permission": "project.publish"}},
		{"an API key", keyP, keyA, change("usr_2", access.TemplateCollaborator), false, fault.AccessDenied, map[string]any{"permission": "project.publish"}},
		{"escalation to project lead", owner, ownerA, change("usr_2", access.TemplateProjectLead), false, fault.AccessDenied,
			map[string]any{"reason": "template_exceeds_caller", "field": "template", "template": "project_lead", "permission": "reward.allocate"}},
		{"replacing a lead one cannot make", owner, ownerA, change("usr_4", access.TemplateCollaborator), false, fault.AccessDenied,
			map[string]any{"reason": "template_exceeds_caller", "field": "userId", "template": "project_lead", "permission": "reward.allocate"}},
		{"removing a lead one cannot make", owner, ownerA, change("usr_4", ""), true, fault.AccessDenied,
			map[string]any{"reason": "template_exceeds_caller", "field": "userId", "template": "project_lead"}},
		{"a user who is no member", owner, ownerA, change("usr_9", access.TemplateCollaborator), false, fault.NotFound, map[string]any{"field": "userId"}},
		{"a suspended member", owner, ownerA, change("usr_3", access.TemplateCollaborator), false, fault.NotFound, map[string]any{"field": "userId"}},
		{"removing a member without a role", owner, ownerA, change("usr_2", ""), true, fault.NotFound, map[string]any{"field": "userId"}},
	}
	for _, c := range cases {
		st := membersFixture()
		var err error
		if c.remove {
			_, err = project.New().RemoveMember(ctx, st, c.p, c.a, c.in)
		} else {
			_, err = project.New().SetMember(ctx, st, c.p, c.a, c.in)
		}
		code, _, details := fault.Public(err)
		if code != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
			continue
		}
		for k, v := range c.details {
			if details[k] != v {
				t.Errorf("%s: details %v, want %s = %v", c.name, details, k, v)
			}
		}
		if len(st.audits)+len(st.events) != 0 || st.version != 7 || len(st.roles) != 1 {
			t.Errorf("%s: a refusal wrote %d audits, %d events, version %d, roles %v", c.name, len(st.audits), len(st.events), st.version, st.roles)
		}
	}
}

// TestMemberChangesWrite: a set, a replace and a removal each write one
// audit record (before and after) and one project.member_changed event
// at the authority version after the change; setting the role a member
// holds writes nothing.
func TestMemberChangesWrite(t *testing.T) {
	ctx := context.Background()
	st := membersFixture()
	svc := project.New()
	lead, leadA := caller("usr_4", access.RoleMember)
	leadA.Assignments = []access.Assignment{{Template: access.TemplateProjectLead, ProjectID: "prj_1"}}
	in := project.MemberChange{ProjectID: "prj_1", UserID: "usr_2", Template: access.TemplateCollaborator, RequestID: "req_1"}

	m, err := svc.SetMember(ctx, st, lead, leadA, in)
	if err != nil || m.Template != access.TemplateCollaborator || m.UserID != "usr_2" {
		t.Fatalf("set: %+v, %v", m, err)
	}
	if _, err := svc.SetMember(ctx, st, lead, leadA, in); err != nil || len(st.audits) != 1 || len(st.events) != 1 {
		t.Fatalf("setting the same role again: %v; %d audits, %d events", err, len(st.audits), len(st.events))
	}
	in.Template = access.TemplateCreator
	if _, err := svc.SetMember(ctx, st, lead, leadA, in); err != nil {
		t.Fatal(err)
	}
	removed, err := svc.RemoveMember(ctx, st, lead, leadA, project.MemberChange{ProjectID: "prj_1", UserID: "usr_2", RequestID: "req_3"})
	if err != nil || removed.Template != access.TemplateCreator {
		t.Fatalf("remove: %+v, %v", removed, err)
	}
	wantAudit := []struct{ before, after string }{
		{``, `{"userId":"usr_2","template":"collaborator"}`},
		{`{"userId":"usr_2","template":"collaborator"}`, `{"userId":"usr_2","template":"creator"}`},
		{`{"userId":"usr_2","template":"creator"}`, ``},
	}
	wantEvent := []string{
		`{"previousTemplate":null,"projectId":"prj_1","template":"collaborator","userId":"usr_2"}`,
		`{"previousTemplate":"collaborator","projectId":"prj_1","template":"creator","userId":"usr_2"}`,
		`{"previousTemplate":"creator","projectId":"prj_1","template":null,"userId":"usr_2"}`,
	}
	if len(st.audits) != 3 || len(st.events) != 3 {
		t.Fatalf("%d audits, %d events, want 3 each", len(st.audits), len(st.events))
	}
	for i, a := range st.audits {
		if a.Action != project.ActionMemberChanged || a.TargetType != project.TargetProject || a.TargetID != "prj_1" ||
			a.ActorUserID != "usr_4" || string(a.Before) != wantAudit[i].before || string(a.After) != wantAudit[i].after {
			t.Errorf("audit %d = %+v (before %s, after %s)", i, a, a.Before, a.After)
		}
	}
	for i, e := range st.events {
		if e.Type != project.EventMemberChanged || e.AggregateID != "prj_1" || e.AggregateVersion != int64(8+i) ||
			e.WorkspaceID != "ws_1" || e.Environment != "test" || !jsonEqual(e.Payload, wantEvent[i]) {
			t.Errorf("event %d = %+v (payload %s)", i, e, e.Payload)
		}
	}
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}
