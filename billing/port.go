package billing

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/policy"
)

// The ports below are cut by path (see the package doc). Methods answer
// NOT_FOUND for a missing row. Updates compare-and-set on the state they
// read (the from argument) and report whether they applied.

// RunFunc runs fn as one unit of work (one transaction), handing it the
// transaction as port P, and commits when fn returns nil.
type RunFunc[P any] func(ctx context.Context, fn func(st P) error) error

// SettleRunFunc runs fn as one unit of work that settles a subscription
// (activation, renewal, period end), handing it the same transaction as two
// ports: billing's port P and the plans' plan.Store, which assigns the
// workspace's plan. Together they are wider than one port may be, so they
// are passed separately rather than as one port that is both.
type SettleRunFunc[P any] func(ctx context.Context, fn func(st P, plans plan.Store) error) error

// narrowSettle hands run's units of work over as the narrower port Q (the
// plans' port unchanged).
func narrowSettle[Q, P any](run SettleRunFunc[P], as func(P) Q) SettleRunFunc[Q] {
	return func(ctx context.Context, fn func(st Q, plans plan.Store) error) error {
		return run(ctx, func(st P, plans plan.Store) error { return fn(as(st), plans) })
	}
}

// CheckoutPreparer is what Service.PrepareCheckout reads: the plan and its
// prices, the time and new ids.
type CheckoutPreparer interface {
	// Now is the unit of work's single timestamp.
	Now() time.Time
	// NewID returns a new identifier with prefix.
	NewID(prefix string) string
	// PlanGet reads one plan with its price versions.
	PlanGet(ctx context.Context, id string) (plan.Plan, error)
}

// CheckoutWriter is what Service.InsertCheckout writes.
type CheckoutWriter interface {
	// CheckoutInsert stores a new checkout.
	CheckoutInsert(ctx context.Context, c Checkout) error
}

// CheckoutStarter is Service.StartCheckout's port: a prepare and its
// insert on one store.
type CheckoutStarter interface {
	CheckoutPreparer
	CheckoutWriter
}

// CheckoutReader is what Service.GetCheckout reads.
type CheckoutReader interface {
	// CheckoutGet reads a checkout by id, in any scope.
	CheckoutGet(ctx context.Context, id string) (Checkout, error)
}

// SubscriptionGetter reads one subscription by id: the reads of
// Service.CancelAtProvider.
type SubscriptionGetter interface {
	// SubscriptionGet reads a subscription by id, in any scope.
	SubscriptionGet(ctx context.Context, id string) (WorkspaceSubscription, error)
}

// SubscriptionReader reads a scope's subscriptions: Service.Current and
// Service.History.
type SubscriptionReader interface {
	// SubscriptionCurrent reads the scope's newest subscription that is not
	// final; NOT_FOUND when there is none (a free workspace).
	SubscriptionCurrent(ctx context.Context, s Scope) (WorkspaceSubscription, error)
	// SubscriptionList lists the scope's subscriptions, newest first, with
	// ids below before ("" for the newest).
	SubscriptionList(ctx context.Context, s Scope, before string, limit int) ([]WorkspaceSubscription, error)
}

// OverviewReader is what Service.Overview reads: the scope's
// subscriptions, plan assignment, invoices and credit grants.
type OverviewReader interface {
	SubscriptionReader
	// WorkspacePlanGet reads a workspace's plan in env.
	WorkspacePlanGet(ctx context.Context, workspaceID string, env access.Environment) (plan.Assignment, error)
	// CreditGrantList lists the scope's grants, newest first.
	CreditGrantList(ctx context.Context, s Scope, limit int) ([]CreditGrant, error)
	// InvoiceList lists the scope's invoices, newest first.
	InvoiceList(ctx context.Context, s Scope, limit int) ([]InvoiceRecord, error)
}

