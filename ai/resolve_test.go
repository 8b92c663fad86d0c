package ai_test

import (
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a live registry of four providers (one without a key) and
// eight models covering every exclusion.
func fixture() ai.Registry {
	all := []ai.Capability{ai.CapChat, ai.CapJSONOutput, ai.CapTools, ai.CapStreaming}
	m := func(id, prov string, caps []ai.Capability, ctx int64, priv ai.PrivacyClass, in, out string) ai.RegistryModel {
		return ai.RegistryModel{Environment: access.Live, ID: id, ProviderID: prov, Upstream: id + "-upstream", Capabilities: caps,
			ContextWindow: ctx, Privacy: priv, InputPrice: ai.Price(in), OutputPrice: ai.Price(out), Enabled: true, Version: 1}
	}
	disabled := m("disabled", "openai", all, 128000, ai.PrivacyStandard, "0.0000001", "0.0000001")
	disabled.Enabled = false
	retired := m("retired", "openai", all, 128000, ai.PrivacyStandard, "0.0000001", "0.0000001")
	retired.Retired = true
	return ai.Registry{Environment: access.Live,
		Providers: []ai.ProviderConfig{
			{ID: "anthropic", Kind: ai.KindAnthropic, DisplayName: "Anthropic", BaseURL: "https://api.anthropic.com", KeyRef: "anthropic"},
			{ID: "local", Kind: ai.KindOpenAICompatible, DisplayName: "Local", BaseURL: "http://127.0.0.1:11434/v1", Keyless: true},
			{ID: "off", Kind: ai.KindOpenAICompatible, DisplayName: "No key", BaseURL: "https://api.example.com/v1"},
			{ID: "openai", Kind: ai.KindOpenAICompatible, DisplayName: "OpenAI", BaseURL: "https://api.openai.com/v1", KeyRef: "openai"},
		},
		Models: []ai.RegistryModel{
			m("claude", "anthropic", all, 200000, ai.PrivacyNoRetention, "0.000003", "0.000015"),
			disabled,
			m("ghost", "off", all, 128000, ai.PrivacyStandard, "0.0000001", "0.0000001"),
			m("gpt-large", "openai", all, 128000, ai.PrivacyStandard, "0.0000025", "0.00001"),
			m("gpt-small", "openai", all, 128000, ai.PrivacyStandard, "0.00000015", "0.0000006"),
			m("llama", "local", []ai.Capability{ai.CapChat, ai.CapJSONOutput}, 8192, ai.PrivacyLocal, "0", "0"),
			m("nojson", "openai", []ai.Capability{ai.CapChat, ai.CapStreaming}, 16000, ai.PrivacyStandard, "0.00000001", "0.00000001"),
			retired,
		},
	}
}

var anyPrivacy = []ai.PrivacyClass{ai.PrivacyStandard, ai.PrivacyNoRetention, ai.PrivacyLocal}

// routing returns a live routing version with one route for task.
func routing(task ai.Task, r ai.TaskRoute) ai.Routing {
	if r.Privacy == nil {
		r.Privacy = anyPrivacy
	}
	return ai.Routing{Environment: access.Live, Ref: policy.Ref{ID: ai.PolicyRouting, Version: 7, Hash: "h7"},
		Policy: ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{task: r}}}
}

// cooling is a health record cooled at epoch by cause, for a minute.
func cooling(cause ai.Outcome) ai.Health {
	return ai.Health{ConsecutiveFailures: 3, Failures: 3, LastFailure: cause, LastFailureAt: epoch, CooldownUntil: epoch.Add(time.Minute),
		CooldownCause: cause, Version: 3}
}

// latency is a health record of successful calls averaging ms.
func latency(ms int64) ai.Health {
	return ai.Health{Successes: 5, LatencyMillis: ms, LastLatencyMillis: ms, LatencyObservations: 5, Version: 5}
}

