package sound_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/sound/builtin"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
)

// countingEngine is the built-in engine counting its calls.
type countingEngine struct {
	builtin.Engine
	master, measure atomic.Int32
}

func (e *countingEngine) Master(ctx context.Context, in sound.Input, opts sound.MasterOptions, out sound.Sink) (sound.MasterResult, error) {
	e.master.Add(1)
	return e.Engine.Master(ctx, in, opts, out)
}

func (e *countingEngine) Measure(ctx context.Context, in sound.Input) (sound.Loudness, error) {
	e.measure.Add(1)
	return e.Engine.Measure(ctx, in)
}

// fixture is a sound service on a real store with one workspace.
type fixture struct {
	db     *store.DB
	clock  *storetest.Clock
	svc    *sound.Service
	assets *asset.Service
	engine *countingEngine
	p      *access.Principal
}

func newFixture(t *testing.T, open storetest.Opener, maxUpload int64, maxInput time.Duration) *fixture {
	t.Helper()
	ctx := context.Background()
	clock := storetest.NewClock(storetest.Epoch)
	db := open(t, clock)
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	assets, err := asset.New(asset.Config{Blobs: blobs, MaxUploadBytes: maxUpload})
	if err != nil {
		t.Fatal(err)
	}
	eng := &countingEngine{}
	svc, err := sound.New(sound.Config{Assets: assets, Engine: eng, WatchInterval: 20 * time.Millisecond,
		Run: store.Runner[sound.Store](db), ReadFunc: store.Reader[sound.Store](db),
		MaxInputDurationFunc: func(string) time.Duration { return maxInput }})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.TenantInsert(ctx, "ten_1", "Tenant"); err != nil {
			return err
		}
		return tx.WorkspaceInsert(ctx, "ws_1", "ten_1", "Studio")
	}); err != nil {
		t.Fatal(err)
	}
	return &fixture{db: db, clock: clock, svc: svc, assets: assets, engine: eng,
		p: &access.Principal{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, UserID: "usr_1"}}
}

func (f *fixture) upload(t *testing.T, file []byte) asset.Asset {
	t.Helper()
	ctx := context.Background()
	a, err := f.assets.Upload(ctx, f.db.Read(), asset.UploadInput{Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"},
		Body: bytes.NewReader(file)}, func(ctx context.Context, insert func(asset.Store) (asset.Asset, error)) error {
		return f.db.InTx(ctx, func(tx *store.Tx) error { _, err := insert(tx); return err })
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// accept runs fn in a unit of work and returns the operation it accepted.
func (f *fixture) accept(t *testing.T, fn func(st sound.Store) (sound.Operation, error)) sound.Operation {
	t.Helper()
	var o sound.Operation
	if err := f.db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		o, err = fn(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return o
}

// runJob runs the operation's run job once, as the pool would on attempt.
func (f *fixture) runJob(ctx context.Context, id string, attempt int) error {
	payload, _ := json.Marshal(map[string]string{"operation": id})
	return f.svc.RunHandler()(ctx, jobs.Job{Kind: sound.JobRun, Payload: payload, Attempts: attempt, MaxAttempts: 25})
}

func (f *fixture) get(t *testing.T, id string) sound.Operation {
	t.Helper()
	o, err := f.svc.Get(context.Background(), f.db.Read(), f.p, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func details(t *testing.T, o sound.Operation) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(o.FailureDetails, &d); err != nil {
		t.Fatalf("failure details %q: %v", o.FailureDetails, err)
	}
	return d
}

// monoWAV is a 16-bit mono WAV of a 220 Hz tone.
func monoWAV(rate, frames int) []byte {
	b := assettest.WAVHeader(rate, 1, 16, false, int64(frames*2))
	for i := range frames {
		b = binary.LittleEndian.AppendUint16(b, uint16(int16(8000*math.Sin(2*math.Pi*220*float64(i)/float64(rate)))))
	}
	return b
}

// A mastering whose output would pass the size limit runs the engine
// once: the operation fails with PAYLOAD_TOO_LARGE and the limit, the job
// completes, and running the job again (a retry) computes nothing more.
func TestMasterOverTheSizeLimitRunsOnce(t *testing.T) {
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) {
			const limit = 64 << 10
			f := newFixture(t, open, limit, time.Minute)
			in := f.upload(t, monoWAV(8000, 8000)) // 16 KB in; 48 kHz 24-bit out is 144 KB
			o := f.accept(t, func(st sound.Store) (sound.Operation, error) {
				return f.svc.Master(context.Background(), st, f.p, nil, sound.MasterRequest{InputAssetID: in.ID,
					Output: sound.OutputSpec{Format: "wav", SampleRate: 48000, BitDepth: 24}})
			})
			for attempt := 1; attempt <= 3; attempt++ {
				if err := f.runJob(context.Background(), o.ID, attempt); err != nil {
					t.Fatalf("attempt %d returned %v: the job would be retried", attempt, err)
				}
			}
			got := f.get(t, o.ID)
			d := details(t, got)
			if got.Status != sound.StatusFailed || got.FailureCode != string(fault.PayloadTooLarge) ||
				d["reason"] != "output_size" || d["limit"] != float64(limit) {
				t.Fatalf("operation = %s %s %v", got.Status, got.FailureCode, d)
			}
			if n := f.engine.master.Load(); n != 1 {
				t.Fatalf("the engine mastered %d times, want 1", n)
			}
			if outs, err := f.svc.Outputs(context.Background(), f.db.Read(), o.ID); err != nil || len(outs) != 0 {
				t.Fatalf("outputs = %v, %v", outs, err)
			}
		})
	}
}

// An input whose header claims one second but holds more than the bound
// is stopped by the decoder at the bound: the operation fails once with
// INVALID_INPUT, reason duration_limit and the limit in seconds; an input
// that claims more than the bound is refused at admission.
func TestDecodingStopsAtTheDurationBound(t *testing.T) {
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, open, 0, 3*time.Second)
			lying := f.upload(t, assettest.ConstantFLAC(8000, 1, 16, 4096, 60*8000, 8000, 500))
			o := f.accept(t, func(st sound.Store) (sound.Operation, error) {
				return f.svc.Analyze(context.Background(), st, f.p, nil, sound.AnalyzeRequest{InputAssetID: lying.ID})
			})
			if err := f.runJob(context.Background(), o.ID, 1); err != nil {
				t.Fatalf("run: %v", err)
			}
			got := f.get(t, o.ID)
			d := details(t, got)
			if got.Status != sound.StatusFailed || got.FailureCode != string(fault.InvalidInput) || d["reason"] != "duration_limit" ||
				d["limit"] != float64(3) || d["field"] != "input.assetId" || got.Result != nil {
				t.Fatalf("operation = %s %s %v", got.Status, got.FailureCode, d)
			}

			claims := f.upload(t, assettest.ConstantFLAC(8000, 1, 16, 4096, 8000, 10*8000, 0))
			err := f.db.InTx(context.Background(), func(tx *store.Tx) error {
				_, err := f.svc.Analyze(context.Background(), tx, f.p, nil, sound.AnalyzeRequest{InputAssetID: claims.ID})
				return err
			})
			code, _, d := fault.Public(err)
			if code != fault.InvalidInput || d["reason"] != "duration_limit" || d["limit"] != int64(3) || d["claimedDurationSeconds"] != float64(10) {
				t.Fatalf("admission = %v %v", err, d)
			}
		})
	}
}

