package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
)

// exerciseMarketplace covers marketplace.Store and asset.ProvenanceWriter:
// a provenance record round-trips whole with its parents in order and
// unknown facts unknown; a second record of an asset is CONFLICT; a read
// is confined to the asset's environment; no workspace is entitled to an
// asset yet; an offer round-trips, is read only in its own scope, a second
// insert of an id is CONFLICT, and its state write is a compare-and-set
// on the version.
func exerciseMarketplace(t *testing.T, open Opener) {
	ctx := context.Background()
	scope := asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"}
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	insertAsset := func(tx *store.Tx, sha string, origin asset.Origin) (asset.Asset, error) {
		return tx.AssetInsert(ctx, asset.Asset{Scope: scope, MediaType: "audio/wav", Size: 10, SHA256: sha, Origin: origin,
			CreatedBy: asset.Creator{UserID: "usr_1"}})
	}

	t.Run("Provenance", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		var in, out asset.Asset
		var want asset.Provenance
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if in, err = insertAsset(tx, fmt.Sprintf("%064x", 1), asset.Uploaded); err != nil {
				return err
			}
			if out, err = insertAsset(tx, fmt.Sprintf("%064x", 2), asset.Derived); err != nil {
				return err
			}
			up := asset.Provenance{AssetID: in.ID, Scope: scope, Origin: asset.Uploaded, OutputSHA256: in.SHA256,
				Basis: asset.BasisCreation, RecordedAt: Epoch}
			if err := tx.AssetProvenanceInsert(ctx, up); err != nil {
				return err
			}
			want = asset.Provenance{AssetID: out.ID, Scope: scope, Origin: asset.Derived, CreatorUserID: "usr_1", Provider: "P",
				Model: "m", OperationID: "snd_1", OutputSHA256: out.SHA256, Basis: asset.BasisCreation, RecordedAt: Epoch,
				Parents: []asset.Parent{{AssetID: in.ID, SHA256: in.SHA256}, {AssetID: "ast_gone"}}}
			if err := tx.AssetProvenanceInsert(ctx, want); err != nil {
				return err
			}
			if err := tx.AssetProvenanceInsert(ctx, want); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("a second record: %v, want CONFLICT", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().AssetProvenanceGet(ctx, access.Test, out.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("round trip (-stored +read):\n%s", d)
		}
		got, err = db.Read().AssetProvenanceGet(ctx, access.Test, in.ID)
		if err != nil || got.CreatorUserID != "" || got.Provider != "" || got.Parents != nil || got.Origin != asset.Uploaded {
			t.Errorf("an upload's record = %+v, %v", got, err)
		}
		if _, err := db.Read().AssetProvenanceGet(ctx, access.Live, out.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("read from the other environment: %v, want NOT_FOUND", err)
		}
		ok, err := db.Read().EntitledToAsset(ctx, access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}, out.ID)
		if err != nil || ok {
			t.Errorf("EntitledToAsset = %v, %v; no order has issued an entitlement", ok, err)
		}
	})

	t.Run("Offers", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		var o marketplace.Offer
		err := db.InTx(ctx, func(tx *store.Tx) error {
			a, err := insertAsset(tx, fmt.Sprintf("%064x", 3), asset.Uploaded)
			if err != nil {
				return err
			}
			now := tx.Now()
			o = marketplace.Offer{ID: tx.NewID(marketplace.OfferPrefix), Scope: sc, AssetID: a.ID,
				Rights: policy.Ref{ID: "rights.ws_1.standard", Version: 2, Hash: fmt.Sprintf("%064x", 9)}, Name: "Sync",
				Kind: marketplace.KindExclusive, State: marketplace.StateActive, Version: 1, CreatedByUserID: "usr_1",
				CreatedAt: now, UpdatedAt: now}
			if err := tx.LicenseOfferInsert(ctx, o); err != nil {
				return err
			}
			if err := tx.LicenseOfferInsert(ctx, o); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("a second insert of an id: %v, want CONFLICT", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().LicenseOfferGet(ctx, sc, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(o, got); d != "" {
			t.Errorf("round trip (-stored +read):\n%s", d)
		}
		for _, other := range []access.Scope{{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test},
			{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}} {
			if _, err := db.Read().LicenseOfferGet(ctx, other, o.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("read from %+v: %v, want NOT_FOUND", other, err)
			}
		}
		clock.Advance(time.Second)
		w := o
		w.State, w.Version, w.UpdatedAt = marketplace.StateWithdrawn, 2, clock.Now()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.LicenseOfferSetState(ctx, w) }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.LicenseOfferSetState(ctx, w) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("a write from a stale read: %v, want CONFLICT", err)
		}
		got, err = db.Read().LicenseOfferGet(ctx, sc, o.ID)
		if err != nil || got.State != marketplace.StateWithdrawn || got.Version != 2 || !got.UpdatedAt.Equal(w.UpdatedAt) ||
			got.Rights != o.Rights || !got.CreatedAt.Equal(o.CreatedAt) {
			t.Errorf("after the withdrawal: %+v, %v", got, err)
		}
	})
}

// marketplaceVersion is the migration that adds asset provenance and
// license offers. It is 33, the next free number; the platform's
// numbering reserves 34 for it, and it moves there when migration 33
// lands.
const marketplaceVersion = 35

