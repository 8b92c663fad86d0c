package marketplace

import (
	"context"
	"math/bits"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/policy"
)

// OrderPrefix starts an order's id.
const OrderPrefix = "ord_"

// The legs of an order's payment (intent.PriceLeg roles).
const (
	// RoleSeller is the seller's payout, net of the platform fee.
	RoleSeller = "seller"
	// RolePlatformFee is the platform fee, paid to the fee recipient.
	RolePlatformFee = "platform_fee"
)

// Snapshot is what an order froze when it was created: the listing
// version, the asset, its title and creator, the price, the license terms,
// the fee policy in force and the split. It is written once and never
// rewritten: a later listing version, offer withdrawal or fee policy
// changes nothing in it.
type Snapshot struct {
	// ListingID, ListingVersion and ListingHash name the listing version
	// bought and its content hash.
	ListingID      string
	ListingVersion int
	ListingHash    string
	// AssetID is the licensed asset; Title the listing's title.
	AssetID string
	Title   string
	// Seller is the seller's tenant, workspace and environment;
	// CreatorUserID the user who made the asset.
	Seller        access.Scope
	CreatorUserID string
	// PriceAtomic is the price in the mint's atomic units; Mint and
	// Decimals the currency, the decimals as the mint account states them.
	PriceAtomic uint64
	Mint        chain.Address
	Decimals    uint8
	// LicenseID, LicenseName and LicenseKind name the license offer; Terms
	// its rights policy version (id, version and content hash: the terms
	// hash).
	LicenseID   string
	LicenseName string
	LicenseKind Kind
	Terms       policy.Ref
	// FeePolicy is the marketplace fee policy version in force (id
	// fees.marketplace), FeeBps its rate and MinimumFeeAtomic its minimum,
	// which applied only when in the sale's currency (MinimumApplied).
	FeePolicy        policy.Ref
	FeeBps           int
	MinimumFeeAtomic string
	MinimumApplied   bool
	// SellerWallet receives SellerNetAtomic; FeeRecipient receives
	// PlatformFeeAtomic. They add up to PriceAtomic.
	SellerWallet      chain.Address
	SellerNetAtomic   uint64
	FeeRecipient      chain.Address
	PlatformFeeAtomic uint64
}

