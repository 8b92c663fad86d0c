package jupiter_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/swap/jupiter"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

const testKey = "jup-test-key-0123456789"

func addr(name string) chain.Address { return chain.Address(sha256.Sum256([]byte(name))) }

// rig is a cluster with two pools, the aggregator simulator and a client.
type rig struct {
	t       *testing.T
	c       *chaintest.Cluster
	sim     *jupitertest.Server
	client  *jupiter.Client
	plain   chain.Address  // classic SPL Token mint
	coin    chain.Address  // Token-2022 mint without fee
	feeMint chain.Address  // Token-2022 mint with a 2% transfer fee
	pool    chaintest.Pool // plain/coin, 1e12 / 5e11, 30 bps
	feePool chaintest.Pool // feeMint/coin, 1e12 / 5e11, 30 bps
	table   chain.Address  // the pool's lookup table
	feeTab  chain.Address  // the fee pool's lookup table
	user    chain.Address
}

func newRig(t *testing.T, simCfg jupitertest.Config, cfg jupiter.Config) *rig {
	t.Helper()
	c, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	r := &rig{t: t, c: c, plain: addr("plain"), coin: addr("coin"), feeMint: addr("fee")}
	_, r.user = chaintest.NewKeypair()
	data := token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})
	c.SetAccount(r.plain, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(len(data)), Data: data})
	if err := c.CreateMint(r.coin, token2022.Mint{Decimals: 9, IsInitialized: true}); err != nil {
		t.Fatal(err)
	}
	fee := token2022.TransferFee{MaximumFee: 1 << 62, BasisPoints: 200}
	if err := c.CreateMint(r.feeMint, token2022.Mint{Decimals: 9, IsInitialized: true,
		Extensions: []token2022.Extension{token2022.TransferFeeConfig{Older: fee, Newer: fee}}}); err != nil {
		t.Fatal(err)
	}
	if r.pool, r.table, err = jupitertest.SeedPool(c, chaintest.PoolConfig{MintA: r.plain, MintB: r.coin, ReserveA: 1e12, ReserveB: 5e11, FeeBps: 30}); err != nil {
		t.Fatal(err)
	}
	if r.feePool, r.feeTab, err = jupitertest.SeedPool(c, chaintest.PoolConfig{MintA: r.feeMint, MintB: r.coin, ReserveA: 1e12, ReserveB: 5e11, FeeBps: 30}); err != nil {
		t.Fatal(err)
	}
	if simCfg.APIKey == "" {
		simCfg.APIKey = testKey
	}
	r.sim, err = jupitertest.New(c, simCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.sim.Close() })
	if err := r.sim.AddPool(r.pool.Address, r.table); err != nil {
		t.Fatal(err)
	}
	if err := r.sim.AddPool(r.feePool.Address, r.feeTab); err != nil {
		t.Fatal(err)
	}
	cfg.BaseURL = r.sim.URL()
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.HTTPClient = urlguardtest.Client(t, r.sim.URL())
	r.client, err = jupiter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) quote(in, out chain.Address, amount uint64, slippage uint16) (jupiter.Quote, error) {
	return r.client.Quote(context.Background(), jupiter.QuoteRequest{InputMint: in.String(), OutputMint: out.String(),
		Amount: amount, SlippageBps: slippage, OnlyDirectRoutes: true})
}

func (r *rig) mustQuote(in, out chain.Address, amount uint64, slippage uint16) jupiter.Quote {
	r.t.Helper()
	q, err := r.quote(in, out, amount, slippage)
	if err != nil {
		r.t.Fatal(err)
	}
	return q
}

// requests lists the simulator's requests to path.
func (r *rig) requests(path string) []simctl.Event {
	var out []simctl.Event
	for _, ev := range r.sim.Events() {
		if strings.Contains(ev.Name, " "+path) {
			out = append(out, ev)
		}
	}
	return out
}

