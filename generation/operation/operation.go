// Package operation runs music generation operations end to end (spec,
// "Music generation and operations"): accept a generate request, reserve
// its credits, dispatch it to a provider from a durable job after commit,
// take the provider's answers from verified callbacks and recovery polls
// through the one pure merge (generation.Merge), ingest both tracks as
// durable assets, settle or release the credits exactly once, and
// reconcile the provider's cost.
//
// # The dispatch sequence
//
// Prepare (reads only, outside the transaction): the request is
// validated, priced through the "pricing.generation" policy of the
// caller's environment, and its routes and billing mode are chosen from
// the configured providers and the workspace's credentials. Accept (one
// unit of work with the gateway's idempotency record): the operation and
// its dispatch job are written and the credits are reserved in the ledger
// (reference "reserve:<operation id>") last, just before the commit.
// Nothing talks to a provider before the commit. Between the two, Admit
// lets a workspace's reserving accepts into the database a few at a time
// per host (Tuning.AcceptsInFlight), in the order they arrived: each one
// changes the workspace's credit balances, which PostgreSQL keeps in a few
// slots (ledger.Spread), and an accept that finds every slot held waits
// for one, which PostgreSQL hands to its waiters in no particular order.
//
// Dispatch (job "generation.dispatch"): picks the next candidate (provider
// route x credential) from the operation's routes and billing mode, takes
// a slot of the provider account's create scheduler (Config.CreateLimit per
// Config.CreateWindow, counted in the database so that every host on one
// PostgreSQL shares it), records the attempt in state sending, commits, and
// only then calls the provider. The answer is recorded in a second unit of
// work. An attempt found still sending (the worker stopped between the
// create and recording its answer) is never sent again: it becomes
// ambiguous and waits for a callback, which names the attempt by the
// unguessable token in its URL, or for the ambiguous-create deadline, after
// which the operation fails and its credits are released. The same holds
// for a create that timed out.
//
// An attempt's state (sending, accepted, ambiguous, transient, refused)
// moves only through AttemptTransition over the AttemptMoves table, like
// the operation's own (generation.Moves); a move the table lacks is
// INVALID_STATE_TRANSITION and rolls its unit of work back.
//
// A throttle (RATE_LIMITED: the task never entered the provider's queue)
// or an unavailable provider is retried on the same candidate with
// backoff, Config.TransientRetries times; a refusal (credits exhausted, a
// rejected key, a refused request) moves to the next candidate — the
// platform credential after a customer key in BYOK_WITH_PLATFORM_FALLBACK,
// then the fallback routes of providerPolicy. When none is left the
// operation fails and its credits are released. The operation id never
// changes across attempts; provider task ids are correlation data, never
// returned.
//
// Callbacks and polls: a callback is verified by the attempt's provider
// adapter on its raw body and stored once (unique on provider, task, stage
// and payload hash); a recovery poll (job "generation.poll", first after
// Config.PollAfter, then backing off to Config.PollMax, never faster than
// Config.PollMinInterval per task, so far below provider A's 3 queries per
// second per task) goes through the same merge. Clients never poll
// providers.
//
// A callback is believed only as far as its signature reaches. Provider
// B signs timestamp and body: its verified callback is merged as
// delivered. Provider A signs only task id and timestamp, so one captured
// A callback would let anyone post a "complete" naming their own audio
// URLs, or an "error", within the skew window. An A callback is therefore
// a notification (generation.MusicProvider.CallbackSignsBody is false): its
// signed task id is checked against the attempt, it is stored once per
// task and claimed stage (its payload hash covers task and stage, not the
// unsigned body), and it queues one confirmation per claimed stage: a
// "generation.poll" job that queries A's authenticated record at once and
// merges only what the record returns (stage, tracks, URLs, durations,
// failure). Nothing in the body is ever merged or fetched: a forged
// "complete" while the task still runs changes nothing, and the same
// forgery after the task finished ingests the record's own tracks. The
// cost is one record query per claimed stage (text, first, complete,
// error: four at most per task). Decision: a forged claim spends its
// stage's confirmation, so the genuine callback of that stage, when it
// arrives later, is a duplicate and the recovery polls finish the task
// (at most Config.PollMax later); the attacker needs a captured callback
// of that very task and gains no asset, credit or state.
//
// Ingestion (job "generation.ingest", one per output slot): the final
// MP3 is fetched with bounded retries (generation.Fetcher, F9) and stored
// as an asset of origin generated; the output row is unique per operation
// and slot, so a track is materialized once. The last output settles the
// credits (reference "settle:<operation id>") and writes
// generation.operation.completed. An expired URL fails the operation and
// releases the credits. An operation cancelled meanwhile never gets the
// asset. Decision: an operation fails as a whole — when one track is
// ingested and the other's URL has expired, nothing is charged, and the
// ingested track stays an asset of the workspace, shown on the operation's
// output, since its bytes are already stored.
//
// Cost (job "generation.reconcile", once per attempt with a terminal
// provider outcome, cancelled operations included): creditsConsumed where
// the dialect reports it, else the price table (generation.Reconcile);
// drift above Config.CostDriftBps writes a PROVIDER_COST_DRIFT outbox
// event. The provider's consumption is posted to the provider-cost ledger,
// never to customer credits.
//
// # Ports
//
// The service reads and writes through narrow ports, each bound to one
// unit of work or to the read pool, and every path asks for its own: the
// routes' reads take a Reader (their access checks a Getter), Prepare a
// PlanReader, Accept an AcceptStore and Cancel a CancelStore. The jobs and
// the callback run their units of work through Config's run funcs, which
// hand a DispatchStore (a dispatch's attempt), an AnswerStore (the
// provider's answer to a create), a TrackStore (callbacks, polls,
// deadlines, an ingestion's failure, cost reconciliation) or an
// IngestStore (a track stored), and read the pool before them through a
// PoolReader; SeedPricing takes a policy.Store. Package store's
// transaction implements every one, so a fake of any path stays small.
package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/policy"
)

