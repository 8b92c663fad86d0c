package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/realtime"
	"github.com/creatormusic/platform/store"
)

// exerciseRealtime covers the realtime feed's port (realtime.Store): the
// outbox read in the order units of work committed (not the order of
// event ids, which under one millisecond are random between units),
// paged by position without a gap or a repeat, bounded by Through and
// selected by record, environment and workspace; the head is the last
// settled event; an event's position is found in its own environment
// only; on PostgreSQL an event whose transaction is younger than one
// still running is held back until that one ends, and then reads after
// the older transaction's events. WatchOutbox runs after a commit that
// wrote events, never after one that wrote none or rolled back.
func exerciseRealtime(t *testing.T, open Opener) {
	ctx := context.Background()
	event := func(ws, env, agg string, version int64) outbox.Event {
		return outbox.Event{TenantID: "ten_1", WorkspaceID: ws, Environment: env, Type: "test.changed",
			AggregateID: agg, AggregateVersion: version, Payload: []byte(fmt.Sprintf(`{"version":%d}`, version))}
	}
	write := func(t *testing.T, db *store.DB, evs ...outbox.Event) []outbox.Event {
		t.Helper()
		var out []outbox.Event
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, e := range evs {
				w, err := tx.OutboxInsert(ctx, e)
				if err != nil {
					return err
				}
				out = append(out, w)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	read := func(t *testing.T, db *store.DB, p realtime.ReadParams) []realtime.Entry {
		t.Helper()
		es, err := db.Read().RealtimeRead(ctx, p)
		if err != nil {
			t.Fatalf("read %+v: %v", p, err)
		}
		return es
	}
	// settled reads the feed from its start once it holds n events: on
	// PostgreSQL a transaction anywhere on the server that is older than
	// the last write holds the feed back until it ends.
	settled := func(t *testing.T, db *store.DB, n int) []realtime.Entry {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			es := read(t, db, realtime.ReadParams{Limit: 1000})
			if len(es) >= n || time.Now().After(deadline) {
				return es
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	ids := func(es []realtime.Entry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.Event.ID)
		}
		return out
	}
	idsOf := func(evs []outbox.Event) []string {
		out := []string{}
		for _, e := range evs {
			out = append(out, e.ID)
		}
		return out
	}

	t.Run("CommitOrder", func(t *testing.T) {
		db, _ := fresh(t, open)
		if p, err := db.Read().RealtimeHead(ctx); err != nil || !p.IsZero() {
			t.Fatalf("head of an empty outbox = %+v, %v", p, err)
		}
		// The clock stands still: every id has the same millisecond, and
		// the units' ids sort at random among each other.
		var committed []outbox.Event
		for i := range 12 {
			committed = append(committed, write(t, db, event("ws_1", "test", fmt.Sprintf("agg_%d", i%3), int64(i)),
				event("ws_2", "live", "agg_x", int64(i)))...)
		}
		all := settled(t, db, len(committed))
		if diff := cmp.Diff(idsOf(committed), ids(all)); diff != "" {
			t.Fatalf("feed order is not commit order (-committed +read):\n%s", diff)
		}
		for i := 1; i < len(all); i++ {
			if !all[i-1].Position.Less(all[i].Position) {
				t.Fatalf("positions do not increase: %+v then %+v", all[i-1].Position, all[i].Position)
			}
		}
		if diff := cmp.Diff(committed[0], all[0].Event); diff != "" {
			t.Fatalf("event read (-written +read):\n%s", diff)
		}
		// Paging by position: every event once.
		var paged []realtime.Entry
		var after realtime.Position
		for range 100 {
			page := read(t, db, realtime.ReadParams{After: after, Limit: 5})
			paged = append(paged, page...)
			if len(page) < 5 {
				break
			}
			after = page[len(page)-1].Position
		}
		if diff := cmp.Diff(ids(all), ids(paged)); diff != "" {
			t.Fatalf("paged (-all +paged):\n%s", diff)
		}
		// Through bounds a read; the filters select.
		if got := read(t, db, realtime.ReadParams{After: all[3].Position, Through: all[7].Position, Limit: 100}); !cmp.Equal(ids(got), ids(all[4:8])) {
			t.Fatalf("after 3 through 7 = %v, want %v", ids(got), ids(all[4:8]))
		}
		var agg1, live []string
		for _, e := range all {
			if e.Event.AggregateID == "agg_1" {
				agg1 = append(agg1, e.Event.ID)
			}
			if e.Event.Environment == "live" {
				live = append(live, e.Event.ID)
			}
		}
		if got := ids(read(t, db, realtime.ReadParams{AggregateID: "agg_1", Limit: 100})); !cmp.Equal(got, agg1) {
			t.Fatalf("agg_1 = %v, want %v", got, agg1)
		}
		if got := ids(read(t, db, realtime.ReadParams{Environment: "live", Limit: 100})); !cmp.Equal(got, live) {
			t.Fatalf("live = %v, want %v", got, live)
		}
		if got := ids(read(t, db, realtime.ReadParams{TenantID: "ten_1", WorkspaceID: "ws_2", Limit: 100})); !cmp.Equal(got, live) {
			t.Fatalf("ws_2 = %v, want %v", got, live)
		}
		if got := read(t, db, realtime.ReadParams{TenantID: "ten_2", WorkspaceID: "ws_2", Limit: 100}); len(got) != 0 {
			t.Fatalf("another tenant's ws_2 = %v", ids(got))
		}
		head, err := db.Read().RealtimeHead(ctx)
		if err != nil || head != all[len(all)-1].Position {
			t.Fatalf("head = %+v, %v; want %+v", head, err, all[len(all)-1].Position)
		}
		p, err := db.Read().RealtimePosition(ctx, "test", all[4].Event.ID)
		if err != nil || p != all[4].Position {
			t.Fatalf("position of %s = %+v, %v; want %+v", all[4].Event.ID, p, err, all[4].Position)
		}
		for _, c := range []struct{ env, id string }{{"live", all[4].Event.ID}, {"test", "evt_unknown"}} {
			if _, err := db.Read().RealtimePosition(ctx, c.env, c.id); !fault.Is(err, fault.NotFound) {
				t.Errorf("position of %s in %s = %v, want NOT_FOUND", c.id, c.env, err)
			}
		}
	})

	t.Run("RolledBackLeavesNoGap", func(t *testing.T) {
		db, _ := fresh(t, open)
		first := write(t, db, event("ws_1", "test", "agg_1", 1))
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.OutboxInsert(ctx, event("ws_1", "test", "agg_1", 2)); err != nil {
				return err
			}
			return errStop
		}); err == nil {
			t.Fatal("the failing unit committed")
		}
		second := write(t, db, event("ws_1", "test", "agg_1", 3))
		if got := ids(settled(t, db, 2)); !cmp.Equal(got, idsOf(append(first, second...))) {
			t.Fatalf("feed = %v", got)
		}
	})

	t.Run("InFlightHeldBack", func(t *testing.T) {
		db, _ := fresh(t, open)
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite's one writer runs units of work one at a time: none commits while another is open")
		}
		before := write(t, db, event("ws_1", "test", "agg_0", 1))
		settled(t, db, 1)
		// An older transaction writes its event and stays open while a
		// younger one commits.
		wrote, release, done := make(chan struct{}), make(chan struct{}), make(chan []outbox.Event, 1)
		go func() {
			var out []outbox.Event
			err := db.InTx(ctx, func(tx *store.Tx) error {
				e, err := tx.OutboxInsert(ctx, event("ws_1", "test", "agg_old", 1))
				if err != nil {
					return err
				}
				// Send the insert (the store may hold it until a later
				// statement) so the transaction has its id now.
				if _, err := tx.IDB().ExecContext(ctx, `SELECT 1`); err != nil {
					return err
				}
				out = append(out, e)
				close(wrote)
				<-release
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			done <- out
		}()
		<-wrote
		younger := write(t, db, event("ws_1", "test", "agg_young", 1))
		if got := ids(read(t, db, realtime.ReadParams{Limit: 10})); !cmp.Equal(got, idsOf(before)) {
			t.Fatalf("while an older transaction runs, the feed reads %v; want only %v", got, idsOf(before))
		}
		if _, err := db.Read().RealtimePosition(ctx, "test", younger[0].ID); !fault.Is(err, fault.NotFound) {
			t.Fatalf("position of an event not settled = %v, want NOT_FOUND", err)
		}
		head, err := db.Read().RealtimeHead(ctx)
		if err != nil || head != read(t, db, realtime.ReadParams{Limit: 1})[0].Position {
			t.Fatalf("head while held back = %+v, %v", head, err)
		}
		close(release)
		older := <-done
		want := idsOf(append(append(before, older...), younger...))
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := ids(read(t, db, realtime.ReadParams{Limit: 10}))
			if cmp.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after both committed the feed reads %v; want %v", got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	t.Run("WatchOutbox", func(t *testing.T) {
		db, _ := fresh(t, open)
		var n atomic.Int32
		stop := db.WatchOutbox(func() { n.Add(1) })
		write(t, db, event("ws_1", "test", "agg_1", 1), event("ws_1", "test", "agg_1", 2))
		if got := n.Load(); got != 1 {
			t.Fatalf("watchers ran %d times after one unit of work that wrote events, want 1", got)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.OutboxInsert(ctx, event("ws_1", "test", "agg_1", 3)); err != nil {
				return err
			}
			return errStop
		})
		if got := n.Load(); got != 1 {
			t.Fatalf("watchers ran %d times after units that wrote no event or rolled back, want 1", got)
		}
		stop()
		write(t, db, event("ws_1", "test", "agg_1", 4))
		if got := n.Load(); got != 1 {
			t.Fatalf("a removed watcher ran (%d)", got)
		}
	})
}
