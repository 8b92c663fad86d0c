package urlguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Defaults of a Config's zero fields.
const (
	// DefaultMaxURLLength bounds a URL, in bytes.
	DefaultMaxURLLength = 4096
	// DefaultMaxRedirects is how many redirects a Client follows.
	DefaultMaxRedirects = 5
	// DefaultMaxBodyBytes bounds a response body, in bytes (16 MiB).
	DefaultMaxBodyBytes = 16 << 20
	// DefaultDialTimeout bounds the lookup and the connect of one dial.
	DefaultDialTimeout = 10 * time.Second
	// DefaultTLSHandshakeTimeout bounds a TLS handshake.
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultResponseHeaderTimeout bounds the wait for response headers
	// after the request was written.
	DefaultResponseHeaderTimeout = 30 * time.Second
	// DefaultTimeout bounds a whole exchange, redirects and body included.
	DefaultTimeout = 60 * time.Second
)

// maxResponseHeaderBytes bounds a response's headers.
const maxResponseHeaderBytes = 1 << 20

// Reasons of a refusal (details.reason of an INVALID_INPUT error). They are
// stable: clients may branch on them.
const (
	ReasonURLTooLong        = "url_too_long"
	ReasonMalformedURL      = "malformed_url"
	ReasonScheme            = "scheme"
	ReasonCredentials       = "credentials"
	ReasonHostRequired      = "host_required"
	ReasonHostSpelling      = "host_spelling"
	ReasonBlockedHost       = "blocked_host"
	ReasonPrivateAddress    = "private_address"
	ReasonRedirectLimit     = "redirect_limit"
	ReasonRedirectDowngrade = "redirect_downgrade"
)

// ErrRefused is the cause every refusal wraps.
var ErrRefused = errors.New("urlguard: refused")

// Resolver looks up a host's addresses; *net.Resolver is one. network is
// "ip", "ip4" or "ip6".
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is a Guard's policy. The zero value is the strictest: https only,
// no loopback allowance, the documented bounds.
type Config struct {
	// AllowHTTP admits http URLs as well as https. A redirect from https to
	// http is refused all the same.
	AllowHTTP bool
	// AllowLoopback lists exact loopback addresses with their port that pass
	// although loopback: simulators listening on loopback in tests and the
	// example host. Each must be in 127.0.0.0/8 or ::1 with a non-zero
	// port. Empty in production.
	AllowLoopback []netip.AddrPort
	// Resolver looks up host names; nil means net.DefaultResolver. Tests
	// inject a fake so that no test touches real DNS.
	Resolver Resolver
	// MaxURLLength bounds a URL, in bytes; zero means DefaultMaxURLLength.
	MaxURLLength int
	// MaxRedirects is how many redirects a Client follows; zero means
	// DefaultMaxRedirects, a negative value refuses every redirect.
	MaxRedirects int
	// MaxBodyBytes bounds a response body, in bytes; zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// DialTimeout bounds one dial, lookup included; zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake; zero means
	// DefaultTLSHandshakeTimeout.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for response headers; zero
	// means DefaultResponseHeaderTimeout.
	ResponseHeaderTimeout time.Duration
	// Timeout bounds a whole exchange, body included (http.Client.Timeout);
	// zero means DefaultTimeout.
	Timeout time.Duration
	// RootCAs are the certificate authorities TLS trusts; nil means the
	// host's. Tests set the CA of their httptest TLS server.
	RootCAs *x509.CertPool
}

// Guard applies one policy. It is safe for concurrent use; its clients
// share one connection pool.
type Guard struct {
	cfg       Config
	allow     map[netip.AddrPort]bool
	resolver  Resolver
	transport *http.Transport
}

