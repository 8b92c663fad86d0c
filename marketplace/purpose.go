package marketplace

import (
	"context"
	"errors"
	"slices"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/policy"
)

// PurposeOrder is the transaction intent purpose that buys a listing.
const PurposeOrder = "marketplace_order"

// Reasons of order refusals (details.reason).
const (
	// ReasonOwnListing: a workspace cannot buy its own listing.
	ReasonOwnListing = "own_listing"
	// ReasonFeePolicyMissing: the environment has no marketplace fee
	// policy, so no split can be derived.
	ReasonFeePolicyMissing = "fee_policy_missing"
	// ReasonPayoutIsFeeRecipient: the listing pays out to the platform's
	// fee recipient, which cannot be two legs of one payment.
	ReasonPayoutIsFeeRecipient = "payout_is_fee_recipient"
)

// OrdersConfig configures the marketplace_order purpose.
type OrdersConfig struct {
	// ReadFunc returns the read pool, for pricing. Required.
	ReadFunc func() OrderStore
	// StoreFunc returns the marketplace's ports bound to an intent's unit
	// of work (the platform's store implements both on one transaction),
	// so that an order's writes commit with its intent's. Required.
	StoreFunc func(st intent.Store) (OrderStore, error)
}

// Orders is the marketplace_order purpose: it prices a listing, opens the
// order with its intent, moves the order with the intent and settles it
// once. It is safe for concurrent use.
type Orders struct {
	cfg OrdersConfig
}

// NewOrders validates cfg and returns the purpose's implementation.
func NewOrders(cfg OrdersConfig) (*Orders, error) {
	if cfg.ReadFunc == nil || cfg.StoreFunc == nil {
		return nil, errors.New("marketplace: OrdersConfig needs ReadFunc and StoreFunc")
	}
	return &Orders{cfg: cfg}, nil
}

// Purpose returns the marketplace_order purpose, settled at confirmed (a
// user payment), to register with the intent registry.
func (o *Orders) Purpose() intent.Purpose {
	return intent.Purpose{Name: PurposeOrder, Threshold: chain.Confirmed, Price: o.price, Open: o.open, Track: o.track,
		Settle: o.settle, Settlement: o.settlement}
}

// store returns the order ports of st's unit of work.
func (o *Orders) store(op string, st intent.Store) (OrderStore, error) {
	ms, err := o.cfg.StoreFunc(st)
	if err != nil {
		return nil, &fault.Error{Op: op, Code: fault.Internal, Message: "the unit of work holds no marketplace store", Err: err}
	}
	return ms, nil
}

