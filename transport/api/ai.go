package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
)

// AIModelView is a model of the caller's environment's registry. Prices
// are exact decimal strings, never floats.
type AIModelView struct {
	// ID is the model's id on the platform.
	ID string `json:"id" example:"gpt-4o-mini"`
	// Object is always "ai_model".
	Object string `json:"object" example:"ai_model"`
	// Environment is the registry's environment (test or live).
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// ProviderID is the provider that serves the model.
	ProviderID string `json:"providerId" example:"openai"`
	// UpstreamModel is the model's name at its provider.
	UpstreamModel string `json:"upstreamModel" example:"gpt-4o-mini-2024-07-18"`
	// Capabilities are what the model can do: chat, json_output, tools, streaming.
	Capabilities []string `json:"capabilities" example:"[\"chat\",\"json_output\",\"tools\",\"streaming\"]"`
	// ContextWindow is the most units (tokens) a request and its answer may hold together.
	ContextWindow int64 `json:"contextWindow" example:"128000"`
	// PrivacyClass says what happens to data sent to the model: standard (the provider's ordinary terms),
	// no_retention (the provider keeps nothing) or local (it never leaves the platform's infrastructure).
	PrivacyClass string `json:"privacyClass" example:"standard" enum:"standard,no_retention,local"`
	// InputPrice is the cost of one input unit, a decimal string in currency.
	InputPrice string `json:"inputPrice" example:"0.00000015"`
	// OutputPrice is the cost of one output unit, a decimal string in currency.
	OutputPrice string `json:"outputPrice" example:"0.0000006"`
	// Currency is the currency of the prices: always USD.
	Currency string `json:"currency" example:"USD" enum:"USD"`
	// Unit is what one unit of a price is: always token.
	Unit string `json:"unit" example:"token" enum:"token"`
	// Enabled is false when an administrator took the model out of service.
	Enabled bool `json:"enabled" example:"true"`
	// Available is true when routing may use the model: enabled, listed by the environment's configuration,
	// and served by a provider configured there (base URL and key). It says nothing of the model's health.
	Available bool `json:"available" example:"true"`
}

// AIModelList lists the models of the caller's environment.
type AIModelList struct {
	// Items are the environment's models, in id order.
	Items []AIModelView `json:"items"`
}

// AIAdminModelView is a model as administration shows it: the member's
// view and the record's bookkeeping.
type AIAdminModelView struct {
	// ID is the model's id on the platform.
	ID string `json:"id" example:"gpt-4o-mini"`
	// Object is always "ai_model".
	Object string `json:"object" example:"ai_model"`
	// Environment is the registry's environment (test or live).
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// ProviderID is the provider that serves the model.
	ProviderID string `json:"providerId" example:"openai"`
	// UpstreamModel is the model's name at its provider.
	UpstreamModel string `json:"upstreamModel" example:"gpt-4o-mini-2024-07-18"`
	// Capabilities are what the model can do: chat, json_output, tools, streaming.
	Capabilities []string `json:"capabilities" example:"[\"chat\",\"json_output\"]"`
	// ContextWindow is the most units (tokens) a request and its answer may hold together.
	ContextWindow int64 `json:"contextWindow" example:"128000"`
	// PrivacyClass is standard, no_retention or local; configuration sets it, the API never does.
	PrivacyClass string `json:"privacyClass" example:"standard" enum:"standard,no_retention,local"`
	// InputPrice is the cost of one input unit, a decimal string in currency.
	InputPrice string `json:"inputPrice" example:"0.00000015"`
	// OutputPrice is the cost of one output unit, a decimal string in currency.
	OutputPrice string `json:"outputPrice" example:"0.0000006"`
	// Currency is the currency of the prices: always USD.
	Currency string `json:"currency" example:"USD" enum:"USD"`
	// Unit is what one unit of a price is: always token.
	Unit string `json:"unit" example:"token" enum:"token"`
	// Enabled is false when the model is out of service.
	Enabled bool `json:"enabled" example:"true"`
	// Available is true when routing may use the model: enabled, not retired, its provider configured.
	Available bool `json:"available" example:"true"`
	// Retired is true while the environment's configuration no longer lists the model: it is kept, never
	// routed to, and shown to administrators only.
	Retired bool `json:"retired" example:"false"`
	// AdminChanged is true once an administrator changed the model: configuration no longer sets its
	// enabled flag or prices.
	AdminChanged bool `json:"adminChanged" example:"false"`
	// Version counts the model record's writes, from 1.
	Version int64 `json:"version" example:"1"`
	// CreatedAt is when the model entered the registry.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the model record last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	// UpdatedBy is who changed it last: user:<user id>, or platform for configuration.
	UpdatedBy string `json:"updatedBy" example:"platform"`
}

// AIAdminModelList lists the models of the caller's environment with
// their bookkeeping, retired ones included.
type AIAdminModelList struct {
	// Items are the environment's models, in id order.
	Items []AIAdminModelView `json:"items"`
}

