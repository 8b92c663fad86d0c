package marketplace_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// memStore is an in-memory marketplace.Store; a unit of work is its calls
// in order (no rollback).
type memStore struct {
	now        time.Time
	ids        int
	versions   []policy.Version
	assets     map[string]asset.Asset
	provenance map[string]asset.Provenance
	entitled   map[string]bool // holder workspace + "/" + asset id
	offers     map[string]marketplace.Offer
	events     []outbox.Event
	audits     []account.AuditEvent
	market     *market
}

var _ marketplace.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), assets: map[string]asset.Asset{},
		provenance: map[string]asset.Provenance{}, entitled: map[string]bool{}, offers: map[string]marketplace.Offer{}}
}

func (m *memStore) Now() time.Time { return m.now }

func (m *memStore) NewID(prefix string) string { m.ids++; return fmt.Sprintf("%s%d", prefix, m.ids) }

func (m *memStore) PolicyInsert(_ context.Context, v policy.Version) (policy.Version, bool, error) {
	for _, x := range m.versions {
		if x.Scope == v.Scope && x.ID == v.ID && x.Version == v.Version {
			return policy.Version{}, false, nil
		}
	}
	v.CreatedAt = m.now
	m.versions = append(m.versions, v)
	return v, true, nil
}

func (m *memStore) PolicyCurrent(ctx context.Context, s policy.Scope, id string) (policy.Version, error) {
	var cur policy.Version
	for _, x := range m.versions {
		if x.Scope == s && x.ID == id && x.Version > cur.Version {
			cur = x
		}
	}
	if cur.Version == 0 {
		return policy.Version{}, fault.E("memStore.PolicyCurrent", fault.NotFound, "")
	}
	return cur, nil
}

func (m *memStore) PolicyGet(_ context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	for _, x := range m.versions {
		if x.Scope == s && x.ID == id && x.Version == version {
			return x, nil
		}
	}
	return policy.Version{}, fault.E("memStore.PolicyGet", fault.NotFound, "")
}

func (m *memStore) PolicyHistory(context.Context, policy.Scope, string, policy.HistoryParams) ([]policy.Version, error) {
	return nil, fmt.Errorf("not used")
}

func (m *memStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	m.events = append(m.events, e)
	return e, nil
}

func (m *memStore) AuditInsert(_ context.Context, e account.AuditEvent) error {
	m.audits = append(m.audits, e)
	return nil
}

func (m *memStore) AssetGet(_ context.Context, s asset.Scope, id string) (asset.Asset, error) {
	a, ok := m.assets[id]
	if !ok || a.Scope != s {
		return asset.Asset{}, fault.E("memStore.AssetGet", fault.NotFound, "")
	}
	return a, nil
}

func (m *memStore) AssetProvenanceGet(_ context.Context, env access.Environment, id string) (asset.Provenance, error) {
	p, ok := m.provenance[id]
	if !ok || p.Scope.Environment != string(env) {
		return asset.Provenance{}, fault.E("memStore.AssetProvenanceGet", fault.NotFound, "")
	}
	return p, nil
}

func (m *memStore) EntitledToAsset(_ context.Context, holder access.Scope, id string) (bool, error) {
	return m.entitled[holder.WorkspaceID+"/"+id], nil
}

func (m *memStore) LicenseOfferInsert(_ context.Context, o marketplace.Offer) error {
	if _, ok := m.offers[o.ID]; ok {
		return fault.E("memStore.LicenseOfferInsert", fault.Conflict, "")
	}
	m.offers[o.ID] = o
	return nil
}

func (m *memStore) LicenseOfferGet(_ context.Context, sc access.Scope, id string) (marketplace.Offer, error) {
	o, ok := m.offers[id]
	if !ok || o.Scope != sc {
		return marketplace.Offer{}, fault.E("memStore.LicenseOfferGet", fault.NotFound, "")
	}
	return o, nil
}

func (m *memStore) LicenseOfferSetState(_ context.Context, o marketplace.Offer) error {
	cur, ok := m.offers[o.ID]
	if !ok || cur.Version != o.Version-1 {
		return fault.E("memStore.LicenseOfferSetState", fault.Conflict, "")
	}
	m.offers[o.ID] = o
	return nil
}

// member returns a session principal of workspace ws in the test
// environment and its authority with roles and the sell entitlement.
func member(user, ws string, roles ...access.Role) (*access.Principal, *access.Authority) {
	p := &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: ws, Environment: access.Test, UserID: user}
	a := &access.Authority{TenantID: "ten_1", WorkspaceID: ws, Environment: access.Test, UserID: user,
		MembershipStatus: access.MembershipActive, Roles: roles, Entitlements: []string{marketplace.EntitlementSell}}
	return p, a
}

