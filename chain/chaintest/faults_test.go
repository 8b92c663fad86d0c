package chaintest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
)

func TestFaultRPCError(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.Inject(chaintest.Fault{Method: "getSlot", Times: 2, Code: -32603, Message: "Internal error", Data: map[string]any{"why": "injected"}})
	for i := 0; i < 2; i++ {
		_, err := e.rpc.GetSlot(e.ctx, rpc.CommitmentProcessed)
		re := requireCode(t, err, -32603)
		if re.Message != "Internal error" || string(mustJSON(t, re.Data)) != `{"why":"injected"}` {
			t.Errorf("fault %+v", re)
		}
	}
	if _, err := e.rpc.GetSlot(e.ctx, rpc.CommitmentProcessed); err != nil {
		t.Errorf("after Times: %v", err)
	}
	// Other methods are untouched; the in-process path sees the fault too.
	e.c.Inject(chaintest.Fault{Method: "getSlot", Code: -32000, Message: "boom"})
	if _, err := e.rpc.GetHealth(e.ctx); err != nil {
		t.Errorf("getHealth: %v", err)
	}
	_, err := e.c.GetSlot(e.ctx, chain.Confirmed)
	var ce *chain.RPCError
	if !errors.As(err, &ce) || ce.Code != -32000 || ce.Message != "boom" || ce.Method != "getSlot" {
		t.Errorf("in-process fault: %v", err)
	}
	e.c.ClearFaults()
	if _, err := e.c.GetSlot(e.ctx, chain.Confirmed); err != nil {
		t.Errorf("after ClearFaults: %v", err)
	}
	if e.c.Calls("getSlot") != 5 || e.c.Calls("getHealth") != 1 {
		t.Errorf("calls %d %d", e.c.Calls("getSlot"), e.c.Calls("getHealth"))
	}
}

func TestFaultBehind(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.Inject(chaintest.Fault{Behind: 42})
	_, err := e.rpc.GetHealth(e.ctx)
	re := requireCode(t, err, -32005)
	if re.Message != "Node is behind by 42 slots" {
		t.Errorf("message %q", re.Message)
	}
	data, _ := re.Data.(map[string]any)
	if n, _ := data["numSlotsBehind"].(json.Number); n.String() != "42" {
		t.Errorf("data %#v", re.Data)
	}
	_, err = e.rpc.GetAccountInfo(e.ctx, solana.SystemProgramID)
	requireCode(t, err, -32005)
	err = e.c.GetHealth(e.ctx)
	var ce *chain.RPCError
	if !errors.As(err, &ce) || !ce.Unhealthy() || ce.NumSlotsBehind == nil || *ce.NumSlotsBehind != 42 {
		t.Errorf("in-process: %v", err)
	}
	e.c.ClearFaults()
	if err := e.c.GetHealth(e.ctx); err != nil {
		t.Error(err)
	}
}

func TestFaultDelay(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.Inject(chaintest.Fault{Method: "getEpochInfo", Times: 1, Delay: 5 * time.Second})
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.rpc.GetEpochInfo(ctx, rpc.CommitmentFinalized)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("delayed call: %v after %s", err, time.Since(start))
	}
	// In process: ErrUnavailable wrapping the deadline.
	e.c.Inject(chaintest.Fault{Method: "getEpochInfo", Times: 1, Delay: 5 * time.Second})
	ctx2, cancel2 := context.WithTimeout(e.ctx, 10*time.Millisecond)
	defer cancel2()
	_, err = e.c.GetEpochInfo(ctx2, chain.Finalized)
	if !errors.Is(err, chain.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("in-process delay: %v", err)
	}
	// A short delay just slows the answer.
	e.c.Inject(chaintest.Fault{Method: "getEpochInfo", Times: 1, Delay: 5 * time.Millisecond})
	start = time.Now()
	if _, err := e.rpc.GetEpochInfo(e.ctx, rpc.CommitmentFinalized); err != nil || time.Since(start) < 5*time.Millisecond {
		t.Errorf("short delay: %v after %s", err, time.Since(start))
	}
}

