package intent

import (
	"slices"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
)

// State is an intent's business state. It moves only through Transit over
// the Transitions table, and stores compare-and-set on the intent's
// version.
type State string

// The business states (spec, "Transaction intent"; the swap operation's
// forward order, cut to what a payment intent needs).
const (
	// StateCreated: the economics are frozen and the unsigned transaction
	// is prepared; nothing is signed yet.
	StateCreated State = "CREATED"
	// StateSubmitted: a signature is recorded (and, when the client sent
	// it, the signed transaction, which a job relays). Not settlement.
	StateSubmitted State = "SUBMITTED"
	// StateConfirming: the chain reports the signature; its effects are
	// verified once it reaches confirmed.
	StateConfirming State = "CONFIRMING"
	// StateVerified: the landed transaction's effects match the frozen
	// economics; settlement waits for the purpose's threshold.
	StateVerified State = "VERIFIED"
	// StateSettled: the purpose's Settle hook ran (once), and the
	// reconciliation job was enqueued in the same unit of work.
	StateSettled State = "SETTLED"
	// StateReconciling: reconciliation compares the intent, the chain's
	// record and the settlement. An intent stays here while the chain
	// cannot be read (the job retries with back-off).
	StateReconciling State = "RECONCILING"
	// StateReconciled: reconciliation recorded its outcome (MATCH,
	// DRIFT_DETECTED or REQUIRES_REVIEW, Intent.ReconciliationOutcome) and
	// corrected nothing. Terminal.
	StateReconciled State = "RECONCILED"
	// StateExpired: the intent lapsed, or its transaction was dropped,
	// before any payment landed. Terminal.
	StateExpired State = "EXPIRED"
	// StateFailed: the transaction landed with an error, or the node
	// refused it for good (preflight, signature). Terminal.
	StateFailed State = "FAILED"
	// StateRequiresReview: a payment landed that does not match the
	// intent, or the intent got a second signature; nothing is credited
	// and a person decides. Terminal for the machine.
	StateRequiresReview State = "REQUIRES_REVIEW"
)

// States lists every business state in forward order, then the exceptional
// ones.
func States() []State {
	return []State{StateCreated, StateSubmitted, StateConfirming, StateVerified, StateSettled,
		StateReconciling, StateReconciled, StateExpired, StateFailed, StateRequiresReview}
}

// Terminal reports whether no event moves s any more.
func (s State) Terminal() bool {
	switch s {
	case StateReconciled, StateExpired, StateFailed, StateRequiresReview:
		return true
	}
	return false
}

// Pending reports whether s still waits for its payment: CREATED,
// SUBMITTED, CONFIRMING or VERIFIED, the states the watch and the sweep
// move from the chain's status. SETTLED and RECONCILING are not terminal
// but belong to the reconciliation job, which the sweep never runs.
func (s State) Pending() bool {
	switch s {
	case StateCreated, StateSubmitted, StateConfirming, StateVerified:
		return true
	}
	return false
}

// Event is what moves a business state.
type Event string

// The business events.
const (
	// EventSubmit records a signature: the client's submit, or a payment
	// found by the intent's reference (chain pay).
	EventSubmit Event = "submit"
	// EventLand: the chain reports the recorded signature without error.
	EventLand Event = "land"
	// EventVerify: effect verification matched every frozen item.
	EventVerify Event = "verify"
	// EventMismatch: the landed payment does not match the intent.
	EventMismatch Event = "mismatch"
	// EventSettle: the purpose's threshold is reached and Settle ran.
	EventSettle Event = "settle"
	// EventFail: the transaction failed on chain or was refused for good.
	EventFail Event = "fail"
	// EventExpire: the intent's lifetime passed, or its transaction can no
	// longer land, and no payment was found.
	EventExpire Event = "expire"
	// EventConflictingSignature: a second, different signature was
	// submitted for an intent already bound to one (spec: "submit with a
	// different signature ... REQUIRES_REVIEW").
	EventConflictingSignature Event = "conflicting_signature"
	// EventReconcile: the reconciliation job takes a settled intent.
	EventReconcile Event = "reconcile"
	// EventConclude: reconciliation compared everything and recorded its
	// outcome, whatever it is.
	EventConclude Event = "conclude"
)

// Transition is one row of a state table: event moves From to To.
type Transition = fsm.Row[State, Event]

// Transitions returns the business state table (a fresh copy; served as
// data by the architecture route).
func Transitions() []Transition {
	return []Transition{
		{From: StateCreated, Event: EventSubmit, To: StateSubmitted},
		{From: StateCreated, Event: EventExpire, To: StateExpired},
		{From: StateSubmitted, Event: EventLand, To: StateConfirming},
		{From: StateSubmitted, Event: EventFail, To: StateFailed},
		{From: StateSubmitted, Event: EventExpire, To: StateExpired},
		{From: StateSubmitted, Event: EventConflictingSignature, To: StateRequiresReview},
		{From: StateConfirming, Event: EventVerify, To: StateVerified},
		{From: StateConfirming, Event: EventMismatch, To: StateRequiresReview},
		{From: StateConfirming, Event: EventFail, To: StateFailed},
		{From: StateConfirming, Event: EventConflictingSignature, To: StateRequiresReview},
		{From: StateVerified, Event: EventSettle, To: StateSettled},
		{From: StateVerified, Event: EventConflictingSignature, To: StateRequiresReview},
		{From: StateSettled, Event: EventReconcile, To: StateReconciling},
		{From: StateReconciling, Event: EventConclude, To: StateReconciled},
	}
}

