package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/policy"
)

// Scope is the tenant, workspace and environment a billing record belongs to.
type Scope struct {
	TenantID    string
	WorkspaceID string
	Environment access.Environment
}

// ScopeOf is the scope of a principal's requests.
func ScopeOf(p *access.Principal) Scope {
	return Scope{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: p.Environment}
}

// Store is the port billing runs on: its own rows, and the plan, ledger,
// audit, policy, inbox and job ports its unit of work also writes. Methods
// answer NOT_FOUND for a missing row. Updates compare-and-set on the state
// they read (the from argument) and report whether they applied.
type Store interface {
	plan.Store
	ledger.Store
	account.AuditWriter
	policy.Store
	outbox.Inbox

	// CheckoutInsert stores a new checkout.
	CheckoutInsert(ctx context.Context, c Checkout) error
	// CheckoutGet reads a checkout by id, in any scope.
	CheckoutGet(ctx context.Context, id string) (Checkout, error)
	// CheckoutGetBySession reads the checkout of a provider session.
	CheckoutGetBySession(ctx context.Context, env access.Environment, sessionID string) (Checkout, error)
	// CheckoutUpdate writes c's state, provider fields and subscription id
	// where the stored state is still from.
	CheckoutUpdate(ctx context.Context, c Checkout, from State) (bool, error)

	// SubscriptionInsert stores a subscription unless its checkout (or its
	// provider subscription) already has one; inserted reports which.
	SubscriptionInsert(ctx context.Context, s WorkspaceSubscription) (inserted bool, err error)
	// SubscriptionGet reads a subscription by id, in any scope.
	SubscriptionGet(ctx context.Context, id string) (WorkspaceSubscription, error)
	// SubscriptionGetByCheckout reads the subscription a checkout activated.
	SubscriptionGetByCheckout(ctx context.Context, checkoutID string) (WorkspaceSubscription, error)
	// SubscriptionGetByProvider reads a subscription by its provider id.
	SubscriptionGetByProvider(ctx context.Context, env access.Environment, providerID string) (WorkspaceSubscription, error)
	// SubscriptionCurrent reads the scope's newest subscription that is not
	// final; NOT_FOUND when there is none (a free workspace).
	SubscriptionCurrent(ctx context.Context, s Scope) (WorkspaceSubscription, error)
	// SubscriptionList lists the scope's subscriptions, newest first, with
	// ids below before ("" for the newest).
	SubscriptionList(ctx context.Context, s Scope, before string, limit int) ([]WorkspaceSubscription, error)
	// SubscriptionUpdate writes s's state, period and cancellation fields
	// where the stored state and period start are still from and fromStart.
	SubscriptionUpdate(ctx context.Context, s WorkspaceSubscription, from State, fromStart time.Time) (bool, error)

	// CreditGrantInsert records a subscription period's grant once per
	// (subscription, period start); inserted is false when it exists.
	CreditGrantInsert(ctx context.Context, g CreditGrant) (inserted bool, err error)
	// CreditGrantList lists the scope's grants, newest first.
	CreditGrantList(ctx context.Context, s Scope, limit int) ([]CreditGrant, error)
	// InvoiceUpsert stores or refreshes a provider invoice.
	InvoiceUpsert(ctx context.Context, inv InvoiceRecord) error
	// InvoiceList lists the scope's invoices, newest first.
	InvoiceList(ctx context.Context, s Scope, limit int) ([]InvoiceRecord, error)

	// WebhookEventInsert keeps a verified webhook's payload; inserted is
	// false when the event id was already kept.
	WebhookEventInsert(ctx context.Context, e WebhookRecord) (inserted bool, err error)
	// WebhookEventCount counts kept webhook events of an environment.
	WebhookEventCount(ctx context.Context, env access.Environment) (int, error)
}

// RunFunc runs fn as one unit of work (one transaction).
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// Providers are the payment provider accounts, one per environment. A nil
// provider means the environment has no account configured: its checkouts
// answer PROVIDER_UNAVAILABLE, never a fake success.
type Providers struct {
	// Test is the provider's test account (in tests and the example host,
	// the loopback simulator).
	Test PaymentProvider
	// Live is the provider's live account.
	Live PaymentProvider
}

