package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/discover"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
)

// exerciseDiscover covers discover.Store and the ranking the discover
// package documents: projects are the environment's public projects in
// OPEN, IN_PRODUCTION, REVIEW or COMPLETED, scored by their ACCEPTED
// submissions; tracks are audio and remix submissions ACCEPTED into public
// projects, newest first; creators are users with a wallet link scored by
// public projects plus contributions, kept when the score is not zero.
// Every list orders by score descending then id descending (a tie goes to
// the newest record), reads one environment of every tenant, filters by
// type, and pages by keyset after a (score, id) position without a
// duplicate or a gap.
func exerciseDiscover(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := fresh(t, open)
	// Tenants ten_1..ten_5, each with workspace ws_N and user usr_N; the
	// users' ids order as their accounts' ages (usr_5 newest).
	err := db.InTx(ctx, func(tx *store.Tx) error {
		return seedTenants(ctx, tx, 5)
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	newProject := func(owner int, env access.Environment, typ project.Type, vis project.Visibility, st project.Status) string {
		t.Helper()
		var id string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			now := tx.Now()
			id = tx.NewID(project.IDPrefix)
			return tx.ProjectInsert(ctx, project.Project{ID: id, OwnerUserID: fmt.Sprintf("usr_%d", owner), Title: "Call " + id, Type: typ,
				Scope:      access.Scope{TenantID: fmt.Sprintf("ten_%d", owner), WorkspaceID: fmt.Sprintf("ws_%d", owner), Environment: env},
				Visibility: vis, Status: st, Version: 1, CreatedAt: now, UpdatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Millisecond) // ids order by their millisecond
		return id
	}
	owners := map[string]int{}
	submit := func(projectID string, env access.Environment, user int, typ project.SubmissionType, st project.SubmissionStatus) string {
		t.Helper()
		var id string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			now := tx.Now()
			id = tx.NewID(project.SubmissionIDPrefix)
			o := owners[projectID]
			s := project.Submission{ID: id, ProjectID: projectID, Type: typ, Title: "Work " + id, Status: st, Version: 1, CreatedAt: now, UpdatedAt: now,
				Scope:     access.Scope{TenantID: fmt.Sprintf("ten_%d", o), WorkspaceID: fmt.Sprintf("ws_%d", o), Environment: env},
				Submitter: project.Submitter{UserID: fmt.Sprintf("usr_%d", user), TenantID: fmt.Sprintf("ten_%d", user), WorkspaceID: fmt.Sprintf("ws_%d", user)},
				Asset:     &project.SubmittedAsset{ID: "ast_" + id, ContentType: "audio/wav", Bytes: 10, SHA256: "ab"}}
			if st == project.SubmissionAccepted {
				s.Version, s.ReviewedByUserID, s.ReviewedAt = 3, fmt.Sprintf("usr_%d", o), now
			}
			return tx.SubmissionInsert(ctx, s)
		}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Millisecond)
		return id
	}
	proj := func(owner int, env access.Environment, typ project.Type, vis project.Visibility, st project.Status) string {
		id := newProject(owner, env, typ, vis, st)
		owners[id] = owner
		return id
	}
	const (
		live, test = access.Live, access.Test
		pub, ws    = project.VisibilityPublic, project.VisibilityWorkspace
		acc        = project.SubmissionAccepted
	)

	// Live projects, oldest first.
	p1 := proj(1, live, "music_video", pub, project.StatusOpen)
	p2 := proj(1, live, "music_video", pub, project.StatusInProduction)
	p3 := proj(2, live, "music_video", pub, project.StatusCompleted)
	proj(2, live, "music_video", pub, project.StatusDraft)     // not ready
	proj(2, live, "music_video", pub, project.StatusArchived)  // retired
	p6 := proj(1, live, "music_video", ws, project.StatusOpen) // a workspace's
	p8 := proj(3, live, "single", pub, project.StatusReview)
	p9 := proj(1, live, "music_video", pub, project.StatusOpen)
	p7 := proj(3, test, "music_video", pub, project.StatusOpen) // the other environment

	// Submissions, oldest first; the tracks newest first.
	var tracks []string
	track := func(id string) { tracks = append([]string{id}, tracks...) }
	track(submit(p1, live, 2, "audio", acc))
	submit(p1, live, 3, "cover_art", acc)
	track(submit(p2, live, 3, "remix", acc))
	track(submit(p2, live, 2, "audio", acc))
	submit(p3, live, 4, "audio", project.SubmissionSubmitted)
	submit(p3, live, 4, "audio", project.SubmissionRejected)
	for range 3 {
		submit(p6, live, 2, "audio", acc) // in-house work of a workspace project
	}
	track(submit(p8, live, 2, "audio", acc))
	track(submit(p8, live, 4, "remix", acc)) // usr_4 has no wallet: a track, no creator
	testTrack := submit(p7, test, 1, "audio", acc)

	// Wallet links: usr_2's first one stands; usr_5's score is zero.
	links := []struct{ id, user, addr string }{
		{"wl_2a", "usr_2", "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"},
		{"wl_1", "usr_1", "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"},
		{"wl_2b", "usr_2", "So11111111111111111111111111111111111111112"},
		{"wl_3", "usr_3", "Vote111111111111111111111111111111111111111"},
		{"wl_5", "usr_5", "Stake11111111111111111111111111111111111111"},
	}
	for _, l := range links {
		ten := "ten_" + l.user[len("usr_"):]
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.WalletLinkInsert(ctx, l.id, ten, l.user, wallet.Network, l.addr)
		}); err != nil {
			t.Fatalf("link %s: %v", l.id, err)
		}
		clock.Advance(time.Second)
	}

	read := db.Read()
	type ranked struct {
		ID    string
		Score int64
	}
	list := func(env access.Environment, q discover.Query) []discover.Item {
		t.Helper()
		var items []discover.Item
		var err error
		switch q.Kind {
		case discover.KindProject:
			items, err = read.DiscoverProjects(ctx, env, q)
		case discover.KindTrack:
			items, err = read.DiscoverTracks(ctx, env, q)
		default:
			items, err = read.DiscoverCreators(ctx, env, q)
		}
		if err != nil {
			t.Fatalf("%s %+v: %v", env, q, err)
		}
		return items
	}
	rank := func(items []discover.Item) []ranked {
		out := []ranked{}
		for _, it := range items {
			r := ranked{ID: it.ID, Score: -1}
			if it.Score != nil {
				r.Score = *it.Score
			}
			out = append(out, r)
		}
		return out
	}
	// walk pages q by limit from the start, following each page's last
	// position as the transport's cursor does.
	walk := func(env access.Environment, q discover.Query, limit int) []ranked {
		t.Helper()
		out := []ranked{}
		q.Limit, q.After = limit+1, nil
		for range 20 {
			items := list(env, q)
			more := len(items) > limit
			if more {
				items = items[:limit]
			}
			out = append(out, rank(items)...)
			if !more {
				return out
			}
			last := items[len(items)-1]
			q.After = &discover.Position{ID: last.ID}
			if last.Score != nil {
				q.After.Score = *last.Score
			}
		}
		t.Fatalf("%+v does not end", q)
		return nil
	}

	// Projects: p8 (2 accepted) wins the tie with p2 and p1 as the
	// newest; p9 and p3 tie at zero, p9 the newer. Never the draft, the
	// archived one, the workspace's or the other environment's.
	projects := []ranked{{p8, 2}, {p2, 2}, {p1, 2}, {p9, 0}, {p3, 0}}
	singles := []ranked{{p8, 2}}
	creators := []ranked{{"usr_2", 6}, {"usr_3", 3}, {"usr_1", 3}}
	tracksRanked := []ranked{}
	for _, id := range tracks {
		tracksRanked = append(tracksRanked, ranked{id, -1})
	}
	remixes := []ranked{tracksRanked[0], tracksRanked[3]}
	for name, c := range map[string]struct {
		env  access.Environment
		q    discover.Query
		want []ranked
	}{
		"projects":      {live, discover.Query{Kind: discover.KindProject}, projects},
		"singles":       {live, discover.Query{Kind: discover.KindProject, Type: "single"}, singles},
		"albums":        {live, discover.Query{Kind: discover.KindProject, Type: "album"}, []ranked{}},
		"tracks":        {live, discover.Query{Kind: discover.KindTrack}, tracksRanked},
		"remixes":       {live, discover.Query{Kind: discover.KindTrack, Type: "remix"}, remixes},
		"creators":      {live, discover.Query{Kind: discover.KindCreator}, creators},
		"test projects": {test, discover.Query{Kind: discover.KindProject}, []ranked{{p7, 1}}},
		"test tracks":   {test, discover.Query{Kind: discover.KindTrack}, []ranked{{testTrack, -1}}},
		// usr_3 owns p7, usr_1 contributed to it: a tie at 1, the newer
		// account first.
		"test creators": {test, discover.Query{Kind: discover.KindCreator}, []ranked{{"usr_3", 1}, {"usr_1", 1}}},
	} {
		for _, limit := range []int{1, 2, 100} {
			if diff := cmp.Diff(c.want, walk(c.env, c.q, limit)); diff != "" {
				t.Errorf("%s in pages of %d (-want +got):\n%s", name, limit, diff)
			}
		}
	}

	// A page after a position holds only what ranks below it: a lower
	// score, or the same score and a smaller id; a limit bounds it.
	for _, c := range []struct {
		after discover.Position
		limit int
		want  []ranked
	}{
		{discover.Position{Score: 2, ID: p2}, 10, projects[2:]},
		{discover.Position{Score: 2, ID: p1}, 10, projects[3:]},
		{discover.Position{Score: 1, ID: "prj_zzzz"}, 10, projects[3:]},
		{discover.Position{Score: 9, ID: ""}, 2, projects[:2]},
		{discover.Position{Score: 0, ID: p3}, 10, []ranked{}},
	} {
		after := c.after
		got := rank(list(live, discover.Query{Kind: discover.KindProject, After: &after, Limit: c.limit}))
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("projects after %+v (-want +got):\n%s", c.after, diff)
		}
	}
	after := discover.Position{ID: tracks[1]}
	if got := rank(list(live, discover.Query{Kind: discover.KindTrack, After: &after, Limit: 10})); !cmp.Equal(got, tracksRanked[2:]) {
		t.Errorf("tracks after %s: %v, want %v", tracks[1], got, tracksRanked[2:])
	}

	// The items' facts.
	items := list(live, discover.Query{Kind: discover.KindProject, Limit: 1})
	if it := items[0]; it.Kind != discover.KindProject || it.CreatorID != "usr_3" || it.Type != "single" || it.Environment != live ||
		it.Project == nil || it.Project.ID != p8 || it.Project.Status != project.StatusReview || it.Project.AcceptedSubmissions != 2 ||
		it.Track != nil || it.Creator != nil {
		t.Errorf("the first project: %+v", it)
	}
	items = list(live, discover.Query{Kind: discover.KindTrack, Limit: 1})
	if it := items[0]; it.Kind != discover.KindTrack || it.Score != nil || it.CreatorID != "usr_4" || it.Type != "remix" ||
		it.Track == nil || it.Track.AssetID != "ast_"+tracks[0] || it.Track.AcceptedAt.IsZero() || it.Project == nil || it.Project.ID != p8 ||
		it.Project.AcceptedSubmissions != 2 {
		t.Errorf("the newest track: %+v", it)
	}
	items = list(live, discover.Query{Kind: discover.KindCreator, Limit: 1})
	if it := items[0]; it.Kind != discover.KindCreator || it.CreatorID != "usr_2" || it.Title != "User 2" || it.Creator == nil ||
		it.Creator.Wallet != links[0].addr || it.Creator.PublicProjects != 3 || it.Creator.Contributions != 3 {
		t.Errorf("the first creator: %+v (public projects count the draft and the archived one, as a profile does)", it)
	}
}
