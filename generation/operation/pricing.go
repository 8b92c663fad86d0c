package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// PricingPolicyID is the policy that prices generations in platform
// credits, per environment.
const PricingPolicyID = "pricing.generation"

// Price is what one generation of a model costs in platform credits:
// Credits when a platform-managed credential delivers it, ByokCredits (a
// platform fee) when the customer's own provider key does.
type Price struct {
	Credits     string `json:"credits"`
	ByokCredits string `json:"byokCredits"`
}

// Pricing is the content of the pricing policy: a price per platform
// model id. A model without a price cannot be generated.
type Pricing struct {
	Models map[string]Price `json:"models"`
}

// DefaultPricing is the pricing published at start when an environment
// has none.
func DefaultPricing() Pricing {
	return Pricing{Models: map[string]Price{
		"v3.5":      {Credits: "8", ByokCredits: "1"},
		"v4":        {Credits: "10", ByokCredits: "1"},
		"v4.5":      {Credits: "12", ByokCredits: "2"},
		"v4.5-plus": {Credits: "12", ByokCredits: "2"},
		"v4.5-all":  {Credits: "12", ByokCredits: "2"},
		"v5":        {Credits: "15", ByokCredits: "2"},
	}}
}

// Validate checks that every price is a non-negative integer string and
// that the BYOK fee is at most the platform price (a fallback to the
// platform credential must be covered by the reservation).
func (p Pricing) Validate() error {
	if len(p.Models) == 0 {
		return fmt.Errorf("pricing: no model is priced")
	}
	for m, pr := range p.Models {
		c, err := strconv.ParseInt(pr.Credits, 10, 64)
		if err != nil || c < 0 {
			return fmt.Errorf("pricing: model %q: credits %q is not a non-negative integer", m, pr.Credits)
		}
		b, err := strconv.ParseInt(pr.ByokCredits, 10, 64)
		if err != nil || b < 0 || b > c {
			return fmt.Errorf("pricing: model %q: byokCredits %q is not an integer from 0 to credits", m, pr.ByokCredits)
		}
	}
	return nil
}

// SeedPricing publishes p as the pricing policy of env when env has none
// (a restart with other defaults never overrides a published policy).
func SeedPricing(ctx context.Context, st policy.Store, env access.Environment, p Pricing) error {
	if err := p.Validate(); err != nil {
		return err
	}
	sc := policy.Scope{Environment: env}
	if _, err := policy.Current(ctx, st, sc, PricingPolicyID); err == nil {
		return nil
	} else if !fault.Is(err, fault.NotFound) {
		return err
	}
	_, _, err := policy.Publish(ctx, st, sc, PricingPolicyID, p, "system")
	return err
}

// quote is a model's price under the current pricing policy.
type quote struct {
	credits, byok int64
	ref           policy.Ref
}

// priceOf reads the environment's pricing policy and prices model.
// INVALID_INPUT (field model) for a model the policy does not price;
// PROVIDER_UNAVAILABLE when the environment has no pricing.
func priceOf(ctx context.Context, st policy.Store, env access.Environment, model string) (quote, error) {
	const op = "operation.price"
	v, err := policy.Current(ctx, st, policy.Scope{Environment: env}, PricingPolicyID)
	if fault.Is(err, fault.NotFound) {
		return quote{}, fault.E(op, fault.ProviderUnavailable, "Generation is not priced in this environment.").With("reason", "no_pricing")
	}
	if err != nil {
		return quote{}, fault.Wrap(op, err)
	}
	var p Pricing
	if err := json.Unmarshal(v.Content, &p); err != nil {
		return quote{}, fault.Wrap(op, fmt.Errorf("pricing policy v%d: %w", v.Version, err))
	}
	pr, ok := p.Models[model]
	if !ok {
		return quote{}, fault.Invalid(op, "model", fmt.Sprintf("The model %q is not offered.", model))
	}
	c, err1 := strconv.ParseInt(pr.Credits, 10, 64)
	b, err2 := strconv.ParseInt(pr.ByokCredits, 10, 64)
	if err1 != nil || err2 != nil {
		return quote{}, fault.Wrap(op, fmt.Errorf("pricing policy v%d: model %q is malformed", v.Version, model))
	}
	return quote{credits: c, byok: b, ref: v.Ref()}, nil
}
