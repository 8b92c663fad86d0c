package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/fault"
)

// DefaultMaxAttempts is the attempt budget of a job whose InsertParams leave
// MaxAttempts zero.
const DefaultMaxAttempts = 25

// MaxErrorLen bounds the stored last_error, in bytes. Longer errors are
// truncated (on a UTF-8 boundary) by the store.
const MaxErrorLen = 2048

// Job is a claimed job as a handler sees it.
type Job struct {
	// ID is the job's identifier ("job_" + ULID).
	ID string
	// Kind selects the Handler.
	Kind string
	// Payload is the JSON the enqueuer stored.
	Payload []byte
	// Attempts counts claims so far, including the current one (1 on the
	// first run).
	Attempts int
	// MaxAttempts is the attempt budget; the job is discarded when an
	// attempt numbered MaxAttempts fails.
	MaxAttempts int
	// RunAt is when the job became due.
	RunAt time.Time
}

// State is the state of a job row.
type State string

const (
	// Available jobs wait for run_at to come and a worker to claim them.
	Available State = "available"
	// Running jobs are claimed: locked_by holds the claim token and
	// locked_until the end of the lease. A running job whose lease has
	// expired is claimable again.
	Running State = "running"
	// Succeeded jobs finished: the handler returned nil. Final.
	Succeeded State = "succeeded"
	// Failed names an attempt that returned an error and will be retried.
	// The row itself goes back to Available with a later run_at, so no row
	// rests in this state; it appears in transitions and logs.
	Failed State = "failed"
	// Discarded jobs failed their last allowed attempt. Final.
	Discarded State = "discarded"
	// Cancelled jobs were withdrawn before they ran. Final.
	Cancelled State = "cancelled"
)

// States returns every job state, in lifecycle order.
func States() []State {
	return []State{Available, Running, Succeeded, Failed, Discarded, Cancelled}
}

// Final reports whether s is a state a job never leaves.
func (s State) Final() bool { return s == Succeeded || s == Discarded || s == Cancelled }

// Record is a stored job with its bookkeeping, for inspection (operations
// routes, health, tests).
type Record struct {
	Job
	// State is the row's state.
	State State
	// UniqueKey is the deduplication key, "" if none.
	UniqueKey string
	// Group is who the job works for (InsertParams.Group), "" if none.
	Group string
	// LockedBy is the claim token of the lease, "" when not running.
	LockedBy string
	// LockedUntil is the end of the lease; zero when not running.
	LockedUntil time.Time
	// LastError is the most recent failure's text, "" if none.
	LastError string
	// CreatedAt is when the job was inserted.
	CreatedAt time.Time
	// FinishedAt is when the job reached a final state; zero otherwise.
	FinishedAt time.Time
}

// InsertParams describe a job to enqueue.
type InsertParams struct {
	// Kind selects the handler. Required.
	Kind string
	// Payload is JSON for the handler. Empty means "{}". It must not hold
	// secrets: store references to sealed secrets instead.
	Payload []byte
	// RunAt is the earliest time the job may run. Zero means now (the unit
	// of work's time).
	RunAt time.Time
	// MaxAttempts is the attempt budget. Zero means DefaultMaxAttempts.
	MaxAttempts int
	// UniqueKey, when set, deduplicates: a second insert with the same key
	// inserts nothing and reports inserted=false. Optional.
	UniqueKey string
	// Group names who the job works for (a workspace id, for example), so
	// a class can bound how many of one group's jobs run at once. Empty
	// means no group. Optional.
	Group string
}

