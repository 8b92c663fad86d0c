package e2e_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/transport/api"
)

// asTest sends one request as p's session in the test environment.
func asTest(s *platformtest.System, p person, method, path, idem string, body any) *platformtest.Response {
	h := map[string]string{"Platform-Environment": "test"}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body, Header: h})
}

// uploadAs uploads wav as p in test mode and returns the asset id.
func uploadAs(t *testing.T, s *platformtest.System, p person, wav []byte) string {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/assets", Cookie: p.cookie, Body: wav,
		Header: map[string]string{"Content-Type": "audio/wav", "Platform-Environment": "test"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var a api.AssetView
	r.Data(t, &a)
	return a.ID
}

// analyzedAs accepts an analysis as p and waits until it is terminal.
func analyzedAs(t *testing.T, s *platformtest.System, p person, idem, assetID string) api.SoundOperationView {
	t.Helper()
	r := asTest(s, p, "POST", "/api/v1/sound/analyze", idem, map[string]any{"input": map[string]any{"assetId": assetID}})
	if r.Status != http.StatusAccepted {
		t.Fatalf("analyze: %d %s", r.Status, r.Body)
	}
	var v api.SoundOperationView
	r.Data(t, &v)
	waitFor(t, "analysis "+v.ID, func() bool {
		r := asTest(s, p, "GET", "/api/v1/sound/operations/"+v.ID, "", nil)
		r.Data(t, &v)
		return v.Status == "completed" || v.Status == "failed"
	})
	return v
}

// wantCode fails unless r answered status with code.
func wantCode(t *testing.T, what string, r *platformtest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Code() != code {
		t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Body, status, code)
	}
}

