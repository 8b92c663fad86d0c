package marketplace_test

import (
	"context"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
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
