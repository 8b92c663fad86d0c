package rewards

import (
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
)

// Status is a challenge's lifecycle status (spec, States: Challenge). It
// moves only through Transition over the Moves table.
type Status string

// The challenge statuses, in the spec's order.
const (
	// StatusDraft: created, seen by its workspace only.
	StatusDraft Status = "DRAFT"
	// StatusScheduled: announced with its window; not open yet.
	StatusScheduled Status = "SCHEDULED"
	// StatusOpen: taking submissions.
	StatusOpen Status = "OPEN"
	// StatusSubmissionsClosed: no more submissions.
	StatusSubmissionsClosed Status = "SUBMISSIONS_CLOSED"
	// StatusReview: the submissions are reviewed.
	StatusReview Status = "REVIEW"
	// StatusVoting: the reviewed submissions are voted on.
	StatusVoting Status = "VOTING"
	// StatusWinnersSelected: the winners are chosen; rewards are
	// allocated from the pool in this status.
	StatusWinnersSelected Status = "WINNERS_SELECTED"
	// StatusRewardsAllocated: the allocation is done; claims go on.
	StatusRewardsAllocated Status = "REWARDS_ALLOCATED"
	// StatusCompleted: the challenge is over. Terminal.
	StatusCompleted Status = "COMPLETED"
)

// Statuses lists the challenge statuses in order.
func Statuses() []Status {
	return []Status{StatusDraft, StatusScheduled, StatusOpen, StatusSubmissionsClosed, StatusReview, StatusVoting,
		StatusWinnersSelected, StatusRewardsAllocated, StatusCompleted}
}

// Valid reports whether s is a challenge status.
func (s Status) Valid() bool { return slices.Contains(Statuses(), s) }

// Event is what moves a challenge: the status route names the status it
// asks for, so each event is named after the status it leads to.
type Event string

// EventFor returns the event asking for status to.
func EventFor(to Status) Event { return Event(to) }

// Move is one allowed transition of a challenge's status.
type Move = fsm.Row[Status, Event]

// Moves returns the challenge table as data, built on each call: each
// status moves to the next one and nowhere else.
func Moves() []Move {
	s := Statuses()
	out := make([]Move, 0, len(s)-1)
	for i := 0; i+1 < len(s); i++ {
		out = append(out, Move{From: s[i], Event: EventFor(s[i+1]), To: s[i+1]})
	}
	return out
}

// MovePermission returns the permission the move into status to needs,
// reaching the challenge's project: announcing and opening a challenge
// (SCHEDULED, OPEN) publish it to the community, project.publish; running
// its rounds (SUBMISSIONS_CLOSED, REVIEW, VOTING), project.update;
// deciding who is paid and closing the books (WINNERS_SELECTED,
// REWARDS_ALLOCATED, COMPLETED), reward.allocate.
func MovePermission(to Status) access.Permission {
	switch to {
	case StatusScheduled, StatusOpen:
		return access.ProjectPublish
	case StatusWinnersSelected, StatusRewardsAllocated, StatusCompleted:
		return access.RewardAllocate
	}
	return access.ProjectUpdate
}

// Transition returns the status e moves from to, or
// INVALID_STATE_TRANSITION (details from and event) when the table has no
// such move.
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("rewards.Transition", "A challenge", Moves()).Transition(from, e)
}

// Funding is the funding status of a reward pool, and of each reward
// allocated from it (spec, States: Challenge, reward funding). It moves
// only through FundingTransition over the FundingMoves table.
type Funding string

// The funding statuses.
const (
	// FundingAnnounced: the pool's amount is published; nothing proves
	// the treasury covers it.
	FundingAnnounced Funding = "ANNOUNCED"
	// FundingReserved: the pool is committed but its coverage is not
	// proven at finalized commitment now: the balance covers it at
	// confirmed only (funds on their way), or a later reconciliation
	// found the treasury short after it was funded. Its rewards are not
	// claimable.
	FundingReserved Funding = "RESERVED"
	// FundingFunded: a funding reconciliation read the treasury's token
	// account at finalized commitment and the balance covers this pool
	// and every pool funded before it (slot and amount recorded).
	FundingFunded Funding = "FUNDED"
	// FundingClaimable: funded, with rewards allocated from it that their
	// creators may claim.
	FundingClaimable Funding = "CLAIMABLE"
	// FundingDistributed: the challenge's allocation is over and every
	// reward of the pool was paid and verified on chain. Terminal.
	FundingDistributed Funding = "DISTRIBUTED"
)

