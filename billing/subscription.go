package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/plan"
)

// WorkspaceSubscription is a paid plan of a workspace in one environment, activated
// by exactly one checkout.
type WorkspaceSubscription struct {
	ID         string
	Scope      Scope
	CheckoutID string
	Price      PriceSnapshot
	State      State
	// ProviderID and ProviderCustomerID are the provider's ids.
	ProviderID         string
	ProviderCustomerID string
	PeriodStart        time.Time
	PeriodEnd          time.Time
	CancelAtPeriodEnd  bool
	EndedAt            *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// CreditGrant is the credit grant of one subscription period.
type CreditGrant struct {
	ID             string
	Scope          Scope
	SubscriptionID string
	PeriodStart    time.Time
	PeriodEnd      time.Time
	Credits        uint64
	// Reference is the ledger movement's reference.
	Reference string
	CreatedAt time.Time
}

// InvoiceRecord is a provider invoice as billing keeps it.
type InvoiceRecord struct {
	Invoice
	Scope          Scope
	SubscriptionID string
}

// WebhookRecord is a verified webhook event kept with its payload.
type WebhookRecord struct {
	Environment access.Environment
	Event       WebhookEvent
	ReceivedAt  time.Time
}

// GrantRef is the ledger grant key of a subscription period: the movement's
// reference is "grant:" + GrantRef.
func GrantRef(subscriptionID string, periodStart time.Time) string {
	return fmt.Sprintf("subscription:%s:%s", subscriptionID, periodStart.UTC().Format(time.RFC3339))
}

// activate persists the provider-confirmed payment of checkout id and
// activates its subscription, in the caller's unit of work: the checkout
// moves open -> paid -> activated (compare-and-set), the subscription row is
// inserted once per checkout, the plan is assigned (live), the period's
// credits are granted once, and the audit entry, outbox event and renewal
// job are written. A checkout already activated is returned as it is.
func (s *Service) activate(ctx context.Context, st ActivateStore, plans plan.Store, id string, conf confirmed) (Checkout, error) {
	const op = "billing.activate"
	c, err := st.CheckoutGet(ctx, id)
	if err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	now := st.Now()
	if c.State == CheckoutOpen {
		to, err := Transition(MachineCheckout, c.State, EventPaymentConfirmed)
		if err != nil {
			return Checkout{}, err
		}
		next := c
		next.State, next.UpdatedAt, next.PaidAt = to, now, &now
		next.ProviderSubscriptionID, next.ProviderCustomerID = conf.session.SubscriptionID, conf.session.CustomerID
		ok, err := st.CheckoutUpdate(ctx, next, c.State)
		if err != nil {
			return Checkout{}, fault.Wrap(op, err)
		}
		if c, err = st.CheckoutGet(ctx, id); err != nil { // re-read: another writer may have won
			return Checkout{}, fault.Wrap(op, err)
		}
		_ = ok
	}
	if c.State != CheckoutPaid {
		return c, nil // activated (or expired) by another writer
	}
	sub := WorkspaceSubscription{ID: st.NewID("sub_"), Scope: c.Scope, CheckoutID: c.ID, Price: c.Price, State: SubscriptionActive,
		ProviderID: conf.sub.ID, ProviderCustomerID: conf.sub.CustomerID, PeriodStart: conf.sub.CurrentPeriodStart.UTC(),
		PeriodEnd: conf.sub.CurrentPeriodEnd.UTC(), CancelAtPeriodEnd: conf.sub.CancelAtPeriodEnd, CreatedAt: now, UpdatedAt: now}
	if sub.ProviderID == "" || !sub.PeriodEnd.After(sub.PeriodStart) {
		return Checkout{}, errorf(op, "provider subscription %q has no valid period", sub.ProviderID)
	}
	inserted, err := st.SubscriptionInsert(ctx, sub)
	if err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if !inserted {
		if sub, err = st.SubscriptionGetByCheckout(ctx, c.ID); err != nil {
			return Checkout{}, fault.Wrap(op, err)
		}
	}
	to, err := Transition(MachineCheckout, c.State, EventActivated)
	if err != nil {
		return Checkout{}, err
	}
	next := c
	next.State, next.SubscriptionID, next.UpdatedAt = to, sub.ID, now
	ok, err := st.CheckoutUpdate(ctx, next, c.State)
	if err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if !ok {
		return st.CheckoutGet(ctx, id)
	}
	// The plan, and so its entitlements, moves in the checkout's environment
	// only: a test-mode subscription gives the test environment the plan.
	if err := s.cfg.Plans.Assign(ctx, plans, sub.Scope.TenantID, sub.Scope.WorkspaceID, sub.Scope.Environment, sub.Price.PlanID); err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if err := s.grantPeriod(ctx, st, sub); err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if err := s.keepInvoices(ctx, st, sub, conf.invoices); err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if err := enqueueRenewal(ctx, st, sub); err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, nil, account.AuditEntry{TenantID: sub.Scope.TenantID, WorkspaceID: sub.Scope.WorkspaceID,
		Environment: sub.Scope.Environment, Action: ActionSubscriptionActivated, TargetType: TargetSubscription, TargetID: sub.ID,
		After: subscriptionAudit{Plan: sub.Price.PlanID, Environment: sub.Scope.Environment, CheckoutID: c.ID, Price: sub.Price,
			PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd}}); err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if err := emit(ctx, st, sub, EventSubscriptionActivated); err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	return next, nil
}

