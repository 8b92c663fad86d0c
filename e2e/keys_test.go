package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

func createKey(t *testing.T, s *platformtest.System, key string, body any, idem string) (*platformtest.Response, api.KeySecret) {
	t.Helper()
	h := map[string]string{}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: key, Body: body, Header: h})
	var ks api.KeySecret
	if r.Status == http.StatusCreated {
		r.Data(t, &ks)
	}
	return r, ks
}

func TestAuthContextWithKey(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: s.Boot.TestKey})
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		var ac api.AuthContext
		r.Data(t, &ac)
		if ac.Workspace.ID != s.Boot.WorkspaceID || ac.Credential.KeyID != s.Boot.KeyID || ac.Environment != "test" {
			t.Fatalf("auth context = %+v", ac)
		}
		if r.Header.Get("Cache-Control") != "private, no-store" || r.Header.Get("X-Request-Id") == "" {
			t.Fatalf("headers = %v", r.Header)
		}
	})
}

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		r, created := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "ci", "scopes": []string{"keys:read"}}, "")
		if r.Status != 201 || !strings.HasPrefix(created.Secret, "platform_test_") {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		k := created.Key.ID
		// The new key reads but cannot write.
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys/" + k, Key: created.Secret}); r.Status != 200 {
			t.Fatalf("get with new key: %d %s", r.Status, r.Body)
		}
		if r, _ := createKey(t, s, created.Secret, map[string]any{"name": "x", "scopes": []string{"keys:read"}}, ""); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("create with read-only key: %d %s", r.Status, r.Body)
		}
		// Rotate with a one-hour overlap: both secrets work, then the old one expires.
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k + "/rotate", Key: s.Boot.TestKey,
			Body: map[string]any{"expireCurrentAfterSeconds": 3600}})
		var rotated api.KeySecret
		r.Data(t, &rotated)
		if rotated.Key.ID != k || rotated.Secret == created.Secret {
			t.Fatalf("rotate = %+v", rotated)
		}
		for _, sec := range []string{created.Secret, rotated.Secret} {
			if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: sec}); r.Status != 200 {
				t.Fatalf("during overlap: %d %s", r.Status, r.Body)
			}
		}
		s.Clock.Advance(time.Hour + time.Second)
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: created.Secret}); r.Code() != "SESSION_EXPIRED" {
			t.Fatalf("rotated-out key: %d %s", r.Status, r.Body)
		} else {
			credentialFailure(t, r, "api_key", "expired", "rotated out")
		}
		// Revoke takes effect on the next request.
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k + "/revoke", Key: s.Boot.TestKey}); r.Status != 200 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: rotated.Secret}); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("revoked key: %d %s", r.Status, r.Body)
		} else {
			credentialFailure(t, r, "api_key", "revoked", "revoked")
		}
		// Delete removes it from reads.
		if r := s.Do(platformtest.Request{Method: "DELETE", Path: "/api/v1/api-keys/" + k, Key: s.Boot.TestKey}); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys/" + k, Key: s.Boot.TestKey}); r.Code() != "NOT_FOUND" {
			t.Fatalf("get deleted: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: rotated.Secret}); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("deleted key: %d %s", r.Status, r.Body)
		} else {
			credentialFailure(t, r, "api_key", "deleted", "deleted")
		}
		// An unknown key and no credential at all say so too.
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: "platform_test_" + strings.Repeat("x", 40)}); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("unknown key: %d %s", r.Status, r.Body)
		} else {
			credentialFailure(t, r, "api_key", "unknown", "not valid")
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context"}); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("no credential: %d %s", r.Status, r.Body)
		} else {
			credentialFailure(t, r, "none", "missing", "Authorization: Bearer")
		}
		// Secrets never appear in logs.
		for _, sec := range []string{s.Boot.TestKey, created.Secret, rotated.Secret} {
			if strings.Contains(s.Log.String(), sec) {
				t.Fatal("a plaintext key appears in the log")
			}
		}
	})
}

