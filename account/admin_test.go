package account

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// fakeAdmin is an in-memory AdminStore of one workspace.
type fakeAdmin struct {
	members map[string]Member
	events  []AuditEvent
	n       int
}

var _ AdminStore = (*fakeAdmin)(nil)

func (f *fakeAdmin) Now() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
func (f *fakeAdmin) NewID(prefix string) string {
	f.n++
	return prefix + string(rune('a'+f.n))
}
func (f *fakeAdmin) AuditInsert(_ context.Context, e AuditEvent) error {
	f.events = append(f.events, e)
	return nil
}
func (f *fakeAdmin) MemberList(context.Context, string, string, int) ([]Member, error) {
	return nil, nil
}
func (f *fakeAdmin) MemberGet(_ context.Context, _, userID string) (Member, error) {
	m, ok := f.members[userID]
	if !ok {
		return Member{}, fault.E("fake", fault.NotFound, "")
	}
	return m, nil
}
func (f *fakeAdmin) MemberOwnerCount(_ context.Context, _, except string) (int, error) {
	n := 0
	for id, m := range f.members {
		if id != except && m.Status == access.MembershipActive && slices.Contains(m.Roles, access.RoleOwner) {
			n++
		}
	}
	return n, nil
}
func (f *fakeAdmin) MembershipRolesSet(_ context.Context, _, userID string, roles []access.Role) error {
	m := f.members[userID]
	m.Roles = roles
	f.members[userID] = m
	return nil
}

func authority(roles ...access.Role) *access.Authority {
	return &access.Authority{MembershipStatus: access.MembershipActive, Roles: roles}
}

func TestGrantable(t *testing.T) {
	owner, admin, creator := authority(access.RoleOwner), authority(access.RoleAdmin), authority(access.RoleCreator)
	for _, r := range access.Roles() {
		if !Grantable(owner, r) {
			t.Errorf("an OWNER cannot grant %s", r)
		}
	}
	if Grantable(admin, access.RoleOwner) || !Grantable(admin, access.RoleAdmin) || !Grantable(admin, access.RoleDeveloper) {
		t.Error("ADMIN grants wrong")
	}
	if !Grantable(creator, access.RoleViewer) { // every VIEWER grant is a CREATOR grant
		t.Error("CREATOR cannot grant VIEWER")
	}
	if Grantable(creator, access.RoleMember) || Grantable(owner, access.Role(access.SuperAdmin)) || Grantable(nil, access.RoleViewer) {
		t.Error("granted beyond authority")
	}
}

func TestChangeRolesKeepsAnOwner(t *testing.T) {
	ctx := context.Background()
	st := &fakeAdmin{members: map[string]Member{
		"usr_a": {UserID: "usr_a", Roles: []access.Role{access.RoleOwner}, Status: access.MembershipSuspended},
		"usr_b": {UserID: "usr_b", Roles: []access.Role{access.RoleOwner}, Status: access.MembershipActive},
	}}
	s := &Service{}
	// usr_a's membership is suspended, so usr_b is the only active owner
	// (through the API a caller is always active; the guard still holds).
	p := &access.Principal{UserID: "usr_a", TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	_, err := s.ChangeRoles(ctx, st, p, authority(access.RoleOwner), RoleChange{UserID: "usr_b", Roles: []access.Role{access.RoleViewer}})
	if !fault.Is(err, fault.Conflict) {
		t.Fatalf("removing the last active owner = %v, want CONFLICT", err)
	}
	if len(st.events) != 0 {
		t.Fatal("a refused change was audited")
	}
	st.members["usr_a"] = Member{UserID: "usr_a", Roles: []access.Role{access.RoleOwner}, Status: access.MembershipActive}
	m, err := s.ChangeRoles(ctx, st, p, authority(access.RoleOwner), RoleChange{UserID: "usr_b",
		Roles: []access.Role{access.RoleViewer, access.RoleCreator}, RequestID: "req_1"})
	if err != nil || !slices.Equal(m.Roles, []access.Role{access.RoleCreator, access.RoleViewer}) {
		t.Fatalf("ChangeRoles = %+v, %v", m, err)
	}
	if len(st.events) != 1 || string(st.events[0].Before) != `{"roles":["OWNER"]}` ||
		string(st.events[0].After) != `{"roles":["CREATOR","VIEWER"]}` || st.events[0].RequestID != "req_1" ||
		st.events[0].ActorUserID != "usr_a" || st.events[0].WorkspaceID != "ws_1" || st.events[0].Environment != access.Test {
		t.Fatalf("audit = %+v", st.events)
	}
	_, err = s.ChangeRoles(ctx, st, p, authority(access.RoleOwner), RoleChange{UserID: "usr_b",
		Roles: []access.Role{access.RoleViewer, access.RoleViewer}})
	if !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("duplicate role = %v", err)
	}
}

// TestAuditEnvironment: an event belongs to the acting principal's
// environment unless the entry names one; an event of neither is refused.
func TestAuditEnvironment(t *testing.T) {
	ctx := context.Background()
	st := &fakeAdmin{}
	live := &access.Principal{UserID: "usr_a", TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}
	if err := Audit(ctx, st, live, AuditEntry{Action: "a", TargetType: TargetUser, TargetID: "usr_b"}); err != nil {
		t.Fatal(err)
	}
	if err := Audit(ctx, st, nil, AuditEntry{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, Action: "b"}); err != nil {
		t.Fatal(err)
	}
	if len(st.events) != 2 || st.events[0].Environment != access.Live || st.events[1].Environment != access.Test {
		t.Fatalf("events = %+v", st.events)
	}
	if err := Audit(ctx, st, nil, AuditEntry{TenantID: "ten_1", WorkspaceID: "ws_1", Action: "c"}); !fault.Is(err, fault.Internal) {
		t.Fatalf("an event without an environment = %v, want INTERNAL", err)
	}
	if err := Audit(ctx, st, &access.Principal{UserID: "usr_a"}, AuditEntry{Action: "d"}); !fault.Is(err, fault.Internal) {
		t.Fatalf("an actor without an environment = %v, want INTERNAL", err)
	}
	if len(st.events) != 2 {
		t.Fatalf("refused events were written: %+v", st.events)
	}
}
