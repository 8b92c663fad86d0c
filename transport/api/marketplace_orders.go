package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/transport"
)

// ListingRequest is the body of POST /api/v1/marketplace/listings.
type ListingRequest struct {
	// AssetID is the asset to sell a license to, of the caller's workspace and environment.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// LicenseID is an active license offer of that asset (POST /api/v1/licenses): the terms buyers get.
	LicenseID string `json:"licenseId" example:"lic_01jd0000000000000000000000"`
	// Title is what buyers see: one line of 1 to 120 characters.
	Title string `json:"title" example:"Night Drive"`
	// PriceAtomic is the one authoritative price, a positive integer string of the mint's atomic units that fits 64 bits: what the seller's payout and the platform fee add up to.
	PriceAtomic string `json:"priceAtomic" example:"25000000000"`
	// Mint is the Token-2022 mint the price is in (base58); its decimals are read from the mint account on the environment's cluster.
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// PayoutWallet is the wallet the seller's share is paid to, one the caller verified (base58); omitted means the caller's only verified wallet.
	PayoutWallet string `json:"payoutWallet,omitempty" example:"Seller1111111111111111111111111111111111111"`
}

// ListingView is one version of a listing.
type ListingView struct {
	// ID is the listing's id, the same for every version.
	ID string `json:"id" example:"lst_01jd0000000000000000000000"`
	// Object is always "listing".
	Object string `json:"object" example:"listing"`
	// Version numbers the listing's versions from 1; an edit is the next version, and orders keep the version they bought.
	Version int `json:"version" example:"1"`
	// AssetID is the listed asset.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// LicenseID is the license offer the asset is sold under.
	LicenseID string `json:"licenseId" example:"lic_01jd0000000000000000000000"`
	// Title is what buyers see.
	Title string `json:"title" example:"Night Drive"`
	// PriceAtomic is the price in the mint's atomic units, an integer string.
	PriceAtomic string `json:"priceAtomic" example:"25000000000"`
	// Price is the price in user units, a decimal string (PriceAtomic over 10^decimals).
	Price string `json:"price" example:"25"`
	// Mint is the mint the price is in (base58).
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Decimals is the mint's decimals as its mint account states them.
	Decimals int `json:"decimals" example:"9"`
	// PayoutWallet is the seller's verified wallet paid the seller's share (base58).
	PayoutWallet string `json:"payoutWallet" example:"Seller1111111111111111111111111111111111111"`
	// ContentHash is the lowercase hex SHA-256 of the version's content; posting the same content again answers this version.
	ContentHash string `json:"contentHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// WorkspaceID is the seller's workspace.
	WorkspaceID string `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	// Environment is the environment (test or live) the listing belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// CreatedByUserID is the user who published the version.
	CreatedByUserID string `json:"createdByUserId" example:"usr_01jd0000000000000000000000"`
	// CreatedAt is when the version was published.
	CreatedAt time.Time `json:"createdAt"`
}

// OrderLicenseView is the license an order buys, as the order froze it.
type OrderLicenseView struct {
	// ID is the license offer's id.
	ID string `json:"id" example:"lic_01jd0000000000000000000000"`
	// Name is what the offer is called.
	Name string `json:"name" example:"Sync license"`
	// Kind says whether the asset is licensed to any number of licensees or to one.
	Kind string `json:"kind" example:"non_exclusive" enum:"non_exclusive,exclusive"`
	// PolicyID is the rights policy the license is under.
	PolicyID string `json:"policyId" example:"rights.ws_01jd0000000000000000000000.standard"`
	// PolicyVersion is that policy's version.
	PolicyVersion int `json:"policyVersion" example:"1"`
	// TermsHash is that version's content hash: the terms the buyer gets.
	TermsHash string `json:"termsHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
}

// OrderFeePolicyView is the marketplace fee policy version in force when an order was made.
type OrderFeePolicyView struct {
	// PolicyID is always fees.marketplace.
	PolicyID string `json:"policyId" example:"fees.marketplace"`
	// Version is the policy version applied.
	Version int `json:"version" example:"1"`
	// Hash is that version's content hash.
	Hash string `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// FeeBps is the rate applied, in basis points.
	FeeBps int `json:"feeBps" example:"500"`
	// MinimumFeeAtomic is the policy's minimum fee per sale, in atomic units.
	MinimumFeeAtomic string `json:"minimumFeeAtomic" example:"0"`
	// MinimumApplied is true when the minimum raised the fee (it applies only when in the sale's currency).
	MinimumApplied bool `json:"minimumApplied" example:"false"`
}

