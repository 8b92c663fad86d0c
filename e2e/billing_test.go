package e2e_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
)

// TestBillingStory: checkout in test mode, pay on the simulator, the
// read-only success route, reconcile (concurrently, plus a replayed
// webhook) into one activation and one grant, saas/me, cancel, and a
// direct activation refused.
func TestBillingStory(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		const pw = "correct horse battery staple"
		s.Signup("ada@example.test", pw, "Ada")
		cookie, _ := s.Login("ada@example.test", pw)
		test := map[string]string{"Platform-Environment": "test"}
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/onboarding", Cookie: cookie, Header: test,
			Body: map[string]string{"action": "create", "name": "Ada Studio", "goal": "creator", "plan": "pro"}})
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("onboarding: %d %s", r.Status, r.Body)
		}
		var ws struct {
			Workspace struct{ ID, TenantID string } `json:"workspace"`
		}
		r.Data(t, &ws)

		start := time.Now()
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout", Cookie: cookie, Header: test,
			Body: map[string]string{"planId": "pro"}})
		if r.Status != http.StatusCreated {
			t.Fatalf("checkout: %d %s", r.Status, r.Body)
		}
		var chk struct {
			ID, Status, PaymentURL string
			Price                  struct{ AmountMinor, PlanID string }
		}
		r.Data(t, &chk)
		if chk.Status != "open" || chk.PaymentURL == "" || chk.Price.AmountMinor != "1900" {
			t.Fatalf("checkout = %+v", chk)
		}
		// Before paying: reconcile answers payment_pending.
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout/" + chk.ID + "/reconcile", Cookie: cookie, Header: test})
		if r.Status != http.StatusConflict || r.JSON()["error"].(map[string]any)["details"].(map[string]any)["reason"] != "payment_pending" {
			t.Fatalf("early reconcile: %d %s", r.Status, r.Body)
		}
		var sessionID string
		if err := s.DB.InTx(context.Background(), func(tx *store.Tx) error {
			c, err := tx.CheckoutGet(context.Background(), chk.ID)
			sessionID = c.ProviderSessionID
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// A provider 5xx during reconcile: nothing activated. The payment's
		// webhooks are held back until the replay below, so that only
		// reconcile could activate here (the job pool would otherwise race
		// this check).
		if err := s.Stripe.SetWebhookURL(""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stripe.Pay(sessionID); err != nil {
			t.Fatal(err)
		}
		s.Stripe.FailNext("GET /v1/checkout/sessions/{id}", http.StatusInternalServerError)
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout/" + chk.ID + "/reconcile", Cookie: cookie, Header: test})
		if r.Status != http.StatusServiceUnavailable && r.Status != http.StatusGatewayTimeout {
			t.Fatalf("reconcile on 5xx: %d %s", r.Status, r.Body)
		}
		// The browser's success route is read-only. The provider sends the
		// browser there with ?environment=test (a navigation carries the
		// session cookie but cannot send the header).
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/saas/checkout/" + chk.ID + "?environment=test", Cookie: cookie})
		r.Data(t, &chk)
		if chk.Status != "open" {
			t.Fatalf("success route activated: %+v", chk)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/saas/checkout/" + chk.ID, Cookie: cookie}); r.Status != http.StatusNotFound {
			t.Fatalf("a test checkout read in live mode: %d %s", r.Status, r.Body)
		}
		// Concurrent reconciles plus a replayed webhook: one activation, one grant.
		if err := s.Stripe.SetWebhookURL(s.Server.URL + "/internal/payments/test/webhook"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout/" + chk.ID + "/reconcile", Cookie: cookie, Header: test})
			}()
		}
		s.Stripe.ReplayLastWebhook()
		wg.Wait()
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout/" + chk.ID + "/reconcile", Cookie: cookie, Header: test})
		var done struct {
			Status         string
			SubscriptionID string
		}
		r.Data(t, &done)
		if done.Status != "activated" || done.SubscriptionID == "" {
			t.Fatalf("reconciled = %s", r.Body)
		}
		t.Logf("checkout to active subscription: %s (wall time, including the simulated payment)", time.Since(start))
		s.Stripe.Drain(context.Background())
		time.Sleep(300 * time.Millisecond) // let webhook jobs run; they must not grant again

		grants := 0
		ms, _, err := ledger.New().List(context.Background(), s.DB.Read(), ledger.ListParams{
			Scope:   ledger.Scope{TenantID: ws.Workspace.TenantID, WorkspaceID: ws.Workspace.ID, Environment: "test"},
			Ledgers: []ledger.Kind{ledger.Credits}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if strings.HasPrefix(m.Reference, "grant:subscription:"+done.SubscriptionID+":") {
				grants++
			}
		}
		if grants != 1 {
			t.Fatalf("subscription grants = %d; movements %+v", grants, ms)
		}

		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/saas/me", Cookie: cookie, Header: test})
		var me struct {
			Subscription *struct{ ID, Status, PlanID string }
			Credits      string
		}
		r.Data(t, &me)
		if me.Subscription == nil || me.Subscription.ID != done.SubscriptionID || me.Subscription.Status != "active" || me.Credits == "0" {
			t.Fatalf("saas/me = %s", r.Body)
		}

		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/subscriptions/" + done.SubscriptionID + "/cancel", Cookie: cookie, Header: test})
		if r.Status != http.StatusOK || r.JSON()["data"].(map[string]any)["refundIssued"] != false {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/subscriptions", Cookie: cookie, Header: test, Body: map[string]string{"planId": "pro"}})
		if r.Code() != "DIRECT_ACTIVATION_DISABLED" {
			t.Fatalf("direct activation: %d %s", r.Status, r.Body)
		}
	})
}

// TestCheckoutIdempotentOutsideTransaction: checkout creation asks the
// provider outside any transaction and commits its row with the
// idempotency record, so concurrent retries with one key answer one
// checkout, and a replay says so.
func TestCheckoutIdempotentOutsideTransaction(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		const pw = "correct horse battery staple"
		s.Signup("idem@example.test", pw, "Idem")
		cookie, _ := s.Login("idem@example.test", pw)
		test := map[string]string{"Platform-Environment": "test"}
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/onboarding", Cookie: cookie, Header: test,
			Body: map[string]string{"action": "create", "name": "Idem Studio", "goal": "creator", "plan": "free"}}); r.Status >= 300 {
			t.Fatalf("onboarding: %d %s", r.Status, r.Body)
		}
		h := map[string]string{"Platform-Environment": "test", "Idempotency-Key": "checkout-once"}
		const n = 8
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout", Cookie: cookie, Header: h,
					Body: map[string]string{"planId": "pro"}})
				if r.Status != http.StatusCreated {
					t.Errorf("checkout %d: %d %s", i, r.Status, r.Body)
					return
				}
				var chk struct{ ID string }
				r.Data(t, &chk)
				ids[i] = chk.ID
			}()
		}
		wg.Wait()
		for i := range ids {
			if ids[i] == "" || ids[i] != ids[0] {
				t.Fatalf("concurrent checkouts with one key answered %v", ids)
			}
		}
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout", Cookie: cookie, Header: h,
			Body: map[string]string{"planId": "pro"}})
		if r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %v", r.Status, r.Header)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout", Cookie: cookie, Header: h,
			Body: map[string]string{"planId": "studio"}}); r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("same key, other plan: %d %s", r.Status, r.Body)
		}
	})
}
