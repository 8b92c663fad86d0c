package marketplace

import (
	"slices"

	"github.com/creatormusic/platform/fsm"
)

// OrderState is a marketplace order's state (spec, States: Marketplace
// order). It moves only through OrderTransition over the OrderMoves table.
type OrderState string

// The order states: the spec's, in its order, then the exceptional ones.
const (
	// OrderCreated: the order and its snapshot exist, with the intent
	// that will pay it.
	OrderCreated OrderState = "CREATED"
	// OrderQuoteLocked: the price, the split and the terms are frozen in
	// the snapshot and in the intent's economics hash.
	OrderQuoteLocked OrderState = "QUOTE_LOCKED"
	// OrderPaymentPending: the prepared transaction waits for the buyer's
	// signature.
	OrderPaymentPending OrderState = "PAYMENT_PENDING"
	// OrderSubmitted: a signature is bound to the intent (submitted, or
	// found on the chain by the intent's reference).
	OrderSubmitted OrderState = "SUBMITTED"
	// OrderConfirming: the chain reports the transaction; its effects are
	// verified at confirmed.
	OrderConfirming OrderState = "CONFIRMING"
	// OrderPaid: every leg was verified on the chain and the financial
	// ledger entries are written.
	OrderPaid OrderState = "PAID"
	// OrderLicenseIssued: the buyer's license entitlement is issued.
	OrderLicenseIssued OrderState = "LICENSE_ISSUED"
	// OrderFulfilled: the license is delivered: the buyer's workspace may
	// download the asset's content. Terminal; never mutated, never
	// refunded.
	OrderFulfilled OrderState = "FULFILLED"
	// OrderExpired: the intent lapsed, or its transaction was dropped,
	// before any payment landed. Terminal.
	OrderExpired OrderState = "EXPIRED"
	// OrderFailed: the transaction failed on the chain or was refused for
	// good. Terminal.
	OrderFailed OrderState = "FAILED"
	// OrderRequiresReview: a payment landed that does not match the
	// order (or the intent got a second signature); nothing was issued
	// and a person decides. Terminal for the machine.
	OrderRequiresReview OrderState = "REQUIRES_REVIEW"
)

// OrderStates lists the states in the spec's order, then the exceptional
// ones.
func OrderStates() []OrderState {
	return []OrderState{OrderCreated, OrderQuoteLocked, OrderPaymentPending, OrderSubmitted, OrderConfirming, OrderPaid,
		OrderLicenseIssued, OrderFulfilled, OrderExpired, OrderFailed, OrderRequiresReview}
}

// path is the forward path, the spec's order.
func path() []OrderState { return OrderStates()[:8] }

// Settled reports whether s is PAID or past it: the settlement wrote its
// ledger entries, and nothing moves the order back.
func (s OrderState) Settled() bool {
	i := slices.Index(path(), s)
	return i >= slices.Index(path(), OrderPaid)
}

// OrderEvent is what moves an order.
type OrderEvent string

// The order events.
const (
	// OrderEventLockQuote: the snapshot and the intent's economics are
	// frozen.
	OrderEventLockQuote OrderEvent = "lock_quote"
	// OrderEventAwaitPayment: the prepared transaction is offered.
	OrderEventAwaitPayment OrderEvent = "await_payment"
	// OrderEventSubmit: a signature is bound to the intent.
	OrderEventSubmit OrderEvent = "submit"
	// OrderEventLand: the chain reports the transaction.
	OrderEventLand OrderEvent = "land"
	// OrderEventPay: verified settlement wrote the ledger entries.
	OrderEventPay OrderEvent = "pay"
	// OrderEventIssueLicense: the entitlement is issued.
	OrderEventIssueLicense OrderEvent = "issue_license"
	// OrderEventFulfill: the license is delivered.
	OrderEventFulfill OrderEvent = "fulfill"
	// OrderEventExpire: the intent expired.
	OrderEventExpire OrderEvent = "expire"
	// OrderEventFail: the intent failed.
	OrderEventFail OrderEvent = "fail"
	// OrderEventReview: the intent went to review.
	OrderEventReview OrderEvent = "review"
)

// OrderMove is one allowed transition of an order.
type OrderMove = fsm.Row[OrderState, OrderEvent]

// OrderMoves returns the order table as data, built on each call: the
// spec's states in its order, one step each, and the exceptional moves
// from the states a payment can still be pending in. Nothing leaves
// PAID, LICENSE_ISSUED or FULFILLED other than forward: a settled order
// is never expired, failed, reviewed, refunded or rewritten.
func OrderMoves() []OrderMove {
	return []OrderMove{
		{From: OrderCreated, Event: OrderEventLockQuote, To: OrderQuoteLocked},
		{From: OrderQuoteLocked, Event: OrderEventAwaitPayment, To: OrderPaymentPending},
		{From: OrderPaymentPending, Event: OrderEventSubmit, To: OrderSubmitted},
		{From: OrderSubmitted, Event: OrderEventLand, To: OrderConfirming},
		{From: OrderConfirming, Event: OrderEventPay, To: OrderPaid},
		{From: OrderPaid, Event: OrderEventIssueLicense, To: OrderLicenseIssued},
		{From: OrderLicenseIssued, Event: OrderEventFulfill, To: OrderFulfilled},
		{From: OrderPaymentPending, Event: OrderEventExpire, To: OrderExpired},
		{From: OrderSubmitted, Event: OrderEventExpire, To: OrderExpired},
		{From: OrderSubmitted, Event: OrderEventFail, To: OrderFailed},
		{From: OrderConfirming, Event: OrderEventFail, To: OrderFailed},
		{From: OrderSubmitted, Event: OrderEventReview, To: OrderRequiresReview},
		{From: OrderConfirming, Event: OrderEventReview, To: OrderRequiresReview},
	}
}

// OrderTransition returns the state e moves from to, or
// INVALID_STATE_TRANSITION (details from and event) when the table has no
// such move.
func OrderTransition(from OrderState, e OrderEvent) (OrderState, error) {
	return fsm.New("marketplace.OrderTransition", "An order", OrderMoves()).Transition(from, e)
}

// forward returns the events that take an order from from to to along
// the spec's path, one step each; ok is false when to is not ahead of
// from on the path.
func forward(from, to OrderState) (events []OrderEvent, ok bool) {
	p := path()
	i, j := slices.Index(p, from), slices.Index(p, to)
	if i < 0 || j <= i {
		return nil, false
	}
	for _, m := range OrderMoves() {
		k := slices.Index(p, m.From)
		if k >= i && k < j && p[k+1] == m.To {
			events = append(events, m.Event)
		}
	}
	return events, len(events) == j-i
}