// TestResolveTable: a table of policies, registries, health states and
// callers to the model chosen, the reason, and each named candidate's
// exclusion.
func TestResolveTable(t *testing.T) {
	type want struct {
		model    string
		reason   ai.Reason
		excluded map[string]ai.Exclusion // by model; "" means usable
		err      string                  // details.reason of PROVIDER_UNAVAILABLE
	}
	cases := []struct {
		name   string
		task   ai.Task
		route  ai.TaskRoute
		health map[string]ai.Health
		caller func(*ai.Caller)
		want   want
	}{
		{name: "the primary serves", task: ai.TaskChat,
			route: ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude"}},
			want:  want{model: "gpt-small", reason: ai.ReasonPrimary, excluded: map[string]ai.Exclusion{"gpt-small": "", "claude": ""}}},
		{name: "a primary cooling after rate limits falls back", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude"}},
			health: map[string]ai.Health{"gpt-small": cooling(ai.OutcomeRateLimit)},
			want:   want{model: "claude", reason: ai.ReasonFallbackRateLimit, excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludeCooldown, "claude": ""}}},
		{name: "a primary cooling after server failures is an outage", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude"}},
			health: map[string]ai.Health{"gpt-small": cooling(ai.OutcomeServer)},
			want:   want{model: "claude", reason: ai.ReasonFallbackOutage, excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludeCooldown}}},
		{name: "a cooldown that ended is over", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude"}},
			health: map[string]ai.Health{"gpt-small": cooling(ai.OutcomeServer)},
			caller: func(c *ai.Caller) { c.At = epoch.Add(time.Minute) },
			want:   want{model: "gpt-small", reason: ai.ReasonPrimary, excluded: map[string]ai.Exclusion{"gpt-small": ""}}},
		{name: "a disabled primary is an outage", task: ai.TaskChat,
			route: ai.TaskRoute{Primary: "disabled", Fallbacks: []string{"gpt-small"}},
			want:  want{model: "gpt-small", reason: ai.ReasonFallbackOutage, excluded: map[string]ai.Exclusion{"disabled": ai.ExcludePolicy}}},
		{name: "a provider without a key is not in the environment", task: ai.TaskChat,
			route: ai.TaskRoute{Primary: "ghost", Fallbacks: []string{"retired", "gpt-small"}},
			want: want{model: "gpt-small", reason: ai.ReasonFallbackOutage,
				excluded: map[string]ai.Exclusion{"ghost": ai.ExcludeEnv, "retired": ai.ExcludeEnv}}},
		{name: "a privacy-restricted route skips a standard primary", task: ai.TaskLyrics,
			route: ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude", "llama"}, Privacy: []ai.PrivacyClass{ai.PrivacyNoRetention, ai.PrivacyLocal}},
			want:  want{model: "claude", reason: ai.ReasonPrimary, excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludePrivacy, "claude": ""}}},
		{name: "a caller requiring local data reaches only the local model", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude", "llama"}},
			caller: func(c *ai.Caller) { c.Privacy = ai.PrivacyLocal },
			want: want{model: "llama", reason: ai.ReasonPrimary,
				excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludePrivacy, "claude": ai.ExcludePrivacy, "llama": ""}}},
		{name: "a privacy-restricted route never falls back outside its classes", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "claude", Fallbacks: []string{"gpt-small", "gpt-large"}, Privacy: []ai.PrivacyClass{ai.PrivacyNoRetention}},
			health: map[string]ai.Health{"claude": cooling(ai.OutcomeRateLimit)},
			want: want{err: "no_eligible_model",
				excluded: map[string]ai.Exclusion{"claude": ai.ExcludeCooldown, "gpt-small": ai.ExcludePrivacy, "gpt-large": ai.ExcludePrivacy}}},
		{name: "a primary over budget is never used", task: ai.TaskChat,
			route: ai.TaskRoute{Primary: "gpt-large", Fallbacks: []string{"claude", "gpt-small"}, MaxOutputPrice: "0.000001"},
			want: want{model: "gpt-small", reason: ai.ReasonPrimary,
				excluded: map[string]ai.Exclusion{"gpt-large": ai.ExcludeBudget, "claude": ai.ExcludeBudget, "gpt-small": ""}}},
		{name: "a fallback never exceeds the budget", task: ai.TaskMusicBrief,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"gpt-large", "llama"}, MaxInputPrice: "0.000001"},
			health: map[string]ai.Health{"gpt-small": cooling(ai.OutcomeRateLimit)},
			want: want{model: "llama", reason: ai.ReasonFallbackRateLimit,
				excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludeCooldown, "gpt-large": ai.ExcludeBudget, "llama": ""}}},
		{name: "cheapest takes the cheapest allowed model", task: ai.TaskChat,
			route: ai.TaskRoute{Primary: "gpt-large", Fallbacks: []string{"claude", "gpt-small"}, Strategy: ai.StrategyCheapest},
			want:  want{model: "gpt-small", reason: ai.ReasonCheapest},
		},
		{name: "cheapest prices the request's units", task: ai.TaskComplete,
			// 10,000 in and 10 out: claude 0.03015 against gpt-large 0.0251.
			route:  ai.TaskRoute{Primary: "claude", Fallbacks: []string{"gpt-large"}, Strategy: ai.StrategyCheapest},
			caller: func(c *ai.Caller) { c.InputUnits, c.OutputUnits = 10000, 10 },
			want:   want{model: "gpt-large", reason: ai.ReasonCheapest},
		},
		{name: "cheapest falls back when the cheapest cools", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-large", Fallbacks: []string{"gpt-small"}, Strategy: ai.StrategyCheapest},
			health: map[string]ai.Health{"gpt-small": cooling(ai.OutcomeTimeout)},
			want:   want{model: "gpt-large", reason: ai.ReasonFallbackOutage, excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludeCooldown}},
		},
		{name: "lowest latency takes the fastest observed model", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"gpt-large", "claude"}, Strategy: ai.StrategyLowestLatency},
			health: map[string]ai.Health{"gpt-small": latency(900), "claude": latency(300)},
			want:   want{model: "claude", reason: ai.ReasonLowestLatency},
		},
		{name: "lowest latency with nothing observed keeps the route's order", task: ai.TaskChat,
			route: ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude"}, Strategy: ai.StrategyLowestLatency},
			want:  want{model: "gpt-small", reason: ai.ReasonPrimary},
		},
		{name: "a structured task needs JSON output", task: ai.TaskProjectBlueprint,
			route: ai.TaskRoute{Primary: "nojson", Fallbacks: []string{"gpt-small"}},
			want:  want{model: "gpt-small", reason: ai.ReasonPrimary, excluded: map[string]ai.Exclusion{"nojson": ai.ExcludeCapability}},
		},
		{name: "a caller needing tools skips a model without", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "llama", Fallbacks: []string{"claude"}},
			caller: func(c *ai.Caller) { c.Needs = []ai.Capability{ai.CapTools} },
			want:   want{model: "claude", reason: ai.ReasonPrimary, excluded: map[string]ai.Exclusion{"llama": ai.ExcludeCapability}},
		},
		{name: "a request too large for the primary falls back for its context window", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "llama", Fallbacks: []string{"gpt-small"}},
			caller: func(c *ai.Caller) { c.InputUnits, c.OutputUnits = 9000, 1000 },
			want:   want{model: "gpt-small", reason: ai.ReasonFallbackContextWindow, excluded: map[string]ai.Exclusion{"llama": ai.ExcludeCapability}},
		},
		{name: "a rate-limited attempt falls back", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"gpt-large"}},
			caller: func(c *ai.Caller) { c.Attempts = []ai.Attempt{{Model: "gpt-small", Outcome: ai.OutcomeRateLimit}} },
			want:   want{model: "gpt-large", reason: ai.ReasonFallbackRateLimit, excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludeFailed}},
		},
		{name: "a refused content falls back for its content policy", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude"}},
			caller: func(c *ai.Caller) { c.Attempts = []ai.Attempt{{Model: "gpt-small", Outcome: ai.OutcomeContentPolicy}} },
			want:   want{model: "claude", reason: ai.ReasonFallbackContentPolicy},
		},
		{name: "a context overflow skips models no larger than the one that failed", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"gpt-large", "claude"}},
			caller: func(c *ai.Caller) { c.Attempts = []ai.Attempt{{Model: "gpt-small", Outcome: ai.OutcomeContextWindow}} },
			want: want{model: "claude", reason: ai.ReasonFallbackContextWindow,
				excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludeFailed, "gpt-large": ai.ExcludeCapability}},
		},
		{name: "nothing available says when to retry", task: ai.TaskChat,
			route:  ai.TaskRoute{Primary: "gpt-small"},
			health: map[string]ai.Health{"gpt-small": cooling(ai.OutcomeServer)},
			want:   want{err: "no_eligible_model", excluded: map[string]ai.Exclusion{"gpt-small": ai.ExcludeCooldown}},
		},
		{name: "a task without a route is not routed", task: ai.TaskLyrics,
			want: want{err: "task_not_routed"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ai.Caller{Environment: access.Live, At: epoch}
			if tc.caller != nil {
				tc.caller(&c)
			}
			rt := routing(tc.task, tc.route)
			if tc.want.err == "task_not_routed" {
				rt = routing(ai.TaskChat, ai.TaskRoute{Primary: "gpt-small"})
			}
			res, err := ai.Resolve(tc.task, rt, fixture(), tc.health, c)
			if tc.want.err != "" {
				if !fault.Is(err, fault.ProviderUnavailable) {
					t.Fatalf("err = %v, want PROVIDER_UNAVAILABLE", err)
				}
				if _, _, d := fault.Public(err); d["reason"] != tc.want.err {
					t.Fatalf("details = %v, want reason %s", d, tc.want.err)
				}
				if res.Model.ID != "" {
					t.Fatalf("a failed resolution chose %s", res.Model.ID)
				}
			} else {
				if err != nil {
					t.Fatalf("Resolve: %v (candidates %+v)", err, res.Candidates)
				}
				if res.Model.ID != tc.want.model || res.Reason != tc.want.reason {
					t.Fatalf("chose %s (%s), want %s (%s); candidates %+v", res.Model.ID, res.Reason, tc.want.model, tc.want.reason, res.Candidates)
				}
				if res.Provider.ID != res.Model.ProviderID || res.Policy.Version != 7 || res.Strategy == "" {
					t.Fatalf("resolution = %+v", res)
				}
			}
			chosen := 0
			for _, cand := range res.Candidates {
				if cand.Chosen {
					chosen++
					if cand.Model != res.Model.ID || cand.Excluded != "" {
						t.Errorf("candidate %+v marked chosen", cand)
					}
				}
				if want, ok := tc.want.excluded[cand.Model]; ok && cand.Excluded != want {
					t.Errorf("candidate %s excluded %q (%s), want %q", cand.Model, cand.Excluded, cand.Detail, want)
				}
			}
			if want := map[bool]int{true: 0, false: 1}[tc.want.err != ""]; chosen != want {
				t.Errorf("%d candidates chosen, want %d", chosen, want)
			}
			for m := range tc.want.excluded {
				found := false
				for _, cand := range res.Candidates {
					found = found || cand.Model == m
				}
				if !found {
					t.Errorf("candidate %s missing from %+v", m, res.Candidates)
				}
			}
		})
	}
}