// TestDeclaredPolicyOnRealRoutes shows each access step that routes declare
// (feature, entitlement, resource scope, workflow, extra verification)
// producing its code on a real route, the tie rule on a real route, and
// that a refused call writes nothing.
func TestDeclaredPolicyOnRealRoutes(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		alice := signIn(t, s, "alice@example.com", "Alice")
		ws := onboard(t, s, &alice, "Alice Studio")
		tenant := authContext(t, s, alice.cookie).Tenant.ID
		creator := join(t, s, "cara@example.com", "Cara", invite(t, s, alice, "cara@example.com", "CREATOR"))
		viewer := join(t, s, "vic@example.com", "Vic", invite(t, s, alice, "vic@example.com", "VIEWER"))
		wav := pcmWAV(48000, 4800, func(i int) float64 { return 0.25 * float64(i%48) / 48 })
		asset := uploadAs(t, s, alice, wav)
		stems := func(p person, idem string, rate, bits int) *platformtest.Response {
			return asTest(s, p, "POST", "/api/v1/sound/stems", idem, map[string]any{"input": map[string]any{"assetId": asset},
				"stems": []string{"bass", "drums"}, "output": map[string]any{"format": "wav", "sampleRate": rate, "bitDepth": bits}})
		}
		ops := func() int { return count(t, s, `SELECT COUNT(*) FROM sound_operations WHERE workspace_id = ?`, ws) }

		// Step 6 on the free plan: a subscription would give audio.hires.
		r := stems(alice, "hires-free", 96000, 24)
		wantCode(t, "96 kHz stems on the free plan", r, http.StatusForbidden, "SUBSCRIPTION_REQUIRED")
		if detail(r, "entitlement") != sound.EntitlementHighResolution {
			t.Fatalf("details: %s", r.Body)
		}
		if plans, _ := detail(r, "plans").([]any); len(plans) != 1 || plans[0] != "studio" {
			t.Fatalf("plans: %s", r.Body)
		}
		wantCode(t, "32-bit stems on the free plan", stems(alice, "hires-32", 48000, 32), http.StatusForbidden, "SUBSCRIPTION_REQUIRED")
		// The tie rule: a VIEWER lacks track.generate, which an upgrade
		// would not give; it is told so.
		wantCode(t, "viewer asking for 96 kHz", stems(viewer, "hires-viewer", 96000, 24), http.StatusForbidden, "ACCESS_DENIED")
		if n := ops(); n != 0 {
			t.Fatalf("refused requests wrote %d operations", n)
		}
		// Output the plan covers needs nothing more.
		if r := stems(alice, "std", 48000, 24); r.Status != http.StatusAccepted {
			t.Fatalf("48 kHz stems: %d %s", r.Status, r.Body)
		}

		// A paid plan lacking the entitlement: an upgrade, not a subscription.
		(&payer{email: alice.email, cookie: alice.cookie, tenantID: tenant, workspaceID: ws}).subscribe(t, s, "pro")
		r = stems(alice, "hires-pro", 96000, 24)
		wantCode(t, "96 kHz stems on pro", r, http.StatusForbidden, "ENTITLEMENT_REQUIRED")
		// A workspace on the plan that grants it is served.
		bob := newPayer(t, s, "bob@example.com")
		bob.subscribe(t, s, "studio")
		bobP := person{email: bob.email, cookie: bob.cookie}
		bobAsset := uploadAs(t, s, bobP, wav)
		r = asTest(s, bobP, "POST", "/api/v1/sound/stems", "hires-studio", map[string]any{"input": map[string]any{"assetId": bobAsset},
			"stems": []string{"bass"}, "output": map[string]any{"format": "wav", "sampleRate": 96000, "bitDepth": 24}})
		if r.Status != http.StatusAccepted {
			t.Fatalf("96 kHz stems on studio: %d %s", r.Status, r.Body)
		}

		// Step 5: an operator turns the engine off for the workspace; new
		// operations are FEATURE_DISABLED, reads are not gated, and the tie
		// rule still tells a VIEWER about its permission.
		done := analyzedAs(t, s, alice, "before-off", asset)
		if err := s.P.SetFeatureFlag(ctx, tenant, ws, sound.FeatureEngine, false); err != nil {
			t.Fatal(err)
		}
		before := ops()
		r = asTest(s, alice, "POST", "/api/v1/sound/analyze", "off", map[string]any{"input": map[string]any{"assetId": asset}})
		wantCode(t, "analysis with the engine off", r, http.StatusForbidden, "FEATURE_DISABLED")
		if detail(r, "feature") != sound.FeatureEngine {
			t.Fatalf("details: %s", r.Body)
		}
		r = asTest(s, viewer, "POST", "/api/v1/sound/analyze", "off-viewer", map[string]any{"input": map[string]any{"assetId": asset}})
		wantCode(t, "viewer with the engine off", r, http.StatusForbidden, "ACCESS_DENIED")
		if r := asTest(s, alice, "GET", "/api/v1/sound/operations/"+done.ID, "", nil); r.Status != http.StatusOK {
			t.Fatalf("read with the engine off: %d %s", r.Status, r.Body)
		}
		if n := ops(); n != before {
			t.Fatalf("refused analyses wrote %d operations", n-before)
		}
		// Another workspace is untouched; turning it back on serves again.
		if r := asTest(s, bobP, "POST", "/api/v1/sound/analyze", "other-ws", map[string]any{"input": map[string]any{"assetId": bobAsset}}); r.Status != http.StatusAccepted {
			t.Fatalf("another workspace with ours off: %d %s", r.Status, r.Body)
		}
		if err := s.P.SetFeatureFlag(ctx, tenant, ws, sound.FeatureEngine, true); err != nil {
			t.Fatal(err)
		}
		if r := asTest(s, alice, "POST", "/api/v1/sound/analyze", "on-again", map[string]any{"input": map[string]any{"assetId": asset}}); r.Status != http.StatusAccepted {
			t.Fatalf("analysis with the engine on: %d %s", r.Status, r.Body)
		}
		// A platform default off closes generation everywhere.
		if err := s.P.SetFeatureFlag(ctx, "", "", genop.FeatureGenerate, false); err != nil {
			t.Fatal(err)
		}
		r = asTest(s, alice, "POST", "/api/v1/music/generate", "gen-off", map[string]any{"prompt": "x"})
		wantCode(t, "generation with the platform default off", r, http.StatusForbidden, "FEATURE_DISABLED")
		if err := s.P.SetFeatureFlag(ctx, "", "", "no.such.flag", true); err == nil {
			t.Fatal("an unknown flag was set")
		}

		// Step 8: a CREATOR's track.generate grant is at own scope. It reads
		// Alice's operation (project.read is workspace-wide) but cannot
		// cancel it; its own operation passes the step and meets the
		// workflow step (step 9) like anyone's completed operation.
		if r := asTest(s, creator, "GET", "/api/v1/sound/operations/"+done.ID, "", nil); r.Status != http.StatusOK {
			t.Fatalf("creator reads alice's operation: %d %s", r.Status, r.Body)
		}
		r = asTest(s, creator, "POST", "/api/v1/sound/operations/"+done.ID+"/cancel", "c-1", nil)
		wantCode(t, "creator cancels alice's operation", r, http.StatusForbidden, "ACCESS_DENIED")
		creatorAsset := uploadAs(t, s, creator, wav)
		own := analyzedAs(t, s, creator, "own", creatorAsset)
		r = asTest(s, creator, "POST", "/api/v1/sound/operations/"+own.ID+"/cancel", "c-2", nil)
		wantCode(t, "creator cancels their completed operation", r, http.StatusConflict, "INVALID_STATE_TRANSITION")
		r = asTest(s, alice, "POST", "/api/v1/sound/operations/"+done.ID+"/cancel", "c-3", nil)
		wantCode(t, "owner cancels a completed operation", r, http.StatusConflict, "INVALID_STATE_TRANSITION")
		// Another workspace's operation is not found, whoever asks.
		r = asTest(s, bobP, "POST", "/api/v1/sound/operations/"+done.ID+"/cancel", "c-4", nil)
		wantCode(t, "another workspace cancels", r, http.StatusNotFound, "NOT_FOUND")

		// Step 9 on keys: a revoked key cannot be rotated.
		k := sessionKey(t, s, alice.cookie, "keys:read")
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k.Key.ID + "/revoke", Cookie: alice.cookie}); r.Status != http.StatusOK {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k.Key.ID + "/rotate", Cookie: alice.cookie})
		wantCode(t, "rotate a revoked key", r, http.StatusConflict, "INVALID_STATE_TRANSITION")

		// Step 10: live key and provider credential mutations need a recent
		// sign-in; a stale session is refused before anything is written.
		s.Clock.Advance(11 * time.Minute)
		keys := count(t, s, `SELECT COUNT(*) FROM api_keys WHERE workspace_id = ?`, ws)
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Cookie: alice.cookie,
			Body: map[string]any{"name": "late", "scopes": []string{"keys:read"}}})
		wantCode(t, "stale session creates a live key", r, http.StatusUnauthorized, "REAUTHENTICATION_REQUIRED")
		r = asTest(s, alice, "POST", "/api/v1/api-keys", "", map[string]any{"name": "late", "environment": "live", "scopes": []string{"keys:read"}})
		wantCode(t, "stale test-mode session creates a live key", r, http.StatusUnauthorized, "REAUTHENTICATION_REQUIRED")
		r = asTest(s, alice, "POST", "/api/v1/providers/credentials", "", map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": "sk-late"})
		wantCode(t, "stale session adds a provider key", r, http.StatusUnauthorized, "REAUTHENTICATION_REQUIRED")
		if n := count(t, s, `SELECT COUNT(*) FROM api_keys WHERE workspace_id = ?`, ws); n != keys {
			t.Fatalf("refused creations wrote %d keys", n-keys)
		}
		if r := asTest(s, alice, "POST", "/api/v1/api-keys", "", map[string]any{"name": "test", "scopes": []string{"keys:read"}}); r.Status != http.StatusCreated {
			t.Fatalf("stale session creates a test key: %d %s", r.Status, r.Body)
		}

		// The access context closes paths no policy lists.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/access/context?path=/nowhere", Cookie: alice.cookie})
		var d api.AccessDecision
		r.Data(t, &d)
		if d.Allowed || d.Step != "route_policy" || d.Code == nil || *d.Code != "ACCESS_DENIED" {
			t.Fatalf("unknown path: %s", r.Body)
		}
		for _, p := range []string{"/developerx", "/admins"} {
			r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/access/context?path=" + p, Cookie: alice.cookie})
			r.Data(t, &d)
			if d.Allowed || d.Step != "route_policy" {
				t.Fatalf("near miss %s: %s", p, r.Body)
			}
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/access/context?path=/developer/../admin", Cookie: alice.cookie})
		wantCode(t, "traversal", r, http.StatusBadRequest, "INVALID_INPUT")
	})
}
