// Package sqlite opens the platform's store on SQLite (modernc.org/sqlite,
// pure Go): WAL journal, a busy timeout, foreign keys on, one writer
// connection for transactions, a pool of readers, and a checkpointer that
// copies the WAL into the database file beside the writer. Units of work
// that wait for the writer commit in groups (store.Options.GroupCommit),
// each in its own savepoint. It embeds the SQLite migrations and applies
// them on open.
//
// The database holds sealed secrets and credential digests, so its files
// are the owner's alone, like the host's other secrets: Open creates the
// database file with mode 0600 before SQLite opens it (SQLite gives the
// -wal and -shm files it creates the database file's mode), and takes
// group and other access away from an existing database file and its
// -wal, -shm and -journal files. A file whose mode it cannot change fails
// Open.
//
// One DB serves a database file at a time. The store keeps verified
// credentials in memory and drops them on its own writes (store's
// credential cache), which is exact only if no other process or DB writes
// the file: Open takes an exclusive lock on the file beside it named
// after it with "-lock" appended, held until Close, and fails with
// ErrInUse while another holds it. Several hosts share one PostgreSQL
// database instead.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"runtime"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/creatormusic/platform/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations returns the embedded SQLite migrations, in order.
func Migrations() ([]store.Migration, error) { return store.LoadMigrations(migrationFS, "migrations") }

// Config configures Open.
type Config struct {
	// Path is the database file. Required.
	Path string
	// BusyTimeoutMillis is how long a connection waits for a lock. Zero means 5000.
	BusyTimeoutMillis int
	// Readers is the size of the reader pool. Zero means the number of CPUs.
	Readers int
	// Clock supplies now for every unit of work. Nil means the wall clock.
	Clock store.Clock
}

// ownerOnly creates the database file at path with mode 0600 unless it
// exists, and takes group and other access away from the database files
// that exist. An in-memory database (":memory:") has no files.
func ownerOnly(path string) error {
	if path == ":memory:" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return fmt.Errorf("sqlite: create %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(p, perm&^0o077); err != nil {
				return fmt.Errorf("sqlite: make %s the owner's alone: %w", p, err)
			}
		}
	}
	return nil
}

// ErrInUse is Open's error when another DB, in this process or another,
// serves the database file.
var ErrInUse = errors.New("sqlite: the database is open in another DB or process; one process serves a SQLite database (run several hosts on PostgreSQL)")

// Open opens (creating if needed) the database at cfg.Path and migrates it.
// It fails with ErrInUse while another DB has the file open.
func Open(ctx context.Context, cfg Config) (db *store.DB, err error) {
	if cfg.Path == "" {
		return nil, fmt.Errorf("sqlite: Path is required")
	}
	if err := ownerOnly(cfg.Path); err != nil {
		return nil, err
	}
	lock, err := lockFile(cfg.Path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	busy := cfg.BusyTimeoutMillis
	if busy == 0 {
		busy = 5000
	}
	readers := cfg.Readers
	if readers == 0 {
		readers = runtime.NumCPU()
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Savepoints (group commit, store/group.go) keep the original of every page
	// they change in a sub-journal: in memory, not a temp file.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages))
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	dsn := "file:" + cfg.Path + "?" + q.Encode()

	wsql, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	wsql.SetMaxOpenConns(1)
	wsql.SetMaxIdleConns(1)
	wsql.SetConnMaxLifetime(0)
	write := bun.NewDB(wsql, sqlitedialect.New())
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: ping %s: %w", cfg.Path, err)
	}
	ms, err := Migrations()
	if err != nil {
		write.Close()
		return nil, err
	}
	mdb := store.New(store.SQLite, write, nil, store.Options{Clock: cfg.Clock})
	if err := store.Migrate(ctx, write, ms, "", mdb.Now()); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	rsql, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open readers: %w", err)
	}
	rsql.SetMaxOpenConns(readers)
	rsql.SetMaxIdleConns(readers)
	read := bun.NewDB(rsql, sqlitedialect.New())
	csql, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("sqlite: open checkpointer: %w", err)
	}
	csql.SetMaxOpenConns(1)
	csql.SetMaxIdleConns(1)
	ckpt := startCheckpointer(csql)
	closer := closers{ckpt, lock}
	return store.New(store.SQLite, write, read, store.Options{Clock: cfg.Clock, CommittedFunc: ckpt.committed, Closer: closer, GroupCommit: true}), nil
}

// closers closes each of its members in order.
type closers []io.Closer

// Close closes every member and joins their errors.
func (cs closers) Close() error {
	var err error
	for _, c := range cs {
		err = errors.Join(err, c.Close())
	}
	return err
}
