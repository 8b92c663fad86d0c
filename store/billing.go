package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
)

// Tx implements every port of the billing domain.
var (
	_ billing.CheckoutStarter    = (*Tx)(nil)
	_ billing.CheckoutReader     = (*Tx)(nil)
	_ billing.SubscriptionGetter = (*Tx)(nil)
	_ billing.SubscriptionReader = (*Tx)(nil)
	_ billing.OverviewReader     = (*Tx)(nil)
	_ billing.CancelStore        = (*Tx)(nil)
	_ billing.WebhookStore       = (*Tx)(nil)
	_ billing.FeeStore           = (*Tx)(nil)
	_ billing.GrantStore         = (*Tx)(nil)
	_ billing.PeriodWriter       = (*Tx)(nil)
	_ billing.ActivateStore      = (*Tx)(nil)
	_ billing.RenewStore         = (*Tx)(nil)
	_ billing.EventStore         = (*Tx)(nil)
)

type checkoutRow struct {
	ID                     string     `bun:"id"`
	TenantID               string     `bun:"tenant_id"`
	WorkspaceID            string     `bun:"workspace_id"`
	Environment            string     `bun:"environment"`
	CreatedBy              string     `bun:"created_by"`
	Price                  string     `bun:"price"`
	State                  string     `bun:"state"`
	ProviderSessionID      string     `bun:"provider_session_id"`
	PaymentURL             string     `bun:"payment_url"`
	ProviderSubscriptionID string     `bun:"provider_subscription_id"`
	ProviderCustomerID     string     `bun:"provider_customer_id"`
	PaidAt                 *time.Time `bun:"paid_at"`
	SubscriptionID         string     `bun:"subscription_id"`
	CreatedAt              time.Time  `bun:"created_at"`
	UpdatedAt              time.Time  `bun:"updated_at"`
}

const checkoutColumns = `id, tenant_id, workspace_id, environment, created_by, price, state, provider_session_id, payment_url,
	provider_subscription_id, provider_customer_id, paid_at, subscription_id, created_at, updated_at`

