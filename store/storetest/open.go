// Package storetest is the store contract suite: the same cases run against
// every dialect, called from a SQLite test and a PostgreSQL test, as river's
// driver conformance suite is. It also opens fresh databases for other
// packages' tests: a SQLite file in a temp dir, or a PostgreSQL schema of its
// own when PLATFORM_TEST_POSTGRES_URL is set.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for schema set-up

	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
)

// PostgresEnv names the environment variable holding the test server's URL.
const PostgresEnv = "PLATFORM_TEST_POSTGRES_URL"

// PostgresOnlyEnv names the variable that, set to 1, makes the suites that
// run on both dialects skip their SQLite half: CI's PostgreSQL passes run
// after its SQLite pass ran everything on SQLite.
const PostgresOnlyEnv = "PLATFORM_TEST_POSTGRES_ONLY"

// SkipSQLiteInPostgresPass skips t, a suite's SQLite half, when
// PostgresOnlyEnv is 1.
func SkipSQLiteInPostgresPass(t testing.TB) {
	t.Helper()
	if os.Getenv(PostgresOnlyEnv) == "1" {
		t.Skipf("%s=1: this pass runs the PostgreSQL half alone; the SQLite pass runs this one", PostgresOnlyEnv)
	}
}

// OpenSQLite opens a migrated SQLite database in t's temp dir, closed at cleanup.
func OpenSQLite(t testing.TB, clock store.Clock) *store.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "platform.db"), Clock: clock})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// PostgresURL creates a fresh schema on the server named by
// PLATFORM_TEST_POSTGRES_URL and returns a URL whose search_path selects it.
// The schema is dropped at cleanup. It skips t when the variable is unset.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("PostgreSQL pass skipped: set %s (for example postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run it", PostgresEnv)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("postgres: create schema: %v", err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer a.Close()
		a.Exec("DROP SCHEMA " + schema + " CASCADE")
	})
	return withSearchPath(t, base, schema)
}

func withSearchPath(t testing.TB, base, schema string) string {
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("postgres URL: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		// A test's schema is dropped at its end: waiting for each commit
		// to reach the disk buys it nothing.
		q.Set("synchronous_commit", "off")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return fmt.Sprintf("%s search_path=%s synchronous_commit=off", base, schema)
}

// OpenPostgres opens a migrated database in a fresh schema (see PostgresURL).
func OpenPostgres(t testing.TB, clock store.Clock) *store.DB {
	t.Helper()
	return OpenPostgresAt(t, PostgresURL(t), clock)
}

// OpenPostgresAt opens the database at url (a URL from PostgresURL), as
// one more host on it does: its own pool and caches. It is closed at
// cleanup.
func OpenPostgresAt(t testing.TB, url string, clock store.Clock) *store.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), postgres.Config{URL: url, Clock: clock, MaxConns: 8})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Opener opens a fresh database for one test.
type Opener func(t testing.TB, clock store.Clock) *store.DB

// Dialects returns the openers to run a suite on: SQLite always, PostgreSQL
// too (each test in its own schema). When PLATFORM_TEST_POSTGRES_URL is unset
// the PostgreSQL subtests skip with a message saying how to run them.
func Dialects() map[string]Opener {
	return map[string]Opener{"sqlite": OpenSQLite, "postgres": OpenPostgres}
}
