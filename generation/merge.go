package generation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/creatormusic/platform/fault"
)

// This file holds the one merge path shared by callbacks and recovery
// polls (issue 13): a pure function of the stored snapshot and one
// normalized observation, returning the next snapshot and the side effects
// the caller performs exactly once. The caller stores the next snapshot
// (compare-and-set on the old one) and the effects as durable jobs in the
// same unit of work; nothing here reads a clock, a store or the network.
//
// Invariant (tested exhaustively in merge_test.go): for one provider task,
// every order and duplication of a set of observations that agree on the
// outcome (all success-side or all failure-side) yields the same final
// snapshot and the same multiset of effects, each effect once.

// OutputSlots is the number of outputs one generation yields: one provider
// create makes two tracks.
const OutputSlots = 2

// Source says where an observation came from.
type Source string

// Observation sources.
const (
	// SourceCallback is a verified provider callback.
	SourceCallback Source = "callback"
	// SourcePoll is a recovery poll of the provider's query route.
	SourcePoll Source = "poll"
)

// Observation is one normalized provider task state from a callback or a
// poll.
type Observation struct {
	Source Source
	// Key deduplicates observations (F1). Callbacks use their inbox key
	// (provider, task, stage, payload hash). When empty, Merge derives a
	// content hash of State, so identical polls collapse into one key.
	Key   string
	State TaskState
}

