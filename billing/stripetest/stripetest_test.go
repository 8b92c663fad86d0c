package stripetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/billing/stripetest"
	"github.com/stripe/stripe-go/v85"
)

func start(t *testing.T, cfg stripetest.Config) *stripetest.Server {
	t.Helper()
	if cfg.WebhookBackoff == 0 {
		cfg.WebhookBackoff = time.Millisecond
	}
	s, err := stripetest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// client is a stripe-go client on the simulator, built without globals.
func client(s *stripetest.Server, key string) *stripe.Client {
	return stripe.NewClient(key, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL:               stripe.String(s.URL()),
		MaxNetworkRetries: stripe.Int64(0),
		EnableTelemetry:   stripe.Bool(false),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
}

func createSession(t *testing.T, sc *stripe.Client, ref string) *stripe.CheckoutSession {
	t.Helper()
	p := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("subscription"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String("eur"),
				UnitAmount:  stripe.Int64(990),
				Recurring:   &stripe.CheckoutSessionCreateLineItemPriceDataRecurringParams{Interval: stripe.String("month")},
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Starter")},
			},
		}},
		ClientReferenceID: stripe.String(ref),
		SuccessURL:        stripe.String("https://example.com/ok"),
	}
	p.SetIdempotencyKey(ref)
	cs, err := sc.V1CheckoutSessions.Create(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func drain(t *testing.T, s *stripetest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// stripeReceiver verifies webhooks with stripe-go's own ConstructEvent
// (wall-clock tolerance, API version check).
type stripeReceiver struct {
	secret string
	mu     sync.Mutex
	ok     []stripe.Event
	failed int
}

func (rc *stripeReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ev, err := stripe.ConstructEvent(body, r.Header.Get("Stripe-Signature"), rc.secret)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		rc.failed++
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.ok = append(rc.ok, ev)
}

func TestWebhooksSignedAsStripe(t *testing.T) {
	s := start(t, stripetest.Config{})
	rc := &stripeReceiver{secret: s.WebhookSecret()}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	if err := s.SetWebhookURL(hook.URL); err != nil {
		t.Fatal(err)
	}
	sc := client(s, s.SecretKey())
	cs := createSession(t, sc, "ref_1")
	subID, err := s.Pay(cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.failed != 0 || len(rc.ok) != 3 {
		t.Fatalf("verified %d, failed %d", len(rc.ok), rc.failed)
	}
	types := map[stripe.EventType]string{}
	for _, ev := range rc.ok {
		types[ev.Type] = ev.Data.Object["id"].(string)
		if ev.APIVersion != stripe.APIVersion || ev.Livemode || !strings.HasPrefix(ev.ID, "evt_") {
			t.Errorf("event %+v", ev)
		}
	}
	if types["checkout.session.completed"] != cs.ID || types["customer.subscription.created"] != subID ||
		!strings.HasPrefix(types["invoice.paid"], "in_") {
		t.Fatalf("types = %v", types)
	}
	// The subscription in the event decodes with stripe-go: periods on items.
	for _, ev := range rc.ok {
		if ev.Type != "customer.subscription.created" {
			continue
		}
		var sub stripe.Subscription
		if err := json.Unmarshal(ev.Data.Raw, &sub); err != nil {
			t.Fatal(err)
		}
		it := sub.Items.Data[0]
		if sub.Status != "active" || it.CurrentPeriodEnd <= it.CurrentPeriodStart || it.Price.Recurring.Interval != "month" {
			t.Fatalf("subscription = %+v, item %+v", sub, it)
		}
	}
}

func TestWebhookRetriesAreBounded(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		calls[ev.ID]++
		n := calls[ev.ID]
		mu.Unlock()
		switch {
		case ev.Type == "invoice.paid": // never accepted
			w.WriteHeader(http.StatusInternalServerError)
		case n < 3: // accepted on the third attempt
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer hook.Close()
	s := start(t, stripetest.Config{WebhookURL: hook.URL, WebhookAttempts: 4})
	cs := createSession(t, client(s, s.SecretKey()), "ref_retry")
	if _, err := s.Pay(cs.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	for _, ev := range s.Events() {
		switch ev.Type {
		case "invoice.paid":
			if len(ev.Attempts) != 4 || ev.Delivered() {
				t.Errorf("%s: %d attempts, delivered %v", ev.Type, len(ev.Attempts), ev.Delivered())
			}
		default:
			if len(ev.Attempts) != 3 || !ev.Delivered() {
				t.Errorf("%s: %d attempts, delivered %v", ev.Type, len(ev.Attempts), ev.Delivered())
			}
		}
		if sig := ev.Attempts[0].Signature; !strings.HasPrefix(sig, "t=") || !strings.Contains(sig, ",v1=") {
			t.Errorf("signature %q", sig)
		}
	}
}

func TestReplayAndSendWebhook(t *testing.T) {
	rc := &stripeReceiver{}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	s := start(t, stripetest.Config{WebhookURL: hook.URL})
	rc.secret = s.WebhookSecret()
	cs := createSession(t, client(s, s.SecretKey()), "ref_replay")
	subID, err := s.Pay(cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if err := s.ReplayLastWebhook(); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	evs := s.Events()
	last := evs[len(evs)-1]
	rc.mu.Lock()
	if n := len(rc.ok); n != 4 || rc.ok[3].ID != last.ID {
		t.Fatalf("replay: %d events, last %v", n, rc.ok[len(rc.ok)-1].ID)
	}
	rc.mu.Unlock()
	if len(evs) != 3 || len(last.Attempts) != 2 {
		t.Fatalf("%d events; replayed event attempts = %d", len(evs), len(last.Attempts))
	}

	for _, tc := range []struct {
		signing stripetest.Signing
		status  int
	}{
		{stripetest.SignValid, 200},
		{stripetest.SignForged, 400},
		{stripetest.SignStale, 400},
	} {
		ev, err := s.SendWebhook("customer.subscription.updated", subID, stripetest.WebhookOptions{Signing: tc.signing})
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.Attempts[0].Status; got != tc.status {
			t.Errorf("signing %d: status %d, want %d", tc.signing, got, tc.status)
		}
	}
	if _, err := s.SendWebhook("invoice.paid", "in_missing", stripetest.WebhookOptions{}); !errors.Is(err, stripetest.ErrNotFound) {
		t.Fatalf("missing object: %v", err)
	}
}

// raw makes a form request and decodes the JSON answer.
func raw(t *testing.T, method, u, key string, form url.Values, header map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return res, v
}

func errType(v map[string]any) (typ, code string) {
	e, _ := v["error"].(map[string]any)
	typ, _ = e["type"].(string)
	code, _ = e["code"].(string)
	return typ, code
}

func sessionForm(amount string) url.Values {
	return url.Values{
		"mode":                                           {"subscription"},
		"success_url":                                    {"https://example.com/ok"},
		"line_items[0][quantity]":                        {"1"},
		"line_items[0][price_data][currency]":            {"usd"},
		"line_items[0][price_data][unit_amount]":         {amount},
		"line_items[0][price_data][recurring][interval]": {"year"},
		"line_items[0][price_data][product_data][name]":  {"Studio"},
	}
}

func TestWireErrorsAndIdempotency(t *testing.T) {
	s := start(t, stripetest.Config{})
	base := s.URL() + "/v1/checkout/sessions"

	res, v := raw(t, "POST", base, "", sessionForm("100"), nil)
	if typ, _ := errType(v); res.StatusCode != 401 || typ != "invalid_request_error" || res.Header.Get("Request-Id") == "" {
		t.Fatalf("no key: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "POST", base, "sk_test_other000000000000", sessionForm("100"), nil)
	if res.StatusCode != 401 || strings.Contains(v["error"].(map[string]any)["message"].(string), "other0000") {
		t.Fatalf("wrong key: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "GET", s.URL()+"/v1/nothing", s.SecretKey(), nil, nil)
	if typ, _ := errType(v); res.StatusCode != 404 || typ != "invalid_request_error" {
		t.Fatalf("unknown url: %d %v", res.StatusCode, v)
	}
	f := sessionForm("100")
	f.Set("payment_method_types[0]", "card")
	res, v = raw(t, "POST", base, s.SecretKey(), f, nil)
	if _, code := errType(v); res.StatusCode != 400 || code != "parameter_unknown" {
		t.Fatalf("unknown param: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "GET", base+"/cs_test_missing", s.SecretKey(), nil, nil)
	if _, code := errType(v); res.StatusCode != 404 || code != "resource_missing" {
		t.Fatalf("missing: %d %v", res.StatusCode, v)
	}

	idem := map[string]string{"Idempotency-Key": "key-1"}
	res, first := raw(t, "POST", base, s.SecretKey(), sessionForm("100"), idem)
	if res.StatusCode != 200 || first["object"] != "checkout.session" || first["livemode"] != false {
		t.Fatalf("create: %d %v", res.StatusCode, first)
	}
	res, again := raw(t, "POST", base, s.SecretKey(), sessionForm("100"), idem)
	if res.StatusCode != 200 || again["id"] != first["id"] || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %v", res.StatusCode, again)
	}
	res, v = raw(t, "POST", base, s.SecretKey(), sessionForm("200"), idem)
	if typ, _ := errType(v); res.StatusCode != 400 || typ != "idempotency_error" {
		t.Fatalf("other params: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "GET", base+"/"+first["id"].(string)+"?expand[]=subscription", s.SecretKey(), nil, nil)
	if res.StatusCode != 200 || v["subscription"] != nil {
		t.Fatalf("get unpaid: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "GET", base+"/"+first["id"].(string)+"?expand[]=line_items.data.price.nonsense", s.SecretKey(), nil, nil)
	if res.StatusCode != 400 {
		t.Fatalf("bad expand: %d %v", res.StatusCode, v)
	}
}

func TestSimControlRoutes(t *testing.T) {
	s := start(t, stripetest.Config{})
	sc := client(s, s.SecretKey())
	cs := createSession(t, sc, "ref_sim")
	res, v := raw(t, "POST", s.URL()+"/_sim/checkout/sessions/"+cs.ID+"/pay", s.SecretKey(), nil, nil)
	if res.StatusCode != 200 {
		t.Fatalf("pay: %d %v", res.StatusCode, v)
	}
	subID := v["subscription"].(string)
	res, v = raw(t, "POST", s.URL()+"/_sim/checkout/sessions/"+cs.ID+"/pay", s.SecretKey(), nil, nil)
	if res.StatusCode != 400 {
		t.Fatalf("pay twice: %d %v", res.StatusCode, v)
	}
	if res, v = raw(t, "POST", s.URL()+"/_sim/subscriptions/"+subID+"/renew", s.SecretKey(), url.Values{"paid": {"false"}}, nil); res.StatusCode != 200 {
		t.Fatalf("renew: %d %v", res.StatusCode, v)
	}
	sub, err := sc.V1Subscriptions.Retrieve(context.Background(), subID, nil)
	if err != nil || sub.Status != "past_due" {
		t.Fatalf("after failed renewal: %v %v", sub.Status, err)
	}
	if res, v = raw(t, "POST", s.URL()+"/_sim/subscriptions/"+subID+"/end_period", s.SecretKey(), nil, nil); res.StatusCode != 200 {
		t.Fatalf("end period: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "GET", s.URL()+"/_sim/events", s.SecretKey(), nil, nil)
	var types []string
	for _, e := range v["data"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	want := "checkout.session.completed customer.subscription.created invoice.paid invoice.payment_failed customer.subscription.updated customer.subscription.deleted"
	if res.StatusCode != 200 || strings.Join(types, " ") != want {
		t.Fatalf("events: %v", types)
	}
	if res, _ = raw(t, "GET", s.URL()+"/_sim/events", "", nil, nil); res.StatusCode != 401 {
		t.Fatalf("events without key: %d", res.StatusCode)
	}
}

func TestSimControlRoutesRefuseAsTheAPI(t *testing.T) {
	s := start(t, stripetest.Config{})
	res, v := raw(t, "GET", s.URL()+"/_sim/events", "sk_test_"+strings.Repeat("x", 32), nil, nil)
	if typ, code := errType(v); res.StatusCode != 401 || typ != "invalid_request_error" || code != "api_key_invalid" || res.Header.Get("Request-Id") == "" {
		t.Fatalf("events with a wrong key: %d %v %q", res.StatusCode, v, res.Header.Get("Request-Id"))
	}
	res, v = raw(t, "POST", s.URL()+"/_sim/nothing", s.SecretKey(), nil, nil)
	if typ, _ := errType(v); res.StatusCode != 404 || typ != "invalid_request_error" {
		t.Fatalf("an unknown control route: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "GET", s.URL()+"/_sim/events", s.SecretKey(), nil, nil)
	if res.StatusCode != 200 || v["object"] != "list" || res.Header.Get("Request-Id") == "" {
		t.Fatalf("events: %d %v", res.StatusCode, v)
	}
}

func TestInvoicePagination(t *testing.T) {
	s := start(t, stripetest.Config{})
	sc := client(s, s.SecretKey())
	cs := createSession(t, sc, "ref_pages")
	subID, err := s.Pay(cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	for range 11 {
		if _, err := s.AdvanceRenewal(subID); err != nil {
			t.Fatal(err)
		}
	}
	p := &stripe.InvoiceListParams{Subscription: stripe.String(subID)}
	p.Limit = stripe.Int64(5)
	var prev int64 = 1 << 62
	n := 0
	for inv, err := range sc.V1Invoices.List(context.Background(), p).All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		start := inv.Lines.Data[0].Period.Start
		if start >= prev {
			t.Fatalf("not newest first at %d", n)
		}
		prev = start
		n++
	}
	if n != 12 {
		t.Fatalf("listed %d invoices, want 12", n)
	}
}

// stepClock is a settable clock.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestSessionExpires(t *testing.T) {
	clock := &stepClock{t: time.Unix(1_800_000_000, 0)}
	s := start(t, stripetest.Config{Clock: clock})
	sc := client(s, s.SecretKey())
	cs := createSession(t, sc, "ref_expire")
	if cs.Created != clock.Now().Unix() || cs.ExpiresAt != cs.Created+24*3600 {
		t.Fatalf("created %d expires %d", cs.Created, cs.ExpiresAt)
	}
	clock.Add(25 * time.Hour)
	got, err := sc.V1CheckoutSessions.Retrieve(context.Background(), cs.ID, nil)
	if err != nil || got.Status != "expired" {
		t.Fatalf("status %v, %v", got.Status, err)
	}
	if _, err := s.Pay(cs.ID); !errors.Is(err, stripetest.ErrState) {
		t.Fatalf("pay expired: %v", err)
	}
}

// TestCloseStopsEverything: Close returns while a webhook waits for a long
// backoff and a request waits on a long injected delay.
func TestCloseStopsEverything(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer hook.Close()
	s, err := stripetest.New(stripetest.Config{WebhookURL: hook.URL, WebhookBackoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sc := client(s, s.SecretKey())
	cs := createSession(t, sc, "ref_close")
	if _, err := s.Pay(cs.ID); err != nil {
		t.Fatal(err)
	}
	s.DelayNext(stripetest.GetCheckout, time.Hour)
	done := make(chan error, 1)
	go func() {
		_, err := sc.V1CheckoutSessions.Retrieve(context.Background(), cs.ID, nil)
		done <- err
	}()
	for {
		// Wait until each event made its first attempt.
		all := true
		for _, ev := range s.Events() {
			all = all && len(ev.Attempts) > 0
		}
		if all {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if _, err := s.Pay(cs.ID); !errors.Is(err, stripetest.ErrClosed) {
		t.Fatalf("pay after close: %v", err)
	}
}

func TestNewRefusesLiveKey(t *testing.T) {
	if _, err := stripetest.New(stripetest.Config{SecretKey: "sk_live_abc"}); err == nil {
		t.Fatal("a live key was accepted")
	}
}

// TestCancelSubscriptionWire: DELETE /v1/subscriptions/{id} is as strict as
// the other endpoints (unknown parameters, prorate=true and unknown ids are
// refused), cancels with canceled_at and ended_at, sends
// customer.subscription.deleted once, and refuses a second cancel with 400.
func TestCancelSubscriptionWire(t *testing.T) {
	s := start(t, stripetest.Config{})
	cs := createSession(t, client(s, s.SecretKey()), "ref_delete")
	subID, err := s.Pay(cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	u := s.URL() + "/v1/subscriptions/" + subID
	res, v := raw(t, "DELETE", u, s.SecretKey(), url.Values{"refund": {"true"}}, nil)
	if _, code := errType(v); res.StatusCode != 400 || code != "parameter_unknown" {
		t.Fatalf("unknown param: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "DELETE", u, s.SecretKey(), url.Values{"prorate": {"true"}}, nil)
	if res.StatusCode != 400 {
		t.Fatalf("prorate=true: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "DELETE", s.URL()+"/v1/subscriptions/sub_missing", s.SecretKey(), nil, nil)
	if _, code := errType(v); res.StatusCode != 404 || code != "resource_missing" {
		t.Fatalf("missing: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "DELETE", u, s.SecretKey(), url.Values{"prorate": {"false"}, "invoice_now": {"false"}}, nil)
	if res.StatusCode != 200 || v["status"] != "canceled" || v["canceled_at"] == nil || v["ended_at"] == nil {
		t.Fatalf("cancel: %d %v", res.StatusCode, v)
	}
	res, v = raw(t, "DELETE", u, s.SecretKey(), nil, nil)
	if typ, _ := errType(v); res.StatusCode != 400 || typ != "invalid_request_error" {
		t.Fatalf("cancel twice: %d %v", res.StatusCode, v)
	}
	deleted := 0
	for _, ev := range s.Events() {
		if ev.Type == "customer.subscription.deleted" && ev.ObjectID == subID {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("customer.subscription.deleted events = %d, want 1", deleted)
	}
	s.FailNext(stripetest.CancelSubscription, http.StatusInternalServerError)
	res, _ = raw(t, "DELETE", u, s.SecretKey(), nil, nil)
	if res.StatusCode != 500 {
		t.Fatalf("injected fault: %d", res.StatusCode)
	}
}
