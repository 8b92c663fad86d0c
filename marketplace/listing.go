package marketplace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// ListingPrefix starts a listing's id.
const ListingPrefix = "lst_"

// MaxListingTitle bounds a listing's title, in characters.
const MaxListingTitle = 120

// Reasons of the listing and order refusals (details.reason).
const (
	// ReasonLicenseWithdrawn: the license offer is withdrawn.
	ReasonLicenseWithdrawn = "license_withdrawn"
	// ReasonLicenseOfOtherAsset: the license offer licenses another asset.
	ReasonLicenseOfOtherAsset = "license_of_other_asset"
	// ReasonWalletNotVerified: the payout wallet is verified by nobody in
	// the tenant.
	ReasonWalletNotVerified = "wallet_not_verified"
	// ReasonNoVerifiedWallet: no payout wallet was named and the caller
	// has no verified wallet.
	ReasonNoVerifiedWallet = "no_verified_wallet"
	// ReasonPayoutWalletAmbiguous: no payout wallet was named and the
	// caller has several verified wallets.
	ReasonPayoutWalletAmbiguous = "payout_wallet_ambiguous"
)

// Listing is one version of a listing: an asset of the seller's workspace
// offered under one active license offer at one authoritative price, in a
// mint whose decimals were read from the chain, paid out to one verified
// wallet of the seller. Versions are immutable; an edit is the next
// version of the same listing (same ID), and orders keep the version they
// snapshotted.
type Listing struct {
	// ID is the listing's id (ListingPrefix), the same for every version.
	ID string
	// Version numbers the listing's versions from 1.
	Version int
	// Scope is the seller's tenant, workspace and environment.
	Scope access.Scope
	// AssetID is the listed asset, of Scope.
	AssetID string
	// OfferID is the license offer the asset is sold under, of Scope.
	OfferID string
	// Title is what buyers see, 1 to MaxListingTitle characters.
	Title string
	// PriceAtomic is the price in the mint's atomic units: what the
	// seller's payout and the platform fee add up to, net of any transfer
	// fee (the buyer's wallet pays that on top).
	PriceAtomic uint64
	// Mint is the payment mint; Decimals its decimals, read from the mint
	// account.
	Mint     chain.Address
	Decimals uint8
	// PayoutWallet is the seller's verified wallet the seller's share is
	// paid to.
	PayoutWallet chain.Address
	// ContentHash is the hex SHA-256 of the version's content (ContentHash).
	ContentHash string
	// CreatedByUserID is the user who published the version; CreatedAt
	// when.
	CreatedByUserID string
	CreatedAt       time.Time
}

// listingContent is the canonical form a listing version's content hash
// covers, in a fixed field order.
type listingContent struct {
	Schema       string `json:"schema"`
	AssetID      string `json:"assetId"`
	OfferID      string `json:"offerId"`
	Title        string `json:"title"`
	PriceAtomic  string `json:"priceAtomic"`
	Mint         string `json:"mint"`
	Decimals     uint8  `json:"decimals"`
	PayoutWallet string `json:"payoutWallet"`
}

