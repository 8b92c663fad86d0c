package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// memberPath is the path of userID's role on project id.
func memberPath(id, userID string) string { return "/api/v1/projects/" + id + "/members/" + userID }

// setMember puts template as by's session.
func setMember(s *platformtest.System, by person, id, userID, template string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodPut, Path: memberPath(id, userID), Cookie: by.cookie,
		Body: map[string]string{"template": template}})
}

// removeMember deletes userID's role on project id as by's session.
func removeMember(s *platformtest.System, by person, id, userID string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodDelete, Path: memberPath(id, userID), Cookie: by.cookie})
}

// getProject reads project id as cookie's session.
func getProject(s *platformtest.System, cookie, id string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects/" + id, Cookie: cookie})
}

// members lists project id's members as cookie's session (one page of
// up to 100); the response must be 200.
func members(t testing.TB, s *platformtest.System, cookie, id string) []api.ProjectMemberView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects/" + id + "/members?limit=100", Cookie: cookie})
	if r.Status != http.StatusOK {
		t.Fatalf("members of %s: %d %s", id, r.Status, r.Body)
	}
	var page api.ProjectMemberPage
	r.Data(t, &page)
	return page.Items
}

// refused fails t unless r is status with code and, for each pair of
// details, that detail.
func refused(t testing.TB, what string, r *platformtest.Response, status int, code string, details ...string) {
	t.Helper()
	if r.Status != status || r.Code() != code {
		t.Errorf("%s: %d %s, want %d %s", what, r.Status, r.Body, status, code)
		return
	}
	for i := 0; i+1 < len(details); i += 2 {
		if got := detail(r, details[i]); got != details[i+1] {
			t.Errorf("%s: details.%s = %v, want %s (%s)", what, details[i], got, details[i+1], r.Body)
		}
	}
}

// team is a workspace whose owner signed up and onboarded, with members
// invited in the given roles.
func team(t *testing.T, s *platformtest.System, name string, roles map[string]string) (person, map[string]person) {
	t.Helper()
	owner := signIn(t, s, "owner@"+name+".example", "Owner")
	onboard(t, s, &owner, name)
	out := map[string]person{}
	for who, role := range roles {
		email := who + "@" + name + ".example"
		out[who] = join(t, s, email, who, invite(t, s, owner, email, role))
	}
	return owner, out
}

