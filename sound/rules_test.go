package sound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// accept runs fn against the rig's store.
func (r *rig) accept(t *testing.T, fn func(ctx context.Context, st Store) (Operation, error)) Operation {
	t.Helper()
	o, err := fn(context.Background(), r.st)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The plan in effect bounds the input: an input whose header claims 20
// minutes is refused on the free plan (10) with the limit and the claim,
// accepted on pro (30), and the snapshot stored with the operation carries
// the bound its run enforces.
func TestAdmissionBoundsTheInputByPlan(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Config{}, 0)
	in := r.input(t, ptr(20*time.Minute))
	req := AnalyzeRequest{InputAssetID: in.ID}

	_, err := r.svc.Analyze(ctx, r.st, r.p, r.authority("free"), req)
	wantFault(t, err, fault.InvalidInput, map[string]any{"field": "input.assetId", "reason": "duration_limit", "limit": 600,
		"claimedDurationSeconds": 1200})
	if len(r.st.ops) != 0 || len(r.st.jobs) != 0 {
		t.Fatalf("a refused admission wrote %d operations and %d jobs", len(r.st.ops), len(r.st.jobs))
	}

	o, err := r.svc.Analyze(ctx, r.st, r.p, r.authority("pro"), req)
	if err != nil {
		t.Fatal(err)
	}
	var caps Capabilities
	if err := json.Unmarshal(o.Capabilities, &caps); err != nil || caps.Limits.MaxInputDurationSeconds != 1800 || o.Plan != "pro" {
		t.Fatalf("snapshot %s (%v), plan %q", o.Capabilities, err, o.Plan)
	}
	if got := r.svc.inputBound(o); got != 30*time.Minute {
		t.Fatalf("the run's bound = %v, want the snapshot's 30m", got)
	}
	// An input that claims no duration is admitted; decoding bounds it.
	if _, err := r.svc.Analyze(ctx, r.st, r.p, r.authority("free"), AnalyzeRequest{InputAssetID: r.input(t, nil).ID}); err != nil {
		t.Fatal(err)
	}
}

// An accepted operation is stored queued at accepted, version 1, with its
// deadline, request and snapshot, and its run and deadline jobs are
// written beside it: the run job due now in the workspace's group, the
// expiry job due at the deadline.
func TestAcceptWritesTheOperationAndItsJobs(t *testing.T) {
	r := newRig(t, Config{Deadline: 20 * time.Minute}, 0)
	in := r.input(t, ptr(time.Minute))
	o := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Analyze(ctx, st, r.p, r.authority("free"), AnalyzeRequest{InputAssetID: in.ID, Fields: []string{FieldKey}})
	})
	now := r.st.Now()
	if o.Status != StatusQueued || o.Stage != StageAccepted || o.Version != 1 || o.Type != TypeAnalysis || o.Scope != r.p.Scope() ||
		o.CreatedByUserID != "usr_1" || !o.DeadlineAt.Equal(now.Add(20*time.Minute)) || !contains(string(o.Request), `"fields":["key"]`) {
		t.Fatalf("operation = %+v", o)
	}
	if len(r.st.jobs) != 2 {
		t.Fatalf("jobs = %+v", r.st.jobs)
	}
	run, expire := r.st.jobs[0], r.st.jobs[1]
	if run.Kind != JobRun || run.UniqueKey != "sound-run:"+o.ID || run.Group != "ws_1" || !run.RunAt.Equal(now) ||
		expire.Kind != JobExpire || expire.UniqueKey != "sound-expire:"+o.ID || !expire.RunAt.Equal(o.DeadlineAt) {
		t.Fatalf("jobs = %+v", r.st.jobs)
	}
}

