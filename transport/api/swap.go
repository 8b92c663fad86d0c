package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/transport"
)

// SwapTokenVerificationView is the newest reading of a registry entry's
// mint on the environment's cluster.
type SwapTokenVerificationView struct {
	// Status is MATCHED (the mint is what the registry says), MISMATCHED
	// (see reason) or PENDING (not read yet).
	Status string `json:"status" example:"MATCHED"`
	// Reason says why the entry is not MATCHED: mint_missing,
	// token_program_mismatch, not_a_mint, mint_not_initialized,
	// decimals_mismatch or unsafe_extension; null when MATCHED or PENDING.
	Reason *string `json:"reason" example:"decimals_mismatch"`
	// Detail adds what the reading found (the owner, the decimals, the
	// extension); null when there is nothing to add.
	Detail *string `json:"detail" example:"the mint has 9 decimals"`
	// TransferFeeBps is the mint's Token-2022 transfer fee rate at the
	// reading's epoch; null for a mint without one or before a reading.
	TransferFeeBps *int `json:"transferFeeBps" example:"200"`
	// Freezable reports a freeze authority on the mint (a risk shown, not
	// refused).
	Freezable bool `json:"freezable" example:"false"`
	// Mintable reports a mint authority on the mint (a risk shown, not
	// refused).
	Mintable bool `json:"mintable" example:"true"`
	// Slot is the context slot of the reading; null before one.
	Slot *uint64 `json:"slot" example:"312000123"`
	// CheckedAt is when the reading's run ended; null before one.
	CheckedAt *time.Time `json:"checkedAt"`
}

// SwapTokenView is one trusted token.
type SwapTokenView struct {
	// Mint is the mint address (base58).
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// TokenProgram is the program that owns the mint (base58).
	TokenProgram string `json:"tokenProgram" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// Decimals are the mint's decimals.
	Decimals int `json:"decimals" example:"9"`
	// Symbol is display data only: the mint, token program and decimals
	// identify a token.
	Symbol string `json:"symbol" example:"TOKEN"`
	// Name is display data only.
	Name string `json:"name" example:"Platform Token"`
	// LogoURI is an https URL of the token's logo (display data only);
	// null when none.
	LogoURI *string `json:"logoUri" example:"https://example.com/token.png"`
	// Executable reports that quotes may use the token: only while the
	// newest reading of its mint matched the registry.
	Executable bool `json:"executable" example:"true"`
	// Verification is that reading.
	Verification SwapTokenVerificationView `json:"verification"`
}

// SwapTokensView is GET /api/v1/swap/tokens.
type SwapTokensView struct {
	// Environment is the environment whose registry this is.
	Environment string `json:"environment" example:"test"`
	// RegistryVersion is the swap.tokens policy version in force; quotes
	// record it.
	RegistryVersion int `json:"registryVersion" example:"1"`
	// RegistryHash is the hex SHA-256 of that version's canonical
	// content.
	RegistryHash string `json:"registryHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Network is the CAIP-2 id of the cluster the newest readable run
	// read; null before any run read it.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// VerifiedAt is when that run ended; null before one.
	VerifiedAt *time.Time `json:"verifiedAt"`
	// Tokens are the registry's entries, in registry order.
	Tokens []SwapTokenView `json:"tokens"`
}

// SwapSlippageView bounds a quote's slippage, in basis points.
type SwapSlippageView struct {
	// DefaultBps applies when a quote request names none.
	DefaultBps int `json:"defaultBps" example:"50"`
	// MinBps is the least slippage a request may name.
	MinBps int `json:"minBps" example:"10"`
	// MaxBps is the most slippage a request may name.
	MaxBps int `json:"maxBps" example:"300"`
}

// SwapPriceImpactView holds the price-impact thresholds, in basis points.
type SwapPriceImpactView struct {
	// WarningBps flags a quote for the review screen.
	WarningBps int `json:"warningBps" example:"100"`
	// HardRejectBps refuses a quote (PRICE_IMPACT_EXCEEDED).
	HardRejectBps int `json:"hardRejectBps" example:"500"`
}

// SwapProviderView is a route provider's state.
type SwapProviderView struct {
	// ID names the provider.
	ID string `json:"id" example:"jupiter"`
	// Role is what the provider does: route (quotes and swap
	// instructions).
	Role string `json:"role" example:"route"`
	// State is available, or paused while its circuit breaker is open.
	State string `json:"state" example:"available"`
}

