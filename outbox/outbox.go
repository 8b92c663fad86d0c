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
	ID               string          `json:"id" example:"evt_01jd0000000000000000000000"`
	TenantID         string          `json:"-"`
	WorkspaceID      string          `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	Environment      string          `json:"environment" example:"test"`
	Type             string          `json:"type" example:"api_key.created"`
	SchemaVersion    int             `json:"schemaVersion" example:"1"`
	AggregateID      string          `json:"aggregateId" example:"key_01jd0000000000000000000000"`
	AggregateVersion int64           `json:"aggregateVersion" example:"1"`
	OccurredAt       time.Time       `json:"occurredAt"`
	Payload          json.RawMessage `json:"payload"`
	PublishedAt      *time.Time      `json:"publishedAt"`
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
