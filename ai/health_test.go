package ai_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// TestObserve: a model is unobserved until called; successes make it
// healthy and feed the latency mean; unhealthy outcomes degrade it and,
// at the threshold, cool it until the cooldown ends; a success ends the
// streak and the cooldown; refusals of the request are only counted.
func TestObserve(t *testing.T) {
	p := ai.HealthPolicy{Threshold: 3, Cooldown: 30 * time.Second}
	h := ai.Health{Environment: access.Live, ModelID: "gpt-small"}
	if s := h.Status(epoch); s != ai.HealthUnobserved {
		t.Fatalf("a model never called is %s", s)
	}
	at := epoch
	step := func(o ai.Outcome, latency time.Duration) {
		t.Helper()
		at = at.Add(time.Second)
		h = ai.Observe(h, ai.Observation{Model: "gpt-small", Outcome: o, At: at, Latency: latency}, p)
	}
	step(ai.OutcomeSuccess, 500*time.Millisecond)
	if h.Status(at) != ai.HealthHealthy || h.LatencyMillis != 500 || h.LatencyObservations != 1 || h.Version != 1 {
		t.Fatalf("after a success: %+v", h)
	}
	step(ai.OutcomeSuccess, 1000*time.Millisecond)
	if h.LatencyMillis != 600 || h.LastLatencyMillis != 1000 {
		t.Fatalf("latency mean = %d (last %d), want 600 (1000)", h.LatencyMillis, h.LastLatencyMillis)
	}
	step(ai.OutcomeContentPolicy, 0)
	step(ai.OutcomeContextWindow, 0)
	if h.Status(at) != ai.HealthHealthy || h.Rejections != 2 || h.ConsecutiveFailures != 0 {
		t.Fatalf("refusals of the request changed the model's health: %+v", h)
	}
	step(ai.OutcomeRateLimit, 0)
	step(ai.OutcomeServer, 0)
	if h.Status(at) != ai.HealthDegraded || h.Cooling(at) {
		t.Fatalf("two failures of three: %+v", h)
	}
	step(ai.OutcomeRateLimit, 0)
	cooledAt := at
	if h.Status(at) != ai.HealthCooldown || !h.CooldownUntil.Equal(cooledAt.Add(30*time.Second)) || h.CooldownCause != ai.OutcomeRateLimit {
		t.Fatalf("the third failure in a row: %+v", h)
	}
	if h.Status(cooledAt.Add(30*time.Second)) != ai.HealthDegraded {
		t.Fatalf("after the cooldown: %s", h.Status(cooledAt.Add(30*time.Second)))
	}
	// Tried again after the cooldown, one more failure cools it again.
	at = cooledAt.Add(31 * time.Second)
	h = ai.Observe(h, ai.Observation{Model: "gpt-small", Outcome: ai.OutcomeAuth, At: at}, p)
	if !h.Cooling(at) || h.CooldownCause != ai.OutcomeAuth {
		t.Fatalf("a failure after the cooldown: %+v", h)
	}
	step(ai.OutcomeSuccess, 0)
	if h.Status(at) != ai.HealthHealthy || h.Cooling(at) || h.ConsecutiveFailures != 0 || h.Failures != 4 || h.LatencyObservations != 2 {
		t.Fatalf("a success resets: %+v", h)
	}
}

