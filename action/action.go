package action

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/rewards"
)

// Kind names an action.
type Kind string

// The actions the platform offers.
const (
	// KindCreditPurchase buys a pack of credits: a transaction intent of
	// purpose credit_purchase.
	KindCreditPurchase Kind = "credit_purchase"
	// KindMarketplaceOrder buys the license a listing sells: a
	// transaction intent of purpose marketplace_order.
	KindMarketplaceOrder Kind = "marketplace_order"
	// KindRewardClaim claims a reward allocated to the caller: the
	// rewards domain's claim, which creates a reward_claim payout.
	KindRewardClaim Kind = "reward_claim"
	// KindSwap swaps one trusted token for another. It needs a quote
	// first, so it runs through the swap routes, never POST /actions.
	KindSwap Kind = "swap"
)

// Kinds lists the actions in catalog order.
func Kinds() []Kind {
	return []Kind{KindCreditPurchase, KindMarketplaceOrder, KindRewardClaim, KindSwap}
}

// Feature names the platform feature each action stands on.
const (
	// FeatureChainPayments is the chain payment path of the caller's
	// environment (a cluster and a treasury): on when configured.
	FeatureChainPayments = "chain_payments"
	// FeatureRewardPayouts is the reward treasury of the caller's
	// environment: on when configured.
	FeatureRewardPayouts = "reward_payouts"
)

// Flows say where an action runs.
const (
	// FlowActions: POST /api/v1/actions hands it to its owning domain.
	FlowActions = "actions"
	// FlowSwap: the swap routes (quote, intent, submit, verify).
	FlowSwap = "swap"
)

// Check names one preflight check.
type Check string

// The checks, in the order preflight runs them.
const (
	// CheckFeature: the action's feature is on in the caller's
	// environment and workspace.
	CheckFeature Check = "feature"
	// CheckSubject: the pack, listing or reward exists and may be acted on.
	CheckSubject Check = "subject"
	// CheckActor: a signed-in user holding the action's permission.
	CheckActor Check = "actor"
	// CheckDestination: the wallet is the caller's verified one.
	CheckDestination Check = "destination"
	// CheckAmount: the server's amount, equal to a stated one.
	CheckAmount Check = "amount"
	// CheckNetwork: the stated network is the environment's.
	CheckNetwork Check = "network"
	// CheckCurrency: the stated mint is one the subject takes.
	CheckCurrency Check = "currency"
)

// Checks lists the checks in order.
func Checks() []Check {
	return []Check{CheckFeature, CheckSubject, CheckActor, CheckDestination, CheckAmount, CheckNetwork, CheckCurrency}
}

// Outcome is a check's result.
type Outcome string

// The outcomes.
const (
	// Passed: the check holds.
	Passed Outcome = "passed"
	// Failed: the check does not hold; Code says why.
	Failed Outcome = "failed"
	// Skipped: the check could not be judged because what it compares
	// is unknown (the subject or the network could not be read); Code
	// names the check it waits on's failure.
	Skipped Outcome = "skipped"
)

// Definition is one action of the catalog, read from the configuration
// of the caller's environment.
type Definition struct {
	// Kind names the action.
	Kind Kind
	// Permission is the permission the caller must hold.
	Permission access.Permission
	// Feature is the feature the action stands on: a workspace feature
	// flag, or FeatureChainPayments / FeatureRewardPayouts.
	Feature string
	// Flags are the workspace feature flags that must be on besides.
	Flags []string
	// SubjectType names what SubjectID is.
	SubjectType string
	// Destination says which wallet the action's Wallet is.
	Destination string
	// Networks are the CAIP-2 ids the action runs on in the caller's
	// environment; empty when none is configured.
	Networks []string
	// Currencies are the mints the configuration allows; empty when no
	// list is configured. CurrencySource says where they come from.
	Currencies     []string
	CurrencySource string
	// Flow is FlowActions or FlowSwap.
	Flow string
}

// Request is an action, as preflight and Run take it.
type Request struct {
	// Kind names the action.
	Kind Kind
	// SubjectID names the subject: the pack's credits ("100"), the
	// listing id, the reward id.
	SubjectID string
	// Wallet is the destination: the paying wallet of a purchase, the
	// receiving wallet of a claim.
	Wallet string
	// AmountAtomic, when set, is the amount the caller expects the action
	// to move (the net price, the reward); it is compared, never used.
	AmountAtomic string
	// Network is the CAIP-2 id the caller expects the action on.
	Network string
	// Currency is the mint the caller expects the action in.
	Currency string
}

