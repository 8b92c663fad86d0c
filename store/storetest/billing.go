package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/store"
)

// exerciseBilling covers the billing port: checkouts kept and found per
// tenant, workspace and environment with their price snapshot;
// compare-and-set activation that happens once under concurrent attempts;
// subscriptions one per checkout and provider subscription, with period
// updates compare-and-set on state and period start; credit grants once per
// period; invoices refreshed in place; webhook events kept once.
func exerciseBilling(t *testing.T, open Opener) {
	t.Run("CheckoutsScoped", func(t *testing.T) { billingCheckouts(t, open) })
	t.Run("ActivationOnce", func(t *testing.T) { billingActivationOnce(t, open) })
	t.Run("SubscriptionPeriods", func(t *testing.T) { billingSubscriptions(t, open) })
	t.Run("CreditGrantsOncePerPeriod", func(t *testing.T) { billingGrants(t, open) })
	t.Run("Invoices", func(t *testing.T) { billingInvoices(t, open) })
	t.Run("WebhookEventsDeduplicated", func(t *testing.T) { billingWebhooks(t, open) })
}

// Scopes of the billing cases: two workspaces of one tenant, one of
// another, and the live twin of the first.
var (
	billingTest  = billing.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	billingLive  = billing.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}
	billingOther = billing.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}
	billingTen2  = billing.Scope{TenantID: "ten_2", WorkspaceID: "ws_3", Environment: access.Test}
)

// billingPrice is the snapshot the cases' checkouts carry.
var billingPrice = billing.PriceSnapshot{PlanID: "pro", PlanName: "Pro", PriceVersionID: "price_pro_1", PriceVersion: 3,
	Currency: "USD", Amount: 1900, Interval: plan.Month, MonthlyCredits: 2000}

