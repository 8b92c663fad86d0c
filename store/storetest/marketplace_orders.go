package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
)

// marketKey is a deterministic address for the suite's listings.
func marketKey(name string) chain.Address {
	return chain.Address(sha256.Sum256([]byte("market:" + name)))
}

// marketFixture is ws_1's asset and offers, made by seedMarket.
type marketFixture struct {
	assetID             string
	offer, exclusiveOff marketplace.Offer
}

// seedMarket stores an asset of ws_1 in test mode with a non-exclusive
// and an exclusive offer.
func seedMarket(t *testing.T, db *store.DB) marketFixture {
	t.Helper()
	ctx := context.Background()
	seedWorkspaces(t, db)
	var f marketFixture
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.AssetInsert(ctx, asset.Asset{Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"},
			MediaType: "audio/wav", Size: 10, SHA256: fmt.Sprintf("%064x", 7), Origin: asset.Uploaded, CreatedBy: asset.Creator{UserID: "usr_1"}})
		if err != nil {
			return err
		}
		f.assetID = a.ID
		for i, k := range []marketplace.Kind{marketplace.KindNonExclusive, marketplace.KindExclusive} {
			o := marketplace.Offer{ID: tx.NewID(marketplace.OfferPrefix), Scope: sc, AssetID: a.ID,
				Rights: policy.Ref{ID: "rights.ws_1.standard", Version: 1, Hash: fmt.Sprintf("%064x", 9)}, Name: "Sync", Kind: k,
				State: marketplace.StateActive, Version: 1, CreatedByUserID: "usr_1", CreatedAt: tx.Now(), UpdatedAt: tx.Now()}
			if err := tx.LicenseOfferInsert(ctx, o); err != nil {
				return err
			}
			if i == 0 {
				f.offer = o
			} else {
				f.exclusiveOff = o
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// exerciseMarketplaceOrders covers the marketplace's listing, order and
// read ports: listing versions are immutable rows of one id, the newest
// read per asset and offer or by id in its environment, a taken version
// (or a first version under another id) is CONFLICT; an order round-trips
// with its snapshot whole, one per intent, moves only by compare-and-set
// on its version, and an exclusive offer holds one live order at a time;
// orders list newest first by side with a cursor; an entitlement is
// issued once per order and answers EntitledToAsset for its holder only;
// feature entitlements come with their sources.
func exerciseMarketplaceOrders(t *testing.T, open Opener) {
	ctx := context.Background()
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	buyer := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}

	t.Run("Listings", func(t *testing.T) {
		db, clock := fresh(t, open)
		f := seedMarket(t, db)
		l := marketplace.Listing{ID: "lst_1", Version: 1, Scope: sc, AssetID: f.assetID, OfferID: f.offer.ID, Title: "Night Drive",
			PriceAtomic: 18_000_000_000_000_000_000, Mint: marketKey("mint"), Decimals: 9, PayoutWallet: marketKey("seller"),
			ContentHash: "h1", CreatedByUserID: "usr_1", CreatedAt: Epoch}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ListingInsert(ctx, l) }); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().ListingCurrent(ctx, sc, f.assetID, f.offer.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(l, got); d != "" {
			t.Errorf("round trip (-stored +read):\n%s", d)
		}
		other := l
		other.ID = "lst_2"
		for name, x := range map[string]marketplace.Listing{"the same version": l, "a first version under another id": other} {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ListingInsert(ctx, x) }); !fault.Is(err, fault.Conflict) {
				t.Errorf("%s: %v, want CONFLICT", name, err)
			}
		}
		clock.Advance(time.Second)
		v2 := l
		v2.Version, v2.PriceAtomic, v2.ContentHash, v2.CreatedAt = 2, 5, "h2", clock.Now()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ListingInsert(ctx, v2) }); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Read().ListingGet(ctx, access.Test, "lst_1"); err != nil || got.Version != 2 || got.PriceAtomic != 5 {
			t.Errorf("ListingGet = %+v, %v; want version 2", got, err)
		}
		if _, err := db.Read().ListingGet(ctx, access.Live, "lst_1"); !fault.Is(err, fault.NotFound) {
			t.Errorf("ListingGet in live: %v, want NOT_FOUND", err)
		}
		if _, err := db.Read().ListingCurrent(ctx, buyer, f.assetID, f.offer.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("ListingCurrent of another workspace: %v, want NOT_FOUND", err)
		}
	})

	order := func(id, intentID string, f marketFixture, exclusive bool) marketplace.Order {
		kind, offer := marketplace.KindNonExclusive, f.offer.ID
		if exclusive {
			kind, offer = marketplace.KindExclusive, f.exclusiveOff.ID
		}
		return marketplace.Order{ID: id, Version: 1, State: marketplace.OrderCreated, IntentID: intentID, Buyer: buyer,
			BuyerUserID: "usr_2", BuyerWallet: marketKey("buyer"), CreatedAt: Epoch, UpdatedAt: Epoch,
			Snapshot: marketplace.Snapshot{ListingID: "lst_1", ListingVersion: 3, ListingHash: "h3", AssetID: f.assetID, Title: "Night Drive",
				Seller: sc, CreatorUserID: "usr_1", PriceAtomic: 25_000_000_000, Mint: marketKey("mint"), Decimals: 9, LicenseID: offer,
				LicenseName: "Sync", LicenseKind: kind, Terms: policy.Ref{ID: "rights.ws_1.standard", Version: 1, Hash: fmt.Sprintf("%064x", 9)},
				FeePolicy: policy.Ref{ID: "fees.marketplace", Version: 2, Hash: "fh"}, FeeBps: 500, MinimumFeeAtomic: "0",
				SellerWallet: marketKey("seller"), SellerNetAtomic: 23_750_000_000, FeeRecipient: marketKey("treasury"),
				PlatformFeeAtomic: 1_250_000_000}}
	}

	t.Run("Orders", func(t *testing.T) {
		db, clock := fresh(t, open)
		f := seedMarket(t, db)
		a := order("ord_01", "txi_a", f, false)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderInsert(ctx, a) }); err != nil {
			t.Fatal(err)
		}
		var got marketplace.Order
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			got, err = tx.OrderLockByIntent(ctx, "txi_a")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(a, got); d != "" {
			t.Errorf("round trip (-stored +read):\n%s", d)
		}
		dup := order("ord_02", "txi_a", f, false)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderInsert(ctx, dup) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("a second order of an intent: %v, want CONFLICT", err)
		}
		clock.Advance(time.Second)
		next := a
		next.State, next.Version, next.EntitlementID, next.UpdatedAt = marketplace.OrderPaymentPending, 3, "ent_x", clock.Now()
		next.Snapshot.Title = "rewritten"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderUpdate(ctx, next, 1) }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderUpdate(ctx, next, 1) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("a write from a stale read: %v, want CONFLICT", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { got, _ = tx.OrderLockByIntent(ctx, "txi_a"); return nil }); err != nil {
			t.Fatal(err)
		}
		if got.State != marketplace.OrderPaymentPending || got.Version != 3 || got.EntitlementID != "ent_x" || got.Snapshot.Title != "Night Drive" {
			t.Errorf("after the update: %+v; the snapshot is never written again", got)
		}

		// An exclusive offer: one live order; another once it expired.
		x1, x2 := order("ord_03", "txi_x1", f, true), order("ord_04", "txi_x2", f, true)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderInsert(ctx, x1) }); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderInsert(ctx, x2) })
		if code, _, d := fault.Public(err); code != fault.Conflict || d["reason"] != marketplace.ReasonExclusiveTaken {
			t.Errorf("a second live order of an exclusive offer: %v", err)
		}
		expired := x1
		expired.State, expired.Version = marketplace.OrderExpired, 2
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderUpdate(ctx, expired, 1) }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.OrderInsert(ctx, x2) }); err != nil {
			t.Errorf("an exclusive offer's order after the live one expired: %v", err)
		}

		// Lists: newest first, by side, with a cursor.
		list := func(s access.Scope, role, before string, limit int) []string {
			t.Helper()
			os, err := db.Read().OrderList(ctx, marketplace.OrderListParams{Scope: s, Role: role, Before: before, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, o := range os {
				ids = append(ids, o.ID)
			}
			return ids
		}
		all := []string{"ord_04", "ord_03", "ord_01"}
		for _, c := range []struct {
			scope        access.Scope
			role, before string
			limit        int
			want         []string
		}{
			{buyer, "", "", 10, all}, {buyer, marketplace.SideBuyer, "", 10, all}, {buyer, marketplace.SideSeller, "", 10, nil},
			{sc, marketplace.SideSeller, "", 10, all}, {sc, marketplace.SideBuyer, "", 10, nil}, {sc, "", "ord_03", 10, []string{"ord_01"}},
			{buyer, "", "", 2, all[:2]}, {access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Live}, "", "", 10, nil},
		} {
			if got := list(c.scope, c.role, c.before, c.limit); !cmp.Equal(got, c.want) {
				t.Errorf("OrderList(%s, %q, %q, %d) = %v, want %v", c.scope.WorkspaceID, c.role, c.before, c.limit, got, c.want)
			}
		}
		// One order: its buyer and its seller read it; any other
		// workspace or environment, or an unknown id, is NOT_FOUND.
		for _, s := range []access.Scope{buyer, sc} {
			if got, err := db.Read().OrderGet(ctx, s, "ord_01"); err != nil || got.ID != "ord_01" || got.State != marketplace.OrderPaymentPending {
				t.Errorf("OrderGet(%s, ord_01) = %+v, %v", s.WorkspaceID, got, err)
			}
		}
		otherEnv := buyer
		otherEnv.Environment = access.Live
		for _, c := range []struct {
			scope access.Scope
			id    string
		}{{access.Scope{TenantID: "ten_9", WorkspaceID: buyer.WorkspaceID, Environment: buyer.Environment}, "ord_01"}, {otherEnv, "ord_01"},
			{buyer, "ord_99"}} {
			if _, err := db.Read().OrderGet(ctx, c.scope, c.id); !fault.Is(err, fault.NotFound) {
				t.Errorf("OrderGet(%+v, %s) = %v, want NOT_FOUND", c.scope, c.id, err)
			}
		}
	})

	t.Run("Entitlements", func(t *testing.T) {
		db, _ := fresh(t, open)
		f := seedMarket(t, db)
		o := order("ord_01", "txi_a", f, false)
		e := marketplace.Entitlement{ID: "ent_01", Holder: buyer, AssetID: f.assetID, Seller: sc, LicenseID: f.offer.ID,
			Terms: o.Snapshot.Terms, OrderID: o.ID, IntentID: o.IntentID, CreatedAt: Epoch}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.OrderInsert(ctx, o); err != nil {
				return err
			}
			if err := tx.EntitlementInsert(ctx, e); err != nil {
				return err
			}
			again := e
			again.ID = "ent_02"
			if err := tx.EntitlementInsert(ctx, again); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("a second entitlement of an order: %v, want CONFLICT", err)
			}
			if err := tx.EntitlementSet(ctx, "ws_2", "ai.basic", "plan:free", "", true); err != nil {
				return err
			}
			if err := tx.EntitlementSet(ctx, "ws_2", "marketplace.sell", "plan:studio", "test", true); err != nil {
				return err
			}
			return tx.EntitlementSet(ctx, "ws_2", "audio.hires", "plan:studio", "live", true)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			holder access.Scope
			want   bool
		}{{buyer, true}, {sc, false}, {access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Live}, false}} {
			if ok, err := db.Read().EntitledToAsset(ctx, c.holder, f.assetID); err != nil || ok != c.want {
				t.Errorf("EntitledToAsset(%+v) = %v, %v; want %v", c.holder, ok, err, c.want)
			}
		}
		got, err := db.Read().EntitlementList(ctx, buyer, "", 10)
		if err != nil || len(got) != 1 {
			t.Fatalf("EntitlementList = %+v, %v", got, err)
		}
		if d := cmp.Diff(e, got[0]); d != "" {
			t.Errorf("round trip (-stored +read):\n%s", d)
		}
		if got, err := db.Read().EntitlementList(ctx, buyer, "ent_01", 10); err != nil || len(got) != 0 {
			t.Errorf("past the cursor: %+v, %v", got, err)
		}
		features, err := db.Read().FeatureEntitlements(ctx, buyer)
		want := []marketplace.FeatureEntitlement{{Name: "ai.basic", Source: "plan:free"}, {Name: "marketplace.sell", Source: "plan:studio"}}
		if err != nil || !cmp.Equal(features, want) {
			t.Errorf("FeatureEntitlements = %+v, %v; want %+v", features, err, want)
		}
	})
}
