package wallet

import (
	"fmt"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
)

// Status is a challenge's state. Expiry is not a state: a PENDING
// challenge whose expiry passed is refused by time, and stays PENDING.
type Status string

// The challenge states.
const (
	// StatusPending is a challenge that may still be verified.
	StatusPending Status = "PENDING"
	// StatusVerified is a challenge consumed by a successful verification
	// (final).
	StatusVerified Status = "VERIFIED"
	// StatusExhausted is a challenge consumed by its last allowed failed
	// attempt (final).
	StatusExhausted Status = "EXHAUSTED"
)

// Statuses lists every state.
func Statuses() []Status { return []Status{StatusPending, StatusVerified, StatusExhausted} }

// Event moves a challenge.
type Event string

// The challenge events.
const (
	// EventVerify is a verification whose signature and message checked.
	EventVerify Event = "verify"
	// EventFail is a failed attempt below the limit.
	EventFail Event = "fail"
	// EventExhaust is the failed attempt that reaches the limit.
	EventExhaust Event = "exhaust"
)

// Move is one row of the state table.
type Move = fsm.Row[Status, Event]

// Moves returns the state table of a challenge; stores compare-and-set on
// From.
func Moves() []Move {
	return []Move{
		{From: StatusPending, Event: EventVerify, To: StatusVerified},
		{From: StatusPending, Event: EventFail, To: StatusPending},
		{From: StatusPending, Event: EventExhaust, To: StatusExhausted},
	}
}

// Transition returns the state event leads to from from;
// INVALID_STATE_TRANSITION when the table has no such move.
func Transition(from Status, event Event) (Status, error) {
	if to, err := fsm.New("wallet.Transition", "A challenge", Moves()).Transition(from, event); err == nil {
		return to, nil
	}
	return "", fault.E("wallet.Transition", fault.InvalidState, fmt.Sprintf("A %s challenge cannot %s.", from, event))
}