// IDPrefix prefixes operation ids; AttemptPrefix attempt ids.
const (
	IDPrefix      = "op_"
	AttemptPrefix = "gatt_"
)

// Job kinds of this package.
const (
	JobDispatch  = "generation.dispatch"
	JobPoll      = "generation.poll"
	JobIngest    = "generation.ingest"
	JobReconcile = "generation.reconcile"
	JobExpire    = "generation.expire"
	JobAmbiguous = "generation.ambiguous"
)

// Outbox event types.
const (
	// EventAccepted is written with a newly accepted operation, so that a
	// follower of the operation sees it from its start.
	EventAccepted  = "generation.operation.accepted"
	EventCompleted = "generation.operation.completed"
	EventFailed    = "generation.operation.failed"
	EventCancelled = "generation.operation.cancelled"
	EventExpired   = "generation.operation.expired"
	// EventCostDrift is written when a provider's reported cost differs
	// from the expected cost by more than Config.CostDriftBps.
	EventCostDrift = "PROVIDER_COST_DRIFT"
)

// FeatureGenerate is the feature flag that turns music generation on for a
// workspace. The platform seeds it on by default; an operator turns it off
// for one workspace or for the platform, and new generations are then
// FEATURE_DISABLED (existing operations still complete and stay readable).
const FeatureGenerate = "music.generation"

// ProviderPolicy is the caller's provider routing preference (scope
// providers:select).
type ProviderPolicy struct {
	Preferred generation.ProviderID   `json:"preferred,omitempty"`
	Fallback  []generation.ProviderID `json:"fallback,omitempty"`
}

// Request is a validated generate request as stored with its operation.
type Request struct {
	Prompt       string  `json:"prompt"`
	Instrumental bool    `json:"instrumental"`
	Model        string  `json:"model"`
	Duration     float64 `json:"duration,omitempty"`
	// ProviderPolicy is nil when the caller named none.
	ProviderPolicy *ProviderPolicy `json:"providerPolicy,omitempty"`
}

