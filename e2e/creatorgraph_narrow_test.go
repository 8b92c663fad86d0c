package e2e_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// liveKeyAs creates a live API key with scopes as p's session.
func liveKeyAs(t *testing.T, s *platformtest.System, p person, scopes ...string) string {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/api-keys", Cookie: p.cookie,
		Body: map[string]any{"name": "probe", "scopes": scopes, "environment": "live"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create a live key %v: %d %s", scopes, r.Status, r.Body)
	}
	var ks api.KeySecret
	r.Data(t, &ks)
	return ks.Secret
}

// TestDiscoverAndCreatorGraphNarrowerCallers: GET /api/v1/discover, GET
// /api/v1/creator-graph/{creatorId} and POST
// /api/v1/creator-graph/relations between principals of one workspace.
// Any active member reads both lists (AnyMember, scope read): a MEMBER and
// a VIEWER read exactly what the owner reads, and so does the owner's key
// with scope read. A key without scope read (projects:write,
// sound:read, ai:use) is ACCESS_DENIED on the reads; every key, however
// broad, is ACCESS_DENIED on the declaration (sessions only); a narrower
// member declares about itself only (naming another subject is
// INVALID_INPUT); a suspended member is WORKSPACE_ACCESS_DENIED on all
// three. None of the refusals stores a relation or writes an event.
func TestDiscoverAndCreatorGraphNarrowerCallers(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		owner, m := team(t, s, "narrow", map[string]string{"member": "MEMBER", "viewer": "VIEWER", "gone": "MEMBER"})
		member, viewer, gone := m["member"], m["viewer"], m["gone"]
		other := signIn(t, s, "other@elsewhere.example", "Other")
		onboard(t, s, &other, "Elsewhere")
		for _, p := range []person{owner, other} {
			linkWallet(t, s, p, newWalletKey(t))
		}
		// A public collaboration: the owner's take accepted into the
		// other's public project beside the other's own.
		pub := sbmOpenProject(t, s, other, "public")
		graphAccept(t, s, owner, other, pub.ID, graphUpload(t, s, owner))
		graphAccept(t, s, other, other, pub.ID, graphUpload(t, s, other))

		readKey := liveKeyAs(t, s, owner, "read")
		writeKey := liveKeyAs(t, s, owner, "projects:write")
		soundKey := liveKeyAs(t, s, owner, "sound:read")
		aiKey := liveKeyAs(t, s, owner, "ai:use")
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.MembershipStatusSet(ctx, authContext(t, s, owner.cookie).Workspace.ID, gone.userID, access.MembershipSuspended)
		}); err != nil {
			t.Fatal(err)
		}

		// Reads: every member and every read key answers the owner's.
		asOwner := platformtest.Request{Cookie: owner.cookie}
		wantGraph := edges(graphOf(t, s, asOwner, owner.userID))
		if src, ok := wantGraph["collaborated mutual "+other.userID]; len(wantGraph) != 1 || !ok || !src.Public {
			t.Fatalf("the owner's graph: %v", wantGraph)
		}
		wantDiscover := map[string][]string{}
		for _, kind := range []string{"project", "track", "creator"} {
			got, _ := discoverPages(t, s, asOwner, url.Values{"kind": {kind}})
			wantDiscover[kind] = discoverIDs(got)
		}
		if !slices.Equal(wantDiscover["project"], []string{pub.ID}) || len(wantDiscover["track"]) != 2 ||
			!slices.Equal(wantDiscover["creator"], []string{other.userID, owner.userID}) {
			t.Fatalf("the owner discovers %v", wantDiscover)
		}
		for name, req := range map[string]platformtest.Request{
			"a MEMBER":             {Cookie: member.cookie},
			"a VIEWER":             {Cookie: viewer.cookie},
			"the owner's read key": {Key: readKey},
		} {
			if diff := cmp.Diff(wantGraph, edges(graphOf(t, s, req, owner.userID))); diff != "" {
				t.Errorf("the owner's graph as %s (-owner's +got):\n%s", name, diff)
			}
			for kind, want := range wantDiscover {
				if got, _ := discoverPages(t, s, req, url.Values{"kind": {kind}}); !slices.Equal(discoverIDs(got), want) {
					t.Errorf("%ss as %s: %v, want %v", kind, name, discoverIDs(got), want)
				}
			}
		}

		// Refusals, changing nothing.
		relations := func() int { return count(t, s, `SELECT COUNT(*) FROM creator_relations`) }
		events := func() int {
			return count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type LIKE 'creator_relation.%'`)
		}
		follow := map[string]any{"creatorId": other.userID, "kind": "follows"}
		declare := func(req platformtest.Request, body map[string]any) platformtest.Request {
			req.Method, req.Path, req.Body = http.MethodPost, "/api/v1/creator-graph/relations", body
			return req
		}
		read := func(req platformtest.Request, path string) platformtest.Request {
			req.Method, req.Path = http.MethodGet, path
			return req
		}
		type probe struct {
			req    platformtest.Request
			status int
			code   string
		}
		probes := map[string]probe{
			"a MEMBER declaring for another": {declare(platformtest.Request{Cookie: member.cookie},
				map[string]any{"fromCreatorId": owner.userID, "creatorId": other.userID, "kind": "follows"}), http.StatusBadRequest, "INVALID_INPUT"},
			"a VIEWER declaring for another": {declare(platformtest.Request{Cookie: viewer.cookie},
				map[string]any{"fromCreatorId": other.userID, "creatorId": owner.userID, "kind": "follows"}), http.StatusBadRequest, "INVALID_INPUT"},
		}
		for name, key := range map[string]string{"read": readKey, "projects:write": writeKey,
			"sound:read": soundKey, "ai:use": aiKey} {
			probes["a "+name+" key declaring"] = probe{declare(platformtest.Request{Key: key}, follow), http.StatusForbidden, "ACCESS_DENIED"}
		}
		for name, key := range map[string]string{"projects:write": writeKey, "sound:read": soundKey, "ai:use": aiKey} {
			probes["a "+name+" key discovering"] = probe{read(platformtest.Request{Key: key}, "/api/v1/discover?kind=creator"),
				http.StatusForbidden, "ACCESS_DENIED"}
			probes["a "+name+" key reading a graph"] = probe{read(platformtest.Request{Key: key}, "/api/v1/creator-graph/"+owner.userID),
				http.StatusForbidden, "ACCESS_DENIED"}
		}
		suspended := platformtest.Request{Cookie: gone.cookie}
		probes["a suspended member discovering"] = probe{read(suspended, "/api/v1/discover"), http.StatusForbidden, "WORKSPACE_ACCESS_DENIED"}
		probes["a suspended member reading a graph"] = probe{read(suspended, "/api/v1/creator-graph/"+owner.userID), http.StatusForbidden,
			"WORKSPACE_ACCESS_DENIED"}
		probes["a suspended member declaring"] = probe{declare(suspended, follow), http.StatusForbidden, "WORKSPACE_ACCESS_DENIED"}

		rs, es := relations(), events()
		for name, c := range probes {
			if r := s.Do(c.req); r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
			}
		}
		if relations() != rs || events() != es {
			t.Errorf("refusals stored %d relations and %d events", relations()-rs, events()-es)
		}

		// A narrower member declares about itself: its own follow, one
		// event.
		r := s.Do(declare(platformtest.Request{Cookie: member.cookie}, follow))
		var d api.DeclaredRelationView
		r.Data(t, &d)
		if r.Status != http.StatusCreated || d.FromCreatorID != member.userID || d.ToCreatorID != other.userID || relations() != rs+1 ||
			events() != es+1 {
			t.Errorf("a MEMBER follows: %d %s", r.Status, r.Body)
		}
	})
}
