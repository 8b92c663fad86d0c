package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/policy"
)

// Tx implements the marketplace's listing, order and read ports.
var (
	_ marketplace.ListingStore = (*Tx)(nil)
	_ marketplace.OrderStore   = (*Tx)(nil)
	_ marketplace.ReadStore    = (*Tx)(nil)
	_ marketplace.OrderReader  = (*Tx)(nil)
)

type listingRow struct {
	ID              string    `bun:"id"`
	Version         int       `bun:"version"`
	TenantID        string    `bun:"tenant_id"`
	WorkspaceID     string    `bun:"workspace_id"`
	Environment     string    `bun:"environment"`
	AssetID         string    `bun:"asset_id"`
	OfferID         string    `bun:"offer_id"`
	Title           string    `bun:"title"`
	PriceAtomic     string    `bun:"price_atomic"`
	Mint            string    `bun:"mint"`
	Decimals        uint8     `bun:"decimals"`
	PayoutWallet    string    `bun:"payout_wallet"`
	ContentHash     string    `bun:"content_hash"`
	CreatedByUserID string    `bun:"created_by_user_id"`
	CreatedAt       time.Time `bun:"created_at"`
}

// listingColumns are the columns a listingRow reads, the price as text.
const listingColumns = `id, version, tenant_id, workspace_id, environment, asset_id, offer_id, title,
	CAST(price_atomic AS TEXT) AS price_atomic, mint, decimals, payout_wallet, content_hash, created_by_user_id, created_at`

func (r listingRow) listing(op string) (marketplace.Listing, error) {
	l := marketplace.Listing{ID: r.ID, Version: r.Version,
		Scope:   access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		AssetID: r.AssetID, OfferID: r.OfferID, Title: r.Title, Decimals: r.Decimals, ContentHash: r.ContentHash,
		CreatedByUserID: r.CreatedByUserID, CreatedAt: r.CreatedAt.UTC()}
	var err error
	if l.PriceAtomic, err = strconv.ParseUint(r.PriceAtomic, 10, 64); err != nil {
		return marketplace.Listing{}, corrupt(op, err)
	}
	if l.Mint, err = token2022.ParsePublicKey(r.Mint); err != nil {
		return marketplace.Listing{}, errf(op, err)
	}
	if l.PayoutWallet, err = token2022.ParsePublicKey(r.PayoutWallet); err != nil {
		return marketplace.Listing{}, errf(op, err)
	}
	return l, nil
}

// ListingInsert implements marketplace.ListingStore: CONFLICT when the
// version exists or the asset and offer have that version under another
// id.
func (tx *Tx) ListingInsert(ctx context.Context, l marketplace.Listing) error {
	const op = "store.ListingInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO marketplace_listings (id, version, tenant_id, workspace_id, environment, asset_id,
		offer_id, title, price_atomic, mint, decimals, payout_wallet, content_hash, created_by_user_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		l.ID, l.Version, l.Scope.TenantID, l.Scope.WorkspaceID, string(l.Scope.Environment), l.AssetID, l.OfferID, l.Title,
		strconv.FormatUint(l.PriceAtomic, 10), l.Mint.String(), l.Decimals, l.PayoutWallet.String(), l.ContentHash, l.CreatedByUserID,
		l.CreatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The listing version was published meanwhile.").With("listingId", l.ID).With("version", l.Version)
	}
	return nil
}

// scanListing reads one listing row.
func (tx *Tx) scanListing(ctx context.Context, op, query string, args ...any) (marketplace.Listing, error) {
	var r listingRow
	if err := tx.idb.NewRaw(query, args...).Scan(ctx, &r); err != nil {
		return marketplace.Listing{}, notFound(op, err)
	}
	return r.listing(op)
}

// ListingCurrent implements marketplace.ListingStore.
func (tx *Tx) ListingCurrent(ctx context.Context, sc access.Scope, assetID, offerID string) (marketplace.Listing, error) {
	return tx.scanListing(ctx, "store.ListingCurrent", `SELECT `+listingColumns+` FROM marketplace_listings
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND asset_id = ? AND offer_id = ? ORDER BY version DESC LIMIT 1`,
		sc.TenantID, sc.WorkspaceID, string(sc.Environment), assetID, offerID)
}

