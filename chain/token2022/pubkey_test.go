package token2022

import (
	"encoding/hex"
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestPublicKeyBase58(t *testing.T) {
	cases := []struct {
		text string
		hex  string
	}{
		{"11111111111111111111111111111111", "0000000000000000000000000000000000000000000000000000000000000000"},
		{"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb", "06ddf6e1ee758fde18425dbce46ccddab61afc4d83b90d27febdf928d8a18bfc"},
		{"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "06ddf6e1d765a193d9cbe146ceeb79ac1cb485ed5f5b37913a8cf5857eff00a9"},
		{"ComputeBudget111111111111111111111111111111", "0306466fe5211732ffecadba72c39be7bc8ce5bbc5f7126b2c439b3a40000000"},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			var want PublicKey
			b, _ := hex.DecodeString(c.hex)
			copy(want[:], b)
			got, err := ParsePublicKey(c.text)
			if err != nil {
				t.Fatalf("ParsePublicKey: %v", err)
			}
			if got != want {
				t.Fatalf("ParsePublicKey = %x, want %x", got, want)
			}
			if s := want.String(); s != c.text {
				t.Fatalf("String = %q, want %q", s, c.text)
			}
		})
	}
	if ProgramID().String() != "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" {
		t.Fatalf("ProgramID = %s", ProgramID())
	}
	if !(PublicKey{}).IsZero() || ProgramID().IsZero() {
		t.Fatal("IsZero")
	}
}

func TestPublicKeyRoundTrip(t *testing.T) {
	for i := range 256 {
		var k PublicKey
		for j := range k {
			k[j] = byte(i * (j + 7) >> (j % 5))
		}
		k[0] = byte(i % 3) // exercise leading zero bytes
		got, err := ParsePublicKey(k.String())
		if err != nil || got != k {
			t.Fatalf("round trip of %x: %x, %v", k, got, err)
		}
	}
}

func TestParsePublicKeyInvalid(t *testing.T) {
	for _, s := range []string{
		"",
		"0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl",  // characters outside the alphabet
		"1111111111111111111111111111111",   // 31 bytes
		"111111111111111111111111111111111", // 33 bytes
		"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", // 44 characters, over 32 bytes
		"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEbX", // 33 bytes
		"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEbXXXXXXX",
	} {
		if _, err := ParsePublicKey(s); fault.CodeOf(err) != fault.InvalidInput {
			t.Errorf("ParsePublicKey(%q) error = %v, want INVALID_INPUT", s, err)
		}
	}
}

// TestBase58AnyLength round-trips values of other lengths than a key:
// signatures (64 bytes), leading zero bytes, short values.
func TestBase58AnyLength(t *testing.T) {
	for _, b := range [][]byte{make([]byte, 64), append(make([]byte, 3), 1, 2, 3), {255, 254}, {}} {
		s := EncodeBase58(b)
		got, ok := DecodeBase58(s)
		if !ok || string(got) != string(b) {
			t.Fatalf("% x -> %s -> % x", b, s, got)
		}
	}
	if _, ok := DecodeBase58("0OIl"); ok {
		t.Fatal("characters outside the alphabet accepted")
	}
}
