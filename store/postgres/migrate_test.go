package postgres_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/storetest"
)

// TestMigratorsOfOneSchemaTakeTurns: hosts starting at once on one schema
// migrate it once between them (the second finds each version applied),
// while hosts of another schema on the same server migrate beside them.
func TestMigratorsOfOneSchemaTakeTurns(t *testing.T) {
	ctx := context.Background()
	schemas := []string{storetest.PostgresURL(t), storetest.PostgresURL(t)}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(ctx, postgres.Config{URL: schemas[i%2], MaxConns: 2})
			if err != nil {
				errs <- err
				return
			}
			db.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a host failed to start: %v", err)
	}
	ms, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range schemas {
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if n != len(ms) {
			t.Errorf("schema_migrations holds %d versions, want %d", n, len(ms))
		}
	}
}
