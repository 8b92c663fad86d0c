package transport

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
)

// UsageStore persists monthly request counts. *store.Tx satisfies it.
// API keys count in their own table (UsageAdd, UsageGet, by key id);
// users and workspaces acting through sessions and access tokens count by
// subject, "user:<user id>" or "ws:<workspace id>" (SubjectUsageAdd,
// SubjectUsageGet).
type UsageStore interface {
	UsageAdd(ctx context.Context, period string, counts map[string]int64, lastUsed time.Time) error
	UsageGet(ctx context.Context, keyID, period string) (int64, error)
	SubjectUsageAdd(ctx context.Context, period string, counts map[string]int64) error
	SubjectUsageGet(ctx context.Context, subject, period string) (int64, error)
}

// Default limits of sessions and session-bound access tokens (see
// SessionLimits). A user's equal an API key's defaults but for
// concurrency (a browser opens several connections at once); a workspace's
// admit five users at a user's full rate at once and ten at their full
// budgets.
const (
	DefaultUserRequestsPerMinute       = 600
	DefaultUserConcurrentRequests      = 32
	DefaultUserMonthlyRequestBudget    = 1_000_000
	DefaultWorkspaceRequestsPerMinute  = 3_000
	DefaultWorkspaceConcurrentRequests = 128
	DefaultWorkspaceMonthlyBudget      = 10_000_000
)

// SessionLimits are the limits of requests made with a session cookie or a
// session-bound access token. Each such request counts against its user's
// limits (all the user's sessions and access tokens together) and against
// those of the workspace it acts in (all its users' sessions and access
// tokens together), and is admitted only when both admit it. API keys keep
// their own limits (apikey.Limits); their requests do not count here.
type SessionLimits struct {
	// User bounds one user's requests. Zero fields take
	// DefaultUserRequestsPerMinute, DefaultUserConcurrentRequests and
	// DefaultUserMonthlyRequestBudget.
	User apikey.Limits
	// Workspace bounds one workspace's session and access-token requests.
	// Zero fields take DefaultWorkspaceRequestsPerMinute,
	// DefaultWorkspaceConcurrentRequests and DefaultWorkspaceMonthlyBudget.
	Workspace apikey.Limits
}

// WithDefaults returns l with every zero field set to its default.
func (l SessionLimits) WithDefaults() SessionLimits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.User.RequestsPerMinute, DefaultUserRequestsPerMinute)
	def(&l.User.MaxConcurrentRequests, DefaultUserConcurrentRequests)
	if l.User.MonthlyRequestBudget == 0 {
		l.User.MonthlyRequestBudget = DefaultUserMonthlyRequestBudget
	}
	def(&l.Workspace.RequestsPerMinute, DefaultWorkspaceRequestsPerMinute)
	def(&l.Workspace.MaxConcurrentRequests, DefaultWorkspaceConcurrentRequests)
	if l.Workspace.MonthlyRequestBudget == 0 {
		l.Workspace.MonthlyRequestBudget = DefaultWorkspaceMonthlyBudget
	}
	return l
}

// Validate reports a negative limit.
func (l SessionLimits) Validate() error {
	for _, c := range []struct {
		name string
		l    apikey.Limits
	}{{"User", l.User}, {"Workspace", l.Workspace}} {
		if c.l.RequestsPerMinute < 0 || c.l.MaxConcurrentRequests < 0 || c.l.MonthlyRequestBudget < 0 {
			return fmt.Errorf("session limits: %s has a negative limit", c.name)
		}
	}
	return nil
}

