package simctl

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrStopped is returned by Runner.Sleep when the runner stops first.
var ErrStopped = errors.New("simctl: simulator closed")

// DefaultPoll is how often a Runner on a clock other than the wall clock
// re-reads it while it waits, when RunnerConfig.Poll is not set.
const DefaultPoll = 5 * time.Millisecond

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	// Clock decides when an Every step is due. Nil means the wall clock,
	// waited on with real timers; any other clock (one a test moves) is
	// re-read every Poll of real time until the step is due.
	Clock Clock
	// Poll is how often a clock other than the wall clock is re-read.
	// Zero means DefaultPoll.
	Poll time.Duration
}

// Runner runs a simulator's background work (auto-advance, deliveries,
// delayed answers) and stops it: after Stop no new work starts and the
// context every piece of work gets is cancelled; Wait returns once every
// piece has returned. Work must honour its context, which is what makes
// Close return promptly. A Runner is safe for concurrent use.
type Runner struct {
	clock  Clock
	wall   bool
	poll   time.Duration
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// NewRunner returns a running Runner.
func NewRunner(cfg RunnerConfig) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{clock: cfg.Clock, wall: isWall(cfg.Clock), poll: cfg.Poll, ctx: ctx, cancel: cancel}
	if r.clock == nil {
		r.clock = WallClock{}
	}
	if r.poll <= 0 {
		r.poll = DefaultPoll
	}
	return r
}

// Context is cancelled when the runner stops: the base of a simulator's
// server and of its outgoing requests.
func (r *Runner) Context() context.Context { return r.ctx }

// Done is closed when the runner stops.
func (r *Runner) Done() <-chan struct{} { return r.ctx.Done() }

// Go runs fn in a goroutine the runner waits for, with a context cancelled
// at Stop. It reports false, and runs nothing, once the runner has
// stopped.
func (r *Runner) Go(fn func(ctx context.Context)) bool {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return false
	}
	r.wg.Add(1) // under mu, so that no Add follows Stop's wait
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		fn(r.ctx)
	}()
	return true
}

// Every calls step once interval has passed on the clock, then once per
// interval after that, for as long as step returns true and until stop is
// called or the runner stops. Steps are due at fixed points of the clock
// (start + k*interval), so a test that moves its clock by interval while a
// step runs has made the next one due; a step that overruns its interval
// is followed at once by one more, not by a burst. Steps of one loop never
// overlap. stop ends this loop alone and waits for it; it may be called
// more than once, but not from step. On a stopped runner Every runs
// nothing and returns a stop that does nothing.
func (r *Runner) Every(interval time.Duration, step func(ctx context.Context) bool) (stop func()) {
	ctx, cancel := context.WithCancel(r.ctx)
	finished := make(chan struct{})
	due := r.clock.Now().Add(interval)
	started := r.Go(func(context.Context) {
		defer close(finished)
		for r.waitUntil(ctx, due) {
			if !step(ctx) {
				return
			}
			due = due.Add(interval)
			if now := r.clock.Now(); due.Before(now) {
				due = now
			}
		}
	})
	if !started {
		cancel()
		return func() {}
	}
	var once sync.Once
	return func() {
		once.Do(cancel)
		<-finished
	}
}

// waitUntil waits until the clock reads due and reports true, or false
// when ctx ends first.
func (r *Runner) waitUntil(ctx context.Context, due time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		left := due.Sub(r.clock.Now())
		if left <= 0 {
			return true
		}
		if !r.wall {
			left = min(left, r.poll)
		}
		if sleep(ctx, left) != nil {
			return false
		}
	}
}

// Sleep waits d of real time, whatever the clock: the wait of a fault that
// must outlast a client's timeout. It returns early with ctx's error when
// ctx ends, or ErrStopped when the runner stops. A wait of d <= 0 returns
// nil at once, whatever ctx.
func (r *Runner) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.ctx.Done():
		return ErrStopped
	}
}

// sleep waits d of real time or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stopped reports whether Stop was called.
func (r *Runner) Stopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// Stop refuses new work and cancels the context of the work under way. It
// does not wait; it may be called more than once.
func (r *Runner) Stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
}

// Wait returns once every piece of work has returned. Call it after Stop
// (and after anything else the work waits on, such as a server's shutdown).
func (r *Runner) Wait() { r.wg.Wait() }

// Close stops the runner and waits for its work.
func (r *Runner) Close() {
	r.Stop()
	r.Wait()
}
