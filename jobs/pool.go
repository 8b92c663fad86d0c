package jobs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	mrand "math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Handler runs one job. Returning nil completes the job; an error (or a
// panic) fails the attempt, and the job is retried with backoff until its
// attempts are spent, unless the error is marked Permanent: then the job is
// discarded at once. ctx is cancelled when the pool stops past its grace
// period or when the job's lease is lost to another worker. The error text
// is stored and shown to operators: it must not contain secrets.
type Handler func(ctx context.Context, job Job) error

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Points at which Config.FaultHookFunc is called.
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
	// Classes split the kinds into classes, each with its own workers and
	// dispatcher. When set, every kind in Handlers must belong to exactly
	// one class and every class kind must have a handler; the pool claims
	// only the classes' kinds. Empty means one class named "default" that
	// claims every kind, with Workers workers.
	Classes []Class
	// Workers is how many handlers of a class run at once when the class
	// does not say. Zero means 4.
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
	// FaultHookFunc is a test hook called at PointClaimed and
	// PointBeforeComplete. Returning an error makes the worker abandon the
	// job at once, neither completing nor failing it and no longer renewing
	// its lease, as a crash would. Nil in production.
	FaultHookFunc func(ctx context.Context, job Job, point string) error
}

// Class is a set of job kinds with its own worker budget, so that the jobs
// of one class never wait for workers busy with another's.
type Class struct {
	// Name names the class in Health, Backlog and logs ("audio").
	// Required, unique in a pool.
	Name string
	// Kinds are the job kinds the class runs. Required.
	Kinds []string
	// Workers is how many of the class's jobs run at once in this pool.
	// Zero means Config.Workers.
	Workers int
	// GroupLimit, when positive, bounds how many of the class's jobs of
	// one group (InsertParams.Group) run at once, counted over every pool
	// on the database; jobs without a group are not limited. Zero means no
	// limit.
	GroupLimit int
}

// DefaultClass names the class of a pool configured without Classes.
const DefaultClass = "default"

// Health is a pool's state for the health route.
type Health struct {
	// Running reports whether every class's dispatcher is claiming jobs.
	Running bool
	// LastPoll is the oldest of the classes' last successful claims: zero
	// until every class has claimed once.
	LastPoll time.Time
	// InFlight counts handlers running now, over every class.
	InFlight int
	// LastPollError is the error of a class's most recent claim, "" if
	// every class's last claim succeeded.
	LastPollError string
	// Classes are the per-class states, in configuration order.
	Classes []ClassHealth
}

// ClassHealth is one class's part of Health.
type ClassHealth struct {
	// Name is the class's name.
	Name string
	// Workers is the class's worker budget in this pool.
	Workers int
	// GroupLimit is the class's per-group limit; zero for none.
	GroupLimit int
	// InFlight counts the class's handlers running now.
	InFlight int
	// LastPoll is when the class's claim last succeeded (zero before the
	// first).
	LastPoll time.Time
	// LastPollError is the error of the class's most recent claim, "" if
	// it succeeded.
	LastPollError string
}

// ClassBacklog is one class's runnable backlog (see Pool.Backlog).
type ClassBacklog struct {
	// Class is the class's name.
	Class string
	Backlog
}

// errLeaseLost cancels a handler whose job was reclaimed by another worker.
var errLeaseLost = errors.New("jobs: lease lost: the job was reclaimed by another worker")

// errStopped cancels handlers still running when Stop's grace period ends.
var errStopped = errors.New("jobs: pool stopped")

