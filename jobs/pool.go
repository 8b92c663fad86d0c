package jobs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Handler runs one job. Returning nil completes the job; an error (or a
// panic) fails the attempt, and the job is retried with backoff until its
// attempts are spent. ctx is cancelled when the pool stops past its grace
// period or when the job's lease is lost to another worker. The error text
// is stored and shown to operators: it must not contain secrets.
type Handler func(ctx context.Context, job Job) error

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Points at which Config.FaultHook is called.
const (
	// PointClaimed is right after the job was claimed, before its handler.
	PointClaimed = "claimed"
	// PointBeforeComplete is after the handler succeeded, before the job is
	// marked succeeded.
	PointBeforeComplete = "before_complete"
)

// Config configures a Pool. Zero values mean the documented defaults.
type Config struct {
	// Store claims and settles jobs. Required. It is the non-transactional
	// handle (store.DB.Jobs()): each call is its own unit of work.
	Store Store
	// Handlers maps a job kind to its handler. The map is copied. A claimed
	// job whose kind is missing fails with an error naming the kind.
	Handlers map[string]Handler
	// Workers is how many handlers run at once. Zero means 4.
	Workers int
	// Lease is how long a claim holds before other workers may reclaim the
	// job; running jobs renew it every Lease/3. Zero means 30s.
	Lease time.Duration
	// PollInterval is how long the dispatcher sleeps when it found fewer due
	// jobs than free workers; Notify wakes it early. Zero means 200ms.
	PollInterval time.Duration
	// Clock stamps Health. The retry delay is handed to the store as a
	// duration and every SQL time comes from the store's own clock, so this
	// clock never mixes with the database's. Nil means the wall clock.
	Clock Clock
	// Logger receives job failures, panics and lost leases. Nil discards.
	Logger *slog.Logger
	// ID identifies this pool (a host) in claim tokens (locked_by) and logs.
	// Empty means a random "pool_..." id.
	ID string
	// BackoffFunc returns the delay before retrying a job after its attempt
	// number attempt failed. Nil means Backoff with a random jitter.
	BackoffFunc func(attempt int) time.Duration
	// FaultHook is a test hook called at PointClaimed and
	// PointBeforeComplete. Returning an error makes the worker abandon the
	// job at once, neither completing nor failing it and no longer renewing
	// its lease, as a crash would. Nil in production.
	FaultHook func(ctx context.Context, job Job, point string) error
}

// Health is a pool's state for the health route.
type Health struct {
	// Running reports whether the dispatcher is claiming jobs.
	Running bool
	// LastPoll is when a claim last succeeded (zero before the first).
	LastPoll time.Time
	// InFlight counts handlers running now.
	InFlight int
	// LastPollError is the error of the most recent claim, "" if it
	// succeeded.
	LastPollError string
}

// errLeaseLost cancels a handler whose job was reclaimed by another worker.
var errLeaseLost = errors.New("jobs: lease lost: the job was reclaimed by another worker")

// errStopped cancels handlers still running when Stop's grace period ends.
var errStopped = errors.New("jobs: pool stopped")

// wallClock is the default Clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Pool claims jobs from a Store and runs their handlers on a bounded number
// of goroutines. Several pools (one per host) may share one database.
type Pool struct {
	store    Store
	handlers map[string]Handler
	workers  int
	lease    time.Duration
	poll     time.Duration
	clock    Clock
	log      *slog.Logger
	id       string
	// tokenPrefix starts every claim token: the ID and a per-instance
	// nonce, so two pools misconfigured with one ID, or a restarted host,
	// never share a token.
	tokenPrefix string
	backoff     func(int) time.Duration
	hook        func(context.Context, Job, string) error

	wake     chan struct{} // Notify; buffered 1
	slots    chan struct{} // one token per running handler; capacity workers
	seq      atomic.Uint64 // claim sequence, part of the claim token
	inflight atomic.Int64
	running  atomic.Bool
	active   sync.WaitGroup // handler goroutines started by the dispatcher

	mu             sync.Mutex
	started        bool
	stopClaiming   context.CancelFunc
	cancelWork     context.CancelCauseFunc
	dispatcherDone chan struct{}
	lastPoll       time.Time
	lastPollErr    string
}

// New validates cfg and returns a stopped pool.
func New(cfg Config) (*Pool, error) {
	const op = "jobs.New"
	if cfg.Store == nil {
		return nil, fault.Invalid(op, "store", "A job store is required.")
	}
	if cfg.Workers < 0 || cfg.Lease < 0 || cfg.PollInterval < 0 {
		return nil, fault.Invalid(op, "workers", "Workers, Lease and PollInterval must not be negative.")
	}
	p := &Pool{
		store:    cfg.Store,
		handlers: make(map[string]Handler, len(cfg.Handlers)),
		workers:  cmpOr(cfg.Workers, 4),
		lease:    cmpOr(cfg.Lease, 30*time.Second),
		poll:     cmpOr(cfg.PollInterval, 200*time.Millisecond),
		clock:    cfg.Clock,
		log:      cfg.Logger,
		id:       cfg.ID,
		backoff:  cfg.BackoffFunc,
		hook:     cfg.FaultHook,
		wake:     make(chan struct{}, 1),
	}
	for kind, h := range cfg.Handlers {
		if kind == "" || h == nil {
			return nil, fault.Invalid(op, "handlers", fmt.Sprintf("Handler for kind %q is empty.", kind))
		}
		p.handlers[kind] = h
	}
	if p.clock == nil {
		p.clock = wallClock{}
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.id == "" {
		p.id = "pool_" + strings.ToLower(rand.Text()[:16])
	}
	if p.backoff == nil {
		p.backoff = func(attempt int) time.Duration { return Backoff(attempt, mrand.Float64()) }
	}
	p.slots = make(chan struct{}, p.workers)
	p.tokenPrefix = p.id + "/" + strings.ToLower(rand.Text()[:8]) + "/"
	p.log = p.log.With("pool", p.id)
	return p, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// ID returns the pool's id, the prefix of its claim tokens.
func (p *Pool) ID() string { return p.id }

// Start begins claiming and running jobs in the background. It returns at
// once. Claiming ends when Stop is called or ctx ends; ending ctx also
// cancels the running handlers. A pool starts once.
func (p *Pool) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fault.E("jobs.Start", fault.InvalidState, "The job pool was already started.")
	}
	p.started = true
	workCtx, cancelWork := context.WithCancelCause(ctx)
	claimCtx, stopClaiming := context.WithCancel(workCtx)
	p.cancelWork, p.stopClaiming = cancelWork, stopClaiming
	p.dispatcherDone = make(chan struct{})
	p.running.Store(true)
	go p.dispatch(claimCtx, workCtx)
	return nil
}

// Stop stops claiming and waits for running handlers to return until ctx
// ends; then it cancels their contexts and returns ctx's error without
// waiting further (their outcomes are still recorded when they return).
// Stop on a pool that never started returns nil.
func (p *Pool) Stop(ctx context.Context) error {
	p.mu.Lock()
	if !p.started {
		p.mu.Unlock()
		return nil
	}
	p.stopClaiming()
	done, cancelWork := p.dispatcherDone, p.cancelWork
	p.mu.Unlock()

	<-done // the dispatcher returns promptly once claimCtx is cancelled
	idle := make(chan struct{})
	go func() {
		p.active.Wait()
		close(idle)
	}()
	select {
	case <-idle:
		cancelWork(errStopped)
		return nil
	case <-ctx.Done():
		cancelWork(errStopped)
		return fmt.Errorf("jobs: stop: %d handlers still running: %w", p.inflight.Load(), context.Cause(ctx))
	}
}

// Notify wakes the dispatcher to claim now rather than at the next poll.
// Call it after a unit of work that enqueued jobs has committed. It never
// blocks.
func (p *Pool) Notify() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Health reports the pool's state.
func (p *Pool) Health() Health {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Health{
		Running:       p.running.Load(),
		LastPoll:      p.lastPoll,
		InFlight:      int(p.inflight.Load()),
		LastPollError: p.lastPollErr,
	}
}

// RunOnce claims up to Workers due jobs, runs them concurrently and returns
// when all have finished, reporting how many it claimed. It is for tests
// and benchmarks, on a pool that was not started; handlers get ctx.
func (p *Pool) RunOnce(ctx context.Context) (int, error) {
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	if started {
		return 0, fault.E("jobs.RunOnce", fault.InvalidState, "RunOnce needs a pool that was not started.")
	}
	claimed, token, err := p.claim(ctx, p.workers)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, j := range claimed {
		wg.Add(1)
		p.inflight.Add(1)
		go func() {
			defer wg.Done()
			defer p.inflight.Add(-1)
			p.run(ctx, j, token)
		}()
	}
	wg.Wait()
	return len(claimed), nil
}

// dispatch is the claim loop: wait for a free worker, claim as many jobs as
// there are free workers, hand each to a goroutine; sleep for PollInterval
// (or until Notify) when the batch was not full.
func (p *Pool) dispatch(claimCtx, workCtx context.Context) {
	defer close(p.dispatcherDone)
	defer p.running.Store(false)
	timer := time.NewTimer(p.poll)
	defer timer.Stop()
	for {
		select {
		case p.slots <- struct{}{}:
		case <-claimCtx.Done():
			return
		}
		n := 1
		for n < p.workers && p.tryAcquire() {
			n++
		}
		claimed, token, err := p.claim(claimCtx, n)
		for range n - len(claimed) {
			<-p.slots
		}
		for _, j := range claimed {
			p.active.Add(1)
			p.inflight.Add(1)
			go func() {
				defer p.active.Done()
				defer func() { <-p.slots }()
				defer p.inflight.Add(-1)
				p.run(workCtx, j, token)
			}()
		}
		if err == nil && len(claimed) == n {
			continue // the queue may hold more due jobs
		}
		timer.Reset(p.poll)
		select {
		case <-timer.C:
		case <-p.wake:
		case <-claimCtx.Done():
			return
		}
	}
}

func (p *Pool) tryAcquire() bool {
	select {
	case p.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// claim leases up to n jobs under a fresh claim token and records the poll
// in Health.
func (p *Pool) claim(ctx context.Context, n int) ([]Job, string, error) {
	token := p.tokenPrefix + strconv.FormatUint(p.seq.Add(1), 10)
	claimed, err := p.store.JobClaim(ctx, ClaimParams{LockedBy: token, Limit: n, Lease: p.lease})
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		p.lastPoll = p.clock.Now()
		p.lastPollErr = ""
	case ctx.Err() != nil:
		// Stopping; not a database problem.
	default:
		p.lastPollErr = err.Error()
		p.log.Warn("job claim failed", "err", err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("jobs: claim: %w", err)
	}
	return claimed, token, nil
}

// run executes one claimed job and records its outcome under token.
func (p *Pool) run(base context.Context, job Job, token string) {
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	log := p.log.With("job_id", job.ID, "kind", job.Kind, "attempt", job.Attempts)

	if err := p.fault(ctx, job, PointClaimed); err != nil {
		log.Warn("job abandoned by fault hook", "point", PointClaimed, "err", err)
		return
	}
	stopHeartbeat := p.heartbeat(ctx, cancel, job.ID, token, log)
	herr := p.call(ctx, job, log)
	stopHeartbeat()
	if errors.Is(context.Cause(ctx), errLeaseLost) {
		log.Warn("job outcome not recorded: lease lost", "handler_err", herr)
		return
	}

	// Record the outcome even if the pool is stopping: the handler has
	// already returned, and recording it is quick.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), p.lease)
	defer rcancel()
	if herr == nil {
		if err := p.fault(ctx, job, PointBeforeComplete); err != nil {
			log.Warn("job abandoned by fault hook", "point", PointBeforeComplete, "err", err)
			return
		}
		if err := p.store.JobComplete(rctx, job.ID, token); err != nil {
			log.Error("job complete failed", "err", err)
		}
		return
	}
	delay := p.backoff(job.Attempts)
	st, err := p.store.JobFail(rctx, FailParams{ID: job.ID, LockedBy: token, Error: herr.Error(), RetryAfter: delay})
	if err != nil {
		log.Error("job fail failed", "handler_err", herr, "err", err)
		return
	}
	if st == Discarded {
		log.Error("job discarded: attempts spent", "max_attempts", job.MaxAttempts, "err", herr)
	} else {
		log.Warn("job failed; will retry", "retry_after", delay, "err", herr)
	}
}

// call runs the job's handler, turning a missing handler and a panic into
// errors.
func (p *Pool) call(ctx context.Context, job Job, log *slog.Logger) (err error) {
	h, ok := p.handlers[job.Kind]
	if !ok {
		return fmt.Errorf("jobs: no handler for kind %q in pool %s", job.Kind, p.id)
	}
	defer func() {
		if r := recover(); r != nil {
			log.Error("job handler panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("jobs: handler panicked: %v", r)
		}
	}()
	return h(ctx, job)
}

// fault calls the fault hook, if any.
func (p *Pool) fault(ctx context.Context, job Job, point string) error {
	if p.hook == nil {
		return nil
	}
	return p.hook(ctx, job, point)
}

// heartbeat renews the lease every Lease/3 until the returned stop is
// called. If the store reports the lease lost (CONFLICT), it cancels the
// handler's context with errLeaseLost.
func (p *Pool) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, id, token string, log *slog.Logger) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(max(p.lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := p.store.JobExtend(ctx, ExtendParams{ID: id, LockedBy: token, Lease: p.lease})
			switch {
			case err == nil:
			case fault.Is(err, fault.Conflict):
				cancel(errLeaseLost)
				return
			case ctx.Err() == nil:
				log.Warn("job lease renewal failed", "err", err)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