// AIProviderView is an upstream provider of the caller's environment.
// It never carries a key, a key reference or a URL.
type AIProviderView struct {
	// ID is the provider's id.
	ID string `json:"id" example:"openai"`
	// Object is always "ai_provider".
	Object string `json:"object" example:"ai_provider"`
	// Environment is the environment (test or live) the provider is configured in.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Kind is the wire the provider speaks: openai_compatible (OpenAI Chat Completions and servers that
	// speak it) or anthropic (Anthropic Messages).
	Kind string `json:"kind" example:"openai_compatible" enum:"openai_compatible,anthropic"`
	// DisplayName is the provider's name for people.
	DisplayName string `json:"displayName" example:"OpenAI"`
	// Configured is true when the environment configures the provider's base URL and key (or the provider
	// takes no key); its models are never routed to otherwise. Configured is not healthy: see the
	// administration's health.
	Configured bool `json:"configured" example:"true"`
}

// AIProviderList lists the providers of the caller's environment.
type AIProviderList struct {
	// Items are the environment's providers, in id order.
	Items []AIProviderView `json:"items"`
}

// AIAdminProviderView is a provider as administration shows it. It never
// carries a key or a key reference.
type AIAdminProviderView struct {
	// ID is the provider's id.
	ID string `json:"id" example:"openai"`
	// Object is always "ai_provider".
	Object string `json:"object" example:"ai_provider"`
	// Environment is the environment (test or live) the provider is configured in.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Kind is the wire the provider speaks.
	Kind string `json:"kind" example:"openai_compatible" enum:"openai_compatible,anthropic"`
	// DisplayName is the provider's name for people.
	DisplayName string `json:"displayName" example:"OpenAI"`
	// Configured is true when a base URL and a key (or keylessness) are configured.
	Configured bool `json:"configured" example:"true"`
	// Host is the host (and port) of the provider's base URL, "" when none is configured; never its path,
	// query or user information.
	Host string `json:"host" example:"api.openai.com"`
	// KeyConfigured is true when a key is configured for the provider (the key itself is never shown).
	KeyConfigured bool `json:"keyConfigured" example:"true"`
	// Keyless is true for a provider that takes no key (a local server).
	Keyless bool `json:"keyless" example:"false"`
	// Models counts the registry's models the provider serves, retired ones included.
	Models int `json:"models" example:"2"`
}

// AIAdminProviderList lists the providers of the caller's environment.
type AIAdminProviderList struct {
	// Items are the environment's providers, in id order.
	Items []AIAdminProviderView `json:"items"`
}

// AIHealthView is what calls to one model showed, in the caller's
// environment. Nothing here comes from configuration.
type AIHealthView struct {
	// ID is the model's id (a model has one health record per environment).
	ID string `json:"id" example:"gpt-4o-mini"`
	// Object is always "ai_model_health".
	Object string `json:"object" example:"ai_model_health"`
	// Environment is the environment (test or live) of the calls.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Status is unobserved until a call is observed; healthy when the last call succeeded; degraded after
	// failures not yet enough to cool the model; cooldown while it is left out of routing.
	Status string `json:"status" example:"healthy" enum:"unobserved,healthy,degraded,cooldown"`
	// ConsecutiveFailures counts unhealthy outcomes since the last success.
	ConsecutiveFailures int `json:"consecutiveFailures" example:"0"`
	// LastFailure is the last unhealthy outcome; null when none.
	LastFailure *string `json:"lastFailure" example:"rate_limit" enum:"rate_limit,server,timeout,auth,credits"`
	// LastFailureAt is when it happened; null when none.
	LastFailureAt *time.Time `json:"lastFailureAt"`
	// LastSuccessAt is when the model last answered; null when it never did.
	LastSuccessAt *time.Time `json:"lastSuccessAt"`
	// CooldownUntil is when the cooldown ends; null unless the model is cooling down.
	CooldownUntil *time.Time `json:"cooldownUntil"`
	// CooldownCause is the outcome that cooled the model; null unless it is cooling down.
	CooldownCause *string `json:"cooldownCause" example:"rate_limit" enum:"rate_limit,server,timeout,auth,credits"`
	// Successes counts the observed successful calls.
	Successes int64 `json:"successes" example:"42"`
	// Failures counts the observed unhealthy outcomes (rate limit, server, timeout, auth, credits).
	Failures int64 `json:"failures" example:"1"`
	// Rejections counts the requests the provider refused (context window, content policy, invalid
	// request), which say nothing of the model's health.
	Rejections int64 `json:"rejections" example:"0"`
	// LatencyMs is the exponentially weighted mean latency of successful calls in milliseconds; null until one is observed.
	LatencyMs *int64 `json:"latencyMs" example:"850"`
	// LastLatencyMs is the last successful call's latency in milliseconds; null until one is observed.
	LastLatencyMs *int64 `json:"lastLatencyMs" example:"790"`
	// LatencyObservations counts the successful calls whose latency was observed.
	LatencyObservations int64 `json:"latencyObservations" example:"42"`
	// ObservedAt is when the last observation was recorded; null when none was.
	ObservedAt *time.Time `json:"observedAt"`
}

