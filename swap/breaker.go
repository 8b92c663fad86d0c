package swap

import (
	"sync"
	"time"
)

// Breaker states (BreakerState.State).
const (
	// BreakerClosed: calls go through; failures are counted.
	BreakerClosed = "closed"
	// BreakerOpen: calls are refused with SWAP_PAUSED until RetryAt.
	BreakerOpen = "open"
	// BreakerHalfOpen: RetryAt passed; one call probes the provider, and
	// its outcome closes or reopens the breaker.
	BreakerHalfOpen = "half_open"
)

// Breaker defaults: five failures in a row open the breaker for 30
// seconds; each failed probe doubles the pause, up to 10 minutes.
const (
	DefaultBreakerThreshold = 5
	DefaultBreakerCooldown  = 30 * time.Second
	DefaultBreakerMaxPause  = 10 * time.Minute
)

// Breaker is a circuit breaker over one route provider of one
// environment. It counts the provider's failures to answer (unavailable,
// rate limited, timed out; a "no route" answer is an answer and counts as
// success) and, after Threshold in a row, refuses calls until the pause
// ends, so that a failing aggregator is not hammered and callers learn at
// once that swaps are paused. State is per host: each host learns of a
// failing provider from its own calls.
type Breaker struct {
	// Threshold is the failures in a row that open the breaker; zero
	// means DefaultBreakerThreshold.
	Threshold int
	// Cooldown is the first pause; zero means DefaultBreakerCooldown.
	Cooldown time.Duration
	// MaxPause bounds the doubled pauses; zero means
	// DefaultBreakerMaxPause.
	MaxPause time.Duration

	mu       sync.Mutex
	failures int
	pause    time.Duration
	openedAt time.Time
	retryAt  time.Time
	probing  bool
}

// BreakerState is a breaker as the settings route shows it.
type BreakerState struct {
	// State is closed, open or half_open.
	State string `json:"state"`
	// ConsecutiveFailures counts the failures since the last success.
	ConsecutiveFailures int `json:"consecutiveFailures"`
	// OpenedAt and RetryAt bound the current pause (nil when closed).
	OpenedAt *time.Time `json:"openedAt"`
	RetryAt  *time.Time `json:"retryAt"`
}

func (b *Breaker) threshold() int {
	if b.Threshold > 0 {
		return b.Threshold
	}
	return DefaultBreakerThreshold
}

func (b *Breaker) cooldown() time.Duration {
	if b.Cooldown > 0 {
		return b.Cooldown
	}
	return DefaultBreakerCooldown
}

func (b *Breaker) maxPause() time.Duration {
	if b.MaxPause > 0 {
		return b.MaxPause
	}
	return DefaultBreakerMaxPause
}

// Allow reports whether a call may go to the provider at now. While open
// it refuses; once the pause has ended it lets exactly one probe through
// until that probe reports (Success or Failure).
func (b *Breaker) Allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.retryAt.IsZero() {
		return true
	}
	if now.Before(b.retryAt) || b.probing {
		return false
	}
	b.probing = true
	return true
}

// Success records an answer: the breaker closes.
func (b *Breaker) Success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures, b.pause, b.probing = 0, 0, false
	b.openedAt, b.retryAt = time.Time{}, time.Time{}
}

// Failure records a failure to answer at now: at the threshold the
// breaker opens; a failed probe reopens it for twice the last pause.
func (b *Breaker) Failure(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	switch {
	case b.probing:
		b.probing = false
		b.pause = min(2*b.pause, b.maxPause())
	case b.retryAt.IsZero() && b.failures >= b.threshold():
		b.pause = b.cooldown()
	default:
		return
	}
	b.openedAt, b.retryAt = now, now.Add(b.pause)
}

// State returns the breaker's state at now.
func (b *Breaker) State(now time.Time) BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BreakerState{State: BreakerClosed, ConsecutiveFailures: b.failures}
	if b.retryAt.IsZero() {
		return s
	}
	opened, retry := b.openedAt, b.retryAt
	s.OpenedAt, s.RetryAt = &opened, &retry
	s.State = BreakerOpen
	if !now.Before(b.retryAt) {
		s.State = BreakerHalfOpen
	}
	return s
}
