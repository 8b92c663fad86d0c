package tool

import (
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
)

// IDPrefix starts an artifact's id.
const IDPrefix = "aiart_"

// Status is an artifact's status (spec, AI control plane, Artifact
// status). It moves only through Transition over the Moves table.
type Status string

// The statuses.
const (
	// StatusDraft: a model proposed the action; nothing was done.
	StatusDraft Status = "draft"
	// StatusApproved: its caller confirmed it; the apply runs in the same
	// unit of work as the approval, so an approved artifact is applied
	// when that unit commits.
	StatusApproved Status = "approved"
	// StatusApplied: the owning domain did it; terminal.
	StatusApplied Status = "applied"
	// StatusRejected: its caller declined it; terminal.
	StatusRejected Status = "rejected"
)

// Statuses lists the statuses.
func Statuses() []Status {
	return []Status{StatusDraft, StatusApproved, StatusApplied, StatusRejected}
}

// Event moves an artifact.
type Event string

// The events.
const (
	// EventApprove is the caller's confirmation.
	EventApprove Event = "approve"
	// EventApply is the owning domain's doing of the action.
	EventApply Event = "apply"
	// EventReject is the caller's refusal.
	EventReject Event = "reject"
)

// Move is one allowed transition of an artifact's status.
type Move = fsm.Row[Status, Event]

// Moves returns the artifact status table as data, built on each call.
func Moves() []Move {
	return []Move{
		{From: StatusDraft, Event: EventApprove, To: StatusApproved},
		{From: StatusApproved, Event: EventApply, To: StatusApplied},
		{From: StatusDraft, Event: EventReject, To: StatusRejected},
	}
}

// Transition returns the status e moves from to, or
// INVALID_STATE_TRANSITION (details from and event) when the table has no
// such move.
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("tool.Transition", "An AI artifact", Moves()).Transition(from, e)
}

// The outbox event types of artifacts (aggregate: the artifact).
const (
	// EventTypeDrafted: a model's call of a mutating tool made a draft.
	EventTypeDrafted = "ai_artifact.drafted"
	// EventTypeApproved: the caller confirmed the draft.
	EventTypeApproved = "ai_artifact.approved"
	// EventTypeApplied: the owning domain applied it; payload.result names
	// what it made.
	EventTypeApplied = "ai_artifact.applied"
	// EventTypeRejected: the caller declined it.
	EventTypeRejected = "ai_artifact.rejected"
)

// Audit actions and the target type of artifacts' audit records.
const (
	ActionDrafted  = "ai_artifact.drafted"
	ActionApplied  = "ai_artifact.applied"
	ActionRejected = "ai_artifact.rejected"
	// TargetArtifact is an artifact (target id: the artifact id).
	TargetArtifact = "ai_artifact"
)

// Actor is the principal that made or decided an artifact.
type Actor struct {
	// Kind is how it authenticated.
	Kind access.CredentialKind
	// UserID is the user (for a key, the key's creator).
	UserID string
	// KeyID is the API key, when Kind is CredentialAPIKey.
	KeyID string
}

// ActorOf returns p as an Actor.
func ActorOf(p *access.Principal) Actor {
	return Actor{Kind: p.Kind, UserID: p.UserID, KeyID: p.KeyID}
}

// Result names what applying an artifact made.
type Result struct {
	// Type is the record's kind: project, generation_operation.
	Type string
	// ID is the record's id.
	ID string
}

// Artifact is a mutating tool's proposal: the arguments a model proposed
// for the caller, waiting for the caller's decision.
type Artifact struct {
	// ID is the artifact's id (IDPrefix).
	ID string
	// Scope is the caller's tenant, workspace and environment.
	Scope access.Scope
	// Tool is the tool's id.
	Tool string
	// OperationID is the AI operation whose model proposed the call
	// (provenance); the operation records the model and the routing.
	OperationID string
	// ToolCallID is the model's id of the call.
	ToolCallID string
	// Arguments are the proposed arguments, validated against the tool's
	// schema, as canonical JSON.
	Arguments json.RawMessage
	// CreatedBy is the principal whose call made the draft.
	CreatedBy Actor
	// Status is where the artifact stands.
	Status Status
	// Result is what applying made; zero before.
	Result Result
	// DecidedBy is who confirmed or rejected it; zero while a draft.
	DecidedBy Actor
	// DecidedAt is when; nil while a draft.
	DecidedAt *time.Time
	// Version counts its writes, from 1.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}
