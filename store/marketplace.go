package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/policy"
)

// Tx implements the marketplace's port.
var _ marketplace.Store = (*Tx)(nil)

// AssetProvenanceInsert implements asset.ProvenanceWriter: the record and
// its parents, in order.
func (tx *Tx) AssetProvenanceInsert(ctx context.Context, p asset.Provenance) error {
	const op = "store.AssetProvenanceInsert"
	var recorded *time.Time
	if !p.RecordedAt.IsZero() {
		t := p.RecordedAt.UTC()
		recorded = &t
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO asset_provenance (asset_id, tenant_id, workspace_id, environment, origin,
		creator_user_id, provider, model, operation_id, output_sha256, basis, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		p.AssetID, p.Scope.TenantID, p.Scope.WorkspaceID, p.Scope.Environment, string(p.Origin), nullable(p.CreatorUserID),
		nullable(p.Provider), nullable(p.Model), nullable(p.OperationID), p.OutputSHA256, string(p.Basis), recorded)
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The asset has a provenance record.").With("assetId", p.AssetID)
	}
	for i, parent := range p.Parents {
		if _, err := tx.idb.ExecContext(ctx, `INSERT INTO asset_provenance_parents (asset_id, ordinal, parent_asset_id, parent_sha256)
			VALUES (?, ?, ?, ?)`, p.AssetID, i, parent.AssetID, nullable(parent.SHA256)); err != nil {
			return errf(op, err)
		}
	}
	return nil
}

// nullable is s, or NULL for "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type provenanceRow struct {
	AssetID       string     `bun:"asset_id"`
	TenantID      string     `bun:"tenant_id"`
	WorkspaceID   string     `bun:"workspace_id"`
	Environment   string     `bun:"environment"`
	Origin        string     `bun:"origin"`
	CreatorUserID *string    `bun:"creator_user_id"`
	Provider      *string    `bun:"provider"`
	Model         *string    `bun:"model"`
	OperationID   *string    `bun:"operation_id"`
	OutputSHA256  string     `bun:"output_sha256"`
	Basis         string     `bun:"basis"`
	RecordedAt    *time.Time `bun:"recorded_at"`
}

type parentRow struct {
	ParentAssetID string  `bun:"parent_asset_id"`
	ParentSHA256  *string `bun:"parent_sha256"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AssetProvenanceGet implements marketplace.Store: by asset id in one
// environment, of any tenant (the service decides who reads it).
func (tx *Tx) AssetProvenanceGet(ctx context.Context, env access.Environment, id string) (asset.Provenance, error) {
	const op = "store.AssetProvenanceGet"
	var r provenanceRow
	if err := tx.idb.NewRaw(`SELECT asset_id, tenant_id, workspace_id, environment, origin, creator_user_id, provider, model,
		operation_id, output_sha256, basis, recorded_at FROM asset_provenance WHERE asset_id = ? AND environment = ?`,
		id, string(env)).Scan(ctx, &r); err != nil {
		return asset.Provenance{}, notFound(op, err)
	}
	var parents []parentRow
	if err := tx.idb.NewRaw(`SELECT parent_asset_id, parent_sha256 FROM asset_provenance_parents WHERE asset_id = ? ORDER BY ordinal`,
		id).Scan(ctx, &parents); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return asset.Provenance{}, errf(op, err)
	}
	p := asset.Provenance{AssetID: r.AssetID, Scope: asset.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: r.Environment},
		Origin: asset.Origin(r.Origin), CreatorUserID: deref(r.CreatorUserID), Provider: deref(r.Provider), Model: deref(r.Model),
		OperationID: deref(r.OperationID), OutputSHA256: r.OutputSHA256, Basis: asset.Basis(r.Basis)}
	if r.RecordedAt != nil {
		p.RecordedAt = r.RecordedAt.UTC()
	}
	for _, pr := range parents {
		p.Parents = append(p.Parents, asset.Parent{AssetID: pr.ParentAssetID, SHA256: deref(pr.ParentSHA256)})
	}
	return p, nil
}

type offerRow struct {
	ID              string    `bun:"id"`
	TenantID        string    `bun:"tenant_id"`
	WorkspaceID     string    `bun:"workspace_id"`
	Environment     string    `bun:"environment"`
	AssetID         string    `bun:"asset_id"`
	PolicyID        string    `bun:"policy_id"`
	PolicyVersion   int       `bun:"policy_version"`
	TermsHash       string    `bun:"terms_hash"`
	Name            string    `bun:"name"`
	Kind            string    `bun:"kind"`
	State           string    `bun:"state"`
	Version         int64     `bun:"version"`
	CreatedByUserID string    `bun:"created_by_user_id"`
	CreatedAt       time.Time `bun:"created_at"`
	UpdatedAt       time.Time `bun:"updated_at"`
}

func (r offerRow) offer() marketplace.Offer {
	return marketplace.Offer{ID: r.ID,
		Scope:   access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		AssetID: r.AssetID, Rights: policy.Ref{ID: r.PolicyID, Version: r.PolicyVersion, Hash: r.TermsHash}, Name: r.Name,
		Kind: marketplace.Kind(r.Kind), State: marketplace.State(r.State), Version: r.Version, CreatedByUserID: r.CreatedByUserID,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// LicenseOfferInsert implements marketplace.Store.
func (tx *Tx) LicenseOfferInsert(ctx context.Context, o marketplace.Offer) error {
	const op = "store.LicenseOfferInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO license_offers (id, tenant_id, workspace_id, environment, asset_id, policy_id,
		policy_version, terms_hash, name, kind, state, version, created_by_user_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		o.ID, o.Scope.TenantID, o.Scope.WorkspaceID, string(o.Scope.Environment), o.AssetID, o.Rights.ID, o.Rights.Version,
		o.Rights.Hash, o.Name, string(o.Kind), string(o.State), o.Version, o.CreatedByUserID, o.CreatedAt.UTC(), o.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The license offer exists.").With("offerId", o.ID)
	}
	return nil
}

// LicenseOfferGet implements marketplace.Store: one tenant, workspace and
// environment.
func (tx *Tx) LicenseOfferGet(ctx context.Context, sc access.Scope, id string) (marketplace.Offer, error) {
	var r offerRow
	if err := tx.idb.NewRaw(`SELECT id, tenant_id, workspace_id, environment, asset_id, policy_id, policy_version, terms_hash, name,
		kind, state, version, created_by_user_id, created_at, updated_at FROM license_offers
		WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`,
		id, sc.TenantID, sc.WorkspaceID, string(sc.Environment)).Scan(ctx, &r); err != nil {
		return marketplace.Offer{}, notFound("store.LicenseOfferGet", err)
	}
	return r.offer(), nil
}

// LicenseOfferSetState implements marketplace.Store: a compare-and-set on
// version.
func (tx *Tx) LicenseOfferSetState(ctx context.Context, o marketplace.Offer) error {
	const op = "store.LicenseOfferSetState"
	res, err := tx.idb.ExecContext(ctx, `UPDATE license_offers SET state = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(o.State), o.Version, o.UpdatedAt.UTC(), o.ID, o.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The license offer changed meanwhile.")
	}
	return nil
}
