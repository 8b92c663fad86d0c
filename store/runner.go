package store

import (
	"context"
	"fmt"
	"reflect"
)

// Runner returns db's unit of work as a domain declares it: its RunFunc
// over its own Store port S. fn runs in one transaction (InTx) and receives
// the transaction's *Tx as S, so a domain port is never downcast to *Tx.
//
// Whether *Tx implements S is checked once, when the runner is made: it
// panics if it does not, a wiring mistake found when the platform is built
// rather than in the first unit of work. Pass the runner where a domain's
// Config takes its RunFunc:
//
//	sound.Config{Run: store.Runner[sound.Store](db), ...}
func Runner[S any](db *DB) func(ctx context.Context, fn func(st S) error) error {
	as := binding[S]()
	return func(ctx context.Context, fn func(st S) error) error {
		return db.InTx(ctx, func(tx *Tx) error { return fn(as(tx)) })
	}
}

// PairRunner is Runner for a path that takes one unit of work as two ports,
// A and B, because together they are wider than one port may be (billing's
// settlement: its own port and plan.Store): fn receives the same *Tx as
// both. It checks, as Runner does, that *Tx implements A and B when it is
// made, and panics if not.
func PairRunner[A, B any](db *DB) func(ctx context.Context, fn func(a A, b B) error) error {
	asA, asB := binding[A](), binding[B]()
	return func(ctx context.Context, fn func(a A, b B) error) error {
		return db.InTx(ctx, func(tx *Tx) error { return fn(asA(tx), asB(tx)) })
	}
}

// Reader returns db's read pool as a domain declares it: a handle outside
// any transaction (Read), as the domain's Store port S. It checks, as
// Runner does, that *Tx implements S when it is made, and panics if not.
func Reader[S any](db *DB) func() S {
	as := binding[S]()
	return func() S { return as(db.Read()) }
}

// binding returns the conversion of a *Tx to S, after checking once that
// *Tx implements S.
func binding[S any]() func(tx *Tx) S {
	if _, ok := any((*Tx)(nil)).(S); !ok {
		panic(fmt.Sprintf("store: *store.Tx does not implement %s", reflect.TypeFor[S]()))
	}
	return func(tx *Tx) S { return any(tx).(S) }
}
