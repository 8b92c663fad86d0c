package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointInterval is how long the checkpointer lets commits accumulate
// after a wake-up: one checkpoint then copies the pages of many
// transactions, each page once. It is short because a checkpoint's copies
// and fsyncs slow the writer while they run: with 50 ms the generate
// accepts of examples/bench had a p99 of 21 to 25 ms (16 workspaces) and
// 17 ms (one), with 10 ms 17 to 19 ms and 13 to 14 ms, at the same rate.
const checkpointInterval = 10 * time.Millisecond

// writerCheckpointPages is the writer's own automatic checkpoint threshold
// (SQLite's default is 1,000 pages). It is a backstop: the checkpointer
// normally keeps the WAL far below it.
const writerCheckpointPages = 20000

// checkpointer copies the WAL back into the database file on its own
// connection. SQLite's automatic checkpoint runs inside the commit that
// crosses the threshold, on the single writer connection, so every unit
// of work waited for it (page copies and an fsync) about once per
// thousand WAL pages; a PASSIVE checkpoint on another connection runs
// beside the writer instead.
type checkpointer struct {
	db       *sql.DB
	wake     chan struct{}
	stop     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

// startCheckpointer starts a checkpointer on db, a pool it owns.
func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c
}

// committed wakes the checkpointer after a commit; it never blocks.
func (c *checkpointer) committed() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.stopped)
	t := time.NewTimer(checkpointInterval)
	t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		t.Reset(checkpointInterval)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		// A failed checkpoint (a reader holding old pages, a busy lock) is
		// retried on the next wake-up; the writer's own threshold bounds
		// the WAL meanwhile.
		_, _ = c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
	}
}

// Close stops the checkpointer and closes its pool.
func (c *checkpointer) Close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.stopped
	return c.db.Close()
}
