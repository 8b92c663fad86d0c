package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/outbox"
)

// Compile-time checks: *Tx implements the spine's ports.
var (
	_ idempotency.Store = (*Tx)(nil)
	_ outbox.Writer     = (*Tx)(nil)
	_ outbox.Store      = (*Tx)(nil)
	_ outbox.Inbox      = (*Tx)(nil)
)

const idempotencyInsert = idempotencyInsertStrict + `
	ON CONFLICT (tenant_id, workspace_id, environment, endpoint, idem_key) DO NOTHING`

// idempotencyInsertStrict is idempotencyInsert failing on a taken key.
const idempotencyInsertStrict = `INSERT INTO idempotency_records
	(id, tenant_id, workspace_id, environment, endpoint, idem_key, request_hash, state, response_status, response_body, sealed,
	response_headers, created_at, expires_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, 'completed', ?, ?, ?, ?, ?, ?)`

// idempotencyArgs are the arguments of idempotencyInsert for r.
func (tx *Tx) idempotencyArgs(r idempotency.Record) []any {
	if r.ID == "" {
		r.ID = tx.NewID("idem_")
	}
	return []any{r.ID, r.Scope.TenantID, r.Scope.WorkspaceID, r.Scope.Environment, r.Endpoint, r.Key, r.RequestHash,
		r.Status, r.Body, r.Sealed, responseHeaders(r.Headers), tx.now, r.ExpiresAt}
}

// responseHeaders encodes a record's headers as a JSON object, nil when
// there are none.
func responseHeaders(h map[string]string) *string {
	if len(h) == 0 {
		return nil
	}
	b, _ := json.Marshal(h) // a map of strings always encodes
	s := string(b)
	return &s
}