// key returns the observation's dedupe key.
func (o Observation) key() string {
	if o.Key != "" {
		return o.Key
	}
	b, err := json.Marshal(o.State)
	if err != nil { // TaskState holds only strings, ints and a pointer.
		panic(err)
	}
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Outcome is the provider's terminal answer for a task, as first reported.
type Outcome string

// Provider outcomes.
const (
	// OutcomePending: the provider reported no terminal state yet.
	OutcomePending Outcome = ""
	// OutcomeSucceeded: the provider reported success (its URLs may still
	// be placeholders, F10).
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeFailed: the provider reported failure.
	OutcomeFailed Outcome = "failed"
)

// Output is one output slot's track as merged from observations.
type Output struct {
	// ProviderTrackID identifies the track at the provider; outputs are
	// ordered by it, and an output's slot is its index once both tracks are
	// known, so slots never depend on arrival order.
	ProviderTrackID string
	// AudioURL is the final MP3, set only from a provider_complete
	// observation (never from a first-stage stream link, F8) and never
	// changed once set, since its ingestion may already be running.
	AudioURL string
	// StreamURL is the best-known stream link (playback only, never
	// ingested).
	StreamURL  string
	ImageURL   string
	Title      string
	Tags       string
	Model      string
	DurationMs int64
	// InfoStage is the highest stage that wrote the fields above: a higher
	// stage overwrites them, an equal one only fills empty fields.
	InfoStage Stage
	// Ingesting reports that IngestTrack was emitted for this slot.
	Ingesting bool
	// AssetID is the durable asset once ingested.
	AssetID string
}

// Snapshot is an operation's provider-facing state for its current
// provider task. The zero value is not a valid start: use Status
// StatusDispatched (the attempt is recorded before any callback can name
// it).
type Snapshot struct {
	// Status is the operation state; it moves only through Transition.
	Status Status
	// Stage is the platform stage: provider stages up to
	// provider_complete (reached only when both final audio URLs are
	// known), then ingesting and finished, or failed. It never regresses.
	Stage Stage
	// Outcome is the provider's terminal answer, fixed by the first report.
	Outcome Outcome
	// Outputs are the known tracks ordered by provider track id, at most
	// OutputSlots.
	Outputs []Output
	// FailureCode is the platform code of the failure (first one kept).
	FailureCode string
	// Refunded reports that the provider refunded the task (A: 531).
	Refunded bool
	// CreditsConsumed is the provider's reported charge; the largest
	// reported value of the task's outcome side, nil when none reported.
	CreditsConsumed *int64
	// Seen are the keys of merged observations, sorted.
	Seen []string
}

// Effect is a side effect the caller must perform exactly once, durably
// (a job written in the same unit of work as the snapshot).
type Effect interface {
	effect()
}

// IngestTrack copies a final audio URL into a durable asset for a slot;
// its result comes back through Ingested or IngestFailed.
type IngestTrack struct {
	Slot            int
	ProviderTrackID string
	URL             string
}

// SettleCredits settles the operation's reserved customer credits. It is
// emitted by Ingested, when the last output becomes an asset, never by
// Merge: credits are settled for delivered assets only.
type SettleCredits struct{}

// ReleaseCredits releases the operation's reserved customer credits: on
// provider failure, ingestion failure, cancel or expiry.
type ReleaseCredits struct{}

// ReconcileCost schedules provider cost reconciliation, once, when the
// provider first reports a terminal outcome — also for a cancelled or
// expired operation. It carries no figure: the reconciliation job reads
// Snapshot.CreditsConsumed when it runs, because a terminal callback and
// a later poll may differ in whether they report one, and a figure frozen
// here would depend on arrival order.
type ReconcileCost struct {
	Outcome Outcome
}

func (IngestTrack) effect()    {}
func (SettleCredits) effect()  {}
func (ReleaseCredits) effect() {}
func (ReconcileCost) effect()  {}

// clone copies s so that the next snapshot shares no slice with cur.
func (s Snapshot) clone() Snapshot {
	s.Outputs = slices.Clone(s.Outputs)
	s.Seen = slices.Clone(s.Seen)
	if s.CreditsConsumed != nil {
		v := *s.CreditsConsumed
		s.CreditsConsumed = &v
	}
	return s
}

// Merge folds one observation into a snapshot. Rules:
//   - an observation whose key was seen changes nothing (F1);
//   - stages are monotonic (queued < text < first < provider_complete <
//     ingesting < finished; failed terminal): a stale first after complete
//     changes nothing but missing metadata (F2);
//   - tracks fill the output slots by provider track id; a track without
//     an id, and placeholder or non-http URLs, are ignored (F10);
//   - a first-stage URL, audio_url included, is only ever a stream URL
//     (F8); final audio URLs come from provider_complete observations;
//   - provider_complete is reached when both slots have final URLs; then
//     IngestTrack is emitted once per slot, the status moves on
//     provider_succeeded and the stage becomes ingesting — except on a
//     terminal operation: a cancelled or expired one never ingests;
//   - the first terminal report fixes the Outcome and emits ReconcileCost
//     once; a failure after a success report, or a success after a failure
//     report, changes nothing;
//   - a failure report moves the status on provider_failed and emits
//     ReleaseCredits when that moves it into failed;
//   - later reports of the same outcome only add cost signals (refund,
//     largest creditsConsumed), even on a terminal operation.
//
// Merge never fails: an event the transition table refuses leaves the
// status as it is.
func Merge(cur Snapshot, obs Observation) (Snapshot, []Effect) {
	key := obs.key()
	i, found := slices.BinarySearch(cur.Seen, key)
	if found {
		return cur, nil
	}
	next := cur.clone()
	next.Seen = slices.Insert(next.Seen, i, key)

	st := obs.State
	if st.Stage == StageFailed {
		return mergeFailure(next, st)
	}
	if st.Stage.rank() < 0 || st.Stage.rank() > StageProviderComplete.rank() {
		return next, nil // not a provider stage
	}
	return mergeProgress(next, st)
}

// mergeFailure folds a failure report.
func mergeFailure(next Snapshot, st TaskState) (Snapshot, []Effect) {
	switch next.Outcome {
	case OutcomeSucceeded:
		return next, nil
	case OutcomeFailed:
		addCost(&next, st)
		if next.FailureCode == "" {
			next.FailureCode = failureCode(st)
		}
		return next, nil
	}
	var effects []Effect
	next.Outcome = OutcomeFailed
	next.Stage = StageFailed
	addCost(&next, st)
	if next.FailureCode == "" {
		next.FailureCode = failureCode(st)
	}
	effects = append(effects, ReconcileCost{Outcome: OutcomeFailed})
	if to, err := Transition(next.Status, EventProviderFailed); err == nil {
		if to != next.Status && to == StatusFailed {
			effects = append(effects, ReleaseCredits{})
		}
		next.Status = to
	}
	return next, effects
}

// failureCode is the platform code of a failure report.
func failureCode(st TaskState) string {
	if st.FailureCode != "" {
		return st.FailureCode
	}
	return "GENERATION_FAILED"
}

// addCost folds a report's cost signals.
func addCost(next *Snapshot, st TaskState) {
	next.Refunded = next.Refunded || st.Refunded
	if c := st.CreditsConsumed; c != nil && (next.CreditsConsumed == nil || *c > *next.CreditsConsumed) {
		v := *c
		next.CreditsConsumed = &v
	}
}

// mergeProgress folds a text, first or provider_complete report.
func mergeProgress(next Snapshot, st TaskState) (Snapshot, []Effect) {
	// Tracks are recorded whatever the outcome, so what a snapshot knows
	// never depends on whether a failure report came first.
	for _, t := range st.Tracks {
		mergeTrack(&next, st.Stage, t)
	}
	if next.Outcome == OutcomeFailed || next.Stage == StageFailed {
		return next, nil
	}
	var effects []Effect
	complete := st.Stage == StageProviderComplete
	if complete {
		addCost(&next, st)
		if next.Outcome == OutcomePending {
			next.Outcome = OutcomeSucceeded
			effects = append(effects, ReconcileCost{Outcome: OutcomeSucceeded})
		}
	}

	// The provider stage reached, capped below provider_complete until
	// both final URLs are known.
	reached := st.Stage
	if next.finalURLs() {
		reached = StageProviderComplete
	} else if reached == StageProviderComplete {
		reached = StageFirst
	}
	if reached.rank() > next.Stage.rank() {
		next.Stage = reached
	}
	if next.Stage.rank() < StageProviderComplete.rank() {
		if reached.rank() > StageQueued.rank() {
			if to, err := Transition(next.Status, EventProviderProgress); err == nil {
				next.Status = to
			}
		}
		return next, effects
	}
	if next.Stage != StageProviderComplete || next.Status.Terminal() {
		return next, effects // ingestion started, or never will (a late callback after cancel never materializes an asset)
	}
	to, err := Transition(next.Status, EventProviderSucceeded)
	if err != nil {
		return next, effects
	}
	next.Status = to
	for i := range next.Outputs {
		o := &next.Outputs[i]
		if !o.Ingesting {
			o.Ingesting = true
			effects = append(effects, IngestTrack{Slot: i, ProviderTrackID: o.ProviderTrackID, URL: o.AudioURL})
		}
	}
	next.Stage = StageIngesting
	return next, effects
}

// finalURLs reports whether every output slot has a final audio URL.
func (s Snapshot) finalURLs() bool {
	if len(s.Outputs) < OutputSlots {
		return false
	}
	for _, o := range s.Outputs {
		if o.AudioURL == "" {
			return false
		}
	}
	return true
}

// mergeTrack folds one reported track into its output.
func mergeTrack(next *Snapshot, stage Stage, t Track) {
	id := strings.TrimSpace(t.ProviderTrackID)
	if placeholderID(id) {
		return
	}
	i, found := slices.BinarySearchFunc(next.Outputs, id, func(o Output, id string) int { return strings.Compare(o.ProviderTrackID, id) })
	if !found {
		if len(next.Outputs) >= OutputSlots {
			return // a third track id: ignored
		}
		next.Outputs = slices.Insert(next.Outputs, i, Output{ProviderTrackID: id})
	}
	o := &next.Outputs[i]

	stream := usableURL(t.StreamURL)
	if stage != StageProviderComplete && stream == "" {
		stream = usableURL(t.AudioURL) // F8: a first-stage audio_url is a stream link
	}
	higher := stage.rank() > o.InfoStage.rank()
	set := func(dst *string, v string) {
		if v != "" && (higher || *dst == "") {
			*dst = v
		}
	}
	set(&o.StreamURL, stream)
	set(&o.ImageURL, usableURL(t.ImageURL))
	set(&o.Title, t.Title)
	set(&o.Tags, t.Tags)
	set(&o.Model, t.Model)
	if t.DurationMs > 0 && (higher || o.DurationMs == 0) {
		o.DurationMs = t.DurationMs
	}
	if higher {
		o.InfoStage = stage
	}
	if stage == StageProviderComplete && o.AudioURL == "" {
		o.AudioURL = usableURL(t.AudioURL)
	}
}

// placeholderID reports an empty or placeholder track id (F10).
func placeholderID(id string) bool {
	switch strings.ToLower(id) {
	case "", "none", "null", "undefined":
		return true
	}
	return false
}

// usableURL returns u when it is an absolute http(s) URL that is not a
// placeholder (F10: ".../None.mp3", empty), else "".
func usableURL(u string) string {
	u = strings.TrimSpace(u)
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return ""
	}
	base := strings.ToLower(path.Base(p.Path))
	base = strings.TrimSuffix(base, path.Ext(base))
	if placeholderID(base) || base == "/" || base == "." {
		return ""
	}
	return u
}

