package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/plan"
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