// Limiter enforces the request limits of every credential in the gateway:
// an API key's own limits (apikey.Limits), and for sessions and
// session-bound access tokens those of the user and of the workspace
// (SessionLimits). A request past a limit is 429 RATE_LIMITED with
// details.limit (requestsPerMinute, maxConcurrentRequests or
// monthlyRequestBudget), details.retryAfter and the Retry-After header;
// session refusals also carry details.subject (user or workspace). Every
// answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset
// of the binding limit.
//
// The per-minute rate (a token bucket refilled continuously) and the
// concurrency limit are enforced per host: with N hosts behind a balancer a
// key, a user or a workspace can reach at most N times those limits. The
// monthly budget is counted in the database (api_key_usage for keys,
// request_usage for users and workspaces), so it holds across hosts on
// PostgreSQL and across restarts: each host counts in memory and flushes
// its counts in batches (every FlushInterval, and on Close), and reads back
// the subject's total after each flush. The overshoot is bounded by what
// other hosts admitted since this host's last flush: at most (hosts - 1) x
// FlushInterval x the subject's rate, plus the requests lost if a host dies
// between flushes (at most one interval's).
//
// A subject idle for a minute (full bucket, nothing in flight, nothing
// pending) is forgotten at the next flush and read back from the database
// when it returns, so memory follows the active subjects, not every one
// ever seen.
type Limiter struct {
	clock    Clock
	sessions SessionLimits
	mu       sync.Mutex
	states   map[string]*limitState // by subject id
	pending  map[string]int64       // by subject id
	lastUsed time.Time
}

// limitState is one subject's bucket, requests in flight and budget.
type limitState struct {
	tokens   float64
	last     time.Time
	inFlight int
	period   string
	known    int64 // total in the database for period, as of the last read
	loaded   bool
}

// subject is who a request counts against.
type subject struct {
	id     string // a key id, "user:<user id>" or "ws:<workspace id>"
	kind   string // subjectKey, subjectUser or subjectWorkspace
	limits apikey.Limits
}

const (
	subjectKey       = "key"
	subjectUser      = "user"
	subjectWorkspace = "workspace"
)

// counted reports whether id is a user or workspace subject (counted in
// request_usage) rather than a key id (api_key_usage). Key ids hold no
// colon.
func counted(id string) bool { return strings.Contains(id, ":") }

// NewLimiter returns a limiter reading time from clock, with sessions' limits
// (zero fields take the defaults).
func NewLimiter(clock Clock, sessions SessionLimits) *Limiter {
	return &Limiter{clock: clock, sessions: sessions.WithDefaults(), states: map[string]*limitState{}, pending: map[string]int64{}}
}

// SessionLimits returns the limits sessions and access tokens run under.
func (l *Limiter) SessionLimits() SessionLimits { return l.sessions }

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
	hd, h, err := l.acquireKey(ctx, st, k)
	return hd.release, h, err
}

// acquireKey is Acquire, returning the admission's hold.
func (l *Limiter) acquireKey(ctx context.Context, st UsageStore, k apikey.Key) (hold, RateHeaders, error) {
	return l.acquire(ctx, st, []subject{{id: k.ID, kind: subjectKey, limits: k.Limits}})
}

// hold is one admitted request: release ends its concurrency slots;
// refund also gives back the rate token and the budget count it took, for
// a request that is admitted again and must count once (the gateway's
// second pass of a read, serveRead). Each runs at most once.
type hold struct {
	release, refund func()
}

// AcquireSession admits one request of a session or access token of user
// userID acting in workspace workspaceID ("" when it acts in none): the
// user's and the workspace's limits must both admit it. A refusal is
// RATE_LIMITED with details limit, retryAfter and subject (user or
// workspace); nothing is counted against either. On success the caller
// must call release when the request ends.
func (l *Limiter) AcquireSession(ctx context.Context, st UsageStore, userID, workspaceID string) (release func(), h RateHeaders, err error) {
	hd, h, err := l.acquireSession(ctx, st, userID, workspaceID)
	return hd.release, h, err
}

// acquireSession is AcquireSession, returning the admission's hold.
func (l *Limiter) acquireSession(ctx context.Context, st UsageStore, userID, workspaceID string) (hold, RateHeaders, error) {
	subs := []subject{{id: "user:" + userID, kind: subjectUser, limits: l.sessions.User}}
	if workspaceID != "" {
		subs = append(subs, subject{id: "ws:" + workspaceID, kind: subjectWorkspace, limits: l.sessions.Workspace})
	}
	return l.acquire(ctx, st, subs)
}

