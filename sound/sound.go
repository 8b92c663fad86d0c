// Package sound serves a sound engine as durable operations (spec, "Sound
// engine", "Sound operation" and "States and transitions"): a request is
// accepted with its idempotency record and dispatch job in one unit of
// work, a durable job runs the engine on the input asset after the commit,
// and the operation's state, stage and progress are stored as it goes.
//
// The engine is a port (Engine) in this package's own terms: the service
// hands it the input's encoded bytes and output sinks, and decoding,
// resampling, the signal processing and encoding are its business.
// Package sound/builtin adapts the built-in engine of package sound/dsp.
// This package imports no codec, DSP or FFT package, so the store, which
// implements Store over this package's types, links none either.
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
//
// # Bounds
//
// One upload of a few kilobytes must not hold a worker for minutes, so
// every operation is bounded:
//
//   - Duration. The plan in effect for the workspace sets the longest
//     input one operation processes (plan.Limits.SoundMaxDuration: free 10
//     minutes, pro 30, studio 60), reported in the capability snapshot as
//     limits.maxInputDurationSeconds. Admission refuses an input whose
//     header claims more (INVALID_INPUT, details.field "input.assetId",
//     details.reason "duration_limit", details.limit in seconds, and
//     details.claimedDurationSeconds). Claims are not trusted: the engine
//     counts decoded frames on every pass over the input (Input.MaxDuration)
//     and an input that runs past the bound fails the operation with the
//     same code and details, whatever its header claimed.
//   - Time. An operation expires at its deadline (Config.Deadline). The run
//     job works under a context that ends at the deadline and that a
//     watcher cancels as soon as the operation's stored status is terminal
//     (it polls the row every Config.WatchInterval, so a cancel or expiry
//     made on any host stops the work on this one), and the engine stops
//     once that context ends (the built-in one checks it before every block
//     its decoders and DSP loops read): a cancelled or expired operation
//     stops within a block and the job completes, leaving the operation
//     cancelled or expired with no result.
//   - Size. Outputs are encoded to temporary files that may not grow past
//     the host's upload limit (asset.Service.MaxUploadBytes) and are stored
//     under the workspace's storage quota (package asset).
//
// # Failures
//
// A failure that would recur on every attempt fails the operation once,
// with its code and details, and the job completes: input the engine
// cannot decode or that is silent where loudness is needed
// (INVALID_INPUT, details.reason "undecodable" or "silent"), an input past
// the duration bound (INVALID_INPUT, "duration_limit"), an output past the
// size limit (PAYLOAD_TOO_LARGE, details.reason "output_size",
// details.limit in bytes) or the storage quota (PAYLOAD_TOO_LARGE,
// "storage_quota"). Only infrastructure errors (the database, the blob
// store, temporary files) return an error, for the job to retry.
//
// # Credits
//
// Decision (the spec is silent): sound operations cost no credits. They
// run on the built-in engine, with no provider to pay, and are bounded
// instead by the plan's input duration, a per-workspace concurrency limit
// on their jobs, and the plan's storage quota for their outputs. A hosted
// engine with a per-call cost would reserve and settle credits through the
// ledger as generation does.
package sound

import (
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
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
type Move = fsm.Row[Status, Event]

// Moves returns the transition table (a fresh copy on each call).
// Terminal states are monotonic: cancel on failed, cancelled or expired
// and every late event are self-loops (no-ops); cancel on completed is not
// in the table.
func Moves() []Move {
	m := []Move{
		{From: StatusQueued, Event: EventDispatch, To: StatusDispatched},
		{From: StatusDispatched, Event: EventStart, To: StatusProcessing},
		{From: StatusProcessing, Event: EventComplete, To: StatusCompleted},
		{From: StatusQueued, Event: EventFail, To: StatusFailed},
		{From: StatusDispatched, Event: EventFail, To: StatusFailed},
		{From: StatusProcessing, Event: EventFail, To: StatusFailed},
	}
	for _, s := range []Status{StatusQueued, StatusDispatched, StatusProcessing} {
		m = append(m, Move{From: s, Event: EventCancel, To: StatusCancelled}, Move{From: s, Event: EventExpire, To: StatusExpired})
	}
	for _, s := range []Status{StatusFailed, StatusCancelled, StatusExpired} {
		m = append(m, Move{From: s, Event: EventCancel, To: s})
	}
	for _, s := range []Status{StatusCompleted, StatusFailed, StatusCancelled, StatusExpired} {
		for _, e := range []Event{EventDispatch, EventStart, EventComplete, EventFail, EventExpire} {
			m = append(m, Move{From: s, Event: e, To: s})
		}
	}
	return m
}

// Transition returns where e moves from; INVALID_STATE_TRANSITION when the
// table has no such move. A result equal to from is a no-op.
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("sound.Transition", "A sound operation", Moves()).Transition(from, e)
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
	// FailureCode, FailureMessage and FailureDetails (a JSON object, such
	// as the limit passed) say why a failed operation failed.
	FailureCode    string
	FailureMessage string
	FailureDetails json.RawMessage
	// Plan is the plan in effect for the workspace when the operation was
	// accepted: its storage quota holds the outputs.
	Plan       string
	Version    int64
	DeadlineAt time.Time
	CreatedAt  time.Time
	StartedAt  *time.Time
	UpdatedAt  time.Time
	EndedAt    *time.Time
}
