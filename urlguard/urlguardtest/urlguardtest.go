// Package urlguardtest builds guarded HTTP clients for tests whose
// simulators listen on loopback: the full urlguard policy, with http
// allowed and exactly the simulators' addresses let through. Production
// code never imports it.
package urlguardtest

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/creatormusic/platform/urlguard"
)

// Allow returns the loopback addresses of simulator base URLs
// (http://127.0.0.1:port, as httptest.Server.URL is), for
// urlguard.Config.AllowLoopback. It fails t on a URL that is not one.
func Allow(t testing.TB, simURLs ...string) []netip.AddrPort {
	t.Helper()
	out := make([]netip.AddrPort, 0, len(simURLs))
	for _, u := range simURLs {
		ap, err := urlguard.LoopbackOf(u)
		if err != nil {
			t.Fatalf("urlguardtest: %v", err)
		}
		out = append(out, ap)
	}
	return out
}

// Guard returns a Guard of cfg that also lets exactly the simulators at
// simURLs through; its idle connections close with t.
func Guard(t testing.TB, cfg urlguard.Config, simURLs ...string) *urlguard.Guard {
	t.Helper()
	cfg.AllowLoopback = append(append([]netip.AddrPort(nil), cfg.AllowLoopback...), Allow(t, simURLs...)...)
	g, err := urlguard.New(cfg)
	if err != nil {
		t.Fatalf("urlguardtest: %v", err)
	}
	t.Cleanup(g.CloseIdleConnections)
	return g
}

// Client returns a guarded client that allows http and reaches exactly the
// simulators at simURLs on loopback.
func Client(t testing.TB, simURLs ...string) *http.Client {
	t.Helper()
	return Guard(t, urlguard.Config{AllowHTTP: true}, simURLs...).Client()
}
