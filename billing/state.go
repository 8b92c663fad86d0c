package billing

import (
	"github.com/creatormusic/platform/fsm"
)

// Machine names one of the package's state machines.
type Machine string

// The state machines of billing.
const (
	// MachineCheckout moves a checkout: open -> paid -> activated, or
	// open -> expired.
	MachineCheckout Machine = "checkout"
	// MachineSubscription moves a subscription from active to a final
	// state (canceled or unpaid).
	MachineSubscription Machine = "subscription"
)

// State is a checkout or subscription state.
type State string

// Checkout states.
const (
	// CheckoutOpen is a checkout whose hosted page awaits payment.
	CheckoutOpen State = "open"
	// CheckoutPaid is a checkout whose payment the provider confirmed; its
	// subscription is being activated in the same unit of work.
	CheckoutPaid State = "paid"
	// CheckoutActivated is a checkout whose subscription is active (final).
	CheckoutActivated State = "activated"
	// CheckoutExpired is a checkout the provider expired unpaid (final).
	CheckoutExpired State = "expired"
)

// Subscription states.
const (
	// SubscriptionActive is a paid subscription in its current period.
	SubscriptionActive State = "active"
	// SubscriptionCancelScheduled ends at its period end; nothing is refunded.
	SubscriptionCancelScheduled State = "cancel_scheduled"
	// SubscriptionPastDue failed its renewal payment; it falls back to the
	// free plan at period end unless the provider confirms payment.
	SubscriptionPastDue State = "past_due"
	// SubscriptionUnpaid ended unpaid (final): the workspace is back on free.
	SubscriptionUnpaid State = "unpaid"
	// SubscriptionCanceled ended by cancellation (final): the workspace is
	// back on free.
	SubscriptionCanceled State = "canceled"
)

// CheckoutStates lists the checkout states.
func CheckoutStates() []State {
	return []State{CheckoutOpen, CheckoutPaid, CheckoutActivated, CheckoutExpired}
}

// SubscriptionStates lists the subscription states.
func SubscriptionStates() []State {
	return []State{SubscriptionActive, SubscriptionCancelScheduled, SubscriptionPastDue, SubscriptionUnpaid, SubscriptionCanceled}
}

// Final reports whether no transition leaves s.
func (s State) Final() bool {
	return s == CheckoutActivated || s == CheckoutExpired || s == SubscriptionUnpaid || s == SubscriptionCanceled
}

// Event moves a state machine.
type Event string

// Events of the state machines.
const (
	// EventPaymentConfirmed: the provider confirmed the checkout's payment.
	EventPaymentConfirmed Event = "payment_confirmed"
	// EventActivated: the checkout's subscription was activated.
	EventActivated Event = "activated"
	// EventExpired: the provider expired the checkout unpaid.
	EventExpired Event = "expired"
	// EventCancelRequested: cancel at period end was accepted by the provider.
	EventCancelRequested Event = "cancel_requested"
	// EventResumed: the provider no longer cancels at period end.
	EventResumed Event = "resumed"
	// EventRenewed: the provider confirmed payment of the next period.
	EventRenewed Event = "renewed"
	// EventPaymentFailed: a renewal payment failed.
	EventPaymentFailed Event = "payment_failed"
	// EventPeriodEnded: the period ended without a paid renewal.
	EventPeriodEnded Event = "period_ended"
	// EventProviderCanceled: the provider ended the subscription.
	EventProviderCanceled Event = "provider_canceled"
)

// Rule is one allowed transition.
type Rule struct {
	Machine Machine `json:"machine"`
	From    State   `json:"from"`
	Event   Event   `json:"event"`
	To      State   `json:"to"`
}

// Transitions returns the transition table of both machines, as data (the
// architecture route serves it). It is built on each call, so callers can
// never change it.
func Transitions() []Rule {
	c, s := MachineCheckout, MachineSubscription
	return []Rule{
		{c, CheckoutOpen, EventPaymentConfirmed, CheckoutPaid},
		{c, CheckoutPaid, EventActivated, CheckoutActivated},
		{c, CheckoutOpen, EventExpired, CheckoutExpired},

		{s, SubscriptionActive, EventRenewed, SubscriptionActive},
		{s, SubscriptionActive, EventCancelRequested, SubscriptionCancelScheduled},
		{s, SubscriptionActive, EventPaymentFailed, SubscriptionPastDue},
		{s, SubscriptionActive, EventPeriodEnded, SubscriptionUnpaid},
		{s, SubscriptionActive, EventProviderCanceled, SubscriptionCanceled},
		{s, SubscriptionCancelScheduled, EventResumed, SubscriptionActive},
		{s, SubscriptionCancelScheduled, EventCancelRequested, SubscriptionCancelScheduled},
		{s, SubscriptionCancelScheduled, EventPeriodEnded, SubscriptionCanceled},
		{s, SubscriptionCancelScheduled, EventProviderCanceled, SubscriptionCanceled},
		{s, SubscriptionCancelScheduled, EventPaymentFailed, SubscriptionCancelScheduled},
		{s, SubscriptionPastDue, EventRenewed, SubscriptionActive},
		{s, SubscriptionPastDue, EventPaymentFailed, SubscriptionPastDue},
		{s, SubscriptionPastDue, EventCancelRequested, SubscriptionCancelScheduled},
		{s, SubscriptionPastDue, EventPeriodEnded, SubscriptionUnpaid},
		{s, SubscriptionPastDue, EventProviderCanceled, SubscriptionCanceled},
	}
}

// Table returns machine m's rows of Transitions as an fsm table.
func Table(m Machine) fsm.Table[State, Event] {
	var rows []fsm.Row[State, Event]
	for _, r := range Transitions() {
		if r.Machine == m {
			rows = append(rows, fsm.Row[State, Event]{From: r.From, Event: r.Event, To: r.To})
		}
	}
	return fsm.New("billing.Transition", "A "+string(m), rows)
}

// Transition returns the state event moves from to in machine m: the only
// way states move. INVALID_STATE_TRANSITION when the table has no such
// rule.
func Transition(m Machine, from State, e Event) (State, error) {
	return Table(m).Transition(from, e)
}
