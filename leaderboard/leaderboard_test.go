package leaderboard

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/policy"
)

// TestScoringValidate: the window and every weight are bounded, at least
// one signal is weighted, and an unknown signal is refused, each naming
// its field.
func TestScoringValidate(t *testing.T) {
	if err := DefaultScoring().Validate(); err != nil {
		t.Fatalf("the default: %v", err)
	}
	w := func(m map[Signal]int64) map[Signal]int64 { return m }
	for _, c := range []struct {
		s     Scoring
		field string
	}{
		{Scoring{WindowDays: 0, Weights: w(map[Signal]int64{SignalReleasesLive: 1})}, "windowDays"},
		{Scoring{WindowDays: MaxWindowDays + 1, Weights: w(map[Signal]int64{SignalReleasesLive: 1})}, "windowDays"},
		{Scoring{WindowDays: 7}, "weights"},
		{Scoring{WindowDays: 7, Weights: w(map[Signal]int64{})}, "weights"},
		{Scoring{WindowDays: 7, Weights: w(map[Signal]int64{"plays": 3})}, "weights.plays"},
		{Scoring{WindowDays: 7, Weights: w(map[Signal]int64{SignalReleasesLive: 0})}, "weights.releases_live"},
		{Scoring{WindowDays: 7, Weights: w(map[Signal]int64{SignalReleasesLive: -2})}, "weights.releases_live"},
		{Scoring{WindowDays: 7, Weights: w(map[Signal]int64{SignalReleasesLive: MaxWeight + 1})}, "weights.releases_live"},
	} {
		err := c.s.Validate()
		if !fault.Is(err, fault.InvalidInput) {
			t.Errorf("%+v: %v, want INVALID_INPUT", c.s, err)
			continue
		}
		if _, _, d := fault.Public(err); d["field"] != c.field {
			t.Errorf("%+v: field %v, want %s", c.s, d["field"], c.field)
		}
	}
	ok := Scoring{WindowDays: MaxWindowDays, Weights: map[Signal]int64{SignalSoundOperationsCompleted: MaxWeight, SignalReleasesLive: 1}}
	if err := ok.Validate(); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
}

// TestScoringBreakdownAndWindow: a score is the sum of weight times count
// over the policy's signals, listed in the order of Signals, a missing
// count counting zero; the window ends at asOf and spans WindowDays days.
func TestScoringBreakdownAndWindow(t *testing.T) {
	s := Scoring{WindowDays: 30, Weights: map[Signal]int64{SignalGenerationsCompleted: 1, SignalReleasesLive: 10, SignalSubmissionsAccepted: 5}}
	terms, score := s.Breakdown(map[Signal]int64{SignalSubmissionsAccepted: 2, SignalGenerationsCompleted: 7, SignalSoundOperationsCompleted: 99})
	want := []Term{{SignalSubmissionsAccepted, 2, 5, 10}, {SignalReleasesLive, 0, 10, 0}, {SignalGenerationsCompleted, 7, 1, 7}}
	if diff := cmp.Diff(want, terms); diff != "" || score != 17 {
		t.Errorf("breakdown (-want +got):\n%s score %d, want 17", diff, score)
	}
	asOf := time.Date(2026, 3, 31, 0, 0, 0, 0, time.FixedZone("x", 3600))
	start, end := s.Window(asOf)
	if !end.Equal(asOf) || end.Location() != time.UTC || !start.Equal(asOf.AddDate(0, 0, -30)) {
		t.Errorf("window (%s, %s]", start, end)
	}
}

// TestRank: each workspace is ranked apart; scores are weighted sums;
// equal scores share a rank and the next rank skips their places
// (1, 2, 2, 4); users whose counts score nothing, signals the policy does
// not weight and non-positive counts are left out.
func TestRank(t *testing.T) {
	s := Scoring{WindowDays: 30, Weights: map[Signal]int64{SignalReleasesLive: 10, SignalSubmissionsAccepted: 5}}
	c := func(ws, user string, n int64) Count {
		return Count{TenantID: "ten_1", WorkspaceID: ws, UserID: user, N: n}
	}
	counts := map[Signal][]Count{
		SignalReleasesLive:         {c("ws_1", "usr_a", 1), c("ws_1", "usr_d", 1), c("ws_2", "usr_a", 1), c("ws_1", "usr_z", 0)},
		SignalSubmissionsAccepted:  {c("ws_1", "usr_a", 2), c("ws_1", "usr_b", 2), c("ws_1", "usr_c", 2), c("ws_1", "usr_e", 1), c("ws_1", "usr_y", -3)},
		SignalGenerationsCompleted: {c("ws_1", "usr_x", 50)},
	}
	got := Rank("lbs_1", access.Live, s, counts)
	type row struct {
		ws, user string
		score    int64
		rank     int
	}
	var rows []row
	for _, e := range got {
		if e.SnapshotID != "lbs_1" || e.Scope.Environment != access.Live || e.Scope.TenantID != "ten_1" {
			t.Errorf("entry %+v", e)
		}
		if len(e.Counts) != 2 {
			t.Errorf("%s counts %v: want the policy's two signals", e.UserID, e.Counts)
		}
		rows = append(rows, row{e.Scope.WorkspaceID, e.UserID, e.Score, e.Rank})
	}
	want := []row{
		{"ws_1", "usr_a", 20, 1}, // 10 + 2*5
		{"ws_1", "usr_b", 10, 2},
		{"ws_1", "usr_c", 10, 2},
		{"ws_1", "usr_d", 10, 2},
		{"ws_1", "usr_e", 5, 5},
		{"ws_2", "usr_a", 10, 1},
	}
	if diff := cmp.Diff(want, rows, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}
	if n := workspaces(got); n != 2 {
		t.Errorf("workspaces = %d, want 2", n)
	}
	if e := Rank("lbs_2", access.Test, s, nil); len(e) != 0 {
		t.Errorf("no counts ranked %v", e)
	}
}