// ListingGet implements marketplace.OrderStore: the newest version, of
// any tenant of env.
func (tx *Tx) ListingGet(ctx context.Context, env access.Environment, id string) (marketplace.Listing, error) {
	return tx.scanListing(ctx, "store.ListingGet", `SELECT `+listingColumns+` FROM marketplace_listings
		WHERE id = ? AND environment = ? ORDER BY version DESC LIMIT 1`, id, string(env))
}

// snapshotBody is the stored JSON form of an order's snapshot: every field
// under a fixed name, addresses in base58 and amounts as decimal strings.
type snapshotBody struct {
	ListingID         string `json:"listingId"`
	ListingVersion    int    `json:"listingVersion"`
	ListingHash       string `json:"listingHash"`
	AssetID           string `json:"assetId"`
	Title             string `json:"title"`
	SellerTenantID    string `json:"sellerTenantId"`
	SellerWorkspaceID string `json:"sellerWorkspaceId"`
	SellerEnvironment string `json:"sellerEnvironment"`
	CreatorUserID     string `json:"creatorUserId"`
	PriceAtomic       string `json:"priceAtomic"`
	Mint              string `json:"mint"`
	Decimals          uint8  `json:"decimals"`
	LicenseID         string `json:"licenseId"`
	LicenseName       string `json:"licenseName"`
	LicenseKind       string `json:"licenseKind"`
	TermsID           string `json:"termsPolicyId"`
	TermsVersion      int    `json:"termsPolicyVersion"`
	TermsHash         string `json:"termsHash"`
	FeePolicyID       string `json:"feePolicyId"`
	FeePolicyVersion  int    `json:"feePolicyVersion"`
	FeePolicyHash     string `json:"feePolicyHash"`
	FeeBps            int    `json:"feeBps"`
	MinimumFeeAtomic  string `json:"minimumFeeAtomic"`
	MinimumApplied    bool   `json:"minimumApplied"`
	SellerWallet      string `json:"sellerWallet"`
	SellerNetAtomic   string `json:"sellerNetAtomic"`
	FeeRecipient      string `json:"feeRecipient"`
	PlatformFeeAtomic string `json:"platformFeeAtomic"`
}

func newSnapshotBody(s marketplace.Snapshot) snapshotBody {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return snapshotBody{ListingID: s.ListingID, ListingVersion: s.ListingVersion, ListingHash: s.ListingHash, AssetID: s.AssetID,
		Title: s.Title, SellerTenantID: s.Seller.TenantID, SellerWorkspaceID: s.Seller.WorkspaceID,
		SellerEnvironment: string(s.Seller.Environment), CreatorUserID: s.CreatorUserID, PriceAtomic: u(s.PriceAtomic),
		Mint: s.Mint.String(), Decimals: s.Decimals, LicenseID: s.LicenseID, LicenseName: s.LicenseName,
		LicenseKind: string(s.LicenseKind), TermsID: s.Terms.ID, TermsVersion: s.Terms.Version, TermsHash: s.Terms.Hash,
		FeePolicyID: s.FeePolicy.ID, FeePolicyVersion: s.FeePolicy.Version, FeePolicyHash: s.FeePolicy.Hash, FeeBps: s.FeeBps,
		MinimumFeeAtomic: s.MinimumFeeAtomic, MinimumApplied: s.MinimumApplied, SellerWallet: s.SellerWallet.String(),
		SellerNetAtomic: u(s.SellerNetAtomic), FeeRecipient: s.FeeRecipient.String(), PlatformFeeAtomic: u(s.PlatformFeeAtomic)}
}

