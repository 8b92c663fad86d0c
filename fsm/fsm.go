// Package fsm is the one shape of the platform's state machines: a table
// of {from, event, to} rows that a domain both enforces (Table.Transition
// is the only way its records' states move) and serves as data (Table.Rows,
// which the architecture route will publish), so what a client reads is
// what the code does.
//
// A table is a value built from its rows on each use, so no caller can
// change another's copy and no table lives in a package variable. A row
// whose To equals its From is a self-loop: the event is accepted and
// changes nothing (a late callback on a finished operation, say); a pair
// of state and event with no row is INVALID_STATE_TRANSITION.
package fsm

import (
	"fmt"
	"slices"

	"github.com/creatormusic/platform/fault"
)

// Row is one allowed transition: on Event, a record in From moves to To.
type Row[S, E ~string] struct {
	// From is the state the record is in.
	From S `json:"from"`
	// Event is what happens to it.
	Event E `json:"event"`
	// To is the state it moves to; equal to From for a no-op.
	To S `json:"to"`
}

// Table is a state machine: its rows, and how its refusals are named.
type Table[S, E ~string] struct {
	op      string
	subject string
	rows    []Row[S, E]
}

// New returns the table of rows. op names the refusing operation in
// errors ("sound.Transition") and subject the record in their message ("A
// sound operation").
func New[S, E ~string](op, subject string, rows []Row[S, E]) Table[S, E] {
	return Table[S, E]{op: op, subject: subject, rows: rows}
}

// Rows returns a copy of the table's rows, in their order.
func (t Table[S, E]) Rows() []Row[S, E] { return slices.Clone(t.rows) }

// Transition returns the state e moves from to. A result equal to from is
// a no-op the caller must not act on. INVALID_STATE_TRANSITION, with
// details from and event, when the table has no row for the pair.
func (t Table[S, E]) Transition(from S, e E) (S, error) {
	i := slices.IndexFunc(t.rows, func(r Row[S, E]) bool { return r.From == from && r.Event == e })
	if i < 0 {
		var zero S
		return zero, fault.E(t.op, fault.InvalidState, fmt.Sprintf("%s cannot go from %s on %s.", t.subject, from, e)).
			With("from", string(from)).With("event", string(e))
	}
	return t.rows[i].To, nil
}

// Check reports a table that is not a function of (from, event): a pair
// with two rows, or a row with an empty state or event. Tests of each
// domain call it on its tables.
func (t Table[S, E]) Check() error {
	seen := make(map[[2]string]bool, len(t.rows))
	for i, r := range t.rows {
		if r.From == "" || r.Event == "" || r.To == "" {
			return fmt.Errorf("fsm: %s: row %d %+v has an empty field", t.op, i, r)
		}
		k := [2]string{string(r.From), string(r.Event)}
		if seen[k] {
			return fmt.Errorf("fsm: %s: %s on %s has two rows", t.op, r.From, r.Event)
		}
		seen[k] = true
	}
	return nil
}

// Enforced reports where transition, the function a domain moves its
// records with, disagrees with the table: for every state and event the
// rows name, transition must return the row's To, or
// INVALID_STATE_TRANSITION where the table has no row. Tests of each domain
// call it, so the table a client reads is the one the code enforces.
func (t Table[S, E]) Enforced(transition func(S, E) (S, error)) error {
	var states []S
	var events []E
	for _, r := range t.rows {
		for _, s := range []S{r.From, r.To} {
			if !slices.Contains(states, s) {
				states = append(states, s)
			}
		}
		if !slices.Contains(events, r.Event) {
			events = append(events, r.Event)
		}
	}
	for _, s := range states {
		for _, e := range events {
			want, werr := t.Transition(s, e)
			got, err := transition(s, e)
			switch {
			case werr != nil && !fault.Is(err, fault.InvalidState):
				return fmt.Errorf("fsm: %s: %s on %s has no row, but the domain answers %s, %v", t.op, s, e, got, err)
			case werr == nil && (err != nil || got != want):
				return fmt.Errorf("fsm: %s: %s on %s moves to %s, but the domain answers %s, %v", t.op, s, e, want, got, err)
			}
		}
	}
	return nil
}
