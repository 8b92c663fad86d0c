package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/web3/x402"
)

// X402ResourceView is one resource bought per use.
type X402ResourceView struct {
	// ID names the resource in the requirements route.
	ID string `json:"id" example:"sound-analysis"`
	// Kind is what one use is: sound_analysis is one analysis by the sound engine.
	Kind string `json:"kind" example:"sound_analysis" enum:"sound_analysis"`
	// Description says what is bought.
	Description string `json:"description" example:"One analysis of an audio asset by the sound engine."`
	// AmountAtomic is the exact price in atomic units of the asset, an integer string.
	AmountAtomic string `json:"amountAtomic" example:"250000"`
	// Asset is the mint the price is paid in (base58).
	Asset string `json:"asset" example:"Mint111111111111111111111111111111111111111"`
	// Decimals are the asset's decimals.
	Decimals int `json:"decimals" example:"6"`
	// PayTo is the wallet whose associated token account receives the payment (base58).
	PayTo string `json:"payTo" example:"Treasury11111111111111111111111111111111111"`
	// URL is the resource's requirements route, which answers 402 with PAYMENT-REQUIRED.
	URL string `json:"url" example:"https://platform.example/api/v1/x402/requirements/sound-analysis"`
}

// X402ResourcesView is GET /api/v1/x402/resources.
type X402ResourcesView struct {
	// Environment is the environment (test or live) the answer is for.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Scheme is the payment scheme, always exact.
	Scheme string `json:"scheme" example:"exact" enum:"exact"`
	// Network is the CAIP-2 id of the environment's cluster as the newest check read it; null before any.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Configured is true when the environment has a facilitator, a cluster and resources.
	Configured bool `json:"configured" example:"true"`
	// Verified is true when the newest check of the configuration passed; only then are payments taken.
	Verified bool `json:"verified" example:"true"`
	// Facilitator is local (the platform's own, over the environment's cluster) or the remote facilitator's URL; null when
	// not configured.
	Facilitator *string `json:"facilitator" example:"local"`
	// Reason says why it is not configured or not verified; null when it is both.
	Reason *string `json:"reason" example:"not_checked"`
	// Resources are the resources on offer; empty when not configured.
	Resources []X402ResourceView `json:"resources"`
}

// X402ResourceInfoView describes the resource a payment buys (ResourceInfo).
type X402ResourceInfoView struct {
	// URL is the resource's address.
	URL string `json:"url" example:"https://platform.example/api/v1/x402/requirements/sound-analysis"`
	// Description says what it is.
	Description string `json:"description,omitempty" example:"One analysis of an audio asset by the sound engine."`
	// MimeType is the media type of what it answers.
	MimeType string `json:"mimeType,omitempty" example:"application/json"`
}

// X402ExtraView is the exact scheme's extra on Solana.
type X402ExtraView struct {
	// FeePayer is the facilitator's fee payer: the transaction's first key, whose signature slot stays empty.
	FeePayer string `json:"feePayer" example:"FeePayer1111111111111111111111111111111111"`
	// Memo is the text the transaction's one Memo instruction must carry; absent for an anonymous caller.
	Memo string `json:"memo,omitempty" example:"x402:sound-analysis:0f1e2d3c4b5a6978:00112233445566778899aabbccddeeff"`
}

// X402RequirementsView is one way to pay (PaymentRequirements).
type X402RequirementsView struct {
	// Scheme is exact.
	Scheme string `json:"scheme" example:"exact"`
	// Network is the cluster's CAIP-2 id.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Amount is the exact atomic amount, an integer string.
	Amount string `json:"amount" example:"250000"`
	// Asset is the mint (base58).
	Asset string `json:"asset" example:"Mint111111111111111111111111111111111111111"`
	// PayTo is the wallet whose associated token account of the asset receives the amount (base58).
	PayTo string `json:"payTo" example:"Treasury11111111111111111111111111111111111"`
	// MaxTimeoutSeconds bounds how long the payment may take.
	MaxTimeoutSeconds int `json:"maxTimeoutSeconds" example:"60"`
	// Extra holds the fee payer and the memo.
	Extra X402ExtraView `json:"extra"`
}

