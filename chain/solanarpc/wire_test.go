package solanarpc_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// secretSuffix is a path and query of the kind an RPC provider puts its key
// in; no error may ever show any of it.
const secretSuffix = "/rpc/v1/sekrit-path?api-key=sekrit-key"

// secretParts are the fragments of secretSuffix that must never appear in
// an error's text.
var secretParts = []string{"sekrit", "api-key", "/rpc/v1"}

func requireNoSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, p := range secretParts {
		if strings.Contains(err.Error(), p) {
			t.Fatalf("error text leaks %q of the URL: %v", p, err)
		}
	}
}

func requireUnavailable(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, chain.ErrUnavailable) {
		t.Fatalf("err = %v, want chain.ErrUnavailable", err)
	}
	var re *chain.RPCError
	if errors.As(err, &re) {
		t.Fatalf("unavailable error also reads as an RPC error: %v", err)
	}
	requireNoSecret(t, err)
}

func requireRPCError(t *testing.T, err error, method string, code int) *chain.RPCError {
	t.Helper()
	var re *chain.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want *chain.RPCError", err)
	}
	if re.Method != method || re.Code != code {
		t.Fatalf("RPCError{Method %q, Code %d}, want {%q, %d}", re.Method, re.Code, method, code)
	}
	if errors.Is(err, chain.ErrUnavailable) {
		t.Fatalf("RPC error also reads as unavailable: %v", err)
	}
	requireNoSecret(t, err)
	return re
}