// OrderSplitView is how an order's price is paid out, each part by its own transfer of the one transaction.
type OrderSplitView struct {
	// SellerWallet is the seller's payout wallet (base58).
	SellerWallet string `json:"sellerWallet" example:"Seller1111111111111111111111111111111111111"`
	// SellerNetAtomic is what the seller's wallet receives, net of the platform fee and of any transfer fee, in atomic units.
	SellerNetAtomic string `json:"sellerNetAtomic" example:"23750000000"`
	// FeeRecipient is the platform's fee recipient wallet, the environment's treasury (base58).
	FeeRecipient string `json:"feeRecipient" example:"Treasury11111111111111111111111111111111111"`
	// PlatformFeeAtomic is the platform fee the fee recipient receives, in atomic units.
	PlatformFeeAtomic string `json:"platformFeeAtomic" example:"1250000000"`
}

// OrderView is a marketplace order with the snapshot it froze when it was made, which later
// edits of the listing, the offer or the fee policy never change.
type OrderView struct {
	// ID is the order's id.
	ID string `json:"id" example:"ord_01jd0000000000000000000000"`
	// Object is always "marketplace_order".
	Object string `json:"object" example:"marketplace_order"`
	// Role is the caller's workspace's side of the order.
	Role string `json:"role" example:"buyer" enum:"buyer,seller"`
	// State is where the order stands, in the spec's order CREATED, QUOTE_LOCKED, PAYMENT_PENDING, SUBMITTED, CONFIRMING, PAID, LICENSE_ISSUED, FULFILLED; or EXPIRED, FAILED, REQUIRES_REVIEW (a payment that does not match: nothing issued).
	State string `json:"state" example:"FULFILLED" enum:"CREATED,QUOTE_LOCKED,PAYMENT_PENDING,SUBMITTED,CONFIRMING,PAID,LICENSE_ISSUED,FULFILLED,EXPIRED,FAILED,REQUIRES_REVIEW"`
	// Version counts the order's writes.
	Version int64 `json:"version" example:"8"`
	// Environment is the environment (test or live) of the order.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// TransactionIntentID is the transaction intent (purpose marketplace_order) that pays the order.
	TransactionIntentID string `json:"transactionIntentId" example:"txi_0123456789abcdef0123456789abcdef"`
	// ListingID is the listing bought.
	ListingID string `json:"listingId" example:"lst_01jd0000000000000000000000"`
	// ListingVersion is the listing version bought.
	ListingVersion int `json:"listingVersion" example:"1"`
	// ListingHash is that version's content hash.
	ListingHash string `json:"listingHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// AssetID is the licensed asset.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// Title is the listing's title when the order was made.
	Title string `json:"title" example:"Night Drive"`
	// SellerWorkspaceID is the seller's workspace.
	SellerWorkspaceID string `json:"sellerWorkspaceId" example:"ws_01jd0000000000000000000000"`
	// CreatorUserID is the user who made the asset.
	CreatorUserID string `json:"creatorUserId" example:"usr_01jd0000000000000000000000"`
	// BuyerWorkspaceID is the buyer's workspace.
	BuyerWorkspaceID string `json:"buyerWorkspaceId" example:"ws_01jd0000000000000000000001"`
	// BuyerWallet is the wallet that pays (base58).
	BuyerWallet string `json:"buyerWallet" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// PriceAtomic is the price in atomic units, an integer string.
	PriceAtomic string `json:"priceAtomic" example:"25000000000"`
	// Price is the price in user units, a decimal string.
	Price string `json:"price" example:"25"`
	// Mint is the mint the price is in (base58).
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Decimals is the mint's decimals.
	Decimals int `json:"decimals" example:"9"`
	// License is the license bought, with its terms.
	License OrderLicenseView `json:"license"`
	// FeePolicy is the marketplace fee policy version the split was computed with.
	FeePolicy OrderFeePolicyView `json:"feePolicy"`
	// Split is how the price is paid out.
	Split OrderSplitView `json:"split"`
	// EntitlementID is the license entitlement the settlement issued; null before LICENSE_ISSUED.
	EntitlementID *string `json:"entitlementId" example:"ent_01jd0000000000000000000000"`
	// CreatedAt is when the order was made.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when its state last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// OrderPage lists a workspace's orders, newest first.
type OrderPage struct {
	// Items are the page's orders, newest first.
	Items []OrderView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOm9yZF8wMWpk"`
}

// EntitlementView is one thing a workspace may use: a license an order bought, or a feature
// entitlement of its plan.
type EntitlementView struct {
	// ID identifies the entitlement: a license's id (ent_...), or feature:<environment>:<name> for a feature entitlement as it holds in the caller's environment.
	ID string `json:"id" example:"ent_01jd0000000000000000000000"`
	// Object is always "entitlement".
	Object string `json:"object" example:"entitlement"`
	// Kind is license (an asset of another workspace bought through an order) or feature (a capability, such as marketplace.sell).
	Kind string `json:"kind" example:"license" enum:"license,feature"`
	// Source says what granted it: order:<order id> for a license, the plan (plan:studio) or another grant for a feature.
	Source string `json:"source" example:"order:ord_01jd0000000000000000000000"`
	// Environment is the environment (test or live) it holds in.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Name is a feature entitlement's name; null for a license.
	Name *string `json:"name" example:"marketplace.sell"`
	// AssetID is a license's asset; null for a feature.
	AssetID *string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// LicenseID is a license's offer; null for a feature.
	LicenseID *string `json:"licenseId" example:"lic_01jd0000000000000000000000"`
	// PolicyID is a license's rights policy; null for a feature.
	PolicyID *string `json:"policyId" example:"rights.ws_01jd0000000000000000000000.standard"`
	// PolicyVersion is a license's rights policy version; null for a feature.
	PolicyVersion *int `json:"policyVersion" example:"1"`
	// TermsHash is a license's terms hash (that version's content hash); null for a feature.
	TermsHash *string `json:"termsHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// OrderID is the order that bought a license; null for a feature.
	OrderID *string `json:"orderId" example:"ord_01jd0000000000000000000000"`
	// GrantedAt is when a license was issued; null for a feature.
	GrantedAt *time.Time `json:"grantedAt"`
}

// EntitlementPage lists what a workspace may use: its feature entitlements (first page only),
// then the licenses it bought, newest first.
type EntitlementPage struct {
	// Items are the page's entitlements.
	Items []EntitlementView `json:"items"`
	// HasMore is true when more licenses follow.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page of licenses; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOmVudF8wMWpk"`
}

func listingView(l marketplace.Listing) ListingView {
	return ListingView{ID: l.ID, Object: "listing", Version: l.Version, AssetID: l.AssetID, LicenseID: l.OfferID, Title: l.Title,
		PriceAtomic: strconv.FormatUint(l.PriceAtomic, 10), Price: intent.FormatAtomic(l.PriceAtomic, l.Decimals), Mint: l.Mint.String(),
		Decimals: int(l.Decimals), PayoutWallet: l.PayoutWallet.String(), ContentHash: l.ContentHash, WorkspaceID: l.Scope.WorkspaceID,
		Environment: string(l.Scope.Environment), CreatedByUserID: l.CreatedByUserID, CreatedAt: l.CreatedAt}
}

func orderView(o marketplace.Order, sc access.Scope) OrderView {
	s := o.Snapshot
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	role := marketplace.SideBuyer
	if o.Buyer != sc {
		role = marketplace.SideSeller
	}
	return OrderView{ID: o.ID, Object: "marketplace_order", Role: role, State: string(o.State), Version: o.Version,
		Environment: string(o.Buyer.Environment), TransactionIntentID: o.IntentID, ListingID: s.ListingID, ListingVersion: s.ListingVersion,
		ListingHash: s.ListingHash, AssetID: s.AssetID, Title: s.Title, SellerWorkspaceID: s.Seller.WorkspaceID, CreatorUserID: s.CreatorUserID,
		BuyerWorkspaceID: o.Buyer.WorkspaceID, BuyerWallet: o.BuyerWallet.String(), PriceAtomic: u(s.PriceAtomic),
		Price: intent.FormatAtomic(s.PriceAtomic, s.Decimals), Mint: s.Mint.String(), Decimals: int(s.Decimals),
		License: OrderLicenseView{ID: s.LicenseID, Name: s.LicenseName, Kind: string(s.LicenseKind), PolicyID: s.Terms.ID,
			PolicyVersion: s.Terms.Version, TermsHash: s.Terms.Hash},
		FeePolicy: OrderFeePolicyView{PolicyID: s.FeePolicy.ID, Version: s.FeePolicy.Version, Hash: s.FeePolicy.Hash, FeeBps: s.FeeBps,
			MinimumFeeAtomic: s.MinimumFeeAtomic, MinimumApplied: s.MinimumApplied},
		Split: OrderSplitView{SellerWallet: s.SellerWallet.String(), SellerNetAtomic: u(s.SellerNetAtomic), FeeRecipient: s.FeeRecipient.String(),
			PlatformFeeAtomic: u(s.PlatformFeeAtomic)},
		EntitlementID: optional(o.EntitlementID), CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
}

func licenseEntitlementView(e marketplace.Entitlement) EntitlementView {
	v := e.Terms.Version
	t := e.CreatedAt
	return EntitlementView{ID: e.ID, Object: "entitlement", Kind: marketplace.KindLicense, Source: "order:" + e.OrderID,
		Environment: string(e.Holder.Environment), AssetID: optional(e.AssetID), LicenseID: optional(e.LicenseID),
		PolicyID: optional(e.Terms.ID), PolicyVersion: &v, TermsHash: optional(e.Terms.Hash), OrderID: optional(e.OrderID), GrantedAt: &t}
}

func featureEntitlementView(f marketplace.FeatureEntitlement, env access.Environment) EntitlementView {
	return EntitlementView{ID: "feature:" + string(env) + ":" + f.Name, Object: "entitlement", Kind: marketplace.KindFeature,
		Source: f.Source, Environment: string(env), Name: optional(f.Name)}
}

func exampleOrder() OrderView {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return OrderView{ID: "ord_01jd0000000000000000000000", Object: "marketplace_order", Role: "buyer", State: "FULFILLED", Version: 8,
		Environment: "test", TransactionIntentID: "txi_0123456789abcdef0123456789abcdef", ListingID: "lst_01jd0000000000000000000000",
		ListingVersion: 1, AssetID: "ast_01jd0000000000000000000000", Title: "Night Drive", PriceAtomic: "25000000000", Price: "25",
		Decimals: 9, License: OrderLicenseView{ID: "lic_01jd0000000000000000000000", Name: "Sync license", Kind: "non_exclusive", PolicyVersion: 1},
		FeePolicy: OrderFeePolicyView{PolicyID: "fees.marketplace", Version: 1, FeeBps: 500, MinimumFeeAtomic: "0"},
		Split:     OrderSplitView{SellerNetAtomic: "23750000000", PlatformFeeAtomic: "1250000000"},
		CreatedAt: t, UpdatedAt: t}
}

// marketplaceOrderRoutes are the sales routes of the marketplace (spec,
// Rights and marketplace): publishing a listing version, and the reads of
// a workspace's orders and entitlements. Orders themselves are created by
// POST /api/v1/transactions/intent with purpose marketplace_order.
func marketplaceOrderRoutes(svc *marketplace.Service) []Route {
	if svc == nil {
		return nil
	}
	page := []transport.Param{{Name: "limit", Description: "Page size, 1 to 100 (default 20).", Example: "20"},
		{Name: "cursor", Description: "The nextCursor of the previous page.", Example: "Y3Vyc29yOm9yZF8wMWpk"}}
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	exListing := ListingView{ID: "lst_01jd0000000000000000000000", Object: "listing", Version: 1, AssetID: "ast_01jd0000000000000000000000",
		LicenseID: "lic_01jd0000000000000000000000", Title: "Night Drive", PriceAtomic: "25000000000", Price: "25", Decimals: 9,
		Environment: "test", CreatedAt: t}
	return []Route{
		{Method: http.MethodPost, Pattern: "/api/v1/marketplace/listings", OperationID: "createMarketplaceListing",
			Tag: transport.TagMarketplace, Auth: transport.AuthSession, Private: true, Permission: access.MarketplaceCreateListing,
			Idempotency: transport.IdempotencyOptional, OwnUnitOfWork: true, Status: http.StatusCreated,
			Policy:  Policy{Feature: marketplace.FeatureMarketplace, Entitlement: marketplace.EntitlementSell},
			Summary: "List an asset's license for sale",
			Description: "Publishes a listing version: an asset of the caller's workspace and environment, sold under an active " +
				"license offer of that asset (licenseId) at one authoritative price, priceAtomic, an integer of the mint's atomic units; " +
				"the mint's decimals are read from its mint account on the environment's cluster (a mint that is not an initialized, " +
				"plainly transferable Token-2022 mint is 400 INVALID_INPUT naming mint). The seller's share is paid to payoutWallet, a " +
				"wallet the caller verified (POST /api/v1/wallet/verify), or, when it is omitted, to the caller's only verified wallet: a " +
				"wallet nobody verified is 422 WALLET_REQUIRED (details.field payoutWallet, details.reason wallet_not_verified), one " +
				"another user verified 422 WALLET_MISMATCH, and without one 422 WALLET_REQUIRED (reason no_verified_wallet, or " +
				"payout_wallet_ambiguous with several). An edit is a post of the same asset and license with other content: it " +
				"supersedes the listing as its next version under the same id (201); the same content answers the current version " +
				"(200) and writes nothing. Orders keep the version they bought. An asset the caller's workspace and environment do not " +
				"hold is 404 (details.field assetId), an unknown offer 404 (licenseId), an offer of another asset 400 (reason " +
				"license_of_other_asset), a withdrawn offer 409 CONFLICT (reason license_withdrawn); a price that is not a positive " +
				"64-bit integer is 400 INVALID_AMOUNT. Needs marketplace.create_listing reaching the asset (OWNER and ADMIN any asset of " +
				"the workspace, CREATOR its own): without it 403 ACCESS_DENIED whatever the plan; with it, a workspace without the " +
				"entitlement marketplace.sell is 403 ENTITLEMENT_REQUIRED (SUBSCRIPTION_REQUIRED without a paid plan). Buyers buy a " +
				"listing with POST /api/v1/transactions/intent, purpose marketplace_order and its listingId: the price, the recipients " +
				"(the payout wallet and the platform's fee recipient) and the fee are derived from the listing and the fee policy in " +
				"force, never taken from the buyer. Writes the outbox event listing.published and an audit record.",
			Request: ListingRequest{AssetID: "ast_01jd0000000000000000000000", LicenseID: "lic_01jd0000000000000000000000", Title: "Night Drive",
				PriceAtomic: "25000000000", Mint: "Mint111111111111111111111111111111111111111"},
			Response: exListing, ExistingStatus: http.StatusOK,
			ExistingText: "OK: the content equals the listing's current version, which is answered; nothing is published.",
			Errors: []string{string(fault.NotFound), string(fault.Conflict), string(fault.InvalidAmount), string(fault.WalletRequired),
				string(fault.WalletMismatch), string(fault.ServiceUnavailable), string(fault.ProviderUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ListingRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				l, err := svc.PrepareListing(ctx, c.Tx, c.Principal, c.Authority, marketplace.ListingRequest{AssetID: in.AssetID,
					LicenseID: in.LicenseID, Title: in.Title, PriceAtomic: in.PriceAtomic, Mint: in.Mint, PayoutWallet: in.PayoutWallet,
					RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					l, created, err := svc.RecordListing(ctx, tx, c.Principal, l, c.RequestID)
					if err != nil {
						return nil, err
					}
					if !created {
						c.SetStatus(http.StatusOK)
					}
					return listingView(l), nil
				})
			}},
		{Method: http.MethodGet, Pattern: "/api/v1/marketplace/orders", OperationID: "listMarketplaceOrders",
			Tag: transport.TagMarketplace, Auth: transport.AuthSessionOrKey, Private: true, Permission: access.TreasuryRead,
			Scope: access.ScopeLedgerRead, Idempotency: transport.IdempotencyNone,
			Summary: "List the workspace's marketplace orders",
			Description: "The orders the caller's workspace bought or sold in the caller's environment, newest first, each with the " +
				"snapshot it froze when it was made (listing version and content hash, asset, title, seller and creator, price, mint " +
				"and decimals, license id, policy version and terms hash, the fee policy version in force and the split), which later " +
				"listing versions, offer withdrawals or fee policies never change. role narrows to buyer or seller. States follow the " +
				"spec's order: CREATED, QUOTE_LOCKED and PAYMENT_PENDING when the buyer's transaction intent (purpose " +
				"marketplace_order) is created; SUBMITTED and CONFIRMING as its transaction is submitted and seen on chain; PAID, " +
				"LICENSE_ISSUED and FULFILLED in the one unit of work that settles the verified payment (financial ledger entries, " +
				"the license entitlement, once). An intent that expires, fails or goes to review ends its order EXPIRED, FAILED or " +
				"REQUIRES_REVIEW, and nothing is issued. A settled order is never changed or refunded. Needs treasury.read (API key " +
				"scope ledger:read).",
			Query:    append([]transport.Param{{Name: "role", Description: "buyer or seller; omitted lists both.", Example: "buyer"}}, page...),
			Response: OrderPage{Items: []OrderView{exampleOrder()}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				before, err := transport.DecodeCursor(c, marketplace.OrderPrefix)
				if err != nil {
					return nil, err
				}
				os, more, err := svc.Orders(ctx, c.Tx, c.Principal, c.Query("role"), before, limit)
				if err != nil {
					return nil, err
				}
				p := OrderPage{Items: make([]OrderView, 0, len(os)), HasMore: more}
				for _, o := range os {
					p.Items = append(p.Items, orderView(o, c.Principal.Scope()))
				}
				if more {
					p.NextCursor = transport.EncodeCursor(os[len(os)-1].ID)
				}
				return p, nil
			}},
		{Method: http.MethodGet, Pattern: "/api/v1/entitlements", OperationID: "listEntitlements",
			Tag: transport.TagMarketplace, Auth: transport.AuthSessionOrKey, Private: true, Permission: access.WorkspaceRead,
			Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary: "List what the workspace may use",
			Description: "What the caller's workspace may use in the caller's environment, each with its kind and source: its " +
				"feature entitlements (kind feature, such as marketplace.sell, with the plan or grant that gave it; on the first page " +
				"only) and the licenses its marketplace orders bought (kind license: the asset, the license offer, the rights policy " +
				"version and terms hash, the order), newest first; the cursor pages through licenses. A license lets the workspace " +
				"download the asset's content (GET /api/v1/assets/{assetId}/content) and read its provenance; nothing else opens " +
				"another workspace's asset.",
			Query: page, Response: EntitlementPage{Items: []EntitlementView{
				{ID: "feature:test:marketplace.sell", Object: "entitlement", Kind: "feature", Source: "plan:studio", Environment: "test",
					Name: optional("marketplace.sell")}}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				before, err := transport.DecodeCursor(c, marketplace.EntitlementPrefix)
				if err != nil {
					return nil, err
				}
				lic, features, more, err := svc.Entitlements(ctx, c.Tx, c.Principal, before, limit)
				if err != nil {
					return nil, err
				}
				p := EntitlementPage{Items: make([]EntitlementView, 0, len(lic)+len(features)), HasMore: more}
				for _, f := range features {
					p.Items = append(p.Items, featureEntitlementView(f, c.Principal.Environment))
				}
				for _, e := range lic {
					p.Items = append(p.Items, licenseEntitlementView(e))
				}
				if more {
					p.NextCursor = transport.EncodeCursor(lic[len(lic)-1].ID)
				}
				return p, nil
			}},
	}
}
