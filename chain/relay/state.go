package relay

import (
	"slices"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
)

// State is how far the chain has taken a signed transaction. It only
// moves forward: unsent < submitted < processed < confirmed < finalized;
// failed and dropped are terminal. It moves only through Transit over the
// Transitions table.
type State string

// The network states.
const (
	// Unsent: no signature is known yet.
	Unsent State = "unsent"
	// Submitted: a signature is known; the chain has not reported it.
	Submitted State = "submitted"
	// Processed: a node's heaviest bank holds it; it may be skipped.
	Processed State = "processed"
	// Confirmed: optimistically confirmed by a supermajority.
	Confirmed State = "confirmed"
	// Finalized: rooted by a supermajority.
	Finalized State = "finalized"
	// Failed: it landed with an error, or a node refused it for good.
	Failed State = "failed"
	// Dropped: it never landed and its blockhash has expired.
	Dropped State = "dropped"
)

// States lists the network states in forward order, then the terminal
// failures.
func States() []State {
	return []State{Unsent, Submitted, Processed, Confirmed, Finalized, Failed, Dropped}
}

// rank orders the forward states; failed and dropped rank above
// everything, since nothing moves them; -1 for an unknown state.
func (s State) rank() int {
	switch s {
	case Failed, Dropped:
		return 5
	}
	return slices.Index(States()[:5], s)
}

// Terminal reports whether s is finalized, failed or dropped.
func (s State) Terminal() bool {
	return s == Finalized || s == Failed || s == Dropped
}

// AtLeast reports whether s has reached commitment c (processed,
// confirmed or finalized) without failing.
func (s State) AtLeast(c chain.Commitment) bool {
	if s == Failed || s == Dropped {
		return false
	}
	want := State(c).rank()
	return want >= Processed.rank() && want <= Finalized.rank() && s.rank() >= want
}

// Event is what moves a network state.
type Event string

// The network events.
const (
	// EventSign: a signature became known (a submit, or a payment found
	// by a reference).
	EventSign Event = "sign"
	// EventProcessed, EventConfirmed and EventFinalized: a status
	// observation at that level.
	EventProcessed Event = "observe_processed"
	EventConfirmed Event = "observe_confirmed"
	EventFinalized Event = "observe_finalized"
	// EventFailed: the chain reports the transaction's error, or a node
	// refused it for good.
	EventFailed Event = "observe_failed"
	// EventDrop: no status, and the blockhash can no longer land.
	EventDrop Event = "drop"
)

// Transition is one row of the network table.
type Transition = fsm.Row[State, Event]

// Transitions returns the network state table (a fresh copy; served as
// data by the architecture route). Every row moves forward; there is no
// row back, so a late or lagging observation finds no transition.
func Transitions() []Transition {
	return []Transition{
		{From: Unsent, Event: EventSign, To: Submitted},
		{From: Unsent, Event: EventProcessed, To: Processed},
		{From: Unsent, Event: EventConfirmed, To: Confirmed},
		{From: Unsent, Event: EventFinalized, To: Finalized},
		{From: Unsent, Event: EventFailed, To: Failed},
		{From: Submitted, Event: EventProcessed, To: Processed},
		{From: Submitted, Event: EventConfirmed, To: Confirmed},
		{From: Submitted, Event: EventFinalized, To: Finalized},
		{From: Submitted, Event: EventFailed, To: Failed},
		{From: Submitted, Event: EventDrop, To: Dropped},
		{From: Processed, Event: EventConfirmed, To: Confirmed},
		{From: Processed, Event: EventFinalized, To: Finalized},
		{From: Processed, Event: EventFailed, To: Failed},
		{From: Confirmed, Event: EventFinalized, To: Finalized},
	}
}

// Transit returns the state ev moves from to. It fails with
// INVALID_STATE_TRANSITION when the table has no such row (every
// backward move).
func Transit(from State, ev Event) (State, error) {
	if to, err := fsm.New("relay.Transit", "A network state", Transitions()).Transition(from, ev); err == nil {
		return to, nil
	}
	return from, fault.E("relay.Transit", fault.InvalidState, "the network state cannot move this way").
		With("state", string(from)).With("event", string(ev))
}

// observationEvent maps an observed state to its event.
func observationEvent(observed State) (Event, bool) {
	switch observed {
	case Processed:
		return EventProcessed, true
	case Confirmed:
		return EventConfirmed, true
	case Finalized:
		return EventFinalized, true
	case Failed:
		return EventFailed, true
	case Dropped:
		return EventDrop, true
	}
	return "", false
}

// Advance applies an observed state to current. It returns the next state
// and whether it moved; an observation at or below current (a lagging
// node, a stale job) or one the table does not allow leaves current
// unchanged and reports moved=false, never an error: observations are
// facts about some node, not commands.
func Advance(current, observed State) (next State, moved bool) {
	ev, ok := observationEvent(observed)
	if !ok {
		return current, false
	}
	to, err := Transit(current, ev)
	if err != nil {
		return current, false
	}
	return to, true
}

// StateOf maps a signature status to the state it reports: failed when
// it carries an error, else its confirmation level. A nil status (a node
// that does not know the signature) reports Submitted, which never
// advances a known signature.
func StateOf(st *chain.SignatureStatus) State {
	switch {
	case st == nil:
		return Submitted
	case st.Err != "":
		return Failed
	case st.Status == chain.Finalized:
		return Finalized
	case st.Status == chain.Confirmed:
		return Confirmed
	}
	return Processed
}
