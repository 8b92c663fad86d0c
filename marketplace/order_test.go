package marketplace_test

import (
	"context"
	"slices"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/policy"
)

// TestOrderTable: the order's states are the spec's, in its order, each
// one step from the one before; the exceptional ends are reached only
// from states where the payment is pending; nothing leaves PAID,
// LICENSE_ISSUED or FULFILLED but forward.
func TestOrderTable(t *testing.T) {
	spec := []marketplace.OrderState{"CREATED", "QUOTE_LOCKED", "PAYMENT_PENDING", "SUBMITTED", "CONFIRMING", "PAID", "LICENSE_ISSUED", "FULFILLED"}
	if got := marketplace.OrderStates()[:len(spec)]; !slices.Equal(got, spec) {
		t.Fatalf("states %v, want the spec's %v", got, spec)
	}
	for i := 1; i < len(spec); i++ {
		n := 0
		for _, m := range marketplace.OrderMoves() {
			if m.From == spec[i-1] && m.To == spec[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d moves from %s to %s, want one", n, spec[i-1], spec[i])
		}
	}
	for _, m := range marketplace.OrderMoves() {
		if m.From.Settled() && slices.Index(spec, m.To) != slices.Index(spec, m.From)+1 {
			t.Fatalf("a settled order moves off the path: %+v", m)
		}
		if _, err := marketplace.OrderTransition(m.From, m.Event); err != nil {
			t.Fatalf("row %+v refused: %v", m, err)
		}
	}
	if _, err := marketplace.OrderTransition(marketplace.OrderFulfilled, marketplace.OrderEventReview); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("a fulfilled order to review: %v", err)
	}
	if _, err := marketplace.OrderTransition(marketplace.OrderPaymentPending, marketplace.OrderEventPay); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("a skip: %v", err)
	}
}

// TestSplit: the fee is the rate rounded down, raised to a minimum in the
// sale's currency, capped at the price; a minimum in an ISO currency does
// not apply to a token sale.
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		price       uint64
		policy      billing.FeePolicy
		seller, fee uint64
		minimum     bool
	}{
		{25_000_000_000, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, 23_750_000_000, 1_250_000_000, false},
		{999, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, 950, 49, false},
		{999, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "100"}, 899, 100, true},
		{999, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "100", Currency: "USD"}, 950, 49, false},
		{50, billing.FeePolicy{FeeBps: 0, MinimumFeeAtomic: "80"}, 0, 50, true},
		{50, billing.FeePolicy{FeeBps: 10_000, MinimumFeeAtomic: "0"}, 0, 50, false},
		{18_446_744_073_709_551_615, billing.FeePolicy{FeeBps: 200, MinimumFeeAtomic: "0"}, 18_077_809_192_235_360_583, 368_934_881_474_191_032, false},
	} {
		seller, fee, minimum, err := marketplace.Split(c.price, c.policy)
		if err != nil || seller != c.seller || fee != c.fee || minimum != c.minimum || seller+fee != c.price {
			t.Errorf("Split(%d, %+v) = %d, %d, %v, %v; want %d, %d, %v", c.price, c.policy, seller, fee, minimum, err, c.seller, c.fee, c.minimum)
		}
	}
}

// orderWorld is a seller's listing of ast_mine at 25 tokens, a 5% fee
// policy in test, and the marketplace_order purpose over the store.
type orderWorld struct {
	st      *memStore
	svc     *marketplace.Service
	listing marketplace.Listing
	offer   marketplace.Offer
	purpose intent.Purpose
	buyer   intent.Actor
}

