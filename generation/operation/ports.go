package operation

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/policy"
)

// RunFunc runs fn as one unit of work (a transaction), handing it the
// transaction as port P, and commits when fn returns nil.
type RunFunc[P any] func(ctx context.Context, fn func(st P) error) error

// Getter reads an operation of a scope: the access checks of the routes
// that address one operation (Service.Resource, Service.CheckCancel).
type Getter interface {
	// GenerationOperationGet reads an operation of sc; NOT_FOUND otherwise.
	GenerationOperationGet(ctx context.Context, sc access.Scope, id string) (Operation, error)
}

// AttemptLister lists an operation's attempts.
type AttemptLister interface {
	// GenerationAttempts lists an operation's attempts by number.
	GenerationAttempts(ctx context.Context, operationID string) ([]Attempt, error)
}

// Reader is what the operation routes read (Service.Get, Service.Result):
// an operation with its attempts, cost reconciliations and assets.
type Reader interface {
	Getter
	AttemptLister
	asset.Store
	// GenerationCosts reads the reconciliations of an operation.
	GenerationCosts(ctx context.Context, operationID string) ([]Cost, error)
}

// PlanReader is what Service.Prepare reads, from the read pool: the
// pricing policy, the workspace's credentials and the time.
type PlanReader interface {
	policy.Store
	credential.Lister
	// Now is the read's time.
	Now() time.Time
}

// Enqueuer enqueues this package's jobs in a unit of work.
type Enqueuer interface {
	// JobEnqueue is JobInsert for a caller that does not need to know
	// whether the job was inserted (a duplicate unique key inserts
	// nothing): a pipelining store sends it with a later statement.
	JobEnqueue(ctx context.Context, p jobs.InsertParams) error
}

// AcceptStore is the accept path's port (Service.Accept): the new
// operation, its dispatch job and the reservation of its credits.
type AcceptStore interface {
	ledger.Mover
	Enqueuer
	// GenerationOperationInsert stores a new operation.
	GenerationOperationInsert(ctx context.Context, o Operation) error
	// BeforeCommit runs fn in the unit of work just before its commit.
	BeforeCommit(fn func(ctx context.Context) error)
}

// Writer is what a change of an operation writes through: its new
// version, the jobs and ledger movements of its effects and its terminal
// outbox event.
type Writer interface {
	ledger.Mover
	Enqueuer
	// GenerationOperationUpdate writes o when its stored version is
	// o.Version-1; CONFLICT otherwise.
	GenerationOperationUpdate(ctx context.Context, o Operation) error
}

// Locker reads an operation to change it.
type Locker interface {
	// GenerationOperationLock reads an operation by id and locks it until
	// the unit of work ends (FOR UPDATE on PostgreSQL; SQLite's single
	// writer serializes); NOT_FOUND when there is none.
	GenerationOperationLock(ctx context.Context, id string) (Operation, error)
}

// Loader reads the operation (locked) and the attempt a job names.
type Loader interface {
	Locker
	// GenerationAttemptGet reads an attempt by id; NOT_FOUND otherwise.
	GenerationAttemptGet(ctx context.Context, id string) (Attempt, error)
}

// AttemptUpdater records what became of an attempt.
type AttemptUpdater interface {
	// GenerationAttemptUpdate writes an attempt's task id, state, error,
	// polls and times.
	GenerationAttemptUpdate(ctx context.Context, a Attempt) error
}

// CancelStore is the cancel path's port (Service.Cancel).
type CancelStore interface {
	Getter
	Locker
	Writer
}

// DispatchStore is the port of a dispatch's first unit of work: it picks
// the next candidate, takes a create slot and records the attempt, or
// fails the operation when no candidate is left.
type DispatchStore interface {
	Locker
	Writer
	AttemptLister
	AttemptUpdater
	credential.Lister
	// GenerationAttemptInsert stores a new attempt.
	GenerationAttemptInsert(ctx context.Context, a Attempt) error
	// ProviderCreateSlot takes a create slot of a provider account: at most
	// limit slots in any window ending now (the unit of work's time). When
	// the window is full it takes nothing and returns when the oldest slot
	// leaves it.
	ProviderCreateSlot(ctx context.Context, account string, limit int, window time.Duration) (ok bool, retryAt time.Time, err error)
}

// AnswerStore is the port of a dispatch's second unit of work: it records
// the provider's answer to a create, queues what follows it, and marks a
// customer key the provider rejected.
type AnswerStore interface {
	Loader
	Enqueuer
	AttemptLister
	AttemptUpdater
	credential.Observer
	credential.Getter
	credential.Updater
	// Now is the unit of work's time.
	Now() time.Time
}

// TrackStore is the port of the units of work that follow an operation to
// its end: a callback stored and merged, a recovery poll, the ambiguous
// create's and the deadline's jobs, an ingestion's failure, and the cost
// reconciliation.
type TrackStore interface {
	Loader
	Writer
	AttemptUpdater
	credential.Observer
	// GenerationCallbackInsert stores a callback once: false when one with
	// the same provider, task, stage and payload hash exists.
	GenerationCallbackInsert(ctx context.Context, c CallbackRecord) (bool, error)
	// GenerationCostInsert stores an attempt's reconciliation once: false
	// when the attempt has one.
	GenerationCostInsert(ctx context.Context, c Cost) (bool, error)
}

// IngestStore is the ingest path's port: the asset of one output slot, the
// output row, and the operation's change (the last output completes it).
type IngestStore interface {
	Loader
	Writer
	asset.Store
	// GenerationOutputInsert stores an output once: false when the slot of
	// the operation has one.
	GenerationOutputInsert(ctx context.Context, o Output) (bool, error)
}

// PoolReader is the read pool as the jobs and the callback read it before
// their units of work: the attempt a callback token names, the operation
// and attempt a job names, the customer key an attempt authenticates with,
// and the asset store an ingestion checks references in.
type PoolReader interface {
	Loader
	credential.Getter
	asset.Store
	// GenerationAttemptByToken reads the attempt of a callback token
	// digest and provider; NOT_FOUND otherwise.
	GenerationAttemptByToken(ctx context.Context, provider generation.ProviderID, digest string) (Attempt, error)
	// Now is the read's time.
	Now() time.Time
}