// price derives an order's economics from the listing the request names,
// never from the caller: the listing's current version (price, mint,
// decimals, payout wallet), its offer, which must be active, the asset's
// creator, and the marketplace fee policy in force, which splits the
// price into the seller's payout and the platform fee to the environment's
// treasury (Split). Legs that pay nothing are left out. The snapshot rides
// in Price.Terms to the Open hook.
//
// Errors: INVALID_INPUT naming listingId (missing; details.reason
// own_listing for the buyer's own workspace's listing), credits (set) or
// mint (not the listing's); NOT_FOUND naming listingId; CONFLICT naming
// listingId (reason license_withdrawn, or payout_is_fee_recipient);
// SERVICE_UNAVAILABLE (reason fee_policy_missing) without a fee policy.
func (o *Orders) price(ctx context.Context, in intent.PriceInput) (intent.Price, error) {
	const op = "marketplace.Orders.Price"
	req, actor := in.Request, in.Actor
	switch {
	case req.ListingID == "":
		return intent.Price{}, fault.Invalid(op, "listingId", "listingId is required: the listing to buy.")
	case req.Credits != "":
		return intent.Price{}, fault.Invalid(op, "credits", "credits is for credit_purchase; a marketplace order buys a listing.")
	}
	st := o.cfg.ReadFunc()
	l, err := st.ListingGet(ctx, actor.Environment, req.ListingID)
	if fault.Is(err, fault.NotFound) {
		return intent.Price{}, fault.E(op, fault.NotFound, "No such listing.").With("field", "listingId")
	}
	if err != nil {
		return intent.Price{}, fault.Wrap(op, err)
	}
	if l.Scope.TenantID == actor.TenantID && l.Scope.WorkspaceID == actor.WorkspaceID {
		return intent.Price{}, fault.Invalid(op, "listingId", "A workspace cannot buy its own listing.").With("reason", ReasonOwnListing)
	}
	if req.Mint != "" && req.Mint != l.Mint.String() {
		return intent.Price{}, fault.Invalid(op, "mint", "The listing is priced in another mint; leave mint out or send the listing's.").
			With("listingMint", l.Mint.String())
	}
	offer, err := st.LicenseOfferGet(ctx, l.Scope, l.OfferID)
	if err != nil {
		return intent.Price{}, fault.Wrap(op, err)
	}
	if offer.State != StateActive {
		return intent.Price{}, fault.E(op, fault.Conflict, "The listing's license offer is withdrawn.").With("field", "listingId").
			With("reason", ReasonLicenseWithdrawn)
	}
	as, err := st.AssetGet(ctx, asset.Scope{TenantID: l.Scope.TenantID, WorkspaceID: l.Scope.WorkspaceID, Environment: string(l.Scope.Environment)}, l.AssetID)
	if err != nil {
		return intent.Price{}, fault.Wrap(op, err)
	}
	v, err := policy.Current(ctx, st, policy.Scope{Environment: actor.Environment}, billing.FeePolicyID)
	if fault.Is(err, fault.NotFound) {
		return intent.Price{}, fault.E(op, fault.ServiceUnavailable, "The marketplace fee policy is not published in this environment.").
			With("reason", ReasonFeePolicyMissing)
	}
	if err != nil {
		return intent.Price{}, fault.Wrap(op, err)
	}
	var f billing.FeePolicy
	if err := v.Decode(&f); err != nil {
		return intent.Price{}, fault.Wrap(op, err)
	}
	seller, fee, minimum, err := Split(l.PriceAtomic, f)
	if err != nil {
		return intent.Price{}, err
	}
	if l.PayoutWallet == in.Treasury {
		return intent.Price{}, fault.E(op, fault.Conflict, "The listing pays out to the platform's fee recipient.").With("field", "listingId").
			With("reason", ReasonPayoutIsFeeRecipient)
	}
	snap := Snapshot{ListingID: l.ID, ListingVersion: l.Version, ListingHash: l.ContentHash, AssetID: l.AssetID, Title: l.Title,
		Seller: l.Scope, CreatorUserID: as.CreatedBy.UserID, PriceAtomic: l.PriceAtomic, Mint: l.Mint, Decimals: l.Decimals,
		LicenseID: offer.ID, LicenseName: offer.Name, LicenseKind: offer.Kind, Terms: offer.Rights,
		FeePolicy: v.Ref(), FeeBps: f.FeeBps, MinimumFeeAtomic: f.MinimumFeeAtomic, MinimumApplied: minimum,
		SellerWallet: l.PayoutWallet, SellerNetAtomic: seller, FeeRecipient: in.Treasury, PlatformFeeAtomic: fee}
	return intent.Price{Mint: l.Mint, Legs: snap.legs(), Quantity: "1", Description: l.Title + " (" + offer.Name + ")",
		Policy: intent.PolicyRef{ID: v.ID, Version: v.Version, Hash: v.Hash}, Terms: snap}, nil
}

// legs are the payment legs of the snapshot's split, those that pay
// something, seller first.
func (s Snapshot) legs() []intent.PriceLeg {
	var out []intent.PriceLeg
	if s.SellerNetAtomic > 0 {
		out = append(out, intent.PriceLeg{Role: RoleSeller, Recipient: s.SellerWallet, NetAtomic: s.SellerNetAtomic})
	}
	if s.PlatformFeeAtomic > 0 {
		out = append(out, intent.PriceLeg{Role: RolePlatformFee, Recipient: s.FeeRecipient, NetAtomic: s.PlatformFeeAtomic})
	}
	return out
}

// matches refuses an intent whose frozen payment is not the snapshot's:
// its mint, decimals and legs (role, recipient, net) in order. INTERNAL:
// the intent and the order were made from one price.
func matches(op string, it intent.Intent, s Snapshot) error {
	want := s.legs()
	got := make([]intent.PriceLeg, 0, len(it.Legs))
	for _, l := range it.Legs {
		got = append(got, intent.PriceLeg{Role: l.Role, Recipient: l.Recipient, NetAtomic: l.NetAtomic})
	}
	if it.Mint != s.Mint || it.Decimals != s.Decimals || !slices.Equal(got, want) {
		return fault.E(op, fault.Internal, "the intent's payment differs from the order's snapshot").With("intentId", it.ID)
	}
	return nil
}

