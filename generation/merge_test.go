package generation

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/fault"
)

const (
	streamA = "https://cdn.example/stream/aaa"
	streamB = "https://cdn.example/stream/bbb"
	finalA  = "https://cdn.example/audio/aaa.mp3"
	finalB  = "https://cdn.example/audio/bbb.mp3"
)

func ptr(v int64) *int64 { return &v }

func obsText(src Source, key string) Observation {
	return Observation{Source: src, Key: key, State: TaskState{TaskID: "t1", Stage: StageText}}
}

// obsFirst carries track aaa with its stream link in audio_url (F8).
func obsFirst(key string) Observation {
	return Observation{Source: SourceCallback, Key: key, State: TaskState{TaskID: "t1", Stage: StageFirst, Tracks: []Track{
		{ProviderTrackID: "aaa", AudioURL: streamA, Title: "Song A"},
	}}}
}

// obsComplete carries both tracks, listed out of id order.
func obsComplete(src Source, key string, credits *int64) Observation {
	return Observation{Source: src, Key: key, State: TaskState{TaskID: "t1", Stage: StageProviderComplete, CreditsConsumed: credits, Tracks: []Track{
		{ProviderTrackID: "bbb", AudioURL: finalB, StreamURL: streamB, Title: "Song B", DurationMs: 120000},
		{ProviderTrackID: "aaa", AudioURL: finalA, StreamURL: streamA, Title: "Song A", DurationMs: 118000},
	}}}
}

func obsFailed(src Source, key string, refunded bool, credits *int64) Observation {
	return Observation{Source: src, Key: key, State: TaskState{TaskID: "t1", Stage: StageFailed,
		FailureCode: string(fault.ContentPolicyRejected), Refunded: refunded, CreditsConsumed: credits}}
}

func dispatched() Snapshot { return Snapshot{Status: StatusDispatched, Stage: StageQueued} }

// successSet is a task's success-side observations: callbacks with
// duplicates, a poll SUCCESS that reports the cost, and a stale first from
// a poll (carrying track bbb's stream link and a placeholder track, F10).
func successSet() []Observation {
	first := obsFirst("cb:first")
	complete := obsComplete(SourceCallback, "cb:complete", nil)
	return []Observation{
		obsText(SourceCallback, "cb:text"),
		first,
		first, // F1
		complete,
		complete, // F1
		obsComplete(SourcePoll, "", ptr(12)),
		{Source: SourcePoll, State: TaskState{TaskID: "t1", Stage: StageFirst, Tracks: []Track{
			{ProviderTrackID: "bbb", AudioURL: streamB},
			{ProviderTrackID: "None", AudioURL: "https://cdn.example/audio/None.mp3"},
		}}},
	}
}

// failureSet is a task's failure-side observations.
func failureSet() []Observation {
	failed := obsFailed(SourceCallback, "cb:error", false, nil)
	first := obsFirst("cb:first")
	return []Observation{
		obsText(SourceCallback, "cb:text"),
		first,
		first,
		failed,
		failed,
		obsFailed(SourcePoll, "", true, ptr(0)),
		obsText(SourcePoll, ""),
	}
}

