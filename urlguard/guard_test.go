package urlguard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
)

// secret is the signed token every hostile URL carries in its query.
const secret = "sig-SECRET-91c2"

// simPort is the loopback port the table's guard allows (nothing listens
// on it: the table never connects).
const simPort = 8931

// fakeResolver answers lookups from a table: each host's answers in turn,
// the last one repeated. An unknown host is not found. It counts lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newResolver() *fakeResolver {
	return &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
}

// set gives host its successive answers, each a comma-separated list.
func (r *fakeResolver) set(host string, answers ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[host] = nil
	for _, a := range answers {
		var addrs []netip.Addr
		for _, s := range strings.Split(a, ",") {
			addrs = append(addrs, netip.MustParseAddr(s))
		}
		r.answers[host] = append(r.answers[host], addrs)
	}
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.calls[host]
	r.calls[host]++
	a, ok := r.answers[host]
	if !ok || len(a) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return a[min(n, len(a)-1)], nil
}

func newGuard(t *testing.T, cfg urlguard.Config) *urlguard.Guard {
	t.Helper()
	g, err := urlguard.New(cfg)
	if err != nil {
		t.Fatalf("urlguard.New: %v", err)
	}
	t.Cleanup(g.CloseIdleConnections)
	return g
}

// refusedFor asserts err is a refusal with reason that names no secret.
func refusedFor(t *testing.T, err error, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want a refusal (%s)", reason)
	}
	if !errors.Is(err, urlguard.ErrRefused) {
		t.Fatalf("err = %v, want a refusal (%s)", err, reason)
	}
	if got := urlguard.Reason(err); got != reason {
		t.Fatalf("Reason = %q, want %q", got, reason)
	}
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, not a fault error", err)
	}
	code, msg, details := fault.Public(fe)
	if code != fault.InvalidInput || details["field"] != "url" || details["reason"] != reason {
		t.Fatalf("refusal %s %v, want INVALID_INPUT field url reason %s (%v)", code, details, reason, fe)
	}
	for _, s := range []string{fe.Error(), msg, fmt.Sprint(details)} {
		if strings.Contains(s, secret) || strings.Contains(s, "token=") {
			t.Fatalf("the refusal carries the query string: %q", s)
		}
	}
}