// New validates cfg and returns a Guard. It makes no network call.
func New(cfg Config) (*Guard, error) {
	if cfg.MaxURLLength < 0 || cfg.MaxBodyBytes < 0 || cfg.DialTimeout < 0 || cfg.TLSHandshakeTimeout < 0 ||
		cfg.ResponseHeaderTimeout < 0 || cfg.Timeout < 0 {
		return nil, errors.New("urlguard: negative limit or timeout")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if cfg.MaxURLLength == 0 {
		cfg.MaxURLLength = DefaultMaxURLLength
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	} else if cfg.MaxRedirects < 0 {
		cfg.MaxRedirects = 0
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	def(&cfg.DialTimeout, DefaultDialTimeout)
	def(&cfg.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout)
	def(&cfg.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	def(&cfg.Timeout, DefaultTimeout)
	g := &Guard{cfg: cfg, allow: map[netip.AddrPort]bool{}, resolver: cfg.Resolver}
	for _, ap := range cfg.AllowLoopback {
		a := ap.Addr().Unmap()
		if !ap.IsValid() || a.Zone() != "" || !a.IsLoopback() || ap.Port() == 0 {
			return nil, fmt.Errorf("urlguard: AllowLoopback entry %s is not a loopback address with a port", ap)
		}
		g.allow[netip.AddrPortFrom(a, ap.Port())] = true
	}
	g.cfg.AllowLoopback = append([]netip.AddrPort(nil), cfg.AllowLoopback...)
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	g.transport = &http.Transport{
		Proxy:                  nil, // never from the environment: a proxy would connect out of sight
		DialContext:            g.dialContext,
		ForceAttemptHTTP2:      true, // a custom DialContext turns HTTP/2 off otherwise
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.RootCAs},
		TLSHandshakeTimeout:    cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  cfg.ResponseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		MaxIdleConns:           100,
		IdleConnTimeout:        90 * time.Second,
	}
	return g, nil
}

// Client returns an *http.Client that applies the policy to every request,
// every redirect and every connection (see the package doc). Clients of one
// Guard share its connection pool; each call returns a new *http.Client, so
// a caller may change its fields without affecting the others.
func (g *Guard) Client() *http.Client {
	return &http.Client{
		Transport:     &roundTripper{g: g},
		CheckRedirect: g.checkRedirect,
		Timeout:       g.cfg.Timeout,
	}
}

// CloseIdleConnections closes the idle connections of the Guard's pool.
func (g *Guard) CloseIdleConnections() { g.transport.CloseIdleConnections() }

// CheckURL parses raw and judges it without touching the network: scheme,
// user info, length, host spelling, never-public names, and the address of
// an IP-literal host. It returns the parsed URL, or an INVALID_INPUT error
// (details.field "url", details.reason) that never names the URL.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	const op = "urlguard.CheckURL"
	if len(raw) > g.cfg.MaxURLLength {
		return nil, refusal(op, ReasonURLTooLong, fmt.Sprintf("%d bytes, over %d", len(raw), g.cfg.MaxURLLength))
	}
	u, err := url.Parse(raw)
	if err != nil {
		// err is dropped: its text quotes the URL.
		return nil, refusal(op, ReasonMalformedURL, "does not parse")
	}
	if _, _, err := g.checkParsed(op, u); err != nil {
		return nil, err
	}
	return u, nil
}

// Check is CheckURL followed by a lookup of the host: every address it
// resolves to must be allowed. It suits a URL submitted now and fetched
// later (a webhook endpoint): a Client judges the addresses again when it
// connects. A failed lookup is returned as the resolver's error, not as a
// refusal.
func (g *Guard) Check(ctx context.Context, raw string) (*url.URL, error) {
	const op = "urlguard.Check"
	u, err := g.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	_, port, _ := g.checkParsed(op, u)
	if _, err := g.addrs(ctx, op, "ip", u.Hostname(), port); err != nil {
		return nil, err
	}
	return u, nil
}

// checkParsed judges a parsed URL and returns its host's address when the
// host is an IP literal, and its port (explicit or the scheme's).
func (g *Guard) checkParsed(op string, u *url.URL) (netip.Addr, uint16, error) {
	if u == nil {
		return netip.Addr{}, 0, refusal(op, ReasonMalformedURL, "no URL")
	}
	if n := len(u.String()); n > g.cfg.MaxURLLength {
		return netip.Addr{}, 0, refusal(op, ReasonURLTooLong, fmt.Sprintf("%d bytes, over %d", n, g.cfg.MaxURLLength))
	}
	var port uint16
	switch strings.ToLower(u.Scheme) {
	case "https":
		port = 443
	case "http":
		if !g.cfg.AllowHTTP {
			return netip.Addr{}, 0, refusal(op, ReasonScheme, "http is not allowed")
		}
		port = 80
	default:
		return netip.Addr{}, 0, refusal(op, ReasonScheme, "scheme is not allowed")
	}
	if u.Opaque != "" {
		return netip.Addr{}, 0, refusal(op, ReasonMalformedURL, "opaque URL")
	}
	if u.User != nil {
		return netip.Addr{}, 0, refusal(op, ReasonCredentials, "user info in the URL")
	}
	if u.Host == "" || u.Hostname() == "" {
		return netip.Addr{}, 0, refusal(op, ReasonHostRequired, "no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return netip.Addr{}, 0, refusal(op, ReasonMalformedURL, "port out of range")
		}
		port = uint16(n)
	} else if strings.HasSuffix(u.Host, ":") {
		return netip.Addr{}, 0, refusal(op, ReasonMalformedURL, "empty port")
	}
	a, isIP, err := parseHost(op, u.Hostname(), strings.HasPrefix(u.Host, "["))
	if err != nil {
		return netip.Addr{}, 0, err
	}
	if isIP {
		if err := g.judge(op, a, port); err != nil {
			return netip.Addr{}, 0, err
		}
	}
	return a, port, nil
}

// parseHost checks a host's spelling and the never-public names. It returns
// the address of an IP literal (isIP true), unmapped.
func parseHost(op, host string, bracketed bool) (netip.Addr, bool, error) {
	if bracketed || strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return netip.Addr{}, false, refusal(op, ReasonHostSpelling, "bad IPv6 literal")
		}
		if a.Zone() != "" {
			return netip.Addr{}, false, refusal(op, ReasonHostSpelling, "IPv6 literal with a zone")
		}
		return a.Unmap(), true, nil
	}
	h := strings.ToLower(host)
	if len(h) > 253 {
		return netip.Addr{}, false, refusal(op, ReasonHostSpelling, "host name over 253 bytes")
	}
	if strings.HasSuffix(h, ".") {
		return netip.Addr{}, false, refusal(op, ReasonHostSpelling, "trailing dot")
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return netip.Addr{}, false, refusal(op, ReasonHostSpelling, "empty or long label")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return netip.Addr{}, false, refusal(op, ReasonHostSpelling, "character outside [a-z0-9-_.]")
			}
		}
	}
	if numericLabel(labels[len(labels)-1]) {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() || a.String() != h {
			return netip.Addr{}, false, refusal(op, ReasonHostSpelling, "non-canonical IPv4 spelling")
		}
		return a, true, nil
	}
	if len(labels) < 2 {
		return netip.Addr{}, false, refusal(op, ReasonBlockedHost, "single-label host name")
	}
	if blockedName(h) {
		return netip.Addr{}, false, refusal(op, ReasonBlockedHost, "never-public host name")
	}
	return netip.Addr{}, false, nil
}

