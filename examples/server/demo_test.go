package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/store/sqlite"
)

// openDemoPlatform opens a platform on a new SQLite database in dir, with
// no job workers.
func openDemoPlatform(t *testing.T, dir string) *platform.Platform {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "platform.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mailer, err := filemail.New(filepath.Join(dir, "mail"), "Platform <no-reply@platform.localhost>", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := platform.New(ctx, platform.Config{Store: db, Mailer: mailer, SecretKey: make([]byte, 32),
		BlobDir: filepath.Join(dir, "blobs"), Jobs: platform.JobsConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestDemoAccountsAreCreatedOnce: the first start writes the demo owner
// and the guest account (two tenants, two test keys, mode 0600); later
// starts change nothing.
func TestDemoAccountsAreCreatedOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openDemoPlatform(t, dir)
	path := filepath.Join(dir, "demo-credentials.json")
	first, err := ensureDemo(ctx, p, path)
	if err != nil {
		t.Fatal(err)
	}
	if first.APIKey == "" || first.Guest == nil || first.Guest.APIKey == "" || first.Guest.TenantID == first.TenantID ||
		first.Guest.Email != "guest@demo.localhost" || first.Guest.Password == "" || first.Guest.APIKey == first.APIKey {
		t.Fatalf("first start: %+v guest %+v", first, first.Guest)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v; want mode 0600", err)
	}
	again, err := ensureDemo(ctx, p, path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Guest == nil || *again.Guest != *first.Guest || again.APIKey != first.APIKey {
		t.Fatalf("a later start changed the accounts: %+v", again)
	}
}

// TestDemoCredentialsFromBeforeTheGuestGetOne: a data folder whose
// credentials file predates the guest account keeps its owner and gets
// the guest added.
func TestDemoCredentialsFromBeforeTheGuestGetOne(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openDemoPlatform(t, dir)
	boot, err := p.Bootstrap(ctx, platform.BootstrapInput{TenantName: "Demo Tenant", WorkspaceName: "Demo Studio",
		OwnerEmail: "owner@demo.localhost", OwnerName: "Demo Owner", KeyName: "Demo test key", Password: "an older demo password"})
	if err != nil {
		t.Fatal(err)
	}
	old := demo{APIKey: boot.TestKey, TenantID: boot.TenantID, WorkspaceID: boot.WorkspaceID, OwnerID: boot.OwnerID,
		OwnerEmail: "owner@demo.localhost", OwnerPassword: "an older demo password"}
	b, _ := json.Marshal(old)
	path := filepath.Join(dir, "demo-credentials.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ensureDemo(ctx, p, path)
	if err != nil {
		t.Fatal(err)
	}
	if got.APIKey != old.APIKey || got.OwnerPassword != old.OwnerPassword || got.Guest == nil || got.Guest.TenantID == old.TenantID {
		t.Fatalf("got %+v guest %+v; want the owner kept and a guest added", got, got.Guest)
	}
	var onDisk demo
	b, _ = os.ReadFile(path)
	if err := json.Unmarshal(b, &onDisk); err != nil || onDisk.Guest == nil || *onDisk.Guest != *got.Guest || onDisk.APIKey != old.APIKey {
		t.Fatalf("file = %s (%v)", b, err)
	}
}
