package jupitertest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
)

// addr is a deterministic address for a name.
func addr(name string) chain.Address { return chain.Address(sha256.Sum256([]byte(name))) }

type env struct {
	t       *testing.T
	c       *chaintest.Cluster
	sim     *jupitertest.Server
	plain   chain.Address // classic SPL Token mint, 6 decimals
	coin    chain.Address // Token-2022 mint without extensions, 9 decimals
	feeMint chain.Address // Token-2022 mint: 100 bps until epoch 2, then 200 bps
	pool    chain.Address // plain/coin, 1e12 / 5e11, 30 bps
	feePool chain.Address // feeMint/coin, 1e12 / 5e11, 30 bps
	table   chain.Address // the pool's lookup table
	feeTab  chain.Address // the fee pool's lookup table
}

func newEnv(t *testing.T, cfg jupitertest.Config) *env {
	t.Helper()
	c, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := &env{t: t, c: c, plain: addr("plain mint"), coin: addr("coin mint"), feeMint: addr("fee mint")}
	data := token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})
	c.SetAccount(e.plain, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(len(data)), Data: data})
	if err := c.CreateMint(e.coin, token2022.Mint{Decimals: 9, IsInitialized: true}); err != nil {
		t.Fatal(err)
	}
	fee := token2022.TransferFeeConfig{Older: token2022.TransferFee{Epoch: 0, MaximumFee: 1 << 62, BasisPoints: 100},
		Newer: token2022.TransferFee{Epoch: 2, MaximumFee: 1 << 62, BasisPoints: 200}}
	if err := c.CreateMint(e.feeMint, token2022.Mint{Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{fee}}); err != nil {
		t.Fatal(err)
	}
	e.pool, e.table = e.seed(chaintest.PoolConfig{MintA: e.plain, MintB: e.coin, ReserveA: 1e12, ReserveB: 5e11, FeeBps: 30})
	e.feePool, e.feeTab = e.seed(chaintest.PoolConfig{MintA: e.feeMint, MintB: e.coin, ReserveA: 1e12, ReserveB: 5e11, FeeBps: 30})
	sim, err := jupitertest.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	e.sim = sim
	if err := sim.AddPool(e.pool, e.table); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddPool(e.feePool, e.feeTab); err != nil {
		t.Fatal(err)
	}
	return e
}

