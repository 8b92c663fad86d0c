package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/store"
)

var errStop = errors.New("stop between writes")

// aggregate is the aggregate id of the first event, or "".
func aggregate(evs []outbox.Event) string {
	if len(evs) == 0 {
		return ""
	}
	return evs[0].AggregateID
}

func exerciseTx(t *testing.T, open Opener) {
	ctx := context.Background()
	scope := idempotency.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"}
	record := func(key, hash string, exp time.Time) idempotency.Record {
		return idempotency.Record{Scope: scope, Endpoint: "createApiKey", Key: key, RequestHash: hash, ExpiresAt: exp}
	}

	t.Run("UnitOfWorkIsAtomic", func(t *testing.T) {
		db, _ := fresh(t, open)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.OutboxInsert(ctx, outbox.Event{Environment: "test", Type: "test.written", AggregateID: "agg_1", AggregateVersion: 1}); err != nil {
				return err
			}
			if _, err := tx.IdempotencyInsert(ctx, record("k1", "h1", tx.Now().Add(time.Hour))); err != nil {
				return err
			}
			return errStop // the handler fails after both writes
		})
		if !errors.Is(err, errStop) {
			t.Fatalf("InTx = %v, want errStop", err)
		}
		evs, err := db.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 10})
		if err != nil || len(evs) != 0 {
			t.Fatalf("outbox after rollback = %d events, %v", len(evs), err)
		}
		ok, err := db.Read().IdempotencyInsert(ctx, record("k1", "h1", Epoch.Add(time.Hour)))
		if err != nil || !ok {
			t.Fatalf("idempotency key survived the rollback: inserted=%v err=%v", ok, err)
		}
	})

	t.Run("IdempotencyRecordLifecycle", func(t *testing.T) {
		db, clock := fresh(t, open)
		var recID string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			r := record("k2", "h2", tx.Now().Add(24*time.Hour))
			r.ID, r.Status, r.Body, r.Sealed = "idem_a", 201, []byte(`{"id":"key_1"}`), true
			r.Headers = map[string]string{"Payment-Response": "eyJzdWNjZXNzIjp0cnVlfQ=="}
			ok, err := tx.IdempotencyInsert(ctx, r)
			if err != nil || !ok {
				t.Fatalf("first insert = %v, %v", ok, err)
			}
			again := r
			again.ID, again.Body = "idem_b", []byte(`{"id":"key_2"}`)
			if ok, _ := tx.IdempotencyInsert(ctx, again); ok {
				t.Fatal("second insert of the same key succeeded")
			}
			recID = r.ID
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().IdempotencyGet(ctx, scope, "createApiKey", "k2")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != recID || got.Status != 201 || string(got.Body) != `{"id":"key_1"}` || !got.Sealed || got.RequestHash != "h2" ||
			len(got.Headers) != 1 || got.Headers["Payment-Response"] != "eyJzdWNjZXNzIjp0cnVlfQ==" {
			t.Fatalf("record = %+v", got)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.IdempotencyInsert(ctx, record("k3", "h3", tx.Now().Add(48*time.Hour)))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if plain, err := db.Read().IdempotencyGet(ctx, scope, "createApiKey", "k3"); err != nil || plain.Headers != nil {
			t.Fatalf("a record without headers reads %+v, %v", plain.Headers, err)
		}
		other := scope
		other.Environment = "live"
		if _, err := db.Read().IdempotencyGet(ctx, other, "createApiKey", "k2"); fault.CodeOf(err) != fault.NotFound {
			t.Fatalf("record visible from the live environment: %v", err)
		}
		clock.Advance(25 * time.Hour)
		var n int
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			n, err = tx.IdempotencyPrune(ctx, tx.Now(), 100)
			return err
		}); err != nil || n != 1 {
			t.Fatalf("prune = %d, %v", n, err)
		}
	})

	t.Run("ConcurrentDuplicatesInsertOnce", func(t *testing.T) {
		db, _ := fresh(t, open)
		var inserted atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					ok, err := tx.IdempotencyInsert(ctx, record("dup", "h", tx.Now().Add(time.Hour)))
					if ok {
						inserted.Add(1)
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if inserted.Load() != 1 {
			t.Fatalf("%d of 20 concurrent inserts succeeded, want 1", inserted.Load())
		}
	})

	// IdempotencyInsertLater: a taken key fails the unit of work with the
	// caller's error (from the insert, a later statement or the commit),
	// and nothing the unit wrote is kept; 20 concurrent units with one key
	// commit once.
	t.Run("IdempotencyInsertLaterTaken", func(t *testing.T) {
		db, _ := fresh(t, open)
		taken := errors.New("taken")
		insert := func(id string) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				r := record("later", "h", tx.Now().Add(time.Hour))
				r.ID, r.Status, r.Body = id, 202, []byte(`{"id":"`+id+`"}`)
				if err := tx.IdempotencyInsertLater(ctx, r, taken); err != nil {
					return err
				}
				_, err := tx.OutboxInsert(ctx, outbox.Event{Environment: "test", Type: "test.later", AggregateID: id, AggregateVersion: 1})
				return err
			})
		}
		var ok, dup atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch err := insert(fmt.Sprintf("idem_%02d", i)); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, taken):
					dup.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 || dup.Load() != 19 {
			t.Fatalf("%d units committed and %d found the key taken, want 1 and 19", ok.Load(), dup.Load())
		}
		got, err := db.Read().IdempotencyGet(ctx, scope, "createApiKey", "later")
		if err != nil {
			t.Fatal(err)
		}
		evs, err := db.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].AggregateID != got.ID {
			t.Fatalf("outbox = %d events (first of %q), want only the committed unit's (%s)", len(evs), aggregate(evs), got.ID)
		}
	})
}
