package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
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
				"the resulting status: ACTIVE, PAUSED or NOT_CONFIGURED with its reason. Values never published are null. The "+
				"specification names provider states and circuit breakers without their shape; providers and circuitBreakers are "+
				"the platform's.",
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
		swapQuoteRoute(svc),
		swapIntentRoute(svc),
		swapSubmitRoute(svc),
		swapStatusRoute(svc),
		swapVerifyRoute(svc),
	}
}

// SwapQuoteRequest is the body of POST /api/v1/swap/quotes.
type SwapQuoteRequest struct {
	// InputMint is the mint paid with (a trusted, executable registry entry).
	InputMint string `json:"inputMint" example:"Mint111111111111111111111111111111111111111"`
	// OutputMint is the mint received (a trusted, executable registry entry).
	OutputMint string `json:"outputMint" example:"Usd1111111111111111111111111111111111111111"`
	// Amount is the gross input in whole units of the input token, a decimal string ("1.5"); the server
	// converts it with the mint's decimals as read from the chain. At most that many fractional digits,
	// no sign, no exponent.
	Amount string `json:"amount" example:"1.5"`
	// SlippageBps is the accepted slippage in basis points of the expected output, within the settings'
	// bounds; omitted, the settings' default applies.
	SlippageBps *int `json:"slippageBps,omitempty" example:"50"`
	// Wallet is the signed-in user's verified wallet, which pays, signs and receives.
	Wallet string `json:"wallet" example:"Wa11et1111111111111111111111111111111111111"`
}

// SwapRouteStepView is one hop of a quote's route.
type SwapRouteStepView struct {
	// Venue is the provider's label of the venue.
	Venue string `json:"venue" example:"Loopback CPMM"`
	// Pool is the venue's pool address.
	Pool string `json:"pool" example:"Poo11111111111111111111111111111111111111111"`
	// InputMint is the hop's input mint.
	InputMint string `json:"inputMint" example:"Mint111111111111111111111111111111111111111"`
	// OutputMint is the hop's output mint.
	OutputMint string `json:"outputMint" example:"Usd1111111111111111111111111111111111111111"`
	// InAtomic is the hop's input, atomic units, an integer string.
	InAtomic string `json:"inAtomic" example:"1470000000"`
	// OutAtomic is the hop's output, atomic units, an integer string.
	OutAtomic string `json:"outAtomic" example:"2925000"`
	// ShareBps is the share of the input routed through the hop (10000 is all of it).
	ShareBps int `json:"shareBps" example:"10000"`
}

// SwapFeeBreakdownView is every cost beside the swapped amounts.
type SwapFeeBreakdownView struct {
	// ServiceFeeBps is the service fee rate: 200 bps of the gross input.
	ServiceFeeBps int `json:"serviceFeeBps" example:"200"`
	// ServiceFeeMint is the mint the service fee is taken in: the input mint.
	ServiceFeeMint string `json:"serviceFeeMint" example:"Mint111111111111111111111111111111111111111"`
	// NetworkFeeLamports is the estimated signature fee, an integer string.
	NetworkFeeLamports string `json:"networkFeeLamports" example:"5000"`
	// PriorityFeeLamports is the estimated priority fee, an integer string; the intent states the prepared
	// transaction's own.
	PriorityFeeLamports string `json:"priorityFeeLamports" example:"14000"`
	// RentLamports is the rent of accounts the wallet funds (its output token account when it has none), an
	// integer string.
	RentLamports string `json:"rentLamports" example:"0"`
}

