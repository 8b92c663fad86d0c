package chaintest_test

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

func TestGenesisAndVersion(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	h, err := e.rpc.GetGenesisHash(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.String() != e.c.GenesisHash() {
		t.Errorf("getGenesisHash %s, GenesisHash %s", h, e.c.GenesisHash())
	}
	for _, known := range []string{chain.MainnetGenesisHash, chain.DevnetGenesisHash, chain.TestnetGenesisHash} {
		if h.String() == known {
			t.Errorf("genesis hash is a public cluster's: %s", h)
		}
	}
	if e.c.Network().Cluster() != chain.Localnet || e.c.Network().GenesisHash != h.String() {
		t.Errorf("Network %+v", e.c.Network())
	}
	other, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.GenesisHash() != e.c.GenesisHash() {
		t.Errorf("genesis hash differs between clusters")
	}
	v, err := e.rpc.GetVersion(e.ctx)
	if err != nil || v.SolanaCore == "" {
		t.Errorf("GetVersion = %+v, %v", v, err)
	}
	if h, err := e.rpc.GetHealth(e.ctx); err != nil || h != rpc.HealthOk {
		t.Errorf("GetHealth = %q, %v", h, err)
	}
	if n, err := e.rpc.GetMinimumBalanceForRentExemption(e.ctx, 346, rpc.CommitmentFinalized); err != nil || n != 3_299_040 {
		t.Errorf("rent for 346 bytes = %d, %v", n, err)
	}
}

func TestMintRoundTrip(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	auth := e.wallet(0)
	_, addr := chaintest.NewKeypair()
	spec := feeMintSpec(addr, auth.addr, 5_000_000)
	if err := e.c.CreateMint(addr, spec); err != nil {
		t.Fatal(err)
	}
	if err := e.c.CreateMint(addr, spec); err == nil {
		t.Error("CreateMint over an existing account succeeded")
	}
	out, err := e.rpc.GetAccountInfoWithOpts(e.ctx, solana.PublicKey(addr), &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentFinalized})
	if err != nil {
		t.Fatal(err)
	}
	acct := out.Value
	if acct.Owner != t22 {
		t.Errorf("owner %s", acct.Owner)
	}
	data := acct.Data.GetBinary()
	if acct.Lamports != chaintest.RentExemptMinimum(len(data)) || acct.Space != uint64(len(data)) {
		t.Errorf("lamports %d space %d for %d bytes", acct.Lamports, acct.Space, len(data))
	}
	if want, _ := new(big.Int).SetString("18446744073709551615", 10); acct.RentEpoch.Cmp(want) != 0 {
		t.Errorf("rentEpoch %s", acct.RentEpoch)
	}
	got, err := token2022.DecodeMint(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, spec) {
		t.Errorf("decoded mint\n got %+v\nwant %+v", got, spec)
	}
	cfg, _ := got.TransferFeeConfig()
	if cfg.FeeAt(0, 1_000_000_000) != 5_000_000 || cfg.FeeAt(0, 100_000) != 2_000 {
		t.Errorf("fee config %+v", cfg)
	}
	if mp, _ := got.MetadataPointer(); mp.MetadataAddress != addr {
		t.Errorf("metadata pointer %+v", mp)
	}

	// dataSlice and base58.
	sliced, err := e.rpc.GetAccountInfoWithOpts(e.ctx, solana.PublicKey(addr), &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase58, DataSlice: &rpc.DataSlice{Offset: ptr(uint64(36)), Length: ptr(uint64(9))}})
	if err != nil {
		t.Fatal(err)
	}
	if b := sliced.Value.Data.GetBinary(); len(b) != 9 || b[8] != 9 || sliced.Value.Space != uint64(len(data)) {
		t.Errorf("sliced data %v space %d", b, sliced.Value.Space)
	}
	_, err = e.rpc.GetAccountInfoWithOpts(e.ctx, solana.PublicKey(addr), &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase58})
	requireCode(t, err, -32600)
	// jsonParsed falls back to base64.
	parsed, err := e.rpc.GetAccountInfoWithOpts(e.ctx, solana.PublicKey(addr), &rpc.GetAccountInfoOpts{Encoding: solana.EncodingJSONParsed})
	if err != nil || len(parsed.Value.Data.GetBinary()) != len(data) {
		t.Errorf("jsonParsed: %v", err)
	}

	// SetMint makes deviations.
	spec.Decimals = 6
	if err := e.c.SetMint(addr, spec); err != nil {
		t.Fatal(err)
	}
	info, err := e.c.GetAccountInfo(e.ctx, addr, chain.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := token2022.DecodeMint(info.Data); err != nil || m.Decimals != 6 {
		t.Errorf("after SetMint: %+v, %v", m, err)
	}
}

