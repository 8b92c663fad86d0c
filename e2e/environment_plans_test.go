package e2e_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// The environment rule of the billing issue for plans: a subscription's
// entitlements carry the environment of its checkout. A test-mode pro
// subscription gives the test environment pro's entitlements while live
// stays on free, and its end returns the test environment to free.

// liveMe reads saas/me as u without the environment header: sessions act in
// live mode.
func (u *payer) liveMe(t testing.TB, s *platformtest.System) api.SaasMe {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/saas/me", Cookie: u.cookie})
	if r.Status != http.StatusOK {
		t.Fatalf("saas/me (live): %d %s", r.Status, r.Body)
	}
	var me api.SaasMe
	r.Data(t, &me)
	return me
}

// freeOnly reports whether entitlements are the free plan's: ai.basic and
// none of pro's.
func freeOnly(entitlements []string) bool {
	return slices.Contains(entitlements, "ai.basic") && !slices.Contains(entitlements, "ai.pro_models") &&
		!slices.Contains(entitlements, "collaboration.enabled")
}

// TestEnvironmentPlans: a test-mode pro subscription grants pro's
// entitlements in test only; cancelled, it falls back to free at its period
// end, in test only.
func TestEnvironmentPlans(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		u := newPayer(t, s, "envplans@example.test")
		if me := u.me(t, s); !freeOnly(me.Entitlements) {
			t.Fatalf("test entitlements before any subscription = %v", me.Entitlements)
		}
		if me := u.liveMe(t, s); !freeOnly(me.Entitlements) {
			t.Fatalf("live entitlements before any subscription = %v", me.Entitlements)
		}

		first := u.subscribe(t, s, "pro").sub
		if first.Scope.Environment != "test" {
			t.Fatalf("subscription environment = %q, want test", first.Scope.Environment)
		}
		me := u.me(t, s)
		if me.Environment != "test" || !slices.Contains(me.Entitlements, "ai.pro_models") ||
			!slices.Contains(me.Entitlements, "collaboration.enabled") || !slices.Contains(me.Entitlements, "ai.basic") {
			t.Fatalf("test saas/me after a test-mode pro subscription = environment %q, entitlements %v", me.Environment, me.Entitlements)
		}
		if live := u.liveMe(t, s); live.Environment != "live" || !freeOnly(live.Entitlements) || live.Subscription != nil {
			t.Fatalf("live saas/me after a test-mode pro subscription = environment %q, entitlements %v, subscription %+v",
				live.Environment, live.Entitlements, live.Subscription)
		}

		r := u.do(s, http.MethodPost, "/api/v1/subscriptions/"+first.ID+"/cancel", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		drain(t, s)
		settle(t, s, billing.JobApplyEvent)
		if me := u.me(t, s); !slices.Contains(me.Entitlements, "ai.pro_models") {
			t.Fatalf("test entitlements before the period end = %v", me.Entitlements)
		}

		s.Clock.Set(first.PeriodEnd.Add(time.Second))
		if err := s.Stripe.EndPeriod(first.ProviderID); err != nil {
			t.Fatal(err)
		}
		drain(t, s)
		waitJob(t, s, billing.JobRenewal+":"+first.ID+":"+first.PeriodEnd.UTC().Format(time.RFC3339))
		settle(t, s, billing.JobApplyEvent)

		if ended := subscription(t, s, first.ID); ended.State != billing.SubscriptionCanceled {
			t.Fatalf("after period end: %s", ended.State)
		}
		u.relogin(s)
		if me := u.me(t, s); me.Subscription != nil || !freeOnly(me.Entitlements) {
			t.Fatalf("test saas/me after the period end = subscription %+v, entitlements %v", me.Subscription, me.Entitlements)
		}
		if live := u.liveMe(t, s); !freeOnly(live.Entitlements) {
			t.Fatalf("live entitlements after the test subscription ended = %v", live.Entitlements)
		}
	})
}
