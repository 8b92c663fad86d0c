package swap

import (
	"slices"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
)

// TestTransitionTableIsEnforced: the table served as data is a function of
// (state, event), and Transition answers exactly what it says.
func TestTransitionTableIsEnforced(t *testing.T) {
	tb := fsm.New("swap", "a swap operation", Moves())
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Enforced(Transition); err != nil {
		t.Fatal(err)
	}
}

// TestTableNamesOnlyListedStatesAndEvents: every state and event of the
// table is enumerated, and every enumerated one is used.
func TestTableNamesOnlyListedStatesAndEvents(t *testing.T) {
	usedS := map[State]bool{}
	usedE := map[Event]bool{}
	for _, m := range Moves() {
		usedS[m.From], usedS[m.To], usedE[m.Event] = true, true, true
		if !slices.Contains(States(), m.From) || !slices.Contains(States(), m.To) {
			t.Errorf("row %+v names an unlisted state", m)
		}
		if !slices.Contains(Events(), m.Event) {
			t.Errorf("row %+v names an unlisted event", m)
		}
	}
	for _, s := range States() {
		if !usedS[s] {
			t.Errorf("state %s is in no row", s)
		}
	}
	for _, e := range Events() {
		if !usedE[e] {
			t.Errorf("event %s is in no row", e)
		}
	}
}

// TestForwardPath walks the spec's forward order.
func TestForwardPath(t *testing.T) {
	path := []struct {
		e  Event
		to State
	}{
		{EventValidate, StateValidated}, {EventQuote, StateQuoted}, {EventCreateIntent, StateIntentCreated},
		{EventRequestSignature, StateAwaitingSignature}, {EventSign, StateSigned}, {EventSubmit, StateSubmitted},
		{EventLand, StateConfirming}, {EventConfirm, StateConfirmed}, {EventVerify, StateVerifying},
		{EventVerified, StateVerified}, {EventSettle, StateSettling}, {EventSettled, StateSettled},
		{EventReconcile, StateReconciling}, {EventConclude, StateReconciled},
	}
	s := StateCreated
	for _, p := range path {
		to, err := Transition(s, p.e)
		if err != nil || to != p.to {
			t.Fatalf("%s on %s = %s, %v; want %s", s, p.e, to, err, p.to)
		}
		s = to
	}
	var forward []State
	for _, s := range States() {
		if !s.Terminal() || s == StateReconciled {
			forward = append(forward, s)
		}
	}
	if len(forward) != len(path)+1 {
		t.Errorf("the walk visits %d states, the forward order has %d", len(path)+1, len(forward))
	}
}

// TestDecidedMoves pins each exceptional move the spec leaves open, and the
// refusals that protect value.
func TestDecidedMoves(t *testing.T) {
	tests := []struct {
		from State
		e    Event
		to   State // "" means refused
	}{
		// Expiry before anything is sent.
		{StateQuoted, EventExpire, StateExpired},
		{StateIntentCreated, EventExpire, StateExpired},
		{StateAwaitingSignature, EventExpire, StateExpired},
		{StateSigned, EventExpire, StateExpired},
		{StateSubmitted, EventExpire, ""},
		{StateExpired, EventExpire, StateExpired},
		// Failure on chain only once submitted, and before verification ends.
		{StateSubmitted, EventFail, StateFailed},
		{StateConfirming, EventFail, StateFailed},
		{StateVerifying, EventFail, StateFailed},
		{StateSigned, EventFail, ""},
		{StateVerified, EventFail, ""},
		{StateSettled, EventFail, ""},
		// An uncertain or repeated send stays SUBMITTED.
		{StateSubmitted, EventSubmit, StateSubmitted},
		// A second signature on any bound intent goes to review.
		{StateSigned, EventConflictingSignature, StateRequiresReview},
		{StateSubmitted, EventConflictingSignature, StateRequiresReview},
		{StateSettled, EventConflictingSignature, StateRequiresReview},
		{StateReconciled, EventConflictingSignature, StateRequiresReview},
		{StateRequiresReview, EventConflictingSignature, StateRequiresReview},
		{StateAwaitingSignature, EventConflictingSignature, ""},
		// No cancel once a signature may be bound.
		{StateAwaitingSignature, EventCancel, StateCancelled},
		{StateSigned, EventCancel, ""},
		{StateSubmitted, EventCancel, ""},
		{StateCancelled, EventCancel, StateCancelled},
		// Refusals and dependency failures.
		{StateValidated, EventRefuse, StateRejected},
		{StateQuoted, EventRefuse, StateRejected},
		{StateAwaitingSignature, EventDecline, StateRejected},
		{StateValidated, EventUnavailable, StateFailed},
		{StateCreated, EventInvalidate, StateInvalid},
		{StateSigned, EventInvalidate, StateInvalid},
		{StateSubmitted, EventInvalidate, ""},
		// A settlement that cannot be written never fails the operation.
		{StateSettling, EventFail, ""},
		{StateSettling, EventReview, StateRequiresReview},
		{StateReconciling, EventReview, StateRequiresReview},
		// Late landings reopen closed operations for review only.
		{StateExpired, EventLateLanding, StateRequiresReview},
		{StateFailed, EventLateLanding, StateRequiresReview},
		{StateCancelled, EventLateLanding, StateRequiresReview},
		{StateReconciled, EventLateLanding, ""},
	}
	for _, tt := range tests {
		to, err := Transition(tt.from, tt.e)
		switch {
		case tt.to == "" && !fault.Is(err, fault.InvalidState):
			t.Errorf("%s on %s = %s, %v; want INVALID_STATE_TRANSITION", tt.from, tt.e, to, err)
		case tt.to != "" && (err != nil || to != tt.to):
			t.Errorf("%s on %s = %s, %v; want %s", tt.from, tt.e, to, err, tt.to)
		}
	}
}

// TestTerminalStatesOnlyExitToReview: a terminal state moves nowhere but
// to itself or to REQUIRES_REVIEW, and REQUIRES_REVIEW only to itself.
func TestTerminalStatesOnlyExitToReview(t *testing.T) {
	for _, m := range Moves() {
		if !m.From.Terminal() || m.To == m.From {
			continue
		}
		if m.To != StateRequiresReview || m.From == StateRequiresReview {
			t.Errorf("terminal %s leaves to %s on %s", m.From, m.To, m.Event)
		}
	}
}

// TestEveryStateReachable: each state is reachable from CREATED.
func TestEveryStateReachable(t *testing.T) {
	seen := map[State]bool{StateCreated: true}
	for changed := true; changed; {
		changed = false
		for _, m := range Moves() {
			if seen[m.From] && !seen[m.To] {
				seen[m.To], changed = true, true
			}
		}
	}
	for _, s := range States() {
		if !seen[s] {
			t.Errorf("state %s is unreachable", s)
		}
	}
}

// TestRefusalNamesStateAndEvent: a refused move says which pair.
func TestRefusalNamesStateAndEvent(t *testing.T) {
	_, err := Transition(StateSettled, EventCancel)
	var fe *fault.Error
	if !fault.Is(err, fault.InvalidState) {
		t.Fatalf("err = %v", err)
	}
	fe = err.(*fault.Error)
	if fe.Details["from"] != "SETTLED" || fe.Details["event"] != "cancel" {
		t.Errorf("details = %v", fe.Details)
	}
}
