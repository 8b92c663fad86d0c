package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/creatormusic/platform/store"
)

// countingConn counts the writes to the server: each is one message the
// client sends, so a transaction's round trips are its writes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// openPipe opens one pipelining connection (a temporary table lives in its
// session) and a table pipe_items on it, and counts its writes.
func openPipe(t *testing.T) (*sql.DB, *atomic.Int64) {
	t.Helper()
	url := os.Getenv("PLATFORM_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("PLATFORM_TEST_POSTGRES_URL is not set: the pipelining tests need a PostgreSQL server")
	}
	pc, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	writes := new(atomic.Int64)
	pc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: writes}, nil
	}
	db := sql.OpenDB(pipeConnector{inner: stdlib.GetConnector(*pc)})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TEMPORARY TABLE pipe_items (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db, writes
}

const insertItem = `INSERT INTO pipe_items (id, v) VALUES ($1, $2)`

// held is a context that lets the driver hold the statement.
func heldCtx(check func(int64) error) context.Context {
	return store.Defer(context.Background(), store.Held{CheckFunc: check})
}

// begin begins a transaction on db.
func begin(t *testing.T, db *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// holdItem runs insertItem of (id, v) in tx with ctx, which lets the driver
// hold it; the held statement itself never fails.
func holdItem(t *testing.T, tx *sql.Tx, ctx context.Context, id int, v any) {
	t.Helper()
	if _, err := tx.ExecContext(ctx, insertItem, id, v); err != nil {
		t.Fatalf("held insert %d: %v", id, err)
	}
}

func countItems(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pipe_items`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPipelineSendsHeldWritesWithCommit: a transaction of deferrable
// inserts without checks sends nothing until it commits, then BEGIN, the
// inserts and COMMIT in one message.
func TestPipelineSendsHeldWritesWithCommit(t *testing.T) {
	db, writes := openPipe(t)
	// The connection prepares a statement text the first time it sends it
	// with arguments (one round trip, once).
	warm, err := db.Prepare(insertItem)
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	tx := begin(t, db)
	before := writes.Load()
	for i := 1; i <= 3; i++ {
		res, err := tx.ExecContext(heldCtx(nil), insertItem, i, "v")
		if err != nil {
			t.Fatalf("held insert %d: %v", i, err)
		}
		if _, err := res.RowsAffected(); !errors.Is(err, store.ErrDeferred) {
			t.Fatalf("RowsAffected of a held insert = %v, want store.ErrDeferred", err)
		}
	}
	if got := writes.Load() - before; got != 0 {
		t.Fatalf("%d writes before the commit, want 0", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := writes.Load() - before; got != 1 {
		t.Errorf("the transaction took %d writes, want 1", got)
	}
	if n := countItems(t, db); n != 3 {
		t.Errorf("%d rows committed, want 3", n)
	}
}

// TestPipelineReadSeesHeldWrites: a query sends the held statements first,
// so it reads them, and a prepared statement is held like any other.
func TestPipelineReadSeesHeldWrites(t *testing.T) {
	db, _ := openPipe(t)
	stmt, err := db.Prepare(insertItem)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	tx := begin(t, db)
	defer tx.Rollback()
	if _, err := tx.Stmt(stmt).ExecContext(heldCtx(nil), 7, "seven"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := tx.QueryRow(`SELECT v FROM pipe_items WHERE id = 7`).Scan(&v); err != nil || v != "seven" {
		t.Fatalf("read of the held insert = %q, %v; want seven", v, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := countItems(t, db); n != 1 {
		t.Errorf("%d rows committed, want 1", n)
	}
}

// TestPipelineFailedCheckFailsTransaction: a held statement whose check
// fails makes the next statement, every later one and the commit fail
// with the check's error, and nothing is kept; the connection is then
// clean for the next transaction.
func TestPipelineFailedCheckFailsTransaction(t *testing.T) {
	db, _ := openPipe(t)
	errTaken := errors.New("taken")
	tx := begin(t, db)
	holdItem(t, tx, heldCtx(func(int64) error { return errTaken }), 1, "a")
	if _, err := tx.Exec(insertItem, 2, "b"); !errors.Is(err, errTaken) {
		t.Fatalf("the next statement returned %v, want the check's error", err)
	}
	if _, err := tx.Exec(insertItem, 3, "c"); !errors.Is(err, errTaken) {
		t.Fatalf("a later statement returned %v, want the check's error", err)
	}
	if err := tx.Commit(); !errors.Is(err, errTaken) {
		t.Fatalf("Commit returned %v, want the check's error", err)
	}
	if n := countItems(t, db); n != 0 {
		t.Fatalf("%d rows kept after the failed check, want 0", n)
	}
	assertCleanTx(t, db)
}

// TestPipelineCheckBeforeCommit: a held statement with a check is sent
// before the COMMIT, so a failing check is never committed, and a passing
// one sees the rows its statement changed.
func TestPipelineCheckBeforeCommit(t *testing.T) {
	db, _ := openPipe(t)
	errChanged := errors.New("changed")
	tx := begin(t, db)
	holdItem(t, tx, heldCtx(nil), 1, "a")
	if _, err := tx.ExecContext(heldCtx(func(n int64) error {
		if n != 2 {
			return errChanged
		}
		return nil
	}), `UPDATE pipe_items SET v = 'b'`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); !errors.Is(err, errChanged) {
		t.Fatalf("Commit returned %v, want the check's error", err)
	}
	if n := countItems(t, db); n != 0 {
		t.Fatalf("%d rows committed past a failed check, want 0", n)
	}
	assertCleanTx(t, db)

	tx = begin(t, db)
	var seen int64
	for i := 1; i <= 2; i++ {
		holdItem(t, tx, heldCtx(func(n int64) error { seen += n; return nil }), i, "v")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if seen != 2 || countItems(t, db) != 2 {
		t.Errorf("checks saw %d rows and %d were committed, want 2 and 2", seen, countItems(t, db))
	}
}

// TestPipelineServerErrorSurfacesLater: a held insert the server refuses
// fails the statement that sent it, and the transaction then fails as a
// whole.
func TestPipelineServerErrorSurfacesLater(t *testing.T) {
	db, _ := openPipe(t)
	tx := begin(t, db)
	for range 2 {
		holdItem(t, tx, heldCtx(nil), 1, "dup")
	}
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM pipe_items`).Scan(&n)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("the read after a duplicate held insert returned %v, want unique_violation", err)
	}
	if err := tx.Commit(); !errors.As(err, &pgErr) {
		t.Fatalf("Commit returned %v, want the insert's error", err)
	}
	if n := countItems(t, db); n != 0 {
		t.Fatalf("%d rows kept, want 0", n)
	}
	assertCleanTx(t, db)
}