// Fundings lists the funding statuses in order.
func Fundings() []Funding {
	return []Funding{FundingAnnounced, FundingReserved, FundingFunded, FundingClaimable, FundingDistributed}
}

// Covered reports whether f is a status whose coverage was proven at
// finalized by the latest reconciliation (FUNDED, CLAIMABLE or
// DISTRIBUTED).
func (f Funding) Covered() bool {
	return f == FundingFunded || f == FundingClaimable || f == FundingDistributed
}

// FundingEvent is what moves a pool's funding.
type FundingEvent string

// The funding events.
const (
	// FundingEventReserve: the balance covers the pool at confirmed only.
	FundingEventReserve FundingEvent = "reserve"
	// FundingEventLapse: a reserved pool is not covered at all now.
	FundingEventLapse FundingEvent = "lapse"
	// FundingEventFund: the balance covers the pool at finalized.
	FundingEventFund FundingEvent = "fund"
	// FundingEventOpenClaims: a reward was allocated from the funded pool.
	FundingEventOpenClaims FundingEvent = "open_claims"
	// FundingEventShortfall: a reconciliation found the treasury short
	// of what the pool still owes.
	FundingEventShortfall FundingEvent = "shortfall"
	// FundingEventDistribute: every reward of the pool was paid.
	FundingEventDistribute FundingEvent = "distribute"
)

// FundingMove is one allowed transition of a pool's funding.
type FundingMove = fsm.Row[Funding, FundingEvent]

// FundingMoves returns the funding table as data, built on each call.
func FundingMoves() []FundingMove {
	return []FundingMove{
		{From: FundingAnnounced, Event: FundingEventReserve, To: FundingReserved},
		{From: FundingAnnounced, Event: FundingEventFund, To: FundingFunded},
		{From: FundingReserved, Event: FundingEventLapse, To: FundingAnnounced},
		{From: FundingReserved, Event: FundingEventFund, To: FundingFunded},
		{From: FundingFunded, Event: FundingEventOpenClaims, To: FundingClaimable},
		{From: FundingFunded, Event: FundingEventShortfall, To: FundingReserved},
		{From: FundingClaimable, Event: FundingEventShortfall, To: FundingReserved},
		{From: FundingClaimable, Event: FundingEventDistribute, To: FundingDistributed},
	}
}

// FundingTransition returns the funding status e moves from to, or
// INVALID_STATE_TRANSITION.
func FundingTransition(from Funding, e FundingEvent) (Funding, error) {
	return fsm.New("rewards.FundingTransition", "A reward pool", FundingMoves()).Transition(from, e)
}

// State is a reward's claim state (spec, States: Reward claim). It moves
// only through RewardTransition over the RewardMoves table.
type State string

// The reward states.
const (
	// StateAllocated: allocated from a pool whose coverage is not proven
	// now; not claimable.
	StateAllocated State = "ALLOCATED"
	// StateClaimable: the pool's funding is verified; the recipient may
	// claim.
	StateClaimable State = "CLAIMABLE"
	// StateSubmitted: a claim created the payout's transaction intent,
	// signed by the treasury signer and handed to the relay. The claim
	// alone marks nothing claimed.
	StateSubmitted State = "SUBMITTED"
	// StateConfirmed: the payout reached finalized and its effect (the
	// recipient's account received exactly the amount) was verified.
	StateConfirmed State = "CONFIRMED"
	// StateDistributed: claimed and distributed: the ledger movements
	// are posted, once.
	StateDistributed State = "DISTRIBUTED"
	// StateReconciled: the payout's reconciliation read the chain again
	// and matched the settlement.
	StateReconciled State = "RECONCILED"
	// StateRequiresReview: a payout landed that does not match, or its
	// reconciliation did not match; a person decides. Nothing is paid
	// again.
	StateRequiresReview State = "REQUIRES_REVIEW"
)

// States lists the reward states in order.
func States() []State {
	return []State{StateAllocated, StateClaimable, StateSubmitted, StateConfirmed, StateDistributed, StateReconciled,
		StateRequiresReview}
}

// RewardEvent is what moves a reward.
type RewardEvent string

