package generation

import (
	"github.com/creatormusic/platform/fsm"
)

// Status is the state of a generation operation (spec, "States and
// transitions", Sound operation and generation operation).
type Status string

// Operation states.
const (
	// StatusQueued is an operation persisted with its idempotency record and
	// reserved credits, waiting for its durable dispatch job.
	StatusQueued Status = "queued"
	// StatusDispatched is an operation with a recorded provider attempt
	// whose provider create was sent (or is being sent); no provider
	// progress is known yet.
	StatusDispatched Status = "dispatched"
	// StatusProcessing is an operation whose provider reported work in
	// progress or success; it stays here while its outputs are ingested.
	StatusProcessing Status = "processing"
	// StatusCompleted is an operation whose outputs were all ingested and
	// whose credits were settled (terminal).
	StatusCompleted Status = "completed"
	// StatusFailed is an operation the provider failed, whose create was
	// refused with no route left, or whose outputs could not be ingested;
	// its credits were released (terminal).
	StatusFailed Status = "failed"
	// StatusCancelled is an operation cancelled by its owner before it
	// ended; its credits were released, and nothing it produces afterwards
	// becomes an asset (terminal).
	StatusCancelled Status = "cancelled"
	// StatusExpired is an operation that passed its deadline without a
	// terminal provider answer (F3, F4 ambiguous create, F12); its credits
	// were released (terminal).
	StatusExpired Status = "expired"
)

// Statuses lists the operation states in their order of progress.
func Statuses() []Status {
	return []Status{StatusQueued, StatusDispatched, StatusProcessing, StatusCompleted, StatusFailed, StatusCancelled, StatusExpired}
}

// Terminal reports whether s is final: completed, failed, cancelled or
// expired accept no event that changes them.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled || s == StatusExpired
}

// Platform stages that follow the provider's: the platform's own work after
// the provider finished.
const (
	// StageIngesting is an operation whose two final audio URLs are known
	// and whose outputs are being copied into durable assets.
	StageIngesting Stage = "ingesting"
	// StageFinished is an operation whose outputs are all durable assets.
	StageFinished Stage = "finished"
)

// Stages lists the operation stages in their order of progress; StageFailed
// comes last and is terminal, outside that order.
func Stages() []Stage {
	return []Stage{StageQueued, StageText, StageFirst, StageProviderComplete, StageIngesting, StageFinished, StageFailed}
}

// Rank orders the progressing stages: queued 0 through finished 5;
// StageFailed and unknown stages are -1.
func (s Stage) Rank() int { return s.rank() }

// rank orders the progressing stages; StageFailed and unknown stages are
// -1. The empty stage of a fresh snapshot counts as queued.
func (s Stage) rank() int {
	switch s {
	case "", StageQueued:
		return 0
	case StageText:
		return 1
	case StageFirst:
		return 2
	case StageProviderComplete:
		return 3
	case StageIngesting:
		return 4
	case StageFinished:
		return 5
	}
	return -1
}

// Event moves a generation operation.
type Event string

// Events of the operation state machine.
const (
	// EventDispatched: the dispatch job recorded a provider attempt (also a
	// fallback attempt after a refused create).
	EventDispatched Event = "dispatched"
	// EventProviderProgress: a callback or poll reported a non-terminal
	// provider stage (text, first).
	EventProviderProgress Event = "provider_progress"
	// EventProviderSucceeded: a callback or poll reported success with both
	// final audio URLs known; ingestion starts.
	EventProviderSucceeded Event = "provider_succeeded"
	// EventIngested: every output became a durable asset.
	EventIngested Event = "ingested"
	// EventIngestFailed: an output could not be ingested (its URL expired or
	// kept failing past the bounded retries, F9).
	EventIngestFailed Event = "ingest_failed"
	// EventProviderFailed: the provider failed the task, or refused the
	// create with no fallback route left.
	EventProviderFailed Event = "provider_failed"
	// EventCancel: the owner cancelled the operation.
	EventCancel Event = "cancel"
	// EventExpire: the operation's deadline passed.
	EventExpire Event = "expire"
)

// Events lists the operation events.
func Events() []Event {
	return []Event{EventDispatched, EventProviderProgress, EventProviderSucceeded, EventIngested, EventIngestFailed, EventProviderFailed, EventCancel, EventExpire}
}

// Move is one allowed transition of the operation state machine.
type Move = fsm.Row[Status, Event]

// Moves returns the operation transition table as data (the architecture
// route serves it). It is built on each call, so callers can never change
// it.
//
// Terminal states are monotonic. Decision: a stale event on a terminal
// operation is a self-loop in the table, a no-op and not an error — a late
// callback or poll (provider_progress, provider_succeeded,
// provider_failed), a late ingestion result (ingested, ingest_failed), a
// late deadline (expire), and cancel on failed, cancelled or expired
// (cancellation is idempotent). Two events on a terminal operation are
// errors, because the caller must learn that it cannot act: cancel on a
// completed operation (nothing left to cancel; the credits are settled),
// and dispatched on any terminal operation (the dispatch job must not
// create a provider task for a finished operation).
func Moves() []Move {
	m := []Move{
		{From: StatusQueued, Event: EventDispatched, To: StatusDispatched},
		{From: StatusQueued, Event: EventProviderFailed, To: StatusFailed},
		{From: StatusQueued, Event: EventCancel, To: StatusCancelled},
		{From: StatusQueued, Event: EventExpire, To: StatusExpired},

		{From: StatusDispatched, Event: EventDispatched, To: StatusDispatched},
		{From: StatusDispatched, Event: EventProviderProgress, To: StatusProcessing},
		{From: StatusDispatched, Event: EventProviderSucceeded, To: StatusProcessing},
		{From: StatusDispatched, Event: EventProviderFailed, To: StatusFailed},
		{From: StatusDispatched, Event: EventCancel, To: StatusCancelled},
		{From: StatusDispatched, Event: EventExpire, To: StatusExpired},

		{From: StatusProcessing, Event: EventProviderProgress, To: StatusProcessing},
		{From: StatusProcessing, Event: EventProviderSucceeded, To: StatusProcessing},
		{From: StatusProcessing, Event: EventIngested, To: StatusCompleted},
		{From: StatusProcessing, Event: EventIngestFailed, To: StatusFailed},
		{From: StatusProcessing, Event: EventProviderFailed, To: StatusFailed},
		{From: StatusProcessing, Event: EventCancel, To: StatusCancelled},
		{From: StatusProcessing, Event: EventExpire, To: StatusExpired},
	}
	stale := []Event{EventProviderProgress, EventProviderSucceeded, EventProviderFailed, EventIngested, EventIngestFailed, EventExpire}
	for _, s := range []Status{StatusCompleted, StatusFailed, StatusCancelled, StatusExpired} {
		for _, e := range stale {
			m = append(m, Move{From: s, Event: e, To: s})
		}
		if s != StatusCompleted {
			m = append(m, Move{From: s, Event: EventCancel, To: s})
		}
	}
	return m
}

// Transition returns the state event moves from to: the only way an
// operation's state moves. A result equal to from is a no-op the caller
// must not act on (see Moves). INVALID_STATE_TRANSITION when the table has
// no such move.
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("generation.Transition", "A generation operation", Moves()).Transition(from, e)
}
