package billing_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/plan"
)

// harness is a billing Service on the memory store and the fake provider,
// with a catalog of free, pro (monthly and yearly), studio (no longer
// offered) and custom (no price).
type harness struct {
	t     *testing.T
	clock *fakeClock
	db    *memDB
	prov  *fakeProvider
	svc   *billing.Service
}

const (
	proCredits = 2000
	proMonthly = "price_pro_month_1"
	proYearly  = "price_pro_year_1"
)

func newHarness(t *testing.T) *harness {
	t.Helper()
	clock := &fakeClock{now: epoch}
	h := &harness{t: t, clock: clock, db: newMemDB(clock), prov: newFakeProvider(clock)}
	h.svc = h.service(billing.Providers{Test: h.prov, Live: h.prov})
	h.db.read(func(s *memState) {
		s.plans["free"] = plan.Plan{ID: "free", Name: "Free", Entitlements: []string{"ai.basic"}, MonthlyCredits: 50, Active: true,
			Prices: []plan.PriceVersion{{ID: "price_free_1", PlanID: "free", Currency: "USD", Interval: plan.Month, Version: 1, Active: true}}}
		s.plans["pro"] = plan.Plan{ID: "pro", Name: "Pro", Entitlements: []string{"ai.basic", "ai.pro_models"}, MonthlyCredits: proCredits,
			Position: 1, Active: true, Prices: []plan.PriceVersion{
				{ID: proYearly, PlanID: "pro", Currency: "USD", Interval: plan.Year, Version: 1, Amount: 19000, Active: true},
				{ID: proMonthly, PlanID: "pro", Currency: "USD", Interval: plan.Month, Version: 1, Amount: 1900, Active: true},
			}}
		s.plans["studio"] = plan.Plan{ID: "studio", Name: "Studio", MonthlyCredits: 10000, Position: 2,
			Prices: []plan.PriceVersion{{ID: "price_studio_1", PlanID: "studio", Currency: "USD", Interval: plan.Month, Version: 1, Amount: 4900, Active: true}}}
		s.plans["custom"] = plan.Plan{ID: "custom", Name: "Custom", Position: 3, Active: true}
		for _, env := range []access.Environment{access.Live, access.Test} {
			s.assignments["ws_1|"+string(env)] = plan.Assignment{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env, PlanID: "free", Since: epoch}
		}
	})
	return h
}

// service builds a Service with the given provider accounts.
func (h *harness) service(providers billing.Providers) *billing.Service {
	h.t.Helper()
	plans, err := plan.New(plan.Catalog{})
	if err != nil {
		h.t.Fatal(err)
	}
	svc, err := billing.New(billing.Config{Plans: plans, Ledger: ledger.New(), Providers: providers,
		SuccessURL: "https://app.example/billing/checkout/{CHECKOUT_ID}?result=success",
		CancelURL:  "https://app.example/billing/checkout/{CHECKOUT_ID}?result=cancel"})
	if err != nil {
		h.t.Fatal(err)
	}
	return svc
}

// principal is the workspace owner's session in env.
func (h *harness) principal(env access.Environment) *access.Principal {
	return &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env,
		UserID: "usr_1", SessionID: "ses_1", AuthenticatedAt: epoch}
}

// start opens a checkout.
func (h *harness) start(p *access.Principal, in billing.CheckoutInput) (c billing.Checkout, err error) {
	err = h.db.run(context.Background(), func(st *memTx) (err error) {
		c, err = h.svc.StartCheckout(context.Background(), st, p, in)
		return err
	})
	return c, err
}

// mustStart opens a checkout of plan id.
func (h *harness) mustStart(p *access.Principal, planID string) billing.Checkout {
	h.t.Helper()
	c, err := h.start(p, billing.CheckoutInput{PlanID: planID, CustomerEmail: "owner@example.com"})
	if err != nil {
		h.t.Fatalf("StartCheckout(%s): %v", planID, err)
	}
	return c
}

// activate opens, pays and reconciles a pro checkout and returns the
// subscription.
func (h *harness) activate(p *access.Principal) billing.WorkspaceSubscription {
	h.t.Helper()
	c := h.mustStart(p, "pro")
	h.prov.pay(h.t, c.ProviderSessionID)
	c, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID)
	if err != nil || c.State != billing.CheckoutActivated {
		h.t.Fatalf("Reconcile = %+v, %v", c, err)
	}
	return h.sub(c.SubscriptionID)
}

func (h *harness) checkout(id string) (c billing.Checkout) {
	h.db.read(func(s *memState) { c = s.checkouts[id] })
	return c
}

func (h *harness) sub(id string) (sub billing.WorkspaceSubscription) {
	h.t.Helper()
	h.db.read(func(s *memState) { sub = s.subs[id] })
	if sub.ID == "" {
		h.t.Fatalf("no subscription %q", id)
	}
	return sub
}

func (h *harness) counts() (checkouts, subs, grants int) {
	h.db.read(func(s *memState) { checkouts, subs, grants = len(s.checkouts), len(s.subs), len(s.grants) })
	return
}

// balance is the workspace's credits balance in env.
func (h *harness) balance(env access.Environment) money.Sum {
	var a ledger.Account
	h.db.read(func(s *memState) {
		a = s.accounts[accountKey(access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env}, ledger.Credits, ledger.AccountWorkspaceCredits)]
	})
	return a.Balance
}

func (h *harness) audits(action string) (n int) {
	h.db.read(func(s *memState) {
		for _, e := range s.audit {
			if e.Action == action {
				n++
			}
		}
	})
	return n
}

