package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
)

// TestSimulatorsServeTheTestEnvironmentOnly: by default the host starts
// every simulator, wires each into the test environment, and leaves the
// live environment without any; the map it prints and saves names each
// simulator at an address that answers.
func TestSimulatorsServeTheTestEnvironmentOnly(t *testing.T) {
	data := t.TempDir()
	s, cfg := startWired(t, simOptions{stripe: true, providers: true, advance: time.Second, chain: true, slot: 50 * time.Millisecond}, data)
	if cfg.Payments.Test == nil || len(cfg.MusicProviders.Test) != 2 || len(cfg.MusicProviders.PlatformKeys.Test) != 2 ||
		cfg.Chain.Test.Client == nil || cfg.Chain.Test.Swap.Routes == nil || len(cfg.AllowLoopback) != 2 {
		t.Fatalf("the test environment is not wired to every simulator: %+v", cfg)
	}
	if cfg.Payments.Live != nil || len(cfg.MusicProviders.Live) != 0 || len(cfg.MusicProviders.PlatformKeys.Live) != 0 ||
		cfg.Chain.Live.Client != nil || cfg.Chain.Live.Swap.Routes != nil {
		t.Fatalf("a simulator reached the live environment: %+v", cfg)
	}

	m := s.services("http://127.0.0.1:8080")
	var names []string
	for _, sim := range m.Simulators {
		names = append(names, sim.Name)
		res, err := http.Get(sim.URL)
		if err != nil {
			t.Fatalf("%s at %s does not answer: %v", sim.Name, sim.URL, err)
		}
		res.Body.Close()
	}
	if got := strings.Join(names, " "); got != "stripe provider-a provider-b solana jupiter" {
		t.Fatalf("map names %q", got)
	}
	solana := m.Simulators[3].Chain
	if solana == nil || !strings.HasPrefix(solana.Network, "solana:") || solana.Mint == "" || solana.Keypair != filepath.Join(data, demoWalletFile) {
		t.Fatalf("the cluster's deployment is missing from the map: %+v", solana)
	}
	var out bytes.Buffer
	m.print(&out)
	jup := m.Simulators[4]
	if jup.Swap == nil || len(jup.Swap.Tokens) != 2 || jup.Swap.Tokens[0].Mint != solana.Mint {
		t.Fatalf("the swap set-up is missing from the map: %+v", jup.Swap)
	}
	for _, want := range []string{"http://127.0.0.1:8080/api/docs/openapi.json", m.Simulators[0].URL, m.Simulators[1].Key, solana.Mint,
		"the live environment never uses one", jup.URL, jup.Swap.Tokens[1].Mint, "1 TOKEN = 0.015 TESTUSD", "(2 SOL, 1,000 TOKEN and 1,000 TESTUSD)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("printed map lacks %q:\n%s", want, out.String())
		}
	}
	path := filepath.Join(data, servicesFile)
	if err := m.save(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("services file: %v %v, want mode 0600", fi, err)
	}
	var saved serviceMap
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &saved); err != nil || len(saved.Simulators) != 5 || saved.Simulators[3].URL != m.Simulators[3].URL ||
		saved.Simulators[4].Swap == nil || saved.Simulators[4].Swap.Pool != jup.Swap.Pool {
		t.Fatalf("saved map = %s (%v)", b, err)
	}
}

// TestSimulatorsTurnOff: with every simulator turned off nothing starts,
// and the test environment has no provider, cluster or loopback exception.
func TestSimulatorsTurnOff(t *testing.T) {
	s, cfg := startWired(t, simOptions{}, t.TempDir())
	if cfg.Payments.Test != nil || cfg.MusicProviders.Test != nil || cfg.Chain.Test.Client != nil || cfg.AllowLoopback != nil {
		t.Fatalf("a simulator was wired while off: %+v", cfg)
	}
	m := s.services("http://127.0.0.1:8080")
	var out bytes.Buffer
	m.print(&out)
	if len(m.Simulators) != 0 || !strings.Contains(out.String(), "No simulators") {
		t.Fatalf("map = %+v\n%s", m, out.String())
	}
}

// startWired starts the simulators o asks for, stopped when the test
// ends, and wires them into an empty configuration.
func startWired(t *testing.T, o simOptions, data string) (*simulators, platform.Config) {
	t.Helper()
	if o.secret == nil {
		o.secret = bytes.Repeat([]byte{7}, 32) // the host's master secret
	}
	s, err := startSimulators(context.Background(), o, data, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	var cfg platform.Config
	if err := s.wire(&cfg); err != nil {
		t.Fatal(err)
	}
	return s, cfg
}
