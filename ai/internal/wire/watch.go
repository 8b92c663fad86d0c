package wire

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The causes a Watch cancels its context with.
var (
	errIdle  = errors.New("no event within the idle deadline")
	errTotal = errors.New("no end within the total deadline")
)

// Watch bounds one call: its context ends when the caller's does, when
// the total deadline passes, or when no activity (Touch) came within the
// idle deadline.
type Watch struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration

	mu        sync.Mutex
	idleTimer *time.Timer
	total     *time.Timer
	stopped   bool
}

// NewWatch starts watching a call under parent; a zero total or idle
// deadline is not applied.
func NewWatch(parent context.Context, total, idle time.Duration) *Watch {
	ctx, cancel := context.WithCancelCause(parent)
	w := &Watch{parent: parent, ctx: ctx, cancel: cancel, idle: idle}
	if total > 0 {
		w.total = time.AfterFunc(total, func() { cancel(errTotal) })
	}
	if idle > 0 {
		w.idleTimer = time.AfterFunc(idle, func() { cancel(errIdle) })
	}
	return w
}

// Context is the call's context.
func (w *Watch) Context() context.Context { return w.ctx }

// Touch records activity: the idle deadline starts again.
func (w *Watch) Touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.idleTimer != nil && !w.stopped && w.ctx.Err() == nil {
		w.idleTimer.Reset(w.idle)
	}
}

// Stop ends the call: its timers stop and its context is cancelled, which
// releases the connection.
func (w *Watch) Stop() {
	w.mu.Lock()
	w.stopped = true
	if w.idleTimer != nil {
		w.idleTimer.Stop()
	}
	if w.total != nil {
		w.total.Stop()
	}
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// CallerErr returns the caller's own context error (its cause) when the
// caller's context has ended, else nil.
func (w *Watch) CallerErr() error {
	if w.parent.Err() != nil {
		return context.Cause(w.parent)
	}
	return nil
}

// Expired returns "idle_timeout" or "deadline" when the watch's own
// deadline ended the call, else "".
func (w *Watch) Expired() string {
	switch context.Cause(w.ctx) {
	case errIdle:
		return "idle_timeout"
	case errTotal:
		return "deadline"
	}
	return ""
}