// open records the order of a new intent from the snapshot its price
// froze, in the intent's unit of work: CREATED, then QUOTE_LOCKED (the
// snapshot and the intent's economics hash are frozen) and PAYMENT_PENDING
// (the prepared transaction is offered), an outbox event each. An
// exclusive offer with a live order refuses a second (CONFLICT, reason
// exclusive_license_taken), and the intent is not recorded either.
func (o *Orders) open(ctx context.Context, st intent.Store, it intent.Intent, terms any) error {
	const op = "marketplace.Orders.Open"
	snap, ok := terms.(Snapshot)
	if !ok {
		return fault.E(op, fault.Internal, "the marketplace_order price froze no snapshot")
	}
	if err := matches(op, it, snap); err != nil {
		return err
	}
	ms, err := o.store(op, st)
	if err != nil {
		return err
	}
	now := ms.Now()
	ord := Order{ID: ms.NewID(OrderPrefix), Version: 1, State: OrderCreated, IntentID: it.ID, Buyer: it.Actor.Scope(),
		BuyerUserID: it.Actor.UserID, BuyerWallet: it.Payer, Snapshot: snap, CreatedAt: now, UpdatedAt: now}
	if err := ms.OrderInsert(ctx, ord); err != nil {
		return fault.Wrap(op, err)
	}
	if err := orderEvent(ctx, ms, ord); err != nil {
		return fault.Wrap(op, err)
	}
	return o.advance(ctx, op, ms, ord, OrderPaymentPending)
}

// orderEvent writes the outbox event of ord as written (OrderEventType of
// its state) in the buyer's scope.
func orderEvent(ctx context.Context, ms OrderStore, ord Order) error {
	return emit(ctx, ms, ms.Now(), ord.Buyer, OrderEventType(ord.State), ord.ID, ord.Version, map[string]any{
		"id": ord.ID, "state": ord.State, "intentId": ord.IntentID, "listingId": ord.Snapshot.ListingID,
		"listingVersion": ord.Snapshot.ListingVersion, "assetId": ord.Snapshot.AssetID, "sellerWorkspaceId": ord.Snapshot.Seller.WorkspaceID,
		"entitlementId": ord.EntitlementID})
}

// move applies event e to ord, one step of the table, with its outbox
// event; the row is written by the caller (OrderUpdate).
func move(ctx context.Context, ms OrderStore, ord *Order, e OrderEvent) error {
	to, err := OrderTransition(ord.State, e)
	if err != nil {
		return err
	}
	ord.State, ord.Version, ord.UpdatedAt = to, ord.Version+1, ms.Now()
	return orderEvent(ctx, ms, *ord)
}

// advance moves ord forward along the spec's path to to, one step and
// one event at a time, and writes it (compare-and-set on its version).
func (o *Orders) advance(ctx context.Context, op string, ms OrderStore, ord Order, to OrderState) error {
	events, ok := forward(ord.State, to)
	if !ok {
		return fault.E(op, fault.InvalidState, "The order cannot move there.").With("from", string(ord.State)).With("to", string(to))
	}
	prev := ord.Version
	for _, e := range events {
		if err := move(ctx, ms, &ord, e); err != nil {
			return err
		}
	}
	return fault.Wrap(op, ms.OrderUpdate(ctx, ord, prev))
}

// target is where an intent's state puts its order, and the event of an
// exceptional move ("" for a state on the path).
func target(s intent.State) (OrderState, OrderEvent) {
	switch s {
	case intent.StateSubmitted:
		return OrderSubmitted, ""
	case intent.StateConfirming, intent.StateVerified:
		return OrderConfirming, ""
	case intent.StateSettled, intent.StateReconciling, intent.StateReconciled:
		return OrderFulfilled, ""
	case intent.StateExpired:
		return OrderExpired, OrderEventExpire
	case intent.StateFailed:
		return OrderFailed, OrderEventFail
	case intent.StateRequiresReview:
		return OrderRequiresReview, OrderEventReview
	}
	return OrderPaymentPending, ""
}

