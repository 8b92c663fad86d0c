package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	genop "github.com/creatormusic/platform/generation/operation"
)

// GenerateRequest is the body of POST /api/v1/music/generate.
type GenerateRequest struct {
	// Prompt describes the music (1 to 5000 characters).
	Prompt string `json:"prompt" example:"An upbeat synth-pop track about city lights"`
	// Instrumental asks for music without vocals.
	Instrumental bool `json:"instrumental,omitempty" example:"false"`
	// Model is a platform model id (v3.5, v4, v4.5, v4.5-plus, v4.5-all,
	// v5); empty means v5. Each provider maps it to its own model.
	Model string `json:"model,omitempty" example:"v5"`
	// Duration is the wished length in seconds (0 to 480), forwarded only
	// where the selected provider and model support it; neither current
	// provider does, and the operation reports durationApplied false.
	Duration float64 `json:"duration,omitempty" example:"120"`
	// ProviderPolicy chooses the providers (scope providers:select).
	ProviderPolicy *ProviderPolicyInput `json:"providerPolicy,omitempty"`
}

// ProviderPolicyInput is a generate request's provider routing.
type ProviderPolicyInput struct {
	// Preferred is the provider route to try first; absent keeps the platform's routing order.
	Preferred string `json:"preferred,omitempty" example:"MUSIC_PROVIDER_A" enum:"MUSIC_PROVIDER_A,MUSIC_PROVIDER_B"`
	// Fallback are the provider routes to try, in order, after the preferred one refuses the
	// create.
	Fallback []string `json:"fallback,omitempty" example:"MUSIC_PROVIDER_B"`
}

// GenerationBilling is what a generation costs the customer, in platform
// credits (integer strings).
type GenerationBilling struct {
	// Mode is the billing mode: platform credits with the platform's provider credential, the
	// workspace's own key (BYOK), or its key with the platform's as fallback.
	Mode string `json:"mode" example:"PLATFORM_MANAGED" enum:"PLATFORM_MANAGED,BYOK,BYOK_WITH_PLATFORM_FALLBACK"`
	// CreditsReserved is the platform credits reserved at accept, an integer string; settled or
	// released when the operation ends.
	CreditsReserved string `json:"creditsReserved" example:"15"`
}

// GenerationAccepted is the answer of POST /api/v1/music/generate.
type GenerationAccepted struct {
	// OperationID is the operation's id; read its progress at GET
	// /api/v1/music/operations/{operationId}.
	OperationID string `json:"operationId" example:"op_01jd0000000000000000000000"`
	// Status is the operation's status at accept (queued).
	Status string `json:"status" example:"queued" enum:"queued,dispatched,processing,completed,failed,cancelled,expired"`
	// Billing is what the operation reserved.
	Billing GenerationBilling `json:"billing"`
}

// OperationBilling is an operation's credits: reserved at accept, then
// settled (what the delivered result cost) and released (the rest).
type OperationBilling struct {
	// Mode is the billing mode the operation was accepted with.
	Mode string `json:"mode" example:"PLATFORM_MANAGED" enum:"PLATFORM_MANAGED,BYOK,BYOK_WITH_PLATFORM_FALLBACK"`
	// CreditsReserved is the platform credits reserved at accept, an integer string.
	CreditsReserved string `json:"creditsReserved" example:"15"`
	// CreditsSettled is null until the operation completed.
	CreditsSettled *string `json:"creditsSettled" example:"15"`
	// CreditsReleased is null while the operation runs.
	CreditsReleased *string `json:"creditsReleased" example:"0"`
	// PricingPolicy is the pricing policy version that priced the operation.
	PricingPolicy PolicyRefView `json:"pricingPolicy"`
	// ProviderCost is each attempt's provider cost reconciliation, in the provider's own credits.
	ProviderCost []ProviderCost `json:"providerCost"`
}

