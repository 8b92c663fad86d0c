package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/web3/x402"
)

// x402Settlement is a claimed settlement of ws_1 in test.
func x402Settlement(id, key, message string, at time.Time) x402.Settlement {
	at = at.UTC()
	return x402.Settlement{ID: id, Scope: access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test},
		Principal: "key:key_1", IdempotencyKey: key, PayloadHash: "p-" + message, MessageHash: message, ResourceID: "sound-analysis",
		Network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Asset: testAddress(5).String(), PayTo: testAddress(6).String(),
		Amount: 18_446_744_073_709_551_615, Payer: testAddress(7).String(), Payload: []byte(`{"x402Version":2}`),
		Requirements: []byte(`{"scheme":"exact"}`), LastValidBlockHeight: 1<<63 - 1, Attempts: 1, State: x402.StateSubmitting,
		Version: 1, CreatedAt: at, UpdatedAt: at}
}

func exerciseX402(t *testing.T, open Opener) {
	ctx := context.Background()
	ws1 := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	ws2 := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}
	live1 := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}

	t.Run("SettlementsClaimOnceByTransactionAndKey", func(t *testing.T) {
		db, _ := fresh(t, open)
		s := x402Settlement("x4s_1", "key-1", "m1", Epoch)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402SettlementInsert(ctx, s) }); err != nil {
			t.Fatal(err)
		}
		for name, dup := range map[string]x402.Settlement{
			"the same transaction under another key":      x402Settlement("x4s_2", "key-2", "m1", Epoch),
			"the same transaction from another workspace": func() x402.Settlement { d := x402Settlement("x4s_3", "key-1", "m1", Epoch); d.Scope = ws2; return d }(),
			"another transaction under the same key":      x402Settlement("x4s_4", "key-1", "m2", Epoch),
			"the same id":                                 x402Settlement("x4s_1", "key-5", "m5", Epoch),
		} {
			err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402SettlementInsert(ctx, dup) })
			if !fault.Is(err, fault.Conflict) {
				t.Errorf("%s: %v, want CONFLICT", name, err)
			}
		}
		other := x402Settlement("x4s_6", "key-1", "m6", Epoch)
		other.Scope = live1 // the same key in the other environment is another request
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402SettlementInsert(ctx, other) }); err != nil {
			t.Fatalf("the same key in live: %v", err)
		}
		read := db.Read()
		for name, get := range map[string]func() (x402.Settlement, error){
			"by id":      func() (x402.Settlement, error) { return read.X402Settlement(ctx, "x4s_1") },
			"by key":     func() (x402.Settlement, error) { return read.X402SettlementByKey(ctx, ws1, "key-1") },
			"by message": func() (x402.Settlement, error) { return read.X402SettlementByMessage(ctx, "m1") },
		} {
			got, err := get()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if diff := cmp.Diff(s, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		}
		if _, err := read.X402SettlementByKey(ctx, ws2, "key-1"); !fault.Is(err, fault.NotFound) {
			t.Errorf("another workspace's key: %v", err)
		}
		if _, err := read.X402SettlementByMessage(ctx, "m9"); !fault.Is(err, fault.NotFound) {
			t.Errorf("an unknown transaction: %v", err)
		}
	})

	t.Run("SettlementUpdateIsCompareAndSet", func(t *testing.T) {
		db, clock := fresh(t, open)
		s := x402Settlement("x4s_1", "key-1", "m1", Epoch)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402SettlementInsert(ctx, s) }); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		next := s
		next.State, next.Signature, next.Slot, next.Attempts, next.Version, next.UpdatedAt = x402.StateSettled, "5sig", 97, 2, 2, Epoch.Add(time.Second)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402SettlementUpdate(ctx, next, 1) }); err != nil {
			t.Fatal(err)
		}
		stale := s
		stale.State, stale.ErrorReason, stale.Version = x402.StateFailed, "late", 2
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402SettlementUpdate(ctx, stale, 1) }); !fault.Is(err, fault.Conflict) {
			t.Fatalf("a stale update: %v, want CONFLICT", err)
		}
		got, err := db.Read().X402Settlement(ctx, "x4s_1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(next, got); diff != "" {
			t.Errorf("after the update (-want +got):\n%s", diff)
		}
	})

	t.Run("GrantsAreSpentOnceWithinTheirScope", func(t *testing.T) {
		db, clock := fresh(t, open)
		var grants []x402.Grant
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i, id := range []string{"x4g_a", "x4g_b"} {
				s := x402Settlement("x4s_"+id, "key-"+id, "m-"+id, Epoch)
				if err := tx.X402SettlementInsert(ctx, s); err != nil {
					return err
				}
				g := x402.Grant{ID: id, Scope: ws1, ResourceID: "sound-analysis", Kind: x402.KindSoundAnalysis, SettlementID: s.ID,
					State: x402.GrantAvailable, CreatedAt: Epoch.Add(time.Duration(i) * time.Second)}
				if err := tx.X402GrantInsert(ctx, g); err != nil {
					return err
				}
				grants = append(grants, g)
			}
			second := grants[0]
			second.ID = "x4g_c"
			if err := tx.X402GrantInsert(ctx, second); !fault.Is(err, fault.Conflict) {
				t.Errorf("a second grant of one settlement: %v, want CONFLICT", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		read := db.Read()
		if g, err := read.X402GrantAvailable(ctx, ws1, "sound-analysis"); err != nil || g.ID != "x4g_a" {
			t.Fatalf("the oldest available grant: %+v, %v", g, err)
		}
		if g, err := read.X402GrantBySettlement(ctx, "x4s_x4g_b"); err != nil || g.ID != "x4g_b" {
			t.Fatalf("by settlement: %+v, %v", g, err)
		}
		for _, sc := range []access.Scope{ws2, live1} {
			if _, err := read.X402Grant(ctx, sc, "x4g_a"); !fault.Is(err, fault.NotFound) {
				t.Errorf("grant read from %+v: %v", sc, err)
			}
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402GrantConsume(ctx, sc, "x4g_a", "x") }); !fault.Is(err, fault.NotFound) {
				t.Errorf("grant spent from %+v: %v", sc, err)
			}
		}
		clock.Advance(time.Minute)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402GrantConsume(ctx, ws1, "x4g_a", "sound_operation:snd_1") }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402GrantConsume(ctx, ws1, "x4g_a", "sound_operation:snd_2") }); !fault.Is(err, fault.Conflict) {
			t.Fatalf("spent twice: %v, want CONFLICT", err)
		}
		got, err := read.X402Grant(ctx, ws1, "x4g_a")
		if err != nil {
			t.Fatal(err)
		}
		want := grants[0]
		at := Epoch.Add(time.Minute)
		want.State, want.UsedBy, want.ConsumedAt = x402.GrantConsumed, "sound_operation:snd_1", &at
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the spent grant (-want +got):\n%s", diff)
		}
		if g, err := read.X402GrantAvailable(ctx, ws1, "sound-analysis"); err != nil || g.ID != "x4g_b" {
			t.Fatalf("the next available grant: %+v, %v", g, err)
		}
	})

	t.Run("ChecksReplaceEachOther", func(t *testing.T) {
		db, _ := fresh(t, open)
		if _, err := db.Read().X402Check(ctx, access.Test); !fault.Is(err, fault.NotFound) {
			t.Fatalf("before any check: %v", err)
		}
		first := x402.Check{Environment: access.Test, ConfigHash: "h1", Reason: x402.CheckFeePayerUnfunded, Network: "solana:a", CheckedAt: Epoch}
		second := x402.Check{Environment: access.Test, ConfigHash: "h2", Passed: true, Network: "solana:a", FeePayer: testAddress(9).String(),
			TokenProgram: testAddress(10).String(), CheckedAt: Epoch.Add(time.Hour)}
		for _, c := range []x402.Check{first, second} {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.X402CheckSave(ctx, c) }); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.Read().X402Check(ctx, access.Test)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(second, got); diff != "" {
			t.Errorf("the newest check (-want +got):\n%s", diff)
		}
		if _, err := db.Read().X402Check(ctx, access.Live); !fault.Is(err, fault.NotFound) {
			t.Errorf("live has a check: %v", err)
		}
	})
}