// TestOutcomeOf: adapters' errors classify by their class, other errors
// by their code; the caller's cancellation is not the model's failure.
func TestOutcomeOf(t *testing.T) {
	adapter := func(code fault.Code, class ai.ErrorClass) error {
		return fault.Wrap("ai.Complete", ai.Failure{Code: code, Class: class}.Err("openai.Complete"))
	}
	for _, tc := range []struct {
		err  error
		want ai.Outcome
	}{
		{nil, ai.OutcomeSuccess},
		{adapter(fault.RateLimited, ai.ClassRateLimit), ai.OutcomeRateLimit},
		{adapter(fault.ProviderCreditsExhausted, ai.ClassCredits), ai.OutcomeCredits},
		{adapter(fault.ProviderUnavailable, ai.ClassAuth), ai.OutcomeAuth},
		{adapter(fault.ProviderUnavailable, ai.ClassServer), ai.OutcomeServer},
		{adapter(fault.ProviderUnavailable, ai.ClassMalformed), ai.OutcomeServer},
		{adapter(fault.ProviderUnavailable, ai.ClassInterrupted), ai.OutcomeServer},
		{adapter(fault.ProviderTimeout, ai.ClassServer), ai.OutcomeTimeout},
		{adapter(fault.ProviderTimeout, ai.ClassInterrupted), ai.OutcomeTimeout},
		{adapter(fault.InvalidInput, ai.ClassContext), ai.OutcomeContextWindow},
		{adapter(fault.InvalidInput, ai.ClassRequest), ai.OutcomeInvalidRequest},
		{adapter(fault.ContentPolicyRejected, ai.ClassFilter), ai.OutcomeContentPolicy},
		{fault.Wrap("ai.Complete", context.Canceled), ai.OutcomeCancelled},
		{fault.Wrap("ai.Complete", context.DeadlineExceeded), ai.OutcomeTimeout},
		{fault.E("x", fault.RateLimited, ""), ai.OutcomeRateLimit},
		{fault.E("x", fault.ProviderCredentialInvalid, ""), ai.OutcomeAuth},
		{fault.E("x", fault.InvalidInput, ""), ai.OutcomeInvalidRequest},
		{errors.New("connection reset"), ai.OutcomeServer},
	} {
		if got := ai.OutcomeOf(tc.err); got != tc.want {
			t.Errorf("OutcomeOf(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
	h := ai.Health{ConsecutiveFailures: 2, Failures: 2, Version: 2}
	if got := ai.Observe(h, ai.Observation{Model: "m", Outcome: ai.OutcomeCancelled, At: epoch}, ai.HealthPolicy{}); got != h {
		t.Errorf("a cancelled call changed the record: %+v", got)
	}
}

// TestCooldownThenFallback: a provider failing repeatedly goes into
// cooldown, the fallback serves meanwhile, and the primary serves again
// once the cooldown is over and it answers.
func TestCooldownThenFallback(t *testing.T) {
	reg := fixture()
	rt := routing(ai.TaskChat, ai.TaskRoute{Primary: "gpt-small", Fallbacks: []string{"claude"}})
	p := ai.HealthPolicy{Threshold: 3, Cooldown: time.Minute}
	health := map[string]ai.Health{}
	at := epoch
	resolve := func() ai.Resolution {
		t.Helper()
		res, err := ai.Resolve(ai.TaskChat, rt, reg, health, ai.Caller{Environment: access.Live, At: at})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 3 {
		res := resolve()
		if res.Model.ID != "gpt-small" {
			t.Fatalf("call %d went to %s before the cooldown", i, res.Model.ID)
		}
		// The primary is rate limited; this request falls back at once.
		health["gpt-small"] = ai.Observe(health["gpt-small"], ai.Observation{Model: "gpt-small", Outcome: ai.OutcomeRateLimit, At: at}, p)
		fb, err := ai.Resolve(ai.TaskChat, rt, reg, health, ai.Caller{Environment: access.Live, At: at,
			Attempts: []ai.Attempt{{Model: "gpt-small", Outcome: ai.OutcomeRateLimit}}})
		if err != nil || fb.Model.ID != "claude" || fb.Reason != ai.ReasonFallbackRateLimit {
			t.Fatalf("fallback of call %d: %s %s %v", i, fb.Model.ID, fb.Reason, err)
		}
		at = at.Add(time.Second)
	}
	// Cooling: new requests go straight to the fallback.
	for range 5 {
		res := resolve()
		if res.Model.ID != "claude" || res.Reason != ai.ReasonFallbackRateLimit || res.Candidates[0].Excluded != ai.ExcludeCooldown {
			t.Fatalf("while cooling: %s %s %+v", res.Model.ID, res.Reason, res.Candidates)
		}
		at = at.Add(10 * time.Second)
	}
	// After the cooldown the primary is tried again; its success keeps it.
	at = health["gpt-small"].CooldownUntil
	if res := resolve(); res.Model.ID != "gpt-small" || res.Reason != ai.ReasonPrimary {
		t.Fatalf("after the cooldown: %s %s", res.Model.ID, res.Reason)
	}
	health["gpt-small"] = ai.Observe(health["gpt-small"], ai.Observation{Model: "gpt-small", Outcome: ai.OutcomeSuccess, At: at}, p)
	if h := health["gpt-small"]; h.Status(at) != ai.HealthHealthy {
		t.Fatalf("after a success: %+v", h)
	}
}

// TestPrice: prices are exact decimals in canonical form.
func TestPrice(t *testing.T) {
	for in, want := range map[string]ai.Price{"0": "0", "0.000": "0", "2.50": "2.5", "0.0000025": "0.0000025", "10": "10",
		"123456789012.123456789012345678": "123456789012.123456789012345678"} {
		if got, err := ai.ParsePrice(in); err != nil || got != want {
			t.Errorf("ParsePrice(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1e-6", " 1", "01", ".5", "1.", "1234567890123", "0.1234567890123456789", "NaN"} {
		if _, err := ai.ParsePrice(bad); err == nil {
			t.Errorf("ParsePrice(%q) accepted", bad)
		}
	}
	cost, err := ai.Cost("0.00000015", 1_000_000, "0.0000006", 250_000)
	if err != nil || cost != "0.3" {
		t.Fatalf("Cost = %s, %v; want 0.3", cost, err)
	}
	if c, _ := ai.Cost("0", 5, "0", 5); c != "0" {
		t.Fatalf("free cost = %s", c)
	}
	if ai.Price("0.1").Cmp("0.09") != 1 || ai.Price("2.5").Cmp("2.50") != 0 {
		t.Fatal("Cmp compares numbers")
	}
}