func newOrderWorld(t *testing.T, kind marketplace.Kind) *orderWorld {
	t.Helper()
	ctx := context.Background()
	st, svc, _, _ := marketWorld(t)
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	req := offerOf("ast_mine", st.versions[0].Ref())
	req.Kind = kind
	offer, err := svc.OfferLicense(ctx, st, p, a, req)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := publish(st, svc, p, a, listingOf(offer.ID, "25000000000"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := policy.Publish(ctx, st, policy.Scope{Environment: access.Test}, billing.FeePolicyID,
		billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, "usr_admin"); err != nil {
		t.Fatal(err)
	}
	o, err := marketplace.NewOrders(marketplace.OrdersConfig{ReadFunc: func() marketplace.OrderStore { return st },
		StoreFunc: func(intent.Store) (marketplace.OrderStore, error) { return st, nil }})
	if err != nil {
		t.Fatal(err)
	}
	st.provenance["ast_mine"] = asset.Provenance{AssetID: "ast_mine", Scope: st.assets["ast_mine"].Scope, Origin: asset.Uploaded}
	st.events, st.audits = nil, nil
	return &orderWorld{st: st, svc: svc, listing: l, offer: offer, purpose: o.Purpose(),
		buyer: intent.Actor{TenantID: "ten_2", WorkspaceID: "ws_b", UserID: "usr_b", Environment: access.Test}}
}

// buy prices the listing for the buyer and opens its order under intent
// id, frozen as the intent domain would (legs grossed up by a 2% fee).
func (w *orderWorld) buy(t *testing.T, id string) (intent.Intent, marketplace.Snapshot, error) {
	t.Helper()
	ctx := context.Background()
	pr, err := w.purpose.Price(ctx, intent.PriceInput{Actor: w.buyer, Treasury: addr("treasury"),
		Request: intent.Request{Purpose: marketplace.PurposeOrder, ListingID: w.listing.ID, Wallet: addr("buyer").String()}})
	if err != nil {
		return intent.Intent{}, marketplace.Snapshot{}, err
	}
	it := intent.Intent{ID: id, Actor: w.buyer, Purpose: marketplace.PurposeOrder, BusinessReference: marketplace.PurposeOrder + ":" + id,
		Quantity: pr.Quantity, Mint: pr.Mint, Decimals: 9, Payer: addr("buyer"), State: intent.StateCreated}
	for _, l := range pr.Legs {
		fee := l.NetAtomic / 49
		it.Legs = append(it.Legs, intent.Leg{Role: l.Role, Recipient: l.Recipient, NetAtomic: l.NetAtomic, FeeAtomic: fee, GrossAtomic: l.NetAtomic + fee})
		it.GrossAtomic, it.FeeAtomic, it.NetAtomic = it.GrossAtomic+l.NetAtomic+fee, it.FeeAtomic+fee, it.NetAtomic+l.NetAtomic
	}
	return it, pr.Terms.(marketplace.Snapshot), w.purpose.Open(ctx, nil, it, pr.Terms)
}

// order is the stored order of intent id.
func (w *orderWorld) order(t *testing.T, id string) marketplace.Order {
	t.Helper()
	o, err := w.st.OrderLockByIntent(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// eventTypes lists the types of the outbox events written so far.
func (w *orderWorld) eventTypes() []string {
	var out []string
	for _, e := range w.st.events {
		out = append(out, e.Type)
	}
	return out
}

// TestOrderLifecycle: an order snapshots the listing version, license
// terms, fee policy and split, and is PAYMENT_PENDING with its intent;
// it follows the intent's submission and confirmation; settlement writes
// the buyer's and the seller's movements to the atomic unit, issues one
// entitlement and fulfils the order, each step an outbox event; a second
// settlement changes nothing; a listing edited afterwards changes nothing
// in the order.
func TestOrderLifecycle(t *testing.T) {
	ctx := context.Background()
	w := newOrderWorld(t, marketplace.KindNonExclusive)
	it, snap, err := w.buy(t, "txi_1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.ListingID != w.listing.ID || snap.ListingVersion != 1 || snap.PriceAtomic != 25_000_000_000 || snap.SellerNetAtomic != 23_750_000_000 ||
		snap.PlatformFeeAtomic != 1_250_000_000 || snap.FeePolicy.ID != billing.FeePolicyID || snap.FeePolicy.Version != 1 ||
		snap.Terms != w.offer.Rights || snap.LicenseID != w.offer.ID || snap.CreatorUserID != "usr_1" || snap.Title != "Night Drive" ||
		snap.SellerWallet != addr("seller") || snap.FeeRecipient != addr("treasury") || snap.Decimals != 9 {
		t.Fatalf("snapshot = %+v", snap)
	}
	ord := w.order(t, "txi_1")
	want := []string{"marketplace_order.created", "marketplace_order.quote_locked", "marketplace_order.payment_pending"}
	if ord.State != marketplace.OrderPaymentPending || ord.Version != 3 || !slices.Equal(w.eventTypes(), want) {
		t.Fatalf("order %s v%d, events %v", ord.State, ord.Version, w.eventTypes())
	}

	// The seller edits the listing: the order keeps what it bought.
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	if l2, _, err := publish(w.st, w.svc, p, a, listingOf(w.offer.ID, "99000000000")); err != nil || l2.Version != 2 {
		t.Fatalf("edit: %+v %v", l2, err)
	}
	if got := w.order(t, "txi_1").Snapshot; got != snap {
		t.Fatalf("the edit rewrote the snapshot: %+v", got)
	}

	for _, s := range []intent.State{intent.StateSubmitted, intent.StateConfirming, intent.StateVerified} {
		it.State = s
		if err := w.purpose.Track(ctx, nil, it); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.order(t, "txi_1").State; got != marketplace.OrderConfirming {
		t.Fatalf("after verification: %s", got)
	}
	it.State = intent.StateSettled
	w.st.events = nil
	for range 2 {
		if err := w.purpose.Settle(ctx, nil, it); err != nil {
			t.Fatal(err)
		}
		if err := w.purpose.Track(ctx, nil, it); err != nil {
			t.Fatal(err)
		}
	}
	ord = w.order(t, "txi_1")
	if ord.State != marketplace.OrderFulfilled || ord.EntitlementID == "" || len(w.st.mk().ents) != 1 {
		t.Fatalf("settled order %+v, %d entitlements", ord, len(w.st.mk().ents))
	}
	want = []string{"ledger.movement.posted", "ledger.movement.posted", "marketplace_order.paid", "entitlement.issued",
		"marketplace_order.license_issued", "marketplace_order.fulfilled"}
	if !slices.Equal(w.eventTypes(), want) {
		t.Fatalf("settlement events %v, want %v", w.eventTypes(), want)
	}
	e := w.st.mk().ents[0]
	if e.Holder != w.buyer.Scope() || e.AssetID != "ast_mine" || e.Terms != w.offer.Rights || e.OrderID != ord.ID || e.LicenseID != w.offer.ID {
		t.Fatalf("entitlement %+v", e)
	}
	// The ledger: the buyer's movement and the seller's, to the unit.
	moves := w.st.mk().moves
	if len(moves) != 2 {
		t.Fatalf("%d movements, want 2", len(moves))
	}
	mint := it.Mint
	want2 := map[string]money.Atomic{marketplace.BuyerPaidAccount(mint): money.Atomic(it.GrossAtomic),
		marketplace.SellerProceedsAccount(addr("seller"), mint): 23_750_000_000, marketplace.PlatformFeeAccount(addr("treasury"), mint): 1_250_000_000,
		marketplace.TransferFeeAccount(mint): money.Atomic(it.FeeAtomic)}
	for _, m := range moves {
		if m.Ledger != ledger.Financial || m.Decimals != 9 {
			t.Fatalf("movement %+v", m)
		}
		for _, ps := range m.Postings {
			if m.Reference == marketplace.PurchaseReference(it) && want2[ps.Account] != ps.Amount {
				t.Fatalf("purchase posting %+v, want %d", ps, want2[ps.Account])
			}
		}
	}
	if moves[0].Scope != w.buyer.Scope() || moves[1].Scope != w.listing.Scope || moves[1].Reference != marketplace.SaleReference(it) {
		t.Fatalf("movement scopes %+v / %+v", moves[0].Scope, moves[1].Scope)
	}
	// The settlement reader names each leg's account.
	set, err := w.purpose.Settlement(ctx, nil, it)
	if err != nil || len(set.Movements) != 1 || set.Credit != "" ||
		set.LegCredits[marketplace.RoleSeller] != marketplace.SellerProceedsAccount(addr("seller"), mint) {
		t.Fatalf("settlement %+v, %v", set, err)
	}
	// The entitlement is readable and lets the buyer's workspace read the asset.
	bp := &access.Principal{Kind: access.CredentialSession, TenantID: "ten_2", WorkspaceID: "ws_b", Environment: access.Test, UserID: "usr_b"}
	lic, features, more, err := w.svc.Entitlements(ctx, w.st, bp, "", 10)
	if err != nil || len(lic) != 1 || lic[0].ID != e.ID || features != nil || more {
		t.Fatalf("entitlements %+v %+v %v %v", lic, features, more, err)
	}
	if as, err := w.svc.LicensedAsset(ctx, w.st, bp, "ast_mine"); err != nil || as.ID != "ast_mine" {
		t.Fatalf("licensed asset: %+v, %v", as, err)
	}
	other := &access.Principal{Kind: access.CredentialSession, TenantID: "ten_3", WorkspaceID: "ws_c", Environment: access.Test, UserID: "usr_c"}
	if _, err := w.svc.LicensedAsset(ctx, w.st, other, "ast_mine"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("another workspace: %v", err)
	}
	sold, _, err := w.svc.Orders(ctx, w.st, p, marketplace.SideSeller, "", 10)
	if err != nil || len(sold) != 1 || sold[0].ID != ord.ID {
		t.Fatalf("the seller's orders: %+v, %v", sold, err)
	}
}

// TestOrderRefusals: the buyer's own listing, a withdrawn offer, a missing
// fee policy, another mint or a credits field refuse the order; an
// exclusive offer takes one live order.
func TestOrderRefusals(t *testing.T) {
	ctx := context.Background()
	w := newOrderWorld(t, marketplace.KindNonExclusive)
	price := func(actor intent.Actor, req intent.Request) error {
		_, err := w.purpose.Price(ctx, intent.PriceInput{Actor: actor, Request: req, Treasury: addr("treasury")})
		return err
	}
	req := intent.Request{Purpose: marketplace.PurposeOrder, ListingID: w.listing.ID, Wallet: addr("buyer").String()}
	own := intent.Actor{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Test}
	wantFault(t, "own listing", price(own, req), fault.InvalidInput, map[string]any{"field": "listingId", "reason": marketplace.ReasonOwnListing})
	bad := req
	bad.Mint = addr("other-mint").String()
	wantFault(t, "another mint", price(w.buyer, bad), fault.InvalidInput, map[string]any{"field": "mint"})
	bad = req
	bad.Credits = "100"
	wantFault(t, "credits", price(w.buyer, bad), fault.InvalidInput, map[string]any{"field": "credits"})
	bad = req
	bad.ListingID = "lst_none"
	wantFault(t, "unknown listing", price(w.buyer, bad), fault.NotFound, map[string]any{"field": "listingId"})
	live := w.buyer
	live.Environment = access.Live
	wantFault(t, "a test listing from live", price(live, req), fault.NotFound, nil)
	if _, err := w.purpose.Price(ctx, intent.PriceInput{Actor: w.buyer, Request: req, Treasury: addr("seller")}); !fault.Is(err, fault.Conflict) {
		t.Fatalf("payout to the fee recipient: %v", err)
	}
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	if _, err := w.svc.WithdrawLicense(ctx, w.st, p, a, w.offer.ID, "req"); err != nil {
		t.Fatal(err)
	}
	wantFault(t, "withdrawn offer", price(w.buyer, req), fault.Conflict, map[string]any{"reason": marketplace.ReasonLicenseWithdrawn})

	nofee := newOrderWorld(t, marketplace.KindNonExclusive)
	nofee.st.versions = slices.DeleteFunc(nofee.st.versions, func(v policy.Version) bool { return v.ID == billing.FeePolicyID })
	_, _, err := nofee.buy(t, "txi_1")
	wantFault(t, "no fee policy", err, fault.ServiceUnavailable, map[string]any{"reason": marketplace.ReasonFeePolicyMissing})

	x := newOrderWorld(t, marketplace.KindExclusive)
	if _, _, err := x.buy(t, "txi_1"); err != nil {
		t.Fatal(err)
	}
	_, _, err = x.buy(t, "txi_2")
	wantFault(t, "a second exclusive order", err, fault.Conflict, map[string]any{"reason": marketplace.ReasonExclusiveTaken})
}

// TestOrderExceptionalEnds: an expired, failed or reviewed intent ends
// its order there, issuing nothing; a settled order is never moved again.
func TestOrderExceptionalEnds(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		path []intent.State
		want marketplace.OrderState
	}{
		{[]intent.State{intent.StateExpired}, marketplace.OrderExpired},
		{[]intent.State{intent.StateSubmitted, intent.StateExpired}, marketplace.OrderExpired},
		{[]intent.State{intent.StateSubmitted, intent.StateFailed}, marketplace.OrderFailed},
		{[]intent.State{intent.StateSubmitted, intent.StateConfirming, intent.StateRequiresReview}, marketplace.OrderRequiresReview},
		{[]intent.State{intent.StateSubmitted, intent.StateRequiresReview}, marketplace.OrderRequiresReview},
	} {
		w := newOrderWorld(t, marketplace.KindNonExclusive)
		it, _, err := w.buy(t, "txi_1")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.path {
			it.State = s
			if err := w.purpose.Track(ctx, nil, it); err != nil {
				t.Fatalf("%v: %v", c.path, err)
			}
		}
		if got := w.order(t, "txi_1"); got.State != c.want || got.EntitlementID != "" || len(w.st.mk().ents) != 0 || len(w.st.mk().moves) != 0 {
			t.Fatalf("%v: order %s, %d entitlements, %d movements", c.path, got.State, len(w.st.mk().ents), len(w.st.mk().moves))
		}
	}
	w := newOrderWorld(t, marketplace.KindNonExclusive)
	it, _, err := w.buy(t, "txi_1")
	if err != nil {
		t.Fatal(err)
	}
	it.State = intent.StateSettled
	if err := w.purpose.Settle(ctx, nil, it); err != nil {
		t.Fatal(err)
	}
	it.State = intent.StateReconciled
	if err := w.purpose.Track(ctx, nil, it); err != nil || w.order(t, "txi_1").State != marketplace.OrderFulfilled {
		t.Fatalf("a reconciled intent moved its fulfilled order: %v", err)
	}
}
