package account

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// inviteFixture is ws_1 of ten_1 (owner usr_ada) and a principal acting
// there for user.
func inviteFixture(t *testing.T, box *mailbox) (*Service, *memAccount) {
	t.Helper()
	s, st := newTestService(t, box)
	st.workspaces["ws_1"] = access.Workspace{ID: "ws_1", TenantID: "ten_1", Name: "Studio", State: access.WorkspaceActive}
	st.members["ws_1|usr_ada"] = []access.Role{access.RoleOwner}
	return s, st
}

func principalOf(user, tenant, workspace, session string) *access.Principal {
	return &access.Principal{Kind: access.CredentialSession, TenantID: tenant, WorkspaceID: workspace, Environment: access.Live,
		UserID: user, SessionID: session}
}

// codeIn returns the code of the link to path in a mail.
func codeIn(t *testing.T, m Message, path string) string {
	t.Helper()
	i := strings.Index(m.Text, path+"?code=")
	if i < 0 {
		t.Fatalf("no %s link in %q", path, m.Text)
	}
	u, err := url.Parse(strings.Fields(m.Text[i:])[0])
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("code")
}

// TestInviteRules: an invitation names a valid address and roles the
// inviter may grant, never a member's address; it is a 7-day code stored
// as a digest, audited, and mailed last, so a failed send leaves nothing.
func TestInviteRules(t *testing.T) {
	ctx := context.Background()
	box := &mailbox{}
	s, st := inviteFixture(t, box)
	p := principalOf("usr_ada", "ten_1", "ws_1", "ses_ada")
	owner, admin := authority(access.RoleOwner), authority(access.RoleAdmin)
	for _, tc := range []struct {
		name  string
		a     *access.Authority
		in    InviteInput
		code  fault.Code
		field string
	}{
		{"malformed email", owner, InviteInput{Email: "carol", Roles: []access.Role{access.RoleViewer}}, fault.InvalidInput, "email"},
		{"no roles", owner, InviteInput{Email: "carol@example.com"}, fault.InvalidInput, "roles"},
		{"unknown role", owner, InviteInput{Email: "carol@example.com", Roles: []access.Role{access.RoleViewer, "GOD"}}, fault.InvalidInput, "roles[1]"},
		{"super_admin", owner, InviteInput{Email: "carol@example.com", Roles: []access.Role{access.Role(access.SuperAdmin)}}, fault.InvalidInput, "roles[0]"},
		{"repeated role", owner, InviteInput{Email: "carol@example.com", Roles: []access.Role{access.RoleViewer, access.RoleViewer}}, fault.InvalidInput, "roles[1]"},
		{"owner by an admin", admin, InviteInput{Email: "carol@example.com", Roles: []access.Role{access.RoleOwner}}, fault.AccessDenied, "roles[0]"},
		{"a member", owner, InviteInput{Email: "ADA@example.com", Roles: []access.Role{access.RoleViewer}}, fault.Conflict, "email"},
	} {
		_, err := s.Invite(ctx, st, p, tc.a, tc.in)
		if _, _, d := fault.Public(err); fault.CodeOf(err) != tc.code || d["field"] != tc.field {
			t.Errorf("%s = %v, want %s on %s", tc.name, err, tc.code, tc.field)
		}
	}
	// A failed send fails the caller's unit of work, which drops the code
	// and the audit event.
	box.fail = true
	var inv Invitation
	err := st.rollback(func() error {
		_, err := s.Invite(ctx, st, p, owner, InviteInput{Email: "carol@example.com", Roles: []access.Role{access.RoleViewer}})
		return err
	})
	if !fault.Is(err, fault.ServiceUnavailable) || len(st.codes) != 0 || len(st.audit) != 0 {
		t.Fatalf("an invitation whose mail fails = %v, leaving %d codes and %d audit events; want SERVICE_UNAVAILABLE and nothing", err, len(st.codes), len(st.audit))
	}
	box.fail = false

	inv, err = s.Invite(ctx, st, p, admin, InviteInput{Email: " Carol@Example.com", RequestID: "req_1",
		Roles: []access.Role{access.RoleViewer, access.RoleCreator}})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Email != "carol@example.com" || !slices.Equal(inv.Roles, []access.Role{access.RoleCreator, access.RoleViewer}) ||
		!inv.ExpiresAt.Equal(st.now.Add(InvitationLifetime)) || inv.InvitedBy != "usr_ada" {
		t.Fatalf("invitation = %+v", inv)
	}
	if len(box.sent) != 1 || box.sent[0].To != "carol@example.com" {
		t.Fatalf("mail = %+v", box.sent)
	}
	code := codeIn(t, box.sent[0], "/invite/accept")
	c, ok := st.codes[CodeDigest(testKeys{}, code)]
	if !ok || c.Purpose != PurposeInvitation || c.WorkspaceID != "ws_1" || c.Email != "carol@example.com" || !c.ExpiresAt.Equal(inv.ExpiresAt) {
		t.Fatalf("stored code = %+v (found %v)", c, ok)
	}
	if len(st.audit) != 1 || st.audit[0].Action != ActionMemberInvited || st.audit[0].TargetID != "carol@example.com" ||
		st.audit[0].RequestID != "req_1" || strings.Contains(string(st.audit[0].After), code) {
		t.Fatalf("audit = %+v", st.audit)
	}
}

