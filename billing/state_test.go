package billing_test

import (
	"slices"
	"testing"

	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
)

// events lists every event of the package.
func events() []billing.Event {
	return []billing.Event{billing.EventPaymentConfirmed, billing.EventActivated, billing.EventExpired,
		billing.EventCancelRequested, billing.EventResumed, billing.EventRenewed, billing.EventPaymentFailed,
		billing.EventPeriodEnded, billing.EventProviderCanceled}
}

// statesOf lists the states of machine m.
func statesOf(m billing.Machine) []billing.State {
	if m == billing.MachineCheckout {
		return billing.CheckoutStates()
	}
	return billing.SubscriptionStates()
}

// TestTransitionAllowed runs every rule of the table through Transition.
func TestTransitionAllowed(t *testing.T) {
	for _, r := range billing.Transitions() {
		got, err := billing.Transition(r.Machine, r.From, r.Event)
		if err != nil || got != r.To {
			t.Errorf("Transition(%s, %s, %s) = %q, %v; want %q", r.Machine, r.From, r.Event, got, err, r.To)
		}
	}
}

// TestTransitionForbidden tries every (machine, state, event) the table
// does not list, and states of the other machine: each is
// INVALID_STATE_TRANSITION with the from state and event in the details.
func TestTransitionForbidden(t *testing.T) {
	allowed := map[billing.Rule]bool{}
	for _, r := range billing.Transitions() {
		allowed[billing.Rule{Machine: r.Machine, From: r.From, Event: r.Event}] = true
	}
	all := append(billing.CheckoutStates(), billing.SubscriptionStates()...)
	forbidden := 0
	for _, m := range []billing.Machine{billing.MachineCheckout, billing.MachineSubscription} {
		for _, from := range all {
			for _, e := range events() {
				if allowed[billing.Rule{Machine: m, From: from, Event: e}] {
					continue
				}
				forbidden++
				to, err := billing.Transition(m, from, e)
				if !fault.Is(err, fault.InvalidState) || to != "" {
					t.Errorf("Transition(%s, %s, %s) = %q, %v; want INVALID_STATE_TRANSITION", m, from, e, to, err)
					continue
				}
				_, _, d := fault.Public(err)
				if d["from"] != string(from) || d["event"] != string(e) {
					t.Errorf("Transition(%s, %s, %s) details = %v", m, from, e, d)
				}
			}
		}
	}
	if forbidden == 0 {
		t.Fatal("no forbidden move was tried")
	}
	if _, err := billing.Transition("invoice", billing.CheckoutOpen, billing.EventPaymentConfirmed); !fault.Is(err, fault.InvalidState) {
		t.Errorf("unknown machine: %v", err)
	}
}

// TestTransitionTableShape checks the table itself: each rule names states
// of its own machine, no (machine, from, event) appears twice, final states
// have no way out, and every state that is not final has one.
func TestTransitionTableShape(t *testing.T) {
	seen := map[billing.Rule]bool{}
	out := map[billing.State]int{}
	for _, r := range billing.Transitions() {
		states := statesOf(r.Machine)
		if !slices.Contains(states, r.From) || !slices.Contains(states, r.To) {
			t.Errorf("rule %+v names a state outside machine %s", r, r.Machine)
		}
		k := billing.Rule{Machine: r.Machine, From: r.From, Event: r.Event}
		if seen[k] {
			t.Errorf("rule %+v is ambiguous: (machine, from, event) appears twice", r)
		}
		seen[k] = true
		out[r.From]++
	}
	for _, m := range []billing.Machine{billing.MachineCheckout, billing.MachineSubscription} {
		for _, s := range statesOf(m) {
			switch {
			case s.Final() && out[s] > 0:
				t.Errorf("final state %s has %d rules leaving it", s, out[s])
			case !s.Final() && out[s] == 0:
				t.Errorf("state %s is not final but nothing leaves it", s)
			}
		}
	}
	// Checkout reaches activated only through paid.
	if _, err := billing.Transition(billing.MachineCheckout, billing.CheckoutOpen, billing.EventActivated); !fault.Is(err, fault.InvalidState) {
		t.Errorf("open -> activated without payment: %v", err)
	}
}

// TestTransitionsIsACopy changes the returned table and reads it again.
func TestTransitionsIsACopy(t *testing.T) {
	rules := billing.Transitions()
	n := len(rules)
	rules[0].To = billing.CheckoutExpired
	_ = append(rules, billing.Rule{Machine: billing.MachineCheckout, From: billing.CheckoutExpired, Event: billing.EventActivated, To: billing.CheckoutActivated})
	again := billing.Transitions()
	if len(again) != n || again[0].To != billing.CheckoutPaid {
		t.Fatalf("the table changed: %+v", again[0])
	}
	if _, err := billing.Transition(billing.MachineCheckout, billing.CheckoutExpired, billing.EventActivated); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("a caller's append reached the table: %v", err)
	}
	if got, _ := billing.Transition(billing.MachineCheckout, billing.CheckoutOpen, billing.EventPaymentConfirmed); got != billing.CheckoutPaid {
		t.Fatalf("a caller's edit reached the table: open -> %s", got)
	}
}
