package billing_test

import (
	"context"
	"slices"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/plan"
)

// TestJobsAreBillingsKinds: renewals, webhook events and provider
// cancellations, byte for byte, of the money class.
func TestJobsAreBillingsKinds(t *testing.T) {
	h := newHarness(t)
	var names []string
	for _, k := range h.svc.Jobs(h.db.eventRun) {
		if k.Class != jobs.ClassMoney || k.HandlerFunc == nil || k.Every != 0 {
			t.Errorf("kind %+v", k)
		}
		names = append(names, k.Name)
	}
	if want := []string{"billing.renewal", "billing.apply_event", "billing.provider_cancel"}; !slices.Equal(names, want) {
		t.Fatalf("kinds %v, want %v", names, want)
	}
}

// TestPlanGrantSkippedWhileSubscribed: a plan's monthly grant is booked
// on the credit ledger once per reference, and skipped in an environment
// where the workspace has a subscription (whose credits come per
// subscription period), not in the other.
func TestPlanGrantSkippedWhileSubscribed(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	granter := h.svc.PlanGranter(h.db.grantRun)
	grant := func(env access.Environment, ref string) plan.Grant {
		return plan.Grant{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env, Credits: 50, Reference: ref, PlanID: "free"}
	}
	for range 2 {
		if err := granter.GrantCredits(ctx, grant(access.Test, "plan-grant:ws_1:test:2026-03")); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.balance(access.Test); got.Cmp(credits(50)) != 0 {
		t.Fatalf("balance after a grant booked twice: %s, want 50", got)
	}
	var m ledger.Posted
	h.db.read(func(s *memState) {
		for _, x := range s.movements {
			m = x
		}
	})
	if m.Reference != "grant:plan-grant:ws_1:test:2026-03" || m.Type != ledger.TypeGrant {
		t.Fatalf("movement %+v", m)
	}

	h.activate(h.principal(access.Test))
	subscribed := h.balance(access.Test)
	if err := granter.GrantCredits(ctx, grant(access.Test, "plan-grant:ws_1:test:2026-04")); err != nil {
		t.Fatal(err)
	}
	if got := h.balance(access.Test); got.Cmp(subscribed) != 0 {
		t.Fatalf("a subscribed workspace got its plan's monthly grant: %s, want %s", got, subscribed)
	}
	if err := granter.GrantCredits(ctx, grant(access.Live, "plan-grant:ws_1:live:2026-04")); err != nil {
		t.Fatal(err)
	}
	if got := h.balance(access.Live); got.Cmp(credits(50)) != 0 {
		t.Fatalf("live balance %s, want 50: the test subscription does not cover live", got)
	}
}