func TestFaultHTTPStatus(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.Inject(chaintest.Fault{HTTPStatus: http.StatusServiceUnavailable, Times: 1})
	_, err := e.rpc.GetSlot(e.ctx, rpc.CommitmentFinalized)
	var he *jsonrpc.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusServiceUnavailable {
		t.Errorf("HTTP fault: %v", err)
	}
	status, body := raw(t, e.c.URL(), `{"jsonrpc":"2.0","id":1,"method":"getSlot"}`)
	if status != 200 || len(body) == 0 {
		t.Errorf("after the fault: %d %s", status, body)
	}
	e.c.Inject(chaintest.Fault{Method: "getSlot", HTTPStatus: http.StatusTooManyRequests})
	status, body = raw(t, e.c.URL(), `{"jsonrpc":"2.0","id":1,"method":"getSlot"}`)
	if status != http.StatusTooManyRequests || len(body) != 0 {
		t.Errorf("bare status: %d %q", status, body)
	}
	_, err = e.c.GetSlot(e.ctx, chain.Finalized)
	if !errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("in-process HTTP fault: %v", err)
	}
}

func TestInProcessMatchesHTTP(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	auth := e.wallet(0)
	owner := e.wallet(7_000_000)
	mint := e.feeMint(auth.addr)
	ata, _ := e.c.MintTo(owner.addr, mint, 123_456_789)
	e.c.SetEpoch(2)
	e.c.AdvanceSlots(7)
	if h, _ := e.c.GetGenesisHash(e.ctx); h != e.c.GenesisHash() {
		t.Errorf("GetGenesisHash %s", h)
	}
	for _, cm := range []chain.Commitment{chain.Processed, chain.Confirmed, chain.Finalized, ""} {
		rcm := rpc.CommitmentType(cm)
		if cm == "" {
			rcm = rpc.CommitmentFinalized
		}
		for _, addr := range []chain.Address{mint, ata, owner.addr} {
			in, err := e.c.GetAccountInfo(e.ctx, addr, cm)
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.rpc.GetAccountInfoWithOpts(e.ctx, solana.PublicKey(addr), &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rcm})
			if err != nil {
				t.Fatal(err)
			}
			v := out.Value
			if in.Address != addr || in.Slot != out.Context.Slot || in.Lamports != v.Lamports || solana.PublicKey(in.Owner) != v.Owner || !bytes.Equal(in.Data, v.Data.GetBinary()) || in.Executable != v.Executable {
				t.Errorf("%s %q: in-process %+v, HTTP %+v", addr, cm, in, v)
			}
		}
		for _, addr := range []chain.Address{owner.addr, ata, auth.addr} {
			lamports, slot, err := e.c.GetBalance(e.ctx, addr, cm)
			out, herr := e.rpc.GetBalance(e.ctx, solana.PublicKey(addr), rcm)
			if err != nil || herr != nil || lamports != out.Value || slot != out.Context.Slot {
				t.Errorf("%s %q: in-process balance %d at %d (%v), HTTP %+v (%v)", addr, cm, lamports, slot, err, out, herr)
			}
		}
		bal, err := e.c.GetTokenAccountBalance(e.ctx, ata, cm)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := e.rpc.GetTokenAccountBalance(e.ctx, solana.PublicKey(ata), rcm)
		if err != nil || hb.Value.Amount != "123456789" || bal.Amount != 123_456_789 || bal.Decimals != hb.Value.Decimals || bal.Slot != hb.Context.Slot {
			t.Errorf("%q balance: %+v vs %+v %v", cm, bal, hb, err)
		}
		ep, _ := e.c.GetEpochInfo(e.ctx, cm)
		hep, _ := e.rpc.GetEpochInfo(e.ctx, rcm)
		if ep.Epoch != hep.Epoch || ep.AbsoluteSlot != hep.AbsoluteSlot || ep.BlockHeight != *ptr(hep.BlockHeight) || ep.SlotIndex != hep.SlotIndex || ep.SlotsInEpoch != hep.SlotsInEpoch {
			t.Errorf("%q epoch: %+v vs %+v", cm, ep, hep)
		}
		s, _ := e.c.GetSlot(e.ctx, cm)
		hs, _ := e.rpc.GetSlot(e.ctx, rcm)
		if s != hs {
			t.Errorf("%q slot %d vs %d", cm, s, hs)
		}
	}
	for _, slot := range []uint64{0, 1, e.c.Slot()} {
		bt, err := e.c.GetBlockTime(e.ctx, slot)
		hbt, herr := e.rpc.GetBlockTime(e.ctx, slot)
		if err != nil || herr != nil || bt.Unix() != int64(*hbt) {
			t.Errorf("block time %d: %v %v / %v %v", slot, bt, err, hbt, herr)
		}
	}
	if _, err := e.c.GetBlockTime(e.ctx, e.c.Slot()+1); !errors.Is(err, chain.ErrBlockTimeUnavailable) {
		t.Errorf("future block time: %v", err)
	}
	if err := e.c.GetHealth(e.ctx); err != nil {
		t.Error(err)
	}
	if _, err := e.c.GetSlot(e.ctx, "bogus"); err == nil {
		t.Error("bogus commitment accepted")
	}
}