// The output must lie in the snapshot: 88.2/96 kHz and 32-bit only with
// the high-resolution entitlement, 32-bit never in FLAC, and only the
// engine's containers. EntitlementFor names the entitlement for exactly
// what it adds; an encoding nothing serves needs none (an upgrade would
// not help).
func TestAdmissionChecksTheOutputAgainstTheSnapshot(t *testing.T) {
	r := newRig(t, Config{}, 0)
	in := r.input(t, ptr(time.Minute))
	hires := r.authority("studio", EntitlementHighResolution)
	for _, c := range []struct {
		name  string
		a     *access.Authority
		out   OutputSpec
		field string // "" when accepted
	}{
		{"48 kHz 24-bit WAV", r.authority("free"), OutputSpec{"wav", 48000, 24}, ""},
		{"mp3", r.authority("free"), OutputSpec{"mp3", 48000, 24}, "output.format"},
		{"96 kHz without the entitlement", r.authority("free"), OutputSpec{"wav", 96000, 24}, "output.sampleRate"},
		{"96 kHz with it", hires, OutputSpec{"wav", 96000, 24}, ""},
		{"32-bit without the entitlement", r.authority("free"), OutputSpec{"wav", 48000, 32}, "output.bitDepth"},
		{"32-bit with it", hires, OutputSpec{"wav", 88200, 32}, ""},
		{"32-bit FLAC", hires, OutputSpec{"flac", 48000, 32}, "output.bitDepth"},
		{"192 kHz", hires, OutputSpec{"wav", 192000, 24}, "output.sampleRate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Master(context.Background(), r.st, r.p, c.a, MasterRequest{InputAssetID: in.ID, Output: c.out})
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFault(t, err, fault.CapabilityUnsupported, map[string]any{"field": c.field})
		})
	}
	for _, c := range []struct {
		rate, depth int
		want        string
	}{{48000, 24, ""}, {96000, 24, EntitlementHighResolution}, {88200, 16, EntitlementHighResolution},
		{44100, 32, EntitlementHighResolution}, {192000, 24, ""}} {
		if got := EntitlementFor(c.rate, c.depth); got != c.want {
			t.Errorf("EntitlementFor(%d, %d) = %q, want %q", c.rate, c.depth, got, c.want)
		}
	}
	if got := r.svc.Capabilities(hires).Audio; !slices.Contains(got.SampleRates, 96000) || !slices.Contains(got.BitDepths, 32) {
		t.Fatalf("high-resolution snapshot = %+v", got)
	}
}