// billingSeed creates the workspaces billing rows reference.
func billingSeed(t *testing.T, db *store.DB) {
	t.Helper()
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		for _, f := range []func() error{
			func() error { return tx.TenantInsert(ctx, "ten_1", "Tenant One") },
			func() error { return tx.TenantInsert(ctx, "ten_2", "Tenant Two") },
			func() error { return tx.WorkspaceInsert(ctx, "ws_1", "ten_1", "One") },
			func() error { return tx.WorkspaceInsert(ctx, "ws_2", "ten_1", "Two") },
			func() error { return tx.WorkspaceInsert(ctx, "ws_3", "ten_2", "Three") },
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
}

// billingCheckout is an open checkout of sc with provider session session.
func billingCheckout(id string, sc billing.Scope, session string) billing.Checkout {
	return billing.Checkout{ID: id, Scope: sc, CreatedBy: "user:usr_1", Price: billingPrice, State: billing.CheckoutOpen,
		ProviderSessionID: session, PaymentURL: "https://pay.example/" + session}
}

// billingInsertCheckouts stores checkouts and fails t on error.
func billingInsertCheckouts(t *testing.T, db *store.DB, cs ...billing.Checkout) {
	t.Helper()
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		for _, c := range cs {
			if err := tx.CheckoutInsert(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// billingSub is an active subscription of checkout c with provider id
// providerID, in the period starting at start.
func billingSub(id string, c billing.Checkout, providerID string, start time.Time) billing.WorkspaceSubscription {
	return billing.WorkspaceSubscription{ID: id, Scope: c.Scope, CheckoutID: c.ID, Price: c.Price, State: billing.SubscriptionActive,
		ProviderID: providerID, ProviderCustomerID: "cus_1", PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0)}
}

func billingCheckouts(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	billingSeed(t, db)
	a := billingCheckout("chk_a", billingTest, "cs_1")
	billingInsertCheckouts(t, db, a, billingCheckout("chk_b", billingLive, "cs_1"), billingCheckout("chk_c", billingOther, "cs_2"),
		billingCheckout("chk_d", billingTen2, "cs_3"))

	got, err := db.Read().CheckoutGet(ctx, "chk_a")
	if err != nil {
		t.Fatal(err)
	}
	a.CreatedAt, a.UpdatedAt = Epoch, Epoch
	if got.ID != a.ID || got.Scope != a.Scope || got.Price != a.Price || got.State != a.State || got.CreatedBy != a.CreatedBy ||
		got.ProviderSessionID != a.ProviderSessionID || got.PaymentURL != a.PaymentURL || got.PaidAt != nil || got.SubscriptionID != "" ||
		!got.CreatedAt.Equal(Epoch) || !got.UpdatedAt.Equal(Epoch) {
		t.Fatalf("CheckoutGet = %+v\nwant %+v", got, a)
	}
	// A session id is unique per environment only.
	for _, tc := range []struct {
		env     access.Environment
		session string
		want    string
	}{{access.Test, "cs_1", "chk_a"}, {access.Live, "cs_1", "chk_b"}, {access.Test, "cs_2", "chk_c"}, {access.Test, "cs_3", "chk_d"}} {
		c, err := db.Read().CheckoutGetBySession(ctx, tc.env, tc.session)
		if err != nil || c.ID != tc.want {
			t.Errorf("CheckoutGetBySession(%s, %s) = %s, %v; want %s", tc.env, tc.session, c.ID, err, tc.want)
		}
	}
	if _, err := db.Read().CheckoutGetBySession(ctx, access.Live, "cs_2"); !fault.Is(err, fault.NotFound) {
		t.Errorf("a test session found in live: %v", err)
	}
	if _, err := db.Read().CheckoutGet(ctx, "chk_missing"); !fault.Is(err, fault.NotFound) {
		t.Errorf("CheckoutGet(missing) = %v", err)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		return tx.CheckoutInsert(ctx, billingCheckout("chk_e", billingOther, "cs_1"))
	})
	if err == nil {
		t.Error("a second checkout of test session cs_1 was stored")
	}

	// Compare-and-set on the state: open -> paid once, then paid -> activated.
	clock.Advance(time.Minute)
	paidAt := clock.Now()
	paid := got
	paid.State, paid.PaidAt, paid.ProviderSubscriptionID, paid.ProviderCustomerID = billing.CheckoutPaid, &paidAt, "sub_p1", "cus_1"
	for i, want := range []bool{true, false} {
		var ok bool
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
			ok, err = tx.CheckoutUpdate(ctx, paid, billing.CheckoutOpen)
			return err
		})
		if ok != want {
			t.Fatalf("open -> paid, attempt %d: applied %v, want %v", i, ok, want)
		}
	}
	act := paid
	act.State, act.SubscriptionID = billing.CheckoutActivated, "sub_1"
	var ok bool
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
		ok, err = tx.CheckoutUpdate(ctx, act, billing.CheckoutPaid)
		return err
	})
	got, err = db.Read().CheckoutGet(ctx, "chk_a")
	if !ok || err != nil || got.State != billing.CheckoutActivated || got.SubscriptionID != "sub_1" || got.PaidAt == nil ||
		!got.PaidAt.Equal(paidAt) || got.ProviderSubscriptionID != "sub_p1" || got.ProviderCustomerID != "cus_1" ||
		!got.UpdatedAt.Equal(paidAt) || !got.CreatedAt.Equal(Epoch) || got.Price != billingPrice {
		t.Fatalf("after activation (applied %v): %+v, %v", ok, got, err)
	}
	if other, _ := db.Read().CheckoutGet(ctx, "chk_b"); other.State != billing.CheckoutOpen {
		t.Fatalf("the live checkout moved to %s", other.State)
	}
}

