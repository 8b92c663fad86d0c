package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
)

var _ credential.Store = (*Tx)(nil)

type providerCredentialRow struct {
	ID                string     `bun:"id"`
	TenantID          string     `bun:"tenant_id"`
	WorkspaceID       string     `bun:"workspace_id"`
	Environment       string     `bun:"environment"`
	Provider          string     `bun:"provider"`
	Ownership         string     `bun:"ownership"`
	Label             string     `bun:"label"`
	Fingerprint       string     `bun:"fingerprint"`
	Last4             string     `bun:"last4"`
	SealedKey         []byte     `bun:"sealed_key"`
	SealedCallbackKey []byte     `bun:"sealed_callback_key"`
	Health            string     `bun:"health"`
	CheckedAt         time.Time  `bun:"checked_at"`
	CreatedByUserID   string     `bun:"created_by_user_id"`
	CreatedByKeyID    string     `bun:"created_by_key_id"`
	CreatedAt         time.Time  `bun:"created_at"`
	UpdatedAt         time.Time  `bun:"updated_at"`
	DeletedAt         *time.Time `bun:"deleted_at"`
	// The newest balance snapshot, NULL when none.
	BalanceID           *string    `bun:"balance_id"`
	BalanceCredits      *int64     `bun:"balance_credits"`
	BalanceExtraCredits *int64     `bun:"balance_extra_credits"`
	BalanceObservedAt   *time.Time `bun:"balance_observed_at"`
}

func (r providerCredentialRow) credential() credential.Credential {
	sc := access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)}
	c := credential.Credential{
		ID: r.ID, Scope: sc, Provider: generation.ProviderID(r.Provider), Ownership: credential.Ownership(r.Ownership),
		Label: r.Label, Fingerprint: r.Fingerprint, Last4: r.Last4, SealedKey: r.SealedKey,
		Health: credential.Health(r.Health), CheckedAt: r.CheckedAt.UTC(), CreatedByUserID: r.CreatedByUserID,
		CreatedByKeyID: r.CreatedByKeyID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), DeletedAt: utcPtr(r.DeletedAt),
	}
	if len(r.SealedCallbackKey) > 0 {
		c.SealedCallbackKey = r.SealedCallbackKey
	}
	if r.BalanceID != nil && r.BalanceCredits != nil && r.BalanceExtraCredits != nil && r.BalanceObservedAt != nil {
		c.Balance = &credential.Snapshot{ID: *r.BalanceID, CredentialID: r.ID, Scope: sc, Provider: c.Provider,
			Credits: *r.BalanceCredits, ExtraCredits: *r.BalanceExtraCredits, ObservedAt: r.BalanceObservedAt.UTC()}
	}
	return c
}

// providerCredentialSelect reads credentials with their newest balance
// snapshot (balance_snapshot_id, set by ProviderBalanceInsert).
const providerCredentialSelect = `SELECT c.id, c.tenant_id, c.workspace_id, c.environment, c.provider, c.ownership,
	c.label, c.fingerprint, c.last4, c.sealed_key, c.sealed_callback_key, c.health, c.checked_at, c.created_by_user_id,
	c.created_by_key_id, c.created_at, c.updated_at, c.deleted_at, b.id AS balance_id, b.credits AS balance_credits,
	b.extra_credits AS balance_extra_credits, b.observed_at AS balance_observed_at
	FROM provider_credentials c LEFT JOIN provider_balance_snapshots b
	ON b.id = c.balance_snapshot_id`

// Every write that changes which credentials a workspace can use (a new
// one, a health change, a deletion) raises the workspace's authority
// version in the same unit of work (AuthzBump): each request reads that
// version with its credential, so what a host caches per workspace under
// it (operation's usable routes) is never stale on any host.

// ProviderCredentialInsert implements credential.Store.
func (tx *Tx) ProviderCredentialInsert(ctx context.Context, c credential.Credential) error {
	var cb any
	if len(c.SealedCallbackKey) > 0 {
		cb = c.SealedCallbackKey
	}
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO provider_credentials (id, tenant_id, workspace_id, environment, provider,
		ownership, label, fingerprint, last4, sealed_key, sealed_callback_key, health, checked_at, created_by_user_id,
		created_by_key_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Scope.TenantID, c.Scope.WorkspaceID, string(c.Scope.Environment), string(c.Provider), string(c.Ownership),
		c.Label, c.Fingerprint, c.Last4, c.SealedKey, cb, string(c.Health), c.CheckedAt, c.CreatedByUserID,
		c.CreatedByKeyID, c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return errf("store.ProviderCredentialInsert", err)
	}
	return tx.AuthzBump(ctx, c.Scope.WorkspaceID)
}

