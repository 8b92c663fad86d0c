package e2e_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// graphUpload uploads a short WAV as p and returns the asset's id.
func graphUpload(t *testing.T, s *platformtest.System, p person) string {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/assets", Cookie: p.cookie,
		Body: pcmWAV(8000, 800, func(int) float64 { return 0.25 }), Header: map[string]string{"Content-Type": "audio/wav"}})
	var a api.AssetView
	r.Data(t, &a)
	if r.Status != http.StatusCreated {
		t.Fatalf("upload as %s: %d %s", p.email, r.Status, r.Body)
	}
	return a.ID
}

// graphAccept submits assetID to projectID as by, and decider (the
// project's owner) accepts it; it returns the submission's id.
func graphAccept(t *testing.T, s *platformtest.System, by, decider person, projectID, assetID string) string {
	t.Helper()
	s.Clock.Advance(time.Millisecond)
	r := sbmCreate(s, platformtest.Request{Cookie: by.cookie}, map[string]any{"projectId": projectID, "type": "audio", "title": "Take",
		"assetId": assetID})
	var v api.SubmissionView
	r.Data(t, &v)
	if r.Status != http.StatusCreated {
		t.Fatalf("submit as %s: %d %s", by.email, r.Status, r.Body)
	}
	sbmDecide(t, s, decider, v.ID, project.SubmissionAccepted)
	return v.ID
}

