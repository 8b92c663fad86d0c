package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// Tx implements the AI control plane's registry and health port.
var _ ai.Store = (*Tx)(nil)

type aiModelRow struct {
	Environment   string    `bun:"environment"`
	ID            string    `bun:"id"`
	ProviderID    string    `bun:"provider_id"`
	UpstreamModel string    `bun:"upstream_model"`
	Capabilities  string    `bun:"capabilities"`
	ContextWindow int64     `bun:"context_window"`
	PrivacyClass  string    `bun:"privacy_class"`
	InputPrice    string    `bun:"input_price"`
	OutputPrice   string    `bun:"output_price"`
	Enabled       bool      `bun:"enabled"`
	Retired       bool      `bun:"retired"`
	AdminChanged  bool      `bun:"admin_changed"`
	Version       int64     `bun:"version"`
	CreatedAt     time.Time `bun:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at"`
	UpdatedBy     string    `bun:"updated_by"`
}

func (r aiModelRow) model() ai.RegistryModel {
	var caps []ai.Capability
	for _, c := range strings.Split(r.Capabilities, ",") {
		if c != "" {
			caps = append(caps, ai.Capability(c))
		}
	}
	return ai.RegistryModel{Environment: access.Environment(r.Environment), ID: r.ID, ProviderID: r.ProviderID, Upstream: r.UpstreamModel,
		Capabilities: caps, ContextWindow: r.ContextWindow, Privacy: ai.PrivacyClass(r.PrivacyClass), InputPrice: ai.Price(r.InputPrice),
		OutputPrice: ai.Price(r.OutputPrice), Enabled: r.Enabled, Retired: r.Retired, AdminChanged: r.AdminChanged, Version: r.Version,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), UpdatedBy: r.UpdatedBy}
}

// capabilityList is m's capabilities as the column holds them.
func capabilityList(m ai.RegistryModel) string {
	parts := make([]string, len(m.Capabilities))
	for i, c := range m.Capabilities {
		parts[i] = string(c)
	}
	return strings.Join(parts, ",")
}

const aiModelSelect = `SELECT environment, id, provider_id, upstream_model, capabilities, context_window, privacy_class, input_price,
	output_price, enabled, retired, admin_changed, version, created_at, updated_at, updated_by FROM ai_models`

// AIModelList implements ai.Store.
func (tx *Tx) AIModelList(ctx context.Context, env access.Environment) ([]ai.RegistryModel, error) {
	var rows []aiModelRow
	if err := tx.idb.NewRaw(aiModelSelect+` WHERE environment = ? ORDER BY id`, string(env)).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.AIModelList", err)
	}
	out := make([]ai.RegistryModel, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.model())
	}
	return out, nil
}

// AIModelGet implements ai.Store.
func (tx *Tx) AIModelGet(ctx context.Context, env access.Environment, id string) (ai.RegistryModel, error) {
	var r aiModelRow
	if err := tx.idb.NewRaw(aiModelSelect+` WHERE environment = ? AND id = ?`, string(env), id).Scan(ctx, &r); err != nil {
		return ai.RegistryModel{}, notFound("store.AIModelGet", err)
	}
	return r.model(), nil
}

// AIModelInsert implements ai.Store.
func (tx *Tx) AIModelInsert(ctx context.Context, m ai.RegistryModel) error {
	const op = "store.AIModelInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO ai_models (environment, id, provider_id, upstream_model, capabilities,
		context_window, privacy_class, input_price, output_price, enabled, retired, admin_changed, version, created_at, updated_at,
		updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		string(m.Environment), m.ID, m.ProviderID, m.Upstream, capabilityList(m), m.ContextWindow, string(m.Privacy),
		string(m.InputPrice), string(m.OutputPrice), m.Enabled, m.Retired, m.AdminChanged, m.Version, m.CreatedAt.UTC(),
		m.UpdatedAt.UTC(), m.UpdatedBy)
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The model exists.").With("modelId", m.ID)
	}
	return nil
}

