package swap

import (
	"github.com/creatormusic/platform/fsm"
)

// State is the state of a swap operation (spec, "States and transitions",
// Swap operation). It moves only through Transition over the Moves table;
// stores compare-and-set on the current state.
type State string

// The forward states, in order.
const (
	// StateCreated: the quote request is recorded, nothing is checked yet.
	StateCreated State = "CREATED"
	// StateValidated: the request passed validation (session, wallet,
	// policy, trusted tokens, network, slippage bounds, amount).
	StateValidated State = "VALIDATED"
	// StateQuoted: an executable quote is frozen under its quote hash.
	StateQuoted State = "QUOTED"
	// StateIntentCreated: the intent binds the quote, the fee recipient and
	// the prepared message under its intent hash.
	StateIntentCreated State = "INTENT_CREATED"
	// StateAwaitingSignature: the prepared transaction was handed to the
	// wallet for review and signature. From here a signed transaction may
	// exist that the platform has not seen.
	StateAwaitingSignature State = "AWAITING_SIGNATURE"
	// StateSigned: a signature of the intent's wallet over the prepared
	// message verified; the signature is bound to the intent.
	StateSigned State = "SIGNED"
	// StateSubmitted: the signed transaction was handed to the network, or
	// the send's outcome is unknown (SUBMISSION_UNCERTAIN). Not settlement.
	StateSubmitted State = "SUBMITTED"
	// StateConfirming: the chain reports the signature without error at
	// processed commitment or better.
	StateConfirming State = "CONFIRMING"
	// StateConfirmed: the transaction reached the commitment verification
	// reads at.
	StateConfirmed State = "CONFIRMED"
	// StateVerifying: the landed transaction's effects are being compared
	// with the intent (Verify).
	StateVerifying State = "VERIFYING"
	// StateVerified: every verification check passed.
	StateVerified State = "VERIFIED"
	// StateSettling: the one authoritative settlement is being written.
	StateSettling State = "SETTLING"
	// StateSettled: the settlement is written, exactly once.
	StateSettled State = "SETTLED"
	// StateReconciling: reconciliation compares quote, intent, transaction
	// and settlement (Reconcile).
	StateReconciling State = "RECONCILING"
	// StateReconciled: reconciliation recorded MATCH or DRIFT_DETECTED and
	// corrected nothing. Terminal but for a conflicting signature.
	StateReconciled State = "RECONCILED"
)

// The exceptional states.
const (
	// StateExpired: the quote or intent lapsed, or a signed transaction's
	// blockhash died, before anything was sent. Terminal but for a late
	// landing.
	StateExpired State = "EXPIRED"
	// StateRejected: a policy refused the quote or the intent
	// (INSUFFICIENT_BALANCE, INSUFFICIENT_NATIVE_RESERVE,
	// PRICE_IMPACT_EXCEEDED, ROUTE_UNAVAILABLE, SIMULATION_FAILED), or the
	// wallet declined to sign. Terminal but for a late landing.
	StateRejected State = "REJECTED"
	// StateCancelled: the owner cancelled before signing. Terminal but for
	// a late landing.
	StateCancelled State = "CANCELLED"
	// StateInvalid: the request failed validation, or a frozen record
	// failed its integrity or version checks, before anything was sent.
	// Terminal but for a late landing.
	StateInvalid State = "INVALID"
	// StateFailed: no executable quote could be had, or the transaction
	// failed on chain (meta.err) or can no longer land and was never found;
	// at most network fees moved. Terminal but for a late landing.
	StateFailed State = "FAILED"
	// StateRequiresReview: value may have moved in a way the intent does
	// not explain (a second signature, a mismatch, missing data after
	// finality, a settlement that cannot be written, a landing after the
	// operation closed). Nothing more is settled; a person decides outside
	// this table. Terminal.
	StateRequiresReview State = "REQUIRES_REVIEW"
)

