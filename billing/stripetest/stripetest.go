// Package stripetest is a loopback simulator of the part of Stripe's API that
// billing/stripepay calls: Checkout Sessions in subscription mode,
// subscriptions, invoices, a hosted payment page and signed webhooks.
//
// It is a test and development helper. Production code never imports it; the
// example host may start one behind a flag, and platformtest starts one per
// test. The simulator serves Stripe's test environment only: its secret key
// is an sk_test_ key and every object has livemode false.
//
// # Wire protocol
//
// Requests are form-encoded as stripe-go sends them and answers are JSON
// objects shaped as Stripe shapes them (object, id, livemode, created, ...),
// so stripe-go decodes them unchanged. Errors use Stripe's envelope
// {"error": {"type", "code", "message", "param"}} with Stripe's statuses:
// 400 for invalid requests and reused idempotency keys, 401 for a missing or
// wrong key, 404 for unknown objects and URLs, 5xx only when injected.
// Every response carries a Request-Id header.
//
// Served endpoints (the Endpoint constants name them for fault injection):
//
//	POST /v1/checkout/sessions          create (subscription mode, inline price_data)
//	GET  /v1/checkout/sessions/{id}     retrieve (expand[]=subscription, customer)
//	GET  /v1/subscriptions/{id}         retrieve (expand[]=customer, latest_invoice)
//	POST /v1/subscriptions/{id}         update (cancel_at_period_end, metadata)
//	DELETE /v1/subscriptions/{id}       cancel now (prorate, invoice_now false)
//	GET  /v1/invoices                   list (subscription, customer, status, limit, starting_after)
//	GET  /v1/invoices/{id}              retrieve
//	GET  /v1/customers/{id}             retrieve
//
// POST requests honor Idempotency-Key as Stripe does: the same key with the
// same parameters replays the first response (header Idempotent-Replayed:
// true); the same key with other parameters or another endpoint answers 400
// with type idempotency_error. Injected faults are not recorded, so a retry
// after one converges on a single object.
//
// # Hosted page and lifecycle
//
// A session's url is GET /pay/{id} on the simulator: a small HTML page whose
// Pay button posts to the same path. Paying (or calling Server.Pay) completes
// the session, creates the customer, an active subscription whose first
// period starts now on the simulator's clock and ends one interval later, and
// a paid invoice with billing_reason subscription_create, then sends the
// checkout.session.completed, customer.subscription.created and invoice.paid
// webhooks. Renew moves a subscription to its next period with a paid or
// failed invoice; EndPeriod ends a subscription set to cancel at period end
// (or a past_due one, as dunning would).
//
// Subscription periods live on subscription items (items.data[].
// current_period_start/end), as in Stripe API versions since 2025-03-31; the
// subscription object itself has no current_period fields.
//
// # Webhooks
//
// Events are stamped with stripe.APIVersion, the version stripe-go v85
// expects (its webhook.ConstructEvent rejects others), and signed as Stripe
// signs them: header Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
// "t.payload" under the webhook secret>, with t from the simulator's clock
// and a fresh signature per attempt. Delivery is asynchronous: a non-2xx
// answer or a transport error is retried with doubling backoff up to
// Config.WebhookAttempts attempts; Drain waits for every delivery under way,
// and Close stops them. Events lists what was sent and each attempt (the
// newest 10,000 events).
//
// # Control and faults
//
// Tests drive the simulator through Go methods (Pay, Renew, AdvanceRenewal,
// EndPeriod, ReplayLastWebhook, SendWebhook, SignedWebhook, FailNext,
// DelayNext, Events, Drain). The same lifecycle controls are served under
// /_sim/ for the example host (internal/simctl mounts them), behind the same
// Bearer secret key, refused with the API's 401:
//
//	POST /_sim/checkout/sessions/{id}/pay
//	POST /_sim/subscriptions/{id}/renew          (form paid=false for a failed payment)
//	POST /_sim/subscriptions/{id}/end_period
//	POST /_sim/webhooks/replay_last
//	GET  /_sim/events
//
// A Server is safe for concurrent use. The clock is injectable and only
// dates objects and signatures; webhook backoff and DelayNext use real
// timers, all of which Close interrupts: no goroutine outlives Close.
package stripetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
)

// Clock tells the simulator the time. It dates objects, periods and webhook
// signatures.
type Clock interface {
	Now() time.Time
}

// Endpoint names one served API route, as its net/http pattern, for
// FailNext and DelayNext.
type Endpoint string

