package intent

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

func TestPaymentURI(t *testing.T) {
	rcpt, mint, ref := key("r"), key("m"), key("ref")
	got := PaymentURI(rcpt, "1.020409", mint, ref, "Creator Music", "100 credits & more", "txi_1")
	want := "solana:" + rcpt.String() + "?amount=1.020409&spl-token=" + mint.String() + "&reference=" + ref.String() +
		"&label=Creator%20Music&message=100%20credits%20%26%20more&memo=txi_1"
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	if strings.Contains(got, "+") {
		t.Fatal("spaces must be %20")
	}
	u, err := url.Parse(got)
	if err != nil || u.Query().Get("message") != "100 credits & more" {
		t.Fatalf("round trip: %v %q", err, u.Query().Get("message"))
	}
}

func TestRequestPaymentAndSettleByReference(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	pr := must[PaymentRequest](t)(h.svc.RequestPayment(ctx, h.user, it.ID))
	if pr.AmountAtomic != it.GrossAtomic || pr.Amount != "1.020409" || pr.NetAtomic != 1_000_000 || pr.Recipient != h.treasury ||
		pr.Reference != it.Reference || pr.Memo != it.ID || !pr.ExpiresAt.Equal(it.ExpiresAt) || len(pr.Requirements) == 0 {
		t.Fatalf("%+v", pr)
	}
	if !strings.HasPrefix(pr.URI, "solana:"+h.treasury.String()+"?amount=1.020409&spl-token="+h.mint.String()) ||
		!strings.Contains(pr.URI, "&memo="+it.ID) || !strings.Contains(pr.URI, "label=Creator%20Music") {
		t.Fatalf("uri %s", pr.URI)
	}
	// One per intent.
	again := must[PaymentRequest](t)(h.svc.RequestPayment(ctx, h.user, it.ID))
	if again.ID != pr.ID {
		t.Fatal("a second payment request was made")
	}
	if got := must[PaymentRequest](t)(h.svc.PaymentRequest(ctx, h.user, pr.ID)); got.ID != pr.ID {
		t.Fatal("get by id")
	}
	if got := must[PaymentRequest](t)(h.svc.PaymentRequestByIntent(ctx, h.user, it.ID)); got.ID != pr.ID {
		t.Fatal("get by intent")
	}
	other := *h.user
	other.UserID = "usr_2"
	_, err := h.svc.PaymentRequest(ctx, &other, pr.ID)
	wantCode(t, err, fault.NotFound)

	// A wallet builds its own transfer: TransferChecked of the gross, no
	// memo, the reference after the required accounts; the fee is withheld.
	sig := "WalletBuiltSig"
	tx := landed(it, sig, it.NetAtomic)
	tx.Instructions = []chain.Instruction{{ProgramID: it.TokenProgram,
		Accounts: []chain.Address{it.Source, it.Mint, it.Destination, it.Payer, it.Reference},
		Data:     transferData(it.GrossAtomic, it.Decimals, false, 0)}}
	tx.PreTokenBalances = nil // the treasury account was created in the same transaction
	tx.PostTokenBalances[0].Amount = it.NetAtomic
	h.chain.refs[it.Reference] = []chain.SignatureInfo{{Signature: "NewerSig"}, {Signature: sig}, {Signature: "FailedOldest", Err: `{"InstructionError":[0,{"Custom":1}]}`}}
	h.chain.txs[sig] = tx
	h.chain.setStatus(sig, chain.Confirmed, "")
	o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateSettled || o.Intent.Signature != sig || o.Intent.Origin != OriginReference {
		t.Fatalf("%s %s %+v", o.Intent.State, o.Intent.Signature, o.Intent.Evidence)
	}
	if len(h.settled) != 1 {
		t.Fatal("settled", h.settled)
	}
	// The signature is now bound: no other intent can use it.
	b := h.create()
	_, err = h.svc.Submit(ctx, h.user, b.ID, SubmitRequest{Signature: token2022.EncodeBase58(make([]byte, 64))})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSignatureFree(ctx, h.store.Read(), sig, b.ID); !fault.Is(err, fault.Conflict) {
		t.Fatalf("reused signature: %v", err)
	}
	// A submitted intent takes no payment request.
	_, err = h.svc.RequestPayment(ctx, h.user, b.ID)
	wantCode(t, err, fault.Conflict)
}

func TestWalletBuiltTransferShortByFeeNeedsReview(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	// The wallet paid the net price instead of the gross: the fee came out
	// of it, so the treasury is short by the fee.
	sig := "ShortSig"
	fee := it.TransferFee.Fee(it.NetAtomic)
	tx := landed(it, sig, it.NetAtomic-fee)
	tx.Instructions = []chain.Instruction{{ProgramID: it.TokenProgram,
		Accounts: []chain.Address{it.Source, it.Mint, it.Destination, it.Payer, it.Reference},
		Data:     transferData(it.NetAtomic, it.Decimals, false, 0)}}
	h.chain.refs[it.Reference] = []chain.SignatureInfo{{Signature: sig}}
	h.chain.txs[sig] = tx
	h.chain.setStatus(sig, chain.Confirmed, "")
	o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateRequiresReview || len(h.settled) != 0 {
		t.Fatalf("%s", o.Intent.State)
	}
	var net Mismatch
	for _, m := range o.Intent.Evidence {
		if m.Field == "net" {
			net = m
		}
	}
	if net.Expected != "1000000" || net.Actual != "980000" {
		t.Fatalf("net evidence %+v", net)
	}
}

func TestRequestPaymentExpired(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	h.clock.Add(DefaultTTL + 1)
	_, err := h.svc.RequestPayment(context.Background(), h.user, it.ID)
	wantCode(t, err, fault.QuoteExpired)
}
