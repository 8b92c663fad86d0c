package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// The AI completion path's ports.
var (
	_ ai.BeginStore      = (*Tx)(nil)
	_ ai.EndStore        = (*Tx)(nil)
	_ ai.ReadStore       = (*Tx)(nil)
	_ ai.KeyStore        = (*Tx)(nil)
	_ ai.OperationReader = (*Tx)(nil)
)

// AIProviderKeyGet implements ai.KeyReader.
func (tx *Tx) AIProviderKeyGet(ctx context.Context, env access.Environment, ref string) (ai.SealedKey, error) {
	var r struct {
		Sealed      []byte    `bun:"sealed_key"`
		Fingerprint string    `bun:"fingerprint"`
		UpdatedAt   time.Time `bun:"updated_at"`
	}
	if err := tx.idb.NewRaw(`SELECT sealed_key, fingerprint, updated_at FROM ai_provider_keys WHERE environment = ? AND key_ref = ?`,
		string(env), ref).Scan(ctx, &r); err != nil {
		return ai.SealedKey{}, notFound("store.AIProviderKeyGet", err)
	}
	return ai.SealedKey{Environment: env, Ref: ref, Sealed: r.Sealed, Fingerprint: r.Fingerprint, UpdatedAt: r.UpdatedAt.UTC()}, nil
}

