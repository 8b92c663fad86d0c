package project

import (
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
)

// SubmissionStatus is a submission's status (spec, States and
// transitions, Submission). It moves only through SubmissionTransition
// over the SubmissionMoves table.
type SubmissionStatus string

// The submission statuses, in order.
const (
	// SubmissionDraft: the work as its submitter composes it. A
	// submission leaves it in the unit of work that creates it, so no
	// stored submission is in it; the table keeps the spec's first step.
	SubmissionDraft SubmissionStatus = "DRAFT"
	// SubmissionSubmitted: submitted to the project, waiting for review.
	SubmissionSubmitted SubmissionStatus = "SUBMITTED"
	// SubmissionUnderReview: a reviewer of the project started reviewing
	// it.
	SubmissionUnderReview SubmissionStatus = "UNDER_REVIEW"
	// SubmissionAccepted: the reviewer accepted it; terminal.
	SubmissionAccepted SubmissionStatus = "ACCEPTED"
	// SubmissionRejected: the reviewer rejected it; terminal.
	SubmissionRejected SubmissionStatus = "REJECTED"
	// SubmissionRevisionRequested: the reviewer asked for a revision;
	// terminal for this record, whose submitter may resubmit once (a new
	// submission with RevisionOf naming this one).
	SubmissionRevisionRequested SubmissionStatus = "REVISION_REQUESTED"
)

// SubmissionStatuses lists the submission statuses in order.
func SubmissionStatuses() []SubmissionStatus {
	return []SubmissionStatus{SubmissionDraft, SubmissionSubmitted, SubmissionUnderReview, SubmissionAccepted,
		SubmissionRejected, SubmissionRevisionRequested}
}

// Valid reports whether s is a known submission status.
func (s SubmissionStatus) Valid() bool {
	for _, x := range SubmissionStatuses() {
		if x == s {
			return true
		}
	}
	return false
}

// SubmissionEvent is what moves a submission: the status it is asked to
// take. The review route's body names the target status, as the project
// status route's does, so each event is named after the status it leads
// to.
type SubmissionEvent string

// SubmissionEventFor returns the event asking for status to.
func SubmissionEventFor(to SubmissionStatus) SubmissionEvent { return SubmissionEvent(to) }

// SubmissionMove is one allowed transition of a submission's status.
type SubmissionMove = fsm.Row[SubmissionStatus, SubmissionEvent]

// SubmissionMoves returns the submission status table as data, built on
// each call: DRAFT -> SUBMITTED (creation), SUBMITTED -> UNDER_REVIEW
// (review start), UNDER_REVIEW -> ACCEPTED, REJECTED or
// REVISION_REQUESTED (the reviewer's decision), and nothing else.
func SubmissionMoves() []SubmissionMove {
	row := func(from, to SubmissionStatus) SubmissionMove {
		return SubmissionMove{From: from, Event: SubmissionEventFor(to), To: to}
	}
	return []SubmissionMove{
		row(SubmissionDraft, SubmissionSubmitted),
		row(SubmissionSubmitted, SubmissionUnderReview),
		row(SubmissionUnderReview, SubmissionAccepted),
		row(SubmissionUnderReview, SubmissionRejected),
		row(SubmissionUnderReview, SubmissionRevisionRequested),
	}
}

// SubmissionMovePermission returns the permission the move to status to
// needs, on the submission's project: project.update (on a resource of
// the submitter's own) to submit, project.publish for every review move.
func SubmissionMovePermission(to SubmissionStatus) access.Permission {
	if to == SubmissionSubmitted {
		return access.ProjectUpdate
	}
	return access.ProjectPublish
}

// submissionTable is the table SubmissionTransition enforces.
func submissionTable() fsm.Table[SubmissionStatus, SubmissionEvent] {
	return fsm.New("project.SubmissionTransition", "A submission", SubmissionMoves())
}

// SubmissionTransition returns the status e moves from to, or
// INVALID_STATE_TRANSITION (details from and event) when the table has no
// such move.
func SubmissionTransition(from SubmissionStatus, e SubmissionEvent) (SubmissionStatus, error) {
	return submissionTable().Transition(from, e)
}