func TestInProcessGetBalance(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	w := e.wallet(7_000_000)
	e.c.AdvanceSlots(40)
	for cm, want := range map[chain.Commitment]uint64{chain.Processed: 40, chain.Confirmed: 39, chain.Finalized: 8, "": 8} {
		lamports, slot, err := e.c.GetBalance(e.ctx, w.addr, cm)
		if err != nil || lamports != 7_000_000 || slot != want {
			t.Errorf("%q: %d at %d (%v), want 7000000 at %d", cm, lamports, slot, err, want)
		}
	}
	// A missing account is balance 0, as a node answers; an account that
	// goes away reads 0 again.
	_, nobody := chaintest.NewKeypair()
	if lamports, slot, err := e.c.GetBalance(e.ctx, nobody, chain.Processed); err != nil || lamports != 0 || slot != 40 {
		t.Errorf("missing account: %d at %d (%v)", lamports, slot, err)
	}
	e.c.DeleteAccount(w.addr)
	if lamports, _, err := e.c.GetBalance(e.ctx, w.addr, chain.Processed); err != nil || lamports != 0 {
		t.Errorf("deleted account: %d (%v)", lamports, err)
	}
	if _, _, err := e.c.GetBalance(e.ctx, nobody, "bogus"); err == nil {
		t.Error("unknown commitment accepted")
	}

	// Faults under "getBalance", as over HTTP.
	e.c.Inject(chaintest.Fault{Method: "getBalance", Times: 1, Code: chain.CodeInternal, Message: "Internal error"})
	_, _, err := e.c.GetBalance(e.ctx, nobody, chain.Processed)
	var ce *chain.RPCError
	if !errors.As(err, &ce) || ce.Method != "getBalance" || ce.Code != chain.CodeInternal || errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("RPC error fault: %v", err)
	}
	e.c.Inject(chaintest.Fault{Method: "getBalance", Times: 1, Behind: 9})
	_, _, err = e.c.GetBalance(e.ctx, nobody, chain.Processed)
	if !errors.As(err, &ce) || !ce.Unhealthy() || ce.NumSlotsBehind == nil || *ce.NumSlotsBehind != 9 {
		t.Errorf("behind fault: %v", err)
	}
	e.c.Inject(chaintest.Fault{Method: "getBalance", Times: 1, HTTPStatus: http.StatusTooManyRequests})
	if _, _, err := e.c.GetBalance(e.ctx, nobody, chain.Processed); !errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("HTTP status fault: %v", err)
	}
	e.c.Inject(chaintest.Fault{Method: "getBalance", Times: 1, Delay: 5 * time.Second})
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Millisecond)
	defer cancel()
	if _, _, err := e.c.GetBalance(ctx, nobody, chain.Processed); !errors.Is(err, chain.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("delay fault: %v", err)
	}
	e.c.Inject(chaintest.Fault{Method: "getAccountInfo", Code: chain.CodeInternal, Message: "Internal error"})
	if _, _, err := e.c.GetBalance(e.ctx, nobody, chain.Processed); err != nil {
		t.Errorf("another method's fault reached getBalance: %v", err)
	}
	if got := e.c.Calls("getBalance"); got != 12 {
		t.Errorf("getBalance calls %d, want 12", got)
	}
}

