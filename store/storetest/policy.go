package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
)

// exercisePolicy covers the policy port: one version per content, versions
// appended in order, concurrent publishers converging, history pages.
func exercisePolicy(t *testing.T, open Opener) {
	ctx := context.Background()
	live := policy.Scope{Environment: access.Live}
	publish := func(t *testing.T, db *store.DB, s policy.Scope, content any) (v policy.Version, created bool) {
		t.Helper()
		err := db.InTx(ctx, func(tx *store.Tx) (err error) {
			v, created, err = policy.Publish(ctx, tx, s, "fees.marketplace", content, "usr_1")
			return err
		})
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		return v, created
	}

	t.Run("SameContentIsOneVersion", func(t *testing.T) {
		db, clock := fresh(t, open)
		v1, created := publish(t, db, live, map[string]any{"bps": 250, "capBps": 500})
		if !created || v1.Version != 1 || !v1.CreatedAt.Equal(Epoch) || v1.CreatedBy != "usr_1" {
			t.Fatalf("v1 = %+v, created %v", v1, created)
		}
		clock.Advance(time.Minute)
		again, created := publish(t, db, live, []byte(`{"capBps":500,  "bps":250}`))
		if created || again.Version != 1 || again.Hash != v1.Hash || !again.CreatedAt.Equal(Epoch) {
			t.Fatalf("republish = %+v, created %v", again, created)
		}
		v2, created := publish(t, db, live, map[string]any{"bps": 300, "capBps": 500})
		if !created || v2.Version != 2 || !v2.CreatedAt.Equal(Epoch.Add(time.Minute)) {
			t.Fatalf("v2 = %+v, created %v", v2, created)
		}
		got, err := policy.Get(ctx, db.Read(), live, "fees.marketplace", 1)
		if err != nil || got.Hash != v1.Hash || string(got.Content) != `{"bps":250,"capBps":500}` {
			t.Fatalf("get v1 = %+v, %v", got, err)
		}
		cur, err := policy.Current(ctx, db.Read(), live, "fees.marketplace")
		if err != nil || cur.Ref() != v2.Ref() {
			t.Fatalf("current = %+v, %v", cur, err)
		}
		// Scopes do not see each other.
		if _, err := policy.Current(ctx, db.Read(), policy.Scope{Environment: access.Test}, "fees.marketplace"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("test scope current = %v", err)
		}
		if _, err := policy.Current(ctx, db.Read(), policy.Scope{Environment: access.Live, TenantID: "ten_1"}, "fees.marketplace"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("tenant scope current = %v", err)
		}
		if _, err := policy.Get(ctx, db.Read(), live, "fees.marketplace", 3); !fault.Is(err, fault.NotFound) {
			t.Fatalf("get v3 = %v", err)
		}
	})

	t.Run("HistoryNewestFirst", func(t *testing.T) {
		db, clock := fresh(t, open)
		for i := range 5 {
			publish(t, db, live, map[string]any{"bps": 100 + i})
			clock.Advance(time.Second)
		}
		page, err := policy.History(ctx, db.Read(), live, "fees.marketplace", policy.HistoryParams{Limit: 3})
		if err != nil || len(page) != 3 || page[0].Version != 5 || page[2].Version != 3 {
			t.Fatalf("page 1 = %+v, %v", page, err)
		}
		page, err = policy.History(ctx, db.Read(), live, "fees.marketplace", policy.HistoryParams{Before: 3, Limit: 3})
		if err != nil || len(page) != 2 || page[0].Version != 2 || page[1].Version != 1 {
			t.Fatalf("page 2 = %+v, %v", page, err)
		}
	})

	t.Run("ConcurrentPublishesConverge", func(t *testing.T) {
		db, _ := fresh(t, open)
		const n = 8
		var wg sync.WaitGroup
		versions := make([]policy.Version, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				errs[i] = db.InTx(ctx, func(tx *store.Tx) (err error) {
					versions[i], _, err = policy.Publish(ctx, tx, live, "pricing.generation", map[string]any{"credits": 10}, fmt.Sprintf("usr_%d", i))
					return err
				})
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("publisher %d: %v", i, errs[i])
			}
			if versions[i].Version != 1 || versions[i].Hash != versions[0].Hash {
				t.Fatalf("publisher %d got %+v", i, versions[i])
			}
		}
		hist, err := policy.History(ctx, db.Read(), live, "pricing.generation", policy.HistoryParams{Limit: 10})
		if err != nil || len(hist) != 1 {
			t.Fatalf("history = %d versions, %v", len(hist), err)
		}
	})
}

