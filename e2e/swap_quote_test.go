package e2e_test

import (
	"crypto/ed25519"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// swapSystem starts a system with swaps configured on the loopback
// cluster and waits for the registry's start-up verification.
func swapSystem(t *testing.T, fn func(t *testing.T, s *platformtest.System)) {
	platformtest.Dialects(t, platformtest.Options{Chain: true, SwapFunc: swapEnv, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			waitFor(t, "the registry's start-up verification", func() bool {
				var v api.SwapTokensView
				s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/tokens", Key: s.Boot.TestKey}).Data(t, &v)
				return v.VerifiedAt != nil
			})
			fn(t, s)
		})
}

// quoteAs posts a quote request as p in test mode under key.
func quoteAs(s *platformtest.System, p buyer, key string, body map[string]any) *platformtest.Response {
	h := map[string]string{transport.EnvironmentHeader: "test", "Idempotency-Key": key}
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/swap/quotes", Cookie: p.cookie, Header: h, Body: body})
}

// quoteBody is a quote request of amount CMT for TUSD from p's wallet.
func quoteBody(s *platformtest.System, p buyer, amount string) map[string]any {
	return map[string]any{"inputMint": s.Token.Mint.String(), "outputMint": swapKey(61).String(), "amount": amount, "wallet": p.wallet.addr}
}

// swapRows counts what quoting writes.
func swapRows(t testing.TB, s *platformtest.System) [3]int {
	return [3]int{count(t, s, "SELECT COUNT(*) FROM swap_operations"), count(t, s, "SELECT COUNT(*) FROM swap_quotes"),
		count(t, s, "SELECT COUNT(*) FROM outbox_events WHERE type LIKE 'swap_operation.%'")}
}

// expectedOut is the pool's output for an executable input of exec atomic
// CMT, whose 2% transfer fee is withheld before the pool receives it.
func expectedOut(exec uint64) uint64 {
	fee := exec * 200 / 10000
	if exec*200%10000 != 0 {
		fee++ // Token-2022 rounds the fee up
	}
	return chaintest.PoolAmountOut(swapPoolCMT, swapPoolUSD, exec-fee, 30)
}

// TestSwapQuote builds a quote end to end: the wallet's balances read from
// the loopback cluster, the service fee taken from the gross input, the
// executable input routed through the aggregator over the real wire, the
// minimum output from the slippage, all frozen under a hash; one
// operation, one quote and one event written; the Idempotency-Key replays
// it.
func TestSwapQuote(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "swapper@example.com", 10_000_000_000)
		r := quoteAs(s, p, "q-1", quoteBody(s, p, "1.5"))
		if r.Status != http.StatusCreated {
			t.Fatalf("quote: %d %s", r.Status, r.Body)
		}
		var q api.SwapQuoteView
		r.Data(t, &q)
		exec := uint64(1_470_000_000)
		want := expectedOut(exec)
		minimum := new(big.Int).Div(new(big.Int).Mul(new(big.Int).SetUint64(want), big.NewInt(9950)), big.NewInt(10000)).Uint64()
		if q.Status != "QUOTED" || q.Provider != "jupiter" || q.Network != s.Cluster.Network().CAIP2() || q.Wallet != p.wallet.addr ||
			q.GrossInputAtomic != "1500000000" || q.ServiceFeeAtomic != "30000000" || q.ExecutableInputAtomic != fmt.Sprint(exec) ||
			q.ExpectedOutputAtomic != fmt.Sprint(want) || q.MinimumOutputAtomic != fmt.Sprint(minimum) || q.SlippageBps != 50 ||
			q.InputDecimals != 9 || q.OutputDecimals != 6 || len(q.QuoteHash) != 64 || q.FeePolicyVersion != "1" || q.RegistryVersion != "1" {
			t.Fatalf("quote = %+v (want expected %d, minimum %d)", q, want, minimum)
		}
		if q.FeeBreakdown.ServiceFeeBps != 200 || q.FeeBreakdown.ServiceFeeMint != s.Token.Mint.String() ||
			q.FeeBreakdown.RentLamports != fmt.Sprint(chaintest.RentExemptMinimum(170)) {
			t.Fatalf("fee breakdown = %+v (the wallet has no TUSD account yet: its rent is counted)", q.FeeBreakdown)
		}
		if len(q.Route) != 1 || q.Route[0].ShareBps != 10000 || q.Route[0].InAtomic != fmt.Sprint(exec) {
			t.Fatalf("route = %+v", q.Route)
		}
		if got := q.ExpiresAt.Sub(q.CreatedAt); got != 30*time.Second {
			t.Fatalf("quote lives %s, want the settings' 30s", got)
		}
		if rows := swapRows(t, s); rows != [3]int{1, 1, 1} {
			t.Fatalf("rows (operations, quotes, events) = %v, want one each", rows)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM swap_operations WHERE id = ? AND state = ?", q.OperationID, "QUOTED"); n != 1 {
			t.Fatalf("operation %s not stored as QUOTED", q.OperationID)
		}

		// The same key replays the same quote; a new key is a new quote.
		var again api.SwapQuoteView
		quoteAs(s, p, "q-1", quoteBody(s, p, "1.5")).Data(t, &again)
		if again.QuoteID != q.QuoteID || again.QuoteHash != q.QuoteHash {
			t.Fatalf("replay = %s, want %s", again.QuoteID, q.QuoteID)
		}
		if rows := swapRows(t, s); rows != [3]int{1, 1, 1} {
			t.Fatalf("a replay wrote rows: %v", rows)
		}
		var other api.SwapQuoteView
		quoteAs(s, p, "q-2", quoteBody(s, p, "1.5")).Data(t, &other)
		if other.QuoteID == q.QuoteID || other.QuoteHash == q.QuoteHash {
			t.Fatal("a new key returned the same quote")
		}
	})
}

