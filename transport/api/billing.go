package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/plan"
)

// CheckoutRequest opens a checkout of a paid plan.
type CheckoutRequest struct {
	// PlanID is a paid plan of GET /api/v1/saas/plans.
	PlanID string `json:"planId" example:"pro"`
	// PriceVersionID picks one of the plan's active price versions; absent
	// means its monthly price.
	PriceVersionID string `json:"priceVersionId,omitempty" example:"price_01jd0000000000000000000000"`
}

// PriceSnapshotView is the immutable price a checkout captured.
type PriceSnapshotView struct {
	// PlanID is the plan the price belongs to.
	PlanID string `json:"planId" example:"pro"`
	// PlanName is the plan's display name at checkout.
	PlanName string `json:"planName" example:"Pro"`
	// PriceVersionID is the price version captured.
	PriceVersionID string `json:"priceVersionId" example:"price_01jd0000000000000000000000"`
	// PriceVersion is that price version's number within the plan.
	PriceVersion int `json:"priceVersion" example:"1"`
	// Currency is the ISO 4217 currency of the amount.
	Currency string `json:"currency" example:"USD"`
	// AmountMinor is the price in the currency's minor units, a string.
	AmountMinor string `json:"amountMinor" example:"1900"`
	// Interval is the billing period: a month or a year.
	Interval string `json:"interval" example:"month" enum:"month,year"`
	// MonthlyCredits is the credits granted each monthly period, an integer string.
	MonthlyCredits string `json:"monthlyCredits" example:"2000"`
}

// CheckoutView is a checkout.
type CheckoutView struct {
	// ID is the checkout's id.
	ID string `json:"id" example:"chk_01jd0000000000000000000000"`
	// Object is always "checkout".
	Object string `json:"object" example:"checkout"`
	// Environment is the environment (test or live) the checkout was made in.
	Environment string `json:"environment" example:"test"`
	// Status is open (awaiting payment), paid, activated (its subscription is active) or expired.
	Status string `json:"status" example:"open" enum:"open,paid,activated,expired"`
	// Price is the price captured when the checkout was created; later price changes do not touch
	// it.
	Price PriceSnapshotView `json:"price"`
	// PaymentURL is the provider's hosted payment page.
	PaymentURL string `json:"paymentUrl" example:"https://checkout.example.com/c/pay/cs_test_123"`
	// SubscriptionID is set once activated.
	SubscriptionID *string `json:"subscriptionId" example:"sub_01jd0000000000000000000000"`
	// PaidAt is when the provider confirmed the payment; null until then.
	PaidAt *time.Time `json:"paidAt"`
	// CreatedAt is when the checkout was created.
	CreatedAt time.Time `json:"createdAt"`
}

// SubscriptionView is a workspace subscription.
type SubscriptionView struct {
	// ID is the subscription's id.
	ID string `json:"id" example:"sub_01jd0000000000000000000000"`
	// Object is always "subscription".
	Object string `json:"object" example:"subscription"`
	// Environment is the environment (test or live) of the subscription.
	Environment string `json:"environment" example:"test"`
	// Status is the subscription's state: active, cancel_scheduled (ends at the period's end),
	// past_due, unpaid or canceled.
	Status string `json:"status" example:"active" enum:"active,cancel_scheduled,past_due,unpaid,canceled"`
	// PlanID is the subscribed plan.
	PlanID string `json:"planId" example:"pro"`
	// CheckoutID is the checkout that started the subscription.
	CheckoutID string `json:"checkoutId" example:"chk_01jd0000000000000000000000"`
	// Price is the price snapshot the subscription bills, captured at checkout.
	Price PriceSnapshotView `json:"price"`
	// CurrentPeriodStart is when the current billing period began.
	CurrentPeriodStart time.Time `json:"currentPeriodStart"`
	// CurrentPeriodEnd is when the current billing period ends.
	CurrentPeriodEnd time.Time `json:"currentPeriodEnd"`
	// CancelAtPeriodEnd is true when the subscription ends at the current period's end.
	CancelAtPeriodEnd bool `json:"cancelAtPeriodEnd" example:"false"`
	// EndedAt is when the subscription ended; null while it runs.
	EndedAt *time.Time `json:"endedAt"`
	// CreatedAt is when the subscription was created.
	CreatedAt time.Time `json:"createdAt"`
}