func (b snapshotBody) snapshot() (marketplace.Snapshot, error) {
	s := marketplace.Snapshot{ListingID: b.ListingID, ListingVersion: b.ListingVersion, ListingHash: b.ListingHash, AssetID: b.AssetID,
		Title: b.Title, Seller: access.Scope{TenantID: b.SellerTenantID, WorkspaceID: b.SellerWorkspaceID,
			Environment: access.Environment(b.SellerEnvironment)}, CreatorUserID: b.CreatorUserID, Decimals: b.Decimals,
		LicenseID: b.LicenseID, LicenseName: b.LicenseName, LicenseKind: marketplace.Kind(b.LicenseKind),
		Terms:     policy.Ref{ID: b.TermsID, Version: b.TermsVersion, Hash: b.TermsHash},
		FeePolicy: policy.Ref{ID: b.FeePolicyID, Version: b.FeePolicyVersion, Hash: b.FeePolicyHash}, FeeBps: b.FeeBps,
		MinimumFeeAtomic: b.MinimumFeeAtomic, MinimumApplied: b.MinimumApplied}
	var err error
	for _, a := range []struct {
		into *uint64
		text string
	}{{&s.PriceAtomic, b.PriceAtomic}, {&s.SellerNetAtomic, b.SellerNetAtomic}, {&s.PlatformFeeAtomic, b.PlatformFeeAtomic}} {
		if *a.into, err = strconv.ParseUint(a.text, 10, 64); err != nil {
			return marketplace.Snapshot{}, err
		}
	}
	for _, k := range []struct {
		into *token2022.PublicKey
		text string
	}{{&s.Mint, b.Mint}, {&s.SellerWallet, b.SellerWallet}, {&s.FeeRecipient, b.FeeRecipient}} {
		if *k.into, err = token2022.ParsePublicKey(k.text); err != nil {
			return marketplace.Snapshot{}, err
		}
	}
	return s, nil
}

type orderRow struct {
	ID            string    `bun:"id"`
	IntentID      string    `bun:"intent_id"`
	TenantID      string    `bun:"tenant_id"`
	WorkspaceID   string    `bun:"workspace_id"`
	Environment   string    `bun:"environment"`
	BuyerUserID   string    `bun:"buyer_user_id"`
	BuyerWallet   string    `bun:"buyer_wallet"`
	State         string    `bun:"state"`
	Version       int64     `bun:"version"`
	Snapshot      string    `bun:"snapshot"`
	EntitlementID string    `bun:"entitlement_id"`
	CreatedAt     time.Time `bun:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at"`
}

// orderColumns are the columns an orderRow reads.
const orderColumns = `id, intent_id, tenant_id, workspace_id, environment, buyer_user_id, buyer_wallet, state, version, snapshot,
	entitlement_id, created_at, updated_at`

func (r orderRow) order(op string) (marketplace.Order, error) {
	var b snapshotBody
	if err := json.Unmarshal([]byte(r.Snapshot), &b); err != nil {
		return marketplace.Order{}, errf(op, err)
	}
	s, err := b.snapshot()
	if err != nil {
		return marketplace.Order{}, corrupt(op, err)
	}
	wallet, err := token2022.ParsePublicKey(r.BuyerWallet)
	if err != nil {
		return marketplace.Order{}, errf(op, err)
	}
	return marketplace.Order{ID: r.ID, Version: r.Version, State: marketplace.OrderState(r.State), IntentID: r.IntentID,
		Buyer:       access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		BuyerUserID: r.BuyerUserID, BuyerWallet: wallet, Snapshot: s, EntitlementID: r.EntitlementID,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}, nil
}

