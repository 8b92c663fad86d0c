package ai

import (
	"context"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/policy"
)

// OperationIDPrefix prefixes the ids of AI operations.
const OperationIDPrefix = "aiop_"

// The outbox event types of an operation's terminal states. Aggregate:
// the operation id, at the operation's version; payload: operationId,
// status, task, model and provider (empty when none answered),
// creditsReserved and creditsSettled (integer strings), usageSource and,
// for failures, failureCode.
const (
	// EventOperationCompleted: the model answered and the credits were
	// settled.
	EventOperationCompleted = "ai.operation.completed"
	// EventOperationFailed: no model answered, or the answer broke; the
	// credits were settled or released as documented (Settlement).
	EventOperationFailed = "ai.operation.failed"
	// EventOperationCancelled: the caller went away before the answer
	// ended.
	EventOperationCancelled = "ai.operation.cancelled"
	// EventOperationExpired: the operation outlived its deadline (its
	// host stopped mid-call); its reservation was released.
	EventOperationExpired = "ai.operation.expired"
)

// OperationStatus is the state of an AI operation.
type OperationStatus string

// The operation states.
const (
	// OpRunning: the operation is written with its reservation and a
	// provider is being called.
	OpRunning OperationStatus = "running"
	// OpCompleted: a model answered; its credits are settled (terminal).
	OpCompleted OperationStatus = "completed"
	// OpFailed: no model answered, the answer broke off, or the provider
	// refused the content (terminal).
	OpFailed OperationStatus = "failed"
	// OpCancelled: the caller disconnected before the answer ended
	// (terminal).
	OpCancelled OperationStatus = "cancelled"
	// OpExpired: the operation was still running at its deadline, which
	// only a host stopping mid-call leaves behind (terminal).
	OpExpired OperationStatus = "expired"
)

// OperationStatuses lists the operation states.
func OperationStatuses() []OperationStatus {
	return []OperationStatus{OpRunning, OpCompleted, OpFailed, OpCancelled, OpExpired}
}

// Terminal reports whether s is final.
func (s OperationStatus) Terminal() bool {
	return s != OpRunning && slices.Contains(OperationStatuses(), s)
}

// EventType is the outbox event type of terminal state s ("" for
// running).
func (s OperationStatus) EventType() string {
	switch s {
	case OpCompleted:
		return EventOperationCompleted
	case OpFailed:
		return EventOperationFailed
	case OpCancelled:
		return EventOperationCancelled
	case OpExpired:
		return EventOperationExpired
	}
	return ""
}

// OperationEvent is what moves an operation.
type OperationEvent string

// The operation events.
const (
	// OpEventComplete: a model's answer ended.
	OpEventComplete OperationEvent = "complete"
	// OpEventFail: the call failed for good.
	OpEventFail OperationEvent = "fail"
	// OpEventCancel: the caller went away.
	OpEventCancel OperationEvent = "cancel"
	// OpEventExpire: the deadline job found the operation.
	OpEventExpire OperationEvent = "expire"
)

// OperationMoves is the operation's state table: a running operation
// ends once, in one terminal state; the deadline job finding an ended
// operation changes nothing.
func OperationMoves() []fsm.Row[OperationStatus, OperationEvent] {
	rows := []fsm.Row[OperationStatus, OperationEvent]{
		{From: OpRunning, Event: OpEventComplete, To: OpCompleted},
		{From: OpRunning, Event: OpEventFail, To: OpFailed},
		{From: OpRunning, Event: OpEventCancel, To: OpCancelled},
		{From: OpRunning, Event: OpEventExpire, To: OpExpired},
	}
	for _, s := range OperationStatuses() {
		if s.Terminal() {
			rows = append(rows, fsm.Row[OperationStatus, OperationEvent]{From: s, Event: OpEventExpire, To: s})
		}
	}
	return rows
}

// OperationTransition moves an operation in state from on event e
// (OperationMoves); INVALID_STATE_TRANSITION for a move the table lacks.
func OperationTransition(from OperationStatus, e OperationEvent) (OperationStatus, error) {
	return fsm.New("ai.OperationTransition", "An AI operation", OperationMoves()).Transition(from, e)
}

