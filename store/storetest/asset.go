package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseAssets covers asset.Store: insert and scoped get, isolation by
// workspace, environment and tenant, the by-hash reference check, and the
// storage counter's quota, also under concurrent adders.
func exerciseAssets(t *testing.T, open Opener) {
	ctx := context.Background()
	seed := seedWorkspaces
	scope := asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"}
	sha := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	rate, ch, bits, dur := 48000, 2, 24, int64(1500)

	t.Run("InsertGetScoped", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db)
		var in asset.Asset
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			in, err = tx.AssetInsert(ctx, asset.Asset{Scope: scope, MediaType: "audio/wav", Size: 1234, SHA256: sha,
				DurationMs: &dur, SampleRate: &rate, Channels: &ch, BitDepth: &bits, Origin: asset.Uploaded,
				Filename: "take 1.wav", CreatedBy: asset.Creator{UserID: "usr_1", KeyID: "key_1"}})
			return err
		})
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		if len(in.ID) < 5 || in.ID[:4] != "ast_" || !in.CreatedAt.Equal(Epoch) {
			t.Fatalf("inserted = %+v", in)
		}
		got, err := db.Read().AssetGet(ctx, scope, in.ID)
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if d := cmp.Diff(in, got); d != "" {
			t.Fatalf("get (-inserted +got):\n%s", d)
		}
		// Unknown values stay unknown (NULL), not zero.
		var mp3 asset.Asset
		err = db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			mp3, err = tx.AssetInsert(ctx, asset.Asset{Scope: scope, MediaType: "audio/mpeg", Size: 10, SHA256: sha,
				SampleRate: &rate, Channels: &ch, DurationMs: &dur, DurationEstimated: true, Origin: asset.Generated})
			return err
		})
		if err != nil {
			t.Fatalf("insert mp3: %v", err)
		}
		got, err = db.Read().AssetGet(ctx, scope, mp3.ID)
		if err != nil || got.BitDepth != nil || !got.DurationEstimated || got.Origin != asset.Generated {
			t.Fatalf("mp3 = %+v, %v", got, err)
		}
		if n, err := db.Read().AssetCount(ctx, "ws_1"); err != nil || n != 2 {
			t.Fatalf("count = %d, %v", n, err)
		}
	})

	t.Run("OtherScopeNotFound", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db)
		var a asset.Asset
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			a, err = tx.AssetInsert(ctx, asset.Asset{Scope: scope, MediaType: "audio/flac", Size: 1, SHA256: sha, Origin: asset.Uploaded})
			return err
		})
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		for name, s := range map[string]asset.Scope{
			"workspace":   {TenantID: "ten_1", WorkspaceID: "ws_2", Environment: "test"},
			"environment": {TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "live"},
			"tenant":      {TenantID: "ten_2", WorkspaceID: "ws_1", Environment: "test"},
		} {
			if _, err := db.Read().AssetGet(ctx, s, a.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("%s: get = %v, want NOT_FOUND", name, err)
			}
		}
		if _, err := db.Read().AssetGet(ctx, scope, "ast_missing"); !fault.Is(err, fault.NotFound) {
			t.Errorf("missing id: %v, want NOT_FOUND", err)
		}
	})

	t.Run("ReferencedByHash", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db)
		if ref, err := db.Read().AssetReferenced(ctx, sha); err != nil || ref {
			t.Fatalf("before insert: %v, %v", ref, err)
		}
		// A rolled-back insert references nothing.
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.AssetInsert(ctx, asset.Asset{Scope: scope, MediaType: "audio/wav", Size: 1, SHA256: sha, Origin: asset.Uploaded}); err != nil {
				return err
			}
			return errStop
		})
		if ref, err := db.Read().AssetReferenced(ctx, sha); err != nil || ref {
			t.Fatalf("after rollback: %v, %v", ref, err)
		}
		// Any scope's row counts: blobs are shared across tenants.
		other := asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: "live"}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.AssetInsert(ctx, asset.Asset{Scope: other, MediaType: "audio/wav", Size: 1, SHA256: sha, Origin: asset.Uploaded})
			return err
		})
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		if ref, err := db.Read().AssetReferenced(ctx, sha); err != nil || !ref {
			t.Fatalf("after insert: %v, %v", ref, err)
		}
	})

	t.Run("StorageQuota", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db)
		add := func(s asset.Scope, bytes, quota int64) (int64, bool) {
			t.Helper()
			var total int64
			var ok bool
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				total, ok, err = tx.AssetStorageAdd(ctx, s, bytes, quota)
				return err
			}); err != nil {
				t.Fatalf("add: %v", err)
			}
			return total, ok
		}
		if used, err := db.Read().AssetStorageUsed(ctx, scope); err != nil || used != 0 {
			t.Fatalf("before any asset: %d, %v", used, err)
		}
		if total, ok := add(scope, 600, 1000); !ok || total != 600 {
			t.Fatalf("first add = %d, %v", total, ok)
		}
		if total, ok := add(scope, 401, 1000); ok || total != 600 {
			t.Fatalf("past the quota = %d, %v", total, ok)
		}
		if total, ok := add(scope, 400, 1000); !ok || total != 1000 {
			t.Fatalf("up to the quota = %d, %v", total, ok)
		}
		if total, ok := add(scope, 5000, 0); !ok || total != 6000 {
			t.Fatalf("no quota = %d, %v", total, ok)
		}
		// Each workspace and environment has its own counter.
		live := asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "live"}
		if total, ok := add(live, 1000, 1000); !ok || total != 1000 {
			t.Fatalf("live = %d, %v", total, ok)
		}
		// A rolled-back add counts nothing.
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			if _, _, err := tx.AssetStorageAdd(ctx, live, 7, 0); err != nil {
				return err
			}
			return errStop
		})
		if used, err := db.Read().AssetStorageUsed(ctx, live); err != nil || used != 1000 {
			t.Fatalf("after a rollback: %d, %v", used, err)
		}
	})

	t.Run("StorageQuotaConcurrent", func(t *testing.T) {
		db, _ := fresh(t, open)
		seed(t, db)
		other := asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: "test"}
		// Eight adders of 300 bytes under a 1000-byte quota: exactly three
		// pass, whatever the interleaving.
		var wg sync.WaitGroup
		var mu sync.Mutex
		passed := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					_, ok, err := tx.AssetStorageAdd(ctx, other, 300, 1000)
					if ok {
						mu.Lock()
						passed++
						mu.Unlock()
					}
					return err
				})
				if err != nil {
					t.Errorf("add: %v", err)
				}
			}()
		}
		wg.Wait()
		used, err := db.Read().AssetStorageUsed(ctx, other)
		if err != nil || passed != 3 || used != 900 {
			t.Fatalf("%d adders passed, %d bytes stored (%v); want 3 and 900", passed, used, err)
		}
	})
}