// fakeStore is an in-memory SourceStore, Store and ReadStore.
type fakeStore struct {
	mu       sync.Mutex
	now      time.Time
	seq      int
	versions []policy.Version
	counts   map[access.Environment]map[Signal][]Count
	asked    []string
	snaps    []Snapshot
	entries  []Entry
	jobs     []jobs.InsertParams
}

func (f *fakeStore) NewID(prefix string) string { f.seq++; return fmt.Sprintf("%s%04d", prefix, f.seq) }
func (f *fakeStore) Now() time.Time             { return f.now }

func (f *fakeStore) PolicyInsert(_ context.Context, v policy.Version) (policy.Version, bool, error) {
	for _, o := range f.versions {
		if o.Scope == v.Scope && o.ID == v.ID && o.Version == v.Version {
			return policy.Version{}, false, nil
		}
	}
	v.CreatedAt = f.now
	f.versions = append(f.versions, v)
	return v, true, nil
}

func (f *fakeStore) PolicyCurrent(_ context.Context, s policy.Scope, id string) (policy.Version, error) {
	var cur policy.Version
	for _, v := range f.versions {
		if v.Scope == s && v.ID == id && v.Version > cur.Version {
			cur = v
		}
	}
	if cur.Version == 0 {
		return policy.Version{}, fault.E("fake", fault.NotFound, "")
	}
	return cur, nil
}

func (f *fakeStore) PolicyGet(_ context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	for _, v := range f.versions {
		if v.Scope == s && v.ID == id && v.Version == version {
			return v, nil
		}
	}
	return policy.Version{}, fault.E("fake", fault.NotFound, "")
}

func (f *fakeStore) PolicyHistory(context.Context, policy.Scope, string, policy.HistoryParams) ([]policy.Version, error) {
	return nil, nil
}

func (f *fakeStore) LeaderboardCounts(_ context.Context, env access.Environment, sig Signal, start, end time.Time) ([]Count, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s %s %s..%s", env, sig, start.Format(time.RFC3339), end.Format(time.RFC3339)))
	return f.counts[env][sig], nil
}

func (f *fakeStore) LeaderboardSnapshotInsert(_ context.Context, s Snapshot, entries []Entry) (bool, error) {
	for _, o := range f.snaps {
		if o.Environment == s.Environment && o.WindowEnd.Equal(s.WindowEnd) {
			return false, nil
		}
	}
	f.snaps = append(f.snaps, s)
	f.entries = append(f.entries, entries...)
	return true, nil
}

func (f *fakeStore) LeaderboardLatest(_ context.Context, env access.Environment) (Snapshot, error) {
	var out *Snapshot
	for i, s := range f.snaps {
		if s.Environment == env && (out == nil || s.WindowEnd.After(out.WindowEnd)) {
			out = &f.snaps[i]
		}
	}
	if out == nil {
		return Snapshot{}, fault.E("fake", fault.NotFound, "")
	}
	return *out, nil
}

func (f *fakeStore) LeaderboardStanding(_ context.Context, id string, sc access.Scope, user string) (Standing, error) {
	var out Standing
	for _, e := range f.entries {
		if e.SnapshotID == id && e.Scope == sc {
			out.Ranked++
		}
	}
	for _, e := range f.entries {
		if e.SnapshotID == id && e.Scope == sc && e.UserID == user {
			out.Entry = &e
		}
	}
	if out.Entry != nil {
		for _, e := range f.entries {
			if e.SnapshotID == id && e.Scope == sc && e.UserID != user && e.Rank == out.Entry.Rank {
				out.TiedWith++
			}
		}
	}
	return out, nil
}

