package billing

import (
	"context"
	"time"
)

// PaymentProvider is the port to the payment provider, in the shape of
// Stripe's Checkout Sessions API in subscription mode. The adapter in
// billing/stripepay implements it with stripe-go; billing/stripetest is a
// loopback simulator speaking the same wire protocol.
//
// Errors: PROVIDER_UNAVAILABLE when the provider cannot be reached, answers
// 5xx or is not configured for the environment; PROVIDER_TIMEOUT when it does
// not answer in time; NOT_FOUND for an unknown object; INVALID_INPUT for a
// request the provider rejects as malformed.
type PaymentProvider interface {
	// CreateCheckout opens a hosted checkout for one price snapshot. The
	// request's Reference is sent as the idempotency key and the client
	// reference, so a retried create returns the same session.
	CreateCheckout(ctx context.Context, r CheckoutRequest) (CheckoutSession, error)
	// GetCheckout reads a checkout session, expanded with its subscription.
	GetCheckout(ctx context.Context, id string) (CheckoutSession, error)
	// GetSubscription reads a subscription.
	GetSubscription(ctx context.Context, id string) (Subscription, error)
	// CancelAtPeriodEnd asks the provider to end the subscription when its
	// current period ends; nothing is refunded.
	CancelAtPeriodEnd(ctx context.Context, id string) (Subscription, error)
	// CancelNow ends the subscription at the provider immediately: no
	// proration, no refund, no final invoice, and the provider stops
	// collecting its open invoices' payments. Canceling an already canceled
	// subscription succeeds and returns it.
	CancelNow(ctx context.Context, id string) (Subscription, error)
	// ListInvoices lists a subscription's invoices, newest first.
	ListInvoices(ctx context.Context, subscriptionID string) ([]Invoice, error)
	// VerifyWebhook checks a webhook's signature header over its raw payload
	// within the tolerance window and returns the event.
	VerifyWebhook(payload []byte, signatureHeader string) (WebhookEvent, error)
}

// CheckoutRequest opens a checkout for one immutable price snapshot.
type CheckoutRequest struct {
	// Reference is the platform's checkout id: the provider's idempotency
	// key and client reference.
	Reference     string
	CustomerEmail string
	// ProductName, Currency (ISO 4217, lower case as the provider uses it),
	// UnitAmount (minor units) and Interval (month or year) describe the
	// price snapshot; the provider charges exactly this.
	ProductName string
	Currency    string
	UnitAmount  int64
	Interval    string
	SuccessURL  string
	CancelURL   string
	Metadata    map[string]string
}

// CheckoutSession is the provider's view of a checkout.
type CheckoutSession struct {
	ID string
	// URL is the hosted payment page.
	URL string
	// Status is open, complete or expired.
	Status string
	// PaymentStatus is paid, unpaid or no_payment_required.
	PaymentStatus   string
	ClientReference string
	CustomerID      string
	SubscriptionID  string
	AmountTotal     int64
	Currency        string
	// Subscription is filled when the session has one and it was expanded.
	Subscription *Subscription
}

// Subscription is the provider's view of a subscription.
type Subscription struct {
	ID         string
	CustomerID string
	// Status is the provider's: active, trialing, past_due, unpaid,
	// canceled, incomplete, incomplete_expired or paused.
	Status             string
	CurrentPeriodStart time.Time
	CurrentPeriodEnd   time.Time
	CancelAtPeriodEnd  bool
	LatestInvoiceID    string
}

// Invoice is one invoice of a subscription.
type Invoice struct {
	ID             string
	SubscriptionID string
	// Status is draft, open, paid, uncollectible or void.
	Status        string
	BillingReason string
	AmountDue     int64
	AmountPaid    int64
	Currency      string
	PeriodStart   time.Time
	PeriodEnd     time.Time
	Created       time.Time
}

// WebhookEvent is a verified webhook event.
type WebhookEvent struct {
	ID      string
	Type    string
	Created time.Time
	// ObjectID is the id of the event's data object (a checkout session,
	// subscription or invoice).
	ObjectID string
	// Payload is the raw event JSON, kept in the inbox.
	Payload []byte
}
