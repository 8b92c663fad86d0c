package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/swap"
)

// TestSwapSimulatorIsReadyToTry: with the chain simulator the test
// environment gets both tokens as its registry, a route provider that
// reaches the loopback aggregator through the guarded client and quotes
// the pool at its documented price, a fee recipient holding a token
// account of each mint, and a demo wallet holding both tokens.
func TestSwapSimulatorIsReadyToTry(t *testing.T) {
	s, cfg := startWired(t, simOptions{chain: true, slot: 50 * time.Millisecond}, t.TempDir())
	env := cfg.Chain.Test.Swap
	if env.Routes == nil || env.Registry == nil || env.FeeRecipient == "" {
		t.Fatalf("the test environment's swaps are not configured: %+v", env)
	}
	if cfg.Chain.Live.Swap.Routes != nil || cfg.Chain.Live.Swap.Registry != nil {
		t.Fatalf("swaps reached the live environment: %+v", cfg.Chain.Live.Swap)
	}
	if err := env.Registry.Validate(); err != nil {
		t.Fatalf("registry: %v", err)
	}
	program := token2022.ProgramID().String()
	reg := env.Registry.Tokens
	if len(reg) != 2 || reg[0].Mint != s.chain.mint || reg[0].Decimals != 9 || reg[0].Symbol != "TOKEN" ||
		reg[1].Decimals != 6 || reg[1].Symbol != "TESTUSD" || reg[0].TokenProgram != program || reg[1].TokenProgram != program {
		t.Fatalf("registry = %+v, want the platform token (9 decimals) and the test dollar (6), both Token-2022", reg)
	}
	c := s.chain.cluster
	tokenMint, dollar := mustAddress(t, reg[0].Mint), mustAddress(t, reg[1].Mint)
	acct, ok := c.Account(dollar)
	if !ok {
		t.Fatal("the test dollar's mint does not exist")
	}
	m, err := token2022.DecodeMint(acct.Data)
	if err != nil || acct.Owner != token2022.ProgramID() || m.Decimals != 6 {
		t.Fatalf("test dollar mint: owner %s, %+v, %v", acct.Owner, m, err)
	}
	if _, fee := m.TransferFeeConfig(); fee {
		t.Fatal("the test dollar charges a transfer fee")
	}

	ctx := context.Background()
	fee := mustAddress(t, env.FeeRecipient)
	wallet, guest := mustAddress(t, s.chain.wallet), mustAddress(t, s.chain.guest)
	for _, want := range []struct {
		owner, mint chain.Address
		amount      uint64
	}{{fee, tokenMint, 0}, {fee, dollar, 0}, {wallet, tokenMint, demoWalletTokens}, {wallet, dollar, demoWalletDollars},
		{guest, tokenMint, guestWalletTokens}} {
		ata := chaintest.AssociatedTokenAddress(want.owner, want.mint, token2022.ProgramID())
		bal, err := c.GetTokenAccountBalance(ctx, ata, chain.Finalized)
		if err != nil || bal.Amount != want.amount {
			t.Fatalf("%s's token account of %s: %+v, %v; want %d", want.owner, want.mint, bal, err, want.amount)
		}
	}

	table, err := c.LookupTable(s.chain.swap.lookupTable)
	pool := s.chain.swap.pool
	if err != nil || !sameSet(table.Addresses, []chain.Address{pool.Address, pool.VaultA, pool.VaultB, tokenMint, dollar, token2022.ProgramID()}) {
		t.Fatalf("lookup table = %v (%v), want the pool's accounts", table.Addresses, err)
	}

	// 100 TESTUSD buy what the constant-product formula gives at the
	// pool's reserves: about 6,650 TOKEN at 1 TOKEN = 0.015 TESTUSD.
	const in = 100_000_000
	route, err := env.Routes.Route(ctx, swap.RouteRequest{InputMint: dollar, OutputMint: tokenMint, Amount: in, SlippageBps: 50})
	if err != nil {
		t.Fatalf("quote through the aggregator: %v", err)
	}
	want := chaintest.PoolAmountOut(poolDollarReserve, poolTokenReserve, in, poolFeeBps)
	if route.OutAtomic != money.Atomic(want) || want < 6_600_000_000_000 || want > 6_666_666_666_667 {
		t.Fatalf("100 TESTUSD quote %d TOKEN atomic, want %d (about 6,650 TOKEN)", route.OutAtomic, want)
	}
	ins, err := env.Routes.Instructions(ctx, route, wallet)
	if err != nil || !slices.Contains(ins.LookupTables, s.chain.swap.lookupTable) {
		t.Fatalf("swap instructions: %+v, %v; want the pool's lookup table", ins.LookupTables, err)
	}
}