func TestQuoteMathPlainAndFeeMint(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	for _, tc := range []struct {
		name          string
		in            chain.Address
		pool          chain.Address
		out, min      uint64
		impact        string
		impactBps     int64
		stepInAmount  uint64
		stepOutAmount uint64
	}{
		// out = 5e11 × 2e9 × 9970 / (1e12 × 10000 + 2e9 × 9970) = 995,015,938.
		{"plain SPL mint", r.plain, r.pool.Address, 995_015_938, 990_040_858, "0.004984", 50, 2_000_000_000, 995_015_938},
		// 2% of 2e9 is withheld: 1.96e9 reaches the pool.
		// out = 5e11 × 1.96e9 × 9970 / (1e12 × 10000 + 1.96e9 × 9970) = 975,154,431.
		{"2% transfer-fee mint", r.feeMint, r.feePool.Address, 975_154_431, 970_278_658, "0.004944", 49, 2_000_000_000, 975_154_431},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := r.mustQuote(tc.in, r.coin, 2_000_000_000, 50)
			if q.InputMint != tc.in.String() || q.OutputMint != r.coin.String() || q.InAmount != 2_000_000_000 ||
				q.OutAmount != tc.out || q.OtherAmountThreshold != tc.min || q.SlippageBps != 50 || q.SwapMode != "ExactIn" ||
				q.PriceImpactPct != tc.impact || q.PriceImpactBps != tc.impactBps || q.PlatformFee != nil {
				t.Fatalf("quote: %+v", q)
			}
			if len(q.RoutePlan) != 1 {
				t.Fatalf("route plan: %+v", q.RoutePlan)
			}
			st := q.RoutePlan[0]
			if st.AmmKey != tc.pool.String() || st.Label != jupitertest.DefaultLabel || st.InputMint != tc.in.String() ||
				st.OutputMint != r.coin.String() || st.InAmount != tc.stepInAmount || st.OutAmount != tc.stepOutAmount ||
				st.Bps != 10000 || st.Percent == nil || *st.Percent != 100 {
				t.Fatalf("step: %+v", st)
			}
			if q.ContextSlot != r.c.Slot() || q.RequestID == "" {
				t.Fatalf("contextSlot %d (slot %d), request id %q", q.ContextSlot, r.c.Slot(), q.RequestID)
			}
		})
	}
}

func TestQuoteRawBytesAndHashAreStable(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	q := r.mustQuote(r.plain, r.coin, 1_000_000, 100)
	sum := sha256.Sum256(q.Raw)
	if q.Hash != hex.EncodeToString(sum[:]) || len(q.Hash) != 64 {
		t.Fatalf("hash %s is not the SHA-256 of the raw bytes", q.Hash)
	}
	// The simulator answers the same bytes for the same state; so the same hash.
	if again := r.mustQuote(r.plain, r.coin, 1_000_000, 100); again.Hash != q.Hash || !bytes.Equal(again.Raw, q.Raw) {
		t.Fatalf("hash changed for an identical answer: %s vs %s", again.Hash, q.Hash)
	}
	// Parsing the stored bytes gives the same quote.
	p, err := jupiter.ParseQuote(q.Raw)
	if err != nil {
		t.Fatal(err)
	}
	p.RequestID = q.RequestID
	if d := cmp.Diff(q, p); d != "" {
		t.Fatalf("ParseQuote differs (-Quote +ParseQuote):\n%s", d)
	}
	// Another state, another hash.
	r.c.AdvanceSlots(1)
	if moved := r.mustQuote(r.plain, r.coin, 1_000_000, 100); moved.Hash == q.Hash {
		t.Fatal("a quote at another slot has the same hash")
	}
}

