package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/storetest"
)

// patience bounds every wait so a broken pool fails the test instead of
// hanging it.
const patience = 20 * time.Second

var errCrash = errors.New("simulated crash")

// waitFor polls cond until it holds or patience runs out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// forEachDialect runs fn on a fresh database of each dialect with a fake
// clock at storetest.Epoch.
func forEachDialect(t *testing.T, fn func(t *testing.T, db *store.DB, clock *storetest.Clock)) {
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) {
			clock := storetest.NewClock(storetest.Epoch)
			fn(t, open(t, clock), clock)
		})
	}
}

func enqueue(t *testing.T, db *store.DB, ps ...jobs.InsertParams) {
	t.Helper()
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		for _, p := range ps {
			if _, err := tx.JobInsert(context.Background(), p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

func newPool(t *testing.T, cfg jobs.Config) *jobs.Pool {
	t.Helper()
	p, err := jobs.New(cfg)
	if err != nil {
		t.Fatalf("jobs.New: %v", err)
	}
	return p
}

func start(t *testing.T, p *jobs.Pool) {
	t.Helper()
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		p.Stop(ctx)
	})
}

func stop(t *testing.T, p *jobs.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

func only(t *testing.T, db *store.DB) jobs.Record {
	t.Helper()
	recs, err := db.Read().JobList(context.Background(), "", 2)
	if err != nil || len(recs) != 1 {
		t.Fatalf("JobList = %d jobs, %v; want 1", len(recs), err)
	}
	return recs[0]
}

// runLog counts handler runs per job id.
type runLog struct {
	mu   sync.Mutex
	runs map[string]int
}

func (l *runLog) handler(ctx context.Context, job jobs.Job) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[string]int{}
	}
	l.runs[job.ID]++
	return nil
}

func (l *runLog) snapshot() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.runs))
	for k, v := range l.runs {
		out[k] = v
	}
	return out
}

// TestTwoPoolsRunEachJobOnce is the scale-out path: two pools (two hosts)
// on one database share 300 jobs, and every job runs exactly once.
func TestTwoPoolsRunEachJobOnce(t *testing.T) {
	const n = 300
	run := func(t *testing.T, dbA, dbB *store.DB) {
		var log runLog
		ps := make([]jobs.InsertParams, n)
		for i := range ps {
			ps[i] = jobs.InsertParams{Kind: "count", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}
		}
		enqueue(t, dbA, ps...)
		var pools []*jobs.Pool
		for i, db := range []*store.DB{dbA, dbB} {
			p := newPool(t, jobs.Config{
				Store: db.Jobs(), Handlers: map[string]jobs.Handler{"count": log.handler},
				Workers: 4, PollInterval: 10 * time.Millisecond, ID: fmt.Sprintf("host%d", i),
			})
			start(t, p)
			pools = append(pools, p)
		}
		waitFor(t, "300 jobs succeeded", func() bool {
			c, err := dbA.Read().JobCounts(context.Background())
			return err == nil && c[jobs.Succeeded] == n
		})
		for _, p := range pools {
			stop(t, p)
		}
		runs := log.snapshot()
		if len(runs) != n {
			t.Fatalf("%d distinct jobs ran, want %d", len(runs), n)
		}
		for id, k := range runs {
			if k != 1 {
				t.Errorf("job %s ran %d times", id, k)
			}
		}
		c, err := dbB.Read().JobCounts(context.Background())
		if err != nil || len(c) != 1 || c[jobs.Succeeded] != n {
			t.Fatalf("JobCounts = %v, %v; want %d succeeded only", c, err, n)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		db := storetest.OpenSQLite(t, nil)
		run(t, db, db)
	})
	t.Run("postgres", func(t *testing.T) {
		url := storetest.PostgresURL(t)
		var dbs []*store.DB
		for range 2 { // two connection pools, as two hosts have
			db, err := postgres.Open(context.Background(), postgres.Config{URL: url, MaxConns: 8})
			if err != nil {
				t.Fatalf("postgres.Open: %v", err)
			}
			t.Cleanup(func() { db.Close() })
			dbs = append(dbs, db)
		}
		run(t, dbs[0], dbs[1])
	})
}

