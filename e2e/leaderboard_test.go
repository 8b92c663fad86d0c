package e2e_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/transport/api"
)

const explainPath = "/api/v1/leaderboard/me/explain"

// explain reads req's leaderboard position; the answer must be 200.
func explain(t *testing.T, s *platformtest.System, req platformtest.Request) api.LeaderboardExplanation {
	t.Helper()
	req.Method, req.Path = http.MethodGet, explainPath
	r := s.Do(req)
	if r.Status != http.StatusOK {
		t.Fatalf("explain as %s: %d %s", credentialName(req), r.Status, r.Body)
	}
	var v api.LeaderboardExplanation
	r.Data(t, &v)
	return v
}

// snapshotNow enqueues a snapshot of env through the operator's call and
// waits until its job has run; it returns the snapshot's time.
func snapshotNow(t *testing.T, s *platformtest.System, env access.Environment) time.Time {
	t.Helper()
	asOf, err := s.P.EnqueueLeaderboardSnapshot(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, s, leaderboard.JobSnapshot+":"+string(env)+":"+asOf.Format(time.RFC3339Nano))
	return asOf
}

// boardKey is a subject of a workspace's leaderboard.
type boardKey struct{ workspace, user string }

// boardRow is one row a signal counts, as the test reads it.
type boardRow struct {
	Workspace string     `bun:"workspace_id"`
	User      string     `bun:"user_id"`
	Status    string     `bun:"status"`
	At        *time.Time `bun:"at"`
}

// expectedBoard computes, from the stored rows of env, each subject's
// counts of the signals weights weighs in the window (asOf-days, asOf],
// its score and its competition rank in its workspace: what a snapshot
// must hold.
func expectedBoard(t *testing.T, s *platformtest.System, env access.Environment, days int, weights map[leaderboard.Signal]int64,
	asOf time.Time) map[boardKey]api.LeaderboardExplanation {
	t.Helper()
	start := asOf.AddDate(0, 0, -days)
	queries := map[leaderboard.Signal]struct{ q, status string }{
		leaderboard.SignalSubmissionsAccepted: {`SELECT submitter_workspace_id AS workspace_id, submitter_user_id AS user_id, status,
			reviewed_at AS at FROM submissions WHERE environment = ?`, "ACCEPTED"},
		leaderboard.SignalReleasesLive: {`SELECT workspace_id, created_by_user_id AS user_id, status, updated_at AS at FROM releases
			WHERE environment = ?`, "LIVE"},
		leaderboard.SignalGenerationsCompleted: {`SELECT workspace_id, created_by_user_id AS user_id, status, ended_at AS at
			FROM generation_operations WHERE environment = ?`, "completed"},
		leaderboard.SignalSoundOperationsCompleted: {`SELECT workspace_id, created_by_user_id AS user_id, status, ended_at AS at
			FROM sound_operations WHERE environment = ?`, "completed"},
	}
	counts := map[boardKey]map[leaderboard.Signal]int64{}
	for sig, w := range weights {
		if w == 0 {
			continue
		}
		var rows []boardRow
		if err := s.DB.Read().IDB().NewRaw(queries[sig].q, string(env)).Scan(context.Background(), &rows); err != nil {
			t.Fatalf("%s rows: %v", sig, err)
		}
		for _, r := range rows {
			if r.Status != queries[sig].status || r.At == nil || !r.At.After(start) || r.At.After(asOf) {
				continue
			}
			k := boardKey{r.Workspace, r.User}
			if counts[k] == nil {
				counts[k] = map[leaderboard.Signal]int64{}
			}
			counts[k][sig]++
		}
	}
	out := map[boardKey]api.LeaderboardExplanation{}
	for k, cs := range counts {
		var score int64
		v := api.LeaderboardExplanation{Status: "ranked", UserID: k.user, WorkspaceID: k.workspace, Environment: string(env)}
		for _, sig := range leaderboard.Signals() {
			if w, ok := weights[sig]; ok {
				v.Signals = append(v.Signals, api.LeaderboardSignalView{Signal: string(sig), Count: cs[sig], Weight: w, Points: w * cs[sig]})
				score += w * cs[sig]
			}
		}
		v.Score = &score
		out[k] = v
	}
	for k, v := range out {
		rank, tied := 1, 0
		for o, ov := range out {
			switch {
			case o == k || o.workspace != k.workspace:
			case *ov.Score > *v.Score:
				rank++
			case *ov.Score == *v.Score:
				tied++
			}
		}
		v.Rank, v.TiedWith = &rank, &tied
		out[k] = v
	}
	return out
}