// PolicyRefView names the policy version an outcome applied.
type PolicyRefView struct {
	// ID is the policy's id.
	ID string `json:"id" example:"pricing.generation"`
	// Version is the policy version's number.
	Version int `json:"version" example:"1"`
	// Hash is the lowercase hex SHA-256 of the version's canonical content.
	Hash string `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
}

// ProviderCost is one attempt's provider cost reconciliation: what the
// provider reported consuming, in the provider's own credits, never
// platform credits.
type ProviderCost struct {
	// AttemptNumber is the attempt the cost belongs to, from 1.
	AttemptNumber int `json:"attemptNumber" example:"1"`
	// Provider is the provider route of the attempt.
	Provider string `json:"provider" example:"MUSIC_PROVIDER_A"`
	// Status compares the actual cost with the expected: matched, under or
	// over (beyond the tolerated drift), or unknown (either figure is
	// unknown; nothing is compared).
	Status string `json:"status" example:"MATCHED" enum:"MATCHED,UNDER_EXPECTED,OVER_EXPECTED,UNKNOWN"`
	// Source is reported when the provider reported its charge, else none:
	// then ActualProviderCredits is null and Status UNKNOWN (a published
	// price is what was expected, never a reading of what was charged).
	Source string `json:"source" example:"reported" enum:"reported,none"`
	// ExpectedProviderCredits and ActualProviderCredits are null when
	// unknown.
	ExpectedProviderCredits *string `json:"expectedProviderCredits" example:"12"`
	// ActualProviderCredits is the provider credits the task consumed, an integer string; null when
	// unknown.
	ActualProviderCredits *string `json:"actualProviderCredits" example:"12"`
	// DriftBps is the actual cost's difference from the expected, in basis points of the expected
	// (0 when either is unknown).
	DriftBps int64 `json:"driftBps" example:"0"`
}

// AttemptView is one provider attempt. Provider task ids are correlation
// data and never returned.
type AttemptView struct {
	// Number is the attempt's number within the operation, from 1.
	Number int `json:"number" example:"1"`
	// Provider is the provider route the attempt created its task with.
	Provider string `json:"provider" example:"MUSIC_PROVIDER_A" enum:"MUSIC_PROVIDER_A,MUSIC_PROVIDER_B"`
	// Ownership is whose credential the attempt used: the platform's or the workspace's own key.
	Ownership string `json:"credentialOwnership" example:"PLATFORM_MANAGED" enum:"PLATFORM_MANAGED,CUSTOMER_BYOK"`
	// State is the attempt's state: sending (create in flight), accepted (the provider has the
	// task), ambiguous (the create's answer is unknown; the task may exist and is never created
	// again), transient (throttled or unavailable; retried) or refused (the next candidate is
	// tried).
	State string `json:"state" example:"accepted" enum:"sending,accepted,ambiguous,transient,refused"`
	// ErrorCode is the provider's refusal as a platform code, null when none.
	ErrorCode *string `json:"errorCode" example:"PROVIDER_UNAVAILABLE"`
	// CreatedAt is when the attempt was recorded, just before the provider create.
	CreatedAt time.Time `json:"createdAt"`
}

// OutputView is one of the operation's two outputs as known so far.
type OutputView struct {
	// Index is the output's slot, 0 or 1.
	Index int `json:"index" example:"0"`
	// Title is the track title the provider reported; empty until known.
	Title string `json:"title" example:"City Lights"`
	// Tags is the style tags the provider reported, comma-separated; empty until known.
	Tags string `json:"tags" example:"synth-pop, upbeat"`
	// DurationMs is null until the provider reports it.
	DurationMs *int64 `json:"durationMs" example:"182000"`
	// AssetID is the durable asset once ingested, else null.
	AssetID *string `json:"assetId" example:"ast_01jd0000000000000000000000"`
}

// FailureView is why an operation ended without a result.
type FailureView struct {
	// Code is the platform error code that ended the operation (a provider failure,
	// PROVIDER_TIMEOUT, ...).
	Code string `json:"code" example:"CONTENT_POLICY_REJECTED"`
}

// OperationView is a generation operation's state.
type OperationView struct {
	// ID is the operation's id.
	ID string `json:"id" example:"op_01jd0000000000000000000000"`
	// Object is always "generation_operation".
	Object string `json:"object" example:"generation_operation"`
	// Type is always "music_generation".
	Type string `json:"type" example:"music_generation"`
	// Status is the operation's status; completed, failed, cancelled and expired are terminal.
	Status string `json:"status" example:"processing" enum:"queued,dispatched,processing,completed,failed,cancelled,expired"`
	// Stage is queued, text, first, provider_complete, ingesting,
	// finished, or failed.
	Stage string `json:"stage" example:"first" enum:"queued,text,first,provider_complete,ingesting,finished,failed"`
	// Environment is the environment (test or live) the operation runs in.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Model is the platform model id requested.
	Model string `json:"model" example:"v5"`
	// Instrumental is true when music without vocals was requested.
	Instrumental bool `json:"instrumental" example:"false"`
	// DurationApplied is null before a provider was selected, false when
	// a requested duration was not forwarded.
	DurationApplied *bool `json:"durationApplied" example:"false"`
	// Billing is the operation's credits and provider costs.
	Billing OperationBilling `json:"billing"`
	// Attempts are the provider attempts, in order.
	Attempts []AttemptView `json:"attempts"`
	// Outputs are the operation's outputs as known so far.
	Outputs []OutputView `json:"outputs"`
	// Failure is why the operation failed or expired; null otherwise.
	Failure *FailureView `json:"failure"`
	// DeadlineAt is when a still-running operation expires and its credits are released.
	DeadlineAt time.Time `json:"deadlineAt"`
	// CreatedAt is when the operation was accepted.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the operation last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	// EndedAt is when the operation reached a terminal status; null while it runs.
	EndedAt *time.Time `json:"endedAt"`
}

// ResultTrack is one delivered track: a durable platform asset.
type ResultTrack struct {
	// Index is the track's slot, 0 or 1.
	Index int `json:"index" example:"0"`
	// AssetID is the track's durable asset.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// Title is the track's title, as the provider named it.
	Title string `json:"title" example:"City Lights"`
	// Tags is the track's style tags, comma-separated.
	Tags string `json:"tags" example:"synth-pop, upbeat"`
	// Model is the provider's model that made the track.
	Model string `json:"model" example:"chirp-v5"`
	// MediaType is the stored content's media type.
	MediaType string `json:"mediaType" example:"audio/mpeg"`
	// SizeBytes is the stored content's length in bytes.
	SizeBytes int64 `json:"sizeBytes" example:"2912000"`
	// SHA256 is the lowercase hex SHA-256 of the stored content.
	SHA256 string `json:"sha256" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// DurationMs is null when unknown.
	DurationMs *int64 `json:"durationMs" example:"182000"`
	// ContentURL downloads the bytes (GET, authenticated).
	ContentURL string `json:"contentUrl" example:"/api/v1/assets/ast_01jd0000000000000000000000/content"`
}

