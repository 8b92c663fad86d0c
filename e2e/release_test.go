package e2e_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/transport/api"
)

// releaseDay is a release date the fake clock's today allows.
func releaseDay(s *platformtest.System, days int) string {
	return s.Clock.Now().UTC().AddDate(0, 0, days).Format(release.DateLayout)
}

// releaseAsset uploads a short WAV as p's test-mode session and returns
// its id.
func releaseAsset(t *testing.T, s *platformtest.System, p person) string {
	t.Helper()
	return uploadAs(t, s, p, pcmWAV(8000, 800, func(int) float64 { return 0.25 }))
}

// releaseBody is a valid release of target.
func releaseBody(s *platformtest.System, typ, id string) map[string]any {
	return map[string]any{"target": map[string]string{"type": typ, "id": id}, "title": "Night Drive",
		"releaseDate": releaseDay(s, 30), "territories": []string{"US", "DE", "FR"}, "distributor": "Example Distribution"}
}

// createRelease creates a release as p in test mode and returns it; the
// response must be 201.
func createRelease(t *testing.T, s *platformtest.System, p person, idem string, body map[string]any) api.ReleaseView {
	t.Helper()
	r := asTest(s, p, http.MethodPost, "/api/v1/releases", idem, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create release as %s: %d %s", p.email, r.Status, r.Body)
	}
	var v api.ReleaseView
	r.Data(t, &v)
	return v
}

func moveRelease(s *platformtest.System, p person, id string, to release.Status) *platformtest.Response {
	return asTest(s, p, http.MethodPost, "/api/v1/releases/"+id+"/status", "", map[string]string{"status": string(to)})
}

