package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/webhook"
)

var (
	_ webhook.Store         = (*Tx)(nil)
	_ webhook.DeliveryStore = (*Tx)(nil)
	_ webhook.FanoutStore   = (*Tx)(nil)
)

type webhookEndpointRow struct {
	ID                   string     `bun:"id"`
	TenantID             string     `bun:"tenant_id"`
	WorkspaceID          string     `bun:"workspace_id"`
	Environment          string     `bun:"environment"`
	URL                  string     `bun:"url"`
	Description          string     `bun:"description"`
	EnabledEvents        string     `bun:"enabled_events"`
	Status               string     `bun:"status"`
	DisabledReason       string     `bun:"disabled_reason"`
	SecretSealed         []byte     `bun:"secret_sealed"`
	SecretVersion        int64      `bun:"secret_version"`
	PreviousSecretSealed []byte     `bun:"previous_secret_sealed"`
	PreviousExpiresAt    *time.Time `bun:"previous_expires_at"`
	CreatedByUserID      string     `bun:"created_by_user_id"`
	CreatedByKeyID       string     `bun:"created_by_key_id"`
	LastSuccessAt        *time.Time `bun:"last_success_at"`
	Version              int64      `bun:"version"`
	CreatedAt            time.Time  `bun:"created_at"`
	UpdatedAt            time.Time  `bun:"updated_at"`
}

func (r webhookEndpointRow) endpoint() webhook.Endpoint {
	e := webhook.Endpoint{ID: r.ID,
		Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		URL:   r.URL, Description: r.Description, EnabledEvents: strings.Split(r.EnabledEvents, ","), Status: webhook.Status(r.Status),
		DisabledReason: r.DisabledReason, SecretSealed: r.SecretSealed, SecretVersion: r.SecretVersion,
		PreviousSecretSealed: r.PreviousSecretSealed, CreatedByUserID: r.CreatedByUserID, CreatedByKeyID: r.CreatedByKeyID,
		Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if len(e.PreviousSecretSealed) == 0 {
		e.PreviousSecretSealed = nil
	}
	if r.PreviousExpiresAt != nil {
		e.PreviousExpiresAt = r.PreviousExpiresAt.UTC()
	}
	if r.LastSuccessAt != nil {
		e.LastSuccessAt = r.LastSuccessAt.UTC()
	}
	return e
}

const webhookEndpointSelect = `SELECT id, tenant_id, workspace_id, environment, url, description, enabled_events, status,
	disabled_reason, secret_sealed, secret_version, previous_secret_sealed, previous_expires_at, created_by_user_id,
	created_by_key_id, last_success_at, version, created_at, updated_at FROM webhook_endpoints`

// optBytes is b for a nullable column: nil when empty.
func optBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// WebhookEndpointInsert implements webhook.Store.
func (tx *Tx) WebhookEndpointInsert(ctx context.Context, e webhook.Endpoint) error {
	const op = "store.WebhookEndpointInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, tenant_id, workspace_id, environment, url,
		description, enabled_events, status, disabled_reason, secret_sealed, secret_version, previous_secret_sealed,
		previous_expires_at, created_by_user_id, created_by_key_id, last_success_at, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.ID, e.Scope.TenantID, e.Scope.WorkspaceID, string(e.Scope.Environment), e.URL, e.Description,
		strings.Join(e.EnabledEvents, ","), string(e.Status), e.DisabledReason, e.SecretSealed, e.SecretVersion,
		optBytes(e.PreviousSecretSealed), optTime(e.PreviousExpiresAt), e.CreatedByUserID, e.CreatedByKeyID,
		optTime(e.LastSuccessAt), e.Version, e.CreatedAt.UTC(), e.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The webhook endpoint exists.").With("endpointId", e.ID)
	}
	return nil
}

// webhookEndpoint reads one endpoint row.
func (tx *Tx) webhookEndpoint(ctx context.Context, op, where string, args ...any) (webhook.Endpoint, error) {
	var r webhookEndpointRow
	if err := tx.idb.NewRaw(webhookEndpointSelect+` WHERE `+where, args...).Scan(ctx, &r); err != nil {
		return webhook.Endpoint{}, notFound(op, err)
	}
	return r.endpoint(), nil
}

// WebhookEndpointGet implements webhook.Store: by id in one tenant,
// workspace and environment, not deleted.
func (tx *Tx) WebhookEndpointGet(ctx context.Context, sc access.Scope, id string) (webhook.Endpoint, error) {
	return tx.webhookEndpoint(ctx, "store.WebhookEndpointGet", `id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?
		AND status <> 'deleted'`, id, sc.TenantID, sc.WorkspaceID, string(sc.Environment))
}