// TestHostile judges hostile URLs and resolved addresses: each is refused
// by Check (no connection) and by the Client (before any connection),
// with the same reason, and no error names the URL's query.
func TestHostile(t *testing.T) {
	res := newResolver()
	res.set("private.example.test", "10.0.0.7")
	res.set("mixed.example.test", "93.184.216.34,127.0.0.1")
	res.set("mixed6.example.test", "2606:2800:220:1:248:1893:25c8:1946,::1")
	res.set("mapped.example.test", "::ffff:10.1.2.3")
	res.set("metadata.example.test", "169.254.169.254")
	res.set("nat64.example.test", "64:ff9b::a00:1")
	res.set("ula.example.test", "fd12:3456::1")
	res.set("ec2v6.example.test", "fd00:ec2::254")
	res.set("loop.example.test", "127.0.0.1")
	res.set("zero.example.test", "0.0.0.0")
	res.set("cgnat.example.test", "100.64.1.1")
	res.set("linklocal6.example.test", "fe80::1")
	res.set("teredo.example.test", "2001:0:4136:e378:8000:63bf:3fff:fdd2")
	allowed := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), simPort)
	lax := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{allowed}, Resolver: res, MaxURLLength: 512})
	strict := newGuard(t, urlguard.Config{Resolver: res})

	q := "?token=" + secret
	tests := []struct {
		url    string
		reason string
		strict bool // judged by the https-only guard
	}{
		// The URL itself.
		{"ftp://files.example.com/a.mp3" + q, urlguard.ReasonScheme, false},
		{"file:///etc/passwd" + q, urlguard.ReasonScheme, false},
		{"gopher://files.example.com:70/_" + q, urlguard.ReasonScheme, false},
		{"javascript:alert(1)//" + q, urlguard.ReasonScheme, false},
		{"/media/a.mp3" + q, urlguard.ReasonScheme, false},
		{"http://media.example.com/a.mp3" + q, urlguard.ReasonScheme, true},
		{"https://user:pass@media.example.com/a.mp3" + q, urlguard.ReasonCredentials, false},
		{"https://@media.example.com/a.mp3" + q, urlguard.ReasonCredentials, false},
		{"https://media.example.com@10.0.0.1/a.mp3" + q, urlguard.ReasonCredentials, false},
		{"https:///a.mp3" + q, urlguard.ReasonHostRequired, false},
		{"https:media.example.com/a.mp3" + q, urlguard.ReasonMalformedURL, false},
		{"https://media.example.com/" + strings.Repeat("a", 600) + q, urlguard.ReasonURLTooLong, false},
		{"https://media.example.com:0/a.mp3" + q, urlguard.ReasonMalformedURL, false},
		{"https://media.example.com:65536/a.mp3" + q, urlguard.ReasonMalformedURL, false},
		{"https://media.example.com/%zz" + q, urlguard.ReasonMalformedURL, false},
		{"http://%31%32%37.0.0.1/" + q, urlguard.ReasonMalformedURL, false},
		{"http://evil.example.com\\@127.0.0.1/" + q, urlguard.ReasonMalformedURL, false},
		{"http://127.0.0.1%2f@evil.example.com/" + q, urlguard.ReasonCredentials, false},
		// Hostile spellings.
		{"http://2130706433/" + q, urlguard.ReasonHostSpelling, false},
		{"http://0177.0.0.1/" + q, urlguard.ReasonHostSpelling, false},
		{"http://0x7f.1/" + q, urlguard.ReasonHostSpelling, false},
		{"http://0x7f000001/" + q, urlguard.ReasonHostSpelling, false},
		{"http://0x7f.0x0.0x0.0x1/" + q, urlguard.ReasonHostSpelling, false},
		{"http://127.1/" + q, urlguard.ReasonHostSpelling, false},
		{"http://127.000.000.001/" + q, urlguard.ReasonHostSpelling, false},
		{"http://127.0.0.1./" + q, urlguard.ReasonHostSpelling, false},
		{"http://media.example.com./a.mp3" + q, urlguard.ReasonHostSpelling, false},
		{"http://1.2.3.4.5/" + q, urlguard.ReasonHostSpelling, false},
		{"http://media..example.com/" + q, urlguard.ReasonHostSpelling, false},
		{"http://ｍedia.example.com/" + q, urlguard.ReasonHostSpelling, false},
		{"http://[fe80::1%25eth0]/" + q, urlguard.ReasonHostSpelling, false},
		{"http://[::1%25lo]:8931/" + q, urlguard.ReasonHostSpelling, false},
		// Never-public names.
		{"http://localhost:8931/" + q, urlguard.ReasonBlockedHost, false},
		{"http://api.localhost/" + q, urlguard.ReasonBlockedHost, false},
		{"http://metadata.google.internal/computeMetadata/v1/" + q, urlguard.ReasonBlockedHost, false},
		{"http://METADATA.GOOGLE.INTERNAL/computeMetadata/v1/" + q, urlguard.ReasonBlockedHost, false},
		{"http://metadata.goog/" + q, urlguard.ReasonBlockedHost, false},
		{"http://metadata/" + q, urlguard.ReasonBlockedHost, false},
		{"http://instance-data.ec2.internal/latest/" + q, urlguard.ReasonBlockedHost, false},
		{"http://printer.local/" + q, urlguard.ReasonBlockedHost, false},
		{"http://kubernetes.default.svc/" + q, urlguard.ReasonBlockedHost, false},
		// Address literals.
		{"http://127.0.0.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://127.0.0.1:8932/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://127.8.9.10:8931/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://10.0.0.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://172.16.5.4/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://192.168.1.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://169.254.169.254/latest/meta-data/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://169.254.170.2/v2/credentials" + q, urlguard.ReasonPrivateAddress, false},
		{"http://100.64.0.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://100.100.100.200/latest/meta-data/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://192.0.0.192/opc/v2/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://0.0.0.0:8931/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://224.0.0.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://255.255.255.255/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://240.0.0.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://192.0.2.10/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://198.51.100.10/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://203.0.113.10/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://198.18.0.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://192.88.99.1/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[::1]:8931/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[::]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[0:0:0:0:0:0:0:1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[::ffff:127.0.0.1]:8932/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[::ffff:169.254.169.254]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[::ffff:a00:1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[::ffff:7f00:1]:8932/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[::127.0.0.1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[fd00:ec2::254]/latest/meta-data/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[fc00::1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[fe80::1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[fec0::1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[ff02::1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[64:ff9b::7f00:1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[64:ff9b::7f00:1]:8931/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[64:ff9b::169.254.169.254]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[64:ff9b:1::a00:1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[64:ff9b:1:ab::808:808]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[2002:7f00:1::]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[2002:808:808::1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[2001:db8::1]/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://[3fff::1]/" + q, urlguard.ReasonPrivateAddress, false},
		// Resolved addresses: every answer is judged.
		{"http://private.example.test/a.mp3" + q, urlguard.ReasonPrivateAddress, false},
		{"http://mixed.example.test/a.mp3" + q, urlguard.ReasonPrivateAddress, false},
		{"http://mixed6.example.test/a.mp3" + q, urlguard.ReasonPrivateAddress, false},
		{"http://mapped.example.test/a.mp3" + q, urlguard.ReasonPrivateAddress, false},
		{"http://metadata.example.test/latest/meta-data/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://nat64.example.test/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://ula.example.test/" + q, urlguard.ReasonPrivateAddress, false},
		{"https://ec2v6.example.test/" + q, urlguard.ReasonPrivateAddress, true},
		{"http://loop.example.test:8932/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://zero.example.test:8931/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://cgnat.example.test/" + q, urlguard.ReasonPrivateAddress, false},
		{"http://linklocal6.example.test/" + q, urlguard.ReasonPrivateAddress, false},
		{"https://teredo.example.test/" + q, urlguard.ReasonPrivateAddress, true},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d hostile cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			g := lax
			if tt.strict {
				g = strict
			}
			_, err := g.Check(context.Background(), tt.url)
			refusedFor(t, err, tt.reason)
			if !strings.Contains(tt.url, "://") || strings.HasPrefix(tt.url, "javascript:") {
				return // http.NewRequest refuses these itself
			}
			req, err := http.NewRequest(http.MethodGet, tt.url, nil)
			if err != nil {
				return // no request can carry it
			}
			resp, err := g.Client().Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("the client fetched %s", tt.url)
			}
			refusedFor(t, err, tt.reason)
			var oe *net.OpError
			if !errors.As(err, &oe) || oe.Op != "dial" {
				t.Errorf("a refusal before connecting is not a dial error: %v", err)
			}
		})
	}
}

