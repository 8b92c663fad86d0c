// Package stripepay implements billing.PaymentProvider with stripe-go v85
// (github.com/stripe/stripe-go/v85), the payment library the design names,
// against Stripe's Checkout Sessions API in subscription mode.
//
// # Client, not globals
//
// stripe-go keeps a package-level key (stripe.Key) and backend registry
// (stripe.SetBackend, stripe.GetBackend). This package uses neither: each
// Client owns a *stripe.Client built by stripe.NewClient with
// stripe.WithBackends(stripe.NewBackendsWithConfig(...)), whose backends
// point at Config.BaseURL (Stripe, or the billing/stripetest simulator) with
// the configured *http.Client, network retries, no telemetry and a logger
// adapted from Config.Logger. Two Clients (test and live accounts) never
// share state.
//
// # API version and periods
//
// stripe-go v85 pins Stripe API version stripe.APIVersion
// ("2026-03-25.dahlia") and sends it as Stripe-Version on every request.
// Since 2025-03-31 (basil), a subscription's current_period_start/end live
// on its subscription items, not on the subscription. Subscription fills
// billing.Subscription.CurrentPeriodStart/End from the first item (the
// platform's subscriptions have exactly one item); with several items it
// takes the earliest start and the earliest end, the period in which every
// item is paid. Likewise an invoice's subscription is
// parent.subscription_details.subscription, and billing.Invoice.PeriodStart/
// End come from the subscription line's service period (lines.data[].period)
// because the invoice's own period_start/end is the previous period for a
// renewal and a zero-length instant for the first invoice.
//
// # Errors
//
// Every method returns *fault.Error with an op ("stripepay.CreateCheckout"):
//
//   - PROVIDER_TIMEOUT: the call's deadline passed (Config.Timeout or the
//     caller's context) or the connection timed out; details.retryable.
//   - PROVIDER_UNAVAILABLE: Stripe unreachable, 5xx, 409 lock conflicts or
//     an unexpected answer; details.retryable. A request the URL guard
//     refuses (see Outbound policy) adds details.reason address_refused.
//   - RATE_LIMITED: 429; details.retryable.
//   - NOT_FOUND: 404 resource_missing.
//   - INVALID_INPUT: 400 invalid_request_error (details.field is Stripe's
//     param), 402, or a request this package refuses before sending.
//   - CONFLICT: 400 idempotency_error, a Reference reused with other
//     parameters.
//   - PROVIDER_CREDENTIAL_INVALID: 401 or 403.
//   - CALLBACK_FAILED: a webhook that does not verify (details.reason:
//     signature, timestamp, api_version, payload or not_configured).
//
// Stripe's error (type, code, param, request id) is kept as the cause for
// logs. The secret key is never logged nor put in an error; Stripe masks it
// in its own messages.
//
// # Outbound policy
//
// Without Config.HTTPClient the adapter sends through a urlguard client
// (https only, public addresses only, every resolved address judged and
// pinned, redirects re-checked, no proxy from the environment, bodies of
// at most 16 MiB), and New refuses a BaseURL that guard refuses. An
// HTTPClient that is set owns the outbound policy.
//
// # Webhooks
//
// VerifyWebhook verifies with stripe-go's own webhook package
// (github.com/stripe/stripe-go/v85/webhook), never with a parser of this
// package, so the platform reads the Stripe-Signature header exactly as
// Stripe's library does: elements split on "," and "=", the last t= wins
// and is the timestamp both signed and judged (a second t= cannot make a
// stale event look fresh), every v1 is tried in constant time (a rolled
// secret sends two), v1 values that are not hex and unknown schemes (v0)
// are ignored, the order of elements does not matter, and an element
// without exactly one "=" or a t= that is not an integer refuses the
// header. webhook.ValidatePayloadWithTolerance decides signature and age;
// webhook.ConstructEventWithOptions then decodes the event and checks its
// api_version.
//
// Age: stripe-go refuses an event signed longer than the tolerance ago and
// accepts a timestamp in the future, as Stripe does (only the holder of
// the secret can sign one). It measures age on the wall clock; with an
// injected Config.Clock the tolerance handed to stripe-go is shifted by
// the clock's offset from the wall clock, so stripe-go's own comparison
// judges the age on the platform's clock. Without a Clock the tolerance
// is passed as is.
//
// API version: the event's api_version must be of stripe-go's release
// train (stripe.APIVersion, "2026-03-25.dahlia": any ".dahlia" version),
// as stripe-go requires; IgnoreAPIVersionMismatch is not set, since the
// account's endpoint is pinned to that version and the billing/stripetest
// simulator stamps its events with it. A mismatch is refused with
// details.reason api_version.
//
// Refusals are CALLBACK_FAILED with details.reason: signature (no header,
// a malformed header, no v1 that verifies), timestamp (older than the
// tolerance, or no t= at all, which stripe-go reads as the zero time),
// api_version, payload (not a JSON event) or not_configured. Replays
// inside the window verify; the consumer deduplicates by event id through
// its inbox.
package stripepay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

