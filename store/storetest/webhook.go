package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/webhook"
)

// exerciseWebhook covers the webhook ports (webhook.Store,
// webhook.DeliveryStore, webhook.FanoutStore): an endpoint round-trips
// whole, sealed secrets and times included; reads and counts are confined
// to one tenant, workspace and environment and leave deleted endpoints
// out (the delivery job still reads them by id); writes are
// compare-and-set on the version; a delivery is unique per (endpoint,
// event), read and listed within its scope and endpoint, newest first;
// an attempt is recorded once; the fan-out's cursor only moves forward,
// its event reads start at the id floor of a time, skip marked events and
// scopes without an endpoint, and pruning forgets only older marks.
func exerciseWebhook(t *testing.T, open Opener) {
	ctx := context.Background()
	scope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	newEndpoint := func(tx *store.Tx, sc access.Scope) webhook.Endpoint {
		now := tx.Now()
		return webhook.Endpoint{ID: tx.NewID(webhook.EndpointPrefix), Scope: sc, URL: "https://hooks.example.com/x",
			Description: "note", EnabledEvents: []string{"api_key.created", "project.created"}, Status: webhook.StatusEnabled,
			SecretSealed: []byte{1, 2, 3}, SecretVersion: 1, CreatedByUserID: "usr_1", CreatedByKeyID: "key_1", Version: 1,
			CreatedAt: now, UpdatedAt: now}
	}
	insertEndpoint := func(t *testing.T, db *store.DB, sc access.Scope) webhook.Endpoint {
		t.Helper()
		var e webhook.Endpoint
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			e = newEndpoint(tx, sc)
			return tx.WebhookEndpointInsert(ctx, e)
		}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	others := []access.Scope{{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}, {TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Test}}

	t.Run("EndpointRoundTripScopeAndCompareAndSet", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		e := insertEndpoint(t, db, scope)
		got, err := db.Read().WebhookEndpointGet(ctx, scope, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e, got); diff != "" {
			t.Errorf("round trip (-stored +read):\n%s", diff)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookEndpointInsert(ctx, e) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("a second insert of an id: %v, want CONFLICT", err)
		}
		for _, sc := range others {
			if _, err := db.Read().WebhookEndpointGet(ctx, sc, e.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("read from %+v: %v, want NOT_FOUND", sc, err)
			}
			es, err := db.Read().WebhookEndpointList(ctx, sc, "", 10)
			n, cerr := db.Read().WebhookEndpointCount(ctx, sc)
			if err != nil || cerr != nil || len(es) != 0 || n != 0 {
				t.Errorf("list and count of %+v: %d, %d (%v, %v); want none", sc, len(es), n, err, cerr)
			}
		}

		// A rotation's write: the previous secret and its expiry.
		clock.Advance(time.Minute)
		rotated := e
		rotated.PreviousSecretSealed, rotated.PreviousExpiresAt = e.SecretSealed, clock.Now().Add(time.Hour)
		rotated.SecretSealed, rotated.SecretVersion, rotated.Version, rotated.UpdatedAt = []byte{4, 5}, 2, 2, clock.Now()
		write := func(e webhook.Endpoint) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookEndpointUpdate(ctx, e) })
		}
		if err := write(rotated); err != nil {
			t.Fatal(err)
		}
		if err := write(rotated); !fault.Is(err, fault.Conflict) {
			t.Errorf("a write from a stale read: %v, want CONFLICT", err)
		}
		got, _ = db.Read().WebhookEndpointGet(ctx, scope, e.ID)
		if diff := cmp.Diff(rotated, got); diff != "" {
			t.Errorf("after the rotation (-want +read):\n%s", diff)
		}

		// The success time only moves forward, and no version changes.
		at := clock.Now()
		for _, when := range []time.Time{at, at.Add(-time.Hour)} {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookEndpointSucceeded(ctx, e.ID, when) }); err != nil {
				t.Fatal(err)
			}
		}
		got, _ = db.Read().WebhookEndpointByID(ctx, access.Test, e.ID)
		if !got.LastSuccessAt.Equal(at) || got.Version != 2 {
			t.Errorf("last success %s, version %d; want %s, 2", got.LastSuccessAt, got.Version, at)
		}

		// Deleted: out of reads and counts, still read by id.
		deleted := got
		deleted.Status, deleted.SecretSealed, deleted.PreviousSecretSealed, deleted.PreviousExpiresAt = webhook.StatusDeleted, []byte{}, nil, time.Time{}
		deleted.Version++
		if err := write(deleted); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Read().WebhookEndpointGet(ctx, scope, e.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("a deleted endpoint reads: %v", err)
		}
		n, _ := db.Read().WebhookEndpointCount(ctx, scope)
		es, _ := db.Read().WebhookEndpointList(ctx, scope, "", 10)
		byID, err := db.Read().WebhookEndpointByID(ctx, access.Test, e.ID)
		if n != 0 || len(es) != 0 || err != nil || byID.Status != webhook.StatusDeleted || len(byID.SecretSealed) != 0 {
			t.Errorf("after deletion: count %d, list %d, by id %+v %v", n, len(es), byID, err)
		}
		if _, err := db.Read().WebhookEndpointByID(ctx, access.Live, e.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("read by id in the other environment: %v", err)
		}
	})

	t.Run("EndpointsListNewestFirst", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		var want []string
		for range 7 {
			want = append([]string{insertEndpoint(t, db, scope).ID}, want...)
			clock.Advance(time.Millisecond)
		}
		insertEndpoint(t, db, others[0])
		got := pageIDs(t, 3, func(before string, n int) ([]webhook.Endpoint, error) {
			return db.Read().WebhookEndpointList(ctx, scope, before, n)
		}, func(e webhook.Endpoint) string { return e.ID })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
		in, err := db.Read().WebhookEndpointsOf(ctx, scope)
		if n, cerr := db.Read().WebhookEndpointCount(ctx, scope); err != nil || cerr != nil || len(in) != 7 || n != 7 {
			t.Errorf("endpoints of the scope: %d, count %d (%v, %v); want 7", len(in), n, err, cerr)
		}
	})

	t.Run("DeliveriesAndAttempts", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		e := insertEndpoint(t, db, scope)
		other := insertEndpoint(t, db, scope)
		var ds []webhook.Delivery
		for i := range 5 {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				now := tx.Now()
				d := webhook.Delivery{ID: tx.NewID(webhook.DeliveryPrefix), EndpointID: e.ID, EventID: fmt.Sprintf("evt_%d", i),
					EventType: "api_key.created", Scope: scope, Status: webhook.DeliveryPending, NextAttemptAt: now, Version: 1,
					CreatedAt: now, UpdatedAt: now}
				ok, err := tx.WebhookDeliveryInsert(ctx, d)
				if err != nil || !ok {
					return fmt.Errorf("insert: %v, %v", ok, err)
				}
				dup := d
				dup.ID = tx.NewID(webhook.DeliveryPrefix)
				if ok, err := tx.WebhookDeliveryInsert(ctx, dup); err != nil || ok {
					return fmt.Errorf("a second delivery of one (endpoint, event): %v, %v; want nothing inserted", ok, err)
				}
				ds = append(ds, d)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Millisecond)
		}
		d := ds[0]
		got, err := db.Read().WebhookDeliveryGet(ctx, scope, e.ID, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("round trip (-stored +read):\n%s", diff)
		}
		if _, err := db.Read().WebhookDeliveryGet(ctx, scope, other.ID, d.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("read through another endpoint: %v", err)
		}
		for _, sc := range others {
			if _, err := db.Read().WebhookDeliveryGet(ctx, sc, e.ID, d.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("read from %+v: %v", sc, err)
			}
		}
		if _, err := db.Read().WebhookDeliveryByID(ctx, access.Live, d.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("read by id in the other environment: %v", err)
		}
		page, err := db.Read().WebhookDeliveryList(ctx, scope, e.ID, ds[3].ID, 2)
		if err != nil || len(page) != 2 || page[0].ID != ds[2].ID || page[1].ID != ds[1].ID {
			t.Errorf("the page below the fourth: %+v, %v", page, err)
		}

		// The claim and the record are compare-and-sets on the version.
		claimed := d
		claimed.Attempts, claimed.LastAttemptAt, claimed.NextAttemptAt, claimed.Version = 1, clock.Now(), time.Time{}, 2
		update := func(d webhook.Delivery) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookDeliveryUpdate(ctx, d) })
		}
		if err := update(claimed); err != nil {
			t.Fatal(err)
		}
		if err := update(claimed); !fault.Is(err, fault.Conflict) {
			t.Errorf("a second claim of one version: %v, want CONFLICT", err)
		}
		a := webhook.Attempt{DeliveryID: d.ID, Number: 1, StartedAt: clock.Now(), StatusCode: 503, LatencyMillis: 12,
			ErrorClass: webhook.ClassHTTPStatus, ResponseExcerpt: "busy ✓"}
		record := func(a webhook.Attempt) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookAttemptInsert(ctx, a) })
		}
		if err := record(a); err != nil {
			t.Fatal(err)
		}
		if err := record(a); !fault.Is(err, fault.Conflict) {
			t.Errorf("a second record of one attempt: %v, want CONFLICT", err)
		}
		b := webhook.Attempt{DeliveryID: d.ID, Number: 2, Manual: true, StartedAt: clock.Now(), StatusCode: 200}
		if err := record(b); err != nil {
			t.Fatal(err)
		}
		as, err := db.Read().WebhookAttemptList(ctx, []string{d.ID, ds[1].ID})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]webhook.Attempt{a, b}, as); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
	})

	t.Run("Fanout", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		if _, ok, err := db.Read().WebhookFanoutCursor(ctx); ok || err != nil {
			t.Fatalf("a cursor before the first pass: %v, %v", ok, err)
		}
		t0 := clock.Now()
		advance := func(at time.Time) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookFanoutAdvance(ctx, at) }); err != nil {
				t.Fatal(err)
			}
		}
		advance(t0.Add(time.Minute))
		advance(t0) // never back
		if at, ok, err := db.Read().WebhookFanoutCursor(ctx); !ok || err != nil || !at.Equal(t0.Add(time.Minute)) {
			t.Errorf("cursor %s, %v, %v; want %s", at, ok, err, t0.Add(time.Minute))
		}

		insertEndpoint(t, db, scope)
		deleted := insertEndpoint(t, db, others[1])
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			deleted.Status, deleted.Version = webhook.StatusDeleted, 2
			return tx.WebhookEndpointUpdate(ctx, deleted)
		}); err != nil {
			t.Fatal(err)
		}
		// Events stamped at t0-2m, t0-1m, t0, t0+1m in the endpoint's
		// scope, written in an order other than their ids', and one in a
		// scope with no endpoint and one with a deleted endpoint.
		at := func(d time.Duration) time.Time { return t0.Add(d) }
		event := func(stamp time.Time, sc access.Scope) outbox.Event {
			return outbox.Event{ID: id.New("evt_", stamp), TenantID: sc.TenantID, WorkspaceID: sc.WorkspaceID, Environment: string(sc.Environment),
				Type: "api_key.created", SchemaVersion: 1, AggregateID: "key_1", AggregateVersion: 1, OccurredAt: stamp, Payload: json.RawMessage(`{}`)}
		}
		var want []string
		for _, e := range []outbox.Event{event(at(time.Minute), scope), event(at(-2*time.Minute), scope), event(at(0), scope),
			event(at(-time.Minute), scope), event(at(0), others[0]), event(at(0), others[1])} {
			if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.OutboxInsert(ctx, e); return err }); err != nil {
				t.Fatal(err)
			}
			if e.WorkspaceID == scope.WorkspaceID && e.Environment == string(scope.Environment) && !e.OccurredAt.Before(at(-time.Minute)) {
				want = append(want, e.ID)
			}
		}
		slices.Sort(want)
		read := func(since time.Time, limit int) []string {
			t.Helper()
			evs, err := db.Read().WebhookFanoutEvents(ctx, since, limit)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range evs {
				ids = append(ids, e.ID)
			}
			return ids
		}
		if diff := cmp.Diff(want, read(at(-time.Minute), 10)); diff != "" {
			t.Errorf("events from t0-1m (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want[:2], read(at(-time.Minute), 2)); diff != "" {
			t.Errorf("a batch of two (-want +got):\n%s", diff)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookFanoutMark(ctx, want[:2]) }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookFanoutMark(ctx, want[:1]) }); err != nil {
			t.Errorf("marking again: %v", err)
		}
		if diff := cmp.Diff(want[2:], read(at(-time.Minute), 10)); diff != "" {
			t.Errorf("after marking two (-want +got):\n%s", diff)
		}
		// Pruning forgets the marks of events stamped before t0 only: the
		// one stamped at t0-1m shows again, the one at t0 stays marked.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookFanoutPrune(ctx, t0) }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(append([]string{want[0]}, want[2:]...), read(at(-time.Minute), 10)); diff != "" {
			t.Errorf("after pruning before t0 (-want +got):\n%s", diff)
		}
	})
}
