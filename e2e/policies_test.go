package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// publishPolicy posts a policy version as req's credential with key as
// its Idempotency-Key.
func publishPolicy(s *platformtest.System, req platformtest.Request, key, id string, content string) *platformtest.Response {
	req.Method, req.Path = http.MethodPost, "/api/v1/policies"
	req.Body = map[string]any{"policyId": id, "content": json.RawMessage(content)}
	h := map[string]string{"Idempotency-Key": key}
	for k, v := range req.Header {
		h[k] = v
	}
	req.Header = h
	return s.Do(req)
}

// currentPolicy reads a policy's current version as req's credential.
func currentPolicy(s *platformtest.System, req platformtest.Request, id string) *platformtest.Response {
	req.Method, req.Path = http.MethodGet, "/api/v1/policies/"+id+"/current"
	return s.Do(req)
}

// TestPolicyVersions: a super_admin publishes versions of a known policy;
// the same content (however spelled) is the same version (200), other
// content the next one (201), a revert a new one; the owning domain's own
// route reads what was published, and the domain's validator refuses bad
// content. Unknown ids are 404; policies the configuration or their own
// route publishes are 409. Every refusal changes nothing.
func TestPolicyVersions(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		o := bootstrapOwner(t, s, "Policies")
		if err := s.P.GrantSuperAdmin(context.Background(), o.email); err != nil {
			t.Fatal(err)
		}
		o.cookie, _ = s.Login(o.email, testPassword)
		live := o.session(access.Live, "", "", nil)
		refused(t, "nothing published", currentPolicy(s, live, "fees.marketplace"), http.StatusNotFound, "NOT_FOUND", "reason", "not_published")

		publish := func(key, id, content string, status int) api.PolicyVersionView {
			t.Helper()
			r := publishPolicy(s, live, key, id, content)
			if r.Status != status {
				t.Fatalf("publish %s %s: %d %s, want %d", id, content, r.Status, r.Body, status)
			}
			var v api.PolicyVersionView
			r.Data(t, &v)
			return v
		}
		v1 := publish("p1", "fees.marketplace", `{"feeBps":250,"minimumFeeAtomic":"0"}`, http.StatusCreated)
		if v1.Version != 1 || v1.Environment != "live" || len(v1.Hash) != 64 || string(v1.Content) != `{"feeBps":250,"minimumFeeAtomic":"0"}` {
			t.Fatalf("v1 = %+v", v1)
		}
		// The same content, spelled otherwise, under another key: the same version.
		same := publish("p2", "fees.marketplace", ` { "minimumFeeAtomic": "0", "feeBps": 250 } `, http.StatusOK)
		if same.Version != 1 || same.Hash != v1.Hash {
			t.Fatalf("the same content made %+v", same)
		}
		// The fee policy's own route reads the version published here.
		r := s.Do(o.session(access.Live, http.MethodGet, "/api/v1/fees/marketplace", nil))
		var fee api.FeePolicyView
		r.Data(t, &fee)
		if r.Status != http.StatusOK || fee.Version != 1 || fee.Hash != v1.Hash || fee.FeeBps != 250 {
			t.Fatalf("fee route: %d %s", r.Status, r.Body)
		}
		v2 := publish("p3", "fees.marketplace", `{"feeBps":300,"minimumFeeAtomic":"0"}`, http.StatusCreated)
		v3 := publish("p4", "fees.marketplace", `{"feeBps":250,"minimumFeeAtomic":"0"}`, http.StatusCreated)
		if v2.Version != 2 || v3.Version != 3 || v3.Hash != v1.Hash {
			t.Fatalf("v2 = %+v, v3 = %+v", v2, v3)
		}
		// A replay of the first request answers its first response.
		if again := publish("p1", "fees.marketplace", `{"feeBps":250,"minimumFeeAtomic":"0"}`, http.StatusCreated); again.Version != 1 {
			t.Fatalf("replay = %+v", again)
		}
		var cur api.PolicyVersionView
		r = currentPolicy(s, live, "fees.marketplace")
		r.Data(t, &cur)
		if r.Status != http.StatusOK || cur.Version != 3 || cur.Hash != v3.Hash {
			t.Fatalf("current: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE action = 'fee_policy.published' AND target_id = 'fees.marketplace'`); n != 3 {
			t.Errorf("%d audit records, want 3", n)
		}

		// The pricing of generations: seeded by the platform, published anew.
		r = currentPolicy(s, live, "pricing.generation")
		var seeded api.PolicyVersionView
		r.Data(t, &seeded)
		if r.Status != http.StatusOK || seeded.Version != 1 {
			t.Fatalf("seeded pricing: %d %s", r.Status, r.Body)
		}
		pv := publish("g1", "pricing.generation", `{"models":{"v4":{"credits":"11","byokCredits":"1"}}}`, http.StatusCreated)
		if pv.Version != 2 {
			t.Fatalf("pricing = %+v", pv)
		}

		before := count(t, s, `SELECT COUNT(*) FROM policy_versions`)
		for what, c := range map[string]struct {
			id, content, code string
			status            int
			details           []string
		}{
			"a fee beyond 10000 bps":    {"fees.marketplace", `{"feeBps":20000,"minimumFeeAtomic":"0"}`, "INVALID_INPUT", http.StatusBadRequest, []string{"field", "feeBps"}},
			"an unknown field":          {"fees.marketplace", `{"feeBps":1,"minimumFeeAtomic":"0","extra":1}`, "INVALID_INPUT", http.StatusBadRequest, []string{"field", "content"}},
			"a document not an object":  {"fees.marketplace", `[1]`, "INVALID_INPUT", http.StatusBadRequest, []string{"field", "content"}},
			"a byok fee over the price": {"pricing.generation", `{"models":{"v4":{"credits":"1","byokCredits":"2"}}}`, "INVALID_INPUT", http.StatusBadRequest, []string{"field", "content"}},
			"an unknown policy":         {"fees.nothing", `{"a":1}`, "NOT_FOUND", http.StatusNotFound, nil},
			"a configured policy":       {"swap.settings", `{"a":1}`, "CONFLICT", http.StatusConflict, []string{"reason", "published_by_configuration"}},
			"an owner-routed policy":    {"ai.routing", `{"a":1}`, "CONFLICT", http.StatusConflict, []string{"reason", "published_by_owner_route", "route", "PUT /api/v1/ai/routing"}},
			"a malformed id":            {"Fees", `{"a":1}`, "INVALID_INPUT", http.StatusBadRequest, []string{"field", "policyId"}},
		} {
			refused(t, what, publishPolicy(s, live, "bad-"+what, c.id, c.content), c.status, c.code, c.details...)
		}
		refused(t, "an unknown policy's current", currentPolicy(s, live, "fees.nothing"), http.StatusNotFound, "NOT_FOUND")
		if after := count(t, s, `SELECT COUNT(*) FROM policy_versions`); after != before {
			t.Errorf("refused publications wrote %d versions", after-before)
		}
	})
}

