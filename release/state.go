package release

import (
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
)

// Status is a release's status (spec, Other states: releases are not
// shown there; the platform's table is Moves). It moves only through
// Transition over the Moves table.
type Status string

// The statuses, in the order a release goes through them.
const (
	// StatusDraft: created; its distribution details are the workspace's
	// plan, nothing is committed to a distributor.
	StatusDraft Status = "DRAFT"
	// StatusScheduled: the workspace committed to releasing it on its
	// release date; it may still be taken back to DRAFT.
	StatusScheduled Status = "SCHEDULED"
	// StatusSubmitted: the workspace delivered it to its distributor and
	// waits for the distributor's answer.
	StatusSubmitted Status = "SUBMITTED"
	// StatusLive: the distributor put it out.
	StatusLive Status = "LIVE"
	// StatusRejected: the distributor refused it; the workspace may take
	// it back to DRAFT to correct it.
	StatusRejected Status = "REJECTED"
	// StatusTakenDown: withdrawn from distribution after it was live.
	// Terminal: a release out again is a new release.
	StatusTakenDown Status = "TAKEN_DOWN"
)

// Statuses lists the statuses in order.
func Statuses() []Status {
	return []Status{StatusDraft, StatusScheduled, StatusSubmitted, StatusLive, StatusRejected, StatusTakenDown}
}

// Valid reports whether s is a release status.
func (s Status) Valid() bool { return slices.Contains(Statuses(), s) }

// Event is what moves a release: the status route names the status it
// asks for, so each event is named after the status it leads to.
type Event string

// EventFor returns the event asking for status to.
func EventFor(to Status) Event { return Event(to) }

// Move is one allowed transition of a release's status.
type Move = fsm.Row[Status, Event]

// Moves returns the release table as data, built on each call:
//
//	DRAFT     -> SCHEDULED   (schedule on the release date)
//	SCHEDULED -> DRAFT       (take back to change it)
//	SCHEDULED -> SUBMITTED   (delivered to the distributor)
//	SUBMITTED -> LIVE        (the distributor put it out)
//	SUBMITTED -> REJECTED    (the distributor refused it)
//	REJECTED  -> DRAFT       (take back to correct it)
//	LIVE      -> TAKEN_DOWN  (withdrawn; terminal)
//
// and no other move: a jump (DRAFT -> LIVE), a step back from LIVE or
// SUBMITTED, a move out of TAKEN_DOWN or to the same status is
// INVALID_STATE_TRANSITION.
func Moves() []Move {
	m := func(from, to Status) Move { return Move{From: from, Event: EventFor(to), To: to} }
	return []Move{
		m(StatusDraft, StatusScheduled),
		m(StatusScheduled, StatusDraft),
		m(StatusScheduled, StatusSubmitted),
		m(StatusSubmitted, StatusLive),
		m(StatusSubmitted, StatusRejected),
		m(StatusRejected, StatusDraft),
		m(StatusLive, StatusTakenDown),
	}
}

// MovePermission returns the permission the move into status to needs,
// reaching the release: moves that commit the release to, or record it
// in, external distribution (SCHEDULED, SUBMITTED, LIVE, REJECTED,
// TAKEN_DOWN) publish the work, project.publish; taking it back to DRAFT
// changes only the workspace's own plan, project.update.
func MovePermission(to Status) access.Permission {
	if to == StatusDraft {
		return access.ProjectUpdate
	}
	return access.ProjectPublish
}

// Transition returns the status e moves from to, or
// INVALID_STATE_TRANSITION (details from and event) when the table has no
// such move.
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("release.Transition", "A release", Moves()).Transition(from, e)
}
