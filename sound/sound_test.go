package sound

import (
	"slices"
	"testing"

	"github.com/creatormusic/platform/fault"
)

// Every state and event has at most one move; terminal states never leave
// (late events are no-ops); cancel is idempotent except on a completed
// operation, which it refuses.
func TestTransitionTable(t *testing.T) {
	states := []Status{StatusQueued, StatusDispatched, StatusProcessing, StatusCompleted, StatusFailed, StatusCancelled, StatusExpired}
	events := []Event{EventDispatch, EventStart, EventComplete, EventFail, EventCancel, EventExpire}
	seen := map[[2]string]bool{}
	for _, m := range Moves() {
		k := [2]string{string(m.From), string(m.Event)}
		if seen[k] {
			t.Fatalf("two moves for %v", k)
		}
		seen[k] = true
	}
	for _, s := range states {
		for _, e := range events {
			to, err := Transition(s, e)
			switch {
			case s == StatusCompleted && e == EventCancel:
				if !fault.Is(err, fault.InvalidState) {
					t.Errorf("cancel on completed: %v, %v", to, err)
				}
			case s.Terminal():
				if err != nil || to != s {
					t.Errorf("%s on %s moved to %s (%v)", e, s, to, err)
				}
			case e == EventCancel:
				if err != nil || to != StatusCancelled {
					t.Errorf("cancel on %s: %s (%v)", s, to, err)
				}
			}
		}
	}
	if to, err := Transition(StatusQueued, EventComplete); err == nil {
		t.Fatalf("queued completed without running: %s", to)
	}
}

// A deployment that disables an operation or a feature reports it
// unsupported, and accepting it is CAPABILITY_UNSUPPORTED.
func TestCapabilitiesFollowConfiguration(t *testing.T) {
	s := &Service{cfg: Config{Engine: &fakeEngine{}, Disabled: []string{string(TypeMastering), "denoise"}}}
	c := s.Capabilities(nil)
	if c.Features.Mastering.Supported || !c.Features.Analysis.Supported || !c.Features.StemSeparation.Supported ||
		c.Features.StemSeparation.MaximumStems != 4 || len(c.Features.StemSeparation.Stems) != 4 || c.Features.Enhancement.Features["denoise"] || !c.Features.Enhancement.Features["dehum"] {
		t.Fatalf("capabilities = %+v", c)
	}
	if err := served("test", c, TypeMastering); !fault.Is(err, fault.CapabilityUnsupported) {
		t.Fatalf("mastering served: %v", err)
	}
	if err := served("test", c, TypeAnalysis); err != nil {
		t.Fatal(err)
	}
	if len(c.Audio.SampleRates) != 4 || c.Audio.BitDepths[len(c.Audio.BitDepths)-1] != 24 {
		t.Fatalf("no entitlement, yet high resolution: %+v", c.Audio)
	}
}

// The stem capability reports how the engine separates and the quality
// it measured, whether or not this deployment serves stems (the figures
// are reproduced against the built-in engine in package sound/builtin).
func TestStemCapabilityReportsTheEnginesSeparation(t *testing.T) {
	for _, disabled := range [][]string{nil, {string(TypeStemSeparation)}} {
		s := &Service{cfg: Config{Engine: &fakeEngine{}, Disabled: disabled}}
		c := s.Capabilities(nil).Features.StemSeparation
		want := (&fakeEngine{}).Separation()
		if c.Method != want.Method || c.Quality.Metric != want.Quality.Metric || c.Quality.MeasuredOn != want.Quality.MeasuredOn ||
			!slices.Equal(c.Quality.Stems, want.Quality.Stems) {
			t.Fatalf("disabled %v: stem capability = %+v, want the engine's %+v", disabled, c, want)
		}
		if served := disabled == nil; c.Supported != served || (c.MaximumStems == 4) != served || (len(c.Stems) == 4) != served {
			t.Fatalf("disabled %v: stem capability = %+v", disabled, c)
		}
	}
}