// Order is a marketplace order: one buyer workspace's purchase of one
// listing version, paid by one transaction intent.
type Order struct {
	// ID is the order's id (OrderPrefix); Version counts its writes and is
	// the store's compare-and-set token.
	ID      string
	Version int64
	// State is where the order stands (OrderMoves).
	State OrderState
	// IntentID is the transaction intent that pays it, one per order.
	IntentID string
	// Buyer is the buyer's tenant, workspace and environment; BuyerUserID
	// who bought; BuyerWallet the paying wallet.
	Buyer       access.Scope
	BuyerUserID string
	BuyerWallet chain.Address
	// Snapshot is what the order froze.
	Snapshot Snapshot
	// EntitlementID is the license entitlement the settlement issued; ""
	// before.
	EntitlementID string
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Exclusive reports whether the order licenses under an exclusive offer:
// at most one such order of an offer may be live (not expired or failed).
func (o Order) Exclusive() bool { return o.Snapshot.LicenseKind == KindExclusive }

// Split divides a price under fee policy f into the platform fee and the
// seller's net: the fee is price × FeeBps / 10000 rounded down, raised to
// the policy's minimum when that minimum is in the sale's own currency
// (Currency empty), and never more than the price. The seller gets the
// rest. minimumApplied reports that the minimum raised the fee.
//
// Decision, a minimum in another currency: a policy whose minimum names an
// ISO currency (USD) has no authoritative rate into a token mint, so for
// a token sale its rate applies alone; the snapshot records the policy
// version, so the decision is re-derivable.
func Split(price uint64, f billing.FeePolicy) (sellerNet, fee uint64, minimumApplied bool, err error) {
	const op = "marketplace.Split"
	if err := f.Validate(); err != nil {
		return 0, 0, false, &fault.Error{Op: op, Code: fault.Internal, Message: "the marketplace fee policy is invalid", Err: err}
	}
	hi, lo := bits.Mul64(price, uint64(f.FeeBps))
	fee, _ = bits.Div64(hi, lo, 10_000)
	if f.Currency == "" {
		minimum, err := strconv.ParseUint(f.MinimumFeeAtomic, 10, 64)
		if err != nil {
			return 0, 0, false, &fault.Error{Op: op, Code: fault.Internal, Message: "the fee policy's minimum does not fit", Err: err}
		}
		if minimum > fee {
			fee, minimumApplied = minimum, true
		}
	}
	fee = min(fee, price)
	return price - fee, fee, minimumApplied, nil
}

// OrderStore is what an order's units of work read and write: the
// purpose's pricing (on the read pool), its Open, Track and Settle hooks
// (bound to the intent's unit of work) and its Settlement reader. Errors
// are *fault.Error: NOT_FOUND for a missing row, CONFLICT for a lost
// compare-and-set or a taken key. It is the seam between this package and
// SQL, not a stable API.
type OrderStore interface {
	ledger.Mover
	policy.Store
	// AssetGet reads an asset of scope s; NOT_FOUND otherwise.
	AssetGet(ctx context.Context, s asset.Scope, id string) (asset.Asset, error)
	// LicenseOfferGet reads an offer of sc; NOT_FOUND otherwise.
	LicenseOfferGet(ctx context.Context, sc access.Scope, id string) (Offer, error)
	// ListingGet returns the newest version of listing id in env, of any
	// tenant (listings are public to buyers); NOT_FOUND when none.
	ListingGet(ctx context.Context, env access.Environment, id string) (Listing, error)
	// OrderInsert stores a new order. CONFLICT when its id or intent has
	// one, and (details.reason exclusive_license_taken) when it is
	// exclusive and its offer has another live order.
	OrderInsert(ctx context.Context, o Order) error
	// OrderLockByIntent returns the order intentID pays, locked for update
	// until the unit of work ends; NOT_FOUND when none.
	OrderLockByIntent(ctx context.Context, intentID string) (Order, error)
	// OrderUpdate writes o's state, entitlement, version and update time
	// when the stored version is prev; CONFLICT otherwise. The snapshot is
	// never written again.
	OrderUpdate(ctx context.Context, o Order, prev int64) error
	// EntitlementInsert stores a license entitlement. CONFLICT when its
	// order has one.
	EntitlementInsert(ctx context.Context, e Entitlement) error
	// LedgerMovementsByReference returns every movement of tenantID whose
	// reference is reference, with its postings.
	LedgerMovementsByReference(ctx context.Context, tenantID, reference string) ([]ledger.Posted, error)
}

// ReasonExclusiveTaken: an exclusive license offer already has a live
// order (details.reason of CONFLICT).
const ReasonExclusiveTaken = "exclusive_license_taken"

// OrderListParams selects a page of a workspace's orders, newest first.
type OrderListParams struct {
	// Scope is the workspace in its environment.
	Scope access.Scope
	// Role keeps the orders it bought (SideBuyer), sold (SideSeller) or,
	// empty, both.
	Role string
	// Before is the id of the last order of the previous page ("" =
	// newest).
	Before string
	// Limit bounds the page.
	Limit int
}

// The sides a workspace takes in an order (OrderListParams.Role).
const (
	// SideBuyer: the workspace bought.
	SideBuyer = "buyer"
	// SideSeller: the workspace sold.
	SideSeller = "seller"
)

// ReadStore lists a workspace's orders and entitlements, on the read
// pool. Errors are the store's.
type ReadStore interface {
	// OrderList returns up to p.Limit orders where p.Scope is the buyer or
	// the seller (as p.Role asks), newest (highest id) first.
	OrderList(ctx context.Context, p OrderListParams) ([]Order, error)
	// EntitlementList returns up to limit license entitlements holder
	// holds, newest first, with ids below before when it is set.
	EntitlementList(ctx context.Context, holder access.Scope, before string, limit int) ([]Entitlement, error)
	// FeatureEntitlements returns the feature entitlements holder's
	// workspace holds in its environment (those of both environments and
	// of that one), with their sources, by name.
	FeatureEntitlements(ctx context.Context, holder access.Scope) ([]FeatureEntitlement, error)
}

// OrderReader reads one order, on the read pool. Errors are the store's.
type OrderReader interface {
	// OrderGet returns order id when scope is its buyer or its seller (in
	// scope's environment); NOT_FOUND otherwise.
	OrderGet(ctx context.Context, scope access.Scope, id string) (Order, error)
}

// Order returns an order p's workspace bought or sold in p's environment,
// as the order list shows it; any other is NOT_FOUND.
func (s *Service) Order(ctx context.Context, st OrderReader, p *access.Principal, id string) (Order, error) {
	o, err := st.OrderGet(ctx, p.Scope(), id)
	if err != nil {
		return Order{}, fault.Wrap("marketplace.Order", err)
	}
	return o, nil
}

// Orders lists p's workspace's orders, as buyer, seller or both, newest
// first, and reports whether more follow. Errors: INVALID_INPUT naming
// role for another side.
func (s *Service) Orders(ctx context.Context, st ReadStore, p *access.Principal, role, before string, limit int) ([]Order, bool, error) {
	const op = "marketplace.Orders"
	if role != "" && role != SideBuyer && role != SideSeller {
		return nil, false, fault.Invalid(op, "role", "role is buyer or seller.")
	}
	os, err := st.OrderList(ctx, OrderListParams{Scope: p.Scope(), Role: role, Before: before, Limit: limit + 1})
	if err != nil {
		return nil, false, fault.Wrap(op, err)
	}
	more := len(os) > limit
	if more {
		os = os[:limit]
	}
	return os, more, nil
}
