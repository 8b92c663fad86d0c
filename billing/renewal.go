package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/plan"
)

// Job kinds of billing. The platform registers their handlers
// (Service.RenewalHandler, Service.ApplyHandler,
// Service.ProviderCancelHandler).
const (
	// JobRenewal handles a subscription's period end. Payload:
	// RenewalPayload. Unique key: "billing.renewal:<sub>:<periodEnd>".
	JobRenewal = "billing.renewal"
	// JobApplyEvent applies one verified webhook event. Payload:
	// ApplyPayload. Unique key: "billing.event:<environment>:<event id>".
	JobApplyEvent = "billing.apply_event"
	// JobProviderCancel ends at the provider a subscription the platform
	// ended while the provider still had it live. Payload:
	// ProviderCancelPayload. Unique key: "billing.provider_cancel:<sub>".
	JobProviderCancel = "billing.provider_cancel"
)

// RenewalMaxAttempts is the attempt budget of renewal and webhook jobs:
// with the pool's backoff capped at an hour, days of provider outage delay
// a renewal but do not drop it.
const RenewalMaxAttempts = 200

// RenewalPayload is the payload of a JobRenewal job.
type RenewalPayload struct {
	SubscriptionID string    `json:"subscriptionId"`
	PeriodEnd      time.Time `json:"periodEnd"`
}

// errNotRenewedYet makes a renewal job retry: the period ended but the
// provider has neither renewed nor ended the subscription yet.
var errNotRenewedYet = errors.New("the provider has not settled the renewal yet")

// enqueueRenewal schedules the period end of sub's current period, once.
func enqueueRenewal(ctx context.Context, st jobs.Enqueuer, sub WorkspaceSubscription) error {
	payload, err := json.Marshal(RenewalPayload{SubscriptionID: sub.ID, PeriodEnd: sub.PeriodEnd})
	if err != nil {
		return fmt.Errorf("billing: encode renewal payload: %w", err)
	}
	_, err = st.JobInsert(ctx, jobs.InsertParams{Kind: JobRenewal, Payload: payload, RunAt: sub.PeriodEnd,
		MaxAttempts: RenewalMaxAttempts, UniqueKey: JobRenewal + ":" + sub.ID + ":" + sub.PeriodEnd.UTC().Format(time.RFC3339)})
	return err
}

// RenewalHandler returns the handler of JobRenewal. At a period end it asks
// the provider for the subscription and its invoices: a renewal the
// provider confirms (active, a later period, its invoice paid) starts the
// next period and grants its credits once; a subscription cancelled at
// period end, or whose renewal was not paid, ends and the workspace falls
// back to the free plan (whose monthly grants continue through the plan
// jobs). A job for a period already handled does nothing, so a renewal
// processed twice grants once.
func (s *Service) RenewalHandler(run SettleRunFunc[RenewStore]) jobs.Handler {
	return func(ctx context.Context, job jobs.Job) error {
		var pl RenewalPayload
		if err := json.Unmarshal(job.Payload, &pl); err != nil {
			return fmt.Errorf("billing.renewal: decode payload: %w", err)
		}
		err := s.Sync(ctx, run, pl.SubscriptionID, &pl.PeriodEnd)
		if err != nil {
			return fmt.Errorf("billing.renewal %s: %w", pl.SubscriptionID, err)
		}
		return nil
	}
}

// Sync re-reads a subscription and its invoices from the provider and
// applies what the provider confirms. periodEnd, when set, is the period
// end a renewal job handles: a job for an already handled period does
// nothing, and once it has passed a subscription the provider neither
// renewed nor ended falls back to free if cancelled or unpaid.
func (s *Service) Sync(ctx context.Context, run SettleRunFunc[RenewStore], subscriptionID string, periodEnd *time.Time) error {
	const op = "billing.Sync"
	var sub WorkspaceSubscription
	if err := run(ctx, func(st RenewStore, _ plan.Store) (err error) {
		sub, err = st.SubscriptionGet(ctx, subscriptionID)
		return err
	}); err != nil {
		return fault.Wrap(op, err)
	}
	if sub.State.Final() || periodEnd != nil && !sub.PeriodEnd.Equal(periodEnd.UTC()) {
		return nil
	}
	prov, err := s.provider(op, sub.Scope.Environment)
	if err != nil {
		return err
	}
	ps, err := call(ctx, s, op, func(ctx context.Context) (Subscription, error) { return prov.GetSubscription(ctx, sub.ProviderID) })
	if err != nil {
		return err
	}
	invs, err := call(ctx, s, op, func(ctx context.Context) ([]Invoice, error) { return prov.ListInvoices(ctx, sub.ProviderID) })
	if err != nil {
		return err
	}
	return run(ctx, func(st RenewStore, plans plan.Store) error {
		return s.apply(ctx, st, plans, subscriptionID, ps, invs, periodEnd != nil)
	})
}