// Operation is a generation operation as stored.
type Operation struct {
	ID              string
	Scope           access.Scope
	CreatedByUserID string
	CreatedByKeyID  string
	Request         Request
	// BillingMode decides which credentials the candidates use and what
	// the customer pays.
	BillingMode credential.BillingMode
	// CreditsReserved is what Accept reserved; CreditsSettled is what was
	// consumed (nil until settled; the rest was released).
	CreditsReserved int64
	CreditsSettled  *int64
	// ByokCredits is what the customer pays when a customer key delivered
	// the result (priced at accept).
	ByokCredits int64
	// Pricing is the pricing policy version the operation was priced with.
	Pricing policy.Ref
	// Routes are the provider routes to try, in order.
	Routes []generation.ProviderID
	// DurationApplied is nil until a provider was selected; false when the
	// request named a duration the selected provider does not take.
	DurationApplied *bool
	// Snapshot is the merged provider state of the current attempt; its
	// Status is the operation's status.
	Snapshot generation.Snapshot
	// Version counts updates (compare-and-set).
	Version int64
	// Attempts is the number of provider attempts recorded.
	Attempts int
	// CurrentAttemptID is the attempt whose task the snapshot follows.
	CurrentAttemptID string
	DeadlineAt       time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// EndedAt is when the operation became terminal.
	EndedAt *time.Time
}

// Status is the operation's status.
func (o Operation) Status() generation.Status { return o.Snapshot.Status }

// AttemptState is the state of one provider attempt.
type AttemptState string

// Attempt states.
const (
	// AttemptSending: recorded before the provider create; if a worker
	// finds it still sending, the answer was lost: it becomes ambiguous.
	AttemptSending AttemptState = "sending"
	// AttemptAccepted: the provider returned (or a callback revealed) the
	// task id.
	AttemptAccepted AttemptState = "accepted"
	// AttemptAmbiguous: the create's answer is unknown (a timeout or a
	// worker stop); the task may exist and is never created again.
	AttemptAmbiguous AttemptState = "ambiguous"
	// AttemptTransient: throttled or unavailable; the task never entered the
	// provider's queue; the same candidate is tried again.
	AttemptTransient AttemptState = "transient"
	// AttemptRefused: the provider refused the create for good on this
	// candidate; the next candidate is tried.
	AttemptRefused AttemptState = "refused"
)

// AttemptStates returns every attempt state, the initial one first.
func AttemptStates() []AttemptState {
	return []AttemptState{AttemptSending, AttemptAccepted, AttemptAmbiguous, AttemptTransient, AttemptRefused}
}

// AttemptEvent moves an attempt between states.
type AttemptEvent string

// Attempt events.
const (
	// AttemptCreateAccepted: the provider answered the create with its
	// task id.
	AttemptCreateAccepted AttemptEvent = "create_accepted"
	// AttemptCreateAmbiguous: the create's answer is unknown (a timeout,
	// an internal failure, a connection lost after sending).
	AttemptCreateAmbiguous AttemptEvent = "create_ambiguous"
	// AttemptCreateThrottled: the provider throttled the create or was
	// unavailable; the task never entered its queue.
	AttemptCreateThrottled AttemptEvent = "create_throttled"
	// AttemptCreateRefused: the provider refused the create for good on
	// this candidate, or throttled it Config.TransientRetries times in a
	// row.
	AttemptCreateRefused AttemptEvent = "create_refused"
	// AttemptAnswerLost: a dispatch found the attempt still sending: the
	// worker stopped between the create and recording its answer.
	AttemptAnswerLost AttemptEvent = "answer_lost"
	// AttemptTaskNamed: a verified callback named the attempt's task
	// before the create's answer was recorded.
	AttemptTaskNamed AttemptEvent = "task_named"
)

// AttemptMove is one allowed transition of the attempt state machine.
type AttemptMove = fsm.Row[AttemptState, AttemptEvent]