// permute calls f with every order of 0..n-1 (Heap's algorithm).
func permute(n int, f func([]int)) {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	c := make([]int, n)
	f(a)
	for i := 0; i < n; {
		if c[i] < i {
			if i%2 == 0 {
				a[0], a[i] = a[i], a[0]
			} else {
				a[c[i]], a[i] = a[i], a[c[i]]
			}
			f(a)
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
}

// caller applies observations as the worker would: effects are collected,
// and ingestion results are fed back either at once or at the end.
type caller struct {
	snap    Snapshot
	effects []Effect
	pending []IngestTrack
	eager   bool
}

func (c *caller) take(effects []Effect) {
	for _, e := range effects {
		c.effects = append(c.effects, e)
		if in, ok := e.(IngestTrack); ok {
			c.pending = append(c.pending, in)
		}
	}
	if c.eager {
		c.ingest()
	}
}

func (c *caller) ingest() {
	p := c.pending
	c.pending = nil
	for _, in := range p {
		var effects []Effect
		c.snap, effects = Ingested(c.snap, in.Slot, "asset_"+in.ProviderTrackID)
		c.take(effects)
	}
}

func (c *caller) merge(o Observation) {
	next, effects := Merge(c.snap, o)
	c.snap = next
	c.take(effects)
}

func sortEffects(e []Effect) []string {
	s := make([]string, len(e))
	for i, x := range e {
		s[i] = fmt.Sprintf("%#v", x)
	}
	slices.Sort(s)
	return s
}

// runAll applies the set in every order, each order three ways (eager
// ingestion, ingestion at the end, and the order replayed twice), and
// checks every run against want.
func runAll(t *testing.T, start Snapshot, set []Observation, wantSnap Snapshot, wantEffects []Effect) {
	t.Helper()
	want := sortEffects(wantEffects)
	runs := 0
	permute(len(set), func(order []int) {
		if t.Failed() {
			return
		}
		for _, mode := range []string{"eager", "deferred", "replayed"} {
			c := &caller{snap: start, eager: mode == "eager"}
			for _, i := range order {
				c.merge(set[i])
			}
			if mode == "replayed" {
				for _, i := range order {
					c.merge(set[i])
				}
			}
			c.ingest()
			runs++
			if d := cmp.Diff(wantSnap, c.snap); d != "" {
				t.Errorf("%s order %v: snapshot (-want +got):\n%s", mode, order, d)
				return
			}
			if d := cmp.Diff(want, sortEffects(c.effects)); d != "" {
				t.Errorf("%s order %v: effects (-want +got):\n%s", mode, order, d)
				return
			}
		}
	})
	if !t.Failed() && runs != 3*factorial(len(set)) {
		t.Fatalf("ran %d orders", runs)
	}
}

func factorial(n int) int {
	if n <= 1 {
		return 1
	}
	return n * factorial(n-1)
}

func seenKeys(set []Observation) []string {
	var k []string
	for _, o := range set {
		if !slices.Contains(k, o.key()) {
			k = append(k, o.key())
		}
	}
	slices.Sort(k)
	return k
}

func TestMergeEveryOrderSuccess(t *testing.T) {
	set := successSet()
	want := Snapshot{
		Status:  StatusCompleted,
		Stage:   StageFinished,
		Outcome: OutcomeSucceeded,
		Outputs: []Output{
			{ProviderTrackID: "aaa", AudioURL: finalA, StreamURL: streamA, Title: "Song A", DurationMs: 118000, InfoStage: StageProviderComplete, Ingesting: true, AssetID: "asset_aaa"},
			{ProviderTrackID: "bbb", AudioURL: finalB, StreamURL: streamB, Title: "Song B", DurationMs: 120000, InfoStage: StageProviderComplete, Ingesting: true, AssetID: "asset_bbb"},
		},
		CreditsConsumed: ptr(12),
		Seen:            seenKeys(set),
	}
	effects := []Effect{
		IngestTrack{Slot: 0, ProviderTrackID: "aaa", URL: finalA},
		IngestTrack{Slot: 1, ProviderTrackID: "bbb", URL: finalB},
		ReconcileCost{Outcome: OutcomeSucceeded},
		SettleCredits{},
	}
	runAll(t, dispatched(), set, want, effects)
}

func TestMergeEveryOrderFailure(t *testing.T) {
	set := failureSet()
	want := Snapshot{
		Status:          StatusFailed,
		Stage:           StageFailed,
		Outcome:         OutcomeFailed,
		Outputs:         []Output{{ProviderTrackID: "aaa", StreamURL: streamA, Title: "Song A", InfoStage: StageFirst}},
		FailureCode:     string(fault.ContentPolicyRejected),
		Refunded:        true,
		CreditsConsumed: ptr(0),
		Seen:            seenKeys(set),
	}
	effects := []Effect{ReconcileCost{Outcome: OutcomeFailed}, ReleaseCredits{}}
	runAll(t, dispatched(), set, want, effects)
}

// A cancelled operation never ingests a late result, but its cost is still
// reconciled, in every order.
func TestMergeEveryOrderAfterCancel(t *testing.T) {
	start, effects, err := Cancel(dispatched())
	if err != nil || !slices.Equal(sortEffects(effects), sortEffects([]Effect{ReleaseCredits{}})) {
		t.Fatalf("Cancel = %v, %v", effects, err)
	}
	set := successSet()
	want := Snapshot{
		Status:  StatusCancelled,
		Stage:   StageProviderComplete,
		Outcome: OutcomeSucceeded,
		Outputs: []Output{
			{ProviderTrackID: "aaa", AudioURL: finalA, StreamURL: streamA, Title: "Song A", DurationMs: 118000, InfoStage: StageProviderComplete},
			{ProviderTrackID: "bbb", AudioURL: finalB, StreamURL: streamB, Title: "Song B", DurationMs: 120000, InfoStage: StageProviderComplete},
		},
		CreditsConsumed: ptr(12),
		Seen:            seenKeys(set),
	}
	runAll(t, start, set, want, []Effect{ReconcileCost{Outcome: OutcomeSucceeded}})
}

func mergeAll(t *testing.T, s Snapshot, obs ...Observation) (Snapshot, []Effect) {
	t.Helper()
	var all []Effect
	for _, o := range obs {
		var e []Effect
		s, e = Merge(s, o)
		all = append(all, e...)
	}
	return s, all
}

func TestMergeRules(t *testing.T) {
	complete := obsComplete(SourceCallback, "cb:complete", nil)
	tests := []struct {
		name        string
		start       Snapshot
		obs         []Observation
		wantStatus  Status
		wantStage   Stage
		wantEffects []Effect
		check       func(t *testing.T, s Snapshot)
	}{
		{
			name:       "text moves dispatched to processing",
			start:      dispatched(),
			obs:        []Observation{obsText(SourceCallback, "k")},
			wantStatus: StatusProcessing, wantStage: StageText,
		},
		{
			name:       "F8 first-stage audio_url is a stream link, never final",
			start:      dispatched(),
			obs:        []Observation{obsFirst("k")},
			wantStatus: StatusProcessing, wantStage: StageFirst,
			check: func(t *testing.T, s Snapshot) {
				if s.Outputs[0].AudioURL != "" || s.Outputs[0].StreamURL != streamA {
					t.Errorf("output = %+v", s.Outputs[0])
				}
			},
		},
		{
			name:       "F2 complete with no text or first ingests both slots by track id",
			start:      dispatched(),
			obs:        []Observation{complete},
			wantStatus: StatusProcessing, wantStage: StageIngesting,
			wantEffects: []Effect{
				ReconcileCost{Outcome: OutcomeSucceeded},
				IngestTrack{Slot: 0, ProviderTrackID: "aaa", URL: finalA},
				IngestTrack{Slot: 1, ProviderTrackID: "bbb", URL: finalB},
			},
		},
		{
			name:       "F2 first after complete changes no stage",
			start:      dispatched(),
			obs:        []Observation{complete, obsFirst("k2")},
			wantStatus: StatusProcessing, wantStage: StageIngesting,
			wantEffects: []Effect{
				ReconcileCost{Outcome: OutcomeSucceeded},
				IngestTrack{Slot: 0, ProviderTrackID: "aaa", URL: finalA},
				IngestTrack{Slot: 1, ProviderTrackID: "bbb", URL: finalB},
			},
		},
		{
			name:  "F10 placeholder URL holds completion until a poll brings the MP3",
			start: dispatched(),
			obs: []Observation{
				{Source: SourceCallback, Key: "k1", State: TaskState{Stage: StageProviderComplete, Tracks: []Track{
					{ProviderTrackID: "aaa", AudioURL: finalA},
					{ProviderTrackID: "bbb", AudioURL: "https://cdn.example/None.mp3"},
					{ProviderTrackID: "None", AudioURL: finalB},
				}}},
			},
			wantStatus: StatusProcessing, wantStage: StageFirst,
			wantEffects: []Effect{ReconcileCost{Outcome: OutcomeSucceeded}},
			check: func(t *testing.T, s Snapshot) {
				if len(s.Outputs) != 2 || s.Outputs[1].AudioURL != "" {
					t.Errorf("outputs = %+v", s.Outputs)
				}
				next, e := Merge(s, obsComplete(SourcePoll, "", nil))
				want := []Effect{IngestTrack{Slot: 0, ProviderTrackID: "aaa", URL: finalA}, IngestTrack{Slot: 1, ProviderTrackID: "bbb", URL: finalB}}
				if d := cmp.Diff(sortEffects(want), sortEffects(e)); d != "" || next.Stage != StageIngesting {
					t.Errorf("after poll: stage %s, effects (-want +got):\n%s", next.Stage, d)
				}
			},
		},
		{
			name:  "completion requires both final URLs",
			start: dispatched(),
			obs: []Observation{{Key: "k", State: TaskState{Stage: StageProviderComplete, Tracks: []Track{
				{ProviderTrackID: "aaa", AudioURL: finalA},
			}}}},
			wantStatus: StatusProcessing, wantStage: StageFirst,
			wantEffects: []Effect{ReconcileCost{Outcome: OutcomeSucceeded}},
		},
		{
			name:  "a third track id is ignored",
			start: dispatched(),
			obs: []Observation{complete, {Key: "k3", State: TaskState{Stage: StageProviderComplete, Tracks: []Track{
				{ProviderTrackID: "ccc", AudioURL: "https://cdn.example/audio/ccc.mp3"},
			}}}},
			wantStatus: StatusProcessing, wantStage: StageIngesting,
			wantEffects: []Effect{
				ReconcileCost{Outcome: OutcomeSucceeded},
				IngestTrack{Slot: 0, ProviderTrackID: "aaa", URL: finalA},
				IngestTrack{Slot: 1, ProviderTrackID: "bbb", URL: finalB},
			},
			check: func(t *testing.T, s Snapshot) {
				if len(s.Outputs) != 2 {
					t.Errorf("outputs = %+v", s.Outputs)
				}
			},
		},
		{
			name:       "a failure after completion changes nothing",
			start:      dispatched(),
			obs:        []Observation{complete, obsFailed(SourceCallback, "e", true, ptr(0))},
			wantStatus: StatusProcessing, wantStage: StageIngesting,
			wantEffects: []Effect{
				ReconcileCost{Outcome: OutcomeSucceeded},
				IngestTrack{Slot: 0, ProviderTrackID: "aaa", URL: finalA},
				IngestTrack{Slot: 1, ProviderTrackID: "bbb", URL: finalB},
			},
			check: func(t *testing.T, s Snapshot) {
				if s.FailureCode != "" || s.Refunded || s.CreditsConsumed != nil {
					t.Errorf("failure leaked into %+v", s)
				}
			},
		},
		{
			name:       "a completion after failure ingests nothing",
			start:      dispatched(),
			obs:        []Observation{obsFailed(SourceCallback, "e", false, nil), complete},
			wantStatus: StatusFailed, wantStage: StageFailed,
			wantEffects: []Effect{ReconcileCost{Outcome: OutcomeFailed}, ReleaseCredits{}},
		},
		{
			name:       "F7 failure after acceptance releases and reconciles once",
			start:      dispatched(),
			obs:        []Observation{obsFailed(SourceCallback, "e", true, ptr(0)), obsFailed(SourcePoll, "", true, ptr(0))},
			wantStatus: StatusFailed, wantStage: StageFailed,
			wantEffects: []Effect{ReconcileCost{Outcome: OutcomeFailed}, ReleaseCredits{}},
			check: func(t *testing.T, s Snapshot) {
				if s.FailureCode != string(fault.ContentPolicyRejected) || !s.Refunded || s.CreditsConsumed == nil || *s.CreditsConsumed != 0 {
					t.Errorf("failure = %+v", s)
				}
			},
		},
		{
			name:       "a failure without a code is GENERATION_FAILED",
			start:      dispatched(),
			obs:        []Observation{{Key: "e", State: TaskState{Stage: StageFailed}}},
			wantStatus: StatusFailed, wantStage: StageFailed,
			wantEffects: []Effect{ReconcileCost{Outcome: OutcomeFailed}, ReleaseCredits{}},
			check: func(t *testing.T, s Snapshot) {
				if s.FailureCode != "GENERATION_FAILED" {
					t.Errorf("code = %q", s.FailureCode)
				}
			},
		},
		{
			name:       "a late failure on a cancelled operation reconciles but releases nothing",
			start:      Snapshot{Status: StatusCancelled},
			obs:        []Observation{obsFailed(SourceCallback, "e", false, ptr(0))},
			wantStatus: StatusCancelled, wantStage: StageFailed,
			wantEffects: []Effect{ReconcileCost{Outcome: OutcomeFailed}},
		},
		{
			name:       "a late completion on an expired operation never ingests",
			start:      Snapshot{Status: StatusExpired},
			obs:        []Observation{complete},
			wantStatus: StatusExpired, wantStage: StageProviderComplete,
			wantEffects: []Effect{ReconcileCost{Outcome: OutcomeSucceeded}},
		},
		{
			name:       "an unknown stage is recorded and ignored",
			start:      dispatched(),
			obs:        []Observation{{Key: "k", State: TaskState{Stage: "weird"}}},
			wantStatus: StatusDispatched, wantStage: StageQueued,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, e := mergeAll(t, tt.start, tt.obs...)
			if s.Status != tt.wantStatus || s.Stage != tt.wantStage {
				t.Errorf("status, stage = %s, %s; want %s, %s", s.Status, s.Stage, tt.wantStatus, tt.wantStage)
			}
			if d := cmp.Diff(sortEffects(tt.wantEffects), sortEffects(e)); d != "" {
				t.Errorf("effects (-want +got):\n%s", d)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func TestMergeDuplicateIsANoOp(t *testing.T) {
	s, _ := Merge(dispatched(), obsFirst("k"))
	next, e := Merge(s, obsFirst("k"))
	if e != nil {
		t.Errorf("effects = %v", e)
	}
	if d := cmp.Diff(s, next); d != "" {
		t.Errorf("snapshot changed (-want +got):\n%s", d)
	}
	// Without a key, identical content collapses into one key.
	p := obsComplete(SourcePoll, "", ptr(3))
	s1, _ := Merge(s, p)
	s2, e2 := Merge(s1, p)
	if e2 != nil || len(s2.Seen) != 2 {
		t.Errorf("poll duplicate: effects %v, seen %v", e2, s2.Seen)
	}
}

func TestMergeDoesNotMutateItsInput(t *testing.T) {
	s, _ := Merge(dispatched(), obsFirst("k"))
	s.CreditsConsumed = ptr(1)
	before := s.clone()
	_, _ = Merge(s, obsComplete(SourcePoll, "", ptr(9)))
	if d := cmp.Diff(before, s); d != "" {
		t.Errorf("input changed (-before +after):\n%s", d)
	}
}

func TestPlaceholders(t *testing.T) {
	for u, want := range map[string]bool{
		"":                                     false,
		"None":                                 false,
		"https://cdn.example/None.mp3":         false,
		"https://cdn.example/audio/null.mp3":   false,
		"ftp://cdn.example/a.mp3":              false,
		"https:///a.mp3":                       false,
		"https://cdn.example/":                 false,
		"https://cdn.example/audio/aaa.mp3":    true,
		"https://audiopipe.example/stream/aaa": true,
	} {
		if got := usableURL(u) != ""; got != want {
			t.Errorf("usableURL(%q) usable = %v; want %v", u, got, want)
		}
	}
}

func completedOrIngesting(t *testing.T) Snapshot {
	t.Helper()
	s, _ := Merge(dispatched(), obsComplete(SourceCallback, "c", nil))
	if s.Stage != StageIngesting {
		t.Fatalf("stage = %s", s.Stage)
	}
	return s
}

func TestIngestedSettlesOnce(t *testing.T) {
	s := completedOrIngesting(t)
	s, e := Ingested(s, 0, "asset_a")
	if e != nil || s.Status != StatusProcessing {
		t.Fatalf("after one slot: %s, %v", s.Status, e)
	}
	if s2, e := Ingested(s, 0, "asset_other"); e != nil || s2.Outputs[0].AssetID != "asset_a" {
		t.Fatalf("repeated slot: %v, %+v", e, s2.Outputs[0])
	}
	// Delivery has begun: a cancel can no longer win (it would leave the
	// stored track on a cancelled operation).
	if s2, e, err := Cancel(s); !isInvalidState(err) || e != nil || s2.Status == StatusCancelled {
		t.Fatalf("cancel after one track was stored: %s %v %v", s2.Status, e, err)
	}
	s, e = Ingested(s, 1, "asset_b")
	if s.Status != StatusCompleted || s.Stage != StageFinished || !slices.Equal(sortEffects(e), sortEffects([]Effect{SettleCredits{}})) {
		t.Fatalf("after both: %s %s %v", s.Status, s.Stage, e)
	}
	if _, e := Ingested(s, 1, "asset_b"); e != nil {
		t.Fatalf("repeated result: %v", e)
	}
	if _, _, err := Cancel(s); !isInvalidState(err) {
		t.Fatalf("cancel completed: %v", err)
	}
	if s2, e, err := Expire(s); err != nil || e != nil || s2.Status != StatusCompleted {
		t.Fatalf("expire completed: %v %v %s", e, err, s2.Status)
	}
}

func TestIngestFailedReleasesOnce(t *testing.T) {
	s := completedOrIngesting(t)
	s, e := IngestFailed(s, "ASSET_URL_EXPIRED")
	if s.Status != StatusFailed || !slices.Equal(sortEffects(e), sortEffects([]Effect{ReleaseCredits{}})) {
		t.Fatalf("ingest failed: %s %v", s.Status, e)
	}
	if _, e := IngestFailed(s, "X"); e != nil {
		t.Fatalf("repeated: %v", e)
	}
	if s2, e := Ingested(s, 0, "asset_a"); e != nil || s2.Outputs[0].AssetID != "" {
		t.Fatalf("ingested after failure: %v", e)
	}
}

func TestCancelRacingCompletion(t *testing.T) {
	// Cancel wins: the ingestion already under way is discarded.
	s := completedOrIngesting(t)
	s, e, err := Cancel(s)
	if err != nil || s.Status != StatusCancelled || len(e) != 1 {
		t.Fatalf("cancel: %s %v %v", s.Status, e, err)
	}
	if s2, e := Ingested(s, 0, "asset_a"); e != nil || s2.Outputs[0].AssetID != "" {
		t.Fatalf("ingested after cancel: %v %+v", e, s2.Outputs[0])
	}
	if _, e, err := Cancel(s); err != nil || e != nil {
		t.Fatalf("second cancel: %v %v", e, err)
	}
	if _, e, err := Expire(s); err != nil || e != nil {
		t.Fatalf("expire cancelled: %v %v", e, err)
	}
}

func TestExpireReleasesOnce(t *testing.T) {
	s, e, err := Expire(dispatched())
	if err != nil || s.Status != StatusExpired || len(e) != 1 {
		t.Fatalf("expire: %s %v %v", s.Status, e, err)
	}
	if _, e, err := Cancel(s); err != nil || e != nil {
		t.Fatalf("cancel expired: %v %v", e, err)
	}
}

func isInvalidState(err error) bool {
	var fe *fault.Error
	return errors.As(err, &fe) && fe.Code == fault.InvalidState
}
