// Package ai owns the AI control plane's model registry, the models'
// health and the routing policy (spec, AI control plane; ai.md §3 and
// §4): which models each environment offers, how they are doing, and
// which of them serves each task for a caller.
//
// # Registry
//
// Each environment (test, live) has its own providers and models.
// Providers come from the host's configuration alone (Environment): an
// id, the wire they speak (ProviderKind), a display name, a base URL and
// a reference to their key, which is never held, shown or logged here; a
// provider without a base URL or key is reported not configured and its
// models are never routed to. Models are seeded from the configuration
// into the store at start (Seed) and read from the store on every
// request: an id, the provider, the upstream model name, capabilities
// (chat, json_output, tools, streaming), a context window, a privacy
// class (standard < no_retention < local) and the price of one input and
// one output unit (token) in US dollars, as exact decimals (Price; never
// floats). An administrator may take a model out of service or change its
// prices (UpdateModel); that change is audited, writes an outbox event,
// and survives restarts: configuration keeps setting the other fields
// but no longer the changed model's enabled flag or prices. The privacy
// class is not editable through the API: it states what the provider
// account does with data, a contractual fact of the configuration, and
// loosening it by a call would let privacy-restricted tasks reach a model
// that keeps their data.
//
// # Health
//
// A model's health is what its calls showed, nothing else: the completion
// path reports every call's Outcome (RecordOutcome, with OutcomeOf for an
// adapter's error). Rate limits, server failures, timeouts, refused keys
// and exhausted credits are unhealthy; HealthPolicy.Threshold of them in
// a row cool the model for HealthPolicy.Cooldown (defaults 3 and one
// minute), during which routing leaves it out; a success ends the streak
// and the cooldown. A refusal of the request itself (context window,
// content policy) is counted but says nothing of the model. Successful
// calls feed an exponentially weighted latency mean. A model never
// called is "unobserved", never "healthy". Records live in the store, so
// every host sees one model's cooldown, and concurrent observations are
// all counted (compare-and-set on the record's version).
//
// # Routing
//
// An environment's routing policy is one immutable, versioned policy
// document (package policy, id ai.routing): for each task (chat,
// complete, music_brief, lyrics, prompt_enhance, project_analyze,
// project_blueprint) a primary model, ordered fallbacks, the privacy
// classes its models may have, the most one input and one output unit
// may cost, and a strategy (primary, cheapest, lowest_latency).
// Publishing the whole policy (PublishRouting) or one task's route
// (PublishTask) with content equal to the current version's publishes
// nothing; other content is version N+1, audited, with an outbox event.
// Configuration seeds the policy only where an environment has none.
//
// Resolve is a pure function of the task, the policy version, the
// registry, the health records and the caller (environment, privacy
// requirement, needed capabilities, size, earlier failed attempts,
// time). Only the models of the task's route are candidates; one lacking
// a capability, of a privacy class the route does not allow or the
// caller refuses, or priced above the route's budget is never used, so
// no fallback is more expensive or less private than the policy allows.
// The rest are ordered by the strategy and the first available one
// (configured, enabled, not failed in this request, large enough, not
// cooling down) is chosen, with a reason (primary, cheapest,
// lowest_latency, or fallback:rate_limit|context_window|content_policy|
// outage) and every candidate's exclusion (env, policy, capability,
// privacy, budget, health:failed, health:cooldown): the per-call routing
// record of ai.md §3.3. Service.Route reads the current policy, registry
// and health and resolves.
//
// # Who may do what
//
// The registry and policy are per environment, for the whole platform:
// any member of a workspace reads them; changing them (a model, a task's
// route, the whole policy) needs the super_admin platform role, as the
// marketplace fee policy does. The routes declare it; the service
// trusts its caller's authorization.
package ai
