package operation

import (
	"errors"
	"fmt"
	"testing"

	"github.com/creatormusic/platform/fault"
)

// A create that failed after the request was sent (the adapters mark it
// details.ambiguous) may have made a billed task: it must take the
// ambiguous path, never be re-sent as a transient failure (F4).
func TestAmbiguousCreateErrors(t *testing.T) {
	sent := fault.E("providerb.Create", fault.ProviderUnavailable, "connection reset").With("ambiguous", true)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"marked", sent, true},
		{"wrapped", fault.Wrap("operation.dispatch", sent), true},
		{"wrapped by fmt", fmt.Errorf("create: %w", sent), true},
		{"unavailable before sending", fault.E("providerb.Create", fault.ProviderUnavailable, "refused"), false},
		{"marked false", fault.E("x", fault.ProviderUnavailable, "").With("ambiguous", false), false},
		{"plain", errors.New("boom"), false},
	}
	for _, c := range cases {
		if got := ambiguous(c.err); got != c.want {
			t.Errorf("%s: ambiguous = %v, want %v", c.name, got, c.want)
		}
	}
}

// Candidates are matched by what they are, not counted: a refused
// customer key that drops out of the list does not skip the next route.
func TestCandidateKeyIdentifiesCredential(t *testing.T) {
	a := candidate{provider: "MUSIC_PROVIDER_B", ownership: "CUSTOMER_BYOK"}
	a.customer.ID = "pcred_1"
	b := a
	b.customer.ID = "pcred_2"
	p := candidate{provider: "MUSIC_PROVIDER_B", ownership: "PLATFORM_MANAGED"}
	if a.key() == b.key() || a.key() == p.key() {
		t.Fatalf("keys collide: %v %v %v", a.key(), b.key(), p.key())
	}
	if a.account("test") != "byok:pcred_1" || p.account("test") != "platform:test:MUSIC_PROVIDER_B" {
		t.Fatalf("accounts: %q %q", a.account("test"), p.account("test"))
	}
}
