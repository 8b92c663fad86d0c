package realtime

import (
	"context"

	"github.com/creatormusic/platform/outbox"
)

// Position is an event's place in the feed: the order in which the feed
// reads the outbox, which no later commit can enter behind a reader that
// passed it (see the package doc, The feed). The zero Position is before
// every event.
type Position struct {
	// Tx is the id of the transaction that wrote the event on PostgreSQL;
	// 0 on SQLite.
	Tx int64
	// Seq is the event's number within the feed.
	Seq int64
}

// Less reports whether p comes before q.
func (p Position) Less(q Position) bool {
	if p.Tx != q.Tx {
		return p.Tx < q.Tx
	}
	return p.Seq < q.Seq
}

// IsZero reports whether p is the start of the feed.
func (p Position) IsZero() bool { return p == Position{} }

// maxPosition returns the later of p and q.
func maxPosition(p, q Position) Position {
	if p.Less(q) {
		return q
	}
	return p
}

// Entry is an outbox event at its place in the feed.
type Entry struct {
	// Position is the event's place in the feed.
	Position Position
	// Event is the outbox event.
	Event outbox.Event
}

// ReadParams selects a page of the feed.
type ReadParams struct {
	// After is the position the page starts after (zero: the start).
	After Position
	// Through, when not zero, is the last position the page may reach.
	Through Position
	// AggregateID, when set, keeps only the events of that record.
	AggregateID string
	// Environment, when set, keeps only the events of that environment.
	Environment string
	// TenantID and WorkspaceID, when set, keep only the events of that
	// workspace.
	TenantID, WorkspaceID string
	// Limit bounds the page.
	Limit int
}

// Store is the feed's port: the outbox read in feed order, settled events
// only. An event is settled when every event that will ever take a place
// before it has committed (or never will): on SQLite at once, since its
// one writer commits in order; on PostgreSQL once every transaction older
// than the event's own has ended.
type Store interface {
	// RealtimeRead returns up to p.Limit settled events after p.After (and
	// through p.Through when it is set) that p selects, in feed order.
	RealtimeRead(ctx context.Context, p ReadParams) ([]Entry, error)
	// RealtimeHead returns the position of the last settled event (zero
	// when there is none).
	RealtimeHead(ctx context.Context) (Position, error)
	// RealtimePosition returns the position of settled event id of
	// environment env; NOT_FOUND when there is none.
	RealtimePosition(ctx context.Context, env, id string) (Position, error)
}

// Filter selects the events a subscription carries.
type Filter struct {
	// Environment is the subscriber's environment; every filter has one.
	Environment string
	// TenantID and WorkspaceID, when set, keep only the events of that
	// workspace.
	TenantID, WorkspaceID string
	// AggregateID, when set, keeps only the events of that record.
	AggregateID string
}

// Match reports whether f selects e.
func (f Filter) Match(e outbox.Event) bool {
	switch {
	case e.Environment != f.Environment:
		return false
	case f.WorkspaceID != "" && (e.WorkspaceID != f.WorkspaceID || e.TenantID != f.TenantID):
		return false
	case f.AggregateID != "" && e.AggregateID != f.AggregateID:
		return false
	}
	return true
}

// params returns the read of f's events after a, through b.
func (f Filter) params(a, b Position, limit int) ReadParams {
	return ReadParams{After: a, Through: b, AggregateID: f.AggregateID, Environment: f.Environment, TenantID: f.TenantID,
		WorkspaceID: f.WorkspaceID, Limit: limit}
}
