package solanarpc_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
)

// reader is the read side both the adapter and the loopback cluster offer;
// consumers' ports (token.ChainClient) are subsets of it.
type reader interface {
	GetGenesisHash(ctx context.Context) (string, error)
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
	GetBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (lamports, slot uint64, err error)
	GetTokenAccountBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.TokenAmount, error)
	GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error)
	GetSlot(ctx context.Context, commitment chain.Commitment) (uint64, error)
	GetBlockTime(ctx context.Context, slot uint64) (time.Time, error)
	GetHealth(ctx context.Context) error
}

var (
	_ reader = (*solanarpc.Client)(nil)
	_ reader = (*chaintest.Cluster)(nil)
)

// allMethods are the JSON-RPC methods the Client calls.
var allMethods = []string{"getGenesisHash", "getAccountInfo", "getBalance", "getTokenAccountBalance", "getEpochInfo", "getSlot", "getBlockTime", "getHealth"}

var commitments = []chain.Commitment{"", chain.Processed, chain.Confirmed, chain.Finalized}

func newCluster(t *testing.T) *chaintest.Cluster {
	t.Helper()
	cl, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatalf("chaintest.New: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

func sameAccount(a, b chain.AccountInfo) bool {
	return a.Address == b.Address && a.Owner == b.Owner && a.Lamports == b.Lamports &&
		bytes.Equal(a.Data, b.Data) && a.Executable == b.Executable && a.Slot == b.Slot
}

// TestEveryMethodMatchesInProcess reads a chaintest cluster over HTTP and
// compares every answer with the cluster's in-process one.
func TestEveryMethodMatchesInProcess(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t)
	c := newClient(t, cl.URL(), 5*time.Second)
	cl.AdvanceSlots(45)
	cl.SetEpoch(3)

	hash, err := c.GetGenesisHash(ctx)
	if err != nil {
		t.Fatalf("GetGenesisHash: %v", err)
	}
	if want, _ := cl.GetGenesisHash(ctx); hash != want || hash != cl.GenesisHash() {
		t.Errorf("GetGenesisHash = %q, want %q (%q)", hash, want, cl.GenesisHash())
	}

	// Plain accounts: data, an executable one, an empty one.
	_, prog := chaintest.NewKeypair()
	_, dataAcct := chaintest.NewKeypair()
	_, execAcct := chaintest.NewKeypair()
	_, wallet := chaintest.NewKeypair()
	cl.SetAccount(dataAcct, chaintest.Account{Owner: prog, Lamports: 1_000_000, Data: bytes.Repeat([]byte{0xAB, 0x00, 0x7F}, 400)})
	cl.SetAccount(execAcct, chaintest.Account{Owner: prog, Lamports: 1, Data: []byte{9}, Executable: true})
	cl.Airdrop(wallet, 5_000_000_000)

	// Token accounts: a Token-2022 mint with a transfer fee and a classic
	// SPL Token mint.
	_, mint22 := chaintest.NewKeypair()
	_, mintClassic := chaintest.NewKeypair()
	if err := cl.CreateMint(mint22, token2022.Mint{Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{
		token2022.TransferFeeConfig{Older: token2022.TransferFee{BasisPoints: 200, MaximumFee: 1_000_000}, Newer: token2022.TransferFee{BasisPoints: 200, MaximumFee: 1_000_000}},
	}}); err != nil {
		t.Fatalf("CreateMint: %v", err)
	}
	cl.SetAccount(mintClassic, chaintest.Account{
		Owner:    chain.Address(solana.TokenProgramID),
		Lamports: chaintest.RentExemptMinimum(82),
		Data:     token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true}),
	})
	ata22, err := cl.MintTo(wallet, mint22, 1_500_000_000)
	if err != nil {
		t.Fatalf("MintTo Token-2022: %v", err)
	}
	ataClassic, err := cl.MintTo(wallet, mintClassic, 18446744073709551615)
	if err != nil {
		t.Fatalf("MintTo classic: %v", err)
	}

	for _, cm := range commitments {
		for _, addr := range []chain.Address{dataAcct, execAcct, wallet, mint22, mintClassic, ata22, ataClassic} {
			got, err := c.GetAccountInfo(ctx, addr, cm)
			if err != nil {
				t.Fatalf("GetAccountInfo(%s, %q): %v", addr, cm, err)
			}
			want, err := cl.GetAccountInfo(ctx, addr, cm)
			if err != nil {
				t.Fatalf("in-process GetAccountInfo(%s, %q): %v", addr, cm, err)
			}
			if !sameAccount(got, want) {
				t.Errorf("GetAccountInfo(%s, %q):\n got %+v\nwant %+v", addr, cm, got, want)
			}
			lamports, slot, err := c.GetBalance(ctx, addr, cm)
			if err != nil {
				t.Fatalf("GetBalance(%s, %q): %v", addr, cm, err)
			}
			wantLamports, wantSlot, err := cl.GetBalance(ctx, addr, cm)
			if err != nil || lamports != wantLamports || slot != wantSlot || lamports != want.Lamports || slot != want.Slot {
				t.Errorf("GetBalance(%s, %q) = %d at %d, want %d at %d (account %d at %d, %v)", addr, cm, lamports, slot, wantLamports, wantSlot, want.Lamports, want.Slot, err)
			}
		}
		for _, ata := range []chain.Address{ata22, ataClassic} {
			got, err := c.GetTokenAccountBalance(ctx, ata, cm)
			if err != nil {
				t.Fatalf("GetTokenAccountBalance(%s, %q): %v", ata, cm, err)
			}
			want, err := cl.GetTokenAccountBalance(ctx, ata, cm)
			if err != nil || got != want {
				t.Errorf("GetTokenAccountBalance(%s, %q) = %+v, want %+v (%v)", ata, cm, got, want, err)
			}
		}
		ep, err := c.GetEpochInfo(ctx, cm)
		if err != nil {
			t.Fatalf("GetEpochInfo(%q): %v", cm, err)
		}
		if want, err := cl.GetEpochInfo(ctx, cm); err != nil || ep != want {
			t.Errorf("GetEpochInfo(%q) = %+v, want %+v (%v)", cm, ep, want, err)
		}
		slot, err := c.GetSlot(ctx, cm)
		if err != nil {
			t.Fatalf("GetSlot(%q): %v", cm, err)
		}
		if want, err := cl.GetSlot(ctx, cm); err != nil || slot != want {
			t.Errorf("GetSlot(%q) = %d, want %d (%v)", cm, slot, want, err)
		}
	}
	if got, _ := c.GetSlot(ctx, chain.Processed); got != cl.Slot() {
		t.Errorf("processed slot %d, cluster slot %d", got, cl.Slot())
	}
	bal, _ := c.GetTokenAccountBalance(ctx, ata22, chain.Confirmed)
	if bal.Amount != 1_500_000_000 || bal.Decimals != 9 {
		t.Errorf("Token-2022 balance %+v", bal)
	}
	bal, _ = c.GetTokenAccountBalance(ctx, ataClassic, chain.Confirmed)
	if bal.Amount != 18446744073709551615 || bal.Decimals != 6 {
		t.Errorf("classic balance %+v", bal)
	}

	for _, slot := range []uint64{0, 1, cl.Slot() / 2, cl.Slot()} {
		bt, err := c.GetBlockTime(ctx, slot)
		if err != nil {
			t.Fatalf("GetBlockTime(%d): %v", slot, err)
		}
		want, err := cl.GetBlockTime(ctx, slot)
		if err != nil || !bt.Equal(want) {
			t.Errorf("GetBlockTime(%d) = %v, want %v (%v)", slot, bt, want, err)
		}
		if !bt.Equal(cl.BlockTime(slot).Truncate(time.Second)) {
			t.Errorf("GetBlockTime(%d) = %v, cluster block time %v", slot, bt, cl.BlockTime(slot))
		}
	}

	if err := c.GetHealth(ctx); err != nil {
		t.Errorf("GetHealth: %v", err)
	}
	if err := cl.GetHealth(ctx); err != nil {
		t.Errorf("in-process GetHealth: %v", err)
	}

	// Missing accounts, a non-token account, a future block.
	_, nobody := chaintest.NewKeypair()
	_, err = c.GetAccountInfo(ctx, nobody, chain.Confirmed)
	if !errors.Is(err, chain.ErrAccountNotFound) {
		t.Errorf("missing account: %v", err)
	}
	requireNoSecret(t, err)
	if _, err := cl.GetAccountInfo(ctx, nobody, chain.Confirmed); !errors.Is(err, chain.ErrAccountNotFound) {
		t.Errorf("in-process missing account: %v", err)
	}
	// A missing account's balance is 0, as a node answers.
	if lamports, slot, err := c.GetBalance(ctx, nobody, chain.Processed); err != nil || lamports != 0 || slot != cl.Slot() {
		t.Errorf("balance of a missing account: %d at %d, %v", lamports, slot, err)
	}
	if lamports, slot, err := cl.GetBalance(ctx, nobody, chain.Processed); err != nil || lamports != 0 || slot != cl.Slot() {
		t.Errorf("in-process balance of a missing account: %d at %d, %v", lamports, slot, err)
	}
	cl.DeleteAccount(dataAcct)
	if _, err := c.GetAccountInfo(ctx, dataAcct, ""); !errors.Is(err, chain.ErrAccountNotFound) {
		t.Errorf("deleted account: %v", err)
	}
	_, err = c.GetTokenAccountBalance(ctx, nobody, chain.Confirmed)
	if !errors.Is(err, chain.ErrAccountNotFound) || errors.Is(err, chain.ErrNotTokenAccount) {
		t.Errorf("balance of a missing account: %v", err)
	}
	requireRPCError(t, err, "getTokenAccountBalance", chain.CodeInvalidParams)
	if _, err := cl.GetTokenAccountBalance(ctx, nobody, chain.Confirmed); !errors.Is(err, chain.ErrAccountNotFound) {
		t.Errorf("in-process balance of a missing account: %v", err)
	}
	for _, addr := range []chain.Address{wallet, mint22, execAcct} {
		_, err = c.GetTokenAccountBalance(ctx, addr, chain.Confirmed)
		if !errors.Is(err, chain.ErrNotTokenAccount) {
			t.Errorf("balance of non-token account %s: %v", addr, err)
		}
		requireRPCError(t, err, "getTokenAccountBalance", chain.CodeInvalidParams)
		if _, err := cl.GetTokenAccountBalance(ctx, addr, chain.Confirmed); !errors.Is(err, chain.ErrNotTokenAccount) {
			t.Errorf("in-process balance of non-token account %s: %v", addr, err)
		}
	}
	_, err = c.GetBlockTime(ctx, cl.Slot()+100)
	if !errors.Is(err, chain.ErrBlockTimeUnavailable) {
		t.Errorf("future block time: %v", err)
	}
	requireRPCError(t, err, "getBlockTime", chain.CodeBlockNotAvailable)
	if _, err := cl.GetBlockTime(ctx, cl.Slot()+100); !errors.Is(err, chain.ErrBlockTimeUnavailable) {
		t.Errorf("in-process future block time: %v", err)
	}
}

