package operation

import (
	"context"
	"sync"

	"github.com/creatormusic/platform/access"
)

// DefaultAcceptsInFlight is how many accepts of one workspace and
// environment a host runs against the database at once (Tuning).
const DefaultAcceptsInFlight = 4

// admission admits the accepts of each scope in the order they arrive, at
// most n at a time. Every accept that reserves credits changes its
// workspace's credit balances. PostgreSQL keeps them in a few slots
// (ledger.Spread), each changed by one accept at a time until it commits;
// an accept that finds every slot held waits for one, and the database
// grants a released row lock in no particular order, so under load some
// accepts would lose the race many times over. Waiting here first, in a
// channel (whose blocked senders go in first-in, first-out order), bounds
// an accept's wait by the queue ahead of it, and n (fewer than the slots)
// leaves each admitted accept a slot of its own.
//
// A scope's entry lives while some accept holds or waits for it, so the
// map holds only the scopes with accepts in progress.
type admission struct {
	n  int
	mu sync.Mutex
	// scopes are the gates of the scopes with accepts in progress.
	scopes map[access.Scope]*gate
}

// gate is one scope's slots and how many accepts hold or wait for one.
type gate struct {
	slots chan struct{}
	refs  int
}

// newAdmission returns an admission of n accepts per scope; nil (admitting
// every accept at once) when n < 1.
func newAdmission(n int) *admission {
	if n < 1 {
		return nil
	}
	return &admission{n: n, scopes: map[access.Scope]*gate{}}
}

// enter waits for a slot of scope, in arrival order, and returns the
// function that frees it; ctx's error when ctx ends first. A nil admission
// admits at once.
func (a *admission) enter(ctx context.Context, scope access.Scope) (leave func(), err error) {
	if a == nil {
		return func() {}, nil
	}
	a.mu.Lock()
	g := a.scopes[scope]
	if g == nil {
		g = &gate{slots: make(chan struct{}, a.n)}
		a.scopes[scope] = g
	}
	g.refs++
	a.mu.Unlock()
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		a.drop(scope, g)
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-g.slots
			a.drop(scope, g)
		})
	}, nil
}

// drop counts one accept out of g, and forgets g when it was the last.
func (a *admission) drop(scope access.Scope, g *gate) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g.refs--; g.refs == 0 {
		delete(a.scopes, scope)
	}
}

// Admit waits until plan may be accepted for p, and returns the function
// to call once its unit of work has ended (committed or not). Plans that
// reserve credits are admitted per workspace and environment in arrival
// order, Tuning.AcceptsInFlight at a time (see admission); others at once.
// The error is ctx's when it ends while waiting.
func (s *Service) Admit(ctx context.Context, p *access.Principal, plan Plan) (done func(), err error) {
	if plan.reserve <= 0 {
		return func() {}, nil
	}
	return s.admission.enter(ctx, p.Scope())
}
