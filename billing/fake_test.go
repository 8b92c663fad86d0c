package billing_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/policy"
)

// This file holds the in-process fakes the domain's unit tests run on: a
// memory Store whose units of work are serialized and roll back on error,
// and a PaymentProvider that keeps Stripe-shaped sessions, subscriptions and
// invoices and can be told to fail. The store contract suite
// (store/storetest) proves the real adapter behaves as this fake does.

// Compile-time assertions: the fakes implement the ports.
var (
	_ billing.CheckoutStarter    = (*memTx)(nil)
	_ billing.CheckoutReader     = (*memTx)(nil)
	_ billing.SubscriptionReader = (*memTx)(nil)
	_ billing.OverviewReader     = (*memTx)(nil)
	_ billing.CancelStore        = (*memTx)(nil)
	_ billing.WebhookStore       = (*memTx)(nil)
	_ billing.FeeStore           = (*memTx)(nil)
	_ billing.GrantStore         = (*memTx)(nil)
	_ billing.EventStore         = (*memTx)(nil)
	_ plan.Store                 = (*memTx)(nil)
	_ billing.PaymentProvider    = (*fakeProvider)(nil)
)

// epoch is where every test's clock starts.
var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC()
	c.mu.Unlock()
}

// memState is everything the fake store keeps. It is copied before each
// unit of work and restored when the unit fails.
type memState struct {
	plans        map[string]plan.Plan
	assignments  map[string]plan.Assignment // workspace|environment
	entitlements map[string]bool            // workspace|environment|entitlement|source
	checkouts    map[string]billing.Checkout
	subs         map[string]billing.WorkspaceSubscription
	grants       map[string]billing.CreditGrant   // subscription|period start
	invoices     map[string]billing.InvoiceRecord // environment|id
	webhooks     map[string]billing.WebhookRecord // environment|event id
	inbox        map[string]bool                  // consumer|event id
	jobKeys      map[string]bool
	jobs         []jobs.InsertParams
	outbox       []outbox.Event
	audit        []account.AuditEvent
	accounts     map[string]ledger.Account // scope|ledger|name
	movements    map[string]ledger.Posted  // scope|reference
	policies     map[string][]policy.Version
}

func newMemState() *memState {
	return &memState{plans: map[string]plan.Plan{}, assignments: map[string]plan.Assignment{}, entitlements: map[string]bool{},
		checkouts: map[string]billing.Checkout{}, subs: map[string]billing.WorkspaceSubscription{},
		grants: map[string]billing.CreditGrant{}, invoices: map[string]billing.InvoiceRecord{},
		webhooks: map[string]billing.WebhookRecord{}, inbox: map[string]bool{}, jobKeys: map[string]bool{},
		accounts: map[string]ledger.Account{}, movements: map[string]ledger.Posted{}, policies: map[string][]policy.Version{}}
}

// clone copies the state deeply enough for a rollback: maps and slices are
// new, their values are copied structs.
func (s *memState) clone() *memState {
	pol := make(map[string][]policy.Version, len(s.policies))
	for k, v := range s.policies {
		pol[k] = slices.Clone(v)
	}
	return &memState{plans: maps.Clone(s.plans), assignments: maps.Clone(s.assignments), entitlements: maps.Clone(s.entitlements),
		checkouts: maps.Clone(s.checkouts), subs: maps.Clone(s.subs), grants: maps.Clone(s.grants),
		invoices: maps.Clone(s.invoices), webhooks: maps.Clone(s.webhooks), inbox: maps.Clone(s.inbox),
		jobKeys: maps.Clone(s.jobKeys), jobs: slices.Clone(s.jobs), outbox: slices.Clone(s.outbox), audit: slices.Clone(s.audit),
		accounts: maps.Clone(s.accounts), movements: maps.Clone(s.movements), policies: pol}
}

// memDB is the fake database: one state, units of work run one at a time.
type memDB struct {
	mu    sync.Mutex
	st    *memState
	clock *fakeClock
	ids   atomic.Int64
	// runs counts units of work.
	runs atomic.Int64
}

func newMemDB(clock *fakeClock) *memDB { return &memDB{st: newMemState(), clock: clock} }