// market is the listing, order and read part of memStore.
type market struct {
	listings  []marketplace.Listing
	orders    map[string]marketplace.Order // by id
	ents      []marketplace.Entitlement
	moves     []ledger.Posted
	balances  map[string]ledger.Account // scope + ledger + name
	features  map[string][]marketplace.FeatureEntitlement
	wallets   map[string]string // address -> user of ten_1
	paymentFn func(env access.Environment, mint string) (intent.PaymentMint, error)
}

var (
	_ marketplace.ListingStore = (*memStore)(nil)
	_ marketplace.OrderStore   = (*memStore)(nil)
	_ marketplace.ReadStore    = (*memStore)(nil)
)

func (m *memStore) mk() *market {
	if m.market == nil {
		m.market = &market{orders: map[string]marketplace.Order{}, balances: map[string]ledger.Account{},
			features: map[string][]marketplace.FeatureEntitlement{}, wallets: map[string]string{}}
	}
	return m.market
}

func (m *memStore) ListingCurrent(_ context.Context, sc access.Scope, assetID, offerID string) (marketplace.Listing, error) {
	var cur marketplace.Listing
	for _, l := range m.mk().listings {
		if l.Scope == sc && l.AssetID == assetID && l.OfferID == offerID && l.Version > cur.Version {
			cur = l
		}
	}
	if cur.Version == 0 {
		return cur, fault.E("memStore.ListingCurrent", fault.NotFound, "")
	}
	return cur, nil
}

func (m *memStore) ListingInsert(_ context.Context, l marketplace.Listing) error {
	for _, x := range m.mk().listings {
		if x.ID == l.ID && x.Version == l.Version || x.Scope == l.Scope && x.AssetID == l.AssetID && x.OfferID == l.OfferID && x.Version == l.Version {
			return fault.E("memStore.ListingInsert", fault.Conflict, "")
		}
	}
	m.mk().listings = append(m.mk().listings, l)
	return nil
}

func (m *memStore) ListingGet(_ context.Context, env access.Environment, id string) (marketplace.Listing, error) {
	var cur marketplace.Listing
	for _, l := range m.mk().listings {
		if l.ID == id && l.Scope.Environment == env && l.Version > cur.Version {
			cur = l
		}
	}
	if cur.Version == 0 {
		return cur, fault.E("memStore.ListingGet", fault.NotFound, "")
	}
	return cur, nil
}

func (m *memStore) OrderInsert(_ context.Context, o marketplace.Order) error {
	for _, x := range m.mk().orders {
		if x.ID == o.ID || x.IntentID == o.IntentID {
			return fault.E("memStore.OrderInsert", fault.Conflict, "")
		}
		if o.Exclusive() && x.Exclusive() && x.Snapshot.LicenseID == o.Snapshot.LicenseID &&
			x.State != marketplace.OrderExpired && x.State != marketplace.OrderFailed {
			return fault.E("memStore.OrderInsert", fault.Conflict, "").With("reason", marketplace.ReasonExclusiveTaken)
		}
	}
	m.mk().orders[o.ID] = o
	return nil
}

func (m *memStore) OrderLockByIntent(_ context.Context, intentID string) (marketplace.Order, error) {
	for _, o := range m.mk().orders {
		if o.IntentID == intentID {
			return o, nil
		}
	}
	return marketplace.Order{}, fault.E("memStore.OrderLockByIntent", fault.NotFound, "")
}

func (m *memStore) OrderUpdate(_ context.Context, o marketplace.Order, prev int64) error {
	cur, ok := m.mk().orders[o.ID]
	if !ok || cur.Version != prev {
		return fault.E("memStore.OrderUpdate", fault.Conflict, "")
	}
	cur.State, cur.Version, cur.EntitlementID, cur.UpdatedAt = o.State, o.Version, o.EntitlementID, o.UpdatedAt
	m.mk().orders[o.ID] = cur
	return nil
}

func (m *memStore) EntitlementInsert(_ context.Context, e marketplace.Entitlement) error {
	for _, x := range m.mk().ents {
		if x.OrderID == e.OrderID {
			return fault.E("memStore.EntitlementInsert", fault.Conflict, "")
		}
	}
	m.mk().ents = append(m.mk().ents, e)
	m.entitled[e.Holder.WorkspaceID+"/"+e.AssetID] = true
	return nil
}

