package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/token/sale"
)

var _ sale.Store = (*Tx)(nil)

type saleRunRow struct {
	ID                string    `bun:"id"`
	Environment       string    `bun:"environment"`
	SaleID            string    `bun:"sale_id"`
	ConfigHash        string    `bun:"config_hash"`
	Outcome           string    `bun:"outcome"`
	Error             string    `bun:"error"`
	Checks            string    `bun:"checks"`
	Slot              *int64    `bun:"slot"`
	ActivationAllowed bool      `bun:"activation_allowed"`
	StartedAt         time.Time `bun:"started_at"`
	FinishedAt        time.Time `bun:"finished_at"`
}

// SaleRunInsert implements sale.Store.
func (tx *Tx) SaleRunInsert(ctx context.Context, r sale.Run) error {
	const op = "store.SaleRunInsert"
	checks := r.Checks
	if checks == nil {
		checks = []sale.Check{}
	}
	b, err := json.Marshal(checks)
	if err != nil {
		return fault.Wrap(op, err)
	}
	var slot *int64
	if r.Slot != nil {
		s := int64(*r.Slot)
		slot = &s
	}
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO sale_verification_runs (id, environment, sale_id, config_hash, outcome, error,
		checks, slot, activation_allowed, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, string(r.Environment), r.SaleID, r.ConfigHash, string(r.Outcome), r.Error, string(b), slot, r.ActivationAllowed,
		r.StartedAt, r.FinishedAt)
	return errf(op, err)
}

// SaleRunLatest implements sale.Store: the newest run by finish time, then
// id.
func (tx *Tx) SaleRunLatest(ctx context.Context, env access.Environment, saleID string) (sale.Run, error) {
	const op = "store.SaleRunLatest"
	var r saleRunRow
	err := tx.idb.NewRaw(`SELECT id, environment, sale_id, config_hash, outcome, error, checks, slot, activation_allowed,
		started_at, finished_at FROM sale_verification_runs WHERE environment = ? AND sale_id = ?
		ORDER BY finished_at DESC, id DESC LIMIT 1`, string(env), saleID).Scan(ctx, &r)
	if err != nil {
		return sale.Run{}, notFound(op, err)
	}
	out := sale.Run{ID: r.ID, Environment: access.Environment(r.Environment), SaleID: r.SaleID, ConfigHash: r.ConfigHash,
		Outcome: sale.Outcome(r.Outcome), Error: r.Error, ActivationAllowed: r.ActivationAllowed, StartedAt: r.StartedAt.UTC(),
		FinishedAt: r.FinishedAt.UTC()}
	if err := json.Unmarshal([]byte(r.Checks), &out.Checks); err != nil {
		return sale.Run{}, fault.Wrap(op, err)
	}
	if r.Slot != nil {
		s := uint64(*r.Slot)
		out.Slot = &s
	}
	return out, nil
}

// AccessIntentInsert implements sale.Store.
func (tx *Tx) AccessIntentInsert(ctx context.Context, in sale.AccessIntent) error {
	const op = "store.AccessIntentInsert"
	reasons := in.Reasons
	if reasons == nil {
		reasons = []sale.Reason{}
	}
	b, err := json.Marshal(reasons)
	if err != nil {
		return fault.Wrap(op, err)
	}
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO sale_access_intents (id, environment, tenant_id, workspace_id, user_id, sale_id,
		status, reasons, jurisdiction, handoff_expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		in.ID, string(in.Environment), in.TenantID, in.WorkspaceID, in.UserID, in.SaleID, string(in.Status), string(b),
		in.Jurisdiction, in.HandoffExpiresAt, in.CreatedAt)
	return errf(op, err)
}

// AccessIntentGet implements sale.Store.
func (tx *Tx) AccessIntentGet(ctx context.Context, env access.Environment, userID, id string) (sale.AccessIntent, error) {
	const op = "store.AccessIntentGet"
	var r struct {
		ID               string     `bun:"id"`
		Environment      string     `bun:"environment"`
		TenantID         string     `bun:"tenant_id"`
		WorkspaceID      string     `bun:"workspace_id"`
		UserID           string     `bun:"user_id"`
		SaleID           string     `bun:"sale_id"`
		Status           string     `bun:"status"`
		Reasons          string     `bun:"reasons"`
		Jurisdiction     string     `bun:"jurisdiction"`
		HandoffExpiresAt *time.Time `bun:"handoff_expires_at"`
		CreatedAt        time.Time  `bun:"created_at"`
	}
	err := tx.idb.NewRaw(`SELECT id, environment, tenant_id, workspace_id, user_id, sale_id, status, reasons, jurisdiction,
		handoff_expires_at, created_at FROM sale_access_intents WHERE id = ? AND environment = ? AND user_id = ?`,
		id, string(env), userID).Scan(ctx, &r)
	if err != nil {
		return sale.AccessIntent{}, notFound(op, err)
	}
	out := sale.AccessIntent{ID: r.ID, Environment: access.Environment(r.Environment), TenantID: r.TenantID, WorkspaceID: r.WorkspaceID,
		UserID: r.UserID, SaleID: r.SaleID, Status: sale.IntentStatus(r.Status), Jurisdiction: r.Jurisdiction,
		HandoffExpiresAt: utcPtr(r.HandoffExpiresAt), CreatedAt: r.CreatedAt.UTC()}
	if err := json.Unmarshal([]byte(r.Reasons), &out.Reasons); err != nil {
		return sale.AccessIntent{}, fault.Wrap(op, err)
	}
	return out, nil
}

// Jurisdiction implements sale.Store.
func (tx *Tx) Jurisdiction(ctx context.Context, userID string) (string, error) {
	var code string
	err := tx.idb.NewRaw(`SELECT jurisdiction FROM sale_jurisdictions WHERE user_id = ?`, userID).Scan(ctx, &code)
	if err != nil {
		return "", notFound("store.Jurisdiction", err)
	}
	return code, nil
}

// DeclareJurisdiction implements sale.Store: INSERT ... ON CONFLICT DO
// NOTHING, then a re-read, so concurrent declarers converge on the first
// committed row (on PostgreSQL the insert waits for a conflicting
// transaction, and the re-read, a new statement, sees its row).
func (tx *Tx) DeclareJurisdiction(ctx context.Context, userID, code string, at time.Time) (string, error) {
	const op = "store.DeclareJurisdiction"
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO sale_jurisdictions (user_id, jurisdiction, declared_at) VALUES (?, ?, ?)
		ON CONFLICT (user_id) DO NOTHING`, userID, code, at)
	if err != nil {
		return "", errf(op, err)
	}
	got, err := tx.Jurisdiction(ctx, userID)
	if err != nil {
		return "", fault.Wrap(op, err)
	}
	return got, nil
}

// SaleAccount implements sale.Store: whether userID belongs to tenantID
// and verified their email address.
func (tx *Tx) SaleAccount(ctx context.Context, tenantID, userID string) (sale.Account, error) {
	var r struct {
		TenantID        string     `bun:"tenant_id"`
		EmailVerifiedAt *time.Time `bun:"email_verified_at"`
	}
	err := tx.idb.NewRaw(`SELECT u.tenant_id, c.email_verified_at FROM users u LEFT JOIN user_credentials c ON c.user_id = u.id
		WHERE u.id = ?`, userID).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return sale.Account{}, nil
	}
	if err != nil {
		return sale.Account{}, errf("store.SaleAccount", err)
	}
	return sale.Account{InTenant: r.TenantID == tenantID, EmailVerified: r.EmailVerifiedAt != nil}, nil
}
