package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/asset"
)

// Compile-time check: *Tx implements the asset port.
var _ asset.Store = (*Tx)(nil)

type assetRow struct {
	ID                string    `bun:"id"`
	TenantID          string    `bun:"tenant_id"`
	WorkspaceID       string    `bun:"workspace_id"`
	Environment       string    `bun:"environment"`
	MediaType         string    `bun:"media_type"`
	SizeBytes         int64     `bun:"size_bytes"`
	SHA256            string    `bun:"sha256"`
	DurationMs        *int64    `bun:"duration_ms"`
	DurationEstimated bool      `bun:"duration_estimated"`
	SampleRate        *int      `bun:"sample_rate"`
	Channels          *int      `bun:"channels"`
	BitDepth          *int      `bun:"bit_depth"`
	Origin            string    `bun:"origin"`
	Filename          string    `bun:"filename"`
	CreatedByUserID   string    `bun:"created_by_user_id"`
	CreatedByKeyID    string    `bun:"created_by_key_id"`
	CreatedAt         time.Time `bun:"created_at"`
}

func (r assetRow) asset() asset.Asset {
	return asset.Asset{
		ID: r.ID, Scope: asset.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: r.Environment},
		MediaType: r.MediaType, Size: r.SizeBytes, SHA256: r.SHA256, DurationMs: r.DurationMs,
		DurationEstimated: r.DurationEstimated, SampleRate: r.SampleRate, Channels: r.Channels, BitDepth: r.BitDepth,
		Origin: asset.Origin(r.Origin), Filename: r.Filename,
		CreatedBy: asset.Creator{UserID: r.CreatedByUserID, KeyID: r.CreatedByKeyID}, CreatedAt: r.CreatedAt.UTC(),
	}
}

// AssetInsert implements asset.Store.
func (tx *Tx) AssetInsert(ctx context.Context, a asset.Asset) (asset.Asset, error) {
	if a.ID == "" {
		a.ID = tx.NewID("ast_")
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = tx.now
	}
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO assets (id, tenant_id, workspace_id, environment, media_type,
		size_bytes, sha256, duration_ms, duration_estimated, sample_rate, channels, bit_depth, origin, filename,
		created_by_user_id, created_by_key_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Scope.TenantID, a.Scope.WorkspaceID, a.Scope.Environment, a.MediaType, a.Size, a.SHA256,
		a.DurationMs, a.DurationEstimated, a.SampleRate, a.Channels, a.BitDepth, string(a.Origin), a.Filename,
		a.CreatedBy.UserID, a.CreatedBy.KeyID, a.CreatedAt)
	if err != nil {
		return asset.Asset{}, errf("store.AssetInsert", err)
	}
	return a, nil
}

// AssetGet implements asset.Store.
func (tx *Tx) AssetGet(ctx context.Context, s asset.Scope, id string) (asset.Asset, error) {
	var row assetRow
	err := tx.idb.NewRaw(`SELECT id, tenant_id, workspace_id, environment, media_type, size_bytes, sha256, duration_ms,
		duration_estimated, sample_rate, channels, bit_depth, origin, filename, created_by_user_id, created_by_key_id,
		created_at FROM assets WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`,
		id, s.TenantID, s.WorkspaceID, s.Environment).Scan(ctx, &row)
	if err != nil {
		return asset.Asset{}, notFound("store.AssetGet", err)
	}
	return row.asset(), nil
}

// AssetReferenced implements asset.Store.
func (tx *Tx) AssetReferenced(ctx context.Context, sha256 string) (bool, error) {
	var one int
	err := tx.idb.QueryRowContext(ctx, `SELECT 1 FROM assets WHERE sha256 = ? LIMIT 1`, sha256).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, errf("store.AssetReferenced", err)
	}
	return true, nil
}

// AssetCount counts the assets of a workspace (tests and operators).
func (tx *Tx) AssetCount(ctx context.Context, workspaceID string) (int, error) {
	var n int
	err := tx.idb.QueryRowContext(ctx, `SELECT COUNT(*) FROM assets WHERE workspace_id = ?`, workspaceID).Scan(&n)
	return n, errf("store.AssetCount", err)
}

// AssetStorageAdd implements asset.Store. The counter row is created at
// zero if missing, then one conditional UPDATE adds the bytes: on
// PostgreSQL it takes the row's lock until the transaction ends, so a
// concurrent adder waits and re-evaluates the condition on the committed
// total; on SQLite the single writer serializes them.
func (tx *Tx) AssetStorageAdd(ctx context.Context, s asset.Scope, bytes, quota int64) (int64, bool, error) {
	const op = "store.AssetStorageAdd"
	if _, err := tx.idb.ExecContext(ctx, `INSERT INTO asset_storage (tenant_id, workspace_id, environment, bytes)
		VALUES (?, ?, ?, 0) ON CONFLICT (workspace_id, environment) DO NOTHING`, s.TenantID, s.WorkspaceID, s.Environment); err != nil {
		return 0, false, errf(op, err)
	}
	var total int64
	err := tx.idb.QueryRowContext(ctx, `UPDATE asset_storage SET bytes = bytes + ?
		WHERE workspace_id = ? AND environment = ? AND (? <= 0 OR bytes + ? <= ?) RETURNING bytes`,
		bytes, s.WorkspaceID, s.Environment, quota, bytes, quota).Scan(&total)
	if errors.Is(err, sql.ErrNoRows) {
		used, err := tx.AssetStorageUsed(ctx, s)
		return used, false, err
	}
	if err != nil {
		return 0, false, errf(op, err)
	}
	return total, true, nil
}

// AssetStorageUsed implements asset.Store.
func (tx *Tx) AssetStorageUsed(ctx context.Context, s asset.Scope) (int64, error) {
	var used int64
	err := tx.idb.QueryRowContext(ctx, `SELECT bytes FROM asset_storage WHERE workspace_id = ? AND environment = ?`,
		s.WorkspaceID, s.Environment).Scan(&used)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return used, errf("store.AssetStorageUsed", err)
}
