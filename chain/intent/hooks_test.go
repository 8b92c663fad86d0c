package intent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// hookLog records what a purpose's Open and Track hooks saw, and in which
// order relative to Settle.
type hookLog struct {
	opened  []any
	tracked []State
	calls   []string
	openErr error
}

// hookedSale registers, on h, the split sale with Open and Track hooks
// writing to log, and the terms its Price returns.
func (h *harness) hookedSale(log *hookLog, terms any) {
	h.t.Helper()
	seller := key("seller")
	err := h.registry.Register(Purpose{Name: "hooked_sale", Threshold: chain.Confirmed,
		Settle: func(ctx context.Context, st Store, it Intent) error {
			log.calls = append(log.calls, "settle")
			return h.settle(ctx, st, it)
		},
		Settlement: h.settlement,
		Price: func(_ context.Context, in PriceInput) (Price, error) {
			return Price{Mint: h.mint, Quantity: "1", Description: "one licence", Terms: terms,
				Legs: []PriceLeg{{Role: "seller", Recipient: seller, NetAtomic: sellerNet}, {Role: "platform_fee", Recipient: in.Treasury, NetAtomic: feeNet}}}, nil
		},
		Open: func(_ context.Context, st Store, it Intent, t any) error {
			if st == nil || it.ID == "" {
				return errors.New("open without a unit of work or an intent")
			}
			log.opened = append(log.opened, t)
			return log.openErr
		},
		Track: func(_ context.Context, _ Store, it Intent) error {
			log.tracked = append(log.tracked, it.State)
			log.calls = append(log.calls, "track:"+string(it.State))
			return nil
		}})
	if err != nil {
		h.t.Fatal(err)
	}
	h.tokenAccount(seller, token2022.StateInitialized)
	h.tokenAccount(h.treasury, token2022.StateInitialized)
}

// TestPurposeOpenAndTrack: Record hands the draft's terms to the purpose's
// Open hook in the unit of work that saves the intent (an Open that fails
// saves nothing); Track sees every state the intent is written in, after
// Settle in the unit that settles it.
func TestPurposeOpenAndTrack(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	log := &hookLog{}
	h.hookedSale(log, "order terms")
	req := Request{Purpose: "hooked_sale", Mint: h.mint.String(), Wallet: h.payer.String()}

	log.openErr = fault.E("test", fault.Conflict, "refused by the purpose")
	if _, err := h.svc.Create(ctx, h.user, req); !fault.Is(err, fault.Conflict) {
		t.Fatalf("create with a refusing Open: %v", err)
	}
	if n := len(h.store.committed().intents); n != 0 {
		t.Fatalf("%d intents saved although Open failed", n)
	}
	log.openErr, log.opened, log.tracked, log.calls = nil, nil, nil, nil

	d, err := h.svc.Prepare(ctx, h.user, req)
	if err != nil || d.Terms != "order terms" {
		t.Fatalf("prepare: %v, terms %v", err, d.Terms)
	}
	if err := h.store.Run(ctx, func(st Store) error { return h.svc.Record(ctx, st, d) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(log.opened, []any{"order terms"}) || !slices.Equal(log.tracked, []State{StateCreated}) {
		t.Fatalf("opened %v, tracked %v", log.opened, log.tracked)
	}
	o := h.payLegs(d.Intent, func(sig string) chain.Transaction { return landedLegs(d.Intent, sig, nets(d.Intent)...) })
	if o.Intent.State != StateSettled {
		t.Fatalf("state %s: %+v", o.Intent.State, o.Intent.Evidence)
	}
	want := []string{"track:CREATED", "track:SUBMITTED", "settle", "track:SETTLED"}
	if !slices.Equal(log.calls, want) {
		t.Fatalf("calls %v, want %v", log.calls, want)
	}
}

// TestRequestFingerprintListing: a request without a listing keeps its
// intent-request/v1 fingerprint; the listing is part of the fingerprint,
// so the same key with another listing is another request.
func TestRequestFingerprintListing(t *testing.T) {
	r := Request{Purpose: "credit_purchase", Credits: "100", Mint: "M", Wallet: "W"}
	b, _ := json.Marshal([]string{"intent-request/v1", "credit_purchase", "100", "M", "W"})
	sum := sha256.Sum256(b)
	if got := RequestFingerprint(r); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("v1 fingerprint changed: %s", got)
	}
	a := Request{Purpose: "marketplace_order", ListingID: "lst_a", Wallet: "W"}
	b2 := a
	b2.ListingID = "lst_b"
	if RequestFingerprint(a) == RequestFingerprint(b2) || RequestFingerprint(a) == RequestFingerprint(Request{Purpose: "marketplace_order", Wallet: "W"}) {
		t.Fatal("the listing does not change the fingerprint")
	}
}

// TestCreditPurchaseRefusesListing: a listing belongs to marketplace
// orders; a credit purchase naming one is INVALID_INPUT naming it.
func TestCreditPurchaseRefusesListing(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	_, err := h.svc.Create(context.Background(), h.user, Request{Purpose: PurposeCreditPurchase, Credits: "100", ListingID: "lst_1",
		Mint: h.mint.String(), Wallet: h.payer.String()})
	if code, _, d := fault.Public(err); code != fault.InvalidInput || d["field"] != "listingId" {
		t.Fatalf("err %v", err)
	}
}

// TestCompareLegCredits: a settlement that names each leg's account is
// compared leg by leg (settlement.legs[i].amount, drift), and without a
// Credit account settlement.amount is not compared.
func TestCompareLegCredits(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	h.splitSale(nil)
	it := h.createSplit()
	o := h.payLegs(it, func(sig string) chain.Transaction { return landedLegs(it, sig, nets(it)...) })
	it = o.Intent
	tx := landedLegs(it, it.Signature, nets(it)...)
	rec := ChainRecord{Network: it.Network, Commitment: chain.Confirmed, Transaction: &tx}
	movement := func(seller uint64) Settlement {
		return Settlement{Debit: "system:paid", LegCredits: map[string]string{"seller": "proceeds", "platform_fee": "fee"},
			Movements: []SettlementMovement{{ID: "mov_1", Scope: it.Actor.Scope(), Postings: []SettlementPosting{
				{Account: "system:paid", Amount: 1_000_000}, {Account: "proceeds", Credit: true, Amount: money.Atomic(seller)},
				{Account: "fee", Credit: true, Amount: feeNet}, {Account: "other", Credit: true, Amount: money.Atomic(sellerNet - seller)}}}}}
	}
	got, checks := Compare(it, rec, movement(sellerNet))
	names := map[string]bool{}
	for _, c := range checks {
		names[c.Name] = true
	}
	if got != OutcomeMatch || !names["settlement.legs[0].amount"] || !names["settlement.legs[1].amount"] || names["settlement.amount"] {
		t.Fatalf("outcome %s, checks %+v", got, checks)
	}
	got, checks = Compare(it, rec, movement(sellerNet-1))
	if got != OutcomeDriftDetected || !slices.Equal(failed(checks), []string{"settlement.legs[0].amount"}) {
		t.Fatalf("seller short by one: %s, failed %v", got, failed(checks))
	}
}