func TestSwapInstructionsPostTheQuoteByteForByte(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, DynamicSwap: true, Times: 1})
	q := r.mustQuote(r.plain, r.coin, 2_000_000_000, 50)
	if !bytes.Contains(q.Raw, []byte(`"details":{"dynamicSwapV2"`)) || !bytes.Contains(q.Raw, []byte(`& co`)) {
		t.Fatalf("the dynamic quote lacks its undocumented fields: %s", q.Raw)
	}
	ins, err := r.client.SwapInstructions(context.Background(), q.Raw, jupiter.SwapRequest{UserPublicKey: r.user.String()})
	if err != nil {
		t.Fatal(err)
	}
	posted := r.requests(jupitertest.PathSwapInstructions)
	if len(posted) != 1 {
		t.Fatalf("%d posts", len(posted))
	}
	body := posted[0].Body
	if !bytes.HasPrefix(body, append([]byte(`{"quoteResponse":`), q.Raw...)) {
		t.Fatalf("the quote was not posted byte for byte:\n%s\n%s", body, q.Raw)
	}
	if !bytes.Contains(body, []byte(`"userPublicKey":"`+r.user.String()+`"`)) || !bytes.Contains(body, []byte(`"wrapAndUnwrapSol":false`)) ||
		bytes.Contains(body, []byte("dynamicSlippage")) {
		t.Fatalf("body fields: %s", body)
	}

	// The swap instruction carries the quote's amounts.
	d := ins.Swap.Data
	if ins.Swap.ProgramID != chaintest.PoolProgramID() || len(d) != 27 || binary.LittleEndian.Uint64(d[8:]) != q.InAmount ||
		binary.LittleEndian.Uint64(d[16:]) != q.OutAmount || binary.LittleEndian.Uint16(d[24:]) != q.SlippageBps {
		t.Fatalf("swap instruction: %+v", ins.Swap)
	}
	src := chaintest.AssociatedTokenAddress(r.user, r.plain, chain.Address(solana.TokenProgramID))
	if a := ins.Swap.Accounts; len(a) != 10 || a[1].Pubkey != r.user || !a[1].IsSigner || a[2].Pubkey != src || !a[2].IsWritable {
		t.Fatalf("swap accounts: %+v", ins.Swap.Accounts)
	}
	_, lastValid := r.c.LatestBlockhash()
	if len(ins.ComputeBudget) != 2 || len(ins.Setup) != 1 || ins.Cleanup != nil || ins.TokenLedger != nil || len(ins.Other) != 0 ||
		len(ins.AddressLookupTables) != 1 || ins.AddressLookupTables[0] != r.table || ins.AddressesByLookupTable != nil ||
		ins.LastValidBlockHeight != lastValid || ins.Blockhash != "" || ins.ComputeUnitLimit != jupitertest.DefaultComputeUnitLimit ||
		ins.ComputeUnitPriceMicroLamports != jupitertest.DefaultComputeUnitPrice || ins.PrioritizationFeeLamports != 1400 ||
		ins.RequestID != r.sim.LastRequestID() {
		t.Fatalf("instructions: %+v", ins)
	}

	// What a client that re-encodes the quote would post: refused as Jupiter does.
	var generic map[string]any
	if err := json.Unmarshal(q.Raw, &generic); err != nil {
		t.Fatal(err)
	}
	step := generic["routePlan"].([]any)[0].(map[string]any)["swapInfo"].(map[string]any)
	delete(step, "details")
	reencoded, _ := json.Marshal(generic)
	_, err = r.client.SwapInstructions(context.Background(), reencoded, jupiter.SwapRequest{UserPublicKey: r.user.String()})
	var ae *jupiter.APIError
	if !errors.Is(err, jupiter.ErrUnavailable) || !errors.As(err, &ae) || ae.Status != 500 || ae.Message != "Dynamic swap is missing dynamic swap details" {
		t.Fatalf("re-encoded quote: %v", err)
	}
}