// Each operation's request is checked before anything is written: fields,
// the input, the mastering profile and target, the features (the engine's
// refusal names the request field), the stems, and the operations and
// features the deployment disables.
func TestAdmissionChecksEachRequest(t *testing.T) {
	r := newRig(t, Config{Disabled: []string{"denoise"}}, 0)
	off := newRig(t, Config{Disabled: []string{string(TypeAnalysis)}}, 0)
	in := r.input(t, ptr(time.Minute))
	out := OutputSpec{"wav", 48000, 24}
	other := *r.p
	other.WorkspaceID = "ws_2"
	a := r.authority("free")
	for _, c := range []struct {
		name    string
		call    func(ctx context.Context) (Operation, error)
		code    fault.Code
		details map[string]any
	}{
		{"unknown field", func(ctx context.Context) (Operation, error) {
			return r.svc.Analyze(ctx, r.st, r.p, a, AnalyzeRequest{InputAssetID: in.ID, Fields: []string{"tempo"}})
		}, fault.InvalidInput, map[string]any{"field": "fields[0]"}},
		{"repeated field", func(ctx context.Context) (Operation, error) {
			return r.svc.Analyze(ctx, r.st, r.p, a, AnalyzeRequest{InputAssetID: in.ID, Fields: []string{FieldBPM, FieldBPM}})
		}, fault.InvalidInput, map[string]any{"field": "fields[1]"}},
		{"no input", func(ctx context.Context) (Operation, error) {
			return r.svc.Analyze(ctx, r.st, r.p, a, AnalyzeRequest{})
		}, fault.InvalidInput, map[string]any{"field": "input.assetId"}},
		{"another workspace's asset", func(ctx context.Context) (Operation, error) {
			return r.svc.Analyze(ctx, r.st, &other, a, AnalyzeRequest{InputAssetID: in.ID})
		}, fault.NotFound, map[string]any{"field": "input.assetId"}},
		{"analysis disabled", func(ctx context.Context) (Operation, error) {
			return off.svc.Analyze(ctx, off.st, off.p, a, AnalyzeRequest{InputAssetID: off.input(t, nil).ID})
		}, fault.CapabilityUnsupported, map[string]any{"type": "analysis"}},
		{"unknown profile", func(ctx context.Context) (Operation, error) {
			return r.svc.Master(ctx, r.st, r.p, a, MasterRequest{InputAssetID: in.ID, Profile: "warm", Output: out})
		}, fault.InvalidInput, map[string]any{"field": "profile"}},
		{"target out of range", func(ctx context.Context) (Operation, error) {
			return r.svc.Master(ctx, r.st, r.p, a, MasterRequest{InputAssetID: in.ID, TargetLUFS: ptr(-40.0), Output: out})
		}, fault.CapabilityUnsupported, map[string]any{"field": "targetLufs"}},
		{"no feature", func(ctx context.Context) (Operation, error) {
			return r.svc.Enhance(ctx, r.st, r.p, a, EnhanceRequest{InputAssetID: in.ID, Output: out})
		}, fault.CapabilityUnsupported, map[string]any{"field": "features"}},
		{"unknown feature", func(ctx context.Context) (Operation, error) {
			return r.svc.Enhance(ctx, r.st, r.p, a, EnhanceRequest{InputAssetID: in.ID, Output: out,
				Features: []EnhanceFeature{{Name: "clarity"}, {Name: "reverb"}}})
		}, fault.CapabilityUnsupported, map[string]any{"field": "features[1].name",
			"supported": []string{"dehum", "declick", "denoise", "voice_cleanup", "clarity", "stereo_width"}}},
		{"amount out of range", func(ctx context.Context) (Operation, error) {
			return r.svc.Enhance(ctx, r.st, r.p, a, EnhanceRequest{InputAssetID: in.ID, Output: out,
				Features: []EnhanceFeature{{Name: "clarity", Amount: 1000}}})
		}, fault.CapabilityUnsupported, map[string]any{"field": "features[0].amount"}},
		{"disabled feature", func(ctx context.Context) (Operation, error) {
			return r.svc.Enhance(ctx, r.st, r.p, a, EnhanceRequest{InputAssetID: in.ID, Output: out,
				Features: []EnhanceFeature{{Name: "clarity"}, {Name: "denoise"}}})
		}, fault.CapabilityUnsupported, map[string]any{"field": "features[1].name"}},
		{"unknown stem", func(ctx context.Context) (Operation, error) {
			return r.svc.Stems(ctx, r.st, r.p, a, StemsRequest{InputAssetID: in.ID, Stems: []string{"piano"}, Output: out})
		}, fault.CapabilityUnsupported, map[string]any{"field": "stems[0]"}},
		{"repeated stem", func(ctx context.Context) (Operation, error) {
			return r.svc.Stems(ctx, r.st, r.p, a, StemsRequest{InputAssetID: in.ID, Stems: []string{"bass", "bass"}, Output: out})
		}, fault.InvalidInput, map[string]any{"field": "stems[1]"}},
		{"too many stems", func(ctx context.Context) (Operation, error) {
			return r.svc.Stems(ctx, r.st, r.p, a, StemsRequest{InputAssetID: in.ID,
				Stems: []string{"vocals", "drums", "bass", "other", "vocals"}, Output: out})
		}, fault.CapabilityUnsupported, map[string]any{"field": "stems", "maximum": 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.call(context.Background())
			wantFault(t, err, c.code, c.details)
		})
	}
	if len(r.st.ops) != 0 || len(r.st.jobs) != 0 {
		t.Fatalf("refused requests wrote %d operations and %d jobs", len(r.st.ops), len(r.st.jobs))
	}
	// Defaults: every field, the engine's default profile, every stem.
	o := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Master(ctx, st, r.p, a, MasterRequest{InputAssetID: in.ID, Output: out})
	})
	if !contains(string(o.Request), `"profile":"balanced"`) {
		t.Fatalf("mastering request = %s", o.Request)
	}
	o = r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Stems(ctx, st, r.p, a, StemsRequest{InputAssetID: in.ID, Output: out})
	})
	if !contains(string(o.Request), `"stems":["vocals","drums","bass","other"]`) {
		t.Fatalf("stems request = %s", o.Request)
	}
}

