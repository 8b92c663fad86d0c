package e2e_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport/api"
)

// contributionPages follows the cursors of a creator's contributions (with
// query q) as req and returns the items, newest first, and the first
// page's cursor ("" when there is one page).
func contributionPages(t *testing.T, s *platformtest.System, req platformtest.Request, wallet string, q url.Values) ([]api.ContributionView, string) {
	t.Helper()
	var out []api.ContributionView
	first := ""
	limit := 20
	if l := q.Get("limit"); l != "" {
		fmt.Sscan(l, &limit)
	}
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatalf("the contributions of %s do not end", wallet)
		}
		req.Method, req.Path = http.MethodGet, "/api/v1/creators/"+wallet+"/contributions?"+q.Encode()
		r := s.Do(req)
		if r.Status != http.StatusOK {
			t.Fatalf("%s as %s: %d %s", req.Path, credentialName(req), r.Status, r.Body)
		}
		var page api.ContributionPage
		r.Data(t, &page)
		if len(page.Items) > limit || page.HasMore != (page.NextCursor != nil) || page.HasMore && len(page.Items) != limit {
			t.Fatalf("%s: %d items at limit %d, hasMore %v, cursor %v", req.Path, len(page.Items), limit, page.HasMore, page.NextCursor)
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

// forgedSubmissionCursor is a cursor in the shape of a submission list's
// that this API never returned: a position with a made-up binding.
func forgedSubmissionCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("sbm:" + id + ":0123456789abcdef"))
}