var _ billing.PaymentProvider = (*Client)(nil)

// DefaultBaseURL is Stripe's API.
const DefaultBaseURL = "https://api.stripe.com"

// Clock tells the time for webhook tolerance checks.
type Clock interface {
	Now() time.Time
}

// Config configures a Client.
type Config struct {
	// SecretKey is the account's secret (sk_test_/sk_live_) or restricted
	// (rk_test_/rk_live_) key. Required.
	SecretKey string
	// WebhookSecret is the endpoint's signing secret (whsec_...). Empty
	// makes VerifyWebhook refuse every event.
	WebhookSecret string
	// BaseURL is the API's base URL. Empty means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests. Nil means a urlguard client (https
	// only, public addresses only) whose overall timeout is Timeout, and
	// BaseURL must pass its guard. A client that is set owns the outbound
	// policy: pass a urlguard client to keep it (a simulator on loopback
	// needs one with AllowHTTP and its exact address in AllowLoopback).
	HTTPClient *http.Client
	// Timeout bounds each call, retries included, on top of the caller's
	// context. Zero means 30 seconds.
	Timeout time.Duration
	// MaxNetworkRetries is how many times stripe-go retries a call that
	// failed in a way it knows to be safe to retry (connection errors, 5xx,
	// 409), with the same Idempotency-Key. Zero means none: the platform's
	// jobs retry.
	MaxNetworkRetries int
	// WebhookTolerance is how far a webhook's signed timestamp may be from
	// Clock's time. Zero means 5 minutes.
	WebhookTolerance time.Duration
	// Clock is the time for webhook tolerance. Nil means the wall clock,
	// which stripe-go's webhook package reads itself.
	Clock Clock
	// Logger receives stripe-go's request logs: requests and responses at
	// debug, failures at warn. Nil discards them.
	Logger *slog.Logger
}

// Client is the Stripe adapter. It is safe for concurrent use.
type Client struct {
	sc            *stripe.Client
	webhookSecret string
	tolerance     time.Duration
	timeout       time.Duration
	clock         Clock
	livemode      bool
}

var keyRE = regexp.MustCompile(`^(sk|rk)_(test|live)_[A-Za-z0-9_]+$`)

// New validates cfg and returns a Client. It makes no request.
func New(cfg Config) (*Client, error) {
	const op = "stripepay.New"
	if !keyRE.MatchString(cfg.SecretKey) {
		// The key itself is never echoed.
		return nil, fault.E(op, fault.InvalidInput, "SecretKey is not a Stripe secret or restricted key.")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fault.E(op, fault.InvalidInput, "BaseURL is not an absolute http(s) URL.")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		g, err := urlguard.New(urlguard.Config{Timeout: cfg.Timeout})
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, err := g.CheckURL(cfg.BaseURL); err != nil {
			return nil, fault.E(op, fault.InvalidInput, "BaseURL is not allowed by the outbound URL policy.").
				With("field", "baseUrl").With("reason", urlguard.Reason(err))
		}
		cfg.HTTPClient = g.Client()
	}
	if cfg.MaxNetworkRetries < 0 {
		return nil, fault.E(op, fault.InvalidInput, "MaxNetworkRetries is negative.")
	}
	if cfg.WebhookTolerance <= 0 {
		cfg.WebhookTolerance = 5 * time.Minute
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	backends := stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		HTTPClient:        cfg.HTTPClient,
		URL:               stripe.String(strings.TrimSuffix(cfg.BaseURL, "/")),
		MaxNetworkRetries: stripe.Int64(int64(cfg.MaxNetworkRetries)),
		EnableTelemetry:   stripe.Bool(false),
		LeveledLogger:     slogLogger{logger},
	})
	return &Client{
		sc:            stripe.NewClient(cfg.SecretKey, stripe.WithBackends(backends)),
		webhookSecret: cfg.WebhookSecret,
		tolerance:     cfg.WebhookTolerance,
		timeout:       cfg.Timeout,
		clock:         cfg.Clock,
		livemode:      strings.Contains(cfg.SecretKey, "_live_"),
	}, nil
}

