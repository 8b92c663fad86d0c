package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

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

// DefaultPricingTTL is how long a Service keeps an environment's current
// pricing policy before it reads it again (Tuning.PricingTTL).
const DefaultPricingTTL = time.Second

// pricingCache holds each environment's current pricing policy, parsed,
// for a while: a generation request would otherwise read the policy and
// decode its JSON every time, though a new version is published rarely
// (at start, or by an operator). A version published on any host prices
// the requests each host accepts from at most the TTL later; every
// operation records the version that priced it (Operation.Pricing).
type pricingCache struct {
	ttl time.Duration
	mu  sync.Mutex
	env map[access.Environment]pricingEntry
}

// pricingEntry is a cached policy and when it must be read again.
type pricingEntry struct {
	pricing Pricing
	ref     policy.Ref
	until   time.Time
}

// current returns env's pricing policy: the cached one while it is fresh
// at now (the unit of work's time), else the stored one (then cached).
// PROVIDER_UNAVAILABLE when the environment has no pricing (not cached).
func (c *pricingCache) current(ctx context.Context, st policy.Store, env access.Environment, now time.Time) (Pricing, policy.Ref, error) {
	const op = "operation.price"
	if c.ttl > 0 {
		c.mu.Lock()
		e, ok := c.env[env]
		c.mu.Unlock()
		if ok && now.Before(e.until) {
			return e.pricing, e.ref, nil
		}
	}
	v, err := policy.Current(ctx, st, policy.Scope{Environment: env}, PricingPolicyID)
	if fault.Is(err, fault.NotFound) {
		return Pricing{}, policy.Ref{}, fault.E(op, fault.ProviderUnavailable, "Generation is not priced in this environment.").With("reason", "no_pricing")
	}
	if err != nil {
		return Pricing{}, policy.Ref{}, fault.Wrap(op, err)
	}
	var p Pricing
	if err := json.Unmarshal(v.Content, &p); err != nil {
		return Pricing{}, policy.Ref{}, fault.Wrap(op, fmt.Errorf("pricing policy v%d: %w", v.Version, err))
	}
	if c.ttl > 0 {
		c.mu.Lock()
		if c.env == nil {
			c.env = map[access.Environment]pricingEntry{}
		}
		c.env[env] = pricingEntry{pricing: p, ref: v.Ref(), until: now.Add(c.ttl)}
		c.mu.Unlock()
	}
	return p, v.Ref(), nil
}

// priceOf prices model under env's current pricing policy.
// INVALID_INPUT (field model) for a model the policy does not price;
// PROVIDER_UNAVAILABLE when the environment has no pricing.
func (c *pricingCache) priceOf(ctx context.Context, st policy.Store, env access.Environment, model string, now time.Time) (quote, error) {
	const op = "operation.price"
	p, ref, err := c.current(ctx, st, env, now)
	if err != nil {
		return quote{}, err
	}
	pr, ok := p.Models[model]
	if !ok {
		return quote{}, fault.Invalid(op, "model", fmt.Sprintf("The model %q is not offered.", model))
	}
	c1, err1 := strconv.ParseInt(pr.Credits, 10, 64)
	b, err2 := strconv.ParseInt(pr.ByokCredits, 10, 64)
	if err1 != nil || err2 != nil {
		return quote{}, fault.Wrap(op, fmt.Errorf("pricing policy v%d: model %q is malformed", ref.Version, model))
	}
	return quote{credits: c1, byok: b, ref: ref}, nil
}