// X402GrantView is the one use a settled payment bought.
type X402GrantView struct {
	// ID is the grant's id; POST /api/v1/sound/analyze spends it as x402GrantId.
	ID string `json:"id" example:"x4g_0123456789abcdef0123456789abcdef"`
	// ResourceID is the resource it is a use of.
	ResourceID string `json:"resourceId" example:"sound-analysis"`
	// Kind is what the use is.
	Kind string `json:"kind" example:"sound_analysis" enum:"sound_analysis"`
	// State is AVAILABLE until the use is spent, then CONSUMED.
	State string `json:"state" example:"AVAILABLE" enum:"AVAILABLE,CONSUMED"`
	// SettlementID is the payment that bought it.
	SettlementID string `json:"settlementId" example:"x4s_0123456789abcdef0123456789abcdef"`
	// UsedBy names what spent it (sound_operation:<id>); null while available.
	UsedBy *string `json:"usedBy" example:"sound_operation:snd_01jd0000000000000000000000"`
	// CreatedAt is when the payment settled.
	CreatedAt time.Time `json:"createdAt"`
	// ConsumedAt is when the use was spent; null while available.
	ConsumedAt *time.Time `json:"consumedAt"`
}

// X402PaymentRequiredView is GET /api/v1/x402/requirements/{resourceId}:
// the PaymentRequired object PAYMENT-REQUIRED carries, with the caller's
// grant.
type X402PaymentRequiredView struct {
	// X402Version is the protocol version, 2.
	X402Version int `json:"x402Version" example:"2"`
	// Error says why payment is required.
	Error string `json:"error" example:"payment required"`
	// Resource is what is bought.
	Resource X402ResourceInfoView `json:"resource"`
	// Accepts are the ways to pay; the signed-in caller's carry a memo bound to its workspace.
	Accepts []X402RequirementsView `json:"accepts"`
	// ResourceID is the resource's id.
	ResourceID string `json:"resourceId" example:"sound-analysis"`
	// Grant is the caller's oldest grant of the resource not spent yet; null when none (the answer is then 402).
	Grant *X402GrantView `json:"grant"`
}

// X402SVMPayloadView is the exact scheme's payload on Solana.
type X402SVMPayloadView struct {
	// Transaction is base64 of the partially signed wire transaction, the fee payer's signature slot empty.
	Transaction string `json:"transaction" example:"AgAAAA=="`
}

// X402PaymentPayloadView is a payment (PaymentPayload), as PAYMENT-SIGNATURE carries it.
type X402PaymentPayloadView struct {
	// X402Version is the protocol version, 2.
	X402Version int `json:"x402Version" example:"2"`
	// Resource is the resource paid for, as it was offered.
	Resource *X402ResourceInfoView `json:"resource,omitempty"`
	// Accepted is the requirement the payment meets.
	Accepted X402RequirementsView `json:"accepted"`
	// Payload is the scheme's payload.
	Payload X402SVMPayloadView `json:"payload"`
	// Extensions are the protocol's extensions, echoed as offered.
	Extensions map[string]any `json:"extensions,omitempty" doc:"The protocol's extensions, echoed as offered; the platform offers none."`
}

// X402PaymentRequest is the body of POST /api/v1/x402/verify and
// /settle, the fallback of the PAYMENT-SIGNATURE header.
type X402PaymentRequest struct {
	// PaymentPayload is the payment, when the PAYMENT-SIGNATURE header does not carry it (the header wins).
	PaymentPayload *X402PaymentPayloadView `json:"paymentPayload,omitempty"`
}

// X402VerifyView is POST /api/v1/x402/verify (VerifyResponse).
type X402VerifyView struct {
	// IsValid is true when every rule passed; nothing was settled either way.
	IsValid bool `json:"isValid" example:"false"`
	// InvalidReason names the first rule the payment breaks.
	InvalidReason string `json:"invalidReason,omitempty" example:"invalid_exact_solana_payload_amount_mismatch"`
	// InvalidMessage says what was found, for people.
	InvalidMessage string `json:"invalidMessage,omitempty" example:"the transfer moves 1, not exactly 250000"`
	// Payer is the paying wallet (the transfer's authority), when the transaction could be read.
	Payer string `json:"payer,omitempty" example:"Payer11111111111111111111111111111111111111"`
	// ResourceID is the resource the payment's memo names, when it names one of the caller's.
	ResourceID string `json:"resourceId,omitempty" example:"sound-analysis"`
}