// Livemode reports whether the client's key is a live key.
func (c *Client) Livemode() bool { return c.livemode }

var currencyRE = regexp.MustCompile(`^[a-z]{3}$`)

// CreateCheckout creates a Checkout Session in subscription mode with one
// inline price (price_data: currency, unit_amount, recurring.interval,
// product_data.name), client_reference_id and Idempotency-Key set to
// r.Reference, customer_email, the success and cancel URLs, and r.Metadata
// on both the session and its subscription (subscription_data.metadata).
func (c *Client) CreateCheckout(ctx context.Context, r billing.CheckoutRequest) (billing.CheckoutSession, error) {
	const op = "stripepay.CreateCheckout"
	switch {
	case r.Reference == "" || len(r.Reference) > 200:
		return billing.CheckoutSession{}, fault.Invalid(op, "reference", "The reference must be 1 to 200 characters.")
	case r.ProductName == "":
		return billing.CheckoutSession{}, fault.Invalid(op, "productName", "The product name is required.")
	case !currencyRE.MatchString(r.Currency):
		return billing.CheckoutSession{}, fault.Invalid(op, "currency", "The currency must be a lower-case ISO 4217 code.")
	case r.UnitAmount < 0:
		return billing.CheckoutSession{}, fault.Invalid(op, "unitAmount", "The amount must not be negative.")
	case r.Interval != "day" && r.Interval != "week" && r.Interval != "month" && r.Interval != "year":
		return billing.CheckoutSession{}, fault.Invalid(op, "interval", "The interval must be day, week, month or year.")
	case r.SuccessURL == "":
		return billing.CheckoutSession{}, fault.Invalid(op, "successUrl", "The success URL is required.")
	}
	p := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("subscription"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:   stripe.String(r.Currency),
				UnitAmount: stripe.Int64(r.UnitAmount),
				Recurring: &stripe.CheckoutSessionCreateLineItemPriceDataRecurringParams{
					Interval: stripe.String(r.Interval),
				},
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{
					Name: stripe.String(r.ProductName),
				},
			},
		}},
		ClientReferenceID: stripe.String(r.Reference),
		SuccessURL:        stripe.String(r.SuccessURL),
	}
	if r.CancelURL != "" {
		p.CancelURL = stripe.String(r.CancelURL)
	}
	if r.CustomerEmail != "" {
		p.CustomerEmail = stripe.String(r.CustomerEmail)
	}
	if len(r.Metadata) > 0 {
		p.Metadata = maps(r.Metadata)
		p.SubscriptionData = &stripe.CheckoutSessionCreateSubscriptionDataParams{Metadata: maps(r.Metadata)}
	}
	p.SetIdempotencyKey(r.Reference)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cs, err := c.sc.V1CheckoutSessions.Create(ctx, p)
	if err != nil {
		return billing.CheckoutSession{}, mapError(ctx, op, err)
	}
	return checkoutSession(cs), nil
}