// chaintestReads calls every method once against the cluster over HTTP.
func chaintestReads(ctx context.Context, c *solanarpc.Client, acct, ata chain.Address, slot uint64) map[string]error {
	errs := map[string]error{}
	_, errs["getGenesisHash"] = c.GetGenesisHash(ctx)
	_, errs["getAccountInfo"] = c.GetAccountInfo(ctx, acct, chain.Confirmed)
	_, _, errs["getBalance"] = c.GetBalance(ctx, acct, chain.Confirmed)
	_, errs["getTokenAccountBalance"] = c.GetTokenAccountBalance(ctx, ata, chain.Confirmed)
	_, errs["getEpochInfo"] = c.GetEpochInfo(ctx, chain.Confirmed)
	_, errs["getSlot"] = c.GetSlot(ctx, chain.Confirmed)
	_, errs["getBlockTime"] = c.GetBlockTime(ctx, slot)
	errs["getHealth"] = c.GetHealth(ctx)
	return errs
}

// faultFixture is a cluster with a token account, and a client on it.
type faultFixture struct {
	cl        *chaintest.Cluster
	c         *solanarpc.Client
	wallet    chain.Address
	ata       chain.Address
	blockSlot uint64
}

func newFaultFixture(t *testing.T, timeout time.Duration) faultFixture {
	t.Helper()
	cl := newCluster(t)
	cl.AdvanceSlots(40)
	_, wallet := chaintest.NewKeypair()
	_, mint := chaintest.NewKeypair()
	cl.Airdrop(wallet, 1_000_000_000)
	if err := cl.CreateMint(mint, token2022.Mint{Decimals: 2, IsInitialized: true}); err != nil {
		t.Fatalf("CreateMint: %v", err)
	}
	ata, err := cl.MintTo(wallet, mint, 12345)
	if err != nil {
		t.Fatalf("MintTo: %v", err)
	}
	return faultFixture{cl: cl, c: newClient(t, cl.URL(), timeout), wallet: wallet, ata: ata, blockSlot: 10}
}