// Result is one check's outcome.
type Result struct {
	// Check names the check; Outcome is its result.
	Check   Check
	Outcome Outcome
	// Code is the error code of a failed or skipped check.
	Code fault.Code
	// Reason details Code ("not_configured", "own_listing", ...).
	Reason string
}

// Preflight is what preflight found: every check's result, and what the
// subject fixes when it could be read.
type Preflight struct {
	// Kind names the action; Results are the checks' outcomes, in order.
	Kind    Kind
	Results []Result
	// AmountAtomic, Currency and Network are the server's: what the
	// action would move, in which mint, on which network ("" unknown).
	AmountAtomic string
	Currency     string
	Network      string
}

// OK reports whether every check passed.
func (p Preflight) OK() bool {
	for _, r := range p.Results {
		if r.Outcome != Passed {
			return false
		}
	}
	return true
}

// Err returns the first check that did not pass as an error with its code,
// details.check and details.reason; nil when all passed.
func (p Preflight) Err() error {
	for _, r := range p.Results {
		if r.Outcome == Passed {
			continue
		}
		e := fault.E("action.Run", r.Code, "The action's "+string(r.Check)+" check failed; preflight lists every check.").
			With("check", string(r.Check))
		if r.Reason != "" {
			e = e.With("reason", r.Reason)
		}
		return e
	}
	return nil
}

// Intents is the intent-creation service the transaction intent route
// calls (chain/intent.Service): the only path a purchase takes.
type Intents interface {
	// Configured reports whether env takes intents.
	Configured(env access.Environment) bool
	// Network returns env's CAIP-2 id, read from its cluster.
	Network(ctx context.Context, env access.Environment) (string, error)
	// Prepare freezes an intent for p from req.
	Prepare(ctx context.Context, p *access.Principal, req intent.Request) (intent.Draft, error)
	// Record saves it in st's unit of work.
	Record(ctx context.Context, st intent.Store, d intent.Draft) error
}

// Claims is the rewards domain's claim service (rewards.Service).
type Claims interface {
	// Configured reports whether env has a reward treasury.
	Configured(env access.Environment) bool
	// Payouts reports env's reward payouts as GET /api/v1/features does:
	// configured, and verified by a reading of the treasury.
	Payouts(ctx context.Context, st rewards.TreasuryReader, env access.Environment) (rewards.Payouts, error)
	// Claim claims reward id for p.
	Claim(ctx context.Context, rd rewards.ClaimReader, run rewards.ClaimRunFunc, p *access.Principal, id string) (rewards.Reward, intent.Intent, error)
}

// Wallets answers wallet verification.
type Wallets interface {
	// Verified reports whether address is a verified wallet of userID in
	// tenantID.
	Verified(ctx context.Context, tenantID, userID string, address chain.Address) (bool, error)
}

// SwapFunc reads env's swap configuration: the network its registry run
// observed and the executable trusted mints.
type SwapFunc func(ctx context.Context, env access.Environment) (network string, mints []string, err error)

// Store is what preflight reads, on the read handle.
type Store interface {
	// ListingGet returns the newest version of listing id in env, of any
	// tenant; NOT_FOUND when none.
	ListingGet(ctx context.Context, env access.Environment, id string) (marketplace.Listing, error)
	// RewardGet reads a reward by id in env, of any tenant; NOT_FOUND
	// when none.
	RewardGet(ctx context.Context, env access.Environment, id string) (rewards.Reward, error)
	// The newest reading of the reward treasury, for the feature check.
	rewards.TreasuryReader
}

// Config configures a Service. Intents, Packs and Wallets are required;
// a nil Claims or Swap reports that action's feature not configured.
type Config struct {
	// Intents is the intent-creation service.
	Intents Intents
	// Packs reads an environment's credits.packs policy, as the
	// credit_purchase purpose prices it.
	Packs intent.PacksFunc
	// Wallets answers wallet verification.
	Wallets Wallets
	// Claims is the rewards domain's claim service.
	Claims Claims
	// Swap reads the swap configuration.
	Swap SwapFunc
}