// TestSwapQuoteRefusals fails each step of the validation order alone and
// checks its code and that nothing was written.
func TestSwapQuoteRefusals(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "refused@example.com", 300_000_000_000_000)
		// A verified wallet with tokens but no lamports.
		poor := buyer{person: testSession(t, s, "poor@example.com"), wallet: newWalletKey(t)}
		c := challenge(t, s, poor.person, poor.wallet.addr)
		if r := verifyWallet(s, poor.person, c.ID, ed25519.Sign(poor.wallet.priv, []byte(c.Message)), ""); r.Status != http.StatusOK {
			t.Fatalf("verify wallet: %d %s", r.Status, r.Body)
		}
		poorAddr, _ := token2022.ParsePublicKey(poor.wallet.addr)
		if _, err := s.Cluster.MintTo(poorAddr, s.Token.Mint, 10_000_000_000); err != nil {
			t.Fatal(err)
		}
		s.Cluster.AdvanceSlots(40)
		agg := aggregatorOf(t, s)
		before := swapRows(t, s)
		n := 0
		refused := func(what string, as buyer, body map[string]any, status int, code string, setup func(), detail ...string) {
			t.Helper()
			if setup != nil {
				setup()
			}
			n++
			r := quoteAs(s, as, fmt.Sprintf("refused-%d", n), body)
			s.Cluster.ClearFaults()
			agg.ClearFaults()
			if r.Status != status || r.Code() != code {
				t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Body, status, code)
			}
			for i := 0; i+1 < len(detail); i += 2 {
				if got := fmt.Sprint(r.JSON()["error"].(map[string]any)["details"].(map[string]any)[detail[i]]); got != detail[i+1] {
					t.Fatalf("%s: details.%s = %s, want %s", what, detail[i], got, detail[i+1])
				}
			}
			if rows := swapRows(t, s); rows != before {
				t.Fatalf("%s wrote rows: %v, before %v", what, rows, before)
			}
		}
		body := func(edit func(b map[string]any)) map[string]any {
			b := quoteBody(s, p, "1.5")
			if edit != nil {
				edit(b)
			}
			return b
		}
		stranger := newWalletKey(t)
		refused("a wallet that is not the user's", p, body(func(b map[string]any) { b["wallet"] = stranger.addr }),
			http.StatusUnprocessableEntity, "WALLET_REQUIRED", nil)
		refused("an unlisted input", p, body(func(b map[string]any) { b["inputMint"] = swapKey(99).String() }),
			http.StatusUnprocessableEntity, "TOKEN_NOT_TRUSTED", nil, "field", "inputMint", "reason", "not_listed")
		refused("a listed mint that does not exist", p, body(func(b map[string]any) { b["outputMint"] = swapKey(63).String() }),
			http.StatusUnprocessableEntity, "TOKEN_NOT_TRUSTED", nil, "field", "outputMint", "reason", "not_verified")
		refused("the same mint twice", p, body(func(b map[string]any) { b["outputMint"] = s.Token.Mint.String() }),
			http.StatusBadRequest, "INVALID_INPUT", nil, "field", "outputMint")
		refused("slippage below the policy", p, body(func(b map[string]any) { b["slippageBps"] = 5 }),
			http.StatusUnprocessableEntity, "SLIPPAGE_OUT_OF_POLICY", nil)
		refused("slippage above the policy", p, body(func(b map[string]any) { b["slippageBps"] = 301 }),
			http.StatusUnprocessableEntity, "SLIPPAGE_OUT_OF_POLICY", nil)
		for _, a := range []string{"0", "-1", "1e3", "1.0000000001", "", " 1", "+1", "abc"} {
			refused("amount "+a, p, body(func(b map[string]any) { b["amount"] = a }), http.StatusBadRequest, "INVALID_AMOUNT", nil)
		}
		refused("more than the balance", p, body(func(b map[string]any) { b["amount"] = "400000" }),
			http.StatusUnprocessableEntity, "INSUFFICIENT_BALANCE", nil)
		refused("an unreadable balance", p, body(nil), http.StatusServiceUnavailable, "BALANCE_UNAVAILABLE",
			func() { s.Cluster.Inject(chaintest.Fault{Method: "getTokenAccountBalance", HTTPStatus: 503}) })
		refused("no lamports for fees and rent", poor, quoteBody(s, poor, "1.5"),
			http.StatusUnprocessableEntity, "INSUFFICIENT_NATIVE_RESERVE", nil)
		refused("no route", p, body(nil), http.StatusUnprocessableEntity, "ROUTE_UNAVAILABLE", func() { agg.Inject(jupitertest.NoRoute("")) })
		refused("a rate-limited aggregator", p, body(nil), http.StatusServiceUnavailable, "PROVIDER_UNAVAILABLE",
			func() {
				agg.Inject(jupitertest.TooManyRequests(jupitertest.PathQuote, jupitertest.RateLimit{Remaining: 0, Current: 61, Reset: 1767225600}))
			})
		refused("a price impact past the policy", p, body(func(b map[string]any) { b["amount"] = "200000" }),
			http.StatusUnprocessableEntity, "PRICE_IMPACT_EXCEEDED", nil)

		// API keys are refused; so is another environment's wallet check.
		key := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/swap/quotes", Key: s.Boot.TestKey,
			Header: map[string]string{"Idempotency-Key": "by-key"}, Body: body(nil)})
		if key.Status != http.StatusUnauthorized && key.Status != http.StatusForbidden {
			t.Fatalf("an API key quoted: %d %s", key.Status, key.Body)
		}
		if rows := swapRows(t, s); rows != before {
			t.Fatalf("refusals wrote rows: %v, before %v", rows, before)
		}

		// Five failures to answer open the breaker: quoting pauses without
		// calling the aggregator, and the settings say why.
		agg.Inject(jupitertest.ServerError(jupitertest.PathQuote, http.StatusBadGateway))
		for i := range swap.DefaultBreakerThreshold {
			r := quoteAs(s, p, fmt.Sprintf("down-%d", i), body(nil))
			if r.Code() != "PROVIDER_UNAVAILABLE" {
				t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		calls := agg.Calls("/quote")
		r := quoteAs(s, p, "paused", body(nil))
		if r.Status != http.StatusServiceUnavailable || r.Code() != "SWAP_PAUSED" || agg.Calls("/quote") != calls {
			t.Fatalf("with the breaker open: %d %s (aggregator calls %d -> %d)", r.Status, r.Body, calls, agg.Calls("/quote"))
		}
		var set api.SwapSettingsView
		s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/settings", Cookie: p.cookie, Header: testMode}).Data(t, &set)
		if set.Status != swap.StatusPaused || set.StatusReason == nil || *set.StatusReason != "route_provider_circuit_open" {
			t.Fatalf("settings with the breaker open: %+v", set)
		}
		if rows := swapRows(t, s); rows != before {
			t.Fatalf("failed quotes wrote rows: %v, before %v", rows, before)
		}
	})
}