// acquire admits one request counted against every subject of subs, or
// none.
func (l *Limiter) acquire(ctx context.Context, st UsageStore, subs []subject) (hold, RateHeaders, error) {
	const op = "transport.Limiter"
	now := l.clock.Now()
	period := Period(now)
	for {
		l.mu.Lock()
		var missing []subject
		for _, sub := range subs {
			s := l.states[sub.id]
			if s == nil {
				s = &limitState{tokens: float64(sub.limits.RequestsPerMinute), last: now}
				l.states[sub.id] = s
			}
			if !s.loaded || s.period != period {
				missing = append(missing, sub)
			}
		}
		if len(missing) == 0 {
			release, h, err := l.admit(subs, now)
			l.mu.Unlock()
			return release, h, err
		}
		l.mu.Unlock()
		// Read the budgets outside the lock; a state forgotten meanwhile is
		// read again on the next pass.
		for _, sub := range missing {
			n, err := usageGet(ctx, st, sub.id, period)
			if err != nil {
				return hold{}, RateHeaders{}, fault.Wrap(op, err)
			}
			l.mu.Lock()
			if s := l.states[sub.id]; s != nil && (!s.loaded || s.period != period) {
				s.known, s.period, s.loaded = n, period, true
			}
			l.mu.Unlock()
		}
	}
}

// usageGet reads the total of subject id in period from its table.
func usageGet(ctx context.Context, st UsageStore, id, period string) (int64, error) {
	if counted(id) {
		return st.SubjectUsageGet(ctx, id, period)
	}
	return st.UsageGet(ctx, id, period)
}

// admit checks every subject's budget, concurrency and rate in that order
// and, when all admit the request, takes one of each. l.mu is held and
// every subject's state is loaded.
func (l *Limiter) admit(subs []subject, now time.Time) (hold, RateHeaders, error) {
	states := make([]*limitState, len(subs))
	for i, sub := range subs {
		s := l.states[sub.id]
		states[i] = s
		rpm := float64(sub.limits.RequestsPerMinute)
		if el := now.Sub(s.last).Seconds(); el > 0 {
			s.tokens += el * rpm / 60
		}
		// A lowered limit takes effect at once.
		s.tokens = math.Min(rpm, s.tokens)
		s.last = now
	}
	for i, sub := range subs {
		if h, err := l.refusal(sub, states[i], now); err != nil {
			return hold{}, h, err
		}
	}
	var h RateHeaders
	for i, sub := range subs {
		s := states[i]
		s.tokens--
		s.inFlight++
		l.pending[sub.id]++
		rpm := float64(sub.limits.RequestsPerMinute)
		// The headers report the subject closest to its rate limit.
		if i == 0 || int(s.tokens) < h.Remaining {
			h = RateHeaders{Limit: sub.limits.RequestsPerMinute, Remaining: int(s.tokens), Reset: int(math.Ceil((rpm - s.tokens) / (rpm / 60)))}
		}
	}
	l.lastUsed = now
	var released, refunded sync.Once
	release := func() {
		released.Do(func() {
			l.mu.Lock()
			for _, s := range states {
				s.inFlight--
			}
			l.mu.Unlock()
		})
	}
	refund := func() {
		release()
		refunded.Do(func() {
			l.mu.Lock()
			for i, sub := range subs {
				s := states[i]
				s.tokens = math.Min(float64(sub.limits.RequestsPerMinute), s.tokens+1)
				// A flush since the admission moved the count to the
				// database; the next flush then takes it back.
				l.pending[sub.id]--
			}
			l.mu.Unlock()
		})
	}
	return hold{release: release, refund: refund}, h, nil
}