// SwapBreakerView is a circuit breaker's state.
type SwapBreakerView struct {
	// Name is what the breaker guards: route_provider:<id>.
	Name string `json:"name" example:"route_provider:jupiter"`
	// State is closed, open (calls refused with SWAP_PAUSED until
	// retryAt) or half_open (one call probes the provider).
	State string `json:"state" example:"closed"`
	// ConsecutiveFailures counts the provider's failures since its last
	// answer.
	ConsecutiveFailures int `json:"consecutiveFailures" example:"0"`
	// OpenedAt is when the current pause began; null when closed.
	OpenedAt *time.Time `json:"openedAt"`
	// RetryAt is when the current pause ends and one call may probe the
	// provider; null when closed.
	RetryAt *time.Time `json:"retryAt"`
}

// SwapSettingsView is GET /api/v1/swap/settings.
type SwapSettingsView struct {
	// Environment is the environment these settings govern.
	Environment string `json:"environment" example:"test"`
	// Status is ACTIVE, PAUSED (disabled by policy, or the route
	// provider's circuit breaker is open) or NOT_CONFIGURED.
	Status string `json:"status" example:"ACTIVE"`
	// StatusReason says why the status is not ACTIVE:
	// cluster_not_configured, route_provider_not_configured,
	// registry_not_published, fee_recipient_not_configured,
	// settings_not_published, disabled_by_policy or
	// route_provider_circuit_open; null when ACTIVE.
	StatusReason *string `json:"statusReason" example:"route_provider_circuit_open"`
	// ReleaseState is beta or general_availability.
	ReleaseState string `json:"releaseState" example:"beta"`
	// SwapEnabled is the policy's switch.
	SwapEnabled bool `json:"swapEnabled" example:"true"`
	// Network is the CAIP-2 id the registry's newest readable run read
	// from the cluster; null before one.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// ServiceFeeBps is the service fee taken from the gross input: 200
	// bps (2%).
	ServiceFeeBps int `json:"serviceFeeBps" example:"200"`
	// FeePolicyVersion is the fees.swap policy version quotes record;
	// null when none is published.
	FeePolicyVersion *int `json:"feePolicyVersion" example:"1"`
	// FeeRecipient is the wallet that receives the service fee; null when
	// none is configured.
	FeeRecipient *string `json:"feeRecipient" example:"Fee1111111111111111111111111111111111111111"`
	// Slippage bounds a quote's slippage.
	Slippage SwapSlippageView `json:"slippage"`
	// PriceImpact holds the price-impact thresholds.
	PriceImpact SwapPriceImpactView `json:"priceImpact"`
	// QuoteTTLSeconds is a quote's lifetime.
	QuoteTTLSeconds int `json:"quoteTtlSeconds" example:"30"`
	// SettingsVersion is the swap.settings policy version in force; null
	// when none is published.
	SettingsVersion *int `json:"settingsVersion" example:"1"`
	// RegistryVersion is the swap.tokens policy version in force; null
	// when none is published.
	RegistryVersion *int `json:"registryVersion" example:"1"`
	// Providers are the configured route providers.
	Providers []SwapProviderView `json:"providers"`
	// CircuitBreakers are their circuit breakers.
	CircuitBreakers []SwapBreakerView `json:"circuitBreakers"`
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// swapTokensView renders v.
func swapTokensView(v swap.TokensView) SwapTokensView {
	out := SwapTokensView{Environment: string(v.Environment), RegistryVersion: v.RegistryVersion, RegistryHash: v.RegistryHash,
		Network: optionalString(v.Network), VerifiedAt: v.VerifiedAt, Tokens: make([]SwapTokenView, 0, len(v.Tokens))}
	for _, t := range v.Tokens {
		tv := SwapTokenView{Mint: t.Mint, TokenProgram: t.TokenProgram, Decimals: int(t.Decimals), Symbol: t.Symbol, Name: t.Name,
			LogoURI: optionalString(t.LogoURI), Executable: t.Executable,
			Verification: SwapTokenVerificationView{Status: string(t.Check.Status), Reason: optionalString(t.Check.Reason),
				Detail: optionalString(t.Check.Detail), Freezable: t.Check.Freezable, Mintable: t.Check.Mintable}}
		if f := t.Check.TransferFeeBps; f != nil {
			bps := int(*f)
			tv.Verification.TransferFeeBps = &bps
		}
		if t.Check.Status != swap.TokenPending {
			slot := t.Check.Slot
			tv.Verification.Slot, tv.Verification.CheckedAt = &slot, v.VerifiedAt
		}
		out.Tokens = append(out.Tokens, tv)
	}
	return out
}

// swapSettingsView renders v.
func swapSettingsView(v swap.SettingsView) SwapSettingsView {
	s := v.Settings
	out := SwapSettingsView{Environment: string(v.Environment), Status: v.Status, StatusReason: optionalString(v.StatusReason),
		ReleaseState: s.ReleaseState, SwapEnabled: s.SwapEnabled, Network: optionalString(v.Network), ServiceFeeBps: v.ServiceFeeBps,
		FeePolicyVersion: optionalInt(v.FeePolicyVersion), FeeRecipient: optionalString(v.FeeRecipient),
		Slippage:        SwapSlippageView{DefaultBps: s.Slippage.DefaultBps, MinBps: s.Slippage.MinBps, MaxBps: s.Slippage.MaxBps},
		PriceImpact:     SwapPriceImpactView{WarningBps: s.PriceImpact.WarningBps, HardRejectBps: s.PriceImpact.HardRejectBps},
		QuoteTTLSeconds: s.QuoteTTLSeconds, SettingsVersion: optionalInt(v.SettingsVersion), RegistryVersion: optionalInt(v.RegistryVersion),
		Providers: []SwapProviderView{}, CircuitBreakers: []SwapBreakerView{}}
	if v.Provider != "" {
		state := "available"
		if v.Breaker.State == swap.BreakerOpen {
			state = "paused"
		}
		out.Providers = append(out.Providers, SwapProviderView{ID: v.Provider, Role: "route", State: state})
		out.CircuitBreakers = append(out.CircuitBreakers, SwapBreakerView{Name: "route_provider:" + v.Provider, State: v.Breaker.State,
			ConsecutiveFailures: v.Breaker.ConsecutiveFailures, OpenedAt: v.Breaker.OpenedAt, RetryAt: v.Breaker.RetryAt})
	}
	return out
}

// swapEnvNote says whose registry and settings a swap read shows.
const swapEnvNote = " Anonymous callers see the live environment's; a caller that sends an API key, access token or session sees its own " +
	"environment's (a test key: the test cluster's). Cache-Control: private, no-store."

// swapRoutes are the swap domain's routes.
func swapRoutes(svc *swap.Service) []Route {
	if svc == nil {
		return nil
	}
	read := func(summary, id, pattern, desc string, response any, errs []string, handle func(ctx context.Context, c *Call) (any, error)) Route {
		return Route{Method: http.MethodGet, Pattern: pattern, OperationID: id, Tag: transport.TagSwap, Summary: summary,
			Description: desc + swapEnvNote, Auth: transport.AuthPublic, OptionalAuth: true, Response: response, Errors: errs,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				c.Header().Set("Cache-Control", "private, no-store")
				return handle(ctx, c)
			}}
	}
	return []Route{
		read("List the trusted swap tokens", "listSwapTokens", "/api/v1/swap/tokens",
			"The environment's trusted-token registry (the swap.tokens policy version in force) with the newest reading of each "+
				"entry's mint on the environment's cluster. A token is identified by its mint, token program and decimals under "+
				"a registry version; symbol, name and logo are display only. An entry is executable only while that reading "+
				"matched (the mint exists, is owned by the token program, is initialized, has the registry's decimals and no "+
				"extension that lets anyone but the holder move, freeze, hook or reinterpret balances). Readings run in the "+
				"background (for a new registry version at start, then hourly), never per request; before the first, every "+
				"entry is PENDING and none is executable, and a reading that could not reach the cluster changes nothing. "+
				"An environment without a cluster or a registry is 503 SWAP_NOT_CONFIGURED with details.reason, never an "+
				"empty list.",
			SwapTokensView{Environment: "test", RegistryVersion: 1, RegistryHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				Tokens: []SwapTokenView{}},
			[]string{string(fault.SwapNotConfigured)},
			func(ctx context.Context, c *Call) (any, error) {
				v, err := svc.Tokens(ctx, c.Tx, callerEnvironment(c))
				if err != nil {
					return nil, err
				}
				return swapTokensView(v), nil
			}),
		read("Get the swap settings", "getSwapSettings", "/api/v1/swap/settings",
			"The swap policies in force and their versions (swap.settings: enablement, release state, slippage bounds, "+
				"price-impact thresholds, quote lifetime; fees.swap: the 200 bps service fee and its recipient; swap.tokens: the "+
				"registry version), the network the registry's newest reading observed, the route provider and its circuit "+
				"breaker (opened after repeated failures to answer; quotes then answer SWAP_PAUSED until it closes; per host), and "+
				"the resulting status: ACTIVE, PAUSED or NOT_CONFIGURED with its reason. Values never published are null.",
			swapSettingsView(swap.SettingsView{Environment: "test", Status: swap.StatusActive, Settings: swap.DefaultSettings(),
				ServiceFeeBps: swap.ServiceFeeBps, FeePolicyVersion: 1, SettingsVersion: 1, RegistryVersion: 1, Provider: "jupiter",
				Breaker: swap.BreakerState{State: swap.BreakerClosed}}),
			nil,
			func(ctx context.Context, c *Call) (any, error) {
				v, err := svc.Settings(ctx, c.Tx, callerEnvironment(c))
				if err != nil {
					return nil, err
				}
				return swapSettingsView(v), nil
			}),
	}
}