// exercisePlans covers the plan port: catalog seeding, price versions and
// workspace assignment.
func exercisePlans(t *testing.T, open Opener) {
	ctx := context.Background()
	seed := func(t *testing.T, db *store.DB, c plan.Catalog) plan.SeedResult {
		t.Helper()
		svc, err := plan.New(c)
		if err != nil {
			t.Fatal(err)
		}
		var res plan.SeedResult
		if err := db.InTx(ctx, func(tx *store.Tx) (err error) { res, err = svc.Seed(ctx, tx); return err }); err != nil {
			t.Fatalf("seed: %v", err)
		}
		return res
	}

	t.Run("SeedIsIdempotent", func(t *testing.T) {
		db, clock := fresh(t, open)
		if res := seed(t, db, plan.Catalog{}); res.PlansWritten != 3 || res.PriceVersionsCreated != 3 {
			t.Fatalf("first seed = %+v", res)
		}
		clock.Advance(time.Hour)
		if res := seed(t, db, plan.Catalog{}); res != (plan.SeedResult{}) {
			t.Fatalf("second seed = %+v", res)
		}
		plans, err := db.Read().PlanList(ctx)
		if err != nil || len(plans) != 3 {
			t.Fatalf("plans = %+v, %v", plans, err)
		}
		pro := plans[1]
		if pro.ID != "pro" || pro.MonthlyCredits != 2000 || !pro.Active || len(pro.Prices) != 1 ||
			!slices.Equal(pro.Entitlements, []string{"ai.basic", "ai.pro_models", "analytics.advanced", "collaboration.enabled"}) {
			t.Fatalf("pro = %+v", pro)
		}
		pv := pro.Prices[0]
		if pv.Currency != "USD" || pv.Amount != 1900 || pv.Interval != plan.Month || pv.Version != 1 || !pv.Active || !pv.CreatedAt.Equal(Epoch) {
			t.Fatalf("pro price = %+v", pv)
		}
	})

	t.Run("PriceChangeAppendsAVersion", func(t *testing.T) {
		db, clock := fresh(t, open)
		seed(t, db, plan.Catalog{})
		clock.Advance(time.Hour)
		c := plan.DefaultCatalog()
		c.Plans[1].Prices[0].Amount = 2400
		c.Plans[1].MonthlyCredits = 2500
		if res := seed(t, db, c); res.PriceVersionsCreated != 1 || res.PlansWritten != 1 {
			t.Fatalf("changed seed = %+v", res)
		}
		pro, err := db.Read().PlanGet(ctx, "pro")
		if err != nil || len(pro.Prices) != 2 || pro.MonthlyCredits != 2500 {
			t.Fatalf("pro = %+v, %v", pro, err)
		}
		old, cur := pro.Prices[0], pro.Prices[1]
		if old.Version != 1 || old.Amount != 1900 || old.Active || cur.Version != 2 || cur.Amount != 2400 || !cur.Active ||
			!cur.CreatedAt.Equal(Epoch.Add(time.Hour)) {
			t.Fatalf("versions = %+v", pro.Prices)
		}
		// Back to the old amount: a third version, the first two kept.
		if res := seed(t, db, plan.Catalog{}); res.PriceVersionsCreated != 1 {
			t.Fatalf("revert seed = %+v", res)
		}
		pro, _ = db.Read().PlanGet(ctx, "pro")
		if len(pro.Prices) != 3 || pro.Prices[2].Amount != 1900 || !pro.Prices[2].Active || pro.Prices[1].Active {
			t.Fatalf("after revert = %+v", pro.Prices)
		}
		// Dropping a plan deactivates it and its prices, keeping the rows.
		c = plan.DefaultCatalog()
		c.Plans = c.Plans[:2]
		seed(t, db, c)
		studio, err := db.Read().PlanGet(ctx, "studio")
		if err != nil || studio.Active || len(studio.Prices) != 1 || studio.Prices[0].Active {
			t.Fatalf("studio = %+v, %v", studio, err)
		}
	})

	t.Run("ConcurrentSeedsConverge", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db, plan.Catalog{})
		c := plan.DefaultCatalog()
		c.Plans[2].Prices[0].Amount = 5900
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { seed(t, db, c) })
		}
		wg.Wait()
		studio, err := db.Read().PlanGet(ctx, "studio")
		if err != nil || len(studio.Prices) != 2 || len(studio.ActivePrices()) != 1 || studio.ActivePrices()[0].Amount != 5900 {
			t.Fatalf("studio = %+v, %v", studio, err)
		}
	})

	t.Run("WorkspacePlan", func(t *testing.T) {
		db, clock := fresh(t, open)
		seed(t, db, plan.Catalog{})
		svc, _ := plan.New(plan.Catalog{})
		accessSeed(t, db)
		before := accessVersion(t, db, "ws_1")
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error { return svc.Start(ctx, tx, "ten_1", "ws_1") })
		if accessVersion(t, db, "ws_1") <= before {
			t.Fatal("assigning a plan did not bump the workspace's authority version")
		}
		a := accessLoad(t, db, "ws_1", "usr_1")
		if !slices.Equal(slices.Sorted(slices.Values(a.Entitlements)), []string{"ai.basic"}) {
			t.Fatalf("entitlements = %v", a.Entitlements)
		}
		for _, env := range []access.Environment{access.Live, access.Test} {
			got, err := db.Read().WorkspacePlanGet(ctx, "ws_1", env)
			if err != nil || got.PlanID != plan.FreeID || got.TenantID != "ten_1" || got.Environment != env || !got.Since.Equal(Epoch) {
				t.Fatalf("%s assignment = %+v, %v", env, got, err)
			}
		}
		recs, err := db.Read().JobList(ctx, plan.JobMonthlyGrant, 10)
		if err != nil || len(recs) != 2 || recs[0].UniqueKey != "plan-grant:ws_1:live:2026-01" && recs[1].UniqueKey != "plan-grant:ws_1:live:2026-01" ||
			recs[0].MaxAttempts != plan.GrantMaxAttempts {
			t.Fatalf("grant jobs = %+v, %v", recs, err)
		}
		// Starting again in the same period enqueues nothing new; upgrading
		// keeps since moving only when the plan changes.
		clock.Advance(time.Hour)
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error { return svc.Start(ctx, tx, "ten_1", "ws_1") })
		if recs, _ := db.Read().JobList(ctx, plan.JobMonthlyGrant, 10); len(recs) != 2 {
			t.Fatalf("grant jobs after a second start = %d", len(recs))
		}
		if got, _ := db.Read().WorkspacePlanGet(ctx, "ws_1", access.Live); !got.Since.Equal(Epoch) {
			t.Fatalf("since moved without a plan change: %v", got.Since)
		}
		// A plan assigned in test moves only the test environment.
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			return svc.Assign(ctx, tx, "ten_1", "ws_1", access.Test, "studio")
		})
		testA, err := db.Read().AuthorityLoad(ctx, "ten_1", "ws_1", "usr_1", access.Test)
		if err != nil || !slices.Contains(testA.Entitlements, "marketplace.sell") || len(testA.Entitlements) != 6 || testA.Plan != "studio" {
			t.Fatalf("test studio entitlements = %v, plan %q, %v", testA.Entitlements, testA.Plan, err)
		}
		if a = accessLoad(t, db, "ws_1", "usr_1"); !slices.Equal(a.Entitlements, []string{"ai.basic"}) || a.Plan != "free" {
			t.Fatalf("live entitlements after a test assignment = %v, plan %q", a.Entitlements, a.Plan)
		}
		if got, _ := db.Read().WorkspacePlanGet(ctx, "ws_1", access.Live); got.PlanID != plan.FreeID {
			t.Fatalf("live plan after a test assignment = %+v", got)
		}
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			return svc.Assign(ctx, tx, "ten_1", "ws_1", access.Live, "studio")
		})
		a = accessLoad(t, db, "ws_1", "usr_1")
		if !slices.Contains(a.Entitlements, "marketplace.sell") || len(a.Entitlements) != 6 || a.Plan != "studio" {
			t.Fatalf("studio entitlements = %v, plan %q", a.Entitlements, a.Plan)
		}
		// Back to free in test: test loses studio's entitlements, live keeps them.
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			return svc.Assign(ctx, tx, "ten_1", "ws_1", access.Test, plan.FreeID)
		})
		if testA, _ = db.Read().AuthorityLoad(ctx, "ten_1", "ws_1", "usr_1", access.Test); !slices.Equal(testA.Entitlements, []string{"ai.basic"}) {
			t.Fatalf("test entitlements back on free = %v", testA.Entitlements)
		}
		if a = accessLoad(t, db, "ws_1", "usr_1"); len(a.Entitlements) != 6 {
			t.Fatalf("live entitlements after test fell back = %v", a.Entitlements)
		}
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			return svc.Assign(ctx, tx, "ten_1", "ws_2", access.Live, plan.FreeID)
		})
		list, err := db.Read().WorkspacePlanList(ctx, "", 10)
		if err != nil || len(list) != 2 || list[0].WorkspaceID != "ws_1" || list[0].PlanID != "studio" ||
			list[0].Environment != access.Live || !list[0].Since.Equal(Epoch.Add(time.Hour)) {
			t.Fatalf("list = %+v, %v", list, err)
		}
		if list, _ := db.Read().WorkspacePlanList(ctx, "ws_1", 10); len(list) != 1 || list[0].WorkspaceID != "ws_2" {
			t.Fatalf("list after ws_1 = %+v", list)
		}
		if _, err := db.Read().WorkspacePlanGet(ctx, "ws_9", access.Live); !fault.Is(err, fault.NotFound) {
			t.Fatalf("unknown workspace = %v", err)
		}
	})
}