// SwapQuoteView is an immutable executable quote (POST /api/v1/swap/quotes).
type SwapQuoteView struct {
	// QuoteID identifies the quote.
	QuoteID string `json:"quoteId" example:"swq_0123456789abcdef0123456789abcdef"`
	// OperationID identifies the swap operation the quote starts.
	OperationID string `json:"operationId" example:"swp_0123456789abcdef0123456789abcdef"`
	// Status is the operation's state: QUOTED.
	Status string `json:"status" example:"QUOTED"`
	// Provider is the route provider.
	Provider string `json:"provider" example:"jupiter"`
	// Network is the cluster's CAIP-2 id, read from it when quoting.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Wallet is the wallet that pays and receives.
	Wallet string `json:"wallet" example:"Wa11et1111111111111111111111111111111111111"`
	// InputMint is the mint paid with.
	InputMint string `json:"inputMint" example:"Mint111111111111111111111111111111111111111"`
	// InputDecimals are the input mint's decimals as read from the chain.
	InputDecimals int `json:"inputDecimals" example:"9"`
	// OutputMint is the mint received.
	OutputMint string `json:"outputMint" example:"Usd1111111111111111111111111111111111111111"`
	// OutputDecimals are the output mint's decimals as read from the chain.
	OutputDecimals int `json:"outputDecimals" example:"6"`
	// GrossInputAtomic is what the wallet pays, atomic units, an integer string.
	GrossInputAtomic string `json:"grossInputAtomic" example:"1500000000"`
	// ServiceFeeAtomic is the service fee taken from the gross input: floor(gross × 200 / 10000).
	ServiceFeeAtomic string `json:"serviceFeeAtomic" example:"30000000"`
	// ExecutableInputAtomic is what is swapped: gross − service fee.
	ExecutableInputAtomic string `json:"executableInputAtomic" example:"1470000000"`
	// ExpectedOutputAtomic is the route's output for the executable input, before slippage.
	ExpectedOutputAtomic string `json:"expectedOutputAtomic" example:"2925000"`
	// MinimumOutputAtomic is the least output accepted: floor(expected × (10000 − slippageBps) / 10000).
	MinimumOutputAtomic string `json:"minimumOutputAtomic" example:"2910375"`
	// SlippageBps is the accepted slippage.
	SlippageBps int `json:"slippageBps" example:"50"`
	// PriceImpactBps is the route's price impact in basis points.
	PriceImpactBps int `json:"priceImpactBps" example:"12"`
	// PriceImpactWarning is set at or above the settings' warning threshold: the review screen must show it.
	PriceImpactWarning bool `json:"priceImpactWarning" example:"false"`
	// Route is the route's hops.
	Route []SwapRouteStepView `json:"route"`
	// FeeBreakdown is every cost beside the amounts.
	FeeBreakdown SwapFeeBreakdownView `json:"feeBreakdown"`
	// FeePolicyVersion is the fees.swap version the quote was priced under.
	FeePolicyVersion string `json:"feePolicyVersion" example:"1"`
	// RegistryVersion is the swap.tokens version the tokens were trusted under.
	RegistryVersion string `json:"registryVersion" example:"1"`
	// CreatedAt is when the quote was made.
	CreatedAt time.Time `json:"createdAt"`
	// ExpiresAt is when it stops being executable.
	ExpiresAt time.Time `json:"expiresAt"`
	// QuoteHash is the SHA-256 over every frozen field; an intent re-checks it.
	QuoteHash string `json:"quoteHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
}

// swapQuoteView renders a built quote.
func swapQuoteView(o swap.Operation, r swap.QuoteResult) SwapQuoteView {
	q := r.Quote
	v := SwapQuoteView{QuoteID: q.ID, OperationID: q.OperationID, Status: string(o.State), Provider: q.Provider, Network: q.Network,
		Wallet: q.Wallet.String(), InputMint: q.InputMint.String(), InputDecimals: int(q.InputDecimals), OutputMint: q.OutputMint.String(),
		OutputDecimals: int(q.OutputDecimals), GrossInputAtomic: q.GrossInputAtomic.String(), ServiceFeeAtomic: q.ServiceFeeAtomic.String(),
		ExecutableInputAtomic: q.ExecutableInputAtomic.String(), ExpectedOutputAtomic: q.ExpectedOutputAtomic.String(),
		MinimumOutputAtomic: q.MinimumOutputAtomic.String(), SlippageBps: int(q.SlippageBps), PriceImpactBps: int(q.PriceImpactBps),
		PriceImpactWarning: r.PriceImpactWarning, Route: []SwapRouteStepView{},
		FeeBreakdown: SwapFeeBreakdownView{ServiceFeeBps: int(q.FeeBreakdown.ServiceFeeBps), ServiceFeeMint: q.FeeBreakdown.ServiceFeeMint.String(),
			NetworkFeeLamports: q.FeeBreakdown.NetworkFeeLamports.String(), PriorityFeeLamports: q.FeeBreakdown.PriorityFeeLamports.String(),
			RentLamports: q.FeeBreakdown.RentLamports.String()},
		FeePolicyVersion: q.FeePolicyVersion, RegistryVersion: q.RegistryVersion, CreatedAt: q.CreatedAt, ExpiresAt: q.ExpiresAt,
		QuoteHash: q.Hash}
	v.Route = swapRouteViews(q.Route)
	return v
}

// swapRouteViews renders a route's hops.
func swapRouteViews(steps []swap.RouteStep) []SwapRouteStepView {
	out := make([]SwapRouteStepView, 0, len(steps))
	for _, s := range steps {
		out = append(out, SwapRouteStepView{Venue: s.Venue, Pool: s.Pool.String(), InputMint: s.InputMint.String(),
			OutputMint: s.OutputMint.String(), InAtomic: s.InAtomic.String(), OutAtomic: s.OutAtomic.String(), ShareBps: int(s.ShareBps)})
	}
	return out
}

// swapQuoteRoute is POST /api/v1/swap/quotes.
func swapQuoteRoute(svc *swap.Service) Route {
	return Route{Method: http.MethodPost, Pattern: "/api/v1/swap/quotes", OperationID: "createSwapQuote", Tag: transport.TagSwap,
		Auth: transport.AuthSession, Private: true, Permission: access.WalletSign, Idempotency: transport.IdempotencyRequired,
		OwnUnitOfWork: true, LateReplay: true, Status: http.StatusCreated, Policy: Policy{Feature: swap.FeatureSwap},
		Summary: "Create a swap quote",
		Description: "An immutable executable quote for the signed-in user's verified wallet, in the caller's environment. Checks run " +
			"in this order, each with its own code, and a refusal writes nothing: the session and the wallet.sign permission (API keys " +
			"are refused); the wallet is a verified wallet of the user (WALLET_REQUIRED); swaps are configured and active (503 " +
			"SWAP_NOT_CONFIGURED, SWAP_PAUSED); both mints are executable registry entries and still match on the cluster, read now " +
			"(TOKEN_NOT_TRUSTED with details.field and reason); the cluster is the network the registry was verified on " +
			"(NETWORK_MISMATCH); the slippage is within the settings' bounds (SLIPPAGE_OUT_OF_POLICY); the amount converts with the " +
			"mint's decimals (INVALID_AMOUNT with details.reason); the wallet's token balance, read from the chain, covers it " +
			"(BALANCE_UNAVAILABLE when it cannot be read, never zero; INSUFFICIENT_BALANCE); its lamports cover the signature, the " +
			"estimated priority fee, the rent of an output account it lacks and its own rent-exempt floor " +
			"(INSUFFICIENT_NATIVE_RESERVE); the 200 bps service fee is taken from the gross input and the rest is quoted by the route " +
			"provider (ROUTE_UNAVAILABLE; PROVIDER_UNAVAILABLE, and SWAP_PAUSED while its circuit breaker is open); the price impact " +
			"is below the hard limit (PRICE_IMPACT_EXCEEDED); then every field is frozen under quoteHash. The Idempotency-Key replays " +
			"the same quote; a new key is a new quote.",
		Request: SwapQuoteRequest{InputMint: "Mint111111111111111111111111111111111111111", OutputMint: "Usd1111111111111111111111111111111111111111",
			Amount: "1.5", Wallet: "Wa11et1111111111111111111111111111111111111"},
		Response: SwapQuoteView{QuoteID: "swq_0123456789abcdef0123456789abcdef", OperationID: "swp_0123456789abcdef0123456789abcdef",
			Status: string(swap.StateQuoted), Route: []SwapRouteStepView{}},
		Errors: []string{string(fault.WalletRequired), string(fault.SwapNotConfigured), string(fault.SwapPaused), string(fault.TokenNotTrusted),
			string(fault.NetworkMismatch), string(fault.SlippageOutOfPolicy), string(fault.InvalidAmount), string(fault.BalanceUnavailable),
			string(fault.InsufficientBalance), string(fault.InsufficientNativeReserve), string(fault.RouteUnavailable),
			string(fault.ProviderUnavailable), string(fault.PriceImpactExceeded), string(fault.QuoteUnavailable)},
		Handle: func(ctx context.Context, c *Call) (any, error) {
			var in SwapQuoteRequest
			if err := c.Decode(&in); err != nil {
				return nil, err
			}
			res, err := svc.Quote(ctx, c.Tx, c.Principal, swap.QuoteInput{InputMint: in.InputMint, OutputMint: in.OutputMint,
				Amount: in.Amount, SlippageBps: in.SlippageBps, Wallet: in.Wallet})
			if err != nil {
				return nil, err
			}
			return c.CommitResult(ctx, func(tx Tx) (any, error) {
				o, err := svc.SaveQuote(ctx, tx, res)
				if err != nil {
					return nil, err
				}
				return swapQuoteView(o, res), nil
			})
		}}
}

// SwapIntentRequest is the body of POST /api/v1/swap/intents.
type SwapIntentRequest struct {
	// QuoteID is the quote to bind.
	QuoteID string `json:"quoteId" example:"swq_0123456789abcdef0123456789abcdef"`
	// Wallet is the wallet that will sign: the quote's.
	Wallet string `json:"wallet" example:"Wa11et1111111111111111111111111111111111111"`
}

// SwapPreparedView is an intent's prepared transaction.
type SwapPreparedView struct {
	// MessageBase64 is the v0 message to sign, standard base64: a signature over any other bytes is refused.
	MessageBase64 string `json:"messageBase64" example:"gAEABQk..."`
	// TransactionBase64 is the same message as an unsigned transaction (one empty signature), for wallets that
	// sign transactions.
	TransactionBase64 string `json:"transactionBase64" example:"AQAAAA..."`
	// LastValidBlockHeight is the last block height the transaction can land at.
	LastValidBlockHeight uint64 `json:"lastValidBlockHeight" example:"1234"`
	// ExpiresAt is the earlier of the intent's expiry and that height's estimated time.
	ExpiresAt time.Time `json:"expiresAt"`
}

// SwapReviewView is what the wallet screen shows before signing, amounts in whole units of their token.
type SwapReviewView struct {
	// AmountPaid is the gross input the wallet pays.
	AmountPaid string `json:"amountPaid" example:"1.5"`
	// ServiceFee is the service fee taken from it (200 bps).
	ServiceFee string `json:"serviceFee" example:"0.03"`
	// ExecutableInput is what is swapped.
	ExecutableInput string `json:"executableInput" example:"1.47"`
	// ExpectedOutput is the route's output before slippage.
	ExpectedOutput string `json:"expectedOutput" example:"2.925"`
	// MinimumReceived is the least output accepted; less fails on chain.
	MinimumReceived string `json:"minimumReceived" example:"2.910375"`
	// SlippageBps is the accepted slippage.
	SlippageBps int `json:"slippageBps" example:"50"`
	// PriceImpactBps is the route's price impact.
	PriceImpactBps int `json:"priceImpactBps" example:"12"`
	// Route names the route's venues in order.
	Route []string `json:"route"`
	// VenueFees are the route's own fees where the provider reports them ("venue: amount of mint"); the expected
	// output is already net of them. Empty when the provider reports none.
	VenueFees []string `json:"venueFees"`
	// EstimatedNetworkFeeLamports is the signature fee, an integer string.
	EstimatedNetworkFeeLamports string `json:"estimatedNetworkFeeLamports" example:"5000"`
	// EstimatedPriorityFeeLamports is the prepared transaction's priority fee, an integer string.
	EstimatedPriorityFeeLamports string `json:"estimatedPriorityFeeLamports" example:"14000"`
	// RentLamports is the rent of accounts the transaction creates for the wallet, an integer string.
	RentLamports string `json:"rentLamports" example:"2074080"`
	// Wallet is the connected wallet that signs.
	Wallet string `json:"wallet" example:"Wa11et1111111111111111111111111111111111111"`
	// Network is the cluster's CAIP-2 id.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// ExpiresAt is when the quote and the prepared transaction stop being executable.
	ExpiresAt time.Time `json:"expiresAt"`
}

// SwapIntentView is a swap intent (POST /api/v1/swap/intents).
type SwapIntentView struct {
	// IntentID identifies the intent.
	IntentID string `json:"intentId" example:"swi_0123456789abcdef0123456789abcdef"`
	// OperationID identifies the swap operation.
	OperationID string `json:"operationId" example:"swp_0123456789abcdef0123456789abcdef"`
	// QuoteID is the bound quote.
	QuoteID string `json:"quoteId" example:"swq_0123456789abcdef0123456789abcdef"`
	// Status is the operation's state: AWAITING_SIGNATURE once prepared.
	Status string `json:"status" example:"AWAITING_SIGNATURE"`
	// Wallet signs and receives.
	Wallet string `json:"wallet" example:"Wa11et1111111111111111111111111111111111111"`
	// Network is the cluster's CAIP-2 id.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// InputMint is the mint paid with.
	InputMint string `json:"inputMint" example:"Mint111111111111111111111111111111111111111"`
	// OutputMint is the mint received.
	OutputMint string `json:"outputMint" example:"Usd1111111111111111111111111111111111111111"`
	// GrossInputAtomic is what the wallet pays, an integer string.
	GrossInputAtomic string `json:"grossInputAtomic" example:"1500000000"`
	// ServiceFeeAtomic is the service fee, an integer string.
	ServiceFeeAtomic string `json:"serviceFeeAtomic" example:"30000000"`
	// ExecutableInputAtomic is what is swapped, an integer string.
	ExecutableInputAtomic string `json:"executableInputAtomic" example:"1470000000"`
	// ExpectedOutputAtomic is the route's output, an integer string.
	ExpectedOutputAtomic string `json:"expectedOutputAtomic" example:"2925000"`
	// MinimumOutputAtomic is the least output accepted, an integer string.
	MinimumOutputAtomic string `json:"minimumOutputAtomic" example:"2910375"`
	// SlippageBps is the accepted slippage.
	SlippageBps int `json:"slippageBps" example:"50"`
	// PriceImpactBps is the route's price impact.
	PriceImpactBps int `json:"priceImpactBps" example:"12"`
	// FeeRecipient is the wallet that receives the service fee.
	FeeRecipient string `json:"feeRecipient" example:"Fee1111111111111111111111111111111111111111"`
	// FeeAccount is its token account of the input mint, which the prepared transaction pays.
	FeeAccount string `json:"feeAccount" example:"FeeAcct111111111111111111111111111111111111"`
	// FeePolicyVersion is the fees.swap version bound.
	FeePolicyVersion string `json:"feePolicyVersion" example:"1"`
	// RegistryVersion is the swap.tokens version bound.
	RegistryVersion string `json:"registryVersion" example:"1"`
	// Route is the route's hops.
	Route []SwapRouteStepView `json:"route"`
	// QuoteHash is the bound quote's hash.
	QuoteHash string `json:"quoteHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// IntentHash is the SHA-256 over every bound field, the prepared message's hash included.
	IntentHash string `json:"intentHash" example:"3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b"`
	// ExpiresAt is the quote's expiry, which the intent shares.
	ExpiresAt time.Time `json:"expiresAt"`
	// PreparedTransaction is the transaction to sign.
	PreparedTransaction SwapPreparedView `json:"preparedTransaction"`
	// Review is what the wallet screen shows before signing.
	Review SwapReviewView `json:"review"`
}