// AIProviderKeyPut implements ai.KeyStore.
func (tx *Tx) AIProviderKeyPut(ctx context.Context, k ai.SealedKey) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO ai_provider_keys (environment, key_ref, sealed_key, fingerprint, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (environment, key_ref) DO UPDATE SET sealed_key = excluded.sealed_key,
		fingerprint = excluded.fingerprint, updated_at = excluded.updated_at`,
		string(k.Environment), k.Ref, k.Sealed, k.Fingerprint, k.UpdatedAt.UTC())
	return errf("store.AIProviderKeyPut", err)
}

type aiOperationRow struct {
	ID              string     `bun:"id"`
	TenantID        string     `bun:"tenant_id"`
	WorkspaceID     string     `bun:"workspace_id"`
	Environment     string     `bun:"environment"`
	CreatedByUserID string     `bun:"created_by_user_id"`
	CreatedByKeyID  string     `bun:"created_by_key_id"`
	Endpoint        string     `bun:"endpoint"`
	Task            string     `bun:"task"`
	Mode            string     `bun:"mode"`
	ProjectID       string     `bun:"project_id"`
	Stream          bool       `bun:"stream"`
	IdempotencyKey  string     `bun:"idempotency_key"`
	RequestHash     string     `bun:"request_hash"`
	Status          string     `bun:"status"`
	RoutingPolicy   string     `bun:"routing_policy"`
	RoutingReason   string     `bun:"routing_reason"`
	ModelID         string     `bun:"model_id"`
	ProviderID      string     `bun:"provider_id"`
	UpstreamModel   string     `bun:"upstream_model"`
	Attempts        string     `bun:"attempts"`
	Finish          string     `bun:"finish"`
	InputUnits      int64      `bun:"input_units"`
	OutputUnits     int64      `bun:"output_units"`
	CachedUnits     int64      `bun:"cached_units"`
	ReasoningUnits  int64      `bun:"reasoning_units"`
	UsageSource     string     `bun:"usage_source"`
	CreditsReserved int64      `bun:"credits_reserved"`
	CreditsSettled  *int64     `bun:"credits_settled"`
	PricingPolicy   string     `bun:"pricing_policy"`
	LatencyMs       int64      `bun:"latency_ms"`
	FailureCode     string     `bun:"failure_code"`
	ToolCalls       int        `bun:"tool_calls"`
	Version         int64      `bun:"version"`
	DeadlineAt      time.Time  `bun:"deadline_at"`
	CreatedAt       time.Time  `bun:"created_at"`
	UpdatedAt       time.Time  `bun:"updated_at"`
	EndedAt         *time.Time `bun:"ended_at"`
}

func (r aiOperationRow) operation() (ai.Operation, error) {
	o := ai.Operation{ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		CreatedByUserID: r.CreatedByUserID, CreatedByKeyID: r.CreatedByKeyID, Endpoint: ai.Endpoint(r.Endpoint), Task: ai.Task(r.Task),
		Mode: ai.Mode(r.Mode), ProjectID: r.ProjectID, Stream: r.Stream, IdempotencyKey: r.IdempotencyKey, RequestHash: r.RequestHash,
		Status: ai.OperationStatus(r.Status), Reason: ai.Reason(r.RoutingReason), ModelID: r.ModelID, ProviderID: r.ProviderID,
		UpstreamModel: r.UpstreamModel, Finish: ai.Finish(r.Finish), InputUnits: r.InputUnits, OutputUnits: r.OutputUnits,
		CachedUnits: r.CachedUnits, ReasoningUnits: r.ReasoningUnits, UsageSource: ai.UsageSource(r.UsageSource),
		CreditsReserved: r.CreditsReserved, CreditsSettled: r.CreditsSettled, LatencyMillis: r.LatencyMs, FailureCode: r.FailureCode,
		ToolCalls: r.ToolCalls, Version: r.Version, DeadlineAt: r.DeadlineAt.UTC(), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		EndedAt: utcPtr(r.EndedAt)}
	for _, f := range []struct {
		raw string
		dst any
	}{{r.RoutingPolicy, &o.Routing}, {r.PricingPolicy, &o.Pricing}, {r.Attempts, &o.Attempts}} {
		if err := json.Unmarshal([]byte(f.raw), f.dst); err != nil {
			return ai.Operation{}, fmt.Errorf("ai operation %s: %w", r.ID, err)
		}
	}
	return o, nil
}

func aiOperationRowOf(o ai.Operation) (aiOperationRow, error) {
	r := aiOperationRow{ID: o.ID, TenantID: o.Scope.TenantID, WorkspaceID: o.Scope.WorkspaceID, Environment: string(o.Scope.Environment),
		CreatedByUserID: o.CreatedByUserID, CreatedByKeyID: o.CreatedByKeyID, Endpoint: string(o.Endpoint), Task: string(o.Task),
		Mode: string(o.Mode), ProjectID: o.ProjectID, Stream: o.Stream, IdempotencyKey: o.IdempotencyKey, RequestHash: o.RequestHash,
		Status: string(o.Status), RoutingReason: string(o.Reason), ModelID: o.ModelID, ProviderID: o.ProviderID, UpstreamModel: o.UpstreamModel,
		Finish: string(o.Finish), InputUnits: o.InputUnits, OutputUnits: o.OutputUnits, CachedUnits: o.CachedUnits,
		ReasoningUnits: o.ReasoningUnits, UsageSource: string(o.UsageSource), CreditsReserved: o.CreditsReserved,
		CreditsSettled: o.CreditsSettled, LatencyMs: o.LatencyMillis, FailureCode: o.FailureCode, ToolCalls: o.ToolCalls,
		Version: o.Version, DeadlineAt: o.DeadlineAt.UTC(), CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(), EndedAt: utcPtr(o.EndedAt)}
	attempts := o.Attempts
	if attempts == nil {
		attempts = []ai.CallAttempt{}
	}
	var err error
	for _, f := range []struct {
		dst *string
		v   any
	}{{&r.RoutingPolicy, o.Routing}, {&r.PricingPolicy, o.Pricing}, {&r.Attempts, attempts}} {
		if *f.dst, err = jsonText(f.v); err != nil {
			return r, err
		}
	}
	return r, nil
}

const aiOperationSelect = `SELECT id, tenant_id, workspace_id, environment, created_by_user_id, created_by_key_id, endpoint, task, mode,
	project_id, stream, idempotency_key, request_hash, status, routing_policy, routing_reason, model_id, provider_id, upstream_model,
	attempts, finish, input_units, output_units, cached_units, reasoning_units, usage_source, credits_reserved, credits_settled,
	pricing_policy, latency_ms, failure_code, tool_calls, version, deadline_at, created_at, updated_at, ended_at FROM ai_operations`

func (tx *Tx) scanAIOperation(ctx context.Context, op, q string, args ...any) (ai.Operation, error) {
	var r aiOperationRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &r); err != nil {
		return ai.Operation{}, notFound(op, err)
	}
	o, err := r.operation()
	if err != nil {
		return ai.Operation{}, fault.Wrap(op, err)
	}
	return o, nil
}

// AIOperationInsert implements ai.BeginStore: nothing is written (false)
// when the scope's endpoint already holds the idempotency key.
func (tx *Tx) AIOperationInsert(ctx context.Context, o ai.Operation) (bool, error) {
	const op = "store.AIOperationInsert"
	r, err := aiOperationRowOf(o)
	if err != nil {
		return false, fault.Wrap(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO ai_operations (id, tenant_id, workspace_id, environment, created_by_user_id,
		created_by_key_id, endpoint, task, mode, project_id, stream, idempotency_key, request_hash, status, routing_policy, routing_reason,
		model_id, provider_id, upstream_model, attempts, finish, input_units, output_units, cached_units, reasoning_units, usage_source,
		credits_reserved, credits_settled, pricing_policy, latency_ms, failure_code, tool_calls, version, deadline_at, created_at, updated_at,
		ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		r.ID, r.TenantID, r.WorkspaceID, r.Environment, r.CreatedByUserID, r.CreatedByKeyID, r.Endpoint, r.Task, r.Mode, r.ProjectID,
		r.Stream, r.IdempotencyKey, r.RequestHash, r.Status, r.RoutingPolicy, r.RoutingReason, r.ModelID, r.ProviderID, r.UpstreamModel,
		r.Attempts, r.Finish, r.InputUnits, r.OutputUnits, r.CachedUnits, r.ReasoningUnits, r.UsageSource, r.CreditsReserved,
		r.CreditsSettled, r.PricingPolicy, r.LatencyMs, r.FailureCode, r.ToolCalls, r.Version, r.DeadlineAt, r.CreatedAt, r.UpdatedAt,
		r.EndedAt)
	return inserted(op, res, err)
}

// AIOperationByKey implements ai.BeginStore.
func (tx *Tx) AIOperationByKey(ctx context.Context, sc access.Scope, endpoint ai.Endpoint, key string) (ai.Operation, error) {
	return tx.scanAIOperation(ctx, "store.AIOperationByKey", aiOperationSelect+` WHERE tenant_id = ? AND workspace_id = ? AND environment = ?
		AND endpoint = ? AND idempotency_key = ? AND idempotency_key <> ''`, sc.TenantID, sc.WorkspaceID, string(sc.Environment), string(endpoint), key)
}

// AIOperationLock implements ai.EndStore. Outside a transaction it is a
// plain read.
func (tx *Tx) AIOperationLock(ctx context.Context, id string) (ai.Operation, error) {
	return tx.scanAIOperation(ctx, "store.AIOperationLock", aiOperationSelect+` WHERE id = ?`+tx.rowLock(), id)
}

// AIOperationGet implements ai.OperationReader.
func (tx *Tx) AIOperationGet(ctx context.Context, sc access.Scope, id string) (ai.Operation, error) {
	return tx.scanAIOperation(ctx, "store.AIOperationGet", aiOperationSelect+` WHERE id = ? AND tenant_id = ? AND workspace_id = ?
		AND environment = ?`, id, sc.TenantID, sc.WorkspaceID, string(sc.Environment))
}

// AIOperationUpdate implements ai.EndStore: a compare-and-set on version.
func (tx *Tx) AIOperationUpdate(ctx context.Context, o ai.Operation) error {
	const op = "store.AIOperationUpdate"
	r, err := aiOperationRowOf(o)
	if err != nil {
		return fault.Wrap(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE ai_operations SET status = ?, routing_reason = ?, model_id = ?, provider_id = ?,
		upstream_model = ?, attempts = ?, finish = ?, input_units = ?, output_units = ?, cached_units = ?, reasoning_units = ?,
		usage_source = ?, credits_settled = ?, latency_ms = ?, failure_code = ?, tool_calls = ?, version = ?, updated_at = ?, ended_at = ?
		WHERE id = ? AND version = ?`,
		r.Status, r.RoutingReason, r.ModelID, r.ProviderID, r.UpstreamModel, r.Attempts, r.Finish, r.InputUnits, r.OutputUnits,
		r.CachedUnits, r.ReasoningUnits, r.UsageSource, r.CreditsSettled, r.LatencyMs, r.FailureCode, r.ToolCalls, r.Version,
		r.UpdatedAt, r.EndedAt, r.ID, r.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The operation changed meanwhile.")
	}
	return nil
}