// WebhookEndpointByID implements webhook.DeliveryStore: by id in one
// environment, deleted ones included.
func (tx *Tx) WebhookEndpointByID(ctx context.Context, env access.Environment, id string) (webhook.Endpoint, error) {
	return tx.webhookEndpoint(ctx, "store.WebhookEndpointByID", `id = ? AND environment = ?`, id, string(env))
}

// webhookEndpoints reads endpoint rows.
func (tx *Tx) webhookEndpoints(ctx context.Context, op, where string, args ...any) ([]webhook.Endpoint, error) {
	var rows []webhookEndpointRow
	if err := tx.idb.NewRaw(webhookEndpointSelect+` WHERE `+where, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]webhook.Endpoint, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.endpoint())
	}
	return out, nil
}

// WebhookEndpointList implements webhook.Store: newest first.
func (tx *Tx) WebhookEndpointList(ctx context.Context, sc access.Scope, before string, limit int) ([]webhook.Endpoint, error) {
	where := `tenant_id = ? AND workspace_id = ? AND environment = ? AND status <> 'deleted'`
	args := []any{sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	if before != "" {
		where += ` AND id < ?`
		args = append(args, before)
	}
	return tx.webhookEndpoints(ctx, "store.WebhookEndpointList", where+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
}

// WebhookEndpointsOf implements webhook.FanoutStore.
func (tx *Tx) WebhookEndpointsOf(ctx context.Context, sc access.Scope) ([]webhook.Endpoint, error) {
	return tx.webhookEndpoints(ctx, "store.WebhookEndpointsOf", `tenant_id = ? AND workspace_id = ? AND environment = ?
		AND status <> 'deleted' ORDER BY id`, sc.TenantID, sc.WorkspaceID, string(sc.Environment))
}

// WebhookEndpointCount implements webhook.Store: in a transaction on
// PostgreSQL it locks the workspace's row first.
func (tx *Tx) WebhookEndpointCount(ctx context.Context, sc access.Scope) (int, error) {
	const op = "store.WebhookEndpointCount"
	if lock := tx.rowLock(); lock != "" {
		var id string
		if err := tx.idb.NewRaw(`SELECT id FROM workspaces WHERE id = ?`+lock, sc.WorkspaceID).Scan(ctx, &id); err != nil &&
			!errors.Is(err, sql.ErrNoRows) {
			return 0, errf(op, err)
		}
	}
	var n int
	if err := tx.idb.NewRaw(`SELECT COUNT(*) FROM webhook_endpoints WHERE tenant_id = ? AND workspace_id = ? AND environment = ?
		AND status <> 'deleted'`, sc.TenantID, sc.WorkspaceID, string(sc.Environment)).Scan(ctx, &n); err != nil {
		return 0, errf(op, err)
	}
	return n, nil
}

// WebhookEndpointUpdate implements webhook.Store: a compare-and-set on
// the version.
func (tx *Tx) WebhookEndpointUpdate(ctx context.Context, e webhook.Endpoint) error {
	const op = "store.WebhookEndpointUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE webhook_endpoints SET url = ?, description = ?, enabled_events = ?, status = ?,
		disabled_reason = ?, secret_sealed = ?, secret_version = ?, previous_secret_sealed = ?, previous_expires_at = ?,
		version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		e.URL, e.Description, strings.Join(e.EnabledEvents, ","), string(e.Status), e.DisabledReason, e.SecretSealed,
		e.SecretVersion, optBytes(e.PreviousSecretSealed), optTime(e.PreviousExpiresAt), e.Version, e.UpdatedAt.UTC(),
		e.ID, e.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The webhook endpoint changed meanwhile.")
	}
	return nil
}

// WebhookEndpointSucceeded implements webhook.DeliveryStore.
func (tx *Tx) WebhookEndpointSucceeded(ctx context.Context, id string, at time.Time) error {
	_, err := tx.idb.ExecContext(ctx, `UPDATE webhook_endpoints SET last_success_at = ?
		WHERE id = ? AND (last_success_at IS NULL OR last_success_at < ?)`, at.UTC(), id, at.UTC())
	return errf("store.WebhookEndpointSucceeded", err)
}

type webhookDeliveryRow struct {
	ID            string     `bun:"id"`
	EndpointID    string     `bun:"endpoint_id"`
	EventID       string     `bun:"event_id"`
	EventType     string     `bun:"event_type"`
	TenantID      string     `bun:"tenant_id"`
	WorkspaceID   string     `bun:"workspace_id"`
	Environment   string     `bun:"environment"`
	Status        string     `bun:"status"`
	Attempts      int        `bun:"attempts"`
	Manual        bool       `bun:"manual"`
	NextAttemptAt *time.Time `bun:"next_attempt_at"`
	LastAttemptAt *time.Time `bun:"last_attempt_at"`
	FailureReason string     `bun:"failure_reason"`
	Version       int64      `bun:"version"`
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
}

func (r webhookDeliveryRow) delivery() webhook.Delivery {
	d := webhook.Delivery{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, EventType: r.EventType,
		Scope:  access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		Status: webhook.DeliveryStatus(r.Status), Attempts: r.Attempts, Manual: r.Manual, FailureReason: r.FailureReason,
		Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.NextAttemptAt != nil {
		d.NextAttemptAt = r.NextAttemptAt.UTC()
	}
	if r.LastAttemptAt != nil {
		d.LastAttemptAt = r.LastAttemptAt.UTC()
	}
	return d
}

const webhookDeliverySelect = `SELECT id, endpoint_id, event_id, event_type, tenant_id, workspace_id, environment, status,
	attempts, manual, next_attempt_at, last_attempt_at, failure_reason, version, created_at, updated_at FROM webhook_deliveries`

// WebhookDeliveryInsert implements webhook.Store: nothing when the
// (endpoint, event) pair has a delivery.
func (tx *Tx) WebhookDeliveryInsert(ctx context.Context, d webhook.Delivery) (bool, error) {
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, tenant_id,
		workspace_id, environment, status, attempts, manual, next_attempt_at, last_attempt_at, failure_reason, version,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		d.ID, d.EndpointID, d.EventID, d.EventType, d.Scope.TenantID, d.Scope.WorkspaceID, string(d.Scope.Environment),
		string(d.Status), d.Attempts, d.Manual, optTime(d.NextAttemptAt), optTime(d.LastAttemptAt), d.FailureReason, d.Version,
		d.CreatedAt.UTC(), d.UpdatedAt.UTC())
	return inserted("store.WebhookDeliveryInsert", res, err)
}

// WebhookDeliveryGet implements webhook.Store.
func (tx *Tx) WebhookDeliveryGet(ctx context.Context, sc access.Scope, endpointID, id string) (webhook.Delivery, error) {
	var r webhookDeliveryRow
	err := tx.idb.NewRaw(webhookDeliverySelect+` WHERE id = ? AND endpoint_id = ? AND tenant_id = ? AND workspace_id = ?
		AND environment = ?`, id, endpointID, sc.TenantID, sc.WorkspaceID, string(sc.Environment)).Scan(ctx, &r)
	if err != nil {
		return webhook.Delivery{}, notFound("store.WebhookDeliveryGet", err)
	}
	return r.delivery(), nil
}

// WebhookDeliveryByID implements webhook.DeliveryStore.
func (tx *Tx) WebhookDeliveryByID(ctx context.Context, env access.Environment, id string) (webhook.Delivery, error) {
	var r webhookDeliveryRow
	if err := tx.idb.NewRaw(webhookDeliverySelect+` WHERE id = ? AND environment = ?`, id, string(env)).Scan(ctx, &r); err != nil {
		return webhook.Delivery{}, notFound("store.WebhookDeliveryByID", err)
	}
	return r.delivery(), nil
}

// WebhookDeliveryList implements webhook.Store: newest first.
func (tx *Tx) WebhookDeliveryList(ctx context.Context, sc access.Scope, endpointID, before string, limit int) ([]webhook.Delivery, error) {
	q := webhookDeliverySelect + ` WHERE endpoint_id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{endpointID, sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	var rows []webhookDeliveryRow
	if err := tx.idb.NewRaw(q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.WebhookDeliveryList", err)
	}
	out := make([]webhook.Delivery, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.delivery())
	}
	return out, nil
}

// WebhookDeliveryUpdate implements webhook.Store: a compare-and-set on
// the version.
func (tx *Tx) WebhookDeliveryUpdate(ctx context.Context, d webhook.Delivery) error {
	const op = "store.WebhookDeliveryUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, manual = ?, next_attempt_at = ?,
		last_attempt_at = ?, failure_reason = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(d.Status), d.Attempts, d.Manual, optTime(d.NextAttemptAt), optTime(d.LastAttemptAt), d.FailureReason, d.Version,
		d.UpdatedAt.UTC(), d.ID, d.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The webhook delivery changed meanwhile.")
	}
	return nil
}

type webhookAttemptRow struct {
	DeliveryID      string    `bun:"delivery_id"`
	Attempt         int       `bun:"attempt"`
	Manual          bool      `bun:"manual"`
	StartedAt       time.Time `bun:"started_at"`
	StatusCode      int       `bun:"status_code"`
	LatencyMS       int64     `bun:"latency_ms"`
	ErrorClass      string    `bun:"error_class"`
	ErrorReason     string    `bun:"error_reason"`
	ResponseExcerpt string    `bun:"response_excerpt"`
}

// WebhookAttemptInsert implements webhook.DeliveryStore.
func (tx *Tx) WebhookAttemptInsert(ctx context.Context, a webhook.Attempt) error {
	const op = "store.WebhookAttemptInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, manual, started_at, status_code,
		latency_ms, error_class, error_reason, response_excerpt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.DeliveryID, a.Number, a.Manual, a.StartedAt.UTC(), a.StatusCode, a.LatencyMillis, a.ErrorClass, a.ErrorReason,
		a.ResponseExcerpt)
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The attempt is recorded.")
	}
	return nil
}

// WebhookAttemptList implements webhook.Store.
func (tx *Tx) WebhookAttemptList(ctx context.Context, ids []string) ([]webhook.Attempt, error) {
	var rows []webhookAttemptRow
	if err := tx.idb.NewRaw(`SELECT delivery_id, attempt, manual, started_at, status_code, latency_ms, error_class, error_reason,
		response_excerpt FROM webhook_attempts WHERE delivery_id IN (?) ORDER BY delivery_id, attempt`, bun.In(ids)).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.WebhookAttemptList", err)
	}
	out := make([]webhook.Attempt, 0, len(rows))
	for _, r := range rows {
		out = append(out, webhook.Attempt{DeliveryID: r.DeliveryID, Number: r.Attempt, Manual: r.Manual, StartedAt: r.StartedAt.UTC(),
			StatusCode: r.StatusCode, LatencyMillis: r.LatencyMS, ErrorClass: r.ErrorClass, ErrorReason: r.ErrorReason,
			ResponseExcerpt: r.ResponseExcerpt})
	}
	return out, nil
}

// WebhookEventGet implements webhook.DeliveryStore.
func (tx *Tx) WebhookEventGet(ctx context.Context, env access.Environment, id string) (outbox.Event, error) {
	var row outboxRow
	if err := tx.idb.NewRaw(`SELECT `+outboxColumns+` FROM outbox_events WHERE id = ? AND environment = ?`, id, string(env)).Scan(ctx, &row); err != nil {
		return outbox.Event{}, notFound("store.WebhookEventGet", err)
	}
	return row.event(), nil
}

// WebhookFanoutCursor implements webhook.FanoutStore.
func (tx *Tx) WebhookFanoutCursor(ctx context.Context) (time.Time, bool, error) {
	var at time.Time
	err := tx.idb.NewRaw(`SELECT scanned_at FROM webhook_fanout_cursor WHERE id = 1`).Scan(ctx, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, errf("store.WebhookFanoutCursor", err)
	}
	return at.UTC(), true, nil
}

// WebhookFanoutAdvance implements webhook.FanoutStore: the cursor only
// moves forward.
func (tx *Tx) WebhookFanoutAdvance(ctx context.Context, at time.Time) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO webhook_fanout_cursor (id, scanned_at) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET scanned_at = excluded.scanned_at WHERE webhook_fanout_cursor.scanned_at < excluded.scanned_at`,
		at.UTC())
	return errf("store.WebhookFanoutAdvance", err)
}

