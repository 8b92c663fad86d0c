package platform

import (
	"encoding/json"
	"fmt"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/architecture"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/generation"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/webhook"
)

// Domains is the one list of the module's domain packages: the packages
// that hold the platform's rules and reach the outside world only through
// their own ports. The dependency tests hold each to its import rules (no
// transport, store, root or SDK), and GET /api/v1/architecture serves the
// list as the model's bounded contexts and shared kernel. A domain package
// is added here, beside its build step in wire.go.
func Domains() []architecture.Context {
	ctx := func(pkg, summary string) architecture.Context {
		return architecture.Context{Package: pkg, Kind: architecture.KindContext, Summary: summary}
	}
	shared := func(pkg, summary string) architecture.Context {
		return architecture.Context{Package: pkg, Kind: architecture.KindShared, Summary: summary}
	}
	return []architecture.Context{
		ctx("access", "principals, environments, roles, permissions, entitlements, feature flags and the access evaluator"),
		ctx("account", "people and sign-in: signup, sessions, onboarding, invitations, administration and the audit log"),
		ctx("action", "the action catalog, its preflight and the hand-off of an action to its owning flow"),
		ctx("ai", "the AI control plane: model registry, health, routing policy and completion operations with credits"),
		ctx("ai/task", "the AI control plane's structured tasks"),
		ctx("ai/tool", "the platform actions a model may propose, and their artifacts"),
		ctx("analytics", "product analytics: counts of the platform's records per period and environment, nothing estimated"),
		ctx("apikey", "developer API keys: creation, rotation, revocation, limits and authentication"),
		ctx("architecture", "the platform's description of itself: architecture model, features and publishable policies"),
		ctx("asset", "stored media: asset records and the content-addressed blob store"),
		ctx("attribution", "where signed-in users came from: first and last touch per user and environment"),
		ctx("billing", "checkout, subscriptions, renewals and their credit grants, and the marketplace fee policy"),
		ctx("chain/intent", "the chain payment path: transaction intents, submission, settlement and reconciliation"),
		ctx("chain/relay", "a signed transaction's network side: relay, status up to finalized"),
		ctx("chain/wallet", "wallet verification by signed single-use challenges"),
		ctx("creator", "the public read model of creators"),
		ctx("creatorgraph", "relations between creators: derived from the records, and declared follows"),
		ctx("discover", "discovery of public projects, tracks and creators, with a documented ranking"),
		ctx("generation", "music generation operations, provider routing and cost"),
		ctx("generation/credential", "provider connections and customer provider keys"),
		ctx("generation/operation", "music generation operations end to end: accept, reserve, dispatch, merge, settle"),
		ctx("leaderboard", "per-workspace leaderboards: snapshots of counted signals under a versioned scoring policy, and a caller's position"),
		ctx("ledger", "double-entry ledgers: credits, financial, rewards and provider cost"),
		ctx("marketplace", "rights policies, license offers, listings, orders and license entitlements"),
		ctx("network", "the creative-network topology record, its token node read from the token registry"),
		ctx("plan", "the plan catalog, price versions and monthly credit grants"),
		ctx("project", "projects and their community submissions"),
		ctx("realtime", "live delivery of outbox events: the feed in commit order, channels, resume and slow-consumer bounds"),
		ctx("release", "releases of tracks and projects to external distribution"),
		ctx("rewards", "challenges, reward funding, allocation and claims"),
		ctx("sound", "sound engine operations"),
		ctx("swap", "token swaps from quote to reconciliation"),
		ctx("token", "the token registry, its deployment verification and projections"),
		ctx("token/sale", "the token sale's projections, verification and access intents"),
		ctx("web3/cctp", "cross-chain transfers"),
		ctx("web3/x402", "the payment-required protocol"),
		ctx("web3/zk", "zero-knowledge proof verification bound to transaction intents"),
		ctx("webhook", "developer webhook endpoints, signed deliveries of the outbox's events, retries and the delivery log"),
		shared("fault", "the one error type and its codes"),
		shared("fsm", "the one shape of state machines: tables of from, event, to"),
		shared("idempotency", "idempotency records and canonical request hashes"),
		shared("jobs", "durable background work"),
		shared("money", "atomic integer amounts and decimal conversion"),
		shared("outbox", "the transactional outbox and inbox"),
		shared("policy", "immutable, versioned policy documents"),
	}
}