func maps(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// GetCheckout retrieves a Checkout Session with expand[]=subscription.
func (c *Client) GetCheckout(ctx context.Context, id string) (billing.CheckoutSession, error) {
	const op = "stripepay.GetCheckout"
	if err := checkID(op, id); err != nil {
		return billing.CheckoutSession{}, err
	}
	p := &stripe.CheckoutSessionRetrieveParams{}
	p.AddExpand("subscription")
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cs, err := c.sc.V1CheckoutSessions.Retrieve(ctx, id, p)
	if err != nil {
		return billing.CheckoutSession{}, mapError(ctx, op, err)
	}
	return checkoutSession(cs), nil
}

// GetSubscription retrieves a subscription.
func (c *Client) GetSubscription(ctx context.Context, id string) (billing.Subscription, error) {
	const op = "stripepay.GetSubscription"
	if err := checkID(op, id); err != nil {
		return billing.Subscription{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sub, err := c.sc.V1Subscriptions.Retrieve(ctx, id, nil)
	if err != nil {
		return billing.Subscription{}, mapError(ctx, op, err)
	}
	return subscription(sub), nil
}

// CancelAtPeriodEnd updates the subscription with cancel_at_period_end=true.
// Setting it twice is harmless, so stripe-go's generated Idempotency-Key
// (one per call, kept across its own retries) is enough.
func (c *Client) CancelAtPeriodEnd(ctx context.Context, id string) (billing.Subscription, error) {
	const op = "stripepay.CancelAtPeriodEnd"
	if err := checkID(op, id); err != nil {
		return billing.Subscription{}, err
	}
	p := &stripe.SubscriptionUpdateParams{CancelAtPeriodEnd: stripe.Bool(true)}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sub, err := c.sc.V1Subscriptions.Update(ctx, id, p)
	if err != nil {
		return billing.Subscription{}, mapError(ctx, op, err)
	}
	return subscription(sub), nil
}

// CancelNow cancels the subscription immediately (DELETE
// /v1/subscriptions/{id}) with prorate and invoice_now false: nothing is
// credited, refunded or invoiced. Canceling is idempotent in effect, so
// no Idempotency-Key is needed. Stripe refuses to cancel a subscription
// that is already canceled (400); CancelNow then reads the subscription and
// returns it when it is canceled or incomplete_expired, so canceling twice
// succeeds. An unknown subscription is NOT_FOUND, as for the other methods.
func (c *Client) CancelNow(ctx context.Context, id string) (billing.Subscription, error) {
	const op = "stripepay.CancelNow"
	if err := checkID(op, id); err != nil {
		return billing.Subscription{}, err
	}
	p := &stripe.SubscriptionCancelParams{Prorate: stripe.Bool(false), InvoiceNow: stripe.Bool(false)}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sub, err := c.sc.V1Subscriptions.Cancel(ctx, id, p)
	if err == nil {
		return subscription(sub), nil
	}
	var se *stripe.Error
	if errors.As(err, &se) && se.HTTPStatusCode == http.StatusBadRequest && se.Type == stripe.ErrorTypeInvalidRequest {
		cur, gerr := c.sc.V1Subscriptions.Retrieve(ctx, id, nil)
		if gerr == nil && (cur.Status == stripe.SubscriptionStatusCanceled || cur.Status == stripe.SubscriptionStatusIncompleteExpired) {
			return subscription(cur), nil
		}
	}
	return billing.Subscription{}, mapError(ctx, op, err)
}

// maxInvoices bounds ListInvoices: 100 per page, at most this many.
const maxInvoices = 1000

// ListInvoices lists the subscription's invoices, newest first, following
// Stripe's pages (100 each) up to 1000 invoices.
func (c *Client) ListInvoices(ctx context.Context, subscriptionID string) ([]billing.Invoice, error) {
	const op = "stripepay.ListInvoices"
	if err := checkID(op, subscriptionID); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	p := &stripe.InvoiceListParams{Subscription: stripe.String(subscriptionID)}
	p.Limit = stripe.Int64(100)
	var out []billing.Invoice
	for inv, err := range c.sc.V1Invoices.List(ctx, p).All(ctx) {
		if err != nil {
			return nil, mapError(ctx, op, err)
		}
		out = append(out, invoice(inv))
		if len(out) == maxInvoices {
			break
		}
	}
	return out, nil
}

// checkID refuses ids that cannot be Stripe ids before they reach a URL.
func checkID(op, id string) error {
	if id == "" || len(id) > 255 || strings.ContainsAny(id, "/?#% \t\r\n") {
		return fault.Invalid(op, "id", "The provider object id is malformed.")
	}
	return nil
}

func unix(t int64) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return time.Unix(t, 0).UTC()
}

func checkoutSession(cs *stripe.CheckoutSession) billing.CheckoutSession {
	out := billing.CheckoutSession{
		ID:              cs.ID,
		URL:             cs.URL,
		Status:          string(cs.Status),
		PaymentStatus:   string(cs.PaymentStatus),
		ClientReference: cs.ClientReferenceID,
		AmountTotal:     cs.AmountTotal,
		Currency:        string(cs.Currency),
	}
	if cs.Customer != nil {
		out.CustomerID = cs.Customer.ID
	}
	if cs.Subscription != nil {
		out.SubscriptionID = cs.Subscription.ID
		// An unexpanded subscription decodes with only its ID.
		if cs.Subscription.Object == "subscription" {
			s := subscription(cs.Subscription)
			out.Subscription = &s
		}
	}
	return out
}

func subscription(s *stripe.Subscription) billing.Subscription {
	out := billing.Subscription{
		ID:                s.ID,
		Status:            string(s.Status),
		CancelAtPeriodEnd: s.CancelAtPeriodEnd,
	}
	if s.Customer != nil {
		out.CustomerID = s.Customer.ID
	}
	if s.LatestInvoice != nil {
		out.LatestInvoiceID = s.LatestInvoice.ID
	}
	out.CurrentPeriodStart, out.CurrentPeriodEnd = period(s)
	return out
}

// period reads the current period from the subscription's items (see the
// package documentation).
func period(s *stripe.Subscription) (start, end time.Time) {
	if s.Items == nil {
		return time.Time{}, time.Time{}
	}
	var st, en int64
	for _, it := range s.Items.Data {
		if it == nil || it.CurrentPeriodEnd == 0 {
			continue
		}
		if st == 0 || it.CurrentPeriodStart < st {
			st = it.CurrentPeriodStart
		}
		if en == 0 || it.CurrentPeriodEnd < en {
			en = it.CurrentPeriodEnd
		}
	}
	return unix(st), unix(en)
}

func invoice(inv *stripe.Invoice) billing.Invoice {
	out := billing.Invoice{
		ID:            inv.ID,
		Status:        string(inv.Status),
		BillingReason: string(inv.BillingReason),
		AmountDue:     inv.AmountDue,
		AmountPaid:    inv.AmountPaid,
		Currency:      string(inv.Currency),
		PeriodStart:   unix(inv.PeriodStart),
		PeriodEnd:     unix(inv.PeriodEnd),
		Created:       unix(inv.Created),
	}
	if inv.Parent != nil && inv.Parent.SubscriptionDetails != nil && inv.Parent.SubscriptionDetails.Subscription != nil {
		out.SubscriptionID = inv.Parent.SubscriptionDetails.Subscription.ID
	}
	if inv.Lines != nil {
		for _, l := range inv.Lines.Data {
			if l != nil && l.Period != nil && l.Period.End != 0 {
				out.PeriodStart, out.PeriodEnd = unix(l.Period.Start), unix(l.Period.End)
				break
			}
		}
	}
	return out
}

// retryable marks an error the caller may retry as is.
func retryable(e *fault.Error) *fault.Error { return e.With("retryable", true) }

// mapError turns a stripe-go or transport error into the port's codes.
func mapError(ctx context.Context, op string, err error) error {
	var se *stripe.Error
	if errors.As(err, &se) {
		e := mapStripeError(op, se)
		e.Err = err
		return e
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()):
		e := retryable(fault.E(op, fault.ProviderTimeout, "The payment provider did not answer in time."))
		e.Err = err
		return e
	case errors.Is(err, context.Canceled):
		e := fault.E(op, fault.ProviderUnavailable, "The request to the payment provider was canceled.")
		e.Err = err
		return e
	}
	e := retryable(fault.E(op, fault.ProviderUnavailable, "The payment provider is unavailable."))
	if errors.Is(err, urlguard.ErrRefused) {
		e = e.With("reason", "address_refused")
	}
	e.Err = err
	return e
}

func mapStripeError(op string, se *stripe.Error) *fault.Error {
	st := se.HTTPStatusCode
	switch {
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return fault.E(op, fault.ProviderCredentialInvalid, "The payment provider rejected the credential.")
	case st == http.StatusTooManyRequests:
		return retryable(fault.E(op, fault.RateLimited, "The payment provider is rate limiting requests."))
	case st == http.StatusNotFound:
		return fault.E(op, fault.NotFound, "The payment provider has no such object.")
	case se.Type == stripe.ErrorTypeIdempotency:
		return fault.E(op, fault.Conflict, "The checkout reference was used with other parameters.")
	case st == http.StatusConflict:
		return retryable(fault.E(op, fault.ProviderUnavailable, "The payment provider reported a conflicting request."))
	case st == http.StatusBadRequest || st == http.StatusPaymentRequired:
		e := fault.E(op, fault.InvalidInput, "The payment provider rejected the request.")
		if se.Param != "" {
			e = e.With("field", se.Param)
		}
		if se.Code != "" {
			e = e.With("providerCode", string(se.Code))
		}
		return e
	}
	return retryable(fault.E(op, fault.ProviderUnavailable, "The payment provider is unavailable."))
}

// VerifyWebhook verifies a webhook's Stripe-Signature header over its raw
// payload with stripe-go's webhook package, the signed timestamp within
// WebhookTolerance of the Clock, and its api_version, and returns the
// event (see the package doc).
func (c *Client) VerifyWebhook(payload []byte, signatureHeader string) (billing.WebhookEvent, error) {
	const op = "stripepay.VerifyWebhook"
	reject := func(reason, msg string, cause error) (billing.WebhookEvent, error) {
		e := fault.E(op, fault.CallbackFailed, msg).With("reason", reason)
		e.Err = cause
		return billing.WebhookEvent{}, e
	}
	if c.webhookSecret == "" {
		return reject("not_configured", "No webhook secret is configured.", nil)
	}
	tolerance := c.tolerance
	if c.clock != nil {
		// stripe-go compares time.Since(t) with the tolerance; shifting the
		// tolerance by (wall - clock) makes that comparison clock.Now() - t.
		tolerance += time.Since(c.clock.Now())
	}
	if err := webhook.ValidatePayloadWithTolerance(payload, signatureHeader, c.webhookSecret, tolerance); err != nil {
		if errors.Is(err, webhook.ErrTooOld) {
			return reject("timestamp", "The webhook timestamp is outside the tolerance window.", err)
		}
		return reject("signature", "The webhook signature does not verify.", err)
	}
	ev, err := webhook.ConstructEventWithOptions(payload, signatureHeader, c.webhookSecret,
		webhook.ConstructEventOptions{IgnoreTolerance: true}) // the age was judged above
	if err != nil {
		if errors.Is(err, webhook.ErrNotSigned) || errors.Is(err, webhook.ErrInvalidHeader) || errors.Is(err, webhook.ErrNoValidSignature) {
			return reject("signature", "The webhook signature does not verify.", err)
		}
		if v, ok := apiVersionOf(payload); ok && v != stripe.APIVersion {
			return reject("api_version", "The webhook's API version is not "+stripe.APIVersion+".",
				fmt.Errorf("api_version %q: %w", v, err))
		}
		return reject("payload", "The webhook payload is not a Stripe event.", err)
	}
	out := billing.WebhookEvent{
		ID:      ev.ID,
		Type:    string(ev.Type),
		Created: unix(ev.Created),
		Payload: bytes.Clone(payload),
	}
	if ev.Data != nil {
		if id, ok := ev.Data.Object["id"].(string); ok {
			out.ObjectID = id
		}
	}
	return out, nil
}

// apiVersionOf reads the api_version of an event payload; ok is false when
// the payload is not a JSON event.
func apiVersionOf(payload []byte) (v string, ok bool) {
	var e struct {
		Object     string `json:"object"`
		APIVersion string `json:"api_version"`
	}
	if json.Unmarshal(payload, &e) != nil || e.Object != "event" {
		return "", false
	}
	return e.APIVersion, true
}

// slogLogger adapts slog to stripe-go's ContextLeveledLoggerInterface.
// stripe-go's info lines (one per request) go to debug.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) log(ctx context.Context, level slog.Level, format string, v []any) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s.l.Enabled(ctx, level) {
		s.l.Log(ctx, level, "stripe: "+fmt.Sprintf(format, v...))
	}
}

// Debugf logs at debug.
func (s slogLogger) Debugf(ctx context.Context, format string, v ...any) {
	s.log(ctx, slog.LevelDebug, format, v)
}

// Infof logs at debug: stripe-go logs every request at info.
func (s slogLogger) Infof(ctx context.Context, format string, v ...any) {
	s.log(ctx, slog.LevelDebug, format, v)
}

// Warnf logs at warn.
func (s slogLogger) Warnf(ctx context.Context, format string, v ...any) {
	s.log(ctx, slog.LevelWarn, format, v)
}

// Errorf logs at warn: the error is also returned to the caller.
func (s slogLogger) Errorf(ctx context.Context, format string, v ...any) {
	s.log(ctx, slog.LevelWarn, format, v)
}