func (f *fakeStore) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	for _, j := range f.jobs {
		if j.UniqueKey == p.UniqueKey {
			return false, nil
		}
	}
	f.jobs = append(f.jobs, p)
	return true, nil
}

func newService(t *testing.T, f *fakeStore) *Service {
	t.Helper()
	svc, err := New(Config{
		RunFunc: func(ctx context.Context, fn func(st Store) error) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			return fn(f)
		},
		ReadFunc: func() SourceStore { return f },
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestComputeAndExplain: with no snapshot the explanation says so and
// nothing else; the first computation publishes the default scoring as
// version 1 and ranks under it; the same window is written once; a caller
// without a counted row is not ranked, with the snapshot's context; a new
// policy version changes the next snapshot and leaves the first as it was
// computed; another workspace or environment reads its own leaderboard.
func TestComputeAndExplain(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ws1 := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}
	c := func(ws, user string, n int64) Count {
		return Count{TenantID: "ten_1", WorkspaceID: ws, UserID: user, N: n}
	}
	f := &fakeStore{now: t0, counts: map[access.Environment]map[Signal][]Count{access.Live: {
		SignalSubmissionsAccepted:      {c("ws_1", "usr_a", 1), c("ws_1", "usr_b", 1)},
		SignalReleasesLive:             {c("ws_1", "usr_a", 1)},
		SignalSoundOperationsCompleted: {c("ws_1", "usr_b", 4)},
	}}}
	svc := newService(t, f)
	as := func(user string, sc access.Scope) *access.Principal {
		return &access.Principal{Kind: access.CredentialSession, TenantID: sc.TenantID, WorkspaceID: sc.WorkspaceID,
			Environment: sc.Environment, UserID: user}
	}

	e, err := svc.Explain(ctx, f, as("usr_a", ws1))
	if err != nil || e.Status != StatusNoSnapshot || e.Snapshot != nil || e.Entry != nil || e.Terms != nil || e.Ranked != 0 {
		t.Fatalf("before any snapshot: %+v %v", e, err)
	}
	if _, err := svc.Explain(ctx, f, nil); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("no principal: %v", err)
	}

	first, inserted, err := svc.Compute(ctx, access.Live, t0)
	if err != nil || !inserted {
		t.Fatalf("compute: %v %v", inserted, err)
	}
	v1, err := policy.Current(ctx, f, policy.Scope{Environment: access.Live}, PolicyID)
	if err != nil || v1.Version != 1 || v1.CreatedBy != Publisher {
		t.Fatalf("the seeded default: %+v %v", v1, err)
	}
	if first.Policy != v1.Ref() || !first.WindowEnd.Equal(t0) || !first.WindowStart.Equal(t0.AddDate(0, 0, -30)) ||
		first.Subjects != 2 || first.Workspaces != 1 || !first.ComputedAt.Equal(t0) || !strings.HasPrefix(first.ID, IDPrefix) {
		t.Fatalf("first snapshot %+v", first)
	}
	// The default weighs no sound operation: it was never counted.
	if slices.ContainsFunc(f.asked, func(s string) bool { return strings.Contains(s, string(SignalSoundOperationsCompleted)) }) {
		t.Errorf("counted an unweighted signal: %v", f.asked)
	}
	if _, again, err := svc.Compute(ctx, access.Live, t0); err != nil || again || len(f.snaps) != 1 {
		t.Fatalf("the same window again: %v %v, %d snapshots", again, err, len(f.snaps))
	}

	e, err = svc.Explain(ctx, f, as("usr_a", ws1))
	if err != nil || e.Status != StatusRanked || e.Snapshot.ID != first.ID || e.Ranked != 2 || e.Entry.Rank != 1 ||
		e.Entry.Score != 15 || e.TiedWith != 0 {
		t.Fatalf("usr_a: %+v %v", e, err)
	}
	want := []Term{{SignalSubmissionsAccepted, 1, 5, 5}, {SignalReleasesLive, 1, 10, 10}, {SignalGenerationsCompleted, 0, 1, 0}}
	if diff := cmp.Diff(want, e.Terms); diff != "" {
		t.Errorf("usr_a's terms (-want +got):\n%s", diff)
	}
	e, err = svc.Explain(ctx, f, as("usr_nobody", ws1))
	if err != nil || e.Status != StatusNotRanked || e.Snapshot == nil || e.Snapshot.ID != first.ID || e.Ranked != 2 ||
		e.Entry != nil || e.Terms != nil || e.Scoring.WindowDays != 30 {
		t.Fatalf("a caller without a row: %+v %v", e, err)
	}
	// usr_a in another workspace, and in test: not ranked there, or no snapshot.
	e, _ = svc.Explain(ctx, f, as("usr_a", access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Live}))
	if e.Status != StatusNotRanked || e.Ranked != 0 {
		t.Errorf("usr_a in ws_2: %+v", e)
	}
	e, _ = svc.Explain(ctx, f, as("usr_a", access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}))
	if e.Status != StatusNoSnapshot {
		t.Errorf("usr_a in test: %+v", e)
	}

	// Version 2 weighs sound operations: the next snapshot ranks usr_b
	// first; the first keeps version 1 and its scores.
	v2 := Scoring{WindowDays: 7, Weights: map[Signal]int64{SignalSubmissionsAccepted: 1, SignalSoundOperationsCompleted: 3}}
	if _, _, err := policy.Publish(ctx, f, policy.Scope{Environment: access.Live}, PolicyID, v2, "user:usr_admin"); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Hour)
	second, _, err := svc.Compute(ctx, access.Live, t1)
	if err != nil || second.Policy.Version != 2 || !second.WindowStart.Equal(t1.AddDate(0, 0, -7)) {
		t.Fatalf("second snapshot %+v %v", second, err)
	}
	e, _ = svc.Explain(ctx, f, as("usr_b", ws1))
	if e.Status != StatusRanked || e.Snapshot.ID != second.ID || e.Entry.Rank != 1 || e.Entry.Score != 13 || e.Scoring.WindowDays != 7 {
		t.Errorf("usr_b under v2: %+v", e)
	}
	for _, en := range f.entries {
		if en.SnapshotID == first.ID && en.UserID == "usr_b" && (en.Score != 5 || en.Rank != 2) {
			t.Errorf("the first snapshot's usr_b changed: %+v", en)
		}
	}
	if f.snaps[0].Policy.Version != 1 {
		t.Errorf("the first snapshot's policy: %+v", f.snaps[0].Policy)
	}
}

