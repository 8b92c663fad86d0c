package e2e_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/transport/api"
)

// analysisHold keeps every claimed sound run job in the running state, as
// an hour-long analysis would, until released: the platform's job fault
// hook blocks it right after its claim.
type analysisHold struct {
	held     atomic.Int32
	once     sync.Once
	released chan struct{}
	// hold, when set, is how long each run is held instead of until
	// release.
	hold time.Duration
}

func newAnalysisHold() *analysisHold { return &analysisHold{released: make(chan struct{})} }

func (h *analysisHold) hook(ctx context.Context, job jobs.Job, point string) error {
	if job.Kind != sound.JobRun || point != jobs.PointClaimed {
		return nil
	}
	h.held.Add(1)
	defer h.held.Add(-1)
	var timeout <-chan time.Time
	if h.hold > 0 {
		timeout = time.After(h.hold)
	}
	select {
	case <-h.released:
	case <-timeout:
	case <-ctx.Done():
	}
	return nil
}

func (h *analysisHold) release() { h.once.Do(func() { close(h.released) }) }

// eachDialect runs fn on a fresh system of each dialect, with options
// built per system so that no state is shared between the two.
func eachDialect(t *testing.T, opts func() platformtest.Options, fn func(t *testing.T, s *platformtest.System)) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			o := opts()
			o.Postgres = pg
			fn(t, platformtest.New(t, o))
		})
	}
}

// acceptAnalyses uploads a short WAV and accepts n analyses of it,
// returning their operation ids.
func acceptAnalyses(t *testing.T, s *platformtest.System, n int, prefix string) []string {
	t.Helper()
	asset := uploadWAV(t, s, pcmWAV(8000, 800, func(i int) float64 { return 0.1 }))
	var ids []string
	for i := range n {
		r := analyze(s, fmt.Sprintf("%s-%d", prefix, i), map[string]any{"input": map[string]any{"assetId": asset}})
		if r.Status != 202 {
			t.Fatalf("analyze %d: %d %s", i, r.Status, r.Body)
		}
		var v api.SoundOperationView
		r.Data(t, &v)
		ids = append(ids, v.ID)
	}
	return ids
}

// serviceHealth reads /api/v1/health/services and returns the report and
// the named service.
func serviceHealth(t *testing.T, s *platformtest.System, name string) (api.HealthReport, api.ServiceHealth) {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/health/services", Key: s.Boot.TestKey})
	if r.Status != 200 {
		t.Fatalf("health: %d %s", r.Status, r.Body)
	}
	var h api.HealthReport
	r.Data(t, &h)
	for _, sv := range h.Services {
		if sv.Name == name {
			return h, sv
		}
	}
	t.Fatalf("health has no service %s: %+v", name, h)
	return h, api.ServiceHealth{}
}