func (h *harness) events(typ string) (n int) {
	h.db.read(func(s *memState) {
		for _, e := range s.outbox {
			if e.Type == typ {
				n++
			}
		}
	})
	return n
}

func (h *harness) jobs(kind string) (out []jobs.InsertParams) {
	h.db.read(func(s *memState) {
		for _, j := range s.jobs {
			if j.Kind == kind {
				out = append(out, j)
			}
		}
	})
	return out
}

// workspacePlan returns ws_1's plan in env.
func (h *harness) workspacePlan(env access.Environment) string {
	var a plan.Assignment
	h.db.read(func(s *memState) { a = s.assignments["ws_1|"+string(env)] })
	return a.PlanID
}

// runRenewal runs the renewal handler on the renewal job of sub's period
// ending at end, as the job pool would.
func (h *harness) runRenewal(subID string, end time.Time) error {
	h.t.Helper()
	for _, j := range h.jobs(billing.JobRenewal) {
		var pl billing.RenewalPayload
		if err := json.Unmarshal(j.Payload, &pl); err != nil {
			h.t.Fatal(err)
		}
		if pl.SubscriptionID == subID && pl.PeriodEnd.Equal(end) {
			if !j.RunAt.Equal(end) {
				h.t.Fatalf("renewal job runs at %v, want the period end %v", j.RunAt, end)
			}
			return h.svc.RenewalHandler(h.db.renewRun)(context.Background(), jobs.Job{Kind: j.Kind, Payload: j.Payload, RunAt: j.RunAt})
		}
	}
	h.t.Fatalf("no renewal job for %s at %v", subID, end)
	return nil
}

// credits is n credits as a ledger sum.
func credits(n int64) money.Sum { return money.SumOf(money.Atomic(n)) }

// reason is details.reason of err.
func reason(err error) any {
	_, _, d := fault.Public(err)
	return d["reason"]
}

func TestNewValidatesConfig(t *testing.T) {
	plans, _ := plan.New(plan.Catalog{})
	for name, cfg := range map[string]billing.Config{
		"no plans":       {Ledger: ledger.New(), SuccessURL: "s", CancelURL: "c"},
		"no ledger":      {Plans: plans, SuccessURL: "s", CancelURL: "c"},
		"no success URL": {Plans: plans, Ledger: ledger.New(), CancelURL: "c"},
		"no cancel URL":  {Plans: plans, Ledger: ledger.New(), SuccessURL: "s"},
	} {
		if _, err := billing.New(cfg); err == nil {
			t.Errorf("%s: New accepted the config", name)
		}
	}
	svc, err := billing.New(billing.Config{Plans: plans, Ledger: ledger.New(), SuccessURL: "s", CancelURL: "c",
		Providers: billing.Providers{Test: newFakeProvider(&fakeClock{})}})
	if err != nil || !svc.Configured(access.Test) || svc.Configured(access.Live) {
		t.Fatalf("New = %v; configured test %v live %v", err, svc.Configured(access.Test), svc.Configured(access.Live))
	}
}

// TestStartCheckout captures the price snapshot and sends exactly it to
// the provider, keyed by the checkout id.
func TestStartCheckout(t *testing.T) {
	h := newHarness(t)
	c := h.mustStart(h.principal(access.Test), "pro")
	want := billing.PriceSnapshot{PlanID: "pro", PlanName: "Pro", PriceVersionID: proMonthly, PriceVersion: 1, Currency: "USD",
		Amount: 1900, Interval: plan.Month, MonthlyCredits: proCredits}
	if c.Price != want {
		t.Fatalf("snapshot = %+v, want %+v (the monthly price is the default)", c.Price, want)
	}
	if c.State != billing.CheckoutOpen || c.ProviderSessionID == "" || c.PaymentURL != "https://pay.example/"+c.ProviderSessionID ||
		c.Scope != (billing.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}) || c.CreatedBy != "user:usr_1" ||
		!strings.HasPrefix(c.ID, "chk_") {
		t.Fatalf("checkout = %+v", c)
	}
	if stored := h.checkout(c.ID); stored.ID != c.ID || stored.Price != want || stored.State != billing.CheckoutOpen {
		t.Fatalf("stored = %+v", stored)
	}
	r := h.prov.requests[0]
	if r.Reference != c.ID || r.Currency != "usd" || r.UnitAmount != 1900 || r.Interval != "month" || r.ProductName != "Pro" ||
		r.CustomerEmail != "owner@example.com" || r.Metadata["checkout_id"] != c.ID || r.Metadata["price_version_id"] != proMonthly ||
		r.Metadata["environment"] != "test" || !strings.Contains(r.SuccessURL, c.ID) || !strings.Contains(r.CancelURL, c.ID) ||
		strings.Contains(r.SuccessURL, "{CHECKOUT_ID}") {
		t.Fatalf("provider request = %+v", r)
	}

	yearly, err := h.start(h.principal(access.Test), billing.CheckoutInput{PlanID: "pro", PriceVersionID: proYearly})
	if err != nil || yearly.Price.Interval != plan.Year || yearly.Price.Amount != 19000 || yearly.Price.PriceVersionID != proYearly {
		t.Fatalf("yearly = %+v, %v", yearly.Price, err)
	}
}