// IdempotencyInsert implements idempotency.Store.
func (tx *Tx) IdempotencyInsert(ctx context.Context, r idempotency.Record) (bool, error) {
	res, err := tx.exec(ctx, idempotencyInsert, tx.idempotencyArgs(r)...)
	if err != nil {
		return false, errf("store.IdempotencyInsert", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, errf("store.IdempotencyInsert", err)
	}
	return n == 1, nil
}

// IdempotencyInsertLater is IdempotencyInsert for a unit of work that ends
// when the key is taken: the unit fails with taken, either here or (on a
// pipelining store) from a later statement or its commit.
//
// On PostgreSQL the insert has no ON CONFLICT clause: a taken key is the
// server's unique violation, which aborts the transaction there, so the
// pipelining driver can hold the insert until the commit (a rows-affected
// check would need its answer before the COMMIT is sent).
func (tx *Tx) IdempotencyInsertLater(ctx context.Context, r idempotency.Record, taken error) error {
	var err error
	if tx.db.dialect == Postgres {
		err = tx.execHeld(ctx, Held{FailFunc: func(err error) error {
			if uniqueViolation(err) {
				return taken
			}
			return err
		}}, idempotencyInsertStrict, tx.idempotencyArgs(r)...)
	} else {
		err = tx.execLater(ctx, func(n int64) error {
			if n != 1 {
				return taken
			}
			return nil
		}, idempotencyInsert, tx.idempotencyArgs(r)...)
	}
	if errors.Is(err, taken) {
		return err
	}
	return errf("store.IdempotencyInsertLater", err)
}

type idemRow struct {
	ID             string    `bun:"id"`
	TenantID       string    `bun:"tenant_id"`
	WorkspaceID    string    `bun:"workspace_id"`
	Environment    string    `bun:"environment"`
	Endpoint       string    `bun:"endpoint"`
	IdemKey        string    `bun:"idem_key"`
	RequestHash    string    `bun:"request_hash"`
	ResponseStatus int       `bun:"response_status"`
	ResponseBody   []byte    `bun:"response_body"`
	Sealed         bool      `bun:"sealed"`
	Headers        *string   `bun:"response_headers"`
	CreatedAt      time.Time `bun:"created_at"`
	ExpiresAt      time.Time `bun:"expires_at"`
}

// IdempotencyGet implements idempotency.Store.
func (tx *Tx) IdempotencyGet(ctx context.Context, s idempotency.Scope, endpoint, key string) (idempotency.Record, error) {
	var row idemRow
	err := tx.queryRow(ctx, `SELECT id, tenant_id, workspace_id, environment, endpoint, idem_key, request_hash,
		response_status, response_body, sealed, response_headers, created_at, expires_at
		FROM idempotency_records
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND endpoint = ? AND idem_key = ? AND state = 'completed'`,
		s.TenantID, s.WorkspaceID, s.Environment, endpoint, key).Scan(&row.ID, &row.TenantID, &row.WorkspaceID, &row.Environment,
		&row.Endpoint, &row.IdemKey, &row.RequestHash, &row.ResponseStatus, &row.ResponseBody, &row.Sealed, &row.Headers, &row.CreatedAt,
		&row.ExpiresAt)
	if err != nil {
		return idempotency.Record{}, notFound("store.IdempotencyGet", err)
	}
	var headers map[string]string
	if row.Headers != nil {
		if err := json.Unmarshal([]byte(*row.Headers), &headers); err != nil {
			return idempotency.Record{}, errf("store.IdempotencyGet", err)
		}
	}
	return idempotency.Record{
		ID: row.ID, Scope: idempotency.Scope{TenantID: row.TenantID, WorkspaceID: row.WorkspaceID, Environment: row.Environment},
		Endpoint: row.Endpoint, Key: row.IdemKey, RequestHash: row.RequestHash,
		Status: row.ResponseStatus, Body: row.ResponseBody, Sealed: row.Sealed, Headers: headers,
		CreatedAt: row.CreatedAt.UTC(), ExpiresAt: row.ExpiresAt.UTC(),
	}, nil
}

// IdempotencyPrune implements idempotency.Store.
func (tx *Tx) IdempotencyPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := tx.idb.ExecContext(ctx, `DELETE FROM idempotency_records WHERE id IN
		(SELECT id FROM idempotency_records WHERE expires_at < ? ORDER BY expires_at LIMIT ?)`, before, limit)
	if err != nil {
		return 0, errf("store.IdempotencyPrune", err)
	}
	n, err := res.RowsAffected()
	return int(n), errf("store.IdempotencyPrune", err)
}

// ReceiptInsert stores a request receipt at the unit of work's time. A
// second receipt for the same request id is ignored.
func (tx *Tx) ReceiptInsert(ctx context.Context, r idempotency.Receipt) error {
	err := tx.execLater(ctx, nil, `INSERT INTO request_receipts
		(request_id, tenant_id, workspace_id, environment, principal, method, operation_id, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING`,
		r.RequestID, r.TenantID, r.WorkspaceID, r.Environment, r.Principal, r.Method, r.OperationID, r.Status, tx.now)
	return errf("store.ReceiptInsert", err)
}

// ReceiptCount counts the receipts of an operation in a workspace (tests and
// usage reads).
func (tx *Tx) ReceiptCount(ctx context.Context, workspaceID, operationID string) (int, error) {
	var n int
	err := tx.idb.QueryRowContext(ctx, `SELECT COUNT(*) FROM request_receipts WHERE workspace_id = ? AND operation_id = ?`,
		workspaceID, operationID).Scan(&n)
	return n, errf("store.ReceiptCount", err)
}