// The endpoints the simulator serves.
const (
	// CreateCheckout is POST /v1/checkout/sessions.
	CreateCheckout Endpoint = "POST /v1/checkout/sessions"
	// GetCheckout is GET /v1/checkout/sessions/{id}.
	GetCheckout Endpoint = "GET /v1/checkout/sessions/{id}"
	// GetSubscription is GET /v1/subscriptions/{id}.
	GetSubscription Endpoint = "GET /v1/subscriptions/{id}"
	// UpdateSubscription is POST /v1/subscriptions/{id}.
	UpdateSubscription Endpoint = "POST /v1/subscriptions/{id}"
	// CancelSubscription is DELETE /v1/subscriptions/{id}.
	CancelSubscription Endpoint = "DELETE /v1/subscriptions/{id}"
	// ListInvoices is GET /v1/invoices.
	ListInvoices Endpoint = "GET /v1/invoices"
	// GetInvoice is GET /v1/invoices/{id}.
	GetInvoice Endpoint = "GET /v1/invoices/{id}"
	// GetCustomer is GET /v1/customers/{id}.
	GetCustomer Endpoint = "GET /v1/customers/{id}"
)

// Errors returned by the control methods; test them with errors.Is.
var (
	// ErrNotFound means no object has the given id.
	ErrNotFound = errors.New("stripetest: no such object")
	// ErrState means the object's state does not allow the action.
	ErrState = errors.New("stripetest: the object's state does not allow this")
	// ErrClosed means the server was closed.
	ErrClosed = errors.New("stripetest: server closed")
)

// Config configures a Server. The zero value is usable: it listens on a
// random loopback port with generated keys and sends no webhooks.
type Config struct {
	// Addr is the listen address. Empty means 127.0.0.1:0 (a random port).
	Addr string
	// SecretKey is the API key clients must present as "Authorization:
	// Bearer <key>". It must start with sk_test_. Empty generates one.
	SecretKey string
	// WebhookSecret signs webhooks. Empty generates a whsec_ secret.
	WebhookSecret string
	// WebhookURL receives events. Empty records events without sending
	// them; SetWebhookURL changes it later.
	WebhookURL string
	// WebhookClient sends webhooks. Nil means a client with a 10 second
	// timeout.
	WebhookClient *http.Client
	// WebhookAttempts bounds the delivery attempts of one event. Zero means 4.
	WebhookAttempts int
	// WebhookBackoff is the wait before the first retry; it doubles after
	// each failed attempt. Zero means 100 milliseconds.
	WebhookBackoff time.Duration
	// Clock dates objects and signatures. Nil means the wall clock.
	Clock Clock
}

// Server is a running simulator. Create it with New and stop it with Close.
type Server struct {
	cfg    Config
	url    string
	ln     net.Listener
	srv    *http.Server
	run    *simctl.Runner               // the serve loop, webhook deliveries and delays; stopped by Close
	events *simctl.Log[*event]          // attempts are appended under mu
	fails  simctl.Script[int]           // HTTP statuses by Endpoint
	delays simctl.Script[time.Duration] // by Endpoint

	mu         sync.Mutex
	closed     bool
	webhookURL string
	sessions   map[string]*session
	customers  map[string]*customer
	subs       map[string]*subscription
	invoices   map[string]*invoice
	invOrder   []string // invoice ids in creation order
	outbox     []*event // events created under mu, not yet handed to delivery
	idem       map[string]*idemRecord
	pending    int           // deliveries under way
	idle       chan struct{} // closed when pending drops to zero
}

// New starts a simulator on loopback.
func New(cfg Config) (*Server, error) {
	if cfg.SecretKey == "" {
		cfg.SecretKey = "sk_test_" + simctl.RandomAlnum(32)
	}
	if !strings.HasPrefix(cfg.SecretKey, "sk_test_") {
		return nil, errors.New("stripetest: SecretKey must start with sk_test_ (the simulator serves test mode only)")
	}
	if cfg.WebhookSecret == "" {
		cfg.WebhookSecret = "whsec_" + simctl.RandomAlnum(32)
	}
	if cfg.WebhookURL != "" {
		if err := checkWebhookURL(cfg.WebhookURL); err != nil {
			return nil, err
		}
	}
	if cfg.WebhookClient == nil {
		cfg.WebhookClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.WebhookAttempts <= 0 {
		cfg.WebhookAttempts = 4
	}
	if cfg.WebhookBackoff <= 0 {
		cfg.WebhookBackoff = 100 * time.Millisecond
	}
	if cfg.Clock == nil {
		cfg.Clock = simctl.WallClock{}
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("stripetest: listen: %w", err)
	}
	s := &Server{
		cfg:        cfg,
		url:        "http://" + ln.Addr().String(),
		ln:         ln,
		run:        simctl.NewRunner(simctl.RunnerConfig{Clock: cfg.Clock}),
		events:     simctl.NewLog[*event](0),
		webhookURL: cfg.WebhookURL,
		sessions:   map[string]*session{},
		customers:  map[string]*customer{},
		subs:       map[string]*subscription{},
		invoices:   map[string]*invoice{},
		idem:       map[string]*idemRecord{},
	}
	h, err := s.routes()
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.run.Context() },
	}
	s.run.Go(func(context.Context) { _ = s.srv.Serve(ln) })
	return s, nil
}

