package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
)

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

// AssetProvenanceGet reads the provenance of asset id in environment env,
// of any tenant (its reader decides who may see it); NOT_FOUND when none.
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
