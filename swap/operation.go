package swap

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/creatormusic/platform/outbox"
)

// Id prefixes of the swap records.
const (
	// OperationPrefix starts a swap operation's id (operationId).
	OperationPrefix = "swp_"
	// QuotePrefix starts a quote's id (quoteId).
	QuotePrefix = "swq_"
	// IntentPrefix starts a swap intent's id (intentId).
	IntentPrefix = "swi_"
)

// Operation is one logical swap, from its quote to its reconciliation:
// the record the status route reads and every state move compare-and-sets
// (Version). Its state moves only through Transition.
type Operation struct {
	// ID is the operation's id (operationId).
	ID string
	// Owner is who it belongs to.
	Owner Owner
	// State is where it stands (Moves).
	State State
	// QuoteID is its quote; IntentID its intent ("" before one).
	QuoteID  string
	IntentID string
	// Signature is the transaction signature bound to it ("" before
	// submission).
	Signature string
	// LastError is the code of the last error that left it where it is
	// (SUBMISSION_UNCERTAIN, for one); "" when none.
	LastError string
	// Version counts its writes, from 1.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Move returns o moved by e at now (Version and UpdatedAt advanced), or
// INVALID_STATE_TRANSITION when the table has no such move.
func (o Operation) Move(e Event, now time.Time) (Operation, error) {
	to, err := Transition(o.State, e)
	if err != nil {
		return Operation{}, err
	}
	o.State, o.Version, o.UpdatedAt = to, o.Version+1, now
	return o, nil
}

// EventType is the outbox event type written with an operation in state
// s: "swap_operation." and the state in lower case.
func EventType(s State) string { return "swap_operation." + strings.ToLower(string(s)) }

// changed writes the outbox event of o's current state in st's unit of
// work.
func changed(ctx context.Context, st OperationStore, o Operation) error {
	payload, _ := json.Marshal(map[string]any{"id": o.ID, "state": o.State, "quoteId": o.QuoteID, "intentId": o.IntentID,
		"signature": o.Signature})
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: o.Owner.TenantID, WorkspaceID: o.Owner.WorkspaceID,
		Environment: string(o.Owner.Environment), Type: EventType(o.State), SchemaVersion: 1,
		AggregateID: o.ID, AggregateVersion: o.Version, OccurredAt: st.Now(), Payload: payload})
	return err
}