// TestAcceptInviteRules: only the invited address, verified, redeems an
// invitation, once; a person of no workspace moves into the inviting
// organization, one of another organization's workspace cannot join; the
// session acts in the joined workspace next.
func TestAcceptInviteRules(t *testing.T) {
	ctx := context.Background()
	box := &mailbox{}
	s, st := inviteFixture(t, box)
	inviter := principalOf("usr_ada", "ten_1", "ws_1", "ses_ada")
	invite := func(email string) string {
		t.Helper()
		box.sent = nil
		if _, err := s.Invite(ctx, st, inviter, authority(access.RoleOwner), InviteInput{Email: email, Roles: []access.Role{access.RoleCreator}}); err != nil {
			t.Fatal(err)
		}
		return codeIn(t, box.sent[0], "/invite/accept")
	}
	verified := st.now
	person := func(id, tenant, email string, verifiedAt *time.Time) *access.Principal {
		st.users[id] = access.User{ID: id, TenantID: tenant, Email: email}
		st.creds[id] = PasswordCredential{UserID: id, EmailVerifiedAt: verifiedAt}
		st.sessions["ses_"+id] = Session{ID: "ses_" + id, UserID: id, TenantID: tenant, Kind: KindWeb}
		return principalOf(id, tenant, "", "ses_"+id)
	}
	reason := func(err error) any { _, _, d := fault.Public(err); return d["reason"] }
	// accept redeems code in a unit of work of its own, as the route does:
	// a refusal rolls back, so the code stays unused.
	accept := func(p *access.Principal, code string) (Joined, error) {
		var j Joined
		err := st.rollback(func() (err error) { j, err = s.AcceptInvite(ctx, st, p, code, "req_accept"); return err })
		return j, err
	}

	carolCode := invite("carol@example.com")
	// Someone else, signed in with the link, is refused and the code stays.
	dave := person("usr_dave", "ten_dave", "dave@example.com", &verified)
	if _, err := accept(dave, carolCode); !fault.Is(err, fault.AccessDenied) || reason(err) != "email_mismatch" {
		t.Fatalf("another address = %v, want ACCESS_DENIED (email_mismatch)", err)
	}
	carol := person("usr_carol", "ten_carol", "carol@example.com", nil)
	if _, err := accept(carol, carolCode); !fault.Is(err, fault.AccessDenied) || reason(err) != "email_unverified" {
		t.Fatalf("an unverified address = %v, want ACCESS_DENIED (email_unverified)", err)
	}
	st.creds["usr_carol"] = PasswordCredential{UserID: "usr_carol", EmailVerifiedAt: &verified}
	joined, err := accept(carol, carolCode)
	if err != nil || joined.Workspace.ID != "ws_1" || !slices.Equal(joined.Roles, []access.Role{access.RoleCreator}) {
		t.Fatalf("AcceptInvite = %+v, %v", joined, err)
	}
	if st.users["usr_carol"].TenantID != "ten_1" || st.sessions["ses_usr_carol"].WorkspaceID != "ws_1" ||
		!slices.Equal(st.members["ws_1|usr_carol"], []access.Role{access.RoleCreator}) {
		t.Fatalf("after joining: user %+v, session %+v, roles %v", st.users["usr_carol"], st.sessions["ses_usr_carol"], st.members["ws_1|usr_carol"])
	}
	if last := st.audit[len(st.audit)-1]; last.Action != ActionMemberJoined || last.TargetID != "usr_carol" || last.WorkspaceID != "ws_1" {
		t.Fatalf("audit = %+v", last)
	}
	if _, err := accept(carol, carolCode); !fault.Is(err, fault.InvalidInput) || reason(err) != CodeUsed {
		t.Fatalf("the code again = %v, want INVALID_INPUT (used)", err)
	}

	// A member of another organization's workspace cannot join.
	erin := person("usr_erin", "ten_erin", "erin@example.com", &verified)
	st.members["ws_erin|usr_erin"] = []access.Role{access.RoleOwner}
	if _, err := accept(erin, invite("erin@example.com")); !fault.Is(err, fault.Conflict) || reason(err) != "other_organization" {
		t.Fatalf("a member of another organization = %v, want CONFLICT (other_organization)", err)
	}
	// A workspace no longer active cannot be joined.
	frank := person("usr_frank", "ten_frank", "frank@example.com", &verified)
	code := invite("frank@example.com")
	st.workspaces["ws_1"] = access.Workspace{ID: "ws_1", TenantID: "ten_1", Name: "Studio", State: "suspended"}
	if _, err := accept(frank, code); !fault.Is(err, fault.WorkspaceAccessDenied) {
		t.Fatalf("an inactive workspace = %v, want WORKSPACE_ACCESS_DENIED", err)
	}
	// Only a signed-in person accepts.
	if _, err := accept(&access.Principal{Kind: access.CredentialAPIKey, UserID: "usr_frank"}, code); !fault.Is(err, fault.Unauthenticated) {
		t.Fatalf("an API key accepting = %v, want UNAUTHENTICATED", err)
	}
}