// seed creates a pool and its lookup table, and returns their addresses.
func (e *env) seed(cfg chaintest.PoolConfig) (pool, table chain.Address) {
	e.t.Helper()
	p, table, err := jupitertest.SeedPool(e.c, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return p.Address, table
}

// do sends a request and returns status, header and body.
func (e *env) do(method, path string, body []byte, header map[string]string) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.sim.URL()+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func (e *env) quote(in, out chain.Address, amount uint64, slippage int) (int, []byte) {
	e.t.Helper()
	q := url.Values{"inputMint": {in.String()}, "outputMint": {out.String()},
		"amount": {strconv.FormatUint(amount, 10)}, "slippageBps": {strconv.Itoa(slippage)}}
	status, _, b := e.do(http.MethodGet, "/quote?"+q.Encode(), nil, nil)
	return status, b
}

// mustQuote returns a quote's raw bytes and its decoded form.
func (e *env) mustQuote(in, out chain.Address, amount uint64, slippage int) ([]byte, map[string]any) {
	e.t.Helper()
	status, b := e.quote(in, out, amount, slippage)
	if status != http.StatusOK {
		e.t.Fatalf("quote: %d %s", status, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		e.t.Fatal(err)
	}
	return b, m
}

// swapBody splices raw into a /swap-instructions body.
func swapBody(raw []byte, rest string) []byte {
	return []byte(`{"quoteResponse":` + string(raw) + `,` + rest + `}`)
}

type wireIx struct {
	ProgramID string `json:"programId"`
	Accounts  []struct {
		Pubkey     string `json:"pubkey"`
		IsSigner   bool   `json:"isSigner"`
		IsWritable bool   `json:"isWritable"`
	} `json:"accounts"`
	Data string `json:"data"`
}

type wireInstructions struct {
	ComputeBudgetInstructions     []wireIx            `json:"computeBudgetInstructions"`
	SetupInstructions             []wireIx            `json:"setupInstructions"`
	SwapInstruction               wireIx              `json:"swapInstruction"`
	CleanupInstruction            *wireIx             `json:"cleanupInstruction"`
	OtherInstructions             []wireIx            `json:"otherInstructions"`
	AddressLookupTableAddresses   []string            `json:"addressLookupTableAddresses"`
	AddressesByLookupTableAddress map[string][]string `json:"addressesByLookupTableAddress"`
	ComputeUnitLimit              uint32              `json:"computeUnitLimit"`
	PrioritizationFeeLamports     uint64              `json:"prioritizationFeeLamports"`
	PrioritizationType            struct {
		ComputeBudget struct {
			MicroLamports uint64 `json:"microLamports"`
		} `json:"computeBudget"`
	} `json:"prioritizationType"`
	SimulationError *struct {
		ErrorCode string `json:"errorCode"`
		Error     string `json:"error"`
	} `json:"simulationError"`
	LastValidBlockHeight  *uint64 `json:"lastValidBlockHeight"`
	BlockhashWithMetadata *struct {
		Blockhash            []int  `json:"blockhash"`
		LastValidBlockHeight uint64 `json:"lastValidBlockHeight"`
	} `json:"blockhashWithMetadata"`
}

func (e *env) instructions(body []byte) (int, []byte, wireInstructions) {
	e.t.Helper()
	status, _, b := e.do(http.MethodPost, jupitertest.PathSwapInstructions, body, map[string]string{"Content-Type": "application/json"})
	var w wireInstructions
	if status == http.StatusOK {
		if err := json.Unmarshal(b, &w); err != nil {
			e.t.Fatalf("instructions: %v: %s", err, b)
		}
	}
	return status, b, w
}

func data(t *testing.T, ix wireIx) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(ix.Data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestQuoteFollowsTheInputMintsFeeAtTheCurrentEpoch(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	// Epoch 0: 100 bps on 2e9 is 2e7, so 1.98e9 reaches the pool.
	_, q := e.mustQuote(e.feeMint, e.coin, 2_000_000_000, 50)
	if q["outAmount"] != "985085382" || q["otherAmountThreshold"] != "980159955" || q["priceImpactPct"] != "0.004964" {
		t.Fatalf("epoch 0 quote: %v", q)
	}
	// Epoch 2: the newer 200 bps is in force, so 1.96e9 reaches the pool.
	e.c.SetEpoch(2)
	_, q = e.mustQuote(e.feeMint, e.coin, 2_000_000_000, 50)
	if q["outAmount"] != "975154431" || q["otherAmountThreshold"] != "970278658" || q["priceImpactPct"] != "0.004944" {
		t.Fatalf("epoch 2 quote: %v", q)
	}
	if got, want := q["contextSlot"], float64(e.c.Slot()); got != want {
		t.Fatalf("contextSlot %v, want %v", got, want)
	}
}

func TestQuoteRoutesBothWaysAndPicksTheBestPool(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	// coin -> plain through the pool: reserves 5e11 in, 1e12 out.
	_, q := e.mustQuote(e.coin, e.plain, 1_000_000_000, 0)
	if q["outAmount"] != "1990031876" || q["otherAmountThreshold"] != "1990031876" || q["priceImpactPct"] != "0.004984" {
		t.Fatalf("reverse quote: %v", q)
	}
	// A deeper pool of the same pair gives more and wins.
	deep, _ := e.seed(chaintest.PoolConfig{MintA: e.coin, MintB: e.plain, ReserveA: 5e12, ReserveB: 1e13, FeeBps: 30})
	if err := e.sim.AddPool(deep, chain.Address{}); err != nil {
		t.Fatal(err)
	}
	_, q = e.mustQuote(e.coin, e.plain, 1_000_000_000, 0)
	step := q["routePlan"].([]any)[0].(map[string]any)
	info := step["swapInfo"].(map[string]any)
	if info["ammKey"] != deep.String() || info["label"] != jupitertest.DefaultLabel || step["bps"] != float64(10000) || step["percent"] != float64(100) {
		t.Fatalf("route step: %v", step)
	}
	if want := chaintest.PoolAmountOut(5e12, 1e13, 1_000_000_000, 30); q["outAmount"] != strconv.FormatUint(want, 10) || want <= 1990031876 {
		t.Fatalf("outAmount %v, want %d (above the shallow pool's)", q["outAmount"], want)
	}
}

func TestQuoteRefusals(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	other := addr("unlisted mint")
	for _, tc := range []struct {
		name      string
		in, out   chain.Address
		amount    uint64
		status    int
		errorCode string
	}{
		{"no pool for the pair", e.plain, other, 1000, 400, "COULD_NOT_FIND_ANY_ROUTE"},
		{"equal mints", e.plain, e.plain, 1000, 400, "CIRCULAR_ARBITRAGE_IS_DISABLED"},
		{"output rounds to zero", e.plain, e.coin, 1, 400, "COULD_NOT_FIND_ANY_ROUTE"},
		{"zero amount", e.plain, e.coin, 0, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, b := e.quote(tc.in, tc.out, tc.amount, 50)
			var eb struct{ Error, ErrorCode string }
			if err := json.Unmarshal(b, &eb); err != nil || status != tc.status || eb.ErrorCode != tc.errorCode || eb.Error == "" {
				t.Fatalf("got %d %s", status, b)
			}
		})
	}
}

func TestSwapInstructionsFollowThePoolContract(t *testing.T) {
	e := newEnv(t, jupitertest.Config{ComputeUnitPrice: 5000})
	_, user := chaintest.NewKeypair()
	raw, _ := e.mustQuote(e.plain, e.coin, 2_000_000_000, 50)
	status, b, w := e.instructions(swapBody(raw, `"userPublicKey":"`+user.String()+`","wrapAndUnwrapSol":false`))
	if status != http.StatusOK {
		t.Fatalf("swap-instructions: %d %s", status, b)
	}
	tokenProg, t22 := chain.Address(solana.TokenProgramID), chain.Address(solana.Token2022ProgramID)
	src := chaintest.AssociatedTokenAddress(user, e.plain, tokenProg)
	dst := chaintest.AssociatedTokenAddress(user, e.coin, t22)

	sw := w.SwapInstruction
	if sw.ProgramID != chaintest.PoolProgramID().String() {
		t.Fatalf("swap program %s", sw.ProgramID)
	}
	want := []struct {
		key              chain.Address
		signer, writable bool
	}{
		{e.pool, false, true}, {user, true, false}, {src, false, true}, {dst, false, true},
		{chaintest.PoolVaultAddress(e.pool, e.plain), false, true}, {chaintest.PoolVaultAddress(e.pool, e.coin), false, true},
		{e.plain, false, false}, {e.coin, false, false}, {tokenProg, false, false}, {t22, false, false},
	}
	if len(sw.Accounts) != len(want) {
		t.Fatalf("swap accounts: %d, want %d", len(sw.Accounts), len(want))
	}
	for i, a := range sw.Accounts {
		if a.Pubkey != want[i].key.String() || a.IsSigner != want[i].signer || a.IsWritable != want[i].writable {
			t.Errorf("account %d: %+v, want %s signer=%v writable=%v", i, a, want[i].key, want[i].signer, want[i].writable)
		}
	}
	d := data(t, sw)
	if len(d) != 27 || !bytes.Equal(d[:8], []byte{229, 23, 203, 151, 122, 227, 173, 42}) ||
		binary.LittleEndian.Uint64(d[8:]) != 2_000_000_000 || binary.LittleEndian.Uint64(d[16:]) != 995015938 ||
		binary.LittleEndian.Uint16(d[24:]) != 50 || d[26] != 0 {
		t.Fatalf("swap data % x", d)
	}

	// The output account does not exist: one idempotent create, paid by the user.
	if len(w.SetupInstructions) != 1 {
		t.Fatalf("setup: %+v", w.SetupInstructions)
	}
	ata := w.SetupInstructions[0]
	if ata.ProgramID != token2022.AssociatedTokenProgramID().String() || !bytes.Equal(data(t, ata), []byte{1}) ||
		ata.Accounts[0].Pubkey != user.String() || !ata.Accounts[0].IsSigner || ata.Accounts[1].Pubkey != dst.String() ||
		ata.Accounts[2].Pubkey != user.String() || ata.Accounts[3].Pubkey != e.coin.String() || ata.Accounts[5].Pubkey != t22.String() {
		t.Fatalf("setup instruction: %+v", ata)
	}

	// Compute budget: limit and price as the metadata reports them.
	if len(w.ComputeBudgetInstructions) != 2 {
		t.Fatalf("compute budget: %+v", w.ComputeBudgetInstructions)
	}
	lim, price := data(t, w.ComputeBudgetInstructions[0]), data(t, w.ComputeBudgetInstructions[1])
	if lim[0] != 2 || binary.LittleEndian.Uint32(lim[1:]) != w.ComputeUnitLimit || w.ComputeUnitLimit != jupitertest.DefaultComputeUnitLimit ||
		price[0] != 3 || binary.LittleEndian.Uint64(price[1:]) != 5000 || w.PrioritizationType.ComputeBudget.MicroLamports != 5000 ||
		w.PrioritizationFeeLamports != 7000 {
		t.Fatalf("compute budget metadata: limit %d price %d fee %d", w.ComputeUnitLimit, w.PrioritizationType.ComputeBudget.MicroLamports, w.PrioritizationFeeLamports)
	}
	_, lastValid := e.c.LatestBlockhash()
	if w.CleanupInstruction != nil || len(w.OtherInstructions) != 0 || w.SimulationError != nil ||
		len(w.AddressLookupTableAddresses) != 1 || w.AddressLookupTableAddresses[0] != e.table.String() ||
		w.LastValidBlockHeight == nil || *w.LastValidBlockHeight != lastValid {
		t.Fatalf("answer: %s", b)
	}

	// Once the output account exists, no setup; a price from a fee.
	if _, err := e.c.MintTo(user, e.coin, 1); err != nil {
		t.Fatal(err)
	}
	status, b, w = e.instructions(swapBody(raw, `"userPublicKey":"`+user.String()+`","prioritizationFeeLamports":14000`))
	if status != http.StatusOK || len(w.SetupInstructions) != 0 || w.PrioritizationType.ComputeBudget.MicroLamports != 10000 || w.PrioritizationFeeLamports != 14000 {
		t.Fatalf("second answer: %d %s", status, b)
	}
	status, b, _ = e.instructions(swapBody(raw, `"userPublicKey":"`+user.String()+`","prioritizationFeeLamports":14000,"computeUnitPriceMicroLamports":1`))
	if status != http.StatusBadRequest || !bytes.Contains(b, []byte("INVALID_COMPUTE_UNIT_PRICE_AND_PRIORITIZATION_FEE")) {
		t.Fatalf("both price and fee: %d %s", status, b)
	}
}

func TestPostedQuoteMustBeOneItIssuedUnaltered(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	_, user := chaintest.NewKeypair()
	rest := `"userPublicKey":"` + user.String() + `"`

	e.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, DynamicSwap: true, Times: 1})
	raw, q := e.mustQuote(e.plain, e.coin, 2_000_000_000, 50)
	info := q["routePlan"].([]any)[0].(map[string]any)["swapInfo"].(map[string]any)
	if _, ok := info["details"]; !ok || !bytes.Contains(raw, []byte(`"<loopback> & co"`)) || q["swapUsdValue"] == nil {
		t.Fatalf("dynamic quote lacks its undocumented fields: %s", raw)
	}
	if status, b, _ := e.instructions(swapBody(raw, rest)); status != http.StatusOK {
		t.Fatalf("exact bytes: %d %s", status, b)
	}

	// Re-serialized with encoding/json's defaults: same content, other bytes.
	reencoded, err := json.Marshal(q)
	if err != nil || bytes.Equal(reencoded, raw) {
		t.Fatalf("re-encoding kept the bytes (%v)", err)
	}
	if status, b, _ := e.instructions(swapBody(reencoded, rest)); status != http.StatusBadRequest {
		t.Fatalf("re-encoded with details: %d %s", status, b)
	}
	// Re-serialized through a schema that drops the details: Jupiter's 500.
	delete(info, "details")
	stripped, _ := json.Marshal(q)
	status, b, _ := e.instructions(swapBody(stripped, rest))
	if status != http.StatusInternalServerError || !bytes.Contains(b, []byte("Dynamic swap is missing dynamic swap details")) {
		t.Fatalf("stripped: %d %s", status, b)
	}
	// Altered amounts.
	altered := bytes.Replace(raw, []byte(`"outAmount":"995015938"`), []byte(`"outAmount":"995015939"`), 1)
	if status, b, _ := e.instructions(swapBody(altered, rest)); status != http.StatusBadRequest {
		t.Fatalf("altered: %d %s", status, b)
	}
	// A quote that never came from here, and no quote at all.
	if status, b, _ := e.instructions([]byte(`{"quoteResponse":{"inputMint":"x"},` + rest + `}`)); status != http.StatusBadRequest {
		t.Fatalf("foreign: %d %s", status, b)
	}
	if status, b, _ := e.instructions([]byte(`{` + rest + `}`)); status != http.StatusBadRequest || !bytes.Contains(b, []byte("quoteResponse")) {
		t.Fatalf("missing quote: %d %s", status, b)
	}
}