// TestCrashedWorkerJobIsReclaimed: a worker dies right after claiming; once
// the lease expires another pool reclaims the job and completes it.
func TestCrashedWorkerJobIsReclaimed(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		const lease = 30 * time.Second
		var log runLog
		handlers := map[string]jobs.Handler{"effect": log.handler}
		enqueue(t, db, jobs.InsertParams{Kind: "effect"})

		crashing := newPool(t, jobs.Config{
			Store: db.Jobs(), Handlers: handlers, Lease: lease, ID: "doomed",
			FaultHookFunc: func(ctx context.Context, job jobs.Job, point string) error {
				if point == jobs.PointClaimed {
					return errCrash
				}
				return nil
			},
		})
		if n, err := crashing.RunOnce(context.Background()); err != nil || n != 1 {
			t.Fatalf("crashing RunOnce = %d, %v; want 1 claimed", n, err)
		}
		if r := only(t, db); r.State != jobs.Running || r.Attempts != 1 || len(log.snapshot()) != 0 {
			t.Fatalf("after crash: %+v, runs %v", r, log.snapshot())
		}

		survivor := newPool(t, jobs.Config{Store: db.Jobs(), Handlers: handlers, Lease: lease, ID: "survivor", PollInterval: 10 * time.Millisecond})
		start(t, survivor)
		waitFor(t, "the survivor to poll", func() bool { return !survivor.Health().LastPoll.IsZero() })
		if r := only(t, db); r.State != jobs.Running || !strings.HasPrefix(r.LockedBy, "doomed/") {
			t.Fatalf("job taken while its lease held: %+v", r)
		}
		clock.Advance(lease + time.Second)
		survivor.Notify()
		waitFor(t, "the reclaimed job to succeed", func() bool { return only(t, db).State == jobs.Succeeded })
		stop(t, survivor)

		r := only(t, db)
		if r.Attempts != 2 || r.LockedBy != "" {
			t.Fatalf("after reclaim: %+v, want attempts 2", r)
		}
		if runs := log.snapshot(); len(runs) != 1 || runs[r.ID] != 1 {
			t.Fatalf("runs = %v, want the job once", runs)
		}
	})
}

// TestCrashBeforeCompleteRunsAgain: delivery is at least once. A worker that
// dies after its handler succeeded but before recording it leaves the job to
// be run again after the lease.
func TestCrashBeforeCompleteRunsAgain(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		var log runLog
		var crashes atomic.Int32
		p := newPool(t, jobs.Config{
			Store: db.Jobs(), Handlers: map[string]jobs.Handler{"effect": log.handler},
			FaultHookFunc: func(ctx context.Context, job jobs.Job, point string) error {
				if point == jobs.PointBeforeComplete && crashes.Add(1) == 1 {
					return errCrash
				}
				return nil
			},
		})
		enqueue(t, db, jobs.InsertParams{Kind: "effect"})
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("RunOnce = %d, %v", n, err)
		}
		if r := only(t, db); r.State != jobs.Running {
			t.Fatalf("after crash before complete: %+v", r)
		}
		clock.Advance(31 * time.Second)
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("second RunOnce = %d, %v", n, err)
		}
		r := only(t, db)
		if r.State != jobs.Succeeded || r.Attempts != 2 || log.snapshot()[r.ID] != 2 {
			t.Fatalf("after rerun: %+v, runs %v", r, log.snapshot())
		}
	})
}

