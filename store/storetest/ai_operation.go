package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
)

// exerciseAIOperations covers the AI completion path's ports: a sealed
// key round-trips as bytes and is replaced by a put; an operation
// round-trips whole (routing and pricing references, attempts, nullable
// settlement and end), is confined to its scope, holds its idempotency
// key once per scope and endpoint (a second insert writes nothing and
// the first is found by the key), is updated by compare-and-set on its
// version, and lists newest first, by creator, with totals of the whole
// selection.
func exerciseAIOperations(t *testing.T, open Opener) {
	ctx := context.Background()
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}

	t.Run("Keys", func(t *testing.T) {
		db, _ := fresh(t, open)
		k := ai.SealedKey{Environment: access.Test, Ref: "openai", Sealed: []byte{0, 1, 2, 255}, Fingerprint: "abcdef012345", UpdatedAt: Epoch}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AIProviderKeyPut(ctx, k) }); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().AIProviderKeyGet(ctx, access.Test, "openai")
		if err != nil || !cmp.Equal(got, k) {
			t.Fatalf("key: %v\n%s", err, cmp.Diff(k, got))
		}
		if _, err := db.Read().AIProviderKeyGet(ctx, access.Live, "openai"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("other environment: %v", err)
		}
		k.Sealed, k.Fingerprint = []byte{9}, "ffffffffffff"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AIProviderKeyPut(ctx, k) }); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Read().AIProviderKeyGet(ctx, access.Test, "openai"); !cmp.Equal(got, k) {
			t.Fatalf("replaced key: %s", cmp.Diff(k, got))
		}
	})

	t.Run("Operations", func(t *testing.T) {
		db, clock := fresh(t, open)
		op := func(id, user, key string) ai.Operation {
			return ai.Operation{ID: id, Scope: sc, CreatedByUserID: user, Endpoint: ai.EndpointChat, Task: ai.TaskChat, Mode: ai.ModeText,
				IdempotencyKey: key, RequestHash: "hash-" + key, Status: ai.OpRunning, Routing: policy.Ref{ID: ai.PolicyRouting, Version: 2, Hash: "h"},
				Reason: ai.ReasonPrimary, ModelID: "m", ProviderID: "p", Attempts: []ai.CallAttempt{}, CreditsReserved: 7,
				Pricing: policy.Ref{ID: ai.PolicyCredits, Version: 1, Hash: "p"}, Version: 1, DeadlineAt: Epoch.Add(6e11), CreatedAt: Epoch, UpdatedAt: Epoch}
		}
		a, b, c := op("aiop_01", "usr_1", "k1"), op("aiop_02", "usr_2", ""), op("aiop_03", "usr_1", "")
		other := op("aiop_04", "usr_1", "k1")
		other.Scope.Environment = access.Live
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, o := range []ai.Operation{a, b, c, other} {
				if ok, err := tx.AIOperationInsert(ctx, o); err != nil || !ok {
					return fmt.Errorf("insert %s: %v %v", o.ID, ok, err)
				}
			}
			dup := op("aiop_05", "usr_1", "k1")
			if ok, err := tx.AIOperationInsert(ctx, dup); err != nil || ok {
				return fmt.Errorf("duplicate key: %v %v", ok, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().AIOperationByKey(ctx, sc, ai.EndpointChat, "k1")
		if err != nil || !cmp.Equal(got, a) {
			t.Fatalf("by key: %v\n%s", err, cmp.Diff(a, got))
		}
		if _, err := db.Read().AIOperationByKey(ctx, sc, ai.EndpointComplete, "k1"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("other endpoint: %v", err)
		}
		if _, err := db.Read().AIOperationGet(ctx, access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}, a.ID); !fault.Is(err, fault.NotFound) {
			t.Fatalf("other workspace: %v", err)
		}
		clock.Advance(1e9)
		settled, now := int64(3), clock.Now()
		next := a
		next.Status, next.UpstreamModel, next.Finish, next.InputUnits, next.OutputUnits = ai.OpCompleted, "m-2026", ai.FinishCompleted, 40, 12
		next.Attempts = []ai.CallAttempt{{Model: "m", Provider: "p", Outcome: ai.OutcomeRateLimit, Code: "RATE_LIMITED"}, {Model: "m", Provider: "p", Outcome: ai.OutcomeSuccess, LatencyMillis: 9}}
		next.UsageSource, next.CreditsSettled, next.LatencyMillis, next.Version, next.UpdatedAt, next.EndedAt = ai.UsageReported, &settled, 1000, 2, now, &now
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.AIOperationLock(ctx, a.ID); err != nil {
				return err
			}
			return tx.AIOperationUpdate(ctx, next)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AIOperationUpdate(ctx, next) }); !fault.Is(err, fault.Conflict) {
			t.Fatalf("stale update: %v", err)
		}
		if got, _ := db.Read().AIOperationGet(ctx, sc, a.ID); !cmp.Equal(got, next) {
			t.Fatalf("updated: %s", cmp.Diff(next, got))
		}
		list, err := db.Read().AIOperationList(ctx, ai.UsageQuery{Scope: sc, Limit: 10})
		if err != nil || len(list) != 3 || list[0].ID != c.ID || list[2].ID != a.ID {
			t.Fatalf("list: %v %v", list, err)
		}
		list, _ = db.Read().AIOperationList(ctx, ai.UsageQuery{Scope: sc, UserID: "usr_1", Before: c.ID, Limit: 10})
		if len(list) != 1 || list[0].ID != a.ID {
			t.Fatalf("own page: %v", list)
		}
		tot, err := db.Read().AIUsageTotals(ctx, ai.UsageQuery{Scope: sc, UserID: "usr_1"})
		want := ai.UsageTotals{Operations: 2, Completed: 1, InputUnits: 40, OutputUnits: 12, CreditsReserved: 14, CreditsSettled: 3}
		if err != nil || tot != want {
			t.Fatalf("totals %+v %v, want %+v", tot, err, want)
		}
	})
}
