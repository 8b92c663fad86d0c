package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/creatormusic/platform/store"
)

// TestCancelledUnitLeavesItsGroup cancels a unit of work's context while
// its long write runs on the writer, in a group after another unit: the
// driver interrupts the statement, the cancelled unit fails and leaves
// nothing, and the earlier unit of its group still commits.
func TestCancelledUnitLeavesItsGroup(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "cancel.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.IDB().ExecContext(ctx, "CREATE TABLE marks (name TEXT PRIMARY KEY); CREATE TABLE bulk (x INTEGER)")
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// The first unit holds the writer until the slow unit has queued
	// behind it, so both run in one group, the first one first.
	proceed := make(chan struct{})
	firstRunning := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.IDB().ExecContext(ctx, "INSERT INTO marks (name) VALUES ('first')"); err != nil {
				return err
			}
			close(firstRunning)
			<-proceed
			return nil
		})
	}()
	<-firstRunning
	slowCtx, cancel := context.WithCancel(ctx)
	started := make(chan struct{})
	slow := make(chan error, 1)
	go func() {
		slow <- db.InTx(slowCtx, func(tx *store.Tx) error {
			if _, err := tx.IDB().ExecContext(slowCtx, "INSERT INTO marks (name) VALUES ('slow')"); err != nil {
				return err
			}
			close(started)
			// A write long enough for the cancel to land while it runs.
			_, err := tx.IDB().ExecContext(slowCtx, `INSERT INTO bulk (x)
				WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT x FROM c`)
			return err
		})
	}()
	time.Sleep(100 * time.Millisecond) // the slow unit queues behind the first
	close(proceed)
	<-started
	time.Sleep(20 * time.Millisecond)
	cancel()

	if err := <-slow; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled unit: %v, want context.Canceled", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the unit grouped before a cancelled one failed: %v", err)
	}
	var marks []string
	if err := db.Read().IDB().NewRaw("SELECT name FROM marks ORDER BY name").Scan(ctx, &marks); err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0] != "first" {
		t.Errorf("committed marks %v, want only the first unit's", marks)
	}
	var bulk int
	if err := db.Read().IDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM bulk").Scan(&bulk); err != nil {
		t.Fatal(err)
	}
	if bulk != 0 {
		t.Errorf("%d rows of the interrupted write were kept", bulk)
	}
}
