package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
	"github.com/creatormusic/platform/store/storetest"
)

// TestReconciliationBackfill opens a database whose schema stops before
// version 17 and holds a settled intent and a pending one, migrates it,
// and finds a reconciliation job enqueued for the settled intent only,
// as the platform's wiring enqueues it.
func TestReconciliationBackfill(t *testing.T) {
	ctx := context.Background()
	openers := map[string]func(t *testing.T) func() (*store.DB, error){
		"sqlite": func(t *testing.T) func() (*store.DB, error) {
			path := filepath.Join(t.TempDir(), "platform.db")
			return func() (*store.DB, error) { return sqlite.Open(ctx, sqlite.Config{Path: path}) }
		},
		"postgres": func(t *testing.T) func() (*store.DB, error) {
			url := storetest.PostgresURL(t)
			return func() (*store.DB, error) { return postgres.Open(ctx, postgres.Config{URL: url}) }
		},
	}
	for name, opener := range openers {
		t.Run(name, func(t *testing.T) {
			open := opener(t)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			settledAt := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
			err = db.InTx(ctx, func(tx *store.Tx) error {
				// Back to the schema before version 17.
				for _, q := range []string{`DROP TABLE intent_reconciliations`, `DROP INDEX ledger_movements_reference`,
					`DELETE FROM jobs WHERE kind = 'intent.reconcile'`, `DELETE FROM schema_migrations WHERE version = 17`} {
					if _, err := tx.IDB().ExecContext(ctx, q); err != nil {
						return err
					}
				}
				if err := tx.TenantInsert(ctx, "ten_1", "Tenant"); err != nil {
					return err
				}
				if err := tx.WorkspaceInsert(ctx, "ws_1", "ten_1", "Workspace"); err != nil {
					return err
				}
				if err := tx.UserInsert(ctx, "usr_1", "ten_1", "usr_1@example.com", "User"); err != nil {
					return err
				}
				for id, st := range map[string]intent.State{"txi_settled": intent.StateSettled, "txi_pending": intent.StateSubmitted} {
					it := intent.Intent{ID: id, Version: 4, Purpose: intent.PurposeCreditPurchase,
						Actor:             intent.Actor{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Test},
						BusinessReference: intent.PurposeCreditPurchase + ":" + id, State: st, NetworkState: intent.NetworkConfirmed,
						CreatedAt: settledAt.Add(-time.Minute), ExpiresAt: settledAt.Add(time.Hour), UpdatedAt: settledAt}
					if err := tx.InsertIntent(ctx, it); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			if db, err = open(); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			defer db.Close()
			list, err := db.Read().JobList(ctx, "intent.reconcile", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 {
				t.Fatalf("jobs = %+v, want one", list)
			}
			j := list[0]
			if string(j.Payload) != `{"id":"txi_settled"}` || j.UniqueKey != "intent.reconcile:txi_settled" || j.MaxAttempts != 10 ||
				j.Attempts != 0 || j.State != "available" || !j.RunAt.Equal(settledAt) {
				t.Fatalf("job = %+v", j)
			}
			// The migrated schema has the table.
			if _, err := db.Read().Reconciliation(ctx, "txi_settled"); err == nil {
				t.Fatal("a record before any reconciliation")
			}
		})
	}
}
