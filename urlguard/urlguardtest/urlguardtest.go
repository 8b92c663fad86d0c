// Package urlguardtest builds guarded HTTP clients for tests whose
// simulators listen on loopback: the full urlguard policy, with http
// allowed and exactly the simulators' addresses let through. Production
// code never imports it.
package urlguardtest

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
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

// Resolver is a urlguard.Resolver that answers from a table: each host
// name (lower case) resolves to its addresses, and every other name is
// not found, so no test touches real DNS. Tests resolve names their TLS
// servers' certificates cover (httptest's covers example.com and
// *.example.com) to those servers' loopback addresses, or to private
// addresses to see them refused.
type Resolver map[string][]netip.Addr

// LookupNetIP implements urlguard.Resolver; network "ip4" or "ip6" keeps
// the addresses of that family.
func (r Resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range r[strings.ToLower(host)] {
		if network == "ip4" && !a.Is4() || network == "ip6" && a.Is4() {
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}