// URL is the simulator's base URL (http://127.0.0.1:port), the BaseURL of
// a stripepay client.
func (s *Server) URL() string { return s.url }

// SecretKey is the sk_test_ key clients must present.
func (s *Server) SecretKey() string { return s.cfg.SecretKey }

// WebhookSecret is the secret webhooks are signed with.
func (s *Server) WebhookSecret() string { return s.cfg.WebhookSecret }

// SetWebhookURL sets where later events are sent; empty stops sending.
// Hosts that start the simulator before their own listener set it once
// that listener is up.
func (s *Server) SetWebhookURL(u string) error {
	if u != "" {
		if err := checkWebhookURL(u); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.webhookURL = u
	s.mu.Unlock()
	return nil
}

// Close stops the server, interrupts delayed requests and webhook
// deliveries, and waits for every goroutine the server started.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	s.run.Wait()
	if err != nil {
		return fmt.Errorf("stripetest: close: %w", err)
	}
	return nil
}

// FailNext makes the next request to endpoint answer status with Stripe's
// error envelope (type api_error for 5xx) before doing anything. Calls
// queue: two calls fail the next two requests.
func (s *Server) FailNext(endpoint Endpoint, status int) {
	s.fails.Add(string(endpoint), status, 1)
}

// DelayNext makes the next request to endpoint wait d before it is
// handled, to push a client past its timeout. The wait ends early when the
// client goes away or the server closes. Calls queue.
func (s *Server) DelayNext(endpoint Endpoint, d time.Duration) {
	s.delays.Add(string(endpoint), d, 1)
}

func checkWebhookURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("stripetest: webhook URL %q is not an absolute http(s) URL", u)
	}
	return nil
}

func (s *Server) now() time.Time { return s.cfg.Clock.Now() }

// idemRecord is the stored outcome of an idempotent POST.
type idemRecord struct {
	hash    string
	status  int
	body    []byte
	created time.Time
}

// idemTTL is how long Stripe keeps idempotency keys.
const idemTTL = 24 * time.Hour

// apiFunc handles one API request with s.mu held and returns the status and
// the JSON value to answer.
type apiFunc func(r *http.Request, form url.Values) (int, any)

// api wraps an API handler with Request-Id, authentication, injected
// faults, form parsing and idempotency.
func (s *Server) api(endpoint Endpoint, h apiFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", newID("req_"))
		if !s.authorized(w, r) {
			return
		}
		if !s.injectFaults(w, r, endpoint) {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		if err := r.ParseForm(); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "Invalid request body: "+err.Error())
			return
		}
		if r.Method == http.MethodDelete {
			// net/http parses a body for POST, PUT and PATCH only; stripe-go
			// sends a DELETE's parameters form-encoded in the body.
			if err := parseBodyForm(r); err != nil {
				writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "Invalid request body: "+err.Error())
				return
			}
		}
		key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
		s.mu.Lock()
		var (
			status   int
			body     []byte
			replayed bool
		)
		if r.Method == http.MethodPost && key != "" {
			status, body, replayed = s.idempotent(r, key, h)
		} else {
			var v any
			status, v = h(r, r.Form)
			body = mustJSON(v)
		}
		s.mu.Unlock()
		s.flushOutbox()
		if replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		writeRaw(w, status, body)
	}
}

// parseBodyForm adds a form-encoded body's parameters to r.Form and
// r.PostForm, for methods net/http does not parse bodies of.
func parseBodyForm(r *http.Request) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	vals, err := url.ParseQuery(string(b))
	if err != nil {
		return err
	}
	if r.PostForm == nil {
		r.PostForm = url.Values{}
	}
	for k, vs := range vals {
		r.Form[k] = append(r.Form[k], vs...)
		r.PostForm[k] = append(r.PostForm[k], vs...)
	}
	return nil
}

// idempotent runs h once per key, replaying its stored response, and
// reports whether it replayed. Called with s.mu held.
func (s *Server) idempotent(r *http.Request, key string, h apiFunc) (int, []byte, bool) {
	hash := r.Method + " " + r.URL.Path + "?" + r.PostForm.Encode()
	now := s.now()
	if rec, ok := s.idem[key]; ok && now.Sub(rec.created) < idemTTL {
		if rec.hash != hash {
			return http.StatusBadRequest, errorBody("idempotency_error", "", "",
				fmt.Sprintf("Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '%s' if you meant to execute a different request.", key)), false
		}
		return rec.status, rec.body, true
	}
	status, v := h(r, r.Form)
	body := mustJSON(v)
	if status < 500 {
		s.idem[key] = &idemRecord{hash: hash, status: status, body: body, created: now}
	}
	return status, body, false
}

