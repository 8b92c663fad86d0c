// Package outbox defines the transactional outbox and inbox (spec, Events 3).
// Domains write an Event with their business rows in one unit of work;
// publishers list unpublished events through the internal routes and mark
// each one published; consumers deduplicate deliveries through the inbox, so
// a replay is safe.
package outbox

import (
	"context"
	"encoding/json"
	"time"
)

// Event is one domain event. Payload is JSON and never carries a secret.
type Event struct {
	// ID is the event's id (evt_ prefix), sortable by occurrence.
	ID string `json:"id" example:"evt_01jd0000000000000000000000"`
	// TenantID is the tenant the event belongs to; never published.
	TenantID string `json:"-"`
	// WorkspaceID is the workspace the event belongs to.
	WorkspaceID string `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	// Environment is the environment (test or live) of the change the event records.
	Environment string `json:"environment" example:"test"`
	// Type names what happened, such as api_key.created; the platform's event catalogue lists every
	// type.
	Type string `json:"type" example:"api_key.created"`
	// SchemaVersion is the version of the payload's shape for the type, from 1.
	SchemaVersion int `json:"schemaVersion" example:"1"`
	// AggregateID is the id of the record that changed (an API key, an operation, a movement, ...).
	AggregateID string `json:"aggregateId" example:"key_01jd0000000000000000000000"`
	// AggregateVersion is the record's version after the change, increasing with each change.
	AggregateVersion int64 `json:"aggregateVersion" example:"1"`
	// OccurredAt is when the change committed.
	OccurredAt time.Time `json:"occurredAt"`
	// Payload is the event's data as JSON, per type and schema version; it never carries a secret.
	Payload json.RawMessage `json:"payload"`
	// PublishedAt is when a publisher marked the event published; null until then.
	PublishedAt *time.Time `json:"publishedAt"`
}

// Writer appends events inside a unit of work.
type Writer interface {
	// OutboxInsert stores e; ID and OccurredAt are set by the store when empty.
	OutboxInsert(ctx context.Context, e Event) (Event, error)
}

// ListParams selects a page of events of one environment in id
// (occurrence) order.
type ListParams struct {
	// Environment is the environment listed ("test" or "live"): a
	// publisher of one environment never sees the other's events.
	Environment string
	// After is the id of the last event of the previous page ("" = start).
	After string
	// Limit bounds the page.
	Limit int
	// Unpublished keeps only events not yet marked published.
	Unpublished bool
}

// Store is the publisher's port. Publishers act in one environment, as the
// internal key they hold does.
type Store interface {
	// OutboxList returns up to p.Limit events of p.Environment after p.After.
	OutboxList(ctx context.Context, p ListParams) ([]Event, error)
	// OutboxMarkPublished marks event id of environment env published at
	// the unit of work's time; a second call keeps the first time. Unknown
	// ids, and ids of the other environment, are NOT_FOUND.
	OutboxMarkPublished(ctx context.Context, env, id string) (Event, error)
}

// Inbox deduplicates deliveries to a consumer.
type Inbox interface {
	// InboxRecord records that consumer received eventID and reports whether
	// this is the first delivery.
	InboxRecord(ctx context.Context, consumer, eventID string) (bool, error)
}

// List returns a page of p.Environment's events for a publisher, in
// occurrence order.
func List(ctx context.Context, st Store, p ListParams) ([]Event, error) {
	return st.OutboxList(ctx, p)
}

// MarkPublished marks event id of environment env published for a
// publisher; marking it again keeps the first time. An unknown id, or one
// of the other environment, is NOT_FOUND.
func MarkPublished(ctx context.Context, st Store, env, id string) (Event, error) {
	return st.OutboxMarkPublished(ctx, env, id)
}