// run runs fn as one unit of work: alone on the state, which is restored
// when fn fails. The methods below hand it over as the port of each path.
func (db *memDB) run(ctx context.Context, fn func(tx *memTx) error) error {
	db.runs.Add(1)
	db.mu.Lock()
	defer db.mu.Unlock()
	saved := db.st.clone()
	tx := &memTx{db: db, s: db.st, now: db.clock.Now()}
	if err := fn(tx); err != nil {
		db.st = saved
		return err
	}
	return nil
}

// activateRun is Service.Reconcile's unit of work.
func (db *memDB) activateRun(ctx context.Context, fn func(st billing.ActivateStore, plans plan.Store) error) error {
	return db.run(ctx, func(tx *memTx) error { return fn(tx, tx) })
}

// renewRun is Service.Sync's unit of work.
func (db *memDB) renewRun(ctx context.Context, fn func(st billing.RenewStore, plans plan.Store) error) error {
	return db.run(ctx, func(tx *memTx) error { return fn(tx, tx) })
}

// eventRun is Service.ApplyEvent's unit of work, and that of billing's jobs.
func (db *memDB) eventRun(ctx context.Context, fn func(st billing.EventStore, plans plan.Store) error) error {
	return db.run(ctx, func(tx *memTx) error { return fn(tx, tx) })
}

// cancelRun is Service.Cancel's unit of work.
func (db *memDB) cancelRun(ctx context.Context, fn func(st billing.CancelStore) error) error {
	return db.run(ctx, func(tx *memTx) error { return fn(tx) })
}

// getRun is Service.CancelAtProvider's unit of work.
func (db *memDB) getRun(ctx context.Context, fn func(st billing.SubscriptionGetter) error) error {
	return db.run(ctx, func(tx *memTx) error { return fn(tx) })
}

// webhookRun is Service.ReceiveWebhook's unit of work.
func (db *memDB) webhookRun(ctx context.Context, fn func(st billing.WebhookStore) error) error {
	return db.run(ctx, func(tx *memTx) error { return fn(tx) })
}

// grantRun is the unit of work of Service.PlanGranter's grants.
func (db *memDB) grantRun(ctx context.Context, fn func(st billing.GrantStore) error) error {
	return db.run(ctx, func(tx *memTx) error { return fn(tx) })
}

// read runs fn on the state under the lock, for assertions.
func (db *memDB) read(fn func(s *memState)) {
	db.mu.Lock()
	defer db.mu.Unlock()
	fn(db.st)
}

// memTx is one unit of work on a memDB. Its time is fixed when it starts.
type memTx struct {
	db  *memDB
	s   *memState
	now time.Time
}

func notFound(op string) error { return fault.E(op, fault.NotFound, "") }

// Now implements the unit of work's clock.
func (tx *memTx) Now() time.Time { return tx.now }

// NewID returns prefix and a counter, so ids sort by creation.
func (tx *memTx) NewID(prefix string) string {
	return fmt.Sprintf("%s%026d", prefix, tx.db.ids.Add(1))
}

// PlanList implements plan.Store.
func (tx *memTx) PlanList(ctx context.Context) ([]plan.Plan, error) {
	out := slices.Collect(maps.Values(tx.s.plans))
	slices.SortFunc(out, func(a, b plan.Plan) int { return cmp.Compare(a.Position, b.Position) })
	return out, nil
}

// JobInsert implements jobs.Enqueuer, deduplicating on UniqueKey.
func (tx *memTx) JobInsert(ctx context.Context, p jobs.InsertParams) (bool, error) {
	if p.UniqueKey != "" {
		if tx.s.jobKeys[p.UniqueKey] {
			return false, nil
		}
		tx.s.jobKeys[p.UniqueKey] = true
	}
	tx.s.jobs = append(tx.s.jobs, p)
	return true, nil
}

// PlanGet implements plan.Store.
func (tx *memTx) PlanGet(ctx context.Context, id string) (plan.Plan, error) {
	p, ok := tx.s.plans[id]
	if !ok {
		return plan.Plan{}, notFound("fake.PlanGet")
	}
	p.Prices = slices.Clone(p.Prices)
	return p, nil
}

// PlanUpsert implements plan.Store.
func (tx *memTx) PlanUpsert(ctx context.Context, p plan.Plan) error {
	p.Prices = tx.s.plans[p.ID].Prices
	tx.s.plans[p.ID] = p
	return nil
}