// track moves an order with its intent, in the intent's unit of work,
// never backwards: submitted, confirming (also while verified), and the
// exceptional ends (expired, failed, requires review: nothing issued).
// Settlement moves it itself (settle), before track runs; a settled
// order is never moved again, whatever reconciliation concludes.
func (o *Orders) track(ctx context.Context, st intent.Store, it intent.Intent) error {
	const op = "marketplace.Orders.Track"
	ms, err := o.store(op, st)
	if err != nil {
		return err
	}
	ord, err := ms.OrderLockByIntent(ctx, it.ID)
	if err != nil {
		return fault.Wrap(op, err)
	}
	to, e := target(it.State)
	switch {
	case ord.State == to:
		return nil
	case to == OrderFulfilled && !ord.State.Settled():
		return fault.E(op, fault.Internal, "the intent settled but its order was not paid").With("orderId", ord.ID)
	case ord.State.Settled():
		return nil
	case e == "":
		if _, ok := forward(ord.State, to); !ok {
			return nil // already past it: never backwards
		}
		return o.advance(ctx, op, ms, ord, to)
	}
	prev := ord.Version
	if _, err := OrderTransition(ord.State, e); err != nil {
		// A pending order the intent left in one write (found and
		// refused together) reaches the exceptional end through SUBMITTED.
		if _, ok := forward(ord.State, OrderSubmitted); !ok {
			return err
		}
		if err := move(ctx, ms, &ord, OrderEventSubmit); err != nil {
			return err
		}
	}
	if err := move(ctx, ms, &ord, e); err != nil {
		return err
	}
	return fault.Wrap(op, ms.OrderUpdate(ctx, ord, prev))
}

// Ledger accounts and references of order settlement (financial ledger).

// BuyerPaidAccount is the buyer's side of an order's payment: a system
// account debited with what the buyer's wallet sent (the gross, transfer
// fees included), so that its balance is minus what buyers paid in mint.
func BuyerPaidAccount(mint chain.Address) string {
	return "system:marketplace-buyer-paid:" + mint.String()
}

// SalesAccount is the seller's side: a system account debited with each
// sale's price, so that its balance is minus the seller's sales in mint.
func SalesAccount(mint chain.Address) string { return "system:marketplace-sales:" + mint.String() }

// SellerProceedsAccount is what a seller's payout wallet received of
// mint, credited with each sale's seller leg.
func SellerProceedsAccount(wallet, mint chain.Address) string {
	return "marketplace-seller-proceeds:" + wallet.String() + ":" + mint.String()
}

// PlatformFeeAccount is what the platform's fee recipient received of
// mint, credited with each sale's platform fee leg.
func PlatformFeeAccount(recipient, mint chain.Address) string {
	return "marketplace-platform-fee:" + recipient.String() + ":" + mint.String()
}

// TransferFeeAccount is what the mint withheld as Token-2022 transfer
// fees on orders' transfers.
func TransferFeeAccount(mint chain.Address) string {
	return "marketplace-transfer-fee-withheld:" + mint.String()
}

// PurchaseReference is the reference of the buyer's movement of the
// order an intent pays: "purchase:marketplace_order:<intent id>".
func PurchaseReference(it intent.Intent) string { return "purchase:" + it.BusinessReference }

// SaleReference is the reference of the seller's movement:
// "sale:marketplace_order:<intent id>".
func SaleReference(it intent.Intent) string { return "sale:" + it.BusinessReference }

// legAccount is the account a settlement credits with leg l's net.
func legAccount(l intent.Leg, mint chain.Address) string {
	if l.Role == RoleSeller {
		return SellerProceedsAccount(l.Recipient, mint)
	}
	return PlatformFeeAccount(l.Recipient, mint)
}