// swapIntentView renders a bound intent.
func swapIntentView(o swap.Operation, r swap.IntentResult) SwapIntentView {
	it, p := r.Intent, r.Prepared
	amt := func(a money.Atomic, d uint8) string { return swap.FormatAmount(a, d) }
	v := SwapIntentView{IntentID: it.ID, OperationID: it.OperationID, QuoteID: it.QuoteID, Status: string(o.State), Wallet: it.Wallet.String(),
		Network: it.Network, InputMint: it.InputMint.String(), OutputMint: it.OutputMint.String(), GrossInputAtomic: it.GrossInputAtomic.String(),
		ServiceFeeAtomic: it.ServiceFeeAtomic.String(), ExecutableInputAtomic: it.ExecutableInputAtomic.String(),
		ExpectedOutputAtomic: it.ExpectedOutputAtomic.String(), MinimumOutputAtomic: it.MinimumOutputAtomic.String(),
		SlippageBps: int(it.SlippageBps), PriceImpactBps: int(it.PriceImpactBps), FeeRecipient: it.FeeRecipient.String(),
		FeeAccount: it.FeeAccount.String(), FeePolicyVersion: it.FeePolicyVersion, RegistryVersion: it.RegistryVersion,
		Route: []SwapRouteStepView{}, QuoteHash: it.QuoteHash, IntentHash: it.Hash, ExpiresAt: it.ExpiresAt,
		PreparedTransaction: SwapPreparedView{MessageBase64: base64.StdEncoding.EncodeToString(p.Message),
			TransactionBase64: base64.StdEncoding.EncodeToString(p.Unsigned), LastValidBlockHeight: p.LastValidBlockHeight, ExpiresAt: p.ExpiresAt},
		Review: SwapReviewView{AmountPaid: amt(it.GrossInputAtomic, it.InputDecimals), ServiceFee: amt(it.ServiceFeeAtomic, it.InputDecimals),
			ExecutableInput: amt(it.ExecutableInputAtomic, it.InputDecimals), ExpectedOutput: amt(it.ExpectedOutputAtomic, it.OutputDecimals),
			MinimumReceived: amt(it.MinimumOutputAtomic, it.OutputDecimals), SlippageBps: int(it.SlippageBps), PriceImpactBps: int(it.PriceImpactBps),
			Route: []string{}, VenueFees: []string{}, EstimatedNetworkFeeLamports: it.FeeBreakdown.NetworkFeeLamports.String(),
			EstimatedPriorityFeeLamports: p.PriorityFeeLamports.String(), RentLamports: p.RentLamports.String(), Wallet: it.Wallet.String(),
			Network: it.Network, ExpiresAt: p.ExpiresAt}}
	v.Route = swapRouteViews(it.Route)
	for _, s := range it.Route {
		v.Review.Route = append(v.Review.Route, s.Venue)
	}
	for _, f := range it.FeeBreakdown.VenueFees {
		v.Review.VenueFees = append(v.Review.VenueFees, f.Venue+": "+f.Atomic.String()+" of "+f.Mint.String())
	}
	return v
}