func (f faultFixture) reads(ctx context.Context) map[string]error {
	return chaintestReads(ctx, f.c, f.wallet, f.ata, f.blockSlot)
}

func requireAllOK(t *testing.T, errs map[string]error) {
	t.Helper()
	for m, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}

func TestInjectedRPCErrorOnEveryMethod(t *testing.T) {
	ctx := context.Background()
	f := newFaultFixture(t, 5*time.Second)
	requireAllOK(t, f.reads(ctx))
	for _, m := range allMethods {
		f.cl.Inject(chaintest.Fault{Method: m, Times: 1, Code: chain.CodeInternal, Message: "Internal error", Data: map[string]any{"detail": "injected"}})
	}
	for m, err := range f.reads(ctx) {
		re := requireRPCError(t, err, m, chain.CodeInternal)
		if re.Message != "Internal error" || re.NumSlotsBehind != nil {
			t.Errorf("%s: %+v", m, re)
		}
		if errors.Is(err, chain.ErrAccountNotFound) || errors.Is(err, chain.ErrNotTokenAccount) || errors.Is(err, chain.ErrBlockTimeUnavailable) {
			t.Errorf("%s: -32603 read as a sentinel: %v", m, err)
		}
	}
	// Times: 1 is used up: every method answers again.
	requireAllOK(t, f.reads(ctx))

	// An arbitrary server code passes through too.
	f.cl.Inject(chaintest.Fault{Method: "getSlot", Times: 1, Code: chain.CodeMinContextSlot, Message: "Minimum context slot has not been reached", Data: map[string]any{"contextSlot": 40}})
	_, err := f.c.GetSlot(ctx, chain.Processed)
	requireRPCError(t, err, "getSlot", chain.CodeMinContextSlot)
}