// PlanDeactivateExcept implements plan.Store.
func (tx *memTx) PlanDeactivateExcept(ctx context.Context, ids []string) error {
	for id, p := range tx.s.plans {
		if !slices.Contains(ids, id) {
			p.Active = false
			tx.s.plans[id] = p
		}
	}
	return nil
}

// PriceVersionInsert implements plan.Store.
func (tx *memTx) PriceVersionInsert(ctx context.Context, pv plan.PriceVersion) (plan.PriceVersion, bool, error) {
	p := tx.s.plans[pv.PlanID]
	for _, x := range p.Prices {
		if x.Currency == pv.Currency && x.Interval == pv.Interval && x.Version == pv.Version {
			return x, false, nil
		}
	}
	pv.CreatedAt = tx.now
	p.Prices = append(slices.Clone(p.Prices), pv)
	tx.s.plans[pv.PlanID] = p
	return pv, true, nil
}

// PriceVersionActivate implements plan.Store.
func (tx *memTx) PriceVersionActivate(ctx context.Context, planID string, activeIDs []string) error {
	p := tx.s.plans[planID]
	p.Prices = slices.Clone(p.Prices)
	for i := range p.Prices {
		p.Prices[i].Active = slices.Contains(activeIDs, p.Prices[i].ID)
	}
	tx.s.plans[planID] = p
	return nil
}

// WorkspacePlanSet implements plan.Store.
func (tx *memTx) WorkspacePlanSet(ctx context.Context, a plan.Assignment) error {
	a.Since = tx.now
	tx.s.assignments[a.WorkspaceID+"|"+string(a.Environment)] = a
	return nil
}

// WorkspacePlanGet implements plan.Store.
func (tx *memTx) WorkspacePlanGet(ctx context.Context, workspaceID string, env access.Environment) (plan.Assignment, error) {
	a, ok := tx.s.assignments[workspaceID+"|"+string(env)]
	if !ok {
		return plan.Assignment{}, notFound("fake.WorkspacePlanGet")
	}
	return a, nil
}

// WorkspacePlanList implements plan.Store.
func (tx *memTx) WorkspacePlanList(ctx context.Context, after string, limit int) ([]plan.Assignment, error) {
	var out []plan.Assignment
	for _, a := range tx.s.assignments {
		if _, live := tx.s.assignments[a.WorkspaceID+"|live"]; a.WorkspaceID > after && (a.Environment == access.Live || !live) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b plan.Assignment) int { return strings.Compare(a.WorkspaceID, b.WorkspaceID) })
	return out[:min(limit, len(out))], nil
}

// EntitlementSet implements plan.Store.
func (tx *memTx) EntitlementSet(ctx context.Context, workspaceID, entitlement, source, env string, on bool) error {
	k := workspaceID + "|" + env + "|" + entitlement + "|" + source
	if on {
		tx.s.entitlements[k] = true
	} else {
		delete(tx.s.entitlements, k)
	}
	return nil
}

// OutboxInsert implements outbox.Writer.
func (tx *memTx) OutboxInsert(ctx context.Context, e outbox.Event) (outbox.Event, error) {
	e.ID, e.OccurredAt = tx.NewID("evt_"), tx.now
	tx.s.outbox = append(tx.s.outbox, e)
	return e, nil
}

func accountKey(s access.Scope, k ledger.Kind, name string) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s", s.TenantID, s.WorkspaceID, s.Environment, k, name)
}

// LedgerAccountsLock opens missing accounts and returns them, for LedgerAccountsApply.
func (tx *memTx) LedgerAccountsLock(ctx context.Context, s access.Scope, k ledger.Kind, specs []ledger.AccountSpec) ([]ledger.Account, error) {
	out := make([]ledger.Account, len(specs))
	for i, sp := range specs {
		a, ok := tx.s.accounts[accountKey(s, k, sp.Name)]
		if !ok {
			a = ledger.Account{Scope: s, Ledger: k, Name: sp.Name, Decimals: sp.Decimals, AllowNegative: sp.AllowNegative,
				CreatedAt: tx.now, UpdatedAt: tx.now}
		}
		out[i] = a
	}
	return out, nil
}