func (r checkoutRow) checkout() (billing.Checkout, error) {
	c := billing.Checkout{ID: r.ID, Scope: billing.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		CreatedBy: r.CreatedBy, State: billing.State(r.State), ProviderSessionID: r.ProviderSessionID, PaymentURL: r.PaymentURL,
		ProviderSubscriptionID: r.ProviderSubscriptionID, ProviderCustomerID: r.ProviderCustomerID, PaidAt: utcPtr(r.PaidAt),
		SubscriptionID: r.SubscriptionID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal([]byte(r.Price), &c.Price); err != nil {
		return billing.Checkout{}, errf("store.checkout", err)
	}
	return c, nil
}

// CheckoutInsert implements billing.CheckoutWriter.
func (tx *Tx) CheckoutInsert(ctx context.Context, c billing.Checkout) error {
	const op = "store.CheckoutInsert"
	price, err := json.Marshal(c.Price)
	if err != nil {
		return errf(op, err)
	}
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO billing_checkouts (`+checkoutColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Scope.TenantID, c.Scope.WorkspaceID, string(c.Scope.Environment), c.CreatedBy, string(price), string(c.State),
		c.ProviderSessionID, c.PaymentURL, c.ProviderSubscriptionID, c.ProviderCustomerID, c.PaidAt, c.SubscriptionID, tx.now, tx.now)
	return errf(op, err)
}

func (tx *Tx) checkoutWhere(ctx context.Context, op, where string, args ...any) (billing.Checkout, error) {
	var r checkoutRow
	if err := tx.idb.NewRaw(`SELECT `+checkoutColumns+` FROM billing_checkouts WHERE `+where, args...).Scan(ctx, &r); err != nil {
		return billing.Checkout{}, notFound(op, err)
	}
	return r.checkout()
}

// CheckoutGet implements billing.CheckoutReader.
func (tx *Tx) CheckoutGet(ctx context.Context, id string) (billing.Checkout, error) {
	return tx.checkoutWhere(ctx, "store.CheckoutGet", `id = ?`, id)
}

// CheckoutGetBySession implements billing.EventStore.
func (tx *Tx) CheckoutGetBySession(ctx context.Context, env access.Environment, sessionID string) (billing.Checkout, error) {
	return tx.checkoutWhere(ctx, "store.CheckoutGetBySession", `environment = ? AND provider_session_id = ?`, string(env), sessionID)
}

// CheckoutUpdate implements billing.ActivateStore.
func (tx *Tx) CheckoutUpdate(ctx context.Context, c billing.Checkout, from billing.State) (bool, error) {
	const op = "store.CheckoutUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE billing_checkouts SET state = ?, provider_subscription_id = ?, provider_customer_id = ?,
		paid_at = ?, subscription_id = ?, updated_at = ? WHERE id = ? AND state = ?`,
		string(c.State), c.ProviderSubscriptionID, c.ProviderCustomerID, c.PaidAt, c.SubscriptionID, tx.now, c.ID, string(from))
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	return n == 1, errf(op, err)
}

type subscriptionRow struct {
	ID                 string     `bun:"id"`
	TenantID           string     `bun:"tenant_id"`
	WorkspaceID        string     `bun:"workspace_id"`
	Environment        string     `bun:"environment"`
	CheckoutID         string     `bun:"checkout_id"`
	Price              string     `bun:"price"`
	State              string     `bun:"state"`
	ProviderID         string     `bun:"provider_id"`
	ProviderCustomerID string     `bun:"provider_customer_id"`
	PeriodStart        time.Time  `bun:"period_start"`
	PeriodEnd          time.Time  `bun:"period_end"`
	CancelAtPeriodEnd  bool       `bun:"cancel_at_period_end"`
	EndedAt            *time.Time `bun:"ended_at"`
	CreatedAt          time.Time  `bun:"created_at"`
	UpdatedAt          time.Time  `bun:"updated_at"`
}

const subscriptionColumns = `id, tenant_id, workspace_id, environment, checkout_id, price, state, provider_id, provider_customer_id,
	period_start, period_end, cancel_at_period_end, ended_at, created_at, updated_at`

func (r subscriptionRow) subscription() (billing.WorkspaceSubscription, error) {
	s := billing.WorkspaceSubscription{ID: r.ID, Scope: billing.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		CheckoutID: r.CheckoutID, State: billing.State(r.State), ProviderID: r.ProviderID, ProviderCustomerID: r.ProviderCustomerID,
		PeriodStart: r.PeriodStart.UTC(), PeriodEnd: r.PeriodEnd.UTC(), CancelAtPeriodEnd: r.CancelAtPeriodEnd, EndedAt: utcPtr(r.EndedAt),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal([]byte(r.Price), &s.Price); err != nil {
		return billing.WorkspaceSubscription{}, errf("store.subscription", err)
	}
	return s, nil
}

// SubscriptionInsert implements billing.ActivateStore.
func (tx *Tx) SubscriptionInsert(ctx context.Context, s billing.WorkspaceSubscription) (bool, error) {
	const op = "store.SubscriptionInsert"
	price, err := json.Marshal(s.Price)
	if err != nil {
		return false, errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO billing_subscriptions (`+subscriptionColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		s.ID, s.Scope.TenantID, s.Scope.WorkspaceID, string(s.Scope.Environment), s.CheckoutID, string(price), string(s.State),
		s.ProviderID, s.ProviderCustomerID, s.PeriodStart, s.PeriodEnd, s.CancelAtPeriodEnd, s.EndedAt, tx.now, tx.now)
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	return n == 1, errf(op, err)
}

func (tx *Tx) subscriptionsWhere(ctx context.Context, op, tail string, args ...any) ([]billing.WorkspaceSubscription, error) {
	var rows []subscriptionRow
	if err := tx.idb.NewRaw(`SELECT `+subscriptionColumns+` FROM billing_subscriptions WHERE `+tail, args...).Scan(ctx, &rows); err != nil {
		return nil, notFoundOrNil(op, err)
	}
	out := make([]billing.WorkspaceSubscription, 0, len(rows))
	for _, r := range rows {
		s, err := r.subscription()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (tx *Tx) subscriptionWhere(ctx context.Context, op, tail string, args ...any) (billing.WorkspaceSubscription, error) {
	ss, err := tx.subscriptionsWhere(ctx, op, tail, args...)
	if err != nil {
		return billing.WorkspaceSubscription{}, err
	}
	if len(ss) == 0 {
		return billing.WorkspaceSubscription{}, fault.E(op, fault.NotFound, "")
	}
	return ss[0], nil
}

// SubscriptionGet implements billing.SubscriptionGetter.
func (tx *Tx) SubscriptionGet(ctx context.Context, id string) (billing.WorkspaceSubscription, error) {
	return tx.subscriptionWhere(ctx, "store.SubscriptionGet", `id = ?`, id)
}

// SubscriptionGetByCheckout implements billing.ActivateStore.
func (tx *Tx) SubscriptionGetByCheckout(ctx context.Context, checkoutID string) (billing.WorkspaceSubscription, error) {
	return tx.subscriptionWhere(ctx, "store.SubscriptionGetByCheckout", `checkout_id = ?`, checkoutID)
}

// SubscriptionGetByProvider implements billing.EventStore.
func (tx *Tx) SubscriptionGetByProvider(ctx context.Context, env access.Environment, providerID string) (billing.WorkspaceSubscription, error) {
	return tx.subscriptionWhere(ctx, "store.SubscriptionGetByProvider", `environment = ? AND provider_id = ?`, string(env), providerID)
}

// SubscriptionCurrent implements billing.SubscriptionReader.
func (tx *Tx) SubscriptionCurrent(ctx context.Context, s billing.Scope) (billing.WorkspaceSubscription, error) {
	return tx.subscriptionWhere(ctx, "store.SubscriptionCurrent", `tenant_id = ? AND workspace_id = ? AND environment = ?
		AND state IN (?, ?, ?) ORDER BY id DESC LIMIT 1`, s.TenantID, s.WorkspaceID, string(s.Environment),
		string(billing.SubscriptionActive), string(billing.SubscriptionCancelScheduled), string(billing.SubscriptionPastDue))
}

// SubscriptionList implements billing.SubscriptionReader.
func (tx *Tx) SubscriptionList(ctx context.Context, s billing.Scope, before string, limit int) ([]billing.WorkspaceSubscription, error) {
	return tx.subscriptionsWhere(ctx, "store.SubscriptionList", `tenant_id = ? AND workspace_id = ? AND environment = ?
		AND (? = '' OR id < ?) ORDER BY id DESC LIMIT ?`, s.TenantID, s.WorkspaceID, string(s.Environment), before, before, limit)
}

// SubscriptionUpdate implements billing.RenewStore and billing.CancelStore.
func (tx *Tx) SubscriptionUpdate(ctx context.Context, s billing.WorkspaceSubscription, from billing.State, fromStart time.Time) (bool, error) {
	const op = "store.SubscriptionUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE billing_subscriptions SET state = ?, period_start = ?, period_end = ?,
		cancel_at_period_end = ?, ended_at = ?, updated_at = ? WHERE id = ? AND state = ? AND period_start = ?`,
		string(s.State), s.PeriodStart, s.PeriodEnd, s.CancelAtPeriodEnd, s.EndedAt, tx.now, s.ID, string(from), fromStart)
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	return n == 1, errf(op, err)
}

type creditGrantRow struct {
	ID             string    `bun:"id"`
	TenantID       string    `bun:"tenant_id"`
	WorkspaceID    string    `bun:"workspace_id"`
	Environment    string    `bun:"environment"`
	SubscriptionID string    `bun:"subscription_id"`
	PeriodStart    time.Time `bun:"period_start"`
	PeriodEnd      time.Time `bun:"period_end"`
	Credits        int64     `bun:"credits"`
	Reference      string    `bun:"reference"`
	CreatedAt      time.Time `bun:"created_at"`
}

// CreditGrantInsert implements billing.PeriodWriter.
func (tx *Tx) CreditGrantInsert(ctx context.Context, g billing.CreditGrant) (bool, error) {
	const op = "store.CreditGrantInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO billing_credit_grants (id, tenant_id, workspace_id, environment, subscription_id,
		period_start, period_end, credits, reference, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (subscription_id, period_start) DO NOTHING`,
		g.ID, g.Scope.TenantID, g.Scope.WorkspaceID, string(g.Scope.Environment), g.SubscriptionID, g.PeriodStart, g.PeriodEnd,
		int64(g.Credits), g.Reference, tx.now)
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	return n == 1, errf(op, err)
}

// CreditGrantList implements billing.OverviewReader.
func (tx *Tx) CreditGrantList(ctx context.Context, s billing.Scope, limit int) ([]billing.CreditGrant, error) {
	var rows []creditGrantRow
	err := tx.idb.NewRaw(`SELECT id, tenant_id, workspace_id, environment, subscription_id, period_start, period_end, credits,
		reference, created_at FROM billing_credit_grants WHERE tenant_id = ? AND workspace_id = ? AND environment = ?
		ORDER BY id DESC LIMIT ?`, s.TenantID, s.WorkspaceID, string(s.Environment), limit).Scan(ctx, &rows)
	if err != nil {
		return nil, notFoundOrNil("store.CreditGrantList", err)
	}
	out := make([]billing.CreditGrant, 0, len(rows))
	for _, r := range rows {
		out = append(out, billing.CreditGrant{ID: r.ID, Scope: billing.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID,
			Environment: access.Environment(r.Environment)}, SubscriptionID: r.SubscriptionID, PeriodStart: r.PeriodStart.UTC(),
			PeriodEnd: r.PeriodEnd.UTC(), Credits: uint64(r.Credits), Reference: r.Reference, CreatedAt: r.CreatedAt.UTC()})
	}
	return out, nil
}

type invoiceRow struct {
	Environment            string    `bun:"environment"`
	ID                     string    `bun:"id"`
	TenantID               string    `bun:"tenant_id"`
	WorkspaceID            string    `bun:"workspace_id"`
	SubscriptionID         string    `bun:"subscription_id"`
	ProviderSubscriptionID string    `bun:"provider_subscription_id"`
	Status                 string    `bun:"status"`
	BillingReason          string    `bun:"billing_reason"`
	AmountDue              int64     `bun:"amount_due"`
	AmountPaid             int64     `bun:"amount_paid"`
	Currency               string    `bun:"currency"`
	PeriodStart            time.Time `bun:"period_start"`
	PeriodEnd              time.Time `bun:"period_end"`
	Created                time.Time `bun:"created"`
}

// InvoiceUpsert implements billing.PeriodWriter.
func (tx *Tx) InvoiceUpsert(ctx context.Context, inv billing.InvoiceRecord) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO billing_invoices (environment, id, tenant_id, workspace_id, subscription_id,
		provider_subscription_id, status, billing_reason, amount_due, amount_paid, currency, period_start, period_end, created, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (environment, id) DO UPDATE SET status = EXCLUDED.status, amount_due = EXCLUDED.amount_due,
		amount_paid = EXCLUDED.amount_paid, updated_at = EXCLUDED.updated_at`,
		string(inv.Scope.Environment), inv.ID, inv.Scope.TenantID, inv.Scope.WorkspaceID, inv.SubscriptionID, inv.Invoice.SubscriptionID,
		inv.Status, inv.BillingReason, inv.AmountDue, inv.AmountPaid, inv.Currency, inv.PeriodStart.UTC(), inv.PeriodEnd.UTC(),
		inv.Created.UTC(), tx.now)
	return errf("store.InvoiceUpsert", err)
}

// InvoiceList implements billing.OverviewReader.
func (tx *Tx) InvoiceList(ctx context.Context, s billing.Scope, limit int) ([]billing.InvoiceRecord, error) {
	var rows []invoiceRow
	err := tx.idb.NewRaw(`SELECT environment, id, tenant_id, workspace_id, subscription_id, provider_subscription_id, status,
		billing_reason, amount_due, amount_paid, currency, period_start, period_end, created FROM billing_invoices
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? ORDER BY created DESC, id DESC LIMIT ?`,
		s.TenantID, s.WorkspaceID, string(s.Environment), limit).Scan(ctx, &rows)
	if err != nil {
		return nil, notFoundOrNil("store.InvoiceList", err)
	}
	out := make([]billing.InvoiceRecord, 0, len(rows))
	for _, r := range rows {
		out = append(out, billing.InvoiceRecord{Scope: billing.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID,
			Environment: access.Environment(r.Environment)}, SubscriptionID: r.SubscriptionID,
			Invoice: billing.Invoice{ID: r.ID, SubscriptionID: r.ProviderSubscriptionID, Status: r.Status, BillingReason: r.BillingReason,
				AmountDue: r.AmountDue, AmountPaid: r.AmountPaid, Currency: r.Currency, PeriodStart: r.PeriodStart.UTC(),
				PeriodEnd: r.PeriodEnd.UTC(), Created: r.Created.UTC()}})
	}
	return out, nil
}

// WebhookEventInsert implements billing.WebhookStore.
func (tx *Tx) WebhookEventInsert(ctx context.Context, e billing.WebhookRecord) (bool, error) {
	const op = "store.WebhookEventInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO billing_webhook_events (environment, event_id, type, object_id, payload, created,
		received_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (environment, event_id) DO NOTHING`,
		string(e.Environment), e.Event.ID, e.Event.Type, e.Event.ObjectID, string(e.Event.Payload), e.Event.Created.UTC(), tx.now)
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	return n == 1, errf(op, err)
}

// WebhookEventCount counts the kept webhook events of env (no billing
// path reads it; the contract suite checks WebhookEventInsert with it).
func (tx *Tx) WebhookEventCount(ctx context.Context, env access.Environment) (int, error) {
	var n int
	err := tx.idb.QueryRowContext(ctx, `SELECT COUNT(*) FROM billing_webhook_events WHERE environment = ?`, string(env)).Scan(&n)
	return n, errf("store.WebhookEventCount", err)
}