// GenerationResult is a completed operation's result.
type GenerationResult struct {
	// OperationID is the completed operation.
	OperationID string `json:"operationId" example:"op_01jd0000000000000000000000"`
	// Object is always "generation_result".
	Object string `json:"object" example:"generation_result"`
	// Tracks are the delivered tracks, by slot.
	Tracks []ResultTrack `json:"tracks"`
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func optItoa(n *int64) *string {
	if n == nil {
		return nil
	}
	s := itoa(*n)
	return &s
}

func operationView(v genop.View) OperationView {
	o := v.Operation
	s := o.Snapshot
	out := OperationView{ID: o.ID, Object: "generation_operation", Type: "music_generation", Status: string(s.Status),
		Stage: string(s.Stage), Environment: string(o.Scope.Environment), Model: o.Request.Model, Instrumental: o.Request.Instrumental,
		DurationApplied: o.DurationApplied, Attempts: []AttemptView{}, Outputs: []OutputView{},
		Billing: OperationBilling{Mode: string(o.BillingMode), CreditsReserved: itoa(o.CreditsReserved), CreditsSettled: optItoa(o.CreditsSettled),
			PricingPolicy: PolicyRefView{ID: o.Pricing.ID, Version: o.Pricing.Version, Hash: o.Pricing.Hash}, ProviderCost: []ProviderCost{}},
		DeadlineAt: o.DeadlineAt, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, EndedAt: o.EndedAt}
	if out.Stage == "" {
		out.Stage = string(generation.StageQueued)
	}
	if s.Status.Terminal() {
		settled := int64(0)
		if o.CreditsSettled != nil {
			settled = *o.CreditsSettled
		}
		out.Billing.CreditsReleased = optItoa(new(o.CreditsReserved - settled))
	}
	if s.Status == generation.StatusFailed || s.Status == generation.StatusExpired {
		code := s.FailureCode
		if code == "" {
			code = string(fault.ProviderTimeout)
		}
		out.Failure = &FailureView{Code: code}
	}
	numbers := map[string]int{}
	for _, a := range v.Attempts {
		numbers[a.ID] = a.Number
		av := AttemptView{Number: a.Number, Provider: string(a.Provider), Ownership: string(a.Ownership), State: string(a.State), CreatedAt: a.CreatedAt}
		if a.ErrorCode != "" {
			av.ErrorCode = new(a.ErrorCode)
		}
		out.Attempts = append(out.Attempts, av)
	}
	for _, c := range v.Costs {
		out.Billing.ProviderCost = append(out.Billing.ProviderCost, ProviderCost{AttemptNumber: numbers[c.AttemptID], Provider: string(c.Provider),
			Status: string(c.Status), Source: string(c.Source), ExpectedProviderCredits: optItoa(c.Expected),
			ActualProviderCredits: optItoa(c.Actual), DriftBps: c.DriftBps})
	}
	for i, t := range s.Outputs {
		ov := OutputView{Index: i, Title: t.Title, Tags: t.Tags}
		if t.DurationMs > 0 {
			ov.DurationMs = new(t.DurationMs)
		}
		if t.AssetID != "" {
			ov.AssetID = new(t.AssetID)
		}
		out.Outputs = append(out.Outputs, ov)
	}
	return out
}

func exampleOperation() OperationView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := false
	return OperationView{ID: "op_01jd0000000000000000000000", Object: "generation_operation", Type: "music_generation", Status: "processing",
		Stage: "first", Environment: "test", Model: "v5", DurationApplied: &f,
		Billing: OperationBilling{Mode: "PLATFORM_MANAGED", CreditsReserved: "15",
			PricingPolicy: PolicyRefView{ID: genop.PricingPolicyID, Version: 1, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
			ProviderCost:  []ProviderCost{}},
		Attempts:   []AttemptView{{Number: 1, Provider: "MUSIC_PROVIDER_A", Ownership: "PLATFORM_MANAGED", State: "accepted", CreatedAt: t}},
		Outputs:    []OutputView{{Index: 0, Title: "City Lights", Tags: "synth-pop"}, {Index: 1, Title: "City Lights", Tags: "synth-pop"}},
		DeadlineAt: t.Add(30 * time.Minute), CreatedAt: t, UpdatedAt: t}
}

// generationRoutes are the music generation routes (spec, Music generation
// and operations) and the internal callback receiver. Generating needs
// track.generate (scope music:generate); reading and cancelling an
// operation need the same, so the key that started an operation can
// follow it. Choosing providers needs providers:select.
func generationRoutes(svc *genop.Service, wake func(), log *slog.Logger) []Route {
	if svc == nil {
		return nil
	}
	if wake == nil {
		wake = func() {}
	}
	gen := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagMusicGeneration, transport.AuthSessionOrKey, true
		r.Permission, r.Scope = access.TrackGenerate, access.ScopeMusicGenerate
		return r
	}
	return []Route{
		gen(Route{Method: http.MethodPost, Pattern: "/api/v1/music/generate", OperationID: "generateMusic", Status: http.StatusAccepted,
			Idempotency: transport.IdempotencyRequired, OwnUnitOfWork: true, LateReplay: true,
			Summary: "Generate music",
			Description: "Accepts a generation as a durable operation and answers 202 with its id, status queued and the credits reserved: " +
				"the model's price under the pricing.generation policy of the caller's environment (the BYOK fee when only the workspace's own " +
				"provider key can serve it). A newly published pricing version applies to requests accepted from at most one second after it is " +
				"published (each host keeps the current version that long; an operator may set another interval); the operation's " +
				"pricingPolicy names the version that priced it. " +
				"The provider is called by a durable job after the commit; follow the operation with GET " +
				"/api/v1/operations/{operationId}. Billing mode: BYOK_WITH_PLATFORM_FALLBACK when the routes offer both a healthy workspace key and " +
				"a platform credential (the customer key is tried first; the full price is reserved and the BYOK fee settled when the customer key " +
				"delivers), BYOK or PLATFORM_MANAGED when they offer one. providerPolicy (preferred, fallback) needs the providers:select scope, " +
				"else 403 ACCESS_DENIED; a named provider that is not configured is 503 PROVIDER_UNAVAILABLE. Credits that do not cover the " +
				"reservation are 422 INSUFFICIENT_CREDITS. The same Idempotency-Key with the same body returns the same operation; with another " +
				"body 409 IDEMPOTENCY_CONFLICT.",
			Policy: Policy{Feature: genop.FeatureGenerate, ScopesFunc: providerScopes,
				Note: "A request that names providerPolicy also needs the `providers:select` scope (a session: the permissions it stands for)."},
			Request: GenerateRequest{Prompt: "An upbeat synth-pop track about city lights", Model: "v5"},
			Response: GenerationAccepted{OperationID: "op_01jd0000000000000000000000", Status: "queued",
				Billing: GenerationBilling{Mode: "PLATFORM_MANAGED", CreditsReserved: "15"}},
			Errors: []string{string(fault.InsufficientCredits), string(fault.ProviderUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in GenerateRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := genop.Request{Prompt: in.Prompt, Instrumental: in.Instrumental, Model: in.Model, Duration: in.Duration}
				if pp := in.ProviderPolicy; pp != nil {
					req.ProviderPolicy = &genop.ProviderPolicy{Preferred: generation.ProviderID(pp.Preferred)}
					for _, f := range pp.Fallback {
						req.ProviderPolicy.Fallback = append(req.ProviderPolicy.Fallback, generation.ProviderID(f))
					}
				}
				plan, err := svc.Prepare(ctx, c.Tx, c.Principal, req)
				if err != nil {
					return nil, err
				}
				done, err := svc.Admit(ctx, c.Principal, plan)
				if err != nil {
					return nil, err
				}
				defer done()
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					o, err := svc.Accept(ctx, tx, c.Principal, plan)
					if err != nil {
						return nil, err
					}
					tx.AfterCommit(wake)
					return GenerationAccepted{OperationID: o.ID, Status: string(o.Status()),
						Billing: GenerationBilling{Mode: string(o.BillingMode), CreditsReserved: itoa(o.CreditsReserved)}}, nil
				})
			}}),
		gen(Route{Method: http.MethodGet, Pattern: "/api/v1/operations/{operationId}", OperationID: "getOperation",
			Idempotency: transport.IdempotencyNone, Summary: "Get a generation operation",
			Description: "The operation's status and stage (queued, text, first, provider_complete, ingesting, finished; failed), its provider " +
				"attempts (provider, credential ownership, state; never the provider's task id), its outputs as known so far, the credits " +
				"reserved, settled and released, and the provider cost reconciliation. Another workspace's or environment's operation is 404.",
			Response: exampleOperation(), Errors: []string{string(fault.NotFound)}, Policy: operationPolicy(svc),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				v, err := svc.Get(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
				if err != nil {
					return nil, err
				}
				return operationView(v), nil
			}}),
		gen(Route{Method: http.MethodGet, Pattern: "/api/v1/operations/{operationId}/result", OperationID: "getOperationResult",
			Idempotency: transport.IdempotencyNone, Summary: "Get a generation result",
			Description: "The two delivered tracks of a completed operation, each a durable platform asset (download with GET " +
				"/api/v1/assets/{assetId}/content); never a provider URL. Before completion 409 RESULT_NOT_READY with details.status; an " +
				"operation that ended without a result answers the same code with its status and details.failureCode.",
			Response: GenerationResult{OperationID: "op_01jd0000000000000000000000", Object: "generation_result", Tracks: []ResultTrack{}},
			Errors:   []string{string(fault.NotFound), string(fault.ResultNotReady)}, Policy: operationPolicy(svc),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, tracks, err := svc.Result(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
				if err != nil {
					return nil, err
				}
				out := GenerationResult{OperationID: o.ID, Object: "generation_result", Tracks: make([]ResultTrack, len(tracks))}
				for i, t := range tracks {
					out.Tracks[i] = ResultTrack{Index: t.Index, AssetID: t.Asset.ID, Title: t.Output.Title, Tags: t.Output.Tags, Model: t.Output.Model,
						MediaType: t.Asset.MediaType, SizeBytes: t.Asset.Size, SHA256: t.Asset.SHA256, DurationMs: t.Asset.DurationMs,
						ContentURL: "/api/v1/assets/" + t.Asset.ID + "/content"}
				}
				return out, nil
			}}),
		gen(Route{Method: http.MethodPost, Pattern: "/api/v1/operations/{operationId}/cancel", OperationID: "cancelOperation",
			Idempotency: transport.IdempotencyOptional, Summary: "Cancel a generation operation",
			Description: "Idempotent: a queued, dispatched or processing operation becomes cancelled and its reserved credits are released " +
				"once; cancelling a cancelled, failed or expired operation returns it unchanged. Work already done at the provider is not undone, " +
				"and nothing it delivers afterwards becomes an asset (its cost is still reconciled). A completed operation, or one whose " +
				"delivery has begun (a track is already stored), is 409 INVALID_STATE_TRANSITION: a cancelled operation never holds an asset.",
			Response: exampleOperation(), Errors: []string{string(fault.NotFound), string(fault.InvalidState)},
			Policy: func() Policy {
				pol := operationPolicy(svc)
				pol.TransitionFunc = func(ctx context.Context, c *Call) error {
					return svc.CheckCancel(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
				}
				return pol
			}(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				if _, err := svc.Cancel(ctx, c.Tx, c.Principal, c.PathValue("operationId")); err != nil {
					return nil, err
				}
				v, err := svc.Get(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
				if err != nil {
					return nil, err
				}
				return operationView(v), nil
			}}),
		{Method: http.MethodPost, Pattern: "/internal/providers/{provider}/callbacks/{attemptToken}", OperationID: "receiveProviderCallback",
			Tag: transport.TagMusicGeneration, Summary: "Receive a music provider callback", Internal: true, Auth: transport.AuthPublic,
			Description: "Verifies the callback as its provider signs it (400 CALLBACK_FAILED otherwise, nothing stored), stores it " +
				"once and answers 200 {received, duplicate} at once. A MUSIC_PROVIDER_B callback signs its body and is merged as " +
				"delivered. A MUSIC_PROVIDER_A callback signs only task id and timestamp, so it is a notification: it is stored once " +
				"per task and claimed stage and queues one query of A's authenticated record, whose stage, tracks and URLs are " +
				"merged; the callback body's URLs are never fetched.",
			Raw: callbackReceiver(svc, wake, log)},
	}
}

// providerScopes is the generate route's ScopesFunc: a request that names
// a providerPolicy needs providers:select (spec, Authentication 8). It
// reads the body leniently; the handler's strict decoding reports a bad
// one.
func providerScopes(c *Call) []string {
	var in struct {
		ProviderPolicy json.RawMessage `json:"providerPolicy"`
	}
	if json.Unmarshal(c.Body(), &in) != nil || len(in.ProviderPolicy) == 0 || string(in.ProviderPolicy) == "null" {
		return nil
	}
	return []string{access.ScopeProvidersSelect}
}

// operationPolicy is the policy of the routes that address one operation:
// the caller's track.generate grant must reach it (own for CREATOR and
// MEMBER, workspace for OWNER and ADMIN).
func operationPolicy(svc *genop.Service) Policy {
	return Policy{ResourceFunc: func(ctx context.Context, c *Call) (*access.Resource, error) {
		return svc.Resource(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
	}}
}

// callbackBodyLimit bounds a provider callback.
const callbackBodyLimit = 1 << 20

// callbackReceiver verifies a provider callback's raw body with the
// attempt's adapter, stores it once and merges it (or, for a provider that
// signs only the task id, queues its confirmation through the record
// query: operation.Service.Callback), then answers 200 at once:
// {received, duplicate}. An unknown token is 404; a bad or stale
// signature 400 CALLBACK_FAILED with nothing stored.
func callbackReceiver(svc *genop.Service, wake func(), log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqID := transport.RequestID(r)
		w.Header().Set("X-Request-Id", reqID)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, callbackBodyLimit))
		if err != nil {
			transport.WriteError(w, log, reqID, transport.TooLarge("transport.callback", callbackBodyLimit))
			return
		}
		got, err := svc.Callback(r.Context(), generation.ProviderID(r.PathValue("provider")), r.PathValue("attemptToken"),
			generation.Callback{Header: r.Header, Body: body})
		if err != nil {
			transport.WriteError(w, log, reqID, err)
			return
		}
		wake()
		transport.WriteData(w, http.StatusOK, reqID, struct {
			Received  bool `json:"received"`
			Duplicate bool `json:"duplicate"`
		}{true, got.Duplicate})
	})
}