// TestStartCheckoutRejects: bad plans and failing providers store nothing.
func TestStartCheckoutRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     billing.CheckoutInput
		env    access.Environment
		fail   error // CreateCheckout's answer
		code   fault.Code
		reason string
	}{
		{name: "no plan", in: billing.CheckoutInput{}, code: fault.InvalidInput},
		{name: "unknown plan", in: billing.CheckoutInput{PlanID: "gold"}, code: fault.NotFound},
		{name: "plan no longer offered", in: billing.CheckoutInput{PlanID: "studio"}, code: fault.NotFound},
		{name: "free plan", in: billing.CheckoutInput{PlanID: "free"}, code: fault.InvalidInput, reason: billing.ReasonFreePlan},
		{name: "plan without price", in: billing.CheckoutInput{PlanID: "custom"}, code: fault.InvalidInput, reason: billing.ReasonFreePlan},
		{name: "price of another plan", in: billing.CheckoutInput{PlanID: "pro", PriceVersionID: "price_studio_1"}, code: fault.NotFound},
		{name: "no live account", in: billing.CheckoutInput{PlanID: "pro"}, env: access.Live, code: fault.ProviderUnavailable},
		{name: "provider down", in: billing.CheckoutInput{PlanID: "pro"}, fail: errors.New("connection refused"), code: fault.ProviderUnavailable},
		{name: "provider slow", in: billing.CheckoutInput{PlanID: "pro"}, fail: fmt.Errorf("post: %w", context.DeadlineExceeded), code: fault.ProviderTimeout},
		{name: "provider rate limit", in: billing.CheckoutInput{PlanID: "pro"}, fail: fault.E("stripepay.CreateCheckout", fault.RateLimited, ""), code: fault.RateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.svc = h.service(billing.Providers{Test: h.prov}) // no live account
			if tc.fail != nil {
				h.prov.failNext("CreateCheckout", tc.fail)
			}
			env := cmp.Or(tc.env, access.Test)
			_, err := h.start(h.principal(env), tc.in)
			if !fault.Is(err, tc.code) {
				t.Fatalf("StartCheckout = %v, want %s", err, tc.code)
			}
			if tc.reason != "" && reason(err) != tc.reason {
				t.Fatalf("reason = %v, want %s", reason(err), tc.reason)
			}
			if n, _, _ := h.counts(); n != 0 {
				t.Fatalf("%d checkouts stored", n)
			}
		})
	}

	t.Run("provider answers without a page", func(t *testing.T) {
		h := newHarness(t)
		noURL := &noURLProvider{h.prov}
		h.svc = h.service(billing.Providers{Test: noURL})
		if _, err := h.start(h.principal(access.Test), billing.CheckoutInput{PlanID: "pro"}); !fault.Is(err, fault.ProviderUnavailable) {
			t.Fatalf("StartCheckout = %v", err)
		}
	})
}

// noURLProvider answers sessions without a hosted page.
type noURLProvider struct{ *fakeProvider }

// CreateCheckout drops the session's URL.
func (p *noURLProvider) CreateCheckout(ctx context.Context, r billing.CheckoutRequest) (billing.CheckoutSession, error) {
	s, err := p.fakeProvider.CreateCheckout(ctx, r)
	s.URL = ""
	return s, err
}

// TestPriceSnapshotImmutable supersedes the price and the plan's credits
// after the checkout began: the subscription and its grant keep the
// snapshot, a new checkout gets the new price.
func TestPriceSnapshotImmutable(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Test)
	c := h.mustStart(p, "pro")
	before := c.Price
	h.db.read(func(s *memState) {
		pro := s.plans["pro"]
		pro.Name, pro.MonthlyCredits = "Pro 2", 5000
		pro.Prices = append([]plan.PriceVersion{}, pro.Prices...)
		for i := range pro.Prices {
			if pro.Prices[i].ID == proMonthly {
				pro.Prices[i].Active = false
			}
		}
		pro.Prices = append(pro.Prices, plan.PriceVersion{ID: "price_pro_month_2", PlanID: "pro", Currency: "USD", Interval: plan.Month,
			Version: 2, Amount: 2900, Active: true})
		s.plans["pro"] = pro
	})
	h.prov.pay(t, c.ProviderSessionID)
	c, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	sub := h.sub(c.SubscriptionID)
	if c.Price != before || sub.Price != before || sub.Price.Amount != 1900 || sub.Price.PriceVersionID != proMonthly {
		t.Fatalf("checkout price %+v, subscription price %+v, want the snapshot %+v", c.Price, sub.Price, before)
	}
	if got := h.balance(access.Test); got.Cmp(credits(proCredits)) != 0 {
		t.Fatalf("granted %s credits, want the snapshot's %d", got, proCredits)
	}
	next := h.mustStart(p, "pro")
	if next.Price.Amount != 2900 || next.Price.PriceVersion != 2 || next.Price.MonthlyCredits != 5000 {
		t.Fatalf("a new checkout got %+v", next.Price)
	}
}

// TestReconcileBeforePayment: the provider has not confirmed; nothing
// changes and reconcile can be repeated.
func TestReconcileBeforePayment(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Test)
	c := h.mustStart(p, "pro")
	for range 2 {
		got, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID)
		if !fault.Is(err, fault.Conflict) || reason(err) != billing.ReasonPaymentPending || got.State != billing.CheckoutOpen {
			t.Fatalf("Reconcile = %+v, %v; want CONFLICT payment_pending", got, err)
		}
	}
	if _, subs, grants := h.counts(); subs != 0 || grants != 0 || h.checkout(c.ID).State != billing.CheckoutOpen {
		t.Fatalf("%d subscriptions, %d grants, checkout %s", subs, grants, h.checkout(c.ID).State)
	}
	if n := h.events(billing.EventSubscriptionActivated); n != 0 {
		t.Fatalf("%d activation events", n)
	}
	h.prov.pay(t, c.ProviderSessionID)
	got, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID)
	if err != nil || got.State != billing.CheckoutActivated || got.SubscriptionID == "" || got.PaidAt == nil {
		t.Fatalf("after payment: %+v, %v", got, err)
	}
}