// TestPolicyAuthorization: publishing needs super_admin and a session; a
// narrower member, a key, another tenant's owner are refused and change
// nothing. Versions are per environment: a test-mode publication is not
// the live policy. Platform policies are platform-wide, so another
// tenant reads the same version; fees.marketplace's current version needs
// fee_policy.read, which a viewer lacks.
func TestPolicyAuthorization(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		o := bootstrapOwner(t, s, "Root")
		if err := s.P.GrantSuperAdmin(context.Background(), o.email); err != nil {
			t.Fatal(err)
		}
		o.cookie, _ = s.Login(o.email, testPassword)
		owner := person{email: o.email, cookie: o.cookie}
		viewerEmail := "viewer.root@example.test"
		viewer := join(t, s, viewerEmail, "Viewer", invite(t, s, owner, viewerEmail, "VIEWER"))
		other := bootstrapOwner(t, s, "Other")
		narrow, _ := createKeyAs(t, s, owner, map[string]any{"name": "narrow", "scopes": []string{"read"}})
		content := `{"feeBps":100,"minimumFeeAtomic":"0"}`

		before := count(t, s, `SELECT COUNT(*) FROM policy_versions`)
		refused(t, "a viewer publishes", publishPolicy(s, platformtest.Request{Cookie: viewer.cookie}, "v", "fees.marketplace", content),
			http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "another tenant's owner publishes", publishPolicy(s, platformtest.Request{Cookie: other.cookie}, "o", "fees.marketplace", content),
			http.StatusForbidden, "ACCESS_DENIED")
		for what, key := range map[string]string{"the owner's live key": o.key(access.Live), "a narrow key": narrow} {
			r := publishPolicy(s, platformtest.Request{Key: key}, "k", "fees.marketplace", content)
			if r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
				t.Errorf("%s publishes: %d %s", what, r.Status, r.Body)
			}
		}
		if after := count(t, s, `SELECT COUNT(*) FROM policy_versions`); after != before {
			t.Fatalf("refused publications wrote %d versions", after-before)
		}

		// Test mode publishes the test environment's policy only.
		test := o.session(access.Test, "", "", nil)
		r := publishPolicy(s, test, "t1", "fees.marketplace", content)
		var tv api.PolicyVersionView
		r.Data(t, &tv)
		if r.Status != http.StatusCreated || tv.Environment != "test" || tv.Version != 1 {
			t.Fatalf("test publish: %d %s", r.Status, r.Body)
		}
		refused(t, "the live policy after a test publication", currentPolicy(s, o.session(access.Live, "", "", nil), "fees.marketplace"),
			http.StatusNotFound, "NOT_FOUND", "reason", "not_published")
		r = currentPolicy(s, platformtest.Request{Key: o.key(access.Test)}, "fees.marketplace")
		if r.Status != http.StatusOK {
			t.Fatalf("the test key reads the test policy: %d %s", r.Status, r.Body)
		}
		// Platform policies are platform-wide: another tenant's owner reads
		// the same version; a viewer without fee_policy.read does not.
		r = currentPolicy(s, platformtest.Request{Cookie: other.cookie, Header: map[string]string{"Platform-Environment": "test"}}, "fees.marketplace")
		var ov api.PolicyVersionView
		r.Data(t, &ov)
		if r.Status != http.StatusOK || ov.Hash != tv.Hash {
			t.Fatalf("another tenant reads the platform policy: %d %s", r.Status, r.Body)
		}
		refused(t, "a viewer reads the fee policy", currentPolicy(s, platformtest.Request{Cookie: viewer.cookie,
			Header: map[string]string{"Platform-Environment": "test"}}, "fees.marketplace"),
			http.StatusForbidden, "ACCESS_DENIED", "permission", "fee_policy.read")
		// A read-scoped key of the owner (who holds fee_policy.read) reads it.
		if r := currentPolicy(s, platformtest.Request{Key: narrow}, "fees.marketplace"); r.Status != http.StatusOK {
			t.Errorf("a read key of the owner reads the fee policy: %d %s", r.Status, r.Body)
		}
		r = currentPolicy(s, platformtest.Request{Key: narrow}, "pricing.generation")
		if r.Status != http.StatusOK {
			t.Errorf("a narrow key reads the generation pricing: %d %s", r.Status, r.Body)
		}
		refused(t, "no credential", currentPolicy(s, platformtest.Request{}, "pricing.generation"), http.StatusUnauthorized, "UNAUTHENTICATED")
	})
}
