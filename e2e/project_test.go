package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport/api"
)

// createProject creates a project as cookie's user and returns it; the
// response must be 201.
func createProject(t testing.TB, s *platformtest.System, cookie string, body map[string]any) api.ProjectView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: cookie, Body: body})
	if r.Status != http.StatusCreated {
		t.Fatalf("create project: %d %s", r.Status, r.Body)
	}
	var v api.ProjectView
	r.Data(t, &v)
	return v
}

func moveProject(s *platformtest.System, cookie, id string, to project.Status) *platformtest.Response {
	return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects/" + id + "/status", Cookie: cookie,
		Body: map[string]string{"status": string(to)}})
}

// TestProjectLifecycle: a creator creates a project (owner from the
// session, not the body), reads and lists it, and moves it along the
// whole table, each move with its outbox event, audit record and version;
// an Idempotency-Key replays the same project.
func TestProjectLifecycle(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "lead@example.com", "Lead")
		onboard(t, s, &owner, "Lead Studio")

		body := map[string]any{"title": "  Night Drive video  ", "type": "music_video", "description": "A video.",
			"visibility": "public", "ownerUserId": "usr_someone_else"}
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: owner.cookie, Body: body})
		if r.Status != http.StatusBadRequest {
			t.Fatalf("an unknown body field: %d %s", r.Status, r.Body)
		}
		delete(body, "ownerUserId")
		idem := map[string]string{"Idempotency-Key": "create-night-drive"}
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: owner.cookie, Body: body, Header: idem})
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var p api.ProjectView
		r.Data(t, &p)
		if p.OwnerUserID != owner.userID || p.Title != "Night Drive video" || p.Status != "DRAFT" || p.Version != 1 || p.Visibility != "public" {
			t.Fatalf("created %+v, owner %s", p, owner.userID)
		}
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: owner.cookie, Body: body, Header: idem})
		var again api.ProjectView
		r.Data(t, &again)
		if again.ID != p.ID {
			t.Fatalf("the same Idempotency-Key made a second project %s (first %s)", again.ID, p.ID)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE owner_user_id = ?`, owner.userID); n != 1 {
			t.Fatalf("%d projects stored, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'project.created' AND aggregate_id = ?`, p.ID); n != 1 {
			t.Fatalf("%d project.created events, want 1", n)
		}

		for _, bad := range []map[string]any{{"title": " ", "type": "single"}, {"title": "x", "type": "podcast"},
			{"title": "x", "type": "single", "visibility": "tenant"}, {"title": string(make([]byte, 201)), "type": "single"}} {
			r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: owner.cookie, Body: bad})
			if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
				t.Errorf("create %v: %d %s", bad, r.Status, r.Body)
			}
		}

		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + p.ID, Cookie: owner.cookie})
		var got api.ProjectView
		r.Data(t, &got)
		if got.ID != p.ID || got.Title != p.Title {
			t.Fatalf("get: %+v", got)
		}

		for i, to := range project.Statuses()[1:] {
			r := moveProject(s, owner.cookie, p.ID, to)
			if r.Status != http.StatusOK {
				t.Fatalf("move to %s: %d %s", to, r.Status, r.Body)
			}
			var moved api.ProjectView
			r.Data(t, &moved)
			if moved.Status != string(to) || moved.Version != int64(i+2) {
				t.Fatalf("moved to %+v, want %s version %d", moved, to, i+2)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'project.status_changed' AND aggregate_id = ?`, p.ID); n != 5 {
			t.Fatalf("%d project.status_changed events, want 5", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE target_id = ? AND action = 'project.status_changed'`, p.ID); n != 5 {
			t.Fatalf("%d audit records of status moves, want 5", n)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects?status=ARCHIVED", Cookie: owner.cookie})
		var page api.ProjectPage
		r.Data(t, &page)
		if len(page.Items) != 1 || page.Items[0].ID != p.ID || page.HasMore || page.NextCursor != nil {
			t.Fatalf("list: %+v", page)
		}
	})
}