// AIHealthList lists the health of every model of the caller's
// environment.
type AIHealthList struct {
	// Items are one record per model of the registry, in model id order, retired models included.
	Items []AIHealthView `json:"items"`
}

// AITaskRouteView is one task's route.
type AITaskRouteView struct {
	// Primary is the model tried first under the primary strategy.
	Primary string `json:"primary" example:"gpt-4o-mini"`
	// Fallbacks are the other models the task may use, in order; no other model is ever used for it.
	Fallbacks []string `json:"fallbacks" example:"claude-sonnet"`
	// PrivacyClasses are the privacy classes the task's models may have (standard, no_retention, local).
	PrivacyClasses []string `json:"privacyClasses" example:"[\"no_retention\",\"local\"]"`
	// MaxInputPrice is the most one input unit may cost, a decimal string of USD; null for no limit.
	MaxInputPrice *string `json:"maxInputPrice" example:"0.000003"`
	// MaxOutputPrice is the most one output unit may cost, a decimal string of USD; null for no limit.
	MaxOutputPrice *string `json:"maxOutputPrice" example:"0.000015"`
	// Strategy orders the allowed models: primary (the route's order), cheapest, or lowest_latency
	// (observed latency; models never observed follow in the route's order).
	Strategy string `json:"strategy" example:"primary" enum:"primary,cheapest,lowest_latency"`
}

// AIRoutingView is the current version of the caller's environment's
// routing policy.
type AIRoutingView struct {
	// PolicyID is always ai.routing.
	PolicyID string `json:"policyId" example:"ai.routing"`
	// Version is the policy version's number; each change adds one.
	Version int `json:"version" example:"3"`
	// Hash is the lowercase hex SHA-256 of the version's canonical content.
	Hash string `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Environment is the environment (test or live) the policy routes in.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Tasks maps each routed task (chat, complete, music_brief, lyrics, prompt_enhance, project_analyze,
	// project_blueprint) to its route; a task it does not name is not routed.
	Tasks map[string]AITaskRouteView `json:"tasks"`
	// CreatedAt is when the version was published.
	CreatedAt time.Time `json:"createdAt"`
	// CreatedBy is who published it: user:<user id>, or platform for configuration.
	CreatedBy string `json:"createdBy" example:"user:usr_01jd0000000000000000000000"`
}

// AITaskRouteRequest is one task's route to publish.
type AITaskRouteRequest struct {
	// Primary is a model of the environment's registry.
	Primary string `json:"primary" example:"gpt-4o-mini"`
	// Fallbacks are up to 10 other models of the registry, in order, none twice.
	Fallbacks []string `json:"fallbacks,omitempty" example:"claude-sonnet"`
	// PrivacyClasses are the privacy classes the task's models may have, at least one of standard,
	// no_retention and local.
	PrivacyClasses []string `json:"privacyClasses" example:"[\"standard\",\"no_retention\"]"`
	// MaxInputPrice, when set, is the most one input unit may cost: a decimal string of USD.
	MaxInputPrice string `json:"maxInputPrice,omitempty" example:"0.000003"`
	// MaxOutputPrice, when set, is the most one output unit may cost: a decimal string of USD.
	MaxOutputPrice string `json:"maxOutputPrice,omitempty" example:"0.000015"`
	// Strategy is primary (the default), cheapest or lowest_latency.
	Strategy string `json:"strategy,omitempty" example:"primary" enum:"primary,cheapest,lowest_latency"`
}

// AIRoutingRequest is a whole routing policy to publish.
type AIRoutingRequest struct {
	// Tasks maps each task to route to its route; a task not named is no longer routed. Required ({} routes
	// no task).
	Tasks map[string]AITaskRouteRequest `json:"tasks"`
}

// AIModelPatchRequest changes a model; fields left out stay as they are.
type AIModelPatchRequest struct {
	// Enabled takes the model in or out of service.
	Enabled *bool `json:"enabled,omitempty" example:"false"`
	// InputPrice is the cost of one input unit, a non-negative decimal string of USD (at most 12 integer
	// and 18 fractional digits).
	InputPrice *string `json:"inputPrice,omitempty" example:"0.00000015"`
	// OutputPrice is the cost of one output unit, a non-negative decimal string of USD.
	OutputPrice *string `json:"outputPrice,omitempty" example:"0.0000006"`
}

// AIOverview is the administration's summary of the caller's
// environment's control plane.
type AIOverview struct {
	// Environment is the environment (test or live) summarized.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Providers counts the environment's providers.
	Providers AIOverviewProviders `json:"providers"`
	// Models counts the environment's models.
	Models AIOverviewModels `json:"models"`
	// Health counts the models by health status, retired ones aside.
	Health AIOverviewHealth `json:"health"`
	// Routing summarizes the current routing policy.
	Routing AIOverviewRouting `json:"routing"`
}

// AIOverviewProviders counts providers.
type AIOverviewProviders struct {
	// Total counts the environment's providers.
	Total int `json:"total" example:"2"`
	// Configured counts those with a base URL and key (or keyless).
	Configured int `json:"configured" example:"2"`
}

// AIOverviewModels counts models.
type AIOverviewModels struct {
	// Total counts the registry's models, retired ones included.
	Total int `json:"total" example:"3"`
	// Enabled counts the enabled models that are not retired.
	Enabled int `json:"enabled" example:"2"`
	// Available counts the models routing may use (enabled, not retired, provider configured).
	Available int `json:"available" example:"2"`
	// Retired counts the models the configuration no longer lists.
	Retired int `json:"retired" example:"0"`
}

// AIOverviewHealth counts models by health status.
type AIOverviewHealth struct {
	// Unobserved counts models no call was observed for.
	Unobserved int `json:"unobserved" example:"1"`
	// Healthy counts models whose last call succeeded.
	Healthy int `json:"healthy" example:"1"`
	// Degraded counts models failing, not yet cooled.
	Degraded int `json:"degraded" example:"0"`
	// Cooldown counts models left out of routing until their cooldown ends.
	Cooldown int `json:"cooldown" example:"0"`
}

// AIOverviewRouting summarizes the routing policy.
type AIOverviewRouting struct {
	// Version is the current routing policy version; null when none is published.
	Version *int `json:"version" example:"3"`
	// Hash is the current version's content hash; null when none is published.
	Hash *string `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// RoutedTasks are the tasks the policy routes.
	RoutedTasks []string `json:"routedTasks" example:"chat"`
	// UnroutedTasks are the tasks it does not route (requests for them are refused).
	UnroutedTasks []string `json:"unroutedTasks" example:"lyrics"`
}

