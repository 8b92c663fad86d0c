package ai_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// memStore is an in-memory ai.Store: every method works on shared maps
// under one lock, as if each call were its own unit of work.
type memStore struct {
	mu       sync.Mutex
	now      time.Time
	seq      int
	models   map[string]ai.RegistryModel // env/id
	health   map[string]ai.Health        // env/id
	policies []policy.Version
	events   []outbox.Event
	audits   []account.AuditEvent
	// beforeHealthPut, when set, runs before each health write (a race).
	beforeHealthPut func()
}

var _ ai.Store = (*memStore)(nil)

func newMem() *memStore {
	return &memStore{now: epoch, models: map[string]ai.RegistryModel{}, health: map[string]ai.Health{}}
}

// run runs fn on m, as a unit of work.
func (m *memStore) run(_ context.Context, fn func(ai.Store) error) error { return fn(m) }

func key(env access.Environment, id string) string { return string(env) + "/" + id }

func (m *memStore) Now() time.Time { return m.now }

func (m *memStore) NewID(prefix string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	return fmt.Sprintf("%s%04d", prefix, m.seq)
}

func (m *memStore) AuditInsert(_ context.Context, e account.AuditEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.audits = append(m.audits, e)
	return nil
}

func (m *memStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
	return e, nil
}

func (m *memStore) PolicyInsert(_ context.Context, v policy.Version) (policy.Version, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.policies {
		if x.Scope == v.Scope && x.ID == v.ID && x.Version == v.Version {
			return policy.Version{}, false, nil
		}
	}
	v.CreatedAt = m.now
	m.policies = append(m.policies, v)
	return v, true, nil
}

func (m *memStore) PolicyCurrent(_ context.Context, s policy.Scope, id string) (policy.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cur policy.Version
	for _, x := range m.policies {
		if x.Scope == s && x.ID == id && x.Version > cur.Version {
			cur = x
		}
	}
	if cur.Version == 0 {
		return policy.Version{}, fault.E("mem", fault.NotFound, "")
	}
	return cur, nil
}

func (m *memStore) PolicyGet(_ context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.policies {
		if x.Scope == s && x.ID == id && x.Version == version {
			return x, nil
		}
	}
	return policy.Version{}, fault.E("mem", fault.NotFound, "")
}

func (m *memStore) PolicyHistory(context.Context, policy.Scope, string, policy.HistoryParams) ([]policy.Version, error) {
	return nil, nil
}

func (m *memStore) AIModelList(_ context.Context, env access.Environment) ([]ai.RegistryModel, error) {
	return listed(m, m.models, func(x ai.RegistryModel) bool { return x.Environment == env }, func(x ai.RegistryModel) string { return x.ID }), nil
}

func (m *memStore) AIModelGet(_ context.Context, env access.Environment, id string) (ai.RegistryModel, error) {
	return found(m, m.models, key(env, id))
}

func (m *memStore) AIModelInsert(_ context.Context, x ai.RegistryModel) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.models[key(x.Environment, x.ID)]; ok {
		return fault.E("mem", fault.Conflict, "")
	}
	m.models[key(x.Environment, x.ID)] = x
	return nil
}

func (m *memStore) AIModelUpdate(_ context.Context, x ai.RegistryModel) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.models[key(x.Environment, x.ID)]
	if !ok || cur.Version != x.Version-1 {
		return fault.E("mem", fault.Conflict, "")
	}
	m.models[key(x.Environment, x.ID)] = x
	return nil
}

func (m *memStore) AIHealthList(_ context.Context, env access.Environment) ([]ai.Health, error) {
	return listed(m, m.health, func(h ai.Health) bool { return h.Environment == env }, func(h ai.Health) string { return h.ModelID }), nil
}

func (m *memStore) AIHealthGet(_ context.Context, env access.Environment, id string) (ai.Health, error) {
	return found(m, m.health, key(env, id))
}

func (m *memStore) AIHealthPut(_ context.Context, h ai.Health) error {
	if m.beforeHealthPut != nil {
		m.beforeHealthPut()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.health[key(h.Environment, h.ModelID)]
	if h.Version == 1 && ok || h.Version > 1 && (!ok || cur.Version != h.Version-1) {
		return fault.E("mem", fault.Conflict, "")
	}
	m.health[key(h.Environment, h.ModelID)] = h
	return nil
}

// listed returns the records of recs that keep accepts, sorted by id,
// under m's lock.
func listed[T any](m *memStore, recs map[string]T, keep func(T) bool, id func(T) string) []T {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []T
	for _, x := range recs {
		if keep(x) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(id(a), id(b)) })
	return out
}

// found returns the record of recs at k, or NOT_FOUND, under m's lock.
func found[T any](m *memStore, recs map[string]T, k string) (T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, ok := recs[k]
	if !ok {
		var zero T
		return zero, fault.E("mem", fault.NotFound, "")
	}
	return x, nil
}
