package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/creatorgraph"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
)

// exerciseCreatorGraphCollaborations covers the derived collaborations of
// creatorgraph.ReadStore: one per project and other user with ACCEPTED
// submissions on both sides (a pending or rejected one is none), sourced
// from the earliest accepted submission of each, newest project first,
// in one environment, bounded by the limit; a public project's is public
// to every viewer, a workspace project's shown (not public) only to a
// viewer of its workspace who reads it: one reading the whole workspace,
// or a narrower reader owning it or assigned to it.
func exerciseCreatorGraphCollaborations(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := fresh(t, open)
	// ten_1/ws_1 holds usr_1 (the owner), usr_2 (never assigned), usr_3
	// (assigned to the workspace project) and usr_5; usr_4 is of ten_4.
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, ten := range []string{"ten_1", "ten_4"} {
			if err := tx.TenantInsert(ctx, ten, "Tenant"); err != nil {
				return err
			}
		}
		if err := tx.WorkspaceInsert(ctx, "ws_1", "ten_1", "Label"); err != nil {
			return err
		}
		if err := tx.WorkspaceInsert(ctx, "ws_4", "ten_4", "Elsewhere"); err != nil {
			return err
		}
		for _, u := range []string{"usr_1", "usr_2", "usr_3", "usr_5"} {
			if err := tx.UserInsert(ctx, u, "ten_1", u+"@example.com", u); err != nil {
				return err
			}
			if err := tx.MembershipInsert(ctx, "ws_1", u, []access.Role{access.RoleMember}); err != nil {
				return err
			}
		}
		return tx.UserInsert(ctx, "usr_4", "ten_4", "usr_4@example.com", "usr_4")
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	newProject := func(env access.Environment, vis project.Visibility) string {
		t.Helper()
		var id string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			now := tx.Now()
			id = tx.NewID(project.IDPrefix)
			return tx.ProjectInsert(ctx, project.Project{ID: id, OwnerUserID: "usr_1", Title: "Call", Type: "music_video",
				Scope:      access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env},
				Visibility: vis, Status: project.StatusOpen, Version: 1, CreatedAt: now, UpdatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Millisecond)
		return id
	}
	submit := func(projectID string, env access.Environment, user string, st project.SubmissionStatus) string {
		t.Helper()
		var id string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			now := tx.Now()
			id = tx.NewID(project.SubmissionIDPrefix)
			ten := "ten_1"
			if user == "usr_4" {
				ten = "ten_4"
			}
			s := project.Submission{ID: id, ProjectID: projectID, Type: "audio", Title: "Take", Status: st, Version: 1, CreatedAt: now,
				UpdatedAt: now, Scope: access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env},
				Submitter: project.Submitter{UserID: user, TenantID: ten, WorkspaceID: "ws_" + ten[len("ten_"):]},
				Asset:     &project.SubmittedAsset{ID: "ast_" + id, ContentType: "audio/wav", Bytes: 10, SHA256: "ab"}}
			if st == project.SubmissionAccepted {
				s.Version, s.ReviewedByUserID, s.ReviewedAt = 3, "usr_1", now
			}
			return tx.SubmissionInsert(ctx, s)
		}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Millisecond)
		return id
	}
	const live, test, acc = access.Live, access.Test, project.SubmissionAccepted
	priv := newProject(live, project.VisibilityWorkspace)
	pub := newProject(live, project.VisibilityPublic)
	inTest := newProject(test, project.VisibilityPublic)
	privOwn := submit(priv, live, "usr_1", acc)
	submit(priv, live, "usr_1", acc) // a later one: the earliest is the source
	privOther := submit(priv, live, "usr_2", acc)
	submit(priv, live, "usr_2", acc)
	submit(priv, live, "usr_5", project.SubmissionSubmitted)
	submit(priv, live, "usr_5", project.SubmissionRejected)
	pubOwn := submit(pub, live, "usr_1", acc)
	pubOther := submit(pub, live, "usr_4", acc)
	testOwn := submit(inTest, test, "usr_1", acc)
	testOther := submit(inTest, test, "usr_2", acc)
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		return tx.AssignmentInsert(ctx, "ws_1", "usr_3", string(access.TemplateCollaborator), priv)
	}); err != nil {
		t.Fatal(err)
	}

	rel := func(projectID, other, own, theirs string, public bool) creatorgraph.Relation {
		return creatorgraph.Relation{Kind: creatorgraph.KindCollaborated, Direction: creatorgraph.Mutual, OtherUserID: other,
			Source: creatorgraph.Source{ProjectID: projectID, SubmissionID: own, OtherSubmissionID: theirs, Public: public}}
	}
	public := rel(pub, "usr_4", pubOwn, pubOther, true)
	private := rel(priv, "usr_2", privOwn, privOther, false)
	ws := func(reader string) creatorgraph.Viewer {
		return creatorgraph.Viewer{TenantID: "ten_1", WorkspaceID: "ws_1", ReaderUserID: reader}
	}
	for name, c := range map[string]struct {
		env    access.Environment
		user   string
		viewer creatorgraph.Viewer
		limit  int
		want   []creatorgraph.Relation
	}{
		"a workspace reader":       {live, "usr_1", ws(""), 10, []creatorgraph.Relation{public, private}},
		"the owner, narrower":      {live, "usr_1", ws("usr_1"), 10, []creatorgraph.Relation{public, private}},
		"an assigned reader":       {live, "usr_1", ws("usr_3"), 10, []creatorgraph.Relation{public, private}},
		"a reader never assigned":  {live, "usr_1", ws("usr_2"), 10, []creatorgraph.Relation{public}},
		"another workspace":        {live, "usr_1", creatorgraph.Viewer{TenantID: "ten_4", WorkspaceID: "ws_4"}, 10, []creatorgraph.Relation{public}},
		"the bound":                {live, "usr_1", ws(""), 1, []creatorgraph.Relation{public}},
		"the other's side":         {live, "usr_2", ws(""), 10, []creatorgraph.Relation{rel(priv, "usr_1", privOther, privOwn, false)}},
		"pending and rejected":     {live, "usr_5", ws(""), 10, []creatorgraph.Relation{}},
		"the test environment":     {test, "usr_1", creatorgraph.Viewer{TenantID: "ten_4", WorkspaceID: "ws_4"}, 10, []creatorgraph.Relation{rel(inTest, "usr_2", testOwn, testOther, true)}},
		"no records in test for 4": {test, "usr_4", ws(""), 10, []creatorgraph.Relation{}},
	} {
		got, err := db.Read().GraphCollaborations(ctx, c.env, c.user, c.viewer, c.limit)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
