package idempotency

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/jobs"
)

// pruneFake holds expired records and spent counters; each unit of work
// is counted.
type pruneFake struct {
	now                time.Time
	records, throttles int
	units              int
	befores            []time.Time
	fail               error
}

func (f *pruneFake) Now() time.Time { return f.now }
func (f *pruneFake) take(n *int, before time.Time, limit int) (int, error) {
	f.befores = append(f.befores, before)
	if f.fail != nil {
		return 0, f.fail
	}
	k := min(*n, limit)
	*n -= k
	return k, nil
}
func (f *pruneFake) IdempotencyPrune(_ context.Context, before time.Time, limit int) (int, error) {
	return f.take(&f.records, before, limit)
}
func (f *pruneFake) ThrottlePrune(_ context.Context, before time.Time, limit int) (int, error) {
	return f.take(&f.throttles, before, limit)
}
func (f *pruneFake) run(_ context.Context, fn func(PruneStore) error) error {
	f.units++
	return fn(f)
}

// TestPruneInBatches: the hourly prune, of the maintenance class, deletes
// expired records then counters a day past their start, a batch of 1000
// per unit of work, until a batch comes back short; a failing batch stops
// it with an error naming what it pruned.
func TestPruneInBatches(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := &pruneFake{now: now, records: 2500, throttles: 10}
	ks := Jobs(f.run)
	if len(ks) != 1 || ks[0].Name != "idempotency.prune" || ks[0].Class != jobs.ClassMaintenance || ks[0].Every != time.Hour {
		t.Fatalf("kinds %+v", ks)
	}
	if err := ks[0].HandlerFunc(ctx, jobs.Job{Kind: JobPrune}); err != nil {
		t.Fatal(err)
	}
	if f.records != 0 || f.throttles != 0 || f.units != 4 {
		t.Fatalf("left %d records, %d counters after %d units; want none after 4 (1000, 1000, 500, 10)", f.records, f.throttles, f.units)
	}
	for i, b := range f.befores {
		want := now
		if i == 3 {
			want = now.Add(-24 * time.Hour)
		}
		if !b.Equal(want) {
			t.Fatalf("batch %d pruned before %v, want %v", i, b, want)
		}
	}
	f = &pruneFake{now: now, records: 1000, fail: errors.New("database gone")}
	if err := Prune(ctx, f.run); !errors.Is(err, f.fail) || !strings.Contains(err.Error(), "prune idempotency records") || f.units != 1 {
		t.Fatalf("failing prune: %v after %d units", err, f.units)
	}
}
