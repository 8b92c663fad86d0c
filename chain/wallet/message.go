package wallet

import (
	"net/url"
	"strings"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// Message is a Sign-In With Solana message (chain.md §6.1), the fields of
// the wallet standard's SolanaSignInInput. Times are kept as the text the
// message carries, so that Parse(m.Text()) returns m exactly; FormatTime
// writes them.
type Message struct {
	// Domain is the RFC 3986 authority asking for the signature
	// ("app.example.com" or "127.0.0.1:8080").
	Domain string
	// Address is the base58 ed25519 public key that signs.
	Address string
	// Statement is a human-readable statement of one line; optional.
	Statement string
	// URI, Version, ChainID, Nonce, IssuedAt, ExpirationTime, NotBefore and
	// RequestID are the optional fields, written in this order when set.
	URI            string
	Version        string
	ChainID        string
	Nonce          string
	IssuedAt       string
	ExpirationTime string
	NotBefore      string
	RequestID      string
	// Resources are URIs, one "- <uri>" line each after "Resources:".
	Resources []string
}

// header ends the message's first line, after the domain.
const header = " wants you to sign in with your Solana account:"

// The field prefixes in the order the format fixes.
const (
	fieldURI        = "URI: "
	fieldVersion    = "Version: "
	fieldChainID    = "Chain ID: "
	fieldNonce      = "Nonce: "
	fieldIssuedAt   = "Issued At: "
	fieldExpiration = "Expiration Time: "
	fieldNotBefore  = "Not Before: "
	fieldRequestID  = "Request ID: "
	fieldResources  = "Resources:"
)

// Text returns the message as the wallet signs it: LF-separated, no
// trailing newline, the header line, the address, then, each after an
// empty line, the statement when set and the fields that are set, in the
// fixed order. It is byte-for-byte what @solana/wallet-standard-util's
// createSignInMessageText writes (with resources only when there are any).
func (m Message) Text() string {
	var b strings.Builder
	b.WriteString(m.Domain)
	b.WriteString(header)
	b.WriteString("\n")
	b.WriteString(m.Address)
	if m.Statement != "" {
		b.WriteString("\n\n")
		b.WriteString(m.Statement)
	}
	var fields []string
	for _, f := range []struct{ prefix, value string }{
		{fieldURI, m.URI}, {fieldVersion, m.Version}, {fieldChainID, m.ChainID}, {fieldNonce, m.Nonce},
		{fieldIssuedAt, m.IssuedAt}, {fieldExpiration, m.ExpirationTime}, {fieldNotBefore, m.NotBefore},
		{fieldRequestID, m.RequestID},
	} {
		if f.value != "" {
			fields = append(fields, f.prefix+f.value)
		}
	}
	if len(m.Resources) > 0 {
		fields = append(fields, fieldResources)
		for _, r := range m.Resources {
			fields = append(fields, "- "+r)
		}
	}
	if len(fields) > 0 {
		b.WriteString("\n\n")
		b.WriteString(strings.Join(fields, "\n"))
	}
	return b.String()
}

// FormatTime writes t as the message's times are written: RFC 3339 in UTC
// with milliseconds ("2026-01-02T03:04:05.000Z"), as JavaScript's
// toISOString does.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ChainID returns the wallet-standard chain id of a cluster kind:
// "solana:mainnet", "solana:devnet", "solana:testnet", and "localnet" for
// a local cluster, the one spelling of a local cluster that Phantom's
// grammar accepts (it lists no "solana:localnet"). An unknown kind has no
// chain id ("").
func ChainID(c chain.Cluster) string {
	switch c {
	case chain.Mainnet, chain.Devnet, chain.Testnet:
		return "solana:" + string(c)
	case chain.Localnet:
		return string(chain.Localnet)
	}
	return ""
}

// validChainID reports whether Parse accepts v: Phantom's grammar and the
// wallet standard's solana:localnet.
func validChainID(v string) bool {
	switch v {
	case "mainnet", "testnet", "devnet", "localnet", "solana:mainnet", "solana:testnet", "solana:devnet", "solana:localnet":
		return true
	}
	return false
}

// Parse reads a Sign-In With Solana message. It accepts only the canonical
// form that Text writes (so Parse(s).Text() == s): the header line, a
// 32-byte base58 address, an optional one-line statement, and the fields
// in the fixed order, each section after one empty line, no trailing
// newline. Values follow Phantom's grammar: Version 1, a known chain id, a
// nonce of at least 8 letters and digits, RFC 3339 times, absolute URIs.
// Any other text is INVALID_INPUT with details.field "message" and
// details.line (1-based) where the first fault was seen.
func Parse(s string) (Message, error) {
	const op = "wallet.Parse"
	bad := func(line int, msg string) error {
		return fault.Invalid(op, "message", "The sign-in message is malformed: "+msg+".").With("line", line)
	}
	lines := strings.Split(s, "\n")
	var m Message
	domain, ok := strings.CutSuffix(lines[0], header)
	if !ok || domain == "" || strings.ContainsAny(domain, " \t\r/") {
		return Message{}, bad(1, "the first line is \"<domain> wants you to sign in with your Solana account:\"")
	}
	m.Domain = domain
	if len(lines) < 2 {
		return Message{}, bad(2, "the second line is the address")
	}
	if _, err := token2022.ParsePublicKey(lines[1]); err != nil {
		return Message{}, bad(2, "the address is a base58 32-byte public key")
	}
	m.Address = lines[1]
	i := 2
	// section consumes the empty line before a section; it reports whether
	// a section follows.
	section := func() (bool, error) {
		if i >= len(lines) {
			return false, nil
		}
		if lines[i] != "" {
			return false, bad(i+1, "an empty line separates the sections")
		}
		if i+1 >= len(lines) || lines[i+1] == "" {
			return false, bad(i+2, "a section follows its empty line")
		}
		i++
		return true, nil
	}
	more, err := section()
	if err != nil {
		return Message{}, err
	}
	if more && !isField(lines[i]) {
		m.Statement = lines[i]
		i++
		if more, err = section(); err != nil {
			return Message{}, err
		}
	}
	if more {
		if err := parseFields(&m, lines, i, bad); err != nil {
			return Message{}, err
		}
	}
	if m.Text() != s {
		return Message{}, bad(1, "the message is not in canonical form")
	}
	return m, nil
}

// isField reports whether line starts with a field prefix.
func isField(line string) bool {
	for _, p := range []string{fieldURI, fieldVersion, fieldChainID, fieldNonce, fieldIssuedAt, fieldExpiration,
		fieldNotBefore, fieldRequestID} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return line == fieldResources
}

// parseFields reads the field section from lines[i] to the end.
func parseFields(m *Message, lines []string, i int, bad func(int, string) error) error {
	type field struct {
		prefix    string
		dst       *string
		checkFunc func(string) bool
	}
	fields := []field{
		{fieldURI, &m.URI, validURI},
		{fieldVersion, &m.Version, func(v string) bool { return v == "1" }},
		{fieldChainID, &m.ChainID, validChainID},
		{fieldNonce, &m.Nonce, validNonce},
		{fieldIssuedAt, &m.IssuedAt, validTime},
		{fieldExpiration, &m.ExpirationTime, validTime},
		{fieldNotBefore, &m.NotBefore, validTime},
		{fieldRequestID, &m.RequestID, func(v string) bool { return v != "" }},
	}
	next := 0 // the first field that may still come
	for ; i < len(lines); i++ {
		line := lines[i]
		if line == fieldResources {
			i++
			if i >= len(lines) {
				return bad(i, "Resources lists at least one \"- <uri>\" line")
			}
			for ; i < len(lines); i++ {
				r, ok := strings.CutPrefix(lines[i], "- ")
				if !ok || !validURI(r) {
					return bad(i+1, "each resource is a \"- <uri>\" line and the resources end the message")
				}
				m.Resources = append(m.Resources, r)
			}
			return nil
		}
		matched := false
		for j := next; j < len(fields); j++ {
			v, ok := strings.CutPrefix(line, fields[j].prefix)
			if !ok {
				continue
			}
			if !fields[j].checkFunc(v) {
				return bad(i+1, "the value of \""+strings.TrimSuffix(fields[j].prefix, ": ")+"\" is not valid")
			}
			*fields[j].dst, next, matched = v, j+1, true
			break
		}
		if !matched {
			return bad(i+1, "the fields are URI, Version, Chain ID, Nonce, Issued At, Expiration Time, Not Before, Request ID, "+
				"Resources, each at most once and in this order")
		}
	}
	return nil
}

// validURI reports whether v is an absolute URI.
func validURI(v string) bool {
	u, err := url.Parse(v)
	return err == nil && u.Scheme != "" && !strings.ContainsAny(v, " \t\r")
}

// validNonce reports whether v has at least 8 letters and digits only.
func validNonce(v string) bool {
	if len(v) < 8 {
		return false
	}
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// validTime reports whether v is an RFC 3339 time.
func validTime(v string) bool {
	_, err := time.Parse(time.RFC3339Nano, v)
	return err == nil
}
