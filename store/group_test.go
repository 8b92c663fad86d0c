package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // the "sqlite" driver
)

// openGroupDB opens a SQLite database with group commit as the sqlite
// package does (one writer, WAL, in-memory sub-journals) and a table
// items(name TEXT PRIMARY KEY). Groups may stay open as long as a test
// needs; commits counts the committed groups.
func openGroupDB(t *testing.T) (db *DB, commits *atomic.Int64) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "group.db") +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=temp_store(MEMORY)&_txlock=immediate"
	open := func(n int) *bun.DB {
		s, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		s.SetMaxOpenConns(n)
		return bun.NewDB(s, sqlitedialect.New())
	}
	write := open(1)
	if _, err := write.Exec("CREATE TABLE items (name TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	commits = new(atomic.Int64)
	db = New(SQLite, write, open(2), Options{GroupCommit: true, CommittedFunc: func() { commits.Add(1) }})
	db.group.maxTime = time.Hour
	t.Cleanup(func() { db.Close() })
	return db, commits
}

// isClosed reports whether close has begun.
func (c *committer) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// queued is how many units wait for the writer.
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

func insertItem(ctx context.Context, tx *Tx, name string) error {
	_, err := tx.exec(ctx, "INSERT INTO items (name) VALUES (?)", name)
	return err
}

// items lists the committed rows, read outside any unit of work.
func items(t *testing.T, db *DB) []string {
	t.Helper()
	var names []string
	if err := db.Read().scanAll(context.Background(), &names, "SELECT name FROM items ORDER BY name"); err != nil {
		t.Fatal(err)
	}
	return names
}

// holdWriter starts a unit that inserts name and holds the writer until
// release is closed; the returned channel gets its InTx error.
func holdWriter(t *testing.T, db *DB, name string, release <-chan struct{}, afterCommit func()) <-chan error {
	t.Helper()
	running := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.InTx(context.Background(), func(tx *Tx) error {
			if err := insertItem(context.Background(), tx, name); err != nil {
				return err
			}
			tx.AfterCommit(afterCommit)
			close(running)
			<-release
			return nil
		})
	}()
	<-running
	return done
}

// waitQueued waits until n units wait for the writer.
func waitQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); db.group.queued() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d units queued, want %d", db.group.queued(), n)
		}
	}
}