// Service runs the action catalog, preflight and hand-off. It holds no
// mutable state and is safe for concurrent use.
type Service struct {
	cfg Config
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Intents == nil || cfg.Packs == nil || cfg.Wallets == nil {
		return nil, errors.New("action: Intents, Packs and Wallets are required")
	}
	return &Service{cfg: cfg}, nil
}

// permission returns the permission action k needs: that of the route or
// domain call it hands off to.
func permission(k Kind) access.Permission {
	switch k {
	case KindRewardClaim:
		return access.RewardClaim
	case KindSwap:
		return access.WalletSign
	}
	return access.BillingManage
}

// Definitions returns the catalog for p's environment, its networks and
// currencies read from the configuration: the cluster's CAIP-2 id, the
// credits.packs policy's mints, the swap registry's executable mints.
// Nothing is read from a wallet or a caller.
func (s *Service) Definitions(ctx context.Context, p *access.Principal) []Definition {
	env := p.Environment
	var networks []string
	if s.cfg.Intents.Configured(env) {
		if n, err := s.cfg.Intents.Network(ctx, env); err == nil {
			networks = []string{n}
		}
	}
	var packMints []string
	if packs, _, err := s.cfg.Packs(ctx, env); err == nil {
		packMints = packs.Mints()
	}
	var swapNetworks, swapMints []string
	if s.cfg.Swap != nil {
		if n, ms, err := s.cfg.Swap(ctx, env); err == nil {
			swapMints = ms
			if n != "" {
				swapNetworks = []string{n}
			}
		}
	}
	var claimNetworks []string
	if s.cfg.Claims != nil && s.cfg.Claims.Configured(env) {
		claimNetworks = networks
	}
	return []Definition{
		{Kind: KindCreditPurchase, Permission: permission(KindCreditPurchase), Feature: FeatureChainPayments, SubjectType: "credit_pack",
			Destination: "payer: a verified wallet of the caller", Networks: networks, Currencies: packMints,
			CurrencySource: "credits.packs policy", Flow: FlowActions},
		{Kind: KindMarketplaceOrder, Permission: permission(KindMarketplaceOrder), Feature: FeatureChainPayments,
			Flags: []string{marketplace.FeatureMarketplace}, SubjectType: "listing", Destination: "payer: a verified wallet of the caller",
			Networks: networks, CurrencySource: "the listing's price", Flow: FlowActions},
		{Kind: KindRewardClaim, Permission: permission(KindRewardClaim), Feature: FeatureRewardPayouts, SubjectType: "reward",
			Destination: "recipient: the reward's wallet, verified by the caller", Networks: claimNetworks, CurrencySource: "the reward's pool",
			Flow: FlowActions},
		{Kind: KindSwap, Permission: permission(KindSwap), Feature: FeatureChainPayments, Flags: []string{swapFlag},
			SubjectType: "swap_quote", Destination: "payer: a verified wallet of the caller", Networks: swapNetworks, Currencies: swapMints,
			CurrencySource: "trusted token registry", Flow: FlowSwap},
	}
}

// swapFlag is the swap routes' feature flag.
const swapFlag = "swap"

// facts are what preflight learned of the subject.
type facts struct {
	found    bool
	amount   uint64
	currency chain.Address
	// currencies is the allowed set when the subject allows several (a
	// pack priced in several mints); nil when the subject fixes one.
	currencies []string
}

