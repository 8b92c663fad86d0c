package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/store"
)

// exerciseOutbox covers the outbox and the inbox (outbox.Writer,
// outbox.Store, outbox.Inbox): events written in a unit of work are seen by
// publishers when it commits, never before and never after a rollback, as
// the store filled them in; an event of neither environment is refused;
// events list in the order they occurred, so each aggregate's versions
// list in order, page by page; each environment lists and marks its own
// events, and a mark keeps its first time; the inbox reports each
// consumer's first delivery once, even to concurrent deliveries, and
// forgets a delivery whose unit of work rolled back.
//
// The outbox keeps every event: nothing prunes it, and a published event
// still lists.
func exerciseOutbox(t *testing.T, open Opener) {
	ctx := context.Background()
	list := func(t *testing.T, db *store.DB, p outbox.ListParams) []outbox.Event {
		t.Helper()
		evs, err := db.Read().OutboxList(ctx, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, err)
		}
		return evs
	}
	event := func(agg string, version int64) outbox.Event {
		return outbox.Event{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test", Type: "test.changed",
			AggregateID: agg, AggregateVersion: version, Payload: []byte(fmt.Sprintf(`{"version":%d}`, version))}
	}
	write := func(db *store.DB, evs ...outbox.Event) ([]outbox.Event, error) {
		var out []outbox.Event
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, e := range evs {
				w, err := tx.OutboxInsert(ctx, e)
				if err != nil {
					return err
				}
				out = append(out, w)
			}
			return nil
		})
		return out, err
	}

	t.Run("VisibleAtCommit", func(t *testing.T) {
		db, clock := fresh(t, open)
		// While the unit of work runs, publishers see none of its events.
		// (The function may run on the store's writer, so it reports what
		// it saw instead of failing the test itself.)
		var written, seen []outbox.Event
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, e := range []outbox.Event{event("agg_1", 1), event("agg_1", 2)} {
				w, err := tx.OutboxInsert(ctx, e)
				if err != nil {
					return err
				}
				written = append(written, w)
			}
			var err error
			seen, err = db.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 10})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 0 {
			t.Errorf("a publisher saw %d events of a unit of work still running", len(seen))
		}
		if diff := cmp.Diff(written, list(t, db, outbox.ListParams{Environment: "test", Limit: 10})); diff != "" {
			t.Fatalf("committed events (-written +listed):\n%s", diff)
		}
		// A unit of work that fails between two committed ones leaves no
		// event, and no gap in the order of the others.
		clock.Advance(time.Millisecond)
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.OutboxInsert(ctx, event("agg_2", 1)); err != nil {
				return err
			}
			return errStop
		})
		if !errors.Is(err, errStop) {
			t.Fatalf("failed unit = %v, want errStop", err)
		}
		clock.Advance(time.Millisecond)
		later, err := write(db, event("agg_1", 3))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(append(written, later...), list(t, db, outbox.ListParams{Environment: "test", Limit: 10})); diff != "" {
			t.Fatalf("events after a rolled-back unit (-committed +listed):\n%s", diff)
		}
	})

	t.Run("FilledIn", func(t *testing.T) {
		db, clock := fresh(t, open)
		clock.Advance(1500 * time.Millisecond)
		given := event("agg_1", 1)
		given.OccurredAt, given.SchemaVersion = Epoch.Add(-time.Hour), 2
		bare := outbox.Event{Environment: "live", Type: "test.bare", AggregateID: "agg_2", AggregateVersion: 1}
		out, err := write(db, bare, given)
		if err != nil {
			t.Fatal(err)
		}
		// Left empty: a fresh evt_ id, the unit of work's time, schema
		// version 1 and an empty object for a payload.
		b := out[0]
		if !id.Valid("evt_", b.ID) || !b.OccurredAt.Equal(clock.Now()) || b.SchemaVersion != 1 || string(b.Payload) != "{}" || b.PublishedAt != nil {
			t.Fatalf("filled in = %+v", b)
		}
		// Given: kept.
		g := out[1]
		if !id.Valid("evt_", g.ID) || !g.OccurredAt.Equal(given.OccurredAt) || g.SchemaVersion != 2 || string(g.Payload) != `{"version":1}` {
			t.Fatalf("given = %+v", g)
		}
		if diff := cmp.Diff(out[:1], list(t, db, outbox.ListParams{Environment: "live", Limit: 10})); diff != "" {
			t.Fatalf("live events (-written +listed):\n%s", diff)
		}
		if diff := cmp.Diff(out[1:], list(t, db, outbox.ListParams{Environment: "test", Limit: 10})); diff != "" {
			t.Fatalf("test events (-written +listed):\n%s", diff)
		}
	})

	t.Run("EnvironmentRequired", func(t *testing.T) {
		db, _ := fresh(t, open)
		// An event of neither environment would reach no publisher: the
		// insert fails, and so does the unit of work that returns it.
		for _, env := range []string{"", "staging"} {
			e := event("agg_1", 1)
			e.Environment = env
			if _, err := write(db, event("agg_0", 1), e); err == nil {
				t.Errorf("an event of environment %q was stored", env)
			}
		}
		for _, env := range []string{"test", "live", "", "staging"} {
			if evs := list(t, db, outbox.ListParams{Environment: env, Limit: 10}); len(evs) != 0 {
				t.Errorf("environment %q lists %d events of failed units", env, len(evs))
			}
		}
	})

	t.Run("OccurrenceOrder", func(t *testing.T) {
		db, clock := fresh(t, open)
		// Two aggregates' events in three units of work, a millisecond
		// apart; the last writes many events within one millisecond.
		var want []outbox.Event
		for _, unit := range [][]outbox.Event{
			{event("agg_a", 1), event("agg_b", 1), event("agg_a", 2)},
			{event("agg_b", 2), event("agg_a", 3)},
		} {
			out, err := write(db, unit...)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, out...)
			clock.Advance(time.Millisecond)
		}
		var many []outbox.Event
		for v := int64(4); v <= 40; v++ {
			many = append(many, event("agg_a", v))
			if v%3 == 0 {
				many = append(many, event("agg_b", v))
			}
		}
		out, err := write(db, many...)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, out...)
		if diff := cmp.Diff(want, list(t, db, outbox.ListParams{Environment: "test", Limit: 100})); diff != "" {
			t.Fatalf("events not in the order they occurred (-written +listed):\n%s", diff)
		}
		// A publisher paging through sees each aggregate's versions in
		// order, once each.
		var paged []outbox.Event
		after := ""
		for range 100 {
			page := list(t, db, outbox.ListParams{Environment: "test", After: after, Limit: 4, Unpublished: true})
			paged = append(paged, page...)
			if len(page) < 4 {
				break
			}
			after = page[len(page)-1].ID
		}
		last := map[string]int64{}
		for _, e := range paged {
			if e.AggregateVersion <= last[e.AggregateID] {
				t.Fatalf("%s version %d listed after version %d", e.AggregateID, e.AggregateVersion, last[e.AggregateID])
			}
			last[e.AggregateID] = e.AggregateVersion
		}
		if len(paged) != len(want) {
			t.Fatalf("paging listed %d events, want %d", len(paged), len(want))
		}
	})

	t.Run("InboxPerConsumer", func(t *testing.T) {
		db, _ := fresh(t, open)
		record := func(consumer, eventID string) (first bool, err error) {
			err = db.InTx(ctx, func(tx *store.Tx) (err error) { first, err = tx.InboxRecord(ctx, consumer, eventID); return })
			return first, err
		}
		// Each consumer gets its own first delivery.
		for _, c := range []string{"mailer", "webhooks"} {
			for i, want := range []bool{true, false} {
				if got, err := record(c, "evt_1"); err != nil || got != want {
					t.Fatalf("%s delivery %d = %v, %v; want %v", c, i, got, err, want)
				}
			}
		}
		// A delivery whose handling rolled back was not received: the
		// redelivery is the first.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if first, err := tx.InboxRecord(ctx, "mailer", "evt_2"); err != nil || !first {
				return fmt.Errorf("first delivery = %v, %v", first, err)
			}
			return errStop
		})
		if !errors.Is(err, errStop) {
			t.Fatal(err)
		}
		if first, err := record("mailer", "evt_2"); err != nil || !first {
			t.Fatalf("redelivery after a rollback = %v, %v; want the first", first, err)
		}
		// Concurrent deliveries of one event: exactly one is the first.
		var wg sync.WaitGroup
		var mu sync.Mutex
		firsts := 0
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				first, err := record("mailer", "evt_3")
				if err != nil {
					t.Error(err)
				}
				if first {
					mu.Lock()
					firsts++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if firsts != 1 {
			t.Fatalf("%d of 10 concurrent deliveries were the first, want 1", firsts)
		}
	})

	t.Run("MarkPublishedAndInbox", func(t *testing.T) {
		db, clock := fresh(t, open)
		var ids []string
		var live outbox.Event
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := 0; i < 3; i++ {
				e, err := tx.OutboxInsert(ctx, outbox.Event{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test",
					Type: "test.event", AggregateID: "agg", AggregateVersion: int64(i + 1), Payload: []byte(`{"n":1}`)})
				if err != nil {
					return err
				}
				ids = append(ids, e.ID)
			}
			var err error
			live, err = tx.OutboxInsert(ctx, outbox.Event{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "live",
				Type: "test.event", AggregateID: "agg_live", AggregateVersion: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
		mark := func(env, id string) (e outbox.Event, err error) {
			err = db.InTx(ctx, func(tx *store.Tx) (err error) { e, err = tx.OutboxMarkPublished(ctx, env, id); return })
			return e, err
		}
		first, err := mark("test", ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if first.PublishedAt == nil || !first.PublishedAt.Equal(Epoch.Add(time.Minute)) {
			t.Fatalf("publishedAt = %v", first.PublishedAt)
		}
		clock.Advance(time.Minute)
		again, err := mark("test", ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if !again.PublishedAt.Equal(*first.PublishedAt) {
			t.Fatalf("second mark moved publishedAt to %v", again.PublishedAt)
		}
		un, err := db.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 10, Unpublished: true})
		if err != nil || len(un) != 2 || un[0].ID != ids[1] || string(un[0].Payload) != `{"n":1}` {
			t.Fatalf("unpublished = %+v, %v", un, err)
		}
		page, err := db.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", After: ids[0], Limit: 1})
		if err != nil || len(page) != 1 || page[0].ID != ids[1] {
			t.Fatalf("page after first = %+v, %v", page, err)
		}
		if _, err := mark("test", "evt_missing"); fault.CodeOf(err) != fault.NotFound {
			t.Fatalf("mark unknown = %v", err)
		}
		// Each environment lists and marks its own events only: the live
		// event is NOT_FOUND to the test publisher and stays unpublished.
		all, err := db.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 10})
		if err != nil || len(all) != 3 || slices.ContainsFunc(all, func(e outbox.Event) bool { return e.ID == live.ID }) {
			t.Fatalf("test events = %+v, %v", all, err)
		}
		if _, err := mark("test", live.ID); fault.CodeOf(err) != fault.NotFound {
			t.Fatalf("test publisher marks a live event = %v, want NOT_FOUND", err)
		}
		if _, err := mark("live", ids[1]); fault.CodeOf(err) != fault.NotFound {
			t.Fatalf("live publisher marks a test event = %v, want NOT_FOUND", err)
		}
		lv, err := db.Read().OutboxList(ctx, outbox.ListParams{Environment: "live", Limit: 10, Unpublished: true})
		if err != nil || len(lv) != 1 || lv[0].ID != live.ID || lv[0].Environment != "live" {
			t.Fatalf("live events = %+v, %v", lv, err)
		}
		if un, err := db.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 10, Unpublished: true}); err != nil || len(un) != 2 {
			t.Fatalf("test unpublished after the refused marks = %+v, %v", un, err)
		}
		if e, err := mark("live", live.ID); err != nil || e.PublishedAt == nil {
			t.Fatalf("live publisher marks its event = %+v, %v", e, err)
		}
		for i, want := range []bool{true, false} {
			got, err := db.Read().InboxRecord(ctx, "consumer", ids[0])
			if err != nil || got != want {
				t.Fatalf("inbox delivery %d = %v, %v; want %v", i, got, err, want)
			}
		}
	})
}
