package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
)

// The generation ports: each path of generation/operation asks for its own.
var (
	_ operation.Reader        = (*Tx)(nil)
	_ operation.PlanReader    = (*Tx)(nil)
	_ operation.AcceptStore   = (*Tx)(nil)
	_ operation.CancelStore   = (*Tx)(nil)
	_ operation.DispatchStore = (*Tx)(nil)
	_ operation.AnswerStore   = (*Tx)(nil)
	_ operation.TrackStore    = (*Tx)(nil)
	_ operation.IngestStore   = (*Tx)(nil)
	_ operation.PoolReader    = (*Tx)(nil)
)

type generationOperationRow struct {
	ID               string     `bun:"id"`
	TenantID         string     `bun:"tenant_id"`
	WorkspaceID      string     `bun:"workspace_id"`
	Environment      string     `bun:"environment"`
	CreatedByUserID  string     `bun:"created_by_user_id"`
	CreatedByKeyID   string     `bun:"created_by_key_id"`
	Status           string     `bun:"status"`
	Request          string     `bun:"request"`
	BillingMode      string     `bun:"billing_mode"`
	CreditsReserved  int64      `bun:"credits_reserved"`
	CreditsSettled   *int64     `bun:"credits_settled"`
	ByokCredits      int64      `bun:"byok_credits"`
	Pricing          string     `bun:"pricing"`
	Routes           string     `bun:"routes"`
	DurationApplied  *bool      `bun:"duration_applied"`
	Snapshot         string     `bun:"snapshot"`
	Version          int64      `bun:"version"`
	Attempts         int        `bun:"attempts"`
	CurrentAttemptID string     `bun:"current_attempt_id"`
	DeadlineAt       time.Time  `bun:"deadline_at"`
	CreatedAt        time.Time  `bun:"created_at"`
	UpdatedAt        time.Time  `bun:"updated_at"`
	EndedAt          *time.Time `bun:"ended_at"`
}

func (r generationOperationRow) operation() (operation.Operation, error) {
	o := operation.Operation{
		ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		CreatedByUserID: r.CreatedByUserID, CreatedByKeyID: r.CreatedByKeyID, BillingMode: credential.BillingMode(r.BillingMode),
		CreditsReserved: r.CreditsReserved, CreditsSettled: r.CreditsSettled, ByokCredits: r.ByokCredits,
		DurationApplied: r.DurationApplied, Version: r.Version, Attempts: r.Attempts, CurrentAttemptID: r.CurrentAttemptID,
		DeadlineAt: r.DeadlineAt.UTC(), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), EndedAt: utcPtr(r.EndedAt),
	}
	for _, f := range []struct {
		raw string
		dst any
	}{{r.Request, &o.Request}, {r.Pricing, &o.Pricing}, {r.Routes, &o.Routes}, {r.Snapshot, &o.Snapshot}} {
		if err := json.Unmarshal([]byte(f.raw), f.dst); err != nil {
			return operation.Operation{}, fmt.Errorf("operation %s: %w", r.ID, err)
		}
	}
	return o, nil
}

// jsonText encodes v for a TEXT column.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func operationRow(o operation.Operation) (generationOperationRow, error) {
	r := generationOperationRow{ID: o.ID, TenantID: o.Scope.TenantID, WorkspaceID: o.Scope.WorkspaceID, Environment: string(o.Scope.Environment),
		CreatedByUserID: o.CreatedByUserID, CreatedByKeyID: o.CreatedByKeyID, Status: string(o.Snapshot.Status),
		BillingMode: string(o.BillingMode), CreditsReserved: o.CreditsReserved, CreditsSettled: o.CreditsSettled, ByokCredits: o.ByokCredits,
		DurationApplied: o.DurationApplied, Version: o.Version, Attempts: o.Attempts, CurrentAttemptID: o.CurrentAttemptID,
		DeadlineAt: o.DeadlineAt, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, EndedAt: o.EndedAt}
	var err error
	for _, f := range []struct {
		dst *string
		v   any
	}{{&r.Request, o.Request}, {&r.Pricing, o.Pricing}, {&r.Routes, o.Routes}, {&r.Snapshot, o.Snapshot}} {
		if *f.dst, err = jsonText(f.v); err != nil {
			return r, err
		}
	}
	return r, nil
}

