package e2e_test

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport/api"
)

// linkWallet verifies w as a wallet of p's account through the wallet
// routes (a signed Sign-In With Solana challenge).
func linkWallet(t testing.TB, s *platformtest.System, p person, w walletKey) {
	t.Helper()
	c := challenge(t, s, p, w.addr)
	if r := verifyWallet(s, p, c.ID, ed25519.Sign(w.priv, []byte(c.Message)), ""); r.Status != http.StatusOK {
		t.Fatalf("verify %s for %s: %d %s", w.addr, p.email, r.Status, r.Body)
	}
}

// getCreator reads the creator behind wallet as req's credential.
func getCreator(t testing.TB, s *platformtest.System, req platformtest.Request, wallet string) api.CreatorView {
	t.Helper()
	req.Method, req.Path = http.MethodGet, "/api/v1/creators/"+wallet
	r := s.Do(req)
	if r.Status != http.StatusOK {
		t.Fatalf("creator %s as %s: %d %s", wallet, credentialName(req), r.Status, r.Body)
	}
	var v api.CreatorView
	r.Data(t, &v)
	return v
}

// badWallets are wallet path values that are not Solana public keys.
func badWallets() map[string]string {
	bytes := func(n int) string { return token2022.EncodeBase58([]byte(strings.Repeat("\x07", n))) }
	return map[string]string{"too short": "abc", "not base58": "0OIl" + bytes(32)[4:], "31 bytes": bytes(31),
		"33 bytes": bytes(33), "too long": strings.Repeat("z", 60)}
}