// AttemptMoves returns the attempt transition table as data, built on each
// call so callers can never change it. An attempt is inserted sending;
// AttemptTransition is the only way its state moves after that, and every
// move happens under the operation's row lock (GenerationOperationLock), so
// two workers never move one attempt at once.
//
// The create's answer may arrive after a dispatch gave the attempt up as
// lost (ambiguous), and is then recorded as it is; a callback may name the
// task before the answer (accepted, and the answer's accepted is a
// self-loop) or after a throttle or refusal was recorded (the task exists
// after all: accepted). Nothing leaves accepted but those self-loops, and
// a throttled or refused attempt is never answered again.
func AttemptMoves() []AttemptMove {
	return []AttemptMove{
		{From: AttemptSending, Event: AttemptCreateAccepted, To: AttemptAccepted},
		{From: AttemptAmbiguous, Event: AttemptCreateAccepted, To: AttemptAccepted},
		{From: AttemptAccepted, Event: AttemptCreateAccepted, To: AttemptAccepted},
		{From: AttemptSending, Event: AttemptCreateAmbiguous, To: AttemptAmbiguous},
		{From: AttemptAmbiguous, Event: AttemptCreateAmbiguous, To: AttemptAmbiguous},
		{From: AttemptSending, Event: AttemptCreateThrottled, To: AttemptTransient},
		{From: AttemptAmbiguous, Event: AttemptCreateThrottled, To: AttemptTransient},
		{From: AttemptSending, Event: AttemptCreateRefused, To: AttemptRefused},
		{From: AttemptAmbiguous, Event: AttemptCreateRefused, To: AttemptRefused},
		{From: AttemptSending, Event: AttemptAnswerLost, To: AttemptAmbiguous},
		{From: AttemptSending, Event: AttemptTaskNamed, To: AttemptAccepted},
		{From: AttemptAmbiguous, Event: AttemptTaskNamed, To: AttemptAccepted},
		{From: AttemptTransient, Event: AttemptTaskNamed, To: AttemptAccepted},
		{From: AttemptRefused, Event: AttemptTaskNamed, To: AttemptAccepted},
		{From: AttemptAccepted, Event: AttemptTaskNamed, To: AttemptAccepted},
	}
}

// AttemptTransition returns the state event moves from to;
// INVALID_STATE_TRANSITION when AttemptMoves has no such move.
func AttemptTransition(from AttemptState, e AttemptEvent) (AttemptState, error) {
	return fsm.New("operation.AttemptTransition", "A provider attempt", AttemptMoves()).Transition(from, e)
}

// move sets a's state to where e takes it (AttemptTransition), leaving a
// unchanged when the table has no such move.
func (a *Attempt) move(e AttemptEvent) error {
	to, err := AttemptTransition(a.State, e)
	if err != nil {
		return err
	}
	a.State = to
	return nil
}

// Attempt is one provider create of an operation.
type Attempt struct {
	ID          string
	OperationID string
	Scope       access.Scope
	Number      int
	Provider    generation.ProviderID
	// CredentialID is the customer credential used; "" for the platform's.
	CredentialID string
	Ownership    credential.Ownership
	// TokenDigest is the keyed digest of the callback URL's attempt token.
	TokenDigest string
	// TaskID is the provider's task id; "" until known.
	TaskID    string
	State     AttemptState
	ErrorCode string
	// Polls counts recovery polls; LastPolledAt is the latest one.
	Polls        int
	LastPolledAt *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// CallbackRecord is a verified provider callback as stored (the durable
// inbox of callbacks).
type CallbackRecord struct {
	ID          string
	Provider    generation.ProviderID
	TaskID      string
	Stage       generation.Stage
	PayloadHash string
	AttemptID   string
	OperationID string
	Body        []byte
	ReceivedAt  time.Time
}

// Output is an ingested output: the asset of one slot.
type Output struct {
	OperationID     string
	Slot            int
	AssetID         string
	ProviderTrackID string
	CreatedAt       time.Time
}

// Cost is a provider cost reconciliation of one attempt.
type Cost struct {
	ID          string
	OperationID string
	AttemptID   string
	Scope       access.Scope
	Provider    generation.ProviderID
	Model       string
	Status      generation.CostStatus
	Source      generation.CostSource
	Expected    *int64
	Actual      *int64
	DriftBps    int64
	CreatedAt   time.Time
}

// handler decodes a job's jobRef payload for fn.
func handler(kind string, fn func(ctx context.Context, job jobs.Job, ref jobRef) error) jobs.Handler {
	return func(ctx context.Context, job jobs.Job) error {
		var ref jobRef
		if err := json.Unmarshal(job.Payload, &ref); err != nil {
			return fmt.Errorf("%s payload: %w", kind, err)
		}
		return fn(ctx, job, ref)
	}
}

// load reads the operation and attempt a job names, through st.
func load(ctx context.Context, st Loader, ref jobRef) (Operation, Attempt, error) {
	o, err := st.GenerationOperationLock(ctx, ref.Operation)
	if err != nil {
		return Operation{}, Attempt{}, err
	}
	a, err := st.GenerationAttemptGet(ctx, ref.Attempt)
	if err != nil {
		return Operation{}, Attempt{}, err
	}
	return o, a, nil
}

// payload encodes a job payload.
func payload(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // only plain structs of strings and ints
		panic(err)
	}
	return b
}