const generationOperationSelect = `SELECT id, tenant_id, workspace_id, environment, created_by_user_id, created_by_key_id, status,
	request, billing_mode, credits_reserved, credits_settled, byok_credits, pricing, routes, duration_applied, snapshot, version,
	attempts, current_attempt_id, deadline_at, created_at, updated_at, ended_at FROM generation_operations`

// GenerationOperationInsert implements operation.AcceptStore.
func (tx *Tx) GenerationOperationInsert(ctx context.Context, o operation.Operation) error {
	const op = "store.GenerationOperationInsert"
	r, err := operationRow(o)
	if err != nil {
		return fault.Wrap(op, err)
	}
	err = tx.execLater(ctx, nil, `INSERT INTO generation_operations (id, tenant_id, workspace_id, environment, created_by_user_id,
		created_by_key_id, status, request, billing_mode, credits_reserved, credits_settled, byok_credits, pricing, routes,
		duration_applied, snapshot, version, attempts, current_attempt_id, deadline_at, created_at, updated_at, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.TenantID, r.WorkspaceID, r.Environment, r.CreatedByUserID, r.CreatedByKeyID, r.Status, r.Request, r.BillingMode,
		r.CreditsReserved, r.CreditsSettled, r.ByokCredits, r.Pricing, r.Routes, r.DurationApplied, r.Snapshot, r.Version, r.Attempts,
		r.CurrentAttemptID, r.DeadlineAt, r.CreatedAt, r.UpdatedAt, r.EndedAt)
	return errf(op, err)
}

func (tx *Tx) scanOperation(ctx context.Context, op, q string, args ...any) (operation.Operation, error) {
	var r generationOperationRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &r); err != nil {
		return operation.Operation{}, notFound(op, err)
	}
	o, err := r.operation()
	if err != nil {
		return operation.Operation{}, fault.Wrap(op, err)
	}
	return o, nil
}

// GenerationOperationGet implements operation.Getter.
func (tx *Tx) GenerationOperationGet(ctx context.Context, sc access.Scope, id string) (operation.Operation, error) {
	return tx.scanOperation(ctx, "store.GenerationOperationGet", generationOperationSelect+
		` WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`, id, sc.TenantID, sc.WorkspaceID, string(sc.Environment))
}

// GenerationOperationLock implements operation.Locker. Outside a
// transaction (the read pool) it is a plain read.
func (tx *Tx) GenerationOperationLock(ctx context.Context, id string) (operation.Operation, error) {
	return tx.scanOperation(ctx, "store.GenerationOperationLock", generationOperationSelect+` WHERE id = ?`+tx.rowLock(), id)
}

// GenerationOperationUpdate implements operation.Writer.
func (tx *Tx) GenerationOperationUpdate(ctx context.Context, o operation.Operation) error {
	const op = "store.GenerationOperationUpdate"
	r, err := operationRow(o)
	if err != nil {
		return fault.Wrap(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE generation_operations SET status = ?, credits_settled = ?, duration_applied = ?,
		snapshot = ?, version = ?, attempts = ?, current_attempt_id = ?, updated_at = ?, ended_at = ? WHERE id = ? AND version = ?`,
		r.Status, r.CreditsSettled, r.DurationApplied, r.Snapshot, r.Version, r.Attempts, r.CurrentAttemptID, r.UpdatedAt, r.EndedAt,
		r.ID, r.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The operation changed meanwhile.")
	}
	return nil
}

type generationAttemptRow struct {
	ID           string     `bun:"id"`
	OperationID  string     `bun:"operation_id"`
	TenantID     string     `bun:"tenant_id"`
	WorkspaceID  string     `bun:"workspace_id"`
	Environment  string     `bun:"environment"`
	Number       int        `bun:"number"`
	Provider     string     `bun:"provider"`
	CredentialID string     `bun:"credential_id"`
	Ownership    string     `bun:"ownership"`
	TokenDigest  string     `bun:"token_digest"`
	TaskID       string     `bun:"task_id"`
	State        string     `bun:"state"`
	ErrorCode    string     `bun:"error_code"`
	Polls        int        `bun:"polls"`
	LastPolledAt *time.Time `bun:"last_polled_at"`
	CreatedAt    time.Time  `bun:"created_at"`
	UpdatedAt    time.Time  `bun:"updated_at"`
}

