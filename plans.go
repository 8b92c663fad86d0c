package platform

import (
	"context"
	"fmt"

	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/store"
)

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
