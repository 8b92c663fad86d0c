package leaderboard

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// PolicyID is the scoring policy's id: one versioned document per
// environment.
const PolicyID = "leaderboard.scoring"

// Publisher names the platform as the publisher of the default scoring.
const Publisher = "system"

// Bounds of a scoring policy.
const (
	// MaxWindowDays is the longest window a policy may state.
	MaxWindowDays = 365
	// MaxWeight is the largest weight of a signal: with counts of stored
	// rows, a score stays far inside an int64.
	MaxWeight = 1000
)

// Signal is a counted kind of record (package doc, Signals).
type Signal string

// The signals.
const (
	// SignalSubmissionsAccepted counts submissions accepted in the window.
	SignalSubmissionsAccepted Signal = "submissions_accepted"
	// SignalReleasesLive counts releases that went LIVE in the window and
	// are LIVE still.
	SignalReleasesLive Signal = "releases_live"
	// SignalGenerationsCompleted counts music generations completed in the
	// window.
	SignalGenerationsCompleted Signal = "generations_completed"
	// SignalSoundOperationsCompleted counts sound engine operations
	// completed in the window.
	SignalSoundOperationsCompleted Signal = "sound_operations_completed"
)

// Signals lists every signal, in the order explanations list them.
func Signals() []Signal {
	return []Signal{SignalSubmissionsAccepted, SignalReleasesLive, SignalGenerationsCompleted, SignalSoundOperationsCompleted}
}

// Valid reports whether s is a signal.
func (s Signal) Valid() bool { return slices.Contains(Signals(), s) }

// Scoring is the content of the leaderboard.scoring policy.
type Scoring struct {
	// WindowDays is the window's length in days (1 to MaxWindowDays): a
	// snapshot as of t counts the rows whose event time is after t minus
	// WindowDays days and at most t.
	WindowDays int `json:"windowDays"`
	// Weights gives each counted signal its integer weight (1 to
	// MaxWeight); a signal not listed does not count.
	Weights map[Signal]int64 `json:"weights"`
}

// DefaultScoring is the scoring published where an environment has none:
// 30 days, a release gone live 10, an accepted submission 5, a completed
// generation 1.
func DefaultScoring() Scoring {
	return Scoring{WindowDays: 30, Weights: map[Signal]int64{
		SignalReleasesLive: 10, SignalSubmissionsAccepted: 5, SignalGenerationsCompleted: 1}}
}

// Validate refuses a window outside 1 to MaxWindowDays days, no signal, an
// unknown signal and a weight outside 1 to MaxWeight, as INVALID_INPUT
// naming the field (windowDays, weights, weights.<signal>).
func (s Scoring) Validate() error {
	const op = "leaderboard.Scoring"
	if s.WindowDays < 1 || s.WindowDays > MaxWindowDays {
		return fault.Invalid(op, "windowDays", fmt.Sprintf("windowDays must be from 1 to %d.", MaxWindowDays)).With("max", MaxWindowDays)
	}
	if len(s.Weights) == 0 {
		return fault.Invalid(op, "weights", "weights must give at least one signal a weight.")
	}
	for _, sig := range slices.Sorted(maps.Keys(s.Weights)) {
		if !sig.Valid() {
			return fault.Invalid(op, "weights."+string(sig), "The signal is not one the platform counts.").
				With("allowed", signalNames())
		}
		if w := s.Weights[sig]; w < 1 || w > MaxWeight {
			return fault.Invalid(op, "weights."+string(sig), fmt.Sprintf("A weight is an integer from 1 to %d.", MaxWeight)).
				With("max", MaxWeight)
		}
	}
	return nil
}

// signalNames lists the signals as strings, for error details.
func signalNames() []string {
	var out []string
	for _, s := range Signals() {
		out = append(out, string(s))
	}
	return out
}

// Counted returns the policy's signals in the order of Signals.
func (s Scoring) Counted() []Signal {
	var out []Signal
	for _, sig := range Signals() {
		if _, ok := s.Weights[sig]; ok {
			out = append(out, sig)
		}
	}
	return out
}

// Window returns the window of a snapshot as of asOf: WindowDays days
// ending at asOf.
func (s Scoring) Window(asOf time.Time) (start, end time.Time) {
	end = asOf.UTC()
	return end.AddDate(0, 0, -s.WindowDays), end
}

// Term is one signal's part of a score.
type Term struct {
	// Signal is the signal.
	Signal Signal
	// Count is the number of rows counted.
	Count int64
	// Weight is the policy's weight of the signal.
	Weight int64
	// Points is Count times Weight.
	Points int64
}

// Breakdown returns each of the policy's signals' part of the score of
// counts, in the order of Signals, and the score: the sum of the points.
// A signal missing from counts counted no row.
func (s Scoring) Breakdown(counts map[Signal]int64) ([]Term, int64) {
	var (
		out   []Term
		score int64
	)
	for _, sig := range s.Counted() {
		t := Term{Signal: sig, Count: counts[sig], Weight: s.Weights[sig]}
		t.Points = t.Count * t.Weight
		score += t.Points
		out = append(out, t)
	}
	return out, score
}

// decodeScoring reads a stored version of the policy, and validates it.
func decodeScoring(v policy.Version) (Scoring, error) {
	var s Scoring
	if err := json.Unmarshal(v.Content, &s); err != nil {
		return Scoring{}, fmt.Errorf("leaderboard: scoring policy v%d: %w", v.Version, err)
	}
	if err := s.Validate(); err != nil {
		return Scoring{}, fmt.Errorf("leaderboard: scoring policy v%d: %w", v.Version, err)
	}
	return s, nil
}

// SeedScoring publishes s as env's scoring policy when env has none; a
// published policy is never overridden (a restart with other defaults
// changes nothing).
func SeedScoring(ctx context.Context, st policy.Store, env access.Environment, s Scoring) error {
	if err := s.Validate(); err != nil {
		return err
	}
	sc := policy.Scope{Environment: env}
	switch _, err := policy.Current(ctx, st, sc, PolicyID); {
	case err == nil:
		return nil
	case !fault.Is(err, fault.NotFound):
		return err
	}
	_, _, err := policy.Publish(ctx, st, sc, PolicyID, s, Publisher)
	return err
}