func TestErrorClasses(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	user := jupiter.SwapRequest{UserPublicKey: r.user.String()}
	good := r.mustQuote(r.plain, r.coin, 1_000_000, 50)
	for _, tc := range []struct {
		name   string
		fault  *jupitertest.Fault
		call   func() error
		class  error
		code   fault.Code
		reason string
	}{
		{"no route", ptr(jupitertest.NoRoute("")), func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err },
			jupiter.ErrNoRoute, fault.RouteUnavailable, ""},
		{"NO_ROUTES_FOUND", ptr(jupitertest.NoRoute("NO_ROUTES_FOUND")), func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err },
			jupiter.ErrNoRoute, fault.RouteUnavailable, ""},
		{"TOKEN_NOT_TRADABLE", ptr(jupitertest.NoRoute("TOKEN_NOT_TRADABLE")), func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err },
			jupiter.ErrNoRoute, fault.RouteUnavailable, ""},
		{"no pool for the pair", nil, func() error { _, err := r.quote(r.plain, addr("nothing"), 1000, 50); return err },
			jupiter.ErrNoRoute, fault.RouteUnavailable, ""},
		{"circular", nil, func() error { _, err := r.quote(r.plain, r.plain, 1000, 50); return err },
			jupiter.ErrNoRoute, fault.RouteUnavailable, ""},
		{"no route without errorCode", &jupitertest.Fault{Path: jupitertest.PathQuote, Status: 400, Message: "Could not find any route"},
			func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err }, jupiter.ErrNoRoute, fault.RouteUnavailable, ""},
		{"500", ptr(jupitertest.ServerError(jupitertest.PathQuote, 500)), func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err },
			jupiter.ErrUnavailable, fault.ProviderUnavailable, jupiter.ReasonServerError},
		{"503 on instructions", ptr(jupitertest.ServerError(jupitertest.PathSwapInstructions, 503)),
			func() error { _, err := r.client.SwapInstructions(context.Background(), good.Raw, user); return err },
			jupiter.ErrUnavailable, fault.ProviderUnavailable, jupiter.ReasonServerError},
		{"malformed body", &jupitertest.Fault{Path: jupitertest.PathQuote, Body: `{"inputMint":`},
			func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err }, jupiter.ErrUnavailable, fault.ProviderUnavailable, jupiter.ReasonMalformedResponse},
		{"HTML error page", &jupitertest.Fault{Path: jupitertest.PathQuote, Status: 502, Body: `<html>bad gateway</html>`},
			func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err }, jupiter.ErrUnavailable, fault.ProviderUnavailable, jupiter.ReasonServerError},
		{"other 400", &jupitertest.Fault{Path: jupitertest.PathQuote, Status: 400, Message: "Query parameter amount cannot be parsed"},
			func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err }, jupiter.ErrRejected, fault.QuoteUnavailable, jupiter.ReasonProviderRejected},
		{"403", &jupitertest.Fault{Path: jupitertest.PathQuote, Status: 403, Message: "Request blocked by firewall"},
			func() error { _, err := r.quote(r.plain, r.coin, 1000, 50); return err }, jupiter.ErrRejected, fault.ProviderUnavailable, jupiter.ReasonCredentialRefused},
		{"simulation error", &jupitertest.Fault{Path: jupitertest.PathSwapInstructions,
			SimulationError: &jupitertest.SimulationError{ErrorCode: "TRANSACTION_ERROR", Message: "custom program error: 0x1771"}},
			func() error { _, err := r.client.SwapInstructions(context.Background(), good.Raw, user); return err },
			jupiter.ErrSimulationFailed, fault.SimulationFailed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.sim.ClearFaults()
			if tc.fault != nil {
				f := *tc.fault
				f.Times = 1
				r.sim.Inject(f)
			}
			err := tc.call()
			if !errors.Is(err, tc.class) || fault.CodeOf(err) != tc.code {
				t.Fatalf("got %v (code %s), want class %v code %s", err, fault.CodeOf(err), tc.class, tc.code)
			}
			for _, other := range []error{jupiter.ErrNoRoute, jupiter.ErrUnavailable, jupiter.ErrRejected, jupiter.ErrSimulationFailed} {
				if other != tc.class && errors.Is(err, other) {
					t.Fatalf("%v is also %v", err, other)
				}
			}
			_, _, details := fault.Public(err)
			if tc.reason != "" && details["reason"] != tc.reason {
				t.Fatalf("reason %v, want %s", details["reason"], tc.reason)
			}
			if _, ok := details["retryable"].(bool); !ok {
				t.Fatalf("details.retryable missing: %v", details)
			}
		})
	}
	r.sim.ClearFaults()
	r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathSwapInstructions, Times: 1,
		SimulationError: &jupitertest.SimulationError{ErrorCode: "TRANSACTION_ERROR", Message: "custom program error: 0x1771"}})
	_, err := r.client.SwapInstructions(context.Background(), good.Raw, user)
	var se *jupiter.SimulationError
	if !errors.As(err, &se) || se.ErrorCode != "TRANSACTION_ERROR" || se.Message != "custom program error: 0x1771" {
		t.Fatalf("simulation error: %v", err)
	}
}

