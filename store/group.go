package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. SQLite has one writer, and a commit writes every page the
// transaction touched to the WAL: an accept touches about thirty B-tree
// pages, most of them the same rightmost leaves as the next accept's. With
// Options.GroupCommit, the units of work that wait for the writer run one
// after another in one transaction, each inside its own savepoint, and
// commit together: the shared pages are written once per group, and the
// lock and commit costs are paid once.
//
// Each unit keeps its meaning: it runs alone on the writer and sees every
// earlier unit's writes (the same serial order a queue of transactions
// would give); a unit whose function fails or panics is rolled back to its
// savepoint and leaves nothing; a unit that succeeded is durable only when
// the group commits, and InTx returns only after that, with the group's
// error if the commit failed. A unit that failed also returns only when
// its group has ended, so a caller that reads after the error (an
// idempotent replay that met another unit's record) reads committed rows.
//
// A context cancelled while its unit's statement runs interrupts that
// statement only: the unit fails and rolls back to its savepoint, and the
// group goes on (store/sqlite's TestCancelledUnitLeavesItsGroup). An error
// that ends the whole transaction (a full disk, an I/O error) is found when
// the unit's savepoint can no longer be released or rolled back to: the
// group then rolls back and every unit in it fails.

// Group limits: a group takes the units waiting for the writer until it
// holds maxGroupUnits or has been open for maxGroupTime, so the first
// unit's commit waits for at most that much of others' work.
const (
	maxGroupUnits = 64
	maxGroupTime  = 4 * time.Millisecond
)

// errClosed is returned by InTx after Close.
var errClosed = errors.New("store: database is closed")

// committer runs the units of work of a DB with GroupCommit. One goroutine
// owns the writer and runs every unit's function itself, one after
// another; a unit's panic is raised again in its caller.
type committer struct {
	db *DB
	// maxTime is maxGroupTime (tests lengthen it).
	maxTime time.Duration

	mu     sync.Mutex
	queue  []*unit
	closed bool
	// busy (nanoseconds), groups and units count the writer's work for
	// DB.WriterStats.
	busy, groups, units atomic.Int64

	// wake is signalled (without blocking) when a unit is queued.
	wake    chan struct{}
	quit    chan struct{}
	stopped chan struct{}
}

// unit is one InTx call waiting for, or holding, the writer.
type unit struct {
	ctx      context.Context
	unitFunc func(tx *Tx) error
	// done receives how the unit ended, once its group has ended.
	done chan unitResult
}

// unitResult is how a unit ended: tx is the committed unit's handle (for
// its AfterCommit functions); err is its own error or its group's;
// panicked is the value its function panicked with.
type unitResult struct {
	tx       *Tx
	err      error
	panicked any
}

func startCommitter(db *DB) *committer {
	c := &committer{db: db, maxTime: maxGroupTime, wake: make(chan struct{}, 1), quit: make(chan struct{}), stopped: make(chan struct{})}
	go c.loop()
	return c
}

// close stops the writer loop once it has run every unit already queued
// (they commit as usual); InTx calls after close fail with errClosed.
func (c *committer) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	close(c.quit)
	<-c.stopped
	c.mu.Lock()
	rest := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, u := range rest {
		u.done <- unitResult{err: errClosed}
	}
}

// pop takes the unit that has waited longest, or nil.
func (c *committer) pop() *unit {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return nil
	}
	u := c.queue[0]
	c.queue[0] = nil
	c.queue = c.queue[1:]
	return u
}

// withdraw removes u from the queue; false when the writer took it first.
func (c *committer) withdraw(u *unit) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, q := range c.queue {
		if q == u {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			return true
		}
	}
	return false
}

func (c *committer) loop() {
	defer close(c.stopped)
	for {
		if u := c.pop(); u != nil {
			c.group(u)
			c.db.writeStmts.prepareWanted(context.Background())
			continue
		}
		select {
		case <-c.wake:
		case <-c.quit:
			return
		}
	}
}

// next returns the next waiting unit for a group of n units open since
// start, or nil when the group should commit: none waits (waiting for
// more was measured to gain nothing), or the group is full.
func (c *committer) next(n int, start time.Time) *unit {
	if n >= maxGroupUnits || time.Since(start) >= c.maxTime {
		return nil
	}
	return c.pop()
}

// member is a unit that ran in a group: err is its own error (or the
// panic's stand-in), panicked the value its function panicked with.
type member struct {
	u        *unit
	tx       *Tx
	err      error
	panicked any
}

