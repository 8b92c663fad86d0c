package operation

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// policyReads is a policy.Store that serves one current version per
// environment and counts the reads.
type policyReads struct {
	current map[access.Environment]policy.Version
	reads   int
}

func (s *policyReads) PolicyInsert(ctx context.Context, v policy.Version) (policy.Version, bool, error) {
	panic("not used")
}

func (s *policyReads) PolicyCurrent(ctx context.Context, sc policy.Scope, id string) (policy.Version, error) {
	s.reads++
	v, ok := s.current[sc.Environment]
	if !ok || id != PricingPolicyID {
		return policy.Version{}, fault.E("fake.PolicyCurrent", fault.NotFound, "")
	}
	return v, nil
}

func (s *policyReads) PolicyGet(ctx context.Context, sc policy.Scope, id string, version int) (policy.Version, error) {
	panic("not used")
}

func (s *policyReads) PolicyHistory(ctx context.Context, sc policy.Scope, id string, p policy.HistoryParams) ([]policy.Version, error) {
	panic("not used")
}

// publish makes credits the price of v5 in version n of env's pricing.
func (s *policyReads) publish(t *testing.T, env access.Environment, n int, credits string) {
	t.Helper()
	b, err := json.Marshal(Pricing{Models: map[string]Price{"v5": {Credits: credits, ByokCredits: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.current[env] = policy.Version{ID: PricingPolicyID, Version: n, Content: b}
}

// A published pricing version prices requests from at most the TTL later,
// on the injected clock; within it the policy is read once per
// environment, and a negative TTL reads it every time.
func TestPricingCacheTTL(t *testing.T) {
	ctx := context.Background()
	st := &policyReads{current: map[access.Environment]policy.Version{}}
	c := &pricingCache{ttl: time.Second}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	price := func(env access.Environment, at time.Time) quote {
		t.Helper()
		q, err := c.priceOf(ctx, st, env, "v5", at)
		if err != nil {
			t.Fatalf("price at %v: %v", at.Sub(t0), err)
		}
		return q
	}

	if _, err := c.priceOf(ctx, st, access.Test, "v5", t0); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("no pricing: %v, want PROVIDER_UNAVAILABLE", err)
	}
	st.publish(t, access.Test, 1, "15")
	if q := price(access.Test, t0); q.credits != 15 || q.ref.Version != 1 {
		t.Fatalf("first price = %+v, want 15 credits of v1 (a missing policy is not cached)", q)
	}
	st.publish(t, access.Test, 2, "20")
	if q := price(access.Test, t0.Add(999*time.Millisecond)); q.credits != 15 || q.ref.Version != 1 {
		t.Errorf("within the TTL = %+v, want v1's price", q)
	}
	if q := price(access.Test, t0.Add(time.Second)); q.credits != 20 || q.ref.Version != 2 {
		t.Errorf("at the TTL = %+v, want v2's price", q)
	}
	if st.reads != 3 {
		t.Errorf("%d policy reads, want 3 (missing, v1, v2)", st.reads)
	}
	// Environments are cached apart.
	st.publish(t, access.Live, 7, "30")
	if q := price(access.Live, t0.Add(time.Second)); q.credits != 30 || q.ref.Version != 7 {
		t.Errorf("live = %+v, want v7's price", q)
	}
	if _, err := c.priceOf(ctx, st, access.Test, "v9", t0.Add(time.Second)); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("unpriced model: %v, want INVALID_INPUT", err)
	}

	uncached := &pricingCache{ttl: -1}
	before := st.reads
	for i := 0; i < 3; i++ {
		if _, err := uncached.priceOf(ctx, st, access.Test, "v5", t0); err != nil {
			t.Fatal(err)
		}
	}
	if got := st.reads - before; got != 3 {
		t.Errorf("negative TTL: %d reads for 3 prices, want 3", got)
	}
}
