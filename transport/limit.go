package transport

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
)

// UsageStore persists monthly request counts. *store.Tx satisfies it.
type UsageStore interface {
	UsageAdd(ctx context.Context, period string, counts map[string]int64, lastUsed time.Time) error
	UsageGet(ctx context.Context, keyID, period string) (int64, error)
}

// Limiter enforces an API key's limits in the gateway.
//
// The per-minute rate (a token bucket refilled continuously) and the
// concurrency limit are enforced per host: with N hosts behind a balancer a
// key can reach at most N times its limits. The monthly budget is counted
// in the database: each host counts in memory and flushes its counts in
// batches (every FlushInterval, and on Close), and reads back the key's
// total after each flush. A restart therefore never resets a budget, and
// the overshoot is bounded by what other hosts admitted since this host's
// last flush: at most (hosts - 1) x FlushInterval x the key's rate, plus the
// requests lost if a host dies between flushes (at most one interval's).
type Limiter struct {
	now      func() time.Time
	mu       sync.Mutex
	keys     map[string]*keyState
	pending  map[string]int64
	lastUsed time.Time
}

type keyState struct {
	tokens   float64
	last     time.Time
	inFlight int
	period   string
	known    int64 // total in the database for period, as of the last read
	loaded   bool
}

// NewLimiter returns a limiter reading time from now.
func NewLimiter(now func() time.Time) *Limiter {
	return &Limiter{now: now, keys: map[string]*keyState{}, pending: map[string]int64{}}
}

// Period is the budget period of t: the calendar month in UTC.
func Period(t time.Time) string { return t.UTC().Format("2006-01") }

func nextPeriod(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

// RateHeaders are the RateLimit-* values of an admitted or refused request.
type RateHeaders struct {
	Limit     int
	Remaining int
	Reset     int // seconds until the bucket is full again
}

func (h RateHeaders) set(hd interface{ Set(string, string) }) {
	hd.Set("RateLimit-Limit", strconv.Itoa(h.Limit))
	hd.Set("RateLimit-Remaining", strconv.Itoa(h.Remaining))
	hd.Set("RateLimit-Reset", strconv.Itoa(h.Reset))
}

// Acquire admits one request of key k or returns RATE_LIMITED with details
// retryAfter (seconds) and limit (which limit was reached). On success the
// caller must call release when the request ends.
func (l *Limiter) Acquire(ctx context.Context, st UsageStore, k apikey.Key) (release func(), h RateHeaders, err error) {
	const op = "transport.Limiter"
	now := l.now()
	period := Period(now)
	l.mu.Lock()
	s := l.keys[k.ID]
	if s == nil {
		s = &keyState{tokens: float64(k.Limits.RequestsPerMinute), last: now}
		l.keys[k.ID] = s
	}
	needLoad := !s.loaded || s.period != period
	l.mu.Unlock()
	if needLoad {
		n, err := st.UsageGet(ctx, k.ID, period)
		if err != nil {
			return nil, h, fault.Wrap(op, err)
		}
		l.mu.Lock()
		if !s.loaded || s.period != period {
			s.known, s.period, s.loaded = n, period, true
		}
		l.mu.Unlock()
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	rpm := float64(k.Limits.RequestsPerMinute)
	perSec := rpm / 60
	if el := now.Sub(s.last).Seconds(); el > 0 {
		s.tokens += el * perSec
	}
	// A lowered limit takes effect at once.
	s.tokens = math.Min(rpm, s.tokens)
	s.last = now
	h.Limit = k.Limits.RequestsPerMinute
	if used := s.known + l.pending[k.ID]; used >= k.Limits.MonthlyRequestBudget {
		retry := int(math.Ceil(nextPeriod(now).Sub(now).Seconds()))
		h.Remaining, h.Reset = int(s.tokens), retry
		return nil, h, fault.E(op, fault.RateLimited, "The key's monthly request budget is spent.").
			With("limit", "monthlyRequestBudget").With("retryAfter", retry)
	}
	if s.inFlight >= k.Limits.MaxConcurrentRequests {
		h.Remaining, h.Reset = int(s.tokens), 1
		return nil, h, fault.E(op, fault.RateLimited, "Too many concurrent requests for this key.").
			With("limit", "maxConcurrentRequests").With("retryAfter", 1)
	}
	if s.tokens < 1 {
		retry := int(math.Ceil((1 - s.tokens) / perSec))
		h.Remaining, h.Reset = 0, retry
		return nil, h, fault.E(op, fault.RateLimited, "The key's request rate limit was reached.").
			With("limit", "requestsPerMinute").With("retryAfter", retry)
	}
	s.tokens--
	s.inFlight++
	l.pending[k.ID]++
	l.lastUsed = now
	h.Remaining = int(s.tokens)
	h.Reset = int(math.Ceil((rpm - s.tokens) / perSec))
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			s.inFlight--
			l.mu.Unlock()
		})
	}, h, nil
}

// Flush writes the pending counts to the database in one unit of work and
// reads back the totals of the flushed keys.
func (l *Limiter) Flush(ctx context.Context, inTx func(context.Context, func(UsageStore) error) error, read UsageStore) error {
	l.mu.Lock()
	if len(l.pending) == 0 {
		l.mu.Unlock()
		return nil
	}
	counts := l.pending
	l.pending = map[string]int64{}
	lastUsed := l.lastUsed
	period := Period(l.now())
	l.mu.Unlock()

	err := inTx(ctx, func(st UsageStore) error { return st.UsageAdd(ctx, period, counts, lastUsed) })
	if err != nil {
		// Put the counts back so the next flush retries them.
		l.mu.Lock()
		for k, n := range counts {
			l.pending[k] += n
		}
		l.mu.Unlock()
		return fault.Wrap("transport.Limiter.Flush", err)
	}
	for id := range counts {
		n, err := read.UsageGet(ctx, id, period)
		if err != nil {
			return fault.Wrap("transport.Limiter.Flush", err)
		}
		l.mu.Lock()
		if s := l.keys[id]; s != nil && s.period == period {
			s.known = n
		}
		l.mu.Unlock()
	}
	return nil
}

// Run flushes every interval until ctx ends, then flushes once more.
func (l *Limiter) Run(ctx context.Context, interval time.Duration, inTx func(context.Context, func(UsageStore) error) error, read func() UsageStore, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := l.Flush(context.WithoutCancel(ctx), inTx, read()); err != nil {
				log.Error("usage flush failed", "err", err)
			}
			return
		case <-t.C:
			if err := l.Flush(ctx, inTx, read()); err != nil {
				log.Error("usage flush failed", "err", err)
			}
		}
	}
}