// tokenClusters are the clusters whose token deployment table the
// architecture model serves: the table names its states after the cluster.
func tokenClusters() []chain.Cluster {
	return []chain.Cluster{chain.Mainnet, chain.Devnet, chain.Testnet, chain.Localnet}
}

// StateMachines lists every state machine of the domains, each read from
// the function whose rows its domain enforces. A root test scans the
// module for fsm tables and fails when one is not listed here; an e2e test
// compares the architecture route's maps with the domains' own tables.
func StateMachines() []architecture.Machine {
	type M = architecture.Machine
	ms := []M{
		architecture.NewMachine("generation.operation", "generation", "generation operation", "generation.Moves", generation.Moves()),
		architecture.NewMachine("generation.attempt", "generation/operation", "provider attempt", "generation/operation.AttemptMoves", genop.AttemptMoves()),
		architecture.NewMachine("sound.operation", "sound", "sound operation", "sound.Moves", sound.Moves()),
		architecture.NewMachine("ai.operation", "ai", "AI operation", "ai.OperationMoves", ai.OperationMoves()),
		architecture.NewMachine("ai.artifact", "ai/tool", "AI artifact", "ai/tool.Moves", tool.Moves()),
		architecture.NewMachine("apikey.key", "apikey", "API key", "apikey.Moves", apikey.Moves()),
		architecture.NewMachine("billing.checkout", "billing", "checkout", "billing.Table", billing.Table(billing.MachineCheckout).Rows()),
		architecture.NewMachine("billing.subscription", "billing", "subscription", "billing.Table", billing.Table(billing.MachineSubscription).Rows()),
		architecture.NewMachine("project.project", "project", "project", "project.Moves", project.Moves()),
		architecture.NewMachine("project.submission", "project", "submission", "project.SubmissionMoves", project.SubmissionMoves()),
		architecture.NewMachine("release.release", "release", "release", "release.Moves", release.Moves()),
		architecture.NewMachine("rewards.challenge", "rewards", "challenge", "rewards.Moves", rewards.Moves()),
		architecture.NewMachine("rewards.funding", "rewards", "reward pool funding", "rewards.FundingMoves", rewards.FundingMoves()),
		architecture.NewMachine("rewards.reward", "rewards", "reward", "rewards.RewardMoves", rewards.RewardMoves()),
		architecture.NewMachine("marketplace.license_offer", "marketplace", "license offer", "marketplace.Moves", marketplace.Moves()),
		architecture.NewMachine("marketplace.order", "marketplace", "marketplace order", "marketplace.OrderMoves", marketplace.OrderMoves()),
		architecture.NewMachine("chain/wallet.challenge", "chain/wallet", "wallet challenge", "chain/wallet.Moves", wallet.Moves()),
		architecture.NewMachine("chain/intent.intent", "chain/intent", "transaction intent", "chain/intent.Transitions", intent.Transitions()),
		architecture.NewMachine("chain/intent.network", "chain/intent", "transaction intent's network state", "chain/intent.NetworkTransitions",
			intent.NetworkTransitions()),
		architecture.NewMachine("chain/relay.network", "chain/relay", "transaction network state", "chain/relay.Transitions", relay.Transitions()),
		architecture.NewMachine("swap.operation", "swap", "swap operation", "swap.Moves", swap.Moves()),
		architecture.NewMachine("token/sale.sale", "token/sale", "token sale", "token/sale.Moves", sale.Moves()),
		architecture.NewMachine("web3/cctp.transfer", "web3/cctp", "cross-chain transfer", "web3/cctp.Moves", cctp.Moves()),
		architecture.NewMachine("web3/x402.settlement", "web3/x402", "payment settlement", "web3/x402.Moves", x402.Moves()),
		architecture.NewMachine("webhook.endpoint", "webhook", "webhook endpoint", "webhook.Moves", webhook.Moves()),
		architecture.NewMachine("webhook.delivery", "webhook", "webhook delivery", "webhook.DeliveryMoves", webhook.DeliveryMoves()),
	}
	for _, c := range tokenClusters() {
		ms = append(ms, architecture.NewMachine("token.deployment."+string(c), "token", "token registry deployment on "+string(c),
			"token.Transitions", token.Transitions(c)))
	}
	return ms
}