// LedgerAccountsApply implements ledger.Mover.
func (tx *memTx) LedgerAccountsApply(ctx context.Context, s access.Scope, k ledger.Kind, changes []ledger.AccountChange, insufficient fault.Code) error {
	specs := make([]ledger.AccountSpec, len(changes))
	for i, c := range changes {
		specs[i] = c.AccountSpec
	}
	accounts, err := tx.LedgerAccountsLock(ctx, s, k, specs)
	if err != nil {
		return err
	}
	if err := ledger.ApplyChanges(accounts, changes, insufficient); err != nil {
		return err
	}
	for _, a := range accounts {
		a.UpdatedAt = tx.now
		tx.s.accounts[accountKey(a.Scope, a.Ledger, a.Name)] = a
	}
	return nil
}

// LedgerMovementGet implements ledger.Mover.
func (tx *memTx) LedgerMovementGet(ctx context.Context, s access.Scope, reference string) (ledger.Posted, error) {
	m, ok := tx.s.movements[accountKey(s, "", reference)]
	if !ok {
		return ledger.Posted{}, notFound("fake.LedgerMovementGet")
	}
	return m, nil
}

// LedgerMovementLock implements ledger.Mover: the fake serializes units of
// work already.
func (tx *memTx) LedgerMovementLock(ctx context.Context, s access.Scope, reference string) (ledger.Posted, error) {
	return tx.LedgerMovementGet(ctx, s, reference)
}

// LedgerMovementInsert implements ledger.Mover.
func (tx *memTx) LedgerMovementInsert(ctx context.Context, m ledger.Posted, fresh bool) error {
	k := accountKey(m.Scope, "", m.Reference)
	if _, ok := tx.s.movements[k]; ok {
		return fault.E("fake.LedgerMovementInsert", fault.Conflict, "duplicate reference")
	}
	tx.s.movements[k] = m
	return nil
}

// AuditInsert implements account.AuditWriter.
func (tx *memTx) AuditInsert(ctx context.Context, e account.AuditEvent) error {
	tx.s.audit = append(tx.s.audit, e)
	return nil
}

func policyKey(s policy.Scope, id string) string { return fmt.Sprintf("%+v|%s", s, id) }

// PolicyInsert implements policy.Store.
func (tx *memTx) PolicyInsert(ctx context.Context, v policy.Version) (policy.Version, bool, error) {
	k := policyKey(v.Scope, v.ID)
	for _, x := range tx.s.policies[k] {
		if x.Version == v.Version {
			return x, false, nil
		}
	}
	v.CreatedAt = tx.now
	tx.s.policies[k] = append(tx.s.policies[k], v)
	return v, true, nil
}

// PolicyCurrent implements policy.Store.
func (tx *memTx) PolicyCurrent(ctx context.Context, s policy.Scope, id string) (policy.Version, error) {
	vs := tx.s.policies[policyKey(s, id)]
	if len(vs) == 0 {
		return policy.Version{}, notFound("fake.PolicyCurrent")
	}
	return vs[len(vs)-1], nil
}

// PolicyGet implements policy.Store.
func (tx *memTx) PolicyGet(ctx context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	for _, v := range tx.s.policies[policyKey(s, id)] {
		if v.Version == version {
			return v, nil
		}
	}
	return policy.Version{}, notFound("fake.PolicyGet")
}

// PolicyHistory implements policy.Store.
func (tx *memTx) PolicyHistory(ctx context.Context, s policy.Scope, id string, p policy.HistoryParams) ([]policy.Version, error) {
	var out []policy.Version
	vs := tx.s.policies[policyKey(s, id)]
	for i := len(vs) - 1; i >= 0 && len(out) < p.Limit; i-- {
		if p.Before <= 0 || vs[i].Version < p.Before {
			out = append(out, vs[i])
		}
	}
	return out, nil
}

// InboxRecord implements outbox.Inbox.
func (tx *memTx) InboxRecord(ctx context.Context, consumer, eventID string) (bool, error) {
	k := consumer + "|" + eventID
	if tx.s.inbox[k] {
		return false, nil
	}
	tx.s.inbox[k] = true
	return true, nil
}

// CheckoutInsert implements the billing ports.
func (tx *memTx) CheckoutInsert(ctx context.Context, c billing.Checkout) error {
	if _, ok := tx.s.checkouts[c.ID]; ok {
		return fault.E("fake.CheckoutInsert", fault.Conflict, "duplicate checkout")
	}
	c.CreatedAt, c.UpdatedAt = tx.now, tx.now
	tx.s.checkouts[c.ID] = c
	return nil
}