func ptr[T any](v T) *T { return &v }

func requireCode(t *testing.T, err error, code int) *jsonrpc.RPCError {
	t.Helper()
	var re *jsonrpc.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a JSON-RPC error (want %d)", err, code)
	}
	if re.Code != code {
		t.Fatalf("error code %d (%s), want %d", re.Code, re.Message, code)
	}
	return re
}

func TestMissingAccount(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	_, nobody := chaintest.NewKeypair()
	if _, err := e.rpc.GetAccountInfo(e.ctx, solana.PublicKey(nobody)); !errors.Is(err, rpc.ErrNotFound) {
		t.Errorf("missing account: %v", err)
	}
	w := e.wallet(1_000)
	multi, err := e.rpc.GetMultipleAccountsWithOpts(e.ctx, []solana.PublicKey{solana.PublicKey(nobody), w.pk()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(multi.Value) != 2 || multi.Value[0] != nil || multi.Value[1] == nil || multi.Value[1].Lamports != 1_000 {
		t.Errorf("getMultipleAccounts %+v", multi.Value)
	}
	e.c.DeleteAccount(w.addr)
	if _, err := e.c.GetAccountInfo(e.ctx, w.addr, chain.Processed); !errors.Is(err, chain.ErrAccountNotFound) {
		t.Errorf("deleted account: %v", err)
	}
	if _, err := e.c.GetTokenAccountBalance(e.ctx, nobody, chain.Processed); !errors.Is(err, chain.ErrAccountNotFound) {
		t.Errorf("balance of a missing account: %v", err)
	}
}

func TestTokenAccounts(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	auth := e.wallet(0)
	owner := e.wallet(1_000_000_000)
	mint := e.feeMint(auth.addr)
	ata, err := e.c.MintTo(owner.addr, mint, 1_500_000_000)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := solana.FindProgramAddress([][]byte{owner.addr[:], t22[:], mint[:]}, solana.SPLAssociatedTokenAccountProgramID)
	if solana.PublicKey(ata) != want {
		t.Fatalf("ATA %s, want %s", ata, want)
	}
	classic, _, _ := solana.FindAssociatedTokenAddress(owner.pk(), solana.PublicKey(mint))
	if solana.PublicKey(ata) == classic {
		t.Fatal("Token-2022 ATA equals the classic one")
	}
	bal, err := e.rpc.GetTokenAccountBalance(e.ctx, solana.PublicKey(ata), rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	v := bal.Value
	if v.Amount != "1500000000" || v.Decimals != 9 || v.UiAmountString != "1.5" || v.UiAmount == nil || *v.UiAmount != 1.5 {
		t.Errorf("balance %+v", v)
	}
	acct := e.tokenAccount(ata)
	if acct.Owner != owner.addr || acct.Mint != mint || acct.State != token2022.StateInitialized {
		t.Errorf("ATA %+v", acct)
	}
	if _, ok := acct.Extension(token2022.ExtensionImmutableOwner); !ok {
		t.Error("ATA lacks ImmutableOwner")
	}
	if w, ok := acct.TransferFeeAmount(); !ok || w.Withheld != 0 {
		t.Errorf("ATA TransferFeeAmount %+v %v", w, ok)
	}
	if a, _ := e.c.Account(ata); len(a.Data) != 182 {
		t.Errorf("ATA size %d, want 182", len(a.Data))
	}
	// Minting again adds; the supply follows.
	if again, err := e.c.MintTo(owner.addr, mint, 500_000_000); err != nil || again != ata {
		t.Fatalf("second MintTo: %s %v", again, err)
	}
	info, _ := e.c.GetAccountInfo(e.ctx, mint, chain.Processed)
	if m, _ := token2022.DecodeMint(info.Data); m.Supply != 2_000_000_000 {
		t.Errorf("supply %d", m.Supply)
	}
	// Not a token account.
	_, err = e.rpc.GetTokenAccountBalance(e.ctx, owner.pk(), rpc.CommitmentConfirmed)
	if re := requireCode(t, err, -32602); re.Message != "Invalid param: not a Token account" {
		t.Errorf("message %q", re.Message)
	}
	if _, err := e.c.GetTokenAccountBalance(e.ctx, mint, chain.Confirmed); !errors.Is(err, chain.ErrNotTokenAccount) {
		t.Errorf("in-process balance of a mint: %v", err)
	}
	// getTokenAccountsByOwner by mint and by program.
	byMint, err := e.rpc.GetTokenAccountsByOwner(e.ctx, owner.pk(), &rpc.GetTokenAccountsConfig{Mint: ptr(solana.PublicKey(mint))}, &rpc.GetTokenAccountsOpts{Encoding: solana.EncodingBase64})
	if err != nil {
		t.Fatal(err)
	}
	if len(byMint.Value) != 1 || byMint.Value[0].Pubkey != solana.PublicKey(ata) {
		t.Errorf("by mint: %+v", byMint.Value)
	}
	byProg, err := e.rpc.GetTokenAccountsByOwner(e.ctx, owner.pk(), &rpc.GetTokenAccountsConfig{ProgramId: ptr(solana.TokenProgramID)}, &rpc.GetTokenAccountsOpts{Encoding: solana.EncodingBase64})
	if err != nil || len(byProg.Value) != 0 {
		t.Errorf("classic program: %+v %v", byProg, err)
	}
}

func TestUIAmountStrings(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	owner := e.wallet(0)
	for _, tc := range []struct {
		amount   uint64
		decimals uint8
		want     string
	}{{0, 9, "0"}, {1, 9, "0.000000001"}, {1_500_000_000, 9, "1.5"}, {42, 0, "42"}, {12345, 2, "123.45"}, {100, 2, "1"}} {
		_, mint := chaintest.NewKeypair()
		if err := e.c.CreateMint(mint, token2022.Mint{Decimals: tc.decimals, IsInitialized: true}); err != nil {
			t.Fatal(err)
		}
		ata, err := e.c.MintTo(owner.addr, mint, tc.amount)
		if err != nil {
			t.Fatal(err)
		}
		bal, err := e.rpc.GetTokenAccountBalance(e.ctx, solana.PublicKey(ata), rpc.CommitmentProcessed)
		if err != nil {
			t.Fatal(err)
		}
		if bal.Value.UiAmountString != tc.want {
			t.Errorf("%d @%d: %q, want %q", tc.amount, tc.decimals, bal.Value.UiAmountString, tc.want)
		}
	}
}

func TestEpochs(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.SetEpoch(5)
	info, err := e.rpc.GetEpochInfo(e.ctx, rpc.CommitmentProcessed)
	if err != nil {
		t.Fatal(err)
	}
	if info.Epoch != 5 || info.AbsoluteSlot != 160 || info.SlotIndex != 0 || info.SlotsInEpoch != 32 || info.BlockHeight != 160 {
		t.Errorf("epoch info %+v", info)
	}
	fin, _ := e.rpc.GetEpochInfo(e.ctx, rpc.CommitmentFinalized)
	if fin.AbsoluteSlot != 128 || fin.Epoch != 4 {
		t.Errorf("finalized epoch info %+v", fin)
	}
	if s, _ := e.rpc.GetSlot(e.ctx, rpc.CommitmentConfirmed); s != 159 {
		t.Errorf("confirmed slot %d", s)
	}
	e.c.SetEpoch(2) // never back in time
	if e.c.Slot() != 160 {
		t.Errorf("SetEpoch back moved the slot to %d", e.c.Slot())
	}
	bt, err := e.rpc.GetBlockTime(e.ctx, 160)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 1, 0, 1, 4, 0, time.UTC); !bt.Time().Equal(want) {
		t.Errorf("block time %s, want %s", bt.Time(), want)
	}
	_, err = e.rpc.GetBlockTime(e.ctx, 161)
	requireCode(t, err, -32004)
	// A custom config.
	c2 := newEnv(t, chaintest.Config{SlotsPerEpoch: 10, Start: time.Unix(1_000, 0)})
	c2.c.SetEpoch(3)
	if got, _ := c2.c.GetEpochInfo(c2.ctx, chain.Processed); got.Epoch != 3 || got.AbsoluteSlot != 30 || got.SlotsInEpoch != 10 {
		t.Errorf("custom epoch info %+v", got)
	}
	if got, _ := c2.c.GetBlockTime(c2.ctx, 30); got.Unix() != 1_012 {
		t.Errorf("custom block time %s", got)
	}
}

func TestEnvelope(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	for _, tc := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"getHealth"}`, `{"jsonrpc":"2.0","result":"ok","id":7}`},
		{`{"jsonrpc":"2.0","id":"a-b-c","method":"getHealth"}`, `{"jsonrpc":"2.0","result":"ok","id":"a-b-c"}`},
		{`{"jsonrpc":"2.0","id":null,"method":"getHealth"}`, `{"jsonrpc":"2.0","result":"ok","id":null}`},
		{`{"jsonrpc":"2.0","id":1.50,"method":"getHealth","params":[]}`, `{"jsonrpc":"2.0","result":"ok","id":1.50}`},
		{`{"jsonrpc":"2.0","id":3,"method":"getSlot"}`, `{"jsonrpc":"2.0","result":0,"id":3}`},
		{`{"jsonrpc":"2.0","id":4,"method":"getSlot","params":null}`, `{"jsonrpc":"2.0","result":0,"id":4}`},
		{`{"jsonrpc":"2.0","id":"x","method":"noSuchMethod"}`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"x"}`},
		{`{"jsonrpc":"2.0","id":1,"method":"getHealth"`, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`},
		{`{"id":9,"method":"getHealth"}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":9}`},
		{`[{"jsonrpc":"2.0","id":1,"method":"getHealth"},{"jsonrpc":"2.0","id":"2","method":"getSlot"}]`, `[{"jsonrpc":"2.0","result":"ok","id":1},{"jsonrpc":"2.0","result":0,"id":"2"}]`},
	} {
		status, got := raw(t, e.c.URL(), tc.body)
		if status != 200 || string(got) != tc.want {
			t.Errorf("%s\n got %d %s\nwant %s", tc.body, status, got, tc.want)
		}
	}
	// Bad params.
	_, got := raw(t, e.c.URL(), `{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["not-a-key"]}`)
	var resp struct {
		Error struct{ Code int } `json:"error"`
	}
	if json.Unmarshal(got, &resp) != nil || resp.Error.Code != -32602 {
		t.Errorf("bad param: %s", got)
	}
	// solana-go sees the standard errors too.
	var out any
	err := e.rpc.RPCCallForInto(e.ctx, &out, "noSuchMethod", nil)
	requireCode(t, err, -32601)
	if e.c.Calls("getHealth") != 5 || e.c.Calls("noSuchMethod") != 2 {
		t.Errorf("calls: getHealth %d, noSuchMethod %d", e.c.Calls("getHealth"), e.c.Calls("noSuchMethod"))
	}
}

func TestCommitmentAndMinContextSlot(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.AdvanceSlots(40)
	w := e.wallet(10)
	for cm, want := range map[rpc.CommitmentType]uint64{rpc.CommitmentProcessed: 40, rpc.CommitmentConfirmed: 39, rpc.CommitmentFinalized: 8} {
		out, err := e.rpc.GetBalance(e.ctx, w.pk(), cm)
		if err != nil || out.Context.Slot != want || out.Value != 10 {
			t.Errorf("%s: %+v %v", cm, out, err)
		}
	}
	_, err := e.rpc.GetAccountInfoWithOpts(e.ctx, w.pk(), &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, MinContextSlot: ptr(uint64(41)), Commitment: rpc.CommitmentProcessed})
	re := requireCode(t, err, -32016)
	if !strings.Contains(string(mustJSON(t, re.Data)), `"contextSlot":40`) {
		t.Errorf("data %v", re.Data)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
