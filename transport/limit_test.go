package transport

import (
	"context"
	"testing"
	"time"

	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
)

type memUsage struct{ counts map[string]int64 }

func (m *memUsage) UsageAdd(_ context.Context, period string, counts map[string]int64, _ time.Time) error {
	for k, n := range counts {
		m.counts[k+"/"+period] += n
	}
	return nil
}

func (m *memUsage) UsageGet(_ context.Context, keyID, period string) (int64, error) {
	return m.counts[keyID+"/"+period], nil
}

func (m *memUsage) SubjectUsageAdd(_ context.Context, period string, counts map[string]int64) error {
	for k, n := range counts {
		m.counts[k+"/"+period] += n
	}
	return nil
}

func (m *memUsage) SubjectUsageGet(_ context.Context, subject, period string) (int64, error) {
	return m.counts[subject+"/"+period], nil
}

func limitOf(err error) any {
	fe, ok := err.(*fault.Error)
	if !ok {
		return nil
	}
	return fe.Details["limit"]
}

func TestLimiterConcurrencyAndBudget(t *testing.T) {
	now := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	l := NewLimiter(clockOf(&now), SessionLimits{})
	st := &memUsage{counts: map[string]int64{}}
	k := apikey.Key{ID: "key_1", Limits: apikey.Limits{RequestsPerMinute: 100, MaxConcurrentRequests: 2, MonthlyRequestBudget: 5}}
	ctx := context.Background()

	r1, _, err := l.Acquire(ctx, st, k)
	if err != nil {
		t.Fatal(err)
	}
	r2, _, err := l.Acquire(ctx, st, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Acquire(ctx, st, k); fault.CodeOf(err) != fault.RateLimited || limitOf(err) != "maxConcurrentRequests" {
		t.Fatalf("third concurrent request = %v", err)
	}
	r1()
	r1() // a second release of the same slot is ignored
	r3, _, err := l.Acquire(ctx, st, k)
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
	r3()
	// Budget: 3 used in memory, 2 more allowed, then refused; the refusal
	// survives a flush and a fresh limiter that reads the database.
	for i := 0; i < 2; i++ {
		rel, _, err := l.Acquire(ctx, st, k)
		if err != nil {
			t.Fatalf("request %d within budget: %v", i, err)
		}
		rel()
	}
	if _, h, err := l.Acquire(ctx, st, k); limitOf(err) != "monthlyRequestBudget" || h.Reset != 60 {
		t.Fatalf("over budget = %v, reset %d (want 60 s to the next month)", err, h.Reset)
	}
	inTx := func(ctx context.Context, fn func(UsageStore) error) error { return fn(st) }
	if err := l.Flush(ctx, inTx, st); err != nil {
		t.Fatal(err)
	}
	if got := st.counts["key_1/2026-03"]; got != 5 {
		t.Fatalf("flushed %d requests, want 5", got)
	}
	fresh := NewLimiter(clockOf(&now), SessionLimits{})
	if _, _, err := fresh.Acquire(ctx, st, k); limitOf(err) != "monthlyRequestBudget" {
		t.Fatalf("a restarted limiter forgot the budget: %v", err)
	}
	now = now.Add(time.Minute) // April
	if _, _, err := fresh.Acquire(ctx, st, k); err != nil {
		t.Fatalf("new month: %v", err)
	}
}

func detailOf(err error, key string) any {
	fe, ok := err.(*fault.Error)
	if !ok {
		return nil
	}
	return fe.Details[key]
}

// TestLimiterSessions: a session request counts against its user and its
// workspace and is admitted only when both admit it; a refusal by one
// counts nothing against the other; another workspace is not bound.
func TestLimiterSessions(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	l := NewLimiter(clockOf(&now), SessionLimits{
		User:      apikey.Limits{RequestsPerMinute: 3, MaxConcurrentRequests: 2, MonthlyRequestBudget: 100},
		Workspace: apikey.Limits{RequestsPerMinute: 4, MaxConcurrentRequests: 3, MonthlyRequestBudget: 100},
	})
	st := &memUsage{counts: map[string]int64{}}
	ctx := context.Background()
	take := func(user, ws string) (RateHeaders, error) {
		t.Helper()
		rel, h, err := l.AcquireSession(ctx, st, user, ws)
		if err == nil {
			rel()
		}
		return h, err
	}
	// Per user: three a minute.
	for i := 0; i < 3; i++ {
		if _, err := take("usr_a", "ws_1"); err != nil {
			t.Fatalf("a's request %d: %v", i, err)
		}
	}
	h, err := take("usr_a", "ws_1")
	if limitOf(err) != "requestsPerMinute" || detailOf(err, "subject") != "user" || detailOf(err, "retryAfter") != 20 || h.Remaining != 0 || h.Limit != 3 {
		t.Fatalf("a's fourth request: %v, headers %+v", err, h)
	}
	// Per workspace: b has its own user allowance, but the workspace has one left.
	if h, err := take("usr_b", "ws_1"); err != nil || h.Limit != 4 || h.Remaining != 0 {
		t.Fatalf("b's first request: %v, headers %+v (want the workspace's, closest to refusing)", err, h)
	}
	if _, err := take("usr_b", "ws_1"); limitOf(err) != "requestsPerMinute" || detailOf(err, "subject") != "workspace" {
		t.Fatalf("b's second request: %v, want the workspace's rate", err)
	}
	// The refusal counted nothing against b: b acting in another workspace
	// still has two of its three.
	for i := 0; i < 2; i++ {
		if _, err := take("usr_b", "ws_2"); err != nil {
			t.Fatalf("b in ws_2, request %d: %v", i, err)
		}
	}
	if _, err := take("usr_b", "ws_2"); detailOf(err, "subject") != "user" {
		t.Fatalf("b's fourth counted request: %v", err)
	}

	// Concurrency: two per user, three per workspace, released slots return.
	now = now.Add(time.Hour)
	r1, _, err1 := l.AcquireSession(ctx, st, "usr_c", "ws_3")
	r2, _, err2 := l.AcquireSession(ctx, st, "usr_c", "ws_3")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, _, err := l.AcquireSession(ctx, st, "usr_c", "ws_3"); limitOf(err) != "maxConcurrentRequests" || detailOf(err, "subject") != "user" {
		t.Fatalf("c's third concurrent request: %v", err)
	}
	r3, _, err := l.AcquireSession(ctx, st, "usr_d", "ws_3")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.AcquireSession(ctx, st, "usr_e", "ws_3"); limitOf(err) != "maxConcurrentRequests" || detailOf(err, "subject") != "workspace" {
		t.Fatalf("e, fourth in the workspace: %v", err)
	}
	r1()
	r1()
	if rel, _, err := l.AcquireSession(ctx, st, "usr_e", "ws_3"); err != nil {
		t.Fatalf("after a release: %v", err)
	} else {
		rel()
	}
	r2()
	r3()
	// A user acting in no workspace is held by the user's limits alone.
	if _, err := take("usr_f", ""); err != nil {
		t.Fatal(err)
	}
}

// TestLimiterSessionBudgetAndIdle: a user's budget is counted by subject,
// survives a fresh limiter once flushed, and a subject forgotten after a
// minute idle is read back with its budget.
func TestLimiterSessionBudgetAndIdle(t *testing.T) {
	now := time.Date(2026, 3, 31, 23, 50, 0, 0, time.UTC)
	limits := SessionLimits{User: apikey.Limits{RequestsPerMinute: 100, MaxConcurrentRequests: 5, MonthlyRequestBudget: 3}}
	l := NewLimiter(clockOf(&now), limits)
	st := &memUsage{counts: map[string]int64{}}
	ctx := context.Background()
	inTx := func(ctx context.Context, fn func(UsageStore) error) error { return fn(st) }
	for i := 0; i < 3; i++ {
		rel, _, err := l.AcquireSession(ctx, st, "usr_a", "ws_1")
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		rel()
	}
	_, h, err := l.AcquireSession(ctx, st, "usr_a", "ws_1")
	if limitOf(err) != "monthlyRequestBudget" || detailOf(err, "subject") != "user" || h.Reset != 600 {
		t.Fatalf("over budget: %v, reset %d (want 600 s to April)", err, h.Reset)
	}
	if err := l.Flush(ctx, inTx, st); err != nil {
		t.Fatal(err)
	}
	if st.counts["user:usr_a/2026-03"] != 3 || st.counts["ws:ws_1/2026-03"] != 3 || len(st.counts) != 2 {
		t.Fatalf("flushed %v", st.counts)
	}
	if _, _, err := NewLimiter(clockOf(&now), limits).AcquireSession(ctx, st, "usr_a", "ws_2"); limitOf(err) != "monthlyRequestBudget" {
		t.Fatalf("a restarted limiter forgot the budget: %v", err)
	}
	now = now.Add(time.Minute)
	if err := l.Flush(ctx, inTx, st); err != nil {
		t.Fatal(err)
	}
	if len(l.states) != 0 {
		t.Fatalf("%d idle subjects kept", len(l.states))
	}
	if _, _, err := l.AcquireSession(ctx, st, "usr_a", "ws_1"); limitOf(err) != "monthlyRequestBudget" {
		t.Fatalf("a forgotten subject came back without its budget: %v", err)
	}
}

// clockAt reads the time from a variable a test moves.
type clockAt struct{ t *time.Time }

// Now returns the variable's time.
func (c clockAt) Now() time.Time { return *c.t }

// clockOf returns a clock reading *t.
func clockOf(t *time.Time) Clock { return clockAt{t} }

// TestLimiterRefundCountsOnce: a read the gateway serves a second time
// (serveRead) refunds its first admission, so it takes one rate token and
// counts once against the monthly budget, also across a flush.
func TestLimiterRefundCountsOnce(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	l := NewLimiter(clockOf(&now), SessionLimits{})
	st := &memUsage{counts: map[string]int64{}}
	k := apikey.Key{ID: "key_1", Limits: apikey.Limits{RequestsPerMinute: 2, MaxConcurrentRequests: 5, MonthlyRequestBudget: 100}}
	ctx := context.Background()
	inTx := func(ctx context.Context, fn func(UsageStore) error) error { return fn(st) }

	first, _, err := l.acquireKey(ctx, st, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(ctx, inTx, st); err != nil {
		t.Fatal(err)
	}
	first.refund()
	first.refund() // a second refund gives nothing back
	for i := range 2 {
		hd, _, err := l.acquireKey(ctx, st, k)
		if err != nil {
			t.Fatalf("request %d after the refund: %v", i, err)
		}
		hd.release()
	}
	if _, _, err := l.acquireKey(ctx, st, k); limitOf(err) != "requestsPerMinute" {
		t.Fatalf("a third request in the minute = %v, want the rate refused", err)
	}
	if err := l.Flush(ctx, inTx, st); err != nil {
		t.Fatal(err)
	}
	if n := st.counts["key_1/"+Period(now)]; n != 2 {
		t.Fatalf("requests counted = %d, want 2 (the refunded one once)", n)
	}
}
