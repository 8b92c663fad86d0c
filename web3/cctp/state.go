package cctp

import "github.com/creatormusic/platform/fsm"

// State is where a cross-chain transfer stands. It moves only through
// Transition over the Moves table; stores compare-and-set on the version.
type State string

// The states, forward order first.
const (
	// StateCreated: the transfer is pinned (amount, domains, recipient);
	// no burn has been verified. The platform claims nothing.
	StateCreated State = "CREATED"
	// StateSourceVerified: the burn's receipt was read from the source
	// chain and its DepositForBurn and MessageSent match the transfer.
	StateSourceVerified State = "SOURCE_VERIFIED"
	// StateAttestationPending: the attestation service indexed the burn's
	// message and has not attested it yet.
	StateAttestationPending State = "ATTESTATION_PENDING"
	// StateAttested: the platform fetched a complete attestation of the
	// burn's message, and its signatures verified against the configured
	// attesters.
	StateAttested State = "ATTESTED"
	// StateDestinationVerified: a mint of the attested message was read on
	// Solana: its nonce is used and the recipient received the amount
	// minus the fee executed.
	StateDestinationVerified State = "DESTINATION_VERIFIED"
	// StateCompleted: reconciliation read both sides again at finality
	// and everything matched. Terminal.
	StateCompleted State = "COMPLETED"
	// StateRequiresReview: a chain or the attestation service showed
	// something the transfer does not explain; a person decides outside
	// this table. Terminal.
	StateRequiresReview State = "REQUIRES_REVIEW"
)

// States lists every state, forward order first.
func States() []State {
	return []State{StateCreated, StateSourceVerified, StateAttestationPending, StateAttested, StateDestinationVerified,
		StateCompleted, StateRequiresReview}
}

// Terminal reports a state no request moves on from.
func (s State) Terminal() bool { return s == StateCompleted || s == StateRequiresReview }

// Event is what moves a transfer.
type Event string

// The events.
const (
	// EventVerifySource: the burn's receipt passed every source check.
	EventVerifySource Event = "verify_source"
	// EventAttestationPending: the attestation service answered pending.
	EventAttestationPending Event = "attestation_pending"
	// EventAttest: a complete attestation of the burn's message verified.
	EventAttest Event = "attest"
	// EventVerifyDestination: the mint passed every destination check.
	EventVerifyDestination Event = "verify_destination"
	// EventComplete: reconciliation matched both sides at finality.
	EventComplete Event = "complete"
	// EventReview: something the transfer does not explain was observed.
	EventReview Event = "review"
)

// Events lists the events.
func Events() []Event {
	return []Event{EventVerifySource, EventAttestationPending, EventAttest, EventVerifyDestination, EventComplete, EventReview}
}

// Move is one allowed transition of a transfer.
type Move = fsm.Row[State, Event]

// Moves returns the transfer's transition table as data, built on each
// call.
//
//   - CREATED moves only on a verified burn. A burn that fails a check is
//     refused (VERIFICATION_FAILED) and moves nothing: it is not this
//     transfer's burn, and nothing was claimed for it.
//   - The attestation is pending any number of times, then complete.
//   - The mint is verified only once the attestation is, since the
//     platform compares the mint with the message it fetched itself.
//   - Only reconciliation completes, and only from DESTINATION_VERIFIED.
//   - Review: every state from SOURCE_VERIFIED to DESTINATION_VERIFIED
//     goes to REQUIRES_REVIEW when a chain or the attestation service
//     contradicts what was verified (an attestation of another message,
//     signatures of unknown attesters, a mint that delivered another
//     amount, a nonce used with no mint to show for it, a burn gone at
//     reconciliation). REQUIRES_REVIEW has no exit; review on it is a
//     no-op.
func Moves() []Move {
	m := []Move{
		{From: StateCreated, Event: EventVerifySource, To: StateSourceVerified},
		{From: StateSourceVerified, Event: EventAttestationPending, To: StateAttestationPending},
		{From: StateAttestationPending, Event: EventAttestationPending, To: StateAttestationPending},
		{From: StateSourceVerified, Event: EventAttest, To: StateAttested},
		{From: StateAttestationPending, Event: EventAttest, To: StateAttested},
		{From: StateAttested, Event: EventVerifyDestination, To: StateDestinationVerified},
		{From: StateDestinationVerified, Event: EventComplete, To: StateCompleted},
	}
	for _, s := range []State{StateSourceVerified, StateAttestationPending, StateAttested, StateDestinationVerified} {
		m = append(m, Move{From: s, Event: EventReview, To: StateRequiresReview})
	}
	return append(m, Move{From: StateRequiresReview, Event: EventReview, To: StateRequiresReview})
}

// Transition returns the state e moves from to: the only way a transfer's
// state moves. A result equal to from is a no-op the caller must not act
// on. INVALID_STATE_TRANSITION, with details from and event, when the
// table has no such move.
func Transition(from State, e Event) (State, error) {
	return fsm.New("cctp.Transition", "A cross-chain transfer", Moves()).Transition(from, e)
}