// X402SettleView is POST /api/v1/x402/settle: the SettleResponse that
// PAYMENT-RESPONSE carries, with the settlement and its grant.
type X402SettleView struct {
	// Success is true only for a payment the chain confirmed.
	Success bool `json:"success" example:"true"`
	// ErrorReason names why it failed (duplicate_settlement for a transaction another request claimed).
	ErrorReason string `json:"errorReason,omitempty" example:"invalid_exact_solana_transaction_failed"`
	// ErrorMessage says more, for people.
	ErrorMessage string `json:"errorMessage,omitempty" example:"the chain refused or failed the transaction"`
	// Payer is the paying wallet.
	Payer string `json:"payer,omitempty" example:"Payer11111111111111111111111111111111111111"`
	// Transaction is the transaction's signature (base58); empty on failure.
	Transaction string `json:"transaction" example:"5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv"`
	// Network is the cluster's CAIP-2 id.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Amount is the atomic amount paid, on success.
	Amount string `json:"amount,omitempty" example:"250000"`
	// ResourceID is the resource paid for.
	ResourceID string `json:"resourceId,omitempty" example:"sound-analysis"`
	// SettlementID is the settlement the payment was claimed as; null when it was refused before any claim.
	SettlementID *string `json:"settlementId" example:"x4s_0123456789abcdef0123456789abcdef"`
	// State is the settlement's state; null without a settlement.
	State *string `json:"state" example:"SETTLED" enum:"SUBMITTING,SETTLED,FAILED,REQUIRES_REVIEW"`
	// Grant is the use the payment bought; null unless it settled.
	Grant *X402GrantView `json:"grant"`
}

// x402GrantView renders a grant.
func x402GrantView(g *x402.Grant) *X402GrantView {
	if g == nil {
		return nil
	}
	return &X402GrantView{ID: g.ID, ResourceID: g.ResourceID, Kind: string(g.Kind), State: string(g.State), SettlementID: g.SettlementID,
		UsedBy: optional(g.UsedBy), CreatedAt: g.CreatedAt, ConsumedAt: g.ConsumedAt}
}

// x402RequirementsView renders requirements.
func x402RequirementsView(r x402.Requirements) X402RequirementsView {
	return X402RequirementsView{Scheme: r.Scheme, Network: r.Network, Amount: r.Amount, Asset: r.Asset, PayTo: r.PayTo,
		MaxTimeoutSeconds: r.MaxTimeoutSeconds, Extra: X402ExtraView{FeePayer: r.Extra.FeePayer, Memo: r.Extra.Memo}}
}

// x402Payload reads a request's payment: the PAYMENT-SIGNATURE header
// (standard base64 of the JSON) or, without it, the body's
// paymentPayload. INVALID_INPUT naming the header or the field when
// neither is there or the header cannot be read.
func x402Payload(c *Call) (x402.PaymentPayload, error) {
	const op = "api.x402Payload"
	if h := c.Request.Header.Get(x402.HeaderSignature); h != "" {
		var p x402.PaymentPayload
		if err := x402.DecodeHeader(h, &p); err != nil {
			return x402.PaymentPayload{}, fault.Invalid(op, x402.HeaderSignature, "PAYMENT-SIGNATURE is not standard base64 of a payment's JSON.")
		}
		return p, nil
	}
	if len(c.Body()) == 0 {
		return x402.PaymentPayload{}, fault.Invalid(op, x402.HeaderSignature, "The payment goes in PAYMENT-SIGNATURE, or in the body's paymentPayload.")
	}
	var in X402PaymentRequest
	if err := c.Decode(&in); err != nil {
		return x402.PaymentPayload{}, err
	}
	if in.PaymentPayload == nil {
		return x402.PaymentPayload{}, fault.Invalid(op, "paymentPayload", "The payment goes in PAYMENT-SIGNATURE, or in the body's paymentPayload.")
	}
	v := in.PaymentPayload
	payload, _ := json.Marshal(x402.SVMPayload{Transaction: v.Payload.Transaction}) // a struct of one string
	p := x402.PaymentPayload{X402Version: v.X402Version, Payload: payload, Accepted: x402.Requirements{Scheme: v.Accepted.Scheme,
		Network: v.Accepted.Network, Amount: v.Accepted.Amount, Asset: v.Accepted.Asset, PayTo: v.Accepted.PayTo,
		MaxTimeoutSeconds: v.Accepted.MaxTimeoutSeconds, Extra: x402.Extra{FeePayer: v.Accepted.Extra.FeePayer, Memo: v.Accepted.Extra.Memo}}}
	if v.Resource != nil {
		p.Resource = &x402.ResourceInfo{URL: v.Resource.URL, Description: v.Resource.Description, MimeType: v.Resource.MimeType}
	}
	if v.Extensions != nil {
		p.Extensions, _ = json.Marshal(v.Extensions) // decoded from JSON, so it encodes
	}
	return p, nil
}