// TestProjectIllegalJumps: every move the table does not have is
// INVALID_STATE_TRANSITION, even for the owner, and changes nothing.
func TestProjectIllegalJumps(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "lead@example.com", "Lead")
		onboard(t, s, &owner, "Lead Studio")
		all := project.Statuses()
		for i, from := range all {
			p := createProject(t, s, owner.cookie, map[string]any{"title": "From " + string(from), "type": "single"})
			for _, to := range all[1 : i+1] {
				if r := moveProject(s, owner.cookie, p.ID, to); r.Status != http.StatusOK {
					t.Fatalf("walk to %s: %d %s", to, r.Status, r.Body)
				}
			}
			for j, to := range all {
				if j == i+1 {
					continue
				}
				r := moveProject(s, owner.cookie, p.ID, to)
				if r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" {
					t.Errorf("%s -> %s: %d %s", from, to, r.Status, r.Body)
				}
			}
			if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE id = ? AND status = ? AND version = ?`, p.ID, string(from), i+1); n != 1 {
				t.Errorf("project in %s changed on a refused move", from)
			}
		}
		r := moveProject(s, owner.cookie, "prj_01jd0000000000000000000000", project.StatusOpen)
		if r.Status != http.StatusNotFound {
			t.Errorf("move of a missing project: %d %s", r.Status, r.Body)
		}
		r = moveProject(s, owner.cookie, createProject(t, s, owner.cookie, map[string]any{"title": "x", "type": "single"}).ID, "LAUNCHED")
		if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
			t.Errorf("unknown status: %d %s", r.Status, r.Body)
		}
	})
}

// TestProjectMoveRoles: which workspace roles may move each edge of the
// table, on their own project and on another's.
func TestProjectMoveRoles(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "owner@studio.example", "Owner")
		onboard(t, s, &owner, "Studio")
		members := map[string]person{"OWNER": owner}
		for _, role := range []string{"ADMIN", "CREATOR", "MODERATOR", "MEMBER", "VIEWER"} {
			email := "role-" + role + "@studio.example"
			members[role] = join(t, s, email, role, invite(t, s, owner, email, role))
		}
		all := project.Statuses()
		// walk returns a public project of by's in status all[i]: public,
		// so that every member reads it and a refusal is ACCESS_DENIED.
		walk := func(by person, i int) string {
			p := createProject(t, s, by.cookie, map[string]any{"title": "Walked", "type": "album", "visibility": "public"})
			for _, to := range all[1 : i+1] {
				if r := moveProject(s, owner.cookie, p.ID, to); r.Status != http.StatusOK {
					t.Fatalf("owner walks to %s: %d %s", to, r.Status, r.Body)
				}
			}
			return p.ID
		}
		// may says whether role may move another member's project to
		// status to; own whether on its own project.
		may := func(role string, to project.Status, own bool) bool {
			switch role {
			case "OWNER", "ADMIN":
				return true
			case "CREATOR":
				return own
			case "MODERATOR":
				return to != project.StatusOpen
			case "MEMBER":
				return own && to != project.StatusOpen
			}
			return false
		}
		for _, role := range []string{"OWNER", "ADMIN", "CREATOR", "MODERATOR", "MEMBER", "VIEWER"} {
			m := members[role]
			ownProjects := role != "VIEWER"
			if !ownProjects {
				r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: m.cookie,
					Body: map[string]any{"title": "Mine", "type": "single"}})
				if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" {
					t.Errorf("VIEWER creates: %d %s", r.Status, r.Body)
				}
			}
			for i := 0; i+1 < len(all); i++ {
				to := all[i+1]
				for _, own := range []bool{false, true} {
					if own && !ownProjects {
						continue
					}
					by := owner
					if own {
						by = m
					}
					id := walk(by, i)
					r := moveProject(s, m.cookie, id, to)
					want := may(role, to, own || role == "OWNER")
					if want && r.Status != http.StatusOK {
						t.Errorf("%s (own %v) %s -> %s: %d %s, want 200", role, own, all[i], to, r.Status, r.Body)
					}
					if !want && (r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED") {
						t.Errorf("%s (own %v) %s -> %s: %d %s, want 403 ACCESS_DENIED", role, own, all[i], to, r.Status, r.Body)
					}
				}
			}
		}
		// A MEMBER's read grant reaches only its own projects: another's
		// workspace project is not there for it at all.
		hidden := createProject(t, s, owner.cookie, map[string]any{"title": "Hidden", "type": "album"})
		if r := moveProject(s, members["MEMBER"].cookie, hidden.ID, project.StatusOpen); r.Status != http.StatusNotFound {
			t.Errorf("MEMBER moves another's workspace project: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + hidden.ID, Cookie: members["MEMBER"].cookie}); r.Status != http.StatusNotFound {
			t.Errorf("MEMBER reads another's workspace project: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + hidden.ID, Cookie: members["VIEWER"].cookie}); r.Status != http.StatusOK {
			t.Errorf("VIEWER reads a workspace project: %d %s", r.Status, r.Body)
		}
	})
}

// TestProjectVisibility: another tenant reads only public projects and
// moves none; the other environment sees nothing.
func TestProjectVisibility(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "lead@example.com", "Lead")
		onboard(t, s, &owner, "Lead Studio")
		pub := createProject(t, s, owner.cookie, map[string]any{"title": "Open call", "type": "music_video", "visibility": "public"})
		priv := createProject(t, s, owner.cookie, map[string]any{"title": "Secret", "type": "album"})

		other := signIn(t, s, "other@elsewhere.example", "Other")
		onboard(t, s, &other, "Elsewhere")
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + pub.ID, Cookie: other.cookie})
		if r.Status != http.StatusOK {
			t.Fatalf("another tenant reads a public project: %d %s", r.Status, r.Body)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + priv.ID, Cookie: other.cookie})
		if r.Status != http.StatusNotFound {
			t.Errorf("another tenant reads a workspace project: %d %s", r.Status, r.Body)
		}
		for _, id := range []string{pub.ID, priv.ID} {
			if r := moveProject(s, other.cookie, id, project.StatusOpen); r.Status != http.StatusNotFound {
				t.Errorf("another tenant moves %s: %d %s", id, r.Status, r.Body)
			}
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects", Cookie: other.cookie})
		var page api.ProjectPage
		r.Data(t, &page)
		if len(page.Items) != 0 {
			t.Errorf("another tenant lists %d projects", len(page.Items))
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + pub.ID}); r.Status != http.StatusUnauthorized {
			t.Errorf("an anonymous read: %d %s", r.Status, r.Body)
		}

		test := map[string]string{"Platform-Environment": "test"}
		for _, c := range []string{owner.cookie, other.cookie} {
			r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + pub.ID, Cookie: c, Header: test})
			if r.Status != http.StatusNotFound {
				t.Errorf("the test environment reads a live project: %d %s", r.Status, r.Body)
			}
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects", Cookie: owner.cookie, Header: test})
		page = api.ProjectPage{}
		r.Data(t, &page)
		if len(page.Items) != 0 {
			t.Errorf("the test environment lists %d live projects", len(page.Items))
		}
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects/" + priv.ID + "/status", Cookie: owner.cookie, Header: test,
			Body: map[string]string{"status": "OPEN"}})
		if r.Status != http.StatusNotFound {
			t.Errorf("the test environment moves a live project: %d %s", r.Status, r.Body)
		}

		// An API key (test environment) creates a project owned by its
		// creator and cannot open it (no key scope stands for
		// project.publish). Its public project is read in test mode only.
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Key: s.Boot.TestKey,
			Body: map[string]any{"title": "By key", "type": "remix", "visibility": "public"}})
		if r.Status != http.StatusCreated {
			t.Fatalf("a key creates: %d %s", r.Status, r.Body)
		}
		var byKey api.ProjectView
		r.Data(t, &byKey)
		if byKey.OwnerUserID != s.Boot.OwnerID || byKey.Environment != "test" {
			t.Errorf("a key's project: %+v, want owner %s in test", byKey, s.Boot.OwnerID)
		}
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects/" + byKey.ID + "/status", Key: s.Boot.TestKey,
			Body: map[string]string{"status": "OPEN"}})
		if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" {
			t.Errorf("a key opens a project: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + byKey.ID, Cookie: other.cookie, Header: test}); r.Status != http.StatusOK {
			t.Errorf("another tenant in test mode reads a public test project: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + byKey.ID, Cookie: other.cookie}); r.Status != http.StatusNotFound {
			t.Errorf("live mode reads a test project: %d %s", r.Status, r.Body)
		}
	})
}

// TestProjectPagination: 250 projects, filtered by type, read in bounded
// pages with no duplicate and no gap; a cursor is refused under another
// tenant and under other filters, and a forged one is INVALID_INPUT.
func TestProjectPagination(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "lead@example.com", "Lead")
		onboard(t, s, &owner, "Lead Studio")
		want := map[string]bool{}
		for i := range 250 {
			typ := "single"
			if i%3 == 0 {
				typ = "remix"
			}
			p := createProject(t, s, owner.cookie, map[string]any{"title": fmt.Sprintf("Project %d", i), "type": typ})
			if typ == "remix" {
				want[p.ID] = true
			}
		}
		seen := map[string]bool{}
		var first *string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatal("pagination does not end")
			}
			q := url.Values{"type": {"remix"}, "limit": {"7"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects?" + q.Encode(), Cookie: owner.cookie})
			if r.Status != http.StatusOK {
				t.Fatalf("page %d: %d %s", pages, r.Status, r.Body)
			}
			var page api.ProjectPage
			r.Data(t, &page)
			if len(page.Items) > 7 {
				t.Fatalf("page of %d items over limit 7", len(page.Items))
			}
			for _, p := range page.Items {
				if seen[p.ID] || p.Type != "remix" {
					t.Fatalf("duplicate or unfiltered %s (%s)", p.ID, p.Type)
				}
				seen[p.ID] = true
			}
			if pages == 0 {
				first = page.NextCursor
			}
			if !page.HasMore {
				break
			}
			cursor = *page.NextCursor
		}
		if len(seen) != len(want) {
			t.Fatalf("read %d remixes, want %d", len(seen), len(want))
		}
		for id := range want {
			if !seen[id] {
				t.Fatalf("gap: %s never listed", id)
			}
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects?limit=101", Cookie: owner.cookie})
		if r.Status != http.StatusBadRequest {
			t.Errorf("limit 101: %d %s", r.Status, r.Body)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects", Cookie: owner.cookie})
		var page api.ProjectPage
		r.Data(t, &page)
		if len(page.Items) != 20 || !page.HasMore {
			t.Errorf("default page: %d items, hasMore %v", len(page.Items), page.HasMore)
		}

		other := signIn(t, s, "other@elsewhere.example", "Other")
		onboard(t, s, &other, "Elsewhere")
		createProject(t, s, other.cookie, map[string]any{"title": "Theirs", "type": "remix"})
		for name, req := range map[string]platformtest.Request{
			"another tenant": {Cookie: other.cookie, Path: "/api/v1/projects?type=remix&cursor=" + url.QueryEscape(*first)},
			"other filters":  {Cookie: owner.cookie, Path: "/api/v1/projects?type=single&cursor=" + url.QueryEscape(*first)},
			"forged":         {Cookie: owner.cookie, Path: "/api/v1/projects?cursor=cHJqOnByal8wMQ"},
		} {
			req.Method = "GET"
			r := s.Do(req)
			if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
				t.Errorf("%s cursor: %d %s", name, r.Status, r.Body)
			}
		}
	})
}