func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		body := map[string]any{"name": "dup", "scopes": []string{"keys:read"}}
		const n = 50
		raiseKeyLimits(t, s)
		var wg sync.WaitGroup
		results := make([]api.KeySecret, n)
		statuses := make([]int, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, ks := createKey(t, s, s.Boot.TestKey, body, "same-key")
				statuses[i], results[i] = r.Status, ks
			}(i)
		}
		wg.Wait()
		for i := range results {
			if statuses[i] != 201 || results[i].Key.ID != results[0].Key.ID || results[i].Secret != results[0].Secret {
				t.Fatalf("caller %d got %d %+v, caller 0 got %+v", i, statuses[i], results[i], results[0])
			}
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys?limit=100", Key: s.Boot.TestKey})
		var page api.KeyPage
		r.Data(t, &page)
		if len(page.Items) != 2 { // the bootstrap key and one new key
			t.Fatalf("%d keys after 50 duplicate creates, want 2", len(page.Items))
		}
		// Same key, another body: conflict.
		if r, _ := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "other", "scopes": []string{"keys:read"}}, "same-key"); r.Code() != "IDEMPOTENCY_CONFLICT" || r.Status != 409 {
			t.Fatalf("reuse with another body: %d %s", r.Status, r.Body)
		}
		// Same key and body from another principal: conflict, never the first answer.
		_, other := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "writer", "scopes": []string{"keys:read", "keys:write"}}, "")
		r, _ = createKey(t, s, other.Secret, body, "same-key")
		if r.Status != 409 || strings.Contains(string(r.Body), results[0].Secret) {
			t.Fatalf("another principal: %d %s", r.Status, r.Body)
		}
		// A replay says so.
		r, ks := createKey(t, s, s.Boot.TestKey, body, "same-key")
		if r.Header.Get("Idempotent-Replayed") != "true" || ks.Secret != results[0].Secret {
			t.Fatalf("replay: %v %s", r.Header, r.Body)
		}
	})
}

func TestGatewayRejectsBadInput(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		key := s.Boot.TestKey
		cases := []struct {
			name   string
			req    platformtest.Request
			status int
			code   string
		}{
			{"no key", platformtest.Request{Method: "GET", Path: "/api/v1/auth/context"}, 401, "UNAUTHENTICATED"},
			{"malformed key", platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: "sk_nope"}, 401, "UNAUTHENTICATED"},
			{"unknown key", platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: "platform_test_" + strings.Repeat("a", 40)}, 401, "UNAUTHENTICATED"},
			{"malformed JSON", platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: key, Body: `{"name":`}, 400, "INVALID_INPUT"},
			{"unknown field", platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: key, Body: `{"name":"a","scopes":["read"],"limits":{"bogus":1}}`}, 400, "INVALID_INPUT"},
			{"trailing data", platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: key, Body: `{"name":"a","scopes":["read"]} {}`}, 400, "INVALID_INPUT"},
			{"wrong content type", platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: key, Body: `{"name":"a","scopes":["read"]}`, Header: map[string]string{"Content-Type": "text/plain"}}, 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"oversized body", platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: key, Body: `{"name":"` + strings.Repeat("a", 2<<20) + `"}`}, 413, "PAYLOAD_TOO_LARGE"},
			{"unknown path", platformtest.Request{Method: "GET", Path: "/api/v1/nope", Key: key}, 404, "ROUTE_NOT_FOUND"},
			{"wrong method", platformtest.Request{Method: "PUT", Path: "/api/v1/api-keys", Key: key}, 405, "METHOD_NOT_ALLOWED"},
			{"path not normalized", platformtest.Request{Method: "GET", Path: "/api/v1/access/context?path=/a/../b", Key: key}, 400, "INVALID_INPUT"},
			{"another workspace named", platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: key, Header: map[string]string{"X-Workspace-Id": "ws_other"}}, 403, "WORKSPACE_ACCESS_DENIED"},
			{"forged cursor", platformtest.Request{Method: "GET", Path: "/api/v1/api-keys?cursor=Zm9yZ2Vk", Key: key}, 400, "INVALID_INPUT"},
			{"internal route with a normal key", platformtest.Request{Method: "GET", Path: "/api/v1/internal/events/outbox", Key: key}, 403, "ACCESS_DENIED"},
		}
		for _, c := range cases {
			r := s.Do(c.req)
			if r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
			}
		}
		r := s.Do(platformtest.Request{Method: "PUT", Path: "/api/v1/api-keys", Key: key})
		if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
			t.Errorf("Allow = %q", allow)
		}
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: key, Body: `{"name":"a","scopes":["read"],"limits":{"bogus":1}}`})
		if !strings.Contains(string(r.Body), `"field":"limits.bogus"`) {
			t.Errorf("unknown field path missing: %s", r.Body)
		}
		_ = fmt.Sprint
	})
}

// credentialFailure fails t unless r's error names the credential that
// failed and why (details.credential, details.reason), its message says
// so in words containing phrase, and an API key's failure never speaks of
// a session.
func credentialFailure(t *testing.T, r *platformtest.Response, credential, reason, phrase string) {
	t.Helper()
	var env struct {
		Error struct {
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	e := env.Error
	if r.Status != 401 || e.Details["credential"] != credential || e.Details["reason"] != reason || !strings.Contains(e.Message, phrase) {
		t.Fatalf("credential failure = %d %s, want 401 naming %s, %s, %q", r.Status, r.Body, credential, reason, phrase)
	}
	if credential == "api_key" && strings.Contains(strings.ToLower(e.Message), "session") {
		t.Fatalf("an API key's failure speaks of a session: %s", r.Body)
	}
}
