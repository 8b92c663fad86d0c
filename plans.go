package platform

import (
	"context"
	"fmt"

	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/store"
)

// ledgerGranter books the plans' monthly grants on the credit ledger, one
// unit of work per grant. The ledger books a reference once, so a grant job
// that runs twice grants once.
type ledgerGranter struct {
	db     *store.DB
	ledger *ledger.Service
}

var _ plan.CreditGranter = ledgerGranter{}

// GrantCredits implements plan.CreditGranter. The ledger reference is
// "grant:" + g.Reference. A grant is skipped while the workspace has a paid
// subscription in the grant's environment (test or live): that
// subscription's credits come once per subscription period (package
// billing), not also per calendar month.
func (l ledgerGranter) GrantCredits(ctx context.Context, g plan.Grant) error {
	return l.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.SubscriptionCurrent(ctx, billing.Scope{TenantID: g.TenantID, WorkspaceID: g.WorkspaceID, Environment: g.Environment})
		if err == nil {
			return nil
		}
		if !fault.Is(err, fault.NotFound) {
			return err
		}
		_, _, err = l.ledger.Grant(ctx, tx, ledger.CreditsInput{
			Scope: ledger.Scope{TenantID: g.TenantID, WorkspaceID: g.WorkspaceID, Environment: g.Environment},
			Ref:   g.Reference, Amount: money.Atomic(g.Credits),
		})
		return err
	})
}

// planHandlers are the job handlers of package plan.
func (p *Platform) planHandlers() map[string]jobs.Handler {
	run := store.Runner[plan.Store](p.db)
	return map[string]jobs.Handler{
		plan.JobScheduleGrants: p.plans.ScheduleHandler(run),
		plan.JobMonthlyGrant:   p.plans.GrantHandler(run, ledgerGranter{db: p.db, ledger: ledger.New()}),
	}
}

// startPlans keeps the plan service New built from the catalog and seeds
// the catalog (idempotent; every host does it on start).
func (p *Platform) startPlans(ctx context.Context, svc *plan.Service) error {
	p.plans = svc
	if err := p.db.InTx(ctx, func(tx *store.Tx) error { _, err := svc.Seed(ctx, tx); return err }); err != nil {
		return fmt.Errorf("platform: seed plans: %w", err)
	}
	return nil
}

// schedulePlanGrants enqueues the grant scheduler of this period and the
// next (once per period across every host).
func (p *Platform) schedulePlanGrants(ctx context.Context) error {
	if err := p.db.InTx(ctx, func(tx *store.Tx) error { return p.plans.EnsureSchedule(ctx, tx) }); err != nil {
		return fmt.Errorf("platform: schedule plan grants: %w", err)
	}
	return nil
}