// settle is verified settlement, in the unit of work that moves the
// intent to SETTLED, once: the financial ledger's two movements (the
// buyer's: buyer paid, seller proceeds, platform fee, transfer fee
// withheld; the seller's: its sale, proceeds and the fee taken from it),
// the order PAID, the license entitlement issued (LICENSE_ISSUED) and the
// order FULFILLED, an outbox event each. An order already paid is left
// as it is: the intent's compare-and-set runs it once per intent, and the
// references and the entitlement's order make a replay harmless.
func (o *Orders) settle(ctx context.Context, st intent.Store, it intent.Intent) error {
	const op = "marketplace.Orders.Settle"
	ms, err := o.store(op, st)
	if err != nil {
		return err
	}
	ord, err := ms.OrderLockByIntent(ctx, it.ID)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if ord.State.Settled() {
		return nil
	}
	s := ord.Snapshot
	if err := matches(op, it, s); err != nil {
		return err
	}
	if err := postPurchase(ctx, ms, it, s); err != nil {
		return fault.Wrap(op, err)
	}
	prev := ord.Version
	events, ok := forward(ord.State, OrderPaid)
	if !ok {
		return fault.E(op, fault.InvalidState, "The order cannot be paid in its state.").With("state", string(ord.State))
	}
	for _, e := range events {
		if err := move(ctx, ms, &ord, e); err != nil {
			return err
		}
	}
	now := ms.Now()
	ent := Entitlement{ID: ms.NewID(EntitlementPrefix), Holder: ord.Buyer, AssetID: s.AssetID, Seller: s.Seller, LicenseID: s.LicenseID,
		Terms: s.Terms, OrderID: ord.ID, IntentID: it.ID, CreatedAt: now}
	if err := ms.EntitlementInsert(ctx, ent); err != nil {
		return fault.Wrap(op, err)
	}
	if err := emit(ctx, ms, now, ent.Holder, EventEntitlementIssued, ent.ID, 1, map[string]any{"id": ent.ID, "kind": KindLicense,
		"assetId": ent.AssetID, "licenseId": ent.LicenseID, "terms": ent.Terms, "orderId": ent.OrderID}); err != nil {
		return fault.Wrap(op, err)
	}
	ord.EntitlementID = ent.ID
	for _, e := range []OrderEvent{OrderEventIssueLicense, OrderEventFulfill} {
		if err := move(ctx, ms, &ord, e); err != nil {
			return err
		}
	}
	return fault.Wrap(op, ms.OrderUpdate(ctx, ord, prev))
}

// postPurchase posts the order's two financial movements.
func postPurchase(ctx context.Context, ms OrderStore, it intent.Intent, s Snapshot) error {
	svc := ledger.New()
	buyer := []ledger.Posting{{Account: BuyerPaidAccount(it.Mint), Direction: ledger.Debit, Amount: money.Atomic(it.GrossAtomic)}}
	var sale []ledger.Posting
	for _, l := range it.Legs {
		p := ledger.Posting{Account: legAccount(l, it.Mint), Direction: ledger.Credit, Amount: money.Atomic(l.NetAtomic)}
		buyer, sale = append(buyer, p), append(sale, p)
	}
	if it.FeeAtomic > 0 {
		buyer = append(buyer, ledger.Posting{Account: TransferFeeAccount(it.Mint), Direction: ledger.Credit, Amount: money.Atomic(it.FeeAtomic)})
	}
	sale = append([]ledger.Posting{{Account: SalesAccount(it.Mint), Direction: ledger.Debit, Amount: money.Atomic(s.PriceAtomic)}}, sale...)
	if _, _, err := svc.Post(ctx, ms, ledger.Movement{Scope: it.Actor.Scope(), Ledger: ledger.Financial, Type: ledger.TypeTransfer,
		Reference: PurchaseReference(it), Decimals: int(it.Decimals), Postings: buyer, Actor: ledger.Actor{UserID: it.Actor.UserID}}); err != nil {
		return err
	}
	_, _, err := svc.Post(ctx, ms, ledger.Movement{Scope: s.Seller, Ledger: ledger.Financial, Type: ledger.TypeTransfer,
		Reference: SaleReference(it), Decimals: int(it.Decimals), Postings: sale})
	return err
}

// settlement reads back the buyer's movement of the order it pays, for
// reconciliation: exactly one is expected in the buyer's scope, crediting
// each leg's account with the leg's net (LegCredits); what is bought is a
// license, no amount, so Credit is empty.
func (o *Orders) settlement(ctx context.Context, st intent.Store, it intent.Intent) (intent.Settlement, error) {
	const op = "marketplace.Orders.Settlement"
	ms, err := o.store(op, st)
	if err != nil {
		return intent.Settlement{}, err
	}
	posted, err := ms.LedgerMovementsByReference(ctx, it.Actor.TenantID, PurchaseReference(it))
	if err != nil {
		return intent.Settlement{}, fault.Wrap(op, err)
	}
	out := intent.Settlement{Debit: BuyerPaidAccount(it.Mint), LegCredits: map[string]string{}}
	for _, l := range it.Legs {
		out.LegCredits[l.Role] = legAccount(l, it.Mint)
	}
	for _, m := range posted {
		sm := intent.SettlementMovement{ID: m.ID, Reference: m.Reference, Scope: m.Scope}
		for _, p := range m.Postings {
			sm.Postings = append(sm.Postings, intent.SettlementPosting{Account: p.Account, Credit: p.Direction == ledger.Credit, Amount: p.Amount})
		}
		out.Movements = append(out.Movements, sm)
	}
	return out, nil
}
