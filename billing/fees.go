package billing

import (
	"context"
	"encoding/json"
	"math/big"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// FeePolicyID is the policy id of the marketplace fee policy.
const FeePolicyID = "fees.marketplace"

// MaxFeeBps caps the marketplace fee rate (100%).
const MaxFeeBps = 10_000

// MaxMinimumFeeAtomic caps a fee policy's minimum fee per sale: 10^18
// atomic units. The policy names no maximum fee to stay under, and its
// currency may be any, so the cap is set by the platform's amounts
// instead: ledger amounts are unsigned 64-bit integers (money.Atomic, at
// most about 1.8 x 10^19), and a minimum at the cap still fits one with
// room for sums of several, where an unbounded one (2^128 was accepted)
// could never be charged.
const MaxMinimumFeeAtomic = 1_000_000_000_000_000_000

// FeePolicy is the content of a marketplace fee policy version.
type FeePolicy struct {
	// FeeBps is the fee rate in basis points (0..10000).
	FeeBps int `json:"feeBps"`
	// MinimumFeeAtomic is the smallest fee per sale, an integer string of
	// atomic units, at most MaxMinimumFeeAtomic.
	MinimumFeeAtomic string `json:"minimumFeeAtomic"`
	// Currency the minimum is in; empty means the sale's currency.
	Currency string `json:"currency,omitempty"`
}

// Validate checks a fee policy: INVALID_INPUT with details.field.
func (f FeePolicy) Validate() error {
	const op = "billing.FeePolicy.Validate"
	if f.FeeBps < 0 || f.FeeBps > MaxFeeBps {
		return fault.Invalid(op, "feeBps", "feeBps is between 0 and 10000.").With("max", MaxFeeBps)
	}
	n, ok := new(big.Int).SetString(f.MinimumFeeAtomic, 10)
	if !ok || n.Sign() < 0 || n.String() != f.MinimumFeeAtomic {
		return fault.Invalid(op, "minimumFeeAtomic", "minimumFeeAtomic is a non-negative integer string without leading zeros.")
	}
	if max := big.NewInt(MaxMinimumFeeAtomic); n.Cmp(max) > 0 {
		return fault.Invalid(op, "minimumFeeAtomic", "minimumFeeAtomic is at most "+max.String()+" atomic units.").
			With("max", max.String())
	}
	if f.Currency != "" && (len(f.Currency) != 3 || f.Currency != stringsUpper(f.Currency)) {
		return fault.Invalid(op, "currency", "currency is an upper-case ISO 4217 code.")
	}
	return nil
}

func stringsUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 'A' || c > 'Z' {
			b[i] = 0
		}
	}
	return string(b)
}

// feeScope is where fee policies live: platform-wide (no tenant), per
// environment.
func feeScope(env access.Environment) policy.Scope { return policy.Scope{Environment: env} }

// PublishFeeInput publishes a marketplace fee policy version.
type PublishFeeInput struct {
	Policy    FeePolicy
	RequestID string
}

// PublishFees publishes a new immutable version of the marketplace fee
// policy in the principal's environment (policy id fees.marketplace,
// integer version, content hash), with an audit entry, in the caller's
// unit of work. Who may publish (super_admin with a recent sign-in) is the
// route's access policy, evaluated before this runs. Publishing the current
// content again returns the current version (created false).
//
// Errors: INVALID_INPUT.
func (s *Service) PublishFees(ctx context.Context, st FeeStore, p *access.Principal, in PublishFeeInput) (policy.Version, bool, error) {
	const op = "billing.PublishFees"
	if err := in.Policy.Validate(); err != nil {
		return policy.Version{}, false, err
	}
	prev, err := policy.Current(ctx, st, feeScope(p.Environment), FeePolicyID)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return policy.Version{}, false, fault.Wrap(op, err)
	}
	v, created, err := policy.Publish(ctx, st, feeScope(p.Environment), FeePolicyID, in.Policy, p.StableID())
	if err != nil {
		return policy.Version{}, false, fault.Wrap(op, err)
	}
	if created {
		var before any
		if prev.Version > 0 {
			before = prev.Ref()
		}
		if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionFeePolicyPublished, RequestID: in.RequestID,
			TargetType: TargetPolicy, TargetID: FeePolicyID, Before: before,
			After: struct {
				policy.Ref
				Content json.RawMessage `json:"content"`
			}{v.Ref(), v.Content}}); err != nil {
			return policy.Version{}, false, fault.Wrap(op, err)
		}
	}
	return v, created, nil
}

// CurrentFees reads the current marketplace fee policy of env. NOT_FOUND
// when none was published.
func (s *Service) CurrentFees(ctx context.Context, st policy.Store, env access.Environment) (policy.Version, error) {
	v, err := policy.Current(ctx, st, feeScope(env), FeePolicyID)
	if err != nil {
		return policy.Version{}, fault.Wrap("billing.CurrentFees", err)
	}
	return v, nil
}

// FeeHistory lists the marketplace fee policy's versions of env, newest
// first, with versions below before (0 for the newest).
func (s *Service) FeeHistory(ctx context.Context, st policy.Store, env access.Environment, before, limit int) ([]policy.Version, error) {
	vs, err := policy.History(ctx, st, feeScope(env), FeePolicyID, policy.HistoryParams{Before: before, Limit: limit})
	if err != nil {
		return nil, fault.Wrap("billing.FeeHistory", err)
	}
	return vs, nil
}