// authorized checks the Bearer key and answers 401 as Stripe does.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if err := simctl.Bearer(r, s.cfg.SecretKey); err != nil {
		refuse(w, r, err)
		return false
	}
	return true
}

// refuse answers a request without the secret key as Stripe does: no key,
// or an invalid one (masked).
func refuse(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, simctl.ErrWrongKey) {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "",
			"You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').")
		return
	}
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	writeError(w, http.StatusUnauthorized, "invalid_request_error", "api_key_invalid", "",
		"Invalid API Key provided: "+maskKey(key))
}

// maskKey shows a key as Stripe does in errors: prefix and last four.
func maskKey(k string) string {
	if len(k) <= 12 {
		return "****"
	}
	i := strings.LastIndexByte(k[:len(k)-4], '_')
	if i < 0 || i > 8 {
		i = -1
	}
	return k[:i+1] + "****" + k[len(k)-4:]
}

// injectFaults applies a queued delay, then a queued failure. It reports
// whether the request should proceed.
func (s *Server) injectFaults(w http.ResponseWriter, r *http.Request, ep Endpoint) bool {
	d, _ := s.delays.Next(string(ep))
	status, _ := s.fails.Next(string(ep))
	if s.run.Sleep(r.Context(), d) != nil {
		return false
	}
	if status == 0 {
		return true
	}
	typ, code, msg := "api_error", "", "An unknown error occurred (injected by stripetest)."
	switch {
	case status == http.StatusTooManyRequests:
		typ, code, msg = "invalid_request_error", "rate_limit", "Request rate limit exceeded (injected by stripetest)."
	case status == http.StatusNotFound:
		typ, code, msg = "invalid_request_error", "resource_missing", "No such object (injected by stripetest)."
	case status == http.StatusUnauthorized:
		typ, msg = "invalid_request_error", "Invalid API Key provided (injected by stripetest)."
	case status < 500:
		typ, msg = "invalid_request_error", "Invalid request (injected by stripetest)."
	}
	if status >= 500 {
		w.Header().Set("Stripe-Should-Retry", "true")
	}
	writeError(w, status, typ, code, "", msg)
	return false
}

// routes builds the simulator's mux.
func (s *Server) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle(string(CreateCheckout), s.api(CreateCheckout, s.createSession))
	mux.Handle(string(GetCheckout), s.api(GetCheckout, s.getSession))
	mux.Handle(string(GetSubscription), s.api(GetSubscription, s.getSubscription))
	mux.Handle(string(UpdateSubscription), s.api(UpdateSubscription, s.updateSubscription))
	mux.Handle(string(CancelSubscription), s.api(CancelSubscription, s.cancelSubscription))
	mux.Handle(string(ListInvoices), s.api(ListInvoices, s.listInvoices))
	mux.Handle(string(GetInvoice), s.api(GetInvoice, s.getInvoice))
	mux.Handle(string(GetCustomer), s.api(GetCustomer, s.getCustomer))
	mux.HandleFunc("GET /pay/{id}", s.payPage)
	mux.HandleFunc("POST /pay/{id}", s.payForm)
	if err := s.mountControl(mux); err != nil {
		return nil, err
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", newID("req_"))
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "",
			fmt.Sprintf("Unrecognized request URL (%s: %s).", r.Method, r.URL.Path))
	})
	return mux, nil
}

// errorBody renders Stripe's error envelope.
func errorBody(typ, code, param, msg string) []byte {
	e := map[string]any{"type": typ, "message": msg}
	if code != "" {
		e["code"] = code
		e["doc_url"] = "https://stripe.com/docs/error-codes/" + strings.ReplaceAll(code, "_", "-")
	}
	if param != "" {
		e["param"] = param
	}
	return mustJSON(map[string]any{"error": e})
}

func writeError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	writeRaw(w, status, errorBody(typ, code, param, msg))
}

// apiError is a handler's error answer.
func apiError(status int, typ, code, param, msg string) (int, any) {
	return status, json.RawMessage(errorBody(typ, code, param, msg))
}

func invalid(param, msg string) (int, any) {
	return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_invalid", param, msg)
}

func missing(param string) (int, any) {
	return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_missing", param,
		"Missing required param: "+param+".")
}

func noSuch(kind, id string) (int, any) {
	return apiError(http.StatusNotFound, "invalid_request_error", "resource_missing", "id",
		fmt.Sprintf("No such %s: '%s'", kind, id))
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Every value the simulator renders is maps, slices and scalars.
		panic("stripetest: marshal: " + err.Error())
	}
	return b
}

// newID returns prefix followed by 24 random characters, as Stripe ids look.
func newID(prefix string) string { return prefix + simctl.RandomAlnum(24) }
