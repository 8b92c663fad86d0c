package stripepay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/billing/stripepay"
	"github.com/creatormusic/platform/billing/stripetest"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// fakeClock is a settable clock shared by the simulator and the client.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type env struct {
	sim    *stripetest.Server
	client *stripepay.Client
	clock  *fakeClock
}

func newEnv(t *testing.T, simCfg stripetest.Config, cfg stripepay.Config) env {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)}
	simCfg.Clock = clock
	if simCfg.WebhookBackoff == 0 {
		simCfg.WebhookBackoff = time.Millisecond
	}
	sim, err := stripetest.New(simCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	if cfg.SecretKey == "" {
		cfg.SecretKey = sim.SecretKey()
	}
	cfg.WebhookSecret = sim.WebhookSecret()
	cfg.BaseURL = sim.URL()
	cfg.Clock = clock
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = urlguardtest.Client(t, sim.URL())
	}
	c, err := stripepay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return env{sim: sim, client: c, clock: clock}
}

func request(ref string) billing.CheckoutRequest {
	return billing.CheckoutRequest{
		Reference:     ref,
		CustomerEmail: "ada@example.com",
		ProductName:   "Pro (monthly)",
		Currency:      "usd",
		UnitAmount:    1900,
		Interval:      "month",
		SuccessURL:    "https://app.example.com/checkout/success?session={CHECKOUT_SESSION_ID}",
		CancelURL:     "https://app.example.com/checkout/cancel",
		Metadata:      map[string]string{"checkout": ref},
	}
}

// receiver is a webhook endpoint that verifies with the client.
type receiver struct {
	mu     sync.Mutex
	events []billing.WebhookEvent
	errs   []error
}

func (rc *receiver) handler(c *stripepay.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := c.VerifyWebhook(body, r.Header.Get("Stripe-Signature"))
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err != nil {
			rc.errs = append(rc.errs, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.events = append(rc.events, ev)
	})
}

func (rc *receiver) types() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, e := range rc.events {
		out = append(out, e.Type)
	}
	return out
}

