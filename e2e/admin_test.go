package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

const testPassword = "correct horse battery staple"

// person is a signed-up, signed-in user.
type person struct {
	email, cookie, token, userID string
}

// signIn signs email up (verified) and in.
func signIn(t testing.TB, s *platformtest.System, email, name string) person {
	t.Helper()
	s.Signup(email, testPassword, name)
	cookie, token := s.Login(email, testPassword)
	return person{email: email, cookie: cookie, token: token}
}

// onboard creates a workspace for p and returns its id.
func onboard(t testing.TB, s *platformtest.System, p *person, name string) string {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/onboarding", Cookie: p.cookie,
		Body: map[string]any{"action": "create", "name": name, "goal": "creator"}})
	if r.Status != http.StatusOK {
		t.Fatalf("onboard %s: %d %s", p.email, r.Status, r.Body)
	}
	var o api.Onboarded
	r.Data(t, &o)
	p.userID = authContext(t, s, p.cookie).User.ID
	return o.Workspace.ID
}

func authContext(t testing.TB, s *platformtest.System, cookie string) api.AuthContext {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Cookie: cookie})
	if r.Status != http.StatusOK {
		t.Fatalf("auth context: %d %s", r.Status, r.Body)
	}
	var ac api.AuthContext
	r.Data(t, &ac)
	return ac
}

// invite invites email with roles as inviter and returns the mailed code.
func invite(t *testing.T, s *platformtest.System, inviter person, email string, roles ...string) string {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/admin/members/invite", Cookie: inviter.cookie,
		Body: map[string]any{"email": email, "roles": roles}})
	if r.Status != http.StatusCreated {
		t.Fatalf("invite %s: %d %s", email, r.Status, r.Body)
	}
	return s.MailedCode(email, "invited")
}

// join signs email up and in, and accepts code.
func join(t *testing.T, s *platformtest.System, email, name, code string) person {
	t.Helper()
	p := signIn(t, s, email, name)
	r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/invite/accept", Cookie: p.cookie, Body: map[string]string{"code": code}})
	if r.Status != http.StatusOK {
		t.Fatalf("accept %s: %d %s", email, r.Status, r.Body)
	}
	p.userID = authContext(t, s, p.cookie).User.ID
	return p
}

func setRoles(s *platformtest.System, by person, userID string, roles ...string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: "PATCH", Path: "/api/v1/admin/accounts/" + userID + "/role", Cookie: by.cookie,
		Body: map[string]any{"roles": roles}})
}

func detail(r *platformtest.Response, key string) any {
	var env struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	json.Unmarshal(r.Body, &env)
	return env.Error.Details[key]
}