// OutboxInsert implements outbox.Writer. An event of neither environment
// is refused: publishers list one environment each, so it would reach none.
func (tx *Tx) OutboxInsert(ctx context.Context, e outbox.Event) (outbox.Event, error) {
	if e.Environment != "test" && e.Environment != "live" {
		return outbox.Event{}, errf("store.OutboxInsert", fmt.Errorf("outbox event %s has no environment (%q)", e.Type, e.Environment))
	}
	if e.ID == "" {
		e.ID = tx.NewID("evt_")
	}
	if e.OccurredAt.IsZero() {
		e.OccurredAt = tx.now
	}
	if e.SchemaVersion == 0 {
		e.SchemaVersion = 1
	}
	if len(e.Payload) == 0 {
		e.Payload = json.RawMessage("{}")
	}
	err := tx.execLater(ctx, nil, `INSERT INTO outbox_events
		(id, tenant_id, workspace_id, environment, type, schema_version, aggregate_id, aggregate_version, occurred_at, payload)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.TenantID, e.WorkspaceID, e.Environment, e.Type, e.SchemaVersion, e.AggregateID, e.AggregateVersion,
		e.OccurredAt.UTC(), string(e.Payload))
	if err != nil {
		return outbox.Event{}, errf("store.OutboxInsert", err)
	}
	tx.watchCommit()
	return e, nil
}

type outboxRow struct {
	ID               string     `bun:"id"`
	TenantID         string     `bun:"tenant_id"`
	WorkspaceID      string     `bun:"workspace_id"`
	Environment      string     `bun:"environment"`
	Type             string     `bun:"type"`
	SchemaVersion    int        `bun:"schema_version"`
	AggregateID      string     `bun:"aggregate_id"`
	AggregateVersion int64      `bun:"aggregate_version"`
	OccurredAt       time.Time  `bun:"occurred_at"`
	Payload          string     `bun:"payload"`
	PublishedAt      *time.Time `bun:"published_at"`
}

func (r outboxRow) event() outbox.Event {
	e := outbox.Event{ID: r.ID, TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: r.Environment,
		Type: r.Type, SchemaVersion: r.SchemaVersion, AggregateID: r.AggregateID, AggregateVersion: r.AggregateVersion,
		OccurredAt: r.OccurredAt.UTC(), Payload: json.RawMessage(r.Payload)}
	if r.PublishedAt != nil {
		t := r.PublishedAt.UTC()
		e.PublishedAt = &t
	}
	return e
}

const outboxColumns = `id, tenant_id, workspace_id, environment, type, schema_version, aggregate_id,
	aggregate_version, occurred_at, payload, published_at`

// OutboxList implements outbox.Store.
func (tx *Tx) OutboxList(ctx context.Context, p outbox.ListParams) ([]outbox.Event, error) {
	q := `SELECT ` + outboxColumns + ` FROM outbox_events WHERE environment = ? AND id > ?`
	if p.Unpublished {
		q += ` AND published_at IS NULL`
	}
	q += ` ORDER BY id LIMIT ?`
	var rows []outboxRow
	if err := tx.idb.NewRaw(q, p.Environment, p.After, p.Limit).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.OutboxList", err)
	}
	out := make([]outbox.Event, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}

// OutboxMarkPublished implements outbox.Store.
func (tx *Tx) OutboxMarkPublished(ctx context.Context, env, eventID string) (outbox.Event, error) {
	if _, err := tx.idb.ExecContext(ctx, `UPDATE outbox_events SET published_at = ?
		WHERE id = ? AND environment = ? AND published_at IS NULL`, tx.now, eventID, env); err != nil {
		return outbox.Event{}, errf("store.OutboxMarkPublished", err)
	}
	var row outboxRow
	if err := tx.idb.NewRaw(`SELECT `+outboxColumns+` FROM outbox_events WHERE id = ? AND environment = ?`, eventID, env).Scan(ctx, &row); err != nil {
		return outbox.Event{}, notFound("store.OutboxMarkPublished", err)
	}
	return row.event(), nil
}

// InboxRecord implements outbox.Inbox.
func (tx *Tx) InboxRecord(ctx context.Context, consumer, eventID string) (bool, error) {
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO inbox_events (consumer, event_id, received_at) VALUES (?, ?, ?)
		ON CONFLICT (consumer, event_id) DO NOTHING`, consumer, eventID, tx.now)
	if err != nil {
		return false, errf("store.InboxRecord", err)
	}
	n, err := res.RowsAffected()
	return n == 1, errf("store.InboxRecord", err)
}