// CheckoutGet implements the billing ports.
func (tx *memTx) CheckoutGet(ctx context.Context, id string) (billing.Checkout, error) {
	c, ok := tx.s.checkouts[id]
	if !ok {
		return billing.Checkout{}, notFound("fake.CheckoutGet")
	}
	return c, nil
}

// CheckoutGetBySession implements the billing ports.
func (tx *memTx) CheckoutGetBySession(ctx context.Context, env access.Environment, sessionID string) (billing.Checkout, error) {
	for _, c := range tx.s.checkouts {
		if c.Scope.Environment == env && c.ProviderSessionID == sessionID {
			return c, nil
		}
	}
	return billing.Checkout{}, notFound("fake.CheckoutGetBySession")
}

// CheckoutUpdate implements the billing ports: compare-and-set on the state.
func (tx *memTx) CheckoutUpdate(ctx context.Context, c billing.Checkout, from billing.State) (bool, error) {
	cur, ok := tx.s.checkouts[c.ID]
	if !ok || cur.State != from {
		return false, nil
	}
	cur.State, cur.ProviderSubscriptionID, cur.ProviderCustomerID = c.State, c.ProviderSubscriptionID, c.ProviderCustomerID
	cur.PaidAt, cur.SubscriptionID, cur.UpdatedAt = c.PaidAt, c.SubscriptionID, tx.now
	tx.s.checkouts[c.ID] = cur
	return true, nil
}

// SubscriptionInsert implements the billing ports: one per checkout and per
// provider subscription.
func (tx *memTx) SubscriptionInsert(ctx context.Context, s billing.WorkspaceSubscription) (bool, error) {
	for _, x := range tx.s.subs {
		if x.ID == s.ID || x.CheckoutID == s.CheckoutID || x.Scope.Environment == s.Scope.Environment && x.ProviderID == s.ProviderID {
			return false, nil
		}
	}
	s.CreatedAt, s.UpdatedAt = tx.now, tx.now
	tx.s.subs[s.ID] = s
	return true, nil
}

// SubscriptionGet implements the billing ports.
func (tx *memTx) SubscriptionGet(ctx context.Context, id string) (billing.WorkspaceSubscription, error) {
	s, ok := tx.s.subs[id]
	if !ok {
		return billing.WorkspaceSubscription{}, notFound("fake.SubscriptionGet")
	}
	return s, nil
}

// SubscriptionGetByCheckout implements the billing ports.
func (tx *memTx) SubscriptionGetByCheckout(ctx context.Context, checkoutID string) (billing.WorkspaceSubscription, error) {
	for _, s := range tx.s.subs {
		if s.CheckoutID == checkoutID {
			return s, nil
		}
	}
	return billing.WorkspaceSubscription{}, notFound("fake.SubscriptionGetByCheckout")
}

// SubscriptionGetByProvider implements the billing ports.
func (tx *memTx) SubscriptionGetByProvider(ctx context.Context, env access.Environment, providerID string) (billing.WorkspaceSubscription, error) {
	for _, s := range tx.s.subs {
		if s.Scope.Environment == env && s.ProviderID == providerID {
			return s, nil
		}
	}
	return billing.WorkspaceSubscription{}, notFound("fake.SubscriptionGetByProvider")
}

// scopeSubs lists a scope's subscriptions, newest first.
func (tx *memTx) scopeSubs(sc billing.Scope) []billing.WorkspaceSubscription {
	var out []billing.WorkspaceSubscription
	for _, s := range tx.s.subs {
		if s.Scope == sc {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b billing.WorkspaceSubscription) int { return strings.Compare(b.ID, a.ID) })
	return out
}

// SubscriptionCurrent implements the billing ports.
func (tx *memTx) SubscriptionCurrent(ctx context.Context, sc billing.Scope) (billing.WorkspaceSubscription, error) {
	for _, s := range tx.scopeSubs(sc) {
		if !s.State.Final() {
			return s, nil
		}
	}
	return billing.WorkspaceSubscription{}, notFound("fake.SubscriptionCurrent")
}

// SubscriptionList implements the billing ports.
func (tx *memTx) SubscriptionList(ctx context.Context, sc billing.Scope, before string, limit int) ([]billing.WorkspaceSubscription, error) {
	var out []billing.WorkspaceSubscription
	for _, s := range tx.scopeSubs(sc) {
		if (before == "" || s.ID < before) && len(out) < limit {
			out = append(out, s)
		}
	}
	return out, nil
}

