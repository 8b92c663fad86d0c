package e2e_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// keyCall is one key-management route with a body, named for messages.
type keyCall struct {
	name, method, suffix string
	body                 any
}

// keyManagement lists every route that changes a key.
func keyManagement() []keyCall {
	return []keyCall{
		{"update", http.MethodPatch, "", map[string]any{"name": "taken over"}},
		{"limits", http.MethodPut, "/limits", map[string]any{"requestsPerMinute": 1, "maxConcurrentRequests": 1, "monthlyRequestBudget": 1}},
		{"rotate", http.MethodPost, "/rotate", nil},
		{"revoke", http.MethodPost, "/revoke", nil},
		{"delete", http.MethodDelete, "", nil},
	}
}

// manage sends call on key id as a session (cookie) or a key (secret).
func manage(s *platformtest.System, call keyCall, id, cookie, secret string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: call.method, Path: "/api/v1/api-keys/" + id + call.suffix,
		Cookie: cookie, Key: secret, Body: call.body})
}

// keyState reads key id as its owner's session sees it.
func keyState(t *testing.T, s *platformtest.System, cookie, id string) api.KeyView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys/" + id, Cookie: cookie})
	if r.Status != http.StatusOK {
		t.Fatalf("read key %s: %d %s", id, r.Status, r.Body)
	}
	var k api.KeyView
	r.Data(t, &k)
	return k
}

// sessionKey creates a key with scopes from a signed-in session.
func sessionKey(t *testing.T, s *platformtest.System, cookie string, scopes ...string) api.KeySecret {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Cookie: cookie,
		Body: map[string]any{"name": "k", "scopes": scopes}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create key %v: %d %s", scopes, r.Status, r.Body)
	}
	var ks api.KeySecret
	r.Data(t, &ks)
	return ks
}

