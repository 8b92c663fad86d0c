package marketplace

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// EntitlementPrefix starts a license entitlement's id.
const EntitlementPrefix = "ent_"

// The kinds of what a workspace may use (GET /entitlements).
const (
	// KindLicense is a license an order bought: the right to use one
	// asset of another workspace under its terms.
	KindLicense = "license"
	// KindFeature is a feature entitlement of the workspace's plan (or
	// granted otherwise, as its source says).
	KindFeature = "feature"
)

// Entitlement is a license a settled order issued: the buyer's workspace
// may use the asset under the license's terms, and download its content.
// It is issued once per order, in the unit of work that settles it, and
// never changed.
type Entitlement struct {
	// ID is the entitlement's id (EntitlementPrefix).
	ID string
	// Holder is the buyer's tenant, workspace and environment.
	Holder access.Scope
	// AssetID is the licensed asset; Seller its workspace.
	AssetID string
	Seller  access.Scope
	// LicenseID is the license offer; Terms its rights policy version (id,
	// version, and content hash: the terms hash).
	LicenseID string
	Terms     policy.Ref
	// OrderID is the order that issued it; IntentID the intent that paid.
	OrderID  string
	IntentID string
	// CreatedAt is when it was issued.
	CreatedAt time.Time
}

// FeatureEntitlement is a feature entitlement a workspace holds, and where
// it comes from ("plan:studio").
type FeatureEntitlement struct {
	// Name is the entitlement, such as "marketplace.sell".
	Name string
	// Source says what granted it, such as "plan:studio".
	Source string
}

// Entitlements returns what p's workspace may use in p's environment: the
// licenses its orders bought, newest first (up to limit, below before,
// and whether more follow), and, on the first page only (before empty),
// its feature entitlements with their sources.
func (s *Service) Entitlements(ctx context.Context, st ReadStore, p *access.Principal, before string, limit int) (
	licenses []Entitlement, features []FeatureEntitlement, more bool, err error) {
	const op = "marketplace.Entitlements"
	sc := p.Scope()
	if licenses, err = st.EntitlementList(ctx, sc, before, limit+1); err != nil {
		return nil, nil, false, fault.Wrap(op, err)
	}
	if more = len(licenses) > limit; more {
		licenses = licenses[:limit]
	}
	if before == "" {
		if features, err = st.FeatureEntitlements(ctx, sc); err != nil {
			return nil, nil, false, fault.Wrap(op, err)
		}
	}
	return licenses, features, more, nil
}

// LicensedAsset returns asset id of another workspace for p's workspace to
// download, when that workspace holds a license entitlement to it in p's
// environment (an order of it settled): a buyer's license is the one way
// to another workspace's content. The asset is read in its own scope.
//
// Errors: NOT_FOUND for an asset p's workspace holds no license to,
// whether or not it exists.
func (s *Service) LicensedAsset(ctx context.Context, st Store, p *access.Principal, id string) (asset.Asset, error) {
	const op = "marketplace.LicensedAsset"
	notFound := fault.E(op, fault.NotFound, "No such asset.")
	if id == "" {
		return asset.Asset{}, notFound
	}
	ok, err := st.EntitledToAsset(ctx, p.Scope(), id)
	if err != nil {
		return asset.Asset{}, fault.Wrap(op, err)
	}
	if !ok {
		return asset.Asset{}, notFound
	}
	pr, err := st.AssetProvenanceGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) {
		return asset.Asset{}, notFound
	}
	if err != nil {
		return asset.Asset{}, fault.Wrap(op, err)
	}
	a, err := st.AssetGet(ctx, pr.Scope, id)
	if fault.Is(err, fault.NotFound) {
		return asset.Asset{}, notFound
	}
	if err != nil {
		return asset.Asset{}, fault.Wrap(op, err)
	}
	return a, nil
}