// Preflight validates in against p's authority a in the order of Checks
// and answers every check's outcome, changing nothing. It errs only on
// an unknown kind (INVALID_INPUT, details.field kind) or a store failure.
func (s *Service) Preflight(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in Request) (Preflight, error) {
	const op = "action.Preflight"
	if !slices.Contains(Kinds(), in.Kind) {
		return Preflight{}, fault.Invalid(op, "kind", "kind is not an action of the catalog.")
	}
	env := p.Environment
	out := Preflight{Kind: in.Kind}
	add := func(c Check, o Outcome, code fault.Code, reason string) {
		out.Results = append(out.Results, Result{Check: c, Outcome: o, Code: code, Reason: reason})
	}
	pass := func(c Check) { add(c, Passed, "", "") }

	// 1. Feature. A claim's feature is reward payouts exactly as
	// GET /api/v1/features reports it: a treasury that is configured and
	// was read.
	configured := s.cfg.Intents.Configured(env)
	var payouts rewards.Payouts
	if in.Kind == KindRewardClaim && s.cfg.Claims != nil {
		var err error
		if payouts, err = s.cfg.Claims.Payouts(ctx, st, env); err != nil {
			return Preflight{}, fault.Wrap(op, err)
		}
	}
	switch {
	case in.Kind == KindRewardClaim && !payouts.Configured,
		in.Kind == KindSwap && s.cfg.Swap == nil:
		add(CheckFeature, Failed, fault.ServiceUnavailable, "not_configured")
	case !configured:
		add(CheckFeature, Failed, fault.ServiceUnavailable, "not_configured")
	case in.Kind == KindRewardClaim && !payouts.Verified:
		add(CheckFeature, Failed, fault.ServiceUnavailable, payouts.Reason)
	case in.Kind == KindMarketplaceOrder && !a.FlagEnabled(marketplace.FeatureMarketplace):
		add(CheckFeature, Failed, fault.FeatureDisabled, "disabled_by_flag")
	case in.Kind == KindSwap && !a.FlagEnabled(swapFlag):
		add(CheckFeature, Failed, fault.FeatureDisabled, "disabled_by_flag")
	default:
		pass(CheckFeature)
	}

	// 2. Subject.
	var f facts
	var subjectErr error
	switch in.Kind {
	case KindCreditPurchase:
		f, subjectErr = s.pack(ctx, env, in.SubjectID)
	case KindMarketplaceOrder:
		var l marketplace.Listing
		l, subjectErr = st.ListingGet(ctx, env, in.SubjectID)
		if subjectErr == nil {
			f = facts{found: true, amount: l.PriceAtomic, currency: l.Mint}
		}
	case KindRewardClaim:
		var r rewards.Reward
		r, subjectErr = st.RewardGet(ctx, env, in.SubjectID)
		if subjectErr == nil && r.RecipientUserID != p.UserID {
			subjectErr = fault.E(op, fault.NotFound, "")
		}
		if subjectErr == nil {
			f = facts{found: true, amount: r.AmountAtomic, currency: r.Mint}
			if r.State != rewards.StateClaimable && !(r.State == rewards.StateSubmitted && r.IntentID != "") {
				subjectErr = fault.E(op, fault.Conflict, "").With("reason", "not_claimable")
			}
		}
	case KindSwap:
		subjectErr = fault.E(op, fault.CapabilityUnsupported, "").With("reason", "quote_required")
	}
	switch {
	case subjectErr == nil:
		pass(CheckSubject)
	case fault.Is(subjectErr, fault.NotFound):
		add(CheckSubject, Failed, fault.NotFound, "not_found")
	case fault.Is(subjectErr, fault.Conflict), fault.Is(subjectErr, fault.CapabilityUnsupported), fault.Is(subjectErr, fault.InvalidInput),
		fault.Is(subjectErr, fault.ServiceUnavailable):
		add(CheckSubject, Failed, fault.CodeOf(subjectErr), reasonOf(subjectErr))
	default:
		return Preflight{}, fault.Wrap(op, subjectErr)
	}

	// 3. Actor eligibility: a signed-in user (the owning flows refuse API
	// keys) whose authority holds the action's permission, and not the
	// seller of the listing it buys.
	perm := permission(in.Kind)
	switch {
	case p.UserID == "" || p.Kind == access.CredentialAPIKey:
		add(CheckActor, Failed, fault.AccessDenied, "session_required")
	case !holds(p, a, perm):
		add(CheckActor, Failed, fault.AccessDenied, "permission_"+string(perm))
	case in.Kind == KindMarketplaceOrder && subjectErr == nil && s.ownListing(ctx, st, p, in.SubjectID):
		add(CheckActor, Failed, fault.InvalidInput, "own_listing")
	default:
		pass(CheckActor)
	}

	// 4. Destination: a verified wallet of the caller; for a claim, the
	// reward's own wallet.
	switch w, err := token2022.ParsePublicKey(in.Wallet); {
	case in.Wallet == "" || err != nil:
		add(CheckDestination, Failed, fault.WalletRequired, "wallet_missing_or_malformed")
	default:
		ok, verr := s.cfg.Wallets.Verified(ctx, p.TenantID, p.UserID, w)
		switch {
		case verr != nil:
			return Preflight{}, fault.Wrap(op, verr)
		case !ok:
			add(CheckDestination, Failed, fault.WalletRequired, "wallet_not_verified")
		case in.Kind == KindRewardClaim && subjectErr == nil && s.rewardWallet(ctx, st, env, in.SubjectID) != w:
			add(CheckDestination, Failed, fault.WalletMismatch, "not_the_reward_wallet")
		default:
			pass(CheckDestination)
		}
	}

	// 5. Amount: what the subject moves in the requested currency (a
	// pack's price depends on it); a stated amount must equal it.
	amount, amountKnown := f.amount, f.found && f.currency != (chain.Address{})
	if in.Kind == KindCreditPurchase && f.found {
		amountKnown = false
		if m, err := token2022.ParsePublicKey(in.Currency); err == nil {
			if v, err := s.packPrice(ctx, env, in.SubjectID, m); err == nil {
				amount, amountKnown, f.currency = v, true, m
			}
		}
	}
	switch {
	case !f.found:
		add(CheckAmount, Skipped, fault.NotFound, "subject_unknown")
	case !amountKnown:
		add(CheckAmount, Skipped, fault.InvalidAmount, "currency_unknown")
	case in.AmountAtomic != "" && in.AmountAtomic != strconv.FormatUint(amount, 10):
		add(CheckAmount, Failed, fault.InvalidAmount, "amount_differs")
	case amount == 0:
		add(CheckAmount, Failed, fault.InvalidAmount, "zero")
	default:
		pass(CheckAmount)
		out.AmountAtomic = strconv.FormatUint(amount, 10)
	}

	// 6. Network: the environment's cluster; for a swap, the network the
	// swap registry observed (unknown without one), as Definitions lists.
	network := ""
	if in.Kind == KindSwap {
		if s.cfg.Swap != nil {
			network, _, _ = s.cfg.Swap(ctx, env)
		}
	} else if configured {
		n, err := s.cfg.Intents.Network(ctx, env)
		if err != nil && !fault.Is(err, fault.ProviderUnavailable) {
			return Preflight{}, fault.Wrap(op, err)
		}
		network = n
	}
	switch {
	case network == "":
		add(CheckNetwork, Skipped, fault.ServiceUnavailable, "network_unknown")
	case in.Network != network:
		add(CheckNetwork, Failed, fault.NetworkMismatch, "network_differs")
	default:
		pass(CheckNetwork)
		out.Network = network
	}

	// 7. Currency: one the subject takes.
	switch {
	case in.Kind == KindCreditPurchase && f.found:
		if slices.Contains(f.currencies, in.Currency) {
			pass(CheckCurrency)
			out.Currency = in.Currency
		} else {
			add(CheckCurrency, Failed, fault.TokenNotTrusted, "currency_not_allowed")
		}
	case !f.found:
		add(CheckCurrency, Skipped, fault.NotFound, "subject_unknown")
	case in.Currency != f.currency.String():
		add(CheckCurrency, Failed, fault.TokenNotTrusted, "currency_not_allowed")
	default:
		pass(CheckCurrency)
		out.Currency = in.Currency
	}
	return out, nil
}

