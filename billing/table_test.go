package billing_test

import (
	"testing"

	"github.com/creatormusic/platform/billing"
)

// TestTransitionTablesAreEnforced: each machine's rows form a function of
// (state, event), and Transition answers exactly what they say, refusing
// every pair they lack.
func TestTransitionTablesAreEnforced(t *testing.T) {
	for _, m := range []billing.Machine{billing.MachineCheckout, billing.MachineSubscription} {
		tb := billing.Table(m)
		if len(tb.Rows()) == 0 {
			t.Fatalf("%s: no rows", m)
		}
		if err := tb.Check(); err != nil {
			t.Fatal(err)
		}
		if err := tb.Enforced(func(s billing.State, e billing.Event) (billing.State, error) { return billing.Transition(m, s, e) }); err != nil {
			t.Fatal(err)
		}
	}
}
