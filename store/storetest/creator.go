package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
)

// exerciseCreator covers creator.Store and the public project listing:
// the link that stands for a reader is its own tenant's, else the
// earliest verified across tenants (ties by link id), joined to its
// user's public fields; an address no link holds, or held on another
// network, is NOT_FOUND; counts count a creator's public projects of one
// environment in every tenant; the public listing reads public projects
// of every tenant in one environment, never a workspace one, filtered by
// status, type and creator and keyset-paged by id over more than 100
// rows with no duplicate or gap; a creator's contributions are their
// ACCEPTED submissions to public projects of every tenant in one
// environment, newest first, filtered by type, keyset-paged, each with its
// links and its project's title, and the profile counts them.
func exerciseCreator(t *testing.T, open Opener) {
	ctx := context.Background()
	// seed makes tenants ten_1..ten_3, each with workspace ws_N and user
	// usr_N (display name "User N").
	seed := func(t *testing.T, db *store.DB) {
		t.Helper()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return seedTenants(ctx, tx, 3)
		})
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	link := func(t *testing.T, db *store.DB, id, tenant, user, addr string) {
		t.Helper()
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.WalletLinkInsert(ctx, id, tenant, user, wallet.Network, addr)
		}); err != nil {
			t.Fatalf("link %s: %v", id, err)
		}
	}
	find := func(db *store.DB, reader, addr string) (creator.Creator, error) {
		return db.Read().CreatorByWallet(ctx, creator.Lookup{Network: wallet.Network, Address: addr, ReaderTenantID: reader})
	}

	t.Run("WhichLinkStands", func(t *testing.T) {
		db, clock := fresh(t, open)
		seed(t, db)
		const w, tie = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
		first := clock.Now()
		link(t, db, "wl_2", "ten_2", "usr_2", w) // the first to prove control
		clock.Advance(time.Second)
		link(t, db, "wl_1", "ten_1", "usr_1", w) // later, with a smaller id
		for reader, want := range map[string]string{"ten_1": "usr_1", "ten_2": "usr_2", "ten_3": "usr_2", "": "usr_2"} {
			c, err := find(db, reader, w)
			if err != nil || c.UserID != want {
				t.Errorf("reader %q: %+v, %v; want %s", reader, c, err, want)
			}
		}
		c, err := find(db, "ten_3", w)
		want := creator.Creator{UserID: "usr_2", DisplayName: "User 2", CreatedAt: Epoch,
			Wallet: creator.Wallet{Address: w, Network: wallet.Network, VerifiedAt: first}}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("creator (-want +got):\n%s", diff)
		}
		// Verified at the same instant: the smaller link id stands.
		link(t, db, "wl_y", "ten_1", "usr_1", tie)
		link(t, db, "wl_x", "ten_2", "usr_2", tie)
		if c, err := find(db, "ten_3", tie); err != nil || c.UserID != "usr_2" {
			t.Errorf("a tie: %+v, %v; want the link wl_x of usr_2", c, err)
		}
		for name, q := range map[string]creator.Lookup{
			"an unlinked address": {Network: wallet.Network, Address: "11111111111111111111111111111111", ReaderTenantID: "ten_1"},
			"another network":     {Network: "ethereum", Address: w, ReaderTenantID: "ten_1"},
		} {
			if _, err := db.Read().CreatorByWallet(ctx, q); !fault.Is(err, fault.NotFound) {
				t.Errorf("%s: %v, want NOT_FOUND", name, err)
			}
		}
	})

	t.Run("CountsAndPublicListing", func(t *testing.T) {
		db, clock := fresh(t, open)
		seed(t, db)
		scope := func(i int, env access.Environment) access.Scope {
			return access.Scope{TenantID: fmt.Sprintf("ten_%d", i), WorkspaceID: fmt.Sprintf("ws_%d", i), Environment: env}
		}
		insert := func(sc access.Scope, owner string, typ project.Type, vis project.Visibility, st project.Status) string {
			t.Helper()
			var id string
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				now := tx.Now()
				id = tx.NewID(project.IDPrefix)
				return tx.ProjectInsert(ctx, project.Project{ID: id, Scope: sc, OwnerUserID: owner, Title: "T", Type: typ,
					Visibility: vis, Status: st, Version: 1, CreatedAt: now, UpdatedAt: now})
			}); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Millisecond) // ids order by their millisecond
			return id
		}
		// usr_1: 120 public test remixes in ten_1 (every third OPEN), 6
		// public test singles, 7 workspace test remixes, 6 public live
		// remixes; usr_3 (a user of ten_3) 6 public test remixes in
		// ten_2's workspace; usr_2: 3 public test remixes in ten_2.
		var remixes1, remixesAll, open1 []string // newest first
		for i := range 120 {
			st := project.StatusDraft
			if i%3 == 0 {
				st = project.StatusOpen
			}
			id := insert(scope(1, access.Test), "usr_1", "remix", project.VisibilityPublic, st)
			remixes1 = append([]string{id}, remixes1...)
			remixesAll = append([]string{id}, remixesAll...)
			if st == project.StatusOpen {
				open1 = append([]string{id}, open1...)
			}
			switch i % 20 {
			case 0:
				insert(scope(1, access.Test), "usr_1", "single", project.VisibilityPublic, project.StatusDraft)
			case 1:
				insert(scope(1, access.Test), "usr_1", "remix", project.VisibilityWorkspace, project.StatusOpen)
			case 2:
				insert(scope(1, access.Live), "usr_1", "remix", project.VisibilityPublic, project.StatusOpen)
			case 3:
				remixesAll = append([]string{insert(scope(2, access.Test), "usr_3", "remix", project.VisibilityPublic, project.StatusDraft)}, remixesAll...)
			case 4:
				if i < 60 {
					remixesAll = append([]string{insert(scope(2, access.Test), "usr_2", "remix", project.VisibilityPublic, project.StatusDraft)}, remixesAll...)
				}
			}
		}
		insert(scope(1, access.Test), "usr_1", "remix", project.VisibilityWorkspace, project.StatusDraft)

		for _, c := range []struct {
			env  access.Environment
			user string
			want int
		}{{access.Test, "usr_1", 126}, {access.Live, "usr_1", 6}, {access.Test, "usr_3", 6}, {access.Test, "usr_2", 3}, {access.Live, "usr_2", 0}} {
			got, err := db.Read().CreatorCounts(ctx, c.env, c.user)
			if err != nil || got.PublicProjects != c.want {
				t.Errorf("counts of %s in %s: %+v, %v; want %d public projects", c.user, c.env, got, err, c.want)
			}
		}

		pages := func(env access.Environment, f project.Filter, limit int) []string {
			t.Helper()
			var ids []string
			before := ""
			for range 50 {
				ps, err := db.Read().ProjectListPublic(ctx, env, f, before, limit)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					if p.Visibility != project.VisibilityPublic || p.Scope.Environment != env {
						t.Fatalf("listed %+v in a public listing of %s", p, env)
					}
					ids = append(ids, p.ID)
				}
				if len(ps) < limit {
					return ids
				}
				before = ps[len(ps)-1].ID
			}
			t.Fatal("the listing does not end")
			return nil
		}
		for name, c := range map[string]struct {
			env   access.Environment
			f     project.Filter
			limit int
			want  []string
		}{
			"remixes of every tenant":   {access.Test, project.Filter{Type: "remix"}, 100, remixesAll},
			"remixes of usr_1":          {access.Test, project.Filter{Type: "remix", CreatorUserID: "usr_1"}, 100, remixes1},
			"open remixes of usr_1":     {access.Test, project.Filter{Type: "remix", CreatorUserID: "usr_1", Status: project.StatusOpen}, 7, open1},
			"small pages of usr_1":      {access.Test, project.Filter{CreatorUserID: "usr_1", Type: "remix"}, 13, remixes1},
			"singles":                   {access.Test, project.Filter{Type: "single"}, 100, nil},
			"live projects of usr_2":    {access.Live, project.Filter{CreatorUserID: "usr_2"}, 100, nil},
			"the reader filter ignored": {access.Test, project.Filter{Type: "remix", ReaderUserID: "usr_1", CreatorUserID: "usr_3"}, 100, nil},
		} {
			got := pages(c.env, c.f, c.limit)
			switch name {
			case "singles":
				if len(got) != 6 {
					t.Errorf("%s: %d, want 6", name, len(got))
				}
			case "the reader filter ignored":
				if len(got) != 6 {
					t.Errorf("%s: %d, want usr_3's 6 public remixes", name, len(got))
				}
			default:
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		}
	})
	t.Run("Contributions", func(t *testing.T) {
		db, clock := fresh(t, open)
		seed(t, db)
		newProject := func(i int, env access.Environment, vis project.Visibility, title string) project.Project {
			t.Helper()
			var p project.Project
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				now := tx.Now()
				p = project.Project{ID: tx.NewID(project.IDPrefix), OwnerUserID: fmt.Sprintf("usr_%d", i), Title: title, Type: "music_video",
					Scope:      access.Scope{TenantID: fmt.Sprintf("ten_%d", i), WorkspaceID: fmt.Sprintf("ws_%d", i), Environment: env},
					Visibility: vis, Status: project.StatusOpen, Version: 2, CreatedAt: now, UpdatedAt: now}
				return tx.ProjectInsert(ctx, p)
			}); err != nil {
				t.Fatal(err)
			}
			return p
		}
		submit := func(p project.Project, user int, typ project.SubmissionType, st project.SubmissionStatus, urls ...string) project.Submission {
			t.Helper()
			var s project.Submission
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				now := tx.Now()
				s = project.Submission{ID: tx.NewID(project.SubmissionIDPrefix), Scope: p.Scope, ProjectID: p.ID, Type: typ, Title: "Work",
					Submitter: project.Submitter{UserID: fmt.Sprintf("usr_%d", user), TenantID: fmt.Sprintf("ten_%d", user),
						WorkspaceID: fmt.Sprintf("ws_%d", user)},
					Status: st, Version: 1, CreatedAt: now, UpdatedAt: now}
				if st == project.SubmissionAccepted {
					s.Version, s.ReviewedByUserID, s.ReviewedAt, s.ReviewNote = 3, p.OwnerUserID, now, "Thanks."
				}
				for i, u := range urls {
					s.Links = append(s.Links, project.AssetLink{Position: i, URL: u, Status: project.ProbeVerified, ContentType: "image/png",
						Bytes: 10, SHA256: "ab", CheckedAt: now})
				}
				if len(urls) == 0 {
					s.Asset = &project.SubmittedAsset{ID: "ast_1", ContentType: "audio/wav", Bytes: 1234, SHA256: "ab12"}
				}
				return tx.SubmissionInsert(ctx, s)
			}); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Millisecond) // ids order by their millisecond
			return s
		}
		// usr_2 submits to ten_1's and ten_3's public test projects (30
		// accepted: every fifth a remix, the rest cover art; and one of
		// each other status), to ten_1's workspace project (accepted), and
		// to ten_1's public live project (accepted); usr_3 has one
		// accepted submission to ten_1's public project.
		pub1, pub3 := newProject(1, access.Test, project.VisibilityPublic, "Open call"), newProject(3, access.Test, project.VisibilityPublic, "Third call")
		priv1 := newProject(1, access.Test, project.VisibilityWorkspace, "In house")
		live1 := newProject(1, access.Live, project.VisibilityPublic, "Live call")
		var all, remixes []string // newest first
		withLinks := submit(pub1, 2, "cover_art", project.SubmissionAccepted, "https://media.example.com/a.png", "https://media.example.com/b.png")
		all = append(all, withLinks.ID)
		for i := range 30 {
			p, typ := pub1, project.SubmissionType("cover_art")
			if i%2 == 1 {
				p = pub3
			}
			if i%5 == 0 {
				typ = "remix"
			}
			id := submit(p, 2, typ, project.SubmissionAccepted).ID
			all = append([]string{id}, all...)
			if typ == "remix" {
				remixes = append([]string{id}, remixes...)
			}
			switch i {
			case 3:
				for _, st := range []project.SubmissionStatus{project.SubmissionSubmitted, project.SubmissionUnderReview,
					project.SubmissionRejected, project.SubmissionRevisionRequested, project.SubmissionDraft} {
					submit(pub1, 2, "cover_art", st)
				}
			case 7:
				submit(priv1, 2, "cover_art", project.SubmissionAccepted)
				submit(pub1, 3, "cover_art", project.SubmissionAccepted)
			}
		}
		liveOne := submit(live1, 2, "remix", project.SubmissionAccepted)

		pages := func(env access.Environment, user string, f creator.ContributionFilter, limit int) []creator.Contribution {
			t.Helper()
			var out []creator.Contribution
			before := ""
			for range 50 {
				cs, err := db.Read().ContributionList(ctx, env, user, f, before, limit)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, cs...)
				if len(cs) < limit {
					return out
				}
				before = cs[len(cs)-1].Submission.ID
			}
			t.Fatal("the contributions do not end")
			return nil
		}
		ids := func(cs []creator.Contribution) []string {
			out := []string{}
			for _, c := range cs {
				out = append(out, c.Submission.ID)
			}
			return out
		}
		got := pages(access.Test, "usr_2", creator.ContributionFilter{}, 7)
		if diff := cmp.Diff(all, ids(got)); diff != "" {
			t.Errorf("usr_2's contributions, newest first (-want +got):\n%s", diff)
		}
		for _, c := range got {
			s := c.Submission
			want := map[string]string{pub1.ID: "Open call", pub3.ID: "Third call"}[s.ProjectID]
			if s.Status != project.SubmissionAccepted || s.Submitter.UserID != "usr_2" || s.Scope.Environment != access.Test || c.ProjectTitle != want || want == "" {
				t.Errorf("listed %+v (project title %q)", s, c.ProjectTitle)
			}
		}
		if last := got[len(got)-1]; !cmp.Equal(withLinks, last.Submission) {
			t.Errorf("a contribution with links (-stored +read):\n%s", cmp.Diff(withLinks, last.Submission))
		}
		if diff := cmp.Diff(remixes, ids(pages(access.Test, "usr_2", creator.ContributionFilter{Type: "remix"}, 4))); diff != "" {
			t.Errorf("usr_2's remixes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{liveOne.ID}, ids(pages(access.Live, "usr_2", creator.ContributionFilter{}, 10))); diff != "" {
			t.Errorf("usr_2's live contributions (-want +got):\n%s", diff)
		}
		if got := ids(pages(access.Test, "usr_1", creator.ContributionFilter{}, 10)); len(got) != 0 {
			t.Errorf("usr_1, who submitted nothing: %v", got)
		}
		for _, c := range []struct {
			env  access.Environment
			user string
			want int
		}{{access.Test, "usr_2", 31}, {access.Live, "usr_2", 1}, {access.Test, "usr_3", 1}, {access.Test, "usr_1", 0}} {
			got, err := db.Read().CreatorCounts(ctx, c.env, c.user)
			if err != nil || got.Contributions != c.want {
				t.Errorf("counts of %s in %s: %+v, %v; want %d contributions", c.user, c.env, got, err, c.want)
			}
		}
	})
}
