package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
)

var (
	_ apikey.Store     = (*Tx)(nil)
	_ apikey.AuthStore = (*Tx)(nil)
)

type keyRow struct {
	ID              string     `bun:"id"`
	TenantID        string     `bun:"tenant_id"`
	WorkspaceID     string     `bun:"workspace_id"`
	Environment     string     `bun:"environment"`
	Name            string     `bun:"name"`
	Scopes          string     `bun:"scopes"`
	Metadata        string     `bun:"metadata"`
	CreatedByUserID string     `bun:"created_by_user_id"`
	CreatedByKeyID  string     `bun:"created_by_key_id"`
	Internal        bool       `bun:"internal"`
	Status          string     `bun:"status"`
	RatePerMinute   int        `bun:"rate_per_minute"`
	MaxConcurrent   int        `bun:"max_concurrent"`
	MonthlyBudget   int64      `bun:"monthly_budget"`
	Version         int64      `bun:"version"`
	CreatedAt       time.Time  `bun:"created_at"`
	UpdatedAt       time.Time  `bun:"updated_at"`
	LastUsedAt      *time.Time `bun:"last_used_at"`
	RevokedAt       *time.Time `bun:"revoked_at"`
	Prefix          string     `bun:"prefix"`
	Last4           string     `bun:"last4"`
	// Secret columns, filled by KeyByDigest.
	SecretCreatedAt *time.Time `bun:"secret_created_at"`
	SecretExpiresAt *time.Time `bun:"secret_expires_at"`
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func (r keyRow) key() (apikey.Key, error) {
	k := apikey.Key{
		ID: r.ID, TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment),
		Name: r.Name, Status: apikey.Status(r.Status), Internal: r.Internal,
		Limits:          apikey.Limits{RequestsPerMinute: r.RatePerMinute, MaxConcurrentRequests: r.MaxConcurrent, MonthlyRequestBudget: r.MonthlyBudget},
		CreatedByUserID: r.CreatedByUserID, CreatedByKeyID: r.CreatedByKeyID, Prefix: r.Prefix, Last4: r.Last4,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), LastUsedAt: utcPtr(r.LastUsedAt), RevokedAt: utcPtr(r.RevokedAt),
		Version: r.Version,
	}
	if err := json.Unmarshal([]byte(r.Scopes), &k.Scopes); err != nil {
		return apikey.Key{}, err
	}
	if err := json.Unmarshal([]byte(r.Metadata), &k.Metadata); err != nil {
		return apikey.Key{}, err
	}
	return k, nil
}

// keySelect reads keys with the display prefix and last four of their
// newest secret: the latest created, and of secrets created at the same
// instant (a rotation within the clock's resolution) the one that does not
// expire, else the one that expires last, then by digest, so exactly one
// secret is chosen.
const keySelect = `SELECT k.id, k.tenant_id, k.workspace_id, k.environment, k.name, k.scopes, k.metadata,
	k.created_by_user_id, k.created_by_key_id, k.internal, k.status, k.rate_per_minute, k.max_concurrent,
	k.monthly_budget, k.version, k.created_at, k.updated_at, k.last_used_at, k.revoked_at, s.prefix, s.last4
	FROM api_keys k JOIN api_key_secrets s ON s.digest = (SELECT s2.digest FROM api_key_secrets s2 WHERE s2.key_id = k.id
	ORDER BY s2.created_at DESC, CASE WHEN s2.expires_at IS NULL THEN 0 ELSE 1 END, s2.expires_at DESC, s2.digest LIMIT 1)`

// keyJSON encodes a key's scopes and metadata for their TEXT columns.
func keyJSON(k apikey.Key) (scopes, metadata string, err error) {
	s, err := json.Marshal(k.Scopes)
	if err != nil {
		return "", "", err
	}
	m, err := json.Marshal(k.Metadata)
	return string(s), string(m), err
}

