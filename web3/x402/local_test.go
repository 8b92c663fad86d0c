package x402_test

import (
	"context"
	"crypto/ed25519"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/x402/x402test"
)

// loopback is a cluster with a deployed asset, a funded payer and a local
// facilitator over the cluster's JSON-RPC.
type loopback struct {
	cl       *chaintest.Cluster
	rpc      *solanarpc.Client
	d        x402test.Deployment
	local    *x402.Local
	payerKey ed25519.PrivateKey
	payer    chain.Address
	network  string
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
	_, payTo := chaintest.NewKeypair()
	d, err := x402test.Deploy(cl, "usd", payTo)
	if err != nil {
		t.Fatal(err)
	}
	payerKey, payer := chaintest.NewKeypair()
	if _, err := d.Fund(cl, payer, 5_000_000); err != nil {
		t.Fatal(err)
	}
	cl.AdvanceSlots(40)
	signer, err := x402.NewKeySigner(d.FeePayer)
	if err != nil {
		t.Fatal(err)
	}
	local, err := x402.NewLocal(x402.LocalConfig{Chain: rpc, Signer: signer, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &loopback{cl: cl, rpc: rpc, d: d, local: local, payerKey: payerKey, payer: payer, network: cl.Network().CAIP2()}
}

// requirements are the asset's requirements for amount with memo.
func (l *loopback) requirements(amount uint64, memo string) x402.Requirements {
	return x402.Requirements{Scheme: x402.SchemeExact, Network: l.network, Amount: strconv.FormatUint(amount, 10),
		Asset: l.d.Mint.String(), PayTo: l.d.PayTo.String(), MaxTimeoutSeconds: 60,
		Extra: x402.Extra{FeePayer: l.d.FeePayerAddress.String(), Memo: memo}}
}

// pay builds the payer's payment of req over the latest blockhash.
func (l *loopback) pay(t *testing.T, req x402.Requirements) x402.PaymentPayload {
	t.Helper()
	bh, err := l.rpc.GetLatestBlockhash(context.Background(), chain.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	ixs, err := x402.PaymentInstructions(req, l.payer, l.d.TokenProgram, x402test.Decimals, "")
	if err != nil {
		t.Fatal(err)
	}
	wire, err := x402.SignTransaction(l.d.FeePayerAddress, bh.Hash, ixs, l.payerKey)
	if err != nil {
		t.Fatal(err)
	}
	return x402.NewPayload(req, nil, wire)
}

// balance is a token account's balance.
func (l *loopback) balance(t *testing.T, a chain.Address) uint64 {
	t.Helper()
	acct, ok := l.cl.Account(a)
	if !ok {
		t.Fatalf("no account %s", a)
	}
	ta, err := token2022.DecodeAccount(acct.Data)
	if err != nil {
		t.Fatal(err)
	}
	return ta.Amount
}

func TestLocalSupportedNamesItsFeePayer(t *testing.T) {
	l := newLoopback(t)
	s, err := l.local.Supported(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fp, ok := s.FeePayer(l.network); !ok || fp != l.d.FeePayerAddress.String() {
		t.Fatalf("supported %+v", s)
	}
	if signer, _ := x402.NewKeySigner(l.d.FeePayer); strings.Contains(signer.String()+signer.GoString(), string(l.d.FeePayer)) ||
		!strings.Contains(signer.String(), l.d.FeePayerAddress.String()) {
		t.Fatalf("the signer prints %q", signer.String())
	}
}

// TestLocalSettlesOnceAndAnswersAgain settles a payment on the cluster,
// then settles it again: the same transaction is followed, nothing moves
// twice.
func TestLocalSettlesOnceAndAnswersAgain(t *testing.T) {
	l := newLoopback(t)
	ctx := context.Background()
	stop := l.cl.Run(10 * time.Millisecond)
	defer stop()
	req := l.requirements(1_000_000, "x402:one")
	pp := l.pay(t, req)
	vr, err := l.local.Verify(ctx, x402.VerifyRequest{Payload: pp, Requirements: req})
	if err != nil || !vr.IsValid || vr.Payer != l.payer.String() {
		t.Fatalf("verify: %+v, %v", vr, err)
	}
	lamports := func() uint64 { a, _ := l.cl.Account(l.d.FeePayerAddress); return a.Lamports }
	before := lamports()
	res, err := l.local.Settle(ctx, x402.SettleRequest{Payload: pp, Requirements: req})
	if err != nil || !res.Success || res.Transaction == "" || res.Amount != "1000000" || res.Network != l.network {
		t.Fatalf("settle: %+v, %v", res, err)
	}
	if got := l.balance(t, l.d.PayToAccount); got != 1_000_000 {
		t.Fatalf("payTo holds %d", got)
	}
	if got := before - lamports(); got != 2*chaintest.LamportsPerSignature {
		t.Fatalf("the fee payer paid %d lamports, want the two signatures' fee", got)
	}
	again, err := l.local.Settle(ctx, x402.SettleRequest{Payload: pp, Requirements: req})
	if err != nil || !again.Success || again.Transaction != res.Transaction {
		t.Fatalf("settle again: %+v, %v", again, err)
	}
	if got := l.balance(t, l.d.PayToAccount); got != 1_000_000 {
		t.Fatalf("payTo holds %d after the second settle", got)
	}
}

func TestLocalSettleFailsOnChain(t *testing.T) {
	l := newLoopback(t)
	ctx := context.Background()
	stop := l.cl.Run(10 * time.Millisecond)
	defer stop()
	req := l.requirements(1_000_000, "")
	l.cl.FailTransactions(1)
	res, err := l.local.Settle(ctx, x402.SettleRequest{Payload: l.pay(t, req), Requirements: req})
	if err != nil || res.Success || res.ErrorReason != x402.ReasonTransactionFailed || res.Transaction != "" {
		t.Fatalf("settle: %+v, %v", res, err)
	}
	if got := l.balance(t, l.d.PayToAccount); got != 0 {
		t.Fatalf("payTo holds %d after a failed payment", got)
	}
}

func TestLocalRefusesBeforeSending(t *testing.T) {
	l := newLoopback(t)
	ctx := context.Background()
	req := l.requirements(6_000_000, "") // more than the payer holds
	pp := l.pay(t, req)
	res, err := l.local.Settle(ctx, x402.SettleRequest{Payload: pp, Requirements: req})
	if err != nil || res.Success || res.ErrorReason != x402.ReasonInsufficientFunds {
		t.Fatalf("settle: %+v, %v", res, err)
	}
	other := req
	other.Extra.FeePayer = l.payer.String()
	if vr, err := l.local.Verify(ctx, x402.VerifyRequest{Payload: l.pay(t, other), Requirements: other}); err != nil || vr.IsValid ||
		vr.InvalidReason != x402.ReasonFeePayerMismatch {
		t.Fatalf("a fee payer the facilitator does not hold: %+v, %v", vr, err)
	}
	wrongNet := req
	wrongNet.Network = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
	if vr, err := l.local.Verify(ctx, x402.VerifyRequest{Payload: l.pay(t, wrongNet), Requirements: wrongNet}); err != nil ||
		vr.InvalidReason != x402.ReasonNetwork {
		t.Fatalf("another network: %+v, %v", vr, err)
	}
}

// TestLocalDropsOnlyPastTheBound: a send the cluster swallows is
// uncertain while its blockhash could still land it, and failed once the
// finalized height passes the bound.
func TestLocalDropsOnlyPastTheBound(t *testing.T) {
	l := newLoopback(t)
	ctx := context.Background()
	req := l.requirements(1_000_000, "")
	pp := l.pay(t, req)
	h, err := l.rpc.GetBlockHeight(ctx, chain.Processed)
	if err != nil {
		t.Fatal(err)
	}
	bound := h + chaintest.MaxBlockhashAge
	l.cl.DropTransactions(100)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = l.local.Settle(short, x402.SettleRequest{Payload: pp, Requirements: req, LastValidBlockHeight: bound})
	cancel()
	if !fault.Is(err, fault.SubmissionUncertain) {
		t.Fatalf("a swallowed send: %v, want SUBMISSION_UNCERTAIN", err)
	}
	l.cl.AdvanceSlots(chaintest.MaxBlockhashAge + 1) // the blockhash lapses; the bound is not final yet
	if _, err := l.local.Settle(ctx, x402.SettleRequest{Payload: pp, Requirements: req, LastValidBlockHeight: bound}); !fault.Is(err, fault.SubmissionUncertain) {
		t.Fatalf("lapsed but not final: %v, want SUBMISSION_UNCERTAIN", err)
	}
	l.cl.AdvanceSlots(40) // the bound is final
	res, err := l.local.Settle(ctx, x402.SettleRequest{Payload: pp, Requirements: req, LastValidBlockHeight: bound})
	if err != nil || res.Success || res.ErrorReason != x402.ReasonBlockhash {
		t.Fatalf("past the bound: %+v, %v", res, err)
	}
	if got := l.balance(t, l.d.PayToAccount); got != 0 {
		t.Fatalf("payTo holds %d", got)
	}
}
