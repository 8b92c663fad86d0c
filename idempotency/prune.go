package idempotency

import (
	"context"
	"fmt"
	"time"

	"github.com/creatormusic/platform/jobs"
)

// JobPrune deletes, in batches, the idempotency records past their
// expiry and the spent sign-in and mail throttle counters (package
// account's), once every PruneEvery. Rows in existing databases carry the
// name, so it never changes.
const JobPrune = "idempotency.prune"

// The prune's period, batch and retention.
const (
	// PruneEvery is the prune's period.
	PruneEvery = time.Hour
	// PruneBatch bounds one prune statement; a batch that deletes fewer
	// rows ends that kind of record's prune.
	PruneBatch = 1000
	// ThrottleRetention is how long a spent sign-in or mail counter is
	// kept after its window started: far past the longest window and
	// backoff.
	ThrottleRetention = 24 * time.Hour
)

// PruneStore is the unit of work of one prune batch; package store
// implements it.
type PruneStore interface {
	// Now is the unit of work's time.
	Now() time.Time
	// IdempotencyPrune deletes up to limit records that expired before
	// before and reports how many.
	IdempotencyPrune(ctx context.Context, before time.Time, limit int) (int, error)
	// ThrottlePrune deletes up to limit throttle counters that started
	// before before and hold no lock ending after it, and reports how
	// many.
	ThrottlePrune(ctx context.Context, before time.Time, limit int) (int, error)
}

// PruneRunFunc runs fn as one unit of work, committed when fn returns nil.
type PruneRunFunc func(ctx context.Context, fn func(st PruneStore) error) error

// Jobs returns the prune's job kind: periodic, of the maintenance class,
// each batch a unit of work of run.
func Jobs(run PruneRunFunc) []jobs.Kind {
	return []jobs.Kind{{Name: JobPrune, Class: jobs.ClassMaintenance, Every: PruneEvery,
		HandlerFunc: func(ctx context.Context, _ jobs.Job) error { return Prune(ctx, run) }}}
}

// Prune deletes the expired idempotency records, then the spent throttle
// counters, PruneBatch at a time, each batch in its own unit of work, until
// a batch deletes fewer than PruneBatch.
func Prune(ctx context.Context, run PruneRunFunc) error {
	prunes := []struct {
		what      string
		pruneFunc func(st PruneStore) (int, error)
	}{
		{"idempotency records", func(st PruneStore) (int, error) { return st.IdempotencyPrune(ctx, st.Now(), PruneBatch) }},
		{"throttle counters", func(st PruneStore) (int, error) {
			return st.ThrottlePrune(ctx, st.Now().Add(-ThrottleRetention), PruneBatch)
		}},
	}
	for _, pr := range prunes {
		for {
			var n int
			err := run(ctx, func(st PruneStore) (err error) {
				n, err = pr.pruneFunc(st)
				return err
			})
			if err != nil {
				return fmt.Errorf("prune %s: %w", pr.what, err)
			}
			if n < PruneBatch {
				break
			}
		}
	}
	return nil
}