// TestAllowed checks what the policy lets through, without connecting.
func TestAllowed(t *testing.T) {
	res := newResolver()
	res.set("media.example.com", "93.184.216.34,2606:2800:220:1:248:1893:25c8:1946")
	res.set("nat64.example.com", "64:ff9b::808:808")
	res.set("loop.example.test", "127.0.0.1")
	res.set("xn--bcher-kva.example", "93.184.216.34")
	allowed := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), simPort)
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{allowed}, Resolver: res})
	for _, u := range []string{
		"https://media.example.com/a.mp3?token=" + secret,
		"http://media.example.com:8080/a.mp3",
		"HTTPS://Media.Example.COM/a.mp3",
		"https://nat64.example.com/",
		"http://[64:ff9b::808:808]/",
		"http://[64:ff9b:1::808:808]/",
		"http://[::ffff:8.8.8.8]/",
		"http://8.8.8.8/",
		"http://[2606:4700:4700::1111]/",
		"https://xn--bcher-kva.example/",
		"http://127.0.0.1:8931/sim",
		"http://[::ffff:127.0.0.1]:8931/sim",
		"http://loop.example.test:8931/sim",
	} {
		if _, err := g.Check(context.Background(), u); err != nil {
			t.Errorf("Check(%s): %v", u, err)
		}
	}
	// A failed lookup is not a refusal.
	_, err := g.Check(context.Background(), "https://unknown.example.com/")
	if err == nil || errors.Is(err, urlguard.ErrRefused) || urlguard.Reason(err) != "" {
		t.Errorf("unknown host: %v, want a lookup error that is not a refusal", err)
	}
}