// TestKeyManagementStaysWithinAuthority is the escalation a review found:
// a DEVELOPER, or a key holding only keys:write, rotated the OWNER's
// ledger:read,audit:read key and read the financial ledger and the audit
// log with the new secret. Every management route now refuses a key whose
// scopes exceed what the caller may grant, and rotation needs the key made
// on the caller's own authority or an administrator who holds it in full.
func TestKeyManagementStaysWithinAuthority(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.com", "Alice")
		onboard(t, s, &alice, "Alice Studio")
		dev := join(t, s, "dev@example.com", "Dev", invite(t, s, alice, "dev@example.com", "DEVELOPER"))
		admin := join(t, s, "admin@example.com", "Admin", invite(t, s, alice, "admin@example.com", "ADMIN", "DEVELOPER"))

		owners := sessionKey(t, s, alice.cookie, "ledger:read", "audit:read")
		for _, path := range []string{"/api/v1/ledgers/financial", "/api/v1/admin/audit"} {
			if r := s.Do(platformtest.Request{Method: "GET", Path: path, Key: owners.Secret}); r.Status != http.StatusOK {
				t.Fatalf("the owner's key reads %s: %d %s", path, r.Status, r.Body)
			}
		}
		keysOnly := sessionKey(t, s, alice.cookie, "keys:write")
		before := keyState(t, s, alice.cookie, owners.Key.ID)

		// A narrower member and a narrower key get nothing of the owner's key.
		for _, who := range []struct {
			name, cookie, secret string
		}{{"developer", dev.cookie, ""}, {"keys:write key", "", keysOnly.Secret}} {
			for _, call := range keyManagement() {
				r := manage(s, call, owners.Key.ID, who.cookie, who.secret)
				if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" || detail(r, "reason") != "key_exceeds_caller" {
					t.Fatalf("%s %s the owner's key: %d %s", who.name, call.name, r.Status, r.Body)
				}
			}
		}
		if after := keyState(t, s, alice.cookie, owners.Key.ID); after.Status != "active" || after.Name != before.Name ||
			after.Last4 != before.Last4 || after.Limits != before.Limits || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("refused calls changed the key: before %+v after %+v", before, after)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/ledgers/financial", Key: owners.Secret}); r.Status != http.StatusOK {
			t.Fatalf("the owner's key after refused calls: %d %s", r.Status, r.Body)
		}

		// Rotation hands out a secret: a key within the developer's grant
		// but made by someone else is not theirs to rotate, though they may
		// still revoke it.
		alicesRead := sessionKey(t, s, alice.cookie, "keys:read")
		r := manage(s, keyCall{"rotate", http.MethodPost, "/rotate", nil}, alicesRead.Key.ID, dev.cookie, "")
		if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" || detail(r, "reason") != "not_key_creator" {
			t.Fatalf("developer rotates another member's key: %d %s", r.Status, r.Body)
		}
		devs := sessionKey(t, s, dev.cookie, "keys:read")
		if r := manage(s, keyCall{"rotate", http.MethodPost, "/rotate", nil}, devs.Key.ID, dev.cookie, ""); r.Status != http.StatusOK {
			t.Fatalf("developer rotates their own key: %d %s", r.Status, r.Body)
		}
		if r := manage(s, keyCall{"revoke", http.MethodPost, "/revoke", nil}, alicesRead.Key.ID, dev.cookie, ""); r.Status != http.StatusOK {
			t.Fatalf("developer revokes a key within their grant: %d %s", r.Status, r.Body)
		}

		// A key made by the owner's own key is the owner's to rotate.
		child := func() api.KeySecret {
			r, ks := createKey(t, s, keysOnly.Secret, map[string]any{"name": "child", "scopes": []string{"keys:write"}}, "")
			if r.Status != http.StatusCreated {
				t.Fatalf("key creates a key: %d %s", r.Status, r.Body)
			}
			return ks
		}()
		if r := manage(s, keyCall{"rotate", http.MethodPost, "/rotate", nil}, child.Key.ID, alice.cookie, ""); r.Status != http.StatusOK {
			t.Fatalf("owner rotates a key made by their key: %d %s", r.Status, r.Body)
		}

		// An administrator who holds the owner's key's authority in full may
		// rotate it; once the owner is super_admin, the administrator no
		// longer holds it in full.
		r = manage(s, keyCall{"rotate", http.MethodPost, "/rotate", nil}, owners.Key.ID, admin.cookie, "")
		var rotated api.KeySecret
		if r.Status != http.StatusOK {
			t.Fatalf("admin rotates the owner's key: %d %s", r.Status, r.Body)
		}
		r.Data(t, &rotated)
		if err := s.P.GrantSuperAdmin(context.Background(), "alice@example.com"); err != nil {
			t.Fatal(err)
		}
		r = manage(s, keyCall{"rotate", http.MethodPost, "/rotate", nil}, owners.Key.ID, admin.cookie, "")
		if r.Status != http.StatusForbidden || detail(r, "reason") != "creator_authority_exceeds_caller" {
			t.Fatalf("admin rotates a super_admin's key: %d %s", r.Status, r.Body)
		}
		if k := keyState(t, s, alice.cookie, owners.Key.ID); k.Last4 != rotated.Key.Last4 {
			t.Fatalf("the refused rotation changed the secret: %+v", k)
		}

		// Another tenant and the other environment do not see the key at all.
		other := s.Bootstrap("Other")
		for _, call := range keyManagement() {
			if r := manage(s, call, owners.Key.ID, "", other.TestKey); r.Status != http.StatusNotFound {
				t.Fatalf("another tenant %s: %d %s", call.name, r.Status, r.Body)
			}
			r := s.Do(platformtest.Request{Method: call.method, Path: "/api/v1/api-keys/" + owners.Key.ID + call.suffix,
				Cookie: alice.cookie, Body: call.body, Header: map[string]string{"Platform-Environment": "test"}})
			if r.Status != http.StatusNotFound {
				t.Fatalf("the test environment %s a live key: %d %s", call.name, r.Status, r.Body)
			}
		}
	})
}