func ptr(f jupitertest.Fault) *jupitertest.Fault { return &f }

func TestRateLimitHeadersSurface(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Times: 1,
		RateLimit: &jupitertest.RateLimit{Remaining: 0, Current: 61, Reset: 1_900_000_060}})
	_, err := r.quote(r.plain, r.coin, 1_000_000, 50)
	var rl *jupiter.RateLimited
	if !errors.Is(err, jupiter.ErrUnavailable) || !errors.As(err, &rl) || fault.CodeOf(err) != fault.ProviderUnavailable {
		t.Fatalf("429: %v", err)
	}
	if rl.Remaining == nil || *rl.Remaining != 0 || rl.Current == nil || *rl.Current != 61 || rl.Reset.Unix() != 1_900_000_060 ||
		rl.RequestID == "" || rl.RequestID != r.sim.LastRequestID() || rl.Message != "[API Gateway] Too many requests" {
		t.Fatalf("rate limit: %+v", rl)
	}
	_, _, details := fault.Public(err)
	if details["reason"] != jupiter.ReasonRateLimited || details["retryable"] != true || details["reset"] != int64(1_900_000_060) {
		t.Fatalf("details: %v", details)
	}
}

func TestAPIKeySentAndNeverInErrors(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	r.mustQuote(r.plain, r.coin, 1_000_000, 50)
	evs := r.requests(jupitertest.PathQuote)
	if len(evs) != 1 || evs[0].Header.Get("x-api-key") != testKey {
		t.Fatalf("x-api-key not sent: %+v", evs)
	}

	// A wrong key: 401, and neither key appears in the error.
	const wrong = "wrong-key-abcdef"
	bad, err := jupiter.New(jupiter.Config{BaseURL: r.sim.URL(), APIKey: wrong, HTTPClient: urlguardtest.Client(t, r.sim.URL())})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Quote(context.Background(), jupiter.QuoteRequest{InputMint: r.plain.String(), OutputMint: r.coin.String(), Amount: 1})
	if !errors.Is(err, jupiter.ErrRejected) || fault.CodeOf(err) != fault.ProviderUnavailable || strings.Contains(err.Error(), wrong) {
		t.Fatalf("wrong key: %v", err)
	}
	// An aggregator that echoes the key: removed from the error text.
	r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Times: 1, Status: 400, Message: "bad request with key " + testKey})
	_, err = r.quote(r.plain, r.coin, 1000, 50)
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("echoed key: %v", err)
	}
	cfg := jupiter.Config{BaseURL: r.sim.URL(), APIKey: testKey}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "jupiter", cfg)
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), logged.String()} {
		if strings.Contains(s, testKey) {
			t.Fatalf("the key is printed: %s", s)
		}
	}
}

func TestResponseSizeIsBounded(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{MaxResponseBytes: 512})
	for _, size := range []int{600, 64 << 10} { // with a Content-Length, and streamed
		body := `{"pad":"` + strings.Repeat("x", size) + `"}`
		r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Times: 1, Body: body})
		_, err := r.quote(r.plain, r.coin, 1000, 50)
		_, _, details := fault.Public(err)
		if !errors.Is(err, jupiter.ErrUnavailable) || details["reason"] != jupiter.ReasonResponseTooLarge {
			t.Fatalf("%d bytes: %v", len(body), err)
		}
	}
}

func TestSlowAnswerHitsTheTimeout(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{Timeout: 150 * time.Millisecond})
	r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Times: 1, Delay: 5 * time.Second})
	start := time.Now()
	_, err := r.quote(r.plain, r.coin, 1_000_000, 50)
	elapsed := time.Since(start)
	_, _, details := fault.Public(err)
	if !errors.Is(err, jupiter.ErrUnavailable) || details["reason"] != jupiter.ReasonTimeout || details["retryable"] != true {
		t.Fatalf("slow answer: %v", err)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("the timeout took %v", elapsed)
	}
	// A delay within the timeout is only slow.
	r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Times: 1, Delay: 20 * time.Millisecond})
	if _, err := r.quote(r.plain, r.coin, 1_000_000, 50); err != nil {
		t.Fatal(err)
	}
}

