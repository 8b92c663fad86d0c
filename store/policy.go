package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/policy"
)

// Tx implements the policy domain's port.
var _ policy.Store = (*Tx)(nil)

type policyRow struct {
	Environment string    `bun:"environment"`
	TenantID    string    `bun:"tenant_id"`
	PolicyID    string    `bun:"policy_id"`
	Version     int       `bun:"version"`
	ContentHash string    `bun:"content_hash"`
	Content     string    `bun:"content"`
	CreatedAt   time.Time `bun:"created_at"`
	CreatedBy   string    `bun:"created_by"`
}

func (r policyRow) version() policy.Version {
	return policy.Version{Scope: policy.Scope{Environment: access.Environment(r.Environment), TenantID: r.TenantID},
		ID: r.PolicyID, Version: r.Version, Hash: r.ContentHash, Content: json.RawMessage(r.Content),
		CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy}
}

const policyColumns = `environment, tenant_id, policy_id, version, content_hash, content, created_at, created_by`

// PolicyInsert implements policy.Store.
func (tx *Tx) PolicyInsert(ctx context.Context, v policy.Version) (policy.Version, bool, error) {
	const op = "store.PolicyInsert"
	v.CreatedAt = tx.now
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO policy_versions (`+policyColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (environment, tenant_id, policy_id, version) DO NOTHING`,
		string(v.Scope.Environment), v.Scope.TenantID, v.ID, v.Version, v.Hash, string(v.Content), tx.now, v.CreatedBy)
	if err != nil {
		return policy.Version{}, false, errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return policy.Version{}, false, errf(op, err)
	}
	return v, n == 1, nil
}

// PolicyCurrent implements policy.Store.
func (tx *Tx) PolicyCurrent(ctx context.Context, s policy.Scope, id string) (policy.Version, error) {
	var r policyRow
	err := tx.scanOne(ctx, &r, `SELECT `+policyColumns+` FROM policy_versions
		WHERE environment = ? AND tenant_id = ? AND policy_id = ? ORDER BY version DESC LIMIT 1`,
		string(s.Environment), s.TenantID, id)
	if err != nil {
		return policy.Version{}, notFound("store.PolicyCurrent", err)
	}
	return r.version(), nil
}

// PolicyGet implements policy.Store.
func (tx *Tx) PolicyGet(ctx context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	var r policyRow
	err := tx.idb.NewRaw(`SELECT `+policyColumns+` FROM policy_versions
		WHERE environment = ? AND tenant_id = ? AND policy_id = ? AND version = ?`,
		string(s.Environment), s.TenantID, id, version).Scan(ctx, &r)
	if err != nil {
		return policy.Version{}, notFound("store.PolicyGet", err)
	}
	return r.version(), nil
}

// PolicyHistory implements policy.Store.
func (tx *Tx) PolicyHistory(ctx context.Context, s policy.Scope, id string, p policy.HistoryParams) ([]policy.Version, error) {
	before := p.Before
	if before <= 0 {
		before = int(^uint32(0) >> 1)
	}
	var rows []policyRow
	err := tx.idb.NewRaw(`SELECT `+policyColumns+` FROM policy_versions
		WHERE environment = ? AND tenant_id = ? AND policy_id = ? AND version < ? ORDER BY version DESC LIMIT ?`,
		string(s.Environment), s.TenantID, id, before, p.Limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.PolicyHistory", err)
	}
	out := make([]policy.Version, len(rows))
	for i, r := range rows {
		out[i] = r.version()
	}
	return out, nil
}