// WithDefaults validates p and returns it with zero fields defaulted, now
// being the unit of work's time. Stores call it before inserting; errors are
// INVALID_INPUT naming the field.
func (p InsertParams) WithDefaults(now time.Time) (InsertParams, error) {
	const op = "jobs.InsertParams"
	if p.Kind == "" {
		return p, fault.Invalid(op, "kind", "A job kind is required.")
	}
	if p.MaxAttempts < 0 {
		return p, fault.Invalid(op, "maxAttempts", "Max attempts must not be negative.")
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if len(p.Payload) == 0 {
		p.Payload = []byte("{}")
	} else if !json.Valid(p.Payload) {
		return p, fault.Invalid(op, "payload", "The job payload must be JSON.")
	}
	if p.RunAt.IsZero() {
		p.RunAt = now
	}
	return p, nil
}

// Enqueuer inserts jobs. Domains call it on the transaction handle of their
// unit of work, so the job commits with the business rows.
type Enqueuer interface {
	// JobInsert stores a new available job. A duplicate UniqueKey is not an
	// error: nothing is inserted and inserted is false. Invalid params are
	// INVALID_INPUT.
	JobInsert(ctx context.Context, p InsertParams) (inserted bool, err error)
}

// ClaimParams select and lease jobs.
type ClaimParams struct {
	// LockedBy is the claim token written to locked_by; Complete, Fail and
	// Extend must present it. Required.
	LockedBy string
	// Limit bounds how many jobs are claimed. Required, positive.
	Limit int
	// Lease is how long the claim holds before others may reclaim the job.
	// Required, positive.
	Lease time.Duration
	// Kinds restricts the claim to jobs of these kinds (a class's kinds).
	// Empty means every kind.
	Kinds []string
	// GroupLimit, when positive, bounds how many jobs of one group (among
	// Kinds) run at once: a job whose group already has GroupLimit running
	// jobs of these kinds under an unexpired lease is skipped, and one claim
	// takes no more of a group than it has room for. Jobs without a group
	// are not limited. Zero means no limit.
	GroupLimit int
}

// BacklogParams select the jobs of one class for JobBacklog: the same
// kinds and group limit its claims use.
type BacklogParams struct {
	// Kinds are the class's kinds; empty means every kind.
	Kinds []string
	// GroupLimit is the class's per-group limit (see ClaimParams); zero
	// means none.
	GroupLimit int
}

// Backlog is how long the runnable jobs of a class have waited, as the
// store's clock sees it. A job is runnable when a claim with the class's
// BacklogParams would take it now: available and due, or running under an
// expired lease, and not held back by its group's limit.
type Backlog struct {
	// Runnable counts the runnable jobs.
	Runnable int
	// OldestSince is when the oldest runnable job became runnable: its
	// run_at, or the end of its expired lease. Zero when none is.
	OldestSince time.Time
	// Age is the store's now minus OldestSince; zero when no job is
	// runnable.
	Age time.Duration
}

// FailParams record a failed attempt.
type FailParams struct {
	// ID is the job.
	ID string
	// LockedBy is the claim token the job was claimed with.
	LockedBy string
	// Error is the failure's text, stored in last_error and truncated to
	// MaxErrorLen bytes. It must not contain secrets.
	Error string
	// RetryAfter is the delay before the next attempt, added to the store's
	// now. Ignored when the attempts are spent and the job is discarded.
	RetryAfter time.Duration
	// Discard ends the job now, whatever attempts it has left: the failure
	// is permanent (see Permanent).
	Discard bool
}

// ExtendParams renew a lease.
type ExtendParams struct {
	// ID is the job.
	ID string
	// LockedBy is the claim token the job was claimed with.
	LockedBy string
	// Lease is the new lease, counted from the store's now.
	Lease time.Duration
}

// Store is the workers' port. Each call is its own unit of work. It is the
// seam between the worker and SQL and is not a stable API for embedders.
type Store interface {
	// JobClaim leases up to p.Limit due jobs of p.Kinds in (run_at, id)
	// order: available jobs, and running jobs whose lease expired before
	// now, skipping jobs held back by p.GroupLimit. Each claimed job becomes
	// running, locked by p.LockedBy until now+p.Lease, with attempts
	// incremented. Expired running jobs of p.Kinds whose attempts are spent
	// are discarded instead of reclaimed. Concurrent claims with the same
	// Kinds and a GroupLimit never together exceed the limit.
	JobClaim(ctx context.Context, p ClaimParams) ([]Job, error)
	// JobComplete marks the job succeeded if it is still running under
	// lockedBy; otherwise (reclaimed, or not running) it returns CONFLICT.
	JobComplete(ctx context.Context, id, lockedBy string) error
	// JobFail records a failed attempt if the job is still running under
	// p.LockedBy (else CONFLICT): discarded when p.Discard is set or
	// attempts >= max_attempts, otherwise available again at
	// now+p.RetryAfter.
	JobFail(ctx context.Context, p FailParams) (State, error)
	// JobExtend moves the lease's end to now+p.Lease if the job is still
	// running under p.LockedBy; otherwise it returns CONFLICT.
	JobExtend(ctx context.Context, p ExtendParams) error
	// JobBacklog reports the runnable jobs of one class: how many, and how
	// long the oldest has waited. It changes nothing.
	JobBacklog(ctx context.Context, p BacklogParams) (Backlog, error)
}