// contributionIDs are the submission ids of cs.
func contributionIDs(cs []api.ContributionView) []string {
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestCreatorContributions: a creator of another tenant whose submissions
// a project's lead accepted shows them as contributions, newest first, to
// a reader of a third tenant and to any API key with scope read of the
// environment; submissions left SUBMITTED or UNDER_REVIEW, REJECTED or
// sent back for a revision never show, nor one accepted into a workspace
// project (not even to its own workspace), nor another environment's;
// the profile counts them; pages follow their cursor with no duplicate or
// gap, and a cursor is refused under another wallet, type, environment or
// list; a malformed wallet is 400 before the credential is read, an
// unknown one 404, a bad type or limit 400.
func TestCreatorContributions(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		maker := signIn(t, s, "maker@elsewhere.example", "Maker")
		onboard(t, s, &maker, "Elsewhere")
		reader := signIn(t, s, "reader@third.example", "Reader")
		onboard(t, s, &reader, "Third")
		wl, wm := newWalletKey(t), newWalletKey(t)
		linkWallet(t, s, lead, wl)
		linkWallet(t, s, maker, wm)

		pub := sbmOpenProject(t, s, lead, "public")
		priv := sbmOpenProject(t, s, lead, "workspace")
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects", Cookie: lead.cookie, Header: testMode,
			Body: map[string]any{"title": "Test call", "type": "music_video", "visibility": "public"}})
		var testPub api.ProjectView
		r.Data(t, &testPub)
		if r.Status != http.StatusCreated {
			t.Fatalf("test-mode project: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects/" + testPub.ID + "/status", Cookie: lead.cookie,
			Header: testMode, Body: map[string]string{"status": "OPEN"}}); r.Status != http.StatusOK {
			t.Fatalf("open the test-mode project: %d %s", r.Status, r.Body)
		}

		wav := pcmWAV(8000, 800, func(int) float64 { return 0.25 })
		uploadAs := func(p person, header map[string]string) string {
			t.Helper()
			h := map[string]string{"Content-Type": "audio/wav"}
			for k, v := range header {
				h[k] = v
			}
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/assets", Cookie: p.cookie, Body: wav, Header: h})
			if r.Status != http.StatusCreated {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			var a api.AssetView
			r.Data(t, &a)
			return a.ID
		}
		liveAsset, testAsset, leadAsset := uploadAs(maker, nil), uploadAs(maker, testMode), uploadAs(lead, nil)
		submit := func(by person, header map[string]string, projectID, assetID string, typ project.SubmissionType) api.SubmissionView {
			t.Helper()
			s.Clock.Advance(time.Millisecond) // ids order by their millisecond
			r := sbmCreate(s, platformtest.Request{Cookie: by.cookie, Header: header}, map[string]any{"projectId": projectID,
				"type": typ, "title": "Take " + string(typ), "description": "A take.", "assetId": assetID})
			if r.Status != http.StatusCreated {
				t.Fatalf("submit: %d %s", r.Status, r.Body)
			}
			var v api.SubmissionView
			r.Data(t, &v)
			return v
		}

		// The maker: 23 submissions the lead accepts (every third a
		// remix, the rest audio), newest first below, and one in each
		// other status; the lead's own accepted one to its workspace
		// project; the maker's accepted one in test mode.
		var accepted, remixes []string
		var first api.SubmissionView
		for i := range 23 {
			typ := project.SubmissionType("audio")
			if i%3 == 0 {
				typ = "remix"
			}
			v := submit(maker, nil, pub.ID, liveAsset, typ)
			v = sbmDecide(t, s, lead, v.ID, project.SubmissionAccepted)
			if i == 0 {
				first = v
			}
			accepted = append([]string{v.ID}, accepted...)
			if typ == "remix" {
				remixes = append([]string{v.ID}, remixes...)
			}
			if i == 11 {
				submit(maker, nil, pub.ID, liveAsset, "audio") // stays SUBMITTED
				review := submit(maker, nil, pub.ID, liveAsset, "audio")
				if r := sbmReview(s, platformtest.Request{Cookie: lead.cookie}, review.ID, project.SubmissionUnderReview, ""); r.Status != http.StatusOK {
					t.Fatalf("start a review: %d %s", r.Status, r.Body)
				}
				for _, to := range []project.SubmissionStatus{project.SubmissionRejected, project.SubmissionRevisionRequested} {
					sbmDecide(t, s, lead, submit(maker, nil, pub.ID, liveAsset, "audio").ID, to)
				}
			}
		}
		inHouse := sbmDecide(t, s, lead, submit(lead, nil, priv.ID, leadAsset, "audio").ID, project.SubmissionAccepted)
		testOne := submit(maker, testMode, testPub.ID, testAsset, "remix")
		for _, to := range []project.SubmissionStatus{project.SubmissionUnderReview, project.SubmissionAccepted} {
			if r := sbmReview(s, platformtest.Request{Cookie: lead.cookie, Header: testMode}, testOne.ID, to, ""); r.Status != http.StatusOK {
				t.Fatalf("review the test-mode submission: %d %s", r.Status, r.Body)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE submitter_user_id = ? AND status <> 'ACCEPTED'`, maker.userID); n != 4 {
			t.Fatalf("%d of the maker's submissions are not accepted, want 4", n)
		}

		// A reader of a third tenant reads them all, in any page size.
		asReader := platformtest.Request{Cookie: reader.cookie}
		got, cursor := contributionPages(t, s, asReader, wm.addr, url.Values{"limit": {"10"}})
		if !slices.Equal(contributionIDs(got), accepted) {
			t.Errorf("the maker's contributions: %v, want %v", contributionIDs(got), accepted)
		}
		if all, _ := contributionPages(t, s, asReader, wm.addr, url.Values{}); !slices.Equal(contributionIDs(all), accepted) {
			t.Errorf("in default pages: %d items, want %d", len(all), len(accepted))
		}
		remixCursor := ""
		if got, c := contributionPages(t, s, asReader, wm.addr, url.Values{"type": {"remix"}, "limit": {"3"}}); !slices.Equal(contributionIDs(got), remixes) {
			t.Errorf("the maker's remixes: %v, want %v", contributionIDs(got), remixes)
		} else {
			remixCursor = c
		}
		oldest := got[len(got)-1]
		want := api.ContributionView{ID: first.ID, Object: "contribution", ProjectID: pub.ID, ProjectTitle: pub.Title, Type: "remix",
			Title: "Take remix", Description: "A take.", AssetID: first.AssetID, Assets: first.Assets, SubmittedAt: first.CreatedAt,
			AcceptedAt: *first.ReviewedAt}
		if oldest.ID != want.ID || oldest.Object != want.Object || oldest.ProjectID != want.ProjectID || oldest.ProjectTitle != want.ProjectTitle ||
			oldest.Type != want.Type || oldest.Title != want.Title || oldest.Description != want.Description || *oldest.AssetID != liveAsset ||
			len(oldest.Assets) != 1 || oldest.Assets[0].Status != "verified" || *oldest.Assets[0].SHA256 != sha256Hex(wav) ||
			!oldest.SubmittedAt.Equal(want.SubmittedAt) || !oldest.AcceptedAt.Equal(want.AcceptedAt) {
			t.Errorf("the oldest contribution: %+v, want %+v", oldest, want)
		}
		for _, c := range got {
			if c.ProjectID != pub.ID {
				t.Errorf("a contribution to %s, want only %s", c.ProjectID, pub.ID)
			}
		}
		// The review's note and reviewer stay on the submission routes.
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creators/" + wm.addr + "/contributions", Cookie: reader.cookie})
		for _, field := range []string{"reviewNote", "reviewedByUserId", lead.userID} {
			if strings.Contains(string(r.Body), field) {
				t.Errorf("a contribution shows %q: %s", field, r.Body)
			}
		}
		// The lead's own accepted submission to its workspace project is
		// no contribution, not even to the lead.
		for _, who := range []person{lead, reader} {
			if got, _ := contributionPages(t, s, platformtest.Request{Cookie: who.cookie}, wl.addr, url.Values{}); len(got) != 0 {
				t.Errorf("the lead's contributions read by %s: %v, want none (its one is in %s)", who.email, contributionIDs(got), inHouse.ProjectID)
			}
		}
		// Test mode: the test-mode one only, for a session in test mode
		// and for a test key of another tenant.
		for _, req := range []platformtest.Request{{Cookie: reader.cookie, Header: testMode}, {Key: s.Boot.TestKey}} {
			if got, _ := contributionPages(t, s, req, wm.addr, url.Values{}); !slices.Equal(contributionIDs(got), []string{testOne.ID}) {
				t.Errorf("the maker's contributions as %s: %v, want only %s", credentialName(req), contributionIDs(got), testOne.ID)
			}
		}

		// The profile counts them, in the caller's environment.
		if c := getCreator(t, s, asReader, wm.addr); c.Counts.Contributions != 23 || c.Counts.PublicProjects != 0 {
			t.Errorf("the maker's live counts: %+v, want 23 contributions", c.Counts)
		}
		if c := getCreator(t, s, platformtest.Request{Key: s.Boot.TestKey}, wm.addr); c.Counts.Contributions != 1 {
			t.Errorf("the maker's test counts: %+v, want 1 contribution", c.Counts)
		}
		if c := getCreator(t, s, asReader, wl.addr); c.Counts.Contributions != 0 || c.Counts.PublicProjects != 1 {
			t.Errorf("the lead's counts: %+v, want 1 public project and no contribution", c.Counts)
		}

		// Refused: cursors read elsewhere, a bad type or limit, an unknown
		// wallet, a malformed one (for an anonymous caller too).
		contrib := "/api/v1/creators/" + wm.addr + "/contributions"
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/projects/" + pub.ID + "/submissions?limit=2", Cookie: reader.cookie})
		var subPage api.SubmissionPage
		r.Data(t, &subPage)
		if r.Status != http.StatusOK || subPage.NextCursor == nil {
			t.Fatalf("the project's submissions: %d %s", r.Status, r.Body)
		}
		for name, c := range map[string]struct {
			req   platformtest.Request
			path  string
			code  string
			field string
		}{
			"the cursor of another wallet": {asReader, "/api/v1/creators/" + wl.addr + "/contributions?limit=10&cursor=" + url.QueryEscape(cursor), "INVALID_INPUT", "cursor"},
			"the cursor with a type":       {asReader, contrib + "?type=audio&limit=10&cursor=" + url.QueryEscape(cursor), "INVALID_INPUT", "cursor"},
			"the remix cursor, no type":    {asReader, contrib + "?limit=3&cursor=" + url.QueryEscape(remixCursor), "INVALID_INPUT", "cursor"},
			"the cursor in test mode":      {platformtest.Request{Cookie: reader.cookie, Header: testMode}, contrib + "?limit=10&cursor=" + url.QueryEscape(cursor), "INVALID_INPUT", "cursor"},
			"a submission list's cursor":   {asReader, contrib + "?limit=2&cursor=" + url.QueryEscape(*subPage.NextCursor), "INVALID_INPUT", "cursor"},
			"a creator projects cursor":    {asReader, contrib + "?cursor=cHJqOnByal8wMWpkOmFiYw", "INVALID_INPUT", "cursor"},
			"a forged cursor":              {asReader, contrib + "?cursor=" + url.QueryEscape(forgedSubmissionCursor(accepted[3])), "INVALID_INPUT", "cursor"},
			"a project type":               {asReader, contrib + "?type=single", "INVALID_INPUT", "type"},
			"limit 0":                      {asReader, contrib + "?limit=0", "INVALID_INPUT", "limit"},
			"limit 101":                    {asReader, contrib + "?limit=101", "INVALID_INPUT", "limit"},
			"an unknown wallet":            {asReader, "/api/v1/creators/" + newWalletKey(t).addr + "/contributions", "NOT_FOUND", ""},
			"an anonymous caller":          {platformtest.Request{}, contrib, "UNAUTHENTICATED", ""},
		} {
			c.req.Method, c.req.Path = http.MethodGet, c.path
			r := s.Do(c.req)
			if r.Code() != c.code || c.field != "" && detail(r, "field") != c.field {
				t.Errorf("%s: %d %s, want %s on %q", name, r.Status, r.Body, c.code, c.field)
			}
		}
		for name, w := range badWallets() {
			for _, req := range []platformtest.Request{{Cookie: reader.cookie}, {}} {
				req.Method, req.Path = http.MethodGet, "/api/v1/creators/"+url.PathEscape(w)+"/contributions"
				r := s.Do(req)
				if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" || detail(r, "field") != "wallet" {
					t.Errorf("%s wallet as %s: %d %s", name, credentialName(req), r.Status, r.Body)
				}
			}
		}
	})
}