// Endpoint is the route family an operation was asked through.
type Endpoint string

// The endpoints.
const (
	// EndpointChat: POST /api/v1/ai/chat, a conversation.
	EndpointChat Endpoint = "chat"
	// EndpointComplete: POST /api/v1/ai/complete, one task with context.
	EndpointComplete Endpoint = "complete"
	// EndpointTask: one completion of a structured task's request
	// (Completions.Run, the completion path of package ai/task).
	EndpointTask Endpoint = "task"
)

// Mode is the shape of the answer asked for.
type Mode string

// The modes.
const (
	// ModeText asks for text (the default).
	ModeText Mode = "text"
	// ModeJSON asks for one JSON object (the model needs json_output).
	ModeJSON Mode = "json"
)

// UsageSource says what an operation's settlement was computed from.
type UsageSource string

// The usage sources.
const (
	// UsageReported: the provider's reported usage, priced at the
	// executed model's prices.
	UsageReported UsageSource = "reported"
	// UsageReservation: the provider reported no usage although output
	// came (a stream that ended or broke without it): the reservation is
	// settled whole.
	UsageReservation UsageSource = "reservation"
	// UsageNone: no output came (the call failed before any, the caller
	// left before any, or the operation expired): nothing is settled and
	// the reservation is released.
	UsageNone UsageSource = "none"
)

// UsageSources lists the usage sources.
func UsageSources() []UsageSource { return []UsageSource{UsageReported, UsageReservation, UsageNone} }

// CallAttempt is one provider call of an operation, for its routing
// record (ai.md §3.3).
type CallAttempt struct {
	// Model and Provider name the registry model called and its provider.
	Model    string `json:"model"`
	Provider string `json:"provider"`
	// Outcome is how the call ended (OutcomeSuccess for the answer).
	Outcome Outcome `json:"outcome"`
	// Code is the platform error code of a failed call; "" otherwise.
	Code string `json:"code,omitempty"`
	// LatencyMillis is how long the call took on the platform's clock.
	LatencyMillis int64 `json:"latencyMs"`
}

// Operation is one completion asked of the AI control plane, and its
// usage record (spec, AI control plane: platform profile, provider and
// model that executed, routing reason, input and output units, credits
// reserved and settled, latency, terminal status). It never holds the
// prompt, the context or the answer: the answer is returned to the
// caller once (and to replays of its Idempotency-Key).
type Operation struct {
	// ID is the operation id (OperationIDPrefix).
	ID string
	// Scope is the tenant, workspace and environment (the platform
	// profile) it runs in.
	Scope access.Scope
	// CreatedByUserID and CreatedByKeyID name who asked.
	CreatedByUserID, CreatedByKeyID string
	// Endpoint is the route family, Task the routed task, Mode the answer's
	// shape.
	Endpoint Endpoint
	Task     Task
	Mode     Mode
	// ProjectID is the project the request named (provenance); "" when
	// none.
	ProjectID string
	// Stream reports an answer streamed as server-sent events.
	Stream bool
	// IdempotencyKey and RequestHash identify the request for duplicates
	// ("" without a key).
	IdempotencyKey, RequestHash string
	// Status is where the operation stands (OperationMoves).
	Status OperationStatus
	// Routing is the routing policy version that routed it; Reason why its
	// model was chosen (of the last call).
	Routing policy.Ref
	Reason  Reason
	// ModelID and ProviderID are the registry model and provider of the
	// last call (the one that answered, when one did).
	ModelID, ProviderID string
	// UpstreamModel is the model the provider reported as executed.
	UpstreamModel string
	// Attempts are the provider calls, in order.
	Attempts []CallAttempt
	// Finish is how the answer ended; "" without one.
	Finish Finish
	// InputUnits, OutputUnits, CachedUnits and ReasoningUnits are the
	// provider's reported usage (zero when it reported none).
	InputUnits, OutputUnits, CachedUnits, ReasoningUnits int64
	// UsageSource is what the settlement was computed from; "" while
	// running.
	UsageSource UsageSource
	// CreditsReserved were reserved before the first provider call;
	// CreditsSettled were consumed when it ended (nil while running).
	CreditsReserved int64
	CreditsSettled  *int64
	// Pricing is the credit pricing policy version that priced it.
	Pricing policy.Ref
	// LatencyMillis is the operation's duration from its reservation to
	// its end, on the platform's clock.
	LatencyMillis int64
	// FailureCode is the error code of a failed, cancelled or expired
	// operation.
	FailureCode string
	// ToolCalls counts the tool calls the answer proposed.
	ToolCalls int
	// Version counts the record's writes, from 1.
	Version int64
	// DeadlineAt is when a still-running operation is expired.
	DeadlineAt time.Time
	// CreatedAt and UpdatedAt bound its life; EndedAt is set once
	// terminal.
	CreatedAt, UpdatedAt time.Time
	EndedAt              *time.Time
}

