package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/creatormusic/platform/store"
)

// TestDatabaseFilesAreOwnerOnly: the database, -wal and -shm files were
// created 0644 (readable by every local user: sealed secrets, credential
// digests). A new database's files are 0600, and opening an existing
// database takes group and other access away from its files.
func TestDatabaseFilesAreOwnerOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "platform.db")
	write := func(db *store.DB) {
		t.Helper()
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.IDB().ExecContext(ctx, "CREATE TABLE IF NOT EXISTS marks (name TEXT); INSERT INTO marks VALUES ('x')")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			t.Logf("%s: %s %v", when, filepath.Base(p), fi.Mode().Perm())
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s has mode %v, want 0600", when, filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
	db, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	write(db)
	check("new database")
	db.Close()

	// A database left readable by an earlier version is tightened on open.
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	db, err = Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write(db)
	check("reopened database")
}