func TestV2Answers(t *testing.T) {
	r := newRig(t, jupitertest.Config{V2: true}, jupiter.Config{Version: jupiter.V2})
	q := r.mustQuote(r.plain, r.coin, 2_000_000_000, 50)
	if q.SwapMode != "" || q.RoutePlan[0].Percent != nil || q.RoutePlan[0].Bps != 10000 || q.OutAmount != 995_015_938 {
		t.Fatalf("V2 quote: %+v", q)
	}
	ins, err := r.client.SwapInstructions(context.Background(), q.Raw, jupiter.SwapRequest{UserPublicKey: r.user.String()})
	if err != nil {
		t.Fatal(err)
	}
	body := r.requests(jupitertest.PathSwapInstructions)[0].Body
	if !bytes.Contains(body, []byte(`"taker":"`+r.user.String()+`"`)) || bytes.Contains(body, []byte("userPublicKey")) {
		t.Fatalf("V2 body: %s", body)
	}
	hash, lastValid := r.c.LatestBlockhash()
	if ins.Blockhash != hash.String() || ins.LastValidBlockHeight != lastValid || len(ins.AddressLookupTables) != 1 ||
		ins.AddressLookupTables[0] != r.table || ins.AddressesByLookupTable == nil {
		t.Fatalf("V2 instructions: %+v", ins)
	}
	if _, ok := ins.AddressesByLookupTable[r.table]; !ok {
		t.Fatalf("table missing: %+v", ins.AddressesByLookupTable)
	}
}

func TestQuoteMustEchoTheRequest(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	q := r.mustQuote(r.plain, r.coin, 1_000_000, 50)
	// The aggregator answers a quote for another amount.
	r.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Times: 1, Body: string(q.Raw)})
	_, err := r.quote(r.plain, r.coin, 2_000_000, 50)
	_, _, details := fault.Public(err)
	if !errors.Is(err, jupiter.ErrUnavailable) || details["reason"] != jupiter.ReasonQuoteMismatch || details["field"] != "inAmount" {
		t.Fatalf("mismatch: %v %v", err, details)
	}
}

func TestRequestsRefusedBeforeSending(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	ctx := context.Background()
	for name, req := range map[string]jupiter.QuoteRequest{
		"inputMint":   {InputMint: "not-base58-0OIl", OutputMint: r.coin.String(), Amount: 1},
		"amount":      {InputMint: r.plain.String(), OutputMint: r.coin.String()},
		"slippageBps": {InputMint: r.plain.String(), OutputMint: r.coin.String(), Amount: 1, SlippageBps: 10001},
		"dexes":       {InputMint: r.plain.String(), OutputMint: r.coin.String(), Amount: 1, Dexes: []string{"a"}, ExcludeDexes: []string{"b"}},
	} {
		if _, err := r.client.Quote(ctx, req); fault.CodeOf(err) != fault.InvalidInput {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, raw := range map[string]string{"empty": "", "array": "[]", "broken": `{"a":`} {
		if _, err := r.client.SwapInstructions(ctx, json.RawMessage(raw), jupiter.SwapRequest{UserPublicKey: r.user.String()}); fault.CodeOf(err) != fault.InvalidInput {
			t.Errorf("quote %s: %v", name, err)
		}
	}
	if _, err := r.client.SwapInstructions(ctx, json.RawMessage(`{}`), jupiter.SwapRequest{UserPublicKey: r.user.String(),
		ComputeUnitPriceMicroLamports: 1, PrioritizationFeeLamports: 1}); fault.CodeOf(err) != fault.InvalidInput {
		t.Errorf("price and fee: %v", err)
	}
	if n := r.sim.Calls(jupitertest.PathQuote) + r.sim.Calls(jupitertest.PathSwapInstructions); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
	// Without a client of its own, the adapter keeps the URL guard: loopback is refused.
	if _, err := jupiter.New(jupiter.Config{BaseURL: r.sim.URL()}); fault.CodeOf(err) != fault.InvalidInput {
		t.Fatalf("loopback base URL without a client: %v", err)
	}
	if _, err := jupiter.New(jupiter.Config{BaseURL: jupiter.DefaultBaseURL}); err != nil {
		t.Fatalf("default base URL: %v", err)
	}
}
