package relay_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// loopback is a chaintest cluster and a solanarpc client of it, with a
// funded payer.
type loopback struct {
	t     *testing.T
	cl    *chaintest.Cluster
	rpc   *solanarpc.Client
	priv  solana.PrivateKey
	payer solana.PublicKey
}

func newLoopback(t *testing.T) *loopback {
	t.Helper()
	cl, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	rpc, err := solanarpc.New(solanarpc.Config{URL: cl.URL(), Timeout: 2 * time.Second, HTTPClient: urlguardtest.Client(t, cl.URL())})
	if err != nil {
		t.Fatal(err)
	}
	priv, addr := chaintest.NewKeypair()
	cl.Airdrop(addr, 1_000_000_000)
	cl.AdvanceSlots(40) // a finalized height above zero
	return &loopback{t: t, cl: cl, rpc: rpc, priv: solana.PrivateKey(priv), payer: solana.PublicKey(addr)}
}

// submission signs a memo transaction with the payer over a confirmed
// blockhash and returns it as a submitted Submission.
func (l *loopback) submission(memo string) relay.Submission {
	l.t.Helper()
	ctx := context.Background()
	bh, err := l.rpc.GetLatestBlockhash(ctx, chain.Confirmed)
	if err != nil {
		l.t.Fatal(err)
	}
	ix := solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{solana.NewAccountMeta(l.payer, false, true)}, []byte(memo))
	tx, err := solana.NewTransaction([]solana.Instruction{ix}, solana.MustHashFromBase58(bh.Hash), solana.TransactionPayer(l.payer))
	if err != nil {
		l.t.Fatal(err)
	}
	sigs, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		if k == l.payer {
			return &l.priv
		}
		return nil
	})
	if err != nil {
		l.t.Fatal(err)
	}
	wire, err := tx.MarshalBinary()
	if err != nil {
		l.t.Fatal(err)
	}
	return relay.Submission{Network: l.cl.Network().CAIP2(), Signature: sigs[0].String(), Wire: wire,
		Blockhash: bh.Hash, LastValidBlockHeight: bh.LastValidBlockHeight, State: relay.Submitted}
}

// step runs relay.Step against the cluster and fails the test on error.
func (l *loopback) step(s relay.Submission) relay.Result {
	l.t.Helper()
	r, err := relay.Step(context.Background(), l.rpc, s, relay.Options{})
	if err != nil {
		l.t.Fatal(err)
	}
	return r
}

// TestLoopbackCluster relays real signed transactions through solanarpc to
// the loopback cluster: a send the node drops is re-sent with the
// identical bytes and lands, is followed to finalized and never sent once
// known; a dropped send whose blockhash expired is never re-sent and is
// dropped exactly once the finalized height passes its last valid height.
func TestLoopbackCluster(t *testing.T) {
	ctx := context.Background()
	l := newLoopback(t)
	if err := relay.CheckNetwork(ctx, l.rpc, l.cl.Network().CAIP2()); err != nil {
		t.Fatal(err)
	}

	// The first send is accepted and lost; the next step finds nothing and
	// sends the same bytes, which land.
	s := l.submission("relay: lands on the second send")
	wire := bytes.Clone(s.Wire)
	l.cl.DropTransactions(1)
	r := l.step(s)
	if r.Outcome != relay.OutcomeSent || r.Send != relay.SendAccepted {
		t.Fatalf("first send: %s %s", r.Outcome, r.Send)
	}
	r = l.step(r.Submission)
	if r.Outcome != relay.OutcomeSent || r.Submission.SendAttempts != 2 || !bytes.Equal(r.Submission.Wire, wire) {
		t.Fatalf("re-send: %s %+v", r.Outcome, r.Submission)
	}
	l.cl.AdvanceSlots(1)
	r = l.step(r.Submission)
	if r.Outcome != relay.OutcomeObserved || r.Submission.State != relay.Confirmed || r.Submission.Slot == 0 {
		t.Fatalf("after landing: %s %s", r.Outcome, r.Submission.State)
	}
	r = l.step(r.Submission)
	if r.Outcome != relay.OutcomeObserved || r.Changed {
		t.Fatalf("confirmed again: %s changed %v", r.Outcome, r.Changed)
	}
	l.cl.AdvanceSlots(32)
	r = l.step(r.Submission)
	if r.Submission.State != relay.Finalized || !r.Changed {
		t.Fatalf("finalized: %s", r.Submission.State)
	}
	if n := l.cl.Calls("sendTransaction"); n != 2 {
		t.Fatalf("sent %d times, want 2", n)
	}

	// A lost send whose blockhash then expires: waiting, never re-sent,
	// until the finalized height passes the last valid height.
	s = l.submission("relay: dropped")
	l.cl.DropTransactions(1)
	r = l.step(s)
	if r.Outcome != relay.OutcomeSent {
		t.Fatalf("send: %s", r.Outcome)
	}
	s = r.Submission
	l.cl.ExpireBlockhashes()
	r = l.step(s)
	if r.Outcome != relay.OutcomeWaiting || r.Changed || l.cl.Calls("sendTransaction") != 3 {
		t.Fatalf("expired blockhash: %s, %d sends", r.Outcome, l.cl.Calls("sendTransaction"))
	}
	h, err := l.rpc.GetBlockHeight(ctx, chain.Finalized)
	if err != nil {
		t.Fatal(err)
	}
	l.cl.AdvanceSlots(s.LastValidBlockHeight - h)
	if h, err = l.rpc.GetBlockHeight(ctx, chain.Finalized); err != nil || h != s.LastValidBlockHeight {
		t.Fatalf("finalized height %d, want %d (%v)", h, s.LastValidBlockHeight, err)
	}
	if r = l.step(s); r.Outcome != relay.OutcomeWaiting {
		t.Fatalf("at the last valid height: %s", r.Outcome)
	}
	l.cl.AdvanceSlots(1)
	r = l.step(s)
	if r.Outcome != relay.OutcomeDropped || r.Submission.State != relay.Dropped {
		t.Fatalf("past the last valid height: %s %s", r.Outcome, r.Submission.State)
	}
	if n := l.cl.Calls("sendTransaction"); n != 3 {
		t.Fatalf("sent %d times, want 3", n)
	}
}