// TestReconcileProviderFailure fails each provider call of a reconcile:
// nothing is activated, and the retry converges on one activation.
func TestReconcileProviderFailure(t *testing.T) {
	for _, tc := range []struct {
		method string
		err    error
		code   fault.Code
	}{
		{"GetCheckout", errors.New("502 bad gateway"), fault.ProviderUnavailable},
		{"GetCheckout", fmt.Errorf("get: %w", context.DeadlineExceeded), fault.ProviderTimeout},
		{"ListInvoices", errors.New("connection reset"), fault.ProviderUnavailable},
		{"ListInvoices", fmt.Errorf("list: %w", context.DeadlineExceeded), fault.ProviderTimeout},
	} {
		t.Run(tc.method+"/"+string(tc.code), func(t *testing.T) {
			h := newHarness(t)
			p := h.principal(access.Test)
			c := h.mustStart(p, "pro")
			h.prov.pay(t, c.ProviderSessionID)
			h.prov.failNext(tc.method, tc.err)
			if _, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID); !fault.Is(err, tc.code) {
				t.Fatalf("Reconcile = %v, want %s", err, tc.code)
			}
			if _, subs, grants := h.counts(); subs != 0 || grants != 0 || h.checkout(c.ID).State != billing.CheckoutOpen ||
				!h.balance(access.Test).IsZero() || len(h.jobs(billing.JobRenewal)) != 0 || h.events(billing.EventSubscriptionActivated) != 0 {
				t.Fatalf("after a failed reconcile: %d subscriptions, %d grants, checkout %s", subs, grants, h.checkout(c.ID).State)
			}
			got, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID)
			if err != nil || got.State != billing.CheckoutActivated {
				t.Fatalf("retry = %+v, %v", got, err)
			}
			if _, subs, grants := h.counts(); subs != 1 || grants != 1 || h.balance(access.Test).Cmp(credits(proCredits)) != 0 {
				t.Fatalf("after the retry: %d subscriptions, %d grants, balance %s", subs, grants, h.balance(access.Test))
			}
		})
	}
}

// TestActivationOncePerCheckout races 20 reconciles with replays of the
// checkout.session.completed webhook: one subscription, one grant, one
// audit entry, one event, one renewal job.
func TestActivationOncePerCheckout(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Test)
	c := h.mustStart(p, "pro")
	h.prov.pay(t, c.ProviderSessionID)
	payload, sig := h.prov.event("evt_completed", billing.WebhookCheckoutCompleted, map[string]any{"id": c.ProviderSessionID, "object": "checkout.session"})

	const n = 20
	var wg sync.WaitGroup
	results := make([]billing.Checkout, n)
	errs := make([]error, n+10)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID) })
	}
	for i := range 5 {
		wg.Go(func() {
			errs[n+i] = h.svc.ApplyEvent(context.Background(), h.db.eventRun, billing.ApplyPayload{Environment: access.Test,
				EventID: "evt_completed", Type: billing.WebhookCheckoutCompleted, ObjectID: c.ProviderSessionID})
		})
		wg.Go(func() {
			_, errs[n+5+i] = h.svc.ReceiveWebhook(context.Background(), h.db.webhookRun, access.Test, payload, sig)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	subID := results[0].SubscriptionID
	for i, r := range results {
		if r.State != billing.CheckoutActivated || r.SubscriptionID != subID || subID == "" {
			t.Fatalf("reconcile %d = %s %q, want activated %q", i, r.State, r.SubscriptionID, subID)
		}
	}
	if _, subs, grants := h.counts(); subs != 1 || grants != 1 {
		t.Fatalf("%d subscriptions, %d grants; want 1 and 1", subs, grants)
	}
	if b := h.balance(access.Test); b.Cmp(credits(proCredits)) != 0 {
		t.Fatalf("balance %s, want %d", b, proCredits)
	}
	if a, e, r, w := h.audits(billing.ActionSubscriptionActivated), h.events(billing.EventSubscriptionActivated),
		len(h.jobs(billing.JobRenewal)), len(h.jobs(billing.JobApplyEvent)); a != 1 || e != 1 || r != 1 || w != 1 {
		t.Fatalf("%d audit entries, %d events, %d renewal jobs, %d webhook jobs; want one each", a, e, r, w)
	}
	sub := h.sub(subID)
	if sub.State != billing.SubscriptionActive || sub.CheckoutID != c.ID || sub.Price != c.Price || sub.ProviderID == "" ||
		!sub.PeriodEnd.After(sub.PeriodStart) || sub.Scope.Environment != access.Test {
		t.Fatalf("subscription = %+v", sub)
	}
	// A test-mode activation moves the test plan only: live stays free.
	if got, live := h.workspacePlan(access.Test), h.workspacePlan(access.Live); got != "pro" || live != "free" {
		t.Fatalf("workspace plan = test %s, live %s after a test-mode checkout; want pro and free", got, live)
	}
	// An activated checkout answers without asking the provider.
	calls := h.prov.count("GetCheckout")
	if got, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID); err != nil || got.SubscriptionID != subID {
		t.Fatalf("reconcile after activation = %+v, %v", got, err)
	}
	if h.prov.count("GetCheckout") != calls {
		t.Fatal("reconcile of an activated checkout asked the provider")
	}
}

// TestGetCheckoutIsReadOnly: the browser's success route never asks the
// provider nor activates, and checkouts stay in their scope.
func TestGetCheckoutIsReadOnly(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Test)
	c := h.mustStart(p, "pro")
	h.prov.pay(t, c.ProviderSessionID)
	var got billing.Checkout
	err := h.db.run(context.Background(), func(st *memTx) (err error) {
		got, err = h.svc.GetCheckout(context.Background(), st, p, c.ID)
		return err
	})
	if err != nil || got.State != billing.CheckoutOpen || h.prov.count("GetCheckout") != 0 {
		t.Fatalf("GetCheckout = %s, %v; provider asked %d times", got.State, err, h.prov.count("GetCheckout"))
	}
	other := *p
	other.WorkspaceID = "ws_2"
	live := h.principal(access.Live)
	for _, q := range []*access.Principal{&other, live} {
		err := h.db.run(context.Background(), func(st *memTx) error {
			_, err := h.svc.GetCheckout(context.Background(), st, q, c.ID)
			return err
		})
		if !fault.Is(err, fault.NotFound) {
			t.Fatalf("GetCheckout from %s/%s = %v", q.WorkspaceID, q.Environment, err)
		}
		if _, err := h.svc.Reconcile(context.Background(), h.db.activateRun, q, c.ID); !fault.Is(err, fault.NotFound) {
			t.Fatalf("Reconcile from %s/%s = %v", q.WorkspaceID, q.Environment, err)
		}
	}
	if _, subs, _ := h.counts(); subs != 0 {
		t.Fatal("reading a checkout activated it")
	}
}

