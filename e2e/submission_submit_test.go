package e2e_test

import (
	"net/http"
	"testing"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// TestSubmissionWhoMaySubmit: a member whose project.update grant reaches
// its own resources submits (a MEMBER), VIEWER, FINANCE and DEVELOPER
// cannot; a project that is not OPEN refuses submissions; a private
// project of another tenant, a missing one and one of the other
// environment are not there; an API key submits with projects:write and
// not without; the work may be a platform asset of the caller's own
// workspace, snapshot whole, and not another workspace's.
func TestSubmissionWhoMaySubmit(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	platformtest.Dialects(t, media.options(t, platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		pub := sbmOpenProject(t, s, lead, "public")
		priv := sbmOpenProject(t, s, lead, "workspace")
		body := func(projectID string) map[string]any {
			return map[string]any{"projectId": projectID, "type": "animation", "title": "Loop", "assetUrls": []string{media.base + "/clip.mp4"}}
		}
		for _, role := range []string{"VIEWER", "FINANCE", "DEVELOPER", "MEMBER"} {
			email := "role-" + role + "@label.example"
			m := join(t, s, email, role, invite(t, s, lead, email, role))
			r := sbmCreate(s, platformtest.Request{Cookie: m.cookie}, body(pub.ID))
			if role == "MEMBER" {
				if r.Status != http.StatusCreated {
					t.Errorf("a MEMBER submits: %d %s", r.Status, r.Body)
				}
				continue
			}
			if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" {
				t.Errorf("a %s submits: %d %s, want 403 ACCESS_DENIED", role, r.Status, r.Body)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM submissions`); n != 1 {
			t.Errorf("%d submissions stored, want the MEMBER's alone", n)
		}

		creator := signIn(t, s, "creator@elsewhere.example", "Creator")
		onboard(t, s, &creator, "Elsewhere")
		as := platformtest.Request{Cookie: creator.cookie}
		draft := createProject(t, s, lead.cookie, map[string]any{"title": "Not yet", "type": "single", "visibility": "public"})
		r := sbmCreate(s, as, body(draft.ID))
		if r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" || detail(r, "reason") != "project_not_open" ||
			detail(r, "projectStatus") != "DRAFT" {
			t.Errorf("submit to a DRAFT project: %d %s", r.Status, r.Body)
		}
		if r := moveProject(s, lead.cookie, pub.ID, project.StatusInProduction); r.Status != http.StatusOK {
			t.Fatalf("move on: %d %s", r.Status, r.Body)
		}
		if r := sbmCreate(s, as, body(pub.ID)); r.Status != http.StatusConflict || detail(r, "projectStatus") != "IN_PRODUCTION" {
			t.Errorf("submit to a project IN_PRODUCTION: %d %s", r.Status, r.Body)
		}
		for name, req := range map[string]platformtest.Request{
			"another tenant's private project": as,
			"a missing project":                as,
			"a project of the other environment": {Cookie: creator.cookie,
				Header: map[string]string{transport.EnvironmentHeader: "test"}},
		} {
			id := priv.ID
			if name == "a missing project" {
				id = "prj_01jd0000000000000000000000"
			}
			if name == "a project of the other environment" {
				id = draft.ID
			}
			if r := sbmCreate(s, req, body(id)); r.Status != http.StatusNotFound || detail(r, "field") != "projectId" {
				t.Errorf("submit to %s: %d %s, want 404 on projectId", name, r.Status, r.Body)
			}
		}

		// A platform asset of the caller's workspace, snapshot whole.
		open := sbmOpenProject(t, s, lead, "public")
		wav := pcmWAV(8000, 800, func(int) float64 { return 0.25 })
		uploadAs := func(p person) api.AssetView {
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/assets", Cookie: p.cookie, Body: wav,
				Header: map[string]string{"Content-Type": "audio/wav"}})
			if r.Status != http.StatusCreated {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			var a api.AssetView
			r.Data(t, &a)
			return a
		}
		mine, theirs := uploadAs(creator), uploadAs(lead)
		withAsset := map[string]any{"projectId": open.ID, "type": "audio", "title": "Stem", "assetId": theirs.ID}
		if r := sbmCreate(s, as, withAsset); r.Status != http.StatusNotFound || detail(r, "field") != "assetId" {
			t.Errorf("submit another workspace's asset: %d %s", r.Status, r.Body)
		}
		withAsset["assetId"] = mine.ID
		r = sbmCreate(s, as, withAsset)
		var v api.SubmissionView
		r.Data(t, &v)
		if r.Status != http.StatusCreated || v.AssetID == nil || *v.AssetID != mine.ID || len(v.Assets) != 1 {
			t.Fatalf("submit an asset: %d %s", r.Status, r.Body)
		}
		if a := v.Assets[0]; a.URL != nil || a.Status != "verified" || *a.SHA256 != sha256Hex(wav) || *a.Bytes != int64(len(wav)) ||
			*a.ContentType != "audio/wav" {
			t.Errorf("the asset's snapshot: %+v", a)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM jobs WHERE kind = 'submission.probe' AND unique_key = ?`, "submission.probe:"+v.ID); n != 0 {
			t.Errorf("an asset submission enqueued %d probes", n)
		}
		if got := sbmDecide(t, s, lead, v.ID, project.SubmissionAccepted); got.Status != "ACCEPTED" {
			t.Errorf("accept an asset submission: %+v", got)
		}

		// API keys (the bootstrap tenant's, test environment): one with
		// projects:write submits for its creator, one without cannot.
		testProject := func() string {
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects", Cookie: lead.cookie,
				Header: map[string]string{transport.EnvironmentHeader: "test"},
				Body:   map[string]any{"title": "Test call", "type": "remix", "visibility": "public"}})
			var p api.ProjectView
			r.Data(t, &p)
			r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects/" + p.ID + "/status", Cookie: lead.cookie,
				Header: map[string]string{transport.EnvironmentHeader: "test"}, Body: map[string]string{"status": "OPEN"}})
			if r.Status != http.StatusOK {
				t.Fatalf("open a test project: %d %s", r.Status, r.Body)
			}
			return p.ID
		}()
		r = sbmCreate(s, platformtest.Request{Key: s.Boot.TestKey}, body(testProject))
		r.Data(t, &v)
		if r.Status != http.StatusCreated || v.SubmitterUserID != s.Boot.OwnerID {
			t.Errorf("a key with projects:write submits: %d %s", r.Status, r.Body)
		}
		kr, readOnly := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "read only", "scopes": []string{"read"}}, "")
		if kr.Status != http.StatusCreated {
			t.Fatalf("create a read-only key: %d %s", kr.Status, kr.Body)
		}
		if r := sbmCreate(s, platformtest.Request{Key: readOnly.Secret}, body(testProject)); r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" {
			t.Errorf("a key without projects:write submits: %d %s", r.Status, r.Body)
		}
	})
}

