package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
)

// exerciseProjectMembers covers project.MemberStore: a member's lock reads
// the membership (NOT_FOUND for a user who is not a member, or of another
// tenant; Active false when suspended) and its assignments to one
// project; setting a template replaces the member's other assignment to
// the project, leaving one row, and bumps the authority version, which
// the member's next authority load shows; deleting removes it (NOT_FOUND
// when none); lists are confined to one workspace and project, by user
// id, keyset-paged; concurrent sets of different templates of one member
// end in one assignment.
func exerciseProjectMembers(t *testing.T, open Opener) {
	ctx := context.Background()
	seed := func(t *testing.T) (*store.DB, *Clock) {
		db, clock := fresh(t, open)
		accessSeed(t, db)
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			for _, f := range []func() error{
				func() error { return tx.UserInsert(ctx, "usr_3", "ten_1", "three@example.com", "Three") },
				func() error { return tx.MembershipInsert(ctx, "ws_1", "usr_2", []access.Role{access.RoleMember}) },
				func() error { return tx.MembershipInsert(ctx, "ws_1", "usr_3", []access.Role{access.RoleMember}) },
				// A user of another tenant with a membership of ws_1 (no
				// route makes one): the lock still does not see it.
				func() error { return tx.TenantInsert(ctx, "ten_2", "Tenant Two") },
				func() error { return tx.UserInsert(ctx, "usr_x", "ten_2", "x@example.com", "X") },
				func() error { return tx.MembershipInsert(ctx, "ws_1", "usr_x", []access.Role{access.RoleMember}) },
			} {
				if err := f(); err != nil {
					return err
				}
			}
			return nil
		})
		return db, clock
	}
	lock := func(db *store.DB, userID string) (project.Assignee, error) {
		var a project.Assignee
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			a, err = tx.ProjectMemberLock(ctx, "ten_1", "ws_1", "prj_1", userID)
			return err
		})
		return a, err
	}
	set := func(t *testing.T, db *store.DB, userID, projectID string, tmpl access.Template) project.Member {
		t.Helper()
		var m project.Member
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			var err error
			m, err = tx.ProjectMemberSet(ctx, "ws_1", project.Member{ProjectID: projectID, UserID: userID, Template: tmpl})
			return err
		})
		return m
	}
	list := func(t *testing.T, db *store.DB, projectID, after string, limit int) []project.Member {
		t.Helper()
		ms, err := db.Read().ProjectMemberList(ctx, "ws_1", projectID, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}

	t.Run("SetReplaceDelete", func(t *testing.T) {
		db, clock := seed(t)
		for _, u := range []string{"usr_9", "usr_x"} {
			if _, err := lock(db, u); !fault.Is(err, fault.NotFound) {
				t.Errorf("lock of %s: %v, want NOT_FOUND", u, err)
			}
		}
		a, err := lock(db, "usr_2")
		if err != nil || !a.Active || len(a.Roles) != 0 {
			t.Fatalf("lock of a member without a role: %+v, %v", a, err)
		}
		v0 := accessVersion(t, db, "ws_1")
		m := set(t, db, "usr_2", "prj_1", access.TemplateCollaborator)
		if !strings.HasPrefix(m.ID, "ra_") || m.ProjectID != "prj_1" || m.UserID != "usr_2" || m.Template != access.TemplateCollaborator ||
			!m.AssignedAt.Equal(Epoch) {
			t.Errorf("set = %+v", m)
		}
		v1 := accessVersion(t, db, "ws_1")
		if v1 <= v0 {
			t.Errorf("version %d after a set, was %d", v1, v0)
		}
		clock.Advance(time.Second)
		m2 := set(t, db, "usr_2", "prj_1", access.TemplateCreator)
		if m2.Template != access.TemplateCreator || !m2.AssignedAt.Equal(Epoch.Add(time.Second)) || m2.ID == m.ID {
			t.Errorf("replaced = %+v (first %+v)", m2, m)
		}
		if v2 := accessVersion(t, db, "ws_1"); v2 <= v1 {
			t.Errorf("version %d after a replace, was %d", v2, v1)
		}
		a, err = lock(db, "usr_2")
		if err != nil || len(a.Roles) != 1 || a.Roles[0] != m2 {
			t.Errorf("lock after the replace: %+v, %v", a, err)
		}
		if got := accessLoad(t, db, "ws_1", "usr_2").Assignments; !slices.Equal(got, []access.Assignment{{Template: access.TemplateCreator, ProjectID: "prj_1"}}) {
			t.Errorf("authority assignments = %v", got)
		}
		// Setting the same template again keeps the one row.
		set(t, db, "usr_2", "prj_1", access.TemplateCreator)
		if ms := list(t, db, "prj_1", "", 10); len(ms) != 1 || ms[0].Template != access.TemplateCreator {
			t.Errorf("list after setting the same template = %+v", ms)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.ProjectMemberSet(ctx, "ws_1", project.Member{ProjectID: "prj_1", UserID: "usr_2", Template: access.TemplateOwner})
			return err
		})
		if !fault.Is(err, fault.InvalidInput) {
			t.Errorf("set of a workspace-only template: %v, want INVALID_INPUT", err)
		}
		v3 := accessVersion(t, db, "ws_1")
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			return tx.ProjectMemberDelete(ctx, "ws_1", "prj_1", "usr_2")
		})
		if v4 := accessVersion(t, db, "ws_1"); v4 <= v3 {
			t.Errorf("version %d after a delete, was %d", v4, v3)
		}
		if ms := list(t, db, "prj_1", "", 10); len(ms) != 0 {
			t.Errorf("list after the delete = %+v", ms)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.ProjectMemberDelete(ctx, "ws_1", "prj_1", "usr_2") })
		if !fault.Is(err, fault.NotFound) {
			t.Errorf("second delete: %v, want NOT_FOUND", err)
		}
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			return tx.MembershipStatusSet(ctx, "ws_1", "usr_3", access.MembershipSuspended)
		})
		if a, err := lock(db, "usr_3"); err != nil || a.Active {
			t.Errorf("lock of a suspended member: %+v, %v", a, err)
		}
	})

	t.Run("ListScopeAndPages", func(t *testing.T) {
		db, _ := seed(t)
		set(t, db, "usr_3", "prj_1", access.TemplateProjectLead)
		set(t, db, "usr_2", "prj_1", access.TemplateCollaborator)
		set(t, db, "usr_1", "prj_1", access.TemplateCreator)
		set(t, db, "usr_2", "prj_2", access.TemplateCreator)
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			// A workspace-wide assignment is no project's member.
			return tx.AssignmentInsert(ctx, "ws_1", "usr_3", string(access.TemplateViewer), "")
		})
		var users []string
		after := ""
		for range 4 {
			page := list(t, db, "prj_1", after, 2)
			for _, m := range page {
				if m.ProjectID != "prj_1" {
					t.Errorf("prj_1 lists %+v", m)
				}
				users = append(users, m.UserID)
			}
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1].UserID
		}
		if !slices.Equal(users, []string{"usr_1", "usr_2", "usr_3"}) {
			t.Errorf("pages = %v, want usr_1, usr_2, usr_3", users)
		}
		if ms, err := db.Read().ProjectMemberList(ctx, "ws_2", "prj_1", "", 10); err != nil || len(ms) != 0 {
			t.Errorf("another workspace lists %+v, %v", ms, err)
		}
	})

	t.Run("ConcurrentSetsLeaveOne", func(t *testing.T) {
		db, _ := seed(t)
		templates := project.MemberTemplates()
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tmpl := templates[i%len(templates)]
				errs <- db.InTx(ctx, func(tx *store.Tx) error {
					a, err := tx.ProjectMemberLock(ctx, "ten_1", "ws_1", "prj_1", "usr_2")
					if err != nil {
						return err
					}
					if len(a.Roles) > 1 {
						return fmt.Errorf("the lock read %d assignments", len(a.Roles))
					}
					_, err = tx.ProjectMemberSet(ctx, "ws_1", project.Member{ProjectID: "prj_1", UserID: "usr_2", Template: tmpl})
					return err
				})
			}()
		}
		wg.Wait()
		close(errs)
		var all []error
		for err := range errs {
			all = append(all, err)
		}
		if err := errors.Join(all...); err != nil {
			t.Fatal(err)
		}
		if ms := list(t, db, "prj_1", "", 10); len(ms) != 1 {
			t.Errorf("concurrent sets left %d assignments: %+v", len(ms), ms)
		}
	})
}