// TestReconcileExpired: an unpaid session the provider expired ends the
// checkout.
func TestReconcileExpired(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Test)
	c := h.mustStart(p, "pro")
	h.prov.expire(c.ProviderSessionID)
	for range 2 {
		got, err := h.svc.Reconcile(context.Background(), h.db.activateRun, p, c.ID)
		if !fault.Is(err, fault.Conflict) || reason(err) != billing.ReasonCheckoutExpired || got.State != billing.CheckoutExpired {
			t.Fatalf("Reconcile = %s, %v", got.State, err)
		}
	}
	if h.checkout(c.ID).State != billing.CheckoutExpired {
		t.Fatal("the checkout was not expired")
	}
}

// TestRenewalGrantsOncePerPeriod renews a subscription and runs the
// period-end job twice, with the invoice.paid webhook in between.
func TestRenewalGrantsOncePerPeriod(t *testing.T) {
	h := newHarness(t)
	sub := h.activate(h.principal(access.Test))
	end := sub.PeriodEnd
	h.clock.Set(end)
	h.prov.renew(t, sub.ProviderID, "paid")

	if err := h.runRenewal(sub.ID, end); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	if err := h.svc.ApplyEvent(context.Background(), h.db.eventRun, billing.ApplyPayload{Environment: access.Test, EventID: "evt_paid",
		Type: billing.WebhookInvoicePaid, ObjectID: "in_x", SubscriptionID: sub.ProviderID}); err != nil {
		t.Fatalf("invoice.paid: %v", err)
	}
	if err := h.runRenewal(sub.ID, end); err != nil {
		t.Fatalf("renewal again: %v", err)
	}
	got := h.sub(sub.ID)
	if got.State != billing.SubscriptionActive || !got.PeriodStart.Equal(end) || !got.PeriodEnd.Equal(end.Add(period)) {
		t.Fatalf("after renewal: %s %v..%v", got.State, got.PeriodStart, got.PeriodEnd)
	}
	if _, _, grants := h.counts(); grants != 2 || h.balance(access.Test).Cmp(credits(2*proCredits)) != 0 {
		t.Fatalf("%d grants, balance %s; want 2 and %d", grants, h.balance(access.Test), 2*proCredits)
	}
	if n := h.events(billing.EventSubscriptionRenewed); n != 1 {
		t.Fatalf("%d renewed events", n)
	}
	// The next period end is scheduled once.
	h.clock.Set(got.PeriodEnd)
	if err := h.runRenewal(sub.ID, got.PeriodEnd); err == nil {
		t.Fatal("the next period's job succeeded before the provider renewed")
	}
	if r := len(h.jobs(billing.JobRenewal)); r != 2 {
		t.Fatalf("%d renewal jobs, want 2", r)
	}
}

