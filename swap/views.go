package swap

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Verification statuses of a token in TokensView (TokenVerification).
const (
	// TokenPending: no run has read the entry's mint yet.
	TokenPending = "PENDING"
)

// TokensView is an environment's trusted-token registry as the tokens
// route shows it: each entry with what the newest reading of its mint on
// the environment's cluster showed. An entry is executable only when that
// reading MATCHED; a registry no run could read yet lists every entry as
// PENDING and none as executable.
type TokensView struct {
	// Environment is the caller's environment.
	Environment access.Environment
	// RegistryVersion and RegistryHash name the registry's current policy
	// version.
	RegistryVersion int
	RegistryHash    string
	// Network is the CAIP-2 id of the cluster the newest readable run
	// read ("" before any).
	Network string
	// VerifiedAt is when that run ended (nil before any).
	VerifiedAt *time.Time
	// Tokens are the registry's entries, in registry order.
	Tokens []TokenView
}

// TokenView is one registry entry with its verification.
type TokenView struct {
	Token
	// Executable reports that quotes may use the token.
	Executable bool
	// Check is the newest reading of the mint (Status PENDING and nothing
	// else before any).
	Check MintCheck
}

// Tokens returns env's registry with its verification, read through st.
// SWAP_NOT_CONFIGURED when env has no cluster or no registry: the list is
// never empty or optimistic in its place.
func (s *Service) Tokens(ctx context.Context, st Store, env access.Environment) (TokensView, error) {
	const op = "swap.Tokens"
	if s.cfg.Environments[env].Chain == nil {
		return TokensView{}, notConfigured(op, "cluster_not_configured")
	}
	var reg Registry
	ver, ok, err := current(ctx, st, env, PolicyTokens, &reg)
	if err != nil {
		return TokensView{}, fault.Wrap(op, err)
	}
	if !ok {
		return TokensView{}, notConfigured(op, "registry_not_published")
	}
	v := TokensView{Environment: env, RegistryVersion: ver.Version, RegistryHash: ver.Hash, Tokens: make([]TokenView, 0, len(reg.Tokens))}
	run, err := st.SwapRegistryRunLatest(ctx, env, ver.Version)
	switch {
	case err == nil:
		v.Network = run.Network
		at := run.CheckedAt
		v.VerifiedAt = &at
	case fault.Is(err, fault.NotFound):
	default:
		return TokensView{}, fault.Wrap(op, err)
	}
	for _, t := range reg.Tokens {
		tv := TokenView{Token: t, Check: MintCheck{Mint: t.Mint, Status: TokenPending}}
		if c, ok := run.Check(t.Mint); ok {
			tv.Check = c
			tv.Executable = c.Status == MintMatched
		}
		v.Tokens = append(v.Tokens, tv)
	}
	return v, nil
}

// notConfigured is SWAP_NOT_CONFIGURED with its reason.
func notConfigured(op, reason string) error {
	return fault.E(op, fault.SwapNotConfigured, "Swaps are not configured in this environment.").With("reason", reason)
}

// Statuses of SettingsView.Status.
const (
	// StatusActive: quotes are served.
	StatusActive = "ACTIVE"
	// StatusPaused: quotes answer SWAP_PAUSED (disabled by policy, or the
	// route provider's breaker is open).
	StatusPaused = "PAUSED"
	// StatusNotConfigured: quotes answer SWAP_NOT_CONFIGURED.
	StatusNotConfigured = "NOT_CONFIGURED"
)

// SettingsView is an environment's swap settings as the settings route
// shows them: the policies in force with their versions, and the state of
// the cluster, the registry and the route provider.
type SettingsView struct {
	// Environment is the caller's environment.
	Environment access.Environment
	// Status is ACTIVE, PAUSED or NOT_CONFIGURED; StatusReason says why
	// when it is not ACTIVE.
	Status       string
	StatusReason string
	// Settings is the swap.settings policy in force and its version.
	Settings        Settings
	SettingsVersion int
	// ServiceFeeBps is the fee policy's rate; FeePolicyVersion its
	// version (0 when none is published) and FeeRecipient its wallet.
	ServiceFeeBps    int
	FeePolicyVersion int
	FeeRecipient     string
	// RegistryVersion is the registry's current version (0 when none).
	RegistryVersion int
	// Network is the CAIP-2 id the newest readable registry run observed
	// ("" before any).
	Network string
	// Provider is the route provider's name ("" when none), and Breaker
	// its circuit breaker.
	Provider string
	Breaker  BreakerState
}

// Settings returns env's settings view, read through st. The policies are
// read, never assumed: a store that cannot be read is an error.
func (s *Service) Settings(ctx context.Context, st Store, env access.Environment) (SettingsView, error) {
	ps, err := s.policies(ctx, st, env)
	return ps.view, err
}

// policyState is what one read of an environment's swap policies found:
// the settings view and the registry, fee policy and registry run behind
// it, so that a quote reads each once.
type policyState struct {
	view     SettingsView
	registry Registry
	regVer   int
	run      RegistryRun
	fees     FeePolicy
	feesVer  int
}

