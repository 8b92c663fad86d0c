package ai

import (
	"cmp"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// Exclusion says why a candidate model was not used (ai.md §3.3).
type Exclusion string

// The exclusions. Resolve reports the first that applies: env and policy,
// then the request's filters (capability, privacy, budget), then a failed
// attempt, a context window too small (capability) and a cooldown.
const (
	// ExcludeEnv: the model is not usable in the caller's environment (not
	// in its registry, no longer configured, or its provider has no base
	// URL or key there).
	ExcludeEnv Exclusion = "env"
	// ExcludePolicy: an administrator took the model out of service.
	ExcludePolicy Exclusion = "policy"
	// ExcludeCapability: the model lacks a capability the task or caller
	// needs, or its context window is too small for the request.
	ExcludeCapability Exclusion = "capability"
	// ExcludePrivacy: the model's privacy class is not one the task's
	// route allows, or is less private than the caller requires.
	ExcludePrivacy Exclusion = "privacy"
	// ExcludeBudget: a unit of the model costs more than the task's route
	// allows.
	ExcludeBudget Exclusion = "budget"
	// ExcludeFailed: the model already failed this request (Caller.Attempts).
	ExcludeFailed Exclusion = "health:failed"
	// ExcludeCooldown: the model failed repeatedly and is cooling down.
	ExcludeCooldown Exclusion = "health:cooldown"
)

// Exclusions lists the exclusions.
func Exclusions() []Exclusion {
	return []Exclusion{ExcludeEnv, ExcludePolicy, ExcludeCapability, ExcludePrivacy, ExcludeBudget, ExcludeFailed, ExcludeCooldown}
}

// Reason says why the chosen model was chosen (ai.md §3.3).
type Reason string

// The reasons.
const (
	// ReasonPrimary: the first model of the route's order that the request
	// may use (StrategyPrimary, or another strategy with nothing to rank
	// by).
	ReasonPrimary Reason = "primary"
	// ReasonCheapest: the cheapest model the request may use.
	ReasonCheapest Reason = "cheapest"
	// ReasonLowestLatency: the model with the lowest observed latency.
	ReasonLowestLatency Reason = "lowest_latency"
	// ReasonFallbackRateLimit: the preferred model was rate limited (in
	// this request, or cooling down after rate limits).
	ReasonFallbackRateLimit Reason = "fallback:rate_limit"
	// ReasonFallbackContextWindow: the request does not fit the preferred
	// model's context window.
	ReasonFallbackContextWindow Reason = "fallback:context_window"
	// ReasonFallbackContentPolicy: the preferred model's provider refused
	// the content in this request.
	ReasonFallbackContentPolicy Reason = "fallback:content_policy"
	// ReasonFallbackOutage: the preferred model is out of service (failing,
	// cooling down, disabled or not configured).
	ReasonFallbackOutage Reason = "fallback:outage"
)

// Reasons lists the reasons.
func Reasons() []Reason {
	return []Reason{ReasonPrimary, ReasonCheapest, ReasonLowestLatency, ReasonFallbackRateLimit, ReasonFallbackContextWindow,
		ReasonFallbackContentPolicy, ReasonFallbackOutage}
}

// Attempt is a model that already failed the request being routed.
type Attempt struct {
	// Model is the model that was called.
	Model string
	// Outcome is how the call failed.
	Outcome Outcome
}

// Caller is what resolution knows of the request and who makes it.
type Caller struct {
	// Environment is the caller's environment; the registry must be its.
	Environment access.Environment
	// Privacy, when set, is the least private class the caller accepts:
	// models of less private classes are excluded whatever the route
	// allows.
	Privacy PrivacyClass
	// Needs are capabilities the request needs beyond its task's (tools,
	// streaming).
	Needs []Capability
	// InputUnits and OutputUnits estimate the request's size (the prompt's
	// units, the most units asked back): a model whose context window is
	// smaller than their sum is excluded, and StrategyCheapest prices them.
	// Zero means unknown (no context check; cheapest compares one unit of
	// each).
	InputUnits, OutputUnits int64
	// Attempts are the models that already failed this request, in order:
	// each is excluded, and the first model's failure becomes the reason
	// of the fallback.
	Attempts []Attempt
	// At is the time cooldowns are judged at.
	At time.Time
}

// Candidate is one model of a task's route as resolution judged it.
type Candidate struct {
	// Model and Provider name it (Provider "" when the registry does not
	// list the model).
	Model, Provider string
	// Excluded is why it was not usable; "" when it was.
	Excluded Exclusion
	// Detail says more of the exclusion: not_in_registry, retired,
	// provider_not_configured, disabled, missing:<capability>,
	// context_window, privacy:<class>, input_price, output_price, the
	// outcome of a failed attempt, or the outcome that cooled it.
	Detail string
	// Chosen marks the model resolution chose.
	Chosen bool
}

// Resolution is the outcome of routing one request: the chosen model,
// why, and every candidate with its exclusion, for the call's routing
// record.
type Resolution struct {
	// Task is the task routed.
	Task Task
	// Environment is the caller's environment.
	Environment access.Environment
	// Policy is the routing policy version that decided it.
	Policy policy.Ref
	// Strategy is the task's strategy.
	Strategy Strategy
	// Model is the chosen model (zero when none could serve).
	Model RegistryModel
	// Provider is the chosen model's provider.
	Provider ProviderConfig
	// Reason is why the model was chosen.
	Reason Reason
	// Candidates are the route's models in the route's order.
	Candidates []Candidate
}

// Resolve chooses the model that serves task for caller c from routing
// policy rt, registry reg and the models' health records (by model id;
// a model without one was never observed). It is a pure function of its
// arguments.
//
// Only the models the task's route names are candidates. A candidate
// lacking a needed capability, of a privacy class the route does not
// allow (or less private than c requires), or priced above the route's
// budget is never used, fallbacks included: no fallback is more
// expensive or less private than the route allows. The others are
// ordered by the route's strategy; the first that is available (in the
// environment, enabled, not already failed in c.Attempts, large enough
// for the request, not cooling down) is chosen. When it is the first of
// that order the reason is the strategy's; otherwise it is a fallback,
// named for why the first was unavailable.
//
// Errors: PROVIDER_UNAVAILABLE with details.reason task_not_routed (the
// policy has no route for task) or no_eligible_model (no candidate is
// usable; details.retryAt when one is only cooling down). The resolution
// returned with the error still lists the candidates.
func Resolve(task Task, rt Routing, reg Registry, health map[string]Health, c Caller) (Resolution, error) {
	const op = "ai.Resolve"
	res := Resolution{Task: task, Environment: c.Environment, Policy: rt.Ref}
	if reg.Environment != c.Environment || rt.Environment != c.Environment {
		return res, fault.E(op, fault.Internal, "").With("reason", "environment_mismatch")
	}
	route, ok := rt.Policy.Tasks[task]
	if !ok {
		return res, fault.E(op, fault.ProviderUnavailable, "No routing policy covers this task in this environment.").
			With("reason", "task_not_routed").With("task", string(task))
	}
	route = route.normalize()
	res.Strategy = route.Strategy
	needs := append(task.Needs(), c.Needs...)

	// Judge every candidate: the request's filters first (whether the
	// route allows the model for this request at all), then availability.
	type judged struct {
		Candidate
		model     RegistryModel
		requested bool   // passes capability, privacy and budget
		cause     Reason // the fallback reason its unavailability gives
	}
	var cands []judged
	seen := map[string]bool{}
	for _, id := range route.Models() {
		if seen[id] {
			continue
		}
		seen[id] = true
		j := judged{Candidate: Candidate{Model: id}}
		m, inReg := reg.Model(id)
		j.model, j.Provider = m, m.ProviderID
		prov, provOK := reg.Provider(m.ProviderID)
		exclude := func(e Exclusion, detail string, cause Reason) {
			if j.Excluded == "" {
				j.Excluded, j.Detail, j.cause = e, detail, cause
			}
		}
		switch {
		case !inReg:
			exclude(ExcludeEnv, "not_in_registry", ReasonFallbackOutage)
		case m.Retired:
			exclude(ExcludeEnv, "retired", ReasonFallbackOutage)
		case !provOK || !prov.Configured():
			exclude(ExcludeEnv, "provider_not_configured", ReasonFallbackOutage)
		case !m.Enabled:
			exclude(ExcludePolicy, "disabled", ReasonFallbackOutage)
		}
		// The request's filters, judged for every model the registry
		// holds so that an unavailable model still ranks where it would.
		requested := inReg
		if inReg {
			for _, n := range needs {
				if !m.Has(n) {
					requested = false
					exclude(ExcludeCapability, "missing:"+string(n), "")
					break
				}
			}
			if requested && (!slices.Contains(route.Privacy, m.Privacy) || !m.Privacy.Satisfies(c.Privacy)) {
				requested = false
				exclude(ExcludePrivacy, "privacy:"+string(m.Privacy), "")
			}
			if requested && route.MaxInputPrice != "" && m.InputPrice.Cmp(route.MaxInputPrice) > 0 {
				requested = false
				exclude(ExcludeBudget, "input_price", "")
			}
			if requested && route.MaxOutputPrice != "" && m.OutputPrice.Cmp(route.MaxOutputPrice) > 0 {
				requested = false
				exclude(ExcludeBudget, "output_price", "")
			}
		}
		j.requested = requested
		// Availability for this request.
		if i := slices.IndexFunc(c.Attempts, func(a Attempt) bool { return a.Model == id }); i >= 0 {
			exclude(ExcludeFailed, string(c.Attempts[i].Outcome), fallbackFor(c.Attempts[i].Outcome))
		}
		if inReg && tooSmall(m, reg, c) {
			exclude(ExcludeCapability, "context_window", ReasonFallbackContextWindow)
		}
		if h, ok := health[id]; ok && h.Cooling(c.At) {
			exclude(ExcludeCooldown, string(h.CooldownCause), fallbackFor(h.CooldownCause))
		}
		cands = append(cands, j)
	}

	// Order the models the request may use by the strategy.
	var ranked []int
	for i, j := range cands {
		if j.requested {
			ranked = append(ranked, i)
		}
	}
	res.Reason = ReasonPrimary
	switch route.Strategy {
	case StrategyCheapest:
		in, out := c.InputUnits, c.OutputUnits
		if in == 0 && out == 0 {
			in, out = 1, 1
		}
		cost := func(i int) Price {
			p, err := cands[i].model.Cost(in, out)
			if err != nil {
				return ""
			}
			return p
		}
		slices.SortStableFunc(ranked, func(a, b int) int { return cost(a).Cmp(cost(b)) })
		res.Reason = ReasonCheapest
	case StrategyLowestLatency:
		observed := func(i int) (int64, bool) {
			h, ok := health[cands[i].Model]
			return h.LatencyMillis, ok && h.LatencyObservations > 0
		}
		slices.SortStableFunc(ranked, func(a, b int) int {
			la, oa := observed(a)
			lb, ob := observed(b)
			switch {
			case oa && ob:
				return cmp.Compare(la, lb)
			case oa:
				return -1
			case ob:
				return 1
			}
			return 0
		})
		if len(ranked) > 0 {
			if _, ok := observed(ranked[0]); ok {
				res.Reason = ReasonLowestLatency
			}
		}
	}

	chosen := -1
	for n, i := range ranked {
		if cands[i].Excluded != "" {
			continue
		}
		chosen = i
		if n > 0 {
			res.Reason = cands[ranked[0]].cause
		}
		break
	}
	for _, j := range cands {
		res.Candidates = append(res.Candidates, j.Candidate)
	}
	if chosen < 0 {
		res.Reason = ""
		err := fault.E(op, fault.ProviderUnavailable, "No model the routing policy allows can serve this request now.").
			With("reason", "no_eligible_model").With("task", string(task))
		var retry time.Time
		for _, i := range ranked {
			if h, ok := health[cands[i].Model]; ok && cands[i].Excluded == ExcludeCooldown && (retry.IsZero() || h.CooldownUntil.Before(retry)) {
				retry = h.CooldownUntil
			}
		}
		if !retry.IsZero() {
			err = err.With("retryAt", retry.UTC().Format(time.RFC3339Nano))
		}
		return res, err
	}
	res.Candidates[chosen].Chosen = true
	res.Model = cands[chosen].model
	res.Provider, _ = reg.Provider(res.Model.ProviderID)
	return res, nil
}

// tooSmall reports whether m's context window cannot hold the request:
// smaller than its estimated units, or no larger than that of a model
// that already failed it for its context window.
func tooSmall(m RegistryModel, reg Registry, c Caller) bool {
	if need := c.InputUnits + c.OutputUnits; need > 0 && m.ContextWindow < need {
		return true
	}
	for _, a := range c.Attempts {
		if a.Outcome != OutcomeContextWindow {
			continue
		}
		if f, ok := reg.Model(a.Model); ok && m.ContextWindow <= f.ContextWindow {
			return true
		}
	}
	return false
}

// fallbackFor is the fallback reason of a model unavailable because of
// outcome o.
func fallbackFor(o Outcome) Reason {
	switch o {
	case OutcomeRateLimit:
		return ReasonFallbackRateLimit
	case OutcomeContextWindow:
		return ReasonFallbackContextWindow
	case OutcomeContentPolicy:
		return ReasonFallbackContentPolicy
	}
	return ReasonFallbackOutage
}