// TestHostStartsWithSwaps runs the host as a person does and reads the
// swap routes with the test key it prints: both tokens are listed and,
// once the registry's verification at start has read their mints, both
// are executable; the settings are ACTIVE with the aggregator as the
// route provider.
func TestHostStartsWithSwaps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, work := t.TempDir(), t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(os.PathSeparator), "./examples/server")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the host: %v\n%s", err, out)
	}
	// Port 0: the host binds a port the kernel picks and names it in its
	// services map, so no other process can take it in between.
	data := filepath.Join(work, "data")
	host := exec.CommandContext(ctx, filepath.Join(bin, "server"), "-addr", "127.0.0.1:0", "-data", data,
		"-stripe-sim=false", "-provider-sim=false")
	host.Dir = work
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(work, "host.log")
	hostLog, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer hostLog.Close()
	host.Stderr = hostLog
	host.Cancel = func() error { return host.Process.Signal(os.Interrupt) }
	host.WaitDelay = 20 * time.Second
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = host.Process.Signal(os.Interrupt)
		_ = host.Wait()
	}()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The host prints the key once on first start, then, once it listens,
	// the map, whose last line is the service fee's recipient.
	var out strings.Builder
	key := ""
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the host ended:\n%s\n%s", out.String(), tail(logPath))
			}
			out.WriteString(l + "\n")
			if f := strings.TrimSpace(l); strings.HasPrefix(f, "platform_test_") {
				key = f
			}
			done = strings.Contains(l, "service fee to ")
		case <-ctx.Done():
			t.Fatalf("the host never printed its map:\n%s\n%s", out.String(), tail(logPath))
		}
	}
	go func() {
		for range lines {
		}
	}()
	var m serviceMap
	b, err := os.ReadFile(filepath.Join(data, servicesFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("services map: %s (%v)", b, err)
	}
	agg := m.find("jupiter")
	if key == "" || agg == nil || agg.Swap == nil || len(agg.Swap.Tokens) != 2 {
		t.Fatalf("no test key, or no aggregator with two tokens, printed:\n%s", out.String())
	}
	for _, want := range []string{agg.URL, agg.Swap.Tokens[0].Mint, agg.Swap.Tokens[1].Mint, agg.Swap.Pool, agg.Swap.FeeRecipient} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the host did not print %q:\n%s", want, out.String())
		}
	}

	type tokenView struct {
		Mint         string
		Symbol       string
		Decimals     int
		Executable   bool
		Verification struct{ Status string }
	}
	var tokens struct{ Tokens []tokenView }
	for {
		if err := getJSON(ctx, m.API+"/api/v1/swap/tokens", key, &tokens); err != nil {
			t.Fatal(err)
		}
		if len(tokens.Tokens) == 2 && tokens.Tokens[0].Executable && tokens.Tokens[1].Executable {
			break
		}
		if len(tokens.Tokens) != 2 || tokens.Tokens[0].Verification.Status != swap.TokenPending {
			t.Fatalf("swap tokens = %+v, want both, PENDING until verified, then executable", tokens.Tokens)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the registry's verification never made both tokens executable: %+v\n%s", tokens.Tokens, tail(logPath))
		case <-time.After(100 * time.Millisecond):
		}
	}
	for i, want := range agg.Swap.Tokens {
		got := tokens.Tokens[i]
		if got.Mint != want.Mint || got.Symbol != want.Symbol || got.Decimals != int(want.Decimals) || got.Verification.Status != string(swap.MintMatched) {
			t.Fatalf("swap token %d = %+v, want %+v as printed, MATCHED", i, got, want)
		}
	}
	var settings struct {
		Status       string
		FeeRecipient string
		Providers    []struct{ ID string }
	}
	if err := getJSON(ctx, m.API+"/api/v1/swap/settings", key, &settings); err != nil {
		t.Fatal(err)
	}
	if settings.Status != swap.StatusActive || settings.FeeRecipient != agg.Swap.FeeRecipient ||
		len(settings.Providers) != 1 || settings.Providers[0].ID != "jupiter" {
		t.Fatalf("swap settings = %+v, want ACTIVE, the printed fee recipient and the jupiter provider", settings)
	}
}

// find is the simulator named name in the map, if any.
func (m serviceMap) find(name string) *simService {
	for i := range m.Simulators {
		if m.Simulators[i].Name == name {
			return &m.Simulators[i]
		}
	}
	return nil
}

// getJSON GETs url with key and decodes the envelope's data into v.
func getJSON(ctx context.Context, url, key string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, res.Status, body)
	}
	return json.Unmarshal(body, &struct{ Data any }{Data: v})
}

// mustAddress parses a base58 address.
func mustAddress(t *testing.T, s string) chain.Address {
	t.Helper()
	a, err := token2022.ParsePublicKey(s)
	if err != nil {
		t.Fatalf("address %q: %v", s, err)
	}
	return a
}

// sameSet reports whether a and b hold the same addresses, each once.
func sameSet(a, b []chain.Address) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}
