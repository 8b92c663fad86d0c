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

// exerciseSubmission covers project.SubmissionStore and ProbeStore: a
// submission round-trips whole, with its asset snapshot or its links in
// order; a read by id is confined to its environment; a second insert of
// an id is CONFLICT, and so is a second revision of one submission; a
// list is confined to one project and environment, newest first, filtered
// by status, narrowed to a viewer's own and the ACCEPTED ones when asked,
// and keyset-paged by id with no duplicate or gap; a status write is a
// compare-and-set on the version; a link takes its probe's result once.
func exerciseSubmission(t *testing.T, open Opener) {
	ctx := context.Background()
	scope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	outsider := project.Submitter{UserID: "usr_9", TenantID: "ten_1", WorkspaceID: "ws_2", KeyID: "key_9"}
	newProject := func(t *testing.T, db *store.DB) project.Project {
		t.Helper()
		var p project.Project
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			now := tx.Now()
			p = project.Project{ID: tx.NewID(project.IDPrefix), Scope: scope, OwnerUserID: "usr_1", Title: "Open call", Type: "music_video",
				Visibility: project.VisibilityPublic, Status: project.StatusOpen, Version: 2, CreatedAt: now, UpdatedAt: now}
			return tx.ProjectInsert(ctx, p)
		}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newSubmission := func(tx *store.Tx, p project.Project, by project.Submitter, urls ...string) project.Submission {
		now := tx.Now()
		s := project.Submission{ID: tx.NewID(project.SubmissionIDPrefix), Scope: p.Scope, ProjectID: p.ID, Submitter: by,
			Type: "artwork", Title: "Cover", Description: "d", Status: project.SubmissionSubmitted, Version: 1, CreatedAt: now, UpdatedAt: now}
		for i, u := range urls {
			s.Links = append(s.Links, project.AssetLink{Position: i, URL: u, Status: project.ProbePending})
		}
		if len(urls) == 0 {
			s.Asset = &project.SubmittedAsset{ID: "ast_1", ContentType: "audio/wav", Bytes: 1234, SHA256: "ab12"}
		}
		return s
	}
	insert := func(t *testing.T, db *store.DB, s project.Submission) {
		t.Helper()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SubmissionInsert(ctx, s) }); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("RoundTripAndScope", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		p := newProject(t, db)
		var byURL, byAsset project.Submission
		err := db.InTx(ctx, func(tx *store.Tx) error {
			byURL = newSubmission(tx, p, outsider, "https://media.example.com/a.mp4", "https://media.example.com/b.png")
			byAsset = newSubmission(tx, p, outsider)
			byAsset.ID = tx.NewID(project.SubmissionIDPrefix)
			for _, s := range []project.Submission{byURL, byAsset} {
				if err := tx.SubmissionInsert(ctx, s); err != nil {
					return err
				}
			}
			if err := tx.SubmissionInsert(ctx, byURL); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("second insert of an id: %v, want CONFLICT", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []project.Submission{byURL, byAsset} {
			got, err := db.Read().SubmissionGet(ctx, access.Test, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip (-stored +read):\n%s", diff)
			}
			if _, err := db.Read().SubmissionGet(ctx, access.Live, want.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("read from the other environment: %v, want NOT_FOUND", err)
			}
		}
		subs, err := db.Read().SubmissionList(ctx, access.Live, p.ID, project.SubmissionFilter{}, "", 10)
		if err != nil || len(subs) != 0 {
			t.Errorf("list in the other environment: %d, %v; want none", len(subs), err)
		}
	})

	t.Run("RevisedOnce", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		p := newProject(t, db)
		var orig project.Submission
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			orig = newSubmission(tx, p, outsider)
			orig.Status = project.SubmissionRevisionRequested
			return tx.SubmissionInsert(ctx, orig)
		}); err != nil {
			t.Fatal(err)
		}
		revise := func() error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				s := newSubmission(tx, p, outsider)
				s.RevisionOf = orig.ID
				return tx.SubmissionInsert(ctx, s)
			})
		}
		if err := revise(); err != nil {
			t.Fatal(err)
		}
		err := revise()
		if _, _, d := fault.Public(err); !fault.Is(err, fault.Conflict) || d["field"] != "revisionOf" {
			t.Errorf("a second revision: %v, want CONFLICT on revisionOf", err)
		}
		subs, err := db.Read().SubmissionList(ctx, access.Test, p.ID, project.SubmissionFilter{}, "", 10)
		if err != nil || len(subs) != 2 {
			t.Errorf("after a refused revision: %d submissions, %v; want 2", len(subs), err)
		}
	})

	t.Run("ListFiltersAndPages", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		p, other := newProject(t, db), newProject(t, db)
		insert(t, db, func() project.Submission {
			var s project.Submission
			db.InTx(ctx, func(tx *store.Tx) error { s = newSubmission(tx, other, outsider); return nil })
			return s
		}())
		mine := project.Submitter{UserID: "usr_2", TenantID: "ten_1", WorkspaceID: "ws_1"}
		var all, visible []string // newest first
		for i := range 25 {
			var s project.Submission
			db.InTx(ctx, func(tx *store.Tx) error {
				by := outsider
				if i%3 == 0 {
					by = mine
				}
				s = newSubmission(tx, p, by, fmt.Sprintf("https://media.example.com/%d.png", i))
				if i%4 == 0 {
					s.Status = project.SubmissionAccepted
				}
				return nil
			})
			insert(t, db, s)
			all = append([]string{s.ID}, all...)
			if s.Submitter == mine || s.Status == project.SubmissionAccepted {
				visible = append([]string{s.ID}, visible...)
			}
			clock.Advance(time.Millisecond) // ids order by their millisecond
		}
		page := func(f project.SubmissionFilter, n int) []string {
			t.Helper()
			var got []string
			before := ""
			for {
				subs, err := db.Read().SubmissionList(ctx, access.Test, p.ID, f, before, n)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range subs {
					if s.ProjectID != p.ID || len(s.Links) != 1 {
						t.Fatalf("listed %+v", s)
					}
					got = append(got, s.ID)
				}
				if len(subs) < n {
					return got
				}
				before = subs[len(subs)-1].ID
			}
		}
		if diff := cmp.Diff(all, page(project.SubmissionFilter{}, 4)); diff != "" {
			t.Errorf("every submission, newest first (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(visible, page(project.SubmissionFilter{ViewerUserID: "usr_2"}, 3)); diff != "" {
			t.Errorf("a viewer's own and the accepted ones (-want +got):\n%s", diff)
		}
		if got := page(project.SubmissionFilter{Status: project.SubmissionAccepted}, 100); len(got) != 7 {
			t.Errorf("ACCEPTED: %d, want 7", len(got))
		}
	})

	t.Run("StatusCompareAndSetAndProbe", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		p := newProject(t, db)
		var s project.Submission
		db.InTx(ctx, func(tx *store.Tx) error {
			s = newSubmission(tx, p, outsider, "https://media.example.com/a.mp4")
			return nil
		})
		insert(t, db, s)
		clock.Advance(time.Second)
		move := func(from project.Submission, to project.SubmissionStatus) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				from.Status, from.Version, from.UpdatedAt = to, from.Version+1, tx.Now()
				from.ReviewNote, from.ReviewedByUserID, from.ReviewedAt = "looks good", "usr_1", tx.Now()
				return tx.SubmissionSetStatus(ctx, from)
			})
		}
		if err := move(s, project.SubmissionUnderReview); err != nil {
			t.Fatal(err)
		}
		if err := move(s, project.SubmissionRejected); !fault.Is(err, fault.Conflict) {
			t.Errorf("a move from a stale read: %v, want CONFLICT", err)
		}
		verified := project.AssetLink{Position: 0, URL: s.Links[0].URL, Status: project.ProbeVerified, ContentType: "video/mp4",
			Bytes: 42, SHA256: "ff00", CheckedAt: clock.Now()}
		for i, want := range []bool{true, false} {
			l := verified
			if i == 1 {
				l.Status, l.Reason = project.ProbeRefused, "private_address"
			}
			var ok bool
			if err := db.InTx(ctx, func(tx *store.Tx) (err error) { ok, err = tx.SubmissionLinkSet(ctx, s.ID, l); return err }); err != nil || ok != want {
				t.Errorf("link set %d: %v, %v; want %v", i, ok, err, want)
			}
		}
		got, err := db.Read().SubmissionGet(ctx, access.Test, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != project.SubmissionUnderReview || got.Version != 2 || got.ReviewNote != "looks good" ||
			got.ReviewedByUserID != "usr_1" || !got.ReviewedAt.Equal(clock.Now()) {
			t.Errorf("after the moves: %+v; want UNDER_REVIEW version 2 with its review fields", got)
		}
		if diff := cmp.Diff([]project.AssetLink{verified}, got.Links); diff != "" {
			t.Errorf("links (-want +got):\n%s", diff)
		}
	})
}
