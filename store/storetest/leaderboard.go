package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
)

// exerciseLeaderboard covers the leaderboard ports: each signal counts,
// per tenant, workspace and user, only its environment's rows in the
// counted state whose event time is after the window's start and at most
// its end (an accepted submission for its submitter's workspace); a
// snapshot round-trips whole and is unique per environment and window
// end (a second one stores nothing, entries included); the newest is the
// one of the greatest window end, per environment; a standing is confined
// to its snapshot, tenant, workspace and environment, with the user's
// entry and how many share its rank.
func exerciseLeaderboard(t *testing.T, open Opener) {
	ctx := context.Background()
	live := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}
	other := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Live}
	testScope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}

	t.Run("Counts", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		start, end := Epoch, Epoch.Add(24*time.Hour)
		before, inside, after := start, start.Add(time.Hour), end.Add(time.Second)
		// A public project of ws_2 takes submissions from ws_1's users.
		var prj project.Project
		err := db.InTx(ctx, func(tx *store.Tx) error {
			prj = project.Project{ID: tx.NewID(project.IDPrefix), Scope: other, OwnerUserID: "usr_9", Title: "Open call", Type: "music_video",
				Visibility: project.VisibilityPublic, Status: project.StatusOpen, Version: 2, CreatedAt: tx.Now(), UpdatedAt: tx.Now()}
			return tx.ProjectInsert(ctx, prj)
		})
		if err != nil {
			t.Fatal(err)
		}
		submit := func(user string, from access.Scope, status project.SubmissionStatus, reviewed time.Time) {
			t.Helper()
			err := db.InTx(ctx, func(tx *store.Tx) error {
				sc := prj.Scope
				sc.Environment = from.Environment
				return tx.SubmissionInsert(ctx, project.Submission{ID: tx.NewID(project.SubmissionIDPrefix), Scope: sc, ProjectID: prj.ID,
					Type: "audio", Title: "Take", Status: status, ReviewedByUserID: "usr_9", ReviewedAt: reviewed,
					Submitter: project.Submitter{UserID: user, TenantID: from.TenantID, WorkspaceID: from.WorkspaceID}, Version: 2,
					Asset: &project.SubmittedAsset{ID: "ast_1", ContentType: "audio/wav", Bytes: 1, SHA256: "ab"}, CreatedAt: tx.Now(),
					UpdatedAt: tx.Now()})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		submit("usr_1", live, project.SubmissionAccepted, inside)
		submit("usr_1", live, project.SubmissionAccepted, end) // the end is inside
		submit("usr_1", live, project.SubmissionAccepted, before)
		submit("usr_1", live, project.SubmissionAccepted, after)
		submit("usr_1", live, project.SubmissionRejected, inside)
		submit("usr_2", live, project.SubmissionAccepted, inside)
		submit("usr_1", other, project.SubmissionAccepted, inside)
		submit("usr_1", testScope, project.SubmissionAccepted, inside)

		releaseAt := func(user string, sc access.Scope, to []release.Status, at time.Time) {
			t.Helper()
			clock.Set(at)
			err := db.InTx(ctx, func(tx *store.Tx) error {
				r := release.Release{ID: tx.NewID(release.IDPrefix), Scope: sc, CreatedByUserID: user,
					Target: release.Target{Type: release.TargetAsset, ID: "ast_1"}, Title: "Night Drive", ReleaseDate: "2026-03-01",
					Territories: []string{"WW"}, Distributor: "Example", Status: release.StatusDraft, Version: 1, CreatedAt: at, UpdatedAt: at}
				if err := tx.ReleaseInsert(ctx, r); err != nil {
					return err
				}
				for _, s := range to {
					r.Status, r.Version, r.UpdatedAt = s, r.Version+1, at
					if err := tx.ReleaseSetStatus(ctx, r); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		toLive := []release.Status{release.StatusScheduled, release.StatusSubmitted, release.StatusLive}
		releaseAt("usr_1", live, toLive, inside)
		releaseAt("usr_1", live, append(slices.Clone(toLive), release.StatusTakenDown), inside)
		releaseAt("usr_1", live, toLive, after)
		releaseAt("usr_2", live, toLive[:2], inside)
		releaseAt("usr_2", testScope, toLive, inside)

		err = db.InTx(ctx, func(tx *store.Tx) error {
			for i, c := range []struct {
				sc     access.Scope
				user   string
				status generation.Status
				ended  time.Time
			}{
				{live, "usr_1", generation.StatusCompleted, inside}, {live, "usr_1", generation.StatusCompleted, inside},
				{live, "usr_2", generation.StatusFailed, inside}, {other, "usr_2", generation.StatusCompleted, end},
				{live, "usr_2", generation.StatusCompleted, before},
			} {
				ended := c.ended
				o := operation.Operation{ID: fmt.Sprintf("op_%d", i), Scope: c.sc, CreatedByUserID: c.user,
					Pricing: policy.Ref{ID: operation.PricingPolicyID, Version: 1, Hash: "h"}, Version: 1, DeadlineAt: inside,
					CreatedAt: start, UpdatedAt: ended, EndedAt: &ended, Snapshot: generation.Snapshot{Status: c.status}}
				if err := tx.GenerationOperationInsert(ctx, o); err != nil {
					return err
				}
			}
			a, err := tx.AssetInsert(ctx, asset.Asset{Scope: asset.Scope{TenantID: live.TenantID, WorkspaceID: live.WorkspaceID,
				Environment: string(live.Environment)}, MediaType: "audio/wav", Size: 100, SHA256: fmt.Sprintf("%064x", 1), Origin: asset.Uploaded})
			if err != nil {
				return err
			}
			for i, c := range []struct {
				user   string
				status sound.Status
				ended  time.Time
			}{{"usr_2", sound.StatusCompleted, inside}, {"usr_2", sound.StatusFailed, inside}, {"usr_1", sound.StatusCompleted, after}} {
				ended := c.ended
				if err := tx.SoundOperationInsert(ctx, sound.Operation{ID: fmt.Sprintf("snd_%d", i), Scope: live, CreatedByUserID: c.user,
					Type: sound.TypeMastering, Status: c.status, Stage: sound.StageFinished, InputAssetID: a.ID,
					Request: json.RawMessage(`{}`), Capabilities: json.RawMessage(`{}`), Plan: "free", Version: 3, DeadlineAt: inside,
					CreatedAt: start, UpdatedAt: ended, EndedAt: &ended}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		type row struct {
			ws, user string
			n        int64
		}
		counts := func(env access.Environment, sig leaderboard.Signal) []row {
			t.Helper()
			cs, err := db.Read().LeaderboardCounts(ctx, env, sig, start, end)
			if err != nil {
				t.Fatalf("%s %s: %v", env, sig, err)
			}
			var out []row
			for _, c := range cs {
				if c.TenantID != "ten_1" {
					t.Errorf("%s %s: tenant %s", env, sig, c.TenantID)
				}
				out = append(out, row{c.WorkspaceID, c.UserID, c.N})
			}
			slices.SortFunc(out, func(a, b row) int { return strings.Compare(a.ws+a.user, b.ws+b.user) })
			return out
		}
		for _, c := range []struct {
			env  access.Environment
			sig  leaderboard.Signal
			want []row
		}{
			{access.Live, leaderboard.SignalSubmissionsAccepted, []row{{"ws_1", "usr_1", 2}, {"ws_1", "usr_2", 1}, {"ws_2", "usr_1", 1}}},
			{access.Test, leaderboard.SignalSubmissionsAccepted, []row{{"ws_1", "usr_1", 1}}},
			{access.Live, leaderboard.SignalReleasesLive, []row{{"ws_1", "usr_1", 1}}},
			{access.Test, leaderboard.SignalReleasesLive, []row{{"ws_1", "usr_2", 1}}},
			{access.Live, leaderboard.SignalGenerationsCompleted, []row{{"ws_1", "usr_1", 2}, {"ws_2", "usr_2", 1}}},
			{access.Live, leaderboard.SignalSoundOperationsCompleted, []row{{"ws_1", "usr_2", 1}}},
			{access.Test, leaderboard.SignalSoundOperationsCompleted, nil},
		} {
			if diff := cmp.Diff(c.want, counts(c.env, c.sig), cmp.AllowUnexported(row{})); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", c.env, c.sig, diff)
			}
		}
		if _, err := db.Read().LeaderboardCounts(ctx, access.Live, "plays", start, end); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("an unknown signal: %v, want INVALID_INPUT", err)
		}
	})

	t.Run("Snapshots", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.TenantInsert(ctx, "ten_2", "Tenant Two"); err != nil {
				return err
			}
			return tx.WorkspaceInsert(ctx, "ws_3", "ten_2", "Three")
		})
		if err != nil {
			t.Fatal(err)
		}
		read := db.Read()
		if _, err := read.LeaderboardLatest(ctx, access.Live); !fault.Is(err, fault.NotFound) {
			t.Fatalf("no snapshot yet: %v, want NOT_FOUND", err)
		}
		entry := func(id string, sc access.Scope, user string, score int64, rank int) leaderboard.Entry {
			return leaderboard.Entry{SnapshotID: id, Scope: sc, UserID: user, Score: score, Rank: rank,
				Counts: map[leaderboard.Signal]int64{leaderboard.SignalReleasesLive: score, leaderboard.SignalSubmissionsAccepted: 0}}
		}
		insert := func(s leaderboard.Snapshot, es []leaderboard.Entry) bool {
			t.Helper()
			var ok bool
			err := db.InTx(ctx, func(tx *store.Tx) (err error) {
				ok, err = tx.LeaderboardSnapshotInsert(ctx, s, es)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		ref := policy.Ref{ID: leaderboard.PolicyID, Version: 1, Hash: "aa"}
		first := leaderboard.Snapshot{ID: "lbs_1", Environment: access.Live, Policy: ref, WindowStart: Epoch.AddDate(0, 0, -30),
			WindowEnd: Epoch, ComputedAt: clock.Now(), Workspaces: 2, Subjects: 4}
		third := access.Scope{TenantID: "ten_2", WorkspaceID: "ws_3", Environment: access.Live}
		// More entries than one INSERT batch takes, in ws_2.
		es := []leaderboard.Entry{entry("lbs_1", live, "usr_a", 9, 1), entry("lbs_1", live, "usr_b", 4, 2),
			entry("lbs_1", live, "usr_c", 4, 2), entry("lbs_1", third, "usr_a", 1, 1)}
		for i := range 450 {
			es = append(es, entry("lbs_1", other, fmt.Sprintf("usr_%03d", i), int64(500-i), i+1))
		}
		first.Subjects, first.Workspaces = len(es), 3
		if !insert(first, es) {
			t.Fatal("the first snapshot was not stored")
		}
		dup := first
		dup.ID = "lbs_dup"
		if insert(dup, []leaderboard.Entry{entry("lbs_dup", live, "usr_z", 1, 1)}) {
			t.Errorf("a second snapshot of one window end was stored")
		}
		got, err := read.LeaderboardLatest(ctx, access.Live)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("round trip (-stored +read):\n%s", diff)
		}
		st, err := read.LeaderboardStanding(ctx, "lbs_1", live, "usr_b")
		if err != nil {
			t.Fatal(err)
		}
		want := entry("lbs_1", live, "usr_b", 4, 2)
		if st.Ranked != 3 || st.TiedWith != 1 || st.Entry == nil {
			t.Fatalf("usr_b's standing %+v", st)
		}
		if diff := cmp.Diff(want, *st.Entry); diff != "" {
			t.Errorf("usr_b's entry (-stored +read):\n%s", diff)
		}
		if st, err := read.LeaderboardStanding(ctx, "lbs_1", other, "usr_449"); err != nil || st.Ranked != 450 || st.Entry == nil ||
			st.Entry.Rank != 450 || st.TiedWith != 0 {
			t.Errorf("ws_2's last: %+v %v", st, err)
		}
		// Nothing of ws_1 is read from another scope; the unknown user is
		// not ranked, never an error.
		for _, c := range []struct {
			id     string
			sc     access.Scope
			user   string
			ranked int
		}{
			{"lbs_1", live, "usr_nobody", 3},
			{"lbs_1", access.Scope{TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Live}, "usr_a", 0},
			{"lbs_1", access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}, "usr_a", 0},
			{"lbs_1", third, "usr_b", 1},
			{"lbs_dup", live, "usr_z", 0},
		} {
			st, err := read.LeaderboardStanding(ctx, c.id, c.sc, c.user)
			if err != nil || st.Entry != nil || st.Ranked != c.ranked || st.TiedWith != 0 {
				t.Errorf("%s %+v %s: %+v %v, want %d ranked and no entry", c.id, c.sc, c.user, st, err, c.ranked)
			}
		}

		// A later window end is the newest; a test snapshot is test's own.
		clock.Advance(time.Hour)
		second := first
		second.ID, second.WindowEnd, second.WindowStart, second.ComputedAt = "lbs_2", Epoch.Add(time.Hour), Epoch.Add(-time.Hour), clock.Now()
		second.Policy.Version, second.Policy.Hash, second.Subjects, second.Workspaces = 2, "bb", 0, 0
		if !insert(second, nil) {
			t.Fatal("the second snapshot was not stored")
		}
		inTest := first
		inTest.ID, inTest.Environment, inTest.Subjects, inTest.Workspaces = "lbs_t", access.Test, 1, 1
		if !insert(inTest, []leaderboard.Entry{entry("lbs_t", testScope, "usr_a", 2, 1)}) {
			t.Fatal("the test snapshot was not stored")
		}
		for env, want := range map[access.Environment]leaderboard.Snapshot{access.Live: second, access.Test: inTest} {
			got, err := read.LeaderboardLatest(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("newest of %s (-want +got):\n%s", env, diff)
			}
		}
		// The first keeps its policy version and entries.
		if st, err := read.LeaderboardStanding(ctx, "lbs_1", live, "usr_a"); err != nil || st.Entry == nil || st.Entry.Score != 9 {
			t.Errorf("the first snapshot after the second: %+v %v", st, err)
		}
		var version int
		if err := read.IDB().NewRaw(`SELECT policy_version FROM leaderboard_snapshots WHERE id = 'lbs_1'`).Scan(ctx, &version); err != nil ||
			version != 1 {
			t.Errorf("the first snapshot's policy version: %d %v", version, err)
		}
	})
}
