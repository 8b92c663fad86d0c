package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
)

// exerciseProject covers project.Store: a project round-trips whole; a
// read by id is confined to its environment (the service decides the
// rest of visibility); a second insert of an id is CONFLICT; a list is
// confined to one tenant, workspace and environment, newest first,
// filtered by status, type and owner, narrowed to the reader's own and
// public projects when asked, and keyset-paged by id with no duplicate
// or gap; a status write is a compare-and-set on the version, so a write
// from a stale read is CONFLICT and changes nothing.
func exerciseProject(t *testing.T, open Opener) {
	ctx := context.Background()
	scope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	newProject := func(tx *store.Tx, sc access.Scope, owner string, typ project.Type, vis project.Visibility) project.Project {
		now := tx.Now()
		return project.Project{ID: tx.NewID(project.IDPrefix), Scope: sc, OwnerUserID: owner, Title: "A title", Type: typ,
			Description: "d", Visibility: vis, Status: project.StatusDraft, Version: 1, CreatedAt: now, UpdatedAt: now}
	}

	t.Run("RoundTripAndScope", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		var p project.Project
		err := db.InTx(ctx, func(tx *store.Tx) error {
			p = newProject(tx, scope, "usr_1", "single", project.VisibilityPublic)
			if err := tx.ProjectInsert(ctx, p); err != nil {
				return err
			}
			if err := tx.ProjectInsert(ctx, p); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("second insert of an id: %v, want CONFLICT", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().ProjectGet(ctx, access.Test, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, got); diff != "" {
			t.Errorf("round trip (-stored +read):\n%s", diff)
		}
		if _, err := db.Read().ProjectGet(ctx, access.Live, p.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("read from the other environment: %v, want NOT_FOUND", err)
		}
		for _, sc := range []access.Scope{{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}, {TenantID: "ten_1",
			WorkspaceID: "ws_1", Environment: access.Live}} {
			ps, err := db.Read().ProjectList(ctx, sc, project.Filter{}, "", 10)
			if err != nil || len(ps) != 0 {
				t.Errorf("list of %+v: %d projects, %v; want none", sc, len(ps), err)
			}
		}
	})

	t.Run("ListFiltersAndPages", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		var remixes []string
		for i := range 30 {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				typ, vis, owner := project.Type("single"), project.VisibilityWorkspace, "usr_1"
				if i%2 == 0 {
					typ = "remix"
				}
				if i%5 == 0 {
					vis, owner = project.VisibilityPublic, "usr_2"
				}
				p := newProject(tx, scope, owner, typ, vis)
				if typ == "remix" {
					remixes = append([]string{p.ID}, remixes...)
				}
				return tx.ProjectInsert(ctx, p)
			})
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Millisecond) // ids order by their millisecond
		}
		got := pageIDs(t, 4, func(before string, n int) ([]project.Project, error) {
			return db.Read().ProjectList(ctx, scope, project.Filter{Type: "remix"}, before, n)
		}, func(p project.Project) string { return p.ID })
		if diff := cmp.Diff(remixes, got); diff != "" {
			t.Errorf("remix pages, newest first (-want +got):\n%s", diff)
		}
		ps, err := db.Read().ProjectList(ctx, scope, project.Filter{CreatorUserID: "usr_2"}, "", 100)
		if err != nil || len(ps) != 6 {
			t.Errorf("by owner usr_2: %d, %v; want 6", len(ps), err)
		}
		ps, err = db.Read().ProjectList(ctx, scope, project.Filter{ReaderUserID: "usr_3"}, "", 100)
		if err != nil || len(ps) != 6 {
			t.Errorf("a reader of only own and public projects: %d, %v; want the 6 public ones", len(ps), err)
		}
		ps, err = db.Read().ProjectList(ctx, scope, project.Filter{Status: project.StatusOpen}, "", 100)
		if err != nil || len(ps) != 0 {
			t.Errorf("status OPEN: %d, %v; want none", len(ps), err)
		}
	})

	t.Run("StatusCompareAndSet", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		var p project.Project
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			p = newProject(tx, scope, "usr_1", "album", project.VisibilityWorkspace)
			return tx.ProjectInsert(ctx, p)
		}); err != nil {
			t.Fatal(err)
		}
		move := func(from project.Project, to project.Status) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				from.Status, from.Version, from.UpdatedAt = to, from.Version+1, tx.Now()
				return tx.ProjectSetStatus(ctx, from)
			})
		}
		if err := move(p, project.StatusOpen); err != nil {
			t.Fatal(err)
		}
		if err := move(p, project.StatusOpen); !fault.Is(err, fault.Conflict) {
			t.Errorf("a move from a stale read: %v, want CONFLICT", err)
		}
		got, err := db.Read().ProjectGet(ctx, access.Test, p.ID)
		if err != nil || got.Status != project.StatusOpen || got.Version != 2 {
			t.Errorf("after the moves: %+v, %v; want OPEN version 2", got, err)
		}
	})
}
