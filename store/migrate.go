package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Migration is one forward-only schema step. Versions are numbered in
// lockstep across dialects: version N does the same thing on both.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads files named NNNN_name.sql from dir in fsys, in order.
// It fails on a malformed name, a duplicate or a gap in the numbering.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		base := strings.TrimSuffix(e.Name(), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: want NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", e.Name(), err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %d (%s): versions must run 1..n without gaps", m.Version, m.Name)
		}
	}
	return ms, nil
}

// Migrate applies every migration newer than the database's version, each in
// its own transaction together with its row in schema_migrations. lock, when
// not empty, is a statement run first in each transaction to serialize
// concurrent migrators (several hosts starting on one Postgres).
func Migrate(ctx context.Context, db *bun.DB, ms []Migration, lock string, now time.Time) error {
	// Under the lock too: two servers' concurrent CREATE TABLE IF NOT
	// EXISTS of one table can both try to create it.
	if err := db.RunInTx(ctx, &sql.TxOptions{}, func(ctx context.Context, tx bun.Tx) error {
		if lock != "" {
			if _, err := tx.ExecContext(ctx, lock); err != nil {
				return fmt.Errorf("lock: %w", err)
			}
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name TEXT NOT NULL,
		applied_at TIMESTAMP NOT NULL
	)`)
		return err
	}); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := db.RunInTx(ctx, &sql.TxOptions{}, func(ctx context.Context, tx bun.Tx) error {
			if lock != "" {
				if _, err := tx.ExecContext(ctx, lock); err != nil {
					return fmt.Errorf("lock: %w", err)
				}
			}
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", m.Version, m.Name, now.UTC())
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}
