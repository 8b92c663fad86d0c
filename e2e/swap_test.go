package e2e_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/jupiter"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
	"github.com/creatormusic/platform/token/tokentest"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// swapKey is a fixed address byte pattern for test mints and wallets.
func swapKey(b byte) chain.Address {
	var k chain.Address
	for i := range k {
		k[i] = b
	}
	return k
}

// The test pool's reserves, atomic: 1,000,000 CMT (9 decimals) and
// 2,000,000 TUSD (6 decimals).
const (
	swapPoolCMT = 1_000_000_000_000_000
	swapPoolUSD = 2_000_000_000_000
)

// swapAggregators maps a test system's cluster to its aggregator
// simulator, for tests that inject its faults.
var swapAggregators sync.Map

// aggregatorOf returns the aggregator swapEnv started for s.
func aggregatorOf(t testing.TB, s *platformtest.System) *jupitertest.Server {
	t.Helper()
	a, ok := swapAggregators.Load(s.Cluster)
	if !ok {
		t.Fatal("no aggregator for this system")
	}
	return a.(*jupitertest.Server)
}

// swapEnv deploys a second test token (6 decimals, Token-2022) on c and
// configures a registry of the platform token, that token, and a mint
// that was never created.
func swapEnv(t testing.TB, c *chaintest.Cluster, d tokentest.Deployment) platform.SwapEnvironment {
	t.Helper()
	usd := swapKey(61)
	if err := c.CreateMint(usd, token2022.Mint{Decimals: 6, IsInitialized: true, Supply: 1_000_000_000}); err != nil {
		t.Fatal(err)
	}
	agg, err := jupitertest.New(c, jupitertest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agg.Close() })
	// One platform token is worth two test dollars: 1,000,000 CMT against
	// 2,000,000 TUSD, 30 bps venue fee.
	pool, err := c.CreatePool(chaintest.PoolConfig{MintA: d.Mint, MintB: usd, ReserveA: swapPoolCMT, ReserveB: swapPoolUSD, FeeBps: 30})
	if err != nil {
		t.Fatal(err)
	}
	table, err := c.CreateLookupTable(swapKey(64), []chain.Address{pool.Address, pool.VaultA, pool.VaultB, pool.MintA, pool.MintB,
		pool.TokenProgramA, pool.TokenProgramB})
	if err != nil {
		t.Fatal(err)
	}
	if err := agg.AddPool(pool.Address, table); err != nil {
		t.Fatal(err)
	}
	swapAggregators.Store(c, agg)
	// The fee recipient's token accounts of both mints exist: the service
	// fee goes to the one of the input mint.
	for _, m := range []chain.Address{d.Mint, usd} {
		if _, err := c.MintTo(swapKey(62), m, 0); err != nil {
			t.Fatal(err)
		}
	}
	routes, err := jupiter.New(jupiter.Config{BaseURL: agg.URL(), HTTPClient: urlguardtest.Client(t, agg.URL())})
	if err != nil {
		t.Fatal(err)
	}
	return platform.SwapEnvironment{Routes: routes, FeeRecipient: swapKey(62).String(), SwapPrograms: []chain.Address{chaintest.PoolProgramID()}, Registry: &swap.Registry{Tokens: []swap.Token{
		{Mint: d.Mint.String(), TokenProgram: token2022.ProgramID().String(), Decimals: 9, Symbol: "CMT", Name: "Creator Music Token"},
		{Mint: usd.String(), TokenProgram: token2022.ProgramID().String(), Decimals: 6, Symbol: "TUSD", Name: "Test Dollar"},
		{Mint: swapKey(63).String(), TokenProgram: swap.SPLTokenProgramID().String(), Decimals: 6, Symbol: "GONE", Name: "Never minted"},
	}}}
}