// TestSnapshotJob: an enqueued snapshot names its environment and time,
// once per time; the periodic run computes each environment as of the
// start of its period; a bad payload fails for good.
func TestSnapshotJob(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 34, 56, 0, time.UTC)
	f := &fakeStore{now: t0}
	svc := newService(t, f)
	ks := svc.Jobs()
	if len(ks) != 1 || ks[0].Name != JobSnapshot || ks[0].Class != jobs.ClassMaintenance || ks[0].Every != DefaultEvery {
		t.Fatalf("kinds %+v", ks)
	}
	asOf, err := svc.Enqueue(ctx, f, access.Test)
	if err != nil || !asOf.Equal(t0) {
		t.Fatalf("enqueue: %s %v", asOf, err)
	}
	if _, err := svc.Enqueue(ctx, f, access.Test); err != nil || len(f.jobs) != 1 {
		t.Fatalf("enqueued twice at one time: %d jobs, %v", len(f.jobs), err)
	}
	if _, err := svc.Enqueue(ctx, f, "staging"); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("an unknown environment: %v", err)
	}
	j := f.jobs[0]
	if j.Kind != JobSnapshot || j.UniqueKey != "leaderboard.snapshot:test:2026-03-01T12:34:56Z" {
		t.Errorf("job %+v", j)
	}
	if err := ks[0].HandlerFunc(ctx, jobs.Job{Kind: JobSnapshot, Payload: j.Payload, RunAt: t0}); err != nil {
		t.Fatal(err)
	}
	if len(f.snaps) != 1 || f.snaps[0].Environment != access.Test || !f.snaps[0].WindowEnd.Equal(t0) {
		t.Fatalf("enqueued run wrote %+v", f.snaps)
	}
	// The periodic run, retried later in its period.
	run := jobs.Next(JobSnapshot, DefaultEvery, t0)
	if err := ks[0].HandlerFunc(ctx, jobs.Job{Kind: JobSnapshot, Payload: []byte("{}"), RunAt: run.RunAt.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if len(f.snaps) != 3 || f.snaps[1].Environment != access.Test || f.snaps[2].Environment != access.Live ||
		!f.snaps[1].WindowEnd.Equal(run.RunAt) || !f.snaps[2].WindowEnd.Equal(run.RunAt) {
		t.Fatalf("periodic run wrote %+v", f.snaps[1:])
	}
	for _, p := range []string{`[`, `{"environment":"staging","asOf":"2026-03-01T00:00:00Z"}`, `{"environment":"live"}`} {
		err := ks[0].HandlerFunc(ctx, jobs.Job{Kind: JobSnapshot, Payload: []byte(p), RunAt: t0})
		if err == nil || !jobs.IsPermanent(err) {
			t.Errorf("payload %s: %v, want a permanent failure", p, err)
		}
	}
	var in payload
	if err := json.Unmarshal(j.Payload, &in); err != nil || in.Environment != access.Test || !in.AsOf.Equal(t0) {
		t.Errorf("payload %s", j.Payload)
	}
}