// SubscriptionUpdate implements the billing ports: compare-and-set on the state
// and period start.
func (tx *memTx) SubscriptionUpdate(ctx context.Context, s billing.WorkspaceSubscription, from billing.State, fromStart time.Time) (bool, error) {
	cur, ok := tx.s.subs[s.ID]
	if !ok || cur.State != from || !cur.PeriodStart.Equal(fromStart) {
		return false, nil
	}
	cur.State, cur.PeriodStart, cur.PeriodEnd, cur.CancelAtPeriodEnd, cur.EndedAt = s.State, s.PeriodStart, s.PeriodEnd, s.CancelAtPeriodEnd, s.EndedAt
	cur.UpdatedAt = tx.now
	tx.s.subs[s.ID] = cur
	return true, nil
}

// CreditGrantInsert implements the billing ports: once per (subscription, period start).
func (tx *memTx) CreditGrantInsert(ctx context.Context, g billing.CreditGrant) (bool, error) {
	k := g.SubscriptionID + "|" + g.PeriodStart.UTC().Format(time.RFC3339Nano)
	if _, ok := tx.s.grants[k]; ok {
		return false, nil
	}
	g.CreatedAt = tx.now
	tx.s.grants[k] = g
	return true, nil
}

// CreditGrantList implements the billing ports.
func (tx *memTx) CreditGrantList(ctx context.Context, sc billing.Scope, limit int) ([]billing.CreditGrant, error) {
	var out []billing.CreditGrant
	for _, g := range tx.s.grants {
		if g.Scope == sc {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b billing.CreditGrant) int { return strings.Compare(b.ID, a.ID) })
	return out[:min(limit, len(out))], nil
}

// InvoiceUpsert implements the billing ports.
func (tx *memTx) InvoiceUpsert(ctx context.Context, inv billing.InvoiceRecord) error {
	tx.s.invoices[string(inv.Scope.Environment)+"|"+inv.ID] = inv
	return nil
}

// InvoiceList implements the billing ports.
func (tx *memTx) InvoiceList(ctx context.Context, sc billing.Scope, limit int) ([]billing.InvoiceRecord, error) {
	var out []billing.InvoiceRecord
	for _, inv := range tx.s.invoices {
		if inv.Scope == sc {
			out = append(out, inv)
		}
	}
	slices.SortFunc(out, func(a, b billing.InvoiceRecord) int { return b.Created.Compare(a.Created) })
	return out[:min(limit, len(out))], nil
}

// WebhookEventInsert implements the billing ports.
func (tx *memTx) WebhookEventInsert(ctx context.Context, e billing.WebhookRecord) (bool, error) {
	k := string(e.Environment) + "|" + e.Event.ID
	if _, ok := tx.s.webhooks[k]; ok {
		return false, nil
	}
	tx.s.webhooks[k] = e
	return true, nil
}

// WebhookEventCount implements the billing ports.
func (tx *memTx) WebhookEventCount(ctx context.Context, env access.Environment) (int, error) {
	n := 0
	for _, e := range tx.s.webhooks {
		if e.Environment == env {
			n++
		}
	}
	return n, nil
}

// fakeProvider is an in-process PaymentProvider in the shape of Stripe
// Checkout in subscription mode. Tests drive the customer's side (pay,
// renew, endPeriod) and inject failures per method.
type fakeProvider struct {
	clock  *fakeClock
	secret string

	mu       sync.Mutex
	n        int
	sessions map[string]*billing.CheckoutSession
	subs     map[string]*billing.Subscription
	invoices map[string][]billing.Invoice // by subscription, oldest first
	requests []billing.CheckoutRequest
	fail     map[string][]error // method -> errors for the next calls
	calls    map[string]int
	// onCall, when set, runs at the start of every call (outside the lock).
	onCall func(method string)
}

func newFakeProvider(clock *fakeClock) *fakeProvider {
	return &fakeProvider{clock: clock, secret: "whsec_fake", sessions: map[string]*billing.CheckoutSession{},
		subs: map[string]*billing.Subscription{}, invoices: map[string][]billing.Invoice{}, fail: map[string][]error{},
		calls: map[string]int{}}
}

// failNext makes the next calls of method fail with errs, in order.
func (p *fakeProvider) failNext(method string, errs ...error) {
	p.mu.Lock()
	p.fail[method] = append(p.fail[method], errs...)
	p.mu.Unlock()
}