// BenchmarkSwapQuote quotes through the whole gateway on SQLite against
// the loopback cluster and aggregator (every quote reads the mints, the
// wallet's balances and the aggregator over HTTP, and writes its
// operation, quote, event and idempotency record), eight callers at once,
// and reports quotes per second with the p50 and p99 latency.
//
//	go test ./e2e -run '^$' -bench BenchmarkSwapQuote -benchtime 400x
func BenchmarkSwapQuote(b *testing.B) {
	s := platformtest.New(b, platformtest.Options{Chain: true, SwapFunc: swapEnv, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}})
	waitFor(b, "the registry's start-up verification", func() bool {
		var v api.SwapTokensView
		s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/tokens", Key: s.Boot.TestKey}).Data(b, &v)
		return v.VerifiedAt != nil
	})
	p := fundedBuyer(b, s, "bench-swap@example.test", 10_000_000_000)
	var (
		mu   sync.Mutex
		lat  []time.Duration
		next atomic.Int64
	)
	b.SetParallelism(4) // 4 × GOMAXPROCS callers: 8 on two cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t0 := time.Now()
			r := quoteAs(s, p, fmt.Sprintf("bench-%d", next.Add(1)), quoteBody(s, p, "1.5"))
			d := time.Since(t0)
			if r.Status != http.StatusCreated {
				b.Errorf("quote: %d %s", r.Status, r.Body)
				return
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}
	})
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "quotes/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
	}
	if n := count(b, s, "SELECT COUNT(*) FROM swap_quotes"); n != len(lat) {
		b.Fatalf("%d quotes stored for %d answered", n, len(lat))
	}
}
