package project_test

import (
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/project"
)

// TestMovesAreTheSpecsChain pins the table: each status moves to the next
// and nowhere else, and every other pair is INVALID_STATE_TRANSITION.
func TestMovesAreTheSpecsChain(t *testing.T) {
	if err := fsm.New("project.Transition", "A project", project.Moves()).Check(); err != nil {
		t.Fatal(err)
	}
	s := project.Statuses()
	for i, from := range s {
		for j, to := range s {
			got, err := project.Transition(from, project.EventFor(to))
			if j == i+1 {
				if err != nil || got != to {
					t.Errorf("%s -> %s = %s, %v; want allowed", from, to, got, err)
				}
				continue
			}
			if !fault.Is(err, fault.InvalidState) {
				t.Errorf("%s -> %s: err %v, want INVALID_STATE_TRANSITION", from, to, err)
			}
		}
	}
}

// TestOpeningNeedsPublish pins the permission of each move.
func TestOpeningNeedsPublish(t *testing.T) {
	for _, m := range project.Moves() {
		want := access.ProjectUpdate
		if m.To == project.StatusOpen {
			want = access.ProjectPublish
		}
		if got := project.MovePermission(m.To); got != want {
			t.Errorf("%s -> %s needs %s, want %s", m.From, m.To, got, want)
		}
	}
}