func TestFaultsAndCalls(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	throttle := jupitertest.TooManyRequests(jupitertest.PathQuote, jupitertest.RateLimit{Remaining: -2, Current: 62, Reset: 1_900_000_000})
	throttle.Times = 1
	noRoute := jupitertest.NoRoute("TOKEN_NOT_TRADABLE")
	noRoute.Times = 1
	e.sim.Inject(throttle)
	e.sim.Inject(noRoute)
	q := url.Values{"inputMint": {e.plain.String()}, "outputMint": {e.coin.String()}, "amount": {"1000000"}}
	status, h, b := e.do(http.MethodGet, "/quote?"+q.Encode(), nil, nil)
	if status != http.StatusTooManyRequests || h.Get("x-ratelimit-remaining") != "-2" || h.Get("x-ratelimit-current") != "62" ||
		h.Get("x-ratelimit-reset") != "1900000000" || h.Get("x-api-gateway-request-id") != e.sim.LastRequestID() || e.sim.LastRequestID() == "" {
		t.Fatalf("429: %d %v %s", status, h, b)
	}
	status, _, b = e.do(http.MethodGet, "/quote?"+q.Encode(), nil, nil)
	if status != http.StatusBadRequest || !bytes.Contains(b, []byte(`"errorCode":"TOKEN_NOT_TRADABLE"`)) {
		t.Fatalf("no route: %d %s", status, b)
	}
	status, h, b = e.do(http.MethodGet, "/quote?"+q.Encode(), nil, nil)
	if status != http.StatusOK || h.Get("x-ratelimit-current") == "" || h.Get("x-ratelimit-remaining") == "" {
		t.Fatalf("faults used up: %d %v %s", status, h, b)
	}

	// A delay holds the answer; a bare body replaces it.
	e.sim.Inject(jupitertest.Slow(jupitertest.PathQuote, 150*time.Millisecond))
	e.sim.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Body: `{"inputMint":`, Times: 1})
	start := time.Now()
	status, _, b = e.do(http.MethodGet, "/quote?"+q.Encode(), nil, nil)
	if status != http.StatusOK || string(b) != `{"inputMint":` || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("slow malformed: %d %s after %v", status, b, time.Since(start))
	}
	e.sim.ClearFaults()

	// A simulation error rides on the instructions; a 5xx on every path.
	raw, _ := e.mustQuote(e.plain, e.coin, 1_000_000, 50)
	e.sim.Inject(jupitertest.Fault{Path: jupitertest.PathSwapInstructions, Times: 1,
		SimulationError: &jupitertest.SimulationError{ErrorCode: "TRANSACTION_ERROR", Message: "custom program error: 0x1771"}})
	_, user := chaintest.NewKeypair()
	status, b, w := e.instructions(swapBody(raw, `"userPublicKey":"`+user.String()+`"`))
	if status != http.StatusOK || w.SimulationError == nil || w.SimulationError.ErrorCode != "TRANSACTION_ERROR" {
		t.Fatalf("simulation error: %d %s", status, b)
	}
	e.sim.Inject(jupitertest.ServerError("", http.StatusBadGateway))
	if status, _, _ := e.do(http.MethodGet, "/quote?"+q.Encode(), nil, nil); status != http.StatusBadGateway {
		t.Fatalf("5xx: %d", status)
	}
	e.sim.ClearFaults()

	if got := e.sim.Calls(jupitertest.PathQuote); got != 6 {
		t.Fatalf("quote calls %d, want 6", got)
	}
	if got := e.sim.Calls(jupitertest.PathSwapInstructions); got != 1 {
		t.Fatalf("swap-instructions calls %d, want 1", got)
	}
}

