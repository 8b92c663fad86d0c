package marketplace

import (
	"context"
	"encoding/json"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// FeatureMarketplace is the feature flag that turns the marketplace's
// mutations on for a workspace (publishing rights policies, offering
// licenses). The platform seeds it on; reads are not gated.
const FeatureMarketplace = "marketplace"

// EntitlementSell is the entitlement a workspace needs to publish rights
// policies and offer licenses (the studio plan's).
const EntitlementSell = "marketplace.sell"

// The outbox event types the marketplace writes.
const (
	// EventLicenseOffered: a license offer was made on an asset.
	EventLicenseOffered = "license.offered"
	// EventLicenseWithdrawn: a license offer was withdrawn.
	EventLicenseWithdrawn = "license.withdrawn"
)

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
	// environment) holds an entitlement to asset id of another
	// workspace, which an order's settlement issues. No order issues one
	// yet: the store answers false until the orders part records them.
	EntitledToAsset(ctx context.Context, holder access.Scope, assetID string) (bool, error)
	// LicenseOfferInsert stores a new offer. CONFLICT if its id exists.
	LicenseOfferInsert(ctx context.Context, o Offer) error
	// LicenseOfferGet reads an offer of sc; NOT_FOUND otherwise.
	LicenseOfferGet(ctx context.Context, sc access.Scope, id string) (Offer, error)
	// LicenseOfferSetState writes o's state, version and update time when
	// the stored version is o.Version-1; CONFLICT otherwise.
	LicenseOfferSetState(ctx context.Context, o Offer) error
}

// Service runs rights policies, license offers and provenance reads. It
// holds no state and is safe for concurrent use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

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