// numericLabel reports whether a label makes a host an IPv4 address to a
// WHATWG URL parser: all decimal digits, or 0x followed by hex digits.
func numericLabel(l string) bool {
	if strings.HasPrefix(l, "0x") {
		for i := 2; i < len(l); i++ {
			c := l[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return l != ""
}

// blockedSuffixes are private-use or local-only name spaces, and
// blockedNames cloud metadata names outside them.
var (
	blockedSuffixes = []string{"localhost", "local", "localdomain", "internal", "intranet", "lan", "corp", "home", "home.arpa", "svc"}
	blockedNames    = []string{"metadata.goog"}
)

// blockedName reports whether a lowercase host name is never public.
func blockedName(h string) bool {
	for _, s := range blockedSuffixes {
		if h == s || strings.HasSuffix(h, "."+s) {
			return true
		}
	}
	for _, n := range blockedNames {
		if h == n {
			return true
		}
	}
	return false
}

// judge refuses an address outside the public space unless it is an
// allowed loopback address on exactly this port.
func (g *Guard) judge(op string, a netip.Addr, port uint16) error {
	if a.Zone() != "" {
		return refusal(op, ReasonPrivateAddress, fmt.Sprintf("address %s has a zone", a))
	}
	a = a.Unmap()
	if g.allow[netip.AddrPortFrom(a, port)] {
		return nil
	}
	if class := classify(a); class != "" {
		return refusal(op, ReasonPrivateAddress, fmt.Sprintf("address %s is %s", a, class))
	}
	return nil
}

// addrs returns the addresses to dial for host: the literal itself, or
// every address the resolver answers, each judged; one refused address
// refuses them all.
func (g *Guard) addrs(ctx context.Context, op, network, host string, port uint16) ([]netip.Addr, error) {
	a, isIP, err := parseHost(op, host, false)
	if err != nil {
		return nil, err
	}
	if isIP {
		if err := g.judge(op, a, port); err != nil {
			return nil, err
		}
		return []netip.Addr{a}, nil
	}
	found, err := g.resolver.LookupNetIP(ctx, network, strings.ToLower(host))
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	if len(found) == 0 {
		return nil, fault.Wrap(op, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true})
	}
	out := make([]netip.Addr, 0, len(found))
	for _, f := range found {
		if err := g.judge(op, f, port); err != nil {
			return nil, err
		}
		out = append(out, f.Unmap())
	}
	return out, nil
}

// dialContext resolves once, judges every address and dials the judged IP
// literals, so the connection reaches an address that was checked.
func (g *Guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	const op = "urlguard.Dial"
	host, p, err := net.SplitHostPort(address)
	if err != nil {
		return nil, dialRefusal(network, refusal(op, ReasonMalformedURL, "bad dial address"))
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil || port == 0 {
		return nil, dialRefusal(network, refusal(op, ReasonMalformedURL, "port out of range"))
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.DialTimeout)
	defer cancel()
	lookup := "ip"
	switch network {
	case "tcp4":
		lookup = "ip4"
	case "tcp6":
		lookup = "ip6"
	}
	addrs, err := g.addrs(ctx, op, lookup, host, uint16(port))
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return nil, dialRefusal(network, err)
		}
		return nil, err
	}
	var todo []netip.Addr
	for _, a := range addrs {
		if network == "tcp4" && !a.Is4() || network == "tcp6" && !a.Is6() {
			continue
		}
		todo = append(todo, a)
	}
	var first error
	for i, a := range todo {
		// As net.Dialer does for a name, the time left is shared among the
		// addresses left (at least 2 s each), so one black-holed address
		// does not spend it all.
		d := net.Dialer{KeepAlive: 30 * time.Second, ControlContext: g.control}
		if dl, ok := ctx.Deadline(); ok {
			d.Timeout = max(time.Until(dl)/time.Duration(len(todo)-i), 2*time.Second)
		}
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = &net.OpError{Op: "dial", Net: network, Err: errors.New("no address of the host's family")}
	}
	return nil, first
}

// control judges the socket address just before connecting: the addresses
// dialed are judged literals already; this holds even if a later change
// dialed a name.
func (g *Guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	const op = "urlguard.Dial"
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refusal(op, ReasonPrivateAddress, "socket address does not parse")
	}
	return g.judge(op, ap.Addr(), ap.Port())
}