func TestNewRefusesAllowanceBeyondLoopback(t *testing.T) {
	for _, ap := range []netip.AddrPort{
		netip.MustParseAddrPort("10.0.0.1:80"),
		netip.MustParseAddrPort("169.254.169.254:80"),
		netip.MustParseAddrPort("0.0.0.0:8931"),
		netip.MustParseAddrPort("127.0.0.1:0"),
		netip.MustParseAddrPort("[fe80::1%eth0]:80"),
		netip.MustParseAddrPort("[64:ff9b::7f00:1]:8931"),
		{},
	} {
		if _, err := urlguard.New(urlguard.Config{AllowLoopback: []netip.AddrPort{ap}}); err == nil {
			t.Errorf("New accepted the allowance %s", ap)
		}
	}
	if _, err := urlguard.New(urlguard.Config{AllowLoopback: []netip.AddrPort{netip.MustParseAddrPort("[::1]:8931")}}); err != nil {
		t.Errorf("New refused [::1]:8931: %v", err)
	}
}

// sim is a loopback test server that counts its requests.
type sim struct {
	*httptest.Server
	hits atomic.Int64
	addr netip.AddrPort
}

func newSim(t *testing.T, h http.HandlerFunc) *sim {
	t.Helper()
	s := &sim{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	ap, err := urlguard.LoopbackOf(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ap
	return s
}

func answer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, body) }
}

func get(t *testing.T, c *http.Client, u string) (string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestLoopbackAllowance: the allowed simulator address works; another port
// on loopback, and the same port on ::1, do not.
func TestLoopbackAllowance(t *testing.T) {
	allowed := newSim(t, answer("simulated"))
	other := newSim(t, answer("not for you"))
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{allowed.addr}, Resolver: newResolver()})
	c := g.Client()
	if body, err := get(t, c, allowed.URL+"/ok"); err != nil || body != "simulated" {
		t.Fatalf("allowed simulator: %q, %v", body, err)
	}
	_, err := get(t, c, other.URL+"/ok?token="+secret)
	refusedFor(t, err, urlguard.ReasonPrivateAddress)
	_, err = get(t, c, fmt.Sprintf("http://[::1]:%d/ok", allowed.addr.Port()))
	refusedFor(t, err, urlguard.ReasonPrivateAddress)
	if other.hits.Load() != 0 || allowed.hits.Load() != 1 {
		t.Fatalf("hits: allowed %d, other %d; want 1, 0", allowed.hits.Load(), other.hits.Load())
	}
	// Without the allowance the simulator is loopback like any other.
	_, err = get(t, newGuard(t, urlguard.Config{AllowHTTP: true}).Client(), allowed.URL+"/ok")
	refusedFor(t, err, urlguard.ReasonPrivateAddress)
}

// TestDialPinsCheckedAddress: the connection goes to the address the one
// lookup answered and was judged, and a later connection is judged by its
// own lookup: a rebinding answer cannot reach the dialer.
func TestDialPinsCheckedAddress(t *testing.T) {
	s := newSim(t, answer("media"))
	res := newResolver()
	// The first lookup answers the allowed simulator; every later one a
	// private address, as a rebinding DNS server would after the check.
	res.set("media.example.test", s.addr.Addr().String(), "10.0.0.9")
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{s.addr}, Resolver: res})
	c := g.Client()
	u := fmt.Sprintf("http://media.example.test:%d/track.mp3", s.addr.Port())
	if body, err := get(t, c, u); err != nil || body != "media" {
		t.Fatalf("first GET: %q, %v", body, err)
	}
	if n := res.count("media.example.test"); n != 1 {
		t.Fatalf("%d lookups for one connection, want 1: the transport must not resolve again", n)
	}
	// A kept-alive connection stays on its judged address.
	if body, err := get(t, c, u); err != nil || body != "media" {
		t.Fatalf("GET on the kept-alive connection: %q, %v", body, err)
	}
	g.CloseIdleConnections()
	_, err := get(t, c, u)
	refusedFor(t, err, urlguard.ReasonPrivateAddress)
	if s.hits.Load() != 2 {
		t.Fatalf("simulator hits %d, want 2", s.hits.Load())
	}
}

// TestDialTriesEachCheckedAddress: when the first judged address does not
// answer, the next judged one is dialed.
func TestDialTriesEachCheckedAddress(t *testing.T) {
	s := newSim(t, answer("second address"))
	v6 := netip.AddrPortFrom(netip.IPv6Loopback(), s.addr.Port()) // nothing listens there
	res := newResolver()
	res.set("two.example.test", "::1,"+s.addr.Addr().String())
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{v6, s.addr}, Resolver: res})
	if body, err := get(t, g.Client(), fmt.Sprintf("http://two.example.test:%d/", s.addr.Port())); err != nil || body != "second address" {
		t.Fatalf("GET: %q, %v", body, err)
	}
}