// subscriptionAudit is the after of a subscription's audit entries.
type subscriptionAudit struct {
	Plan        string             `json:"plan"`
	Environment access.Environment `json:"environment"`
	CheckoutID  string             `json:"checkoutId,omitempty"`
	Price       PriceSnapshot      `json:"price"`
	State       State              `json:"state,omitempty"`
	PeriodStart time.Time          `json:"periodStart"`
	PeriodEnd   time.Time          `json:"periodEnd"`
}

// emit writes a subscription's outbox event.
func emit(ctx context.Context, st outbox.Writer, sub WorkspaceSubscription, typ string) error {
	payload, err := json.Marshal(struct {
		SubscriptionID string        `json:"subscriptionId"`
		CheckoutID     string        `json:"checkoutId"`
		State          State         `json:"state"`
		Price          PriceSnapshot `json:"price"`
		PeriodStart    time.Time     `json:"periodStart"`
		PeriodEnd      time.Time     `json:"periodEnd"`
	}{sub.ID, sub.CheckoutID, sub.State, sub.Price, sub.PeriodStart, sub.PeriodEnd})
	if err != nil {
		return err
	}
	_, err = st.OutboxInsert(ctx, outbox.Event{TenantID: sub.Scope.TenantID, WorkspaceID: sub.Scope.WorkspaceID,
		Environment: string(sub.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: sub.ID,
		AggregateVersion: sub.UpdatedAt.UnixMicro(), Payload: payload})
	return err
}

// grantPeriod grants the snapshot's monthly credits for sub's current
// period to the workspace's credits ledger of sub's environment, once per
// (subscription, period start): the grant row and the ledger reference are
// both unique.
func (s *Service) grantPeriod(ctx context.Context, st PeriodWriter, sub WorkspaceSubscription) error {
	if sub.Price.MonthlyCredits == 0 {
		return nil
	}
	ref := GrantRef(sub.ID, sub.PeriodStart)
	inserted, err := st.CreditGrantInsert(ctx, CreditGrant{ID: st.NewID("cgr_"), Scope: sub.Scope, SubscriptionID: sub.ID,
		PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd, Credits: sub.Price.MonthlyCredits, Reference: "grant:" + ref,
		CreatedAt: st.Now()})
	if err != nil || !inserted {
		return err
	}
	_, _, err = s.cfg.Ledger.Grant(ctx, st, ledger.CreditsInput{
		Scope: ledger.Scope{TenantID: sub.Scope.TenantID, WorkspaceID: sub.Scope.WorkspaceID, Environment: sub.Scope.Environment},
		Ref:   ref, Amount: money.Atomic(sub.Price.MonthlyCredits)})
	return err
}

// keepInvoices stores the provider's invoices of sub.
func (s *Service) keepInvoices(ctx context.Context, st PeriodWriter, sub WorkspaceSubscription, invs []Invoice) error {
	for _, inv := range invs {
		if inv.SubscriptionID != "" && inv.SubscriptionID != sub.ProviderID {
			continue
		}
		if err := st.InvoiceUpsert(ctx, InvoiceRecord{Invoice: inv, Scope: sub.Scope, SubscriptionID: sub.ID}); err != nil {
			return err
		}
	}
	return nil
}

// Current returns the scope's subscription that is not final, or nil on a
// free workspace.
func (s *Service) Current(ctx context.Context, st SubscriptionReader, sc Scope) (*WorkspaceSubscription, error) {
	sub, err := st.SubscriptionCurrent(ctx, sc)
	switch {
	case fault.Is(err, fault.NotFound):
		return nil, nil
	case err != nil:
		return nil, fault.Wrap("billing.Current", err)
	}
	return &sub, nil
}

// History lists the principal scope's subscriptions, newest first, with ids
// below before.
func (s *Service) History(ctx context.Context, st SubscriptionReader, p *access.Principal, before string, limit int) ([]WorkspaceSubscription, error) {
	subs, err := st.SubscriptionList(ctx, ScopeOf(p), before, limit)
	if err != nil {
		return nil, fault.Wrap("billing.History", err)
	}
	return subs, nil
}

// Cancel asks the provider to cancel one of the principal scope's
// subscriptions at its period end, then records it (active or past_due ->
// cancel_scheduled) with an audit entry. Nothing is refunded. Cancelling
// again answers the scheduled subscription.
//
// Errors: NOT_FOUND; INVALID_STATE_TRANSITION for an ended subscription;
// PROVIDER_UNAVAILABLE or PROVIDER_TIMEOUT (nothing recorded).
func (s *Service) Cancel(ctx context.Context, run RunFunc[CancelStore], p *access.Principal, id, requestID string) (WorkspaceSubscription, error) {
	const op = "billing.Cancel"
	var sub WorkspaceSubscription
	err := run(ctx, func(st CancelStore) (err error) {
		sub, err = st.SubscriptionGet(ctx, id)
		if err == nil && sub.Scope != ScopeOf(p) {
			err = fault.E(op, fault.NotFound, "No such subscription.")
		}
		return err
	})
	if err != nil {
		return WorkspaceSubscription{}, fault.Wrap(op, err)
	}
	if sub.State == SubscriptionCancelScheduled {
		return sub, nil
	}
	if _, err := Transition(MachineSubscription, sub.State, EventCancelRequested); err != nil {
		return WorkspaceSubscription{}, err
	}
	prov, err := s.provider(op, sub.Scope.Environment)
	if err != nil {
		return WorkspaceSubscription{}, err
	}
	ps, err := call(ctx, s, op, func(ctx context.Context) (Subscription, error) { return prov.CancelAtPeriodEnd(ctx, sub.ProviderID) })
	if err != nil {
		return WorkspaceSubscription{}, err
	}
	var out WorkspaceSubscription
	err = run(ctx, func(st CancelStore) error {
		cur, err := st.SubscriptionGet(ctx, id)
		if err != nil {
			return err
		}
		if cur.State == SubscriptionCancelScheduled {
			out = cur
			return nil
		}
		to, err := Transition(MachineSubscription, cur.State, EventCancelRequested)
		if err != nil {
			return err
		}
		next := cur
		next.State, next.CancelAtPeriodEnd, next.UpdatedAt = to, true, st.Now()
		if !ps.CurrentPeriodEnd.IsZero() && ps.CurrentPeriodStart.Equal(cur.PeriodStart) {
			next.PeriodEnd = ps.CurrentPeriodEnd.UTC()
		}
		ok, err := st.SubscriptionUpdate(ctx, next, cur.State, cur.PeriodStart)
		if err != nil {
			return err
		}
		if !ok {
			return fault.E(op, fault.Conflict, "The subscription changed meanwhile; retry.")
		}
		if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionSubscriptionCancelScheduled, RequestID: requestID,
			TargetType: TargetSubscription, TargetID: cur.ID, Before: subscriptionAudit{Plan: cur.Price.PlanID, Environment: cur.Scope.Environment, Price: cur.Price, State: cur.State, PeriodStart: cur.PeriodStart, PeriodEnd: cur.PeriodEnd},
			After: subscriptionAudit{Plan: next.Price.PlanID, Environment: next.Scope.Environment, Price: next.Price, State: next.State, PeriodStart: next.PeriodStart, PeriodEnd: next.PeriodEnd}}); err != nil {
			return err
		}
		if err := emit(ctx, st, next, EventSubscriptionChanged); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err != nil {
		return WorkspaceSubscription{}, fault.Wrap(op, err)
	}
	return out, nil
}

// ActivateDirect is POST /api/v1/subscriptions: a paid plan is never
// activated directly (only a provider-confirmed checkout activates one),
// and the free plan is activated through onboarding. It always answers
// DIRECT_ACTIVATION_DISABLED.
func (s *Service) ActivateDirect(planID string) error {
	return fault.E("billing.ActivateDirect", fault.DirectActivationDisabled,
		"Paid plans are activated only by a checkout the payment provider confirmed; the free plan through onboarding.").
		With("planId", planID).With("next", "POST /api/v1/saas/checkout")
}

// Overview is the billing administration view of a workspace in one
// environment.
type Overview struct {
	// WorkspaceSubscription is the current subscription; nil on a free workspace.
	Subscription *WorkspaceSubscription
	// Plan is the workspace's current plan assignment in the environment.
	Plan     plan.Assignment
	Invoices []InvoiceRecord
	Grants   []CreditGrant
	// History lists the subscriptions, newest first.
	History []WorkspaceSubscription
}

// OverviewLimit bounds each list of the Overview.
const OverviewLimit = 50

// Overview reads the billing view of the principal's workspace and
// environment: subscription and its price snapshot, plan, invoices and
// credit grants.
func (s *Service) Overview(ctx context.Context, st OverviewReader, p *access.Principal) (Overview, error) {
	const op = "billing.Overview"
	sc := ScopeOf(p)
	var out Overview
	var err error
	if out.Subscription, err = s.Current(ctx, st, sc); err != nil {
		return Overview{}, err
	}
	if out.Plan, err = st.WorkspacePlanGet(ctx, sc.WorkspaceID, sc.Environment); err != nil {
		return Overview{}, fault.Wrap(op, err)
	}
	if out.Invoices, err = st.InvoiceList(ctx, sc, OverviewLimit); err != nil {
		return Overview{}, fault.Wrap(op, err)
	}
	if out.Grants, err = st.CreditGrantList(ctx, sc, OverviewLimit); err != nil {
		return Overview{}, fault.Wrap(op, err)
	}
	if out.History, err = st.SubscriptionList(ctx, sc, "", OverviewLimit); err != nil {
		return Overview{}, fault.Wrap(op, err)
	}
	return out, nil
}