// TestGroupCommitKeepsEachUnit runs six units in one group: each sees the
// earlier ones' writes, a failed or panicking unit leaves nothing, the
// others commit together, once, and AfterCommit runs after the commit;
// the writer's stats count the one group and its six units.
func TestGroupCommitKeepsEachUnit(t *testing.T) {
	db, commits := openGroupDB(t)
	ctx := context.Background()
	release := make(chan struct{})
	var seenAfterCommit []string
	first := holdWriter(t, db, "a", release, func() { seenAfterCommit = items(t, db) })

	type result struct {
		err      error
		panicked any
		seen     []string
	}
	run := func(fn func(tx *Tx) ([]string, error)) <-chan result {
		out := make(chan result, 1)
		go func() {
			var r result
			defer func() {
				r.panicked = recover()
				out <- r
			}()
			r.err = db.InTx(ctx, func(tx *Tx) error {
				var err error
				r.seen, err = fn(tx)
				return err
			})
		}()
		return out
	}
	errRefused := errors.New("refused")
	var units []<-chan result
	queue := func(fn func(tx *Tx) ([]string, error)) {
		units = append(units, run(fn))
		waitQueued(t, db, len(units))
	}
	queue(func(tx *Tx) ([]string, error) { return nil, insertItem(ctx, tx, "b") })
	queue(func(tx *Tx) ([]string, error) {
		if err := insertItem(ctx, tx, "c"); err != nil {
			return nil, err
		}
		return nil, errRefused
	})
	queue(func(tx *Tx) ([]string, error) {
		if err := insertItem(ctx, tx, "d"); err != nil {
			return nil, err
		}
		panic("unit d")
	})
	queue(func(tx *Tx) ([]string, error) { return nil, insertItem(ctx, tx, "a") }) // the unique key of the first unit
	queue(func(tx *Tx) ([]string, error) {
		var names []string
		err := tx.scanAll(ctx, &names, "SELECT name FROM items ORDER BY name")
		return names, err
	})
	if got := items(t, db); len(got) != 0 {
		t.Fatalf("rows visible before the group committed: %v", got)
	}
	close(release)

	if err := <-first; err != nil {
		t.Fatalf("first unit: %v", err)
	}
	b, c, d, dup, reader := <-units[0], <-units[1], <-units[2], <-units[3], <-units[4]
	if b.err != nil || b.panicked != nil {
		t.Errorf("unit b: %v, %v", b.err, b.panicked)
	}
	if !errors.Is(c.err, errRefused) {
		t.Errorf("unit c: %v, want its own error", c.err)
	}
	if d.panicked != "unit d" {
		t.Errorf("unit d panicked with %v, want its own value", d.panicked)
	}
	if dup.err == nil {
		t.Error("unit inserting a duplicate key succeeded")
	}
	if diff := cmp.Diff([]string{"a", "b"}, reader.seen); diff != "" {
		t.Errorf("the last unit saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, items(t, db)); diff != "" {
		t.Errorf("committed rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, seenAfterCommit); diff != "" {
		t.Errorf("AfterCommit read (-want +got):\n%s", diff)
	}
	if n := commits.Load(); n != 1 {
		t.Errorf("%d commits, want 1 for the group", n)
	}
	// Every unit counts, the failed ones too: each held the writer.
	if st := db.WriterStats(); st.Groups != 1 || st.Units != 6 || st.Busy <= 0 {
		t.Errorf("writer stats %+v, want 1 group of 6 units and its busy time", st)
	}
}

// TestGroupCommitLostTransaction has a unit end the shared transaction
// itself: every unit of its group fails, nothing is kept, and the next
// unit of work runs in a transaction of its own.
func TestGroupCommitLostTransaction(t *testing.T) {
	db, commits := openGroupDB(t)
	ctx := context.Background()
	release := make(chan struct{})
	first := holdWriter(t, db, "a", release, func() { t.Error("AfterCommit ran for a group that did not commit") })
	second := make(chan error, 1)
	go func() {
		second <- db.InTx(ctx, func(tx *Tx) error {
			if err := insertItem(ctx, tx, "b"); err != nil {
				return err
			}
			_, err := tx.sqlTx.ExecContext(ctx, "ROLLBACK")
			return err
		})
	}()
	waitQueued(t, db, 1)
	close(release)
	if err := <-first; err == nil {
		t.Error("the first unit succeeded though its transaction was lost")
	}
	if err := <-second; err == nil {
		t.Error("the unit that ended the transaction succeeded")
	}
	if got := items(t, db); len(got) != 0 {
		t.Errorf("rows kept from a lost group: %v", got)
	}
	if err := db.InTx(ctx, func(tx *Tx) error { return insertItem(ctx, tx, "c") }); err != nil {
		t.Fatalf("the next unit: %v", err)
	}
	if diff := cmp.Diff([]string{"c"}, items(t, db)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if n := commits.Load(); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
}

// TestGroupCommitCancelWhileQueued withdraws a unit whose context ends
// before it reaches the writer: it returns the context's error and never
// runs.
func TestGroupCommitCancelWhileQueued(t *testing.T) {
	db, _ := openGroupDB(t)
	release := make(chan struct{})
	first := holdWriter(t, db, "a", release, func() {})
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		queued <- db.InTx(ctx, func(tx *Tx) error { return insertItem(context.Background(), tx, "b") })
	}()
	waitQueued(t, db, 1)
	cancel()
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled unit: %v, want context.Canceled", err)
	}
	waitQueued(t, db, 0)
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a"}, items(t, db)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestGroupCommitClose lets the units already queued when the database
// closes run and commit, and fails every later one.
func TestGroupCommitClose(t *testing.T) {
	db, _ := openGroupDB(t)
	release := make(chan struct{})
	first := holdWriter(t, db, "a", release, func() {})
	queued := make(chan error, 1)
	go func() {
		queued <- db.InTx(context.Background(), func(tx *Tx) error { return insertItem(context.Background(), tx, "b") })
	}()
	waitQueued(t, db, 1)
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	// Close waits for the group in progress, which takes the queued unit;
	// release it once Close has begun.
	for !db.group.isClosed() {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the unit in progress: %v", err)
	}
	if err := <-queued; err != nil {
		t.Errorf("the unit queued before Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(context.Background(), func(tx *Tx) error { return nil }); !errors.Is(err, errClosed) {
		t.Errorf("InTx after Close: %v, want errClosed", err)
	}
}