// The end of the job's own context (the pool stopping, a lost lease) is
// not a cancel: the run returns an error for another attempt and the
// operation keeps running; a cancel made while it runs stops it and
// completes the job, leaving the operation cancelled with no result.
func TestRunStopsOnCancelNotOnPoolStop(t *testing.T) {
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, open, 0, 10*time.Minute)
			// Ten minutes of 48 kHz stereo: seconds of work, in 110 KB.
			long := f.upload(t, assettest.ConstantFLAC(48000, 2, 16, 4096, 600*48000, 600*48000, 300))
			o := f.accept(t, func(st sound.Store) (sound.Operation, error) {
				return f.svc.Analyze(context.Background(), st, f.p, nil, sound.AnalyzeRequest{InputAssetID: long.ID})
			})
			job, stopPool := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- f.runJob(job, o.ID, 1) }()
			waitMeasuring(t, f, 1, done)
			stopPool()
			if err := <-done; err == nil {
				t.Fatal("a run stopped by its job's context returned nil: the job would not be retried")
			}
			if got := f.get(t, o.ID); got.Status != sound.StatusProcessing {
				t.Fatalf("after the pool stopped: %s", got.Status)
			}

			go func() { done <- f.runJob(context.Background(), o.ID, 2) }()
			waitMeasuring(t, f, 2, done)
			start := time.Now()
			if err := f.db.InTx(context.Background(), func(tx *store.Tx) error {
				_, err := f.svc.Cancel(context.Background(), tx, f.p, o.ID)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Logf("%s: the run returned %v after the cancel", name, time.Since(start).Round(time.Millisecond))
				if err != nil {
					t.Fatalf("a cancelled run returned %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not return within 10 s of the cancel")
			}
			if got := f.get(t, o.ID); got.Status != sound.StatusCancelled || got.Result != nil {
				t.Fatalf("after the cancel: %s %s", got.Status, got.Result)
			}
		})
	}
}

// waitMeasuring waits until the engine has started its n-th loudness
// measure (the run is in the middle of its work), failing if the run
// returns first.
func waitMeasuring(t *testing.T, f *fixture, n int32, done <-chan error) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for f.engine.measure.Load() < n {
		select {
		case err := <-done:
			t.Fatalf("the run returned %v before measure %d", err, n)
		case <-deadline:
			t.Fatalf("no measure %d after 10 s", n)
		case <-time.After(2 * time.Millisecond):
		}
	}
}
