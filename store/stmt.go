package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Statements on the per-request paths (the generation accept, the
// idempotency record, the ledger movement, receipts, outbox events, jobs)
// run with real parameters through statements prepared once per
// connection, instead of bun's inlining, which writes every argument into
// the SQL text: SQLite then parsed and planned every statement of every
// request (about a third of the accept path's CPU), and PostgreSQL did the
// same on the server.
//
// A statement is prepared on its pool the first time it runs outside a
// transaction: inside one the pool's connection may be the only one (the
// SQLite writer), so the transaction runs the statement unprepared and the
// pool prepares it once the transaction has ended. database/sql then
// prepares it again on each further connection that runs it, once.

// stmtCache holds the statements prepared on one database/sql pool, keyed
// by their SQL text as the store writes it (with ? placeholders).
type stmtCache struct {
	pool    *sql.DB
	dialect Dialect

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
	// wanted are the texts run in a transaction before they were prepared.
	wanted map[string]bool
}

func newStmtCache(pool *sql.DB, d Dialect) *stmtCache {
	return &stmtCache{pool: pool, dialect: d, stmts: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// lookup returns the prepared statement of query, or nil.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	s := c.stmts[query]
	c.mu.RUnlock()
	return s
}

// want records query for prepareWanted.
func (c *stmtCache) want(query string) {
	c.mu.Lock()
	if c.stmts[query] == nil {
		c.wanted[query] = true
	}
	c.mu.Unlock()
}

// prepare returns the statement of query, preparing it on the pool first.
// Call it only while holding none of the pool's connections.
func (c *stmtCache) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if s := c.lookup(query); s != nil {
		return s, nil
	}
	s, err := c.pool.PrepareContext(ctx, c.dialect.placeholders(query))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	delete(c.wanted, query)
	prev := c.stmts[query]
	if prev == nil {
		c.stmts[query] = s
	}
	c.mu.Unlock()
	if prev != nil {
		// Closed outside the lock: closing waits for each connection the
		// statement was prepared on, and a connection may be busy in a
		// transaction that is itself waiting for the lock (in lookup).
		s.Close()
		return prev, nil
	}
	return s, nil
}

// prepareWanted prepares the statements transactions asked for. A failure
// leaves the statement unprepared: it keeps running unprepared.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.RLock()
	n := len(c.wanted)
	c.mu.RUnlock()
	if n == 0 {
		return
	}
	c.mu.Lock()
	qs := make([]string, 0, len(c.wanted))
	for q := range c.wanted {
		qs = append(qs, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range qs {
		_, _ = c.prepare(ctx, q)
	}
}

// close closes every prepared statement.
func (c *stmtCache) close() error {
	c.mu.Lock()
	stmts := c.stmts
	c.stmts = map[string]*sql.Stmt{}
	c.mu.Unlock()
	var err error
	for _, s := range stmts {
		err = errors.Join(err, s.Close())
	}
	return err
}

// placeholders rewrites the ? placeholders of query for the dialect: $1,
// $2, ... on PostgreSQL. A ? inside a quoted string or identifier is kept.
func (d Dialect) placeholders(query string) string {
	if d != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// sqliteTime is how bun writes a time into SQLite's TEXT columns; bound
// arguments are written the same way, so stored times compare and sort as
// they always did.
const sqliteTime = "2006-01-02 15:04:05.999999-07:00"

// bindArgs converts args for the driver: on SQLite times become the text
// bun would have written.
func (d Dialect) bindArgs(args []any) []any {
	if d != SQLite {
		return args
	}
	for i, a := range args {
		switch v := a.(type) {
		case time.Time:
			args[i] = v.UTC().Format(sqliteTime)
		case *time.Time:
			if v == nil {
				args[i] = nil
			} else {
				args[i] = v.UTC().Format(sqliteTime)
			}
		}
	}
	return args
}

// sqlConn is what runs a statement: a *sql.Tx, or a pool outside any
// transaction.
type sqlConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// stmt returns the prepared statement of query bound to this unit of work,
// or nil when it is not prepared yet (the caller then runs the text).
func (tx *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	if tx.sqlTx == nil {
		s, err := tx.db.readStmts.prepare(ctx, query)
		if err != nil {
			return nil
		}
		return s
	}
	s := tx.db.writeStmts.lookup(query)
	if s == nil {
		tx.db.writeStmts.want(query)
		return nil
	}
	return tx.sqlTx.StmtContext(ctx, s)
}

// conn is the database/sql handle of this unit of work.
func (tx *Tx) conn() sqlConn {
	if tx.sqlTx != nil {
		return tx.sqlTx
	}
	return tx.db.readStmts.pool
}

// exec runs query (with ? placeholders) with args bound as parameters,
// through a prepared statement once there is one.
func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	args = tx.db.dialect.bindArgs(args)
	if s := tx.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return tx.conn().ExecContext(ctx, tx.db.dialect.placeholders(query), args...)
}

// query runs query like exec and returns its rows.
func (tx *Tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	args = tx.db.dialect.bindArgs(args)
	if s := tx.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return tx.conn().QueryContext(ctx, tx.db.dialect.placeholders(query), args...)
}

// queryRow runs query like exec and returns its first row.
func (tx *Tx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	args = tx.db.dialect.bindArgs(args)
	if s := tx.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return tx.conn().QueryRowContext(ctx, tx.db.dialect.placeholders(query), args...)
}

// scanOne runs query like exec and scans its first row into dest (a struct
// pointer, by column name, as bun's Scan does); sql.ErrNoRows when there is
// no row.
func (tx *Tx) scanOne(ctx context.Context, dest any, query string, args ...any) error {
	rows, err := tx.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := tx.db.read.ScanRow(ctx, rows, dest); err != nil {
		return err
	}
	return rows.Close()
}

// scanAll runs query like exec and scans every row into dest (a pointer to
// a slice of structs, by column name, as bun's Scan does).
func (tx *Tx) scanAll(ctx context.Context, dest any, query string, args ...any) error {
	rows, err := tx.query(ctx, query, args...)
	if err != nil {
		return err
	}
	return tx.db.read.ScanRows(ctx, rows, dest)
}