// Cancel moves through the table only: a queued operation is cancelled
// (ended, version bumped), cancelling it again returns it unchanged, and a
// completed one is INVALID_STATE_TRANSITION for CheckCancel and Cancel
// alike. An operation of another workspace is NOT_FOUND.
func TestCancelFollowsTheTable(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Config{}, 0)
	in := r.input(t, nil)
	analyze := func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Analyze(ctx, st, r.p, nil, AnalyzeRequest{InputAssetID: in.ID})
	}
	o := r.accept(t, analyze)
	if err := r.svc.CheckCancel(ctx, r.st, r.p, o.ID); err != nil {
		t.Fatal(err)
	}
	c, err := r.svc.Cancel(ctx, r.st, r.p, o.ID)
	if err != nil || c.Status != StatusCancelled || c.EndedAt == nil || c.Version != 2 {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	again, err := r.svc.Cancel(ctx, r.st, r.p, o.ID)
	if err != nil || again.Version != 2 || again.Status != StatusCancelled {
		t.Fatalf("second cancel = %+v, %v", again, err)
	}
	other := *r.p
	other.WorkspaceID = "ws_2"
	_, err = r.svc.Cancel(ctx, r.st, &other, o.ID)
	wantFault(t, err, fault.NotFound, nil)

	done := r.accept(t, analyze)
	if err := r.run(ctx, done.ID); err != nil {
		t.Fatal(err)
	}
	wantFault(t, r.svc.CheckCancel(ctx, r.st, r.p, done.ID), fault.InvalidState, nil)
	_, err = r.svc.Cancel(ctx, r.st, r.p, done.ID)
	wantFault(t, err, fault.InvalidState, nil)
	if got := r.op(t, done.ID); got.Status != StatusCompleted {
		t.Fatalf("after a refused cancel: %s", got.Status)
	}
}

// The expiry job refuses (for a retry) before the store's clock reaches
// the deadline, expires the operation after it, and leaves an ended one
// as it is.
func TestExpiryFollowsTheDeadline(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Config{Deadline: time.Hour}, 0)
	in := r.input(t, nil)
	o := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Analyze(ctx, st, r.p, nil, AnalyzeRequest{InputAssetID: in.ID})
	})
	expire := func(id string) error {
		return r.svc.ExpireHandler()(ctx, jobsJob(JobExpire, id))
	}
	if err := expire(o.ID); err == nil || r.op(t, o.ID).Status != StatusQueued {
		t.Fatalf("an expiry before the deadline: %v, %s", err, r.op(t, o.ID).Status)
	}
	r.st.advance(time.Hour)
	if err := expire(o.ID); err != nil {
		t.Fatal(err)
	}
	if got := r.op(t, o.ID); got.Status != StatusExpired || got.EndedAt == nil {
		t.Fatalf("after the deadline: %+v", got)
	}

	c := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Analyze(ctx, st, r.p, nil, AnalyzeRequest{InputAssetID: in.ID})
	})
	if _, err := r.svc.Cancel(ctx, r.st, r.p, c.ID); err != nil {
		t.Fatal(err)
	}
	r.st.advance(2 * time.Hour)
	if err := expire(c.ID); err != nil {
		t.Fatal(err)
	}
	if got := r.op(t, c.ID); got.Status != StatusCancelled {
		t.Fatalf("an expiry of a cancelled operation: %s", got.Status)
	}
}