// TestCreatorProfile: creators of two tenants read each other's profiles
// by verified wallet, with public fields only and counts of the caller's
// environment; a wallet no account verified is 404; a malformed wallet is
// 400 INVALID_INPUT on field wallet before the credential is even read
// (an anonymous request gets it too, where a well-formed one is 401); a
// wallet linked in several tenants stands for the caller's tenant's
// account, else for the first that verified it.
func TestCreatorProfile(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.com", "Alice")
		aliceWS := onboard(t, s, &alice, "Alice Studio")
		bob := signIn(t, s, "bob@elsewhere.example", "Bob")
		onboard(t, s, &bob, "Bob Studio")
		wa, wb := newWalletKey(t), newWalletKey(t)
		linkWallet(t, s, alice, wa)
		s.Clock.Advance(time.Second)
		linkWallet(t, s, bob, wb)

		for _, body := range []map[string]any{{"title": "Public one", "type": "single", "visibility": "public"},
			{"title": "Public two", "type": "remix", "visibility": "public"}, {"title": "Private", "type": "album"}} {
			createProject(t, s, alice.cookie, body)
		}
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects", Cookie: alice.cookie, Header: testMode,
			Body: map[string]any{"title": "Test public", "type": "single", "visibility": "public"}})
		if r.Status != http.StatusCreated {
			t.Fatalf("test-mode project: %d %s", r.Status, r.Body)
		}

		// Bob reads Alice's profile, live and in test mode.
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creators/" + wa.addr, Cookie: bob.cookie})
		var a api.CreatorView
		r.Data(t, &a)
		if r.Status != http.StatusOK || a.ID != alice.userID || a.Object != "creator" || a.DisplayName != "Alice" ||
			a.Wallet.Address != wa.addr || a.Wallet.Network != "solana" || a.Wallet.VerifiedAt.IsZero() || a.CreatedAt.IsZero() ||
			a.Environment != "live" || a.Counts.PublicProjects != 2 {
			t.Fatalf("Alice's profile as Bob: %d %+v", r.Status, a)
		}
		for _, secret := range []string{alice.email, aliceWS} {
			if strings.Contains(string(r.Body), secret) {
				t.Errorf("the profile shows %q: %s", secret, r.Body)
			}
		}
		if a := getCreator(t, s, platformtest.Request{Cookie: bob.cookie, Header: testMode}, wa.addr); a.Environment != "test" || a.Counts.PublicProjects != 1 {
			t.Errorf("Alice's profile in test mode: %+v, want 1 public project", a)
		}
		// Alice reads Bob's, who has no public project.
		if b := getCreator(t, s, platformtest.Request{Cookie: alice.cookie}, wb.addr); b.ID != bob.userID || b.DisplayName != "Bob" || b.Counts.PublicProjects != 0 {
			t.Errorf("Bob's profile as Alice: %+v", b)
		}
		// An API key with scope read reads profiles in its environment;
		// one without it is refused.
		if a := getCreator(t, s, platformtest.Request{Key: s.Boot.TestKey}, wa.addr); a.ID != alice.userID || a.Counts.PublicProjects != 1 {
			t.Errorf("Alice's profile by a test key: %+v", a)
		}
		kr, narrow := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "writer", "scopes": []string{"projects:write"}}, "")
		if kr.Status != http.StatusCreated {
			t.Fatalf("narrow key: %d %s", kr.Status, kr.Body)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creators/" + wa.addr, Key: narrow.Secret}); r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" {
			t.Errorf("a key without scope read: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creators/" + wa.addr}); r.Status != http.StatusUnauthorized {
			t.Errorf("an anonymous read: %d %s", r.Status, r.Body)
		}

		// A wallet nobody linked, and one whose challenge was never
		// verified, are 404.
		carol := signIn(t, s, "carol@third.example", "Carol")
		onboard(t, s, &carol, "Carol Studio")
		unverified := newWalletKey(t)
		challenge(t, s, carol, unverified.addr)
		for name, w := range map[string]string{"never linked": newWalletKey(t).addr, "never verified": unverified.addr} {
			r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creators/" + w, Cookie: bob.cookie})
			if r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
				t.Errorf("%s wallet: %d %s", name, r.Status, r.Body)
			}
			r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creators/" + w + "/projects", Cookie: bob.cookie})
			if r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
				t.Errorf("projects of a %s wallet: %d %s", name, r.Status, r.Body)
			}
		}

		// Malformed wallets: 400 on field wallet, for a signed-in caller
		// and for an anonymous one alike, on both routes.
		for name, w := range badWallets() {
			for _, path := range []string{"/api/v1/creators/" + url.PathEscape(w), "/api/v1/creators/" + url.PathEscape(w) + "/projects"} {
				for _, req := range []platformtest.Request{{Cookie: bob.cookie}, {}} {
					req.Method, req.Path = http.MethodGet, path
					r := s.Do(req)
					e, _ := r.JSON()["error"].(map[string]any)
					details, _ := e["details"].(map[string]any)
					if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" || details["field"] != "wallet" {
						t.Errorf("%s wallet %s as %s: %d %s", name, path, credentialName(req), r.Status, r.Body)
					}
				}
			}
		}

		// Dave, of a fourth tenant, links Alice's wallet later (he holds
		// its key too). His tenant sees him; every other tenant sees
		// Alice, the first to prove control.
		s.Clock.Advance(time.Second)
		dave := signIn(t, s, "dave@fourth.example", "Dave")
		onboard(t, s, &dave, "Dave Studio")
		linkWallet(t, s, dave, wa)
		for name, c := range map[string]struct {
			cookie, want string
		}{"Dave": {dave.cookie, dave.userID}, "Bob": {bob.cookie, alice.userID}, "Alice": {alice.cookie, alice.userID},
			"Carol": {carol.cookie, alice.userID}} {
			if got := getCreator(t, s, platformtest.Request{Cookie: c.cookie}, wa.addr); got.ID != c.want {
				t.Errorf("the wallet linked twice, read by %s: creator %s, want %s", name, got.ID, c.want)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM wallet_links WHERE address = ?`, wa.addr); n != 2 {
			t.Fatalf("%d links of the shared wallet, want 2", n)
		}
	})
}

// TestCreatorProjectsAndPublicListing: a creator's public projects, and
// the community listing of every tenant's public projects, read across
// tenants in the caller's environment only, never a workspace project,
// filtered and paged over more than 100 rows with no duplicate or gap;
// their cursors are refused under another wallet, filters, environment or
// list.
func TestCreatorProjectsAndPublicListing(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.com", "Alice")
		onboard(t, s, &alice, "Alice Studio")
		bob := signIn(t, s, "bob@elsewhere.example", "Bob")
		onboard(t, s, &bob, "Bob Studio")
		wa, wb := newWalletKey(t), newWalletKey(t)
		linkWallet(t, s, alice, wa)
		linkWallet(t, s, bob, wb)

		// Alice: 130 public remixes (every fifth opened), 10 public
		// singles, 7 workspace remixes, 3 public test-mode remixes. Bob:
		// 5 public remixes and 2 workspace ones. Newest first below.
		var aliceRemixes, allRemixes, aliceOpen, private, testIDs []string
		mk := func(p person, body map[string]any, header map[string]string) api.ProjectView {
			t.Helper()
			s.Clock.Advance(time.Millisecond) // ids order by their millisecond
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects", Cookie: p.cookie, Body: body, Header: header})
			if r.Status != http.StatusCreated {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			var v api.ProjectView
			r.Data(t, &v)
			return v
		}
		for i := range 130 {
			v := mk(alice, map[string]any{"title": fmt.Sprintf("Remix %d", i), "type": "remix", "visibility": "public"}, nil)
			aliceRemixes, allRemixes = append([]string{v.ID}, aliceRemixes...), append([]string{v.ID}, allRemixes...)
			if i%5 == 0 {
				if r := moveProject(s, alice.cookie, v.ID, project.StatusOpen); r.Status != http.StatusOK {
					t.Fatalf("open: %d %s", r.Status, r.Body)
				}
				aliceOpen = append([]string{v.ID}, aliceOpen...)
			}
			switch i % 13 {
			case 0:
				mk(alice, map[string]any{"title": "Single", "type": "single", "visibility": "public"}, nil)
			case 1:
				if i < 80 {
					private = append(private, mk(alice, map[string]any{"title": "Mine", "type": "remix"}, nil).ID)
				}
			case 2:
				if i < 40 {
					testIDs = append([]string{mk(alice, map[string]any{"title": "Test", "type": "remix", "visibility": "public"}, testMode).ID}, testIDs...)
				}
			case 3:
				if i < 60 {
					allRemixes = append([]string{mk(bob, map[string]any{"title": "Bob's", "type": "remix", "visibility": "public"}, nil).ID}, allRemixes...)
				}
			case 4:
				if i < 30 {
					private = append(private, mk(bob, map[string]any{"title": "Bob's own", "type": "remix"}, nil).ID)
				}
			}
		}
		if len(private) != 9 || len(testIDs) != 3 || len(allRemixes) != 135 || len(aliceOpen) != 26 {
			t.Fatalf("fixture: %d private, %d test, %d remixes, %d open", len(private), len(testIDs), len(allRemixes), len(aliceOpen))
		}

		// read follows the cursors of path (with query q) as req and
		// returns the ids, newest first, and the first page's cursor.
		read := func(req platformtest.Request, path string, q url.Values) ([]string, string) {
			t.Helper()
			var ids []string
			first := ""
			for pages := 0; ; pages++ {
				if pages > 30 {
					t.Fatalf("%s?%s does not end", path, q.Encode())
				}
				req.Method, req.Path = http.MethodGet, path+"?"+q.Encode()
				r := s.Do(req)
				if r.Status != http.StatusOK {
					t.Fatalf("%s: %d %s", req.Path, r.Status, r.Body)
				}
				var page api.ProjectPage
				r.Data(t, &page)
				limit := 20
				if l := q.Get("limit"); l != "" {
					fmt.Sscan(l, &limit)
				}
				if len(page.Items) > limit || page.HasMore != (page.NextCursor != nil) {
					t.Fatalf("%s: %d items over limit %d, or hasMore %v with cursor %v", req.Path, len(page.Items), limit, page.HasMore, page.NextCursor)
				}
				for _, p := range page.Items {
					if p.Visibility != "public" {
						t.Fatalf("%s lists workspace project %s", req.Path, p.ID)
					}
					ids = append(ids, p.ID)
				}
				if !page.HasMore {
					return ids, first
				}
				if pages == 0 {
					first = *page.NextCursor
				}
				q.Set("cursor", *page.NextCursor)
			}
		}
		creatorPath, publicPath := "/api/v1/creators/"+wa.addr+"/projects", "/api/v1/projects"
		want := func(name string, got, want []string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Errorf("%s: %d ids, want %d in order (first got %v, want %v)", name, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
		asBob := platformtest.Request{Cookie: bob.cookie}
		got, remixCursor := read(asBob, creatorPath, url.Values{"type": {"remix"}, "limit": {"100"}})
		want("Alice's remixes read by Bob", got, aliceRemixes)
		got, _ = read(asBob, creatorPath, url.Values{"type": {"remix"}})
		want("Alice's remixes in default pages", got, aliceRemixes)
		got, _ = read(asBob, creatorPath, url.Values{"type": {"remix"}, "status": {"OPEN"}, "limit": {"7"}})
		want("Alice's open remixes", got, aliceOpen)
		got, _ = read(asBob, creatorPath, url.Values{"limit": {"100"}})
		if len(got) != 140 {
			t.Errorf("all of Alice's public projects: %d, want 140", len(got))
		}
		everyPublic, _ := read(asBob, publicPath, url.Values{"visibility": {"public"}, "limit": {"100"}})
		if len(everyPublic) != 145 {
			t.Errorf("every public live project: %d, want 145", len(everyPublic))
		}
		for _, id := range append(append(got, everyPublic...), aliceRemixes...) {
			if slices.Contains(private, id) || slices.Contains(testIDs, id) {
				t.Errorf("a workspace or test project %s in a live public listing", id)
			}
		}
		got, _ = read(asBob, "/api/v1/creators/"+wb.addr+"/projects", url.Values{})
		if len(got) != 5 {
			t.Errorf("Bob's public projects read by Bob: %d, want 5", len(got))
		}
		got, _ = read(platformtest.Request{Cookie: bob.cookie, Header: testMode}, creatorPath, url.Values{})
		want("Alice's projects in test mode", got, testIDs)
		got, _ = read(platformtest.Request{Key: s.Boot.TestKey}, creatorPath, url.Values{"type": {"remix"}})
		want("Alice's projects read by a test key", got, testIDs)

		got, publicCursor := read(platformtest.Request{Cookie: alice.cookie}, publicPath, url.Values{"visibility": {"public"}, "type": {"remix"}, "limit": {"100"}})
		want("every tenant's public remixes read by Alice", got, allRemixes)
		got, _ = read(asBob, publicPath, url.Values{"visibility": {"public"}, "type": {"remix"}, "creator": {alice.userID}, "limit": {"50"}})
		want("the public listing of Alice's remixes", got, aliceRemixes)
		got, _ = read(asBob, publicPath, url.Values{"visibility": {"public"}, "status": {"OPEN"}, "type": {"remix"}})
		want("the public listing of open remixes", got, aliceOpen)
		got, _ = read(platformtest.Request{Key: s.Boot.TestKey}, publicPath, url.Values{"visibility": {"public"}})
		want("the public listing in test mode", got, testIDs)
		r := s.Do(platformtest.Request{Method: http.MethodGet, Path: publicPath + "?limit=100", Cookie: bob.cookie})
		var own api.ProjectPage
		r.Data(t, &own)
		if len(own.Items) != 7 {
			t.Errorf("Bob's workspace list without visibility: %d, want his 7", len(own.Items))
		}

		// Refused: a bad visibility, and cursors read elsewhere.
		for name, path := range map[string]string{
			"visibility workspace":        publicPath + "?visibility=workspace",
			"creator cursor, other type":  creatorPath + "?type=single&limit=100&cursor=" + url.QueryEscape(remixCursor),
			"creator cursor, no filter":   creatorPath + "?limit=100&cursor=" + url.QueryEscape(remixCursor),
			"creator cursor, Bob's":       "/api/v1/creators/" + wb.addr + "/projects?type=remix&limit=100&cursor=" + url.QueryEscape(remixCursor),
			"creator cursor, public list": publicPath + "?visibility=public&type=remix&limit=100&cursor=" + url.QueryEscape(remixCursor),
			"public cursor, own list":     publicPath + "?type=remix&limit=100&cursor=" + url.QueryEscape(publicCursor),
			"public cursor, other status": publicPath + "?visibility=public&type=remix&status=OPEN&limit=100&cursor=" + url.QueryEscape(publicCursor),
			"public cursor, creator":      creatorPath + "?type=remix&limit=100&cursor=" + url.QueryEscape(publicCursor),
			"forged":                      creatorPath + "?cursor=cHJqOnByal8wMQ",
		} {
			r := s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Cookie: alice.cookie})
			if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		// The creator cursor in the other environment (same wallet and
		// filters) is refused too.
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: creatorPath + "?type=remix&limit=100&cursor=" + url.QueryEscape(remixCursor),
			Cookie: bob.cookie, Header: testMode})
		if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
			t.Errorf("the creator cursor in test mode: %d %s", r.Status, r.Body)
		}
	})
}