// TestChangeRolesAuthority: nobody changes their own roles; an
// administrator neither makes nor unmakes an OWNER; another workspace's
// user is NOT_FOUND; a refused change is not audited.
func TestChangeRolesAuthority(t *testing.T) {
	ctx := context.Background()
	st := &fakeAdmin{members: map[string]Member{
		"usr_owner": {UserID: "usr_owner", Roles: []access.Role{access.RoleOwner}, Status: access.MembershipActive},
		"usr_admin": {UserID: "usr_admin", Roles: []access.Role{access.RoleAdmin}, Status: access.MembershipActive},
		"usr_dev":   {UserID: "usr_dev", Roles: []access.Role{access.RoleDeveloper}, Status: access.MembershipActive},
	}}
	s := &Service{}
	admin := &access.Principal{UserID: "usr_admin", TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}
	change := func(p *access.Principal, a *access.Authority, user string, roles ...access.Role) error {
		_, err := s.ChangeRoles(ctx, st, p, a, RoleChange{UserID: user, Roles: roles})
		return err
	}
	detail := func(err error, key string) any { _, _, d := fault.Public(err); return d[key] }
	if err := change(admin, authority(access.RoleAdmin), "usr_admin", access.RoleOwner); !fault.Is(err, fault.AccessDenied) || detail(err, "reason") != "self_role_change" {
		t.Errorf("an admin changing their own roles = %v, want ACCESS_DENIED (self_role_change)", err)
	}
	if err := change(admin, authority(access.RoleAdmin), "usr_dev", access.RoleOwner); !fault.Is(err, fault.AccessDenied) || detail(err, "field") != "roles[0]" {
		t.Errorf("an admin making an owner = %v, want ACCESS_DENIED on roles[0]", err)
	}
	if err := change(admin, authority(access.RoleAdmin), "usr_owner", access.RoleViewer); !fault.Is(err, fault.AccessDenied) || detail(err, "field") != "userId" {
		t.Errorf("an admin unmaking an owner = %v, want ACCESS_DENIED on userId", err)
	}
	if err := change(admin, authority(access.RoleAdmin), "usr_elsewhere", access.RoleViewer); !fault.Is(err, fault.NotFound) {
		t.Errorf("a user of another workspace = %v, want NOT_FOUND", err)
	}
	if len(st.events) != 0 || !slices.Equal(st.members["usr_owner"].Roles, []access.Role{access.RoleOwner}) {
		t.Fatalf("refused changes left %d audit events, owner roles %v", len(st.events), st.members["usr_owner"].Roles)
	}
	if err := change(admin, authority(access.RoleAdmin), "usr_dev", access.RoleAdmin, access.RoleDeveloper); err != nil {
		t.Fatalf("an admin making an admin: %v", err)
	}
}