// A run dispatches and starts the operation through the table, stores the
// engine's readings as the analysis (rounded, unavailable ones with their
// reason), completes it at finished/100 and writes one completion event;
// running the job again changes nothing.
func TestRunCompletesAnAnalysis(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Config{}, 0)
	in := r.input(t, nil)
	o := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Analyze(ctx, st, r.p, nil, AnalyzeRequest{InputAssetID: in.ID})
	})
	if err := r.run(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	got := r.op(t, o.ID)
	if got.Status != StatusCompleted || got.Stage != StageFinished || got.Progress != 100 || got.StartedAt == nil || got.EndedAt == nil {
		t.Fatalf("operation = %+v", got)
	}
	var a Analysis
	if err := json.Unmarshal(got.Result, &a); err != nil {
		t.Fatal(err)
	}
	if *a.Duration.Value != 2 || *a.SampleRate.Value != 8000 || *a.BitDepth.Value != 16 || *a.ChannelCount.Value != 1 ||
		*a.IntegratedLoudness.Value != -20.123 || a.IntegratedLoudness.Unit != "LUFS" || a.LoudnessRange.Available ||
		*a.LoudnessRange.Reason != "shorter than 3 s" || *a.TruePeak.Value != -5.9 || a.BPM.Available || *a.Key.Text != "A minor" {
		t.Fatalf("analysis = %s", got.Result)
	}
	if ev := r.st.eventsOf(o.ID); len(ev) != 1 || ev[0].Type != EventCompleted || ev[0].AggregateVersion != got.Version {
		t.Fatalf("events = %+v", ev)
	}
	if err := r.run(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	if again := r.op(t, o.ID); again.Version != got.Version || len(r.st.eventsOf(o.ID)) != 1 {
		t.Fatalf("a second run changed the operation: %+v", again)
	}
}

// A failure that would recur fails the operation once with its code and
// details, and the job completes: past the duration bound (the limit of
// the operation's plan), undecodable, silent, and an output past the
// upload limit. An uncoded error is returned for a retry and leaves the
// operation processing.
func TestRunFailsOnceOnPermanentErrors(t *testing.T) {
	const limit = 4096
	for _, c := range []struct {
		name    string
		measure error
		master  func(Sink) error
		code    fault.Code
		details map[string]any
	}{
		{name: "too long", measure: fmt.Errorf("decoding: %w", ErrTooLong), code: fault.InvalidInput,
			details: map[string]any{"reason": "duration_limit", "limit": 600, "field": "input.assetId"}},
		{name: "undecodable", measure: fmt.Errorf("decoding: %w", ErrUndecodable), code: fault.InvalidInput,
			details: map[string]any{"reason": "undecodable", "field": "input.assetId"}},
		{name: "silent", master: func(Sink) error { return fmt.Errorf("mastering: %w", ErrSilent) }, code: fault.InvalidInput,
			details: map[string]any{"reason": "silent", "field": "input.assetId"}},
		{name: "output too large", master: func(out Sink) error {
			for {
				if _, err := out.W.Write(make([]byte, 1000)); err != nil {
					return fmt.Errorf("encoding: %w", err)
				}
			}
		}, code: fault.PayloadTooLarge, details: map[string]any{"reason": "output_size", "limit": limit}},
		{name: "infrastructure", measure: errors.New("disk on fire")},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, Config{}, limit)
			in := r.input(t, nil)
			r.eng.MeasureFunc = func(context.Context, Input) (Loudness, error) { return Loudness{}, c.measure }
			if c.master != nil {
				r.eng.MasterFunc = func(_ context.Context, _ Input, out Sink) (MasterResult, error) { return MasterResult{}, c.master(out) }
			}
			o := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
				if c.master != nil {
					return r.svc.Master(ctx, st, r.p, r.authority("free"), MasterRequest{InputAssetID: in.ID, Output: OutputSpec{"wav", 48000, 24}})
				}
				return r.svc.Analyze(ctx, st, r.p, r.authority("free"), AnalyzeRequest{InputAssetID: in.ID})
			})
			err := r.run(ctx, o.ID)
			got := r.op(t, o.ID)
			if c.code == "" {
				if err == nil || got.Status != StatusProcessing {
					t.Fatalf("an infrastructure error: run %v, operation %s", err, got.Status)
				}
				return
			}
			if err != nil {
				t.Fatalf("run returned %v: the job would be retried", err)
			}
			var d map[string]any
			if json.Unmarshal(got.FailureDetails, &d) != nil || got.Status != StatusFailed || got.FailureCode != string(c.code) || got.Result != nil {
				t.Fatalf("operation = %s %s %s", got.Status, got.FailureCode, got.FailureDetails)
			}
			for k, v := range c.details {
				if fmt.Sprint(d[k]) != fmt.Sprint(v) {
					t.Fatalf("details = %v, want %s = %v", d, k, v)
				}
			}
			if outs, _ := r.st.SoundOutputs(ctx, o.ID); len(outs) != 0 {
				t.Fatalf("outputs of a failed operation: %+v", outs)
			}
		})
	}
}