// Ingested records that slot's output became the durable asset assetID.
// When the last output is ingested the status moves on ingested to
// completed, the stage to finished, and SettleCredits is emitted once. A
// repeated result, an unknown slot, or a result on a terminal operation
// (an ingestion that raced a cancel: the caller discards the asset)
// changes nothing.
func Ingested(cur Snapshot, slot int, assetID string) (Snapshot, []Effect) {
	if cur.Status.Terminal() || slot < 0 || slot >= len(cur.Outputs) || !cur.Outputs[slot].Ingesting || cur.Outputs[slot].AssetID != "" || assetID == "" {
		return cur, nil
	}
	next := cur.clone()
	next.Outputs[slot].AssetID = assetID
	for _, o := range next.Outputs {
		if o.AssetID == "" {
			return next, nil
		}
	}
	to, err := Transition(next.Status, EventIngested)
	if err != nil || to != StatusCompleted {
		return cur, nil
	}
	next.Status = to
	next.Stage = StageFinished
	return next, []Effect{SettleCredits{}}
}

// IngestFailed records that an output could not be ingested (its URL
// expired, or it kept failing past the bounded retries, F9): the
// operation fails with code and ReleaseCredits is emitted once. On a
// terminal operation it changes nothing.
func IngestFailed(cur Snapshot, code string) (Snapshot, []Effect) {
	to, err := Transition(cur.Status, EventIngestFailed)
	if err != nil || to == cur.Status {
		return cur, nil
	}
	next := cur.clone()
	next.Status = to
	if next.FailureCode == "" {
		next.FailureCode = code
	}
	return next, []Effect{ReleaseCredits{}}
}