// States lists every state: the forward order, then the exceptional ones.
func States() []State {
	return []State{
		StateCreated, StateValidated, StateQuoted, StateIntentCreated, StateAwaitingSignature, StateSigned,
		StateSubmitted, StateConfirming, StateConfirmed, StateVerifying, StateVerified, StateSettling,
		StateSettled, StateReconciling, StateReconciled,
		StateExpired, StateRejected, StateCancelled, StateInvalid, StateFailed, StateRequiresReview,
	}
}

// Terminal reports whether s is final for the normal flow: RECONCILED and
// the exceptional states. Their only exits are the documented ones to
// REQUIRES_REVIEW (see Moves).
func (s State) Terminal() bool {
	switch s {
	case StateReconciled, StateExpired, StateRejected, StateCancelled, StateInvalid, StateFailed, StateRequiresReview:
		return true
	}
	return false
}

// Bound reports whether a signature is bound to the operation's intent:
// SIGNED through RECONCILED. A second, different signature for a bound
// intent is EventConflictingSignature.
func (s State) Bound() bool {
	switch s {
	case StateSigned, StateSubmitted, StateConfirming, StateConfirmed, StateVerifying, StateVerified,
		StateSettling, StateSettled, StateReconciling, StateReconciled:
		return true
	}
	return false
}

// Event is what moves a swap operation.
type Event string

// The events.
const (
	// EventValidate: the request's inputs pass validation.
	EventValidate Event = "validate"
	// EventInvalidate: validation failed, or before anything was sent a
	// frozen record failed its checks (quote or intent hash, fee-policy or
	// registry version changed, the signed transaction's message is not
	// the prepared one).
	EventInvalidate Event = "invalidate"
	// EventQuote: an executable quote was built and frozen.
	EventQuote Event = "quote"
	// EventRefuse: a policy refused the quote or the intent (balance,
	// native reserve, price impact, route, simulation).
	EventRefuse Event = "refuse"
	// EventUnavailable: no quote or prepared transaction could be had from
	// a dependency (QUOTE_UNAVAILABLE, BALANCE_UNAVAILABLE,
	// PROVIDER_UNAVAILABLE).
	EventUnavailable Event = "unavailable"
	// EventCreateIntent: the intent checks passed and the intent hash is
	// bound.
	EventCreateIntent Event = "create_intent"
	// EventRequestSignature: the prepared transaction was handed to the
	// wallet.
	EventRequestSignature Event = "request_signature"
	// EventSign: a signature of the intent's wallet over the prepared
	// message verified.
	EventSign Event = "sign"
	// EventDecline: the owner reports that the wallet declined to sign.
	EventDecline Event = "decline"
	// EventCancel: the owner cancels the operation.
	EventCancel Event = "cancel"
	// EventExpire: the quote or intent lifetime passed (for SIGNED and
	// AWAITING_SIGNATURE, also the prepared blockhash) with nothing sent
	// and nothing found on chain.
	EventExpire Event = "expire"
	// EventSubmit: the signed transaction was handed to the network after
	// integrity and expiry were re-checked, or the send's outcome is
	// unknown; on SUBMITTED, the same signature again (a replay, or a
	// resend of the same bytes).
	EventSubmit Event = "submit"
	// EventConflictingSignature: a different signature, verified as the
	// wallet's, arrives for an intent already bound to one.
	EventConflictingSignature Event = "conflicting_signature"
	// EventLand: the chain reports the signature without error.
	EventLand Event = "land"
	// EventConfirm: the transaction reached the commitment verification
	// reads at.
	EventConfirm Event = "confirm"
	// EventFail: the transaction failed on chain (meta.err), or block
	// height passed the intent's lastValidBlockHeight with no transaction
	// found.
	EventFail Event = "fail"
	// EventVerify: verification starts on the confirmed transaction.
	EventVerify Event = "verify"
	// EventVerified: every verification check passed.
	EventVerified Event = "verified"
	// EventReview: a person must decide: a verification check failed,
	// data is missing after finality, the settlement cannot be written,
	// or reconciliation concluded REQUIRES_REVIEW (or FAILED after a
	// settlement).
	EventReview Event = "review"
	// EventSettle: settlement starts.
	EventSettle Event = "settle"
	// EventSettled: the one settlement was written.
	EventSettled Event = "settled"
	// EventReconcile: the reconciliation job takes the settled operation.
	EventReconcile Event = "reconcile"
	// EventConclude: reconciliation recorded MATCH or DRIFT_DETECTED.
	EventConclude Event = "conclude"
	// EventLateLanding: a transaction of the intent is found on chain
	// after the operation closed without a settlement.
	EventLateLanding Event = "late_landing"
)