// eventFloor is the smallest outbox event id stamped at t or later: event
// ids are "evt_" and a lower-case ULID whose first 48 bits are the
// millisecond of the unit of work that wrote the event.
func eventFloor(t time.Time) string {
	var u ulid.ULID
	if err := u.SetTime(ulid.Timestamp(t)); err != nil {
		return "evt_"
	}
	return "evt_" + strings.ToLower(u.String())
}

// WebhookFanoutEvents implements webhook.FanoutStore.
func (tx *Tx) WebhookFanoutEvents(ctx context.Context, since time.Time, limit int) ([]outbox.Event, error) {
	var rows []outboxRow
	err := tx.idb.NewRaw(`SELECT `+outboxColumns+` FROM outbox_events e WHERE e.id >= ?
		AND NOT EXISTS (SELECT 1 FROM webhook_fanout_marks m WHERE m.event_id = e.id)
		AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = e.tenant_id AND w.workspace_id = e.workspace_id
			AND w.environment = e.environment AND w.status <> 'deleted')
		ORDER BY e.id LIMIT ?`, eventFloor(since), limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.WebhookFanoutEvents", err)
	}
	out := make([]outbox.Event, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}

// WebhookFanoutMark implements webhook.FanoutStore.
func (tx *Tx) WebhookFanoutMark(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	q := `INSERT INTO webhook_fanout_marks (event_id) VALUES ` + strings.TrimSuffix(strings.Repeat("(?), ", len(ids)), ", ") +
		` ON CONFLICT DO NOTHING`
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	_, err := tx.idb.ExecContext(ctx, q, args...)
	return errf("store.WebhookFanoutMark", err)
}

// WebhookFanoutPrune implements webhook.FanoutStore.
func (tx *Tx) WebhookFanoutPrune(ctx context.Context, before time.Time) error {
	_, err := tx.idb.ExecContext(ctx, `DELETE FROM webhook_fanout_marks WHERE event_id < ?`, eventFloor(before))
	return errf("store.WebhookFanoutPrune", err)
}