// Transit returns the state event moves from to. It fails with
// INVALID_STATE_TRANSITION when the table has no such row.
func Transit(from State, ev Event) (State, error) {
	if to, err := fsm.New("intent.Transit", "An intent", Transitions()).Transition(from, ev); err == nil {
		return to, nil
	}
	return from, fault.E("intent.Transit", fault.InvalidState, "the intent cannot take this step in its current state").
		With("state", string(from)).With("event", string(ev))
}

// NetworkState is how far the chain has taken an intent's transaction: the
// intent's copy of its relay.Submission's state (the same names, the same
// table). It only moves forward: unsent < submitted < processed <
// confirmed < finalized; failed and dropped are terminal.
type NetworkState string

// The network states (relay.States).
const (
	// NetworkUnsent: no signature is known yet.
	NetworkUnsent = NetworkState(relay.Unsent)
	// NetworkSubmitted: a signature is known; the chain has not reported it.
	NetworkSubmitted = NetworkState(relay.Submitted)
	// NetworkProcessed: a node's heaviest bank holds it; it may be skipped.
	NetworkProcessed = NetworkState(relay.Processed)
	// NetworkConfirmed: optimistically confirmed by a supermajority.
	NetworkConfirmed = NetworkState(relay.Confirmed)
	// NetworkFinalized: rooted by a supermajority.
	NetworkFinalized = NetworkState(relay.Finalized)
	// NetworkFailed: it landed with an error, or a node refused it for good.
	NetworkFailed = NetworkState(relay.Failed)
	// NetworkDropped: it never landed and its blockhash has expired.
	NetworkDropped = NetworkState(relay.Dropped)
)

// NetworkStates lists the network states in order, then the terminal
// failures.
func NetworkStates() []NetworkState {
	var out []NetworkState
	for _, s := range relay.States() {
		out = append(out, NetworkState(s))
	}
	return out
}

// rank orders the forward network states as relay.States lists them;
// failed and dropped rank above everything, since nothing moves them.
func (n NetworkState) rank() int { return min(slices.Index(relay.States(), relay.State(n)), 5) }

// Terminal reports whether n is finalized, failed or dropped.
func (n NetworkState) Terminal() bool { return relay.State(n).Terminal() }

// AtLeast reports whether n has reached commitment c (processed,
// confirmed or finalized) without failing.
func (n NetworkState) AtLeast(c chain.Commitment) bool { return relay.State(n).AtLeast(c) }

// NetworkEvent is what moves a network state (relay.Event).
type NetworkEvent string

// The network events.
const (
	// NetworkEventSign: a signature became known (submit or reference).
	NetworkEventSign = NetworkEvent(relay.EventSign)
	// NetworkEventProcessed, NetworkEventConfirmed and
	// NetworkEventFinalized: a status observation at that level.
	NetworkEventProcessed = NetworkEvent(relay.EventProcessed)
	NetworkEventConfirmed = NetworkEvent(relay.EventConfirmed)
	NetworkEventFinalized = NetworkEvent(relay.EventFinalized)
	// NetworkEventFailed: the chain reports the transaction's error, or a
	// node refused it for good.
	NetworkEventFailed = NetworkEvent(relay.EventFailed)
	// NetworkEventDrop: no status, and the blockhash can no longer land.
	NetworkEventDrop = NetworkEvent(relay.EventDrop)
)

// NetworkTransition is one row of the network table.
type NetworkTransition = fsm.Row[NetworkState, NetworkEvent]

// NetworkTransitions returns the network state table: relay.Transitions,
// row for row. Every row moves forward; there is no row back, so a late or
// lagging observation finds no transition.
func NetworkTransitions() []NetworkTransition {
	var out []NetworkTransition
	for _, r := range relay.Transitions() {
		out = append(out, NetworkTransition{From: NetworkState(r.From), Event: NetworkEvent(r.Event), To: NetworkState(r.To)})
	}
	return out
}

// TransitNetwork returns the network state event moves from to
// (relay.Transit). It fails with INVALID_STATE_TRANSITION when the table
// has no such row (every backward move).
func TransitNetwork(from NetworkState, ev NetworkEvent) (NetworkState, error) {
	if to, err := relay.Transit(relay.State(from), relay.Event(ev)); err == nil {
		return NetworkState(to), nil
	}
	return from, fault.E("intent.TransitNetwork", fault.InvalidState, "the network state cannot move this way").
		With("state", string(from)).With("event", string(ev))
}

// Advance applies a chain observation to current (relay.Advance). It
// returns the next state and whether it moved; an observation at or below
// current (a lagging node, a stale job) or one the table does not allow
// leaves current unchanged and reports moved=false, never an error:
// observations are facts about some node, not commands.
func Advance(current, observed NetworkState) (next NetworkState, moved bool) {
	to, moved := relay.Advance(relay.State(current), relay.State(observed))
	return NetworkState(to), moved
}

// Observe maps a signature status to the network state it reports
// (relay.StateOf): failed when it carries an error, else its confirmation
// level. A nil status (unknown signature) reports NetworkSubmitted, which
// never advances a known signature.
func Observe(st *chain.SignatureStatus) NetworkState {
	return NetworkState(relay.StateOf(st))
}
