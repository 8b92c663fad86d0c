package e2e_test

import (
	"net/http"
	"testing"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport/api"
)

// TestSubmissionURLGuard: submitted asset URLs must be public HTTPS
// resources. A loopback, private or metadata address, plain http,
// credentials and a host name resolving inward are refused when
// submitted, with the field's index and the guard's reason, and nothing
// is written. A URL that passes but redirects to a private address when
// the platform fetches it is recorded refused (private_address), and the
// submission cannot be accepted while it is; it can be rejected.
func TestSubmissionURLGuard(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	platformtest.Dialects(t, media.options(t, platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		pub := sbmOpenProject(t, s, lead, "public")
		creator := signIn(t, s, "creator@elsewhere.example", "Creator")
		onboard(t, s, &creator, "Elsewhere")

		good := media.base + "/cover.png"
		for _, c := range []struct {
			name, url, reason string
		}{
			{"loopback", "https://127.0.0.1/clip.mp4", "private_address"},
			{"IPv6 loopback", "https://[::1]/clip.mp4", "private_address"},
			{"private", "https://10.0.0.1/", "private_address"},
			{"metadata", "https://169.254.169.254/latest/meta-data/", "private_address"},
			{"plain http", "http://media.example.com/clip.mp4", "scheme"},
			{"a host resolving inward", "https://inward.example.com/clip.mp4", "private_address"},
			{"credentials", "https://user:secret@media.example.com/clip.mp4", "credentials"},
			{"a never-public name", "https://metadata.google.internal/computeMetadata/v1/", "blocked_host"},
			{"a host that does not resolve", "https://missing.example.com/clip.mp4", "unresolved_host"},
			{"a URL listed twice", good, "duplicate"},
		} {
			r := sbmCreate(s, platformtest.Request{Cookie: creator.cookie}, map[string]any{"projectId": pub.ID, "type": "short_video",
				"title": "Clip", "assetUrls": []string{good, c.url}})
			if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" || detail(r, "field") != "assetUrls[1]" ||
				detail(r, "reason") != c.reason {
				t.Errorf("%s: %d %s, want 400 INVALID_INPUT on assetUrls[1] with reason %s", c.name, r.Status, r.Body, c.reason)
			}
		}
		for name, body := range map[string]map[string]any{
			"both":       {"projectId": pub.ID, "type": "artwork", "title": "x", "assetUrls": []string{good}, "assetId": "ast_01jd0000000000000000000000"},
			"neither":    {"projectId": pub.ID, "type": "artwork", "title": "x"},
			"no URL":     {"projectId": pub.ID, "type": "artwork", "title": "x", "assetUrls": []string{}},
			"six URLs":   {"projectId": pub.ID, "type": "artwork", "title": "x", "assetUrls": []string{good, good + "?1", good + "?2", good + "?3", good + "?4", good + "?5"}},
			"bad type":   {"projectId": pub.ID, "type": "podcast", "title": "x", "assetUrls": []string{good}},
			"blank name": {"projectId": pub.ID, "type": "artwork", "title": "  ", "assetUrls": []string{good}},
		} {
			r := sbmCreate(s, platformtest.Request{Cookie: creator.cookie}, body)
			if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" || detail(r, "field") == nil {
				t.Errorf("%s: %d %s, want 400 INVALID_INPUT naming the field", name, r.Status, r.Body)
			}
		}
		for _, table := range []string{"submissions", "submission_assets"} {
			if n := count(t, s, `SELECT COUNT(*) FROM `+table); n != 0 {
				t.Errorf("%d rows in %s after refused submissions", n, table)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type LIKE 'submission.%'`); n != 0 {
			t.Errorf("%d submission events after refused submissions", n)
		}

		// A URL that passes the check but redirects inward when fetched.
		sub := sbmSubmit(t, s, creator, pub.ID, good, media.base+"/to-inward")
		got := sbmProbed(t, s, creator, sub.ID)
		if a := got.Assets[0]; a.Status != "verified" || *a.SHA256 != sha256Hex(sbmCover) {
			t.Errorf("the good URL: %+v", a)
		}
		if a := got.Assets[1]; a.Status != "refused" || a.Reason == nil || *a.Reason != "private_address" || a.SHA256 != nil || a.Bytes != nil {
			t.Errorf("the URL redirecting inward: %+v, want refused with reason private_address", a)
		}
		if r := sbmReview(s, platformtest.Request{Cookie: lead.cookie}, sub.ID, project.SubmissionUnderReview, ""); r.Status != http.StatusOK {
			t.Fatalf("start review: %d %s", r.Status, r.Body)
		}
		r := sbmReview(s, platformtest.Request{Cookie: lead.cookie}, sub.ID, project.SubmissionAccepted, "")
		if r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" || detail(r, "reason") != "assets_not_verified" {
			t.Errorf("accept with a refused URL: %d %s, want 409 INVALID_STATE_TRANSITION (assets_not_verified)", r.Status, r.Body)
		}
		r = sbmReview(s, platformtest.Request{Cookie: lead.cookie}, sub.ID, project.SubmissionRejected, "The second link points inside.")
		var v api.SubmissionView
		r.Data(t, &v)
		if r.Status != http.StatusOK || v.Status != "REJECTED" || v.Version != 3 {
			t.Errorf("reject: %d %s", r.Status, r.Body)
		}
	})
}