// OrderInsert implements marketplace.OrderStore. An insert the unique
// indexes refuse is CONFLICT: for the order's id or intent when either is
// taken, else for the exclusive offer's live order (details.reason
// exclusive_license_taken).
func (tx *Tx) OrderInsert(ctx context.Context, o marketplace.Order) error {
	const op = "store.OrderInsert"
	body, err := json.Marshal(newSnapshotBody(o.Snapshot))
	if err != nil {
		return errf(op, err)
	}
	s := o.Snapshot
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO marketplace_orders (id, intent_id, tenant_id, workspace_id, environment, buyer_user_id,
		buyer_wallet, seller_tenant_id, seller_workspace_id, listing_id, listing_version, offer_id, asset_id, exclusive, state, version,
		snapshot, entitlement_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		o.ID, o.IntentID, o.Buyer.TenantID, o.Buyer.WorkspaceID, string(o.Buyer.Environment), o.BuyerUserID, o.BuyerWallet.String(),
		s.Seller.TenantID, s.Seller.WorkspaceID, s.ListingID, s.ListingVersion, s.LicenseID, s.AssetID, o.Exclusive(), string(o.State),
		o.Version, string(body), o.EntitlementID, o.CreatedAt.UTC(), o.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil || ok {
		return err
	}
	var n int
	if err := tx.idb.NewRaw(`SELECT COUNT(*) FROM marketplace_orders WHERE id = ? OR intent_id = ?`, o.ID, o.IntentID).Scan(ctx, &n); err != nil {
		return errf(op, err)
	}
	if n > 0 {
		return fault.E(op, fault.Conflict, "The order exists.").With("orderId", o.ID)
	}
	return fault.E(op, fault.Conflict, "The exclusive license is already being bought or was bought.").With("field", "listingId").
		With("reason", marketplace.ReasonExclusiveTaken)
}

// OrderLockByIntent implements marketplace.OrderStore: FOR UPDATE on
// PostgreSQL; SQLite's single writer.
func (tx *Tx) OrderLockByIntent(ctx context.Context, intentID string) (marketplace.Order, error) {
	const op = "store.OrderLockByIntent"
	var r orderRow
	if err := tx.idb.NewRaw(`SELECT `+orderColumns+` FROM marketplace_orders WHERE intent_id = ?`+tx.rowLock(), intentID).Scan(ctx, &r); err != nil {
		return marketplace.Order{}, notFound(op, err)
	}
	return r.order(op)
}

// OrderUpdate implements marketplace.OrderStore: state, entitlement,
// version and update time, guarded by the stored version; the snapshot is
// never written again.
func (tx *Tx) OrderUpdate(ctx context.Context, o marketplace.Order, prev int64) error {
	const op = "store.OrderUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE marketplace_orders SET state = ?, version = ?, entitlement_id = ?, updated_at = ?
		WHERE id = ? AND version = ?`, string(o.State), o.Version, o.EntitlementID, o.UpdatedAt.UTC(), o.ID, prev)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The order changed meanwhile.").With("orderId", o.ID)
	}
	return nil
}

// OrderGet implements marketplace.OrderReader.
func (tx *Tx) OrderGet(ctx context.Context, sc access.Scope, id string) (marketplace.Order, error) {
	const op = "store.OrderGet"
	var r orderRow
	if err := tx.idb.NewRaw(`SELECT `+orderColumns+` FROM marketplace_orders WHERE id = ? AND environment = ?
		AND ((tenant_id = ? AND workspace_id = ?) OR (seller_tenant_id = ? AND seller_workspace_id = ?))`,
		id, string(sc.Environment), sc.TenantID, sc.WorkspaceID, sc.TenantID, sc.WorkspaceID).Scan(ctx, &r); err != nil {
		return marketplace.Order{}, notFound(op, err)
	}
	return r.order(op)
}

// OrderList implements marketplace.ReadStore.
func (tx *Tx) OrderList(ctx context.Context, p marketplace.OrderListParams) ([]marketplace.Order, error) {
	const op = "store.OrderList"
	buyer := `(tenant_id = ? AND workspace_id = ?)`
	seller := `(seller_tenant_id = ? AND seller_workspace_id = ?)`
	where, args := buyer+` OR `+seller, []any{p.Scope.TenantID, p.Scope.WorkspaceID, p.Scope.TenantID, p.Scope.WorkspaceID}
	switch p.Role {
	case marketplace.SideBuyer:
		where, args = buyer, args[:2]
	case marketplace.SideSeller:
		where, args = seller, args[2:]
	}
	q := `SELECT ` + orderColumns + ` FROM marketplace_orders WHERE (` + where + `) AND environment = ?`
	args = append(args, string(p.Scope.Environment))
	if p.Before != "" {
		q += ` AND id < ?`
		args = append(args, p.Before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, p.Limit)
	var rows []orderRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]marketplace.Order, 0, len(rows))
	for _, r := range rows {
		o, err := r.order(op)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

type entitlementRow struct {
	ID                string    `bun:"id"`
	OrderID           string    `bun:"order_id"`
	IntentID          string    `bun:"intent_id"`
	TenantID          string    `bun:"tenant_id"`
	WorkspaceID       string    `bun:"workspace_id"`
	Environment       string    `bun:"environment"`
	AssetID           string    `bun:"asset_id"`
	SellerTenantID    string    `bun:"seller_tenant_id"`
	SellerWorkspaceID string    `bun:"seller_workspace_id"`
	LicenseID         string    `bun:"license_id"`
	PolicyID          string    `bun:"policy_id"`
	PolicyVersion     int       `bun:"policy_version"`
	TermsHash         string    `bun:"terms_hash"`
	CreatedAt         time.Time `bun:"created_at"`
}

func (r entitlementRow) entitlement() marketplace.Entitlement {
	env := access.Environment(r.Environment)
	return marketplace.Entitlement{ID: r.ID, Holder: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: env},
		AssetID: r.AssetID, Seller: access.Scope{TenantID: r.SellerTenantID, WorkspaceID: r.SellerWorkspaceID, Environment: env},
		LicenseID: r.LicenseID, Terms: policy.Ref{ID: r.PolicyID, Version: r.PolicyVersion, Hash: r.TermsHash}, OrderID: r.OrderID,
		IntentID: r.IntentID, CreatedAt: r.CreatedAt.UTC()}
}

// EntitlementInsert implements marketplace.OrderStore: CONFLICT when the
// order (or the id) has one.
func (tx *Tx) EntitlementInsert(ctx context.Context, e marketplace.Entitlement) error {
	const op = "store.EntitlementInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO marketplace_entitlements (id, order_id, intent_id, tenant_id, workspace_id,
		environment, asset_id, seller_tenant_id, seller_workspace_id, license_id, policy_id, policy_version, terms_hash, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.ID, e.OrderID, e.IntentID, e.Holder.TenantID, e.Holder.WorkspaceID, string(e.Holder.Environment), e.AssetID,
		e.Seller.TenantID, e.Seller.WorkspaceID, e.LicenseID, e.Terms.ID, e.Terms.Version, e.Terms.Hash, e.CreatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The order's entitlement is issued.").With("orderId", e.OrderID)
	}
	return nil
}

// EntitledToAsset implements marketplace.Store: a license entitlement of
// holder's workspace, in its environment, to the asset.
func (tx *Tx) EntitledToAsset(ctx context.Context, holder access.Scope, assetID string) (bool, error) {
	var n int
	if err := tx.idb.NewRaw(`SELECT COUNT(*) FROM marketplace_entitlements
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND asset_id = ?`,
		holder.TenantID, holder.WorkspaceID, string(holder.Environment), assetID).Scan(ctx, &n); err != nil {
		return false, errf("store.EntitledToAsset", err)
	}
	return n > 0, nil
}

// EntitlementList implements marketplace.ReadStore.
func (tx *Tx) EntitlementList(ctx context.Context, holder access.Scope, before string, limit int) ([]marketplace.Entitlement, error) {
	const op = "store.EntitlementList"
	q := `SELECT id, order_id, intent_id, tenant_id, workspace_id, environment, asset_id, seller_tenant_id, seller_workspace_id,
		license_id, policy_id, policy_version, terms_hash, created_at FROM marketplace_entitlements
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{holder.TenantID, holder.WorkspaceID, string(holder.Environment)}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	var rows []entitlementRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]marketplace.Entitlement, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.entitlement())
	}
	return out, nil
}

// FeatureEntitlements implements marketplace.ReadStore: the entitlements
// rows of the workspace in both environments (”) and in holder's, by
// name; a name held both ways shows the environment's own row.
func (tx *Tx) FeatureEntitlements(ctx context.Context, holder access.Scope) ([]marketplace.FeatureEntitlement, error) {
	var rows []struct {
		Entitlement string `bun:"entitlement"`
		Environment string `bun:"environment"`
		Source      string `bun:"source"`
	}
	if err := tx.idb.NewRaw(`SELECT entitlement, environment, source FROM entitlements WHERE workspace_id = ? AND environment IN ('', ?)
		ORDER BY entitlement, environment DESC`, holder.WorkspaceID, string(holder.Environment)).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.FeatureEntitlements", err)
	}
	var out []marketplace.FeatureEntitlement
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].Name == r.Entitlement {
			continue
		}
		out = append(out, marketplace.FeatureEntitlement{Name: r.Entitlement, Source: r.Source})
	}
	return out, nil
}