func (r generationAttemptRow) attempt() operation.Attempt {
	return operation.Attempt{ID: r.ID, OperationID: r.OperationID,
		Scope:  access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		Number: r.Number, Provider: generation.ProviderID(r.Provider), CredentialID: r.CredentialID, Ownership: credential.Ownership(r.Ownership),
		TokenDigest: r.TokenDigest, TaskID: r.TaskID, State: operation.AttemptState(r.State), ErrorCode: r.ErrorCode, Polls: r.Polls,
		LastPolledAt: utcPtr(r.LastPolledAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

const generationAttemptSelect = `SELECT id, operation_id, tenant_id, workspace_id, environment, number, provider, credential_id,
	ownership, token_digest, task_id, state, error_code, polls, last_polled_at, created_at, updated_at FROM generation_attempts`

// GenerationAttemptInsert implements operation.DispatchStore.
func (tx *Tx) GenerationAttemptInsert(ctx context.Context, a operation.Attempt) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO generation_attempts (id, operation_id, tenant_id, workspace_id, environment, number,
		provider, credential_id, ownership, token_digest, task_id, state, error_code, polls, last_polled_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.OperationID, a.Scope.TenantID, a.Scope.WorkspaceID, string(a.Scope.Environment), a.Number, string(a.Provider),
		a.CredentialID, string(a.Ownership), a.TokenDigest, a.TaskID, string(a.State), a.ErrorCode, a.Polls, a.LastPolledAt,
		a.CreatedAt, a.UpdatedAt)
	return errf("store.GenerationAttemptInsert", err)
}

// GenerationAttemptUpdate implements operation.AttemptUpdater.
func (tx *Tx) GenerationAttemptUpdate(ctx context.Context, a operation.Attempt) error {
	const op = "store.GenerationAttemptUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE generation_attempts SET task_id = ?, state = ?, error_code = ?, polls = ?,
		last_polled_at = ?, updated_at = ? WHERE id = ?`, a.TaskID, string(a.State), a.ErrorCode, a.Polls, a.LastPolledAt, a.UpdatedAt, a.ID)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.NotFound, "")
	}
	return nil
}

// GenerationAttemptGet implements operation.Loader.
func (tx *Tx) GenerationAttemptGet(ctx context.Context, id string) (operation.Attempt, error) {
	var r generationAttemptRow
	if err := tx.idb.NewRaw(generationAttemptSelect+` WHERE id = ?`, id).Scan(ctx, &r); err != nil {
		return operation.Attempt{}, notFound("store.GenerationAttemptGet", err)
	}
	return r.attempt(), nil
}

// GenerationAttemptByToken implements operation.PoolReader.
func (tx *Tx) GenerationAttemptByToken(ctx context.Context, provider generation.ProviderID, digest string) (operation.Attempt, error) {
	var r generationAttemptRow
	if err := tx.idb.NewRaw(generationAttemptSelect+` WHERE token_digest = ? AND provider = ?`, digest, string(provider)).Scan(ctx, &r); err != nil {
		return operation.Attempt{}, notFound("store.GenerationAttemptByToken", err)
	}
	return r.attempt(), nil
}

// GenerationAttempts implements operation.AttemptLister.
func (tx *Tx) GenerationAttempts(ctx context.Context, operationID string) ([]operation.Attempt, error) {
	var rows []generationAttemptRow
	if err := tx.idb.NewRaw(generationAttemptSelect+` WHERE operation_id = ? ORDER BY number`, operationID).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.GenerationAttempts", err)
	}
	out := make([]operation.Attempt, len(rows))
	for i, r := range rows {
		out[i] = r.attempt()
	}
	return out, nil
}

// inserted reports whether an INSERT ... ON CONFLICT DO NOTHING wrote a
// row.
func inserted(op string, res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, errf(op, err)
	}
	return n == 1, nil
}

// GenerationCallbackInsert implements operation.TrackStore.
func (tx *Tx) GenerationCallbackInsert(ctx context.Context, c operation.CallbackRecord) (bool, error) {
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO generation_callbacks (id, provider, task_id, stage, payload_hash, attempt_id,
		operation_id, body, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (provider, task_id, stage, payload_hash) DO NOTHING`,
		c.ID, string(c.Provider), c.TaskID, string(c.Stage), c.PayloadHash, c.AttemptID, c.OperationID, c.Body, c.ReceivedAt)
	return inserted("store.GenerationCallbackInsert", res, err)
}

// GenerationOutputInsert implements operation.IngestStore.
func (tx *Tx) GenerationOutputInsert(ctx context.Context, o operation.Output) (bool, error) {
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO generation_outputs (operation_id, slot, asset_id, provider_track_id, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (operation_id, slot) DO NOTHING`, o.OperationID, o.Slot, o.AssetID, o.ProviderTrackID, o.CreatedAt)
	return inserted("store.GenerationOutputInsert", res, err)
}

type generationCostRow struct {
	ID          string    `bun:"id"`
	OperationID string    `bun:"operation_id"`
	AttemptID   string    `bun:"attempt_id"`
	TenantID    string    `bun:"tenant_id"`
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	Provider    string    `bun:"provider"`
	Model       string    `bun:"model"`
	Status      string    `bun:"status"`
	Source      string    `bun:"source"`
	Expected    *int64    `bun:"expected"`
	Actual      *int64    `bun:"actual"`
	DriftBps    int64     `bun:"drift_bps"`
	CreatedAt   time.Time `bun:"created_at"`
}

// GenerationCostInsert implements operation.TrackStore.
func (tx *Tx) GenerationCostInsert(ctx context.Context, c operation.Cost) (bool, error) {
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO generation_costs (id, operation_id, attempt_id, tenant_id, workspace_id, environment,
		provider, model, status, source, expected, actual, drift_bps, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (attempt_id) DO NOTHING`, c.ID, c.OperationID, c.AttemptID, c.Scope.TenantID, c.Scope.WorkspaceID,
		string(c.Scope.Environment), string(c.Provider), c.Model, string(c.Status), string(c.Source), c.Expected, c.Actual, c.DriftBps, c.CreatedAt)
	return inserted("store.GenerationCostInsert", res, err)
}

// GenerationCosts implements operation.Reader.
func (tx *Tx) GenerationCosts(ctx context.Context, operationID string) ([]operation.Cost, error) {
	var rows []generationCostRow
	if err := tx.idb.NewRaw(`SELECT id, operation_id, attempt_id, tenant_id, workspace_id, environment, provider, model, status, source,
		expected, actual, drift_bps, created_at FROM generation_costs WHERE operation_id = ? ORDER BY id`, operationID).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.GenerationCosts", err)
	}
	out := make([]operation.Cost, len(rows))
	for i, r := range rows {
		out[i] = operation.Cost{ID: r.ID, OperationID: r.OperationID, AttemptID: r.AttemptID,
			Scope:    access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
			Provider: generation.ProviderID(r.Provider), Model: r.Model, Status: generation.CostStatus(r.Status),
			Source: generation.CostSource(r.Source), Expected: r.Expected, Actual: r.Actual, DriftBps: r.DriftBps, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// ProviderCreateSlot implements operation.DispatchStore: a sliding window of
// taken slots per account. On PostgreSQL a transaction-scoped advisory
// lock on the account serializes takers across hosts; SQLite's single
// writer does the same. Slots older than the window are pruned as they
// leave it.
func (tx *Tx) ProviderCreateSlot(ctx context.Context, account string, limit int, window time.Duration) (bool, time.Time, error) {
	const op = "store.ProviderCreateSlot"
	if tx.Dialect() == Postgres {
		if _, err := tx.idb.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, "provider-create:"+account); err != nil {
			return false, time.Time{}, errf(op, err)
		}
	}
	from := tx.now.Add(-window)
	if _, err := tx.idb.ExecContext(ctx, `DELETE FROM provider_create_slots WHERE account = ? AND taken_at <= ?`, account, from); err != nil {
		return false, time.Time{}, errf(op, err)
	}
	var taken []time.Time
	if err := tx.idb.NewRaw(`SELECT taken_at FROM provider_create_slots WHERE account = ? ORDER BY taken_at`, account).
		Scan(ctx, &taken); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, time.Time{}, errf(op, err)
	}
	if len(taken) >= limit {
		return false, taken[len(taken)-limit].Add(window), nil
	}
	if _, err := tx.idb.ExecContext(ctx, `INSERT INTO provider_create_slots (id, account, taken_at) VALUES (?, ?, ?)`,
		tx.NewID("pslot_"), account, tx.now); err != nil {
		return false, time.Time{}, errf(op, err)
	}
	return true, time.Time{}, nil
}
