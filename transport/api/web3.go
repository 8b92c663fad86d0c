package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/zk"
)

// Web3FeatureView is one chain feature's availability. Enablement is
// separate from deployment: a feature is enabled only when it is built
// and configured for the caller's environment. verified says a check
// proved its on-chain prerequisites (the registry's mint by a passing
// run); a feature with nothing on chain to prove, such as wallet
// verification, is never verified, since nothing was observed.
type Web3FeatureView struct {
	// Feature is the chain feature.
	Feature string `json:"feature" example:"wallet_verification" enum:"token_registry,wallet_verification,transaction_intents,chain_payments,swap,cross_chain_transfers,payment_required_protocol,zk_verification"`
	// Enabled is true when the feature serves the caller's environment.
	Enabled bool `json:"enabled" example:"false"`
	// Configured is true when the feature is configured for the caller's environment.
	Configured bool `json:"configured" example:"false"`
	// Verified is true when the feature's on-chain prerequisites are proven.
	Verified bool `json:"verified" example:"false"`
	// Reason says why the feature is not enabled or not verified; null when it is both.
	Reason *string `json:"reason" example:"not_available"`
}

// Web3CapabilitiesView is GET /api/v1/web3/capabilities.
type Web3CapabilitiesView struct {
	// Environment is the environment (test or live) the answer is for.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Network is the CAIP-2 id of the environment's cluster; null before the cluster was read.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Features are the chain features' availability.
	Features []Web3FeatureView `json:"features"`
}

// ClusterHealthView is the cluster as the newest verification run saw it;
// no route calls the chain per request. Only what a run observed is
// reported: configuration alone is "configured", never "ok".
type ClusterHealthView struct {
	// Status is not_configured when the environment has no cluster;
	// configured when it has one that no run has read (before any run, or
	// when the newest run stopped before the chain, e.g. no mint is
	// configured); ok when the newest run read the configured network;
	// unhealthy when the node was behind; unreachable when it could not be
	// reached; mismatch when it answered for another network than the one
	// configured. observedAt is set for every observed status.
	Status string `json:"status" example:"ok" enum:"not_configured,configured,ok,unhealthy,unreachable,mismatch"`
	// Slot is the slot of the newest read; LagSeconds is how long ago its
	// block was produced, as of the answer.
	Slot *uint64 `json:"slot" example:"312000000"`
	// BlockTime is the block time of that slot; null when unknown.
	BlockTime *time.Time `json:"blockTime"`
	// LagSeconds is how many seconds before the answer the newest read's
	// block was produced; null when its block time is unknown.
	LagSeconds *int64 `json:"lagSeconds" example:"4"`
	// ObservedAt is when the newest run read the cluster; null before any run.
	ObservedAt *time.Time `json:"observedAt"`
}

