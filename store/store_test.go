package store_test

import (
	"testing"

	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
	"github.com/creatormusic/platform/store/storetest"
)

// TestContract runs the store contract suite on SQLite, and on PostgreSQL
// when PLATFORM_TEST_POSTGRES_URL is set (one schema per test).
func TestContract(t *testing.T) {
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) { storetest.Exercise(t, open) })
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
