package store

import (
	"context"
	"errors"
)

// Deferred statements. Most writes of a unit of work need no answer
// before the unit goes on: an insert with a fresh id, an event, a receipt.
// A driver that pipelines (store/postgres) may hold such a statement and
// send it with the unit's next statement, or with its commit, so a unit
// of work costs a few round trips instead of one per statement. The store
// marks such a statement with its check, a function of the rows it
// affected; the driver runs the check once the statement has run, and an
// error from the statement or its check is returned by the statement that
// sent it, and by every later statement of the transaction and its
// commit, so the unit of work fails and rolls back as if the statement
// itself had failed. A driver that does not pipeline runs the statement
// at once, and the store runs the check.

// ErrDeferred is what a pipelining driver's result of a held statement
// returns from RowsAffected: the statement has not run yet, and the driver
// runs its check when it does.
var ErrDeferred = errors.New("store: the statement runs with the next one")

// deferredKey carries a statement's check in its context.
type deferredKey struct{}

// Held is how a held statement's outcome is judged once it has run.
type Held struct {
	// CheckFunc judges the rows the statement affected; nil accepts any.
	CheckFunc func(rowsAffected int64) error
	// FailFunc translates the database's error of the statement into the
	// store's (a refused balance change into its fault); nil keeps it.
	// Unlike a failing Check, an error the database raises itself aborts
	// the transaction on the server, so a driver may send the statement
	// in the same batch as the COMMIT.
	FailFunc func(err error) error
}

// Deferrable reports whether the statement run with ctx may be held and
// sent later, and returns how to judge it. A pipelining driver calls it
// for each statement it is given inside a transaction.
func Deferrable(ctx context.Context) (Held, bool) {
	h, ok := ctx.Value(deferredKey{}).(*Held)
	if !ok {
		return Held{}, false
	}
	return *h, true
}

// Defer returns ctx marked so that the statement run with it may be held
// by a pipelining driver inside a transaction, and judged by h once it
// has run.
func Defer(ctx context.Context, h Held) context.Context {
	return context.WithValue(ctx, deferredKey{}, &h)
}

// execLater runs query like exec, and lets a pipelining driver hold it
// inside a unit of work: check (nil when none) judges the rows it
// affected, now or when the driver sends it. The driver sends it before
// the unit's next statement, so every later statement sees its effect;
// use it for a statement whose outcome the caller does not need in order
// to go on, since its error (or its check's) may be returned by a later
// statement instead.
func (tx *Tx) execLater(ctx context.Context, check func(rowsAffected int64) error, query string, args ...any) error {
	return tx.execHeld(ctx, Held{CheckFunc: check}, query, args...)
}

// execHeld is execLater with h judging the statement, its database error
// included.
func (tx *Tx) execHeld(ctx context.Context, h Held, query string, args ...any) error {
	if tx.sqlTx != nil {
		ctx = Defer(ctx, h)
	}
	res, err := tx.exec(ctx, query, args...)
	if err != nil {
		if h.FailFunc != nil {
			return h.FailFunc(err)
		}
		return err
	}
	check := h.CheckFunc
	n, err := res.RowsAffected()
	if errors.Is(err, ErrDeferred) {
		return nil
	}
	if err != nil || check == nil {
		return err
	}
	return check(n)
}
