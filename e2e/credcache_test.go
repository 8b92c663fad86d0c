package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
)

// cacheHost is one host of a deployment under test, with its store.
type cacheHost struct {
	name, url string
	db        *store.DB
}

// acrossHosts is one change a cached credential depends on. It sends the
// request mk makes to every host until one answer comes from the host's
// credential cache (a background job of the workspace may change its
// authority version meanwhile, so up to five times), each answer passing
// before; it then makes the change through host 1 and finds the very next
// answer of every host passing after.
func acrossHosts(t *testing.T, s *platformtest.System, hosts []cacheHost, mk func() platformtest.Request,
	before func(*platformtest.Response) error, change func(), after func(*platformtest.Response) error) {
	t.Helper()
	for _, h := range hosts {
		for i := 0; ; i++ {
			hits := h.db.CredentialCacheStats().Hits
			r := s.DoAt(h.url, mk())
			if err := before(r); err != nil {
				t.Fatalf("%s before the change: %v: %d %s", h.name, err, r.Status, r.Body)
			}
			if i > 0 && h.db.CredentialCacheStats().Hits > hits {
				break
			}
			if i == 5 {
				t.Fatalf("%s: no repeated request came from the credential cache", h.name)
			}
		}
	}
	change()
	for _, h := range hosts {
		r := s.DoAt(h.url, mk())
		if err := after(r); err != nil {
			t.Fatalf("%s after the change: %v: %d %s", h.name, err, r.Status, r.Body)
		}
	}
}

// answered passes a response of status and, if code is not "", that code.
func answered(status int, code string) func(*platformtest.Response) error {
	return func(r *platformtest.Response) error {
		if r.Status != status || (code != "" && r.Code() != code) {
			return fmt.Errorf("want %d %s", status, code)
		}
		return nil
	}
}

