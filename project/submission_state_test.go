package project_test

import (
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/project"
)

// TestSubmissionMovesAreTheSpecsTable pins the table: the spec's five
// moves are allowed, every other pair of statuses (a jump, a step back,
// the same status, a move out of a decision) is INVALID_STATE_TRANSITION,
// and SubmissionTransition is the table.
func TestSubmissionMovesAreTheSpecsTable(t *testing.T) {
	tb := fsm.New("project.SubmissionTransition", "A submission", project.SubmissionMoves())
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Enforced(project.SubmissionTransition); err != nil {
		t.Fatal(err)
	}
	allowed := map[[2]project.SubmissionStatus]bool{
		{project.SubmissionDraft, project.SubmissionSubmitted}:               true,
		{project.SubmissionSubmitted, project.SubmissionUnderReview}:         true,
		{project.SubmissionUnderReview, project.SubmissionAccepted}:          true,
		{project.SubmissionUnderReview, project.SubmissionRejected}:          true,
		{project.SubmissionUnderReview, project.SubmissionRevisionRequested}: true,
	}
	if len(project.SubmissionMoves()) != len(allowed) {
		t.Fatalf("%d moves, want %d", len(project.SubmissionMoves()), len(allowed))
	}
	for _, from := range project.SubmissionStatuses() {
		for _, to := range project.SubmissionStatuses() {
			got, err := project.SubmissionTransition(from, project.SubmissionEventFor(to))
			if allowed[[2]project.SubmissionStatus{from, to}] {
				if err != nil || got != to {
					t.Errorf("%s -> %s = %s, %v; want allowed", from, to, got, err)
				}
				continue
			}
			if !fault.Is(err, fault.InvalidState) {
				t.Errorf("%s -> %s: err %v, want INVALID_STATE_TRANSITION", from, to, err)
			}
			if _, _, d := fault.Public(err); d["from"] != string(from) || d["event"] != string(to) {
				t.Errorf("%s -> %s: details %v, want from and event", from, to, d)
			}
		}
	}
	if _, err := project.SubmissionTransition(project.SubmissionSubmitted, "LAUNCHED"); !fault.Is(err, fault.InvalidState) {
		t.Errorf("an unknown event: %v, want INVALID_STATE_TRANSITION", err)
	}
}

// TestSubmissionMovePermissions: submitting needs project.update, every
// review move project.publish.
func TestSubmissionMovePermissions(t *testing.T) {
	for _, m := range project.SubmissionMoves() {
		want := access.ProjectPublish
		if m.To == project.SubmissionSubmitted {
			want = access.ProjectUpdate
		}
		if got := project.SubmissionMovePermission(m.To); got != want {
			t.Errorf("%s -> %s needs %s, want %s", m.From, m.To, got, want)
		}
	}
}
