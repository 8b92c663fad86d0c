package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// aiConfig is the AI control plane of the AI tests: in test mode two
// configured providers and one without a key, four models and a chat
// route; in live mode one provider and one model, ids of its own, and
// no routing policy.
func aiConfig() platform.AIConfig {
	all := []ai.Capability{ai.CapChat, ai.CapJSONOutput, ai.CapTools, ai.CapStreaming}
	model := func(id, prov string, priv ai.PrivacyClass, in, out string) ai.ModelConfig {
		return ai.ModelConfig{ID: id, ProviderID: prov, Upstream: id + "-upstream", Capabilities: all, ContextWindow: 128000,
			Privacy: priv, InputPrice: in, OutputPrice: out}
	}
	return platform.AIConfig{
		Test: ai.Environment{
			Providers: []ai.ProviderConfig{
				{ID: "sim-openai", Kind: ai.KindOpenAICompatible, DisplayName: "OpenAI simulator", BaseURL: "http://127.0.0.1:9/v1/secret-path", KeyRef: "sim-openai-keyref"},
				{ID: "sim-anthropic", Kind: ai.KindAnthropic, DisplayName: "Anthropic simulator", BaseURL: "http://127.0.0.1:9", KeyRef: "sim-anthropic-keyref"},
				{ID: "unkeyed", Kind: ai.KindOpenAICompatible, DisplayName: "No key", BaseURL: "https://llm.example.com/v1"},
			},
			Models: []ai.ModelConfig{
				model("sim-small", "sim-openai", ai.PrivacyStandard, "0.00000015", "0.0000006"),
				model("sim-large", "sim-openai", ai.PrivacyStandard, "0.0000025", "0.00001"),
				model("sim-private", "sim-anthropic", ai.PrivacyNoRetention, "0.000003", "0.000015"),
				model("orphan", "unkeyed", ai.PrivacyStandard, "0.0000001", "0.0000001"),
			},
			Routing: &ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{
				ai.TaskChat: {Primary: "sim-small", Fallbacks: []string{"sim-private"}, Privacy: []ai.PrivacyClass{ai.PrivacyStandard, ai.PrivacyNoRetention}},
			}},
		},
		Live: ai.Environment{
			Providers: []ai.ProviderConfig{{ID: "live-openai", Kind: ai.KindOpenAICompatible, DisplayName: "OpenAI", BaseURL: "https://api.openai.com/v1",
				KeyRef: "live-openai-keyref"}},
			Models: []ai.ModelConfig{model("live-small", "live-openai", ai.PrivacyStandard, "0.00000015", "0.0000006")},
		},
	}
}

// aiStaff is the AI tests' cast: a super_admin owner (its own tenant), a
// plain OWNER and a VIEWER of its workspace, and an owner of another
// tenant.
type aiStaff struct {
	root                 *envOwner
	owner, viewer, other person
	otherBoot            platform.Bootstrap
}

func newAIStaff(t *testing.T, s *platformtest.System) aiStaff {
	t.Helper()
	root := bootstrapOwner(t, s, "Root")
	if err := s.P.GrantSuperAdmin(context.Background(), root.email); err != nil {
		t.Fatal(err)
	}
	root.cookie, _ = s.Login(root.email, testPassword)
	rp := person{email: root.email, cookie: root.cookie}
	owner := join(t, s, "coowner@example.com", "Co Owner", invite(t, s, rp, "coowner@example.com", "OWNER"))
	viewer := join(t, s, "viewer@example.com", "Viewer", invite(t, s, rp, "viewer@example.com", "VIEWER"))
	other := bootstrapOwner(t, s, "Elsewhere")
	return aiStaff{root: root, owner: owner, viewer: viewer, other: person{email: other.email, cookie: other.cookie}, otherBoot: other.boot}
}

// as sends one request as p's session in env, with an Idempotency-Key
// when idem is set.
func as(s *platformtest.System, p person, env access.Environment, method, path, idem string, body any) *platformtest.Response {
	h := map[string]string{}
	if env == access.Test {
		h[transport.EnvironmentHeader] = "test"
	}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body, Header: h})
}

func (st aiStaff) rootPerson() person { return person{email: st.root.email, cookie: st.root.cookie} }

