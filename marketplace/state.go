package marketplace

import "github.com/creatormusic/platform/fsm"

// State is a license offer's state. It moves only through Transition
// over the Moves table.
type State string

// The states.
const (
	// StateActive: the offer may be listed and bought.
	StateActive State = "active"
	// StateWithdrawn: the offer is no longer made; terminal. Licenses
	// already issued under it keep their terms.
	StateWithdrawn State = "withdrawn"
)

// States lists the states.
func States() []State { return []State{StateActive, StateWithdrawn} }

// Event is what moves a license offer.
type Event string

// The events.
const (
	// EventWithdraw: the seller withdraws the offer.
	EventWithdraw Event = "withdraw"
)

// Move is one allowed transition of an offer's state.
type Move = fsm.Row[State, Event]

// Moves returns the license offer table as data, built on each call: an
// active offer is withdrawn, and nothing else moves. An offer is never
// edited; a change of terms is a new offer.
func Moves() []Move { return []Move{{From: StateActive, Event: EventWithdraw, To: StateWithdrawn}} }

// Transition returns the state e moves from to, or
// INVALID_STATE_TRANSITION (details from and event) when the table has no
// such move.
func Transition(from State, e Event) (State, error) {
	return fsm.New("marketplace.Transition", "A license offer", Moves()).Transition(from, e)
}
