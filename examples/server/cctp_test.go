package main

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/store/sqlite"
)

// TestCCTPSimulatorShowsOnCapabilities: with -cctp-sim the host starts the
// EVM node and the attestation service beside the cluster, names both in
// its map, and the test environment's cross-chain transfers, proven by the
// readiness job at start, read configured, verified and enabled on
// /api/v1/web3/capabilities; without the flag they read not_configured.
// The flag alone, without the cluster, is refused.
func TestCCTPSimulatorShowsOnCapabilities(t *testing.T) {
	if _, err := startSimulators(context.Background(), simOptions{cctp: true}, t.TempDir(), nil); err == nil ||
		!strings.Contains(err.Error(), "-chain-sim") {
		t.Fatalf("-cctp-sim without -chain-sim: %v", err)
	}
	for _, on := range []bool{true, false} {
		dir := t.TempDir()
		s, cfg := startWired(t, simOptions{chain: true, slot: 50 * time.Millisecond, cctp: on}, dir)
		if (cfg.Chain.Test.CCTP != nil) != on || cfg.Chain.Live.CCTP != nil {
			t.Fatalf("cctp %v: test %v, live %v", on, cfg.Chain.Test.CCTP, cfg.Chain.Live.CCTP)
		}
		m := s.services("http://127.0.0.1:8080")
		evm, att := m.find("evm"), m.find("attestations")
		if on && (evm == nil || att == nil || evm.CCTP == nil || evm.CCTP.Network != "eip155:84532" || evm.CCTP.Recipient == "") ||
			!on && (evm != nil || att != nil) {
			t.Fatalf("cctp %v: map %+v", on, m.Simulators)
		}
		line := hostCapability(t, cfg, dir)
		want := map[bool]string{true: "true true true <nil>", false: "false false false not_configured"}[on]
		if line != want {
			t.Fatalf("cctp %v: cross_chain_transfers = %s, want %s", on, line, want)
		}
	}
}

// hostCapability runs a platform of cfg on SQLite in dir, waits for the
// jobs due at start, and returns the test environment's
// cross_chain_transfers line as "configured verified enabled reason".
func hostCapability(t *testing.T, cfg platform.Config, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "platform.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mailer, err := filemail.New(filepath.Join(dir, "mail"), "Platform <no-reply@platform.localhost>", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Mailer, cfg.SecretKey, cfg.BlobDir = db, mailer, make([]byte, 32), filepath.Join(dir, "blobs")
	cfg.Jobs = platform.JobsConfig{PollInterval: 20 * time.Millisecond}
	p, err := platform.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	boot, err := p.Bootstrap(ctx, platform.BootstrapInput{TenantName: "T", WorkspaceName: "W", OwnerEmail: "o@example.test", OwnerName: "O"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	for {
		var caps struct {
			Features []struct {
				Feature                       string
				Configured, Verified, Enabled bool
				Reason                        *string
			}
		}
		if err := getJSON(ctx, srv.URL+"/api/v1/web3/capabilities", boot.TestKey, &caps); err != nil {
			t.Fatal(err)
		}
		for _, f := range caps.Features {
			if f.Feature != "cross_chain_transfers" {
				continue
			}
			reason := "<nil>"
			if f.Reason != nil {
				reason = *f.Reason
			}
			if reason != "not_verified" { // the readiness job has not run yet
				return strings.Join([]string{boolText(f.Configured), boolText(f.Verified), boolText(f.Enabled), reason}, " ")
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the readiness run never ended")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