// CancelView answers a cancellation: at period end, nothing refunded.
type CancelView struct {
	// Subscription is the subscription after the cancellation was scheduled.
	Subscription SubscriptionView `json:"subscription"`
	// RefundIssued is always false: cancellation takes effect at period end.
	RefundIssued bool `json:"refundIssued" example:"false"`
}

// SubscriptionPage is the subscription history, newest first.
type SubscriptionPage struct {
	// Items are the page's subscriptions, newest first.
	Items []SubscriptionView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOnN1Yl8wMWpk"`
}

// DirectSubscriptionRequest is the body of POST /api/v1/subscriptions.
type DirectSubscriptionRequest struct {
	// PlanID is the paid plan to subscribe the workspace to.
	PlanID string `json:"planId" example:"pro"`
}

// InvoiceView is a provider invoice of a subscription.
type InvoiceView struct {
	// ID is the payment provider's invoice id.
	ID string `json:"id" example:"in_123"`
	// SubscriptionID is the platform subscription the invoice bills.
	SubscriptionID string `json:"subscriptionId" example:"sub_01jd0000000000000000000000"`
	// Status is the provider's invoice status (draft, open, paid, uncollectible or void).
	Status string `json:"status" example:"paid"`
	// BillingReason is why the provider issued the invoice (subscription_create,
	// subscription_cycle, ...).
	BillingReason string `json:"billingReason" example:"subscription_create"`
	// Currency is the invoice's currency, as the provider writes it (lowercase ISO 4217).
	Currency string `json:"currency" example:"usd"`
	// AmountDue is the amount due in the currency's minor units, an integer string.
	AmountDue string `json:"amountDueMinor" example:"1900"`
	// AmountPaid is the amount paid in the currency's minor units, an integer string.
	AmountPaid string `json:"amountPaidMinor" example:"1900"`
	// PeriodStart is the start of the period the invoice bills.
	PeriodStart time.Time `json:"periodStart"`
	// PeriodEnd is the end of the period the invoice bills.
	PeriodEnd time.Time `json:"periodEnd"`
	// Created is when the provider created the invoice.
	Created time.Time `json:"created"`
}

// CreditGrantView is the credit grant of one subscription period.
type CreditGrantView struct {
	// ID is the grant's id.
	ID string `json:"id" example:"cgr_01jd0000000000000000000000"`
	// SubscriptionID is the subscription whose period the grant belongs to.
	SubscriptionID string `json:"subscriptionId" example:"sub_01jd0000000000000000000000"`
	// Credits is the number of credits granted, an integer string.
	Credits string `json:"credits" example:"2000"`
	// Reference is the grant's unique ledger reference; a period is granted once.
	Reference string `json:"reference" example:"grant:subscription:sub_01jd:2026-01-02T03:04:05Z"`
	// PeriodStart is the start of the granted period.
	PeriodStart time.Time `json:"periodStart"`
	// PeriodEnd is the end of the granted period.
	PeriodEnd time.Time `json:"periodEnd"`
	// CreatedAt is when the credits were granted.
	CreatedAt time.Time `json:"createdAt"`
}

// BillingOverview is the billing administration view of the workspace in
// the caller's environment.
type BillingOverview struct {
	// Environment is the environment (test or live) the overview describes.
	Environment string `json:"environment" example:"test"`
	// Plan is the workspace's plan now.
	Plan string `json:"plan" example:"pro"`
	// Subscription is the current subscription with its price snapshot;
	// null on a free workspace.
	Subscription *SubscriptionView `json:"subscription"`
	// Invoices are the current subscription's invoices, as the payment provider reports them.
	Invoices []InvoiceView `json:"invoices"`
	// CreditGrants are the credit grants of the workspace's subscription periods.
	CreditGrants []CreditGrantView `json:"creditGrants"`
	// History are the workspace's subscriptions, newest first.
	History []SubscriptionView `json:"history"`
}

