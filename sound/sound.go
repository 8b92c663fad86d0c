// Package sound serves the built-in sound engine (package sound/dsp) as
// durable operations (spec, "Sound engine", "Sound operation" and "States
// and transitions"): a request is accepted with its idempotency record and
// dispatch job in one unit of work, a durable job runs the engine on the
// input asset after the commit, and the operation's state, stage and
// progress are stored as it goes.
//
// It serves analysis (duration, sample rate, bit depth, channel
// count, integrated loudness and loudness range per ITU-R BS.1770-4 / EBU
// R128, sample and true peak, tempo and key; a field the engine cannot
// establish is reported unavailable with a reason, never guessed) and
// mastering, enhancement and stem separation (derived output assets, their
// parent the input, each stored once per operation and output).
//
// # Operation states
//
// Moves is the transition table, enforced by Transition and served as
// data. Decision: cancel is idempotent; cancelling a completed operation
// is INVALID_STATE_TRANSITION (409), as for generation, and a failed,
// cancelled or expired operation is returned unchanged — nothing is ever
// rolled back.
package sound

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// IDPrefix prefixes sound operation ids.
const IDPrefix = "snd_"

// Job kinds.
const (
	// JobRun runs an operation on the engine.
	JobRun = "sound.run"
	// JobExpire expires an operation still running at its deadline.
	JobExpire = "sound.expire"
)

// EventCompleted is written to the outbox when an operation completes.
const EventCompleted = "sound.operation.completed"

// Type is an operation type.
type Type string

// Operation types.
const (
	TypeStemSeparation Type = "stem_separation"
	TypeMastering      Type = "mastering"
	TypeEnhancement    Type = "enhancement"
	TypeAnalysis       Type = "analysis"
)

// Status is an operation state.
type Status string

// Operation states (spec, Sound operation).
const (
	StatusQueued     Status = "queued"
	StatusDispatched Status = "dispatched"
	StatusProcessing Status = "processing"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
	StatusCancelled  Status = "cancelled"
	StatusExpired    Status = "expired"
)

// Terminal reports a final state.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled || s == StatusExpired
}

// Stage is where a running operation is (spec, Sound operation).
type Stage string

// Stages.
const (
	StageAccepted      Stage = "accepted"
	StageUploading     Stage = "uploading"
	StageDecoding      Stage = "decoding"
	StageAnalyzing     Stage = "analyzing"
	StageStemIsolation Stage = "stem_isolation"
	StageMastering     Stage = "mastering"
	StageEnhancing     Stage = "enhancing"
	StageEncoding      Stage = "encoding"
	StagePersisting    Stage = "persisting"
	StageFinished      Stage = "finished"
)

// Event moves an operation.
type Event string

// Events.
const (
	// EventDispatch: the run job claimed the operation.
	EventDispatch Event = "dispatch"
	// EventStart: the engine started on the input.
	EventStart Event = "start"
	// EventComplete: the result is stored.
	EventComplete Event = "complete"
	// EventFail: the input could not be processed.
	EventFail Event = "fail"
	// EventCancel: the owner cancelled.
	EventCancel Event = "cancel"
	// EventExpire: the deadline passed.
	EventExpire Event = "expire"
)

// Move is one allowed transition.
type Move struct {
	From  Status `json:"from"`
	Event Event  `json:"event"`
	To    Status `json:"to"`
}

// Moves returns the transition table (a fresh copy on each call).
// Terminal states are monotonic: cancel on failed, cancelled or expired
// and every late event are self-loops (no-ops); cancel on completed is not
// in the table.
func Moves() []Move {
	m := []Move{
		{StatusQueued, EventDispatch, StatusDispatched},
		{StatusDispatched, EventStart, StatusProcessing},
		{StatusProcessing, EventComplete, StatusCompleted},
		{StatusQueued, EventFail, StatusFailed},
		{StatusDispatched, EventFail, StatusFailed},
		{StatusProcessing, EventFail, StatusFailed},
	}
	for _, s := range []Status{StatusQueued, StatusDispatched, StatusProcessing} {
		m = append(m, Move{s, EventCancel, StatusCancelled}, Move{s, EventExpire, StatusExpired})
	}
	for _, s := range []Status{StatusFailed, StatusCancelled, StatusExpired} {
		m = append(m, Move{s, EventCancel, s})
	}
	for _, s := range []Status{StatusCompleted, StatusFailed, StatusCancelled, StatusExpired} {
		for _, e := range []Event{EventDispatch, EventStart, EventComplete, EventFail, EventExpire} {
			m = append(m, Move{s, e, s})
		}
	}
	return m
}

// Transition returns where e moves from; INVALID_STATE_TRANSITION when the
// table has no such move. A result equal to from is a no-op.
func Transition(from Status, e Event) (Status, error) {
	moves := Moves()
	i := slices.IndexFunc(moves, func(m Move) bool { return m.From == from && m.Event == e })
	if i < 0 {
		return "", fault.E("sound.Transition", fault.InvalidState, fmt.Sprintf("A sound operation cannot go from %s on %s.", from, e)).
			With("from", string(from)).With("event", string(e))
	}
	return moves[i].To, nil
}

// Operation is a sound operation as stored.
type Operation struct {
	ID              string
	Scope           access.Scope
	CreatedByUserID string
	CreatedByKeyID  string
	Type            Type
	Status          Status
	Stage           Stage
	// Progress is the percent done while processing.
	Progress int
	// InputAssetID is the input asset.
	InputAssetID string
	// Request is the validated request (JSON of the type's request).
	Request json.RawMessage
	// Capabilities is the capability snapshot the request was checked
	// against.
	Capabilities json.RawMessage
	// Result is the analysis result once completed.
	Result json.RawMessage
	// FailureCode and FailureMessage say why a failed operation failed.
	FailureCode    string
	FailureMessage string
	Version        int64
	DeadlineAt     time.Time
	CreatedAt      time.Time
	StartedAt      *time.Time
	UpdatedAt      time.Time
	EndedAt        *time.Time
}
