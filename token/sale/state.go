package sale

import (
	"fmt"
	"slices"

	"github.com/creatormusic/platform/fault"
)

// Status is a token sale's state: the spec's recommended domain states
// plus PLANNED, the planning status.
type Status string

// The sale states.
const (
	// StatusPlanned is a sale being planned: its values are an envelope,
	// never funded, open or executable.
	StatusPlanned Status = "PLANNED"
	// StatusDraft is a sale being drafted.
	StatusDraft Status = "DRAFT"
	// StatusProviderEvaluation is a sale whose provider is being chosen.
	StatusProviderEvaluation Status = "PROVIDER_EVALUATION"
	// StatusPolicyApproved is a sale whose policy is approved.
	StatusPolicyApproved Status = "POLICY_APPROVED"
	// StatusInventoryFunded is a sale whose inventory account is funded.
	StatusInventoryFunded Status = "INVENTORY_FUNDED"
	// StatusConfigured is a sale whose contract is configured.
	StatusConfigured Status = "CONFIGURED"
	// StatusSecurityReview is a sale under security review.
	StatusSecurityReview Status = "SECURITY_REVIEW"
	// StatusVerified is a sale a verification run proved on chain.
	StatusVerified Status = "VERIFIED"
	// StatusAnnounced is a verified sale announced ahead of its window.
	StatusAnnounced Status = "ANNOUNCED"
	// StatusOpen is a verified sale inside its window.
	StatusOpen Status = "OPEN"
	// StatusClosed is a sale past its window.
	StatusClosed Status = "CLOSED"
	// StatusFinalizing is a closed sale being finalized.
	StatusFinalizing Status = "FINALIZING"
	// StatusSuccess is a sale that met its conditions.
	StatusSuccess Status = "SUCCESS"
	// StatusFailed is a sale that did not meet its conditions.
	StatusFailed Status = "FAILED"
	// StatusAllocated is a successful sale whose allocations are computed.
	StatusAllocated Status = "ALLOCATED"
	// StatusClaimable is a sale whose allocations can be claimed.
	StatusClaimable Status = "CLAIMABLE"
	// StatusDistributing is a sale distributing its allocations.
	StatusDistributing Status = "DISTRIBUTING"
	// StatusDexBootstrap is a sale bootstrapping its DEX liquidity.
	StatusDexBootstrap Status = "DEX_BOOTSTRAP"
	// StatusLiquidityVerified is a sale whose pools were verified.
	StatusLiquidityVerified Status = "LIQUIDITY_VERIFIED"
	// StatusRoutable is a sale whose token is routable.
	StatusRoutable Status = "ROUTABLE"
	// StatusRefundable is a failed sale open for refunds.
	StatusRefundable Status = "REFUNDABLE"
	// StatusRefunding is a sale paying refunds.
	StatusRefunding Status = "REFUNDING"
	// StatusRefunded is a sale whose refunds are paid.
	StatusRefunded Status = "REFUNDED"
	// StatusReconciled is a sale whose movements are reconciled (final).
	StatusReconciled Status = "RECONCILED"
	// StatusPaused is a sale paused by policy.
	StatusPaused Status = "PAUSED"
	// StatusCancelled is a sale cancelled before it opened (final).
	StatusCancelled Status = "CANCELLED"
	// StatusRequiresReview is a sale a person must review.
	StatusRequiresReview Status = "REQUIRES_REVIEW"
)

// Statuses lists every state: the spec's recommended states in its order,
// then PLANNED.
func Statuses() []Status {
	return []Status{StatusDraft, StatusProviderEvaluation, StatusPolicyApproved, StatusInventoryFunded, StatusConfigured,
		StatusSecurityReview, StatusVerified, StatusAnnounced, StatusOpen, StatusClosed, StatusFinalizing, StatusSuccess,
		StatusFailed, StatusAllocated, StatusClaimable, StatusDistributing, StatusDexBootstrap, StatusLiquidityVerified,
		StatusRoutable, StatusRefundable, StatusRefunding, StatusRefunded, StatusReconciled, StatusPaused, StatusCancelled,
		StatusRequiresReview, StatusPlanned}
}

// Configurable reports whether configuration may set s: PLANNED, ANNOUNCED
// or OPEN. Every other state needs evidence the platform does not yet
// record.
func (s Status) Configurable() bool {
	return s == StatusPlanned || s == StatusAnnounced || s == StatusOpen
}

// Event moves a sale.
type Event string