// TestReleaseLifecycle: a release of an asset and one of a project are
// created (Idempotency-Key required, replayed), validated field by field,
// walked along the table with an outbox event and audit record per move;
// the list serves the very table the status route enforces, and every
// jump the table forbids is refused and changes nothing.
func TestReleaseLifecycle(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner, _ := team(t, s, "label", nil)
		ast := releaseAsset(t, s, owner)
		r := asTest(s, owner, http.MethodPost, "/api/v1/projects", "", map[string]any{"title": "Album", "type": "album"})
		var prj api.ProjectView
		r.Data(t, &prj)

		body := releaseBody(s, "asset", ast)
		refused(t, "no Idempotency-Key", asTest(s, owner, http.MethodPost, "/api/v1/releases", "", body), http.StatusBadRequest,
			"IDEMPOTENCY_KEY_REQUIRED")
		rel := createRelease(t, s, owner, "rel-1", body)
		if rel.Status != "DRAFT" || rel.Version != 1 || rel.Target.ID != ast || rel.ProjectID != nil ||
			!slices.Equal(rel.Territories, []string{"DE", "FR", "US"}) || rel.CreatedByUserID != owner.userID || rel.Environment != "test" {
			t.Fatalf("created %+v", rel)
		}
		if again := createRelease(t, s, owner, "rel-1", body); again.ID != rel.ID {
			t.Fatalf("the same Idempotency-Key made a second release %s (first %s)", again.ID, rel.ID)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM releases`); n != 1 {
			t.Fatalf("%d releases stored, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'release.created' AND aggregate_id = ?`, rel.ID); n != 1 {
			t.Fatalf("%d release.created events, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE target_id = ? AND action = 'release.created'`, rel.ID); n != 1 {
			t.Fatalf("%d audit records of the creation, want 1", n)
		}
		ofProject := createRelease(t, s, owner, "rel-2", releaseBody(s, "project", prj.ID))
		if ofProject.ProjectID == nil || *ofProject.ProjectID != prj.ID {
			t.Fatalf("a project's release: %+v", ofProject)
		}

		n := 0
		bad := func(field string, change func(b map[string]any)) {
			b := releaseBody(s, "asset", ast)
			change(b)
			n++
			r := asTest(s, owner, http.MethodPost, "/api/v1/releases", fmt.Sprintf("bad-%d", n), b)
			refused(t, "bad "+field, r, http.StatusBadRequest, "INVALID_INPUT", "field", field)
		}
		bad("target.type", func(b map[string]any) { b["target"] = map[string]string{"type": "video", "id": ast} })
		bad("title", func(b map[string]any) { b["title"] = "  " })
		bad("title", func(b map[string]any) { b["title"] = "Two\nlines" })
		bad("releaseDate", func(b map[string]any) { b["releaseDate"] = "2026-13-01" })
		bad("releaseDate", func(b map[string]any) { b["releaseDate"] = releaseDay(s, -1) })
		bad("releaseDate", func(b map[string]any) { b["releaseDate"] = releaseDay(s, release.MaxLeadDays+1) })
		bad("territories", func(b map[string]any) { b["territories"] = []string{} })
		bad("territories[1]", func(b map[string]any) { b["territories"] = []string{"US", "XX"} })
		bad("territories[1]", func(b map[string]any) { b["territories"] = []string{"US", "us"} })
		bad("territories[1]", func(b map[string]any) { b["territories"] = []string{"US", "US"} })
		bad("territories[0]", func(b map[string]any) { b["territories"] = []string{"WW", "US"} })
		bad("distributor", func(b map[string]any) { b["distributor"] = "" })
		r = asTest(s, owner, http.MethodPost, "/api/v1/releases", "missing-target", releaseBody(s, "asset", "ast_01jd0000000000000000000000"))
		refused(t, "a missing asset", r, http.StatusNotFound, "NOT_FOUND", "field", "target.id")
		if n := count(t, s, `SELECT COUNT(*) FROM releases`); n != 2 {
			t.Fatalf("refused creations stored releases: %d, want 2", n)
		}
		ww := releaseBody(s, "asset", ast)
		ww["territories"] = []string{"WW"}
		if v := createRelease(t, s, owner, "rel-ww", ww); !slices.Equal(v.Territories, []string{"WW"}) {
			t.Fatalf("worldwide: %+v", v.Territories)
		}

		// The walk: each move its version, event and audit record.
		walk := []release.Status{release.StatusScheduled, release.StatusDraft, release.StatusScheduled, release.StatusSubmitted,
			release.StatusLive, release.StatusTakenDown}
		for i, to := range walk {
			r := moveRelease(s, owner, rel.ID, to)
			var v api.ReleaseView
			r.Data(t, &v)
			if r.Status != http.StatusOK || v.Status != string(to) || v.Version != int64(i+2) {
				t.Fatalf("move to %s: %d %s", to, r.Status, r.Body)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'release.status_changed' AND aggregate_id = ?`, rel.ID); n != len(walk) {
			t.Fatalf("%d release.status_changed events, want %d", n, len(walk))
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE target_id = ? AND action = 'release.status_changed'`, rel.ID); n != len(walk) {
			t.Fatalf("%d audit records of moves, want %d", n, len(walk))
		}
		// The rejected branch.
		for _, to := range []release.Status{release.StatusScheduled, release.StatusSubmitted, release.StatusRejected, release.StatusDraft} {
			if r := moveRelease(s, owner, ofProject.ID, to); r.Status != http.StatusOK {
				t.Fatalf("project release to %s: %d %s", to, r.Status, r.Body)
			}
		}

		// The map served is the table.
		r = asTest(s, owner, http.MethodGet, "/api/v1/releases", "", nil)
		var page api.ReleasePage
		r.Data(t, &page)
		var want []api.ReleaseMoveView
		for _, m := range release.Moves() {
			want = append(want, api.ReleaseMoveView{From: string(m.From), Event: string(m.Event), To: string(m.To),
				Permission: string(release.MovePermission(m.To))})
		}
		if diff := cmp.Diff(want, page.Transitions); diff != "" {
			t.Errorf("served transitions differ from the table (-table +served):\n%s", diff)
		}
		if len(page.Items) != 3 || !slices.ContainsFunc(page.Items, func(v api.ReleaseView) bool { return v.ID == rel.ID }) {
			t.Fatalf("list: %+v", page.Items)
		}
		for _, it := range page.Items {
			var next []api.ReleaseMoveView
			for _, m := range want {
				if m.From == it.Status {
					next = append(next, m)
				}
			}
			if diff := cmp.Diff(next, it.NextMoves, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s in %s: nextMoves differ from the table:\n%s", it.ID, it.Status, diff)
			}
		}
		r = asTest(s, owner, http.MethodGet, "/api/v1/releases?status=TAKEN_DOWN", "", nil)
		page = api.ReleasePage{}
		r.Data(t, &page)
		if len(page.Items) != 1 || page.Items[0].ID != rel.ID {
			t.Fatalf("status filter: %+v", page.Items)
		}
		refused(t, "an unknown status filter", asTest(s, owner, http.MethodGet, "/api/v1/releases?status=GONE", "", nil),
			http.StatusBadRequest, "INVALID_INPUT")

		// Every jump the table forbids, from every status a release can
		// be walked to, is refused and changes nothing.
		paths := map[release.Status][]release.Status{
			release.StatusDraft:     nil,
			release.StatusScheduled: {release.StatusScheduled},
			release.StatusSubmitted: {release.StatusScheduled, release.StatusSubmitted},
			release.StatusLive:      {release.StatusScheduled, release.StatusSubmitted, release.StatusLive},
			release.StatusRejected:  {release.StatusScheduled, release.StatusSubmitted, release.StatusRejected},
			release.StatusTakenDown: {release.StatusScheduled, release.StatusSubmitted, release.StatusLive, release.StatusTakenDown},
		}
		allowed := map[[2]string]bool{}
		for _, m := range want {
			allowed[[2]string{m.From, m.To}] = true
		}
		for i, from := range release.Statuses() {
			v := createRelease(t, s, owner, "jump-"+string(from), releaseBody(s, "asset", ast))
			for _, to := range paths[from] {
				if r := moveRelease(s, owner, v.ID, to); r.Status != http.StatusOK {
					t.Fatalf("walk to %s: %d %s", to, r.Status, r.Body)
				}
			}
			version := len(paths[from]) + 1
			for _, to := range release.Statuses() {
				if allowed[[2]string{string(from), string(to)}] {
					continue
				}
				refused(t, string(from)+" -> "+string(to), moveRelease(s, owner, v.ID, to), http.StatusConflict, "INVALID_STATE_TRANSITION",
					"from", string(from))
			}
			if n := count(t, s, `SELECT COUNT(*) FROM releases WHERE id = ? AND status = ? AND version = ?`, v.ID, string(from), version); n != 1 {
				t.Errorf("release %d in %s changed on a refused move", i, from)
			}
		}
		refused(t, "an unknown status", moveRelease(s, owner, rel.ID, "LAUNCHED"), http.StatusBadRequest, "INVALID_INPUT")
		refused(t, "a missing release", moveRelease(s, owner, "rel_01jd0000000000000000000000", release.StatusScheduled),
			http.StatusNotFound, "NOT_FOUND")
	})
}