// TestRenewalNotSettledRetries: at the period end the provider has neither
// renewed nor ended the subscription; the job fails (to be retried) and
// changes nothing.
func TestRenewalNotSettledRetries(t *testing.T) {
	h := newHarness(t)
	sub := h.activate(h.principal(access.Test))
	h.clock.Set(sub.PeriodEnd)
	if err := h.runRenewal(sub.ID, sub.PeriodEnd); err == nil {
		t.Fatal("the renewal job completed although nothing was settled")
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionActive || !got.PeriodStart.Equal(sub.PeriodStart) {
		t.Fatalf("subscription = %s from %v", got.State, got.PeriodStart)
	}
	if _, _, grants := h.counts(); grants != 1 {
		t.Fatalf("%d grants", grants)
	}
}

// TestRenewalUnpaidInvoiceDoesNotGrant: the provider moved the period on
// (as Stripe does when it opens the renewal invoice) but the renewal
// invoice is not paid yet, so the first period's paid invoice must not
// count for the new one.
func TestRenewalUnpaidInvoiceDoesNotGrant(t *testing.T) {
	h := newHarness(t)
	sub := h.activate(h.principal(access.Test))
	h.clock.Set(sub.PeriodEnd)
	h.prov.renew(t, sub.ProviderID, "draft") // still active; invoice not finalized
	err := h.svc.ApplyEvent(context.Background(), h.db.eventRun, billing.ApplyPayload{Environment: access.Test, EventID: "evt_upd",
		Type: billing.WebhookSubscriptionUpdated, ObjectID: sub.ProviderID})
	if err != nil {
		t.Fatalf("subscription.updated: %v", err)
	}
	if got := h.sub(sub.ID); !got.PeriodStart.Equal(sub.PeriodStart) {
		t.Fatalf("the period moved to %v without a paid renewal invoice", got.PeriodStart)
	}
	if _, _, grants := h.counts(); grants != 1 {
		t.Fatalf("%d grants; the unpaid renewal was granted", grants)
	}
}

// TestUnpaidAtPeriodEndFallsBackToFree: a failed renewal payment makes the
// subscription past due; at the period end it ends unpaid and the live
// workspace is back on free, without another grant.
func TestUnpaidAtPeriodEndFallsBackToFree(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Live)
	sub := h.activate(p)
	if got := h.workspacePlan(access.Live); got != "pro" {
		t.Fatalf("workspace plan = %s after a live activation", got)
	}
	h.clock.Set(sub.PeriodEnd.Add(-time.Hour))
	h.prov.renew(t, sub.ProviderID, "open") // the payment failed: past_due
	if err := h.svc.ApplyEvent(context.Background(), h.db.eventRun, billing.ApplyPayload{Environment: access.Live, EventID: "evt_failed",
		Type: billing.WebhookInvoicePaymentFailed, ObjectID: "in_x", SubscriptionID: sub.ProviderID}); err != nil {
		t.Fatalf("invoice.payment_failed: %v", err)
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionPastDue {
		t.Fatalf("after the failed payment: %s", got.State)
	}
	if got := h.workspacePlan(access.Live); got != "pro" {
		t.Fatalf("workspace fell back before the period end: %s", got)
	}
	h.clock.Set(sub.PeriodEnd)
	if err := h.runRenewal(sub.ID, sub.PeriodEnd); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	got := h.sub(sub.ID)
	if got.State != billing.SubscriptionUnpaid || got.EndedAt == nil || !got.PeriodStart.Equal(sub.PeriodStart) {
		t.Fatalf("at period end: %s, ended %v, period %v", got.State, got.EndedAt, got.PeriodStart)
	}
	if pl := h.workspacePlan(access.Live); pl != "free" {
		t.Fatalf("workspace plan = %s, want free", pl)
	}
	var cur *billing.WorkspaceSubscription
	h.db.run(context.Background(), func(st *memTx) (err error) {
		cur, err = h.svc.Current(context.Background(), st, billing.ScopeOf(p))
		return err
	})
	if cur != nil {
		t.Fatalf("current subscription = %+v, want none", cur)
	}
	if _, _, grants := h.counts(); grants != 1 {
		t.Fatalf("%d grants; the unpaid period was granted", grants)
	}
	if n := h.audits(billing.ActionSubscriptionEnded); n != 1 {
		t.Fatalf("%d ended audit entries", n)
	}
	// The job again, and a late webhook: nothing moves.
	if err := h.runRenewal(sub.ID, sub.PeriodEnd); err != nil {
		t.Fatalf("renewal again: %v", err)
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionUnpaid || h.audits(billing.ActionSubscriptionEnded) != 1 {
		t.Fatalf("after a second run: %s", got.State)
	}
}

// TestUnpaidFallbackCancelsAtProvider: when an unpaid subscription falls
// back to free while the provider still has it live (past_due), the same
// unit of work enqueues one provider cancellation job; the job cancels at
// the provider outside any unit of work, retries on provider failures and
// is idempotent. A subscription the provider already ended enqueues none.
func TestUnpaidFallbackCancelsAtProvider(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Live)
	sub := h.activate(p)
	h.clock.Set(sub.PeriodEnd.Add(-time.Hour))
	h.prov.renew(t, sub.ProviderID, "open") // the payment failed: past_due
	h.clock.Set(sub.PeriodEnd)
	if err := h.runRenewal(sub.ID, sub.PeriodEnd); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionUnpaid {
		t.Fatalf("at period end: %s", got.State)
	}
	if err := h.runRenewal(sub.ID, sub.PeriodEnd); err != nil {
		t.Fatalf("renewal again: %v", err)
	}
	js := h.jobs(billing.JobProviderCancel)
	if len(js) != 1 || js[0].UniqueKey != billing.JobProviderCancel+":"+sub.ID {
		t.Fatalf("provider cancel jobs = %+v, want one keyed by the subscription", js)
	}
	if n := h.prov.count("CancelNow"); n != 0 {
		t.Fatalf("CancelNow called %d times inside the unit of work", n)
	}

	// The job runs after the commit, never inside a unit of work.
	h.prov.onCall = func(method string) {
		if method == "CancelNow" && !h.db.mu.TryLock() {
			t.Errorf("CancelNow called inside a unit of work")
		} else if method == "CancelNow" {
			h.db.mu.Unlock()
		}
	}
	run := func() error {
		return h.svc.ProviderCancelHandler(h.db.getRun)(context.Background(), jobs.Job{Kind: js[0].Kind, Payload: js[0].Payload})
	}
	status := func() string {
		ps, err := h.prov.GetSubscription(context.Background(), sub.ProviderID)
		if err != nil {
			t.Fatal(err)
		}
		return ps.Status
	}
	h.prov.failNext("CancelNow", errors.New("connection refused"))
	if err := run(); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("job with the provider down = %v, want PROVIDER_UNAVAILABLE (a retry)", err)
	}
	if st := status(); st != "past_due" {
		t.Fatalf("provider status after a failed attempt = %s", st)
	}
	if err := run(); err != nil {
		t.Fatalf("job retried: %v", err)
	}
	if st := status(); st != "canceled" {
		t.Fatalf("provider status after the job = %s, want canceled", st)
	}
	// Run again (a redelivered job) and with the provider answering
	// NOT_FOUND: both succeed.
	if err := run(); err != nil {
		t.Fatalf("job run again: %v", err)
	}
	h.prov.failNext("CancelNow", fault.E("fake.CancelNow", fault.NotFound, ""))
	if err := run(); err != nil {
		t.Fatalf("job with NOT_FOUND: %v", err)
	}
	if n := h.prov.count("CancelNow"); n != 4 {
		t.Fatalf("CancelNow called %d times, want 4", n)
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionUnpaid || h.audits(billing.ActionSubscriptionEnded) != 1 {
		t.Fatalf("after the provider cancellation: %s", got.State)
	}

	// A subscription the platform has not ended is never canceled at the
	// provider, even by a stray job.
	other := h.principal(access.Test)
	live := h.activate(other)
	if err := h.svc.CancelAtProvider(context.Background(), h.db.getRun, live.ID); err != nil {
		t.Fatal(err)
	}
	if n := h.prov.count("CancelNow"); n != 4 {
		t.Fatalf("CancelNow called for an active subscription")
	}

	// The provider ended it first: nothing to cancel, no job.
	h.prov.setStatus(live.ProviderID, "canceled")
	h.clock.Set(live.PeriodEnd)
	if err := h.runRenewal(live.ID, live.PeriodEnd); err != nil {
		t.Fatalf("renewal of a subscription the provider ended: %v", err)
	}
	if got := h.sub(live.ID); got.State != billing.SubscriptionCanceled {
		t.Fatalf("after the provider ended it: %s", got.State)
	}
	if n := len(h.jobs(billing.JobProviderCancel)); n != 1 {
		t.Fatalf("%d provider cancel jobs, want still 1", n)
	}
}

// TestCancelAtPeriodEnd schedules the cancellation with the provider, then
// ends the subscription at the period end.
func TestCancelAtPeriodEnd(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Live)
	sub := h.activate(p)

	other := *p
	other.WorkspaceID = "ws_2"
	if _, err := h.svc.Cancel(context.Background(), h.db.cancelRun, &other, sub.ID, "req_0"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("cancel from another workspace: %v", err)
	}
	h.prov.failNext("CancelAtPeriodEnd", errors.New("503"))
	if _, err := h.svc.Cancel(context.Background(), h.db.cancelRun, p, sub.ID, "req_1"); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("cancel with the provider down: %v", err)
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionActive || h.audits(billing.ActionSubscriptionCancelScheduled) != 0 {
		t.Fatalf("a failed cancel recorded %s", got.State)
	}

	got, err := h.svc.Cancel(context.Background(), h.db.cancelRun, p, sub.ID, "req_2")
	if err != nil || got.State != billing.SubscriptionCancelScheduled || !got.CancelAtPeriodEnd || !got.PeriodEnd.Equal(sub.PeriodEnd) {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	calls := h.prov.count("CancelAtPeriodEnd")
	if again, err := h.svc.Cancel(context.Background(), h.db.cancelRun, p, sub.ID, "req_3"); err != nil || again.State != billing.SubscriptionCancelScheduled {
		t.Fatalf("cancel again = %s, %v", again.State, err)
	}
	if h.prov.count("CancelAtPeriodEnd") != calls || h.audits(billing.ActionSubscriptionCancelScheduled) != 1 {
		t.Fatal("cancelling twice asked the provider or audited twice")
	}
	if pl := h.workspacePlan(access.Live); pl != "pro" {
		t.Fatalf("cancel took the plan away before the period end: %s", pl)
	}

	h.clock.Set(sub.PeriodEnd)
	if err := h.runRenewal(sub.ID, sub.PeriodEnd); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionCanceled || got.EndedAt == nil {
		t.Fatalf("at period end: %s", got.State)
	}
	if pl := h.workspacePlan(access.Live); pl != "free" {
		t.Fatalf("workspace plan = %s, want free", pl)
	}
	if _, err := h.svc.Cancel(context.Background(), h.db.cancelRun, p, sub.ID, "req_4"); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("cancel of an ended subscription: %v", err)
	}
}

