package generation

import (
	"errors"
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestTransitionAllowsEveryMove(t *testing.T) {
	for _, m := range Moves() {
		got, err := Transition(m.From, m.Event)
		if err != nil || got != m.To {
			t.Errorf("Transition(%s, %s) = %s, %v; want %s", m.From, m.Event, got, err, m.To)
		}
	}
}

func TestTransitionRefusesEverythingElse(t *testing.T) {
	allowed := map[[2]string]bool{}
	for _, m := range Moves() {
		k := [2]string{string(m.From), string(m.Event)}
		if allowed[k] {
			t.Errorf("duplicate move from %s on %s", m.From, m.Event)
		}
		allowed[k] = true
	}
	refused := 0
	for _, s := range Statuses() {
		for _, e := range Events() {
			if allowed[[2]string{string(s), string(e)}] {
				continue
			}
			refused++
			_, err := Transition(s, e)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.InvalidState {
				t.Errorf("Transition(%s, %s) error = %v; want %s", s, e, err, fault.InvalidState)
			}
		}
	}
	if refused == 0 {
		t.Fatal("no forbidden move checked")
	}
}

func TestTerminalStatesAreMonotonic(t *testing.T) {
	for _, m := range Moves() {
		if m.From.Terminal() && m.To != m.From {
			t.Errorf("terminal %s moves to %s on %s", m.From, m.To, m.Event)
		}
	}
	for _, s := range Statuses() {
		if !s.Terminal() {
			continue
		}
		for _, e := range []Event{EventProviderProgress, EventProviderSucceeded, EventProviderFailed, EventIngested, EventExpire} {
			if got, err := Transition(s, e); err != nil || got != s {
				t.Errorf("stale %s on %s = %s, %v; want a no-op", e, s, got, err)
			}
		}
		if _, err := Transition(s, EventDispatched); err == nil {
			t.Errorf("dispatched on terminal %s allowed", s)
		}
	}
}

func TestTransitionDecisions(t *testing.T) {
	tests := []struct {
		from  Status
		event Event
		to    Status
		err   bool
	}{
		{StatusQueued, EventDispatched, StatusDispatched, false},
		{StatusDispatched, EventProviderSucceeded, StatusProcessing, false}, // F2: complete with no text/first
		{StatusProcessing, EventIngested, StatusCompleted, false},
		{StatusProcessing, EventIngestFailed, StatusFailed, false},
		{StatusProcessing, EventCancel, StatusCancelled, false},
		{StatusDispatched, EventExpire, StatusExpired, false},
		{StatusCancelled, EventCancel, StatusCancelled, false}, // idempotent cancel
		{StatusFailed, EventCancel, StatusFailed, false},
		{StatusCompleted, EventCancel, "", true}, // nothing left to cancel
		{StatusQueued, EventProviderProgress, "", true},
		{StatusQueued, EventIngested, "", true},
		{StatusDispatched, EventIngested, "", true},
	}
	for _, tt := range tests {
		got, err := Transition(tt.from, tt.event)
		if (err != nil) != tt.err || got != tt.to {
			t.Errorf("Transition(%s, %s) = %q, %v; want %q, error %v", tt.from, tt.event, got, err, tt.to, tt.err)
		}
	}
}

func TestMovesIsACopy(t *testing.T) {
	m := Moves()
	m[0].To = StatusCompleted
	if Moves()[0].To == StatusCompleted {
		t.Fatal("Moves returned shared state")
	}
}

func TestStagesAreOrdered(t *testing.T) {
	st := Stages()
	for i := 1; i < len(st)-1; i++ {
		if st[i].rank() != st[i-1].rank()+1 {
			t.Errorf("stage %s out of order", st[i])
		}
	}
	if st[len(st)-1] != StageFailed || StageFailed.rank() >= 0 {
		t.Error("failed must be last and outside the order")
	}
}