// TestReleaseAuthorization: for every release route, the principals that
// may not act (a narrower member, a narrower key, another workspace,
// another tenant, the other environment) get the code the route documents,
// and nothing changes; the permitted ones succeed.
func TestReleaseAuthorization(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner, m := team(t, s, "rights", map[string]string{"viewer": "VIEWER", "creator": "CREATOR", "member": "MEMBER"})
		owner.userID = authContext(t, s, owner.cookie).User.ID
		outsider, _ := team(t, s, "elsewhere", nil)
		ownerAsset := releaseAsset(t, s, owner)
		rel := createRelease(t, s, owner, "owner-1", releaseBody(s, "asset", ownerAsset))
		relPath := "/api/v1/releases/" + rel.ID + "/status"
		schedule := map[string]string{"status": "SCHEDULED"}
		readKey, _ := createKeyAs(t, s, owner, map[string]any{"name": "read only", "scopes": []string{"read"}})
		writeKey, _ := createKeyAs(t, s, owner, map[string]any{"name": "writer", "scopes": []string{"read", "projects:write"}})
		withKey := func(key, method, path, idem string, body any) *platformtest.Response {
			h := map[string]string{}
			if idem != "" {
				h["Idempotency-Key"] = idem
			}
			return s.Do(platformtest.Request{Method: method, Path: path, Key: key, Body: body, Header: h})
		}
		live := func(p person, method, path, idem string, body any) *platformtest.Response {
			h := map[string]string{"Platform-Environment": "live"}
			if idem != "" {
				h["Idempotency-Key"] = idem
			}
			return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body, Header: h})
		}
		ws := authContext(t, s, owner.cookie).Workspace.ID
		intoWorkspace := func(p person, method, path, idem string, body any) *platformtest.Response {
			h := map[string]string{"Platform-Environment": "test", "X-Workspace-Id": ws}
			if idem != "" {
				h["Idempotency-Key"] = idem
			}
			return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body, Header: h})
		}
		before := func() [3]int {
			return [3]int{count(t, s, `SELECT COUNT(*) FROM releases`), count(t, s, `SELECT COUNT(*) FROM releases WHERE status <> 'DRAFT'`),
				count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type LIKE 'release.%'`)}
		}
		start := before()
		create := releaseBody(s, "asset", ownerAsset)

		// Create: project.update reaching the target.
		refused(t, "viewer creates", asTest(s, m["viewer"], http.MethodPost, "/api/v1/releases", "v1", create), http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "creator releases the owner's asset", asTest(s, m["creator"], http.MethodPost, "/api/v1/releases", "c1", create),
			http.StatusForbidden, "ACCESS_DENIED", "permission", "project.update")
		refused(t, "member releases the owner's asset", asTest(s, m["member"], http.MethodPost, "/api/v1/releases", "m1", create),
			http.StatusForbidden, "ACCESS_DENIED", "permission", "project.update")
		refused(t, "a read key creates", withKey(readKey, http.MethodPost, "/api/v1/releases", "k1", create), http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "another tenant releases the asset", asTest(s, outsider, http.MethodPost, "/api/v1/releases", "o1", create),
			http.StatusNotFound, "NOT_FOUND", "field", "target.id")
		refused(t, "another tenant into this workspace creates", intoWorkspace(outsider, http.MethodPost, "/api/v1/releases", "o2", create),
			http.StatusForbidden, "WORKSPACE_ACCESS_DENIED")
		refused(t, "the other environment releases a test asset", live(owner, http.MethodPost, "/api/v1/releases", "l1", create),
			http.StatusNotFound, "NOT_FOUND", "field", "target.id")

		// Move: the route's project.update reaching the release, the
		// table, then the move's own permission.
		refused(t, "viewer moves", asTest(s, m["viewer"], http.MethodPost, relPath, "", schedule), http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "creator moves the owner's release", asTest(s, m["creator"], http.MethodPost, relPath, "", schedule),
			http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "a read key moves", withKey(readKey, http.MethodPost, relPath, "", schedule), http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "a projects:write key schedules", withKey(writeKey, http.MethodPost, relPath, "", schedule), http.StatusForbidden,
			"ACCESS_DENIED", "permission", "project.publish")
		refused(t, "another tenant moves", asTest(s, outsider, http.MethodPost, relPath, "", schedule), http.StatusNotFound, "NOT_FOUND")
		refused(t, "another tenant into this workspace moves", intoWorkspace(outsider, http.MethodPost, relPath, "", schedule),
			http.StatusForbidden, "WORKSPACE_ACCESS_DENIED")
		refused(t, "the other environment moves", live(owner, http.MethodPost, relPath, "", schedule), http.StatusNotFound, "NOT_FOUND")
		if got := before(); got != start {
			t.Fatalf("refused calls changed releases or events: %v, want %v", got, start)
		}

		// List: project.read; a narrower grant sees its own.
		list := func(r *platformtest.Response) []string {
			t.Helper()
			if r.Status != http.StatusOK {
				t.Fatalf("list: %d %s", r.Status, r.Body)
			}
			var page api.ReleasePage
			r.Data(t, &page)
			var ids []string
			for _, it := range page.Items {
				ids = append(ids, it.ID)
			}
			return ids
		}
		if ids := list(asTest(s, m["viewer"], http.MethodGet, "/api/v1/releases", "", nil)); !slices.Equal(ids, []string{rel.ID}) {
			t.Errorf("viewer lists %v", ids)
		}
		if ids := list(withKey(readKey, http.MethodGet, "/api/v1/releases", "", nil)); !slices.Equal(ids, []string{rel.ID}) {
			t.Errorf("a read key lists %v", ids)
		}
		if ids := list(asTest(s, m["member"], http.MethodGet, "/api/v1/releases", "", nil)); len(ids) != 0 {
			t.Errorf("a member lists another's releases: %v", ids)
		}
		if ids := list(asTest(s, outsider, http.MethodGet, "/api/v1/releases", "", nil)); len(ids) != 0 {
			t.Errorf("another tenant lists %v", ids)
		}
		if ids := list(live(owner, http.MethodGet, "/api/v1/releases", "", nil)); len(ids) != 0 {
			t.Errorf("the other environment lists %v", ids)
		}
		refused(t, "another tenant into this workspace lists", intoWorkspace(outsider, http.MethodGet, "/api/v1/releases", "", nil),
			http.StatusForbidden, "WORKSPACE_ACCESS_DENIED")
		refused(t, "anonymous lists", s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/releases"}), http.StatusUnauthorized,
			"UNAUTHENTICATED")

		// Permitted: a creator and a member release their own assets; the
		// member cannot schedule (project.publish), the creator can; a
		// projects:write key drafts and takes back but never schedules.
		mine := createRelease(t, s, m["creator"], "c2", releaseBody(s, "asset", releaseAsset(t, s, m["creator"])))
		if r := asTest(s, m["creator"], http.MethodPost, "/api/v1/releases/"+mine.ID+"/status", "", schedule); r.Status != http.StatusOK {
			t.Errorf("creator schedules its own: %d %s", r.Status, r.Body)
		}
		members := createRelease(t, s, m["member"], "m2", releaseBody(s, "asset", releaseAsset(t, s, m["member"])))
		refused(t, "member schedules its own", asTest(s, m["member"], http.MethodPost, "/api/v1/releases/"+members.ID+"/status", "", schedule),
			http.StatusForbidden, "ACCESS_DENIED", "permission", "project.publish")
		if ids := list(asTest(s, m["member"], http.MethodGet, "/api/v1/releases", "", nil)); !slices.Equal(ids, []string{members.ID}) {
			t.Errorf("a member lists %v, want its own", ids)
		}
		r := withKey(writeKey, http.MethodPost, "/api/v1/releases", "w1", releaseBody(s, "asset", ownerAsset))
		if r.Status != http.StatusCreated {
			t.Fatalf("a projects:write key creates: %d %s", r.Status, r.Body)
		}
		if r := moveRelease(s, owner, rel.ID, release.StatusScheduled); r.Status != http.StatusOK {
			t.Fatalf("owner schedules: %d %s", r.Status, r.Body)
		}
		if r := withKey(writeKey, http.MethodPost, relPath, "", map[string]string{"status": "DRAFT"}); r.Status != http.StatusOK {
			t.Errorf("a projects:write key takes a release back to DRAFT: %d %s", r.Status, r.Body)
		}
	})
}
