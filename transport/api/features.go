package api

import (
	"context"
	"net/http"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/architecture"
	"github.com/creatormusic/platform/generation"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/x402"
)

// FeatureEnvironmentView is a feature's availability in one environment.
type FeatureEnvironmentView struct {
	// Environment is test or live.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Enabled is true when the feature serves the environment for the
	// caller's workspace: its flag is on and its owner reports it enabled.
	Enabled bool `json:"enabled" example:"false"`
	// Configured is true when the host configured the feature for the environment.
	Configured bool `json:"configured" example:"false"`
	// Verified is true when a check proved the feature's prerequisites (on
	// chain, at a facilitator); a feature with nothing to prove is never verified.
	Verified bool `json:"verified" example:"false"`
	// Reason is enabled when the feature is enabled, else why not:
	// disabled_by_flag, not_configured, not_available (not built on this
	// host), deployment_not_verified, deployment_not_live,
	// methodology_not_verified, cluster_not_configured,
	// treasury_not_configured, mint_not_configured, not_checked, or the
	// reason its owning domain's check gave. Never a secret or an address
	// of an internal service.
	Reason string `json:"reason" example:"not_configured"`
}

// FeatureView is one feature of the platform, per environment.
type FeatureView struct {
	// Feature names the feature.
	Feature string `json:"feature" example:"music_generation"`
	// Flag is the feature flag that gates it; null when no flag does.
	Flag *string `json:"flag" example:"music.generation"`
	// FlagEnabled is whether that flag is on for the caller's workspace;
	// null when no flag gates the feature.
	FlagEnabled *bool `json:"flagEnabled" example:"true"`
	// Environments are its availability in test and in live.
	Environments []FeatureEnvironmentView `json:"environments"`
}

// FeaturesView answers GET /api/v1/features.
type FeaturesView struct {
	// Features are the platform's features, each per environment.
	Features []FeatureView `json:"features"`
}

// featureSource is one feature: its flag ("" for none) and how its owner
// reports its availability in an environment.
type featureSource struct {
	name string
	flag string
	read func(ctx context.Context, c *Call, env access.Environment, chainLines map[string]Web3FeatureView, v *token.View) (architecture.Availability, error)
}

func fromWeb3(f Web3FeatureView) architecture.Availability {
	a := architecture.Availability{Enabled: f.Enabled, Configured: f.Configured, Verified: f.Verified}
	if f.Reason != nil {
		a.Reason = *f.Reason
	}
	return a
}

// featureSources lists the platform's features and where each one's
// availability is read: the owning service's own configuration and
// verification state, never a constant.
func featureSources(s Services) []featureSource {
	built := func(ok bool) architecture.Availability {
		if !ok {
			return architecture.Availability{Reason: architecture.ReasonNotAvailable}
		}
		return architecture.Availability{Enabled: true, Configured: true}
	}
	chainLine := func(name string) func(context.Context, *Call, access.Environment, map[string]Web3FeatureView, *token.View) (architecture.Availability, error) {
		return func(_ context.Context, _ *Call, _ access.Environment, lines map[string]Web3FeatureView, _ *token.View) (architecture.Availability, error) {
			l, ok := lines[name]
			if !ok {
				return architecture.Availability{Reason: architecture.ReasonNotAvailable}, nil
			}
			return fromWeb3(l), nil
		}
	}
	tokenFeature := func(f func(token.View) token.Feature) func(context.Context, *Call, access.Environment, map[string]Web3FeatureView, *token.View) (architecture.Availability, error) {
		return func(_ context.Context, _ *Call, env access.Environment, _ map[string]Web3FeatureView, v *token.View) (architecture.Availability, error) {
			if v == nil {
				return architecture.Availability{Reason: architecture.ReasonNotAvailable}, nil
			}
			tf := f(*v)
			return architecture.Availability{Enabled: tf.Enabled, Configured: v.Config.Configured() && s.Token.HasChain(env), Verified: v.Verified(),
				Reason: tf.Reason}, nil
		}
	}
	return []featureSource{
		{"music_generation", genop.FeatureGenerate, func(_ context.Context, _ *Call, env access.Environment, _ map[string]Web3FeatureView, _ *token.View) (architecture.Availability, error) {
			if s.Generation == nil || s.Providers == nil {
				return built(false), nil
			}
			for _, id := range []generation.ProviderID{generation.ProviderA, generation.ProviderB} {
				if _, err := s.Providers.Adapter(env, id); err == nil {
					return architecture.Availability{Enabled: true, Configured: true}, nil
				}
			}
			return architecture.Availability{Reason: architecture.ReasonNotConfigured}, nil
		}},
		{"sound_engine", sound.FeatureEngine, func(context.Context, *Call, access.Environment, map[string]Web3FeatureView, *token.View) (architecture.Availability, error) {
			return built(s.Sound != nil), nil
		}},
		{"marketplace", marketplace.FeatureMarketplace, func(context.Context, *Call, access.Environment, map[string]Web3FeatureView, *token.View) (architecture.Availability, error) {
			return built(s.Marketplace != nil), nil
		}},
		// Swap's line is the web3 capabilities route's: the swap domain's
		// capability (package swap, Capability).
		{"swap", swap.FeatureSwap, chainLine("swap")},
		{"reward_payouts", "", func(ctx context.Context, c *Call, env access.Environment, _ map[string]Web3FeatureView, _ *token.View) (architecture.Availability, error) {
			if s.Rewards == nil {
				return built(false), nil
			}
			p, err := s.Rewards.Payouts(ctx, c.Tx, env)
			if err != nil {
				return architecture.Availability{}, err
			}
			return architecture.Availability{Enabled: p.Enabled, Configured: p.Configured, Verified: p.Verified, Reason: p.Reason}, nil
		}},
		{"cross_chain_transfers", cctp.FeatureCCTP, chainLine("cross_chain_transfers")},
		{"payment_required_protocol", x402.FeaturePayments, chainLine("payment_required_protocol")},
		{"token_registry", "", chainLine("token_registry")},
		{"wallet_verification", "", chainLine("wallet_verification")},
		{"transaction_intents", "", chainLine("transaction_intents")},
		{"chain_payments", "", chainLine("chain_payments")},
		{"zk_verification", "", chainLine("zk_verification")},
		{"token_transfers", "", tokenFeature(token.View.Transfers)},
		{"circulating_supply", "", tokenFeature(token.View.CirculatingFeature)},
	}
}

