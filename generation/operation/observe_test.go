package operation

import (
	"context"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
)

// observerFunc is a credential.Observer as a function.
type observerFunc func(credential.Observation)

func (f observerFunc) ProviderObserve(_ context.Context, o credential.Observation) error {
	f(o)
	return nil
}

// TestObservationsWriteChangesAndOncePerInterval: a host writes the first
// observation, every change of reach at once, and an unchanged reach at
// most once per observeEvery, per route and environment.
func TestObservationsWriteChangesAndOncePerInterval(t *testing.T) {
	var written []credential.Observation
	st := observerFunc(func(o credential.Observation) { written = append(written, o) })
	ob := &observations{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration, reach credential.Reach, p generation.ProviderID, env access.Environment) {
		t.Helper()
		if err := ob.record(context.Background(), st, credential.Observation{Provider: p, Environment: env, Reach: reach, ObservedAt: t0.Add(d)}); err != nil {
			t.Fatal(err)
		}
	}
	up, down := credential.ReachAvailable, credential.ReachUnreachable
	A, B := generation.ProviderA, generation.ProviderB
	at(0, up, A, access.Test)                    // first: written
	at(100*time.Millisecond, up, A, access.Test) // unchanged within the interval: skipped
	at(200*time.Millisecond, up, B, access.Test) // another route: written
	at(200*time.Millisecond, up, A, access.Live) // another environment: written
	at(300*time.Millisecond, down, A, access.Test)
	at(400*time.Millisecond, down, A, access.Test) // skipped
	at(1300*time.Millisecond, down, A, access.Test)
	want := []time.Duration{0, 200 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 1300 * time.Millisecond}
	if len(written) != len(want) {
		t.Fatalf("wrote %d observations, want %d: %+v", len(written), len(want), written)
	}
	for i, d := range want {
		if !written[i].ObservedAt.Equal(t0.Add(d)) {
			t.Errorf("write %d observed at %s, want %s", i, written[i].ObservedAt, t0.Add(d))
		}
	}
}
