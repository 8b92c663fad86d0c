package facilitator_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
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
	"github.com/creatormusic/platform/web3/x402/facilitator"
	"github.com/creatormusic/platform/web3/x402/x402test"
)

// remote is a facilitator simulator over a loopback cluster, the adapter
// reaching it, and a funded payer.
type remote struct {
	cl       *chaintest.Cluster
	rpc      *solanarpc.Client
	d        x402test.Deployment
	sim      *x402test.Server
	client   *facilitator.Client
	payerKey ed25519.PrivateKey
	payer    chain.Address
}

func newRemote(t *testing.T, timeout time.Duration) *remote {
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
	sim, err := x402test.New(x402test.Config{Facilitator: local})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	client, err := facilitator.New(facilitator.Config{BaseURL: sim.URL(), HTTPClient: urlguardtest.Client(t, sim.URL()), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	stop := cl.Run(10 * time.Millisecond)
	t.Cleanup(stop)
	return &remote{cl: cl, rpc: rpc, d: d, sim: sim, client: client, payerKey: payerKey, payer: payer}
}

func (r *remote) requirements(amount string) x402.Requirements {
	return x402.Requirements{Scheme: x402.SchemeExact, Network: r.cl.Network().CAIP2(), Amount: amount, Asset: r.d.Mint.String(),
		PayTo: r.d.PayTo.String(), MaxTimeoutSeconds: 60, Extra: x402.Extra{FeePayer: r.d.FeePayerAddress.String()}}
}

func (r *remote) pay(t *testing.T, req x402.Requirements) x402.PaymentPayload {
	t.Helper()
	bh, err := r.rpc.GetLatestBlockhash(context.Background(), chain.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	ixs, err := x402.PaymentInstructions(req, r.payer, r.d.TokenProgram, x402test.Decimals, "")
	if err != nil {
		t.Fatal(err)
	}
	wire, err := x402.SignTransaction(r.d.FeePayerAddress, bh.Hash, ixs, r.payerKey)
	if err != nil {
		t.Fatal(err)
	}
	return x402.NewPayload(req, nil, wire)
}

func (r *remote) received(t *testing.T) uint64 {
	t.Helper()
	a, _ := r.cl.Account(r.d.PayToAccount)
	ta, err := token2022.DecodeAccount(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	return ta.Amount
}

func TestSupported(t *testing.T) {
	r := newRemote(t, 5*time.Second)
	ctx := context.Background()
	s, err := r.client.Supported(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fp, ok := s.FeePayer(r.cl.Network().CAIP2()); !ok || fp != r.d.FeePayerAddress.String() {
		t.Fatalf("supported %+v", s)
	}
	// A 429 is retried once after its Retry-After.
	r.sim.Inject(x402test.Fault{Path: x402test.PathSupported, Status: http.StatusTooManyRequests, Body: `{"error":"slow down"}`,
		RetryAfter: "0", Times: 1})
	if _, err := r.client.Supported(ctx); err != nil || r.sim.Calls(x402test.PathSupported) != 3 {
		t.Fatalf("after a 429: %v, %d calls", err, r.sim.Calls(x402test.PathSupported))
	}
	for name, f := range map[string]x402test.Fault{
		"503":       {Status: http.StatusServiceUnavailable, Body: `upstream down`},
		"malformed": {Status: http.StatusOK, Body: `{"kinds": [`},
		"two 429s":  {Status: http.StatusTooManyRequests, RetryAfter: "0", Times: 2},
	} {
		f.Path = x402test.PathSupported
		r.sim.Inject(f)
		if _, err := r.client.Supported(ctx); !fault.Is(err, fault.ProviderUnavailable) {
			t.Errorf("%s: %v, want PROVIDER_UNAVAILABLE", name, err)
		}
		r.sim.ClearFaults()
	}
}

// TestVerifyTakesEveryRefusalShape: a refusal answered 200, as a typed
// error body or as the Go reference's {"error"} is a refusal; anything
// else is PROVIDER_UNAVAILABLE.
func TestVerifyTakesEveryRefusalShape(t *testing.T) {
	r := newRemote(t, 300*time.Millisecond)
	ctx := context.Background()
	req := r.requirements("1000000")
	pp := r.pay(t, req)
	if vr, err := r.client.Verify(ctx, x402.VerifyRequest{Payload: pp, Requirements: req}); err != nil || !vr.IsValid ||
		vr.Payer != r.payer.String() {
		t.Fatalf("valid: %+v, %v", vr, err)
	}
	poor := r.requirements("9000000")
	if vr, err := r.client.Verify(ctx, x402.VerifyRequest{Payload: r.pay(t, poor), Requirements: poor}); err != nil || vr.IsValid ||
		vr.InvalidReason != x402.ReasonInsufficientFunds {
		t.Fatalf("insufficient funds answered 200: %+v, %v", vr, err)
	}
	refusals := map[string]x402test.Fault{
		"typed body on 400": {Status: http.StatusBadRequest, Body: `{"isValid":false,"invalidReason":"invalid_exact_solana_payload_amount_mismatch"}`},
		"go error on 500":   {Status: http.StatusInternalServerError, Body: `{"error":"invalid_exact_solana_payload_amount_mismatch: 1 != 2"}`},
	}
	for name, f := range refusals {
		f.Path, f.Times = x402test.PathVerify, 1
		r.sim.Inject(f)
		vr, err := r.client.Verify(ctx, x402.VerifyRequest{Payload: pp, Requirements: req})
		if err != nil || vr.IsValid || vr.InvalidReason != x402.ReasonAmount {
			t.Errorf("%s: %+v, %v", name, vr, err)
		}
	}
	unavailable := map[string]x402test.Fault{
		"502 page":          {Status: http.StatusBadGateway, Body: `<html>bad gateway</html>`},
		"500 unexpected":    {Status: http.StatusInternalServerError, Body: `{"error":"unexpected_verify_error: rpc down"}`},
		"500 not a reason":  {Status: http.StatusInternalServerError, Body: `{"error":"something broke: sorry"}`},
		"200 not JSON":      {Status: http.StatusOK, Body: `ok`},
		"slower than 300ms": {Delay: time.Second, Status: http.StatusOK, Body: `{"isValid":true}`},
		"oversized":         {Status: http.StatusOK, Body: `{"isValid":false,"invalidMessage":"` + strings.Repeat("x", 1<<20) + `"}`},
	}
	for name, f := range unavailable {
		f.Path, f.Times = x402test.PathVerify, 1
		r.sim.Inject(f)
		if vr, err := r.client.Verify(ctx, x402.VerifyRequest{Payload: pp, Requirements: req}); !fault.Is(err, fault.ProviderUnavailable) {
			t.Errorf("%s: %+v, %v, want PROVIDER_UNAVAILABLE", name, vr, err)
		}
		r.sim.ClearFaults()
	}
}

// TestSettleOnTheSimulator settles a payment through the adapter, then
// meets the simulator's duplicate guard and a lost answer.
func TestSettleOnTheSimulator(t *testing.T) {
	r := newRemote(t, 5*time.Second)
	ctx := context.Background()
	req := r.requirements("1000000")
	pp := r.pay(t, req)
	res, err := r.client.Settle(ctx, x402.SettleRequest{Payload: pp, Requirements: req})
	if err != nil || !res.Success || res.Transaction == "" || res.Payer != r.payer.String() {
		t.Fatalf("settle: %+v, %v", res, err)
	}
	if got := r.received(t); got != 1_000_000 {
		t.Fatalf("payTo received %d", got)
	}
	dup, err := r.client.Settle(ctx, x402.SettleRequest{Payload: pp, Requirements: req})
	if err != nil || dup.Success || dup.ErrorReason != x402.ReasonDuplicate || dup.Transaction != "" {
		t.Fatalf("the same payment again: %+v, %v", dup, err)
	}
	// The settlement happens, its answer is lost: the outcome is unknown.
	second := r.pay(t, req)
	r.sim.Inject(x402test.Fault{Path: x402test.PathSettle, Forward: true, Status: http.StatusBadGateway, Body: `gateway`, Times: 1})
	if _, err := r.client.Settle(ctx, x402.SettleRequest{Payload: second, Requirements: req}); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("a lost answer: %v, want PROVIDER_UNAVAILABLE", err)
	}
	if got := r.received(t); got != 2_000_000 {
		t.Fatalf("payTo received %d: the lost answer's payment should have landed", got)
	}
	// The simulator's own failure is an unknown outcome, never a refusal.
	r.sim.Inject(x402test.Fault{Path: x402test.PathSettle, Status: http.StatusInternalServerError,
		Body: `{"error":"unexpected_settle_error: rpc down"}`, Times: 1})
	if _, err := r.client.Settle(ctx, x402.SettleRequest{Payload: r.pay(t, req), Requirements: req}); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("unexpected_settle_error: %v, want PROVIDER_UNAVAILABLE", err)
	}
	// A Go-style refusal is a refusal.
	r.sim.Inject(x402test.Fault{Path: x402test.PathSettle, Status: http.StatusInternalServerError,
		Body: `{"error":"invalid_exact_solana_transaction_failed: custom program error"}`, Times: 1})
	if res, err := r.client.Settle(ctx, x402.SettleRequest{Payload: r.pay(t, req), Requirements: req}); err != nil || res.Success ||
		res.ErrorReason != x402.ReasonTransactionFailed || res.Network != req.Network {
		t.Fatalf("a Go-style refusal: %+v, %v", res, err)
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "http://x/?q=1", "https://127.0.0.1:9/", "https://user:secret@facilitator.example.com"} {
		if _, err := facilitator.New(facilitator.Config{BaseURL: u}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	c, err := facilitator.New(facilitator.Config{BaseURL: "https://facilitator.example.com/x402/"})
	if err != nil || c.Name() != "https://facilitator.example.com/x402" {
		t.Fatalf("%v, %v", c, err)
	}
}