func (m *memStore) LedgerMovementsByReference(_ context.Context, tenantID, reference string) ([]ledger.Posted, error) {
	var out []ledger.Posted
	for _, p := range m.mk().moves {
		if p.Scope.TenantID == tenantID && p.Reference == reference {
			out = append(out, p)
		}
	}
	return out, nil
}

func (m *memStore) LedgerAccountsApply(_ context.Context, s ledger.Scope, k ledger.Kind, changes []ledger.AccountChange, insufficient fault.Code) error {
	accounts := make([]ledger.Account, len(changes))
	for i, c := range changes {
		a, ok := m.mk().balances[fmt.Sprint(s, k, c.Name)]
		if !ok {
			a = ledger.Account{Scope: s, Ledger: k, Name: c.Name, Decimals: c.Decimals, AllowNegative: c.AllowNegative}
		}
		accounts[i] = a
	}
	if err := ledger.ApplyChanges(accounts, changes, insufficient); err != nil {
		return err
	}
	for _, a := range accounts {
		m.mk().balances[fmt.Sprint(s, k, a.Name)] = a
	}
	return nil
}

func (m *memStore) LedgerMovementGet(_ context.Context, s ledger.Scope, reference string) (ledger.Posted, error) {
	for _, p := range m.mk().moves {
		if p.Scope == s && p.Reference == reference {
			return p, nil
		}
	}
	return ledger.Posted{}, fault.E("memStore.LedgerMovementGet", fault.NotFound, "")
}

func (m *memStore) LedgerMovementLock(ctx context.Context, s ledger.Scope, reference string) (ledger.Posted, error) {
	return m.LedgerMovementGet(ctx, s, reference)
}

func (m *memStore) LedgerMovementInsert(_ context.Context, p ledger.Posted, _ bool) error {
	for _, x := range m.mk().moves {
		if x.Scope == p.Scope && x.Reference == p.Reference {
			return fault.E("memStore.LedgerMovementInsert", fault.Conflict, "")
		}
	}
	m.mk().moves = append(m.mk().moves, p)
	return nil
}

func (m *memStore) OrderList(_ context.Context, p marketplace.OrderListParams) ([]marketplace.Order, error) {
	var out []marketplace.Order
	for _, o := range m.mk().orders {
		buyer := o.Buyer == p.Scope
		seller := o.Snapshot.Seller == p.Scope
		if p.Role == marketplace.SideBuyer && buyer || p.Role == marketplace.SideSeller && seller || p.Role == "" && (buyer || seller) {
			if p.Before == "" || o.ID < p.Before {
				out = append(out, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b marketplace.Order) int { return strings.Compare(b.ID, a.ID) })
	return out[:min(len(out), p.Limit)], nil
}

func (m *memStore) EntitlementList(_ context.Context, holder access.Scope, before string, limit int) ([]marketplace.Entitlement, error) {
	var out []marketplace.Entitlement
	for _, e := range m.mk().ents {
		if e.Holder == holder && (before == "" || e.ID < before) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b marketplace.Entitlement) int { return strings.Compare(b.ID, a.ID) })
	return out[:min(len(out), limit)], nil
}

func (m *memStore) FeatureEntitlements(_ context.Context, holder access.Scope) ([]marketplace.FeatureEntitlement, error) {
	return m.mk().features[holder.WorkspaceID], nil
}

// Holder and Of make memStore the Wallets of ten_1's users.
func (m *memStore) Holder(_ context.Context, tenantID string, a chain.Address) (string, error) {
	if tenantID != "ten_1" {
		return "", nil
	}
	return m.mk().wallets[a.String()], nil
}

func (m *memStore) Of(_ context.Context, tenantID, userID string) ([]chain.Address, error) {
	var out []chain.Address
	for a, u := range m.mk().wallets {
		if tenantID == "ten_1" && u == userID {
			k, err := token2022.ParsePublicKey(a)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b chain.Address) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// PaymentMint makes memStore the Mints: paymentFn, or a 9-decimal mint.
func (m *memStore) PaymentMint(_ context.Context, env access.Environment, mint string) (intent.PaymentMint, error) {
	if m.mk().paymentFn != nil {
		return m.mk().paymentFn(env, mint)
	}
	k, err := token2022.ParsePublicKey(mint)
	if err != nil {
		return intent.PaymentMint{}, fault.Invalid("memStore.PaymentMint", "mint", "mint is a base58 address")
	}
	return intent.PaymentMint{Address: k, Decimals: 9, HasTransferFee: true}, nil
}