// aiOK fails unless r answered status and decodes its data into v.
func aiOK(t *testing.T, what string, r *platformtest.Response, status int, v any) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: %d %s, want %d", what, r.Status, r.Body, status)
	}
	if v != nil {
		r.Data(t, v)
	}
}

// TestAIRegistryReads: any member (session or API key) reads its
// environment's models, providers and routing and nothing of the other
// environment; keys, key references and URL paths never appear; a model
// never called is unobserved, not healthy; the administration's reads
// answer super_admin only.
func TestAIRegistryReads(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{AI: aiConfig()}, func(t *testing.T, s *platformtest.System) {
		st := newAIStaff(t, s)
		ids := func(r *platformtest.Response) []string {
			var page struct {
				Items []struct {
					ID          string `json:"id"`
					Environment string `json:"environment"`
				} `json:"items"`
			}
			r.Data(t, &page)
			var out []string
			for _, it := range page.Items {
				out = append(out, it.ID+"@"+it.Environment)
			}
			return out
		}
		// Members of both tenants, sessions and keys, read the same
		// registry of their environment.
		for _, rd := range []struct {
			name string
			do   func(env access.Environment, path string) *platformtest.Response
		}{
			{"viewer", func(env access.Environment, path string) *platformtest.Response {
				return as(s, st.viewer, env, http.MethodGet, path, "", nil)
			}},
			{"another tenant", func(env access.Environment, path string) *platformtest.Response {
				return as(s, st.other, env, http.MethodGet, path, "", nil)
			}},
			{"API key", func(env access.Environment, path string) *platformtest.Response {
				k := st.root.boot.TestKey
				if env == access.Live {
					k = st.root.boot.LiveKey
				}
				return s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Key: k})
			}},
		} {
			r := rd.do(access.Test, "/api/v1/ai/models")
			aiOK(t, rd.name+" test models", r, http.StatusOK, nil)
			if got := ids(r); !slices.Equal(got, []string{"orphan@test", "sim-large@test", "sim-private@test", "sim-small@test"}) {
				t.Errorf("%s test models = %v", rd.name, got)
			}
			r = rd.do(access.Live, "/api/v1/ai/models")
			aiOK(t, rd.name+" live models", r, http.StatusOK, nil)
			if got := ids(r); !slices.Equal(got, []string{"live-small@live"}) {
				t.Errorf("%s live models = %v", rd.name, got)
			}
			r = rd.do(access.Test, "/api/v1/ai/providers")
			aiOK(t, rd.name+" test providers", r, http.StatusOK, nil)
			if got := ids(r); !slices.Equal(got, []string{"sim-anthropic@test", "sim-openai@test", "unkeyed@test"}) {
				t.Errorf("%s test providers = %v", rd.name, got)
			}
			wantCode(t, rd.name+" reads a live model in test mode", rd.do(access.Test, "/api/v1/ai/models/live-small"), http.StatusNotFound, "NOT_FOUND")
			wantCode(t, rd.name+" reads live routing", rd.do(access.Live, "/api/v1/ai/routing"), http.StatusNotFound, "NOT_FOUND")
		}

		var models api.AIModelList
		aiOK(t, "models", as(s, st.viewer, access.Test, http.MethodGet, "/api/v1/ai/models", "", nil), http.StatusOK, &models)
		byID := map[string]api.AIModelView{}
		for _, m := range models.Items {
			byID[m.ID] = m
		}
		if m := byID["sim-small"]; !m.Available || !m.Enabled || m.InputPrice != "0.00000015" || m.OutputPrice != "0.0000006" ||
			m.PrivacyClass != "standard" || m.Currency != "USD" || m.Unit != "token" || len(m.Capabilities) != 4 {
			t.Errorf("sim-small = %+v", m)
		}
		if m := byID["orphan"]; m.Available || !m.Enabled {
			t.Errorf("a model of a provider without a key is available: %+v", m)
		}
		var one api.AIModelView
		aiOK(t, "one model", as(s, st.viewer, access.Test, http.MethodGet, "/api/v1/ai/models/sim-private", "", nil), http.StatusOK, &one)
		if one.PrivacyClass != "no_retention" || one.ProviderID != "sim-anthropic" || one.UpstreamModel != "sim-private-upstream" {
			t.Errorf("sim-private = %+v", one)
		}
		wantCode(t, "an unknown model", as(s, st.viewer, access.Test, http.MethodGet, "/api/v1/ai/models/nope", "", nil), http.StatusNotFound, "NOT_FOUND")

		var providers api.AIProviderList
		r := as(s, st.viewer, access.Test, http.MethodGet, "/api/v1/ai/providers", "", nil)
		aiOK(t, "providers", r, http.StatusOK, &providers)
		if p := providers.Items[2]; p.ID != "unkeyed" || p.Configured || providers.Items[1].Kind != "openai_compatible" || !providers.Items[1].Configured {
			t.Errorf("providers = %+v", providers.Items)
		}

		var routing api.AIRoutingView
		aiOK(t, "routing", as(s, st.viewer, access.Test, http.MethodGet, "/api/v1/ai/routing", "", nil), http.StatusOK, &routing)
		chat := routing.Tasks["chat"]
		if routing.PolicyID != ai.PolicyRouting || routing.Version != 1 || routing.CreatedBy != ai.Publisher || routing.Environment != "test" ||
			chat.Primary != "sim-small" || !slices.Equal(chat.Fallbacks, []string{"sim-private"}) || chat.Strategy != "primary" ||
			chat.MaxInputPrice != nil || len(routing.Tasks) != 1 {
			t.Errorf("seeded routing = %+v", routing)
		}

		// Administration: super_admin reads; a workspace OWNER, a VIEWER, an
		// API key and another tenant's owner are refused.
		adminReads := []string{"/api/v1/admin/ai", "/api/v1/admin/ai/models", "/api/v1/admin/ai/providers", "/api/v1/admin/ai/health"}
		var bodies []string
		for _, path := range adminReads {
			for _, p := range []person{st.owner, st.viewer, st.other} {
				wantCode(t, p.email+" reads "+path, as(s, p, access.Test, http.MethodGet, path, "", nil), http.StatusForbidden, "ACCESS_DENIED")
			}
			wantCode(t, "an API key reads "+path, s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Key: st.root.boot.TestKey}),
				http.StatusForbidden, "ACCESS_DENIED")
			r := as(s, st.rootPerson(), access.Test, http.MethodGet, path, "", nil)
			aiOK(t, "super_admin reads "+path, r, http.StatusOK, nil)
			bodies = append(bodies, string(r.Body))
		}
		var overview api.AIOverview
		aiOK(t, "overview", as(s, st.rootPerson(), access.Test, http.MethodGet, "/api/v1/admin/ai", "", nil), http.StatusOK, &overview)
		if overview.Providers != (api.AIOverviewProviders{Total: 3, Configured: 2}) ||
			overview.Models != (api.AIOverviewModels{Total: 4, Enabled: 4, Available: 3}) ||
			overview.Health != (api.AIOverviewHealth{Unobserved: 4}) || overview.Routing.Version == nil || *overview.Routing.Version != 1 ||
			!slices.Equal(overview.Routing.RoutedTasks, []string{"chat"}) || len(overview.Routing.UnroutedTasks) != 6 {
			t.Errorf("overview = %+v", overview)
		}
		var health api.AIHealthList
		aiOK(t, "health", as(s, st.rootPerson(), access.Test, http.MethodGet, "/api/v1/admin/ai/health", "", nil), http.StatusOK, &health)
		for _, h := range health.Items {
			if h.Status != "unobserved" || h.LatencyMs != nil || h.ObservedAt != nil || h.Successes != 0 {
				t.Errorf("a model never called: %+v", h)
			}
		}
		var adminProviders api.AIAdminProviderList
		aiOK(t, "admin providers", as(s, st.rootPerson(), access.Test, http.MethodGet, "/api/v1/admin/ai/providers", "", nil), http.StatusOK, &adminProviders)
		if p := adminProviders.Items[1]; p.ID != "sim-openai" || p.Host != "127.0.0.1:9" || !p.KeyConfigured || p.Models != 2 {
			t.Errorf("admin provider = %+v", p)
		}
		if p := adminProviders.Items[2]; p.Configured || p.KeyConfigured || p.Host != "llm.example.com" {
			t.Errorf("the provider without a key = %+v", p)
		}
		// No answer carries a key reference or a URL's path.
		for _, b := range append(bodies, string(r.Body)) {
			for _, secret := range []string{"keyref", "secret-path", "http://", "https://"} {
				if strings.Contains(b, secret) {
					t.Errorf("an answer carries %q: %s", secret, b)
				}
			}
		}
	})
}