// TestProviderCanceled: the provider ended the subscription (the
// customer.subscription.deleted webhook): it ends now and falls back.
func TestProviderCanceled(t *testing.T) {
	h := newHarness(t)
	sub := h.activate(h.principal(access.Live))
	h.prov.setStatus(sub.ProviderID, "canceled")
	if err := h.svc.ApplyEvent(context.Background(), h.db.eventRun, billing.ApplyPayload{Environment: access.Live, EventID: "evt_del",
		Type: billing.WebhookSubscriptionDeleted, ObjectID: sub.ProviderID}); err != nil {
		t.Fatal(err)
	}
	if got := h.sub(sub.ID); got.State != billing.SubscriptionCanceled || h.workspacePlan(access.Live) != "free" {
		t.Fatalf("after deletion: %s, plan %s", got.State, h.workspacePlan(access.Live))
	}
}

func TestActivateDirectDisabled(t *testing.T) {
	h := newHarness(t)
	if err := h.svc.ActivateDirect("pro"); !fault.Is(err, fault.DirectActivationDisabled) {
		t.Fatalf("ActivateDirect = %v", err)
	}
}

// TestReceiveWebhook verifies, keeps once and enqueues once; a forged
// webhook stores nothing.
func TestReceiveWebhook(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	payload, sig := h.prov.event("evt_1", billing.WebhookInvoicePaid, map[string]any{"id": "in_1", "object": "invoice",
		"parent": map[string]any{"subscription_details": map[string]any{"subscription": "sub_p1"}}})

	for name, s := range map[string]string{"forged": "v1=00", "empty": "", "other body": h.prov.sign([]byte("{}"))} {
		created, err := h.svc.ReceiveWebhook(ctx, h.db.webhookRun, access.Test, payload, s)
		if created || !fault.Is(err, fault.InvalidInput) || reason(err) != "signature" {
			t.Fatalf("%s signature: %v, %v", name, created, err)
		}
	}
	if n := len(h.jobs(billing.JobApplyEvent)); n != 0 {
		t.Fatalf("a forged webhook enqueued %d jobs", n)
	}
	for i, want := range []bool{true, false, false} {
		created, err := h.svc.ReceiveWebhook(ctx, h.db.webhookRun, access.Test, payload, sig)
		if err != nil || created != want {
			t.Fatalf("delivery %d: created %v, %v", i, created, err)
		}
	}
	var count int
	h.db.run(ctx, func(st *memTx) (err error) { count, err = st.WebhookEventCount(ctx, access.Test); return err })
	js := h.jobs(billing.JobApplyEvent)
	if count != 1 || len(js) != 1 {
		t.Fatalf("%d events kept, %d jobs; want 1 and 1", count, len(js))
	}
	var ap billing.ApplyPayload
	if err := json.Unmarshal(js[0].Payload, &ap); err != nil || ap.EventID != "evt_1" || ap.SubscriptionID != "sub_p1" ||
		ap.Environment != access.Test || ap.ObjectID != "in_1" {
		t.Fatalf("job payload = %+v, %v", ap, err)
	}
	// An unknown subscription is ignored: the checkout activates it later.
	if err := h.svc.ApplyHandler(h.db.eventRun)(ctx, jobs.Job{Kind: billing.JobApplyEvent, Payload: js[0].Payload}); err != nil {
		t.Fatalf("apply: %v", err)
	}

	noTest := h.service(billing.Providers{Live: h.prov})
	if _, err := noTest.ReceiveWebhook(ctx, h.db.webhookRun, access.Test, payload, sig); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("no test account: %v", err)
	}
}