// wallClock is the default Clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Pool claims jobs from a Store and runs their handlers: each class on its
// own bounded number of goroutines, fed by its own dispatcher. Several pools
// (one per host) may share one database.
type Pool struct {
	store    Store
	handlers map[string]Handler
	classes  []*class
	lease    time.Duration
	poll     time.Duration
	clock    Clock
	log      *slog.Logger
	id       string
	// tokenPrefix starts every claim token: the ID and a per-instance
	// nonce, so two pools misconfigured with one ID, or a restarted host,
	// never share a token.
	tokenPrefix string
	backoffFunc func(int) time.Duration
	hookFunc    func(context.Context, Job, string) error

	seq    atomic.Uint64  // claim sequence, part of the claim token
	active sync.WaitGroup // handler goroutines started by the dispatchers

	mu           sync.Mutex
	started      bool
	stopClaiming context.CancelFunc
	cancelWork   context.CancelCauseFunc
	dispatchers  sync.WaitGroup
}

// class is a Class at run time: its dispatcher's state.
type class struct {
	Class
	wake     chan struct{} // Notify; buffered 1
	slots    chan struct{} // one token per running handler; capacity Workers
	inflight atomic.Int64
	running  atomic.Bool
	log      *slog.Logger

	// Guarded by Pool.mu.
	lastPoll    time.Time
	lastPollErr string
}

// New validates cfg and returns a stopped pool. Invalid configuration is
// INVALID_INPUT naming the field.
func New(cfg Config) (*Pool, error) {
	const op = "jobs.New"
	if cfg.Store == nil {
		return nil, fault.Invalid(op, "store", "A job store is required.")
	}
	if cfg.Workers < 0 || cfg.Lease < 0 || cfg.PollInterval < 0 {
		return nil, fault.Invalid(op, "workers", "Workers, Lease and PollInterval must not be negative.")
	}
	p := &Pool{
		store:       cfg.Store,
		handlers:    make(map[string]Handler, len(cfg.Handlers)),
		lease:       cmpOr(cfg.Lease, 30*time.Second),
		poll:        cmpOr(cfg.PollInterval, 200*time.Millisecond),
		clock:       cfg.Clock,
		log:         cfg.Logger,
		id:          cfg.ID,
		backoffFunc: cfg.BackoffFunc,
		hookFunc:    cfg.FaultHookFunc,
	}
	for kind, h := range cfg.Handlers {
		if kind == "" || h == nil {
			return nil, fault.Invalid(op, "handlers", fmt.Sprintf("Handler for kind %q is empty.", kind))
		}
		p.handlers[kind] = h
	}
	classes := cfg.Classes
	if len(classes) == 0 {
		classes = []Class{{Name: DefaultClass}}
	} else if err := checkClasses(classes, p.handlers); err != nil {
		return nil, err
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
	if p.backoffFunc == nil {
		p.backoffFunc = func(attempt int) time.Duration { return Backoff(attempt, mrand.Float64()) }
	}
	p.tokenPrefix = p.id + "/" + strings.ToLower(rand.Text()[:8]) + "/"
	p.log = p.log.With("pool", p.id)
	for _, c := range classes {
		c.Kinds = slices.Clone(c.Kinds)
		c.Workers = cmpOr(c.Workers, cmpOr(cfg.Workers, 4))
		p.classes = append(p.classes, &class{Class: c, wake: make(chan struct{}, 1), slots: make(chan struct{}, c.Workers),
			log: p.log.With("class", c.Name)})
	}
	return p, nil
}

// checkClasses validates configured classes against the handlers: names
// unique and set, kinds in exactly one class and each with a handler, every
// handler's kind in a class, budgets not negative.
func checkClasses(classes []Class, handlers map[string]Handler) error {
	const op = "jobs.New"
	names := map[string]bool{}
	classOf := map[string]string{}
	for i, c := range classes {
		field := fmt.Sprintf("classes[%d]", i)
		switch {
		case c.Name == "":
			return fault.Invalid(op, field+".name", "A job class needs a name.")
		case names[c.Name]:
			return fault.Invalid(op, field+".name", fmt.Sprintf("Job class %q is named twice.", c.Name))
		case len(c.Kinds) == 0:
			return fault.Invalid(op, field+".kinds", fmt.Sprintf("Job class %q has no kinds.", c.Name))
		case c.Workers < 0 || c.GroupLimit < 0:
			return fault.Invalid(op, field+".workers", fmt.Sprintf("Job class %q: workers and group limit must not be negative.", c.Name))
		}
		names[c.Name] = true
		for _, k := range c.Kinds {
			if other, ok := classOf[k]; ok {
				return fault.Invalid(op, field+".kinds", fmt.Sprintf("Job kind %q is in classes %q and %q.", k, other, c.Name))
			}
			if handlers[k] == nil {
				return fault.Invalid(op, field+".kinds", fmt.Sprintf("Job kind %q of class %q has no handler.", k, c.Name))
			}
			classOf[k] = c.Name
		}
	}
	for _, k := range slices.Sorted(maps.Keys(handlers)) {
		if _, ok := classOf[k]; !ok {
			return fault.Invalid(op, "classes", fmt.Sprintf("Job kind %q belongs to no class.", k))
		}
	}
	return nil
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
	for _, c := range p.classes {
		c.running.Store(true)
		p.dispatchers.Add(1)
		go p.dispatch(c, claimCtx, workCtx)
	}
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
	cancelWork := p.cancelWork
	p.mu.Unlock()

	p.dispatchers.Wait() // dispatchers return promptly once claimCtx is cancelled
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
		return fmt.Errorf("jobs: stop: %d handlers still running: %w", p.Health().InFlight, context.Cause(ctx))
	}
}

