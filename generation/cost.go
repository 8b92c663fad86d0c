package generation

import (
	"math"
	"math/bits"
)

// This file reconciles what a provider charged for a task with what the
// platform expected it to charge. It is pure: the caller supplies the
// task's merged outcome (Snapshot.Outcome, Refunded, CreditsConsumed) and a
// price table, and records the Reconciliation; a drift is a cost signal for
// operators, never a change to the customer's credits, which are settled by
// delivered assets alone.

// CostStatus is a provider cost reconciliation outcome.
type CostStatus string

// Cost reconciliation outcomes.
const (
	// CostMatched: the provider's charge equals the expected price.
	CostMatched CostStatus = "MATCHED"
	// CostUnderExpected: the provider charged less than expected.
	CostUnderExpected CostStatus = "UNDER_EXPECTED"
	// CostOverExpected: the provider charged more than expected.
	CostOverExpected CostStatus = "OVER_EXPECTED"
	// CostUnknown: the expected price or the actual charge is unknown, so
	// nothing can be compared.
	CostUnknown CostStatus = "UNKNOWN"
)

// CostStatuses lists the cost reconciliation outcomes.
func CostStatuses() []CostStatus {
	return []CostStatus{CostMatched, CostUnderExpected, CostOverExpected, CostUnknown}
}

// CostSource says where a Reconciliation's actual charge came from.
type CostSource string

// Sources of the actual charge.
const (
	// CostSourceReported: the provider reported the charge
	// (creditsConsumed of the kie market records, spec 1.8).
	CostSourceReported CostSource = "reported"
	// CostSourceNone: the provider reported nothing, so the charge is
	// unknown. A published price is what the platform expected, never a
	// reading of what was charged (spec, Invariants 5).
	CostSourceNone CostSource = "none"
)

// CostSources lists the sources of the actual charge.
func CostSources() []CostSource { return []CostSource{CostSourceReported, CostSourceNone} }

// PriceTable is a provider's published price per create, in provider
// credits, by platform model id; the "" entry is the provider's default,
// used for a model the table does not name.
type PriceTable map[ProviderID]map[string]int64

// DefaultPriceTable returns the reference prices, a new table on each call:
//
//   - Provider B (MusicAPI.ai Sonic) charges 15 credits per create, extend
//     or cover, each yielding two songs (spec 2.6, newer guide). Its older
//     guide priced by model: v3.5 = 12, v4 = 18; the newer flat price
//     replaces those figures.
//   - Provider A publishes no per-model price table in the reference
//     (spec 1.4 exposes only the balance). Its 12 credits per generate is
//     a configured expectation, the provider A simulator's default
//     CreditsPerTask, not a published price; kie market records report
//     the real charge (creditsConsumed), which takes precedence in
//     Reconcile.
func DefaultPriceTable() PriceTable {
	return PriceTable{
		ProviderA: {"": 12},
		ProviderB: {"": 15},
	}
}

// price returns the price of a create on provider with model, falling back
// to the provider's "" default; ok is false when neither is known.
func (t PriceTable) price(provider ProviderID, model string) (v int64, ok bool) {
	models := t[provider]
	if v, ok := models[model]; ok {
		return v, true
	}
	v, ok = models[""]
	return v, ok
}

// CostInput is one provider task's terminal answer, as merged into its
// Snapshot.
type CostInput struct {
	// Provider is the route that ran the task.
	Provider ProviderID
	// Model is the platform model id the task was created with.
	Model string
	// Outcome is the provider's terminal answer (OutcomePending when none).
	Outcome Outcome
	// Refunded reports that the provider refunded the task (A: code 531).
	Refunded bool
	// CreditsConsumed is the provider's reported charge; nil when its
	// dialect reports none.
	CreditsConsumed *int64
}

// Reconciliation is the result of Reconcile. Its pointers are its own:
// they never alias the input.
type Reconciliation struct {
	// Status compares Actual with Expected.
	Status CostStatus
	// Source says where Actual came from.
	Source CostSource
	// Expected is what the platform expected the provider to charge; nil
	// when unknown.
	Expected *int64
	// Actual is what the provider charged; nil when unknown.
	Actual *int64
	// DriftBps is |Actual-Expected| in basis points of Expected (of 1 when
	// Expected is 0 or less), saturating at math.MaxInt64; 0 when either is
	// unknown.
	DriftBps int64
	// Drift reports a difference over the threshold given to Reconcile.
	Drift bool
}

// Reconcile compares what the provider reports consuming for a task with
// what the platform expected it to consume.
//
// Expected is the price table's price (the model's, else the provider's ""
// default) for a succeeded task, and 0 for a failed or refunded one (A
// refunds a 531; the kie market reports 0 on server-side failures). It is
// nil (Status UNKNOWN) for a succeeded task whose provider has no price for
// the model and no default, and for a task with no terminal outcome yet.
//
// Actual is the reported CreditsConsumed when there is one (Source
// reported). Otherwise it is nil (Source none) and the Status is UNKNOWN,
// with Expected still shown: the price table says what the platform
// expected, not what the provider charged, so a task the provider reported
// nothing about is never MATCHED, and a failed one is never assumed to have
// been free.
//
// When both are known, Status is MATCHED when they are equal,
// UNDER_EXPECTED when Actual is less and OVER_EXPECTED when it is more;
// DriftBps = |Actual-Expected|*10000/max(Expected,1), and Drift reports
// DriftBps > thresholdBps, or, when thresholdBps <= 0, any difference at
// all (even one under a basis point). Reconcile reads its inputs only.
func Reconcile(in CostInput, prices PriceTable, thresholdBps int64) Reconciliation {
	var r Reconciliation
	switch {
	case in.Outcome == OutcomeFailed || in.Refunded:
		r.Expected = new(int64(0))
	case in.Outcome == OutcomeSucceeded:
		if p, ok := prices.price(in.Provider, in.Model); ok {
			r.Expected = new(p)
		}
	}
	r.Source = CostSourceNone
	if in.CreditsConsumed != nil {
		r.Source, r.Actual = CostSourceReported, new(*in.CreditsConsumed)
	}
	if r.Expected == nil || r.Actual == nil {
		r.Status = CostUnknown
		return r
	}
	want, got := *r.Expected, *r.Actual
	var diff uint64 // |got-want|, exact in two's complement
	switch {
	case got == want:
		r.Status = CostMatched
		return r
	case got < want:
		r.Status, diff = CostUnderExpected, uint64(want)-uint64(got)
	default:
		r.Status, diff = CostOverExpected, uint64(got)-uint64(want)
	}
	r.DriftBps = driftBps(diff, want)
	r.Drift = thresholdBps <= 0 || r.DriftBps > thresholdBps
	return r
}

// driftBps returns diff*10000/max(expected,1), saturating at MaxInt64.
func driftBps(diff uint64, expected int64) int64 {
	den := uint64(1)
	if expected > 1 {
		den = uint64(expected)
	}
	hi, lo := bits.Mul64(diff, 10000)
	if hi >= den { // the quotient does not fit in 64 bits
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, den)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
