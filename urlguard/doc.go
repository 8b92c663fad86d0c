// Package urlguard decides which URLs the platform may fetch and makes the
// one kind of HTTP client that fetches them, so that a URL named by someone
// else (a provider's callback or poll today; a project's submitted asset,
// a developer webhook or a web3 attestation later) cannot make the
// platform reach its own network (server-side request forgery).
//
// A Guard holds one policy (Config). Guard.CheckURL judges a URL without
// touching the network; Guard.Check also resolves its host and judges
// every address, for a check at the time a URL is submitted; Guard.Client
// returns an *http.Client that applies the whole policy to every request
// and every redirect, at the moment it connects. The package is a leaf: it
// imports the standard library and package fault only.
//
// # The URL
//
//   - Scheme: https only, unless Config.AllowHTTP also admits http (provider
//     media is served over both today). Every other scheme is refused.
//   - No user info: a URL carrying credentials ("https://user:pass@host",
//     or just "https://@host") is refused; credentials travel in headers,
//     and "trusted.example@10.0.0.1" tricks die here.
//   - Length: at most Config.MaxURLLength bytes (4096 by default, room for
//     signed CDN URLs).
//   - Host: required, and spelled one way only. A host name is ASCII
//     letters, digits, hyphens and underscores in dot-separated labels of 1
//     to 63 bytes, 253 bytes at most (international names in their xn--
//     form); it needs at least two labels, so resolver search domains
//     cannot turn "metadata" or "intranet" into an internal host; and a
//     trailing dot is refused. A host whose last label is numeric (digits,
//     or 0x and hex digits) is an IPv4 address to most resolvers and
//     browsers (WHATWG URL), so it must be a canonical dotted quad:
//     decimal (2130706433), octal (0177.0.0.1), hex (0x7f.1), short
//     (127.1) and zero-padded (127.000.000.001) spellings are refused
//     outright rather than normalized, because parsers disagree about them
//     and refusing leaves nothing to disagree about. A bracketed IPv6
//     literal is parsed and judged as the address it is (IPv6 spellings are
//     unambiguous), except that a zone ("[fe80::1%25eth0]") is refused.
//   - Names that are never public are refused before any lookup:
//     localhost and *.localhost, the private-use suffixes .local,
//     .localdomain, .internal (metadata.google.internal,
//     instance-data.ec2.internal), .intranet, .lan, .corp, .home,
//     .home.arpa and .svc, and metadata.goog.
//   - Port: 1 to 65535 when given.
//
// # The addresses
//
// Every address a host resolves to is judged, not just the first: one
// refused address refuses the host, since an attacker's DNS can answer a
// public and a private address together and let the dialer pick. An
// IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as its IPv4. IPv4 is
// refused in 0.0.0.0/8 ("this network", which Linux dials as loopback),
// 10/8, 172.16/12 and 192.168/16 (RFC 1918), 100.64/10 (CGNAT; Alibaba's
// metadata 100.100.100.200), 127/8, 169.254/16 (link-local; the metadata
// service of AWS, GCP and Azure at 169.254.169.254, ECS at 169.254.170.2),
// 192.0.0/24 (IETF protocol assignments; Oracle's metadata 192.0.0.192),
// 192.0.2/24, 198.51.100/24 and 203.0.113/24 (documentation), 192.88.99/24
// (the deprecated 6to4 relay anycast), 198.18/15 (benchmarking), 224/4
// (multicast) and 240/4 (reserved, with the broadcast address).
//
// IPv6 is allowed only inside 2000::/3, the global unicast space, which
// leaves out ::, ::1, the deprecated IPv4-compatible ::/96, fc00::/7 (ULA;
// AWS's IPv6 metadata at fd00:ec2::254), fe80::/10, the deprecated fec0::/10
// and ff00::/8. Inside it, 2001::/23 (IETF protocol assignments: Teredo
// 2001::/32, benchmarking, ORCHID), 2001:db8::/32 and 3fff::/20
// (documentation) and 2002::/16 (6to4) are refused. 6to4 and Teredo are
// refused outright rather than judged by the IPv4 they embed: both are
// deprecated tunnels (RFC 7526) whose relays the platform does not control,
// Teredo obfuscates its addresses, and no service the platform calls is
// reachable only through them. NAT64 is judged by the IPv4 it carries: an
// address in 64:ff9b::/96 is allowed exactly when its last 32 bits are an
// allowed IPv4. In the local-use prefix 64:ff9b:1::/48 (RFC 8215) the
// IPv4's position depends on a prefix length only the local network knows,
// so only the /96 form 64:ff9b:1::a.b.c.d is judged by its IPv4 and any
// other address there is refused.
//
// # The connection
//
// Guard.Client's transport resolves a host once, in its own DialContext,
// judges every answer, and dials the judged IP literals themselves (each in
// turn until one connects), so the transport never resolves the name again
// and a DNS answer that changes between check and connect (rebinding)
// cannot swap the address. The dialer's control hook judges the socket
// address once more just before connecting. Each new connection makes its
// own lookup and is judged by it; a kept-alive connection stays on the
// address it was judged for. TLS is still verified against the URL's host
// name. The proxy settings of the environment (HTTP_PROXY, HTTPS_PROXY)
// are ignored: a proxy would resolve and connect on the platform's behalf,
// out of the guard's sight.
//
// # Redirects
//
// Each redirect target passes the same URL and address checks as the first
// request; at most Config.MaxRedirects (5 by default) are followed, and a
// redirect from https to http (after any https hop) is refused.
//
// # Sizes and times
//
// Connecting (lookup included) is bounded by Config.DialTimeout (10 s), the
// TLS handshake by Config.TLSHandshakeTimeout (10 s), the wait for the
// response headers by Config.ResponseHeaderTimeout (30 s), their size by 1
// MiB, and the whole exchange, body included, by Config.Timeout (60 s). A
// response body is at most Config.MaxBodyBytes (16 MiB by default): a
// declared Content-Length over it fails the request, and reading past it
// fails the read, both with PAYLOAD_TOO_LARGE (details.limit).
//
// # Errors
//
// A refused URL or address is an INVALID_INPUT *fault.Error with
// details.field "url" and a stable details.reason: "url_too_long",
// "malformed_url", "scheme", "credentials", "host_required",
// "host_spelling", "blocked_host", "private_address" (the host is or
// resolves to an address outside the public space, cloud metadata
// included), "redirect_limit" or "redirect_downgrade". Its cause wraps
// ErrRefused (errors.Is works through the *url.Error an http.Client adds)
// and names the address class for logs. No error of this package carries
// the URL, whose query may hold a signed token; the address class and the
// resolved address appear only in the cause. A refusal made before any
// connection (the request's URL, or the addresses of its host) also comes
// wrapped in a *net.OpError whose Op is "dial", so callers that tell "no
// request was sent" from "the request may have arrived" by that test read
// it right; a refused redirect is not, since the earlier request was sent.
// A failed lookup is not a refusal: it is returned as the resolver's error,
// for callers to treat as an unreachable host.
//
// # Loopback simulators
//
// Config.AllowLoopback lists exact loopback addresses with their port
// (127.0.0.1:8931, [::1]:8931) that pass although loopback, so tests and
// the example host can point the platform at simulators listening on
// loopback. It is the only exception: there is no switch that admits
// loopback, a range or a private address, New refuses an entry that is not
// a loopback address with a port, and NAT64 forms of an allowed address do
// not match it. Nothing in production code sets it; an embedder that leaves
// it empty gets the full policy.
package urlguard