// TestAdminStory is the story: sign up, verify, log in, onboard to
// free, invite a member, accept, change a role and read the audit log.
func TestAdminStory(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.com", "Alice")
		wsID := onboard(t, s, &alice, "Alice Studio")

		// The session acts in the new workspace, on the free plan.
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/saas/me", Cookie: alice.cookie})
		var me api.SaasMe
		r.Data(t, &me)
		if me.Workspace.ID != wsID || me.Workspace.Name != "Alice Studio" || !slices.Contains(me.Entitlements, "ai.basic") ||
			!slices.Contains(me.Permissions, "member.manage") {
			t.Fatalf("saas/me = %+v", me)
		}
		if ac := authContext(t, s, alice.cookie); !slices.Equal(ac.Roles, []string{"DEVELOPER", "OWNER"}) || ac.Workspace.ID != wsID {
			t.Fatalf("auth context = %+v", ac)
		}
		// The access token of the same session acts there too.
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: alice.token}); !strings.Contains(string(r.Body), wsID) {
			t.Fatalf("access token context: %d %s", r.Status, r.Body)
		}

		// Audit ids sort by time: step the fake clock between audited changes.
		tick := func() { s.Clock.Advance(time.Millisecond) }
		tick()
		// Invite Bob as CREATOR: the link is mailed, the code is not in the answer.
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/admin/members/invite", Cookie: alice.cookie,
			Body: map[string]any{"email": "Bob@Example.com", "roles": []string{"CREATOR"}}})
		var inv api.InvitationView
		r.Data(t, &inv)
		if r.Status != http.StatusCreated || inv.Email != "bob@example.com" || inv.WorkspaceID != wsID || !inv.ExpiresAt.Equal(s.DB.Now().Add(7*24*time.Hour)) {
			t.Fatalf("invite: %d %s", r.Status, r.Body)
		}
		code := s.MailedCode("bob@example.com", "invited")
		if strings.Contains(string(r.Body), code) {
			t.Fatal("the invitation code is in the inviter's answer")
		}

		tick()
		bob := join(t, s, "bob@example.com", "Bob", code)
		tick()
		if ac := authContext(t, s, bob.cookie); ac.Workspace.ID != wsID || !slices.Equal(ac.Roles, []string{"CREATOR"}) {
			t.Fatalf("bob's context after accepting = %+v", ac)
		}
		// The code is single-use.
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/invite/accept", Cookie: bob.cookie, Body: map[string]string{"code": code}})
		if r.Status != 400 || r.Code() != "INVALID_INPUT" || detail(r, "reason") != "used" {
			t.Fatalf("reused code: %d %s", r.Status, r.Body)
		}

		// Members, with cursor pagination.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/members?limit=1", Cookie: alice.cookie})
		var page api.MemberPage
		r.Data(t, &page)
		if len(page.Items) != 1 || !page.HasMore || page.NextCursor == nil {
			t.Fatalf("members page 1: %s", r.Body)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/members?limit=1&cursor=" + *page.NextCursor, Cookie: alice.cookie})
		var page2 api.MemberPage
		r.Data(t, &page2)
		if len(page2.Items) != 1 || page2.HasMore || page2.Items[0].UserID == page.Items[0].UserID {
			t.Fatalf("members page 2: %s", r.Body)
		}

		// Roles and templates, as data.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/roles", Cookie: bob.cookie})
		var cat api.RoleCatalog
		r.Data(t, &cat)
		if len(cat.Roles) != 8 || len(cat.Templates) != 9 || !slices.Equal(cat.PlatformRoles, []string{"super_admin"}) {
			t.Fatalf("roles: %d roles, %d templates", len(cat.Roles), len(cat.Templates))
		}

		// A role change applies on the affected account's very next request.
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/audit", Cookie: bob.cookie}); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("a CREATOR reads the audit log: %d %s", r.Status, r.Body)
		}
		r = setRoles(s, alice, bob.userID, "FINANCE")
		var mv api.MemberView
		r.Data(t, &mv)
		if mv.UserID != bob.userID || !slices.Equal(mv.Roles, []string{"FINANCE"}) {
			t.Fatalf("role change: %d %s", r.Status, r.Body)
		}
		changeID := r.Header.Get("X-Request-Id")
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/audit", Cookie: bob.cookie}); r.Status != 200 {
			t.Fatalf("FINANCE reads the audit log on the next request: %d %s", r.Status, r.Body)
		}
		if ac := authContext(t, s, bob.cookie); !slices.Equal(ac.Roles, []string{"FINANCE"}) {
			t.Fatalf("bob's roles = %v", ac.Roles)
		}

		// The audit log: newest first, who, what, when, request id, before and after.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/audit", Cookie: alice.cookie})
		var audit api.AuditPage
		r.Data(t, &audit)
		var actions []string
		for _, e := range audit.Items {
			actions = append(actions, e.Action)
		}
		want := []string{"member.roles_changed", "member.joined", "member.invited", "workspace.created"}
		if !slices.Equal(actions, want) {
			t.Fatalf("audit actions = %v, want %v", actions, want)
		}
		ch := audit.Items[0]
		if ch.Actor.UserID != alice.userID || ch.Target.ID != bob.userID || ch.RequestID != changeID ||
			string(ch.Before) != `{"roles":["CREATOR"]}` || string(ch.After) != `{"roles":["FINANCE"]}` || ch.CreatedAt.IsZero() {
			t.Fatalf("role change event = %+v (%s -> %s)", ch, ch.Before, ch.After)
		}
		if j := audit.Items[1]; j.Actor.UserID != bob.userID || !strings.Contains(string(j.After), "CREATOR") {
			t.Fatalf("join event = %+v", j)
		}
		// Pagination.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/audit?limit=3", Cookie: alice.cookie})
		r.Data(t, &audit)
		if len(audit.Items) != 3 || !audit.HasMore {
			t.Fatalf("audit page: %s", r.Body)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/audit?limit=3&cursor=" + *audit.NextCursor, Cookie: alice.cookie})
		r.Data(t, &audit)
		if len(audit.Items) != 1 || audit.Items[0].Action != "workspace.created" || audit.HasMore {
			t.Fatalf("audit page 2: %s", r.Body)
		}

		// The audit log never holds a secret.
		var rows []string
		if err := s.DB.Read().IDB().NewRaw(`SELECT COALESCE(before_state, '') || ' ' || COALESCE(after_state, '') || ' ' || target_id || ' ' || request_id FROM audit_events`).
			Scan(context.Background(), &rows); err != nil {
			t.Fatal(err)
		}
		all := strings.Join(rows, "\n")
		for _, secret := range []string{testPassword, code, alice.cookie, alice.token, bob.cookie, bob.token, "pc_", "platform_at_", "$argon2id"} {
			if strings.Contains(all, secret) {
				t.Fatalf("the audit log holds a secret (%.12s...): %s", secret, all)
			}
		}
	})
}