// TestStopWaitsForInFlightHandler: Stop returns only after a running handler
// has finished, and the job is then recorded as succeeded.
func TestStopWaitsForInFlightHandler(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		started, release := make(chan struct{}), make(chan struct{})
		p := newPool(t, jobs.Config{Store: db.Jobs(), PollInterval: 10 * time.Millisecond, Handlers: map[string]jobs.Handler{
			"slow": func(ctx context.Context, job jobs.Job) error {
				close(started)
				<-release
				return nil
			},
		}})
		start(t, p)
		enqueue(t, db, jobs.InsertParams{Kind: "slow"})
		p.Notify()
		select {
		case <-started:
		case <-time.After(patience):
			t.Fatal("handler never started")
		}
		if h := p.Health(); !h.Running || h.InFlight != 1 {
			t.Fatalf("Health while running = %+v", h)
		}
		stopped := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			stopped <- p.Stop(ctx)
		}()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned (%v) while a handler was running", err)
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		select {
		case err := <-stopped:
			if err != nil {
				t.Fatalf("Stop: %v", err)
			}
		case <-time.After(patience):
			t.Fatal("Stop did not return after the handler finished")
		}
		if r := only(t, db); r.State != jobs.Succeeded {
			t.Fatalf("after Stop: %+v", r)
		}
		if h := p.Health(); h.Running || h.InFlight != 0 {
			t.Fatalf("Health after Stop = %+v", h)
		}
	})
}

// TestStopCancelsHandlersAfterDeadline: a handler still running when Stop's
// context ends has its context cancelled; its error is recorded as a failure.
func TestStopCancelsHandlersAfterDeadline(t *testing.T) {
	db := storetest.OpenSQLite(t, storetest.NewClock(storetest.Epoch))
	started := make(chan struct{})
	p := newPool(t, jobs.Config{Store: db.Jobs(), PollInterval: 10 * time.Millisecond, Handlers: map[string]jobs.Handler{
		"stubborn": func(ctx context.Context, job jobs.Job) error {
			close(started)
			<-ctx.Done()
			return fmt.Errorf("stubborn: %w", ctx.Err())
		},
	}})
	start(t, p)
	enqueue(t, db, jobs.InsertParams{Kind: "stubborn"})
	p.Notify()
	select {
	case <-started:
	case <-time.After(patience):
		t.Fatal("handler never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want DeadlineExceeded", err)
	}
	waitFor(t, "the cancelled job to be recorded", func() bool { return only(t, db).State == jobs.Available })
	if r := only(t, db); r.Attempts != 1 || !strings.Contains(r.LastError, "context canceled") {
		t.Fatalf("after cancelled stop: %+v", r)
	}
}

// TestPanicIsFailureWithBackoff: a panicking handler fails the attempt; the
// job is retried after a backoff within Backoff's bounds.
func TestPanicIsFailureWithBackoff(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		var calls atomic.Int32
		p := newPool(t, jobs.Config{Store: db.Jobs(), Handlers: map[string]jobs.Handler{
			"explode": func(ctx context.Context, job jobs.Job) error {
				calls.Add(1)
				panic("kaboom")
			},
		}})
		enqueue(t, db, jobs.InsertParams{Kind: "explode"})
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("RunOnce = %d, %v", n, err)
		}
		r := only(t, db)
		lo, hi := storetest.Epoch.Add(jobs.Backoff(1, 0)), storetest.Epoch.Add(jobs.Backoff(1, 1))
		if r.State != jobs.Available || r.Attempts != 1 || !strings.Contains(r.LastError, "panicked: kaboom") ||
			r.RunAt.Before(lo) || r.RunAt.After(hi) {
			t.Fatalf("after panic: %+v, want available, run_at in [%v, %v]", r, lo, hi)
		}
		if n, err := p.RunOnce(context.Background()); n != 0 || err != nil {
			t.Fatalf("RunOnce during backoff = %d, %v; want 0", n, err)
		}
		clock.Advance(jobs.Backoff(1, 1))
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("RunOnce after backoff = %d, %v; want 1", n, err)
		}
		if r := only(t, db); r.Attempts != 2 || calls.Load() != 2 {
			t.Fatalf("after retry: %+v, calls %d", r, calls.Load())
		}
	})
}

// TestUnknownKindIsDiscarded: a job no handler serves fails with an error
// naming its kind and is discarded when its attempts are spent.
func TestUnknownKindIsDiscarded(t *testing.T) {
	db := storetest.OpenSQLite(t, storetest.NewClock(storetest.Epoch))
	p := newPool(t, jobs.Config{Store: db.Jobs()})
	enqueue(t, db, jobs.InsertParams{Kind: "mystery", MaxAttempts: 1})
	if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
		t.Fatalf("RunOnce = %d, %v", n, err)
	}
	if r := only(t, db); r.State != jobs.Discarded || !strings.Contains(r.LastError, `"mystery"`) || r.FinishedAt.IsZero() {
		t.Fatalf("unknown kind: %+v", r)
	}
}