// billingActivationOnce runs 20 activations of one checkout at once, each
// in its own transaction as billing does (read, compare-and-set open ->
// paid, insert the subscription, compare-and-set paid -> activated): one
// wins, one subscription exists, the others see it.
func billingActivationOnce(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ctx := context.Background()
	billingSeed(t, db)
	c := billingCheckout("chk_a", billingTest, "cs_1")
	billingInsertCheckouts(t, db, c)
	const n = 20
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = db.InTx(ctx, func(tx *store.Tx) error {
				won[i] = false // a retried transaction starts over
				cur, err := tx.CheckoutGet(ctx, c.ID)
				if err != nil || cur.State != billing.CheckoutOpen {
					return err
				}
				paid := cur
				paid.State = billing.CheckoutPaid
				ok, err := tx.CheckoutUpdate(ctx, paid, billing.CheckoutOpen)
				if err != nil || !ok {
					return err
				}
				sub := billingSub(fmt.Sprintf("sub_%02d", i), cur, fmt.Sprintf("sub_p%02d", i), Epoch)
				inserted, err := tx.SubscriptionInsert(ctx, sub)
				if err != nil {
					return err
				}
				if !inserted {
					return fmt.Errorf("attempt %d won the checkout but not the subscription", i)
				}
				act := paid
				act.State, act.SubscriptionID = billing.CheckoutActivated, sub.ID
				won[i], err = tx.CheckoutUpdate(ctx, act, billing.CheckoutPaid)
				return err
			})
		})
	}
	wg.Wait()
	winner := ""
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("attempt %d: %v", i, errs[i])
		}
		if won[i] {
			if winner != "" {
				t.Fatalf("attempts %s and %02d both activated the checkout", winner, i)
			}
			winner = fmt.Sprintf("%02d", i)
		}
	}
	if winner == "" {
		t.Fatal("no attempt activated the checkout")
	}
	got, err := db.Read().CheckoutGet(ctx, c.ID)
	if err != nil || got.State != billing.CheckoutActivated || got.SubscriptionID != "sub_"+winner {
		t.Fatalf("checkout = %s %s, %v; want activated by sub_%s", got.State, got.SubscriptionID, err, winner)
	}
	subs, err := db.Read().SubscriptionList(ctx, billingTest, "", 50)
	if err != nil || len(subs) != 1 || subs[0].ID != "sub_"+winner {
		t.Fatalf("subscriptions = %+v, %v", subs, err)
	}
	// Inserting another subscription for the activated checkout does nothing.
	var inserted bool
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
		inserted, err = tx.SubscriptionInsert(ctx, billingSub("sub_late", c, "sub_plate", Epoch))
		return err
	})
	if inserted {
		t.Fatal("a second subscription of one checkout was stored")
	}
}

