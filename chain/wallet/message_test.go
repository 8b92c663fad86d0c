package wallet

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

const testAddress = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"

func fullMessage() Message {
	return Message{Domain: "app.example.com", Address: testAddress,
		Statement: DefaultStatement(PurposeLinkWallet), URI: "https://app.example.com", Version: "1", ChainID: "solana:devnet",
		Nonce: "ABCDEFGH23456789", IssuedAt: "2026-01-02T03:04:05.000Z", ExpirationTime: "2026-01-02T03:09:05.000Z",
		NotBefore: "2026-01-02T03:04:05.000Z", RequestID: "wch_01", Resources: []string{"https://app.example.com/terms", "ipfs://bafy"}}
}

// TestMessageGolden pins the exact text of chain.md §6.1: header line,
// address, empty line, statement, empty line, fields in order, no trailing
// newline.
func TestMessageGolden(t *testing.T) {
	want := "app.example.com wants you to sign in with your Solana account:\n" +
		testAddress + "\n" +
		"\n" +
		"Link this wallet to your platform account for link_wallet. This request will not trigger a blockchain transaction or cost any fees.\n" +
		"\n" +
		"URI: https://app.example.com\n" +
		"Version: 1\n" +
		"Chain ID: solana:devnet\n" +
		"Nonce: ABCDEFGH23456789\n" +
		"Issued At: 2026-01-02T03:04:05.000Z\n" +
		"Expiration Time: 2026-01-02T03:09:05.000Z\n" +
		"Not Before: 2026-01-02T03:04:05.000Z\n" +
		"Request ID: wch_01\n" +
		"Resources:\n" +
		"- https://app.example.com/terms\n" +
		"- ipfs://bafy"
	if got := fullMessage().Text(); got != want {
		t.Fatalf("text:\n%q\nwant\n%q", got, want)
	}
	if got, want := (Message{Domain: "d.io", Address: testAddress}).Text(), "d.io wants you to sign in with your Solana account:\n"+testAddress; got != want {
		t.Errorf("minimal = %q, want %q", got, want)
	}
	if got, want := (Message{Domain: "d.io", Address: testAddress, Nonce: "12345678"}).Text(),
		"d.io wants you to sign in with your Solana account:\n"+testAddress+"\n\nNonce: 12345678"; got != want {
		t.Errorf("fields only = %q, want %q", got, want)
	}
	if got := FormatTime(time.Date(2026, 1, 2, 4, 4, 5, 123456789, time.FixedZone("x", 3600))); got != "2026-01-02T03:04:05.123Z" {
		t.Errorf("FormatTime = %q", got)
	}
}

func TestChainID(t *testing.T) {
	for c, want := range map[chain.Cluster]string{chain.Mainnet: "solana:mainnet", chain.Devnet: "solana:devnet",
		chain.Testnet: "solana:testnet", chain.Localnet: "localnet", "other": ""} {
		if got := ChainID(c); got != want {
			t.Errorf("ChainID(%q) = %q, want %q", c, got, want)
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	full := fullMessage()
	cases := map[string]Message{
		"full":           full,
		"minimal":        {Domain: "127.0.0.1:8080", Address: testAddress},
		"statement only": {Domain: "d.io", Address: testAddress, Statement: "Hello."},
		"fields only":    {Domain: "d.io", Address: testAddress, Version: "1", RequestID: "r"},
		"localnet":       {Domain: "d.io", Address: testAddress, ChainID: "localnet", Nonce: "abcdefgh"},
		"resources only": {Domain: "d.io", Address: testAddress, Resources: []string{"https://x.io/a"}},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(m.Text())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("parse(build) = %+v, want %+v", got, m)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	good := fullMessage().Text()
	swap := func(a, b string) string {
		return strings.Replace(strings.Replace(strings.Replace(good, a, "\x00", 1), b, a, 1), "\x00", b, 1)
	}
	cases := map[string]string{
		"empty":                 "",
		"trailing newline":      good + "\n",
		"CRLF":                  strings.ReplaceAll(good, "\n", "\r\n"),
		"no header":             strings.Replace(good, " wants you to sign in", " wants to sign in", 1),
		"empty domain":          strings.TrimPrefix(good, "app.example.com"),
		"no address":            "d.io wants you to sign in with your Solana account:",
		"bad address":           strings.Replace(good, testAddress, "0OIl", 1),
		"short address":         strings.Replace(good, testAddress, "4Nd1mBQtrMJVYVfKf2PJy9NZ", 1),
		"no blank line":         strings.Replace(good, testAddress+"\n\n", testAddress+"\n", 1),
		"two blank lines":       strings.Replace(good, testAddress+"\n\n", testAddress+"\n\n\n", 1),
		"out of order":          swap("Version: 1", "Chain ID: solana:devnet"),
		"nonce before uri":      swap("URI: https://app.example.com", "Nonce: ABCDEFGH23456789"),
		"duplicate field":       strings.Replace(good, "Version: 1\n", "Version: 1\nVersion: 1\n", 1),
		"unknown field":         strings.Replace(good, "Version: 1\n", "Version: 1\nColour: red\n", 1),
		"version 2":             strings.Replace(good, "Version: 1", "Version: 2", 1),
		"chain id":              strings.Replace(good, "solana:devnet", "solana:moon", 1),
		"short nonce":           strings.Replace(good, "ABCDEFGH23456789", "abc", 1),
		"nonce symbol":          strings.Replace(good, "ABCDEFGH23456789", "ABCDEFGH-2345678", 1),
		"bad time":              strings.Replace(good, "Issued At: 2026-01-02T03:04:05.000Z", "Issued At: yesterday", 1),
		"relative uri":          strings.Replace(good, "URI: https://app.example.com", "URI: /login", 1),
		"empty resources":       strings.TrimSuffix(good, "\n- https://app.example.com/terms\n- ipfs://bafy"),
		"resource not last":     strings.Replace(good, "Request ID: wch_01\nResources:\n- https://app.example.com/terms", "Resources:\n- https://app.example.com/terms\nRequest ID: wch_01", 1),
		"empty value":           strings.Replace(good, "Request ID: wch_01", "Request ID: ", 1),
		"statement two lines":   strings.Replace(good, "cost any fees.\n", "cost any fees.\nSecond line.\n", 1),
		"blank after statement": strings.Replace(good, "fees.\n\nURI", "fees.\n\n", 1),
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(s); !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("Parse(%q) = %v, want INVALID_INPUT", s, err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(fullMessage().Text())
	f.Add("d.io wants you to sign in with your Solana account:\n" + testAddress)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Parse(s)
		if err != nil {
			return
		}
		if m.Text() != s {
			t.Fatalf("Parse accepted non-canonical %q", s)
		}
	})
}
