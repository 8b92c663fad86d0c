package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/store"
)

// exerciseRelease covers release.Store: a release round-trips whole (its
// territories in order); a read by id is confined to its tenant,
// workspace and environment; a second insert of an id is CONFLICT; a list
// is confined to one workspace and environment, newest first, filtered by
// status and by creator, and keyset-paged by id with no duplicate or gap;
// a status write is a compare-and-set on the version, so a write from a
// stale read is CONFLICT and changes nothing.
func exerciseRelease(t *testing.T, open Opener) {
	ctx := context.Background()
	scope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	newRelease := func(tx *store.Tx, sc access.Scope, by string, tt release.TargetType) release.Release {
		now := tx.Now()
		r := release.Release{ID: tx.NewID(release.IDPrefix), Scope: sc, CreatedByUserID: by,
			Target: release.Target{Type: tt, ID: "ast_1"}, Title: "Night Drive", ReleaseDate: "2026-03-01",
			Territories: []string{"DE", "FR", "US"}, Distributor: "Example Distribution", Status: release.StatusDraft,
			Version: 1, CreatedAt: now, UpdatedAt: now}
		if tt == release.TargetProject {
			r.Target.ID, r.ProjectID = "prj_1", "prj_1"
		}
		return r
	}

	t.Run("RoundTripAndScope", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		var r release.Release
		err := db.InTx(ctx, func(tx *store.Tx) error {
			r = newRelease(tx, scope, "usr_1", release.TargetProject)
			if err := tx.ReleaseInsert(ctx, r); err != nil {
				return err
			}
			if err := tx.ReleaseInsert(ctx, r); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("second insert of an id: %v, want CONFLICT", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().ReleaseGet(ctx, scope, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("round trip (-stored +read):\n%s", diff)
		}
		for _, sc := range []access.Scope{{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test},
			{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}, {TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Test}} {
			if _, err := db.Read().ReleaseGet(ctx, sc, r.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("read from %+v: %v, want NOT_FOUND", sc, err)
			}
			rs, err := db.Read().ReleaseList(ctx, sc, release.Filter{}, "", 10)
			if err != nil || len(rs) != 0 {
				t.Errorf("list of %+v: %d releases, %v; want none", sc, len(rs), err)
			}
		}
	})

	t.Run("ListFiltersAndPages", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		var mine []string
		for i := range 25 {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				by := "usr_2"
				if i%3 == 0 {
					by = "usr_1"
				}
				r := newRelease(tx, scope, by, release.TargetAsset)
				if by == "usr_1" {
					mine = append([]string{r.ID}, mine...)
				}
				return tx.ReleaseInsert(ctx, r)
			})
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Millisecond) // ids order by their millisecond
		}
		got := pageIDs(t, 4, func(before string, n int) ([]release.Release, error) {
			return db.Read().ReleaseList(ctx, scope, release.Filter{ReaderUserID: "usr_1"}, before, n)
		}, func(r release.Release) string { return r.ID })
		if diff := cmp.Diff(mine, got); diff != "" {
			t.Errorf("usr_1's pages, newest first (-want +got):\n%s", diff)
		}
		rs, err := db.Read().ReleaseList(ctx, scope, release.Filter{}, "", 100)
		if err != nil || len(rs) != 25 {
			t.Errorf("all: %d, %v; want 25", len(rs), err)
		}
		rs, err = db.Read().ReleaseList(ctx, scope, release.Filter{Status: release.StatusLive}, "", 100)
		if err != nil || len(rs) != 0 {
			t.Errorf("status LIVE: %d, %v; want none", len(rs), err)
		}
	})

	t.Run("StatusCompareAndSet", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		var r release.Release
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			r = newRelease(tx, scope, "usr_1", release.TargetAsset)
			return tx.ReleaseInsert(ctx, r)
		}); err != nil {
			t.Fatal(err)
		}
		move := func(from release.Release, to release.Status) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				from.Status, from.Version, from.UpdatedAt = to, from.Version+1, tx.Now()
				return tx.ReleaseSetStatus(ctx, from)
			})
		}
		if err := move(r, release.StatusScheduled); err != nil {
			t.Fatal(err)
		}
		if err := move(r, release.StatusScheduled); !fault.Is(err, fault.Conflict) {
			t.Errorf("a move from a stale read: %v, want CONFLICT", err)
		}
		got, err := db.Read().ReleaseGet(ctx, scope, r.ID)
		if err != nil || got.Status != release.StatusScheduled || got.Version != 2 {
			t.Errorf("after the moves: %+v, %v; want SCHEDULED version 2", got, err)
		}
	})
}
