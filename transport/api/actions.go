package api

import (
	"context"
	"net/http"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/action"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/transport"
)

// ActionDefinitionView is one action of the catalog, read from the configuration of the caller's environment.
type ActionDefinitionView struct {
	// Kind names the action.
	Kind string `json:"kind" example:"credit_purchase" enum:"credit_purchase,marketplace_order,reward_claim,swap"`
	// Permission is the permission the caller must hold: that of the route or domain call the action hands off to.
	Permission string `json:"permission" example:"billing.manage" enum:"billing.manage,reward.claim,wallet.sign"`
	// Feature is the feature the action stands on: chain_payments (the environment's cluster and treasury), reward_payouts (its reward treasury).
	Feature string `json:"feature" example:"chain_payments" enum:"chain_payments,reward_payouts"`
	// Flags are the workspace feature flags that must be on besides.
	Flags []string `json:"flags" example:"marketplace"`
	// SubjectType is what subjectId names: a credit pack (its credits), a listing, a reward, or a swap quote (made by the swap routes).
	SubjectType string `json:"subjectType" example:"credit_pack" enum:"credit_pack,listing,reward,swap_quote"`
	// Destination says which wallet the action's wallet is.
	Destination string `json:"destination" example:"payer: a verified wallet of the caller"`
	// Networks are the CAIP-2 ids the action runs on in the caller's environment, read from its cluster; empty when none is configured.
	Networks []string `json:"networks" example:"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"`
	// Currencies are the mints the configuration allows (the credits.packs policy's, the swap registry's executable ones); empty when the subject fixes its own (a listing's price, a reward's pool) or nothing is configured.
	Currencies []string `json:"currencies" example:"Mint111111111111111111111111111111111111111"`
	// CurrencySource says where the currencies come from.
	CurrencySource string `json:"currencySource" example:"credits.packs policy"`
	// Flow is actions (POST /api/v1/actions hands it to its owning domain) or swap (the swap routes, starting at POST /api/v1/swap/quotes).
	Flow string `json:"flow" example:"actions" enum:"actions,swap"`
}

// ActionDefinitions is the action catalog of the caller's environment.
type ActionDefinitions struct {
	// Items are the actions, in catalog order.
	Items []ActionDefinitionView `json:"items"`
	// Checks are the preflight checks, in the order they run.
	Checks []string `json:"checks" example:"feature"`
}

