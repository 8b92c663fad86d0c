package operation

import (
	"context"
	"sync"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
)

// observeEvery is how often this host records an unchanged observation of
// one provider route and environment.
const observeEvery = time.Second

// observations decides which provider observations a host writes. All
// dispatches and polls of a route and environment share one row
// (credential.Observer), so writing every one would queue concurrent units
// of work on that row's lock; a host writes an observation when the reach
// differs from the one it last wrote, or when that one is observeEvery
// old. What GET /api/v1/providers reports is then at most observeEvery
// older than the newest call, and always a call's own outcome and time.
type observations struct {
	mu   sync.Mutex
	last map[observationKey]credential.Observation
}

type observationKey struct {
	provider generation.ProviderID
	env      access.Environment
}

// record writes o through st when it is due. A unit of work that then
// rolls back leaves the row older for at most observeEvery.
func (ob *observations) record(ctx context.Context, st credential.Observer, o credential.Observation) error {
	k := observationKey{o.Provider, o.Environment}
	ob.mu.Lock()
	prev, ok := ob.last[k]
	due := !ok || prev.Reach != o.Reach || !o.ObservedAt.Before(prev.ObservedAt.Add(observeEvery))
	if due {
		if ob.last == nil {
			ob.last = map[observationKey]credential.Observation{}
		}
		ob.last[k] = o
	}
	ob.mu.Unlock()
	if !due {
		return nil
	}
	return st.ProviderObserve(ctx, o)
}
