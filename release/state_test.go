package release_test

import (
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/release"
)

// TestTableIsEnforced: the table is a function of (from, event), and
// Transition answers exactly its rows: every other pair of statuses is
// INVALID_STATE_TRANSITION.
func TestTableIsEnforced(t *testing.T) {
	tab := fsm.New("release.Transition", "A release", release.Moves())
	if err := tab.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tab.Enforced(release.Transition); err != nil {
		t.Fatal(err)
	}
	allowed := map[[2]release.Status]bool{}
	for _, m := range release.Moves() {
		if !m.From.Valid() || !m.To.Valid() || m.Event != release.EventFor(m.To) {
			t.Errorf("row %+v: unknown status or event not named after its target", m)
		}
		allowed[[2]release.Status{m.From, m.To}] = true
	}
	for _, from := range release.Statuses() {
		for _, to := range release.Statuses() {
			got, err := release.Transition(from, release.EventFor(to))
			if allowed[[2]release.Status{from, to}] {
				if err != nil || got != to {
					t.Errorf("%s -> %s = %s, %v; want allowed", from, to, got, err)
				}
				continue
			}
			if !fault.Is(err, fault.InvalidState) {
				t.Errorf("%s -> %s: %v, want INVALID_STATE_TRANSITION", from, to, err)
			}
		}
	}
	if _, err := release.Transition(release.StatusDraft, release.EventFor(release.StatusLive)); !fault.Is(err, fault.InvalidState) {
		t.Errorf("DRAFT -> LIVE: %v, want INVALID_STATE_TRANSITION", err)
	}
}

// TestMovePermissions: only taking a release back to DRAFT is
// project.update; every move into distribution is project.publish.
func TestMovePermissions(t *testing.T) {
	for _, m := range release.Moves() {
		want := access.ProjectPublish
		if m.To == release.StatusDraft {
			want = access.ProjectUpdate
		}
		if got := release.MovePermission(m.To); got != want {
			t.Errorf("%s -> %s needs %s, want %s", m.From, m.To, got, want)
		}
	}
}

// TestTerritoriesAreSortedCodes: the territory list is sorted (lookups
// search it), holds two-capital codes only, and not WW.
func TestTerritoriesAreSortedCodes(t *testing.T) {
	ts := release.Territories()
	if len(ts) != 249 {
		t.Errorf("%d territories, want the 249 ISO 3166-1 alpha-2 codes", len(ts))
	}
	for i, c := range ts {
		if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' || c == release.Worldwide {
			t.Errorf("territory %q", c)
		}
		if i > 0 && ts[i-1] >= c {
			t.Errorf("territories out of order at %q", c)
		}
	}
}