// TestLostLeaseCancelsHandler: when another worker reclaims a job (its lease
// expired), the heartbeat sees CONFLICT, cancels the old handler and the old
// worker records nothing.
func TestLostLeaseCancelsHandler(t *testing.T) {
	clock := storetest.NewClock(storetest.Epoch)
	db := storetest.OpenSQLite(t, clock)
	const lease = 150 * time.Millisecond // heartbeats every 50ms of real time
	cancelled := make(chan struct{})
	// The job is queued before the pool starts, so the pool's first claim
	// takes it and no poll or wake-up follows for an hour: a second claim
	// by the pool, after the clock jumps, would take the expired job back
	// before the thief does.
	enqueue(t, db, jobs.InsertParams{Kind: "long"})
	p := newPool(t, jobs.Config{Store: db.Jobs(), Lease: lease, PollInterval: time.Hour, Handlers: map[string]jobs.Handler{
		"long": func(ctx context.Context, job jobs.Job) error {
			<-ctx.Done()
			close(cancelled)
			return ctx.Err()
		},
	}})
	start(t, p)
	waitFor(t, "the job to be claimed", func() bool { return only(t, db).State == jobs.Running })
	waitFor(t, "another worker to reclaim the job", func() bool {
		clock.Advance(time.Hour)
		got, err := db.Jobs().JobClaim(context.Background(), jobs.ClaimParams{LockedBy: "thief/1", Limit: 1, Lease: time.Hour})
		return err == nil && len(got) == 1
	})
	select {
	case <-cancelled:
	case <-time.After(patience):
		t.Fatal("the handler was not cancelled after its lease was lost")
	}
	stop(t, p)
	if r := only(t, db); r.State != jobs.Running || r.LockedBy != "thief/1" || r.Attempts != 2 {
		t.Fatalf("the old worker overwrote the reclaimed job: %+v", r)
	}
}

func TestNewValidates(t *testing.T) {
	db := storetest.OpenSQLite(t, nil)
	for name, cfg := range map[string]jobs.Config{
		"no store":     {},
		"nil handler":  {Store: db.Jobs(), Handlers: map[string]jobs.Handler{"k": nil}},
		"neg workers":  {Store: db.Jobs(), Workers: -1},
		"neg lease":    {Store: db.Jobs(), Lease: -time.Second},
		"neg interval": {Store: db.Jobs(), PollInterval: -time.Second},
	} {
		if _, err := jobs.New(cfg); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("%s: New = %v, want INVALID_INPUT", name, err)
		}
	}
	p := newPool(t, jobs.Config{Store: db.Jobs()})
	if !strings.HasPrefix(p.ID(), "pool_") {
		t.Errorf("default ID = %q", p.ID())
	}
	if h := p.Health(); h.Running || !h.LastPoll.IsZero() {
		t.Errorf("Health before Start = %+v", h)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Errorf("Stop before Start = %v", err)
	}
	start(t, p)
	if err := p.Start(context.Background()); !fault.Is(err, fault.InvalidState) {
		t.Errorf("second Start = %v, want INVALID_STATE_TRANSITION", err)
	}
	if _, err := p.RunOnce(context.Background()); !fault.Is(err, fault.InvalidState) {
		t.Errorf("RunOnce on a started pool = %v", err)
	}
}

// BenchmarkRunOnceSQLite measures claim, run and complete of batches of
// no-op jobs on SQLite.
func BenchmarkRunOnceSQLite(b *testing.B) {
	db := storetest.OpenSQLite(b, nil)
	p, err := jobs.New(jobs.Config{Store: db.Jobs(), Workers: 8, Handlers: map[string]jobs.Handler{
		"noop": func(context.Context, jobs.Job) error { return nil },
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 8 {
				if _, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: "noop"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if n, err := p.RunOnce(ctx); err != nil || n != 8 {
			b.Fatalf("RunOnce = %d, %v", n, err)
		}
	}
}