// redirector answers /r/{n} with a redirect to where(n).
func redirector(where func(n int) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/r/") {
			_, _ = io.WriteString(w, "landed")
			return
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		http.Redirect(w, r, where(n), http.StatusFound)
	}
}

func TestRedirectToPrivateRefused(t *testing.T) {
	target := newSim(t, answer("private data"))
	res := newResolver()
	res.set("rebind.example.test", "10.1.1.1")
	var s *sim
	s = newSim(t, redirector(func(n int) string {
		switch n {
		case 1:
			return "http://169.254.169.254/latest/meta-data/?token=" + secret
		case 2:
			return target.URL + "/secret" // loopback, another port
		case 3:
			return fmt.Sprintf("http://rebind.example.test:%d/", s.addr.Port())
		}
		return "http://localhost/"
	}))
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{s.addr}, Resolver: res})
	for n, reason := range map[int]string{1: urlguard.ReasonPrivateAddress, 2: urlguard.ReasonPrivateAddress,
		3: urlguard.ReasonPrivateAddress, 4: urlguard.ReasonBlockedHost} {
		_, err := get(t, g.Client(), fmt.Sprintf("%s/r/%d", s.URL, n))
		refusedFor(t, err, reason)
	}
	if target.hits.Load() != 0 {
		t.Fatalf("the private target was reached %d times", target.hits.Load())
	}
}

func TestRedirectChainBounded(t *testing.T) {
	var s *sim
	s = newSim(t, redirector(func(n int) string {
		if n <= 1 {
			return "/landed"
		}
		return fmt.Sprintf("/r/%d", n-1)
	}))
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{s.addr}})
	// /r/5 redirects 5 times in all: the default bound.
	if body, err := get(t, g.Client(), s.URL+"/r/5"); err != nil || body != "landed" {
		t.Fatalf("5 redirects: %q, %v", body, err)
	}
	s.hits.Store(0)
	_, err := get(t, g.Client(), s.URL+"/r/6")
	refusedFor(t, err, urlguard.ReasonRedirectLimit)
	if s.hits.Load() != 6 {
		t.Fatalf("%d requests for a chain over the bound, want 6 (the sixth redirect is not followed)", s.hits.Load())
	}
	// A negative bound follows none.
	none := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{s.addr}, MaxRedirects: -1})
	_, err = get(t, none.Client(), s.URL+"/r/1")
	refusedFor(t, err, urlguard.ReasonRedirectLimit)
}

// TestTLSAndDowngrade: over https the dialer connects to the judged IP
// while TLS verifies the URL's host name; a redirect to http is refused.
func TestTLSAndDowngrade(t *testing.T) {
	plain := newSim(t, answer("plain"))
	var tlsHits atomic.Int64
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tlsHits.Add(1)
		if r.URL.Path == "/down" {
			http.Redirect(w, r, fmt.Sprintf("http://example.com:%d/", plain.addr.Port()), http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "secure")
	}))
	t.Cleanup(ts.Close)
	tlsAddr, err := urlguard.LoopbackOf(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	res := newResolver()
	res.set("example.com", "127.0.0.1") // the httptest certificate names example.com
	res.set("wrong-name.example.net", "127.0.0.1")
	pool := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{tlsAddr, plain.addr}, Resolver: res, RootCAs: pool})
	c := g.Client()
	if body, err := get(t, c, fmt.Sprintf("https://example.com:%d/ok", tlsAddr.Port())); err != nil || body != "secure" {
		t.Fatalf("https: %q, %v", body, err)
	}
	if _, err := get(t, c, fmt.Sprintf("https://wrong-name.example.net:%d/ok", tlsAddr.Port())); err == nil {
		t.Fatal("TLS accepted a certificate for another name")
	}
	_, err = get(t, c, fmt.Sprintf("https://example.com:%d/down", tlsAddr.Port()))
	refusedFor(t, err, urlguard.ReasonRedirectDowngrade)
	if plain.hits.Load() != 0 {
		t.Fatalf("the http target was reached after a downgrade")
	}
}

