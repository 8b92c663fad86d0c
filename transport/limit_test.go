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

func limitOf(err error) any {
	fe, ok := err.(*fault.Error)
	if !ok {
		return nil
	}
	return fe.Details["limit"]
}

func TestLimiterConcurrencyAndBudget(t *testing.T) {
	now := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	l := NewLimiter(func() time.Time { return now })
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
	fresh := NewLimiter(func() time.Time { return now })
	if _, _, err := fresh.Acquire(ctx, st, k); limitOf(err) != "monthlyRequestBudget" {
		t.Fatalf("a restarted limiter forgot the budget: %v", err)
	}
	now = now.Add(time.Minute) // April
	if _, _, err := fresh.Acquire(ctx, st, k); err != nil {
		t.Fatalf("new month: %v", err)
	}
}