// policies reads env's swap policies and the registry's newest readable
// run once, and derives the settings view from them.
func (s *Service) policies(ctx context.Context, st RegistryStore, env access.Environment) (policyState, error) {
	const op = "swap.Settings"
	e, configured := s.cfg.Environments[env]
	var ps policyState
	v := &ps.view
	*v = SettingsView{Environment: env, ServiceFeeBps: ServiceFeeBps}
	if e.Routes != nil {
		v.Provider = e.Routes.Name()
	}
	ver, ok, err := current(ctx, st, env, PolicySettings, &v.Settings)
	if err != nil {
		return policyState{}, fault.Wrap(op, err)
	}
	if ok {
		v.SettingsVersion = ver.Version
	}
	fver, feesOK, err := current(ctx, st, env, PolicyFees, &ps.fees)
	if err != nil {
		return policyState{}, fault.Wrap(op, err)
	}
	if feesOK {
		v.ServiceFeeBps, v.FeePolicyVersion, v.FeeRecipient = ps.fees.ServiceFeeBps, fver.Version, ps.fees.FeeRecipient
		ps.feesVer = fver.Version
	}
	rver, regOK, err := current(ctx, st, env, PolicyTokens, &ps.registry)
	if err != nil {
		return policyState{}, fault.Wrap(op, err)
	}
	if regOK {
		v.RegistryVersion, ps.regVer = rver.Version, rver.Version
		run, err := st.SwapRegistryRunLatest(ctx, env, rver.Version)
		switch {
		case err == nil:
			v.Network, ps.run = run.Network, run
		case !fault.Is(err, fault.NotFound):
			return policyState{}, fault.Wrap(op, err)
		}
	}
	now := s.cfg.Clock.Now()
	if b := s.breakers[env]; b != nil {
		v.Breaker = b.State(now)
	} else {
		v.Breaker = BreakerState{State: BreakerClosed}
	}
	v.Status, v.StatusReason = StatusActive, ""
	switch {
	case !configured || e.Chain == nil:
		v.Status, v.StatusReason = StatusNotConfigured, "cluster_not_configured"
	case e.Routes == nil:
		v.Status, v.StatusReason = StatusNotConfigured, "route_provider_not_configured"
	case !regOK:
		v.Status, v.StatusReason = StatusNotConfigured, "registry_not_published"
	case !feesOK:
		v.Status, v.StatusReason = StatusNotConfigured, "fee_recipient_not_configured"
	case !ok:
		v.Status, v.StatusReason = StatusNotConfigured, "settings_not_published"
	case !v.Settings.SwapEnabled:
		v.Status, v.StatusReason = StatusPaused, "disabled_by_policy"
	case v.Breaker.State == BreakerOpen:
		v.Status, v.StatusReason = StatusPaused, "route_provider_circuit_open"
	}
	return ps, nil
}

// Reasons of Capability.Reason besides the settings' StatusReason.
const (
	// ReasonNotChecked: no run of the current registry version has read
	// the environment's cluster yet.
	ReasonNotChecked = "not_checked"
	// ReasonDeploymentNotVerified: the newest readable run of the current
	// registry matched fewer than two entries' mints on the cluster, so no
	// swap has an executable input and output.
	ReasonDeploymentNotVerified = "deployment_not_verified"
)

// Capability is swaps' state in an environment, as the chain capability
// and feature views report it: configured is not verified, and verified
// is not enabled. It is derived from the same reading as the settings
// view and the quote's checks, never from configuration alone.
type Capability struct {
	// Configured reports a cluster, a route provider (the aggregator
	// adapter), a published registry, fee policy and settings: a settings
	// Status other than NOT_CONFIGURED.
	Configured bool
	// Verified reports that the newest run of the current registry
	// version read the environment's cluster and matched at least two
	// entries' mints there (a swap's input and output): the trusted
	// tokens' deployment is proven on the cluster.
	Verified bool
	// Enabled reports that quotes are served: configured, verified and
	// ACTIVE (not paused by policy or by the route provider's breaker).
	Enabled bool
	// Reason says why it is not enabled, in that order: the settings'
	// StatusReason when not configured (cluster_not_configured,
	// route_provider_not_configured, ...), not_checked or
	// deployment_not_verified when not verified, the pause's reason
	// (disabled_by_policy, route_provider_circuit_open); "" when enabled.
	Reason string
}

// Capability returns env's swap capability, read through st as Settings
// reads it. A store that cannot be read is an error.
func (s *Service) Capability(ctx context.Context, st RegistryStore, env access.Environment) (Capability, error) {
	ps, err := s.policies(ctx, st, env)
	if err != nil {
		return Capability{}, err
	}
	matched := 0
	for _, t := range ps.registry.Tokens {
		if c, ok := ps.run.Check(t.Mint); ok && c.Status == MintMatched {
			matched++
		}
	}
	// A run is evidence of the cluster it read: without a cluster now,
	// nothing is verified.
	read := ps.run.ID != "" && s.cfg.Environments[env].Chain != nil
	c := Capability{Configured: ps.view.Status != StatusNotConfigured, Verified: read && matched >= 2}
	switch {
	case !c.Configured:
		c.Reason = ps.view.StatusReason
	case !read:
		c.Reason = ReasonNotChecked
	case !c.Verified:
		c.Reason = ReasonDeploymentNotVerified
	case ps.view.Status != StatusActive:
		c.Reason = ps.view.StatusReason
	default:
		c.Enabled = true
	}
	return c, nil
}