// checkRedirect judges each redirect: the hop count, no https-to-http
// downgrade, and the target URL (its addresses are judged when it dials).
func (g *Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	const op = "urlguard.Redirect"
	if len(via) > g.cfg.MaxRedirects {
		return refusal(op, ReasonRedirectLimit, fmt.Sprintf("more than %d redirects", g.cfg.MaxRedirects))
	}
	if !strings.EqualFold(req.URL.Scheme, "https") {
		for _, v := range via {
			if strings.EqualFold(v.URL.Scheme, "https") {
				return refusal(op, ReasonRedirectDowngrade, "redirect from https to http")
			}
		}
	}
	_, _, err := g.checkParsed(op, req.URL)
	return err
}

// roundTripper judges each request's URL before the transport sees it, and
// bounds each response body.
type roundTripper struct{ g *Guard }

// RoundTrip implements http.RoundTripper.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	const op = "urlguard.RoundTrip"
	if _, _, err := rt.g.checkParsed(op, req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, dialRefusal("tcp", err)
	}
	resp, err := rt.g.transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	limit := rt.g.cfg.MaxBodyBytes
	if resp.ContentLength > limit {
		_ = resp.Body.Close()
		return nil, tooLarge(op, limit)
	}
	resp.Body = limitedBody{Reader: LimitReader(resp.Body, limit, "urlguard.Body.Read"), Closer: resp.Body}
	return resp, nil
}