// TestResolveRetryAt: a request refused while its only model cools
// says when the cooldown ends.
func TestResolveRetryAt(t *testing.T) {
	_, err := ai.Resolve(ai.TaskChat, routing(ai.TaskChat, ai.TaskRoute{Primary: "gpt-small"}), fixture(),
		map[string]ai.Health{"gpt-small": cooling(ai.OutcomeRateLimit)}, ai.Caller{Environment: access.Live, At: epoch})
	if _, _, d := fault.Public(err); d["retryAt"] != epoch.Add(time.Minute).Format(time.RFC3339Nano) {
		t.Fatalf("details = %v, want retryAt at the cooldown's end", d)
	}
}

// TestResolveNeverLeavesTheRoute: whatever the health of the route's
// models, the choice is a model the route names, within its privacy
// classes and budget.
func TestResolveNeverLeavesTheRoute(t *testing.T) {
	route := ai.TaskRoute{Primary: "gpt-large", Fallbacks: []string{"claude", "llama"}, Privacy: []ai.PrivacyClass{ai.PrivacyNoRetention, ai.PrivacyLocal},
		MaxInputPrice: "0.000003", MaxOutputPrice: "0.000015"}
	reg := fixture()
	models := []string{"gpt-large", "claude", "llama", "gpt-small", "nojson"}
	for mask := range 1 << len(models) {
		health := map[string]ai.Health{}
		for i, m := range models {
			if mask&(1<<i) != 0 {
				health[m] = cooling(ai.OutcomeServer)
			}
		}
		res, err := ai.Resolve(ai.TaskChat, routing(ai.TaskChat, route), reg, health, ai.Caller{Environment: access.Live, At: epoch})
		if err != nil {
			continue
		}
		m := res.Model
		if m.ID != "claude" && m.ID != "llama" || m.Privacy == ai.PrivacyStandard || m.InputPrice.Cmp(route.MaxInputPrice) > 0 ||
			m.OutputPrice.Cmp(route.MaxOutputPrice) > 0 || health[m.ID].Cooling(epoch) {
			t.Fatalf("cooling %v: chose %+v", health, m)
		}
	}
}