func drain(t *testing.T, sim *stripetest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sim.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCheckoutLifecycle(t *testing.T) {
	e := newEnv(t, stripetest.Config{}, stripepay.Config{})
	rc := &receiver{}
	hook := httptest.NewServer(rc.handler(e.client))
	defer hook.Close()
	if err := e.sim.SetWebhookURL(hook.URL); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := e.clock.Now()

	cs, err := e.client.CreateCheckout(ctx, request("chk_1"))
	if err != nil {
		t.Fatal(err)
	}
	if cs.Status != "open" || cs.PaymentStatus != "unpaid" || cs.ClientReference != "chk_1" ||
		cs.AmountTotal != 1900 || cs.Currency != "usd" || !strings.HasPrefix(cs.ID, "cs_test_") {
		t.Fatalf("created session = %+v", cs)
	}
	if !strings.HasPrefix(cs.URL, e.sim.URL()+"/pay/") {
		t.Fatalf("url = %q", cs.URL)
	}

	// Pay on the hosted page as a browser would.
	page, err := http.Get(cs.URL)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.Contains(string(html), ">Pay</button>") {
		t.Fatalf("page %d: %s", page.StatusCode, html)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.PostForm(cs.URL, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := "https://app.example.com/checkout/success?session=" + cs.ID; res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
		t.Fatalf("pay: %d to %q, want 303 to %q", res.StatusCode, res.Header.Get("Location"), want)
	}

	got, err := e.client.GetCheckout(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "complete" || got.PaymentStatus != "paid" || got.CustomerID == "" || got.SubscriptionID == "" {
		t.Fatalf("paid session = %+v", got)
	}
	if got.Subscription == nil {
		t.Fatal("subscription not expanded")
	}
	wantEnd := start.AddDate(0, 1, 0)
	if sub := got.Subscription; sub.Status != "active" || !sub.CurrentPeriodStart.Equal(start) ||
		!sub.CurrentPeriodEnd.Equal(wantEnd) || sub.CustomerID != got.CustomerID {
		t.Fatalf("expanded subscription = %+v", sub)
	}

	sub, err := e.client.GetSubscription(ctx, got.SubscriptionID)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Status != "active" || sub.LatestInvoiceID == "" || sub.CancelAtPeriodEnd {
		t.Fatalf("subscription = %+v", sub)
	}

	// A renewal one period later. Deliveries under way are drained first:
	// signed before the clock moves, they would arrive stale.
	drain(t, e.sim)
	e.clock.Add(wantEnd.Sub(start))
	if _, err := e.sim.Renew(sub.ID, true); err != nil {
		t.Fatal(err)
	}
	sub2, err := e.client.GetSubscription(ctx, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !sub2.CurrentPeriodStart.Equal(wantEnd) || !sub2.CurrentPeriodEnd.Equal(wantEnd.AddDate(0, 1, 0)) {
		t.Fatalf("renewed period %s..%s", sub2.CurrentPeriodStart, sub2.CurrentPeriodEnd)
	}

	invs, err := e.client.ListInvoices(ctx, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 2 {
		t.Fatalf("invoices = %+v", invs)
	}
	if in := invs[0]; in.BillingReason != "subscription_cycle" || in.Status != "paid" || in.AmountPaid != 1900 ||
		in.SubscriptionID != sub.ID || !in.PeriodStart.Equal(wantEnd) || in.ID != sub2.LatestInvoiceID {
		t.Fatalf("newest invoice = %+v", in)
	}
	if in := invs[1]; in.BillingReason != "subscription_create" || in.Status != "paid" || in.AmountDue != 1900 ||
		in.Currency != "usd" || !in.PeriodStart.Equal(start) || !in.PeriodEnd.Equal(wantEnd) {
		t.Fatalf("first invoice = %+v", in)
	}

	canceled, err := e.client.CancelAtPeriodEnd(ctx, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !canceled.CancelAtPeriodEnd || canceled.Status != "active" {
		t.Fatalf("cancel = %+v", canceled)
	}
	if _, err := e.client.CancelAtPeriodEnd(ctx, sub.ID); err != nil {
		t.Fatalf("second cancel: %v", err)
	}
	if err := e.sim.EndPeriod(sub.ID); err != nil {
		t.Fatal(err)
	}
	ended, err := e.client.GetSubscription(ctx, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != "canceled" {
		t.Fatalf("ended = %+v", ended)
	}

	drain(t, e.sim)
	rc.mu.Lock()
	errs := rc.errs
	rc.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("webhooks rejected: %v", errs)
	}
	seen := map[string]bool{}
	for _, typ := range rc.types() {
		seen[typ] = true
	}
	for _, want := range []string{"checkout.session.completed", "customer.subscription.created", "invoice.paid",
		"customer.subscription.updated", "customer.subscription.deleted"} {
		if !seen[want] {
			t.Errorf("no %s webhook; got %v", want, rc.types())
		}
	}
	for _, ev := range e.sim.Events() {
		if !ev.Delivered() {
			t.Errorf("event %s %s not delivered: %+v", ev.Type, ev.ID, ev.Attempts)
		}
	}
}

func TestVerifyWebhook(t *testing.T) {
	e := newEnv(t, stripetest.Config{}, stripepay.Config{})
	ctx := context.Background()
	cs, err := e.client.CreateCheckout(ctx, request("chk_hook"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sim.Pay(cs.ID); err != nil {
		t.Fatal(err)
	}

	payload, header, err := e.sim.SignedWebhook("checkout.session.completed", cs.ID, stripetest.WebhookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.client.VerifyWebhook(payload, header)
	if err != nil {
		t.Fatalf("valid: %v", err)
	}
	if ev.Type != "checkout.session.completed" || ev.ObjectID != cs.ID || !strings.HasPrefix(ev.ID, "evt_") ||
		!ev.Created.Equal(e.clock.Now()) || string(ev.Payload) != string(payload) {
		t.Fatalf("event = %+v", ev)
	}

	build := func(opts stripetest.WebhookOptions) ([]byte, string) {
		p, h, err := e.sim.SignedWebhook("checkout.session.completed", cs.ID, opts)
		if err != nil {
			t.Fatal(err)
		}
		return p, h
	}
	forgedP, forgedH := build(stripetest.WebhookOptions{Signing: stripetest.SignForged})
	staleP, staleH := build(stripetest.WebhookOptions{Signing: stripetest.SignStale, StaleBy: 6 * time.Minute})
	oldP, oldH := build(stripetest.WebhookOptions{APIVersion: "2025-01-27.acacia"})
	tamperedP := []byte(strings.Replace(string(payload), `"livemode":false`, `"livemode":true`, 1))

	cases := []struct {
		name    string
		payload []byte
		header  string
		reason  string
	}{
		{"forged", forgedP, forgedH, "signature"},
		{"stale", staleP, staleH, "timestamp"},
		{"api version", oldP, oldH, "api_version"},
		{"tampered", tamperedP, header, "signature"},
		{"unsigned", payload, "", "signature"},
		{"garbage header", payload, "t=abc", "signature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.client.VerifyWebhook(tc.payload, tc.header)
			checkFault(t, err, fault.CallbackFailed, "reason", tc.reason)
		})
	}

	// The same valid event turns stale when the injected clock moves past
	// the tolerance.
	e.clock.Add(5*time.Minute + time.Second)
	_, err = e.client.VerifyWebhook(payload, header)
	checkFault(t, err, fault.CallbackFailed, "reason", "timestamp")
}

func TestVerifyWebhookWithoutSecret(t *testing.T) {
	c, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_abc123"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.VerifyWebhook([]byte(`{}`), "t=1,v1=00")
	checkFault(t, err, fault.CallbackFailed, "reason", "not_configured")
}

// checkFault asserts err's code and, when key is set, one detail.
func checkFault(t *testing.T, err error, code fault.Code, key string, value any) {
	t.Helper()
	if got := fault.CodeOf(err); got != code {
		t.Fatalf("code = %q (%v), want %q", got, err, code)
	}
	if key == "" {
		return
	}
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Details[key] != value {
		t.Fatalf("details = %v, want %s=%v", fe.Details, key, value)
	}
}

func TestErrorMapping(t *testing.T) {
	e := newEnv(t, stripetest.Config{}, stripepay.Config{Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	cs, err := e.client.CreateCheckout(ctx, request("chk_err"))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("5xx", func(t *testing.T) {
		e.sim.FailNext(stripetest.GetCheckout, http.StatusServiceUnavailable)
		_, err := e.client.GetCheckout(ctx, cs.ID)
		checkFault(t, err, fault.ProviderUnavailable, "retryable", true)
		if _, err := e.client.GetCheckout(ctx, cs.ID); err != nil {
			t.Fatalf("after the fault: %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		e.sim.DelayNext(stripetest.GetCheckout, 5*time.Second)
		_, err := e.client.GetCheckout(ctx, cs.ID)
		checkFault(t, err, fault.ProviderTimeout, "retryable", true)
	})
	t.Run("caller deadline", func(t *testing.T) {
		e.sim.DelayNext(stripetest.ListInvoices, 5*time.Second)
		dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := e.client.ListInvoices(dctx, "sub_x")
		checkFault(t, err, fault.ProviderTimeout, "", nil)
	})
	t.Run("not found", func(t *testing.T) {
		_, err := e.client.GetCheckout(ctx, "cs_test_nope")
		checkFault(t, err, fault.NotFound, "", nil)
		_, err = e.client.GetSubscription(ctx, "sub_nope")
		checkFault(t, err, fault.NotFound, "", nil)
		_, err = e.client.CancelAtPeriodEnd(ctx, "sub_nope")
		checkFault(t, err, fault.NotFound, "", nil)
	})
	t.Run("rate limited", func(t *testing.T) {
		e.sim.FailNext(stripetest.GetSubscription, http.StatusTooManyRequests)
		_, err := e.client.GetSubscription(ctx, "sub_x")
		checkFault(t, err, fault.RateLimited, "retryable", true)
	})
	t.Run("invalid request", func(t *testing.T) {
		e.sim.FailNext(stripetest.CreateCheckout, http.StatusBadRequest)
		_, err := e.client.CreateCheckout(ctx, request("chk_bad"))
		checkFault(t, err, fault.InvalidInput, "", nil)
	})
	t.Run("refused locally", func(t *testing.T) {
		r := request("chk_local")
		r.Interval = "fortnight"
		_, err := e.client.CreateCheckout(ctx, r)
		checkFault(t, err, fault.InvalidInput, "field", "interval")
		_, err = e.client.GetSubscription(ctx, "../v1/customers")
		checkFault(t, err, fault.InvalidInput, "field", "id")
	})
	t.Run("bad key", func(t *testing.T) {
		const key = "sk_test_wrongwrongwrong1234"
		bad, err := stripepay.New(stripepay.Config{SecretKey: key, BaseURL: e.sim.URL(), HTTPClient: urlguardtest.Client(t, e.sim.URL())})
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.GetCheckout(ctx, cs.ID)
		checkFault(t, err, fault.ProviderCredentialInvalid, "", nil)
		if strings.Contains(err.Error(), key) {
			t.Fatalf("the error shows the key: %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ln := httptest.NewServer(http.NotFoundHandler())
		u := ln.URL
		ln.Close()
		c, err := stripepay.New(stripepay.Config{SecretKey: e.sim.SecretKey(), BaseURL: u, HTTPClient: urlguardtest.Client(t, u)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetSubscription(ctx, "sub_x")
		checkFault(t, err, fault.ProviderUnavailable, "retryable", true)
	})
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []stripepay.Config{
		{},
		{SecretKey: "pk_test_abc"},
		{SecretKey: "sk_test_abc", BaseURL: "not a url"},
	} {
		_, err := stripepay.New(cfg)
		checkFault(t, err, fault.InvalidInput, "", nil)
		if cfg.SecretKey != "" && strings.Contains(err.Error(), cfg.SecretKey) {
			t.Fatalf("the error shows the key: %v", err)
		}
	}
}

// TestOutboundPolicy: without an HTTPClient the adapter refuses a base URL
// the URL guard refuses; a guarded client that does not allow the address
// refuses before sending, as PROVIDER_UNAVAILABLE (address_refused).
func TestOutboundPolicy(t *testing.T) {
	for base, reason := range map[string]string{
		"http://api.stripe.com":           urlguard.ReasonScheme,
		"https://127.0.0.1:12111":         urlguard.ReasonPrivateAddress,
		"https://192.168.0.10":            urlguard.ReasonPrivateAddress,
		"https://stripe.internal":         urlguard.ReasonBlockedHost,
		"https://u:p@api.stripe.com":      urlguard.ReasonCredentials,
		"https://api.stripe.com.:443/v1/": urlguard.ReasonHostSpelling,
	} {
		_, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_abc123", BaseURL: base})
		checkFault(t, err, fault.InvalidInput, "reason", reason)
	}
	e := newEnv(t, stripetest.Config{}, stripepay.Config{})
	c, err := stripepay.New(stripepay.Config{SecretKey: e.sim.SecretKey(), BaseURL: e.sim.URL(), HTTPClient: urlguardtest.Client(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateCheckout(context.Background(), request("chk_refused"))
	checkFault(t, err, fault.ProviderUnavailable, "reason", "address_refused")
	if _, err := e.client.GetCheckout(context.Background(), "cs_none"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("the allowed client: %v, want NOT_FOUND from the simulator", err)
	}
}

func TestIdempotentCreate(t *testing.T) {
	e := newEnv(t, stripetest.Config{}, stripepay.Config{})
	ctx := context.Background()

	// A create that failed with 5xx leaves nothing behind; the retry
	// converges with later duplicates, even concurrent ones.
	e.sim.FailNext(stripetest.CreateCheckout, http.StatusInternalServerError)
	if _, err := e.client.CreateCheckout(ctx, request("chk_same")); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("first create: %v", err)
	}
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			cs, err := e.client.CreateCheckout(ctx, request("chk_same"))
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = cs.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("ids differ: %v", ids)
		}
	}

	other := request("chk_same")
	other.UnitAmount = 2900
	_, err := e.client.CreateCheckout(ctx, other)
	checkFault(t, err, fault.Conflict, "", nil)

	fresh, err := e.client.CreateCheckout(ctx, request("chk_other"))
	if err != nil {
		t.Fatal(err)
	}
	if fresh.ID == ids[0] {
		t.Fatal("another reference reused the session")
	}
}

func TestFailedRenewal(t *testing.T) {
	e := newEnv(t, stripetest.Config{}, stripepay.Config{})
	ctx := context.Background()
	cs, err := e.client.CreateCheckout(ctx, request("chk_fail"))
	if err != nil {
		t.Fatal(err)
	}
	subID, err := e.sim.Pay(cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sim.Renew(subID, false); err != nil {
		t.Fatal(err)
	}
	sub, err := e.client.GetSubscription(ctx, subID)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Status != "past_due" {
		t.Fatalf("status = %s", sub.Status)
	}
	invs, err := e.client.ListInvoices(ctx, subID)
	if err != nil {
		t.Fatal(err)
	}
	if invs[0].Status != "open" || invs[0].AmountPaid != 0 || invs[0].AmountDue != 1900 {
		t.Fatalf("failed invoice = %+v", invs[0])
	}
	if err := e.sim.EndPeriod(subID); err != nil {
		t.Fatal(err)
	}
	if sub, _ = e.client.GetSubscription(ctx, subID); sub.Status != "canceled" {
		t.Fatalf("after the period = %+v", sub)
	}
}

// BenchmarkVerifyWebhook measures one signature, tolerance and api_version
// check plus the event decode: the adapter's share of a webhook receipt.
func BenchmarkVerifyWebhook(b *testing.B) {
	clock := &fakeClock{t: time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)}
	sim, err := stripetest.New(stripetest.Config{Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	c, err := stripepay.New(stripepay.Config{
		SecretKey: sim.SecretKey(), WebhookSecret: sim.WebhookSecret(), BaseURL: sim.URL(), Clock: clock,
		HTTPClient: urlguardtest.Client(b, sim.URL()),
	})
	if err != nil {
		b.Fatal(err)
	}
	cs, err := c.CreateCheckout(context.Background(), request("chk_bench"))
	if err != nil {
		b.Fatal(err)
	}
	subID, err := sim.Pay(cs.ID)
	if err != nil {
		b.Fatal(err)
	}
	payload, header, err := sim.SignedWebhook("customer.subscription.updated", subID, stripetest.WebhookOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, err := c.VerifyWebhook(payload, header); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCancelNow: a past_due subscription is canceled immediately at the
// simulator (DELETE /v1/subscriptions/{id}) with customer.subscription.deleted
// sent; canceling it again succeeds; a 5xx is retryable; an unknown
// subscription is NOT_FOUND.
func TestCancelNow(t *testing.T) {
	e := newEnv(t, stripetest.Config{}, stripepay.Config{})
	rc := &receiver{}
	hook := httptest.NewServer(rc.handler(e.client))
	defer hook.Close()
	if err := e.sim.SetWebhookURL(hook.URL); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := e.client.CreateCheckout(ctx, request("chk_cancel_now"))
	if err != nil {
		t.Fatal(err)
	}
	subID, err := e.sim.Pay(cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sim.Renew(subID, false); err != nil {
		t.Fatal(err)
	}

	e.sim.FailNext(stripetest.CancelSubscription, http.StatusServiceUnavailable)
	_, err = e.client.CancelNow(ctx, subID)
	checkFault(t, err, fault.ProviderUnavailable, "retryable", true)
	if sub, err := e.client.GetSubscription(ctx, subID); err != nil || sub.Status != "past_due" {
		t.Fatalf("after a failed cancel = %+v, %v", sub, err)
	}

	sub, err := e.client.CancelNow(ctx, subID)
	if err != nil {
		t.Fatal(err)
	}
	if sub.ID != subID || sub.Status != "canceled" {
		t.Fatalf("cancel now = %+v", sub)
	}
	again, err := e.client.CancelNow(ctx, subID)
	if err != nil {
		t.Fatalf("second cancel: %v", err)
	}
	if again.Status != "canceled" {
		t.Fatalf("second cancel = %+v", again)
	}
	if got, err := e.client.GetSubscription(ctx, subID); err != nil || got.Status != "canceled" {
		t.Fatalf("after cancel = %+v, %v", got, err)
	}
	_, err = e.client.CancelNow(ctx, "sub_nope")
	checkFault(t, err, fault.NotFound, "", nil)

	drain(t, e.sim)
	rc.mu.Lock()
	errs := rc.errs
	rc.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("webhooks rejected: %v", errs)
	}
	deleted := 0
	for _, typ := range rc.types() {
		if typ == "customer.subscription.deleted" {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("customer.subscription.deleted webhooks = %d, want 1 (types %v)", deleted, rc.types())
	}
}
