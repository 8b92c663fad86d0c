package wallet

import (
	"testing"

	"github.com/creatormusic/platform/fsm"
)

// TestTransitionTableIsEnforced: the challenge table is a function of
// (state, event), and Transition answers exactly what it says, refusing
// every pair it lacks.
func TestTransitionTableIsEnforced(t *testing.T) {
	tb := fsm.New("wallet", "a record", Moves())
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Enforced(Transition); err != nil {
		t.Fatal(err)
	}
}
