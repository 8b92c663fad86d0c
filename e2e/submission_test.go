package e2e_test

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// sbmMedia is a media host on the public internet, as the platform sees
// it: an HTTPS server on loopback whose certificate (httptest's) covers
// example.com and *.example.com, reached as media.example.com, which the
// platform's outbound guards resolve to the server's loopback address (and
// only that exact address and port is allowed on loopback), while
// inward.example.com resolves to the private address 10.0.0.7.
type sbmMedia struct {
	srv *httptest.Server
	// base is https://media.example.com:<port>.
	base string
}

// The media host's files.
var (
	sbmCover = []byte("\x89PNG\r\n\x1a\n a cover for the single, as the media host serves it")
	sbmClip  = []byte("\x00\x00\x00\x18ftypmp42 a short clip of the video")
)

// sbmStartMedia starts the media host: /cover.png and /clip.mp4 serve
// their files, /to-inward redirects to inward.example.com, anything else
// is 404.
func sbmStartMedia(t *testing.T) *sbmMedia {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cover.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(sbmCover)
		case "/clip.mp4":
			w.Header().Set("Content-Type", "video/mp4")
			w.Write(sbmClip)
		case "/to-inward":
			http.Redirect(w, r, "https://inward.example.com/cover.png", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ap, err := urlguard.LoopbackOf(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &sbmMedia{srv: srv, base: "https://media.example.com:" + strconv.Itoa(int(ap.Port()))}
}

// options returns o with the platform's outbound guards pointed at the
// media host.
func (m *sbmMedia) options(t *testing.T, o platformtest.Options) platformtest.Options {
	t.Helper()
	ap, err := urlguard.LoopbackOf(m.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(m.srv.Certificate())
	o.AllowLoopback = append(o.AllowLoopback, m.srv.URL)
	o.Outbound = platform.Outbound{RootCAs: roots, Resolver: urlguardtest.Resolver{
		"media.example.com":  {ap.Addr()},
		"inward.example.com": {netip.MustParseAddr("10.0.0.7")},
	}}
	return o
}

// sbmOpenProject creates a project as by and opens it.
func sbmOpenProject(t testing.TB, s *platformtest.System, by person, visibility string) api.ProjectView {
	t.Helper()
	p := createProject(t, s, by.cookie, map[string]any{"title": "Open call " + visibility, "type": "music_video", "visibility": visibility})
	r := moveProject(s, by.cookie, p.ID, project.StatusOpen)
	if r.Status != http.StatusOK {
		t.Fatalf("open project: %d %s", r.Status, r.Body)
	}
	r.Data(t, &p)
	return p
}

// sbmCreate posts a submission as req's credential.
func sbmCreate(s *platformtest.System, req platformtest.Request, body map[string]any) *platformtest.Response {
	req.Method, req.Path, req.Body = http.MethodPost, "/api/v1/submissions", body
	return s.Do(req)
}

// sbmSubmit submits urls to projectID as by and returns the submission;
// the answer must be 201.
func sbmSubmit(t testing.TB, s *platformtest.System, by person, projectID string, urls ...string) api.SubmissionView {
	t.Helper()
	r := sbmCreate(s, platformtest.Request{Cookie: by.cookie}, map[string]any{"projectId": projectID, "type": "cover_art",
		"title": "A cover", "assetUrls": urls})
	if r.Status != http.StatusCreated {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	var v api.SubmissionView
	r.Data(t, &v)
	return v
}

// sbmReview asks for status on submission id as req's credential.
func sbmReview(s *platformtest.System, req platformtest.Request, id string, status project.SubmissionStatus, note string) *platformtest.Response {
	body := map[string]string{"status": string(status)}
	if note != "" {
		body["note"] = note
	}
	req.Method, req.Path, req.Body = http.MethodPost, "/api/v1/submissions/"+id+"/review", body
	return s.Do(req)
}

// sbmGet reads submission id as req's credential.
func sbmGet(s *platformtest.System, req platformtest.Request, id string) *platformtest.Response {
	req.Method, req.Path = http.MethodGet, "/api/v1/submissions/"+id
	return s.Do(req)
}

// sbmProbed waits until no asset URL of submission id is pending, as
// by reads it, and returns it.
func sbmProbed(t testing.TB, s *platformtest.System, by person, id string) api.SubmissionView {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := sbmGet(s, platformtest.Request{Cookie: by.cookie}, id)
		if r.Status != http.StatusOK {
			t.Fatalf("read submission: %d %s", r.Status, r.Body)
		}
		var v api.SubmissionView
		r.Data(t, &v)
		pending := false
		for _, a := range v.Assets {
			pending = pending || a.Status == "pending"
		}
		if !pending {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("submission %s still probing: %+v", id, v.Assets)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sbmAccepted moves a submission to UNDER_REVIEW and then to, as by.
func sbmDecide(t testing.TB, s *platformtest.System, by person, id string, to project.SubmissionStatus) api.SubmissionView {
	t.Helper()
	if r := sbmReview(s, platformtest.Request{Cookie: by.cookie}, id, project.SubmissionUnderReview, ""); r.Status != http.StatusOK {
		t.Fatalf("start review: %d %s", r.Status, r.Body)
	}
	r := sbmReview(s, platformtest.Request{Cookie: by.cookie}, id, to, "")
	if r.Status != http.StatusOK {
		t.Fatalf("decide %s: %d %s", to, r.Status, r.Body)
	}
	var v api.SubmissionView
	r.Data(t, &v)
	return v
}

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestSubmissionStory: a creator of another tenant submits to an OPEN
// public project; the platform fetches the URL and records the SHA-256
// of the bytes served; the project's owner starts the review and accepts
// it; the submitter reads the outcome. A third tenant reads none of a
// private project's submissions, only the ACCEPTED ones of the public
// one, and reviews nothing; the submitter cannot review its own. Every
// move writes its outbox event and audit record.
func TestSubmissionStory(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	platformtest.Dialects(t, media.options(t, platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		pub := sbmOpenProject(t, s, lead, "public")
		priv := sbmOpenProject(t, s, lead, "workspace")

		creator := signIn(t, s, "creator@elsewhere.example", "Creator")
		onboard(t, s, &creator, "Elsewhere")
		sub := sbmSubmit(t, s, creator, pub.ID, media.base+"/cover.png")
		if sub.Status != "SUBMITTED" || sub.Version != 1 || sub.SubmitterUserID != creator.userID || sub.ProjectID != pub.ID ||
			sub.AssetID != nil || len(sub.Assets) != 1 || *sub.Assets[0].URL != media.base+"/cover.png" || sub.RevisionOf != nil {
			t.Fatalf("submitted %+v", sub)
		}
		got := sbmProbed(t, s, creator, sub.ID)
		if a := got.Assets[0]; a.Status != "verified" || a.SHA256 == nil || *a.SHA256 != sha256Hex(sbmCover) ||
			a.Bytes == nil || *a.Bytes != int64(len(sbmCover)) || a.ContentType == nil || *a.ContentType != "image/png" || a.Reason != nil ||
			a.CheckedAt == nil {
			t.Fatalf("probed %+v", a)
		}

		// The submitter cannot review, even its own; the lead can.
		if r := sbmReview(s, platformtest.Request{Cookie: creator.cookie}, sub.ID, project.SubmissionUnderReview, ""); r.Status != http.StatusForbidden ||
			r.Code() != "ACCESS_DENIED" {
			t.Errorf("the submitter starts its review: %d %s", r.Status, r.Body)
		}
		r := sbmReview(s, platformtest.Request{Cookie: lead.cookie}, sub.ID, project.SubmissionUnderReview, "")
		var v api.SubmissionView
		r.Data(t, &v)
		if r.Status != http.StatusOK || v.Status != "UNDER_REVIEW" || v.Version != 2 || *v.ReviewedByUserID != lead.userID {
			t.Fatalf("start review: %d %s", r.Status, r.Body)
		}
		r = sbmReview(s, platformtest.Request{Cookie: lead.cookie}, sub.ID, project.SubmissionAccepted, "Lovely palette.")
		r.Data(t, &v)
		if r.Status != http.StatusOK || v.Status != "ACCEPTED" || v.Version != 3 {
			t.Fatalf("accept: %d %s", r.Status, r.Body)
		}
		r = sbmGet(s, platformtest.Request{Cookie: creator.cookie}, sub.ID)
		r.Data(t, &v)
		if v.Status != "ACCEPTED" || v.ReviewNote == nil || *v.ReviewNote != "Lovely palette." || *v.ReviewedByUserID != lead.userID ||
			v.ReviewedAt == nil {
			t.Fatalf("the submitter reads %+v", v)
		}

		// The trail: one creation and two reviews, each with its event
		// and its audit record, in the acting workspace.
		for typ, n := range map[string]int{"submission.created": 1, "submission.reviewed": 2} {
			if got := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND aggregate_id = ?`, typ, sub.ID); got != n {
				t.Errorf("%d %s events, want %d", got, typ, n)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE target_id = ? AND action = 'submission.created' AND actor_user_id = ?`,
			sub.ID, creator.userID); n != 1 {
			t.Errorf("%d audit records of the creation, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE target_id = ? AND action = 'submission.reviewed' AND actor_user_id = ?`,
			sub.ID, lead.userID); n != 2 {
			t.Errorf("%d audit records of the reviews, want 2", n)
		}

		// A second submission, still SUBMITTED, and one to the private
		// project by the lead.
		s.Clock.Advance(time.Millisecond) // ids order by their millisecond
		pending := sbmSubmit(t, s, creator, pub.ID, media.base+"/clip.mp4")
		private := sbmSubmit(t, s, lead, priv.ID, media.base+"/clip.mp4")
		list := func(who person, projectID, query string) (*platformtest.Response, api.SubmissionPage) {
			r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects/" + projectID + "/submissions" + query, Cookie: who.cookie})
			var page api.SubmissionPage
			if r.Status == http.StatusOK {
				r.Data(t, &page)
			}
			return r, page
		}
		ids := func(p api.SubmissionPage) []string {
			var out []string
			for _, it := range p.Items {
				out = append(out, it.ID)
			}
			return out
		}
		if _, page := list(lead, pub.ID, ""); len(page.Items) != 2 || page.Items[0].ID != pending.ID || page.Items[1].ID != sub.ID {
			t.Errorf("the lead lists %v, want both, newest first", ids(page))
		}
		_, first := list(lead, pub.ID, "?limit=1")
		if len(first.Items) != 1 || !first.HasMore || first.NextCursor == nil {
			t.Fatalf("a page of 1: %+v", first)
		}
		if _, next := list(lead, pub.ID, "?limit=1&cursor="+url.QueryEscape(*first.NextCursor)); len(next.Items) != 1 ||
			next.Items[0].ID != sub.ID || next.HasMore {
			t.Errorf("the second page: %v", ids(next))
		}
		if _, page := list(creator, pub.ID, ""); len(page.Items) != 2 {
			t.Errorf("the submitter lists %v, want its two", ids(page))
		}
		if _, page := list(lead, pub.ID, "?status=ACCEPTED"); len(page.Items) != 1 || page.Items[0].ID != sub.ID {
			t.Errorf("the ACCEPTED ones: %v", ids(page))
		}

		third := signIn(t, s, "third@nowhere.example", "Third")
		onboard(t, s, &third, "Nowhere")
		if r, page := list(third, pub.ID, ""); r.Status != http.StatusOK || len(page.Items) != 1 || page.Items[0].ID != sub.ID {
			t.Errorf("a third tenant lists the public project's %v (%d), want only the ACCEPTED one", ids(page), r.Status)
		}
		if r, _ := list(third, pub.ID, "?limit=1&cursor="+url.QueryEscape(*first.NextCursor)); r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
			t.Errorf("a third tenant reads the lead's cursor: %d %s", r.Status, r.Body)
		}
		if r, _ := list(third, priv.ID, ""); r.Status != http.StatusNotFound {
			t.Errorf("a third tenant lists a private project's submissions: %d %s", r.Status, r.Body)
		}
		if r, _ := list(creator, priv.ID, ""); r.Status != http.StatusNotFound {
			t.Errorf("another tenant lists a private project's submissions: %d %s", r.Status, r.Body)
		}
		for _, id := range []string{private.ID, pending.ID} {
			if r := sbmGet(s, platformtest.Request{Cookie: third.cookie}, id); r.Status != http.StatusNotFound {
				t.Errorf("a third tenant reads %s: %d %s", id, r.Status, r.Body)
			}
			if r := sbmReview(s, platformtest.Request{Cookie: third.cookie}, id, project.SubmissionUnderReview, ""); r.Status != http.StatusNotFound {
				t.Errorf("a third tenant reviews %s: %d %s", id, r.Status, r.Body)
			}
		}
		if r := sbmGet(s, platformtest.Request{Cookie: third.cookie}, sub.ID); r.Status != http.StatusOK {
			t.Errorf("a third tenant reads an ACCEPTED submission of a public project: %d %s", r.Status, r.Body)
		}
		if r := sbmGet(s, platformtest.Request{Cookie: creator.cookie}, private.ID); r.Status != http.StatusNotFound {
			t.Errorf("another tenant reads a private project's submission: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE id = ? AND status = 'SUBMITTED' AND version = 1`, pending.ID); n != 1 {
			t.Error("a refused review changed the submission")
		}
	})
}