// Notify wakes every class's dispatcher to claim now rather than at the
// next poll. Call it after a unit of work that enqueued jobs has committed.
// It never blocks.
func (p *Pool) Notify() {
	for _, c := range p.classes {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// Health reports the pool's state.
func (p *Pool) Health() Health {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := Health{Running: true}
	for i, c := range p.classes {
		ch := ClassHealth{Name: c.Name, Workers: c.Workers, GroupLimit: c.GroupLimit, InFlight: int(c.inflight.Load()),
			LastPoll: c.lastPoll, LastPollError: c.lastPollErr}
		h.Classes = append(h.Classes, ch)
		h.Running = h.Running && c.running.Load()
		h.InFlight += ch.InFlight
		if i == 0 || ch.LastPoll.IsZero() || ch.LastPoll.Before(h.LastPoll) {
			h.LastPoll = ch.LastPoll
		}
		if ch.LastPollError != "" {
			h.LastPollError = ch.LastPollError
		}
	}
	return h
}

// Backlog reports each class's runnable jobs, in configuration order: how
// many a claim could take now and how long the oldest has waited (see
// Store.JobBacklog), read from the store, so it covers the jobs of every
// pool on the database. A class whose oldest runnable job keeps ageing has
// too few workers for its load, or its workers are stuck.
func (p *Pool) Backlog(ctx context.Context) ([]ClassBacklog, error) {
	out := make([]ClassBacklog, 0, len(p.classes))
	for _, c := range p.classes {
		b, err := p.store.JobBacklog(ctx, BacklogParams{Kinds: c.Kinds, GroupLimit: c.GroupLimit})
		if err != nil {
			return nil, fmt.Errorf("jobs: backlog of class %s: %w", c.Name, err)
		}
		out = append(out, ClassBacklog{Class: c.Name, Backlog: b})
	}
	return out, nil
}

// Classes returns the pool's classes with their budgets resolved, in
// configuration order.
func (p *Pool) Classes() []Class {
	out := make([]Class, len(p.classes))
	for i, c := range p.classes {
		out[i] = c.Class
		out[i].Kinds = slices.Clone(c.Kinds)
	}
	return out
}

// RunOnce claims, for each class, up to its Workers due jobs, runs them all
// concurrently and returns when all have finished, reporting how many it
// claimed. It is for tests and benchmarks, on a pool that was not started;
// handlers get ctx.
func (p *Pool) RunOnce(ctx context.Context) (int, error) {
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	if started {
		return 0, fault.E("jobs.RunOnce", fault.InvalidState, "RunOnce needs a pool that was not started.")
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	n := 0
	for _, c := range p.classes {
		claimed, token, err := p.claim(ctx, c, c.Workers)
		if err != nil {
			return n, err
		}
		n += len(claimed)
		for _, j := range claimed {
			wg.Add(1)
			c.inflight.Add(1)
			go func() {
				defer wg.Done()
				defer c.inflight.Add(-1)
				p.run(ctx, c, j, token)
			}()
		}
	}
	return n, nil
}

// dispatch is a class's claim loop: wait for a free worker of the class,
// claim as many of its jobs as it has free workers, hand each to a
// goroutine; sleep for PollInterval (or until Notify) when the batch was
// not full.
func (p *Pool) dispatch(c *class, claimCtx, workCtx context.Context) {
	defer p.dispatchers.Done()
	defer c.running.Store(false)
	timer := time.NewTimer(p.poll)
	defer timer.Stop()
	for {
		select {
		case c.slots <- struct{}{}:
		case <-claimCtx.Done():
			return
		}
		n := 1
		for n < c.Workers && c.tryAcquire() {
			n++
		}
		claimed, token, err := p.claim(claimCtx, c, n)
		for range n - len(claimed) {
			<-c.slots
		}
		for i, j := range claimed {
			if i >= n {
				// The store broke its limit: each extra job still needs a
				// worker, which its goroutine gives back when it ends.
				c.slots <- struct{}{}
			}
			p.active.Add(1)
			c.inflight.Add(1)
			go func() {
				defer p.active.Done()
				defer func() { <-c.slots }()
				defer c.inflight.Add(-1)
				p.run(workCtx, c, j, token)
				if c.GroupLimit > 0 {
					// The job's group has room again: a job of it held back
					// by the limit is claimed now, not at the next poll.
					select {
					case c.wake <- struct{}{}:
					default:
					}
				}
			}()
		}
		if err == nil && len(claimed) == n {
			continue // the queue may hold more due jobs
		}
		timer.Reset(p.poll)
		select {
		case <-timer.C:
		case <-c.wake:
		case <-claimCtx.Done():
			return
		}
	}
}

func (c *class) tryAcquire() bool {
	select {
	case c.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// claim leases up to n jobs of class c under a fresh claim token and
// records the poll in Health.
func (p *Pool) claim(ctx context.Context, c *class, n int) ([]Job, string, error) {
	token := p.tokenPrefix + strconv.FormatUint(p.seq.Add(1), 10)
	claimed, err := p.store.JobClaim(ctx, ClaimParams{LockedBy: token, Limit: n, Lease: p.lease, Kinds: c.Kinds, GroupLimit: c.GroupLimit})
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		c.lastPoll = p.clock.Now()
		c.lastPollErr = ""
	case ctx.Err() != nil:
		// Stopping; not a database problem.
	default:
		c.lastPollErr = err.Error()
		c.log.Warn("job claim failed", "err", err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("jobs: claim: %w", err)
	}
	return claimed, token, nil
}

// run executes one claimed job of class c and records its outcome under
// token.
func (p *Pool) run(base context.Context, c *class, job Job, token string) {
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	log := c.log.With("job_id", job.ID, "kind", job.Kind, "attempt", job.Attempts)

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
	permanent := IsPermanent(herr)
	delay := p.backoffFunc(job.Attempts)
	st, err := p.store.JobFail(rctx, FailParams{ID: job.ID, LockedBy: token, Error: herr.Error(), RetryAfter: delay, Discard: permanent})
	if err != nil {
		log.Error("job fail failed", "handler_err", herr, "err", err)
		return
	}
	switch {
	case st == Discarded && permanent:
		log.Warn("job discarded: permanent failure", "err", herr)
	case st == Discarded:
		log.Error("job discarded: attempts spent", "max_attempts", job.MaxAttempts, "err", herr)
	default:
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
	if p.hookFunc == nil {
		return nil
	}
	return p.hookFunc(ctx, job, point)
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