func billingSubscriptions(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	billingSeed(t, db)
	c1, c2, c3 := billingCheckout("chk_1", billingTest, "cs_1"), billingCheckout("chk_2", billingTest, "cs_2"), billingCheckout("chk_3", billingLive, "cs_3")
	c4 := billingCheckout("chk_4", billingOther, "cs_4")
	billingInsertCheckouts(t, db, c1, c2, c3, c4)
	start := Epoch.Truncate(time.Second)
	insert := func(s billing.WorkspaceSubscription) bool {
		t.Helper()
		var ok bool
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
			ok, err = tx.SubscriptionInsert(ctx, s)
			return err
		})
		return ok
	}
	s1 := billingSub("sub_1", c1, "sub_p1", start)
	if !insert(s1) {
		t.Fatal("first insert did nothing")
	}
	if insert(billingSub("sub_1b", c1, "sub_p9", start)) {
		t.Fatal("a second subscription of chk_1 was stored")
	}
	if insert(billingSub("sub_2", c2, "sub_p1", start)) {
		t.Fatal("a second subscription of provider sub_p1 in test was stored")
	}
	if !insert(billingSub("sub_3", c3, "sub_p1", start)) {
		t.Fatal("provider ids of test and live collided")
	}
	clock.Advance(time.Second)
	if !insert(billingSub("sub_4", c4, "sub_p4", start)) {
		t.Fatal("insert sub_4")
	}

	got, err := db.Read().SubscriptionGet(ctx, "sub_1")
	if err != nil || got.Scope != billingTest || got.CheckoutID != "chk_1" || got.Price != billingPrice || got.State != billing.SubscriptionActive ||
		got.ProviderID != "sub_p1" || got.ProviderCustomerID != "cus_1" || !got.PeriodStart.Equal(start) || !got.PeriodEnd.Equal(s1.PeriodEnd) ||
		got.CancelAtPeriodEnd || got.EndedAt != nil || !got.CreatedAt.Equal(Epoch) {
		t.Fatalf("SubscriptionGet = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		name    string
		getFunc func() (billing.WorkspaceSubscription, error)
		want    string
	}{
		{"by checkout", func() (billing.WorkspaceSubscription, error) {
			return db.Read().SubscriptionGetByCheckout(ctx, "chk_3")
		}, "sub_3"},
		{"by provider test", func() (billing.WorkspaceSubscription, error) {
			return db.Read().SubscriptionGetByProvider(ctx, access.Test, "sub_p1")
		}, "sub_1"},
		{"by provider live", func() (billing.WorkspaceSubscription, error) {
			return db.Read().SubscriptionGetByProvider(ctx, access.Live, "sub_p1")
		}, "sub_3"},
		{"current test", func() (billing.WorkspaceSubscription, error) { return db.Read().SubscriptionCurrent(ctx, billingTest) }, "sub_1"},
		{"current other workspace", func() (billing.WorkspaceSubscription, error) { return db.Read().SubscriptionCurrent(ctx, billingOther) }, "sub_4"},
	} {
		if s, err := tc.getFunc(); err != nil || s.ID != tc.want {
			t.Errorf("%s = %s, %v; want %s", tc.name, s.ID, err, tc.want)
		}
	}
	for name, err := range map[string]error{
		"get missing":        func() error { _, err := db.Read().SubscriptionGet(ctx, "sub_x"); return err }(),
		"by checkout none":   func() error { _, err := db.Read().SubscriptionGetByCheckout(ctx, "chk_2"); return err }(),
		"by provider live":   func() error { _, err := db.Read().SubscriptionGetByProvider(ctx, access.Live, "sub_p4"); return err }(),
		"current of tenant2": func() error { _, err := db.Read().SubscriptionCurrent(ctx, billingTen2); return err }(),
	} {
		if !fault.Is(err, fault.NotFound) {
			t.Errorf("%s = %v, want NOT_FOUND", name, err)
		}
	}

	// Period updates compare-and-set on state and period start.
	clock.Advance(time.Minute)
	update := func(s billing.WorkspaceSubscription, from billing.State, fromStart time.Time) bool {
		t.Helper()
		var ok bool
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
			ok, err = tx.SubscriptionUpdate(ctx, s, from, fromStart)
			return err
		})
		return ok
	}
	next := got
	next.PeriodStart, next.PeriodEnd = got.PeriodEnd, got.PeriodEnd.AddDate(0, 1, 0)
	if update(next, billing.SubscriptionPastDue, got.PeriodStart) {
		t.Fatal("an update from the wrong state applied")
	}
	if update(next, billing.SubscriptionActive, got.PeriodStart.Add(time.Second)) {
		t.Fatal("an update from the wrong period start applied")
	}
	if !update(next, billing.SubscriptionActive, got.PeriodStart) {
		t.Fatal("the renewal did not apply")
	}
	if update(next, billing.SubscriptionActive, got.PeriodStart) {
		t.Fatal("the renewal applied twice")
	}
	renewed, err := db.Read().SubscriptionGet(ctx, "sub_1")
	if err != nil || !renewed.PeriodStart.Equal(next.PeriodStart) || !renewed.PeriodEnd.Equal(next.PeriodEnd) ||
		!renewed.UpdatedAt.Equal(clock.Now()) || !renewed.CreatedAt.Equal(Epoch) {
		t.Fatalf("after renewal: %+v, %v", renewed, err)
	}
	ended := renewed
	endedAt := clock.Now()
	ended.State, ended.CancelAtPeriodEnd, ended.EndedAt = billing.SubscriptionCanceled, true, &endedAt
	if !update(ended, billing.SubscriptionActive, renewed.PeriodStart) {
		t.Fatal("the cancellation did not apply")
	}
	final, err := db.Read().SubscriptionGet(ctx, "sub_1")
	if err != nil || final.State != billing.SubscriptionCanceled || !final.CancelAtPeriodEnd || final.EndedAt == nil || !final.EndedAt.Equal(endedAt) {
		t.Fatalf("after cancellation: %+v, %v", final, err)
	}
	if _, err := db.Read().SubscriptionCurrent(ctx, billingTest); !fault.Is(err, fault.NotFound) {
		t.Fatalf("an ended subscription is current: %v", err)
	}

	// Lists are per scope, newest first, with a cursor.
	c5 := billingCheckout("chk_5", billingTest, "cs_5")
	billingInsertCheckouts(t, db, c5)
	insert(billingSub("sub_5", c5, "sub_p5", start))
	page, err := db.Read().SubscriptionList(ctx, billingTest, "", 1)
	if err != nil || len(page) != 1 || page[0].ID != "sub_5" {
		t.Fatalf("page 1 = %+v, %v", page, err)
	}
	page, err = db.Read().SubscriptionList(ctx, billingTest, "sub_5", 10)
	if err != nil || len(page) != 1 || page[0].ID != "sub_1" {
		t.Fatalf("page 2 = %+v, %v", page, err)
	}
	if cur, err := db.Read().SubscriptionCurrent(ctx, billingTest); err != nil || cur.ID != "sub_5" {
		t.Fatalf("current = %s, %v", cur.ID, err)
	}
	if page, err := db.Read().SubscriptionList(ctx, billingTen2, "", 10); err != nil || len(page) != 0 {
		t.Fatalf("tenant 2 lists %d subscriptions, %v", len(page), err)
	}
}