// architectureModel builds the model GET /api/v1/architecture serves.
func architectureModel() (*architecture.Model, error) {
	m, err := architecture.New(Domains(), StateMachines())
	if err != nil {
		return nil, fmt.Errorf("platform: architecture model: %w", err)
	}
	return &m, nil
}

// ActionPolicyPublished is the audit action of a policy version published
// through POST /api/v1/policies, where its owner names none of its own.
const ActionPolicyPublished = "policy.published"

// Policies lists the policy ids the platform knows, each with its owning
// domain, how it is published, the authority publishing and reading it
// need, and the owner's validator (POST /api/v1/policies, GET
// /api/v1/policies/{policyId}/current). A domain that adds a policy id
// lists it here; the root test TestPoliciesListEveryPolicyID fails on a
// policy id constant of a domain that is not listed.
//
// Rights policies (rights.*) are not platform policies: each tenant
// publishes its own through POST /api/v1/rights/policies.
func Policies() []architecture.PolicyKind {
	api := func(id, owner, audit string, read access.Permission, decode func(json.RawMessage) (any, error)) architecture.PolicyKind {
		return architecture.PolicyKind{ID: id, Owner: owner, Publisher: architecture.PublishedByAPI, SuperAdmin: true,
			ReadPermission: read, AuditAction: audit, DecodeFunc: decode}
	}
	configured := func(id, owner string) architecture.PolicyKind {
		return architecture.PolicyKind{ID: id, Owner: owner, Publisher: architecture.PublishedByConfiguration}
	}
	return []architecture.PolicyKind{
		api(billing.FeePolicyID, "billing", billing.ActionFeePolicyPublished, access.FeePolicyRead,
			architecture.Strict(billing.FeePolicy.Validate)),
		api(genop.PricingPolicyID, "generation/operation", ActionPolicyPublished, "", architecture.Strict(genop.Pricing.Validate)),
		api(ai.PolicyCredits, "ai", ActionPolicyPublished, "", func(content json.RawMessage) (any, error) {
			v, err := architecture.Strict(ai.CreditPricing.Validate)(content)
			if err != nil {
				return nil, err
			}
			// The rate is stored as ai.SeedCreditPricing stores it, so the
			// same pricing is the same version however it was spelled.
			p := v.(ai.CreditPricing)
			p.CreditsPerUSD, _ = ai.ParsePrice(string(p.CreditsPerUSD))
			return p, nil
		}),
		api(leaderboard.PolicyID, "leaderboard", ActionPolicyPublished, "", architecture.Strict(leaderboard.Scoring.Validate)),
		{ID: ai.PolicyRouting, Owner: "ai", Publisher: architecture.PublishedByOwnerRoute, Route: "PUT /api/v1/ai/routing"},
		configured(intent.CreditPacksPolicyID, "chain/intent"),
		configured(swap.PolicyTokens, "swap"),
		configured(swap.PolicySettings, "swap"),
		configured(swap.PolicyFees, "swap"),
	}
}

// policyCatalogue builds the catalogue the policy routes serve.
func policyCatalogue() (*architecture.Policies, error) {
	ps, err := architecture.NewPolicies(Policies())
	if err != nil {
		return nil, fmt.Errorf("platform: policies: %w", err)
	}
	return ps, nil
}