// The events of the sale state table.
const (
	// EventPlan: the draft becomes a published plan.
	EventPlan Event = "plan"
	// EventEvaluateProviders: provider evaluation starts.
	EventEvaluateProviders Event = "evaluate_providers"
	// EventApprovePolicy: the sale policy is approved.
	EventApprovePolicy Event = "approve_policy"
	// EventFundInventory: the inventory account is funded.
	EventFundInventory Event = "fund_inventory"
	// EventConfigure: the sale contract is configured.
	EventConfigure Event = "configure"
	// EventReviewSecurity: the security review starts.
	EventReviewSecurity Event = "review_security"
	// EventVerify: a verification run allowed activation.
	EventVerify Event = "verify"
	// EventAnnounce: the verified sale is announced.
	EventAnnounce Event = "announce"
	// EventOpen: the sale's window opened.
	EventOpen Event = "open"
	// EventClose: the sale's window ended.
	EventClose Event = "close"
	// EventFinalize: finalization starts.
	EventFinalize Event = "finalize"
	// EventSucceed: the sale met its conditions.
	EventSucceed Event = "succeed"
	// EventFail: the sale did not meet its conditions.
	EventFail Event = "fail"
	// EventAllocate: allocations are computed.
	EventAllocate Event = "allocate"
	// EventEnableClaims: allocations become claimable.
	EventEnableClaims Event = "enable_claims"
	// EventDistribute: distribution starts.
	EventDistribute Event = "distribute"
	// EventBootstrapDex: DEX liquidity bootstrapping starts.
	EventBootstrapDex Event = "bootstrap_dex"
	// EventVerifyLiquidity: a run verified the pools.
	EventVerifyLiquidity Event = "verify_liquidity"
	// EventRoute: routes to the token are available.
	EventRoute Event = "route"
	// EventEnableRefunds: refunds become available.
	EventEnableRefunds Event = "enable_refunds"
	// EventRefund: refunds are being paid.
	EventRefund Event = "refund"
	// EventCompleteRefunds: every refund is paid.
	EventCompleteRefunds Event = "complete_refunds"
	// EventReconcile: movements are reconciled.
	EventReconcile Event = "reconcile"
	// EventPause: the sale is paused by policy.
	EventPause Event = "pause"
	// EventResume: a paused sale resumes.
	EventResume Event = "resume"
	// EventCancel: the sale is cancelled before it opened.
	EventCancel Event = "cancel"
	// EventFlagReview: a person must review the sale.
	EventFlagReview Event = "flag_review"
)

// Move is one allowed transition.
type Move struct {
	From  Status `json:"from"`
	Event Event  `json:"event"`
	To    Status `json:"to"`
}

// Moves returns the sale state table (a fresh copy on each call). The spec
// lists the states but not the transitions: this is the package's table.
// The forward path runs DRAFT to RECONCILED; PLANNED joins it before
// VERIFIED (a plan becomes a sale only through a verification run);
// failures refund; OPEN pauses and resumes; pre-open states cancel; any
// non-final state may be flagged for review.
func Moves() []Move {
	m := []Move{
		{StatusDraft, EventPlan, StatusPlanned},
		{StatusDraft, EventEvaluateProviders, StatusProviderEvaluation},
		{StatusPlanned, EventEvaluateProviders, StatusProviderEvaluation},
		{StatusProviderEvaluation, EventApprovePolicy, StatusPolicyApproved},
		{StatusPolicyApproved, EventFundInventory, StatusInventoryFunded},
		{StatusInventoryFunded, EventConfigure, StatusConfigured},
		{StatusConfigured, EventReviewSecurity, StatusSecurityReview},
		{StatusSecurityReview, EventVerify, StatusVerified},
		{StatusPlanned, EventVerify, StatusVerified},
		{StatusVerified, EventAnnounce, StatusAnnounced},
		{StatusAnnounced, EventOpen, StatusOpen},
		{StatusAnnounced, EventClose, StatusClosed},
		{StatusOpen, EventClose, StatusClosed},
		{StatusClosed, EventFinalize, StatusFinalizing},
		{StatusFinalizing, EventSucceed, StatusSuccess},
		{StatusFinalizing, EventFail, StatusFailed},
		{StatusSuccess, EventAllocate, StatusAllocated},
		{StatusAllocated, EventEnableClaims, StatusClaimable},
		{StatusClaimable, EventDistribute, StatusDistributing},
		{StatusDistributing, EventBootstrapDex, StatusDexBootstrap},
		{StatusDexBootstrap, EventVerifyLiquidity, StatusLiquidityVerified},
		{StatusLiquidityVerified, EventRoute, StatusRoutable},
		{StatusRoutable, EventReconcile, StatusReconciled},
		{StatusFailed, EventEnableRefunds, StatusRefundable},
		{StatusRefundable, EventRefund, StatusRefunding},
		{StatusRefunding, EventCompleteRefunds, StatusRefunded},
		{StatusRefunded, EventReconcile, StatusReconciled},
		{StatusOpen, EventPause, StatusPaused},
		{StatusPaused, EventResume, StatusOpen},
		{StatusPaused, EventClose, StatusClosed},
	}
	for _, s := range []Status{StatusDraft, StatusPlanned, StatusProviderEvaluation, StatusPolicyApproved, StatusInventoryFunded,
		StatusConfigured, StatusSecurityReview, StatusVerified, StatusAnnounced, StatusPaused} {
		m = append(m, Move{s, EventCancel, StatusCancelled})
	}
	for _, s := range Statuses() {
		if s != StatusReconciled && s != StatusCancelled && s != StatusRequiresReview {
			m = append(m, Move{s, EventFlagReview, StatusRequiresReview})
		}
	}
	return m
}

// Transition returns where e moves from; INVALID_STATE_TRANSITION when the
// table has no such move.
func Transition(from Status, e Event) (Status, error) {
	moves := Moves()
	i := slices.IndexFunc(moves, func(m Move) bool { return m.From == from && m.Event == e })
	if i < 0 {
		return "", fault.E("sale.Transition", fault.InvalidState, fmt.Sprintf("A token sale cannot go from %s on %s.", from, e)).
			With("from", string(from)).With("event", string(e))
	}
	return moves[i].To, nil
}
