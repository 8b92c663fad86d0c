package e2e_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store/storetest"
	"github.com/creatormusic/platform/transport/api"
)

// TestPlanCatalog reads the public catalog without a credential: free, pro
// and studio with their monthly price versions, annual pricing unavailable.
func TestPlanCatalog(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/saas/plans"})
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=60" {
			t.Fatalf("Cache-Control = %q", cc)
		}
		var cat api.PlanCatalog
		r.Data(t, &cat)
		var ids []string
		for _, p := range cat.Plans {
			ids = append(ids, p.ID)
			if p.Annual.Available || p.Annual.Reason == nil || *p.Annual.Reason != plan.ReasonNoAnnualPrice {
				t.Fatalf("%s annual = %+v", p.ID, p.Annual)
			}
			if len(p.Prices) != 1 || p.Prices[0].Interval != "month" || p.Prices[0].Currency != "USD" ||
				p.Prices[0].Version != 1 || !p.Prices[0].Active || p.Prices[0].ID == "" {
				t.Fatalf("%s prices = %+v", p.ID, p.Prices)
			}
		}
		if !slices.Equal(ids, []string{"free", "pro", "studio"}) {
			t.Fatalf("plans = %v", ids)
		}
		free, pro, studio := cat.Plans[0], cat.Plans[1], cat.Plans[2]
		if free.MonthlyCredits != "50" || free.Prices[0].Amount != "0" || !slices.Equal(free.Entitlements, []string{"ai.basic"}) {
			t.Fatalf("free = %+v", free)
		}
		if pro.MonthlyCredits != "2000" || pro.Prices[0].Amount != "1900" || !slices.Contains(pro.Entitlements, "collaboration.enabled") ||
			slices.Contains(pro.Entitlements, "marketplace.sell") || !slices.Contains(studio.Entitlements, "marketplace.sell") {
			t.Fatalf("pro = %+v, studio = %+v", pro, studio)
		}
		// A key is accepted but changes nothing: the catalog is the same for everyone.
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/saas/plans", Key: s.Boot.TestKey}); r.Status != 200 {
			t.Fatalf("with a key: %d %s", r.Status, r.Body)
		}
	})
}

// TestWorkspaceStartsOnFreePlan checks the bootstrap workspace's free
// entitlements, its grant jobs (once per environment and period) and, run
// by the platform's own workers, the grants booked on the credit ledger.
func TestWorkspaceStartsOnFreePlan(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/saas/me", Key: s.Boot.TestKey})
		var me api.SaasMe
		r.Data(t, &me)
		if !slices.Equal(me.Entitlements, []string{"ai.basic"}) {
			t.Fatalf("saas/me entitlements = %v", me.Entitlements)
		}
		other := s.Bootstrap("Other")
		grantKeys := func() []string {
			t.Helper()
			recs, err := s.DB.Read().JobList(ctx, plan.JobMonthlyGrant, 100)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, j := range recs {
				keys = append(keys, j.UniqueKey)
			}
			slices.Sort(keys)
			return keys
		}
		want := []string{
			"plan-grant:" + s.Boot.WorkspaceID + ":live:2026-01", "plan-grant:" + s.Boot.WorkspaceID + ":test:2026-01",
			"plan-grant:" + other.WorkspaceID + ":live:2026-01", "plan-grant:" + other.WorkspaceID + ":test:2026-01",
		}
		slices.Sort(want)
		if got := grantKeys(); !slices.Equal(got, want) {
			t.Fatalf("grant jobs = %v, want %v", got, want)
		}
		sched, err := s.DB.Read().JobList(ctx, plan.JobScheduleGrants, 100)
		runAt := map[string]time.Time{}
		for _, j := range sched {
			runAt[j.UniqueKey] = j.RunAt
		}
		if err != nil || len(sched) != 2 || !runAt["plan.schedule_grants:2026-01"].Equal(storetest.Epoch) ||
			!runAt["plan.schedule_grants:2026-02"].Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("schedule jobs = %v, %v", runAt, err)
		}

		// The workers book the grants: 50 live credits (the free plan), 10,000 test credits.
		balance := func(env access.Environment) money.Sum {
			a, err := ledger.New().Balance(ctx, s.DB.Read(), ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID,
				Environment: env}, ledger.Credits, ledger.AccountWorkspaceCredits)
			if err != nil {
				return money.Sum{}
			}
			return a.Balance
		}
		deadline := time.Now().Add(20 * time.Second)
		for balance(access.Live).Cmp(money.SumOf(50)) != 0 || balance(access.Test).Cmp(money.SumOf(10_000)) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("grants not booked: live %v, test %v", balance(access.Live), balance(access.Test))
			}
			time.Sleep(20 * time.Millisecond)
		}

		// Next month: the scheduler enqueues every workspace's grants once.
		s.Clock.Set(time.Date(2026, 2, 1, 0, 0, 1, 0, time.UTC))
		deadline = time.Now().Add(20 * time.Second)
		for len(grantKeys()) < 8 {
			if time.Now().After(deadline) {
				t.Fatalf("February grants not enqueued: %v", grantKeys())
			}
			time.Sleep(20 * time.Millisecond)
		}
		feb := 0
		for _, k := range grantKeys() {
			if k[len(k)-7:] == "2026-02" {
				feb++
			}
		}
		if feb != 4 || len(grantKeys()) != 8 {
			t.Fatalf("grant jobs after February = %v", grantKeys())
		}
		for balance(access.Live).Cmp(money.SumOf(100)) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("February grant not booked: live %v", balance(access.Live))
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
