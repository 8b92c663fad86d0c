package billing

import (
	"context"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/plan"
)

// PriceSnapshot is the immutable price a checkout was opened for: the
// subscription it activates keeps it, whatever the catalog says later.
type PriceSnapshot struct {
	PlanID         string        `json:"planId"`
	PlanName       string        `json:"planName"`
	PriceVersionID string        `json:"priceVersionId"`
	PriceVersion   int           `json:"priceVersion"`
	Currency       string        `json:"currency"`
	Amount         int64         `json:"amountMinor"`
	Interval       plan.Interval `json:"interval"`
	// MonthlyCredits is the plan's credit grant per period at checkout.
	MonthlyCredits uint64 `json:"monthlyCredits"`
}

// Checkout is one attempt to buy a paid plan through the provider's hosted
// page.
type Checkout struct {
	ID                string
	Scope             Scope
	CreatedBy         string
	Price             PriceSnapshot
	State             State
	ProviderSessionID string
	// PaymentURL is the provider's hosted payment page.
	PaymentURL string
	// ProviderSubscriptionID and ProviderCustomerID are set once the
	// provider confirmed payment.
	ProviderSubscriptionID string
	ProviderCustomerID     string
	PaidAt                 *time.Time
	// SubscriptionID is set once activated.
	SubscriptionID string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// CheckoutInput asks for a checkout of a paid plan.
type CheckoutInput struct {
	PlanID string
	// PriceVersionID picks a price version of the plan; empty means the
	// plan's active monthly price (or its only active price).
	PriceVersionID string
	// CustomerEmail prefills the hosted page.
	CustomerEmail string
}

// Reasons in details.reason of billing errors.
const (
	// ReasonPaymentPending: the provider has not confirmed the payment yet.
	ReasonPaymentPending = "payment_pending"
	// ReasonFreePlan: the free plan is not bought; onboarding activates it.
	ReasonFreePlan = "free_plan"
	// ReasonCheckoutExpired: the provider expired the checkout unpaid.
	ReasonCheckoutExpired = "checkout_expired"
)

// PrepareCheckout captures the price snapshot and opens the provider's
// hosted checkout for it; it only reads through st and writes nothing, so
// the provider call runs outside any database transaction (design: effects
// outside the database never run inside one). The checkout's id is the
// provider's idempotency key, so a retried prepare of the same checkout
// returns the same session.
func (s *Service) PrepareCheckout(ctx context.Context, st CheckoutPreparer, p *access.Principal, in CheckoutInput) (Checkout, error) {
	const op = "billing.PrepareCheckout"
	if in.PlanID == "" {
		return Checkout{}, fault.Invalid(op, "planId", "A plan id is required.")
	}
	pl, err := st.PlanGet(ctx, in.PlanID)
	if err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if !pl.Active {
		return Checkout{}, fault.E(op, fault.NotFound, "The plan is not offered.")
	}
	pv, err := pickPrice(op, pl, in.PriceVersionID)
	if err != nil {
		return Checkout{}, err
	}
	prov, err := s.provider(op, p.Environment)
	if err != nil {
		return Checkout{}, err
	}
	now := st.Now()
	c := Checkout{ID: st.NewID("chk_"), Scope: ScopeOf(p), CreatedBy: p.StableID(), State: CheckoutOpen,
		Price: PriceSnapshot{PlanID: pl.ID, PlanName: pl.Name, PriceVersionID: pv.ID, PriceVersion: pv.Version,
			Currency: pv.Currency, Amount: pv.Amount, Interval: pv.Interval, MonthlyCredits: pl.MonthlyCredits},
		CreatedAt: now, UpdatedAt: now}
	sess, err := call(ctx, s, op, func(ctx context.Context) (CheckoutSession, error) {
		return prov.CreateCheckout(ctx, CheckoutRequest{Reference: c.ID, CustomerEmail: in.CustomerEmail,
			ProductName: pl.Name, Currency: strings.ToLower(pv.Currency), UnitAmount: pv.Amount, Interval: string(pv.Interval),
			SuccessURL: backURL(s.cfg.SuccessURL, c),
			CancelURL:  backURL(s.cfg.CancelURL, c),
			Metadata: map[string]string{"checkout_id": c.ID, "workspace_id": c.Scope.WorkspaceID, "plan_id": pl.ID,
				"price_version_id": pv.ID, "environment": string(c.Scope.Environment)}})
	})
	if err != nil {
		return Checkout{}, err
	}
	if sess.ID == "" || sess.URL == "" {
		return Checkout{}, fault.E(op, fault.ProviderUnavailable, "The payment provider answered without a checkout page.")
	}
	c.ProviderSessionID, c.PaymentURL = sess.ID, sess.URL
	return c, nil
}

// InsertCheckout stores a checkout PrepareCheckout made, in the caller's
// unit of work.
func (s *Service) InsertCheckout(ctx context.Context, st CheckoutWriter, c Checkout) error {
	if err := st.CheckoutInsert(ctx, c); err != nil {
		return fault.Wrap("billing.InsertCheckout", err)
	}
	return nil
}

// StartCheckout is PrepareCheckout then InsertCheckout on one store, for
// callers whose store is not a database transaction (the provider call must
// never run inside one).
func (s *Service) StartCheckout(ctx context.Context, st CheckoutStarter, p *access.Principal, in CheckoutInput) (Checkout, error) {
	c, err := s.PrepareCheckout(ctx, st, p, in)
	if err != nil {
		return Checkout{}, err
	}
	return c, s.InsertCheckout(ctx, st, c)
}

// backURL fills a return URL template: "{CHECKOUT_ID}" becomes the checkout
// id and "{ENVIRONMENT}" its environment.
func backURL(tmpl string, c Checkout) string {
	return strings.NewReplacer("{CHECKOUT_ID}", c.ID, "{ENVIRONMENT}", string(c.Scope.Environment)).Replace(tmpl)
}

// pickPrice chooses the price version of a checkout.
func pickPrice(op string, pl plan.Plan, id string) (plan.PriceVersion, error) {
	var pv plan.PriceVersion
	found := false
	for _, x := range pl.ActivePrices() {
		switch {
		case id != "" && x.ID == id:
			pv, found = x, true
		case id == "" && (!found || x.Interval == plan.Month && pv.Interval != plan.Month):
			pv, found = x, true
		}
	}
	if !found {
		if id != "" {
			return plan.PriceVersion{}, fault.E(op, fault.NotFound, "The price version is not offered for this plan.").
				With("field", "priceVersionId")
		}
		return plan.PriceVersion{}, fault.Invalid(op, "planId", "The plan has no price to check out.").With("reason", ReasonFreePlan)
	}
	if pv.Amount <= 0 {
		return plan.PriceVersion{}, fault.Invalid(op, "planId", "The free plan is activated through onboarding, not checkout.").
			With("reason", ReasonFreePlan)
	}
	return pv, nil
}

// GetCheckout reads a checkout of the principal's scope. It is the
// browser's success route: it never asks the provider and never activates.
// NOT_FOUND for a checkout of another scope.
func (s *Service) GetCheckout(ctx context.Context, st CheckoutReader, p *access.Principal, id string) (Checkout, error) {
	const op = "billing.GetCheckout"
	c, err := st.CheckoutGet(ctx, id)
	if err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	if c.Scope != ScopeOf(p) {
		return Checkout{}, fault.E(op, fault.NotFound, "No such checkout.")
	}
	return c, nil
}

// confirmed is the provider's confirmed view of a paid checkout.
type confirmed struct {
	session  CheckoutSession
	sub      Subscription
	invoices []Invoice
}

// Reconcile asks the provider (never the browser) for the state of one of
// the principal's checkouts and, when the provider confirms payment,
// persists it and activates the subscription, once per checkout under any
// number of concurrent reconciles and webhook replays. A checkout already
// activated answers as it is without asking the provider.
//
// Errors: NOT_FOUND; CONFLICT with details.reason payment_pending before
// the provider confirms (nothing changes; reconcile again later), or
// checkout_expired; PROVIDER_UNAVAILABLE or PROVIDER_TIMEOUT when the
// provider fails (nothing is activated; a retry converges).
func (s *Service) Reconcile(ctx context.Context, run SettleRunFunc[ActivateStore], p *access.Principal, id string) (Checkout, error) {
	const op = "billing.Reconcile"
	var c Checkout
	err := run(ctx, func(st ActivateStore, _ plan.Store) (err error) {
		c, err = s.GetCheckout(ctx, st, p, id)
		return err
	})
	if err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	return s.reconcile(ctx, run, c)
}

// reconcile drives one checkout from the provider's confirmed state.
func (s *Service) reconcile(ctx context.Context, run SettleRunFunc[ActivateStore], c Checkout) (Checkout, error) {
	const op = "billing.reconcile"
	switch c.State {
	case CheckoutActivated:
		return c, nil
	case CheckoutExpired:
		return c, fault.E(op, fault.Conflict, "The checkout expired unpaid; start a new one.").With("reason", ReasonCheckoutExpired)
	}
	prov, err := s.provider(op, c.Scope.Environment)
	if err != nil {
		return Checkout{}, err
	}
	sess, err := call(ctx, s, op, func(ctx context.Context) (CheckoutSession, error) {
		return prov.GetCheckout(ctx, c.ProviderSessionID)
	})
	if err != nil {
		return Checkout{}, err
	}
	if sess.ClientReference != "" && sess.ClientReference != c.ID {
		return Checkout{}, errorf(op, "provider session %s belongs to %s, not %s", sess.ID, sess.ClientReference, c.ID)
	}
	if sess.Status == "expired" && c.State == CheckoutOpen {
		var out Checkout
		err := run(ctx, func(st ActivateStore, _ plan.Store) error {
			cur, err := st.CheckoutGet(ctx, c.ID)
			if err != nil {
				return err
			}
			if cur.State != CheckoutOpen {
				out = cur
				return nil
			}
			to, err := Transition(MachineCheckout, cur.State, EventExpired)
			if err != nil {
				return err
			}
			next := cur
			next.State, next.UpdatedAt = to, st.Now()
			if _, err := st.CheckoutUpdate(ctx, next, cur.State); err != nil {
				return err
			}
			out, err = st.CheckoutGet(ctx, c.ID)
			return err
		})
		if err != nil {
			return Checkout{}, fault.Wrap(op, err)
		}
		if out.State == CheckoutExpired {
			return out, fault.E(op, fault.Conflict, "The checkout expired unpaid; start a new one.").With("reason", ReasonCheckoutExpired)
		}
		return out, nil
	}
	if sess.Status != "complete" || sess.PaymentStatus != "paid" || sess.SubscriptionID == "" {
		return c, fault.E(op, fault.Conflict, "The payment provider has not confirmed the payment yet; reconcile again later.").
			With("reason", ReasonPaymentPending).With("checkoutId", c.ID)
	}
	conf := confirmed{session: sess}
	if sess.Subscription != nil && sess.Subscription.ID == sess.SubscriptionID {
		conf.sub = *sess.Subscription
	} else {
		conf.sub, err = call(ctx, s, op, func(ctx context.Context) (Subscription, error) {
			return prov.GetSubscription(ctx, sess.SubscriptionID)
		})
		if err != nil {
			return Checkout{}, err
		}
	}
	conf.invoices, err = call(ctx, s, op, func(ctx context.Context) ([]Invoice, error) {
		return prov.ListInvoices(ctx, sess.SubscriptionID)
	})
	if err != nil {
		return Checkout{}, err
	}
	var out Checkout
	err = run(ctx, func(st ActivateStore, plans plan.Store) (err error) {
		out, err = s.activate(ctx, st, plans, c.ID, conf)
		return err
	})
	if err != nil {
		return Checkout{}, fault.Wrap(op, err)
	}
	return out, nil
}
