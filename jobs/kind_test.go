package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/creatormusic/platform/jobs"
)

// schedulerFake is a unit of work that records the jobs it enqueues, at a
// fixed time.
type schedulerFake struct {
	now      time.Time
	inserted []jobs.InsertParams
	fail     error
}

func (s *schedulerFake) Now() time.Time { return s.now }
func (s *schedulerFake) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	if s.fail != nil {
		return false, s.fail
	}
	for _, q := range s.inserted {
		if q.UniqueKey == p.UniqueKey {
			return false, nil
		}
	}
	s.inserted = append(s.inserted, p)
	return true, nil
}
func (s *schedulerFake) run(ctx context.Context, fn func(st jobs.Scheduler) error) error {
	return fn(s)
}

// TestNextIsOncePerPeriod: the next run of a periodic kind is due at the
// start of the following period and keyed by the kind and that start, so
// hosts enqueueing it within one period insert one run.
func TestNextIsOncePerPeriod(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 34, 56, 789, time.UTC)
	p := jobs.Next("idempotency.prune", time.Hour, now)
	if p.Kind != "idempotency.prune" || !p.RunAt.Equal(time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)) ||
		p.UniqueKey != "idempotency.prune:2026-03-01T13:00:00Z" || p.Payload != nil || p.MaxAttempts != 0 {
		t.Fatalf("Next = %+v", p)
	}
	if q := jobs.Next("idempotency.prune", time.Hour, now.Add(20*time.Minute)); q.UniqueKey != p.UniqueKey {
		t.Fatalf("same period, another key: %s vs %s", q.UniqueKey, p.UniqueKey)
	}
	if q := jobs.Next("intent.sweep", 5*time.Second, now); q.UniqueKey != "intent.sweep:2026-03-01T12:35:00Z" {
		t.Fatalf("5s period key = %s", q.UniqueKey)
	}
}

// TestPeriodicKindPlansItsNextRunAfterSuccess: Schedule enqueues the next
// run of periodic kinds only; a periodic handler enqueues the next run
// once it succeeded, and none when it failed (the retry will); a kind
// declared twice or without a handler is refused.
func TestPeriodicKindPlansItsNextRunAfterSuccess(t *testing.T) {
	ctx := context.Background()
	st := &schedulerFake{now: time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)}
	fail := errors.New("cluster unreadable")
	var runs int
	kinds := []jobs.Kind{
		{Name: "periodic", Class: jobs.ClassMaintenance, Every: time.Minute, HandlerFunc: func(context.Context, jobs.Job) error {
			runs++
			if runs == 1 {
				return fail
			}
			return nil
		}},
		{Name: "once", Class: jobs.ClassMoney, HandlerFunc: func(context.Context, jobs.Job) error { return nil }},
	}
	if err := jobs.Schedule(ctx, kinds, st.run); err != nil {
		t.Fatal(err)
	}
	if len(st.inserted) != 1 || st.inserted[0].UniqueKey != "periodic:2026-03-01T12:01:00Z" {
		t.Fatalf("Schedule inserted %+v, want the periodic kind's next run", st.inserted)
	}
	hs, err := jobs.Handlers(kinds, st.run)
	if err != nil {
		t.Fatal(err)
	}
	st.now = st.now.Add(time.Minute)
	if err := hs["periodic"](ctx, jobs.Job{Kind: "periodic"}); !errors.Is(err, fail) || len(st.inserted) != 1 {
		t.Fatalf("failed run = %v with %d jobs, want its error and no next run", err, len(st.inserted))
	}
	if err := hs["periodic"](ctx, jobs.Job{Kind: "periodic"}); err != nil || len(st.inserted) != 2 ||
		st.inserted[1].UniqueKey != "periodic:2026-03-01T12:02:00Z" {
		t.Fatalf("retried run = %v, jobs %+v, want the next period's run", err, st.inserted)
	}
	if err := hs["once"](ctx, jobs.Job{Kind: "once"}); err != nil || len(st.inserted) != 2 {
		t.Fatalf("a kind without a period planned a run: %v, %+v", err, st.inserted)
	}
	st.fail = errors.New("database gone")
	if err := hs["periodic"](ctx, jobs.Job{Kind: "periodic"}); !errors.Is(err, st.fail) {
		t.Fatalf("run whose next run cannot be planned = %v, want the error (so the job is retried)", err)
	}

	if _, err := jobs.Handlers(append(kinds, kinds[1]), st.run); err == nil {
		t.Fatal("a kind declared twice was accepted")
	}
	if _, err := jobs.Handlers([]jobs.Kind{{Name: "nohandler", Class: jobs.ClassMoney}}, st.run); err == nil {
		t.Fatal("a kind without a handler was accepted")
	}
}
