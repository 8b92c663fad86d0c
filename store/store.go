// Package store implements every domain's Store port with bun, on SQLite and
// PostgreSQL. SQL lives only here and in the dialect packages.
//
// The dialect packages (store/sqlite, store/postgres) open a database, apply
// their embedded migrations and return a *DB; an embedder links only the
// dialect it uses. Every mutation runs through InTx, the unit of work: one
// transaction, one timestamp from the injected clock, and a *Tx whose methods
// are the transaction-bound implementations of the domain ports and of the
// idempotency, receipt and outbox writers. A domain write and its idempotency
// record therefore commit together or not at all.
//
// On SQLite the units of work that wait for its single writer commit in
// groups: one transaction, each unit in its own savepoint, so a unit that
// fails leaves nothing while the others commit, and InTx returns once its
// group has committed (group.go). PostgreSQL runs each unit in a
// transaction of its own, and store/postgres pipelines it: the writes the
// store marks as deferrable (later.go) go to the server together with the
// unit's next statement or its commit.
//
// Time is never read from the database: the clock's now is passed into SQL
// as a parameter, so tests drive leases, expiries and periods with a fake
// clock on both dialects.
//
// Environments: every row a principal's request creates carries the test or
// live environment of that principal, and every read behind a route filters
// by tenant, workspace and environment, so a test credential never reads a
// live record nor the reverse. The outbox is listed per environment too:
// an internal key of one environment publishes that environment's events.
// The audit log got its environment column in migration 0016; its rows from
// before were backfilled from the receipt of the request that made them (the
// principal's environment), else from their subject (a subscription's), and
// the rest, which no request or subject places (the host operator's
// platform-role grants, account events of sessions whose receipt is gone),
// are live: sessions act in live mode unless a request asks for test, and
// that is where workspace authority is real.
//
// Credentials: lookups of API keys and sessions on the read handle are
// answered from memory and exact on every host; see credcache.go.
//
// The methods of Tx are named noun-first (KeyInsert, OutboxList) and are not
// a stable API for embedders: they are the seam between domains and SQL.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
)

// Dialect names the SQL dialect of a DB.
type Dialect string

const (
	// SQLite is modernc.org/sqlite in WAL mode with one writer connection.
	SQLite Dialect = "sqlite"
	// Postgres is PostgreSQL through pgx's database/sql driver.
	Postgres Dialect = "postgres"
)

// Clock tells the time. The store reads it once per unit of work.
type Clock interface {
	Now() time.Time
}

// systemClock is the wall clock, used when Config leaves Clock nil.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// DB is an opened, migrated database. It is safe for concurrent use.
type DB struct {
	dialect Dialect
	// write runs transactions. On SQLite it has exactly one connection (one
	// writer); on Postgres it is the same pool as read.
	write *bun.DB
	// read serves reads outside transactions.
	read  *bun.DB
	clock Clock
	// committedFunc runs after every committedFunc unit of work; closer is closed
	// with the DB (Options.Committed, Options.Closer).
	committedFunc func()
	closer        io.Closer
	// writeStmts and readStmts are the statements prepared on write and
	// on read (one cache when they are the same pool).
	writeStmts *stmtCache
	readStmts  *stmtCache
	// group runs units of work with group commit (Options.GroupCommit).
	group *committer
	// scopeSets keeps API keys' decoded scope lists (keyauth.go).
	scopeSets scopeSets
	// creds caches verified credentials and authority versions
	// (credcache.go).
	creds *credCache
	// watchers run after units of work that wrote outbox events commit
	// (WatchOutbox).
	watchers outboxWatchers
}