// TestAIAdminWrites: publishing routing and changing models needs
// super_admin (a workspace OWNER, a VIEWER and an API key are refused and
// write nothing); the same content is the same version (200) and new
// content a new one (201), each audited with an outbox event; an
// Idempotency-Key replays; a model change is seen by the next request on
// another host; the test environment's changes never reach live; another
// tenant's audit log shows none of it.
func TestAIAdminWrites(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{AI: aiConfig()}, func(t *testing.T, s *platformtest.System) {
		st := newAIStaff(t, s)
		root := st.rootPerson()
		ws := st.root.boot.WorkspaceID
		audits := func(action string) int {
			return count(t, s, `SELECT COUNT(*) FROM audit_events WHERE workspace_id = ? AND action = ? AND environment = 'test'`, ws, action)
		}
		events := func(typ string) int {
			return count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND environment = 'test'`, typ)
		}
		lyrics := map[string]any{"primary": "sim-private", "fallbacks": []string{"sim-small"}, "privacyClasses": []string{"no_retention", "standard"},
			"maxOutputPrice": "0.000015"}

		// Refused callers write nothing.
		for _, p := range []person{st.owner, st.viewer, st.other} {
			wantCode(t, p.email+" publishes a task route", as(s, p, access.Test, http.MethodPut, "/api/v1/admin/ai/routing/lyrics", "", lyrics),
				http.StatusForbidden, "ACCESS_DENIED")
			wantCode(t, p.email+" publishes the routing", as(s, p, access.Test, http.MethodPut, "/api/v1/ai/routing", "",
				map[string]any{"tasks": map[string]any{"lyrics": lyrics}}), http.StatusForbidden, "ACCESS_DENIED")
			wantCode(t, p.email+" changes a model", as(s, p, access.Test, http.MethodPatch, "/api/v1/admin/ai/models/sim-small", "",
				map[string]any{"enabled": false}), http.StatusForbidden, "ACCESS_DENIED")
		}
		wantCode(t, "an API key publishes", s.Do(platformtest.Request{Method: http.MethodPut, Path: "/api/v1/ai/routing", Key: st.root.boot.TestKey,
			Body: map[string]any{"tasks": map[string]any{}}}), http.StatusForbidden, "ACCESS_DENIED")
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id = 'ai.routing'`); n != 1 || audits("ai_routing.published") != 0 {
			t.Fatalf("refused publications wrote: %d versions", n)
		}

		// One task's route: 201 and version 2, replayed by its key.
		var v2 api.AIRoutingView
		r := as(s, root, access.Test, http.MethodPut, "/api/v1/admin/ai/routing/lyrics", "lyrics-1", lyrics)
		aiOK(t, "publish lyrics", r, http.StatusCreated, &v2)
		if v2.Version != 2 || v2.Tasks["lyrics"].Primary != "sim-private" || v2.Tasks["chat"].Primary != "sim-small" ||
			!slices.Equal(v2.Tasks["lyrics"].PrivacyClasses, []string{"standard", "no_retention"}) || v2.CreatedBy != "user:"+st.root.boot.OwnerID {
			t.Fatalf("v2 = %+v", v2)
		}
		replay := as(s, root, access.Test, http.MethodPut, "/api/v1/admin/ai/routing/lyrics", "lyrics-1", lyrics)
		if replay.Status != http.StatusCreated || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) == "" {
			t.Fatalf("replay: %d %s", replay.Status, replay.Body)
		}
		wantCode(t, "the key with another body", as(s, root, access.Test, http.MethodPut, "/api/v1/admin/ai/routing/lyrics", "lyrics-1",
			map[string]any{"primary": "sim-small", "privacyClasses": []string{"standard"}}), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		// The same content under another key, spelled otherwise: the same
		// version, 200, nothing written.
		same := map[string]any{"primary": "sim-private", "fallbacks": []string{"sim-small"}, "privacyClasses": []string{"standard", "no_retention", "standard"},
			"maxOutputPrice": "0.0000150", "strategy": "primary"}
		var again api.AIRoutingView
		aiOK(t, "republish lyrics", as(s, root, access.Test, http.MethodPut, "/api/v1/admin/ai/routing/lyrics", "lyrics-2", same), http.StatusOK, &again)
		if again.Version != 2 || again.Hash != v2.Hash {
			t.Fatalf("republish = %+v", again)
		}
		// The whole policy as it stands: the same version again.
		whole := map[string]any{"tasks": map[string]any{"lyrics": same, "chat": map[string]any{"primary": "sim-small", "fallbacks": []string{"sim-private"},
			"privacyClasses": []string{"no_retention", "standard"}}}}
		aiOK(t, "republish the whole policy", as(s, root, access.Test, http.MethodPut, "/api/v1/ai/routing", "", whole), http.StatusOK, &again)
		if again.Version != 2 {
			t.Fatalf("whole republish = %+v", again)
		}
		// A whole policy without chat: version 3, chat no longer routed.
		var v3 api.AIRoutingView
		aiOK(t, "publish without chat", as(s, root, access.Test, http.MethodPut, "/api/v1/ai/routing", "whole-1",
			map[string]any{"tasks": map[string]any{"lyrics": same}}), http.StatusCreated, &v3)
		if _, ok := v3.Tasks["chat"]; v3.Version != 3 || ok || len(v3.Tasks) != 1 {
			t.Fatalf("v3 = %+v", v3)
		}
		if audits("ai_routing.published") != 2 || events(ai.EventRoutingPublished) != 2 {
			t.Fatalf("%d audits and %d events for two new versions", audits("ai_routing.published"), events(ai.EventRoutingPublished))
		}
		// Invalid routes name their field and write nothing.
		for _, tc := range []struct {
			path   string
			body   any
			status int
			code   string
			field  string
		}{
			{"/api/v1/admin/ai/routing/lyrics", map[string]any{"primary": "live-small", "privacyClasses": []string{"standard"}}, 400, "INVALID_INPUT", "tasks.lyrics.primary"},
			{"/api/v1/admin/ai/routing/chat", map[string]any{"primary": "sim-small", "privacyClasses": []string{"secret"}}, 400, "INVALID_INPUT", "tasks.chat.privacyClasses"},
			{"/api/v1/admin/ai/routing/lyrics", map[string]any{"primary": "sim-small", "privacyClasses": []string{"standard"}, "maxInputPrice": "1e-6"}, 400, "INVALID_INPUT", "tasks.lyrics.maxInputPrice"},
			{"/api/v1/admin/ai/routing/karaoke", map[string]any{"primary": "sim-small", "privacyClasses": []string{"standard"}}, 404, "NOT_FOUND", ""},
			{"/api/v1/ai/routing", map[string]any{"tasks": map[string]any{"karaoke": lyrics}}, 400, "INVALID_INPUT", "tasks.karaoke"},
			{"/api/v1/ai/routing", map[string]any{}, 400, "INVALID_INPUT", "tasks"},
		} {
			r := as(s, root, access.Test, http.MethodPut, tc.path, "", tc.body)
			wantCode(t, "PUT "+tc.path, r, tc.status, tc.code)
			if tc.field != "" && detail(r, "field") != tc.field {
				t.Errorf("PUT %s: details %s, want field %s", tc.path, r.Body, tc.field)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id = 'ai.routing' AND environment = 'test'`); n != 3 {
			t.Fatalf("%d routing versions after refused publications, want 3", n)
		}

		// A model change: a new version, audited, evented, seen by another
		// host's next request.
		other := s.AnotherHost()
		var m api.AIAdminModelView
		aiOK(t, "disable sim-small", as(s, root, access.Test, http.MethodPatch, "/api/v1/admin/ai/models/sim-small", "model-1",
			map[string]any{"enabled": false, "outputPrice": "0.00000070"}), http.StatusOK, &m)
		if m.Enabled || m.Available || m.OutputPrice != "0.0000007" || m.Version != 2 || !m.AdminChanged || m.UpdatedBy != "user:"+st.root.boot.OwnerID {
			t.Fatalf("changed model = %+v", m)
		}
		var seen api.AIModelView
		r = s.DoAt(other.URL, platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ai/models/sim-small", Key: st.root.boot.TestKey})
		aiOK(t, "the other host reads the model", r, http.StatusOK, &seen)
		if seen.Enabled || seen.Available || seen.OutputPrice != "0.0000007" {
			t.Fatalf("the other host's next request sees %+v", seen)
		}
		// Asking for what is there writes nothing.
		aiOK(t, "the same change", as(s, root, access.Test, http.MethodPatch, "/api/v1/admin/ai/models/sim-small", "",
			map[string]any{"enabled": false}), http.StatusOK, &m)
		if m.Version != 2 || audits(ai.ActionModelUpdated) != 1 || events(ai.EventModelUpdated) != 1 {
			t.Fatalf("an unchanged model wrote: version %d, %d audits", m.Version, audits(ai.ActionModelUpdated))
		}
		var page api.AuditPage
		aiOK(t, "audit", s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/admin/audit?limit=100", Key: st.root.boot.TestKey}),
			http.StatusOK, &page)
		i := slices.IndexFunc(page.Items, func(e api.AuditEventView) bool { return e.Action == ai.ActionModelUpdated })
		if i < 0 {
			t.Fatalf("no %s in the audit log", ai.ActionModelUpdated)
		}
		if e := page.Items[i]; e.Target.Type != ai.TargetModel || e.Target.ID != "sim-small" || e.Actor.UserID != st.root.boot.OwnerID ||
			!jsonEqual(string(e.Before), `{"enabled":true,"inputPrice":"0.00000015","outputPrice":"0.0000006"}`) ||
			!jsonEqual(string(e.After), `{"enabled":false,"inputPrice":"0.00000015","outputPrice":"0.0000007"}`) {
			t.Fatalf("audit event = %+v (before %s, after %s)", e, e.Before, e.After)
		}
		for name, body := range map[string]any{
			"privacy class": map[string]any{"privacyClass": "local"},
			"nothing":       map[string]any{},
			"float price":   map[string]any{"inputPrice": "1.5e-7"},
		} {
			wantCode(t, "a change of "+name, as(s, root, access.Test, http.MethodPatch, "/api/v1/admin/ai/models/sim-small", "", body),
				http.StatusBadRequest, "INVALID_INPUT")
		}
		wantCode(t, "a live model changed from test", as(s, root, access.Test, http.MethodPatch, "/api/v1/admin/ai/models/live-small", "",
			map[string]any{"enabled": false}), http.StatusNotFound, "NOT_FOUND")

		// Live is untouched by all of it.
		var live api.AIModelView
		aiOK(t, "live model", as(s, root, access.Live, http.MethodGet, "/api/v1/ai/models/live-small", "", nil), http.StatusOK, &live)
		if !live.Enabled || live.Environment != "live" {
			t.Fatalf("live model = %+v", live)
		}
		wantCode(t, "live routing", as(s, root, access.Live, http.MethodGet, "/api/v1/ai/routing", "", nil), http.StatusNotFound, "NOT_FOUND")
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE environment = 'live' AND action LIKE 'ai_%'`); n != 0 {
			t.Fatalf("%d live audit rows from test-mode changes", n)
		}
		// Another tenant's audit log shows none of it; the publisher's does.
		readAudit := func(key string) []string {
			var page api.AuditPage
			aiOK(t, "audit", s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/admin/audit?limit=100", Key: key}), http.StatusOK, &page)
			var out []string
			for _, e := range page.Items {
				out = append(out, e.Action)
			}
			return out
		}
		if got := readAudit(st.otherBoot.TestKey); slices.Contains(got, ai.ActionRoutingPublished) || slices.Contains(got, ai.ActionModelUpdated) {
			t.Errorf("another tenant's audit log = %v", got)
		}
		if got := readAudit(st.root.boot.TestKey); !slices.Contains(got, ai.ActionRoutingPublished) || !slices.Contains(got, ai.ActionModelUpdated) {
			t.Errorf("the publisher's audit log = %v", got)
		}
	})
}

// jsonEqual reports whether two JSON documents are equal.
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// TestAIHealthFromCalls: outcomes the completion path records through
// the store cool a failing model, which the administration's health and
// overview report, and routing on the same database serves the fallback
// until the cooldown ends; latency is reported once observed.
func TestAIHealthFromCalls(t *testing.T) {
	t.Parallel()
	cfg := aiConfig()
	platformtest.Dialects(t, platformtest.Options{AI: cfg}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		st := newAIStaff(t, s)
		svc, err := ai.New(ai.Config{Environments: map[access.Environment]ai.Environment{access.Test: cfg.Test, access.Live: cfg.Live}})
		if err != nil {
			t.Fatal(err)
		}
		record := func(model string, o ai.Outcome, latency time.Duration) {
			t.Helper()
			err := s.DB.InTx(ctx, func(tx *store.Tx) error {
				_, err := svc.RecordOutcome(ctx, tx, access.Test, ai.Observation{Model: model, Outcome: o, At: s.Clock.Now(), Latency: latency})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		route := func() ai.Resolution {
			t.Helper()
			res, err := svc.Route(ctx, s.DB.Read(), ai.TaskChat, ai.Caller{Environment: access.Test, At: s.Clock.Now()})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if res := route(); res.Model.ID != "sim-small" || res.Reason != ai.ReasonPrimary {
			t.Fatalf("before any failure: %s %s", res.Model.ID, res.Reason)
		}
		record("sim-private", ai.OutcomeSuccess, 800*time.Millisecond)
		for range ai.DefaultThreshold {
			record("sim-small", ai.OutcomeRateLimit, 0)
		}
		res := route()
		if res.Model.ID != "sim-private" || res.Reason != ai.ReasonFallbackRateLimit || res.Candidates[0].Excluded != ai.ExcludeCooldown {
			t.Fatalf("while cooling: %s %s %+v", res.Model.ID, res.Reason, res.Candidates)
		}
		var health api.AIHealthList
		aiOK(t, "health", as(s, st.rootPerson(), access.Test, http.MethodGet, "/api/v1/admin/ai/health", "", nil), http.StatusOK, &health)
		got := map[string]api.AIHealthView{}
		for _, h := range health.Items {
			got[h.ID] = h
		}
		small, private := got["sim-small"], got["sim-private"]
		if small.Status != "cooldown" || small.ConsecutiveFailures != 3 || small.CooldownUntil == nil ||
			!small.CooldownUntil.Equal(s.Clock.Now().Add(ai.DefaultCooldown)) || small.CooldownCause == nil || *small.CooldownCause != "rate_limit" ||
			small.LatencyMs != nil {
			t.Errorf("sim-small = %+v", small)
		}
		if private.Status != "healthy" || private.LatencyMs == nil || *private.LatencyMs != 800 || private.Successes != 1 {
			t.Errorf("sim-private = %+v", private)
		}
		if h := got["sim-large"]; h.Status != "unobserved" {
			t.Errorf("sim-large = %+v", h)
		}
		var overview api.AIOverview
		aiOK(t, "overview", as(s, st.rootPerson(), access.Test, http.MethodGet, "/api/v1/admin/ai", "", nil), http.StatusOK, &overview)
		if overview.Health != (api.AIOverviewHealth{Unobserved: 2, Healthy: 1, Cooldown: 1}) {
			t.Errorf("overview health = %+v", overview.Health)
		}
		// The cooldown ends; the primary serves again and, answering, is healthy.
		s.Clock.Advance(ai.DefaultCooldown)
		if res := route(); res.Model.ID != "sim-small" || res.Reason != ai.ReasonPrimary {
			t.Fatalf("after the cooldown: %s %s", res.Model.ID, res.Reason)
		}
		record("sim-small", ai.OutcomeSuccess, 300*time.Millisecond)
		aiOK(t, "health", as(s, st.rootPerson(), access.Test, http.MethodGet, "/api/v1/admin/ai/health", "", nil), http.StatusOK, &health)
		for _, h := range health.Items {
			if h.ID == "sim-small" && (h.Status != "healthy" || h.CooldownUntil != nil || h.LatencyMs == nil || *h.LatencyMs != 300) {
				t.Errorf("sim-small after a success = %+v", h)
			}
		}
		// Live saw none of it.
		var liveHealth api.AIHealthList
		aiOK(t, "live health", as(s, st.rootPerson(), access.Live, http.MethodGet, "/api/v1/admin/ai/health", "", nil), http.StatusOK, &liveHealth)
		if len(liveHealth.Items) != 1 || liveHealth.Items[0].ID != "live-small" || liveHealth.Items[0].Status != "unobserved" {
			t.Errorf("live health = %+v", liveHealth.Items)
		}
	})
}