// TestProjectCollaborator: a MEMBER assigned as collaborator reads and
// updates the project from its very next request and cannot publish it;
// the change is one row, one audit record and one outbox event, and an
// Idempotency-Key replays it. Removed, the member's next request is
// refused: NOT_FOUND on a workspace project, ACCESS_DENIED on a public
// one it still reads.
func TestProjectCollaborator(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner, m := team(t, s, "collab", map[string]string{"bob": "MEMBER"})
		bob := m["bob"]
		p := createProject(t, s, owner.cookie, map[string]any{"title": "Night Drive", "type": "music_video"})
		if r := getProject(s, bob.cookie, p.ID); r.Status != http.StatusNotFound {
			t.Fatalf("bob reads before the assignment: %d %s", r.Status, r.Body)
		}

		idem := map[string]string{"Idempotency-Key": "make-bob-collaborator"}
		req := platformtest.Request{Method: http.MethodPut, Path: memberPath(p.ID, bob.userID), Cookie: owner.cookie,
			Body: map[string]string{"template": "collaborator"}, Header: idem}
		r := s.Do(req)
		if r.Status != http.StatusOK {
			t.Fatalf("assign: %d %s", r.Status, r.Body)
		}
		var v api.ProjectMemberView
		r.Data(t, &v)
		if v.ProjectID != p.ID || v.UserID != bob.userID || v.Template != "collaborator" || v.Object != "project_member" || v.ID == "" {
			t.Fatalf("assigned %+v", v)
		}
		if r := s.Do(req); r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %d %v %s", r.Status, r.Header, r.Body)
		}
		req.Body = map[string]string{"template": "creator"}
		refused(t, "the same key with another template", s.Do(req), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		if r := setMember(s, owner, p.ID, bob.userID, "collaborator"); r.Status != http.StatusOK {
			t.Errorf("setting the role bob holds: %d %s", r.Status, r.Body)
		}
		for _, c := range []struct {
			q    string
			args []any
			want int
		}{
			{`SELECT COUNT(*) FROM role_assignments WHERE project_id = ? AND user_id = ?`, []any{p.ID, bob.userID}, 1},
			{`SELECT COUNT(*) FROM role_assignments WHERE project_id = ? AND template = 'creator'`, []any{p.ID}, 0},
			{`SELECT COUNT(*) FROM audit_events WHERE target_id = ? AND action = 'project.member_changed'`, []any{p.ID}, 1},
			{`SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ? AND type = 'project.member_changed'`, []any{p.ID}, 1},
		} {
			if n := count(t, s, c.q, c.args...); n != c.want {
				t.Errorf("%s = %d, want %d", c.q, n, c.want)
			}
		}

		// Bob's very next requests: read, update (a non-publishing
		// move), never publish.
		if r := getProject(s, bob.cookie, p.ID); r.Status != http.StatusOK {
			t.Fatalf("bob reads after the assignment: %d %s", r.Status, r.Body)
		}
		refused(t, "bob opens the project", moveProject(s, bob.cookie, p.ID, project.StatusOpen), http.StatusForbidden, "ACCESS_DENIED",
			"permission", "project.publish")
		if r := moveProject(s, owner.cookie, p.ID, project.StatusOpen); r.Status != http.StatusOK {
			t.Fatalf("owner opens: %d %s", r.Status, r.Body)
		}
		if r := moveProject(s, bob.cookie, p.ID, project.StatusInProduction); r.Status != http.StatusOK {
			t.Fatalf("bob moves to IN_PRODUCTION: %d %s", r.Status, r.Body)
		}
		if ms := members(t, s, bob.cookie, p.ID); len(ms) != 1 || ms[0].UserID != bob.userID || ms[0].Template != "collaborator" {
			t.Errorf("bob lists %+v", ms)
		}
		if ids := listedProjects(t, s, bob.cookie); !slices.Contains(ids, p.ID) {
			t.Errorf("bob's project list %v lacks the project he is assigned to", ids)
		}

		// The audit log says who made whom what.
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/admin/audit?limit=100", Cookie: owner.cookie})
		var audit api.AuditPage
		r.Data(t, &audit)
		found := false
		for _, e := range audit.Items {
			if e.Action == "project.member_changed" && e.Target.ID == p.ID && e.Actor.UserID == owner.userID {
				found = string(e.Before) == "null" && jsonHas(e.After, "template", "collaborator") && jsonHas(e.After, "userId", bob.userID)
			}
		}
		if !found {
			t.Errorf("no audit record of the assignment in %+v", audit.Items)
		}

		r = removeMember(s, owner, p.ID, bob.userID)
		r.Data(t, &v)
		if r.Status != http.StatusOK || v.Template != "collaborator" || v.UserID != bob.userID {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		refused(t, "bob reads after the removal", getProject(s, bob.cookie, p.ID), http.StatusNotFound, "NOT_FOUND")
		if ids := listedProjects(t, s, bob.cookie); slices.Contains(ids, p.ID) {
			t.Errorf("bob's project list %v still holds the project after the removal", ids)
		}
		refused(t, "bob moves after the removal", moveProject(s, bob.cookie, p.ID, project.StatusReview), http.StatusNotFound, "NOT_FOUND")
		refused(t, "a second removal", removeMember(s, owner, p.ID, bob.userID), http.StatusNotFound, "NOT_FOUND", "field", "userId")
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ? AND type = 'project.member_changed'`, p.ID); n != 2 {
			t.Errorf("%d member events after the removal, want 2", n)
		}

		// On a public project, which bob reads anyway, the removal
		// takes the update away.
		pub := createProject(t, s, owner.cookie, map[string]any{"title": "Open call", "type": "single", "visibility": "public"})
		if r := setMember(s, owner, pub.ID, bob.userID, "collaborator"); r.Status != http.StatusOK {
			t.Fatalf("assign on the public project: %d %s", r.Status, r.Body)
		}
		if r := moveProject(s, owner.cookie, pub.ID, project.StatusOpen); r.Status != http.StatusOK {
			t.Fatalf("owner opens the public project: %d %s", r.Status, r.Body)
		}
		if r := removeMember(s, owner, pub.ID, bob.userID); r.Status != http.StatusOK {
			t.Fatalf("remove from the public project: %d %s", r.Status, r.Body)
		}
		refused(t, "bob moves the public project after the removal", moveProject(s, bob.cookie, pub.ID, project.StatusInProduction),
			http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "bob lists the public project's members", s.Do(platformtest.Request{Method: http.MethodGet,
			Path: "/api/v1/projects/" + pub.ID + "/members", Cookie: bob.cookie}), http.StatusForbidden, "ACCESS_DENIED", "permission", "project.read")
	})
}

// listedProjects returns the ids GET /api/v1/projects lists for the
// session cookie (the first page of 100).
func listedProjects(t *testing.T, s *platformtest.System, cookie string) []string {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects?limit=100", Cookie: cookie})
	var page api.ProjectPage
	r.Data(t, &page)
	if r.Status != http.StatusOK {
		t.Fatalf("list projects: %d %s", r.Status, r.Body)
	}
	var ids []string
	for _, p := range page.Items {
		ids = append(ids, p.ID)
	}
	return ids
}

// jsonHas reports whether the JSON object raw holds key with value want.
func jsonHas(raw json.RawMessage, key, want string) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m[key] == want
}

// TestProjectLeadReachesItsProjectOnly: a MEMBER made project lead of one
// project makes its publishing moves and assigns its members, and does
// neither on another project of the workspace.
func TestProjectLeadReachesItsProjectOnly(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner, m := team(t, s, "lead", map[string]string{"lena": "MEMBER", "carl": "MEMBER"})
		lena, carl := m["lena"], m["carl"]
		led := createProject(t, s, owner.cookie, map[string]any{"title": "Led", "type": "album"})
		public := createProject(t, s, owner.cookie, map[string]any{"title": "Public", "type": "album", "visibility": "public"})
		hidden := createProject(t, s, owner.cookie, map[string]any{"title": "Hidden", "type": "album"})
		if r := setMember(s, owner, led.ID, lena.userID, "project_lead"); r.Status != http.StatusOK {
			t.Fatalf("make lena lead: %d %s", r.Status, r.Body)
		}
		for _, to := range project.Statuses()[1:5] {
			if r := moveProject(s, lena.cookie, led.ID, to); r.Status != http.StatusOK {
				t.Fatalf("lena moves her project to %s: %d %s", to, r.Status, r.Body)
			}
		}
		refused(t, "lena opens the public project", moveProject(s, lena.cookie, public.ID, project.StatusOpen), http.StatusForbidden, "ACCESS_DENIED",
			"permission", "project.publish")
		refused(t, "lena opens the hidden project", moveProject(s, lena.cookie, hidden.ID, project.StatusOpen), http.StatusNotFound, "NOT_FOUND")

		if r := setMember(s, lena, led.ID, carl.userID, "collaborator"); r.Status != http.StatusOK {
			t.Fatalf("lena makes carl a collaborator: %d %s", r.Status, r.Body)
		}
		refused(t, "lena assigns on the public project", setMember(s, lena, public.ID, carl.userID, "collaborator"),
			http.StatusForbidden, "ACCESS_DENIED", "permission", "project.publish")
		refused(t, "lena assigns on the hidden project", setMember(s, lena, hidden.ID, carl.userID, "collaborator"),
			http.StatusNotFound, "NOT_FOUND")
		refused(t, "lena changes her own role", setMember(s, lena, led.ID, lena.userID, "creator"), http.StatusForbidden, "ACCESS_DENIED",
			"reason", "self_role_change")
		refused(t, "lena removes herself", removeMember(s, lena, led.ID, lena.userID), http.StatusForbidden, "ACCESS_DENIED",
			"reason", "self_role_change")
		refused(t, "carl assigns", setMember(s, carl, led.ID, owner.userID, "collaborator"), http.StatusForbidden, "ACCESS_DENIED",
			"permission", "project.publish")
		ms := members(t, s, carl.cookie, led.ID)
		if len(ms) != 2 {
			t.Fatalf("members of the led project: %+v", ms)
		}
		roles := map[string]string{}
		for _, mb := range ms {
			roles[mb.UserID] = mb.Template
		}
		if roles[lena.userID] != "project_lead" || roles[carl.userID] != "collaborator" {
			t.Errorf("members %+v", ms)
		}
	})
}

// TestProjectMemberEscalation: a CREATOR owning a project makes
// collaborators and creators but no project lead, and cannot replace or
// remove a lead; nobody changes their own role; only project templates
// are assignable.
func TestProjectMemberEscalation(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner, m := team(t, s, "escalate", map[string]string{"cara": "CREATOR", "dave": "MEMBER", "vera": "VIEWER"})
		cara, dave := m["cara"], m["dave"]
		p := createProject(t, s, cara.cookie, map[string]any{"title": "Cara's", "type": "single"})
		if r := setMember(s, cara, p.ID, dave.userID, "collaborator"); r.Status != http.StatusOK {
			t.Fatalf("cara makes dave a collaborator: %d %s", r.Status, r.Body)
		}
		if r := setMember(s, cara, p.ID, dave.userID, "creator"); r.Status != http.StatusOK {
			t.Fatalf("cara makes dave a creator: %d %s", r.Status, r.Body)
		}
		refused(t, "cara makes dave project lead", setMember(s, cara, p.ID, dave.userID, "project_lead"), http.StatusForbidden, "ACCESS_DENIED",
			"reason", "template_exceeds_caller", "template", "project_lead", "permission", "reward.allocate")
		if ms := members(t, s, cara.cookie, p.ID); len(ms) != 1 || ms[0].Template != "creator" {
			t.Errorf("after the refused escalation: %+v", ms)
		}
		// The workspace owner may; then cara may neither replace nor
		// remove the lead.
		if r := setMember(s, owner, p.ID, dave.userID, "project_lead"); r.Status != http.StatusOK {
			t.Fatalf("owner makes dave project lead: %d %s", r.Status, r.Body)
		}
		refused(t, "cara demotes the lead", setMember(s, cara, p.ID, dave.userID, "collaborator"), http.StatusForbidden, "ACCESS_DENIED",
			"reason", "template_exceeds_caller", "field", "userId", "template", "project_lead")
		refused(t, "cara removes the lead", removeMember(s, cara, p.ID, dave.userID), http.StatusForbidden, "ACCESS_DENIED",
			"reason", "template_exceeds_caller", "field", "userId")
		refused(t, "cara changes her own role", setMember(s, cara, p.ID, cara.userID, "collaborator"), http.StatusForbidden, "ACCESS_DENIED",
			"reason", "self_role_change")
		refused(t, "the owner changes his own role", setMember(s, owner, p.ID, owner.userID, "project_lead"), http.StatusForbidden, "ACCESS_DENIED",
			"reason", "self_role_change")
		refused(t, "a viewer assigns", setMember(s, m["vera"], p.ID, dave.userID, "collaborator"), http.StatusForbidden, "ACCESS_DENIED",
			"permission", "project.publish")
		ownerProject := createProject(t, s, owner.cookie, map[string]any{"title": "Owner's", "type": "single"})
		refused(t, "cara assigns on another's project", setMember(s, cara, ownerProject.ID, dave.userID, "collaborator"),
			http.StatusForbidden, "ACCESS_DENIED", "permission", "project.publish")
		for _, bad := range []string{"owner", "viewer", "lead", ""} {
			refused(t, "template "+bad, setMember(s, owner, p.ID, dave.userID, bad), http.StatusBadRequest, "INVALID_INPUT", "field", "template")
		}
		if ms := members(t, s, owner.cookie, p.ID); len(ms) != 1 || ms[0].Template != "project_lead" {
			t.Errorf("after the refusals: %+v", ms)
		}
	})
}

// TestProjectMembersStayInTheWorkspace: a user of another tenant, an
// unknown user and a suspended member cannot be assigned; another
// tenant's owner cannot call the routes on the project, public or not;
// an API key needs projects:write to be heard and is then refused, since
// no key holds project.publish, while a read key lists.
func TestProjectMembersStayInTheWorkspace(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		owner, m := team(t, s, "home", map[string]string{"sam": "MEMBER"})
		ws := authContext(t, s, owner.cookie).Workspace.ID
		pub := createProject(t, s, owner.cookie, map[string]any{"title": "Public", "type": "single", "visibility": "public"})
		other := signIn(t, s, "other@away.example", "Other")
		onboard(t, s, &other, "Away")

		refused(t, "assign another tenant's user", setMember(s, owner, pub.ID, other.userID, "collaborator"), http.StatusNotFound, "NOT_FOUND",
			"field", "userId")
		refused(t, "assign an unknown user", setMember(s, owner, pub.ID, "usr_01jd0000000000000000000009", "collaborator"), http.StatusNotFound,
			"NOT_FOUND", "field", "userId")
		refused(t, "another tenant lists", s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects/" + pub.ID + "/members",
			Cookie: other.cookie}), http.StatusNotFound, "NOT_FOUND")
		refused(t, "another tenant assigns", setMember(s, other, pub.ID, m["sam"].userID, "collaborator"), http.StatusNotFound, "NOT_FOUND")
		refused(t, "another tenant assigns itself", setMember(s, other, pub.ID, other.userID, "collaborator"), http.StatusNotFound, "NOT_FOUND")
		refused(t, "another tenant removes", removeMember(s, other, pub.ID, m["sam"].userID), http.StatusNotFound, "NOT_FOUND")

		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.MembershipStatusSet(ctx, ws, m["sam"].userID, access.MembershipSuspended)
		}); err != nil {
			t.Fatal(err)
		}
		refused(t, "assign a suspended member", setMember(s, owner, pub.ID, m["sam"].userID, "collaborator"), http.StatusNotFound, "NOT_FOUND",
			"field", "userId")
		if n := count(t, s, `SELECT COUNT(*) FROM role_assignments WHERE project_id = ?`, pub.ID); n != 0 {
			t.Errorf("%d assignments after the refusals", n)
		}

		// Keys of the owner's live workspace (the session acts live).
		keyWith := func(scopes ...string) string {
			r, k := createKey(t, s, owner.token, map[string]any{"name": fmt.Sprint(scopes), "scopes": scopes}, "")
			if r.Status != http.StatusCreated {
				t.Fatalf("key %v: %d %s", scopes, r.Status, r.Body)
			}
			return k.Secret
		}
		carl := join(t, s, "carl@home.example", "carl", invite(t, s, owner, "carl@home.example", "MEMBER"))
		readKey, writeKey := keyWith("read"), keyWith("read", "projects:write")
		put := func(key string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPut, Path: memberPath(pub.ID, carl.userID), Key: key,
				Body: map[string]string{"template": "collaborator"}})
		}
		refused(t, "a key without projects:write", put(readKey), http.StatusForbidden, "ACCESS_DENIED", "scope", "projects:write")
		refused(t, "a key with projects:write", put(writeKey), http.StatusForbidden, "ACCESS_DENIED", "permission", "project.publish")
		refused(t, "a key without projects:write removes", s.Do(platformtest.Request{Method: http.MethodDelete, Path: memberPath(pub.ID, carl.userID),
			Key: readKey}), http.StatusForbidden, "ACCESS_DENIED", "scope", "projects:write")
		if r := setMember(s, owner, pub.ID, carl.userID, "collaborator"); r.Status != http.StatusOK {
			t.Fatalf("owner assigns carl: %d %s", r.Status, r.Body)
		}
		r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects/" + pub.ID + "/members", Key: readKey})
		var page api.ProjectMemberPage
		r.Data(t, &page)
		if r.Status != http.StatusOK || len(page.Items) != 1 || page.Items[0].UserID != carl.userID {
			t.Errorf("a read key lists: %d %s", r.Status, r.Body)
		}
	})
}

// TestProjectMemberConcurrentSets: concurrent PUTs of different templates
// for one member all succeed and leave one assignment.
func TestProjectMemberConcurrentSets(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner, m := team(t, s, "race", map[string]string{"rita": "MEMBER"})
		p := createProject(t, s, owner.cookie, map[string]any{"title": "Raced", "type": "single"})
		templates := []string{"project_lead", "creator", "collaborator"}
		var wg sync.WaitGroup
		statuses := make([]int, 9)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = setMember(s, owner, p.ID, m["rita"].userID, templates[i%3]).Status
			}()
		}
		wg.Wait()
		for i, st := range statuses {
			if st != http.StatusOK {
				t.Errorf("PUT %d (%s): %d", i, templates[i%3], st)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM role_assignments WHERE project_id = ? AND user_id = ?`, p.ID, m["rita"].userID); n != 1 {
			t.Errorf("%d assignments after concurrent sets, want 1", n)
		}
		if ms := members(t, s, owner.cookie, p.ID); len(ms) != 1 {
			t.Errorf("members after concurrent sets: %+v", ms)
		}
	})
}