// A running operation stops when it is cancelled, and when the store's
// clock passes its deadline (the run expires it itself): the engine's
// context ends within a few polls, the job completes, and the operation
// keeps its end state with no result. The end of the job's own context is
// not a cancel: the run returns an error for a retry.
func TestRunStopsOnCancelAndAtTheDeadline(t *testing.T) {
	for _, end := range []string{"cancel", "deadline", "pool"} {
		t.Run(end, func(t *testing.T) {
			r := newRig(t, Config{}, 0)
			in := r.input(t, nil)
			started := make(chan struct{})
			r.eng.MeasureFunc = func(ctx context.Context, _ Input) (Loudness, error) {
				close(started)
				<-ctx.Done()
				return Loudness{}, fmt.Errorf("reading stopped: %w", context.Cause(ctx))
			}
			o := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
				return r.svc.Analyze(ctx, st, r.p, nil, AnalyzeRequest{InputAssetID: in.ID})
			})
			job, stopPool := context.WithCancel(context.Background())
			defer stopPool()
			done := make(chan error, 1)
			go func() { done <- r.run(job, o.ID) }()
			<-started
			want := StatusCancelled
			switch end {
			case "cancel":
				if _, err := r.svc.Cancel(context.Background(), r.st, r.p, o.ID); err != nil {
					t.Fatal(err)
				}
			case "deadline":
				r.st.advance(31 * time.Minute)
				want = StatusExpired
			case "pool":
				stopPool()
				want = StatusProcessing
			}
			select {
			case err := <-done:
				if (err != nil) != (end == "pool") {
					t.Fatalf("run returned %v", err)
				}
			case <-time.After(time.Second):
				t.Fatal("the run did not stop within a second")
			}
			if got := r.op(t, o.ID); got.Status != want || got.Result != nil {
				t.Fatalf("operation = %s %s", got.Status, got.Result)
			}
		})
	}
}

// Outputs are stored once per operation and name, derived from the input,
// and the last one completes the operation.
func TestRunStoresOutputs(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Config{}, 0)
	in := r.input(t, nil)
	o := r.accept(t, func(ctx context.Context, st Store) (Operation, error) {
		return r.svc.Stems(ctx, st, r.p, nil, StemsRequest{InputAssetID: in.ID, Stems: []string{"bass", "drums"},
			Output: OutputSpec{"wav", 44100, 16}})
	})
	if err := r.run(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	outs, err := r.svc.Outputs(ctx, r.st, o.ID)
	if err != nil || len(outs) != 2 || outs[0].Name != "bass" || outs[1].Name != "drums" || outs[0].ParentAssetID != in.ID ||
		outs[0].SampleRate != 44100 || outs[0].Format != "wav" {
		t.Fatalf("outputs = %+v, %v", outs, err)
	}
	a, err := r.st.AssetGet(ctx, assetScope(r.p.Scope()), outs[1].AssetID)
	if err != nil || a.MediaType != "audio/wav" || a.Origin != "derived" {
		t.Fatalf("output asset = %+v, %v", a, err)
	}
	// Each output's provenance, written with it, names the operation and
	// the input with its content hash.
	for _, out := range outs {
		pr := r.st.prov[out.AssetID]
		if pr.Origin != "derived" || pr.OperationID != o.ID || len(pr.Parents) != 1 || pr.Parents[0].AssetID != in.ID ||
			pr.Parents[0].SHA256 != in.SHA256 || pr.OutputSHA256 == "" || pr.OutputSHA256 == in.SHA256 {
			t.Fatalf("provenance of %s = %+v", out.Name, pr)
		}
	}
	if got := r.op(t, o.ID); got.Status != StatusCompleted || !contains(string(got.Result), `"stems":["bass","drums"]`) {
		t.Fatalf("operation = %s %s", got.Status, got.Result)
	}
}

// The sink an engine writes to refuses the write that would pass the
// upload limit, whatever its size, and keeps the bytes before it.
func TestOutputSinkStopsAtTheLimit(t *testing.T) {
	r := newRig(t, Config{}, 10)
	tmp, out, done, err := r.svc.newOutput(OutputSpec{"wav", 48000, 16})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if _, err := out.W.Write(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	var size *outputSizeError
	if _, err := out.W.Write(make([]byte, 3)); !errors.As(err, &size) || size.limit != 10 {
		t.Fatalf("a write past the limit: %v", err)
	}
	if _, err := out.W.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := out.W.Write(make([]byte, 10)); err != nil {
		t.Fatalf("a rewrite within the limit: %v", err)
	}
	if st, _ := tmp.Stat(); st.Size() != 10 {
		t.Fatalf("file size %d", st.Size())
	}
}
