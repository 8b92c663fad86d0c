package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/store"
)

// exerciseCredentials covers credential.Store: insert and scoped reads with
// the newest balance snapshot, isolation by workspace and environment,
// keyset listing, health updates and soft deletion.
func exerciseCredentials(t *testing.T, open Opener) {
	ctx := context.Background()
	seed := seedWorkspaces
	scope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	mk := func(tx *store.Tx, cb []byte) credential.Credential {
		now := tx.Now()
		return credential.Credential{ID: tx.NewID(credential.IDPrefix), Scope: scope, Provider: generation.ProviderB,
			Ownership: credential.CustomerBYOK, Label: "studio", Fingerprint: "0123456789ab", Last4: "wxyz",
			SealedKey: []byte{0, 1, 2, 0xff}, SealedCallbackKey: cb, Health: credential.Valid, CheckedAt: now,
			CreatedByUserID: "usr_1", CreatedAt: now, UpdatedAt: now}
	}

	// Every change to which credentials a workspace can use raises its
	// authority version, which every request reads with its credential
	// (the generation service caches usable routes under it); a balance
	// snapshot does not change usability.
	t.Run("ChangesRaiseAuthzVersion", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db)
		version := func() int64 {
			t.Helper()
			v, err := db.Read().AuthzVersion(ctx, scope.WorkspaceID)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		step := func(what string, raises bool, fn func(tx *store.Tx) error) {
			t.Helper()
			before := version()
			if err := db.InTx(ctx, fn); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if after := version(); (after > before) != raises {
				t.Errorf("%s: authz version %d -> %d, want raised=%v", what, before, after, raises)
			}
		}
		var c credential.Credential
		step("insert", true, func(tx *store.Tx) error {
			c = mk(tx, nil)
			return tx.ProviderCredentialInsert(ctx, c)
		})
		step("balance snapshot", false, func(tx *store.Tx) error {
			return tx.ProviderBalanceInsert(ctx, credential.Snapshot{ID: tx.NewID(credential.SnapshotPrefix), CredentialID: c.ID,
				Scope: scope, Provider: generation.ProviderB, Credits: 5, ObservedAt: tx.Now()})
		})
		step("health change", true, func(tx *store.Tx) error {
			c.Health, c.UpdatedAt = credential.Invalid, tx.Now()
			return tx.ProviderCredentialUpdate(ctx, c)
		})
		step("deletion", true, func(tx *store.Tx) error {
			now := tx.Now()
			c.DeletedAt, c.UpdatedAt = &now, now
			return tx.ProviderCredentialUpdate(ctx, c)
		})
	})

	// Observations are kept per provider route and environment, and an
	// older one never replaces a newer one (two workers finishing out of
	// order).
	t.Run("ProviderObservations", func(t *testing.T) {
		db, _ := fresh(t, open)
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		observe := func(o credential.Observation) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ProviderObserve(ctx, o) }); err != nil {
				t.Fatal(err)
			}
		}
		read := func(env access.Environment) []credential.Observation {
			t.Helper()
			obs, err := db.Read().ProviderObservations(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			return obs
		}
		if obs := read(access.Test); len(obs) != 0 {
			t.Fatalf("before any call: %+v", obs)
		}
		up := credential.Observation{Provider: generation.ProviderB, Environment: access.Test, Reach: credential.ReachAvailable, ObservedAt: at}
		down := credential.Observation{Provider: generation.ProviderB, Environment: access.Test, Reach: credential.ReachUnreachable,
			Code: fault.ProviderTimeout, ObservedAt: at.Add(time.Second)}
		observe(down)
		observe(up) // older: ignored
		observe(credential.Observation{Provider: generation.ProviderA, Environment: access.Live, Reach: credential.ReachAvailable, ObservedAt: at})
		if diff := cmp.Diff([]credential.Observation{down}, read(access.Test)); diff != "" {
			t.Fatalf("test observations (-want +got):\n%s", diff)
		}
		up.ObservedAt = at.Add(2 * time.Second)
		observe(up)
		if diff := cmp.Diff([]credential.Observation{up}, read(access.Test)); diff != "" {
			t.Fatalf("after a newer call (-want +got):\n%s", diff)
		}
		if obs := read(access.Live); len(obs) != 1 || obs[0].Provider != generation.ProviderA {
			t.Fatalf("live observations = %+v", obs)
		}
	})

	t.Run("InsertGetSnapshots", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db)
		var c credential.Credential
		err := db.InTx(ctx, func(tx *store.Tx) error {
			c = mk(tx, []byte("sealed-callback"))
			return tx.ProviderCredentialInsert(ctx, c)
		})
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		got, err := db.Read().ProviderCredentialGet(ctx, scope, c.ID)
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if d := cmp.Diff(c, got); d != "" {
			t.Fatalf("get (-inserted +got):\n%s", d)
		}
		// The newest snapshot written comes with the credential, even within
		// one clock tick.
		var last credential.Snapshot
		for i, credits := range []int64{100, 85, 70} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				last = credential.Snapshot{ID: tx.NewID(credential.SnapshotPrefix), CredentialID: c.ID, Scope: scope,
					Provider: generation.ProviderB, Credits: credits, ExtraCredits: int64(i), ObservedAt: tx.Now()}
				return tx.ProviderBalanceInsert(ctx, last)
			})
			if err != nil {
				t.Fatalf("snapshot: %v", err)
			}
		}
		got, err = db.Read().ProviderCredentialGet(ctx, scope, c.ID)
		if err != nil || got.Balance == nil {
			t.Fatalf("get with balance: %+v, %v", got, err)
		}
		if d := cmp.Diff(last, *got.Balance); d != "" {
			t.Fatalf("balance (-want +got):\n%s", d)
		}
		// No callback key stays nil.
		var bare credential.Credential
		if err := db.InTx(ctx, func(tx *store.Tx) error { bare = mk(tx, nil); return tx.ProviderCredentialInsert(ctx, bare) }); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Read().ProviderCredentialGet(ctx, scope, bare.ID); err != nil || got.HasCallbackKey() || got.Balance != nil {
			t.Fatalf("bare = %+v, %v", got, err)
		}
	})

	t.Run("ScopedListUpdateDelete", func(t *testing.T) {
		db, clock := fresh(t, open)
		seed(t, db)
		var ids []string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 3 {
				c := mk(tx, nil)
				ids = append(ids, c.ID)
				if err := tx.ProviderCredentialInsert(ctx, c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []access.Scope{
			{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test},
			{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live},
			{TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Test},
		} {
			if _, err := db.Read().ProviderCredentialGet(ctx, other, ids[0]); !fault.Is(err, fault.NotFound) {
				t.Errorf("get from %+v: %v", other, err)
			}
			if cs, err := db.Read().ProviderCredentialList(ctx, other, "", 10); err != nil || len(cs) != 0 {
				t.Errorf("list from %+v: %d, %v", other, len(cs), err)
			}
		}
		cs, err := db.Read().ProviderCredentialList(ctx, scope, "", 2)
		if err != nil || len(cs) != 2 || cs[0].ID != ids[2] || cs[1].ID != ids[1] {
			t.Fatalf("first page = %v, %v", cs, err)
		}
		cs, err = db.Read().ProviderCredentialList(ctx, scope, ids[1], 2)
		if err != nil || len(cs) != 1 || cs[0].ID != ids[0] {
			t.Fatalf("second page = %v, %v", cs, err)
		}

		c, _ := db.Read().ProviderCredentialGet(ctx, scope, ids[0])
		clock.Advance(time.Hour)
		err = db.InTx(ctx, func(tx *store.Tx) error {
			c.Health, c.CheckedAt, c.UpdatedAt = credential.Invalid, tx.Now(), tx.Now()
			return tx.ProviderCredentialUpdate(ctx, c)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := db.Read().ProviderCredentialGet(ctx, scope, c.ID); err != nil || got.Health != credential.Invalid || !got.CheckedAt.Equal(Epoch.Add(time.Hour)) {
			t.Fatalf("after health update: %+v, %v", got, err)
		}
		// Another scope cannot update it.
		moved := c
		moved.Scope.WorkspaceID = "ws_2"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ProviderCredentialUpdate(ctx, moved) }); !fault.Is(err, fault.NotFound) {
			t.Fatalf("update from another workspace: %v", err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			now := tx.Now()
			c.DeletedAt = &now
			return tx.ProviderCredentialUpdate(ctx, c)
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Read().ProviderCredentialGet(ctx, scope, c.ID); !fault.Is(err, fault.NotFound) {
			t.Fatalf("get deleted: %v", err)
		}
		if cs, err := db.Read().ProviderCredentialList(ctx, scope, "", 10); err != nil || len(cs) != 2 {
			t.Fatalf("list after delete: %d, %v", len(cs), err)
		}
		// A deleted credential stays deleted.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ProviderCredentialUpdate(ctx, c) }); !fault.Is(err, fault.NotFound) {
			t.Fatalf("update deleted: %v", err)
		}
	})
}