// Options are the dialect-independent settings of a DB.
type Options struct {
	// Clock supplies now for every unit of work. Nil means the wall clock.
	Clock Clock
	// CommittedFunc, when set, runs after every committed unit of work, before
	// its AfterCommit functions; it must not block (the SQLite store wakes
	// its checkpointer with it).
	CommittedFunc func()
	// Closer, when set, is closed by Close before the database handles.
	Closer io.Closer
	// GroupCommit runs the units of work that wait for the writer in one
	// transaction, each in its own savepoint (see group.go). The SQLite
	// store sets it: its single writer then writes shared pages to the WAL
	// once per group instead of once per unit.
	GroupCommit bool
	// Shared says other processes write the database too (hosts sharing
	// PostgreSQL): every change of a credential or an authority version is
	// then logged, and the credential cache reads the log before it
	// answers (credcache.go). False means this process is the database's
	// only host (SQLite): its own writes are all the changes there are.
	Shared bool
	// EpochFunc, with Shared, reads the number of the last credential
	// change committed (SELECT seq FROM credential_epoch WHERE id = 1),
	// nearly every read of the change log being only that: the
	// PostgreSQL store reads it on a connection of its own, cheaper than
	// the pool's. Nil reads it through the read pool.
	EpochFunc func(ctx context.Context) (int64, error)
}

// New wraps opened bun handles. Dialect packages call it after migrating;
// embedders use sqlite.Open or postgres.Open instead.
func New(d Dialect, write, read *bun.DB, opts Options) *DB {
	c := opts.Clock
	if c == nil {
		c = systemClock{}
	}
	if read == nil {
		read = write
	}
	db := &DB{dialect: d, write: write, read: read, clock: c, committedFunc: opts.CommittedFunc, closer: opts.Closer,
		writeStmts: newStmtCache(write.DB, d), creds: newCredCache()}
	if opts.Shared {
		db.creds.sync = &changeReader{db: db, c: db.creds, epochFunc: opts.EpochFunc}
	}
	db.readStmts = db.writeStmts
	if read != write {
		db.readStmts = newStmtCache(read.DB, d)
	}
	if opts.GroupCommit {
		db.group = startCommitter(db)
	}
	return db
}

// Dialect reports the database's dialect.
func (db *DB) Dialect() Dialect { return db.dialect }

// Now returns the clock's current time in UTC, truncated to microseconds
// (the precision both dialects store).
func (db *DB) Now() time.Time { return db.clock.Now().UTC().Truncate(time.Microsecond) }

// Close closes the database handles.
func (db *DB) Close() error {
	if db.group != nil {
		db.group.close()
	}
	var err error
	if db.closer != nil {
		err = db.closer.Close()
	}
	err = errors.Join(err, db.writeStmts.close())
	if db.readStmts != db.writeStmts {
		err = errors.Join(err, db.readStmts.close())
	}
	err = errors.Join(err, db.write.Close())
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.read.PingContext(ctx); err != nil {
		return fault.Wrap("store.Ping", err)
	}
	return nil
}

// Tx is a handle bound to one unit of work: a transaction (from InTx) or the
// read pool (from Read). Its methods implement the domains' Store ports.
type Tx struct {
	db  *DB
	idb bun.IDB
	// sqlTx is the transaction under idb; nil on the read pool.
	sqlTx *sql.Tx
	now   time.Time
	// onCommit runs after a successful commit, in order.
	onCommit []func()
	// beforeCommit runs after the unit of work's function succeeded, just
	// before the commit, in order.
	beforeCommit []func(ctx context.Context) error
	// credTags are the credential changes of this unit of work
	// (credcache.go).
	credTags []string
	// ahead marks a handle from ReadAhead: its credential lookups answer
	// from memory without waiting for other hosts' changes.
	ahead bool
	seq   id.Sequence
	// outboxWritten records that the unit of work wrote an outbox event,
	// whose commit runs the outbox watchers.
	outboxWritten bool
}

// NewID returns a new identifier with prefix; identifiers made by one unit
// of work sort in the order they were made.
func (tx *Tx) NewID(prefix string) string { return tx.seq.Next(prefix, tx.now) }

// Now is the single timestamp of this unit of work.
func (tx *Tx) Now() time.Time { return tx.now }

// Dialect reports the dialect the transaction runs on.
func (tx *Tx) Dialect() Dialect { return tx.db.dialect }

