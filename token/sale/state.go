package sale

import (
	"github.com/creatormusic/platform/fsm"
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
type Move = fsm.Row[Status, Event]

// Moves returns the sale state table (a fresh copy on each call). The spec
// lists the states but not the transitions: this is the package's table.
// The forward path runs DRAFT to RECONCILED; PLANNED joins it before
// VERIFIED (a plan becomes a sale only through a verification run);
// failures refund; OPEN pauses and resumes; pre-open states cancel; any
// non-final state may be flagged for review.
func Moves() []Move {
	m := []Move{
		{From: StatusDraft, Event: EventPlan, To: StatusPlanned},
		{From: StatusDraft, Event: EventEvaluateProviders, To: StatusProviderEvaluation},
		{From: StatusPlanned, Event: EventEvaluateProviders, To: StatusProviderEvaluation},
		{From: StatusProviderEvaluation, Event: EventApprovePolicy, To: StatusPolicyApproved},
		{From: StatusPolicyApproved, Event: EventFundInventory, To: StatusInventoryFunded},
		{From: StatusInventoryFunded, Event: EventConfigure, To: StatusConfigured},
		{From: StatusConfigured, Event: EventReviewSecurity, To: StatusSecurityReview},
		{From: StatusSecurityReview, Event: EventVerify, To: StatusVerified},
		{From: StatusPlanned, Event: EventVerify, To: StatusVerified},
		{From: StatusVerified, Event: EventAnnounce, To: StatusAnnounced},
		{From: StatusAnnounced, Event: EventOpen, To: StatusOpen},
		{From: StatusAnnounced, Event: EventClose, To: StatusClosed},
		{From: StatusOpen, Event: EventClose, To: StatusClosed},
		{From: StatusClosed, Event: EventFinalize, To: StatusFinalizing},
		{From: StatusFinalizing, Event: EventSucceed, To: StatusSuccess},
		{From: StatusFinalizing, Event: EventFail, To: StatusFailed},
		{From: StatusSuccess, Event: EventAllocate, To: StatusAllocated},
		{From: StatusAllocated, Event: EventEnableClaims, To: StatusClaimable},
		{From: StatusClaimable, Event: EventDistribute, To: StatusDistributing},
		{From: StatusDistributing, Event: EventBootstrapDex, To: StatusDexBootstrap},
		{From: StatusDexBootstrap, Event: EventVerifyLiquidity, To: StatusLiquidityVerified},
		{From: StatusLiquidityVerified, Event: EventRoute, To: StatusRoutable},
		{From: StatusRoutable, Event: EventReconcile, To: StatusReconciled},
		{From: StatusFailed, Event: EventEnableRefunds, To: StatusRefundable},
		{From: StatusRefundable, Event: EventRefund, To: StatusRefunding},
		{From: StatusRefunding, Event: EventCompleteRefunds, To: StatusRefunded},
		{From: StatusRefunded, Event: EventReconcile, To: StatusReconciled},
		{From: StatusOpen, Event: EventPause, To: StatusPaused},
		{From: StatusPaused, Event: EventResume, To: StatusOpen},
		{From: StatusPaused, Event: EventClose, To: StatusClosed},
	}
	for _, s := range []Status{StatusDraft, StatusPlanned, StatusProviderEvaluation, StatusPolicyApproved, StatusInventoryFunded,
		StatusConfigured, StatusSecurityReview, StatusVerified, StatusAnnounced, StatusPaused} {
		m = append(m, Move{From: s, Event: EventCancel, To: StatusCancelled})
	}
	for _, s := range Statuses() {
		if s != StatusReconciled && s != StatusCancelled && s != StatusRequiresReview {
			m = append(m, Move{From: s, Event: EventFlagReview, To: StatusRequiresReview})
		}
	}
	return m
}

// Transition returns where e moves from; INVALID_STATE_TRANSITION when the
// table has no such move.
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("sale.Transition", "A token sale", Moves()).Transition(from, e)
}