// TestSubmissionIdempotencyAndRevision: an Idempotency-Key replays the
// first submission (one row, one event) and refuses another body; a
// submission the reviewer sent back is revised once, by its submitter
// alone, into a new submission linked to it, and stays as it was.
func TestSubmissionIdempotencyAndRevision(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	platformtest.Dialects(t, media.options(t, platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		pub := sbmOpenProject(t, s, lead, "public")
		other := sbmOpenProject(t, s, lead, "public")
		creator := signIn(t, s, "creator@elsewhere.example", "Creator")
		onboard(t, s, &creator, "Elsewhere")

		key := map[string]string{"Idempotency-Key": "cover-v1"}
		body := map[string]any{"projectId": pub.ID, "type": "cover_art", "title": "Cover v1", "assetUrls": []string{media.base + "/cover.png"}}
		first := sbmCreate(s, platformtest.Request{Cookie: creator.cookie, Header: key}, body)
		again := sbmCreate(s, platformtest.Request{Cookie: creator.cookie, Header: key}, body)
		var a, b api.SubmissionView
		first.Data(t, &a)
		again.Data(t, &b)
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || a.ID != b.ID ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("a replayed create: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE submitter_user_id = ?`, creator.userID); n != 1 {
			t.Errorf("%d submissions stored for a replayed create, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM jobs WHERE kind = 'submission.probe' AND unique_key = ?`, "submission.probe:"+a.ID); n != 1 {
			t.Errorf("%d probe jobs for a replayed create, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'submission.created' AND aggregate_id = ?`, a.ID); n != 1 {
			t.Errorf("%d submission.created events for a replayed create, want 1", n)
		}
		body["title"] = "Cover v1, renamed"
		if r := sbmCreate(s, platformtest.Request{Cookie: creator.cookie, Header: key}, body); r.Status != http.StatusConflict ||
			r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Errorf("the key with another body: %d %s", r.Status, r.Body)
		}

		sbmProbed(t, s, creator, a.ID)
		sent := sbmDecide(t, s, lead, a.ID, project.SubmissionRevisionRequested)
		revise := func(by person, projectID string) *platformtest.Response {
			return sbmCreate(s, platformtest.Request{Cookie: by.cookie}, map[string]any{"projectId": projectID, "type": "cover_art",
				"title": "Cover v2", "assetUrls": []string{media.base + "/cover.png"}, "revisionOf": a.ID})
		}
		if r := revise(lead, pub.ID); r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" {
			t.Errorf("the reviewer revises another's submission: %d %s", r.Status, r.Body)
		}
		third := signIn(t, s, "third@nowhere.example", "Third")
		onboard(t, s, &third, "Nowhere")
		if r := revise(third, pub.ID); r.Status != http.StatusNotFound || detail(r, "field") != "revisionOf" {
			t.Errorf("a third tenant revises it: %d %s", r.Status, r.Body)
		}
		if r := revise(creator, other.ID); r.Status != http.StatusBadRequest || detail(r, "field") != "projectId" {
			t.Errorf("a revision to another project: %d %s", r.Status, r.Body)
		}
		r := revise(creator, pub.ID)
		var v2 api.SubmissionView
		r.Data(t, &v2)
		if r.Status != http.StatusCreated || v2.ID == a.ID || v2.RevisionOf == nil || *v2.RevisionOf != a.ID || v2.Status != "SUBMITTED" ||
			v2.ProjectID != pub.ID || v2.Version != 1 {
			t.Fatalf("the revision: %d %s", r.Status, r.Body)
		}
		if r := revise(creator, pub.ID); r.Status != http.StatusConflict || r.Code() != "CONFLICT" || detail(r, "field") != "revisionOf" {
			t.Errorf("a second revision: %d %s", r.Status, r.Body)
		}
		r = sbmCreate(s, platformtest.Request{Cookie: creator.cookie}, map[string]any{"projectId": pub.ID, "type": "cover_art",
			"title": "Cover v3", "assetUrls": []string{media.base + "/cover.png"}, "revisionOf": v2.ID})
		if r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" || detail(r, "reason") != "not_revision_requested" {
			t.Errorf("revise a SUBMITTED submission: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE id = ? AND status = 'REVISION_REQUESTED' AND version = ?`, a.ID, sent.Version); n != 1 {
			t.Error("the revised submission changed")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE revision_of = ?`, a.ID); n != 1 {
			t.Errorf("%d revisions stored, want 1", n)
		}
	})
}