// TestBodyBounded: a declared length over the bound fails the request, an
// undeclared one fails the read past it, both with PAYLOAD_TOO_LARGE.
func TestBodyBounded(t *testing.T) {
	const limit = 1000
	body := bytes.Repeat([]byte("x"), 3*limit)
	s := newSim(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		} else {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		_, _ = w.Write(body[:n])
	})
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{s.addr}, MaxBodyBytes: limit})
	c := g.Client()
	tooLarge := func(err error) {
		t.Helper()
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.PayloadTooLarge || fe.Details["limit"] != int64(limit) {
			t.Fatalf("err = %v, want PAYLOAD_TOO_LARGE with details.limit %d", err, limit)
		}
	}
	_, err := get(t, c, fmt.Sprintf("%s/?n=%d", s.URL, limit+1))
	tooLarge(err)
	got, err := get(t, c, fmt.Sprintf("%s/?n=%d&chunked=1", s.URL, 3*limit))
	tooLarge(err)
	if len(got) != limit {
		t.Fatalf("read %d bytes before failing, want %d", len(got), limit)
	}
	for _, q := range []string{"", "&chunked=1"} {
		if got, err := get(t, c, fmt.Sprintf("%s/?n=%d%s", s.URL, limit, q)); err != nil || len(got) != limit {
			t.Fatalf("exactly the limit (%s): %d bytes, %v", q, len(got), err)
		}
	}
}

// proxyChildEnv marks the child process of TestIgnoresProxyEnvironment.
const proxyChildEnv = "URLGUARD_PROXY_CHILD"

// TestIgnoresProxyEnvironment runs its check in a child process whose
// environment names a proxy from the start: net/http reads the proxy
// variables once per process, so setting them in this one after another
// test made a request would prove nothing.
func TestIgnoresProxyEnvironment(t *testing.T) {
	if os.Getenv(proxyChildEnv) == "1" {
		proxyChild(t)
		return
	}
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		proxied.Add(1)
		_, _ = io.WriteString(w, "via proxy")
	}))
	t.Cleanup(proxy.Close)
	s := newSim(t, answer("direct"))
	cmd := exec.Command(os.Args[0], "-test.run=^TestIgnoresProxyEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), proxyChildEnv+"=1", "HTTP_PROXY="+proxy.URL, "HTTPS_PROXY="+proxy.URL,
		"http_proxy="+proxy.URL, "https_proxy="+proxy.URL, "NO_PROXY=", "no_proxy=", "URLGUARD_SIM="+s.addr.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if proxied.Load() != 0 {
		t.Fatalf("the proxy from the environment was used %d times", proxied.Load())
	}
	if s.hits.Load() != 1 {
		t.Fatalf("the simulator was reached %d times, want 1 (directly)", s.hits.Load())
	}
}

// proxyChild fetches the simulator by a name (an address literal on
// loopback is never proxied anyway) and a private name, with the proxy
// variables set.
func proxyChild(t *testing.T) {
	ap := netip.MustParseAddrPort(os.Getenv("URLGUARD_SIM"))
	if os.Getenv("HTTP_PROXY") == "" {
		t.Fatal("no proxy in the environment")
	}
	res := newResolver()
	res.set("sim.example.test", ap.Addr().String())
	res.set("private.example.test", "10.0.0.7")
	g := newGuard(t, urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{ap}, Resolver: res})
	if body, err := get(t, g.Client(), fmt.Sprintf("http://sim.example.test:%d/", ap.Port())); err != nil || body != "direct" {
		t.Fatalf("GET through the guard: %q, %v", body, err)
	}
	_, err := get(t, g.Client(), "http://private.example.test/")
	refusedFor(t, err, urlguard.ReasonPrivateAddress)
}

func TestLoopbackOf(t *testing.T) {
	for u, want := range map[string]string{"http://127.0.0.1:8931": "127.0.0.1:8931", "http://[::1]:80/x": "[::1]:80"} {
		if ap, err := urlguard.LoopbackOf(u); err != nil || ap.String() != want {
			t.Errorf("LoopbackOf(%s) = %s, %v", u, ap, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:80", "http://127.0.0.1", "http://localhost:80", "%zz"} {
		if _, err := urlguard.LoopbackOf(u); err == nil {
			t.Errorf("LoopbackOf(%s) succeeded", u)
		}
	}
}
