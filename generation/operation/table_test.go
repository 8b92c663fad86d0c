package operation

import (
	"testing"

	"github.com/creatormusic/platform/fsm"
)

// TestTransitionTableIsEnforced: the table served as data is a function of
// (state, event), and AttemptTransition answers exactly what it says, refusing every
// pair it lacks.
func TestTransitionTableIsEnforced(t *testing.T) {
	tb := fsm.New("operation", "a record", AttemptMoves())
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Enforced(AttemptTransition); err != nil {
		t.Fatal(err)
	}
}
