package fsm_test

import (
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
)

type (
	state string
	event string
)

func table(rows ...fsm.Row[state, event]) fsm.Table[state, event] {
	return fsm.New("door.Transition", "A door", rows)
}

func TestTransition(t *testing.T) {
	tb := table(
		fsm.Row[state, event]{"closed", "open", "opened"},
		fsm.Row[state, event]{"opened", "close", "closed"},
		fsm.Row[state, event]{"opened", "open", "opened"},
	)
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	for _, r := range tb.Rows() {
		if got, err := tb.Transition(r.From, r.Event); err != nil || got != r.To {
			t.Errorf("Transition(%s, %s) = %s, %v; want %s", r.From, r.Event, got, err, r.To)
		}
	}
	_, err := tb.Transition("closed", "close")
	code, msg, details := fault.Public(err)
	if code != fault.InvalidState || msg != "A door cannot go from closed on close." ||
		details["from"] != "closed" || details["event"] != "close" {
		t.Fatalf("missing row: %v", err)
	}
}

func TestRowsAreACopy(t *testing.T) {
	tb := table(fsm.Row[state, event]{"closed", "open", "opened"})
	rows := tb.Rows()
	rows[0].To = "broken"
	if got, _ := tb.Transition("closed", "open"); got != "opened" {
		t.Fatalf("changing a copy changed the table: %s", got)
	}
}

func TestCheck(t *testing.T) {
	for name, tb := range map[string]fsm.Table[state, event]{
		"two rows for one pair": table(fsm.Row[state, event]{"a", "e", "b"}, fsm.Row[state, event]{"a", "e", "c"}),
		"empty to":              table(fsm.Row[state, event]{"a", "e", ""}),
		"empty event":           table(fsm.Row[state, event]{"a", "", "b"}),
	} {
		if err := tb.Check(); err == nil {
			t.Errorf("%s: Check passed", name)
		}
	}
}

func TestEnforced(t *testing.T) {
	tb := table(
		fsm.Row[state, event]{"closed", "open", "opened"},
		fsm.Row[state, event]{"opened", "close", "closed"},
	)
	if err := tb.Enforced(tb.Transition); err != nil {
		t.Fatalf("the table's own transition: %v", err)
	}
	lenient := func(s state, e event) (state, error) {
		if s == "closed" && e == "close" {
			return "closed", nil // a move the table refuses
		}
		return tb.Transition(s, e)
	}
	if err := tb.Enforced(lenient); err == nil {
		t.Fatal("a domain that allows a move the table lacks passed")
	}
	wrong := func(s state, e event) (state, error) {
		if s == "closed" && e == "open" {
			return "closed", nil
		}
		return tb.Transition(s, e)
	}
	if err := tb.Enforced(wrong); err == nil {
		t.Fatal("a domain that moves elsewhere than the table passed")
	}
}