// count returns how many times method was called.
func (p *fakeProvider) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}

// enter records a call and pops its injected failure, if any. The caller
// holds p.mu afterwards.
func (p *fakeProvider) enter(method string) error {
	if p.onCall != nil {
		p.onCall(method)
	}
	p.mu.Lock()
	p.calls[method]++
	if errs := p.fail[method]; len(errs) > 0 {
		p.fail[method] = errs[1:]
		return errs[0]
	}
	return nil
}

func (p *fakeProvider) newID(prefix string) string {
	p.n++
	return fmt.Sprintf("%s%04d", prefix, p.n)
}

// CreateCheckout implements billing.PaymentProvider; Reference is the
// idempotency key.
func (p *fakeProvider) CreateCheckout(ctx context.Context, r billing.CheckoutRequest) (billing.CheckoutSession, error) {
	err := p.enter("CreateCheckout")
	defer p.mu.Unlock()
	if err != nil {
		return billing.CheckoutSession{}, err
	}
	p.requests = append(p.requests, r)
	for _, s := range p.sessions {
		if s.ClientReference == r.Reference {
			return *s, nil
		}
	}
	id := p.newID("cs_test_")
	s := &billing.CheckoutSession{ID: id, URL: "https://pay.example/" + id, Status: "open", PaymentStatus: "unpaid",
		ClientReference: r.Reference, AmountTotal: r.UnitAmount, Currency: r.Currency}
	p.sessions[id] = s
	return *s, nil
}

// GetCheckout implements billing.PaymentProvider, expanding the subscription.
func (p *fakeProvider) GetCheckout(ctx context.Context, id string) (billing.CheckoutSession, error) {
	err := p.enter("GetCheckout")
	defer p.mu.Unlock()
	if err != nil {
		return billing.CheckoutSession{}, err
	}
	s, ok := p.sessions[id]
	if !ok {
		return billing.CheckoutSession{}, notFound("fake.GetCheckout")
	}
	out := *s
	if sub, ok := p.subs[s.SubscriptionID]; ok {
		c := *sub
		out.Subscription = &c
	}
	return out, nil
}

// GetSubscription implements billing.PaymentProvider.
func (p *fakeProvider) GetSubscription(ctx context.Context, id string) (billing.Subscription, error) {
	err := p.enter("GetSubscription")
	defer p.mu.Unlock()
	if err != nil {
		return billing.Subscription{}, err
	}
	s, ok := p.subs[id]
	if !ok {
		return billing.Subscription{}, notFound("fake.GetSubscription")
	}
	return *s, nil
}

// CancelAtPeriodEnd implements billing.PaymentProvider.
func (p *fakeProvider) CancelAtPeriodEnd(ctx context.Context, id string) (billing.Subscription, error) {
	err := p.enter("CancelAtPeriodEnd")
	defer p.mu.Unlock()
	if err != nil {
		return billing.Subscription{}, err
	}
	s, ok := p.subs[id]
	if !ok {
		return billing.Subscription{}, notFound("fake.CancelAtPeriodEnd")
	}
	s.CancelAtPeriodEnd = true
	return *s, nil
}

// CancelNow implements billing.PaymentProvider: the subscription becomes
// canceled now; canceling it again returns it unchanged.
func (p *fakeProvider) CancelNow(ctx context.Context, id string) (billing.Subscription, error) {
	err := p.enter("CancelNow")
	defer p.mu.Unlock()
	if err != nil {
		return billing.Subscription{}, err
	}
	s, ok := p.subs[id]
	if !ok {
		return billing.Subscription{}, notFound("fake.CancelNow")
	}
	s.Status = "canceled"
	return *s, nil
}

// ListInvoices implements billing.PaymentProvider, newest first.
func (p *fakeProvider) ListInvoices(ctx context.Context, subscriptionID string) ([]billing.Invoice, error) {
	err := p.enter("ListInvoices")
	defer p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := slices.Clone(p.invoices[subscriptionID])
	slices.Reverse(out)
	return out, nil
}

// sign is the fake's webhook signature of payload.
func (p *fakeProvider) sign(payload []byte) string {
	h := sha256.Sum256(append([]byte(p.secret+"."), payload...))
	return "v1=" + hex.EncodeToString(h[:])
}