// aiUsageWhere is q's filter and its arguments.
func aiUsageWhere(q ai.UsageQuery) (string, []any) {
	where := ` WHERE tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{q.Scope.TenantID, q.Scope.WorkspaceID, string(q.Scope.Environment)}
	if q.UserID != "" {
		where += ` AND created_by_user_id = ?`
		args = append(args, q.UserID)
	}
	return where, args
}

// AIOperationList implements ai.OperationReader.
func (tx *Tx) AIOperationList(ctx context.Context, q ai.UsageQuery) ([]ai.Operation, error) {
	const op = "store.AIOperationList"
	where, args := aiUsageWhere(q)
	if q.Before != "" {
		where += ` AND id < ?`
		args = append(args, q.Before)
	}
	var rows []aiOperationRow
	if err := tx.idb.NewRaw(aiOperationSelect+where+` ORDER BY id DESC LIMIT ?`, append(args, q.Limit)...).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]ai.Operation, 0, len(rows))
	for _, r := range rows {
		o, err := r.operation()
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// AIUsageTotals implements ai.OperationReader.
func (tx *Tx) AIUsageTotals(ctx context.Context, q ai.UsageQuery) (ai.UsageTotals, error) {
	where, args := aiUsageWhere(q)
	var r struct {
		Operations      int64 `bun:"operations"`
		Completed       int64 `bun:"completed"`
		InputUnits      int64 `bun:"input_units"`
		OutputUnits     int64 `bun:"output_units"`
		CreditsReserved int64 `bun:"credits_reserved"`
		CreditsSettled  int64 `bun:"credits_settled"`
	}
	err := tx.idb.NewRaw(`SELECT COUNT(*) AS operations, COALESCE(SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END), 0) AS completed,
		COALESCE(SUM(input_units), 0) AS input_units, COALESCE(SUM(output_units), 0) AS output_units,
		COALESCE(SUM(credits_reserved), 0) AS credits_reserved, COALESCE(SUM(COALESCE(credits_settled, 0)), 0) AS credits_settled
		FROM ai_operations`+where, args...).Scan(ctx, &r)
	if err != nil {
		return ai.UsageTotals{}, errf("store.AIUsageTotals", err)
	}
	return ai.UsageTotals{Operations: r.Operations, Completed: r.Completed, InputUnits: r.InputUnits, OutputUnits: r.OutputUnits,
		CreditsReserved: r.CreditsReserved, CreditsSettled: r.CreditsSettled}, nil
}