func newClient(t *testing.T, base string, timeout time.Duration) *solanarpc.Client {
	t.Helper()
	c, err := solanarpc.New(solanarpc.Config{URL: base + secretSuffix, Timeout: timeout, HTTPClient: urlguardtest.Client(t, base)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func mustAddr(t *testing.T, s string) chain.Address {
	t.Helper()
	a, err := token2022.ParsePublicKey(s)
	if err != nil {
		t.Fatalf("ParsePublicKey(%q): %v", s, err)
	}
	return a
}

// callAll runs every read of the client once, for tests that only care how
// the errors map.
func callAll(ctx context.Context, c *solanarpc.Client, addr chain.Address) map[string]error {
	errs := map[string]error{}
	_, errs["getGenesisHash"] = c.GetGenesisHash(ctx)
	_, errs["getAccountInfo"] = c.GetAccountInfo(ctx, addr, chain.Confirmed)
	_, _, errs["getBalance"] = c.GetBalance(ctx, addr, chain.Confirmed)
	_, errs["getTokenAccountBalance"] = c.GetTokenAccountBalance(ctx, addr, chain.Confirmed)
	_, errs["getEpochInfo"] = c.GetEpochInfo(ctx, chain.Confirmed)
	_, errs["getSlot"] = c.GetSlot(ctx, chain.Confirmed)
	_, errs["getBlockTime"] = c.GetBlockTime(ctx, 5)
	errs["getHealth"] = c.GetHealth(ctx)
	return errs
}

func TestNewValidatesConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  solanarpc.Config
	}{
		{"empty", solanarpc.Config{}},
		{"ftp", solanarpc.Config{URL: "ftp://node.example" + secretSuffix}},
		{"ws", solanarpc.Config{URL: "wss://node.example" + secretSuffix}},
		{"no host", solanarpc.Config{URL: "https://" + secretSuffix}},
		{"relative", solanarpc.Config{URL: "node.example" + secretSuffix}},
		{"unparsable", solanarpc.Config{URL: "https://node.example:port" + secretSuffix}},
		{"control char", solanarpc.Config{URL: "https://node.example" + secretSuffix + "\x7f"}},
		{"negative timeout", solanarpc.Config{URL: "https://node.example" + secretSuffix, Timeout: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := solanarpc.New(tc.cfg)
			if err == nil {
				t.Fatalf("New(%s) = %v, want an error", tc.name, c)
			}
			requireNoSecret(t, err)
		})
	}
	for _, u := range []string{"https://node.example" + secretSuffix, "https://user:sekrit@node.example/"} {
		if _, err := solanarpc.New(solanarpc.Config{URL: u}); err != nil {
			t.Errorf("New(valid URL): %v", err)
		}
	}
	// A cluster on loopback needs a client that allows its address.
	if _, err := solanarpc.New(solanarpc.Config{URL: "http://127.0.0.1:8899", HTTPClient: urlguardtest.Client(t, "http://127.0.0.1:8899")}); err != nil {
		t.Errorf("New(loopback URL, allowing client): %v", err)
	}
}

// TestOutboundPolicy: without an HTTPClient, New refuses a URL the URL
// guard refuses, naming neither its path nor its query; a guarded client
// that does not allow the address sends nothing and reads as unavailable.
// User info goes out as a Basic Authorization header, never in the URL.
func TestOutboundPolicy(t *testing.T) {
	for _, u := range []string{
		"http://api.mainnet-beta.solana.com" + secretSuffix,
		"http://127.0.0.1:8899" + secretSuffix,
		"https://10.0.0.8:8899" + secretSuffix,
		"https://[::1]:8899" + secretSuffix,
		"https://solana.internal" + secretSuffix,
		"https://0x7f000001:8899" + secretSuffix,
	} {
		if _, err := solanarpc.New(solanarpc.Config{URL: u}); err == nil {
			t.Errorf("New(%s) succeeded", u)
		} else {
			requireNoSecret(t, err)
		}
	}
	addr := mustAddr(t, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")
	f := newFakeNode(t)
	f.result("getSlot", "7")
	c, err := solanarpc.New(solanarpc.Config{URL: f.srv.URL + secretSuffix, HTTPClient: urlguardtest.Client(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range callAll(context.Background(), c, addr) {
		requireUnavailable(t, err)
		if !errors.Is(err, urlguard.ErrRefused) {
			t.Errorf("err = %v, want the guard's refusal as the cause", err)
		}
	}
	f.mu.Lock()
	n := len(f.requests)
	f.mu.Unlock()
	if n != 0 {
		t.Fatalf("the node got %d requests through a client that does not allow it", n)
	}
	c, err = solanarpc.New(solanarpc.Config{URL: strings.Replace(f.srv.URL, "://", "://apiuser:sekrit-pass@", 1) + secretSuffix,
		HTTPClient: urlguardtest.Client(t, f.srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	if slot, err := c.GetSlot(context.Background(), chain.Confirmed); err != nil || slot != 7 {
		t.Fatalf("GetSlot = %d, %v", slot, err)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("apiuser:sekrit-pass"))
	f.mu.Lock()
	got := f.requests[len(f.requests)-1].Auth
	f.mu.Unlock()
	if got != want {
		t.Fatalf("Authorization %q, want %q", got, want)
	}
}

func TestRequestsAndAnswersOnTheWire(t *testing.T) {
	f := newFakeNode(t)
	c := newClient(t, f.srv.URL, 5*time.Second)
	ctx := context.Background()
	addr := mustAddr(t, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")
	owner := token2022.ProgramID()

	f.result("getGenesisHash", `"`+chain.DevnetGenesisHash+`"`)
	f.result("getAccountInfo", `{"context":{"apiVersion":"2.2.0","slot":42},"value":{"data":["AQID","base64"],"executable":true,"lamports":2039280,"owner":"`+owner.String()+`","rentEpoch":18446744073709551615,"space":3}}`)
	f.result("getBalance", `{"context":{"apiVersion":"2.2.0","slot":44},"value":18446744073709551615}`)
	f.result("getTokenAccountBalance", `{"context":{"slot":43},"value":{"amount":"18446744073709551615","decimals":9,"uiAmount":1.8446744073709552e10,"uiAmountString":"18446744073.709551615"}}`)
	f.result("getEpochInfo", `{"absoluteSlot":166598,"blockHeight":166500,"epoch":27,"slotIndex":2790,"slotsInEpoch":8192,"transactionCount":22661093}`)
	f.result("getSlot", `18446744073709551615`)
	f.result("getBlockTime", `1767225600`)
	f.result("getHealth", `"ok"`)

	hash, err := c.GetGenesisHash(ctx)
	if err != nil || hash != chain.DevnetGenesisHash {
		t.Fatalf("GetGenesisHash = %q, %v", hash, err)
	}
	if r := f.last(t); r.Method != "getGenesisHash" || r.HasParams {
		t.Errorf("getGenesisHash request %+v, want no params", r)
	}

	acc, err := c.GetAccountInfo(ctx, addr, "")
	if err != nil {
		t.Fatalf("GetAccountInfo: %v", err)
	}
	want := chain.AccountInfo{Address: addr, Owner: owner, Lamports: 2039280, Data: []byte{1, 2, 3}, Executable: true, Slot: 42}
	if acc.Address != want.Address || acc.Owner != want.Owner || acc.Lamports != want.Lamports ||
		string(acc.Data) != string(want.Data) || acc.Executable != want.Executable || acc.Slot != want.Slot {
		t.Errorf("GetAccountInfo = %+v, want %+v", acc, want)
	}
	requireParams(t, f.last(t), "getAccountInfo", `["`+addr.String()+`",{"commitment":"finalized","encoding":"base64"}]`)

	lamports, lslot, err := c.GetBalance(ctx, addr, chain.Confirmed)
	if err != nil || lamports != 18446744073709551615 || lslot != 44 {
		t.Fatalf("GetBalance = %d at %d, %v", lamports, lslot, err)
	}
	requireParams(t, f.last(t), "getBalance", `["`+addr.String()+`",{"commitment":"confirmed"}]`)
	f.result("getBalance", `{"context":{"slot":45},"value":0}`)
	if lamports, lslot, err = c.GetBalance(ctx, addr, ""); err != nil || lamports != 0 || lslot != 45 {
		t.Fatalf("GetBalance of a missing account = %d at %d, %v", lamports, lslot, err)
	}
	requireParams(t, f.last(t), "getBalance", `["`+addr.String()+`",{"commitment":"finalized"}]`)

	bal, err := c.GetTokenAccountBalance(ctx, addr, chain.Processed)
	if err != nil || bal != (chain.TokenAmount{Amount: 18446744073709551615, Decimals: 9, Slot: 43}) {
		t.Fatalf("GetTokenAccountBalance = %+v, %v", bal, err)
	}
	requireParams(t, f.last(t), "getTokenAccountBalance", `["`+addr.String()+`",{"commitment":"processed"}]`)

	ep, err := c.GetEpochInfo(ctx, "")
	if err != nil || ep != (chain.EpochInfo{Epoch: 27, AbsoluteSlot: 166598, BlockHeight: 166500, SlotIndex: 2790, SlotsInEpoch: 8192}) {
		t.Fatalf("GetEpochInfo = %+v, %v", ep, err)
	}
	requireParams(t, f.last(t), "getEpochInfo", `[{"commitment":"finalized"}]`)

	slot, err := c.GetSlot(ctx, chain.Confirmed)
	if err != nil || slot != 18446744073709551615 {
		t.Fatalf("GetSlot = %d, %v", slot, err)
	}
	requireParams(t, f.last(t), "getSlot", `[{"commitment":"confirmed"}]`)

	bt, err := c.GetBlockTime(ctx, 123456789)
	if err != nil || !bt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || bt.Location() != time.UTC {
		t.Fatalf("GetBlockTime = %v, %v", bt, err)
	}
	requireParams(t, f.last(t), "getBlockTime", `[123456789]`)

	if err := c.GetHealth(ctx); err != nil {
		t.Fatalf("GetHealth: %v", err)
	}
	if r := f.last(t); r.Method != "getHealth" || r.HasParams {
		t.Errorf("getHealth request %+v, want no params", r)
	}
	if r := f.last(t); r.RawQuery != "api-key=sekrit-key" {
		t.Errorf("request query %q: the URL's query must reach the node", r.RawQuery)
	}

	if _, err := c.GetSlot(ctx, "recent"); err == nil {
		t.Error("GetSlot with an unknown commitment succeeded")
	}
}

func requireParams(t *testing.T, r fakeRequest, method, want string) {
	t.Helper()
	if r.Method != method {
		t.Fatalf("last request %q, want %q", r.Method, method)
	}
	var got, exp any
	if err := json.Unmarshal(r.Params, &got); err != nil {
		t.Fatalf("%s params %s: %v", method, r.Params, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	eb, _ := json.Marshal(exp)
	if string(gb) != string(eb) {
		t.Errorf("%s params %s, want %s", method, gb, eb)
	}
}

// TestMalformedAnswersAreUnavailable covers envelopes and results that
// decode badly or hold values that do not fit: all read as no answer.
func TestMalformedAnswersAreUnavailable(t *testing.T) {
	ok := func(result string) func(json.RawMessage) (int, string) {
		return func(id json.RawMessage) (int, string) {
			return http.StatusOK, `{"jsonrpc":"2.0","result":` + result + `,"id":` + string(id) + `}`
		}
	}
	body := func(status int, b string) func(json.RawMessage) (int, string) {
		return func(json.RawMessage) (int, string) { return status, b }
	}
	acct := func(data string) func(json.RawMessage) (int, string) {
		return ok(`{"context":{"slot":1},"value":{"data":` + data + `,"executable":false,"lamports":1,"owner":"11111111111111111111111111111111","rentEpoch":0,"space":0}}`)
	}
	for _, tc := range []struct {
		name, method string
		answer       func(json.RawMessage) (int, string)
	}{
		{"unknown envelope field", "getSlot", func(id json.RawMessage) (int, string) {
			return http.StatusOK, `{"jsonrpc":"2.0","result":5,"id":` + string(id) + `,"served_by":"edge-3"}`
		}},
		{"unknown error field", "getSlot", func(id json.RawMessage) (int, string) {
			return http.StatusOK, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"x","hint":"y"},"id":` + string(id) + `}`
		}},
		{"truncated body", "getSlot", body(http.StatusOK, `{"jsonrpc":"2.0","result":`)},
		{"html body", "getHealth", body(http.StatusOK, `<html>bad gateway</html>`)},
		{"empty body", "getEpochInfo", body(http.StatusOK, ``)},
		{"503 with rpc error body", "getAccountInfo", func(id json.RawMessage) (int, string) {
			return http.StatusServiceUnavailable, `{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy"},"id":` + string(id) + `}`
		}},
		{"429 with result body", "getSlot", func(id json.RawMessage) (int, string) {
			return http.StatusTooManyRequests, `{"jsonrpc":"2.0","result":5,"id":` + string(id) + `}`
		}},
		{"slot null", "getSlot", ok(`null`)},
		{"slot negative", "getSlot", ok(`-1`)},
		{"slot over u64", "getSlot", ok(`18446744073709551616`)},
		{"slot string", "getSlot", ok(`"5"`)},
		{"block time negative", "getBlockTime", ok(`-5`)},
		{"block time fractional", "getBlockTime", ok(`1.5`)},
		{"amount negative", "getTokenAccountBalance", ok(`{"context":{"slot":1},"value":{"amount":"-1","decimals":0,"uiAmount":-1,"uiAmountString":"-1"}}`)},
		{"amount over u64", "getTokenAccountBalance", ok(`{"context":{"slot":1},"value":{"amount":"18446744073709551616","decimals":0,"uiAmount":1,"uiAmountString":"1"}}`)},
		{"amount decimal", "getTokenAccountBalance", ok(`{"context":{"slot":1},"value":{"amount":"1.5","decimals":0,"uiAmount":1.5,"uiAmountString":"1.5"}}`)},
		{"amount empty", "getTokenAccountBalance", ok(`{"context":{"slot":1},"value":{"amount":"","decimals":0,"uiAmount":0,"uiAmountString":"0"}}`)},
		{"decimals over u8", "getTokenAccountBalance", ok(`{"context":{"slot":1},"value":{"amount":"1","decimals":300,"uiAmount":0,"uiAmountString":"0"}}`)},
		{"balance null result", "getTokenAccountBalance", ok(`null`)},
		{"lamports null result", "getBalance", ok(`null`)},
		{"lamports null value", "getBalance", ok(`{"context":{"slot":1},"value":null}`)},
		{"lamports negative", "getBalance", ok(`{"context":{"slot":1},"value":-1}`)},
		{"lamports over u64", "getBalance", ok(`{"context":{"slot":1},"value":18446744073709551616}`)},
		{"lamports string", "getBalance", ok(`{"context":{"slot":1},"value":"5"}`)},
		{"lamports fractional", "getBalance", ok(`{"context":{"slot":1},"value":1.5}`)},
		{"account null result", "getAccountInfo", ok(`null`)},
		{"account jsonParsed data", "getAccountInfo", acct(`{"program":"spl-token-2022","parsed":{},"space":82}`)},
		{"account base58 data", "getAccountInfo", acct(`["Ldp","base58"]`)},
		{"account bad base64", "getAccountInfo", acct(`["!!!","base64"]`)},
		{"account null data", "getAccountInfo", acct(`null`)},
		{"account bad owner", "getAccountInfo", ok(`{"context":{"slot":1},"value":{"data":["","base64"],"executable":false,"lamports":1,"owner":"0OIl","rentEpoch":0,"space":0}}`)},
		{"account negative lamports", "getAccountInfo", ok(`{"context":{"slot":1},"value":{"data":["","base64"],"executable":false,"lamports":-1,"owner":"11111111111111111111111111111111","rentEpoch":0,"space":0}}`)},
		{"epoch null", "getEpochInfo", ok(`null`)},
		{"epoch index outside", "getEpochInfo", ok(`{"absoluteSlot":1,"blockHeight":1,"epoch":0,"slotIndex":32,"slotsInEpoch":32}`)},
		{"health not ok", "getHealth", ok(`"behind"`)},
		{"health null", "getHealth", ok(`null`)},
		{"genesis not base58", "getGenesisHash", ok(`"0OIl"`)},
		{"genesis null", "getGenesisHash", ok(`null`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeNode(t)
			f.raw(tc.method, tc.answer)
			c := newClient(t, f.srv.URL, 5*time.Second)
			errs := callAll(context.Background(), c, mustAddr(t, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"))
			requireUnavailable(t, errs[tc.method])
		})
	}
}

// TestRPCErrorsMapToSharedErrors scripts error objects the way Agave words
// them.
func TestRPCErrorsMapToSharedErrors(t *testing.T) {
	ctx := context.Background()
	addr := mustAddr(t, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")
	f := newFakeNode(t)
	c := newClient(t, f.srv.URL, 5*time.Second)

	// Every method: an RPC error becomes *chain.RPCError with its method.
	for _, m := range []string{"getGenesisHash", "getAccountInfo", "getBalance", "getTokenAccountBalance", "getEpochInfo", "getSlot", "getBlockTime", "getHealth"} {
		f.rpcError(m, `{"code":-32603,"message":"Internal error"}`)
	}
	for m, err := range callAll(ctx, c, addr) {
		re := requireRPCError(t, err, m, chain.CodeInternal)
		if re.Message != "Internal error" || re.NumSlotsBehind != nil {
			t.Errorf("%s: %+v", m, re)
		}
	}

	// -32005 with numSlotsBehind, on getHealth and on a read.
	f.rpcError("getHealth", `{"code":-32005,"message":"Node is behind by 42 slots","data":{"numSlotsBehind":42}}`)
	f.rpcError("getSlot", `{"code":-32005,"message":"Node is behind by 18446744073709551615 slots","data":{"numSlotsBehind":18446744073709551615}}`)
	re := requireRPCError(t, c.GetHealth(ctx), "getHealth", chain.CodeNodeUnhealthy)
	if !re.Unhealthy() || re.NumSlotsBehind == nil || *re.NumSlotsBehind != 42 {
		t.Errorf("getHealth -32005: %+v", re)
	}
	_, err := c.GetSlot(ctx, chain.Finalized)
	re = requireRPCError(t, err, "getSlot", chain.CodeNodeUnhealthy)
	if re.NumSlotsBehind == nil || *re.NumSlotsBehind != 18446744073709551615 {
		t.Errorf("getSlot -32005: %+v", re)
	}
	for _, data := range []string{`{"numSlotsBehind":null}`, `{"numSlotsBehind":-3}`, `{"numSlotsBehind":1.5}`, `{}`, `null`, `"x"`} {
		f.rpcError("getHealth", `{"code":-32005,"message":"Node is unhealthy","data":`+data+`}`)
		re = requireRPCError(t, c.GetHealth(ctx), "getHealth", chain.CodeNodeUnhealthy)
		if re.NumSlotsBehind != nil {
			t.Errorf("data %s: NumSlotsBehind = %d, want nil", data, *re.NumSlotsBehind)
		}
	}

	// Token balance sentinels.
	f.rpcError("getTokenAccountBalance", `{"code":-32602,"message":"Invalid param: not a Token account"}`)
	_, err = c.GetTokenAccountBalance(ctx, addr, chain.Finalized)
	if !errors.Is(err, chain.ErrNotTokenAccount) {
		t.Errorf("not a token account: %v", err)
	}
	requireRPCError(t, err, "getTokenAccountBalance", chain.CodeInvalidParams)
	f.rpcError("getTokenAccountBalance", `{"code":-32602,"message":"Invalid param: not a v2.0 Token account"}`)
	_, err = c.GetTokenAccountBalance(ctx, addr, chain.Finalized)
	if !errors.Is(err, chain.ErrNotTokenAccount) {
		t.Errorf("not a v2.0 token account: %v", err)
	}
	f.rpcError("getTokenAccountBalance", `{"code":-32602,"message":"Invalid param: could not find account"}`)
	_, err = c.GetTokenAccountBalance(ctx, addr, chain.Finalized)
	if !errors.Is(err, chain.ErrAccountNotFound) || errors.Is(err, chain.ErrNotTokenAccount) {
		t.Errorf("could not find account: %v", err)
	}
	requireRPCError(t, err, "getTokenAccountBalance", chain.CodeInvalidParams)
	f.rpcError("getTokenAccountBalance", `{"code":-32602,"message":"Invalid param: WrongSize"}`)
	_, err = c.GetTokenAccountBalance(ctx, addr, chain.Finalized)
	if errors.Is(err, chain.ErrAccountNotFound) || errors.Is(err, chain.ErrNotTokenAccount) {
		t.Errorf("other -32602: %v", err)
	}
	requireRPCError(t, err, "getTokenAccountBalance", chain.CodeInvalidParams)
	f.result("getTokenAccountBalance", `{"context":{"slot":1},"value":null}`)
	_, err = c.GetTokenAccountBalance(ctx, addr, chain.Finalized)
	if !errors.Is(err, chain.ErrAccountNotFound) {
		t.Errorf("null balance: %v", err)
	}

	// Account null value.
	f.result("getAccountInfo", `{"context":{"slot":1},"value":null}`)
	_, err = c.GetAccountInfo(ctx, addr, chain.Finalized)
	if !errors.Is(err, chain.ErrAccountNotFound) || errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("null account: %v", err)
	}

	// Block time sentinels.
	for _, code := range []int{chain.CodeBlockNotAvailable, chain.CodeSlotSkipped, chain.CodeLongTermSlotSkipped} {
		b, _ := json.Marshal(map[string]any{"code": code, "message": "Slot 5 was skipped"})
		f.rpcError("getBlockTime", string(b))
		_, err = c.GetBlockTime(ctx, 5)
		if !errors.Is(err, chain.ErrBlockTimeUnavailable) {
			t.Errorf("getBlockTime %d: %v", code, err)
		}
		requireRPCError(t, err, "getBlockTime", code)
	}
	f.result("getBlockTime", `null`)
	_, err = c.GetBlockTime(ctx, 5)
	if !errors.Is(err, chain.ErrBlockTimeUnavailable) || errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("null block time: %v", err)
	}
	f.rpcError("getBlockTime", `{"code":-32603,"message":"Internal error"}`)
	_, err = c.GetBlockTime(ctx, 5)
	if errors.Is(err, chain.ErrBlockTimeUnavailable) {
		t.Errorf("-32603 read as block time unavailable: %v", err)
	}
}

func TestTransportFailuresAreUnavailable(t *testing.T) {
	addr := mustAddr(t, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")

	t.Run("connection refused", func(t *testing.T) {
		f := newFakeNode(t)
		base := f.srv.URL
		f.srv.Close()
		c := newClient(t, base, 2*time.Second)
		for m, err := range callAll(context.Background(), c, addr) {
			t.Logf("%s: %v", m, err)
			requireUnavailable(t, err)
		}
		// Credentials in the URL's userinfo stay hidden too.
		c, err := solanarpc.New(solanarpc.Config{URL: strings.Replace(base, "://", "://apiuser:sekrit-pass@", 1) + secretSuffix,
			HTTPClient: urlguardtest.Client(t, base)})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range callAll(context.Background(), c, addr) {
			requireUnavailable(t, err)
			if strings.Contains(err.Error(), "apiuser") {
				t.Errorf("error shows the URL's user: %v", err)
			}
		}
	})

	t.Run("http status", func(t *testing.T) {
		f := newFakeNode(t)
		for _, m := range []string{"getGenesisHash", "getAccountInfo", "getBalance", "getTokenAccountBalance", "getEpochInfo", "getSlot", "getBlockTime", "getHealth"} {
			f.raw(m, func(json.RawMessage) (int, string) { return http.StatusBadGateway, "upstream down" })
		}
		c := newClient(t, f.srv.URL, 2*time.Second)
		for m, err := range callAll(context.Background(), c, addr) {
			requireUnavailable(t, err)
			var se *solanarpc.HTTPStatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusBadGateway {
				t.Errorf("%s: %v, want HTTPStatusError 502", m, err)
			}
		}
	})

	t.Run("timeout", func(t *testing.T) {
		f := newFakeNode(t)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		f.raw("getSlot", func(id json.RawMessage) (int, string) {
			<-release
			return http.StatusOK, `{"jsonrpc":"2.0","result":5,"id":` + string(id) + `}`
		})
		const timeout = 150 * time.Millisecond
		c := newClient(t, f.srv.URL, timeout)
		start := time.Now()
		_, err := c.GetSlot(context.Background(), chain.Finalized)
		elapsed := time.Since(start)
		t.Logf("timeout error: %v", err)
		requireUnavailable(t, err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("timeout does not unwrap to context.DeadlineExceeded: %v", err)
		}
		if elapsed < timeout || elapsed > timeout+2*time.Second {
			t.Errorf("call returned after %s, timeout %s", elapsed, timeout)
		}

		// The caller's earlier deadline wins over Config.Timeout.
		c = newClient(t, f.srv.URL, time.Minute)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		start = time.Now()
		_, err = c.GetSlot(ctx, chain.Finalized)
		requireUnavailable(t, err)
		if elapsed := time.Since(start); elapsed > timeout+2*time.Second {
			t.Errorf("caller deadline ignored: %s", elapsed)
		}

		// A canceled caller gets no answer either.
		ctx, cancel = context.WithCancel(context.Background())
		cancel()
		_, err = c.GetSlot(ctx, chain.Finalized)
		requireUnavailable(t, err)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancel does not unwrap to context.Canceled: %v", err)
		}
	})
}
