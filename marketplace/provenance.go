package marketplace

import (
	"context"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
)

// Provenance returns the provenance record of asset id as p may read it:
// the asset's own workspace reads it (the route requires project.read, as
// every asset read does), and so does a workspace that holds an
// entitlement to the asset (Store.EntitledToAsset, which orders will
// issue; none is issued yet). Nothing of another environment is read.
//
// Errors: NOT_FOUND for an asset p may not read, whether or not it exists.
func (s *Service) Provenance(ctx context.Context, st Store, p *access.Principal, id string) (asset.Provenance, error) {
	const op = "marketplace.Provenance"
	notFound := fault.E(op, fault.NotFound, "No such asset.")
	if id == "" {
		return asset.Provenance{}, notFound
	}
	pr, err := st.AssetProvenanceGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) {
		return asset.Provenance{}, notFound
	}
	if err != nil {
		return asset.Provenance{}, fault.Wrap(op, err)
	}
	if pr.Scope.TenantID == p.TenantID && pr.Scope.WorkspaceID == p.WorkspaceID {
		return pr, nil
	}
	ok, err := st.EntitledToAsset(ctx, p.Scope(), id)
	if err != nil {
		return asset.Provenance{}, fault.Wrap(op, err)
	}
	if !ok {
		return asset.Provenance{}, notFound
	}
	return pr, nil
}