// group runs first and the units that follow it in one transaction.
func (c *committer) group(first *unit) {
	ctx := context.Background()
	start := time.Now()
	defer func() { c.busy.Add(int64(time.Since(start))) }()
	btx, err := c.db.write.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		first.done <- unitResult{err: fmt.Errorf("store: begin: %w", err)}
		return
	}
	var members []member
	var broken error
	for u := first; u != nil; u = c.next(len(members), start) {
		tx := &Tx{db: c.db, idb: btx, sqlTx: btx.Tx, now: c.db.Now()}
		var m member
		m.err, broken, m.panicked = runUnit(u.ctx, tx, fmt.Sprintf("u%d", len(members)+1), u.unitFunc)
		m.u, m.tx = u, tx
		members = append(members, m)
		if broken != nil {
			break
		}
	}
	var result error
	if broken != nil {
		_ = btx.Rollback()
		result = fmt.Errorf("store: the transaction was lost, nothing of this unit of work was kept: %w", broken)
	} else if err := btx.Commit(); err != nil {
		result = fmt.Errorf("store: commit: %w", err)
	}
	c.groups.Add(1)
	c.units.Add(int64(len(members)))
	if result == nil && c.db.committedFunc != nil {
		c.db.committedFunc()
	}
	for _, m := range members {
		switch {
		case m.err != nil:
			m.u.done <- unitResult{err: m.err, panicked: m.panicked}
		case result != nil:
			m.u.done <- unitResult{err: result}
		default:
			m.u.done <- unitResult{tx: m.tx}
		}
	}
}

// WriterStats counts the work of a DB's group committer since it opened.
type WriterStats struct {
	// Busy is the time the writer spent on groups, from BEGIN to the end
	// of COMMIT or ROLLBACK; the rest of the time it waited for units.
	Busy time.Duration
	// Groups counts the transactions it ran, Units the units of work in
	// them.
	Groups, Units int64
}

// WriterStats reports what the writer of a DB with group commit (SQLite)
// has done: its busy time, against a run's length, tells whether the
// single writer bounds the rate of a workload. Zero without group commit.
func (db *DB) WriterStats() WriterStats {
	if db.group == nil {
		return WriterStats{}
	}
	c := db.group
	return WriterStats{Busy: time.Duration(c.busy.Load()), Groups: c.groups.Load(), Units: c.units.Load()}
}

// do runs fn as one unit of work of a group (see InTx).
func (c *committer) do(ctx context.Context, fn func(tx *Tx) error) error {
	u := &unit{ctx: ctx, unitFunc: fn, done: make(chan unitResult, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.queue = append(c.queue, u)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	var r unitResult
	select {
	case r = <-u.done:
	case <-ctx.Done():
		if c.withdraw(u) {
			return ctx.Err()
		}
		// The writer took it first: it runs (and fails on the cancelled
		// context) as a transaction begun before the cancel would.
		r = <-u.done
	}
	if r.panicked != nil {
		panic(r.panicked)
	}
	if r.err != nil {
		return r.err
	}
	for _, f := range r.tx.onCommit {
		f()
	}
	return nil
}

// errPanicked stands for a unit whose function panicked.
var errPanicked = errors.New("store: the unit of work panicked")

// runUnit runs fn and its BeforeCommit functions inside savepoint on tx,
// and releases the savepoint, or rolls back to it when fn failed or
// panicked. err is fn's error (errPanicked after a panic, whose value is
// returned for the caller to raise again); broken reports that the
// transaction itself was lost.
func runUnit(ctx context.Context, tx *Tx, savepoint string, fn func(tx *Tx) error) (err, broken error, panicked any) {
	bg := context.WithoutCancel(ctx)
	if _, err := tx.sqlTx.ExecContext(bg, "SAVEPOINT "+savepoint); err != nil {
		return err, err, nil
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				panicked, err = p, errPanicked
			}
		}()
		err = runWithHooks(ctx, tx, fn)
	}()
	if err != nil {
		if _, rerr := tx.sqlTx.ExecContext(bg, "ROLLBACK TO "+savepoint); rerr != nil {
			return err, rerr, panicked
		}
	}
	if _, rerr := tx.sqlTx.ExecContext(bg, "RELEASE "+savepoint); rerr != nil {
		broken = rerr
	}
	return err, broken, panicked
}

// runWithHooks runs fn, then the BeforeCommit functions it registered.
func runWithHooks(ctx context.Context, tx *Tx, fn func(tx *Tx) error) error {
	if err := fn(tx); err != nil {
		return err
	}
	for i := 0; i < len(tx.beforeCommit); i++ {
		if err := tx.beforeCommit[i](ctx); err != nil {
			return err
		}
	}
	return nil
}
