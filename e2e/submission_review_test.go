package e2e_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport/api"
)

// TestSubmissionIllegalTransitions: from every status a submission can
// be in, every target status the table does not have (a jump such as
// SUBMITTED -> ACCEPTED, a step back, the same status, a move out of a
// decision, DRAFT) is INVALID_STATE_TRANSITION for the project's owner,
// and changes nothing; an unknown status is INVALID_INPUT.
func TestSubmissionIllegalTransitions(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	platformtest.Dialects(t, media.options(t, platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		pub := sbmOpenProject(t, s, lead, "public")
		creator := signIn(t, s, "creator@elsewhere.example", "Creator")
		onboard(t, s, &creator, "Elsewhere")
		asLead := platformtest.Request{Cookie: lead.cookie}

		// walk returns a submission moved along path.
		walk := func(path ...project.SubmissionStatus) api.SubmissionView {
			v := sbmSubmit(t, s, creator, pub.ID, media.base+"/cover.png")
			sbmProbed(t, s, creator, v.ID)
			for _, to := range path {
				r := sbmReview(s, asLead, v.ID, to, "")
				if r.Status != http.StatusOK {
					t.Fatalf("walk to %s: %d %s", to, r.Status, r.Body)
				}
				r.Data(t, &v)
			}
			return v
		}
		under := project.SubmissionUnderReview
		cases := map[project.SubmissionStatus]api.SubmissionView{
			project.SubmissionSubmitted:         walk(),
			project.SubmissionUnderReview:       walk(under),
			project.SubmissionAccepted:          walk(under, project.SubmissionAccepted),
			project.SubmissionRejected:          walk(under, project.SubmissionRejected),
			project.SubmissionRevisionRequested: walk(under, project.SubmissionRevisionRequested),
		}
		for from, v := range cases {
			if v.Status != string(from) {
				t.Fatalf("walked to %s, want %s", v.Status, from)
			}
			for _, to := range project.SubmissionStatuses() {
				if _, err := project.SubmissionTransition(from, project.SubmissionEventFor(to)); err == nil {
					continue
				}
				r := sbmReview(s, asLead, v.ID, to, "")
				if r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" {
					t.Errorf("%s -> %s: %d %s, want 409 INVALID_STATE_TRANSITION", from, to, r.Status, r.Body)
				}
			}
			if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE id = ? AND status = ? AND version = ?`, v.ID, string(from), v.Version); n != 1 {
				t.Errorf("the submission in %s changed on refused moves", from)
			}
		}
		r := sbmReview(s, asLead, cases[project.SubmissionSubmitted].ID, "LAUNCHED", "")
		if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
			t.Errorf("an unknown status: %d %s", r.Status, r.Body)
		}
		if r := sbmReview(s, asLead, "sbm_01jd0000000000000000000000", under, ""); r.Status != http.StatusNotFound {
			t.Errorf("review of a missing submission: %d %s", r.Status, r.Body)
		}
	})
}

// TestSubmissionConcurrentReviews: duplicate reviews sent together give
// one outcome: one answers 200, every other 409 (CONFLICT from the
// compare-and-set, or INVALID_STATE_TRANSITION once the winner's status
// is read), with one event and one version step; so do competing
// decisions, and duplicates carrying one Idempotency-Key all answer the
// first one's outcome.
func TestSubmissionConcurrentReviews(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	platformtest.Dialects(t, media.options(t, platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		pub := sbmOpenProject(t, s, lead, "public")
		creator := signIn(t, s, "creator@elsewhere.example", "Creator")
		onboard(t, s, &creator, "Elsewhere")

		race := func(reqs ...platformtest.Request) []*platformtest.Response {
			out := make([]*platformtest.Response, len(reqs))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, req := range reqs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					out[i] = s.Do(req)
				}()
			}
			close(start)
			wg.Wait()
			return out
		}
		review := func(id string, to project.SubmissionStatus, header map[string]string) platformtest.Request {
			return platformtest.Request{Method: http.MethodPost, Path: "/api/v1/submissions/" + id + "/review", Cookie: lead.cookie,
				Body: map[string]string{"status": string(to)}, Header: header}
		}
		oneWins := func(name string, rs []*platformtest.Response) *platformtest.Response {
			t.Helper()
			var won *platformtest.Response
			for _, r := range rs {
				switch {
				case r.Status == http.StatusOK && won == nil:
					won = r
				case r.Status == http.StatusConflict && (r.Code() == "CONFLICT" || r.Code() == "INVALID_STATE_TRANSITION"):
				default:
					t.Errorf("%s: %d %s, want one 200 and 409s", name, r.Status, r.Body)
				}
			}
			if won == nil {
				t.Fatalf("%s: no review won", name)
			}
			return won
		}

		sub := sbmSubmit(t, s, creator, pub.ID, media.base+"/cover.png")
		sbmProbed(t, s, creator, sub.ID)
		const n = 4
		reqs := make([]platformtest.Request, n)
		for i := range reqs {
			reqs[i] = review(sub.ID, project.SubmissionUnderReview, nil)
		}
		oneWins("duplicate starts", race(reqs...))
		for i := range reqs {
			reqs[i] = review(sub.ID, project.SubmissionAccepted, nil)
		}
		oneWins("duplicate acceptances", race(reqs...))
		if c := count(t, s, `SELECT COUNT(*) FROM submissions WHERE id = ? AND status = 'ACCEPTED' AND version = 3`, sub.ID); c != 1 {
			t.Error("after the races the submission is not ACCEPTED at version 3")
		}
		if c := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'submission.reviewed' AND aggregate_id = ?`, sub.ID); c != 2 {
			t.Errorf("%d submission.reviewed events, want 2 (one per winning move)", c)
		}

		// Competing decisions: one of them stands.
		other := sbmSubmit(t, s, creator, pub.ID, media.base+"/clip.mp4")
		sbmProbed(t, s, creator, other.ID)
		if r := s.Do(review(other.ID, project.SubmissionUnderReview, nil)); r.Status != http.StatusOK {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		won := oneWins("competing decisions", race(review(other.ID, project.SubmissionAccepted, nil),
			review(other.ID, project.SubmissionRejected, nil), review(other.ID, project.SubmissionRevisionRequested, nil)))
		var v api.SubmissionView
		won.Data(t, &v)
		if c := count(t, s, `SELECT COUNT(*) FROM submissions WHERE id = ? AND status = ? AND version = 3`, other.ID, v.Status); c != 1 {
			t.Errorf("the stored decision is not the winner's %s", v.Status)
		}

		// Duplicates with one key: the same answer, replayed.
		third := sbmSubmit(t, s, creator, pub.ID, media.base+"/cover.png")
		key := map[string]string{"Idempotency-Key": "start-third"}
		rs := race(review(third.ID, project.SubmissionUnderReview, key), review(third.ID, project.SubmissionUnderReview, key))
		for _, r := range rs {
			var got api.SubmissionView
			if r.Status != http.StatusOK {
				if r.Status == http.StatusConflict && r.Code() == "IDEMPOTENCY_IN_PROGRESS" {
					continue
				}
				t.Fatalf("a keyed duplicate: %d %s", r.Status, r.Body)
			}
			r.Data(t, &got)
			if got.Status != "UNDER_REVIEW" || got.Version != 2 {
				t.Errorf("a keyed duplicate answered %+v", got)
			}
		}
		if c := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'submission.reviewed' AND aggregate_id = ?`, third.ID); c != 1 {
			t.Errorf("%d events for keyed duplicates, want 1", c)
		}
	})
}

// TestSubmissionReviewRoles: who may review a submission to a CREATOR's
// public project: the workspace's OWNER and ADMIN, the CREATOR who owns
// the project and a project_lead assigned to it; not a MODERATOR, a
// VIEWER, another CREATOR of the workspace, a collaborator of the
// project, nor any API key (with or without projects:write: no key scope
// stands for project.publish).
func TestSubmissionReviewRoles(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	platformtest.Dialects(t, media.options(t, platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "owner@studio.example", "Owner")
		onboard(t, s, &owner, "Studio")
		members := map[string]person{"OWNER": owner}
		for _, role := range []string{"ADMIN", "CREATOR", "MODERATOR", "VIEWER"} {
			email := "role-" + role + "@studio.example"
			members[role] = join(t, s, email, role, invite(t, s, owner, email, role))
		}
		email := "second-creator@studio.example"
		members["another CREATOR"] = join(t, s, email, "Second", invite(t, s, owner, email, "CREATOR"))
		pub := sbmOpenProject(t, s, members["CREATOR"], "public")
		// Two MEMBERs hold a template on the project: a project_lead and a
		// collaborator.
		for _, tpl := range []string{"project_lead", "collaborator"} {
			email := tpl + "@studio.example"
			m := join(t, s, email, tpl, invite(t, s, owner, email, "MEMBER"))
			r := s.Do(platformtest.Request{Method: http.MethodPut, Path: "/api/v1/projects/" + pub.ID + "/members/" + m.userID,
				Cookie: owner.cookie, Body: map[string]string{"template": tpl}})
			if r.Status != http.StatusOK {
				t.Fatalf("make %s a %s: %d %s", email, tpl, r.Status, r.Body)
			}
			members["a "+tpl] = m
		}
		creator := signIn(t, s, "creator@elsewhere.example", "Creator")
		onboard(t, s, &creator, "Elsewhere")

		keys := map[string]platformtest.Request{}
		for name, scopes := range map[string][]string{"an API key with read": {"read"}, "an API key with projects:write": {"read", "projects:write"}} {
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/api-keys", Cookie: owner.cookie,
				Body: map[string]any{"name": name, "scopes": scopes, "environment": "live"}})
			if r.Status != http.StatusCreated {
				t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
			}
			var ks api.KeySecret
			r.Data(t, &ks)
			keys[name] = platformtest.Request{Key: ks.Secret}
		}
		callers := map[string]platformtest.Request{}
		for name, m := range members {
			callers[name] = platformtest.Request{Cookie: m.cookie}
		}
		for name, req := range keys {
			callers[name] = req
		}
		may := map[string]bool{"OWNER": true, "ADMIN": true, "CREATOR": true, "a project_lead": true}
		for name, req := range callers {
			sub := sbmSubmit(t, s, creator, pub.ID, media.base+"/cover.png")
			r := sbmReview(s, req, sub.ID, project.SubmissionUnderReview, "")
			if may[name] && r.Status != http.StatusOK {
				t.Errorf("%s starts a review: %d %s, want 200", name, r.Status, r.Body)
			}
			if !may[name] && (r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED") {
				t.Errorf("%s starts a review: %d %s, want 403 ACCESS_DENIED", name, r.Status, r.Body)
			}
			if !may[name] {
				if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE id = ? AND status = 'SUBMITTED' AND version = 1`, sub.ID); n != 1 {
					t.Errorf("%s's refused review changed the submission", name)
				}
			}
		}
		// The workspace's members whose project.read reaches the project
		// (a collaborator's reaches the project it is assigned to) read
		// its submissions. A MODERATOR cannot decide one either.
		sub := sbmSubmit(t, s, creator, pub.ID, media.base+"/cover.png")
		sbmProbed(t, s, creator, sub.ID)
		for name, m := range members {
			if r := sbmGet(s, platformtest.Request{Cookie: m.cookie}, sub.ID); r.Status != http.StatusOK {
				t.Errorf("%s reads a submission to the workspace's project: %d %s", name, r.Status, r.Body)
			}
		}
		if r := sbmReview(s, platformtest.Request{Cookie: owner.cookie}, sub.ID, project.SubmissionUnderReview, ""); r.Status != http.StatusOK {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		if r := sbmReview(s, callers["MODERATOR"], sub.ID, project.SubmissionAccepted, ""); r.Status != http.StatusForbidden {
			t.Errorf("a MODERATOR accepts: %d %s", r.Status, r.Body)
		}
		if r := sbmReview(s, callers["ADMIN"], sub.ID, project.SubmissionAccepted, "Welcome."); r.Status != http.StatusOK {
			t.Errorf("an ADMIN accepts: %d %s", r.Status, r.Body)
		}
	})
}