// AfterCommit registers fn to run once the transaction has committed. It is
// how a unit of work wakes workers without acting before the data is durable.
func (tx *Tx) AfterCommit(fn func()) { tx.onCommit = append(tx.onCommit, fn) }

// BeforeCommit registers fn to run in the transaction after the unit of
// work's function returned successfully, just before the commit; an error
// rolls everything back. A write that locks a contended row (a workspace's
// credit balance) goes last this way, so the lock is held only until the
// commit. Only a transaction from InTx runs them.
func (tx *Tx) BeforeCommit(fn func(ctx context.Context) error) {
	tx.beforeCommit = append(tx.beforeCommit, fn)
}

// rowLock is the clause that locks the rows a SELECT reads until the
// transaction ends: FOR UPDATE on PostgreSQL inside a transaction; nothing
// on SQLite (its single writer serializes units of work) or on the read
// pool.
func (tx *Tx) rowLock() string {
	if tx.db.dialect == Postgres && tx.idb != tx.db.readIDB() {
		return ` FOR UPDATE`
	}
	return ""
}

// IDB exposes the bun handle for the store's own query helpers.
func (tx *Tx) IDB() bun.IDB { return tx.idb }

// InTx runs fn in one transaction. If fn returns an error or panics, nothing
// it wrote is kept. Every write of a mutation (domain rows, idempotency
// record, ledger entries, outbox events) goes through the one *Tx.
//
// With group commit (Options.GroupCommit) fn runs inside a savepoint of a
// transaction shared with the units that wait beside it; InTx returns once
// that transaction has ended, with the same guarantees (group.go).
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	if db.group != nil {
		return db.group.do(ctx, fn)
	}
	now := db.Now()
	tx := &Tx{db: db, now: now}
	err := db.write.RunInTx(ctx, &sql.TxOptions{}, func(ctx context.Context, btx bun.Tx) error {
		tx.idb, tx.sqlTx = btx, btx.Tx
		return runWithHooks(ctx, tx, fn)
	})
	db.writeStmts.prepareWanted(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	if db.committedFunc != nil {
		db.committedFunc()
	}
	for _, f := range tx.onCommit {
		f()
	}
	return nil
}

// readIDB is the read pool as the handle Read gives out.
func (db *DB) readIDB() bun.IDB { return db.read }

// Read returns a handle outside any transaction, for reads. On SQLite it
// reads from the reader pool and never waits for the writer.
func (db *DB) Read() *Tx {
	return &Tx{db: db, idb: db.read, now: db.Now()}
}

// ReadAhead is Read for a caller that can check its credential lookups
// afterwards and look again when they were out of date, as the gateway
// does for reads: the handle's credential lookups answer from memory as
// it stands, without waiting for the other hosts' changes, and confirm
// waits until every change committed before ReadAhead was called is
// applied, and reports whether none was applied since (else what the
// lookups answered may be out of date, and the caller looks again
// through Read). Reading the change log then overlaps the caller's work
// instead of preceding it. Where this process alone serves the database
// the handle is Read's and confirm reports true at once.
func (db *DB) ReadAhead() (*Tx, func(ctx context.Context) (bool, error)) {
	tx := db.Read()
	c := db.creds
	if c.sync == nil {
		return tx, func(context.Context) (bool, error) { return true, nil }
	}
	tx.ahead = true
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	round := c.sync.start()
	return tx, func(ctx context.Context) (bool, error) {
		if err := round.await(ctx); err != nil {
			return false, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.gen == gen, nil
	}
}

// notFound maps sql.ErrNoRows to NOT_FOUND and wraps other errors with op.
func notFound(op string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fault.E(op, fault.NotFound, "")
	}
	return fault.Wrap(op, err)
}

// errf wraps a database error with an operation name.
func errf(op string, err error) error {
	if err == nil {
		return nil
	}
	return fault.Wrap(op, fmt.Errorf("database: %w", err))
}
