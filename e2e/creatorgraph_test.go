package e2e_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// graphOf reads creatorID's graph as req.
func graphOf(t *testing.T, s *platformtest.System, req platformtest.Request, creatorID string) api.CreatorGraphView {
	t.Helper()
	req.Method, req.Path = http.MethodGet, "/api/v1/creator-graph/"+creatorID
	r := s.Do(req)
	if r.Status != http.StatusOK {
		t.Fatalf("graph of %s as %s: %d %s", creatorID, credentialName(req), r.Status, r.Body)
	}
	var g api.CreatorGraphView
	r.Data(t, &g)
	return g
}

// edges are a graph's relations as "kind direction other" strings.
func edges(g api.CreatorGraphView) map[string]api.CreatorRelationSourceView {
	out := map[string]api.CreatorRelationSourceView{}
	for _, r := range g.Relations {
		out[r.Kind+" "+r.Direction+" "+r.CreatorID] = r.Source
	}
	return out
}

// TestCreatorGraph: collaborations and remixes are derived from accepted
// submissions and provenance parents, follows are declared by the
// follower about themselves only (idempotent, withdrawn with state
// removed, one outbox event per change), and every reader sees the same
// public graph in its own environment; a relation whose records are not
// public is not shown outside their workspace; oneself, a non-creator,
// an API key, a body naming another subject, a key without scope read
// and an anonymous caller are refused.
func TestCreatorGraph(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		lead := signIn(t, s, "lead@label.example", "Lead")
		onboard(t, s, &lead, "Label")
		maker := signIn(t, s, "maker@elsewhere.example", "Maker")
		onboard(t, s, &maker, "Elsewhere")
		other := signIn(t, s, "other@third.example", "Other")
		onboard(t, s, &other, "Third")
		reader := signIn(t, s, "reader@fourth.example", "Reader")
		onboard(t, s, &reader, "Fourth")
		for _, p := range []person{lead, maker, other} {
			linkWallet(t, s, p, newWalletKey(t))
		}
		pub := sbmOpenProject(t, s, lead, "public")
		priv := sbmOpenProject(t, s, lead, "workspace")
		wav := pcmWAV(8000, 800, func(int) float64 { return 0.25 })
		asset := func(p person) string {
			t.Helper()
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/assets", Cookie: p.cookie, Body: wav,
				Header: map[string]string{"Content-Type": "audio/wav"}})
			var a api.AssetView
			r.Data(t, &a)
			if r.Status != http.StatusCreated {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			return a.ID
		}
		accept := func(by person, projectID, assetID string) string {
			t.Helper()
			s.Clock.Advance(time.Millisecond)
			r := sbmCreate(s, platformtest.Request{Cookie: by.cookie}, map[string]any{"projectId": projectID, "type": "audio",
				"title": "Take", "assetId": assetID})
			var v api.SubmissionView
			r.Data(t, &v)
			if r.Status != http.StatusCreated {
				t.Fatalf("submit: %d %s", r.Status, r.Body)
			}
			sbmDecide(t, s, lead, v.ID, project.SubmissionAccepted)
			return v.ID
		}
		makerAsset, otherAsset, leadAsset := asset(maker), asset(other), asset(lead)
		makerSub, otherSub := accept(maker, pub.ID, makerAsset), accept(other, pub.ID, otherAsset)
		accept(lead, priv.ID, leadAsset)
		// Remixes, as a processing operation records its parents: the
		// maker's work names the other's (both accepted into a public
		// project: public); the lead's names the other's too, but the
		// lead's is in-house work of a workspace project (not public).
		err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			for asset, parent := range map[string]string{makerAsset: otherAsset, leadAsset: otherAsset} {
				if _, err := tx.IDB().ExecContext(ctx, `INSERT INTO asset_provenance_parents (asset_id, ordinal, parent_asset_id, parent_sha256)
					VALUES (?, 0, ?, NULL)`, asset, parent); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		// The maker follows the other, as a session, about themselves.
		declare := func(p person, body map[string]any) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/creator-graph/relations", Cookie: p.cookie, Body: body})
		}
		events := func() int {
			return count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type LIKE 'creator_relation.%'`)
		}
		var rel api.DeclaredRelationView
		for i, c := range []struct {
			state   string
			status  int
			version int64
			events  int
		}{
			{"", http.StatusCreated, 1, 1},
			{"active", http.StatusOK, 1, 1}, // idempotent: nothing changes
			{"removed", http.StatusOK, 2, 2},
			{"removed", http.StatusOK, 2, 2},
			{"active", http.StatusOK, 3, 3},
		} {
			body := map[string]any{"creatorId": other.userID, "kind": "follows"}
			if c.state != "" {
				body["state"] = c.state
			}
			r := declare(maker, body)
			r.Data(t, &rel)
			if r.Status != c.status || rel.Version != c.version || rel.FromCreatorID != maker.userID || rel.ToCreatorID != other.userID ||
				rel.Environment != "live" || events() != c.events {
				t.Errorf("declaration %d (%s): %d %s, %d events", i, c.state, r.Status, r.Body, events())
			}
		}

		// The graph, read alike by a reader of a fourth tenant and by a
		// key of yet another.
		for _, req := range []platformtest.Request{{Cookie: reader.cookie}, {Key: s.Boot.LiveKey}} {
			m := edges(graphOf(t, s, req, maker.userID))
			if len(m) != 3 {
				t.Errorf("the maker's graph as %s: %v", credentialName(req), m)
			}
			if src, ok := m["collaborated mutual "+other.userID]; !ok || src.Type != "derived" || src.Record != "submissions" ||
				*src.ProjectID != pub.ID || *src.SubmissionID != makerSub || *src.OtherSubmissionID != otherSub || !src.Public {
				t.Errorf("the maker's collaboration: %+v", src)
			}
			if src, ok := m["remixed outgoing "+other.userID]; !ok || src.Record != "asset_provenance" || *src.AssetID != makerAsset ||
				*src.ParentAssetID != otherAsset || !src.Public {
				t.Errorf("the maker's remix: %+v", src)
			}
			if src, ok := m["follows outgoing "+other.userID]; !ok || src.Type != "declared" || *src.RelationID != rel.ID ||
				!src.DeclaredAt.Equal(rel.UpdatedAt) || !src.Public {
				t.Errorf("the maker's follow: %+v", src)
			}
			o := edges(graphOf(t, s, req, other.userID))
			_, collab := o["collaborated mutual "+maker.userID]
			_, remixed := o["remixed incoming "+maker.userID]
			_, followed := o["follows incoming "+maker.userID]
			if len(o) != 3 || !collab || !remixed || !followed {
				t.Errorf("the other's graph as %s: %v (the lead's in-house remix is not public)", credentialName(req), o)
			}
		}
		// The other environment: nothing of live.
		if g := graphOf(t, s, platformtest.Request{Key: s.Boot.TestKey}, maker.userID); len(g.Relations) != 0 || g.Environment != "test" {
			t.Errorf("the maker's graph in test: %+v", g)
		}
		// One's own graph, with no wallet: empty, not 404.
		if g := graphOf(t, s, platformtest.Request{Cookie: reader.cookie}, reader.userID); len(g.Relations) != 0 {
			t.Errorf("the reader's own graph: %+v", g)
		}

		// Refused, changing nothing.
		narrowR, narrow := createKey(t, s, s.Boot.LiveKey, map[string]any{"name": "writer", "scopes": []string{"projects:write"}}, "")
		if narrowR.Status != http.StatusCreated {
			t.Fatalf("narrow key: %d %s", narrowR.Status, narrowR.Body)
		}
		before := events()
		for name, c := range map[string]struct {
			req    platformtest.Request
			status int
			code   string
		}{
			"following oneself": {platformtest.Request{Method: http.MethodPost, Path: "/api/v1/creator-graph/relations", Cookie: maker.cookie,
				Body: map[string]any{"creatorId": maker.userID, "kind": "follows"}}, http.StatusBadRequest, "INVALID_INPUT"},
			"following a non-creator": {platformtest.Request{Method: http.MethodPost, Path: "/api/v1/creator-graph/relations", Cookie: maker.cookie,
				Body: map[string]any{"creatorId": reader.userID, "kind": "follows"}}, http.StatusNotFound, "NOT_FOUND"},
			"declaring for another": {platformtest.Request{Method: http.MethodPost, Path: "/api/v1/creator-graph/relations", Cookie: maker.cookie,
				Body: map[string]any{"fromCreatorId": other.userID, "creatorId": lead.userID, "kind": "follows"}}, http.StatusBadRequest, "INVALID_INPUT"},
			"an unknown kind": {platformtest.Request{Method: http.MethodPost, Path: "/api/v1/creator-graph/relations", Cookie: maker.cookie,
				Body: map[string]any{"creatorId": lead.userID, "kind": "collaborated"}}, http.StatusBadRequest, "INVALID_INPUT"},
			"withdrawing what was never declared": {platformtest.Request{Method: http.MethodPost, Path: "/api/v1/creator-graph/relations",
				Cookie: maker.cookie, Body: map[string]any{"creatorId": lead.userID, "kind": "follows", "state": "removed"}}, http.StatusNotFound, "NOT_FOUND"},
			"an API key declaring": {platformtest.Request{Method: http.MethodPost, Path: "/api/v1/creator-graph/relations", Key: s.Boot.LiveKey,
				Body: map[string]any{"creatorId": lead.userID, "kind": "follows"}}, http.StatusForbidden, "ACCESS_DENIED"},
			"a key without scope read": {platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creator-graph/" + maker.userID, Key: narrow.Secret},
				http.StatusForbidden, "ACCESS_DENIED"},
			"an anonymous read":  {platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creator-graph/" + maker.userID}, http.StatusUnauthorized, "UNAUTHENTICATED"},
			"an unknown creator": {platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creator-graph/usr_nobody", Cookie: reader.cookie}, http.StatusNotFound, "NOT_FOUND"},
		} {
			if r := s.Do(c.req); r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
			}
		}
		if n := events(); n != before {
			t.Errorf("refused calls wrote %d events", n-before)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM creator_relations`); n != 1 {
			t.Errorf("%d relations stored, want 1", n)
		}
	})
}