func priceView(p billing.PriceSnapshot) PriceSnapshotView {
	return PriceSnapshotView{PlanID: p.PlanID, PlanName: p.PlanName, PriceVersionID: p.PriceVersionID, PriceVersion: p.PriceVersion,
		Currency: p.Currency, AmountMinor: strconv.FormatInt(p.Amount, 10), Interval: string(p.Interval),
		MonthlyCredits: strconv.FormatUint(p.MonthlyCredits, 10)}
}

func checkoutView(c billing.Checkout) CheckoutView {
	return CheckoutView{ID: c.ID, Object: "checkout", Environment: string(c.Scope.Environment), Status: string(c.State),
		Price: priceView(c.Price), PaymentURL: c.PaymentURL, SubscriptionID: optional(c.SubscriptionID), PaidAt: c.PaidAt, CreatedAt: c.CreatedAt}
}

func subscriptionView(s billing.WorkspaceSubscription) SubscriptionView {
	return SubscriptionView{ID: s.ID, Object: "subscription", Environment: string(s.Scope.Environment), Status: string(s.State),
		PlanID: s.Price.PlanID, CheckoutID: s.CheckoutID, Price: priceView(s.Price), CurrentPeriodStart: s.PeriodStart,
		CurrentPeriodEnd: s.PeriodEnd, CancelAtPeriodEnd: s.CancelAtPeriodEnd, EndedAt: s.EndedAt, CreatedAt: s.CreatedAt}
}

func exampleSubscription() SubscriptionView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return SubscriptionView{ID: "sub_01jd0000000000000000000000", Object: "subscription", Environment: "test", Status: "active",
		PlanID: "pro", CheckoutID: "chk_01jd0000000000000000000000", Price: examplePrice(), CurrentPeriodStart: t,
		CurrentPeriodEnd: t.AddDate(0, 1, 0), CreatedAt: t}
}

func examplePrice() PriceSnapshotView {
	return PriceSnapshotView{PlanID: "pro", PlanName: "Pro", PriceVersionID: "price_01jd0000000000000000000000", PriceVersion: 1,
		Currency: "USD", AmountMinor: "1900", Interval: "month", MonthlyCredits: "2000"}
}

// billingRun is billing's unit of work on st, handed over as port P.
func billingRun[P any](st transport.Store[Tx], port func(Tx) P) billing.RunFunc[P] {
	return func(ctx context.Context, fn func(st P) error) error {
		return st.InTx(ctx, func(tx Tx) error { return fn(port(tx)) })
	}
}

// billingSettle is a checkout's reconcile unit of work on st, handed over as
// billing's port and the plans' port of the same transaction.
func billingSettle(st transport.Store[Tx]) billing.SettleRunFunc[billing.ActivateStore] {
	return func(ctx context.Context, fn func(st billing.ActivateStore, plans plan.Store) error) error {
		return st.InTx(ctx, func(tx Tx) error { return fn(tx, tx) })
	}
}

// WebhookSignatureHeader is the header the payment provider signs webhooks in.
const WebhookSignatureHeader = "Stripe-Signature"

// webhookBodyLimit bounds a payment webhook's body.
const webhookBodyLimit = 1 << 20