// AIModelUpdate implements ai.Store: a compare-and-set on version.
func (tx *Tx) AIModelUpdate(ctx context.Context, m ai.RegistryModel) error {
	const op = "store.AIModelUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE ai_models SET provider_id = ?, upstream_model = ?, capabilities = ?,
		context_window = ?, privacy_class = ?, input_price = ?, output_price = ?, enabled = ?, retired = ?, admin_changed = ?,
		version = ?, updated_at = ?, updated_by = ? WHERE environment = ? AND id = ? AND version = ?`,
		m.ProviderID, m.Upstream, capabilityList(m), m.ContextWindow, string(m.Privacy), string(m.InputPrice), string(m.OutputPrice),
		m.Enabled, m.Retired, m.AdminChanged, m.Version, m.UpdatedAt.UTC(), m.UpdatedBy, string(m.Environment), m.ID, m.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The model changed meanwhile.")
	}
	return nil
}

type aiHealthRow struct {
	Environment         string     `bun:"environment"`
	ModelID             string     `bun:"model_id"`
	ConsecutiveFailures int        `bun:"consecutive_failures"`
	LastFailure         string     `bun:"last_failure"`
	LastFailureAt       *time.Time `bun:"last_failure_at"`
	LastSuccessAt       *time.Time `bun:"last_success_at"`
	CooldownUntil       *time.Time `bun:"cooldown_until"`
	CooldownCause       string     `bun:"cooldown_cause"`
	Successes           int64      `bun:"successes"`
	Failures            int64      `bun:"failures"`
	Rejections          int64      `bun:"rejections"`
	LatencyMs           *int64     `bun:"latency_ms"`
	LastLatencyMs       *int64     `bun:"last_latency_ms"`
	LatencyObservations int64      `bun:"latency_observations"`
	Version             int64      `bun:"version"`
	UpdatedAt           time.Time  `bun:"updated_at"`
}

func (r aiHealthRow) health() ai.Health {
	h := ai.Health{Environment: access.Environment(r.Environment), ModelID: r.ModelID, ConsecutiveFailures: r.ConsecutiveFailures,
		LastFailure: ai.Outcome(r.LastFailure), LastFailureAt: timeOf(r.LastFailureAt), LastSuccessAt: timeOf(r.LastSuccessAt),
		CooldownUntil: timeOf(r.CooldownUntil), CooldownCause: ai.Outcome(r.CooldownCause), Successes: r.Successes, Failures: r.Failures,
		Rejections: r.Rejections, LatencyObservations: r.LatencyObservations, Version: r.Version, UpdatedAt: r.UpdatedAt.UTC()}
	if r.LatencyMs != nil {
		h.LatencyMillis = *r.LatencyMs
	}
	if r.LastLatencyMs != nil {
		h.LastLatencyMillis = *r.LastLatencyMs
	}
	return h
}

// timeOf is a nullable column's time, zero for NULL.
func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// latencyOf is a latency column's value: NULL until one was observed.
func latencyOf(h ai.Health, ms int64) *int64 {
	if h.LatencyObservations == 0 {
		return nil
	}
	return &ms
}

const aiHealthSelect = `SELECT environment, model_id, consecutive_failures, last_failure, last_failure_at, last_success_at,
	cooldown_until, cooldown_cause, successes, failures, rejections, latency_ms, last_latency_ms, latency_observations, version,
	updated_at FROM ai_model_health`

// AIHealthList implements ai.Store.
func (tx *Tx) AIHealthList(ctx context.Context, env access.Environment) ([]ai.Health, error) {
	var rows []aiHealthRow
	if err := tx.idb.NewRaw(aiHealthSelect+` WHERE environment = ? ORDER BY model_id`, string(env)).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.AIHealthList", err)
	}
	out := make([]ai.Health, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.health())
	}
	return out, nil
}

// AIHealthGet implements ai.Store.
func (tx *Tx) AIHealthGet(ctx context.Context, env access.Environment, id string) (ai.Health, error) {
	var r aiHealthRow
	if err := tx.idb.NewRaw(aiHealthSelect+` WHERE environment = ? AND model_id = ?`, string(env), id).Scan(ctx, &r); err != nil {
		return ai.Health{}, notFound("store.AIHealthGet", err)
	}
	return r.health(), nil
}

// AIHealthPut implements ai.Store: an insert at version 1, else a
// compare-and-set on version.
func (tx *Tx) AIHealthPut(ctx context.Context, h ai.Health) error {
	const op = "store.AIHealthPut"
	args := []any{h.ConsecutiveFailures, string(h.LastFailure), nullTime(h.LastFailureAt), nullTime(h.LastSuccessAt),
		nullTime(h.CooldownUntil), string(h.CooldownCause), h.Successes, h.Failures, h.Rejections, latencyOf(h, h.LatencyMillis),
		latencyOf(h, h.LastLatencyMillis), h.LatencyObservations, h.Version, h.UpdatedAt.UTC()}
	var (
		res sql.Result
		err error
	)
	if h.Version == 1 {
		res, err = tx.idb.ExecContext(ctx, `INSERT INTO ai_model_health (consecutive_failures, last_failure, last_failure_at,
			last_success_at, cooldown_until, cooldown_cause, successes, failures, rejections, latency_ms, last_latency_ms,
			latency_observations, version, updated_at, environment, model_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, append(args, string(h.Environment), h.ModelID)...)
	} else {
		res, err = tx.idb.ExecContext(ctx, `UPDATE ai_model_health SET consecutive_failures = ?, last_failure = ?,
			last_failure_at = ?, last_success_at = ?, cooldown_until = ?, cooldown_cause = ?, successes = ?, failures = ?,
			rejections = ?, latency_ms = ?, last_latency_ms = ?, latency_observations = ?, version = ?, updated_at = ?
			WHERE environment = ? AND model_id = ? AND version = ?`, append(args, string(h.Environment), h.ModelID, h.Version-1)...)
	}
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The model's health changed meanwhile.").With("modelId", h.ModelID)
	}
	return nil
}