// VerifyWebhook implements billing.PaymentProvider: the header must be
// sign(payload).
func (p *fakeProvider) VerifyWebhook(payload []byte, header string) (billing.WebhookEvent, error) {
	if header != p.sign(payload) {
		return billing.WebhookEvent{}, errors.New("fake: bad signature")
	}
	var ev struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Created int64  `json:"created"`
		Data    struct {
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return billing.WebhookEvent{}, err
	}
	return billing.WebhookEvent{ID: ev.ID, Type: ev.Type, Created: time.Unix(ev.Created, 0).UTC(), ObjectID: ev.Data.Object.ID,
		Payload: payload}, nil
}

// event builds a signed webhook of typ about object id.
func (p *fakeProvider) event(id, typ string, object map[string]any) (payload []byte, signature string) {
	payload, _ = json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "created": p.clock.Now().Unix(),
		"data": map[string]any{"object": object}})
	return payload, p.sign(payload)
}

// period is the length of the fake's subscription periods.
const period = 30 * 24 * time.Hour

// pay completes a session as the hosted page would: a customer, an active
// subscription whose first period starts now, and its paid invoice.
func (p *fakeProvider) pay(t *testing.T, sessionID string) (subscriptionID string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.sessions[sessionID]
	if !ok || s.Status != "open" {
		t.Fatalf("fake: pay %s: no open session", sessionID)
	}
	now := p.clock.Now().Truncate(time.Second)
	sub := &billing.Subscription{ID: p.newID("sub_"), CustomerID: p.newID("cus_"), Status: "active",
		CurrentPeriodStart: now, CurrentPeriodEnd: now.Add(period)}
	inv := billing.Invoice{ID: p.newID("in_"), SubscriptionID: sub.ID, Status: "paid", BillingReason: "subscription_create",
		AmountDue: s.AmountTotal, AmountPaid: s.AmountTotal, Currency: s.Currency, PeriodStart: sub.CurrentPeriodStart,
		PeriodEnd: sub.CurrentPeriodEnd, Created: now}
	sub.LatestInvoiceID = inv.ID
	p.subs[sub.ID] = sub
	p.invoices[sub.ID] = append(p.invoices[sub.ID], inv)
	s.Status, s.PaymentStatus, s.SubscriptionID, s.CustomerID = "complete", "paid", sub.ID, sub.CustomerID
	return sub.ID
}

// renew bills a subscription's next period as Stripe does at period end:
// the period moves forward and an invoice for the new period is created
// with status invoiceStatus ("paid", "open" after a failed attempt, or
// "draft" before finalization). A failed payment makes the subscription
// past_due.
func (p *fakeProvider) renew(t *testing.T, subscriptionID, invoiceStatus string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	sub, ok := p.subs[subscriptionID]
	if !ok {
		t.Fatalf("fake: renew %s: no subscription", subscriptionID)
	}
	last := p.invoices[sub.ID][len(p.invoices[sub.ID])-1]
	sub.CurrentPeriodStart, sub.CurrentPeriodEnd = sub.CurrentPeriodEnd, sub.CurrentPeriodEnd.Add(period)
	inv := billing.Invoice{ID: p.newID("in_"), SubscriptionID: sub.ID, Status: invoiceStatus, BillingReason: "subscription_cycle",
		AmountDue: last.AmountDue, Currency: last.Currency, PeriodStart: sub.CurrentPeriodStart, PeriodEnd: sub.CurrentPeriodEnd,
		Created: p.clock.Now()}
	if invoiceStatus == "paid" {
		inv.AmountPaid = inv.AmountDue
	}
	if invoiceStatus == "open" {
		sub.Status = "past_due"
	}
	sub.LatestInvoiceID = inv.ID
	p.invoices[sub.ID] = append(p.invoices[sub.ID], inv)
}

// setStatus sets a subscription's provider status (canceled ends it).
func (p *fakeProvider) setStatus(subscriptionID, status string) {
	p.mu.Lock()
	p.subs[subscriptionID].Status = status
	p.mu.Unlock()
}

// expire expires an open session unpaid.
func (p *fakeProvider) expire(sessionID string) {
	p.mu.Lock()
	p.sessions[sessionID].Status = "expired"
	p.mu.Unlock()
}

// resume undoes a scheduled cancellation at the provider, as a dashboard
// action would, without telling the platform.
func (p *fakeProvider) resume(subscriptionID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sub, ok := p.subs[subscriptionID]; ok {
		sub.CancelAtPeriodEnd = false
	}
}