// paidFor reports whether an invoice of invs paid the period starting at start.
func paidFor(invs []Invoice, start time.Time) bool {
	for _, inv := range invs {
		if inv.Status == "paid" && inv.PeriodEnd.After(start) && !inv.PeriodStart.After(start) && inv.AmountPaid >= inv.AmountDue {
			return true
		}
		if inv.Status == "paid" && inv.PeriodStart.Equal(start) {
			return true
		}
	}
	return false
}

// apply moves one subscription to what the provider confirms, in one unit
// of work. atPeriodEnd says the caller is the period-end job.
func (s *Service) apply(ctx context.Context, st RenewStore, plans plan.Store, id string, ps Subscription, invs []Invoice, atPeriodEnd bool) error {
	const op = "billing.apply"
	cur, err := st.SubscriptionGet(ctx, id)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if cur.State.Final() {
		return nil
	}
	if err := s.keepInvoices(ctx, st, cur, invs); err != nil {
		return fault.Wrap(op, err)
	}
	now := st.Now()
	move := func(e Event, edit func(*WorkspaceSubscription)) (WorkspaceSubscription, error) {
		to, err := Transition(MachineSubscription, cur.State, e)
		if err != nil {
			return WorkspaceSubscription{}, err
		}
		next := cur
		next.State, next.UpdatedAt = to, now
		if edit != nil {
			edit(&next)
		}
		ok, err := st.SubscriptionUpdate(ctx, next, cur.State, cur.PeriodStart)
		if err != nil {
			return WorkspaceSubscription{}, fault.Wrap(op, err)
		}
		if !ok {
			return WorkspaceSubscription{}, fault.E(op, fault.Conflict, "The subscription changed meanwhile; retry.")
		}
		cur = next
		return next, nil
	}
	start, end := ps.CurrentPeriodStart.UTC(), ps.CurrentPeriodEnd.UTC()
	renewed := (ps.Status == "active" || ps.Status == "trialing") && !start.Before(cur.PeriodEnd) && end.After(start) && paidFor(invs, start)
	switch {
	case renewed:
		if cur.State == SubscriptionCancelScheduled {
			// The cancellation was undone at the provider before its renewal
			// reached us: the subscription is active again, then renewed.
			if _, err := move(EventResumed, func(n *WorkspaceSubscription) { n.CancelAtPeriodEnd = false }); err != nil {
				return err
			}
		}
		next, err := move(EventRenewed, func(n *WorkspaceSubscription) {
			n.PeriodStart, n.PeriodEnd, n.CancelAtPeriodEnd = start, end, ps.CancelAtPeriodEnd
		})
		if err != nil {
			return err
		}
		if err := s.grantPeriod(ctx, st, next); err != nil {
			return fault.Wrap(op, err)
		}
		if err := enqueueRenewal(ctx, st, next); err != nil {
			return fault.Wrap(op, err)
		}
		if next.CancelAtPeriodEnd {
			if _, err := move(EventCancelRequested, nil); err != nil {
				return err
			}
		}
		return emit(ctx, st, next, EventSubscriptionRenewed)
	case ps.Status == "canceled" || ps.Status == "incomplete_expired":
		if _, err := move(EventProviderCanceled, func(n *WorkspaceSubscription) { n.EndedAt = &now }); err != nil {
			return err
		}
		return s.fallBack(ctx, st, plans, cur, ps)
	}
	if ps.Status == "past_due" || ps.Status == "unpaid" {
		if cur.State == SubscriptionActive {
			if _, err := move(EventPaymentFailed, nil); err != nil {
				return err
			}
		}
	} else if ps.CancelAtPeriodEnd && cur.State != SubscriptionCancelScheduled {
		if _, err := move(EventCancelRequested, func(n *WorkspaceSubscription) { n.CancelAtPeriodEnd = true }); err != nil {
			return err
		}
	} else if !ps.CancelAtPeriodEnd && cur.State == SubscriptionCancelScheduled && ps.Status == "active" {
		if _, err := move(EventResumed, func(n *WorkspaceSubscription) { n.CancelAtPeriodEnd = false }); err != nil {
			return err
		}
	}
	if !atPeriodEnd || now.Before(cur.PeriodEnd) {
		return emit(ctx, st, cur, EventSubscriptionChanged)
	}
	// The period has ended without a confirmed renewal.
	switch {
	case cur.State == SubscriptionCancelScheduled || cur.State == SubscriptionPastDue || ps.Status == "past_due" || ps.Status == "unpaid":
		if _, err := move(EventPeriodEnded, func(n *WorkspaceSubscription) { n.EndedAt = &now }); err != nil {
			return err
		}
		return s.fallBack(ctx, st, plans, cur, ps)
	default:
		return errNotRenewedYet
	}
}

