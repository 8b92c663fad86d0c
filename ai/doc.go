// Package ai owns the AI control plane's model registry, the models'
// health, the routing policy and the completion operations with their
// credits (spec, AI control plane; ai.md §3 and §4): which models each
// environment offers, how they are doing, which of them serves each task
// for a caller, and what each chat or completion executed and cost.
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
// trusts its caller's authorization. Asking for a completion spends
// credits: it needs track.generate (API key scope ai:use), and reading
// an operation needs that grant to reach it (own for CREATOR and
// MEMBER).
//
// # Provider keys
//
// The host gives each environment's provider keys in its configuration,
// by KeyRef (ProviderKeys). At start SealKeys seals each with
// AES-256-GCM under the platform's secret (Sealer; aad KeyAAD, the
// environment and ref, so a sealed key cannot be moved to another row)
// into the store, with a fingerprint that tells a changed key without
// opening the stored one; the platform keeps no plaintext afterwards. A
// call unseals its provider's key (openKey) and hands it to the host's
// ProviderFunc, which builds the adapter by ProviderKind through the
// outbound URL guard; the adapter serves that call and is dropped. A key
// is never returned, logged, put in an error or stored in plaintext.
//
// # Operations
//
// Every chat (POST /api/v1/ai/chat), task completion (POST
// /api/v1/ai/complete) and structured task's completion (Completions.Run,
// which an ai/task Completer bound to the caller calls) is an
// Operation, which is also its usage record:
// the platform profile (tenant, workspace, environment), the routing
// policy version, the reason and the model and provider that executed
// (and every provider call, CallAttempt), the units the provider
// reported, the credits reserved and settled, the latency and the
// terminal status. It never holds the prompt, the context or the
// answer. Its states are a table (OperationMoves): running, then once
// completed, failed, cancelled (the caller went away) or expired; each
// terminal state writes its outbox event (ai.operation.<status>) in the
// unit of work that moves it there.
//
// Completions runs an operation in three steps. BeginChat/BeginComplete
// validate the request (bounded by Limits: messages, bytes, tools,
// context blocks, output tokens), route it (Service.Route), price its
// reservation and write the operation with the reservation and its
// deadline job in one unit of work: insufficient credits fail it before
// any provider call. Pending.Execute calls the provider, following the
// fallbacks below and recording every call's outcome into its model's
// health (RecordOutcome, in its own unit of work; a cancelled call is
// not recorded). Pending.Complete ends a successful operation in the
// caller's unit of work, which on the routes also stores the answer
// with the request's idempotency record; a failed one is ended by
// Execute in a unit of its own. A host that stops between the two
// leaves a running operation, which its deadline job (JobExpire, at the
// operations' longest duration plus DeadlineGrace) expires, releasing
// the whole reservation: the platform's failure is never the creator's
// cost.
//
// A structured task's route runs its attempts through a TaskCall
// (BeginTask): each attempt is Run's operation, but the last one stays
// open until the task has judged its answer, so that an accepted answer
// ends its operation in the route's unit of work with the route's
// idempotency record (Commit), and a refused one ends in a unit of its
// own (Close) before the next attempt. With an Idempotency-Key, attempt n
// holds TaskKey(task, n, key): a duplicate of a running request is
// IDEMPOTENCY_IN_PROGRESS before it spends anything, one of a failed
// request answers the failure again, and one of a request whose every
// answer was refused is told so (Refused) without a provider call.
//
// # Credits
//
// Credits move through the ledger exactly as a music generation's do:
// Reserve before the call (reference reserve:<operation>), then one
// SettleAndRelease when it ends (settle:<operation>, release:
// <operation>), each movement once under any retry. The pricing policy
// is the environment's ai.pricing policy (CreditPricing, published from
// configuration where none is, default DefaultCreditPricing): credits =
// ceil(US dollars of model cost x CreditsPerUSD), at least
// MinimumCredits (defaults 1000 per dollar, 1), in exact decimals. The
// reservation prices the estimated input (EstimateUnits: a unit per
// three bytes of text plus four per message and tool) and the request's
// output cap at the most expensive model the task's route lets the
// request use (a fallback may be dearer than the primary). The
// settlement is:
//
//   - the provider reported usage: its input and output units at the
//     prices of the model that executed, capped at the reservation
//     (UsageReported);
//   - output came without usage (a stream that ended or broke without
//     it, a caller that left mid-answer): the whole reservation
//     (UsageReservation), as the provider most likely billed it;
//   - no output came (every call failed before answering, the caller
//     left first, the operation expired): nothing; the reservation is
//     released (UsageNone).
//
// # Fallbacks
//
// A call that fails before any output with a failure of the provider
// (rate limit, server, timeout, refused key, exhausted provider credits,
// a missing key) or a context window too small is routed again with the
// failed model excluded (Caller.Attempts): the route's next allowed
// model serves, with a fallback:* reason. When none is left, a rate
// limit or server failure the provider marks retryable is retried once
// on the same model after its retry hint (Limits.RetryWait when it gave
// none), when the hint is at most Limits.RetryWait; otherwise the
// failure is the answer. A refusal of the request itself (content
// policy, an invalid request) is not retried. At most Limits.MaxAttempts
// calls are made, within Limits.MaxDuration in all. Output that reached
// the caller is never retried: a stream that breaks after its first
// event fails the operation (PROVIDER_UNAVAILABLE, or the adapter's
// code). An answer the provider withheld by its content policy fails
// with CONTENT_POLICY_REJECTED and settles its usage. Errors answered to
// the caller carry the code and details.operationId, never a provider's
// status, request id or message.
//
// # Streaming
//
// A chat that asks for a stream passes its answer to an Emitter as it
// comes: Begin once the chosen model's first event arrived (so a call
// failing before it may still fall back, and its failure is an ordinary
// error answer), then each text or tool-call delta. The routes write
// them as server-sent events (operation, delta, then done or error). A
// caller that goes away cancels the provider call; its operation ends
// cancelled and settles as above.
//
// # Tool calls
//
// ToolRunner is the seam to the platform's tools, which live in their
// own package (ai/tool). A chat that asks for them (PlatformTools)
// offers the model the tools the runner declares for the caller beside
// any the request declares, and every call the model proposes of a
// runner tool is run with the caller's own principal and the operation
// id (RunTool), the result (a draft artifact for a mutating tool)
// returned with the call. They are offered on request only, so that a
// plain chat neither needs a model with the tools capability nor pays
// for the declarations' units. Calls of the request's own
// tools, and every call when no runner is configured, are returned to
// the caller as they came. The model is not called again within the
// operation: the caller sends the results back as tool messages on its
// next turn, a new operation with its own reservation.
package ai