func TestInjectedNodeBehind(t *testing.T) {
	ctx := context.Background()
	f := newFaultFixture(t, 5*time.Second)
	f.cl.Inject(chaintest.Fault{Behind: 7}) // every method, until cleared
	for m, err := range f.reads(ctx) {
		re := requireRPCError(t, err, m, chain.CodeNodeUnhealthy)
		if !re.Unhealthy() || re.NumSlotsBehind == nil || *re.NumSlotsBehind != 7 {
			t.Errorf("%s: %+v, want NumSlotsBehind 7", m, re)
		}
	}
	f.cl.ClearFaults()
	requireAllOK(t, f.reads(ctx))

	f.cl.Inject(chaintest.Fault{Method: "getHealth", Times: 1, Behind: 7})
	re := requireRPCError(t, f.c.GetHealth(ctx), "getHealth", chain.CodeNodeUnhealthy)
	if re.NumSlotsBehind == nil || *re.NumSlotsBehind != 7 {
		t.Errorf("getHealth: %+v", re)
	}
	if err := f.c.GetHealth(ctx); err != nil {
		t.Errorf("GetHealth after the fault: %v", err)
	}

	// Unhealthy without a count.
	f.cl.Inject(chaintest.Fault{Method: "getHealth", Times: 1, Code: chain.CodeNodeUnhealthy, Message: "Node is unhealthy", Data: map[string]any{"numSlotsBehind": nil}})
	re = requireRPCError(t, f.c.GetHealth(ctx), "getHealth", chain.CodeNodeUnhealthy)
	if re.NumSlotsBehind != nil {
		t.Errorf("unhealthy without count: NumSlotsBehind = %d", *re.NumSlotsBehind)
	}
}

func TestInjectedDelayBeyondTimeout(t *testing.T) {
	ctx := context.Background()
	const timeout = 200 * time.Millisecond
	f := newFaultFixture(t, timeout)
	for _, m := range allMethods {
		f.cl.Inject(chaintest.Fault{Method: m, Times: 1, Delay: 3 * time.Second})
	}
	for _, m := range allMethods {
		before := f.cl.Calls(m)
		start := time.Now()
		err := chaintestReadOne(ctx, f, m)
		elapsed := time.Since(start)
		requireUnavailable(t, err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: timeout does not unwrap to context.DeadlineExceeded: %v", m, err)
		}
		if elapsed < timeout || elapsed > timeout+time.Second {
			t.Errorf("%s returned after %s, want close to %s", m, elapsed, timeout)
		}
		if f.cl.Calls(m) != before+1 {
			t.Errorf("%s: cluster saw %d calls, want %d", m, f.cl.Calls(m), before+1)
		}
	}
	// A delay within the timeout is just slow.
	f.cl.Inject(chaintest.Fault{Method: "getSlot", Times: 1, Delay: 20 * time.Millisecond})
	if _, err := f.c.GetSlot(ctx, chain.Finalized); err != nil {
		t.Errorf("short delay: %v", err)
	}
	requireAllOK(t, f.reads(ctx))
}