// holds reports whether p, holding a, holds perm: granted at some scope,
// not denied, and stood for by an API key's scopes.
func holds(p *access.Principal, a *access.Authority, perm access.Permission) bool {
	if a == nil {
		return false
	}
	_, ok := a.Has(perm)
	return ok && a.Reaches(p, perm, nil)
}

// reasonOf returns an error's details.reason, or "".
func reasonOf(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		for e := fe; e != nil; {
			if r, ok := e.Details["reason"].(string); ok {
				return r
			}
			var next *fault.Error
			if !errors.As(e.Err, &next) {
				break
			}
			e = next
		}
	}
	return ""
}

// pack reads the credits.packs policy of env and the pack of credits.
func (s *Service) pack(ctx context.Context, env access.Environment, credits string) (facts, error) {
	const op = "action.pack"
	packs, _, err := s.cfg.Packs(ctx, env)
	if err != nil {
		return facts{}, err
	}
	n, err := strconv.ParseUint(credits, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != credits {
		return facts{}, fault.E(op, fault.NotFound, "").With("reason", "not_a_pack")
	}
	for _, pk := range packs.Packs {
		if pk.Credits == credits {
			var ms []string
			for m := range pk.Prices {
				ms = append(ms, m)
			}
			slices.Sort(ms)
			return facts{found: true, currencies: ms}, nil
		}
	}
	return facts{}, fault.E(op, fault.NotFound, "").With("reason", "not_a_pack")
}

// packPrice is the pack's net price in mint.
func (s *Service) packPrice(ctx context.Context, env access.Environment, credits string, mint chain.Address) (uint64, error) {
	packs, _, err := s.cfg.Packs(ctx, env)
	if err != nil {
		return 0, err
	}
	return packs.Price(credits, mint)
}

// ownListing reports whether listing id is of p's workspace.
func (s *Service) ownListing(ctx context.Context, st Store, p *access.Principal, id string) bool {
	l, err := st.ListingGet(ctx, p.Environment, id)
	return err == nil && l.Scope.TenantID == p.TenantID && l.Scope.WorkspaceID == p.WorkspaceID
}

// rewardWallet is reward id's wallet (zero when unread).
func (s *Service) rewardWallet(ctx context.Context, st Store, env access.Environment, id string) chain.Address {
	r, err := st.RewardGet(ctx, env, id)
	if err != nil {
		return chain.Address{}
	}
	return r.Wallet
}

// IntentRequest returns the request the transaction intent route takes
// for in, for the purchases (credit_purchase, marketplace_order): the
// hand-off to the intent domain is this request, prepared by the same
// service the route calls. INVALID_INPUT (details.field kind) for
// another kind.
func IntentRequest(in Request) (intent.Request, error) {
	switch in.Kind {
	case KindCreditPurchase:
		return intent.Request{Purpose: intent.PurposeCreditPurchase, Credits: in.SubjectID, Mint: in.Currency, Wallet: in.Wallet}, nil
	case KindMarketplaceOrder:
		return intent.Request{Purpose: marketplace.PurposeOrder, ListingID: in.SubjectID, Wallet: in.Wallet}, nil
	}
	return intent.Request{}, fault.Invalid("action.IntentRequest", "kind", "the action is not a purchase")
}

// Purchase prepares the intent of a purchase after its preflight passed:
// the first failed check is its error (details.check, details.reason);
// then the intent service's Prepare, exactly as the transaction intent
// route calls it. The caller records the draft with Record in the unit
// of work that stores the idempotency record.
func (s *Service) Purchase(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in Request) (intent.Draft, error) {
	req, err := IntentRequest(in)
	if err != nil {
		return intent.Draft{}, err
	}
	pf, err := s.Preflight(ctx, st, p, a, in)
	if err != nil {
		return intent.Draft{}, err
	}
	if err := pf.Err(); err != nil {
		return intent.Draft{}, err
	}
	return s.cfg.Intents.Prepare(ctx, p, req)
}

// Record saves a purchase's draft in st's unit of work, through the
// intent service.
func (s *Service) Record(ctx context.Context, st intent.Store, d intent.Draft) error {
	return s.cfg.Intents.Record(ctx, st, d)
}

// Claim runs a reward claim after its preflight passed, through the
// rewards domain's claim service.
func (s *Service) Claim(ctx context.Context, st Store, rd rewards.ClaimReader, run rewards.ClaimRunFunc, p *access.Principal, a *access.Authority, in Request) (rewards.Reward, intent.Intent, error) {
	if in.Kind != KindRewardClaim || s.cfg.Claims == nil {
		return rewards.Reward{}, intent.Intent{}, fault.Invalid("action.Claim", "kind", "the action is not a reward claim")
	}
	pf, err := s.Preflight(ctx, st, p, a, in)
	if err != nil {
		return rewards.Reward{}, intent.Intent{}, err
	}
	if err := pf.Err(); err != nil {
		return rewards.Reward{}, intent.Intent{}, err
	}
	return s.cfg.Claims.Claim(ctx, rd, run, p, in.SubjectID)
}

// SwapRefusal is the answer of POST /actions to a swap: CAPABILITY_UNSUPPORTED
// with details.reason quote_required and details.flow, the swap quote
// route it starts at.
func SwapRefusal() error {
	return fault.E("action.Run", fault.CapabilityUnsupported, "A swap needs a quote first: start at POST /api/v1/swap/quotes.").
		With("reason", "quote_required").With("flow", "/api/v1/swap/quotes")
}