// chainLinesOf reads the chain features of env as GET /web3/capabilities
// does: the token registry's view and each built feature's own state.
func chainLinesOf(ctx context.Context, c *Call, s Services, cf chainFeatures, env access.Environment) (map[string]Web3FeatureView, *token.View, error) {
	lines := map[string]Web3FeatureView{}
	if s.Token == nil {
		return lines, nil, nil
	}
	v, err := s.Token.View(ctx, env, c.Tx)
	if err != nil {
		return nil, nil, err
	}
	rcf, err := cf.read(ctx, c.Tx, env)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range web3Features(s.Token, rcf, v) {
		lines[f.Feature] = f
	}
	return lines, &v, nil
}

// featureRoutes serve the features' enablement per environment (spec,
// Architecture and operations: feature and deployment status, sanitized).
// Each line is read from its owner's configuration and verification state
// and gated by the caller's workspace's flag; only booleans and reasons
// are answered, never a URL, key or secret.
func featureRoutes(s Services, cf chainFeatures) []Route {
	sources := featureSources(s)
	flag := "music.generation"
	on := true
	ex := FeaturesView{Features: []FeatureView{{Feature: "music_generation", Flag: &flag, FlagEnabled: &on,
		Environments: []FeatureEnvironmentView{{Environment: "test", Enabled: true, Configured: true, Reason: architecture.ReasonEnabled},
			{Environment: "live", Reason: architecture.ReasonNotConfigured}}}}}
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/features", OperationID: "getFeatures", Tag: transport.TagArchitecture,
			Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Idempotency: transport.IdempotencyNone,
			Summary: "List the features and their enablement per environment",
			Description: "Each feature of the platform with its enablement in test and in live, for the caller's workspace: enabled only " +
				"when its flag (if one gates it) is on for the workspace and its owning domain reports it enabled from its configuration " +
				"and verification state; configured is not verified, and verified is not enabled. reason is enabled, or why not " +
				"(disabled_by_flag, not_configured, not_available, deployment_not_verified, methodology_not_verified, ...). swap is " +
				"the swap line of GET /api/v1/web3/capabilities (the swap domain's settings and registry runs). reward_payouts is " +
				"configured when the environment has a reward treasury (a cluster and its signer), verified once a funding " +
				"reconciliation read that treasury's token account on the cluster (reason not_checked before), and enabled when " +
				"both; the cluster is not called to answer. Sanitized: " +
				"no URL, key, address of an internal service or secret is part of it. Any member or key of a workspace reads it.",
			Response: ex,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				out := FeaturesView{Features: make([]FeatureView, 0, len(sources))}
				type envState struct {
					lines map[string]Web3FeatureView
					view  *token.View
				}
				envs := []access.Environment{access.Test, access.Live}
				states := map[access.Environment]envState{}
				for _, env := range envs {
					lines, v, err := chainLinesOf(ctx, c, s, cf, env)
					if err != nil {
						return nil, err
					}
					states[env] = envState{lines, v}
				}
				for _, src := range sources {
					fv := FeatureView{Feature: src.name}
					flagOn := true
					if src.flag != "" {
						flagOn = c.Authority.FlagEnabled(src.flag)
						fv.Flag, fv.FlagEnabled = optional(src.flag), &flagOn
					}
					for _, env := range envs {
						a, err := src.read(ctx, c, env, states[env].lines, states[env].view)
						if err != nil {
							return nil, err
						}
						a = architecture.Gate(src.flag != "", flagOn, a)
						fv.Environments = append(fv.Environments, FeatureEnvironmentView{Environment: string(env), Enabled: a.Enabled,
							Configured: a.Configured, Verified: a.Verified, Reason: a.Reason})
					}
					out.Features = append(out.Features, fv)
				}
				return out, nil
			}},
	}
}