func TestAPIKey(t *testing.T) {
	e := newEnv(t, jupitertest.Config{APIKey: "k-123"})
	q := "/quote?" + url.Values{"inputMint": {e.plain.String()}, "outputMint": {e.coin.String()}, "amount": {"1000000"}}.Encode()
	for _, tc := range []struct {
		key    string
		status int
	}{{"", 200}, {"k-123", 200}, {"other", 401}} {
		h := map[string]string{}
		if tc.key != "" {
			h["x-api-key"] = tc.key
		}
		if status, _, b := e.do(http.MethodGet, q, nil, h); status != tc.status {
			t.Errorf("key %q: %d %s", tc.key, status, b)
		}
	}
	strict := newEnv(t, jupitertest.Config{APIKey: "k-123", RequireKey: true})
	if status, _, _ := strict.do(http.MethodGet, q, nil, nil); status != http.StatusUnauthorized {
		t.Fatalf("keyless with RequireKey: %d", status)
	}
}

func TestV2Shape(t *testing.T) {
	e := newEnv(t, jupitertest.Config{V2: true})
	keys := []chain.Address{addr("k1"), addr("k2")}
	table, err := e.c.CreateLookupTable(addr("table authority"), keys)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sim.AddPool(e.pool, table); err != nil {
		t.Fatal(err)
	}
	e.table = table
	raw, q := e.mustQuote(e.plain, e.coin, 2_000_000_000, 50)
	step := q["routePlan"].([]any)[0].(map[string]any)
	if p, ok := step["percent"]; !ok || p != nil || q["swapMode"] != nil {
		t.Fatalf("V2 quote: %s", raw)
	}
	_, user := chaintest.NewKeypair()
	status, b, w := e.instructions(swapBody(raw, `"taker":"`+user.String()+`"`))
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, b)
	}
	hash, lastValid := e.c.LatestBlockhash()
	got := w.AddressesByLookupTableAddress[e.table.String()]
	if w.AddressLookupTableAddresses != nil || w.LastValidBlockHeight != nil || len(got) != 2 || got[0] != keys[0].String() || got[1] != keys[1].String() {
		t.Fatalf("V2 tables: %s", b)
	}
	bm := w.BlockhashWithMetadata
	if bm == nil || len(bm.Blockhash) != 32 || bm.LastValidBlockHeight != lastValid {
		t.Fatalf("V2 blockhash: %s", b)
	}
	for i, v := range bm.Blockhash {
		if byte(v) != hash[i] {
			t.Fatalf("blockhash byte %d", i)
		}
	}
	if w.SwapInstruction.Accounts[1].Pubkey != user.String() || !strings.Contains(string(b), `"swapInstruction"`) {
		t.Fatalf("taker is not the authority: %s", b)
	}
}

