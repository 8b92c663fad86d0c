package api

import (
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/token"
)

// anyChain stands for a configured cluster; clusterHealth never calls it.
type anyChain struct{ token.ChainClient }

// TestClusterHealthReportsOnlyObservations: configuration is reported as
// configured, never ok; a run that never reached the chain observed
// nothing; a run that reached the wrong network or none is reported as
// such, with the time of the observation.
func TestClusterHealthReportsOnlyObservations(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Minute)
	svc, err := token.New(token.ServiceConfig{Clock: clockFunc(func() time.Time { return now }),
		Environments: map[access.Environment]token.Environment{access.Test: {Config: token.Config{Cluster: "localnet"}, Chain: anyChain{}}}})
	if err != nil {
		t.Fatal(err)
	}
	slot := uint64(42)
	run := func(code string) *token.Run {
		return &token.Run{ErrorCode: code, FinishedAt: at, Slot: &slot, BlockTime: &at}
	}
	cases := []struct {
		name     string
		env      access.Environment
		latest   *token.Run
		want     string
		observed bool
	}{
		{"no cluster", access.Live, nil, "not_configured", false},
		{"no run yet", access.Test, nil, "configured", false},
		{"the run stopped before the chain", access.Test, &token.Run{ErrorCode: token.ErrorNotConfigured, FinishedAt: at}, "configured", false},
		{"read the configured network", access.Test, run(""), "ok", true},
		{"node behind", access.Test, run(token.ErrorNodeBehind), "unhealthy", true},
		{"another network answered", access.Test, run(token.ErrorNetworkMismatch), "mismatch", true},
		{"unreachable", access.Test, run(token.ErrorChainUnavailable), "unreachable", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := clusterHealth(svc, token.View{Environment: c.env, Latest: c.latest}, now)
			if h.Status != c.want {
				t.Fatalf("status = %q, want %q", h.Status, c.want)
			}
			if c.observed != (h.ObservedAt != nil) || c.observed && !h.ObservedAt.Equal(at) {
				t.Fatalf("observedAt = %v", h.ObservedAt)
			}
		})
	}
}

// clockFunc adapts a function to the Clock shape, for tests.
type clockFunc func() time.Time

// Now calls f.
func (f clockFunc) Now() time.Time { return f() }