func TestRun(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	stop := e.c.Run(time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for e.c.Slot() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	stop()
	s := e.c.Slot()
	if s < 3 {
		t.Fatalf("slot %d after running", s)
	}
	time.Sleep(5 * time.Millisecond)
	if e.c.Slot() != s {
		t.Errorf("slot moved after stop: %d -> %d", s, e.c.Slot())
	}
}

func TestConcurrentUse(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	from := e.wallet(10_000_000_000)
	to := e.wallet(0)
	stop := e.c.Run(time.Millisecond)
	defer stop()
	var wg sync.WaitGroup
	var landed atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := e.rpc.GetAccountInfo(e.ctx, from.pk()); err != nil {
					t.Errorf("read: %v", err)
				}
				bh, _ := e.c.LatestBlockhash()
				// Distinct amounts keep every signature unique.
				tx := buildWith(t, bh, []solana.Instruction{systemTransfer(from.addr, to.addr, uint64(g*100+i+1))}, from)
				if _, err := e.send(tx, false); err == nil {
					landed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if landed.Load() == 0 {
		t.Error("no transaction landed")
	}
}

// TestInProcessBlockhashAndHeightMatchHTTP compares the in-process
// GetLatestBlockhash and GetBlockHeight with the HTTP answers at every
// commitment, and checks that their faults apply in process too.
func TestInProcessBlockhashAndHeightMatchHTTP(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.AdvanceSlots(45)
	for _, cm := range []chain.Commitment{chain.Processed, chain.Confirmed, chain.Finalized} {
		rcm := rpc.CommitmentType(cm)
		bh, err := e.c.GetLatestBlockhash(e.ctx, cm)
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.rpc.GetLatestBlockhash(e.ctx, rcm)
		if err != nil {
			t.Fatal(err)
		}
		if bh.Hash != out.Value.Blockhash.String() || bh.LastValidBlockHeight != out.Value.LastValidBlockHeight || bh.Slot != out.Context.Slot {
			t.Errorf("%s: in-process %+v, HTTP %+v at %d", cm, bh, out.Value, out.Context.Slot)
		}
		h, err := e.c.GetBlockHeight(e.ctx, cm)
		if err != nil {
			t.Fatal(err)
		}
		hh, err := e.rpc.GetBlockHeight(e.ctx, rcm)
		if err != nil || h != hh {
			t.Errorf("%s: block height in process %d, HTTP %d (%v)", cm, h, hh, err)
		}
	}
	e.c.Inject(chaintest.Fault{Method: "getLatestBlockhash", Times: 1, HTTPStatus: 503})
	if _, err := e.c.GetLatestBlockhash(e.ctx, chain.Confirmed); err == nil {
		t.Fatal("an injected fault did not reach the in-process GetLatestBlockhash")
	}
	e.c.Inject(chaintest.Fault{Method: "getBlockHeight", Times: 1, Code: -32005, Behind: 3})
	if _, err := e.c.GetBlockHeight(e.ctx, chain.Confirmed); err == nil {
		t.Fatal("an injected fault did not reach the in-process GetBlockHeight")
	}
}