// graphParents records parents as provenance parents of their assets, as
// a processing operation that read them records them.
func graphParents(t *testing.T, s *platformtest.System, parents map[string]string) {
	t.Helper()
	ctx := context.Background()
	if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		for asset, parent := range parents {
			if _, err := tx.IDB().ExecContext(ctx, `INSERT INTO asset_provenance_parents (asset_id, ordinal, parent_asset_id, parent_sha256)
				VALUES (?, 0, ?, NULL)`, asset, parent); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCreatorGraphPrivateCreator: a creator whose only project is a
// workspace project, with a collaboration and a remix derived from its
// records, and an outside creator's public work naming one of them as a
// parent. The relations are shown, marked not public, to callers of the
// workspace who read those records: the owner, a VIEWER, a MEMBER
// assigned to the project; a MEMBER of the workspace who cannot read the
// project (GET /api/v1/projects/{id} is 404 to it) sees no collaboration
// derived from it. Outside the workspace (another tenant's session or
// key, the outside creator itself) and in the other environment nothing
// derived from the private records shows, in any creator's graph, and
// discovery lists none of it.
func TestCreatorGraphPrivateCreator(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		lead, m := team(t, s, "label", map[string]string{"crew": "CREATOR", "viewer": "VIEWER", "member": "MEMBER", "assigned": "MEMBER"})
		crew, viewer, member, assigned := m["crew"], m["viewer"], m["member"], m["assigned"]
		maker := signIn(t, s, "maker@elsewhere.example", "Maker")
		onboard(t, s, &maker, "Elsewhere")
		reader := signIn(t, s, "reader@fourth.example", "Reader")
		onboard(t, s, &reader, "Fourth")
		for _, p := range []person{lead, crew, maker} {
			linkWallet(t, s, p, newWalletKey(t))
		}

		priv := sbmOpenProject(t, s, lead, "workspace")
		if r := setMember(s, lead, priv.ID, assigned.userID, "collaborator"); r.Status != http.StatusOK {
			t.Fatalf("assign: %d %s", r.Status, r.Body)
		}
		leadAsset, crewAsset := graphUpload(t, s, lead), graphUpload(t, s, crew)
		leadSub := graphAccept(t, s, lead, lead, priv.ID, leadAsset)
		crewSub := graphAccept(t, s, crew, lead, priv.ID, crewAsset)
		// The maker's public work: accepted into the maker's own public
		// project, naming the lead's private take as its parent.
		makerPub := sbmOpenProject(t, s, maker, "public")
		makerAsset := graphUpload(t, s, maker)
		graphAccept(t, s, maker, maker, makerPub.ID, makerAsset)
		graphParents(t, s, map[string]string{crewAsset: leadAsset, makerAsset: leadAsset})

		// Who reads the private records: the project, and both takes (the
		// workspace's assets, which every member holding project.read
		// reads).
		for _, c := range []struct {
			who            person
			project, asset int
		}{{lead, http.StatusOK, http.StatusOK}, {viewer, http.StatusOK, http.StatusOK}, {assigned, http.StatusOK, http.StatusOK},
			{member, http.StatusNotFound, http.StatusOK}, {reader, http.StatusNotFound, http.StatusNotFound},
			{maker, http.StatusNotFound, http.StatusNotFound}} {
			if r := getProject(s, c.who.cookie, priv.ID); r.Status != c.project {
				t.Fatalf("%s reads the workspace project: %d %s, want %d", c.who.email, r.Status, r.Body, c.project)
			}
			for _, id := range []string{leadAsset, crewAsset} {
				if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/assets/" + id, Cookie: c.who.cookie}); r.Status != c.asset {
					t.Fatalf("%s reads asset %s: %d %s, want %d", c.who.email, id, r.Status, r.Body, c.asset)
				}
			}
		}

		collab, remix := "collaborated mutual "+crew.userID, "remixed incoming "+crew.userID
		insiders := map[string]struct {
			req  platformtest.Request
			want []string
		}{
			"the owner":            {platformtest.Request{Cookie: lead.cookie}, []string{collab, remix}},
			"a VIEWER":             {platformtest.Request{Cookie: viewer.cookie}, []string{collab, remix}},
			"an assigned MEMBER":   {platformtest.Request{Cookie: assigned.cookie}, []string{collab, remix}},
			"an unassigned MEMBER": {platformtest.Request{Cookie: member.cookie}, []string{remix}},
		}
		for name, c := range insiders {
			m := edges(graphOf(t, s, c.req, lead.userID))
			var got []string
			for k := range m {
				got = append(got, k)
			}
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the lead's graph as %s: %v, want %v", name, got, want)
				continue
			}
			if src, ok := m[collab]; ok && (src.Public || *src.ProjectID != priv.ID || *src.SubmissionID != leadSub ||
				*src.OtherSubmissionID != crewSub) {
				t.Errorf("the collaboration as %s: %+v", name, src)
			}
			if src, ok := m[remix]; ok && (src.Public || *src.AssetID != crewAsset || *src.ParentAssetID != leadAsset) {
				t.Errorf("the remix as %s: %+v", name, src)
			}
		}

		// Outside the workspace and in the other environment: nothing of
		// the private records, in the lead's, the crew's or the maker's
		// graph (the maker's work names a private parent: not public).
		makerTestKey, _ := createKeyAs(t, s, maker, map[string]any{"name": "reader", "scopes": []string{"read"}})
		for name, req := range map[string]platformtest.Request{
			"another tenant's session":       {Cookie: reader.cookie},
			"another tenant's key":           {Key: s.Boot.LiveKey},
			"the outside creator":            {Cookie: maker.cookie},
			"the outside creator's test key": {Key: makerTestKey},
			"the owner in test mode":         {Cookie: lead.cookie, Header: testMode},
			"the VIEWER in test mode":        {Cookie: viewer.cookie, Header: testMode},
			"another tenant's test key":      {Key: s.Boot.TestKey},
			"another tenant in test mode":    {Cookie: reader.cookie, Header: testMode},
		} {
			for who, id := range map[string]string{"lead": lead.userID, "crew": crew.userID, "maker": maker.userID} {
				if g := graphOf(t, s, req, id); len(g.Relations) != 0 {
					t.Errorf("the %s's graph as %s: %+v", who, name, g.Relations)
				}
			}
		}
		// Inside, the crew's graph mirrors the lead's; the maker's shows
		// nothing to anyone.
		if m := edges(graphOf(t, s, platformtest.Request{Cookie: viewer.cookie}, crew.userID)); len(m) != 2 {
			t.Errorf("the crew's graph as the VIEWER: %v", m)
		}
		if m := edges(graphOf(t, s, platformtest.Request{Cookie: lead.cookie}, maker.userID)); len(m) != 0 {
			t.Errorf("the maker's graph as the lead: %v", m)
		}

		// Discovery: the maker's public project, work and profile; none of
		// the lead's or the crew's private records.
		asReader := platformtest.Request{Cookie: reader.cookie}
		for kind, want := range map[string][]string{"project": {makerPub.ID}, "creator": {maker.userID}} {
			if got, _ := discoverPages(t, s, asReader, url.Values{"kind": {kind}}); !slices.Equal(discoverIDs(got), want) {
				t.Errorf("discovered %ss: %v, want %v", kind, discoverIDs(got), want)
			}
		}
		if got, _ := discoverPages(t, s, asReader, url.Values{"kind": {"track"}}); len(got) != 1 || got[0].CreatorID != maker.userID {
			t.Errorf("discovered tracks: %+v", got)
		}
	})
}