// strs converts typed strings to strings.
func strs[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

func aiModelView(reg ai.Registry, m ai.RegistryModel) AIModelView {
	return AIModelView{ID: m.ID, Object: "ai_model", Environment: string(m.Environment), ProviderID: m.ProviderID,
		UpstreamModel: m.Upstream, Capabilities: strs(m.Capabilities), ContextWindow: m.ContextWindow, PrivacyClass: string(m.Privacy),
		InputPrice: string(m.InputPrice), OutputPrice: string(m.OutputPrice), Currency: "USD", Unit: "token", Enabled: m.Enabled,
		Available: reg.Available(m)}
}

func aiAdminModelView(reg ai.Registry, m ai.RegistryModel) AIAdminModelView {
	v := aiModelView(reg, m)
	return AIAdminModelView{ID: v.ID, Object: v.Object, Environment: v.Environment, ProviderID: v.ProviderID, UpstreamModel: v.UpstreamModel,
		Capabilities: v.Capabilities, ContextWindow: v.ContextWindow, PrivacyClass: v.PrivacyClass, InputPrice: v.InputPrice,
		OutputPrice: v.OutputPrice, Currency: v.Currency, Unit: v.Unit, Enabled: v.Enabled, Available: v.Available, Retired: m.Retired,
		AdminChanged: m.AdminChanged, Version: m.Version, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, UpdatedBy: m.UpdatedBy}
}

func aiProviderView(env access.Environment, p ai.ProviderConfig) AIProviderView {
	return AIProviderView{ID: p.ID, Object: "ai_provider", Environment: string(env), Kind: string(p.Kind), DisplayName: p.DisplayName,
		Configured: p.Configured()}
}

// optionalTime is t as a nullable JSON time: nil for the zero time.
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func aiHealthView(h ai.Health, now time.Time) AIHealthView {
	v := AIHealthView{ID: h.ModelID, Object: "ai_model_health", Environment: string(h.Environment), Status: string(h.Status(now)),
		ConsecutiveFailures: h.ConsecutiveFailures, LastFailure: optional(string(h.LastFailure)), LastFailureAt: optionalTime(h.LastFailureAt),
		LastSuccessAt: optionalTime(h.LastSuccessAt), Successes: h.Successes, Failures: h.Failures, Rejections: h.Rejections,
		LatencyObservations: h.LatencyObservations, ObservedAt: optionalTime(h.UpdatedAt)}
	if h.Cooling(now) {
		v.CooldownUntil, v.CooldownCause = optionalTime(h.CooldownUntil), optional(string(h.CooldownCause))
	}
	if h.LatencyObservations > 0 {
		mean, last := h.LatencyMillis, h.LastLatencyMillis
		v.LatencyMs, v.LastLatencyMs = &mean, &last
	}
	return v
}

func aiRoutingView(rt ai.Routing) AIRoutingView {
	v := AIRoutingView{PolicyID: rt.Ref.ID, Version: rt.Ref.Version, Hash: rt.Ref.Hash, Environment: string(rt.Environment),
		Tasks: map[string]AITaskRouteView{}, CreatedAt: rt.CreatedAt, CreatedBy: rt.CreatedBy}
	for t, r := range rt.Policy.Tasks {
		v.Tasks[string(t)] = AITaskRouteView{Primary: r.Primary, Fallbacks: append([]string{}, r.Fallbacks...),
			PrivacyClasses: strs(r.Privacy), MaxInputPrice: optional(string(r.MaxInputPrice)), MaxOutputPrice: optional(string(r.MaxOutputPrice)),
			Strategy: string(r.Strategy)}
	}
	return v
}

// taskRoute is a request's route as the domain takes it.
func (r AITaskRouteRequest) taskRoute() ai.TaskRoute {
	out := ai.TaskRoute{Primary: r.Primary, Fallbacks: r.Fallbacks, MaxInputPrice: ai.Price(r.MaxInputPrice),
		MaxOutputPrice: ai.Price(r.MaxOutputPrice), Strategy: ai.Strategy(r.Strategy)}
	for _, c := range r.PrivacyClasses {
		out.Privacy = append(out.Privacy, ai.PrivacyClass(c))
	}
	return out
}

// aiOverview summarizes reg, its health hs at now and the current
// routing policy (nil when none).
func aiOverview(reg ai.Registry, hs []ai.Health, rt *ai.Routing, now time.Time) AIOverview {
	o := AIOverview{Environment: string(reg.Environment), Routing: AIOverviewRouting{RoutedTasks: []string{}, UnroutedTasks: []string{}}}
	for _, p := range reg.Providers {
		o.Providers.Total++
		if p.Configured() {
			o.Providers.Configured++
		}
	}
	for _, m := range reg.Models {
		o.Models.Total++
		switch {
		case m.Retired:
			o.Models.Retired++
		case m.Enabled:
			o.Models.Enabled++
		}
		if reg.Available(m) {
			o.Models.Available++
		}
	}
	for i, h := range hs {
		if reg.Models[i].Retired {
			continue
		}
		switch h.Status(now) {
		case ai.HealthUnobserved:
			o.Health.Unobserved++
		case ai.HealthHealthy:
			o.Health.Healthy++
		case ai.HealthDegraded:
			o.Health.Degraded++
		case ai.HealthCooldown:
			o.Health.Cooldown++
		}
	}
	for _, t := range ai.Tasks() {
		if rt != nil {
			if _, ok := rt.Policy.Tasks[t]; ok {
				o.Routing.RoutedTasks = append(o.Routing.RoutedTasks, string(t))
				continue
			}
		}
		o.Routing.UnroutedTasks = append(o.Routing.UnroutedTasks, string(t))
	}
	if rt != nil {
		o.Routing.Version, o.Routing.Hash = &rt.Ref.Version, &rt.Ref.Hash
	}
	return o
}

// aiRoutes are the AI control plane's registry and routing routes (spec,
// AI control plane): the registry, providers and routing policy of the
// caller's environment for any member of a workspace (sessions and API
// keys), and the administration of both for super_admin. Every route is
// Preview: the family stays planned until released.
func aiRoutes(svc *ai.Service) []Route {
	if svc == nil {
		return nil
	}
	member := func(r Route) Route {
		r.Method, r.Tag, r.Auth, r.AnyMember, r.Private, r.Idempotency = http.MethodGet, transport.TagAI, transport.AuthSessionOrKey, true, true, transport.IdempotencyNone
		r.Maturity = transport.Preview
		return r
	}
	admin := func(r Route) Route {
		r.Tag, r.Auth, r.SuperAdmin, r.Private, r.Maturity = transport.TagAI, transport.AuthSession, true, true, transport.Preview
		if r.Method == "" {
			r.Method, r.Idempotency = http.MethodGet, transport.IdempotencyNone
		} else {
			r.Idempotency, r.Policy = transport.IdempotencyOptional, Policy{Fresh: transport.FreshSession}
		}
		return r
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exModel := AIModelView{ID: "gpt-4o-mini", Object: "ai_model", Environment: "live", ProviderID: "openai", UpstreamModel: "gpt-4o-mini-2024-07-18",
		Capabilities: []string{"chat", "json_output", "tools", "streaming"}, ContextWindow: 128000, PrivacyClass: "standard",
		InputPrice: "0.00000015", OutputPrice: "0.0000006", Currency: "USD", Unit: "token", Enabled: true, Available: true}
	exAdminModel := AIAdminModelView{ID: exModel.ID, Object: exModel.Object, Environment: exModel.Environment, ProviderID: exModel.ProviderID,
		UpstreamModel: exModel.UpstreamModel, Capabilities: exModel.Capabilities, ContextWindow: exModel.ContextWindow,
		PrivacyClass: exModel.PrivacyClass, InputPrice: exModel.InputPrice, OutputPrice: exModel.OutputPrice, Currency: "USD", Unit: "token",
		Enabled: true, Available: true, Version: 2, AdminChanged: true, CreatedAt: t, UpdatedAt: t, UpdatedBy: "user:usr_01jd0000000000000000000000"}
	exProvider := AIProviderView{ID: "openai", Object: "ai_provider", Environment: "live", Kind: "openai_compatible", DisplayName: "OpenAI", Configured: true}
	maxIn, maxOut := "0.000003", "0.000015"
	exRouting := AIRoutingView{PolicyID: ai.PolicyRouting, Version: 3, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Environment: "live", CreatedAt: t, CreatedBy: "user:usr_01jd0000000000000000000000", Tasks: map[string]AITaskRouteView{
			"lyrics": {Primary: "gpt-4o-mini", Fallbacks: []string{"claude-sonnet"}, PrivacyClasses: []string{"standard", "no_retention"},
				MaxInputPrice: &maxIn, MaxOutputPrice: &maxOut, Strategy: "primary"}}}
	exRoute := AITaskRouteRequest{Primary: "gpt-4o-mini", Fallbacks: []string{"claude-sonnet"}, PrivacyClasses: []string{"standard", "no_retention"},
		MaxInputPrice: "0.000003", MaxOutputPrice: "0.000015", Strategy: "primary"}
	mean, last := int64(850), int64(790)
	failure := "rate_limit"
	exHealth := AIHealthView{ID: "gpt-4o-mini", Object: "ai_model_health", Environment: "live", Status: "healthy", LastFailure: &failure,
		LastFailureAt: &t, LastSuccessAt: &t, Successes: 42, Failures: 1, LatencyMs: &mean, LastLatencyMs: &last, LatencyObservations: 42, ObservedAt: &t}
	version, hash := 3, exRouting.Hash
	routingErrors := []string{string(fault.NotFound)}
	publishErrors := []string{string(fault.Conflict)}
	return []Route{
		member(Route{Pattern: "/api/v1/ai/models", OperationID: "listAiModels",
			Summary: "List the AI models",
			Description: "The models of the caller's environment's registry (each environment has its own), in id order: provider, upstream " +
				"name, capabilities, context window, privacy class, the price of one input and one output token as exact decimal strings " +
				"of USD, and whether routing may use the model now (enabled, its provider configured). Retired models are not listed. " +
				"Any member of the workspace (sessions and API keys).",
			Response: AIModelList{Items: []AIModelView{exModel}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				reg, err := svc.Registry(ctx, c.Tx, c.Principal.Environment)
				if err != nil {
					return nil, err
				}
				out := AIModelList{Items: []AIModelView{}}
				for _, m := range reg.Models {
					if !m.Retired {
						out.Items = append(out.Items, aiModelView(reg, m))
					}
				}
				return out, nil
			}}),
		member(Route{Pattern: "/api/v1/ai/models/{id}", OperationID: "getAiModel",
			Summary:     "Get an AI model",
			Description: "One model of the caller's environment's registry. A model of the other environment, or retired, is 404.",
			Response:    exModel, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				m, err := svc.Model(ctx, c.Tx, c.Principal.Environment, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return aiModelView(ai.Registry{Environment: m.Environment, Providers: svc.Providers(m.Environment)}, m), nil
			}}),
		member(Route{Pattern: "/api/v1/ai/providers", OperationID: "listAiProviders",
			Summary: "List the AI providers",
			Description: "The upstream providers of the caller's environment, in id order, with the wire each speaks and whether it is " +
				"configured (base URL and key). Keys, key references and URLs are never returned. Any member of the workspace.",
			Response: AIProviderList{Items: []AIProviderView{exProvider}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				env := c.Principal.Environment
				out := AIProviderList{Items: []AIProviderView{}}
				for _, p := range svc.Providers(env) {
					out.Items = append(out.Items, aiProviderView(env, p))
				}
				return out, nil
			}}),
		member(Route{Pattern: "/api/v1/ai/routing", OperationID: "getAiRouting",
			Summary: "Read the AI routing policy",
			Description: "The current version of the caller's environment's routing policy (policy id ai.routing, integer version, content " +
				"hash): for each routed task the primary model, ordered fallbacks, the privacy classes its models may have, the most one " +
				"input and one output token may cost, and the strategy. No model outside a task's route, and none of another privacy " +
				"class or above its prices, is ever used for it. NOT_FOUND until a policy is published. Any member of the workspace.",
			Response: exRouting, Errors: routingErrors,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				rt, err := svc.Routing(ctx, c.Tx, c.Principal.Environment)
				if err != nil {
					return nil, err
				}
				return aiRoutingView(rt), nil
			}}),
		admin(Route{Method: http.MethodPut, Pattern: "/api/v1/ai/routing", OperationID: "publishAiRouting", Status: http.StatusCreated,
			Summary: "Publish the AI routing policy",
			Description: "Publishes the whole routing policy of the caller's environment as a new immutable version (a task the body does " +
				"not name is no longer routed), with an audit record (ai_routing.published) and the outbox event ai.routing.published. " +
				"Publishing content equal to the current version's publishes nothing and answers the current version with 200: the same " +
				"content is the same version, however it is spelled (privacy classes are a set, prices are compared as numbers). Each " +
				"route's primary and fallbacks must be models of the environment's registry, none twice, at most 10 fallbacks; " +
				"privacyClasses at least one of standard, no_retention, local; prices decimal strings; strategy primary (default), " +
				"cheapest or lowest_latency; anything else is 400 INVALID_INPUT with details.field tasks.<task>.<field>. The policy is " +
				"the platform's for the environment, so publishing needs super_admin and a sign-in within the fresh-authentication " +
				"window; an optional Idempotency-Key replays the first answer. 409 CONFLICT when concurrent publishers kept winning.",
			Request: AIRoutingRequest{Tasks: map[string]AITaskRouteRequest{"lyrics": exRoute}}, Response: exRouting, Errors: publishErrors,
			ExistingStatus: http.StatusOK, ExistingText: "OK: the content equals the current version, which is answered.",
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AIRoutingRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				if in.Tasks == nil {
					return nil, fault.Invalid("transport.publishAiRouting", "tasks", "tasks is required: the whole policy, an object of "+
						"task routes ({} routes no task).")
				}
				pol := ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{}}
				for task, r := range in.Tasks {
					pol.Tasks[ai.Task(task)] = r.taskRoute()
				}
				rt, created, err := svc.PublishRouting(ctx, c.Tx, c.Principal, pol, c.RequestID)
				if err != nil {
					return nil, err
				}
				if !created {
					c.SetStatus(http.StatusOK)
				}
				return aiRoutingView(rt), nil
			}}),
		admin(Route{Pattern: "/api/v1/admin/ai", OperationID: "getAiOverview",
			Summary: "Summarize the AI control plane",
			Description: "The caller's environment's providers (configured or not), models (enabled, available, retired), their health " +
				"by status as observed from real calls (a model never called is unobserved, never healthy), and the routing policy's " +
				"version with the tasks it routes and those it does not. Needs super_admin.",
			Response: AIOverview{Environment: "live", Providers: AIOverviewProviders{Total: 2, Configured: 2},
				Models: AIOverviewModels{Total: 3, Enabled: 2, Available: 2}, Health: AIOverviewHealth{Unobserved: 1, Healthy: 1},
				Routing: AIOverviewRouting{Version: &version, Hash: &hash, RoutedTasks: []string{"chat"}, UnroutedTasks: []string{"lyrics"}}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				env := c.Principal.Environment
				reg, err := svc.Registry(ctx, c.Tx, env)
				if err != nil {
					return nil, err
				}
				hs, err := svc.Health(ctx, c.Tx, reg)
				if err != nil {
					return nil, err
				}
				var cur *ai.Routing
				switch rt, err := svc.Routing(ctx, c.Tx, env); {
				case err == nil:
					cur = &rt
				case !fault.Is(err, fault.NotFound):
					return nil, err
				}
				return aiOverview(reg, hs, cur, c.Tx.Now()), nil
			}}),
		admin(Route{Pattern: "/api/v1/admin/ai/models", OperationID: "listAiAdminModels",
			Summary: "List the AI models for administration",
			Description: "Every model of the caller's environment's registry, retired ones included, with its version, who changed it " +
				"last and whether an administrator did (then configuration no longer sets its enabled flag or prices). Needs super_admin.",
			Response: AIAdminModelList{Items: []AIAdminModelView{exAdminModel}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				reg, err := svc.Registry(ctx, c.Tx, c.Principal.Environment)
				if err != nil {
					return nil, err
				}
				out := AIAdminModelList{Items: []AIAdminModelView{}}
				for _, m := range reg.Models {
					out.Items = append(out.Items, aiAdminModelView(reg, m))
				}
				return out, nil
			}}),
		admin(Route{Pattern: "/api/v1/admin/ai/providers", OperationID: "listAiAdminProviders",
			Summary: "List the AI providers for administration",
			Description: "The providers of the caller's environment with the host of their base URL, whether a key is configured (never " +
				"the key or its reference) and how many models each serves. Needs super_admin.",
			Response: AIAdminProviderList{Items: []AIAdminProviderView{{ID: "openai", Object: "ai_provider", Environment: "live",
				Kind: "openai_compatible", DisplayName: "OpenAI", Configured: true, Host: "api.openai.com", KeyConfigured: true, Models: 2}}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				reg, err := svc.Registry(ctx, c.Tx, c.Principal.Environment)
				if err != nil {
					return nil, err
				}
				out := AIAdminProviderList{Items: []AIAdminProviderView{}}
				for _, p := range reg.Providers {
					n := 0
					for _, m := range reg.Models {
						if m.ProviderID == p.ID {
							n++
						}
					}
					out.Items = append(out.Items, AIAdminProviderView{ID: p.ID, Object: "ai_provider", Environment: string(reg.Environment),
						Kind: string(p.Kind), DisplayName: p.DisplayName, Configured: p.Configured(), Host: p.Host(), KeyConfigured: p.KeyRef != "",
						Keyless: p.Keyless, Models: n})
				}
				return out, nil
			}}),
		admin(Route{Pattern: "/api/v1/admin/ai/health", OperationID: "listAiHealth",
			Summary: "List the AI models' health",
			Description: "One record per model of the caller's environment (retired ones included), from real calls only: unobserved " +
				"until a call is observed; healthy after a success; degraded after unhealthy outcomes (rate limit, server error, " +
				"timeout, refused key, exhausted credits); cooldown after several in a row, until cooldownUntil, during which " +
				"routing leaves the model out. Latency is the weighted mean of successful calls, null until one is observed. Every " +
				"host records into the same records. Needs super_admin.",
			Response: AIHealthList{Items: []AIHealthView{exHealth}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				reg, err := svc.Registry(ctx, c.Tx, c.Principal.Environment)
				if err != nil {
					return nil, err
				}
				hs, err := svc.Health(ctx, c.Tx, reg)
				if err != nil {
					return nil, err
				}
				out := AIHealthList{Items: []AIHealthView{}}
				now := c.Tx.Now()
				for _, h := range hs {
					out.Items = append(out.Items, aiHealthView(h, now))
				}
				return out, nil
			}}),
		admin(Route{Method: http.MethodPatch, Pattern: "/api/v1/admin/ai/models/{id}", OperationID: "updateAiModel",
			Summary: "Change an AI model",
			Description: "Takes a model of the caller's environment in or out of service (enabled) or changes its prices (decimal " +
				"strings of USD per token). Fields left out stay; at least one is required (400 INVALID_INPUT, details.field enabled); " +
				"a malformed price is 400 INVALID_INPUT naming its field, and any other field (privacyClass among them: it states what " +
				"the provider account does with data and is set by configuration only) is 400 INVALID_INPUT. A change is a new version " +
				"of the model, audited (ai_model.updated, before and after), with the outbox event ai.model.updated, and the next " +
				"request on every host routes by it; it survives restarts (configuration no longer sets the model's enabled flag or " +
				"prices). Asking for what is already there changes nothing and writes nothing. A model of the other environment is " +
				"404. Needs super_admin and a recent sign-in; an optional Idempotency-Key replays the first answer.",
			Request:  AIModelPatchRequest{Enabled: new(false)},
			Response: exAdminModel, Errors: []string{string(fault.NotFound), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AIModelPatchRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				m, _, err := svc.UpdateModel(ctx, c.Tx, c.Principal, c.PathValue("id"), ai.ModelChange{Enabled: in.Enabled,
					InputPrice: in.InputPrice, OutputPrice: in.OutputPrice, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return aiAdminModelView(ai.Registry{Environment: m.Environment, Providers: svc.Providers(m.Environment)}, m), nil
			}}),
		admin(Route{Method: http.MethodPut, Pattern: "/api/v1/admin/ai/routing/{task}", OperationID: "publishAiTaskRoute", Status: http.StatusCreated,
			Summary: "Publish one task's AI route",
			Description: "Sets one task's route (task: chat, complete, music_brief, lyrics, prompt_enhance, project_analyze, " +
				"project_blueprint; another is 404) in the routing policy of the caller's environment, keeping every other task's route " +
				"as the current version has it, as a new immutable version with an audit record and the outbox event " +
				"ai.routing.published. A route equal to the task's current one publishes nothing and answers the current version with " +
				"200. The route's rules and errors are those of PUT /api/v1/ai/routing. Two administrators publishing different tasks " +
				"at once both land. Needs super_admin and a recent sign-in; an optional Idempotency-Key replays the first answer.",
			Request: exRoute, Response: exRouting, Errors: append(slices.Clone(routingErrors), publishErrors...),
			ExistingStatus: http.StatusOK, ExistingText: "OK: the route equals the task's current one; the current version is answered.",
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AITaskRouteRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				rt, created, err := svc.PublishTask(ctx, c.Tx, c.Principal, ai.Task(c.PathValue("task")), in.taskRoute(), c.RequestID)
				if err != nil {
					return nil, err
				}
				if !created {
					c.SetStatus(http.StatusOK)
				}
				return aiRoutingView(rt), nil
			}}),
	}
}