// ProgramIDsView lists the programs the platform uses.
type ProgramIDsView struct {
	// System is the System program's address (base58).
	System string `json:"system" example:"11111111111111111111111111111111"`
	// Token2022 is the Token-2022 program's address (base58).
	Token2022 string `json:"token2022" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// AssociatedToken is the Associated Token Account program's address (base58).
	AssociatedToken string `json:"associatedToken" example:"ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"`
	// Memo is the Memo program's address (base58).
	Memo string `json:"memo" example:"MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"`
	// ComputeBudget is the Compute Budget program's address (base58).
	ComputeBudget string `json:"computeBudget" example:"ComputeBudget111111111111111111111111111111"`
}

// Web3DeploymentView is GET /api/v1/web3/deployment.
type Web3DeploymentView struct {
	// Environment is the environment (test or live) the answer is for.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Cluster is the Solana cluster the environment is configured with.
	Cluster string `json:"cluster" example:"mainnet" enum:"mainnet,devnet,testnet,localnet"`
	// Network is the CAIP-2 id read from the cluster's genesis hash; null before the cluster was
	// read.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Configured is true when the environment has a cluster.
	Configured bool `json:"configured" example:"true"`
	// Health is the cluster as the newest verification run saw it.
	Health ClusterHealthView `json:"health"`
	// Programs are the programs the platform uses.
	Programs ProgramIDsView `json:"programs"`
	// Token is the token's deployment state.
	Token TokenDeploymentLine `json:"token"`
}

// TokenDeploymentLine is the token's deployment state in the chain views.
type TokenDeploymentLine struct {
	// State is the deployment state.
	State string `json:"state" example:"PRE_DEPLOYMENT"`
	// Mint is the configured mint (base58); null when none is configured.
	Mint *string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Verified is true when a verification run of the current configuration passed.
	Verified bool `json:"verified" example:"false"`
	// ProductionReady is true only for a mainnet mint that a passing run verified and the
	// operator declared launched.
	ProductionReady bool `json:"productionReady" example:"false"`
}

// ChainIntegrationView is GET /api/v1/integrations/chain: the safe status
// of the chain features. RPC URLs (they often carry provider keys) are never
// part of it.
type ChainIntegrationView struct {
	// Environment is the environment (test or live) the answer is for.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Provider is the chain, always solana.
	Provider string `json:"provider" example:"solana"`
	// Cluster is the Solana cluster the environment is configured with.
	Cluster string `json:"cluster" example:"mainnet" enum:"mainnet,devnet,testnet,localnet"`
	// Network is the CAIP-2 id read from the cluster's genesis hash; null before the cluster was
	// read.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Configured is true when the environment has a cluster.
	Configured bool `json:"configured" example:"true"`
	// Health is the cluster as the newest verification run saw it.
	Health ClusterHealthView `json:"health"`
	// Token is the token's deployment state.
	Token TokenDeploymentLine `json:"token"`
	// Features are the chain features' availability.
	Features []Web3FeatureView `json:"features"`
}

// notBuilt are the spec's chain features other than the token registry.
// Each is reported disabled with reason not_available unless this host
// serves it: wallet verification when the wallet service is configured,
// transaction intents and chain payments when the payment path is,
// cross-chain transfers when their service is built (with the state its
// readiness runs give), swap when the swap domain is built (with the
// state its settings and registry runs give).
var notBuilt = []string{"wallet_verification", "transaction_intents", "chain_payments", "swap", "cross_chain_transfers",
	"payment_required_protocol", "zk_verification"}

// chainFeatures says which built chain features serve the environments.
type chainFeatures struct {
	// wallet is wallet verification (it needs no cluster).
	wallet bool
	// paymentsFunc reports whether an environment takes transaction intents
	// and chain payment requests (a cluster and a treasury).
	paymentsFunc func(access.Environment) bool
	// zkFunc reports an environment's proof verifier (web3/zk).
	zkFunc func(access.Environment) zk.Availability
	// crossChainFunc reads the cross-chain transfers' line of an
	// environment (its readiness runs); crossChain is its answer for the
	// request at hand.
	crossChainFunc func(ctx context.Context, tx Tx, env access.Environment) (Web3FeatureView, error)
	crossChain     *Web3FeatureView
	// paymentRequired is the payment-required protocol; nil when not
	// built. paymentRequiredState is its state in the caller's
	// environment, read per request (nil for the document's example).
	paymentRequired      *x402.Service
	paymentRequiredState *x402.Capability
	// swapFunc reads the swap line of an environment (the swap domain's
	// capability: its settings and the newest run of its registry); nil
	// when swap is not built. swap is its answer for the request at hand.
	swapFunc func(ctx context.Context, tx Tx, env access.Environment) (Web3FeatureView, error)
	swap     *Web3FeatureView
}

// read returns cf with the states of env that are read per request from
// their owners' stores: cross-chain transfers, the payment-required
// protocol and swap.
func (cf chainFeatures) read(ctx context.Context, tx Tx, env access.Environment) (chainFeatures, error) {
	if cf.crossChainFunc != nil {
		x, err := cf.crossChainFunc(ctx, tx, env)
		if err != nil {
			return chainFeatures{}, err
		}
		cf.crossChain = &x
	}
	if cf.paymentRequired != nil {
		pr, err := cf.paymentRequired.Capability(ctx, tx, env)
		if err != nil {
			return chainFeatures{}, err
		}
		cf.paymentRequiredState = &pr
	}
	if cf.swapFunc != nil {
		sw, err := cf.swapFunc(ctx, tx, env)
		if err != nil {
			return chainFeatures{}, err
		}
		cf.swap = &sw
	}
	return cf, nil
}

func web3Features(svc *token.Service, cf chainFeatures, v token.View) []Web3FeatureView {
	hasChain := svc.HasChain(v.Environment)
	reg := Web3FeatureView{Feature: "token_registry", Enabled: hasChain, Configured: v.Config.Configured() && hasChain, Verified: v.Verified()}
	switch {
	case !hasChain:
		reg.Reason = optional("cluster_not_configured")
	case !v.Config.Configured():
		reg.Reason = optional("mint_not_configured")
	case !v.Verified():
		reg.Reason = optional("deployment_not_verified")
	}
	out := []Web3FeatureView{reg}
	if cf.wallet {
		// Sign-In With Solana needs nothing on chain: nothing was proven, so
		// nothing is reported verified.
		out = append(out, Web3FeatureView{Feature: "wallet_verification", Enabled: true, Configured: true})
	}
	built := map[string]bool{"wallet_verification": cf.wallet}
	if cf.paymentsFunc != nil {
		on := cf.paymentsFunc(v.Environment)
		for _, f := range []string{"transaction_intents", "chain_payments"} {
			built[f] = true
			// Payments are verified when the registry's mint is: the
			// token the rail moves is proven on the cluster.
			fv := Web3FeatureView{Feature: f, Enabled: on, Configured: on, Verified: on && v.Verified()}
			switch {
			case !svc.HasChain(v.Environment):
				fv.Reason = optional("cluster_not_configured")
			case !on:
				fv.Reason = optional("treasury_not_configured")
			case !v.Verified():
				fv.Reason = optional("deployment_not_verified")
			}
			out = append(out, fv)
		}
	}
	if cf.zkFunc != nil {
		built["zk_verification"] = true
		out = append(out, zkFeature(cf.zkFunc(v.Environment)))
	}
	if cf.crossChain != nil {
		built["cross_chain_transfers"] = true
		out = append(out, *cf.crossChain)
	}
	if pr := cf.paymentRequiredState; pr != nil {
		// Configured is not verified: nothing is offered until the
		// facilitator's check of the configuration passed.
		built["payment_required_protocol"] = true
		fv := Web3FeatureView{Feature: "payment_required_protocol", Enabled: pr.Configured && pr.Verified, Configured: pr.Configured,
			Verified: pr.Verified, Reason: optional(pr.Reason)}
		out = append(out, fv)
	}
	if cf.swap != nil {
		built["swap"] = true
		out = append(out, *cf.swap)
	}
	for _, f := range notBuilt {
		if built[f] {
			continue
		}
		out = append(out, Web3FeatureView{Feature: f, Reason: optional("not_available")})
	}
	return out
}

func clusterHealth(svc *token.Service, v token.View, now time.Time) ClusterHealthView {
	if !svc.HasChain(v.Environment) {
		return ClusterHealthView{Status: "not_configured"}
	}
	r := v.Latest
	if r == nil || r.ErrorCode == token.ErrorNotConfigured {
		return ClusterHealthView{Status: "configured"}
	}
	at := r.FinishedAt
	h := ClusterHealthView{Status: "ok", ObservedAt: &at}
	switch r.ErrorCode {
	case "":
	case token.ErrorNodeBehind:
		h.Status = "unhealthy"
	case token.ErrorNetworkMismatch:
		h.Status = "mismatch"
	default: // token.ErrorChainUnavailable, and any code added later
		h.Status = "unreachable"
	}
	if r.Slot != nil {
		h.Slot, h.BlockTime = r.Slot, r.BlockTime
		if r.BlockTime != nil {
			lag := int64(now.Sub(*r.BlockTime) / time.Second)
			h.LagSeconds = &lag
		}
	}
	return h
}

func tokenLine(v token.View) TokenDeploymentLine {
	return TokenDeploymentLine{State: string(v.State), Mint: optional(v.Config.Mint), Verified: v.Verified(), ProductionReady: v.ProductionReady()}
}

func web3Routes(svc *token.Service, cf chainFeatures, clock transport.Clock) []Route {
	if svc == nil {
		return nil
	}
	read := func(build func(v token.View, cf chainFeatures) any) func(ctx context.Context, c *Call) (any, error) {
		return func(ctx context.Context, c *Call) (any, error) {
			v, err := svc.View(ctx, callerEnvironment(c), c.Tx)
			if err != nil {
				return nil, err
			}
			rcf, err := cf.read(ctx, c.Tx, v.Environment)
			if err != nil {
				return nil, err
			}
			return build(v, rcf), nil
		}
	}
	caps := func(v token.View, cf chainFeatures) any {
		return Web3CapabilitiesView{Environment: string(v.Environment), Network: optional(v.Network()), Features: web3Features(svc, cf, v)}
	}
	deploy := func(v token.View, _ chainFeatures) any {
		return Web3DeploymentView{Environment: string(v.Environment), Cluster: string(v.Config.Cluster), Network: optional(v.Network()),
			Configured: svc.HasChain(v.Environment), Health: clusterHealth(svc, v, clock.Now()), Token: tokenLine(v),
			Programs: ProgramIDsView{System: "11111111111111111111111111111111", Token2022: token.ProgramID(),
				AssociatedToken: "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL", Memo: "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
				ComputeBudget: "ComputeBudget111111111111111111111111111111"}}
	}
	integ := func(v token.View, cf chainFeatures) any {
		return ChainIntegrationView{Environment: string(v.Environment), Provider: "solana", Cluster: string(v.Config.Cluster),
			Network: optional(v.Network()), Configured: svc.HasChain(v.Environment), Health: clusterHealth(svc, v, clock.Now()),
			Token: tokenLine(v), Features: web3Features(svc, cf, v)}
	}
	empty := token.View{Environment: "live", State: token.PreDeployment, Config: token.Config{Cluster: "mainnet"}}
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/web3/capabilities", OperationID: "getWeb3Capabilities", Tag: transport.TagWeb3,
			Summary: "List the chain features and their availability",
			Description: "Each chain feature with enabled, configured, verified and the reason when not enabled. Enablement is " +
				"separate from deployment. Features this release does not serve are disabled with reason not_available. " +
				"payment_required_protocol is configured when the environment has a facilitator, a cluster and resources, " +
				"verified when the newest check of that configuration passed, and enabled when both; its reason is " +
				"not_configured, not_checked or the failed check's reason. swap is configured when the environment has a cluster, " +
				"a route provider (the swap aggregator), a published trusted-token registry, fee policy and settings; verified " +
				"when the newest run of the current registry read the cluster and matched at least two of its mints; enabled " +
				"when both and swaps are not paused; its reason is the settings' reason (cluster_not_configured, " +
				"route_provider_not_configured, ...), not_checked, deployment_not_verified, disabled_by_policy or " +
				"route_provider_circuit_open." + tokenEnvNote,
			Auth: transport.AuthPublic, OptionalAuth: true, Response: caps(empty, cf).(Web3CapabilitiesView), Handle: read(caps)},
		{Method: http.MethodGet, Pattern: "/api/v1/web3/deployment", OperationID: "getWeb3Deployment", Tag: transport.TagWeb3,
			Summary: "Get the chain deployment",
			Description: "The caller's environment's cluster: its network as CAIP-2 (read from the genesis hash), its health as " +
				"the newest background read saw it (slot and lag), the program ids the platform uses and the token's deployment " +
				"state. The RPC URL is never returned." + tokenEnvNote,
			Auth: transport.AuthPublic, OptionalAuth: true, Response: Web3DeploymentView{Environment: "live", Cluster: "mainnet",
				Health: ClusterHealthView{Status: "not_configured"}, Token: tokenLine(empty)}, Handle: read(deploy)},
		{Method: http.MethodGet, Pattern: "/api/v1/integrations/chain", OperationID: "getChainIntegration", Tag: transport.TagWallet,
			Summary: "Get the chain integration's status",
			Description: "The safe capability and deployment status of the chain features: cluster kind, network, health, token " +
				"state and features. No RPC URL or provider key is ever part of it." + tokenEnvNote,
			Auth: transport.AuthPublic, OptionalAuth: true, Response: ChainIntegrationView{Environment: "live", Provider: "solana", Cluster: "mainnet",
				Health: ClusterHealthView{Status: "not_configured"}, Token: tokenLine(empty), Features: web3Features(svc, cf, empty)}, Handle: read(integ)},
	}
}