// ListingContentHash returns the hex SHA-256 of l's content (asset,
// offer, title, price, mint, decimals, payout wallet) in canonical form: a
// listing posted again with the same content is the same version.
func ListingContentHash(l Listing) string {
	b, _ := json.Marshal(listingContent{Schema: "listing/v1", AssetID: l.AssetID, OfferID: l.OfferID, Title: l.Title,
		PriceAtomic: strconv.FormatUint(l.PriceAtomic, 10), Mint: l.Mint.String(), Decimals: l.Decimals, PayoutWallet: l.PayoutWallet.String()})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ListingStore is what publishing a listing reads and writes, bound to one
// unit of work, or to the read pool for PrepareListing. Errors as Store's.
type ListingStore interface {
	outbox.Writer
	account.AuditWriter
	// AssetGet reads an asset of scope s; NOT_FOUND otherwise.
	AssetGet(ctx context.Context, s asset.Scope, id string) (asset.Asset, error)
	// LicenseOfferGet reads an offer of sc; NOT_FOUND otherwise.
	LicenseOfferGet(ctx context.Context, sc access.Scope, id string) (Offer, error)
	// ListingCurrent returns the newest version of sc's listing of asset
	// assetID under offer offerID; NOT_FOUND when there is none.
	ListingCurrent(ctx context.Context, sc access.Scope, assetID, offerID string) (Listing, error)
	// ListingInsert stores a listing version. CONFLICT when the version
	// exists, or when a first version of the same asset and offer was
	// stored under another id meanwhile.
	ListingInsert(ctx context.Context, l Listing) error
}

// ListingRequest asks for a listing version.
type ListingRequest struct {
	// AssetID is the asset, of the caller's workspace and environment.
	AssetID string
	// LicenseID is an active license offer of that asset.
	LicenseID string
	// Title is what buyers see.
	Title string
	// PriceAtomic is the price, a canonical positive integer string of
	// the mint's atomic units.
	PriceAtomic string
	// Mint is the payment mint (base58).
	Mint string
	// PayoutWallet, when set, is a verified wallet of the caller (base58);
	// empty means the caller's only verified wallet.
	PayoutWallet string
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// validate returns in normalized, or INVALID_INPUT (INVALID_AMOUNT for the
// price) naming the field.
func (in ListingRequest) validate(op string) (ListingRequest, uint64, error) {
	in.Title = strings.TrimSpace(in.Title)
	n := utf8.RuneCountInString(in.Title)
	switch {
	case in.AssetID == "":
		return in, 0, fault.Invalid(op, "assetId", "assetId is required.")
	case in.LicenseID == "":
		return in, 0, fault.Invalid(op, "licenseId", "licenseId is required.")
	case !utf8.ValidString(in.Title) || n == 0 || n > MaxListingTitle || strings.ContainsFunc(in.Title, unicode.IsControl):
		return in, 0, fault.Invalid(op, "title", "title is one line of 1 to 120 characters.").With("limit", MaxListingTitle)
	case in.Mint == "":
		return in, 0, fault.Invalid(op, "mint", "mint is required.")
	}
	price, err := strconv.ParseUint(in.PriceAtomic, 10, 64)
	if err != nil || price == 0 || strconv.FormatUint(price, 10) != in.PriceAtomic {
		return in, 0, fault.E(op, fault.InvalidAmount, "priceAtomic is a positive integer string of atomic units that fits 64 bits.").
			With("field", "priceAtomic")
	}
	return in, price, nil
}

// PrepareListing checks a listing request of p against st (the read pool)
// and the chain, outside any unit of work, and returns the version to
// publish (ID and Version unset): the asset of p's workspace, an active
// license offer of it, the price, the mint and its decimals as the mint
// account states them, and the payout wallet. RecordListing publishes it.
//
// Errors: INVALID_INPUT naming the field (INVALID_AMOUNT for priceAtomic;
// details.reason license_of_other_asset for an offer of another asset);
// NOT_FOUND (details.field assetId or licenseId) for an asset or offer p's
// workspace and environment do not hold; ACCESS_DENIED when p's
// marketplace.create_listing grant does not reach the asset; CONFLICT
// (details.field licenseId, reason license_withdrawn) for a withdrawn
// offer; WALLET_REQUIRED (details.field payoutWallet) for a payout wallet
// nobody verified (reason wallet_not_verified), or, without one, when p
// has no verified wallet (no_verified_wallet) or several
// (payout_wallet_ambiguous); WALLET_MISMATCH for a payout wallet another
// user verified; INVALID_INPUT naming mint for a mint the cluster does not
// hold as a plain-transferable Token-2022 mint; SERVICE_UNAVAILABLE when
// the environment has no cluster (or the service no chain); and
// PROVIDER_UNAVAILABLE when it cannot be read.
func (s *Service) PrepareListing(ctx context.Context, st ListingStore, p *access.Principal, a *access.Authority, in ListingRequest) (Listing, error) {
	const op = "marketplace.PublishListing"
	in, price, err := in.validate(op)
	if err != nil {
		return Listing{}, err
	}
	if s.cfg.Mints == nil || s.cfg.Wallets == nil {
		return Listing{}, fault.E(op, fault.ServiceUnavailable, "Listings are not available on this host.")
	}
	sc := p.Scope()
	as, err := st.AssetGet(ctx, asset.Scope{TenantID: sc.TenantID, WorkspaceID: sc.WorkspaceID, Environment: string(sc.Environment)}, in.AssetID)
	if fault.Is(err, fault.NotFound) {
		return Listing{}, fault.E(op, fault.NotFound, "No such asset.").With("field", "assetId")
	}
	if err != nil {
		return Listing{}, fault.Wrap(op, err)
	}
	if p.UserID == "" || !a.Reaches(p, access.MarketplaceCreateListing, &access.Resource{OwnerUserID: as.CreatedBy.UserID, WorkspaceID: sc.WorkspaceID}) {
		return Listing{}, fault.E(op, fault.AccessDenied, "").With("permission", string(access.MarketplaceCreateListing))
	}
	o, err := st.LicenseOfferGet(ctx, sc, in.LicenseID)
	if fault.Is(err, fault.NotFound) {
		return Listing{}, fault.E(op, fault.NotFound, "No such license offer.").With("field", "licenseId")
	}
	if err != nil {
		return Listing{}, fault.Wrap(op, err)
	}
	if err := listable(op, o, as.ID); err != nil {
		return Listing{}, err
	}
	payout, err := s.payoutWallet(ctx, op, p, in.PayoutWallet)
	if err != nil {
		return Listing{}, err
	}
	mint, err := s.cfg.Mints.PaymentMint(ctx, sc.Environment, in.Mint)
	if err != nil {
		return Listing{}, fault.Wrap(op, err)
	}
	l := Listing{Scope: sc, AssetID: as.ID, OfferID: o.ID, Title: in.Title, PriceAtomic: price, Mint: mint.Address, Decimals: mint.Decimals,
		PayoutWallet: payout, CreatedByUserID: p.UserID}
	l.ContentHash = ListingContentHash(l)
	return l, nil
}

// listable refuses an offer that is not an active offer of assetID.
func listable(op string, o Offer, assetID string) error {
	if o.AssetID != assetID {
		return fault.Invalid(op, "licenseId", "The license offer licenses another asset.").With("reason", ReasonLicenseOfOtherAsset)
	}
	if o.State != StateActive {
		return fault.E(op, fault.Conflict, "The license offer is withdrawn.").With("field", "licenseId").With("reason", ReasonLicenseWithdrawn)
	}
	return nil
}

// payoutWallet returns the wallet a listing of p pays out to: raw when
// set, which p must have verified, else p's only verified wallet.
func (s *Service) payoutWallet(ctx context.Context, op string, p *access.Principal, raw string) (chain.Address, error) {
	required := func(reason, msg string) error {
		return fault.E(op, fault.WalletRequired, msg).With("field", "payoutWallet").With("reason", reason)
	}
	if raw == "" {
		ws, err := s.cfg.Wallets.Of(ctx, p.TenantID, p.UserID)
		if err != nil {
			return chain.Address{}, fault.Wrap(op, err)
		}
		switch len(ws) {
		case 0:
			return chain.Address{}, required(ReasonNoVerifiedWallet, "A verified wallet is required to be paid: verify one, or name payoutWallet.")
		case 1:
			return ws[0], nil
		}
		return chain.Address{}, required(ReasonPayoutWalletAmbiguous, "Several verified wallets: name the one to be paid as payoutWallet.")
	}
	addr, err := token2022.ParsePublicKey(raw)
	if err != nil {
		return chain.Address{}, fault.Invalid(op, "payoutWallet", "payoutWallet is a base58 address.")
	}
	holder, err := s.cfg.Wallets.Holder(ctx, p.TenantID, addr)
	if err != nil {
		return chain.Address{}, fault.Wrap(op, err)
	}
	switch holder {
	case "":
		return chain.Address{}, required(ReasonWalletNotVerified, "The payout wallet is not a verified wallet: verify it first.")
	case p.UserID:
		return addr, nil
	}
	return chain.Address{}, fault.E(op, fault.WalletMismatch, "The payout wallet is verified by another user.").With("field", "payoutWallet")
}

// RecordListing publishes a version PrepareListing returned, in st's unit
// of work: the first version of the asset and offer's listing, or, when
// its content differs from the listing's current version, the next
// version of the same listing (created true, with the outbox event
// listing.published and an audit record). Content equal to the current
// version's publishes nothing and answers that version (created false).
// Orders keep the version they snapshotted whatever is published after.
// The offer is read again in the unit: one withdrawn meanwhile is
// refused.
//
// Errors: CONFLICT (reason license_withdrawn) as PrepareListing's, and
// CONFLICT when a concurrent publisher won.
func (s *Service) RecordListing(ctx context.Context, st ListingStore, p *access.Principal, l Listing, requestID string) (Listing, bool, error) {
	const op = "marketplace.PublishListing"
	o, err := st.LicenseOfferGet(ctx, l.Scope, l.OfferID)
	if err != nil {
		return Listing{}, false, fault.Wrap(op, err)
	}
	if err := listable(op, o, l.AssetID); err != nil {
		return Listing{}, false, err
	}
	cur, err := st.ListingCurrent(ctx, l.Scope, l.AssetID, l.OfferID)
	switch {
	case err == nil && cur.ContentHash == l.ContentHash:
		return cur, false, nil
	case err == nil:
		l.ID, l.Version = cur.ID, cur.Version+1
	case fault.Is(err, fault.NotFound):
		l.ID, l.Version = st.NewID(ListingPrefix), 1
	default:
		return Listing{}, false, fault.Wrap(op, err)
	}
	l.CreatedAt = st.Now()
	if err := st.ListingInsert(ctx, l); err != nil {
		return Listing{}, false, fault.Wrap(op, err)
	}
	content := listingAudit(l)
	if err := emit(ctx, st, l.CreatedAt, l.Scope, EventListingPublished, l.ID, int64(l.Version), content); err != nil {
		return Listing{}, false, fault.Wrap(op, err)
	}
	var before any
	if l.Version > 1 {
		before = map[string]any{"id": cur.ID, "version": cur.Version, "contentHash": cur.ContentHash}
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionListingPublished, TargetType: TargetListing, TargetID: l.ID,
		RequestID: requestID, Before: before, After: content}); err != nil {
		return Listing{}, false, fault.Wrap(op, err)
	}
	return l, true, nil
}

// listingAudit is a listing version's content as its event and audit
// record carry it.
func listingAudit(l Listing) map[string]any {
	return map[string]any{"id": l.ID, "version": l.Version, "assetId": l.AssetID, "licenseId": l.OfferID, "title": l.Title,
		"priceAtomic": strconv.FormatUint(l.PriceAtomic, 10), "mint": l.Mint.String(), "decimals": l.Decimals,
		"payoutWallet": l.PayoutWallet.String(), "contentHash": l.ContentHash}
}
