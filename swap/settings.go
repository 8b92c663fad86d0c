package swap

import (
	"fmt"

	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// Policy ids of an environment's swap settings and fee policy.
const (
	// PolicySettings is the swap.settings policy: enablement, release
	// state, slippage bounds, price-impact thresholds and quote lifetime.
	PolicySettings = "swap.settings"
	// PolicyFees is the fees.swap policy: the service fee rate and the
	// wallet that receives it. Its version is every quote's
	// feePolicyVersion.
	PolicyFees = "fees.swap"
)

// ServiceFeeBps is the service fee of the swap policy (spec, Limits: 200
// bps = 2%), taken from the gross input.
const ServiceFeeBps = 200

// Release states of Settings.ReleaseState.
const (
	ReleaseBeta = "beta"
	ReleaseGA   = "general_availability"
)

// Settings is the content of the swap.settings policy. Every bound is in
// basis points of the amount it applies to.
type Settings struct {
	// SwapEnabled turns quoting on; false answers SWAP_PAUSED.
	SwapEnabled bool `json:"swapEnabled"`
	// ReleaseState is beta or general_availability (display; no rule
	// reads it).
	ReleaseState string `json:"releaseState"`
	// Slippage bounds a quote request's slippageBps; DefaultBps applies
	// when the request gives none.
	Slippage SlippagePolicy `json:"slippage"`
	// PriceImpact: a quote at or above WarningBps is flagged; at or above
	// HardRejectBps it is refused (PRICE_IMPACT_EXCEEDED).
	PriceImpact PriceImpactPolicy `json:"priceImpact"`
	// QuoteTTLSeconds is a quote's lifetime, 10 to 300 seconds.
	QuoteTTLSeconds int `json:"quoteTtlSeconds"`
}

// SlippagePolicy bounds slippage in basis points of the expected output.
type SlippagePolicy struct {
	// DefaultBps is used when a request names none.
	DefaultBps int `json:"defaultBps"`
	// MinBps and MaxBps bound what a request may name.
	MinBps int `json:"minBps"`
	MaxBps int `json:"maxBps"`
}

// PriceImpactPolicy holds the price-impact thresholds in basis points.
type PriceImpactPolicy struct {
	// WarningBps flags a quote for the review screen.
	WarningBps int `json:"warningBps"`
	// HardRejectBps refuses a quote.
	HardRejectBps int `json:"hardRejectBps"`
}

// DefaultSettings are published for an environment that has none: swaps
// on in beta, 0.1% to 3% slippage with 0.5% by default, a warning at 1%
// price impact and a refusal at 5%, quotes valid for 30 seconds (a
// wallet's review screen and signature fit in it, and a price older than
// that is a price the wallet would not get).
func DefaultSettings() Settings {
	return Settings{SwapEnabled: true, ReleaseState: ReleaseBeta,
		Slippage:        SlippagePolicy{DefaultBps: 50, MinBps: 10, MaxBps: 300},
		PriceImpact:     PriceImpactPolicy{WarningBps: 100, HardRejectBps: 500},
		QuoteTTLSeconds: 30}
}

// Validate checks the settings' bounds. Errors are INVALID_INPUT naming
// the field.
func (s Settings) Validate() error {
	const op = "swap.Settings.Validate"
	switch {
	case s.ReleaseState != ReleaseBeta && s.ReleaseState != ReleaseGA:
		return fault.Invalid(op, "releaseState", "The release state is beta or general_availability.")
	case s.Slippage.MinBps < 0 || s.Slippage.MinBps > s.Slippage.MaxBps || s.Slippage.MaxBps > 5000:
		return fault.Invalid(op, "slippage", "Slippage bounds satisfy 0 <= minBps <= maxBps <= 5000.")
	case s.Slippage.DefaultBps < s.Slippage.MinBps || s.Slippage.DefaultBps > s.Slippage.MaxBps:
		return fault.Invalid(op, "slippage.defaultBps", "The default slippage lies within the bounds.")
	case s.PriceImpact.WarningBps < 0 || s.PriceImpact.WarningBps > s.PriceImpact.HardRejectBps || s.PriceImpact.HardRejectBps > 10000:
		return fault.Invalid(op, "priceImpact", "Price-impact thresholds satisfy 0 <= warningBps <= hardRejectBps <= 10000.")
	case s.QuoteTTLSeconds < 10 || s.QuoteTTLSeconds > 300:
		return fault.Invalid(op, "quoteTtlSeconds", "A quote lives 10 to 300 seconds.")
	}
	return nil
}

// FeePolicy is the content of the fees.swap policy.
type FeePolicy struct {
	// ServiceFeeBps is the service fee rate; the policy is ServiceFeeBps.
	ServiceFeeBps int `json:"serviceFeeBps"`
	// FeeRecipient is the wallet (base58) whose associated token account
	// of the input mint receives the fee.
	FeeRecipient string `json:"feeRecipient"`
}

// Validate checks the fee policy: the spec's rate and a wallet address.
func (f FeePolicy) Validate() error {
	const op = "swap.FeePolicy.Validate"
	if f.ServiceFeeBps != ServiceFeeBps {
		return fault.Invalid(op, "serviceFeeBps", fmt.Sprintf("The swap service fee is %d bps.", ServiceFeeBps))
	}
	k, err := token2022.ParsePublicKey(f.FeeRecipient)
	if err != nil || k.String() != f.FeeRecipient {
		return fault.Invalid(op, "feeRecipient", "The fee recipient is a base58 wallet address.")
	}
	return nil
}