// TestOverview reads the admin billing view after an activation.
func TestOverview(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Test)
	sub := h.activate(p)
	var ov billing.Overview
	err := h.db.run(context.Background(), func(st *memTx) (err error) {
		ov, err = h.svc.Overview(context.Background(), st, p)
		return err
	})
	if err != nil || ov.Subscription == nil || ov.Subscription.ID != sub.ID || len(ov.Invoices) != 1 || len(ov.Grants) != 1 ||
		len(ov.History) != 1 || ov.Plan.PlanID != "pro" || ov.Plan.Environment != access.Test {
		t.Fatalf("Overview = %+v, %v", ov, err)
	}
	if inv := ov.Invoices[0]; inv.Status != "paid" || inv.SubscriptionID != sub.ID || inv.Invoice.SubscriptionID != sub.ProviderID {
		t.Fatalf("invoice = %+v", inv)
	}
	if g := ov.Grants[0]; g.Credits != proCredits || !g.PeriodStart.Equal(sub.PeriodStart) ||
		g.Reference != "grant:"+billing.GrantRef(sub.ID, sub.PeriodStart) {
		t.Fatalf("grant = %+v", g)
	}
}

// TestRenewalAfterCancellationUndoneAtProvider: the owner cancels, the
// cancellation is undone at the provider (its dashboard), and the renewal
// arrives before any resume event: the subscription is active again,
// renewed, and granted once.
func TestRenewalAfterCancellationUndoneAtProvider(t *testing.T) {
	h := newHarness(t)
	p := h.principal(access.Test)
	sub := h.activate(p)
	if got, err := h.svc.Cancel(context.Background(), h.db.cancelRun, p, sub.ID, "req_cancel"); err != nil || got.State != billing.SubscriptionCancelScheduled {
		t.Fatalf("Cancel = %s, %v", got.State, err)
	}
	h.prov.resume(sub.ProviderID)
	end := sub.PeriodEnd
	h.clock.Set(end)
	h.prov.renew(t, sub.ProviderID, "paid")
	if err := h.runRenewal(sub.ID, end); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	got := h.sub(sub.ID)
	if got.State != billing.SubscriptionActive || got.CancelAtPeriodEnd || !got.PeriodStart.Equal(end) {
		t.Fatalf("after renewal: %s cancelAtPeriodEnd=%v start=%v", got.State, got.CancelAtPeriodEnd, got.PeriodStart)
	}
	if _, _, grants := h.counts(); grants != 2 {
		t.Fatalf("%d grants, want 2", grants)
	}
}