func billingGrants(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	billingSeed(t, db)
	c := billingCheckout("chk_1", billingTest, "cs_1")
	billingInsertCheckouts(t, db, c)
	start := Epoch.Truncate(time.Second)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.SubscriptionInsert(ctx, billingSub("sub_1", c, "sub_p1", start))
		return err
	})
	grant := func(id string, periodStart time.Time) bool {
		t.Helper()
		var ok bool
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
			ok, err = tx.CreditGrantInsert(ctx, billing.CreditGrant{ID: id, Scope: billingTest, SubscriptionID: "sub_1",
				PeriodStart: periodStart, PeriodEnd: periodStart.AddDate(0, 1, 0), Credits: 2000,
				Reference: "grant:" + billing.GrantRef("sub_1", periodStart)})
			return err
		})
		return ok
	}
	if !grant("cgr_1", start) {
		t.Fatal("first grant did nothing")
	}
	if grant("cgr_1b", start) {
		t.Fatal("a period was granted twice")
	}
	clock.Advance(time.Hour)
	if !grant("cgr_2", start.AddDate(0, 1, 0)) {
		t.Fatal("the next period was not granted")
	}
	gs, err := db.Read().CreditGrantList(ctx, billingTest, 10)
	if err != nil || len(gs) != 2 || gs[0].ID != "cgr_2" || gs[1].ID != "cgr_1" {
		t.Fatalf("grants = %+v, %v", gs, err)
	}
	g := gs[1]
	if g.Scope != billingTest || g.SubscriptionID != "sub_1" || g.Credits != 2000 || !g.PeriodStart.Equal(start) ||
		!g.PeriodEnd.Equal(start.AddDate(0, 1, 0)) || g.Reference != "grant:"+billing.GrantRef("sub_1", start) || !g.CreatedAt.Equal(Epoch) {
		t.Fatalf("grant = %+v", g)
	}
	if gs, err := db.Read().CreditGrantList(ctx, billingLive, 10); err != nil || len(gs) != 0 {
		t.Fatalf("live lists %d grants, %v", len(gs), err)
	}
	if gs, err := db.Read().CreditGrantList(ctx, billingTest, 1); err != nil || len(gs) != 1 {
		t.Fatalf("limit 1 lists %d grants, %v", len(gs), err)
	}
}