func TestOnboardingPlansAndRetries(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		p := signIn(t, s, "paid@example.com", "Paid")
		body := map[string]any{"action": "create", "name": "Paid Studio", "goal": "label", "plan": "pro"}
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/onboarding", Cookie: p.cookie, Body: body})
		var o api.Onboarded
		r.Data(t, &o)
		if o.Next == nil || o.Next.Type != "checkout" || o.Next.Plan != "pro" || *o.Plan != "free" || *o.SelectedPlan != "pro" || *o.Goal != "label" {
			t.Fatalf("paid onboarding: %d %s", r.Status, r.Body)
		}
		// The workspace starts on free until checkout.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/saas/me", Cookie: p.cookie})
		var me api.SaasMe
		r.Data(t, &me)
		if !slices.Equal(me.Entitlements, []string{"ai.basic"}) || me.Subscription != nil {
			t.Fatalf("saas/me after paid onboarding: %s", r.Body)
		}
		// A retry recovers the same workspace; other answers conflict.
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/onboarding", Cookie: p.cookie, Body: body,
			Header: map[string]string{"Idempotency-Key": "onboard-1"}})
		var again api.Onboarded
		r.Data(t, &again)
		if again.Workspace.ID != o.Workspace.ID {
			t.Fatalf("retry made another workspace: %s", r.Body)
		}
		body["name"] = "Another"
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/onboarding", Cookie: p.cookie, Body: body}); r.Status != 409 || detail(r, "reason") != "already_onboarded" {
			t.Fatalf("second workspace: %d %s", r.Status, r.Body)
		}

		q := signIn(t, s, "bad@example.com", "Bad")
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"action": "create", "name": "X", "goal": "astronaut"}, "goal"},
			{map[string]any{"action": "create", "name": "X", "goal": "team", "plan": "platinum"}, "plan"},
			{map[string]any{"action": "create", "name": " ", "goal": "team"}, "name"},
			{map[string]any{"action": "dance"}, "action"},
			{map[string]any{"action": "join"}, "code"},
			{map[string]any{"action": "join", "code": "pc_nope"}, "code"},
		} {
			r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/onboarding", Cookie: q.cookie, Body: c.body})
			if r.Status != 400 || r.Code() != "INVALID_INPUT" || detail(r, "field") != c.field {
				t.Errorf("%v: %d %s, want INVALID_INPUT on %s", c.body, r.Status, r.Body, c.field)
			}
		}
		// Onboarding needs a signed-in user, not an API key.
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/onboarding", Key: s.Boot.TestKey,
			Body: map[string]any{"action": "create", "name": "K", "goal": "team"}}); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("onboarding with a key: %d %s", r.Status, r.Body)
		}
	})
}