// ProviderCredentialGet implements credential.Store.
func (tx *Tx) ProviderCredentialGet(ctx context.Context, sc access.Scope, id string) (credential.Credential, error) {
	var r providerCredentialRow
	err := tx.idb.NewRaw(providerCredentialSelect+` WHERE c.id = ? AND c.tenant_id = ? AND c.workspace_id = ?
		AND c.environment = ? AND c.deleted_at IS NULL`, id, sc.TenantID, sc.WorkspaceID, string(sc.Environment)).Scan(ctx, &r)
	if err != nil {
		return credential.Credential{}, notFound("store.ProviderCredentialGet", err)
	}
	return r.credential(), nil
}

// ProviderCredentialList implements credential.Store.
func (tx *Tx) ProviderCredentialList(ctx context.Context, sc access.Scope, before string, limit int) ([]credential.Credential, error) {
	q := providerCredentialSelect + ` WHERE c.tenant_id = ? AND c.workspace_id = ? AND c.environment = ?
		AND c.deleted_at IS NULL`
	args := []any{sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	if before != "" {
		q += ` AND c.id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY c.id DESC LIMIT ?`
	args = append(args, limit)
	var rows []providerCredentialRow
	if err := tx.scanAll(ctx, &rows, q, args...); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.ProviderCredentialList", err)
	}
	out := make([]credential.Credential, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.credential())
	}
	return out, nil
}

// ProviderCredentialUpdate implements credential.Store.
func (tx *Tx) ProviderCredentialUpdate(ctx context.Context, c credential.Credential) error {
	const op = "store.ProviderCredentialUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE provider_credentials SET health = ?, checked_at = ?, updated_at = ?,
		deleted_at = ? WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ? AND deleted_at IS NULL`,
		string(c.Health), c.CheckedAt, c.UpdatedAt, c.DeletedAt, c.ID, c.Scope.TenantID, c.Scope.WorkspaceID,
		string(c.Scope.Environment))
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.NotFound, "")
	}
	return tx.AuthzBump(ctx, c.Scope.WorkspaceID)
}

// ProviderBalanceInsert implements credential.Store. The snapshot becomes
// the credential's newest.
func (tx *Tx) ProviderBalanceInsert(ctx context.Context, s credential.Snapshot) error {
	const op = "store.ProviderBalanceInsert"
	if _, err := tx.idb.ExecContext(ctx, `INSERT INTO provider_balance_snapshots (id, credential_id, tenant_id, workspace_id,
		environment, provider, credits, extra_credits, observed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.CredentialID, s.Scope.TenantID, s.Scope.WorkspaceID, string(s.Scope.Environment), string(s.Provider),
		s.Credits, s.ExtraCredits, s.ObservedAt); err != nil {
		return errf(op, err)
	}
	_, err := tx.idb.ExecContext(ctx, `UPDATE provider_credentials SET balance_snapshot_id = ? WHERE id = ?`, s.ID, s.CredentialID)
	return errf(op, err)
}

// ProviderObserve implements credential.Observer: one row per provider
// route and environment, replaced by a newer observation only.
func (tx *Tx) ProviderObserve(ctx context.Context, o credential.Observation) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO provider_observations (provider, environment, reach, code, observed_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (provider, environment) DO UPDATE SET reach = excluded.reach, code = excluded.code, observed_at = excluded.observed_at
		WHERE provider_observations.observed_at <= excluded.observed_at`,
		string(o.Provider), string(o.Environment), string(o.Reach), string(o.Code), o.ObservedAt.UTC())
	return errf("store.ProviderObserve", err)
}

// ProviderObservations implements credential.ObservationReader.
func (tx *Tx) ProviderObservations(ctx context.Context, env access.Environment) ([]credential.Observation, error) {
	var rows []struct {
		Provider   string    `bun:"provider"`
		Reach      string    `bun:"reach"`
		Code       string    `bun:"code"`
		ObservedAt time.Time `bun:"observed_at"`
	}
	if err := tx.idb.NewRaw(`SELECT provider, reach, code, observed_at FROM provider_observations WHERE environment = ?
		ORDER BY provider`, string(env)).Scan(ctx, &rows); err != nil {
		return nil, errf("store.ProviderObservations", err)
	}
	out := make([]credential.Observation, len(rows))
	for i, r := range rows {
		out[i] = credential.Observation{Provider: generation.ProviderID(r.Provider), Environment: env,
			Reach: credential.Reach(r.Reach), Code: fault.Code(r.Code), ObservedAt: r.ObservedAt.UTC()}
	}
	return out, nil
}