// billingRoutes are the checkout and subscription routes (spec, Checkout
// and subscriptions), the billing administration view and the payment
// provider's webhook receiver. Checkout creation, reconcile and cancel ask
// the provider outside any transaction and then commit their own units of
// work (OwnUnitOfWork). Checkout creation commits its row with its
// idempotency record (CommitResult), so a retry with the same key replays
// it; two concurrent first attempts may each open a provider session, of
// which only the committed one is ever shown (the other expires unpaid).
func billingRoutes(svc *billing.Service, accounts *account.Service, st transport.Store[Tx], log *slog.Logger) []Route {
	if svc == nil || st == nil {
		return nil
	}
	settle := billingSettle(st)
	cancel := billingRun(st, func(tx Tx) billing.CancelStore { return tx })
	b := func(r Route) Route {
		r.Tag, r.Private = transport.TagAccount, true
		if r.Auth == "" {
			r.Auth = transport.AuthSession
		}
		if r.Idempotency == "" {
			r.Idempotency = transport.IdempotencyNone
		}
		return r
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sid := "sub_01jd0000000000000000000000"
	exCheckout := CheckoutView{ID: "chk_01jd0000000000000000000000", Object: "checkout", Environment: "test", Status: "open",
		Price: examplePrice(), PaymentURL: "https://checkout.example.com/c/pay/cs_test_123", CreatedAt: t}
	exActive := exCheckout
	exActive.Status, exActive.SubscriptionID, exActive.PaidAt = "activated", &sid, &t
	return []Route{
		b(Route{Method: http.MethodPost, Pattern: "/api/v1/saas/checkout", OperationID: "createCheckout", Status: http.StatusCreated,
			Permission: access.BillingManage, Idempotency: transport.IdempotencyOptional, OwnUnitOfWork: true,
			Summary: "Start a checkout of a paid plan",
			Description: "Captures an immutable price snapshot (plan, price version, currency, amount in minor units, interval, monthly credits) " +
				"and opens the payment provider's hosted checkout in the caller's environment (Platform-Environment: test uses the provider's " +
				"test account; live its live account). Answers the checkout id, its status (open) and the payment URL to send the browser to. " +
				"Paying does not activate anything by itself: POST /api/v1/saas/checkout/{id}/reconcile (or the provider's webhook) does, once. " +
				"Without a provider account for the environment: 503 PROVIDER_UNAVAILABLE. The free plan is INVALID_INPUT (details.reason free_plan). " +
				"Needs billing.manage.",
			Request: CheckoutRequest{PlanID: "pro"}, Response: exCheckout,
			Errors: []string{string(fault.NotFound), string(fault.ProviderUnavailable), string(fault.ProviderTimeout)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CheckoutRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				var email string
				if c.Principal.UserID != "" {
					if u, err := accounts.User(ctx, c.Tx, c.Principal.TenantID, c.Principal.UserID); err == nil {
						email = u.Email
					}
				}
				// The provider is asked outside any transaction; the checkout row,
				// its idempotency record and the receipt then commit together.
				chk, err := svc.PrepareCheckout(ctx, c.Tx, c.Principal, billing.CheckoutInput{PlanID: in.PlanID, PriceVersionID: in.PriceVersionID, CustomerEmail: email})
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					if err := svc.InsertCheckout(ctx, tx, chk); err != nil {
						return nil, err
					}
					return checkoutView(chk), nil
				})
			}}),
		b(Route{Method: http.MethodGet, Pattern: "/api/v1/saas/checkout/{id}", OperationID: "getCheckout", Permission: access.BillingRead,
			Summary: "Read a checkout",
			Description: "The browser's success route: reads the checkout as stored. It never asks the provider and never activates access; " +
				"reconcile does. Needs billing.read. The provider sends the browser back here with ?environment=test for test checkouts, " +
				"since a browser navigation cannot send the Platform-Environment header.",
			Query:    []transport.Param{{Name: "environment", Description: "test or live, for browser navigations that cannot send the Platform-Environment header.", Example: "test"}},
			Response: exActive, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				chk, err := svc.GetCheckout(ctx, c.Tx, c.Principal, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return checkoutView(chk), nil
			}}),
		b(Route{Method: http.MethodPost, Pattern: "/api/v1/saas/checkout/{id}/reconcile", OperationID: "reconcileCheckout",
			Permission: access.BillingManage, OwnUnitOfWork: true,
			Summary: "Reconcile a checkout with the payment provider",
			Description: "Asks the payment provider (never the browser) whether the checkout was paid. When it confirms, the payment is persisted and " +
				"the subscription activated in one unit of work: plan assignment (live), the period's credits granted once, an audit entry and an " +
				"outbox event. Activation happens once per checkout under concurrent reconciles and webhook replays; reconciling an activated " +
				"checkout answers it again. Before the provider confirms: 409 CONFLICT with details.reason payment_pending (nothing changes; " +
				"reconcile later). The provider failing or timing out is 503 PROVIDER_UNAVAILABLE or 504 PROVIDER_TIMEOUT with nothing activated; " +
				"a retry converges. Needs billing.manage.",
			Response: exActive,
			Errors:   []string{string(fault.NotFound), string(fault.Conflict), string(fault.ProviderUnavailable), string(fault.ProviderTimeout)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				chk, err := svc.Reconcile(ctx, settle, c.Principal, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				if err := c.Commit(ctx, func(Tx) error { return nil }); err != nil {
					return nil, err
				}
				return checkoutView(chk), nil
			}}),
		b(Route{Method: http.MethodGet, Pattern: "/api/v1/subscriptions/history", OperationID: "listSubscriptionHistory", Permission: access.BillingRead,
			Summary: "List the workspace's subscriptions", Description: "Subscriptions of the caller's workspace in the caller's environment, newest first, with cursor pagination. Needs billing.read.",
			Query: pageQuery("Y3Vyc29yOnN1Yl8wMWpk"), Response: SubscriptionPage{Items: []SubscriptionView{exampleSubscription()}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				subs, more, next, err := transport.PageOf(c, "sub_", func(before string, n int) ([]billing.WorkspaceSubscription, error) {
					return svc.History(ctx, c.Tx, c.Principal, before, n)
				}, func(s billing.WorkspaceSubscription) string { return s.ID })
				if err != nil {
					return nil, err
				}
				page := SubscriptionPage{Items: []SubscriptionView{}, HasMore: more, NextCursor: next}
				for _, s := range subs {
					page.Items = append(page.Items, subscriptionView(s))
				}
				return page, nil
			}}),
		b(Route{Method: http.MethodPost, Pattern: "/api/v1/subscriptions/{id}/cancel", OperationID: "cancelSubscription",
			Permission: access.BillingManage, OwnUnitOfWork: true,
			Summary: "Cancel a subscription at period end",
			Description: "Asks the payment provider to cancel at the end of the current period, then records it (status cancel_scheduled) with an " +
				"audit entry. Nothing is refunded: refundIssued is always false. At period end the workspace falls back to the free plan. " +
				"Cancelling again answers the scheduled subscription. Needs billing.manage.",
			Response: CancelView{Subscription: exampleSubscription()},
			Errors:   []string{string(fault.NotFound), string(fault.InvalidState), string(fault.ProviderUnavailable), string(fault.ProviderTimeout)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				sub, err := svc.Cancel(ctx, cancel, c.Principal, c.PathValue("id"), c.RequestID)
				if err != nil {
					return nil, err
				}
				if err := c.Commit(ctx, func(Tx) error { return nil }); err != nil {
					return nil, err
				}
				return CancelView{Subscription: subscriptionView(sub), RefundIssued: false}, nil
			}}),
		b(Route{Method: http.MethodPost, Pattern: "/api/v1/subscriptions", OperationID: "createSubscription", Permission: access.BillingManage,
			Summary: "Activate a subscription directly (disabled)",
			Description: "Direct paid activation is disabled: this route always answers 403 DIRECT_ACTIVATION_DISABLED. A paid plan is activated " +
				"only by a checkout the payment provider confirmed (POST /api/v1/saas/checkout, then reconcile); the free plan through onboarding.",
			Request: DirectSubscriptionRequest{PlanID: "pro"}, Response: exampleSubscription(),
			Errors: []string{string(fault.DirectActivationDisabled)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in DirectSubscriptionRequest
				_ = c.Decode(&in)
				return nil, svc.ActivateDirect(in.PlanID)
			}}),
		b(Route{Method: http.MethodGet, Pattern: "/api/v1/admin/billing", OperationID: "getAdminBilling", Permission: access.BillingRead,
			Summary: "Read the workspace's billing",
			Description: "The workspace's current plan, subscription with its price snapshot, invoices, credit grants per period and subscription " +
				"history, in the caller's environment. For FINANCE, ADMIN and OWNER (billing.read).",
			Response: BillingOverview{Environment: "test", Plan: "pro", Subscription: func() *SubscriptionView { s := exampleSubscription(); return &s }(),
				Invoices: []InvoiceView{{ID: "in_123", SubscriptionID: sid, Status: "paid", BillingReason: "subscription_create", Currency: "usd",
					AmountDue: "1900", AmountPaid: "1900", PeriodStart: t, PeriodEnd: t.AddDate(0, 1, 0), Created: t}},
				CreditGrants: []CreditGrantView{{ID: "cgr_01jd0000000000000000000000", SubscriptionID: sid, Credits: "2000",
					Reference: "grant:subscription:sub_01jd0000000000000000000000:2026-01-01T00:00:00Z", PeriodStart: t, PeriodEnd: t.AddDate(0, 1, 0), CreatedAt: t}},
				History: []SubscriptionView{exampleSubscription()}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, err := svc.Overview(ctx, c.Tx, c.Principal)
				if err != nil {
					return nil, err
				}
				out := BillingOverview{Environment: string(c.Principal.Environment), Plan: o.Plan.PlanID, Invoices: []InvoiceView{},
					CreditGrants: []CreditGrantView{}, History: []SubscriptionView{}}
				if o.Subscription != nil {
					v := subscriptionView(*o.Subscription)
					out.Subscription = &v
				}
				for _, inv := range o.Invoices {
					out.Invoices = append(out.Invoices, InvoiceView{ID: inv.ID, SubscriptionID: inv.SubscriptionID, Status: inv.Status,
						BillingReason: inv.BillingReason, Currency: inv.Currency, AmountDue: strconv.FormatInt(inv.AmountDue, 10),
						AmountPaid: strconv.FormatInt(inv.AmountPaid, 10), PeriodStart: inv.PeriodStart, PeriodEnd: inv.PeriodEnd, Created: inv.Created})
				}
				for _, g := range o.Grants {
					out.CreditGrants = append(out.CreditGrants, CreditGrantView{ID: g.ID, SubscriptionID: g.SubscriptionID,
						Credits: strconv.FormatUint(g.Credits, 10), Reference: g.Reference, PeriodStart: g.PeriodStart, PeriodEnd: g.PeriodEnd, CreatedAt: g.CreatedAt})
				}
				for _, s := range o.History {
					out.History = append(out.History, subscriptionView(s))
				}
				return out, nil
			}}),
		{Method: http.MethodPost, Pattern: "/internal/payments/{environment}/webhook", OperationID: "receivePaymentWebhook", Tag: transport.TagAccount,
			Summary: "Receive a payment provider webhook", Internal: true, Auth: transport.AuthPublic,
			Raw: webhookReceiver(svc, billingRun(st, func(tx Tx) billing.WebhookStore { return tx }), log)},
	}
}

// webhookReceiver verifies a payment webhook's raw body through the
// environment's provider, keeps it in the inbox, enqueues its application
// and answers 200 at once. A forged or stale signature is 400 with nothing
// stored.
func webhookReceiver(svc *billing.Service, run billing.RunFunc[billing.WebhookStore], log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqID := transport.RequestID(r)
		w.Header().Set("X-Request-Id", reqID)
		env := access.Environment(r.PathValue("environment"))
		if !env.Valid() {
			transport.WriteError(w, log, reqID, fault.E("transport.webhook", fault.NotFound, "No such environment."))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhookBodyLimit))
		if err != nil {
			transport.WriteError(w, log, reqID, transport.TooLarge("transport.webhook", webhookBodyLimit))
			return
		}
		created, err := svc.ReceiveWebhook(r.Context(), run, env, body, r.Header.Get(WebhookSignatureHeader))
		if err != nil {
			transport.WriteError(w, log, reqID, err)
			return
		}
		transport.WriteData(w, http.StatusOK, reqID, struct {
			Received  bool `json:"received"`
			Duplicate bool `json:"duplicate"`
		}{true, !created})
	})
}
