package marketplace

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// FeatureMarketplace is the feature flag that turns the marketplace's
// mutations on for a workspace (publishing rights policies, offering
// licenses, listing them). The platform seeds it on; reads are not gated,
// nor is buying, which is a transaction intent.
const FeatureMarketplace = "marketplace"

// EntitlementSell is the entitlement a workspace needs to publish rights
// policies, offer licenses and list them (the studio plan's).
const EntitlementSell = "marketplace.sell"

// The outbox event types the marketplace writes.
const (
	// EventLicenseOffered: a license offer was made on an asset.
	EventLicenseOffered = "license.offered"
	// EventLicenseWithdrawn: a license offer was withdrawn.
	EventLicenseWithdrawn = "license.withdrawn"
	// EventListingPublished: a listing version was published (the first,
	// or one that supersedes the listing's previous version).
	EventListingPublished = "listing.published"
	// EventEntitlementIssued: an order's settlement issued the buyer's
	// license entitlement.
	EventEntitlementIssued = "entitlement.issued"
)

// OrderEventType is the outbox event type of an order written in state
// s: "marketplace_order.created", "marketplace_order.paid", ... one per
// state (OrderStates).
func OrderEventType(s OrderState) string { return "marketplace_order." + strings.ToLower(string(s)) }

// Audit actions and targets of the marketplace.
const (
	// ActionRightsPublished: a rights policy version was published.
	// Before: the previous version's reference (absent for the first);
	// after: the new one's and its rules.
	ActionRightsPublished = "rights_policy.published"
	// ActionLicenseOffered: a license offer was made. After: asset,
	// rights policy reference, name, kind, state.
	ActionLicenseOffered = "license.offered"
	// ActionLicenseWithdrawn: a license offer was withdrawn. Before and
	// after: state.
	ActionLicenseWithdrawn = "license.withdrawn"
	// TargetRightsPolicy is a rights policy (target id: the policy id).
	TargetRightsPolicy = "rights_policy"
	// TargetLicense is a license offer (target id: the offer id).
	TargetLicense = "license"
	// ActionListingPublished: a listing version was published. Before:
	// the previous version's id, version and content hash (absent for the
	// first); after: the new version's content.
	ActionListingPublished = "listing.published"
	// TargetListing is a listing (target id: the listing id).
	TargetListing = "listing"
)

// Store is the port the service reads and writes through, bound to one
// unit of work (or the read pool for reads). Errors are *fault.Error:
// NOT_FOUND for a missing row, CONFLICT for a lost compare-and-set or a
// taken id. It is the seam between this package and SQL, not a stable API.
type Store interface {
	policy.Store
	outbox.Writer
	account.AuditWriter
	// AssetGet reads an asset of scope s; NOT_FOUND for one of another
	// tenant, workspace or environment (asset.Store's method).
	AssetGet(ctx context.Context, s asset.Scope, id string) (asset.Asset, error)
	// AssetProvenanceGet reads the provenance of asset id in environment
	// env, of any tenant: the service decides who reads it. NOT_FOUND when
	// there is none.
	AssetProvenanceGet(ctx context.Context, env access.Environment, id string) (asset.Provenance, error)
	// EntitledToAsset reports whether holder (a workspace in an
	// environment) holds a license entitlement to asset id of another
	// workspace: one an order's settlement issued (EntitlementInsert).
	EntitledToAsset(ctx context.Context, holder access.Scope, assetID string) (bool, error)
	// LicenseOfferInsert stores a new offer. CONFLICT if its id exists.
	LicenseOfferInsert(ctx context.Context, o Offer) error
	// LicenseOfferGet reads an offer of sc; NOT_FOUND otherwise.
	LicenseOfferGet(ctx context.Context, sc access.Scope, id string) (Offer, error)
	// LicenseOfferSetState writes o's state, version and update time when
	// the stored version is o.Version-1; CONFLICT otherwise.
	LicenseOfferSetState(ctx context.Context, o Offer) error
}

// Mints reads a payment mint from an environment's cluster, by the rules
// an intent's mint is held to; *chain/intent.Service satisfies it.
type Mints interface {
	// PaymentMint reads mint on env's cluster. Errors: INVALID_INPUT
	// naming "mint"; SERVICE_UNAVAILABLE without a cluster;
	// PROVIDER_UNAVAILABLE when it cannot be read.
	PaymentMint(ctx context.Context, env access.Environment, mint string) (intent.PaymentMint, error)
}

// Wallets answers who holds a verified wallet; chain/wallet.Links
// satisfies it.
type Wallets interface {
	// Holder returns the user address is linked to in tenantID, "" for
	// nobody.
	Holder(ctx context.Context, tenantID string, address chain.Address) (string, error)
	// Of lists userID's verified wallets in tenantID, oldest first.
	Of(ctx context.Context, tenantID, userID string) ([]chain.Address, error)
}

// Config configures a Service. Its zero value serves rights policies,
// license offers and the reads; listings also need Mints and Wallets
// (without them publishing a listing is SERVICE_UNAVAILABLE).
type Config struct {
	// Mints reads a listing's mint and decimals from the chain.
	Mints Mints
	// Wallets checks a listing's payout wallet.
	Wallets Wallets
}

// Service runs rights policies, license offers, listings and the
// marketplace's reads (provenance, orders, entitlements). It holds no
// state of its own and is safe for concurrent use. Orders are created
// and settled through the transaction intent of purpose
// marketplace_order (Orders).
type Service struct {
	cfg Config
}

// New returns a Service.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// event writes the outbox event typ of offer o in st's unit of work.
func event(ctx context.Context, st Store, o Offer, typ string) error {
	payload, err := json.Marshal(map[string]any{"id": o.ID, "assetId": o.AssetID, "state": o.State, "kind": o.Kind,
		"name": o.Name, "rightsPolicy": o.Rights, "createdByUserId": o.CreatedByUserID})
	if err != nil {
		return err
	}
	_, err = st.OutboxInsert(ctx, outbox.Event{TenantID: o.Scope.TenantID, WorkspaceID: o.Scope.WorkspaceID,
		Environment: string(o.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: o.ID,
		AggregateVersion: o.Version, OccurredAt: st.Now(), Payload: payload})
	return err
}

// emit writes the outbox event typ of a listing, order or entitlement in
// st's unit of work: aggregate id and version, in sc's tenant, workspace
// and environment, with payload.
func emit(ctx context.Context, st outbox.Writer, at time.Time, sc access.Scope, typ, id string, version int64, payload any) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	_, err = st.OutboxInsert(ctx, outbox.Event{TenantID: sc.TenantID, WorkspaceID: sc.WorkspaceID, Environment: string(sc.Environment),
		Type: typ, SchemaVersion: 1, AggregateID: id, AggregateVersion: version, OccurredAt: at, Payload: b})
	return err
}