// For returns the provider of env, or nil.
func (p Providers) For(env access.Environment) PaymentProvider {
	switch env {
	case access.Test:
		return p.Test
	case access.Live:
		return p.Live
	}
	return nil
}

// Config configures a Service.
type Config struct {
	// Plans assigns plans (entitlements) and reads the catalog. Required.
	Plans *plan.Service
	// Ledger books credit grants. Required.
	Ledger *ledger.Service
	// Providers are the payment provider accounts.
	Providers Providers
	// SuccessURL and CancelURL are where the hosted page sends the browser;
	// "{CHECKOUT_ID}" in them is replaced by the checkout id and
	// "{ENVIRONMENT}" by its environment. Required.
	SuccessURL string
	CancelURL  string
	// ProviderTimeout bounds one provider call. Zero means 10 seconds.
	ProviderTimeout time.Duration
}

// Service runs checkout, subscriptions, renewals, webhooks and the fee
// policy. It is safe for concurrent use.
type Service struct {
	cfg Config
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Plans == nil || cfg.Ledger == nil {
		return nil, errors.New("billing: Config.Plans and Config.Ledger are required")
	}
	if cfg.SuccessURL == "" || cfg.CancelURL == "" {
		return nil, errors.New("billing: Config.SuccessURL and Config.CancelURL are required")
	}
	if cfg.ProviderTimeout == 0 {
		cfg.ProviderTimeout = 10 * time.Second
	}
	return &Service{cfg: cfg}, nil
}

// Configured reports whether env has a provider account.
func (s *Service) Configured(env access.Environment) bool { return s.cfg.Providers.For(env) != nil }

// provider returns env's provider, or PROVIDER_UNAVAILABLE.
func (s *Service) provider(op string, env access.Environment) (PaymentProvider, error) {
	p := s.cfg.Providers.For(env)
	if p == nil {
		return nil, fault.E(op, fault.ProviderUnavailable, "No payment provider account is configured for this environment.").
			With("environment", string(env))
	}
	return p, nil
}

// call runs one provider call under the provider timeout and maps a
// deadline to PROVIDER_TIMEOUT and an uncoded failure to
// PROVIDER_UNAVAILABLE.
func call[T any](ctx context.Context, s *Service, op string, fn func(ctx context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	v, err := fn(ctx)
	if err == nil {
		return v, nil
	}
	var zero T
	switch {
	case fault.CodeOf(err) != fault.Internal:
		return zero, fault.Wrap(op, err)
	case errors.Is(err, context.DeadlineExceeded):
		return zero, &fault.Error{Op: op, Code: fault.ProviderTimeout, Message: "The payment provider did not answer in time.", Err: err}
	default:
		return zero, &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The payment provider is unavailable.", Err: err}
	}
}

// Outbox event types billing writes.
const (
	// EventSubscriptionActivated: a checkout's subscription became active.
	EventSubscriptionActivated = "billing.subscription.activated"
	// EventSubscriptionRenewed: a subscription started its next period.
	EventSubscriptionRenewed = "billing.subscription.renewed"
	// EventSubscriptionChanged: a subscription changed state (cancel
	// scheduled, past due, ended).
	EventSubscriptionChanged = "billing.subscription.changed"
)

// Audit actions of billing.
const (
	// ActionSubscriptionActivated: a subscription was activated. After: plan,
	// price snapshot, period.
	ActionSubscriptionActivated = "subscription.activated"
	// ActionSubscriptionCancelScheduled: cancel at period end was requested.
	ActionSubscriptionCancelScheduled = "subscription.cancel_scheduled"
	// ActionSubscriptionEnded: a subscription ended and the workspace fell
	// back to the free plan.
	ActionSubscriptionEnded = "subscription.ended"
	// ActionFeePolicyPublished: a marketplace fee policy version was
	// published. After: the policy reference.
	ActionFeePolicyPublished = "fee_policy.published"
	// TargetSubscription is a subscription (target id: its id).
	TargetSubscription = "subscription"
	// TargetPolicy is a policy (target id: the policy id).
	TargetPolicy = "policy"
)

func errorf(op string, format string, args ...any) error {
	return fault.Wrap(op, fmt.Errorf(format, args...))
}