// fallBack puts the environment of an ended subscription back on the free
// plan (the other environment keeps its own), audits it and writes the
// outbox event. ps is the provider's view of the subscription: when the
// provider still keeps it live (see providerLive), a JobProviderCancel job
// is enqueued in the same unit of work, so that a later successful payment
// retry at the provider cannot charge a customer who no longer has the plan.
func (s *Service) fallBack(ctx context.Context, st PeriodWriter, plans plan.Store, sub WorkspaceSubscription, ps Subscription) error {
	const op = "billing.fallBack"
	if providerLive(ps) {
		if err := enqueueProviderCancel(ctx, st, sub); err != nil {
			return fault.Wrap(op, err)
		}
	}
	if err := s.cfg.Plans.Assign(ctx, plans, sub.Scope.TenantID, sub.Scope.WorkspaceID, sub.Scope.Environment, plan.FreeID); err != nil {
		return fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, nil, account.AuditEntry{TenantID: sub.Scope.TenantID, WorkspaceID: sub.Scope.WorkspaceID,
		Environment: sub.Scope.Environment, Action: ActionSubscriptionEnded, TargetType: TargetSubscription, TargetID: sub.ID,
		After: subscriptionAudit{Plan: plan.FreeID, Environment: sub.Scope.Environment, Price: sub.Price, State: sub.State,
			PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd}}); err != nil {
		return fault.Wrap(op, err)
	}
	return emit(ctx, st, sub, EventSubscriptionChanged)
}

// ProviderCancelPayload is the payload of a JobProviderCancel job.
type ProviderCancelPayload struct {
	SubscriptionID string `json:"subscriptionId"`
}

// providerLive reports whether the provider keeps ps live and could still
// collect a payment for it: it has not ended it (canceled,
// incomplete_expired) and will not end it by itself at the period end
// (cancel_at_period_end, which the provider applies on its own; canceling
// it again would only race the provider's ending).
func providerLive(ps Subscription) bool {
	switch ps.Status {
	case "canceled", "incomplete_expired", "":
		return false
	}
	return !ps.CancelAtPeriodEnd
}

// enqueueProviderCancel schedules, once per subscription, the cancellation
// at the provider of a subscription the platform has ended.
func enqueueProviderCancel(ctx context.Context, st jobs.Enqueuer, sub WorkspaceSubscription) error {
	payload, err := json.Marshal(ProviderCancelPayload{SubscriptionID: sub.ID})
	if err != nil {
		return fmt.Errorf("billing: encode provider cancel payload: %w", err)
	}
	_, err = st.JobInsert(ctx, jobs.InsertParams{Kind: JobProviderCancel, Payload: payload,
		MaxAttempts: RenewalMaxAttempts, UniqueKey: JobProviderCancel + ":" + sub.ID})
	return err
}

// ProviderCancelHandler returns the handler of JobProviderCancel. It ends
// the subscription at its environment's provider with CancelNow (no
// proration, no refund). The call runs outside any unit of work; a provider
// failure returns the error, so the job retries with the pool's backoff. A
// subscription the provider does not know (NOT_FOUND) or has already
// canceled counts as done. A subscription the platform has not ended is
// never canceled at the provider.
func (s *Service) ProviderCancelHandler(run RunFunc[SubscriptionGetter]) jobs.Handler {
	return func(ctx context.Context, job jobs.Job) error {
		var pl ProviderCancelPayload
		if err := json.Unmarshal(job.Payload, &pl); err != nil {
			return fmt.Errorf("billing.provider_cancel: decode payload: %w", err)
		}
		if err := s.CancelAtProvider(ctx, run, pl.SubscriptionID); err != nil {
			return fmt.Errorf("billing.provider_cancel %s: %w", pl.SubscriptionID, err)
		}
		return nil
	}
}

// CancelAtProvider ends an ended subscription at its environment's
// provider immediately. It does nothing for a subscription the platform has
// not ended, and treats NOT_FOUND from the provider as success.
func (s *Service) CancelAtProvider(ctx context.Context, run RunFunc[SubscriptionGetter], subscriptionID string) error {
	const op = "billing.CancelAtProvider"
	var sub WorkspaceSubscription
	if err := run(ctx, func(st SubscriptionGetter) (err error) {
		sub, err = st.SubscriptionGet(ctx, subscriptionID)
		return err
	}); err != nil {
		return fault.Wrap(op, err)
	}
	if !sub.State.Final() || sub.ProviderID == "" {
		return nil
	}
	prov, err := s.provider(op, sub.Scope.Environment)
	if err != nil {
		return err
	}
	_, err = call(ctx, s, op, func(ctx context.Context) (Subscription, error) { return prov.CancelNow(ctx, sub.ProviderID) })
	if fault.CodeOf(err) == fault.NotFound {
		return nil
	}
	return err
}
