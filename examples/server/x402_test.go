package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/web3/x402"
)

// TestX402SimulatorIsReadyToTry: with the chain simulator the test
// environment sells one analysis for 0.25 TESTUSD to the treasury, whose
// token account of the test dollar exists, settled by a funded fee payer
// whose key is sealed at rest under the master secret and read back the
// same on the next start; the live environment sells nothing; the map
// shows it.
func TestX402SimulatorIsReadyToTry(t *testing.T) {
	data := t.TempDir()
	s, cfg := startWired(t, simOptions{chain: true, slot: 50 * time.Millisecond}, data)
	env := cfg.Chain.Test.X402
	if len(env.Resources) != 1 || env.Resources[0].Kind != x402.KindSoundAnalysis || env.Resources[0].Amount != 250_000 ||
		env.Decimals != 6 || env.Asset != s.chain.swap.dollar.String() || env.FeePayer == nil || env.PayTo != "" {
		t.Fatalf("the test environment's x402 = %+v", env)
	}
	if len(cfg.Chain.Live.X402.Resources) != 0 || cfg.Chain.Live.X402.FeePayer != nil {
		t.Fatalf("x402 reached the live environment: %+v", cfg.Chain.Live.X402)
	}
	c := s.chain.cluster
	if a, ok := c.Account(env.FeePayer.Address()); !ok || a.Lamports != x402FeePayerSOL {
		t.Fatalf("the fee payer is not funded: %+v", a)
	}
	treasury := mustAddress(t, s.chain.treasury)
	if _, ok := c.Account(chaintest.AssociatedTokenAddress(treasury, s.chain.swap.dollar, token2022.ProgramID())); !ok {
		t.Fatal("the treasury holds no test dollar account")
	}
	path := filepath.Join(data, x402FeePayerFile)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sealed fee payer: %v %v, want mode 0600", fi, err)
	}
	sealed, _ := os.ReadFile(path)
	key, err := feePayerKey(path, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, key.Seed()) {
		t.Fatal("the fee payer's seed is stored in the clear")
	}
	if again, err := x402.NewKeySigner(key); err != nil || again.Address() != env.FeePayer.Address() {
		t.Fatalf("the next start reads another fee payer: %v", err)
	}
	if _, err := feePayerKey(path, bytes.Repeat([]byte{8}, 32)); err == nil {
		t.Fatal("the sealed key opened under another master secret")
	}
	var out bytes.Buffer
	s.services("http://127.0.0.1:8080").print(&out)
	if !strings.Contains(out.String(), "x402: sound-analysis for 0.25 TESTUSD") || !strings.Contains(out.String(), env.FeePayer.Address().String()) {
		t.Fatalf("the map lacks the x402 set-up:\n%s", out.String())
	}
}