// The reward events.
const (
	// RewardEventFund: the pool's funding was verified.
	RewardEventFund RewardEvent = "fund"
	// RewardEventSuspend: the pool's coverage was lost before the claim.
	RewardEventSuspend RewardEvent = "suspend"
	// RewardEventClaim: the recipient claimed; the payout intent exists.
	RewardEventClaim RewardEvent = "claim"
	// RewardEventRelease: the payout intent failed or expired; the reward
	// is claimable again, with the same allocation.
	RewardEventRelease RewardEvent = "release"
	// RewardEventConfirm: the payout is finalized and verified.
	RewardEventConfirm RewardEvent = "confirm"
	// RewardEventDistribute: the ledger movements are posted.
	RewardEventDistribute RewardEvent = "distribute"
	// RewardEventReconcile: the payout's reconciliation matched.
	RewardEventReconcile RewardEvent = "reconcile"
	// RewardEventReview: a mismatch needs a person.
	RewardEventReview RewardEvent = "review"
)

// RewardMove is one allowed transition of a reward.
type RewardMove = fsm.Row[State, RewardEvent]

// RewardMoves returns the reward table as data, built on each call.
func RewardMoves() []RewardMove {
	return []RewardMove{
		{From: StateAllocated, Event: RewardEventFund, To: StateClaimable},
		{From: StateClaimable, Event: RewardEventSuspend, To: StateAllocated},
		{From: StateClaimable, Event: RewardEventClaim, To: StateSubmitted},
		{From: StateSubmitted, Event: RewardEventRelease, To: StateClaimable},
		{From: StateSubmitted, Event: RewardEventConfirm, To: StateConfirmed},
		{From: StateConfirmed, Event: RewardEventDistribute, To: StateDistributed},
		{From: StateDistributed, Event: RewardEventReconcile, To: StateReconciled},
		{From: StateSubmitted, Event: RewardEventReview, To: StateRequiresReview},
		{From: StateDistributed, Event: RewardEventReview, To: StateRequiresReview},
	}
}

// RewardTransition returns the state e moves from to, or
// INVALID_STATE_TRANSITION.
func RewardTransition(from State, e RewardEvent) (State, error) {
	return fsm.New("rewards.RewardTransition", "A reward", RewardMoves()).Transition(from, e)
}

// Paid reports whether s is DISTRIBUTED or after it: the ledger movements
// are posted and nothing pays the reward again.
func (s State) Paid() bool {
	return s == StateDistributed || s == StateReconciled || s == StateRequiresReview
}

// CreatorState is a reward as its creator sees it (spec, Reward claim:
// creator reward states).
type CreatorState string

// The creator reward states.
const (
	// CreatorEstimated and CreatorEligible are a creator's prospects
	// before any allocation (a leaderboard position, an accepted
	// submission). They create nothing claimable, so no reward record is
	// ever in them: a record exists only once allocated.
	CreatorEstimated CreatorState = "ESTIMATED"
	CreatorEligible  CreatorState = "ELIGIBLE"
	// CreatorAllocated: allocated, its funding not proven now.
	CreatorAllocated CreatorState = "ALLOCATED"
	// CreatorClaimable: the creator may claim.
	CreatorClaimable CreatorState = "CLAIMABLE"
	// CreatorSubmitted: the payout is on its way (or under review).
	CreatorSubmitted CreatorState = "SUBMITTED"
	// CreatorConfirmed: the payout is finalized and verified.
	CreatorConfirmed CreatorState = "CONFIRMED"
	// CreatorSettled: paid, and posted in the rewards ledger.
	CreatorSettled CreatorState = "SETTLED"
	// CreatorReconciled: the payout's reconciliation matched.
	CreatorReconciled CreatorState = "RECONCILED"
)

// CreatorStates lists the creator reward states in order.
func CreatorStates() []CreatorState {
	return []CreatorState{CreatorEstimated, CreatorEligible, CreatorAllocated, CreatorClaimable, CreatorSubmitted, CreatorConfirmed,
		CreatorSettled, CreatorReconciled}
}

// Creator returns the creator reward state of a reward in state s: the
// claim states by name, DISTRIBUTED as SETTLED, and REQUIRES_REVIEW as
// SUBMITTED (in flight: not settled for the creator until a person
// decides).
func (s State) Creator() CreatorState {
	switch s {
	case StateAllocated:
		return CreatorAllocated
	case StateClaimable:
		return CreatorClaimable
	case StateConfirmed:
		return CreatorConfirmed
	case StateDistributed:
		return CreatorSettled
	case StateReconciled:
		return CreatorReconciled
	}
	return CreatorSubmitted
}