// Settled returns the credits settled (zero while none were).
func (o Operation) Settled() int64 {
	if o.CreditsSettled == nil {
		return 0
	}
	return *o.CreditsSettled
}

// UsageQuery selects a page of a workspace's operations, newest first.
type UsageQuery struct {
	// Scope is the workspace and environment.
	Scope access.Scope
	// UserID, when set, keeps the operations that user asked (directly
	// or through a key): a caller whose grant is own reads its own.
	UserID string
	// Before is the id of the last operation of the previous page; ""
	// starts at the newest.
	Before string
	// Limit bounds the page.
	Limit int
}

// UsageTotals sums the usage of every operation a UsageQuery selects
// (all pages).
type UsageTotals struct {
	// Operations counts them; Completed counts those a model answered.
	Operations, Completed int64
	// InputUnits and OutputUnits sum the reported usage.
	InputUnits, OutputUnits int64
	// CreditsReserved sums the reservations; CreditsSettled what was
	// consumed of them (the rest was released, or is still held by
	// running operations).
	CreditsReserved, CreditsSettled int64
}

// OperationReader reads operations and their usage (the routes).
type OperationReader interface {
	// AIOperationGet reads an operation of sc; NOT_FOUND otherwise.
	AIOperationGet(ctx context.Context, sc access.Scope, id string) (Operation, error)
	// AIOperationList reads up to q.Limit operations of q, newest first.
	AIOperationList(ctx context.Context, q UsageQuery) ([]Operation, error)
	// AIUsageTotals sums the usage of q's operations (Before and Limit
	// ignored).
	AIUsageTotals(ctx context.Context, q UsageQuery) (UsageTotals, error)
}

// GetOperation reads operation id of p's scope; NOT_FOUND for any other
// workspace's or environment's.
func GetOperation(ctx context.Context, st OperationReader, p *access.Principal, id string) (Operation, error) {
	o, err := st.AIOperationGet(ctx, p.Scope(), id)
	if err != nil {
		return Operation{}, fault.Wrap("ai.GetOperation", err)
	}
	return o, nil
}

// OperationResource returns operation id of p's scope as the access
// evaluator's resource-scope step sees it: its creator and workspace, so
// that a grant at own scope reaches only the operations its holder
// asked. NOT_FOUND for another scope's.
func OperationResource(ctx context.Context, st OperationReader, p *access.Principal, id string) (*access.Resource, error) {
	o, err := GetOperation(ctx, st, p, id)
	if err != nil {
		return nil, err
	}
	return &access.Resource{OwnerUserID: o.CreatedByUserID, WorkspaceID: o.Scope.WorkspaceID}, nil
}

// ListUsage returns a page of q's operations, whether more follow, and the
// totals of all of q's operations. q.Limit must be positive.
func ListUsage(ctx context.Context, st OperationReader, q UsageQuery) ([]Operation, UsageTotals, error) {
	const op = "ai.ListUsage"
	if q.Limit < 1 {
		return nil, UsageTotals{}, fault.Invalid(op, "limit", "limit must be positive.")
	}
	os, err := st.AIOperationList(ctx, q)
	if err != nil {
		return nil, UsageTotals{}, fault.Wrap(op, err)
	}
	t, err := st.AIUsageTotals(ctx, q)
	if err != nil {
		return nil, UsageTotals{}, fault.Wrap(op, err)
	}
	return os, t, nil
}