// CancelStore is Service.Cancel's port: the subscription, its update, the
// audit entry and the outbox event.
type CancelStore interface {
	SubscriptionGetter
	account.AuditWriter
	outbox.Writer
	// SubscriptionUpdate writes s's state, period and cancellation fields
	// where the stored state and period start are still from and fromStart.
	SubscriptionUpdate(ctx context.Context, s WorkspaceSubscription, from State, fromStart time.Time) (bool, error)
}

// WebhookStore is Service.ReceiveWebhook's port: the inbox, the kept
// event and the job that applies it.
type WebhookStore interface {
	outbox.Inbox
	jobs.Enqueuer
	// Now is the unit of work's single timestamp.
	Now() time.Time
	// WebhookEventInsert keeps a verified webhook's payload; inserted is
	// false when the event id was already kept.
	WebhookEventInsert(ctx context.Context, e WebhookRecord) (inserted bool, err error)
}

// FeeStore is Service.PublishFees's port: the policy versions and the
// audit entry.
type FeeStore interface {
	policy.Store
	account.AuditWriter
}

// GrantStore is the port of the plans' monthly grants (Service.PlanGranter):
// whether the workspace has a subscription, and the credit ledger.
type GrantStore interface {
	ledger.Mover
	// SubscriptionCurrent reads the scope's newest subscription that is not
	// final; NOT_FOUND when there is none.
	SubscriptionCurrent(ctx context.Context, s Scope) (WorkspaceSubscription, error)
}

// PeriodWriter is what settling a subscription period writes, on every
// settlement path: the period's credit grant on the ledger, the provider's
// invoices, the next renewal or provider cancellation job, the audit entry
// and the outbox event.
type PeriodWriter interface {
	ledger.Mover
	account.AuditWriter
	jobs.Enqueuer
	// CreditGrantInsert records a subscription period's grant once per
	// (subscription, period start); inserted is false when it exists.
	CreditGrantInsert(ctx context.Context, g CreditGrant) (inserted bool, err error)
	// InvoiceUpsert stores or refreshes a provider invoice.
	InvoiceUpsert(ctx context.Context, inv InvoiceRecord) error
}

// ActivateStore is the port of a checkout's reconcile (Service.Reconcile):
// the checkout, expired or activated, and the subscription it activates.
// Activation also assigns the plan, through the plan.Store a SettleRunFunc
// hands beside it.
type ActivateStore interface {
	PeriodWriter
	CheckoutReader
	// CheckoutUpdate writes c's state, provider fields and subscription id
	// where the stored state is still from.
	CheckoutUpdate(ctx context.Context, c Checkout, from State) (bool, error)
	// SubscriptionInsert stores a subscription unless its checkout (or its
	// provider subscription) already has one; inserted reports which.
	SubscriptionInsert(ctx context.Context, s WorkspaceSubscription) (inserted bool, err error)
	// SubscriptionGetByCheckout reads the subscription a checkout activated.
	SubscriptionGetByCheckout(ctx context.Context, checkoutID string) (WorkspaceSubscription, error)
}

// RenewStore is the port of a subscription's sync with its provider
// (Service.Sync, the renewal job at a period end): the subscription's
// move, and its fallback to the free plan through the plan.Store a
// SettleRunFunc hands beside it.
type RenewStore interface {
	PeriodWriter
	SubscriptionGetter
	// SubscriptionUpdate writes s's state, period and cancellation fields
	// where the stored state and period start are still from and fromStart.
	SubscriptionUpdate(ctx context.Context, s WorkspaceSubscription, from State, fromStart time.Time) (bool, error)
}

// EventStore is the port of a verified webhook event's application
// (Service.ApplyEvent, and billing's jobs): it finds the event's checkout
// or subscription, then reconciles the one or syncs the other.
type EventStore interface {
	ActivateStore
	RenewStore
	// CheckoutGetBySession reads the checkout of a provider session.
	CheckoutGetBySession(ctx context.Context, env access.Environment, sessionID string) (Checkout, error)
	// SubscriptionGetByProvider reads a subscription by its provider id.
	SubscriptionGetByProvider(ctx context.Context, env access.Environment, providerID string) (WorkspaceSubscription, error)
}
