package chaintest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// TestGetTransactionInProcessMatchesTheWire lands a fee-mint transfer with
// a memo and a transaction that fails after its fee, and reads each back
// in process and through chain/solanarpc over HTTP: the two answers are
// the same at every commitment the transaction is visible at, and both
// say not found before it is.
func TestGetTransactionInProcessMatchesTheWire(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	client, err := solanarpc.New(solanarpc.Config{URL: e.c.URL(), Timeout: 2 * time.Second, HTTPClient: urlguardtest.Client(t, e.c.URL())})
	if err != nil {
		t.Fatal(err)
	}
	auth := e.wallet(0)
	sender := e.wallet(1_000_000_000)
	recipient := e.wallet(0)
	mint := e.feeMint(auth.addr)
	src, err := e.c.MintTo(sender.addr, mint, 5_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	dst := chaintest.AssociatedTokenAddress(recipient.addr, mint, chain.Address(t22))
	ok := e.mustSend(e.build([]solana.Instruction{
		createATAIdempotent(sender.addr, recipient.addr, mint),
		memoIx(sender.addr, "order 42"),
		transferCheckedWithFee(src, mint, dst, sender.addr, 1_000_000_000, 9, 20_000_000),
	}, sender), false).String()
	e.c.FailTransactions(1)
	failed := e.mustSend(e.build([]solana.Instruction{systemTransfer(sender.addr, recipient.addr, 1_000)}, sender), true).String()

	for _, sig := range []string{ok, failed} {
		if _, err := e.c.GetTransaction(e.ctx, sig, chain.Confirmed); !errors.Is(err, chain.ErrTransactionNotFound) {
			t.Fatalf("%s before confirmation: %v, want ErrTransactionNotFound", sig, err)
		}
	}
	e.c.AdvanceSlots(1)
	for _, cm := range []chain.Commitment{chain.Confirmed, chain.Finalized} {
		if cm == chain.Finalized {
			if _, err := e.c.GetTransaction(e.ctx, ok, cm); !errors.Is(err, chain.ErrTransactionNotFound) {
				t.Fatalf("finalized before finality: %v, want ErrTransactionNotFound", err)
			}
			e.c.AdvanceSlots(40)
		}
		for _, sig := range []string{ok, failed} {
			got, err := e.c.GetTransaction(e.ctx, sig, cm)
			if err != nil {
				t.Fatalf("in process at %s: %v", cm, err)
			}
			want, err := client.GetTransaction(e.ctx, sig, cm)
			if err != nil {
				t.Fatalf("over the wire at %s: %v", cm, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s at %s (-wire +in process):\n%s", sig, cm, d)
			}
		}
	}
	tx, _ := e.c.GetTransaction(e.ctx, failed, chain.Confirmed)
	if tx.Err == "" || tx.Fee != 5000 {
		t.Errorf("the failed transaction reads err %q fee %d", tx.Err, tx.Fee)
	}
	var re *chain.RPCError
	if _, err := e.c.GetTransaction(e.ctx, ok, chain.Processed); !errors.As(err, &re) || re.Code != chain.CodeInvalidParams {
		t.Errorf("processed: %v, want -32602", err)
	}
	if _, err := e.c.GetTransaction(e.ctx, "1111111111111111111111111111111111111111111111111111111111111111", chain.Confirmed); !errors.Is(err, chain.ErrTransactionNotFound) {
		t.Errorf("an unknown signature: %v, want ErrTransactionNotFound", err)
	}
}