func billingInvoices(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	billingSeed(t, db)
	start := Epoch.Truncate(time.Second)
	inv := func(id, status string, paid int64, created time.Time) billing.InvoiceRecord {
		return billing.InvoiceRecord{Scope: billingTest, SubscriptionID: "sub_1", Invoice: billing.Invoice{ID: id, SubscriptionID: "sub_p1",
			Status: status, BillingReason: "subscription_cycle", AmountDue: 1900, AmountPaid: paid, Currency: "usd",
			PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), Created: created}}
	}
	upsert := func(rs ...billing.InvoiceRecord) {
		t.Helper()
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			for _, r := range rs {
				if err := tx.InvoiceUpsert(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	first := inv("in_1", "paid", 1900, start)
	first.BillingReason = "subscription_create"
	live := inv("in_1", "paid", 1900, start)
	live.Scope = billingLive
	upsert(first, inv("in_2", "open", 0, start.Add(time.Hour)), live)
	clock.Advance(time.Minute)
	upsert(inv("in_2", "paid", 1900, start.Add(time.Hour))) // the retry paid it

	got, err := db.Read().InvoiceList(ctx, billingTest, 10)
	if err != nil || len(got) != 2 || got[0].ID != "in_2" || got[1].ID != "in_1" {
		t.Fatalf("invoices = %+v, %v", got, err)
	}
	if got[0].Status != "paid" || got[0].AmountPaid != 1900 {
		t.Fatalf("the refreshed invoice = %+v", got[0])
	}
	want := first
	if g := got[1]; g.Scope != want.Scope || g.SubscriptionID != "sub_1" || g.Invoice != want.Invoice {
		t.Fatalf("invoice = %+v\nwant %+v", g, want)
	}
	if got, err := db.Read().InvoiceList(ctx, billingLive, 10); err != nil || len(got) != 1 {
		t.Fatalf("live lists %d invoices, %v", len(got), err)
	}
	if got, err := db.Read().InvoiceList(ctx, billingOther, 10); err != nil || len(got) != 0 {
		t.Fatalf("another workspace lists %d invoices, %v", len(got), err)
	}
}

func billingWebhooks(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ctx := context.Background()
	rec := func(env access.Environment, id string) billing.WebhookRecord {
		return billing.WebhookRecord{Environment: env, Event: billing.WebhookEvent{ID: id, Type: "invoice.paid", ObjectID: "in_1",
			Created: Epoch.Truncate(time.Second), Payload: []byte(`{"id":"` + id + `"}`)}}
	}
	const n = 20
	var wg sync.WaitGroup
	inserted := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = db.InTx(ctx, func(tx *store.Tx) (err error) {
				inserted[i], err = tx.WebhookEventInsert(ctx, rec(access.Test, "evt_1"))
				return err
			})
		})
	}
	wg.Wait()
	first := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("delivery %d: %v", i, errs[i])
		}
		if inserted[i] {
			first++
		}
	}
	if first != 1 {
		t.Fatalf("%d of %d concurrent deliveries were kept, want 1", first, n)
	}
	var ok bool
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
		ok, err = tx.WebhookEventInsert(ctx, rec(access.Live, "evt_1"))
		return err
	})
	if !ok {
		t.Fatal("the live event evt_1 was taken for a replay of the test one")
	}
	for env, want := range map[access.Environment]int{access.Test: 1, access.Live: 1} {
		if got, err := db.Read().WebhookEventCount(ctx, env); err != nil || got != want {
			t.Errorf("WebhookEventCount(%s) = %d, %v; want %d", env, got, err, want)
		}
	}
}
