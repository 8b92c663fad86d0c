package billing

import (
	"context"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/plan"
)

// Jobs returns billing's job kinds, all of the money class: renewals at
// period ends, verified webhook events, and provider cancellations, which
// run after the commit that ended the subscription, never inside its
// transaction. Each runs its units of work through run, seen through the
// port of its path (RenewStore, EventStore, SubscriptionGetter).
func (s *Service) Jobs(run SettleRunFunc[EventStore]) []jobs.Kind {
	renew := narrowSettle(run, func(st EventStore) RenewStore { return st })
	get := func(ctx context.Context, fn func(st SubscriptionGetter) error) error {
		return run(ctx, func(st EventStore, _ plan.Store) error { return fn(st) })
	}
	return []jobs.Kind{
		{Name: JobRenewal, Class: jobs.ClassMoney, HandlerFunc: s.RenewalHandler(renew)},
		{Name: JobApplyEvent, Class: jobs.ClassMoney, HandlerFunc: s.ApplyHandler(run)},
		{Name: JobProviderCancel, Class: jobs.ClassMoney, HandlerFunc: s.ProviderCancelHandler(get)},
	}
}

// PlanGranter returns the granter of the plans' monthly grants
// (plan.CreditGranter, package plan's JobMonthlyGrant), one unit of work
// of run per grant.
//
// The rule is billing's, not plan's: a monthly grant is skipped while the
// workspace has a subscription in the grant's environment (test or live),
// because that subscription's credits come once per subscription period
// (its renewals), not also per calendar month. Package plan schedules and
// computes the grants and knows nothing of subscriptions; billing, which
// imports plan, owns both the subscriptions and this rule.
func (s *Service) PlanGranter(run RunFunc[GrantStore]) plan.CreditGranter {
	return planGranter{s: s, runFunc: run}
}

// planGranter books the plans' monthly grants; see PlanGranter.
type planGranter struct {
	s       *Service
	runFunc RunFunc[GrantStore]
}

// GrantCredits implements plan.CreditGranter: a grant on the credit ledger
// with reference "grant:" + g.Reference, booked once (a grant job that
// runs twice grants once), unless the workspace has a current
// subscription in g's environment.
func (p planGranter) GrantCredits(ctx context.Context, g plan.Grant) error {
	sc := Scope{TenantID: g.TenantID, WorkspaceID: g.WorkspaceID, Environment: g.Environment}
	return p.runFunc(ctx, func(st GrantStore) error {
		_, err := st.SubscriptionCurrent(ctx, sc)
		if err == nil {
			return nil
		}
		if !fault.Is(err, fault.NotFound) {
			return err
		}
		_, _, err = p.s.cfg.Ledger.Grant(ctx, st, ledger.CreditsInput{
			Scope: ledger.Scope{TenantID: g.TenantID, WorkspaceID: g.WorkspaceID, Environment: g.Environment},
			Ref:   g.Reference, Amount: money.Atomic(g.Credits)})
		return err
	})
}
