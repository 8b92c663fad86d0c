package sound

import (
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/sound/dsp"
	"github.com/creatormusic/platform/sound/dsp/dsptest"
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
	s := &Service{cfg: Config{Engine: BuiltIn{}, Disabled: []string{string(TypeMastering), "denoise"}}}
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

// The stem capability says the separation is signal processing, and every
// quality figure it reports is one this test reproduces: it separates 10 s
// of a mixture of four known synthetic stems (vocal-like tone, drums,
// bass, other) with the engine, measures each stem's global SDR against its
// source, and no reported figure may be better than measured.
func TestStemCapabilityReportsMeasuredQuality(t *testing.T) {
	s := &Service{cfg: Config{Engine: BuiltIn{}}}
	c := s.Capabilities(nil).Features.StemSeparation
	if c.Method != dsp.StemMethodSignalProcessing || c.Quality.Metric != "global_sdr" || c.Quality.MeasuredOn == "" {
		t.Fatalf("stem capability = %+v", c)
	}

	rate, mix, sources := dsptest.StemMixture(10)
	f := dsp.Format{SampleRate: rate, Channels: 2, BitDepth: 24}
	got := map[string]dsp.Block{}
	err := BuiltIn{}.Separate(dsp.NewBlockReader(f, mix), nil, func(stem string, b dsp.Block) error {
		out, ok := got[stem]
		if !ok {
			out = dsp.NewBlock(2, 0)
		}
		for ch := range out {
			out[ch] = append(out[ch], b[ch]...)
		}
		got[stem] = out
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reported := map[string]float64{}
	for _, q := range c.Quality.Stems {
		reported[q.Stem] = q.SDRDB
	}
	for i, name := range dsp.StemNames() {
		r, ok := reported[name]
		if !ok {
			t.Errorf("%s: no figure reported", name)
			continue
		}
		measured := dsptest.SDR(sources[i], got[name])
		t.Logf("%-6s reported %5.2f dB, measured %5.2f dB", name, r, measured)
		if r > measured {
			t.Errorf("%s: reported %.2f dB, better than the %.2f dB measured", name, r, measured)
		}
	}
	if len(reported) != len(dsp.StemNames()) {
		t.Errorf("figures for %v, want one per stem", reported)
	}
}
