package x402

import (
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/money"
)

// The ids' prefixes.
const (
	// SettlementPrefix prefixes settlement ids.
	SettlementPrefix = "x4s_"
	// GrantPrefix prefixes grant ids.
	GrantPrefix = "x4g_"
)

// State is a settlement's state. It moves only through Transition over
// Moves.
type State string

// The settlement states.
const (
	// StateSubmitting: the payment was verified and claimed, and the
	// facilitator is settling it; its outcome is not known yet.
	StateSubmitting State = "SUBMITTING"
	// StateSettled: the chain confirmed the payment; its grant exists.
	StateSettled State = "SETTLED"
	// StateFailed: the facilitator refused it, or the chain refused it or
	// failed it, or its blockhash lapsed with nothing landed. Nothing was
	// granted.
	StateFailed State = "FAILED"
	// StateRequiresReview: the outcome cannot be established (a remote
	// facilitator never said which transaction it sent before the
	// blockhash lapsed, or said it succeeded with a signature that is not
	// the payment's). Nothing was granted; a person decides.
	StateRequiresReview State = "REQUIRES_REVIEW"
)

// States lists the settlement states.
func States() []State {
	return []State{StateSubmitting, StateSettled, StateFailed, StateRequiresReview}
}

// Final reports whether nothing moves s any more.
func (s State) Final() bool { return s != StateSubmitting }

// Event moves a settlement.
type Event string

// The settlement events.
const (
	// EventConfirm: the chain confirmed the payment.
	EventConfirm Event = "confirm"
	// EventFail: the payment failed for good.
	EventFail Event = "fail"
	// EventUnexplained: the outcome cannot be established.
	EventUnexplained Event = "unexplained"
)

// Move is one row of the settlement table.
type Move = fsm.Row[State, Event]

// Moves returns the settlement table (a fresh copy, served as data). A
// settlement is claimed in SUBMITTING and leaves it once.
func Moves() []Move {
	return []Move{
		{From: StateSubmitting, Event: EventConfirm, To: StateSettled},
		{From: StateSubmitting, Event: EventFail, To: StateFailed},
		{From: StateSubmitting, Event: EventUnexplained, To: StateRequiresReview},
	}
}

// Transition returns the state e moves from to; INVALID_STATE_TRANSITION
// when the table has no row.
func Transition(from State, e Event) (State, error) {
	return fsm.New("x402.Transition", "A payment settlement", Moves()).Transition(from, e)
}

// EventType is the outbox event type of a settlement written in state s:
// "x402_settlement.submitting", "x402_settlement.settled", ...
func EventType(s State) string { return "x402_settlement." + strings.ToLower(string(s)) }

// EventGrantConsumed is written when a grant is used.
const EventGrantConsumed = "x402_grant.consumed"

// Settlement is one payment the platform claimed and settles: the
// transaction (by its message's hash, unique across every tenant), the
// request that claimed it (its scope's Idempotency-Key and the payload's
// hash), what it buys and how far it went.
type Settlement struct {
	// ID is the settlement's id (SettlementPrefix).
	ID string
	// Scope is the workspace and environment that bought.
	Scope access.Scope
	// Principal is the buyer's stable id (a user or an API key).
	Principal string
	// IdempotencyKey and PayloadHash are the claiming request's key and
	// the hash of the transaction it carried (Transaction.PayloadHash).
	IdempotencyKey string
	PayloadHash    string
	// MessageHash identifies the transaction (Transaction.MessageHash).
	MessageHash string
	// ResourceID is the resource bought.
	ResourceID string
	// Network, Asset, PayTo and Amount are the requirements paid.
	Network string
	Asset   string
	PayTo   string
	Amount  money.Atomic
	// Payer is the paying wallet (the transfer's authority).
	Payer string
	// Payload and Requirements are the payment and its requirements as
	// JSON, so that the watch can ask the facilitator again.
	Payload      []byte
	Requirements []byte
	// LastValidBlockHeight bounds when the transaction can land: the
	// height at which its blockhash was seen valid, plus 150.
	LastValidBlockHeight uint64
	// Attempts counts the facilitator's settle calls.
	Attempts int
	// State is where the settlement is.
	State State
	// Signature is the transaction's signature once known.
	Signature string
	// Slot is where it landed, once confirmed.
	Slot uint64
	// ErrorReason is why it failed or needs review.
	ErrorReason string
	// Version is the compare-and-set counter.
	Version int64
	// CreatedAt and UpdatedAt say when it was claimed and last written.
	CreatedAt, UpdatedAt time.Time
}

// GrantState is a grant's state.
type GrantState string

// The grant states.
const (
	// GrantAvailable: the use is not spent.
	GrantAvailable GrantState = "AVAILABLE"
	// GrantConsumed: the use was spent; UsedBy says on what.
	GrantConsumed GrantState = "CONSUMED"
)

// Grant is what a settled payment buys: exactly one use of its resource,
// for the workspace and environment that bought it. It is not a plan
// entitlement: it lives in its own records, is never counted by the
// access evaluator, and is spent once, by the route that serves its kind.
type Grant struct {
	// ID is the grant's id (GrantPrefix).
	ID string
	// Scope is the workspace and environment it belongs to.
	Scope access.Scope
	// ResourceID and Kind are what one use is of.
	ResourceID string
	Kind       Kind
	// SettlementID is the payment that bought it.
	SettlementID string
	// State says whether the use was spent.
	State GrantState
	// UsedBy names what spent it ("sound_operation:snd_..."); "" while
	// available.
	UsedBy string
	// CreatedAt is when it was granted; ConsumedAt when it was spent.
	CreatedAt  time.Time
	ConsumedAt *time.Time
}

// Check is the newest verification of an environment's configuration:
// the cluster's network, the facilitator's support of exact on it with
// its fee payer, the mint and its decimals, payTo's token account, and
// the fee payer's funding. Requirements are answered only from a passing
// check of the current configuration.
type Check struct {
	// Environment is the environment checked.
	Environment access.Environment
	// ConfigHash identifies the configuration checked.
	ConfigHash string
	// Passed reports that every check passed; Reason names the first that
	// failed.
	Passed bool
	Reason string
	// Network is the cluster's CAIP-2 id; FeePayer the facilitator's fee
	// payer for it; TokenProgram the mint's program.
	Network      string
	FeePayer     string
	TokenProgram string
	// CheckedAt is when it ran.
	CheckedAt time.Time
}

// The reasons a check fails.
const (
	CheckClusterUnavailable     = "cluster_unavailable"
	CheckFacilitatorUnavailable = "facilitator_unavailable"
	CheckFacilitatorUnsupported = "facilitator_unsupported"
	CheckMintMissing            = "mint_missing"
	CheckDecimalsMismatch       = "decimals_mismatch"
	CheckPayToAccountMissing    = "pay_to_account_missing"
	CheckFeePayerUnfunded       = "fee_payer_unfunded"
)

// notVerified is the PROVIDER_UNAVAILABLE of an environment whose
// configuration no check has passed.
func notVerified(op string, c *Check) error {
	e := fault.E(op, fault.ProviderUnavailable, "The payment facilitator of this environment is not verified yet.").
		With("reason", "not_verified")
	if c != nil && c.Reason != "" {
		e = e.With("check", c.Reason)
	}
	return e
}