// rankedIn counts the subjects of workspace in a board.
func rankedIn(board map[boardKey]api.LeaderboardExplanation, workspace string) int {
	n := 0
	for k := range board {
		if k.workspace == workspace {
			n++
		}
	}
	return n
}

// TestLeaderboardExplain: an empty system says no_snapshot; a snapshot
// of a system without activity says not_ranked with its context; after
// real activity through the routes (accepted submissions, releases gone
// live, a sound operation) each caller's rank, score, ties and signal
// counts equal what the test computes from the stored rows, per
// workspace and environment; a new scoring policy version changes the
// next snapshot and leaves the old one as it was; another tenant and the
// other environment read only their own; a key without scope read and an
// anonymous caller are refused; and no read writes anything.
func TestLeaderboardExplain(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		owner, m := team(t, s, "board", map[string]string{"maya": "CREATOR", "val": "MEMBER", "ida": "MEMBER"})
		maya, val, ida := m["maya"], m["val"], m["ida"]
		ws := authContext(t, s, owner.cookie).Workspace.ID
		rival := signIn(t, s, "rival@elsewhere.example", "Rival")
		rivalWS := onboard(t, s, &rival, "Elsewhere")
		live := func(p person) platformtest.Request { return platformtest.Request{Cookie: p.cookie} }
		inTest := func(p person) platformtest.Request {
			return platformtest.Request{Cookie: p.cookie, Header: map[string]string{"Platform-Environment": "test"}}
		}

		// Nothing computed yet: no snapshot, no rank, no score.
		for _, req := range []platformtest.Request{live(owner), inTest(owner), live(rival), {Key: s.Boot.TestKey}} {
			v := explain(t, s, req)
			if v.Status != "no_snapshot" || v.Snapshot != nil || v.Rank != nil || v.Score != nil || v.TiedWith != nil || v.Signals != nil ||
				v.Object != "leaderboard_explanation" {
				t.Errorf("empty system as %s: %+v", credentialName(req), v)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id = ?`, leaderboard.PolicyID); n != 2 {
			t.Errorf("%d scoring policy versions seeded, want one per environment", n)
		}

		// A snapshot of a system without activity: not ranked, with the
		// snapshot's context.
		s.Clock.Advance(time.Minute)
		quiet := snapshotNow(t, s, access.Live)
		v := explain(t, s, live(owner))
		if v.Status != "not_ranked" || v.Rank != nil || v.Score != nil || v.Signals != nil || v.Snapshot == nil ||
			v.Snapshot.RankedSubjects != 0 || !v.Snapshot.WindowEnd.Equal(quiet) || !v.Snapshot.WindowStart.Equal(quiet.AddDate(0, 0, -30)) ||
			v.Snapshot.WindowDays != 30 || v.Snapshot.Policy.ID != leaderboard.PolicyID || v.Snapshot.Policy.Version != 1 ||
			len(v.Snapshot.Weights) != 3 || v.UserID != owner.userID || v.WorkspaceID != ws || v.Environment != "live" {
			t.Fatalf("after a quiet snapshot: %+v", v)
		}
		if v := explain(t, s, inTest(owner)); v.Status != "no_snapshot" {
			t.Errorf("test mode after a live snapshot: %+v", v)
		}

		// Real activity, through the routes.
		pub := sbmOpenProject(t, s, owner, "public")
		n := 0
		upload := func(p person, env access.Environment) string {
			t.Helper()
			n++
			k := n
			req := platformtest.Request{Method: http.MethodPost, Path: "/api/v1/assets", Cookie: p.cookie,
				Body: pcmWAV(8000, 800, func(int) float64 { return 0.01 * float64(k) }), Header: map[string]string{"Content-Type": "audio/wav"}}
			if env == access.Test {
				req.Header["Platform-Environment"] = "test"
			}
			r := s.Do(req)
			if r.Status != http.StatusCreated {
				t.Fatalf("upload as %s: %d %s", p.email, r.Status, r.Body)
			}
			var a api.AssetView
			r.Data(t, &a)
			return a.ID
		}
		submit := func(p person, to project.SubmissionStatus) {
			t.Helper()
			s.Clock.Advance(time.Millisecond)
			r := sbmCreate(s, live(p), map[string]any{"projectId": pub.ID, "type": "audio", "title": "Take", "assetId": upload(p, access.Live)})
			if r.Status != http.StatusCreated {
				t.Fatalf("submit as %s: %d %s", p.email, r.Status, r.Body)
			}
			var sub api.SubmissionView
			r.Data(t, &sub)
			sbmDecide(t, s, owner, sub.ID, to)
		}
		releaseTo := func(by person, env access.Environment, to release.Status) {
			t.Helper()
			n++
			r := as(s, by, env, http.MethodPost, "/api/v1/releases", fmt.Sprintf("lb-rel-%d", n), releaseBody(s, "asset", upload(by, env)))
			if r.Status != http.StatusCreated {
				t.Fatalf("release as %s: %d %s", by.email, r.Status, r.Body)
			}
			var rel api.ReleaseView
			r.Data(t, &rel)
			for _, st := range []release.Status{release.StatusScheduled, release.StatusSubmitted, release.StatusLive} {
				r := as(s, owner, env, http.MethodPost, "/api/v1/releases/"+rel.ID+"/status", "", map[string]string{"status": string(st)})
				if r.Status != http.StatusOK {
					t.Fatalf("move %s to %s: %d %s", rel.ID, st, r.Status, r.Body)
				}
				if st == to {
					return
				}
			}
		}
		submit(owner, project.SubmissionAccepted)
		releaseTo(owner, access.Live, release.StatusLive)
		submit(maya, project.SubmissionAccepted)
		submit(maya, project.SubmissionAccepted)
		submit(maya, project.SubmissionRejected)
		releaseTo(maya, access.Live, release.StatusLive)
		releaseTo(maya, access.Live, release.StatusSubmitted)
		for range 3 {
			submit(val, project.SubmissionAccepted)
		}
		submit(rival, project.SubmissionAccepted)
		releaseTo(owner, access.Test, release.StatusLive)
		// A sound operation the default policy does not weigh.
		r := as(s, maya, access.Live, http.MethodPost, "/api/v1/sound/analyze", "lb-analyze",
			map[string]any{"input": map[string]any{"assetId": upload(maya, access.Live)}})
		if r.Status != http.StatusAccepted {
			t.Fatalf("analyze: %d %s", r.Status, r.Body)
		}
		var op api.SoundOperationView
		r.Data(t, &op)
		waitFor(t, "analysis "+op.ID, func() bool {
			as(s, maya, access.Live, http.MethodGet, "/api/v1/sound/operations/"+op.ID, "", nil).Data(t, &op)
			return op.Status == "completed"
		})

		s.Clock.Advance(time.Minute)
		asOf := snapshotNow(t, s, access.Live)
		weights := leaderboard.DefaultScoring().Weights
		want := expectedBoard(t, s, access.Live, 30, weights, asOf)
		// The seeding made a tie: the rows, not the test, say so.
		if w := want[boardKey{ws, val.userID}]; w.Score == nil || *w.TiedWith == 0 {
			t.Fatalf("the seeded rows hold no tie: %+v", want)
		}
		check := func(what string, req platformtest.Request, p person, workspace string, board map[boardKey]api.LeaderboardExplanation,
			policyVersion int) api.LeaderboardExplanation {
			t.Helper()
			got := explain(t, s, req)
			w, ranked := board[boardKey{workspace, p.userID}]
			if !ranked {
				w = api.LeaderboardExplanation{Status: "not_ranked", UserID: p.userID, WorkspaceID: workspace, Environment: got.Environment}
			}
			w.Object = "leaderboard_explanation"
			if got.Snapshot == nil || got.Snapshot.Policy.Version != policyVersion || got.Snapshot.RankedSubjects != rankedIn(board, workspace) {
				t.Errorf("%s: snapshot %+v, want policy v%d and %d ranked", what, got.Snapshot, policyVersion, rankedIn(board, workspace))
			}
			snap := got.Snapshot
			got.Snapshot = nil
			if !equalExplanations(got, w) {
				t.Errorf("%s:\n got %s\nwant %s", what, describe(got), describe(w))
			}
			got.Snapshot = snap
			return got
		}
		ranked := check("the owner", live(owner), owner, ws, want, 1)
		check("maya", live(maya), maya, ws, want, 1)
		check("val, a MEMBER", live(val), val, ws, want, 1)
		check("ida, without a counted row", live(ida), ida, ws, want, 1)
		other := check("the rival tenant", live(rival), rival, rivalWS, want, 1)
		if other.Snapshot.ID != ranked.Snapshot.ID || other.Rank == nil || *other.Rank != 1 || other.Snapshot.RankedSubjects != 1 {
			t.Errorf("the rival reads %+v", other)
		}
		if ranked.Snapshot.ComputedAt.Before(asOf) || !ranked.Snapshot.WindowEnd.Equal(asOf) {
			t.Errorf("snapshot times %+v, as of %s", ranked.Snapshot, asOf)
		}
		// An API key reads its creator's position; one without scope read,
		// and an anonymous caller, are refused.
		readKey := as(s, owner, access.Live, http.MethodPost, "/api/v1/api-keys", "", map[string]any{"name": "reader", "scopes": []string{"read"}})
		narrowKey := as(s, owner, access.Live, http.MethodPost, "/api/v1/api-keys", "", map[string]any{"name": "keys", "scopes": []string{"keys:read"}})
		var rk, nk api.KeySecret
		readKey.Data(t, &rk)
		narrowKey.Data(t, &nk)
		if readKey.Status != http.StatusCreated || narrowKey.Status != http.StatusCreated {
			t.Fatalf("keys: %d %s; %d %s", readKey.Status, readKey.Body, narrowKey.Status, narrowKey.Body)
		}
		check("the owner's read key", platformtest.Request{Key: rk.Secret}, owner, ws, want, 1)
		refused(t, "a key without scope read", s.Do(platformtest.Request{Method: http.MethodGet, Path: explainPath, Key: nk.Secret}),
			http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "an anonymous caller", s.Do(platformtest.Request{Method: http.MethodGet, Path: explainPath}),
			http.StatusUnauthorized, "UNAUTHENTICATED")

		// The other environment: nothing of live, then its own snapshot.
		if v := explain(t, s, inTest(owner)); v.Status != "no_snapshot" {
			t.Errorf("test mode before a test snapshot: %+v", v)
		}
		s.Clock.Advance(time.Minute)
		testAsOf := snapshotNow(t, s, access.Test)
		wantTest := expectedBoard(t, s, access.Test, 30, weights, testAsOf)
		if len(wantTest) != 1 {
			t.Fatalf("the test rows rank %d subjects, want the owner's test release alone", len(wantTest))
		}
		check("the owner in test mode", inTest(owner), owner, ws, wantTest, 1)
		if v := explain(t, s, platformtest.Request{Key: s.Boot.TestKey}); v.Status != "not_ranked" || v.Snapshot.RankedSubjects != 0 {
			t.Errorf("the bootstrap tenant's test key: %+v", v)
		}
		check("the owner in live after the test snapshot", live(owner), owner, ws, want, 1)

		// Reads write nothing, and grant nothing.
		tables := []string{"leaderboard_snapshots", "leaderboard_entries", "jobs", "outbox_events", "audit_events", "policy_versions",
			"rewards", "ledger_postings", "entitlements", "marketplace_entitlements"}
		counts := func() map[string]int {
			out := map[string]int{}
			for _, tb := range tables {
				out[tb] = count(t, s, `SELECT COUNT(*) FROM `+tb)
			}
			return out
		}
		before := counts()
		for _, req := range []platformtest.Request{live(owner), live(maya), live(ida), inTest(owner), live(rival), {Key: rk.Secret},
			{Key: nk.Secret}, {}} {
			req.Method, req.Path = http.MethodGet, explainPath
			s.Do(req)
		}
		if after := counts(); !maps.Equal(before, after) {
			t.Errorf("reads changed rows: before %v, after %v", before, after)
		}

		// A new policy version: the next snapshot applies it, the last
		// keeps version 1 and its scores.
		if err := s.P.GrantSuperAdmin(ctx, owner.email); err != nil {
			t.Fatal(err)
		}
		owner.cookie, _ = s.Login(owner.email, testPassword)
		v2 := `{"windowDays":7,"weights":{"submissions_accepted":1,"releases_live":2,"sound_operations_completed":3}}`
		pr := publishPolicy(s, live(owner), "lb-v2", leaderboard.PolicyID, v2)
		var pv api.PolicyVersionView
		pr.Data(t, &pv)
		if pr.Status != http.StatusCreated || pv.Version != 2 {
			t.Fatalf("publish v2: %d %s", pr.Status, pr.Body)
		}
		refused(t, "a weight out of bounds", publishPolicy(s, live(owner), "lb-bad", leaderboard.PolicyID,
			`{"windowDays":7,"weights":{"releases_live":0}}`), http.StatusBadRequest, "INVALID_INPUT", "field", "weights.releases_live")
		refused(t, "an unknown signal", publishPolicy(s, live(owner), "lb-plays", leaderboard.PolicyID,
			`{"windowDays":7,"weights":{"plays":1}}`), http.StatusBadRequest, "INVALID_INPUT", "field", "weights.plays")
		refused(t, "a creator without super_admin publishing", publishPolicy(s, live(maya), "lb-maya", leaderboard.PolicyID, v2),
			http.StatusForbidden, "ACCESS_DENIED")
		var cur api.PolicyVersionView
		if r := currentPolicy(s, live(val), leaderboard.PolicyID); r.Status != http.StatusOK {
			t.Errorf("a MEMBER reads the scoring policy: %d %s", r.Status, r.Body)
		} else if r.Data(t, &cur); cur.Version != 2 || cur.Hash != pv.Hash {
			t.Errorf("the current scoring policy: %+v", cur)
		}
		if v := check("the owner before the next snapshot", live(owner), owner, ws, want, 1); v.Snapshot.ID != ranked.Snapshot.ID {
			t.Errorf("a policy publication changed the snapshot read: %+v", v.Snapshot)
		}
		s.Clock.Advance(time.Minute)
		asOf3 := snapshotNow(t, s, access.Live)
		want3 := expectedBoard(t, s, access.Live, 7, map[leaderboard.Signal]int64{leaderboard.SignalSubmissionsAccepted: 1,
			leaderboard.SignalReleasesLive: 2, leaderboard.SignalSoundOperationsCompleted: 3}, asOf3)
		for who, p := range map[string]person{"the owner": owner, "maya": maya, "val": val, "ida": ida} {
			v := check(who+" under v2", live(p), p, ws, want3, 2)
			if v.Snapshot.WindowDays != 7 || !v.Snapshot.WindowStart.Equal(asOf3.AddDate(0, 0, -7)) || len(v.Snapshot.Weights) != 3 ||
				v.Snapshot.Weights[2].Signal != "sound_operations_completed" || v.Snapshot.Weights[2].Weight != 3 {
				t.Errorf("%s's v2 snapshot context: %+v", who, v.Snapshot)
			}
		}
		var old struct {
			Version int `bun:"policy_version"`
		}
		if err := s.DB.Read().IDB().NewRaw(`SELECT policy_version FROM leaderboard_snapshots WHERE id = ?`, ranked.Snapshot.ID).
			Scan(ctx, &old); err != nil || old.Version != 1 {
			t.Errorf("the earlier snapshot's policy version: %d %v", old.Version, err)
		}
		var entries []struct {
			Workspace string `bun:"workspace_id"`
			User      string `bun:"user_id"`
			Score     int64  `bun:"score"`
			Rank      int    `bun:"subject_rank"`
		}
		if err := s.DB.Read().IDB().NewRaw(`SELECT workspace_id, user_id, score, subject_rank FROM leaderboard_entries WHERE snapshot_id = ?`,
			ranked.Snapshot.ID).Scan(ctx, &entries); err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(want) {
			t.Errorf("the earlier snapshot holds %d entries, want %d", len(entries), len(want))
		}
		for _, e := range entries {
			if w := want[boardKey{e.Workspace, e.User}]; w.Score == nil || *w.Score != e.Score || *w.Rank != e.Rank {
				t.Errorf("the earlier snapshot's %s: score %d rank %d, want %+v", e.User, e.Score, e.Rank, w)
			}
		}
	})
}

// equalExplanations compares two explanations without their snapshots.
func equalExplanations(a, b api.LeaderboardExplanation) bool {
	eqInt := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eq64 := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Object == b.Object && a.Status == b.Status && a.UserID == b.UserID && a.WorkspaceID == b.WorkspaceID &&
		a.Environment == b.Environment && eqInt(a.Rank, b.Rank) && eq64(a.Score, b.Score) && eqInt(a.TiedWith, b.TiedWith) &&
		(a.Signals == nil) == (b.Signals == nil) && slices.Equal(a.Signals, b.Signals)
}

// describe prints an explanation's position.
func describe(v api.LeaderboardExplanation) string {
	val := func(p any) string {
		switch x := p.(type) {
		case *int:
			if x != nil {
				return fmt.Sprint(*x)
			}
		case *int64:
			if x != nil {
				return fmt.Sprint(*x)
			}
		}
		return "null"
	}
	sigs := slices.Clone(v.Signals)
	slices.SortFunc(sigs, func(a, b api.LeaderboardSignalView) int { return cmp.Compare(a.Signal, b.Signal) })
	return fmt.Sprintf("%s %s/%s/%s rank %s score %s tied %s signals %v", v.Status, v.Environment, v.WorkspaceID, v.UserID,
		val(v.Rank), val(v.Score), val(v.TiedWith), sigs)
}

// TestLeaderboardSchedule: a host schedules the next period's snapshot
// when it starts; at that time the job computes each environment's as of
// the period's start, and plans the next.
func TestLeaderboardSchedule(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		next := jobs.Next(leaderboard.JobSnapshot, leaderboard.DefaultEvery, s.Clock.Now())
		if n := count(t, s, `SELECT COUNT(*) FROM jobs WHERE unique_key = ? AND kind = ? AND state = 'available'`, next.UniqueKey,
			leaderboard.JobSnapshot); n != 1 {
			t.Fatalf("%d scheduled snapshot jobs %s, want 1", n, next.UniqueKey)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM leaderboard_snapshots`); n != 0 {
			t.Fatalf("%d snapshots before the period starts", n)
		}
		s.Clock.Set(next.RunAt)
		waitJob(t, s, next.UniqueKey)
		for _, env := range []access.Environment{access.Test, access.Live} {
			if n := count(t, s, `SELECT COUNT(*) FROM leaderboard_snapshots WHERE environment = ? AND window_end = ? AND policy_version = 1`,
				string(env), next.RunAt); n != 1 {
				t.Errorf("%d %s snapshots as of %s, want 1", n, env, next.RunAt)
			}
		}
		after := jobs.Next(leaderboard.JobSnapshot, leaderboard.DefaultEvery, next.RunAt)
		waitFor(t, "the next period's snapshot job", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM jobs WHERE unique_key = ?`, after.UniqueKey) == 1
		})
		v := explain(t, s, platformtest.Request{Key: s.Boot.TestKey})
		if v.Status != "not_ranked" || v.Snapshot == nil || !v.Snapshot.WindowEnd.Equal(next.RunAt) || v.Environment != "test" {
			t.Errorf("the bootstrap key after the scheduled snapshot: %+v", v)
		}
	})
}