// refusal returns RATE_LIMITED when sub's state does not admit one more
// request, with the headers to answer.
func (l *Limiter) refusal(sub subject, s *limitState, now time.Time) (RateHeaders, error) {
	const op = "transport.Limiter"
	h := RateHeaders{Limit: sub.limits.RequestsPerMinute}
	perSec := float64(sub.limits.RequestsPerMinute) / 60
	var limit string
	var retry int
	switch {
	case s.known+l.pending[sub.id] >= sub.limits.MonthlyRequestBudget:
		retry = int(math.Ceil(nextPeriod(now).Sub(now).Seconds()))
		h.Remaining, h.Reset = int(s.tokens), retry
		limit = "monthlyRequestBudget"
	case s.inFlight >= sub.limits.MaxConcurrentRequests:
		retry = 1
		h.Remaining, h.Reset = int(s.tokens), retry
		limit = "maxConcurrentRequests"
	case s.tokens < 1:
		retry = int(math.Ceil((1 - s.tokens) / perSec))
		h.Remaining, h.Reset = 0, retry
		limit = "requestsPerMinute"
	default:
		return h, nil
	}
	err := fault.E(op, fault.RateLimited, refusalMessage(sub.kind, limit)).With("limit", limit).With("retryAfter", retry)
	if sub.kind != subjectKey {
		err = err.With("subject", sub.kind)
	}
	return h, err
}

// refusalMessage is the message of a refusal of a subject of kind by
// limit.
func refusalMessage(kind, limit string) string {
	who := map[string]string{subjectKey: "the key", subjectUser: "the user", subjectWorkspace: "the workspace's signed-in users"}[kind]
	switch limit {
	case "monthlyRequestBudget":
		return "The monthly request budget of " + who + " is spent."
	case "maxConcurrentRequests":
		return "Too many concurrent requests for " + who + "."
	}
	return "The request rate limit of " + who + " was reached."
}

// Flush writes the pending counts to the database in one unit of work and
// reads back the totals of the flushed subjects; then it forgets the
// subjects idle for a minute.
func (l *Limiter) Flush(ctx context.Context, inTx func(context.Context, func(UsageStore) error) error, read UsageStore) error {
	l.mu.Lock()
	l.forgetIdle()
	if len(l.pending) == 0 {
		l.mu.Unlock()
		return nil
	}
	pending := l.pending
	l.pending = map[string]int64{}
	lastUsed := l.lastUsed
	period := Period(l.clock.Now())
	l.mu.Unlock()

	keys, subjects := map[string]int64{}, map[string]int64{}
	for id, n := range pending {
		if counted(id) {
			subjects[id] = n
		} else {
			keys[id] = n
		}
	}
	err := inTx(ctx, func(st UsageStore) error {
		if len(keys) > 0 {
			if err := st.UsageAdd(ctx, period, keys, lastUsed); err != nil {
				return err
			}
		}
		if len(subjects) > 0 {
			return st.SubjectUsageAdd(ctx, period, subjects)
		}
		return nil
	})
	if err != nil {
		// Put the counts back so the next flush retries them.
		l.mu.Lock()
		for id, n := range pending {
			l.pending[id] += n
		}
		l.mu.Unlock()
		return fault.Wrap("transport.Limiter.Flush", err)
	}
	for id := range pending {
		n, err := usageGet(ctx, read, id, period)
		if err != nil {
			return fault.Wrap("transport.Limiter.Flush", err)
		}
		l.mu.Lock()
		if s := l.states[id]; s != nil && s.period == period {
			s.known = n
		}
		l.mu.Unlock()
	}
	return nil
}

// forgetIdle drops the states of subjects idle for a minute: their bucket
// is full again, nothing is in flight and nothing waits to be flushed, so
// a fresh state read back from the database behaves the same. l.mu is
// held.
func (l *Limiter) forgetIdle() {
	now := l.clock.Now()
	for id, s := range l.states {
		if s.inFlight == 0 && l.pending[id] == 0 && now.Sub(s.last) >= time.Minute {
			delete(l.states, id)
		}
	}
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
