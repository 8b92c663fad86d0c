package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"

	"github.com/creatormusic/platform/realtime"
)

// Compile-time check: *Tx implements the realtime feed's port.
var _ realtime.Store = (*Tx)(nil)

// The realtime feed reads the outbox in feed order over settled events
// (package realtime, The feed; migration 0046). On SQLite the order is
// seq, which a trigger assigns in commit order, and every committed event
// is settled. On PostgreSQL it is (tx_id, seq), and an event is settled
// once its transaction id is below the oldest transaction still running:
// settledPG is that condition.
const settledPG = ` tx_id < pg_snapshot_xmin(pg_current_snapshot())`

// feedRow is an outbox row with its feed position; Tx is tx_id as text
// on PostgreSQL ("0" on SQLite).
type feedRow struct {
	Tx  string `bun:"feed_tx"`
	Seq int64  `bun:"seq"`
	outboxRow
}

// position parses the row's feed position.
func (r feedRow) position() (realtime.Position, error) {
	t, err := strconv.ParseInt(r.Tx, 10, 64)
	if err != nil {
		return realtime.Position{}, err
	}
	return realtime.Position{Tx: t, Seq: r.Seq}, nil
}

// feedTx is the select list's transaction column of the dialect.
func (tx *Tx) feedTx() string {
	if tx.db.dialect == Postgres {
		return `CAST(tx_id AS TEXT) AS feed_tx`
	}
	return `'0' AS feed_tx`
}

// feedAfter returns the condition "after position p" (or "at or before p"
// with upTo) and its arguments.
func (tx *Tx) feedAfter(p realtime.Position, upTo bool) (string, []any) {
	op := ">"
	if upTo {
		op = "<="
	}
	if tx.db.dialect == Postgres {
		return `(tx_id, seq) ` + op + ` (CAST(? AS xid8), ?)`, []any{strconv.FormatInt(p.Tx, 10), p.Seq}
	}
	return `seq ` + op + ` ?`, []any{p.Seq}
}

// RealtimeRead implements realtime.Store.
func (tx *Tx) RealtimeRead(ctx context.Context, p realtime.ReadParams) ([]realtime.Entry, error) {
	const op = "store.RealtimeRead"
	where, args := tx.feedAfter(p.After, false)
	if !p.Through.IsZero() {
		w, a := tx.feedAfter(p.Through, true)
		where, args = where+` AND `+w, append(args, a...)
	}
	if tx.db.dialect == Postgres {
		where += ` AND` + settledPG
	}
	if p.AggregateID != "" {
		where, args = where+` AND aggregate_id = ?`, append(args, p.AggregateID)
	}
	if p.Environment != "" {
		where, args = where+` AND environment = ?`, append(args, p.Environment)
	}
	if p.WorkspaceID != "" {
		where, args = where+` AND tenant_id = ? AND workspace_id = ?`, append(args, p.TenantID, p.WorkspaceID)
	}
	order := ` ORDER BY seq`
	if tx.db.dialect == Postgres {
		order = ` ORDER BY tx_id, seq`
	}
	var rows []feedRow
	q := `SELECT ` + tx.feedTx() + `, seq, ` + outboxColumns + ` FROM outbox_events WHERE ` + where + order + ` LIMIT ?`
	if err := tx.idb.NewRaw(q, append(args, p.Limit)...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]realtime.Entry, len(rows))
	for i, r := range rows {
		pos, err := r.position()
		if err != nil {
			return nil, errf(op, err)
		}
		out[i] = realtime.Entry{Position: pos, Event: r.event()}
	}
	return out, nil
}

// RealtimeHead implements realtime.Store.
func (tx *Tx) RealtimeHead(ctx context.Context) (realtime.Position, error) {
	const op = "store.RealtimeHead"
	q := `SELECT '0' AS feed_tx, COALESCE(MAX(seq), 0) AS seq FROM outbox_events`
	if tx.db.dialect == Postgres {
		q = `SELECT COALESCE((SELECT CAST(tx_id AS TEXT) || ' ' || CAST(seq AS TEXT) FROM outbox_events WHERE` + settledPG +
			` ORDER BY tx_id DESC, seq DESC LIMIT 1), '0 0') AS feed_tx, 0 AS seq`
	}
	var r feedRow
	if err := tx.idb.NewRaw(q).Scan(ctx, &r); err != nil {
		return realtime.Position{}, errf(op, err)
	}
	if tx.db.dialect == Postgres {
		t, s, _ := cutSpace(r.Tx)
		r.Tx = t
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return realtime.Position{}, errf(op, err)
		}
		r.Seq = n
	}
	p, err := r.position()
	if err != nil {
		return realtime.Position{}, errf(op, err)
	}
	return p, nil
}

// cutSpace splits s at its first space.
func cutSpace(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// RealtimePosition implements realtime.Store.
func (tx *Tx) RealtimePosition(ctx context.Context, env, id string) (realtime.Position, error) {
	const op = "store.RealtimePosition"
	q := `SELECT ` + tx.feedTx() + `, seq FROM outbox_events WHERE id = ? AND environment = ?`
	if tx.db.dialect == Postgres {
		q += ` AND` + settledPG
	}
	var r feedRow
	if err := tx.idb.NewRaw(q, id, env).Scan(ctx, &r); err != nil {
		return realtime.Position{}, notFound(op, err)
	}
	p, err := r.position()
	if err != nil {
		return realtime.Position{}, errf(op, err)
	}
	return p, nil
}

// outboxWatchers are the functions run after every unit of work that
// wrote outbox events commits (DB.WatchOutbox).
type outboxWatchers struct {
	mu  sync.Mutex
	fns map[int]func()
	n   int
}

// WatchOutbox registers fn to run after every unit of work on this DB
// that wrote outbox events has committed, as a realtime hub's wake-up (it
// must not block), and returns its removal. Other hosts' commits are not
// seen: their hubs poll.
func (db *DB) WatchOutbox(fn func()) (stop func()) {
	w := &db.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[int]func(){}
	}
	w.n++
	k := w.n
	w.fns[k] = fn
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.fns, k)
	}
}

// outboxCommitted runs the watchers.
func (db *DB) outboxCommitted() {
	w := &db.watchers
	w.mu.Lock()
	fns := make([]func(), 0, len(w.fns))
	for _, fn := range w.fns {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// watchCommit arranges for the watchers to run once this unit of work
// commits; OutboxInsert calls it.
func (tx *Tx) watchCommit() {
	if tx.outboxWritten || tx.sqlTx == nil {
		return
	}
	tx.outboxWritten = true
	tx.AfterCommit(tx.db.outboxCommitted)
}
