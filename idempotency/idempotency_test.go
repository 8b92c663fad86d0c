package idempotency

import (
	"strings"
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestCanonicalSortsKeysAndKeepsNumbers(t *testing.T) {
	a, err := Canonical([]byte(`{"b": 1.50, "a": {"y": [1, 2], "x": "s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Canonical([]byte(`{"a":{"x":"s","y":[1,2]},"b":1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) || string(a) != `{"a":{"x":"s","y":[1,2]},"b":1.50}` {
		t.Fatalf("Canonical = %s and %s", a, b)
	}
	if c, _ := Canonical([]byte(`{"b":1.5}`)); string(c) == string(a) {
		t.Fatal("different bodies have one canonical form")
	}
}

type fakeHasher struct{}

func (fakeHasher) IdempotencyHash(parts ...[]byte) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(string(p))
		b.WriteByte('|')
	}
	return b.String()
}

func TestRequestHashBindsPrincipal(t *testing.T) {
	h1 := RequestHash(fakeHasher{}, "key:a", "createApiKey", nil, []byte(`{}`))
	h2 := RequestHash(fakeHasher{}, "key:b", "createApiKey", nil, []byte(`{}`))
	if h1 == h2 {
		t.Fatal("hash does not bind the principal")
	}
}

func TestValidKey(t *testing.T) {
	for _, k := range []string{"", strings.Repeat("a", 256), "a\nb", "é"} {
		if fault.CodeOf(ValidKey(k)) != fault.InvalidInput {
			t.Errorf("ValidKey(%q) accepted", k)
		}
	}
	if err := ValidKey("req-2026-01-01_abc"); err != nil {
		t.Fatalf("ValidKey rejected a good key: %v", err)
	}
}