// swapIntentRoute is POST /api/v1/swap/intents.
func swapIntentRoute(svc *swap.Service) Route {
	return Route{Method: http.MethodPost, Pattern: "/api/v1/swap/intents", OperationID: "createSwapIntent", Tag: transport.TagSwap,
		Auth: transport.AuthSession, Private: true, Permission: access.WalletSign, Idempotency: transport.IdempotencyOptional,
		OwnUnitOfWork: true, Status: http.StatusCreated, Policy: Policy{Feature: swap.FeatureSwap},
		ExistingStatus: http.StatusOK, ExistingText: "OK: the quote was already bound; the intent bound first.",
		Summary: "Create a swap intent",
		Description: "Binds a quote of the signed-in user and prepares the one transaction its wallet signs. Checks, in order: the " +
			"quote exists for the caller (another user's, workspace's or environment's is 404 NOT_FOUND), is intact and unexpired " +
			"(QUOTE_MISMATCH, QUOTE_EXPIRED), the wallet is the quote's (WALLET_MISMATCH), the fee policy and the token registry are " +
			"the versions the quote used (QUOTE_MISMATCH with details.reason: request a new quote), and the fee recipient's token " +
			"account of the input mint exists on the cluster (SWAP_NOT_CONFIGURED). The prepared transaction is a v0 message paid by " +
			"the wallet: the route's compute budget and setup instructions, the service fee's transfer to the fee recipient " +
			"(TransferCheckedWithFee for a mint with a transfer fee), a memo with the intent id, then the route's swap with its " +
			"lookup tables. The wallet's lamports are checked against its real priority fee and rent (INSUFFICIENT_NATIVE_RESERVE). " +
			"The provider's executable payload stays on the server; the review items are what the wallet screen must show. One " +
			"quote binds one intent: asking again answers 200 with the intent already bound, and an Idempotency-Key is optional.",
		Request: SwapIntentRequest{QuoteID: "swq_0123456789abcdef0123456789abcdef", Wallet: "Wa11et1111111111111111111111111111111111111"},
		Response: SwapIntentView{Status: string(swap.StateAwaitingSignature), Route: []SwapRouteStepView{},
			Review: SwapReviewView{Route: []string{}, VenueFees: []string{}}},
		Errors: []string{string(fault.NotFound), string(fault.QuoteExpired), string(fault.QuoteMismatch), string(fault.WalletMismatch),
			string(fault.SwapNotConfigured), string(fault.SwapPaused), string(fault.InsufficientNativeReserve), string(fault.ProviderUnavailable),
			string(fault.QuoteUnavailable), string(fault.RouteUnavailable), string(fault.SimulationFailed)},
		Handle: func(ctx context.Context, c *Call) (any, error) {
			var in SwapIntentRequest
			if err := c.Decode(&in); err != nil {
				return nil, err
			}
			if prior, o, ok, err := svc.ExistingIntent(ctx, c.Tx, c.Principal, in.QuoteID); err != nil {
				return nil, err
			} else if ok {
				return c.CommitResult(ctx, func(Tx) (any, error) {
					c.SetStatus(http.StatusOK)
					return swapIntentView(o, prior), nil
				})
			}
			res, err := svc.PrepareIntent(ctx, c.Tx, c.Principal, swap.IntentInput{QuoteID: in.QuoteID, Wallet: in.Wallet})
			if err != nil {
				return nil, err
			}
			out, err := c.CommitResult(ctx, func(tx Tx) (any, error) {
				o, err := svc.SaveIntent(ctx, tx, res)
				if err != nil {
					return nil, err
				}
				return swapIntentView(o, res), nil
			})
			if fault.Is(err, fault.Conflict) {
				// Another request bound the quote meanwhile: answer its intent.
				prior, o, ok, rerr := svc.ExistingIntent(ctx, c.Tx, c.Principal, in.QuoteID)
				if rerr == nil && ok {
					c.SetStatus(http.StatusOK)
					return swapIntentView(o, prior), nil
				}
			}
			return out, err
		}}
}