// x402Headers documents PAYMENT-SIGNATURE as the routes read it.
func x402Headers() []transport.Param {
	return []transport.Param{{Name: x402.HeaderSignature, Example: "eyJ4NDAyVmVyc2lvbiI6Mn0=",
		Description: "The payment (PaymentPayload) as standard, padded base64 of its JSON. Without it the body's paymentPayload is read."}}
}

// x402Note ends the description of every route of the protocol: what is
// sold and how a grant is spent.
const x402Note = " Decision: a resource sells one use of a kind; the one kind is sound_analysis, one analysis by the sound engine. " +
	"A settled payment records one grant for the caller's workspace and environment, spent by POST /api/v1/sound/analyze " +
	"naming it as x402GrantId; a grant is not a plan entitlement and never replaces one. Payments are x402 version 2, scheme " +
	"exact on Solana, networks as CAIP-2; nothing is offered until the environment's facilitator check passed (503 " +
	"SERVICE_UNAVAILABLE while not configured, PROVIDER_UNAVAILABLE while not verified)."

// x402Routes are the payment-required protocol's routes: its resources,
// a resource's requirements (402 with PAYMENT-REQUIRED), and the
// verification and settlement of a payment (PAYMENT-SIGNATURE in,
// PAYMENT-RESPONSE out). Buying needs track.generate (scope sound:write),
// as the analysis it buys does.
func x402Routes(svc *x402.Service) []Route {
	if svc == nil {
		return nil
	}
	ex := x402.Resource{ID: "sound-analysis", Kind: x402.KindSoundAnalysis, Description: "One analysis of an audio asset by the sound engine."}
	exReq := X402RequirementsView{Scheme: x402.SchemeExact, Network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", Amount: "250000",
		Asset: "Mint111111111111111111111111111111111111111", PayTo: "Treasury11111111111111111111111111111111111", MaxTimeoutSeconds: 60,
		Extra: X402ExtraView{FeePayer: "FeePayer1111111111111111111111111111111111"}}
	buy := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagWeb3, transport.AuthSessionOrKey, true
		r.Permission, r.Scope, r.Policy = access.TrackGenerate, access.ScopeSoundWrite, Policy{Feature: x402.FeaturePayments}
		r.OwnUnitOfWork, r.Headers = true, x402Headers()
		r.Request = X402PaymentRequest{PaymentPayload: &X402PaymentPayloadView{X402Version: x402.Version, Accepted: exReq,
			Payload: X402SVMPayloadView{Transaction: "AgAAAA=="}}}
		return r
	}
	paymentResponse := "The settlement's outcome (SettleResponse) as standard, padded base64 of its JSON: the data's x402 fields."
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/x402/resources", OperationID: "listX402Resources", Tag: transport.TagWeb3,
			Summary: "List the resources bought per use",
			Description: "The caller's environment's resources, each with its exact price in atomic units of the asset, payTo and its " +
				"requirements route, and the protocol's state there: configured, verified by the newest check (network, the " +
				"facilitator's fee payer, the mint and its decimals, payTo's token account, the fee payer's funding), and why not." +
				x402Note + tokenEnvNote,
			Auth: transport.AuthPublic, OptionalAuth: true,
			Response: X402ResourcesView{Environment: "test", Scheme: x402.SchemeExact, Resources: []X402ResourceView{}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				env := callerEnvironment(c)
				offers, cp, err := svc.Offers(ctx, c.Tx, env)
				if err != nil {
					return nil, err
				}
				v := X402ResourcesView{Environment: string(env), Scheme: x402.SchemeExact, Network: optional(cp.Network),
					Configured: cp.Configured, Verified: cp.Verified, Facilitator: optional(cp.Facilitator), Reason: optional(cp.Reason),
					Resources: []X402ResourceView{}}
				for _, o := range offers {
					v.Resources = append(v.Resources, X402ResourceView{ID: o.Resource.ID, Kind: string(o.Resource.Kind),
						Description: o.Resource.Description, AmountAtomic: o.Resource.Amount.String(), Asset: o.Asset,
						Decimals: int(o.Decimals), PayTo: o.PayTo, URL: o.URL})
				}
				return v, nil
			}},
		{Method: http.MethodGet, Pattern: "/api/v1/x402/requirements/{resourceId}", OperationID: "getX402Requirements", Tag: transport.TagWeb3,
			Summary: "Get a resource's payment requirements",
			Description: "Answers 402 Payment Required with PAYMENT-REQUIRED, standard base64 of the PaymentRequired JSON (x402Version 2, " +
				"the resource, and one requirement: scheme exact, the cluster's CAIP-2 network, the exact atomic amount, the asset, " +
				"payTo, maxTimeoutSeconds, extra.feePayer); the body's data is the same object. A signed-in caller's requirement " +
				"also names extra.memo, a fresh memo bound to its workspace, environment and the resource: the payment's one Memo " +
				"instruction must carry it, and a payment without it (an anonymous caller's) cannot be settled. A caller whose " +
				"workspace holds a grant of the resource not spent yet gets 200 with the same object and that grant. An unknown " +
				"resource is 404." + x402Note + tokenEnvNote,
			Auth: transport.AuthPublic, OptionalAuth: true,
			Outcomes: []transport.Outcome{{Status: http.StatusPaymentRequired,
				Text:    "Payment Required: the requirements, with no grant to spend; PAYMENT-REQUIRED carries them.",
				Headers: map[string]string{x402.HeaderRequired: "The PaymentRequired object as standard, padded base64 of its JSON."}}},
			Response: X402PaymentRequiredView{X402Version: x402.Version, Error: "payment required",
				Resource: X402ResourceInfoView{URL: "https://platform.example/api/v1/x402/requirements/sound-analysis", Description: ex.Description,
					MimeType: "application/json"}, Accepts: []X402RequirementsView{exReq}, ResourceID: ex.ID},
			Errors: []string{string(fault.ServiceUnavailable), string(fault.ProviderUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, err := svc.Requirements(ctx, c.Tx, c.Principal, callerEnvironment(c), c.PathValue("resourceId"))
				if err != nil {
					return nil, err
				}
				v := X402PaymentRequiredView{X402Version: o.Required.X402Version, Error: o.Required.Error,
					Resource: X402ResourceInfoView{URL: o.Required.Resource.URL, Description: o.Required.Resource.Description,
						MimeType: o.Required.Resource.MimeType}, ResourceID: o.Resource.ID, Grant: x402GrantView(o.Grant)}
				for _, r := range o.Required.Accepts {
					v.Accepts = append(v.Accepts, x402RequirementsView(r))
				}
				if o.Grant == nil {
					h, err := x402.EncodeHeader(o.Required)
					if err != nil {
						return nil, fault.Wrap("api.getX402Requirements", err)
					}
					c.Header().Set(x402.HeaderRequired, h)
					c.SetStatus(http.StatusPaymentRequired)
				}
				return v, nil
			}},
		buy(Route{Method: http.MethodPost, Pattern: "/api/v1/x402/verify", OperationID: "verifyX402Payment",
			Summary: "Verify a payment without settling it",
			Description: "Reads the payment from PAYMENT-SIGNATURE (standard base64 of the PaymentPayload JSON; a header that cannot " +
				"be read is 400 INVALID_INPUT naming it) or, without it, from the body's paymentPayload, and answers 200 with the " +
				"verdict (VerifyResponse). It must meet one of the caller's offers (x402Version 2, scheme exact, the network, a memo " +
				"issued to the caller's workspace, and the accepted amount, asset, payTo and fee payer), then every facilitator rule " +
				"for Solana: no lookup tables; the fee payer first with its signature slot empty; three to six instructions: " +
				"SetComputeUnitLimit, SetComputeUnitPrice at most 5 lamports per unit, a TransferChecked of the SPL Token or " +
				"Token-2022 program, then only Lighthouse or Memo instructions; the fee payer in no instruction (neither authority " +
				"nor source); the mint, payTo's associated token account as destination, exactly the amount; exactly one memo " +
				"equal to extra.memo; only the fee payer and the authority sign, and the authority's signature verifies; the mint " +
				"owned by the transfer's program with its decimals, the source the authority's account holding the amount, the " +
				"destination existing, the blockhash still valid. invalidReason names the first rule broken. Nothing is written." +
				x402Note,
			Response: X402VerifyView{IsValid: true, Payer: "Payer11111111111111111111111111111111111111", ResourceID: ex.ID},
			Errors:   []string{string(fault.ServiceUnavailable), string(fault.ProviderUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, err := x402Payload(c)
				if err != nil {
					return nil, err
				}
				v, err := svc.Verify(ctx, c.Tx, c.Principal, p)
				if err != nil {
					return nil, err
				}
				r := v.Response
				out := X402VerifyView{IsValid: r.IsValid, InvalidReason: r.InvalidReason, InvalidMessage: r.InvalidMessage, Payer: r.Payer,
					ResourceID: v.ResourceID}
				return out, c.Commit(ctx, func(Tx) error { return nil })
			}}),
		buy(Route{Method: http.MethodPost, Pattern: "/api/v1/x402/settle", OperationID: "settleX402Payment",
			Summary: "Settle a payment",
			Description: "Reads the payment as verify does, verifies it, claims its transaction, co-signs it as fee payer, submits it " +
				"and waits until the cluster confirms it; answers PAYMENT-RESPONSE (standard base64 of the SettleResponse JSON) on " +
				"success (200, with the grant of one use) and on failure (402, success false: the payment breaks a rule, the chain " +
				"failed it, or its blockhash lapsed before it landed; nothing is granted). Idempotency-Key is required and scoped to " +
				"the workspace and environment: the same key and payment replay the recorded outcome with its PAYMENT-RESPONSE; " +
				"the same key with another payment is 409 IDEMPOTENCY_CONFLICT. A transaction another request claimed is refused " +
				"402 with errorReason duplicate_settlement and grants nothing. When the outcome is not known in time the answer is " +
				"502 SUBMISSION_UNCERTAIN: the platform follows the transaction and records the outcome, and a retry with the same " +
				"key answers it. A success counts only once the platform's own cluster shows the transaction confirmed." + x402Note,
			Idempotency:     transport.IdempotencyRequired,
			ResponseHeaders: map[string]string{x402.HeaderResponse: paymentResponse},
			Outcomes: []transport.Outcome{{Status: http.StatusPaymentRequired,
				Text:    "Payment Required: the payment failed (success false, errorReason); PAYMENT-RESPONSE carries the outcome.",
				Headers: map[string]string{x402.HeaderResponse: paymentResponse}}},
			Response: X402SettleView{Success: true, Payer: "Payer11111111111111111111111111111111111111",
				Transaction: "5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv",
				Network:     exReq.Network, Amount: "250000", ResourceID: ex.ID},
			Errors: []string{string(fault.ServiceUnavailable), string(fault.ProviderUnavailable), string(fault.SubmissionUncertain)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, err := x402Payload(c)
				if err != nil {
					return nil, err
				}
				res, err := svc.Settle(ctx, c.Tx, c.Principal, x402.SettleInput{Key: c.Request.Header.Get("Idempotency-Key"), Payload: p})
				if err != nil {
					return nil, err
				}
				h, err := x402.EncodeHeader(res.Response)
				if err != nil {
					return nil, fault.Wrap("api.settleX402Payment", err)
				}
				r := res.Response
				v := X402SettleView{Success: r.Success, ErrorReason: r.ErrorReason, ErrorMessage: r.ErrorMessage, Payer: r.Payer,
					Transaction: r.Transaction, Network: r.Network, Amount: r.Amount, ResourceID: res.ResourceID, Grant: x402GrantView(res.Grant)}
				if res.Settlement != nil {
					v.SettlementID, v.State = optional(res.Settlement.ID), optional(string(res.Settlement.State))
				}
				return c.CommitResult(ctx, func(Tx) (any, error) {
					c.Header().Set(x402.HeaderResponse, h)
					if !r.Success {
						c.SetStatus(http.StatusPaymentRequired)
					}
					return v, nil
				})
			}}),
	}
}
