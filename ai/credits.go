package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cockroachdb/apd/v3"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// PolicyCredits is the policy id of an environment's credit pricing of
// AI operations.
const PolicyCredits = "ai.pricing"

// CreditPricing is the content of the ai.pricing policy: how US dollars
// of model cost become platform credits (package doc, Credits).
type CreditPricing struct {
	// CreditsPerUSD is how many platform credits one US dollar of model
	// cost is, a decimal string ("1000": a credit is a tenth of a cent).
	CreditsPerUSD Price `json:"creditsPerUsd"`
	// MinimumCredits is the least an operation reserves and settles when
	// its model answered, so that no call is free (an integer string).
	MinimumCredits string `json:"minimumCredits"`
}

// DefaultCreditPricing is published where an environment has none: a
// credit per tenth of a cent of model cost, at least one credit a call.
func DefaultCreditPricing() CreditPricing {
	return CreditPricing{CreditsPerUSD: "1000", MinimumCredits: "1"}
}

// Validate checks the pricing: a decimal rate and a non-negative integer
// minimum.
func (c CreditPricing) Validate() error {
	if _, err := ParsePrice(string(c.CreditsPerUSD)); err != nil {
		return fmt.Errorf("ai pricing: creditsPerUsd: %w", err)
	}
	if n, err := strconv.ParseInt(c.MinimumCredits, 10, 64); err != nil || n < 0 {
		return errors.New("ai pricing: minimumCredits must be a non-negative integer string")
	}
	return nil
}

// minimum is the parsed MinimumCredits.
func (c CreditPricing) minimum() int64 {
	n, _ := strconv.ParseInt(c.MinimumCredits, 10, 64)
	return n
}

// Credits returns the platform credits of cost: cost times CreditsPerUSD,
// rounded up to a whole credit, and at least MinimumCredits. Exact
// decimals throughout.
func (c CreditPricing) Credits(cost Price) (int64, error) {
	var prod, whole apd.Decimal
	if _, err := costContext.Mul(&prod, cost.decimal(), c.CreditsPerUSD.decimal()); err != nil {
		return 0, err
	}
	if _, err := costContext.Ceil(&whole, &prod); err != nil {
		return 0, err
	}
	n, err := whole.Int64()
	if err != nil {
		return 0, fmt.Errorf("ai pricing: %s credits do not fit", whole.Text('f'))
	}
	return max(n, c.minimum()), nil
}

// SeedCreditPricing publishes p as env's ai.pricing policy when env has
// none; a published policy is never overridden by configuration.
func SeedCreditPricing(ctx context.Context, st policy.Store, env access.Environment, p CreditPricing) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p.CreditsPerUSD, _ = ParsePrice(string(p.CreditsPerUSD))
	sc := policy.Scope{Environment: env}
	switch _, err := policy.Current(ctx, st, sc, PolicyCredits); {
	case err == nil:
		return nil
	case !fault.Is(err, fault.NotFound):
		return err
	}
	_, _, err := policy.Publish(ctx, st, sc, PolicyCredits, p, Publisher)
	return err
}

// creditPricing reads env's current credit pricing; PROVIDER_UNAVAILABLE
// (reason no_pricing) when none is published.
func creditPricing(ctx context.Context, st policy.Store, env access.Environment) (CreditPricing, policy.Ref, error) {
	const op = "ai.creditPricing"
	v, err := policy.Current(ctx, st, policy.Scope{Environment: env}, PolicyCredits)
	if fault.Is(err, fault.NotFound) {
		return CreditPricing{}, policy.Ref{}, fault.E(op, fault.ProviderUnavailable, "AI operations are not priced in this environment.").
			With("reason", "no_pricing")
	}
	if err != nil {
		return CreditPricing{}, policy.Ref{}, fault.Wrap(op, err)
	}
	var p CreditPricing
	if err := json.Unmarshal(v.Content, &p); err != nil {
		return CreditPricing{}, policy.Ref{}, fault.Wrap(op, fmt.Errorf("pricing policy v%d: %w", v.Version, err))
	}
	if err := p.Validate(); err != nil {
		return CreditPricing{}, policy.Ref{}, fault.Wrap(op, err)
	}
	return p, v.Ref(), nil
}

// EstimateUnits estimates the input units (tokens) of messages and tools
// before any provider counted them: a unit per three bytes of text,
// rounded up, and four per message and tool for their framing. Real
// tokenizers give fewer units for ordinary text, so the estimate errs on
// the side of a larger reservation.
func EstimateUnits(ms []Message, tools []Tool) int64 {
	var bytes, parts int64
	for _, m := range ms {
		parts++
		bytes += int64(len(m.Content))
		for _, tc := range m.ToolCalls {
			bytes += int64(len(tc.Name) + len(tc.Arguments))
		}
	}
	for _, t := range tools {
		parts++
		bytes += int64(len(t.Name) + len(t.Description) + len(t.Parameters))
	}
	return (bytes+2)/3 + 4*parts
}