func chaintestReadOne(ctx context.Context, f faultFixture, method string) error {
	var err error
	switch method {
	case "getGenesisHash":
		_, err = f.c.GetGenesisHash(ctx)
	case "getAccountInfo":
		_, err = f.c.GetAccountInfo(ctx, f.wallet, chain.Confirmed)
	case "getBalance":
		_, _, err = f.c.GetBalance(ctx, f.wallet, chain.Confirmed)
	case "getTokenAccountBalance":
		_, err = f.c.GetTokenAccountBalance(ctx, f.ata, chain.Confirmed)
	case "getEpochInfo":
		_, err = f.c.GetEpochInfo(ctx, chain.Confirmed)
	case "getSlot":
		_, err = f.c.GetSlot(ctx, chain.Confirmed)
	case "getBlockTime":
		_, err = f.c.GetBlockTime(ctx, f.blockSlot)
	case "getHealth":
		err = f.c.GetHealth(ctx)
	}
	return err
}

func TestInjectedHTTPStatus(t *testing.T) {
	ctx := context.Background()
	f := newFaultFixture(t, 5*time.Second)
	f.cl.Inject(chaintest.Fault{HTTPStatus: http.StatusServiceUnavailable})
	for m, err := range f.reads(ctx) {
		requireUnavailable(t, err)
		var se *solanarpc.HTTPStatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("%s: %v, want HTTPStatusError 503", m, err)
		}
	}
	f.cl.ClearFaults()
	requireAllOK(t, f.reads(ctx))
}

func TestInjectedBlockTimeUnavailable(t *testing.T) {
	ctx := context.Background()
	f := newFaultFixture(t, 5*time.Second)
	for _, code := range []int{chain.CodeBlockNotAvailable, chain.CodeSlotSkipped, chain.CodeLongTermSlotSkipped} {
		f.cl.Inject(chaintest.Fault{Method: "getBlockTime", Times: 1, Code: code, Message: "Slot 10 was skipped, or missing in long-term storage"})
		_, err := f.c.GetBlockTime(ctx, 10)
		if !errors.Is(err, chain.ErrBlockTimeUnavailable) {
			t.Errorf("code %d: %v", code, err)
		}
		requireRPCError(t, err, "getBlockTime", code)
	}
	if _, err := f.c.GetBlockTime(ctx, 10); err != nil {
		t.Errorf("GetBlockTime after the faults: %v", err)
	}
}

// TestNoErrorShowsTheURL collects errors of every kind from a cluster
// reached through a URL with a secret path and query.
func TestNoErrorShowsTheURL(t *testing.T) {
	ctx := context.Background()
	f := newFaultFixture(t, 150*time.Millisecond)
	var all []error
	collect := func(errs map[string]error) {
		for _, err := range errs {
			if err != nil {
				all = append(all, err)
			}
		}
	}
	for _, fault := range []chaintest.Fault{
		{Code: chain.CodeInternal, Message: "Internal error"},
		{Behind: 7},
		{Delay: time.Second},
		{HTTPStatus: http.StatusServiceUnavailable},
		{HTTPStatus: http.StatusTooManyRequests},
	} {
		f.cl.Inject(fault)
		collect(f.reads(ctx))
		f.cl.ClearFaults()
	}
	_, nobody := chaintest.NewKeypair()
	collect(chaintestReads(ctx, f.c, nobody, nobody, 1<<40))
	url := f.cl.URL()
	_ = f.cl.Close()
	collect(f.reads(ctx))
	if len(all) < 5*len(allMethods) {
		t.Fatalf("only %d errors collected", len(all))
	}
	for _, err := range all {
		requireNoSecret(t, err)
		if bytes.Contains([]byte(err.Error()), []byte(url+secretSuffix)) {
			t.Errorf("error shows the full URL: %v", err)
		}
	}
}