// KeyInsert implements apikey.Store.
func (tx *Tx) KeyInsert(ctx context.Context, k apikey.Key, s apikey.Secret) error {
	const op = "store.KeyInsert"
	scopes, md, err := keyJSON(k)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if _, err := tx.idb.ExecContext(ctx, `INSERT INTO api_keys (id, tenant_id, workspace_id, environment, name, scopes,
		metadata, created_by_user_id, created_by_key_id, internal, status, rate_per_minute, max_concurrent, monthly_budget,
		version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.TenantID, k.WorkspaceID, string(k.Environment), k.Name, scopes, md, k.CreatedByUserID, k.CreatedByKeyID,
		k.Internal, string(k.Status), k.Limits.RequestsPerMinute, k.Limits.MaxConcurrentRequests, k.Limits.MonthlyRequestBudget,
		k.Version, k.CreatedAt, k.UpdatedAt); err != nil {
		return errf(op, err)
	}
	return tx.KeySecretInsert(ctx, s)
}

// KeySecretInsert implements apikey.Store.
func (tx *Tx) KeySecretInsert(ctx context.Context, s apikey.Secret) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO api_key_secrets (digest, key_id, prefix, last4, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, s.Digest, s.KeyID, s.Prefix, s.Last4, s.CreatedAt, s.ExpiresAt)
	return errf("store.KeySecretInsert", err)
}

// KeySecretsExpire implements apikey.Store.
func (tx *Tx) KeySecretsExpire(ctx context.Context, keyID, except string, at time.Time) error {
	if _, err := tx.idb.ExecContext(ctx, `UPDATE api_key_secrets SET expires_at = ?
		WHERE key_id = ? AND digest <> ? AND (expires_at IS NULL OR expires_at > ?)`, at, keyID, except, at); err != nil {
		return errf("store.KeySecretsExpire", err)
	}
	return errf("store.KeySecretsExpire", tx.credentialsChanged(ctx, "k:"+keyID))
}

// KeyGet implements apikey.Store.
func (tx *Tx) KeyGet(ctx context.Context, sc apikey.Scope, keyID string) (apikey.Key, error) {
	var r keyRow
	err := tx.idb.NewRaw(keySelect+` WHERE k.id = ? AND k.tenant_id = ? AND k.workspace_id = ? AND k.environment = ?
		AND k.status <> 'deleted'`, keyID, sc.TenantID, sc.WorkspaceID, string(sc.Environment)).Scan(ctx, &r)
	if err != nil {
		return apikey.Key{}, notFound("store.KeyGet", err)
	}
	k, err := r.key()
	return k, errf("store.KeyGet", err)
}

// KeyList implements apikey.Store.
func (tx *Tx) KeyList(ctx context.Context, sc apikey.Scope, before string, limit int) ([]apikey.Key, error) {
	q := keySelect + ` WHERE k.tenant_id = ? AND k.workspace_id = ? AND k.environment = ? AND k.status <> 'deleted'
		AND k.internal = ?`
	args := []any{sc.TenantID, sc.WorkspaceID, string(sc.Environment), false}
	if before != "" {
		q += ` AND k.id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY k.id DESC LIMIT ?`
	args = append(args, limit)
	var rows []keyRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.KeyList", err)
	}
	out := make([]apikey.Key, 0, len(rows))
	for _, r := range rows {
		k, err := r.key()
		if err != nil {
			return nil, errf("store.KeyList", err)
		}
		out = append(out, k)
	}
	return out, nil
}

// KeyUpdate implements apikey.Store.
func (tx *Tx) KeyUpdate(ctx context.Context, k apikey.Key, from apikey.Status) error {
	const op = "store.KeyUpdate"
	scopes, md, err := keyJSON(k)
	if err != nil {
		return fault.Wrap(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE api_keys SET name = ?, scopes = ?, metadata = ?, status = ?,
		rate_per_minute = ?, max_concurrent = ?, monthly_budget = ?, version = ?, updated_at = ?, revoked_at = ?,
		deleted_at = CASE WHEN ? = 'deleted' THEN ? ELSE deleted_at END
		WHERE id = ? AND status = ? AND version = ?`,
		k.Name, scopes, md, string(k.Status), k.Limits.RequestsPerMinute, k.Limits.MaxConcurrentRequests,
		k.Limits.MonthlyRequestBudget, k.Version, k.UpdatedAt, k.RevokedAt, string(k.Status), tx.now,
		k.ID, string(from), k.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fault.E(op, fault.Conflict, "The key was changed by another request; retry.")
	}
	return errf(op, tx.credentialsChanged(ctx, "k:"+k.ID))
}

// UsageAdd adds request counts per key to the period's totals and stamps
// the keys' last use, in one unit of work.
func (tx *Tx) UsageAdd(ctx context.Context, period string, counts map[string]int64, lastUsed time.Time) error {
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Strings(ids) // a fixed order avoids deadlocks between hosts
	for _, id := range ids {
		if _, err := tx.idb.ExecContext(ctx, `INSERT INTO api_key_usage (key_id, period, requests) VALUES (?, ?, ?)
			ON CONFLICT (key_id, period) DO UPDATE SET requests = api_key_usage.requests + excluded.requests`,
			id, period, counts[id]); err != nil {
			return errf("store.UsageAdd", err)
		}
		if _, err := tx.idb.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, lastUsed, id); err != nil {
			return errf("store.UsageAdd", err)
		}
	}
	return nil
}

// UsageGet returns the requests counted for a key in a period.
func (tx *Tx) UsageGet(ctx context.Context, keyID, period string) (int64, error) {
	var n int64
	err := tx.idb.QueryRowContext(ctx, `SELECT requests FROM api_key_usage WHERE key_id = ? AND period = ?`, keyID, period).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, errf("store.UsageGet", err)
}