// TestSwapTokensAndSettingsFromTheCluster runs the registry's start-up
// verification against the loopback cluster over HTTP: the two deployed
// mints become executable with the cluster's network observed, the
// missing one never does; the settings show the published policies and
// an ACTIVE test environment; the live environment, which has no
// cluster, fails closed for anonymous callers and live keys alike.
func TestSwapTokensAndSettingsFromTheCluster(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, SwapFunc: swapEnv, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			key := s.Boot.TestKey
			var tokens api.SwapTokensView
			waitFor(t, "the registry's start-up verification", func() bool {
				r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/tokens", Key: key})
				if r.Status != 200 {
					t.Fatalf("GET /api/v1/swap/tokens: %d %s", r.Status, r.Body)
				}
				if cc := r.Header.Get("Cache-Control"); cc != "private, no-store" {
					t.Fatalf("Cache-Control = %q", cc)
				}
				r.Data(t, &tokens)
				return tokens.VerifiedAt != nil
			})
			network := s.Cluster.Network().CAIP2()
			if tokens.Environment != "test" || tokens.RegistryVersion != 1 || tokens.Network == nil || *tokens.Network != network ||
				len(tokens.Tokens) != 3 {
				t.Fatalf("tokens = %+v", tokens)
			}
			for i, want := range []struct {
				symbol string
				exec   bool
				status string
				fee    int
			}{{"CMT", true, "MATCHED", 200}, {"TUSD", true, "MATCHED", -1}, {"GONE", false, "MISMATCHED", -1}} {
				got := tokens.Tokens[i]
				v := got.Verification
				if got.Symbol != want.symbol || got.Executable != want.exec || v.Status != want.status || v.Slot == nil || v.CheckedAt == nil {
					t.Errorf("token %d = %+v", i, got)
				}
				if (want.fee < 0) != (v.TransferFeeBps == nil) || (v.TransferFeeBps != nil && *v.TransferFeeBps != want.fee) {
					t.Errorf("%s transfer fee = %v, want %d", got.Symbol, v.TransferFeeBps, want.fee)
				}
			}
			if r := tokens.Tokens[2].Verification.Reason; r == nil || *r != swap.ReasonMintMissing {
				t.Errorf("GONE reason = %v", r)
			}

			var set api.SwapSettingsView
			s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/settings", Key: key}).Data(t, &set)
			if set.Status != swap.StatusActive || set.StatusReason != nil || set.ServiceFeeBps != 200 || set.FeePolicyVersion == nil ||
				*set.FeePolicyVersion != 1 || set.FeeRecipient == nil || *set.FeeRecipient != swapKey(62).String() ||
				set.RegistryVersion == nil || *set.RegistryVersion != 1 || set.Network == nil || *set.Network != network ||
				set.QuoteTTLSeconds != 30 || set.Slippage.DefaultBps != 50 || len(set.Providers) != 1 || set.Providers[0].ID != "jupiter" ||
				len(set.CircuitBreakers) != 1 || set.CircuitBreakers[0].State != swap.BreakerClosed {
				t.Fatalf("settings = %+v", set)
			}

			// Live has no cluster: anonymous callers and live keys see it
			// fail closed, never an empty registry.
			for _, k := range []string{"", s.Boot.LiveKey} {
				r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/tokens", Key: k})
				if r.Status != 503 || r.Code() != "SWAP_NOT_CONFIGURED" {
					t.Fatalf("live tokens (with a key: %v): %d %s", k != "", r.Status, r.Body)
				}
				var live api.SwapSettingsView
				rs := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/settings", Key: k})
				rs.Data(t, &live)
				if live.Environment != "live" || live.Status != swap.StatusNotConfigured || live.StatusReason == nil ||
					*live.StatusReason != "cluster_not_configured" || live.FeePolicyVersion != nil || live.RegistryVersion != nil ||
					live.Network != nil || len(live.Providers) != 0 {
					t.Fatalf("live settings = %+v", live)
				}
			}
		})
}

// TestSwapRegistryUnreadableChangesNothing makes the cluster unreachable
// for a scheduled run: the run is stored as unreadable and the tokens
// keep what the last readable run observed; once the cluster answers
// again a changed mint leaves the executable list.
func TestSwapRegistryUnreadableChangesNothing(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, SwapFunc: swapEnv, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			ctx := context.Background()
			key := s.Boot.TestKey
			read := func() api.SwapTokensView {
				var v api.SwapTokensView
				s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/tokens", Key: key}).Data(t, &v)
				return v
			}
			waitFor(t, "the registry's start-up verification", func() bool { return read().VerifiedAt != nil })
			before := read()
			runs := count(t, s, "SELECT COUNT(*) FROM swap_registry_runs")

			s.Cluster.Inject(chaintest.Fault{HTTPStatus: 502})
			if err := s.P.VerifySwapRegistry(ctx, "test"); err != nil {
				t.Fatal(err)
			}
			s.Cluster.ClearFaults()
			if n := count(t, s, "SELECT COUNT(*) FROM swap_registry_runs WHERE unreadable = ?", true); n != 1 {
				t.Fatalf("%d unreadable runs stored, want 1", n)
			}
			after := read()
			if !after.VerifiedAt.Equal(*before.VerifiedAt) || !after.Tokens[0].Executable || !after.Tokens[1].Executable {
				t.Fatalf("an unreadable run changed the registry: %+v", after)
			}

			if err := s.Cluster.SetMint(swapKey(61), token2022.Mint{Decimals: 9, IsInitialized: true, Supply: 1}); err != nil {
				t.Fatal(err)
			}
			s.Cluster.AdvanceSlots(40)
			if err := s.P.VerifySwapRegistry(ctx, "test"); err != nil {
				t.Fatal(err)
			}
			got := read()
			if got.Tokens[1].Executable || got.Tokens[1].Verification.Reason == nil || *got.Tokens[1].Verification.Reason != swap.ReasonDecimalsMismatch {
				t.Fatalf("TUSD after its decimals changed: %+v", got.Tokens[1])
			}
			if n := count(t, s, "SELECT COUNT(*) FROM swap_registry_runs"); n != runs+2 {
				t.Fatalf("%d runs, want %d", n, runs+2)
			}
		})
}