// Events lists the events.
func Events() []Event {
	return []Event{EventValidate, EventInvalidate, EventQuote, EventRefuse, EventUnavailable, EventCreateIntent,
		EventRequestSignature, EventSign, EventDecline, EventCancel, EventExpire, EventSubmit,
		EventConflictingSignature, EventLand, EventConfirm, EventFail, EventVerify, EventVerified, EventReview,
		EventSettle, EventSettled, EventReconcile, EventConclude, EventLateLanding}
}

// Move is one allowed transition of the swap operation.
type Move = fsm.Row[State, Event]

// Moves returns the swap operation's transition table as data (the
// architecture route serves it), built on each call.
//
// The forward rows are the spec's. The spec leaves the other moves "not
// shown"; they are decided here as follows.
//
//   - Invalid: CREATED on a failed validation, and every state up to
//     SIGNED on a failed integrity or version check, go to INVALID. Nothing
//     has been sent, so nothing can have moved. A request from another
//     principal, or an intent request naming another wallet, is refused
//     with an error and moves nothing: no caller but the owner can end an
//     operation, and the owner may retry.
//   - Refused and unavailable: a policy refusal while quoting (VALIDATED)
//     or while binding the intent (QUOTED: balance and reserve are read
//     again) goes to REJECTED; a dependency that cannot answer goes to
//     FAILED. A retried quote is a new operation (spec: a new idempotency
//     key is a new logical request).
//   - Cancel: allowed from CREATED to AWAITING_SIGNATURE; never once a
//     signature is bound, since the signed transaction can still land.
//     Cancel on CANCELLED is a no-op.
//   - Expire: CREATED and VALIDATED (an abandoned or crashed quote),
//     QUOTED, INTENT_CREATED and AWAITING_SIGNATURE at the quote's (the
//     intent's) expiry, and SIGNED when the intent expired before the
//     send. For AWAITING_SIGNATURE and SIGNED the caller must also wait
//     for the prepared blockhash to die (block height past
//     lastValidBlockHeight) and find nothing on chain, because a wallet
//     can broadcast what it signed. Expire on EXPIRED is a no-op.
//   - Decline: AWAITING_SIGNATURE goes to REJECTED when the owner reports
//     the wallet declined. A signature that does not verify is refused
//     with SIGNATURE_REJECTED and moves nothing; the wallet may still sign.
//   - Submit: SIGNED goes to SUBMITTED whether the node accepted the
//     transaction or the send's outcome is uncertain (SUBMISSION_UNCERTAIN
//     is reported; the chain is inspected before any resend). The same
//     signature again on SUBMITTED is a no-op, so an uncertain send stays
//     SUBMITTED and a resend of the same bytes (which lands at most once)
//     changes nothing. A node's refusal at preflight also leaves it
//     SUBMITTED: a wallet may have broadcast the same bytes, so only the
//     chain, at expiry, says FAILED.
//   - Fail: SUBMITTED through VERIFYING go to FAILED on meta.err, or when
//     block height passed lastValidBlockHeight and no transaction was
//     found. Only network fees can have moved and nothing was settled.
//     From VERIFIED on, a failure is a contradiction of verification and
//     reaches review through reconciliation instead.
//   - Conflicting signature: every bound state (SIGNED through
//     RECONCILED) goes to REQUIRES_REVIEW on a second, different verified
//     signature for the intent (spec: "any submitted intent"), RECONCILED
//     included: a second value-moving transaction is news whenever it
//     comes. On REQUIRES_REVIEW it is a no-op.
//   - Review: CONFIRMED and VERIFYING (data missing after finality, or a
//     verification check failed), SETTLING (the settlement cannot be
//     written: value moved on chain, so never FAILED) and RECONCILING
//     (outcome REQUIRES_REVIEW, or FAILED after a settlement; see
//     Outcome.Event) go to REQUIRES_REVIEW.
//   - Late landing: EXPIRED, REJECTED, CANCELLED, INVALID and FAILED go to
//     REQUIRES_REVIEW when a transaction of the intent is found on chain
//     after all: the operation closed without a settlement while value
//     moved. It is their only exit. On REQUIRES_REVIEW it is a no-op.
//
// REQUIRES_REVIEW has no exit: a person's resolution is recorded outside
// this table.
func Moves() []Move {
	m := []Move{
		{From: StateCreated, Event: EventValidate, To: StateValidated},
		{From: StateValidated, Event: EventQuote, To: StateQuoted},
		{From: StateQuoted, Event: EventCreateIntent, To: StateIntentCreated},
		{From: StateIntentCreated, Event: EventRequestSignature, To: StateAwaitingSignature},
		{From: StateAwaitingSignature, Event: EventSign, To: StateSigned},
		{From: StateSigned, Event: EventSubmit, To: StateSubmitted},
		{From: StateSubmitted, Event: EventSubmit, To: StateSubmitted},
		{From: StateSubmitted, Event: EventLand, To: StateConfirming},
		{From: StateConfirming, Event: EventConfirm, To: StateConfirmed},
		{From: StateConfirmed, Event: EventVerify, To: StateVerifying},
		{From: StateVerifying, Event: EventVerified, To: StateVerified},
		{From: StateVerified, Event: EventSettle, To: StateSettling},
		{From: StateSettling, Event: EventSettled, To: StateSettled},
		{From: StateSettled, Event: EventReconcile, To: StateReconciling},
		{From: StateReconciling, Event: EventConclude, To: StateReconciled},

		{From: StateValidated, Event: EventRefuse, To: StateRejected},
		{From: StateQuoted, Event: EventRefuse, To: StateRejected},
		{From: StateAwaitingSignature, Event: EventDecline, To: StateRejected},
		{From: StateValidated, Event: EventUnavailable, To: StateFailed},
		{From: StateQuoted, Event: EventUnavailable, To: StateFailed},
	}
	for _, s := range []State{StateCreated, StateValidated, StateQuoted, StateIntentCreated, StateAwaitingSignature, StateSigned} {
		m = append(m, Move{From: s, Event: EventInvalidate, To: StateInvalid})
		m = append(m, Move{From: s, Event: EventExpire, To: StateExpired})
		if s != StateSigned {
			m = append(m, Move{From: s, Event: EventCancel, To: StateCancelled})
		}
	}
	for _, s := range []State{StateSubmitted, StateConfirming, StateConfirmed, StateVerifying} {
		m = append(m, Move{From: s, Event: EventFail, To: StateFailed})
	}
	for _, s := range []State{StateConfirmed, StateVerifying, StateSettling, StateReconciling} {
		m = append(m, Move{From: s, Event: EventReview, To: StateRequiresReview})
	}
	for _, s := range States() {
		if s.Bound() {
			m = append(m, Move{From: s, Event: EventConflictingSignature, To: StateRequiresReview})
		}
	}
	for _, s := range []State{StateExpired, StateRejected, StateCancelled, StateInvalid, StateFailed} {
		m = append(m, Move{From: s, Event: EventLateLanding, To: StateRequiresReview})
	}
	return append(m,
		Move{From: StateCancelled, Event: EventCancel, To: StateCancelled},
		Move{From: StateExpired, Event: EventExpire, To: StateExpired},
		Move{From: StateRequiresReview, Event: EventConflictingSignature, To: StateRequiresReview},
		Move{From: StateRequiresReview, Event: EventLateLanding, To: StateRequiresReview},
	)
}

// Transition returns the state event moves from to: the only way an
// operation's state moves. A result equal to from is a no-op the caller
// must not act on. INVALID_STATE_TRANSITION, with details from and event,
// when the table has no such move.
func Transition(from State, e Event) (State, error) {
	return fsm.New("swap.Transition", "A swap operation", Moves()).Transition(from, e)
}