// SwapStatusView is GET /api/v1/swap/{intentId}/status: the operation's durable state.
type SwapStatusView struct {
	// OperationID identifies the swap operation.
	OperationID string `json:"operationId" example:"swp_0123456789abcdef0123456789abcdef"`
	// IntentID is the intent asked about.
	IntentID string `json:"intentId" example:"swi_0123456789abcdef0123456789abcdef"`
	// QuoteID is its quote.
	QuoteID string `json:"quoteId" example:"swq_0123456789abcdef0123456789abcdef"`
	// Status is the operation's state (CREATED through RECONCILED, or EXPIRED, REJECTED, CANCELLED, INVALID, FAILED,
	// REQUIRES_REVIEW).
	Status string `json:"status" example:"AWAITING_SIGNATURE"`
	// Terminal reports a state no request moves on from.
	Terminal bool `json:"terminal" example:"false"`
	// TransactionSignature is the signature bound to the intent; null before submission.
	TransactionSignature *string `json:"transactionSignature" example:"5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv"`
	// LastError is the code of the error that left the operation where it is (SUBMISSION_UNCERTAIN, for one); null
	// when none.
	LastError *string `json:"lastError" example:"SUBMISSION_UNCERTAIN"`
	// ExpiresAt is when the intent stops being executable.
	ExpiresAt time.Time `json:"expiresAt"`
	// CreatedAt is when the operation began.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// swapStatusRoute is GET /api/v1/swap/{intentId}/status.
func swapStatusRoute(svc *swap.Service) Route {
	return Route{Method: http.MethodGet, Pattern: "/api/v1/swap/{intentId}/status", OperationID: "getSwapStatus", Tag: transport.TagSwap,
		Auth: transport.AuthSession, Private: true, Permission: access.WalletSign,
		Summary: "Get a swap's status",
		Description: "The durable, server-owned state of the swap operation an intent belongs to, readable only by the user who " +
			"created it in its workspace and environment (anyone else: 404 NOT_FOUND). It survives a browser refresh, a wallet " +
			"disconnect and the end of the session that created it. The specification does not show this body; its fields are the platform's.",
		Response: SwapStatusView{}, Errors: []string{string(fault.NotFound)},
		Handle: func(ctx context.Context, c *Call) (any, error) {
			it, o, err := svc.Status(ctx, c.Tx, c.Principal, c.PathValue("intentId"))
			if err != nil {
				return nil, err
			}
			return SwapStatusView{OperationID: o.ID, IntentID: it.ID, QuoteID: o.QuoteID, Status: string(o.State), Terminal: o.State.Terminal(),
				TransactionSignature: optionalString(o.Signature), LastError: optionalString(o.LastError), ExpiresAt: it.ExpiresAt,
				CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}, nil
		}}
}

// SwapSubmitRequest is the body of POST /api/v1/swap/{intentId}/submit.
type SwapSubmitRequest struct {
	// Signature is the transaction's signature by the intent's wallet, base58.
	Signature string `json:"signature" example:"5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv"`
	// SignedTransactionBase64 is the signed transaction's wire bytes, standard base64: the prepared message with
	// the wallet's signature, nothing else.
	SignedTransactionBase64 string `json:"signedTransactionBase64" example:"AQAAAA..."`
}

// SwapSubmitView is the answer of POST /api/v1/swap/{intentId}/submit.
type SwapSubmitView struct {
	// OperationID identifies the swap operation.
	OperationID string `json:"operationId" example:"swp_0123456789abcdef0123456789abcdef"`
	// IntentID is the submitted intent.
	IntentID string `json:"intentId" example:"swi_0123456789abcdef0123456789abcdef"`
	// Status is the operation's state: SUBMITTED (handed to the relay; RPC acceptance is not settlement), or later
	// when the signature was submitted before.
	Status string `json:"status" example:"SUBMITTED"`
	// TransactionSignature is the bound signature.
	TransactionSignature string `json:"transactionSignature" example:"5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv"`
	// NetworkState is how far the chain has taken the transaction: submitted, processed, confirmed, finalized,
	// failed or dropped.
	NetworkState string `json:"networkState" example:"submitted"`
	// LastValidBlockHeight is the last block height the transaction can land at.
	LastValidBlockHeight uint64 `json:"lastValidBlockHeight" example:"1234"`
	// LastError is SUBMISSION_UNCERTAIN while a send's outcome is unknown (the chain is inspected before anything
	// else), or the code that failed the operation; null when none.
	LastError *string `json:"lastError" example:"SUBMISSION_UNCERTAIN"`
}

// swapSubmitRoute is POST /api/v1/swap/{intentId}/submit.
func swapSubmitRoute(svc *swap.Service) Route {
	return Route{Method: http.MethodPost, Pattern: "/api/v1/swap/{intentId}/submit", OperationID: "submitSwap", Tag: transport.TagSwap,
		Auth: transport.AuthSession, Private: true, Permission: access.WalletSign, Idempotency: transport.IdempotencyRequired,
		OwnUnitOfWork: true, LateReplay: true, Status: http.StatusAccepted,
		ExistingStatus: http.StatusOK, ExistingText: "OK: the signature was submitted before; the operation as it stands.",
		Summary: "Submit a signed swap",
		Description: "Binds the wallet's signed transaction to the intent and hands it to the relay. The intent must be the " +
			"caller's (404 otherwise) and intact (QUOTE_MISMATCH); the signed transaction must carry exactly the prepared message " +
			"and one signature, the given one, that verifies for the intent's wallet (SIGNATURE_REJECTED with details.reason; a " +
			"transaction that does not parse is INVALID_INPUT); the intent must be unexpired (QUOTE_EXPIRED) and awaiting its " +
			"signature (INVALID_STATE_TRANSITION). Nothing is rebuilt or re-signed. The same signature again answers the " +
			"operation as it stands; a different valid signature for an intent already bound puts the swap under review " +
			"(REQUIRES_REVIEW). The relay inspects the signature before every send, sends only the identical bytes and only " +
			"while the blockhash is valid; a send without an answer leaves lastError SUBMISSION_UNCERTAIN until the chain is " +
			"read. RPC acceptance is not settlement: follow GET /api/v1/swap/{intentId}/status.",
		Request:  SwapSubmitRequest{Signature: "5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv", SignedTransactionBase64: "AQAAAA..."},
		Response: SwapSubmitView{Status: string(swap.StateSubmitted), NetworkState: "submitted"},
		Errors: []string{string(fault.NotFound), string(fault.QuoteMismatch), string(fault.SignatureRejected), string(fault.QuoteExpired),
			string(fault.InvalidState), string(fault.RequiresReview)},
		Handle: func(ctx context.Context, c *Call) (any, error) {
			var in SwapSubmitRequest
			if err := c.Decode(&in); err != nil {
				return nil, err
			}
			id := c.PathValue("intentId")
			sin := swap.SubmitInput{Signature: in.Signature, SignedTransactionBase64: in.SignedTransactionBase64}
			out, err := c.CommitResult(ctx, func(tx Tx) (any, error) {
				res, err := svc.Submit(ctx, tx, c.Principal, id, sin)
				if err != nil {
					return nil, err
				}
				if res.Replay {
					c.SetStatus(http.StatusOK)
				}
				return SwapSubmitView{OperationID: res.Operation.ID, IntentID: id, Status: string(res.Operation.State),
					TransactionSignature: res.Operation.Signature, NetworkState: string(res.Submission.State),
					LastValidBlockHeight: res.Submission.LastValidBlockHeight, LastError: optionalString(res.Operation.LastError)}, nil
			})
			if fault.Is(err, fault.RequiresReview) {
				if rerr := svc.ReviewConflict(ctx, c.Principal, id, sin); rerr != nil {
					return nil, rerr
				}
			}
			return out, err
		}}
}

// swapFeature reports the swap feature of an environment from the swap
// domain's capability: enabled only when configured (cluster, route
// provider, registry, fee policy, settings), verified (the newest
// registry run matched its mints on the cluster) and not paused.
func swapFeature(svc *swap.Service) func(ctx context.Context, tx Tx, env access.Environment) (Web3FeatureView, error) {
	return func(ctx context.Context, tx Tx, env access.Environment) (Web3FeatureView, error) {
		c, err := svc.Capability(ctx, tx, env)
		if err != nil {
			return Web3FeatureView{}, err
		}
		return Web3FeatureView{Feature: "swap", Enabled: c.Enabled, Configured: c.Configured, Verified: c.Verified,
			Reason: optional(c.Reason)}, nil
	}
}