// Reason returns the details.reason of the refusal in err's chain, or ""
// when err holds no refusal of this package.
func Reason(err error) string {
	if !errors.Is(err, ErrRefused) {
		return ""
	}
	for e := err; e != nil; {
		var fe *fault.Error
		if !errors.As(e, &fe) {
			break
		}
		if r, ok := fe.Details["reason"].(string); ok && errors.Is(fe.Err, ErrRefused) {
			return r
		}
		e = fe.Err
	}
	return ""
}

// refusal is an INVALID_INPUT error on the URL with a reason; cause says
// why, for logs, and never holds the URL.
func refusal(op, reason, cause string) *fault.Error {
	e := fault.Invalid(op, "url", refusalMessage(reason)).With("reason", reason)
	e.Err = fmt.Errorf("%w: %s: %s", ErrRefused, reason, cause)
	return e
}

// refusalMessage is the client-safe message of a reason.
func refusalMessage(reason string) string {
	switch reason {
	case ReasonURLTooLong:
		return "The URL is too long."
	case ReasonMalformedURL:
		return "The URL is malformed."
	case ReasonScheme:
		return "The URL's scheme is not allowed here."
	case ReasonCredentials:
		return "The URL must not carry credentials."
	case ReasonHostRequired:
		return "The URL has no host."
	case ReasonHostSpelling:
		return "The URL's host is not spelled in a canonical form."
	case ReasonBlockedHost:
		return "The URL's host is not a public host name."
	case ReasonPrivateAddress:
		return "The URL's host is not a public address."
	case ReasonRedirectLimit:
		return "The URL redirects too many times."
	case ReasonRedirectDowngrade:
		return "The URL redirects from https to http."
	}
	return "The URL is not allowed."
}

// dialRefusal wraps a refusal made before any connection in a
// *net.OpError with Op "dial": nothing was sent.
func dialRefusal(network string, err error) error {
	return &net.OpError{Op: "dial", Net: network, Err: err}
}

// tooLarge is the error of a body over limit bytes.
func tooLarge(op string, limit int64) *fault.Error {
	return fault.E(op, fault.PayloadTooLarge, "The response is larger than the platform accepts.").With("limit", limit)
}

// LimitReader returns a reader of r that fails a read past limit bytes
// with PAYLOAD_TOO_LARGE (details.limit, op naming the caller): unlike
// io.LimitReader, an overrun is an error, never a silent truncation. The
// error is sticky.
func LimitReader(r io.Reader, limit int64, op string) io.Reader {
	return &limitedReader{r: r, left: limit, limit: limit, op: op}
}

// limitedReader is LimitReader's reader.
type limitedReader struct {
	r     io.Reader
	left  int64 // bytes still allowed
	limit int64
	op    string
	err   error // sticky
}

// Read reads from r, failing once more than limit bytes came.
func (b *limitedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > b.left+1 { // one byte more reveals an overrun
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	if int64(n) > b.left {
		n, b.left = int(b.left), 0
		b.err = tooLarge(b.op, b.limit)
		return n, b.err
	}
	b.left -= int64(n)
	if err != nil {
		b.err = err
	}
	return n, err
}

// limitedBody is a response body read through LimitReader.
type limitedBody struct {
	io.Reader
	io.Closer
}

// LoopbackOf returns the address and port of a URL whose host is a
// loopback IP literal with an explicit port (a simulator's base URL, as
// httptest.Server.URL is), for Config.AllowLoopback.
func LoopbackOf(rawURL string) (netip.AddrPort, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return netip.AddrPort{}, errors.New("urlguard: LoopbackOf: the URL does not parse")
	}
	ap, err := netip.ParseAddrPort(u.Host)
	if err != nil || !ap.Addr().Unmap().IsLoopback() || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("urlguard: LoopbackOf: %q is not a loopback address with a port", u.Host)
	}
	return ap, nil
}