func TestAdminRefusals(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.com", "Alice")
		onboard(t, s, &alice, "A")
		bob := join(t, s, "bob@example.com", "Bob", invite(t, s, alice, "bob@example.com", "ADMIN"))
		vic := join(t, s, "vic@example.com", "Vic", invite(t, s, alice, "vic@example.com", "VIEWER"))

		// A member changing their own roles.
		if r := setRoles(s, bob, bob.userID, "OWNER"); r.Status != 403 || r.Code() != "ACCESS_DENIED" || detail(r, "reason") != "self_role_change" {
			t.Fatalf("self role change: %d %s", r.Status, r.Body)
		}
		if r := setRoles(s, alice, alice.userID, "VIEWER"); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("owner's self role change: %d %s", r.Status, r.Body)
		}
		// An ADMIN cannot make or unmake an OWNER.
		if r := setRoles(s, bob, vic.userID, "OWNER"); r.Code() != "ACCESS_DENIED" || detail(r, "field") != "roles[0]" {
			t.Fatalf("admin grants OWNER: %d %s", r.Status, r.Body)
		}
		if r := setRoles(s, bob, alice.userID, "VIEWER"); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("admin demotes the owner: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/admin/members/invite", Cookie: bob.cookie,
			Body: map[string]any{"email": "o@example.com", "roles": []string{"OWNER"}}}); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("admin invites an OWNER: %d %s", r.Status, r.Body)
		}
		// An ADMIN may grant what it holds.
		if r := setRoles(s, bob, vic.userID, "CREATOR", "MODERATOR"); r.Status != 200 {
			t.Fatalf("admin grants CREATOR: %d %s", r.Status, r.Body)
		}
		// super_admin is never a workspace role, nor is an unknown role.
		for _, roles := range [][]string{{"super_admin"}, {"CREATOR", "super_admin"}, {"ROOT"}} {
			field := "roles[" + string(rune('0'+len(roles)-1)) + "]"
			r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/admin/members/invite", Cookie: alice.cookie,
				Body: map[string]any{"email": "x@example.com", "roles": roles}})
			if r.Status != 400 || r.Code() != "INVALID_INPUT" || detail(r, "field") != field {
				t.Fatalf("invite with %v: %d %s", roles, r.Status, r.Body)
			}
			if r := setRoles(s, alice, vic.userID, roles...); r.Code() != "INVALID_INPUT" || detail(r, "field") != field {
				t.Fatalf("role change to %v: %d %s", roles, r.Status, r.Body)
			}
		}
		if len(s.Mail.To("x@example.com")) != 0 {
			t.Fatal("a refused invitation was mailed")
		}
		// A member without member.invite or member.manage.
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/admin/members/invite", Cookie: vic.cookie,
			Body: map[string]any{"email": "y@example.com", "roles": []string{"VIEWER"}}}); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("moderator invites: %d %s", r.Status, r.Body)
		}
		if r := setRoles(s, vic, bob.userID, "VIEWER"); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("moderator changes roles: %d %s", r.Status, r.Body)
		}
		// Inviting a member again.
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/admin/members/invite", Cookie: alice.cookie,
			Body: map[string]any{"email": "vic@example.com", "roles": []string{"VIEWER"}}}); r.Status != 409 {
			t.Fatalf("invite a member: %d %s", r.Status, r.Body)
		}

		// An admin of workspace A acting on workspace B.
		carol := signIn(t, s, "carol@example.com", "Carol")
		wsB := onboard(t, s, &carol, "B")
		if r := setRoles(s, alice, carol.userID, "VIEWER"); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Fatalf("A's owner changes B's account: %d %s", r.Status, r.Body)
		}
		for _, path := range []string{"/api/v1/admin/members", "/api/v1/admin/audit", "/api/v1/admin/roles"} {
			r := s.Do(platformtest.Request{Method: "GET", Path: path, Cookie: alice.cookie, Header: map[string]string{"X-Workspace-Id": wsB}})
			if r.Status != 403 || r.Code() != "WORKSPACE_ACCESS_DENIED" {
				t.Fatalf("GET %s naming B: %d %s", path, r.Status, r.Body)
			}
		}
		r := s.Do(platformtest.Request{Method: "PATCH", Path: "/api/v1/admin/accounts/" + carol.userID + "/role", Cookie: alice.cookie,
			Header: map[string]string{"X-Workspace-Id": wsB}, Body: map[string]any{"roles": []string{"VIEWER"}}})
		if r.Code() != "WORKSPACE_ACCESS_DENIED" {
			t.Fatalf("PATCH naming B: %d %s", r.Status, r.Body)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/admin/members", Cookie: alice.cookie})
		if strings.Contains(string(r.Body), carol.userID) {
			t.Fatal("A's member list shows B's member")
		}

		// Accepting needs the invited, verified address; a wrong one leaves the code usable.
		code := invite(t, s, alice, "dan@example.com", "VIEWER")
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/invite/accept", Cookie: carol.cookie, Body: map[string]string{"code": code}})
		if r.Code() != "ACCESS_DENIED" || detail(r, "reason") != "email_mismatch" {
			t.Fatalf("accept by another address: %d %s", r.Status, r.Body)
		}
		dan := join(t, s, "dan@example.com", "Dan", code)
		if ac := authContext(t, s, dan.cookie); !slices.Equal(ac.Roles, []string{"VIEWER"}) {
			t.Fatalf("dan = %+v", ac)
		}
		// An expired invitation.
		code = invite(t, s, alice, "eve@example.com", "VIEWER")
		s.Clock.Advance(7*24*time.Hour + time.Second)
		eve := signIn(t, s, "eve@example.com", "Eve")
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/invite/accept", Cookie: eve.cookie, Body: map[string]string{"code": code}})
		if r.Status != 400 || detail(r, "reason") != "expired" {
			t.Fatalf("expired invitation: %d %s", r.Status, r.Body)
		}
	})
}

