//go:build unix

package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestOneDBServesAFile: the store's credential cache is exact only if no
// other DB writes the file, so a second Open of a served file fails with
// ErrInUse, and succeeds once the first DB is closed.
func TestOneDBServesAFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "platform.db")
	first, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if second, err := Open(ctx, Config{Path: path}); !errors.Is(err, ErrInUse) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second Open of a served file: %v, want ErrInUse", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}
