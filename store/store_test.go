package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
	"github.com/creatormusic/platform/store/storetest"
)

// TestContract runs the store contract suite on SQLite, and on PostgreSQL
// when PLATFORM_TEST_POSTGRES_URL is set (one schema per test).
func TestContract(t *testing.T) {
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) {
			if name == "sqlite" {
				storetest.SkipSQLiteInPostgresPass(t)
			}
			storetest.Exercise(t, open)
		})
	}
}

// TestMigrationsInLockstep checks that both dialects have the same numbered
// migrations with the same names.
func TestMigrationsInLockstep(t *testing.T) {
	s, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	p, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != len(p) {
		t.Fatalf("sqlite has %d migrations, postgres %d", len(s), len(p))
	}
	for i := range s {
		if s[i].Version != p[i].Version || s[i].Name != p[i].Name {
			t.Errorf("migration %d: sqlite %04d_%s, postgres %04d_%s", i, s[i].Version, s[i].Name, p[i].Version, p[i].Name)
		}
	}
}

// backfill runs a migration check on SQLite, and on PostgreSQL when
// PLATFORM_TEST_POSTGRES_URL is set: check gets a fresh database with no
// migration applied, the dialect's migrations, and a reopen through the
// dialect's Open (which applies the rest).
func backfill(t *testing.T, check func(t *testing.T, old *bun.DB, ms []store.Migration, reopen func(t *testing.T) *store.DB)) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "backfill.db")
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_time_format=sqlite")
		if err != nil {
			t.Fatal(err)
		}
		ms, err := sqlite.Migrations()
		if err != nil {
			t.Fatal(err)
		}
		check(t, bun.NewDB(raw, sqlitedialect.New()), ms, func(t *testing.T) *store.DB {
			db, err := sqlite.Open(ctx, sqlite.Config{Path: path, Clock: storetest.NewClock(storetest.Epoch)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := storetest.PostgresURL(t)
		raw, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := postgres.Migrations()
		if err != nil {
			t.Fatal(err)
		}
		check(t, bun.NewDB(raw, pgdialect.New()), ms, func(t *testing.T) *store.DB {
			db, err := postgres.Open(ctx, postgres.Config{URL: url, Clock: storetest.NewClock(storetest.Epoch), MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		})
	})
}

// TestAuditEnvironmentBackfill checks migration 0016's backfill of the
// audit log's environment.
func TestAuditEnvironmentBackfill(t *testing.T) { backfill(t, storetest.AuditEnvironmentBackfill) }

// TestProviderCostCorrection checks that migration 0018 turns the cost
// reconciliations that presented a price as a reading into UNKNOWN ones.
func TestProviderCostCorrection(t *testing.T) { backfill(t, storetest.ProviderCostCorrection) }

// TestAssetStorageBackfill checks that migration 0021 counts the assets
// stored before it against their workspace's storage.
func TestAssetStorageBackfill(t *testing.T) { backfill(t, storetest.AssetStorageBackfill) }
