package e2e_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport/api"
)

// discoverPages follows the cursors of GET /api/v1/discover with q as req
// and returns the items and the first page's cursor.
func discoverPages(t *testing.T, s *platformtest.System, req platformtest.Request, q url.Values) ([]api.DiscoverItemView, string) {
	t.Helper()
	var out []api.DiscoverItemView
	first := ""
	for pages := 0; ; pages++ {
		if pages > 30 {
			t.Fatalf("discover %v does not end", q)
		}
		req.Method, req.Path = http.MethodGet, "/api/v1/discover?"+q.Encode()
		r := s.Do(req)
		if r.Status != http.StatusOK {
			t.Fatalf("%s as %s: %d %s", req.Path, credentialName(req), r.Status, r.Body)
		}
		var page api.DiscoverPage
		r.Data(t, &page)
		if page.HasMore != (page.NextCursor != nil) || page.Ranking == "" {
			t.Fatalf("%s: hasMore %v, cursor %v, ranking %q", req.Path, page.HasMore, page.NextCursor, page.Ranking)
		}
		out = append(out, page.Items...)
		if !page.HasMore {
			return out, first
		}
		if pages == 0 {
			first = *page.NextCursor
		}
		q.Set("cursor", *page.NextCursor)
	}
}

func discoverIDs(items []api.DiscoverItemView) []string {
	ids := []string{}
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

// TestDiscover: public projects ranked by their accepted submissions,
// public tracks (audio and remix submissions accepted into public
// projects) newest first, and creators with a verified wallet ranked by
// public projects plus contributions, read alike by members of any
// tenant and any key with scope read, in pages of any size, in the
// caller's environment only; workspace projects, drafts, pending
// submissions, artwork and in-house work never appear; cursors are
// bound to kind, type and environment; a key without scope read and an
// anonymous caller are refused.
func TestDiscover(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		s.Clock.Advance(time.Millisecond) // ids order by their millisecond
		maker := signIn(t, s, "maker@elsewhere.example", "Maker")
		onboard(t, s, &maker, "Elsewhere")
		reader := signIn(t, s, "reader@third.example", "Reader")
		onboard(t, s, &reader, "Third")
		wl, wm := newWalletKey(t), newWalletKey(t)
		linkWallet(t, s, lead, wl)
		linkWallet(t, s, maker, wm)

		pub := sbmOpenProject(t, s, lead, "public")
		s.Clock.Advance(time.Millisecond)
		pub2 := sbmOpenProject(t, s, lead, "public")
		priv := sbmOpenProject(t, s, lead, "workspace")
		draft := createProject(t, s, lead.cookie, map[string]any{"title": "Draft", "type": "single", "visibility": "public"})
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects", Cookie: lead.cookie, Header: testMode,
			Body: map[string]any{"title": "Test-mode call", "type": "single", "visibility": "public"}})
		var testProject api.ProjectView
		r.Data(t, &testProject)
		if r.Status != http.StatusCreated {
			t.Fatalf("test-mode project: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects/" + testProject.ID + "/status", Cookie: lead.cookie,
			Header: testMode, Body: map[string]string{"status": "OPEN"}}); r.Status != http.StatusOK {
			t.Fatalf("open the test-mode project: %d %s", r.Status, r.Body)
		}

		wav := pcmWAV(8000, 800, func(int) float64 { return 0.25 })
		asset := func(p person) string {
			t.Helper()
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/assets", Cookie: p.cookie, Body: wav,
				Header: map[string]string{"Content-Type": "audio/wav"}})
			var a api.AssetView
			r.Data(t, &a)
			if r.Status != http.StatusCreated {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			return a.ID
		}
		makerAsset, leadAsset := asset(maker), asset(lead)
		submit := func(by person, projectID, assetID string, typ project.SubmissionType) string {
			t.Helper()
			s.Clock.Advance(time.Millisecond)
			r := sbmCreate(s, platformtest.Request{Cookie: by.cookie}, map[string]any{"projectId": projectID, "type": typ,
				"title": "Take " + string(typ), "assetId": assetID})
			var v api.SubmissionView
			r.Data(t, &v)
			if r.Status != http.StatusCreated {
				t.Fatalf("submit: %d %s", r.Status, r.Body)
			}
			return v.ID
		}
		var tracks []string // newest first
		for _, typ := range []project.SubmissionType{"audio", "remix", "artwork"} {
			id := submit(maker, pub.ID, makerAsset, typ)
			sbmDecide(t, s, lead, id, project.SubmissionAccepted)
			if typ != "artwork" {
				tracks = append([]string{id}, tracks...)
			}
		}
		submit(maker, pub2.ID, makerAsset, "audio")                                                    // stays SUBMITTED
		sbmDecide(t, s, lead, submit(maker, pub2.ID, makerAsset, "audio"), project.SubmissionRejected) // rejected
		sbmDecide(t, s, lead, submit(lead, priv.ID, leadAsset, "audio"), project.SubmissionAccepted)   // in-house

		asReader := platformtest.Request{Cookie: reader.cookie}
		// Projects: pub (3 accepted) first, then pub2 with none; the
		// workspace project and the draft never.
		want := []string{pub.ID, pub2.ID}
		for _, limit := range []string{"1", "2", "20"} {
			got, _ := discoverPages(t, s, asReader, url.Values{"limit": {limit}})
			if !slices.Equal(discoverIDs(got), want) {
				t.Errorf("projects at limit %s: %v, want %v (workspace %s, draft %s)", limit, discoverIDs(got), want, priv.ID, draft.ID)
			}
		}
		got, projCursor := discoverPages(t, s, asReader, url.Values{"kind": {"project"}, "limit": {"1"}})
		if it := got[0]; it.Kind != "project" || *it.Score != 3 || it.Project == nil || it.Project.AcceptedSubmissions != 3 ||
			it.CreatorID != lead.userID || it.Environment != "live" || it.Track != nil || it.Creator != nil || *it.Type != "music_video" {
			t.Errorf("the first project: %+v", it)
		}
		// Tracks: the audio and remix, newest first; never the artwork,
		// the pending, rejected or in-house ones.
		if got, _ := discoverPages(t, s, asReader, url.Values{"kind": {"track"}, "limit": {"1"}}); !slices.Equal(discoverIDs(got), tracks) {
			t.Errorf("tracks: %v, want %v", discoverIDs(got), tracks)
		} else if it := got[0]; it.Score != nil || it.Track == nil || *it.Track.AssetID != makerAsset || it.Project.ID != pub.ID ||
			it.CreatorID != maker.userID || *it.Type != "remix" {
			t.Errorf("the newest track: %+v", it)
		}
		if got, _ := discoverPages(t, s, asReader, url.Values{"kind": {"track"}, "type": {"audio"}}); !slices.Equal(discoverIDs(got), tracks[1:]) {
			t.Errorf("audio tracks: %v, want %v", discoverIDs(got), tracks[1:])
		}
		// Creators: the maker (3 contributions), then the lead (3 public
		// projects, the draft counted as a profile counts it; no
		// contribution: the in-house one is none); the reader has no
		// wallet. The tie goes to the newest account, the maker's.
		got, _ = discoverPages(t, s, asReader, url.Values{"kind": {"creator"}})
		if ids := discoverIDs(got); !slices.Equal(ids, []string{maker.userID, lead.userID}) {
			t.Errorf("creators: %v, want maker %s then lead %s", ids, maker.userID, lead.userID)
		} else if m, l := got[0], got[1]; *m.Score != 3 || m.Creator.Contributions != 3 || m.Creator.PublicProjects != 0 ||
			m.Creator.Wallet != wm.addr || m.Title != "Maker" || *l.Score != 3 || l.Creator.PublicProjects != 3 || m.Type != nil {
			t.Errorf("creators: %+v / %+v", m.Creator, l.Creator)
		}

		// Another workspace's owner, a key with scope read: the same.
		for _, req := range []platformtest.Request{{Cookie: maker.cookie}, {Key: s.Boot.LiveKey}} {
			if got, _ := discoverPages(t, s, req, url.Values{}); !slices.Equal(discoverIDs(got), want) {
				t.Errorf("projects as %s: %v", credentialName(req), discoverIDs(got))
			}
		}
		// The other environment: only its own rows.
		for _, req := range []platformtest.Request{{Cookie: reader.cookie, Header: testMode}, {Key: s.Boot.TestKey}} {
			if got, _ := discoverPages(t, s, req, url.Values{}); !slices.Equal(discoverIDs(got), []string{testProject.ID}) {
				t.Errorf("test projects as %s: %v, want %s", credentialName(req), discoverIDs(got), testProject.ID)
			}
			for _, kind := range []string{"track", "creator"} {
				if got, _ := discoverPages(t, s, req, url.Values{"kind": {kind}}); kind == "track" && len(got) != 0 ||
					kind == "creator" && !slices.Equal(discoverIDs(got), []string{lead.userID}) {
					t.Errorf("test %ss as %s: %v", kind, credentialName(req), discoverIDs(got))
				}
			}
		}

		// Refused.
		narrowR, narrow := createKey(t, s, s.Boot.LiveKey, map[string]any{"name": "writer", "scopes": []string{"projects:write"}}, "")
		if narrowR.Status != http.StatusCreated {
			t.Fatalf("narrow key: %d %s", narrowR.Status, narrowR.Body)
		}
		for name, c := range map[string]struct {
			req    platformtest.Request
			query  string
			status int
			code   string
		}{
			"a key without scope read":       {platformtest.Request{Key: narrow.Secret}, "", http.StatusForbidden, "ACCESS_DENIED"},
			"an anonymous caller":            {platformtest.Request{}, "", http.StatusUnauthorized, "UNAUTHENTICATED"},
			"an unknown kind":                {asReader, "kind=playlist", http.StatusBadRequest, "INVALID_INPUT"},
			"a project type for tracks":      {asReader, "kind=track&type=single", http.StatusBadRequest, "INVALID_INPUT"},
			"a type for creators":            {asReader, "kind=creator&type=single", http.StatusBadRequest, "INVALID_INPUT"},
			"the project cursor for tracks":  {asReader, "kind=track&limit=1&cursor=" + url.QueryEscape(projCursor), http.StatusBadRequest, "INVALID_INPUT"},
			"the project cursor with a type": {asReader, "type=music_video&limit=1&cursor=" + url.QueryEscape(projCursor), http.StatusBadRequest, "INVALID_INPUT"},
			"the cursor in test mode": {platformtest.Request{Cookie: reader.cookie, Header: testMode}, "limit=1&cursor=" + url.QueryEscape(projCursor),
				http.StatusBadRequest, "INVALID_INPUT"},
			"a forged cursor": {asReader, "cursor=" + forgedSubmissionCursor("sbm_x"), http.StatusBadRequest, "INVALID_INPUT"},
		} {
			req := c.req
			req.Method, req.Path = http.MethodGet, "/api/v1/discover?"+c.query
			if r := s.Do(req); r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
			}
		}
	})
}
