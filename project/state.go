package project

import (
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
)

// Status is a project's status (spec, States and transitions, Project).
// It moves only through Transition over the Moves table.
type Status string

// The statuses, in order.
const (
	// StatusDraft: created, seen only as its visibility allows, not yet
	// open to the community.
	StatusDraft Status = "DRAFT"
	// StatusOpen: published; the community may take part.
	StatusOpen Status = "OPEN"
	// StatusInProduction: the work is being produced.
	StatusInProduction Status = "IN_PRODUCTION"
	// StatusReview: the work is under the lead's review.
	StatusReview Status = "REVIEW"
	// StatusCompleted: the work is done.
	StatusCompleted Status = "COMPLETED"
	// StatusArchived: kept for the record; terminal.
	StatusArchived Status = "ARCHIVED"
)

// Statuses lists the statuses in order.
func Statuses() []Status {
	return []Status{StatusDraft, StatusOpen, StatusInProduction, StatusReview, StatusCompleted, StatusArchived}
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, x := range Statuses() {
		if x == s {
			return true
		}
	}
	return false
}

// Event is what moves a project: the status it is asked to take. The
// status route's body names the target status, so each event is named
// after the status it leads to.
type Event string

// EventFor returns the event asking for status to.
func EventFor(to Status) Event { return Event(to) }

// Move is one allowed transition of a project's status.
type Move = fsm.Row[Status, Event]

// Moves returns the project status table as data, built on each call:
// each status moves to the next one and nowhere else.
func Moves() []Move {
	s := Statuses()
	out := make([]Move, 0, len(s)-1)
	for i := 0; i+1 < len(s); i++ {
		out = append(out, Move{From: s[i], Event: EventFor(s[i+1]), To: s[i+1]})
	}
	return out
}

// MovePermission returns the permission the move to status to needs:
// project.publish to open a project, project.update for every other move.
func MovePermission(to Status) access.Permission {
	if to == StatusOpen {
		return access.ProjectPublish
	}
	return access.ProjectUpdate
}

// Transition returns the status e moves from to, or
// INVALID_STATE_TRANSITION (details from and event) when the table has no
// such move.
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("project.Transition", "A project", Moves()).Transition(from, e)
}