// TestPipelineRollbackOfUnsentTransaction: a transaction rolled back
// before anything was sent costs no round trip.
func TestPipelineRollbackOfUnsentTransaction(t *testing.T) {
	db, writes := openPipe(t)
	tx := begin(t, db)
	before := writes.Load()
	holdItem(t, tx, heldCtx(nil), 1, "a")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := writes.Load() - before; got != 0 {
		t.Errorf("the rollback took %d writes, want 0", got)
	}
	if n := countItems(t, db); n != 0 {
		t.Fatalf("%d rows kept after the rollback, want 0", n)
	}
	assertCleanTx(t, db)
}

// assertCleanTx runs a plain transaction on the connection and checks it
// commits its row.
func assertCleanTx(t *testing.T, db *sql.DB) {
	t.Helper()
	tx := begin(t, db)
	holdItem(t, tx, heldCtx(nil), 100, "after")
	if err := tx.Commit(); err != nil {
		t.Fatalf("the next transaction failed: %v", err)
	}
	var v string
	if err := db.QueryRow(`SELECT v FROM pipe_items WHERE id = 100`).Scan(&v); err != nil || v != "after" {
		t.Fatalf("the next transaction's row = %q, %v", v, err)
	}
	if _, err := db.Exec(`DELETE FROM pipe_items`); err != nil {
		t.Fatal(err)
	}
}

// TestPipelineHeldBytesAreCopied: a held statement keeps its arguments as
// they were when it was given, although the caller reuses its buffer
// before the statement is sent.
func TestPipelineHeldBytesAreCopied(t *testing.T) {
	db, _ := openPipe(t)
	tx := begin(t, db)
	buf := []byte("first")
	holdItem(t, tx, heldCtx(nil), 1, buf)
	copy(buf, "XXXXX")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db.QueryRow(`SELECT v FROM pipe_items WHERE id = 1`).Scan(&v); err != nil || v != "first" {
		t.Fatalf("stored %q, %v; want first", v, err)
	}
}

// TestPipelineServerRefusalInCommitBatch: a held statement without a check
// but with Fail goes to the server in the COMMIT's batch; when the server
// refuses it, the COMMIT is skipped, Commit returns Fail's translation,
// and nothing of the transaction is kept.
func TestPipelineServerRefusalInCommitBatch(t *testing.T) {
	db, writes := openPipe(t)
	const refuse = `INSERT INTO pipe_items (id, v) VALUES ($1, CAST(CAST($2 AS TEXT) AS INTEGER)::TEXT)`
	for _, q := range []string{insertItem, refuse} {
		warm, err := db.Prepare(q)
		if err != nil {
			t.Fatal(err)
		}
		defer warm.Close()
	}
	refused := errors.New("refused")
	var failed error
	fail := store.Defer(context.Background(), store.Held{FailFunc: func(err error) error {
		failed = err
		return refused
	}})
	tx := begin(t, db)
	before := writes.Load()
	holdItem(t, tx, heldCtx(nil), 1, "kept until the refusal")
	if _, err := tx.ExecContext(fail, refuse, 2, "not a number"); err != nil {
		t.Fatalf("held statement: %v", err)
	}
	if got := writes.Load() - before; got != 0 {
		t.Fatalf("%d writes before the commit, want 0", got)
	}
	if err := tx.Commit(); !errors.Is(err, refused) {
		t.Fatalf("Commit = %v, want Fail's error", err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(failed, &pgErr) || pgErr.Code != "22P02" {
		t.Errorf("Fail was given %v, want the server's invalid_text_representation", failed)
	}
	// One batch (BEGIN, both statements, COMMIT), then the ROLLBACK of
	// the aborted transaction.
	if got := writes.Load() - before; got != 2 {
		t.Errorf("the transaction took %d writes, want 2", got)
	}
	if n := countItems(t, db); n != 0 {
		t.Errorf("%d rows kept after the refusal, want 0", n)
	}
}