// TestCredentialChangesReachEveryHost proves the credential cache exact:
// for each change a verified credential and its authority depend on (a key
// revoked, rotated out or re-limited; a role, a membership, an
// entitlement, a subscription or a feature flag changed; a session signed
// out, alone or with the user's others), a host that served the
// credential from its cache refuses or re-judges it on its very next
// request. On PostgreSQL the second host has its own store, cache and
// listener, as a host on another machine has; on SQLite, which one process
// serves, both hosts share the process's store.
func TestCredentialChangesReachEveryHost(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		h2 := s.AnotherHost()
		hosts := []cacheHost{{"host 1", s.Server.URL, s.DB}, {"host 2", h2.URL, h2.DB}}
		owner := s.Boot.TestKey
		newKey := func(name string) (id, secret string) {
			_, k := createKey(t, s, owner, map[string]any{"name": name, "scopes": []string{"keys:read"}}, "")
			return k.Key.ID, k.Secret
		}
		asKey := func(secret string) func() platformtest.Request {
			return func() platformtest.Request {
				return platformtest.Request{Method: http.MethodGet, Path: "/api/v1/api-keys", Key: secret}
			}
		}
		onHost1 := func(what string, req platformtest.Request, status int) func() {
			return func() {
				if r := s.Do(req); r.Status != status {
					t.Fatalf("%s: %d %s", what, r.Status, r.Body)
				}
			}
		}
		ok := answered(http.StatusOK, "")

		t.Run("key revoked", func(t *testing.T) {
			id, secret := newKey("revoked")
			acrossHosts(t, s, hosts, asKey(secret), ok,
				onHost1("revoke", platformtest.Request{Method: http.MethodPost, Path: "/api/v1/api-keys/" + id + "/revoke", Key: owner}, http.StatusOK),
				func(r *platformtest.Response) error {
					if err := answered(http.StatusUnauthorized, "UNAUTHENTICATED")(r); err != nil || detail(r, "reason") != "revoked" {
						return fmt.Errorf("want 401 UNAUTHENTICATED for the reason revoked")
					}
					return nil
				})
		})
		t.Run("key rotated out", func(t *testing.T) {
			id, secret := newKey("rotated")
			acrossHosts(t, s, hosts, asKey(secret), ok,
				onHost1("rotate", platformtest.Request{Method: http.MethodPost, Path: "/api/v1/api-keys/" + id + "/rotate", Key: owner,
					Header: map[string]string{"Idempotency-Key": "rotate-now"}, Body: map[string]any{"expireCurrentAfterSeconds": 0}}, http.StatusOK),
				answered(http.StatusUnauthorized, "SESSION_EXPIRED"))
		})
		t.Run("key revoked among many changes", func(t *testing.T) {
			// More changes than one read of the change log applies one by
			// one: a host that far behind empties its cache instead.
			id, secret := newKey("revoked among many")
			other := s.Bootstrap("Busy")
			acrossHosts(t, s, hosts, asKey(secret), ok,
				func() {
					for i := range 70 {
						if err := s.P.SetFeatureFlag(ctx, other.TenantID, other.WorkspaceID, sound.FeatureEngine, i%2 == 0); err != nil {
							t.Fatal(err)
						}
					}
					onHost1("revoke", platformtest.Request{Method: http.MethodPost, Path: "/api/v1/api-keys/" + id + "/revoke", Key: owner}, http.StatusOK)()
				},
				answered(http.StatusUnauthorized, "UNAUTHENTICATED"))
		})
		t.Run("key re-limited", func(t *testing.T) {
			id, secret := newKey("limited")
			limit := func(r *platformtest.Response, want int) error {
				if r.Status != http.StatusOK || r.Header.Get("RateLimit-Limit") != strconv.Itoa(want) {
					return fmt.Errorf("want 200 with RateLimit-Limit %d, have %q", want, r.Header.Get("RateLimit-Limit"))
				}
				return nil
			}
			var before int
			first := s.Do(asKey(secret)())
			before, _ = strconv.Atoi(first.Header.Get("RateLimit-Limit"))
			if before == 0 || before == 37 {
				t.Fatalf("the key's limit header: %q", first.Header.Get("RateLimit-Limit"))
			}
			acrossHosts(t, s, hosts, asKey(secret), func(r *platformtest.Response) error { return limit(r, before) },
				onHost1("limits", platformtest.Request{Method: http.MethodPut, Path: "/api/v1/api-keys/" + id + "/limits", Key: owner,
					Body: map[string]any{"requestsPerMinute": 37, "maxConcurrentRequests": 4, "monthlyRequestBudget": 1000}}, http.StatusOK),
				func(r *platformtest.Response) error { return limit(r, 37) })
		})

		alice := signIn(t, s, "alice@example.com", "Alice")
		ws := onboard(t, s, &alice, "Alice Studio")
		cara := join(t, s, "cara@example.com", "Cara", invite(t, s, alice, "cara@example.com", "CREATOR"))
		asCookie := func(cookie string) func() platformtest.Request {
			return func() platformtest.Request {
				return platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Cookie: cookie}
			}
		}
		roles := func(want string) func(*platformtest.Response) error {
			return func(r *platformtest.Response) error {
				var ac struct {
					Roles []string `json:"roles"`
				}
				if r.Status != http.StatusOK {
					return fmt.Errorf("want 200 with the role %s", want)
				}
				if r.Data(t, &ac); len(ac.Roles) != 1 || ac.Roles[0] != want {
					return fmt.Errorf("want the role %s", want)
				}
				return nil
			}
		}
		t.Run("role changed", func(t *testing.T) {
			acrossHosts(t, s, hosts, asCookie(cara.cookie), roles("CREATOR"),
				func() {
					if r := setRoles(s, alice, cara.userID, "VIEWER"); r.Status != http.StatusOK {
						t.Fatalf("set roles: %d %s", r.Status, r.Body)
					}
				}, roles("VIEWER"))
		})
		t.Run("membership suspended", func(t *testing.T) {
			acrossHosts(t, s, hosts, asCookie(cara.cookie), roles("VIEWER"),
				func() {
					if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
						return tx.MembershipStatusSet(ctx, ws, cara.userID, access.MembershipSuspended)
					}); err != nil {
						t.Fatal(err)
					}
				}, answered(http.StatusForbidden, "WORKSPACE_ACCESS_DENIED"))
		})

		// A 96 kHz stem split names no asset: a caller the access steps
		// admit is answered by the handler (the asset is not found), one
		// they refuse is answered 403.
		payer := newPayer(t, s, "pat@example.com")
		n := 0
		stems := func() platformtest.Request {
			n++
			return platformtest.Request{Method: http.MethodPost, Path: "/api/v1/sound/stems", Cookie: payer.cookie,
				Header: map[string]string{"Platform-Environment": "test", "Idempotency-Key": fmt.Sprintf("stems-%d", n)},
				Body: map[string]any{"input": map[string]any{"assetId": "ast_01jd0000000000000000000000"}, "stems": []string{"bass"},
					"output": map[string]any{"format": "wav", "sampleRate": 96000, "bitDepth": 24}}}
		}
		admitted := answered(http.StatusNotFound, "NOT_FOUND")
		t.Run("subscription started", func(t *testing.T) {
			acrossHosts(t, s, hosts, stems, answered(http.StatusForbidden, "SUBSCRIPTION_REQUIRED"),
				func() { payer.subscribe(t, s, "studio") }, admitted)
		})
		t.Run("entitlement withdrawn", func(t *testing.T) {
			acrossHosts(t, s, hosts, stems, admitted,
				func() {
					if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
						return tx.EntitlementSet(ctx, payer.workspaceID, sound.EntitlementHighResolution, "plan:studio", "test", false)
					}); err != nil {
						t.Fatal(err)
					}
				}, answered(http.StatusForbidden, "ENTITLEMENT_REQUIRED"))
		})
		t.Run("feature turned off", func(t *testing.T) {
			if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
				return tx.EntitlementSet(ctx, payer.workspaceID, sound.EntitlementHighResolution, "plan:studio", "test", true)
			}); err != nil {
				t.Fatal(err)
			}
			acrossHosts(t, s, hosts, stems, admitted,
				func() {
					if err := s.P.SetFeatureFlag(ctx, payer.tenantID, payer.workspaceID, sound.FeatureEngine, false); err != nil {
						t.Fatal(err)
					}
				}, answered(http.StatusForbidden, "FEATURE_DISABLED"))
		})

		t.Run("session signed out", func(t *testing.T) {
			cookie, _ := s.Login(alice.email, testPassword)
			acrossHosts(t, s, hosts, asCookie(cookie), ok,
				onHost1("logout", platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/logout", Cookie: cookie}, http.StatusOK),
				answered(http.StatusUnauthorized, "UNAUTHENTICATED"))
		})
		t.Run("other sessions signed out", func(t *testing.T) {
			_, token := s.Login(alice.email, testPassword)
			keep, _ := s.Login(alice.email, testPassword)
			acrossHosts(t, s, hosts, func() platformtest.Request {
				return platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Key: token}
			}, ok,
				onHost1("revoke others", platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/sessions/revoke-others", Cookie: keep}, http.StatusOK),
				answered(http.StatusUnauthorized, "UNAUTHENTICATED"))
		})
	})
}
