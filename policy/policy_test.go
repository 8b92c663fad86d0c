package policy_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// memStore is an in-memory policy.Store. race, when set, runs before an
// insert, to let a competing publisher win.
type memStore struct {
	mu   sync.Mutex
	rows []policy.Version
	race func(v policy.Version)
}

var _ policy.Store = (*memStore)(nil)

func (m *memStore) PolicyInsert(_ context.Context, v policy.Version) (policy.Version, bool, error) {
	if r := m.race; r != nil {
		m.race = nil
		r(v)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.rows {
		if x.Scope == v.Scope && x.ID == v.ID && x.Version == v.Version {
			return policy.Version{}, false, nil
		}
	}
	v.CreatedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.rows = append(m.rows, v)
	return v, true, nil
}

func (m *memStore) PolicyCurrent(_ context.Context, s policy.Scope, id string) (policy.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out policy.Version
	for _, x := range m.rows {
		if x.Scope == s && x.ID == id && x.Version > out.Version {
			out = x
		}
	}
	if out.Version == 0 {
		return policy.Version{}, fault.E("mem", fault.NotFound, "")
	}
	return out, nil
}

func (m *memStore) PolicyGet(_ context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.rows {
		if x.Scope == s && x.ID == id && x.Version == version {
			return x, nil
		}
	}
	return policy.Version{}, fault.E("mem", fault.NotFound, "")
}

func (m *memStore) PolicyHistory(_ context.Context, s policy.Scope, id string, p policy.HistoryParams) ([]policy.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []policy.Version
	for _, x := range m.rows {
		if x.Scope == s && x.ID == id && (p.Before <= 0 || x.Version < p.Before) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b policy.Version) int { return b.Version - a.Version })
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}

var live = policy.Scope{Environment: access.Live}

func TestPublishSameContentIsOneVersion(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	v1, created, err := policy.Publish(ctx, st, live, "fees.marketplace", map[string]any{"bps": 250, "cap": 500}, "usr_1")
	if err != nil || !created || v1.Version != 1 {
		t.Fatalf("first publish = %+v, %v, %v", v1, created, err)
	}
	if string(v1.Content) != `{"bps":250,"cap":500}` || len(v1.Hash) != 64 {
		t.Fatalf("content %s hash %s", v1.Content, v1.Hash)
	}
	// Same document, other key order and whitespace: no new version.
	again, created, err := policy.Publish(ctx, st, live, "fees.marketplace", json.RawMessage(`{ "cap": 500, "bps": 250 }`), "usr_2")
	if err != nil || created || again.Version != 1 || again.Hash != v1.Hash || again.CreatedBy != "usr_1" {
		t.Fatalf("republish = %+v, %v, %v", again, created, err)
	}
	v2, created, err := policy.Publish(ctx, st, live, "fees.marketplace", map[string]any{"bps": 300, "cap": 500}, "usr_1")
	if err != nil || !created || v2.Version != 2 || v2.Hash == v1.Hash {
		t.Fatalf("second version = %+v, %v, %v", v2, created, err)
	}
	// A revert to the first content is a new decision: version 3, hash of version 1.
	v3, created, err := policy.Publish(ctx, st, live, "fees.marketplace", map[string]any{"bps": 250, "cap": 500}, "usr_1")
	if err != nil || !created || v3.Version != 3 || v3.Hash != v1.Hash {
		t.Fatalf("revert = %+v, %v, %v", v3, created, err)
	}
	// Scopes are separate: the test environment and a tenant start at 1.
	for _, s := range []policy.Scope{{Environment: access.Test}, {Environment: access.Live, TenantID: "ten_1"}} {
		v, created, err := policy.Publish(ctx, st, s, "fees.marketplace", map[string]any{"bps": 250}, "usr_1")
		if err != nil || !created || v.Version != 1 {
			t.Fatalf("scope %+v: %+v, %v, %v", s, v, created, err)
		}
	}
	hist, err := policy.History(ctx, st, live, "fees.marketplace", policy.HistoryParams{Limit: 2})
	if err != nil || len(hist) != 2 || hist[0].Version != 3 || hist[1].Version != 2 {
		t.Fatalf("history = %+v, %v", hist, err)
	}
	hist, err = policy.History(ctx, st, live, "fees.marketplace", policy.HistoryParams{Before: 2, Limit: 10})
	if err != nil || len(hist) != 1 || hist[0].Version != 1 {
		t.Fatalf("history page 2 = %+v, %v", hist, err)
	}
	if _, err := policy.Resolve(ctx, st, live, v2.Ref()); err != nil {
		t.Fatalf("resolve v2: %v", err)
	}
	bad := v2.Ref()
	bad.Hash = v1.Hash
	if _, err := policy.Resolve(ctx, st, live, bad); !fault.Is(err, fault.Conflict) {
		t.Fatalf("resolve with a wrong hash = %v", err)
	}
	var doc struct{ Bps int }
	if err := v2.Decode(&doc); err != nil || doc.Bps != 300 {
		t.Fatalf("decode = %+v, %v", doc, err)
	}
}

func TestPublishLosingARace(t *testing.T) {
	ctx := context.Background()
	t.Run("same content converges", func(t *testing.T) {
		st := &memStore{}
		st.race = func(v policy.Version) { st.PolicyInsert(ctx, v) } // the competitor publishes the same content first
		v, created, err := policy.Publish(ctx, st, live, "pricing.generation", map[string]any{"credits": 10}, "usr_1")
		if err != nil || created || v.Version != 1 || len(st.rows) != 1 {
			t.Fatalf("publish = %+v, %v, %v; rows %d", v, created, err, len(st.rows))
		}
	})
	t.Run("other content appends", func(t *testing.T) {
		st := &memStore{}
		st.race = func(v policy.Version) {
			v.Content, v.Hash = json.RawMessage(`{"credits":11}`), "other"
			st.PolicyInsert(ctx, v)
		}
		v, created, err := policy.Publish(ctx, st, live, "pricing.generation", map[string]any{"credits": 10}, "usr_1")
		if err != nil || !created || v.Version != 2 {
			t.Fatalf("publish = %+v, %v, %v", v, created, err)
		}
	})
}

func TestPublishRejects(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	cases := []struct {
		name    string
		scope   policy.Scope
		id      string
		content any
		actor   string
		field   string
	}{
		{"bad id", live, "Fees", map[string]any{"a": 1}, "usr_1", "policyId"},
		{"empty id", live, "", map[string]any{"a": 1}, "usr_1", "policyId"},
		{"no environment", policy.Scope{}, "fees.marketplace", map[string]any{"a": 1}, "usr_1", "environment"},
		{"null content", live, "fees.marketplace", nil, "usr_1", "content"},
		{"invalid JSON", live, "fees.marketplace", json.RawMessage(`{`), "usr_1", "content"},
		{"no actor", live, "fees.marketplace", map[string]any{"a": 1}, "", "createdBy"},
	}
	for _, c := range cases {
		_, _, err := policy.Publish(ctx, st, c.scope, c.id, c.content, c.actor)
		code, _, details := fault.Public(err)
		if code != fault.InvalidInput || details["field"] != c.field {
			t.Errorf("%s: %v (details %v)", c.name, err, details)
		}
	}
	if _, err := policy.Current(ctx, st, live, "fees.marketplace"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("current of an unpublished policy = %v", err)
	}
}