// TestProjectMemberReachesEveryHost: an assignment and its removal made
// through one host apply on the other host's very next request (on
// PostgreSQL a host with its own store and caches), each host having
// served the member from its credential cache before.
func TestProjectMemberReachesEveryHost(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		h2 := s.AnotherHost()
		hosts := []cacheHost{{"host 1", s.Server.URL, s.DB}, {"host 2", h2.URL, h2.DB}}
		owner, m := team(t, s, "hosts", map[string]string{"hugo": "MEMBER"})
		hugo := m["hugo"]
		p := createProject(t, s, owner.cookie, map[string]any{"title": "Shared", "type": "single"})
		read := func() platformtest.Request {
			return platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects/" + p.ID, Cookie: hugo.cookie}
		}
		acrossHosts(t, s, hosts, read, answered(http.StatusNotFound, "NOT_FOUND"),
			func() {
				if r := setMember(s, owner, p.ID, hugo.userID, "collaborator"); r.Status != http.StatusOK {
					t.Fatalf("assign: %d %s", r.Status, r.Body)
				}
			}, answered(http.StatusOK, ""))
		acrossHosts(t, s, hosts, read, answered(http.StatusOK, ""),
			func() {
				if r := removeMember(s, owner, p.ID, hugo.userID); r.Status != http.StatusOK {
					t.Fatalf("remove: %d %s", r.Status, r.Body)
				}
			}, answered(http.StatusNotFound, "NOT_FOUND"))
	})
}
