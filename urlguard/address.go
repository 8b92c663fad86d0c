package urlguard

import "net/netip"

// block is a refused prefix and the class it is reported as (in causes,
// for logs).
type block struct {
	p     netip.Prefix
	class string
}

func blocks(rows ...string) []block {
	out := make([]block, 0, len(rows)/2)
	for i := 0; i < len(rows); i += 2 {
		out = append(out, block{netip.MustParsePrefix(rows[i]), rows[i+1]})
	}
	return out
}

// The refused ranges, the more specific first so that a cloud metadata
// address is reported as such. They are built once and only read.
var (
	v4Blocks = blocks(
		"169.254.169.254/32", "cloud metadata (AWS, GCP, Azure)",
		"169.254.170.2/32", "cloud metadata (ECS)",
		"100.100.100.200/32", "cloud metadata (Alibaba)",
		"192.0.0.192/32", "cloud metadata (Oracle)",
		"0.0.0.0/8", "unspecified (this network)",
		"10.0.0.0/8", "private (RFC 1918)",
		"100.64.0.0/10", "shared address space (CGNAT)",
		"127.0.0.0/8", "loopback",
		"169.254.0.0/16", "link-local",
		"172.16.0.0/12", "private (RFC 1918)",
		"192.0.0.0/24", "IETF protocol assignments",
		"192.0.2.0/24", "documentation",
		"192.88.99.0/24", "6to4 relay anycast",
		"192.168.0.0/16", "private (RFC 1918)",
		"198.18.0.0/15", "benchmarking",
		"198.51.100.0/24", "documentation",
		"203.0.113.0/24", "documentation",
		"224.0.0.0/4", "multicast",
		"255.255.255.255/32", "broadcast",
		"240.0.0.0/4", "reserved",
	)
	// v6Outside classifies what lies outside global unicast, all refused.
	v6Outside = blocks(
		"::/128", "unspecified",
		"::1/128", "loopback",
		"::/96", "IPv4-compatible (deprecated)",
		"fd00:ec2::254/128", "cloud metadata (AWS)",
		"fc00::/7", "unique local (ULA)",
		"fe80::/10", "link-local",
		"fec0::/10", "site-local (deprecated)",
		"ff00::/8", "multicast",
	)
	// v6Blocks are refused inside global unicast.
	v6Blocks = blocks(
		"2001::/32", "Teredo",
		"2001::/23", "IETF protocol assignments",
		"2001:db8::/32", "documentation",
		"2002::/16", "6to4",
		"3fff::/20", "documentation",
	)
	globalUnicast = netip.MustParsePrefix("2000::/3")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local    = netip.MustParsePrefix("64:ff9b:1::/48")
	nat64Local96  = netip.MustParsePrefix("64:ff9b:1::/96")
)

// classify returns the class of a refused address, or "" for an address in
// the public space. a carries no zone and is unmapped.
func classify(a netip.Addr) string {
	if a.Is4() {
		for _, b := range v4Blocks {
			if b.p.Contains(a) {
				return b.class
			}
		}
		return ""
	}
	if nat64.Contains(a) || nat64Local96.Contains(a) {
		b := a.As16()
		if c := classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})); c != "" {
			return "NAT64 of " + c
		}
		return ""
	}
	if nat64Local.Contains(a) {
		return "local-use NAT64 outside its /96 form"
	}
	if !globalUnicast.Contains(a) {
		for _, b := range v6Outside {
			if b.p.Contains(a) {
				return b.class
			}
		}
		return "outside global unicast"
	}
	for _, b := range v6Blocks {
		if b.p.Contains(a) {
			return b.class
		}
	}
	return ""
}