func TestFreshAuthenticationForLiveKeys(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		boot, err := s.P.Bootstrap(context.Background(), platform.BootstrapInput{TenantName: "Fresh", WorkspaceName: "Fresh Studio",
			OwnerEmail: "fresh@example.com", OwnerName: "Fresh Owner", LiveKey: true, Password: testPassword})
		if err != nil {
			t.Fatal(err)
		}
		cookie, _ := s.Login("fresh@example.com", testPassword)
		create := func(cookie string, header map[string]string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Cookie: cookie, Header: header,
				Body: map[string]any{"name": "live", "scopes": []string{"keys:read"}}})
		}
		// Right after signing in, a session creates a live key as its user.
		r := create(cookie, nil)
		var ks api.KeySecret
		r.Data(t, &ks)
		if r.Status != 201 || ks.Key.Environment != "live" || ks.Key.CreatedBy.UserID != boot.OwnerID || ks.Key.CreatedBy.KeyID != "" {
			t.Fatalf("create live key from a session: %d %s", r.Status, r.Body)
		}
		s.Clock.Advance(10*time.Minute + time.Second)
		if r := create(cookie, nil); r.Status != 401 || r.Code() != "REAUTHENTICATION_REQUIRED" {
			t.Fatalf("stale live create: %d %s", r.Status, r.Body)
		}
		for _, op := range []string{"rotate", "revoke"} {
			r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + ks.Key.ID + "/" + op, Cookie: cookie})
			if r.Status != 401 || r.Code() != "REAUTHENTICATION_REQUIRED" {
				t.Fatalf("stale live %s: %d %s", op, r.Status, r.Body)
			}
		}
		// Test keys and API-key principals are not subject to it.
		if r := create(cookie, map[string]string{"Platform-Environment": "test"}); r.Status != 201 {
			t.Fatalf("stale test-mode create: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + ks.Key.ID + "/rotate", Key: boot.LiveKey}); r.Status != 200 {
			t.Fatalf("live key rotates a live key: %d %s", r.Status, r.Body)
		}
		// A new sign-in refreshes it.
		cookie, token := s.Login("fresh@example.com", testPassword)
		if r := create(cookie, nil); r.Status != 201 {
			t.Fatalf("create after a new login: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + ks.Key.ID + "/revoke", Key: token}); r.Status != 200 {
			t.Fatalf("revoke with a fresh access token: %d %s", r.Status, r.Body)
		}
	})
}

func TestGrantSuperAdmin(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{})
	ctx := context.Background()
	if err := s.P.GrantSuperAdmin(ctx, "nobody@example.com"); err == nil {
		t.Fatal("granted super_admin to nobody")
	}
	if err := s.P.GrantSuperAdmin(ctx, "OWNER@example.test"); err != nil {
		t.Fatal(err)
	}
	if err := s.P.GrantSuperAdmin(ctx, "owner@example.test"); err != nil {
		t.Fatalf("granting again: %v", err)
	}
	var n int
	if err := s.DB.Read().IDB().NewRaw(`SELECT COUNT(*) FROM platform_roles WHERE user_id = ? AND role = 'super_admin'`, s.Boot.OwnerID).
		Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("platform_roles = %d, %v", n, err)
	}
	// No route grants it.
	for _, rt := range s.P.Routes() {
		if strings.Contains(strings.ToLower(rt.Pattern), "super") {
			t.Fatalf("route %s %s", rt.Method, rt.Pattern)
		}
	}
}