// ProvenanceBackfill checks the backfill of the marketplace migration on
// one dialect (arguments as AuditEnvironmentBackfill's): every asset
// stored before it gets a record built from what its rows say (an
// upload's origin and creator; a generated track's operation, provider of
// the operation's current attempt and model of its request; a sound
// output's operation and its input as parent with the input's hash), and
// what they do not say stays unknown.
func ProvenanceBackfill(t *testing.T, old *bun.DB, ms []store.Migration, reopen func(t *testing.T) *store.DB) {
	t.Helper()
	ctx := context.Background()
	exec := migrateBefore(t, old, ms, marketplaceVersion)
	exec(`INSERT INTO tenants (id, name, created_at) VALUES ('ten_1', 'One', ?)`, Epoch)
	exec(`INSERT INTO workspaces (id, tenant_id, name, state, created_at) VALUES ('ws_1', 'ten_1', 'One', 'active', ?)`, Epoch)
	shaOf := func(i int) string { return fmt.Sprintf("%064x", i) }
	for i, a := range []struct{ id, origin, user string }{
		{"ast_up", "uploaded", "usr_1"}, {"ast_gen1", "generated", "usr_2"}, {"ast_gen2", "generated", "usr_2"},
		{"ast_stem", "derived", "usr_1"}, {"ast_anon", "uploaded", ""}, {"ast_orphan", "generated", ""},
	} {
		exec(`INSERT INTO assets (id, tenant_id, workspace_id, environment, media_type, size_bytes, sha256, origin, created_by_user_id,
			created_at) VALUES (?, 'ten_1', 'ws_1', 'test', 'audio/wav', 10, ?, ?, ?, ?)`, a.id, shaOf(i+1), a.origin, a.user, Epoch)
	}
	exec(`INSERT INTO generation_operations (id, tenant_id, workspace_id, environment, created_by_user_id, status, request,
		billing_mode, credits_reserved, byok_credits, pricing, routes, snapshot, version, attempts, current_attempt_id, deadline_at,
		created_at, updated_at) VALUES ('op_1', 'ten_1', 'ws_1', 'test', 'usr_2', 'completed', '{"prompt":"p","instrumental":false,"model":"v5"}',
		'PLATFORM_MANAGED', 15, 0, '{}', '[]', '{}', 3, 2, 'att_2', ?, ?, ?)`, Epoch, Epoch, Epoch)
	for i, a := range []struct{ id, provider string }{{"att_1", "MUSIC_PROVIDER_A"}, {"att_2", "MUSIC_PROVIDER_B"}} {
		exec(`INSERT INTO generation_attempts (id, operation_id, tenant_id, workspace_id, environment, number, provider, ownership,
			token_digest, state, created_at, updated_at) VALUES (?, 'op_1', 'ten_1', 'ws_1', 'test', ?, ?, 'PLATFORM_MANAGED', ?,
			'accepted', ?, ?)`, a.id, i+1, a.provider, "digest-"+a.id, Epoch, Epoch)
	}
	for slot, id := range []string{"ast_gen1", "ast_gen2"} {
		exec(`INSERT INTO generation_outputs (operation_id, slot, asset_id, provider_track_id, created_at) VALUES ('op_1', ?, ?, ?, ?)`,
			slot, id, fmt.Sprintf("trk_%d", slot), Epoch)
	}
	exec(`INSERT INTO sound_operations (id, tenant_id, workspace_id, environment, created_by_user_id, type, status, stage, progress,
		input_asset_id, request, capabilities, version, deadline_at, created_at, updated_at) VALUES ('snd_1', 'ten_1', 'ws_1', 'test',
		'usr_1', 'stems', 'completed', 'finished', 100, 'ast_up', '{}', '{}', 5, ?, ?, ?)`, Epoch, Epoch, Epoch)
	exec(`INSERT INTO sound_outputs (operation_id, output, asset_id, parent_asset_id, format, sample_rate, bit_depth, created_at)
		VALUES ('snd_1', 'bass', 'ast_stem', 'ast_up', 'wav', 48000, 24, ?)`, Epoch)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := reopen(t)
	want := map[string]asset.Provenance{
		"ast_up":   {Origin: asset.Uploaded, CreatorUserID: "usr_1"},
		"ast_gen1": {Origin: asset.Generated, CreatorUserID: "usr_2", Provider: "MUSIC_PROVIDER_B", Model: "v5", OperationID: "op_1"},
		"ast_gen2": {Origin: asset.Generated, CreatorUserID: "usr_2", Provider: "MUSIC_PROVIDER_B", Model: "v5", OperationID: "op_1"},
		"ast_stem": {Origin: asset.Derived, CreatorUserID: "usr_1", OperationID: "snd_1",
			Parents: []asset.Parent{{AssetID: "ast_up", SHA256: shaOf(1)}}},
		"ast_anon":   {Origin: asset.Uploaded},
		"ast_orphan": {Origin: asset.Generated},
	}
	for i, id := range []string{"ast_up", "ast_gen1", "ast_gen2", "ast_stem", "ast_anon", "ast_orphan"} {
		w := want[id]
		w.AssetID, w.Scope, w.OutputSHA256, w.Basis = id, asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"},
			shaOf(i+1), asset.BasisBackfill
		got, err := db.Read().AssetProvenanceGet(ctx, access.Test, id)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("%s backfilled (-want +got):\n%s", id, d)
		}
	}
}
