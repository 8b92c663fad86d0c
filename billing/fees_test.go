package billing_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// TestFeePolicyValidate tables good and bad fee policies; a bad one is
// INVALID_INPUT naming its field.
func TestFeePolicyValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    billing.FeePolicy
		field string // empty: valid
	}{
		{"zero", billing.FeePolicy{FeeBps: 0, MinimumFeeAtomic: "0"}, ""},
		{"typical", billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "100", Currency: "USD"}, ""},
		{"hundred percent", billing.FeePolicy{FeeBps: billing.MaxFeeBps, MinimumFeeAtomic: "0"}, ""},
		{"minimum at the cap", billing.FeePolicy{FeeBps: 1, MinimumFeeAtomic: "1000000000000000000"}, ""},
		{"minimum over the cap", billing.FeePolicy{FeeBps: 1, MinimumFeeAtomic: "1000000000000000001"}, "minimumFeeAtomic"},
		{"huge minimum", billing.FeePolicy{FeeBps: 1, MinimumFeeAtomic: "340282366920938463463374607431768211456"}, "minimumFeeAtomic"},
		{"negative bps", billing.FeePolicy{FeeBps: -1, MinimumFeeAtomic: "0"}, "feeBps"},
		{"over 100%", billing.FeePolicy{FeeBps: billing.MaxFeeBps + 1, MinimumFeeAtomic: "0"}, "feeBps"},
		{"empty minimum", billing.FeePolicy{FeeBps: 100}, "minimumFeeAtomic"},
		{"negative minimum", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "-1"}, "minimumFeeAtomic"},
		{"plus sign", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "+1"}, "minimumFeeAtomic"},
		{"leading zero", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "007"}, "minimumFeeAtomic"},
		{"minus zero", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "-0"}, "minimumFeeAtomic"},
		{"decimal", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "1.5"}, "minimumFeeAtomic"},
		{"spaces", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: " 1"}, "minimumFeeAtomic"},
		{"lower-case currency", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "0", Currency: "usd"}, "currency"},
		{"short currency", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "0", Currency: "US"}, "currency"},
		{"digit in currency", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "0", Currency: "US1"}, "currency"},
		{"non-ASCII currency", billing.FeePolicy{FeeBps: 100, MinimumFeeAtomic: "0", Currency: "ÜS"}, "currency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want valid", err)
				}
				return
			}
			if !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("Validate = %v, want INVALID_INPUT", err)
			}
			if _, _, d := fault.Public(err); d["field"] != tc.field {
				t.Fatalf("details = %v, want field %s", d, tc.field)
			}
		})
	}
}

// TestPublishFees covers validation, one version per
// content, a new immutable version per change, the audit entry, and
// environments that do not see each other.
func TestPublishFees(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	owner := h.principal(access.Live)
	owner.AuthenticatedAt = epoch.Add(-time.Minute)
	publish := func(p *access.Principal, f billing.FeePolicy, _ time.Duration) (v policy.Version, created bool, err error) {
		err = h.db.run(ctx, func(st *memTx) (err error) {
			v, created, err = h.svc.PublishFees(ctx, st, p, billing.PublishFeeInput{Policy: f, RequestID: "req_1"})
			return err
		})
		return v, created, err
	}
	fees := billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "100"}

	if _, _, err := publish(owner, billing.FeePolicy{FeeBps: -5, MinimumFeeAtomic: "0"}, 10*time.Minute); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("invalid policy: %v", err)
	}

	v1, created, err := publish(owner, fees, 10*time.Minute)
	if err != nil || !created || v1.Version != 1 || v1.ID != billing.FeePolicyID || v1.Hash == "" {
		t.Fatalf("publish v1 = %+v, %v, %v", v1, created, err)
	}
	again, created, err := publish(owner, fees, 10*time.Minute)
	if err != nil || created || again.Version != 1 || again.Hash != v1.Hash {
		t.Fatalf("republish = %+v, %v, %v", again, created, err)
	}
	v2, created, err := publish(owner, billing.FeePolicy{FeeBps: 250, MinimumFeeAtomic: "0", Currency: "USD"}, 10*time.Minute)
	if err != nil || !created || v2.Version != 2 || v2.Hash == v1.Hash {
		t.Fatalf("publish v2 = %+v, %v, %v", v2, created, err)
	}

	var cur policy.Version
	var hist []policy.Version
	var testErr error
	h.db.run(ctx, func(st *memTx) (err error) {
		cur, err = h.svc.CurrentFees(ctx, st, access.Live)
		if err != nil {
			return err
		}
		hist, err = h.svc.FeeHistory(ctx, st, access.Live, 0, 10)
		if err != nil {
			return err
		}
		_, testErr = h.svc.CurrentFees(ctx, st, access.Test)
		return nil
	})
	if cur.Version != 2 || len(hist) != 2 || hist[1].Version != 1 || hist[1].Hash != v1.Hash {
		t.Fatalf("current %d, history %+v", cur.Version, hist)
	}
	var got billing.FeePolicy
	if err := json.Unmarshal(hist[1].Content, &got); err != nil || got != fees {
		t.Fatalf("v1 content = %s (%v), want %+v", hist[1].Content, err, fees)
	}
	if !fault.Is(testErr, fault.NotFound) {
		t.Fatalf("test environment sees the live policy: %v", testErr)
	}
	if n := h.audits(billing.ActionFeePolicyPublished); n != 2 {
		t.Fatalf("%d audit entries, want 2 (one per new version)", n)
	}
}