// Cancel cancels an operation: ReleaseCredits once when it was not
// terminal; a repeated cancel, or a cancel of a failed or expired
// operation, changes nothing. INVALID_STATE_TRANSITION for a completed
// operation, and for one whose delivery has begun (a track is already a
// stored asset): a cancelled operation never holds an asset, and the
// provider's work is then delivered in full.
func Cancel(cur Snapshot) (Snapshot, []Effect, error) {
	if !cur.Status.Terminal() {
		for _, o := range cur.Outputs {
			if o.AssetID != "" {
				return cur, nil, fault.E("generation.Cancel", fault.InvalidState,
					"The operation's tracks are being delivered; it can no longer be cancelled.").
					With("from", string(cur.Status)).With("event", string(EventCancel))
			}
		}
	}
	return end(cur, EventCancel)
}

// Expire ends an operation whose deadline passed: ReleaseCredits once
// when it was not terminal; on a terminal operation it changes nothing.
func Expire(cur Snapshot) (Snapshot, []Effect, error) {
	return end(cur, EventExpire)
}

// end moves cur on a cancel or expire event.
func end(cur Snapshot, e Event) (Snapshot, []Effect, error) {
	to, err := Transition(cur.Status, e)
	if err != nil {
		return cur, nil, err
	}
	if to == cur.Status {
		return cur, nil, nil
	}
	next := cur.clone()
	next.Status = to
	return next, []Effect{ReleaseCredits{}}, nil
}