func TestDelayEndsWithTheClient(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	e.sim.Inject(jupitertest.Slow("", time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.sim.URL()+"/quote", nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a minute's delay answered within 100ms")
	}
	start := time.Now()
	if err := e.sim.Close(); err != nil || time.Since(start) > 5*time.Second {
		t.Fatalf("Close: %v after %v", err, time.Since(start))
	}
}

func TestSeedPoolFollowsTheContractLayout(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	acct, ok := e.c.Account(e.feePool)
	if !ok || acct.Owner != chaintest.PoolProgramID() || len(acct.Data) != 202 || string(acct.Data[:8]) != "cppool01" {
		t.Fatalf("pool account: %+v", acct)
	}
	vaultA, vaultB := chaintest.PoolVaultAddress(e.feePool, e.feeMint), chaintest.PoolVaultAddress(e.feePool, e.coin)
	t22 := chain.Address(solana.Token2022ProgramID)
	for _, f := range []struct {
		off  int
		want chain.Address
	}{{8, e.feeMint}, {40, e.coin}, {72, vaultA}, {104, vaultB}, {138, t22}, {170, t22}} {
		if got := chain.Address(acct.Data[f.off : f.off+32]); got != f.want {
			t.Errorf("offset %d: %s, want %s", f.off, got, f.want)
		}
	}
	if binary.LittleEndian.Uint16(acct.Data[136:]) != 30 {
		t.Errorf("fee bps %d", binary.LittleEndian.Uint16(acct.Data[136:]))
	}
	if want := chain.Address(sha256.Sum256([]byte("chaintest/constant-product-pool/v1"))); chaintest.PoolProgramID() != want {
		t.Fatal("pool program id")
	}
	for _, v := range []struct {
		addr   chain.Address
		mint   chain.Address
		amount uint64
	}{{vaultA, e.feeMint, 1e12}, {vaultB, e.coin, 5e11}} {
		va, ok := e.c.Account(v.addr)
		if !ok || va.Owner != t22 {
			t.Fatalf("vault %s: %+v", v.addr, va)
		}
		ta, err := token2022.DecodeAccount(va.Data)
		if err != nil || ta.Mint != v.mint || ta.Owner != e.feePool || ta.Amount != v.amount {
			t.Fatalf("vault %s: %+v %v", v.addr, ta, err)
		}
		if _, fee := ta.TransferFeeAmount(); fee != (v.mint == e.feeMint) {
			t.Fatalf("vault %s: TransferFeeAmount present=%v", v.addr, fee)
		}
	}
	mintAcct, _ := e.c.Account(e.feeMint)
	if m, err := token2022.DecodeMint(mintAcct.Data); err != nil || m.Supply != 1e12 {
		t.Fatalf("fee mint supply: %+v %v", m, err)
	}
}

func TestSeedPoolFillsTheLookupTable(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	pools := e.c.Pools()
	var p chaintest.Pool
	for _, q := range pools {
		if q.Address == e.pool {
			p = q
		}
	}
	if p.Address != e.pool {
		t.Fatalf("the cluster does not list pool %s among %+v", e.pool, pools)
	}
	acct, ok := e.c.Account(e.table)
	if !ok || acct.Owner != chaintest.LookupTableProgramID() {
		t.Fatalf("table account: %+v", acct)
	}
	lt, err := message.DecodeLookupTable(e.table, acct.Data)
	if err != nil {
		t.Fatal(err)
	}
	tokenProg, t22 := chain.Address(solana.TokenProgramID), chain.Address(solana.Token2022ProgramID)
	want := []chain.Address{e.pool, p.VaultA, p.VaultB, e.plain, e.coin, tokenProg, t22}
	if !slices.Equal(lt.Addresses, want) || !slices.Equal(jupitertest.PoolAccounts(p), want) {
		t.Fatalf("table holds %v, want %v", lt.Addresses, want)
	}
	// Both of the fee pool's mints are Token-2022: its program is listed once.
	feeTable, err := e.c.LookupTable(e.feeTab)
	if err != nil {
		t.Fatal(err)
	}
	if want := []chain.Address{e.feePool, chaintest.PoolVaultAddress(e.feePool, e.feeMint), chaintest.PoolVaultAddress(e.feePool, e.coin),
		e.feeMint, e.coin, t22}; !slices.Equal(feeTable.Addresses, want) {
		t.Fatalf("fee table holds %v, want %v", feeTable.Addresses, want)
	}
	// A pair of the same mint is refused by the cluster's constructor.
	if _, _, err := jupitertest.SeedPool(e.c, chaintest.PoolConfig{MintA: e.coin, MintB: e.coin, ReserveA: 1, ReserveB: 1}); err == nil {
		t.Fatal("SeedPool accepted a pool of one mint")
	}
}

// TestSwapInstructionIsThePoolProgramsOwn compares every swap instruction
// the simulator sends with the one chaintest's constructor builds for the
// same quote, byte for byte.
func TestSwapInstructionIsThePoolProgramsOwn(t *testing.T) {
	e := newEnv(t, jupitertest.Config{})
	byAddr := map[chain.Address]chaintest.Pool{}
	for _, p := range e.c.Pools() {
		byAddr[p.Address] = p
	}
	_, user := chaintest.NewKeypair()
	tokenProg, t22 := chain.Address(solana.TokenProgramID), chain.Address(solana.Token2022ProgramID)
	program := map[chain.Address]chain.Address{e.plain: tokenProg, e.coin: t22, e.feeMint: t22}
	for _, tc := range []struct {
		name            string
		pool, in, out   chain.Address
		amount          uint64
		slippage        int
		destination     string // destinationTokenAccount, "" for the user's associated account
		wantDestination chain.Address
	}{
		{"plain to coin", e.pool, e.plain, e.coin, 2_000_000_000, 50, "", chaintest.AssociatedTokenAddress(user, e.coin, t22)},
		{"coin to plain", e.pool, e.coin, e.plain, 1_000_000_000, 0, "", chaintest.AssociatedTokenAddress(user, e.plain, tokenProg)},
		{"coin to fee mint", e.feePool, e.coin, e.feeMint, 1_000_000_000, 300, "", chaintest.AssociatedTokenAddress(user, e.feeMint, t22)},
		{"fee mint to coin, own destination", e.feePool, e.feeMint, e.coin, 3_000_000, 10000, addr("own destination").String(), addr("own destination")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, q := e.mustQuote(tc.in, tc.out, tc.amount, tc.slippage)
			rest := `"userPublicKey":"` + user.String() + `"`
			if tc.destination != "" {
				rest += `,"destinationTokenAccount":"` + tc.destination + `"`
			}
			status, b, w := e.instructions(swapBody(raw, rest))
			if status != http.StatusOK {
				t.Fatalf("%d %s", status, b)
			}
			quoted, err := strconv.ParseUint(q["outAmount"].(string), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			want, err := chaintest.PoolSwapInstruction(chaintest.PoolSwap{Pool: byAddr[tc.pool], InputMint: tc.in, Authority: user,
				Source: chaintest.AssociatedTokenAddress(user, tc.in, program[tc.in]), Destination: tc.wantDestination,
				InAmount: tc.amount, QuotedOutAmount: quoted, SlippageBps: uint16(tc.slippage)})
			if err != nil {
				t.Fatal(err)
			}
			sw := w.SwapInstruction
			if sw.ProgramID != want.ProgramID.String() || !bytes.Equal(data(t, sw), want.Data) || len(sw.Accounts) != len(want.Accounts) {
				t.Fatalf("swap instruction %+v, want %+v", sw, want)
			}
			for i, a := range sw.Accounts {
				if w := want.Accounts[i]; a.Pubkey != w.Key.String() || a.IsSigner != w.Signer || a.IsWritable != w.Writable {
					t.Errorf("account %d: %+v, want %+v", i, a, w)
				}
			}
		})
	}
}