// ActionRequest is the body of POST /api/v1/actions/preflight and POST /api/v1/actions.
type ActionRequest struct {
	// Kind names the action.
	Kind string `json:"kind" example:"credit_purchase" enum:"credit_purchase,marketplace_order,reward_claim,swap"`
	// SubjectID names the subject: the credits of a pack ("100"), a listing id, a reward id.
	SubjectID string `json:"subjectId" example:"100"`
	// Wallet is the destination: the paying wallet of a purchase, the receiving wallet of a claim; a verified wallet of the caller.
	Wallet string `json:"wallet" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// AmountAtomic, when set, is the amount the caller expects the action to move (the net price, the reward), in atomic units; it is compared with the server's, never used.
	AmountAtomic string `json:"amountAtomic,omitempty" example:"1000000000"`
	// Network is the CAIP-2 id the caller expects the action on.
	Network string `json:"network" example:"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"`
	// Currency is the mint the caller expects the action in.
	Currency string `json:"currency" example:"Mint111111111111111111111111111111111111111"`
}

// ActionCheckView is one preflight check's outcome.
type ActionCheckView struct {
	// Check names the check.
	Check string `json:"check" example:"destination" enum:"feature,subject,actor,destination,amount,network,currency"`
	// Outcome is passed, failed, or skipped when what the check compares is unknown (never passed in its place).
	Outcome string `json:"outcome" example:"failed" enum:"passed,failed,skipped"`
	// Code is the error code of a failed or skipped check; null when passed.
	Code *string `json:"code" example:"WALLET_REQUIRED"`
	// Reason details the code; null when passed.
	Reason *string `json:"reason" example:"wallet_not_verified"`
}

// ActionPreflightView is what preflight found; nothing was changed.
type ActionPreflightView struct {
	// Kind names the action.
	Kind string `json:"kind" example:"credit_purchase" enum:"credit_purchase,marketplace_order,reward_claim,swap"`
	// Allowed is true when every check passed; running the action checks everything again.
	Allowed bool `json:"allowed" example:"false"`
	// Checks are every check's outcome, in order.
	Checks []ActionCheckView `json:"checks"`
	// AmountAtomic is what the action would move, by the server's reading; null when unknown.
	AmountAtomic *string `json:"amountAtomic" example:"1000000000"`
	// Network is the action's CAIP-2 id; null when unknown.
	Network *string `json:"network" example:"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"`
	// Currency is the action's mint; null when unknown.
	Currency *string `json:"currency" example:"Mint111111111111111111111111111111111111111"`
}

// ActionResultView is what an action handed off produced in its owning domain.
type ActionResultView struct {
	// Kind names the action.
	Kind string `json:"kind" example:"credit_purchase" enum:"credit_purchase,marketplace_order,reward_claim"`
	// TransactionIntent is the intent the owning flow froze: the one POST /api/v1/transactions/intent freezes for a purchase, the reward's payout for a claim.
	TransactionIntent TransactionIntentView `json:"transactionIntent"`
	// Reward is the claimed reward; null for a purchase.
	Reward *RewardView `json:"reward"`
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func actionRequest(in ActionRequest) action.Request {
	return action.Request{Kind: action.Kind(in.Kind), SubjectID: in.SubjectID, Wallet: in.Wallet, AmountAtomic: in.AmountAtomic,
		Network: in.Network, Currency: in.Currency}
}

func preflightView(p action.Preflight) ActionPreflightView {
	v := ActionPreflightView{Kind: string(p.Kind), Allowed: p.OK(), Checks: []ActionCheckView{}, AmountAtomic: str(p.AmountAtomic),
		Network: str(p.Network), Currency: str(p.Currency)}
	for _, r := range p.Results {
		v.Checks = append(v.Checks, ActionCheckView{Check: string(r.Check), Outcome: string(r.Outcome), Code: str(string(r.Code)), Reason: str(r.Reason)})
	}
	return v
}

func definitionsView(ds []action.Definition) ActionDefinitions {
	out := ActionDefinitions{Items: []ActionDefinitionView{}, Checks: []string{}}
	for _, c := range action.Checks() {
		out.Checks = append(out.Checks, string(c))
	}
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	for _, d := range ds {
		out.Items = append(out.Items, ActionDefinitionView{Kind: string(d.Kind), Permission: string(d.Permission), Feature: d.Feature,
			Flags: nonNil(d.Flags), SubjectType: d.SubjectType, Destination: d.Destination, Networks: nonNil(d.Networks),
			Currencies: nonNil(d.Currencies), CurrencySource: d.CurrencySource, Flow: d.Flow})
	}
	return out
}

// actionRoutes are the action routes (spec, Architecture and operations:
// actions). The catalog and preflight read; POST /api/v1/actions hands an
// action to its owning domain's flow.
func actionRoutes(svc *action.Service, units transport.Store[Tx]) []Route {
	if svc == nil {
		return nil
	}
	tag := func(r Route) Route {
		r.Tag, r.Private, r.AnyMember = transport.TagArchitecture, true, true
		return r
	}
	req := ActionRequest{Kind: "credit_purchase", SubjectID: "100", Wallet: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T",
		Network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Currency: "Mint111111111111111111111111111111111111111"}
	exPre := ActionPreflightView{Kind: "credit_purchase", Allowed: false, AmountAtomic: str("1000000000"),
		Network: str(req.Network), Currency: str(req.Currency)}
	for _, c := range action.Checks() {
		v := ActionCheckView{Check: string(c), Outcome: "passed"}
		if c == action.CheckDestination {
			v.Outcome, v.Code, v.Reason = "failed", str("WALLET_REQUIRED"), str("wallet_not_verified")
		}
		exPre.Checks = append(exPre.Checks, v)
	}
	claimRun := func(ctx context.Context, fn func(st rewards.ClaimStore, intents intent.Store) error) error {
		return units.InTx(ctx, func(tx Tx) error { return fn(tx, tx) })
	}
	return []Route{
		tag(Route{Method: http.MethodGet, Pattern: "/api/v1/actions/definitions", OperationID: "listActionDefinitions",
			Auth: transport.AuthSessionOrKey, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary: "List the action catalog",
			Description: "The value-moving and community actions the platform offers in the caller's environment: credit_purchase (a " +
				"transaction intent of purpose credit_purchase), marketplace_order (purpose marketplace_order), reward_claim (the " +
				"rewards claim) and swap (the swap routes: it needs a quote first, so POST /api/v1/actions refuses it). Each names its " +
				"permission, feature, flags, subject type, destination, and the networks and currencies the configuration allows: the " +
				"environment's cluster's CAIP-2 id, the credits.packs policy's mints, the swap registry's executable mints; a listing " +
				"and a reward fix their own currency. An environment without a cluster lists no network, never an assumed one. checks " +
				"lists the preflight checks in order. Any member of the workspace reads it (API keys: scope read).",
			Response: definitionsView([]action.Definition{{Kind: action.KindCreditPurchase, Permission: access.BillingManage,
				Feature: action.FeatureChainPayments, SubjectType: "credit_pack", Destination: "payer: a verified wallet of the caller",
				Networks: []string{req.Network}, Currencies: []string{req.Currency}, CurrencySource: "credits.packs policy", Flow: action.FlowActions}}),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return definitionsView(svc.Definitions(ctx, c.Principal)), nil
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/actions/preflight", OperationID: "preflightAction", Status: http.StatusOK,
			Auth: transport.AuthSessionOrKey, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary: "Preflight an action",
			Description: "Validates an action as POST /api/v1/actions would run it, in this order: feature (the environment takes chain " +
				"payments, SERVICE_UNAVAILABLE reason not_configured; a reward treasury for claims; the workspace's marketplace or swap " +
				"flag, FEATURE_DISABLED reason disabled_by_flag), subject (the pack is offered, the listing exists, the reward is the caller's and " +
				"claimable: NOT_FOUND, CONFLICT reason not_claimable; swap: CAPABILITY_UNSUPPORTED reason quote_required), actor (a " +
				"signed-in user holding the action's permission, not the listing's seller: ACCESS_DENIED, INVALID_INPUT reason " +
				"own_listing), destination (a verified wallet of the caller, the reward's own for a claim: WALLET_REQUIRED, " +
				"WALLET_MISMATCH), amount (the server's amount; a stated amountAtomic must equal it: INVALID_AMOUNT), network (the " +
				"environment's CAIP-2 id: NETWORK_MISMATCH) and currency (a mint the subject takes: TOKEN_NOT_TRUSTED). It answers 200 " +
				"with every check's outcome, the failed ones with their code, and changes nothing; a check whose inputs are unknown is " +
				"skipped, never passed. A preflight that passes promises nothing: running the action checks everything again. An " +
				"unknown kind is 400 INVALID_INPUT. API keys (scope read) are answered too: their actor check fails (session_required).",
			Request: req, Response: exPre,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ActionRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				pf, err := svc.Preflight(ctx, c.Tx, c.Principal, c.Authority, actionRequest(in))
				if err != nil {
					return nil, err
				}
				return preflightView(pf), nil
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/actions", OperationID: "runAction", Status: http.StatusCreated,
			Auth: transport.AuthSession, Idempotency: transport.IdempotencyRequired, OwnUnitOfWork: true,
			Summary: "Run an action",
			Description: "Runs preflight and answers its first failed check as the error (details.check, details.reason: 403 " +
				"ACCESS_DENIED for a caller without the action's permission, 422 WALLET_REQUIRED, 409 NETWORK_MISMATCH, ...), then " +
				"hands the action to its owning domain's flow, never a second path around it: credit_purchase and marketplace_order go " +
				"to the intent service's Prepare and Record, the very calls of POST /api/v1/transactions/intent, so the frozen intent " +
				"(amounts, recipients, legs, policy, economics hash) is the one that route freezes for the same request, with its order " +
				"for a listing; reward_claim goes to the rewards domain's claim (POST /api/v1/rewards/{id}/claim), whose payout it " +
				"answers. swap is 422 CAPABILITY_UNSUPPORTED (details.reason quote_required, details.flow /api/v1/swap/quotes): a " +
				"swap starts from a quote. Idempotency-Key is required: the same key and body answer the first result and create " +
				"nothing more; another body is 409 IDEMPOTENCY_CONFLICT. Signed-in users only; API keys never move value.",
			Request: req, Response: ActionResultView{Kind: "credit_purchase", TransactionIntent: exampleIntent()},
			Errors: []string{string(fault.WalletRequired), string(fault.WalletMismatch), string(fault.NetworkMismatch),
				string(fault.TokenNotTrusted), string(fault.InvalidAmount), string(fault.NotFound), string(fault.Conflict),
				string(fault.ServiceUnavailable), string(fault.ProviderUnavailable), string(fault.CapabilityUnsupported),
				string(fault.FeatureDisabled)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ActionRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				ar := actionRequest(in)
				switch ar.Kind {
				case action.KindSwap:
					return nil, action.SwapRefusal()
				case action.KindRewardClaim:
					r, it, err := svc.Claim(ctx, c.Tx, c.Tx, claimRun, c.Principal, c.Authority, ar)
					if err != nil {
						return nil, err
					}
					rv := rewardView(r)
					return c.CommitResult(ctx, func(Tx) (any, error) {
						return ActionResultView{Kind: in.Kind, TransactionIntent: intentView(it), Reward: &rv}, nil
					})
				}
				d, err := svc.Purchase(ctx, c.Tx, c.Principal, c.Authority, ar)
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					if err := svc.Record(ctx, tx, d); err != nil {
						return nil, err
					}
					return ActionResultView{Kind: in.Kind, TransactionIntent: intentView(d.Intent)}, nil
				})
			}}),
	}
}