// TestJobClassGenerationDispatchesBehindRunningAnalyses: four analyses
// held running on four audio workers do not keep a music generation in
// queued: its dispatch runs on the provider class's workers while all four
// still run.
func TestJobClassGenerationDispatchesBehindRunningAnalyses(t *testing.T) {
	t.Parallel()
	var hold *analysisHold
	eachDialect(t, func() platformtest.Options {
		hold = newAnalysisHold()
		o := genOptions()
		o.Jobs.Workers = 0
		o.Jobs.AudioWorkers, o.Jobs.AudioPerWorkspace, o.Jobs.FaultHookFunc = 4, 4, hold.hook
		return o
	}, func(t *testing.T, s *platformtest.System) {
		defer hold.release()
		analyses := acceptAnalyses(t, s, 4, "held")
		waitFor(t, "four analyses running", func() bool { return hold.held.Load() == 4 })

		acc := acceptedID(t, generate(s, "gen-behind-audio", map[string]any{"prompt": "A calm piano piece", "duration": 90}))
		v := waitOp(t, s, acc.OperationID, "dispatched", func(v api.OperationView) bool { return v.Status != "queued" })
		if v.Status != "dispatched" {
			t.Fatalf("generation = %s, want dispatched", v.Status)
		}
		if n := hold.held.Load(); n != 4 {
			t.Fatalf("%d analyses held when the generation dispatched, want 4", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM jobs WHERE kind = ? AND state = 'running'`, sound.JobRun); n != 4 {
			t.Fatalf("%d sound run jobs running when the generation dispatched, want 4", n)
		}
		hold.release()
		for _, id := range analyses {
			deadline := time.Now().Add(20 * time.Second)
			for soundOp(t, s, id).Status != "completed" {
				if time.Now().After(deadline) {
					t.Fatalf("analysis %s did not complete after release: %+v", id, soundOp(t, s, id))
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
}

// TestJobClassHealthReportsStarvedAudio: an analysis that waits for the
// only audio worker makes jobs.audio degraded, with its age, once it has
// waited past the threshold, and down past ten times it; the class is up
// before and again once the queue drains.
func TestJobClassHealthReportsStarvedAudio(t *testing.T) {
	t.Parallel()
	var hold *analysisHold
	eachDialect(t, func() platformtest.Options {
		hold = newAnalysisHold()
		return platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 5 * time.Millisecond, Lease: time.Hour,
			AudioWorkers: 1, AudioPerWorkspace: 2, StarvedAfter: time.Minute, FaultHookFunc: hold.hook}}
	}, func(t *testing.T, s *platformtest.System) {
		defer hold.release()
		analyses := acceptAnalyses(t, s, 2, "starve")
		waitFor(t, "one analysis running", func() bool { return hold.held.Load() == 1 })

		_, a := serviceHealth(t, s, "jobs.audio")
		if a.Status != "up" || a.OldestJobAgeSeconds == nil || *a.OldestJobAgeSeconds != 0 || *a.RunnableJobs != 1 {
			t.Fatalf("jobs.audio with a fresh waiting analysis = %+v, want up, age 0, 1 runnable", a)
		}

		s.Clock.Advance(61 * time.Second)
		rep, a := serviceHealth(t, s, "jobs.audio")
		if a.Status != "degraded" || rep.Status == "up" || a.OldestJobAgeSeconds == nil || *a.OldestJobAgeSeconds != 61 ||
			*a.RunnableJobs != 1 || a.Detail == "" {
			t.Fatalf("jobs.audio after 61s = %+v (report %s), want degraded with age 61", a, rep.Status)
		}
		_, prov := serviceHealth(t, s, "jobs.provider")
		if prov.Status != "up" || *prov.OldestJobAgeSeconds != 0 {
			t.Fatalf("jobs.provider = %+v, want up: audio's backlog is not its", prov)
		}

		s.Clock.Advance(10 * time.Minute)
		if rep, a := serviceHealth(t, s, "jobs.audio"); a.Status != "down" || rep.Status != "down" || *a.OldestJobAgeSeconds != 661 {
			t.Fatalf("jobs.audio after 661s = %+v (report %s), want down", a, rep.Status)
		}

		hold.release()
		for _, id := range analyses {
			deadline := time.Now().Add(20 * time.Second)
			for soundOp(t, s, id).Status != "completed" {
				if time.Now().After(deadline) {
					t.Fatalf("analysis %s did not complete after release: %+v", id, soundOp(t, s, id))
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if _, a := serviceHealth(t, s, "jobs.audio"); a.Status != "up" || *a.OldestJobAgeSeconds != 0 || *a.RunnableJobs != 0 {
			t.Fatalf("jobs.audio after the queue drained = %+v, want up", a)
		}
	})
}

// TestJobClassGenerationWait measures how long a music generation waits in
// queued while four analyses are accepted before it and each holds its
// audio worker for holdFor (standing in for hour-long analyses), on the
// platform's default job configuration. It prints the wait; it asserts
// only that the generation dispatches.
func TestJobClassGenerationWait(t *testing.T) {
	t.Parallel()
	const holdFor = 2 * time.Second
	hold := newAnalysisHold()
	hold.hold = holdFor
	s := platformtest.New(t, platformtest.Options{Music: true, Jobs: platform.JobsConfig{PollInterval: 5 * time.Millisecond, FaultHookFunc: hold.hook}})
	defer hold.release()
	acceptAnalyses(t, s, 4, "hour-long")
	waitFor(t, "an analysis running", func() bool { return hold.held.Load() >= 1 })
	time.Sleep(50 * time.Millisecond) // let the workers that may take the other analyses take them
	start := time.Now()
	acc := acceptedID(t, generate(s, "gen-wait", map[string]any{"prompt": "A calm piano piece", "duration": 90}))
	v := waitOp(t, s, acc.OperationID, "dispatched", func(v api.OperationView) bool { return v.Status != "queued" })
	waited := time.Since(start)
	if v.Status != "dispatched" {
		t.Fatalf("generation = %s, want dispatched", v.Status)
	}
	t.Logf("generation waited %s in queued behind 4 analyses held %s each (%d held at dispatch)",
		waited.Round(time.Millisecond), holdFor, hold.held.Load())
}
