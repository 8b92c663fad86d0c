package generation_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/creatormusic/platform/generation"
)

func TestCostStatusesAreDistinct(t *testing.T) {
	got := generation.CostStatuses()
	want := []generation.CostStatus{generation.CostMatched, generation.CostUnderExpected, generation.CostOverExpected, generation.CostUnknown}
	if !slices.Equal(got, want) {
		t.Fatalf("CostStatuses() = %v, want %v", got, want)
	}
}

func TestDefaultPriceTable(t *testing.T) {
	p := generation.DefaultPriceTable()
	if got := p[generation.ProviderB][""]; got != 15 {
		t.Errorf("B default = %d, want 15", got)
	}
	if got := p[generation.ProviderA][""]; got != 12 {
		t.Errorf("A default = %d, want 12", got)
	}
	p[generation.ProviderB][""] = 99
	if got := generation.DefaultPriceTable()[generation.ProviderB][""]; got != 15 {
		t.Errorf("DefaultPriceTable shares state across calls: B = %d", got)
	}
}

func TestReconcile(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	prices := generation.PriceTable{
		generation.ProviderA: {"": 12},
		generation.ProviderB: {"": 15, "sonic-v3-5": 12, "sonic-v4": 18},
		"NO_DEFAULT":         {"m1": 10},
	}
	const (
		A = generation.ProviderA
		B = generation.ProviderB
	)
	ok, failed, pending := generation.OutcomeSucceeded, generation.OutcomeFailed, generation.OutcomePending
	tests := []struct {
		name      string
		in        generation.CostInput
		table     generation.PriceTable // nil: prices
		nilTable  bool                  // pass a nil table
		threshold int64
		want      generation.Reconciliation
	}{
		{
			name: "reported equals price",
			in:   generation.CostInput{Provider: A, Outcome: ok, CreditsConsumed: n(12)},
			want: generation.Reconciliation{Status: generation.CostMatched, Source: generation.CostSourceReported, Expected: n(12), Actual: n(12)},
		},
		{
			name: "reported under price, under threshold",
			in:   generation.CostInput{Provider: A, Outcome: ok, CreditsConsumed: n(11)},
			// 1*10000/12 = 833 bps
			threshold: 1000,
			want:      generation.Reconciliation{Status: generation.CostUnderExpected, Source: generation.CostSourceReported, Expected: n(12), Actual: n(11), DriftBps: 833},
		},
		{
			name:      "reported over price, over threshold",
			in:        generation.CostInput{Provider: B, Model: "sonic-v4", Outcome: ok, CreditsConsumed: n(27)},
			threshold: 4999,
			want:      generation.Reconciliation{Status: generation.CostOverExpected, Source: generation.CostSourceReported, Expected: n(18), Actual: n(27), DriftBps: 5000, Drift: true},
		},
		{
			name:      "drift equal to threshold is not drift",
			in:        generation.CostInput{Provider: B, Model: "sonic-v4", Outcome: ok, CreditsConsumed: n(27)},
			threshold: 5000,
			want:      generation.Reconciliation{Status: generation.CostOverExpected, Source: generation.CostSourceReported, Expected: n(18), Actual: n(27), DriftBps: 5000},
		},
		{
			name: "no report on success: unknown, with the expected price only",
			in:   generation.CostInput{Provider: B, Model: "sonic-v3-5", Outcome: ok},
			want: generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceNone, Expected: n(12)},
		},
		{
			name: "unknown model falls back to the provider default",
			in:   generation.CostInput{Provider: B, Model: "sonic-v9", Outcome: ok, CreditsConsumed: n(15)},
			want: generation.Reconciliation{Status: generation.CostMatched, Source: generation.CostSourceReported, Expected: n(15), Actual: n(15)},
		},
		{
			name: "unknown model, no report: the default price expected, the charge unknown",
			in:   generation.CostInput{Provider: B, Model: "sonic-v9", Outcome: ok},
			want: generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceNone, Expected: n(15)},
		},
		{
			name: "unknown model and no default: unknown despite a report",
			in:   generation.CostInput{Provider: "NO_DEFAULT", Model: "m2", Outcome: ok, CreditsConsumed: n(10)},
			want: generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceReported, Actual: n(10)},
		},
		{
			name: "unknown provider, no report",
			in:   generation.CostInput{Provider: "MUSIC_PROVIDER_Z", Outcome: ok},
			want: generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceNone},
		},
		{
			name:     "nil price table",
			nilTable: true,
			in:       generation.CostInput{Provider: A, Outcome: ok},
			want:     generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceNone},
		},
		{
			name: "failed, reported 0 (kie market server-side failure)",
			in:   generation.CostInput{Provider: A, Outcome: failed, CreditsConsumed: n(0)},
			want: generation.Reconciliation{Status: generation.CostMatched, Source: generation.CostSourceReported, Expected: n(0), Actual: n(0)},
		},
		{
			name: "failed but charged",
			in:   generation.CostInput{Provider: A, Outcome: failed, CreditsConsumed: n(12)},
			want: generation.Reconciliation{Status: generation.CostOverExpected, Source: generation.CostSourceReported, Expected: n(0), Actual: n(12), DriftBps: 120000, Drift: true},
		},
		{
			name: "failed, nothing reported: not assumed free",
			in:   generation.CostInput{Provider: A, Outcome: failed},
			want: generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceNone, Expected: n(0)},
		},
		{
			name: "refunded (A 531), reported 0",
			in:   generation.CostInput{Provider: A, Outcome: failed, Refunded: true, CreditsConsumed: n(0)},
			want: generation.Reconciliation{Status: generation.CostMatched, Source: generation.CostSourceReported, Expected: n(0), Actual: n(0)},
		},
		{
			name: "refunded success, nothing reported: no price-table assumption",
			in:   generation.CostInput{Provider: A, Outcome: ok, Refunded: true},
			want: generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceNone, Expected: n(0)},
		},
		{
			name: "refunded success, charged anyway",
			in:   generation.CostInput{Provider: A, Outcome: ok, Refunded: true, CreditsConsumed: n(12)},
			want: generation.Reconciliation{Status: generation.CostOverExpected, Source: generation.CostSourceReported, Expected: n(0), Actual: n(12), DriftBps: 120000, Drift: true},
		},
		{
			name: "pending: nothing expected yet",
			in:   generation.CostInput{Provider: A, Outcome: pending, CreditsConsumed: n(12)},
			want: generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSourceReported, Actual: n(12)},
		},
		{
			name:      "zero threshold: any difference drifts",
			table:     generation.PriceTable{"BIG": {"": 20000}},
			in:        generation.CostInput{Provider: "BIG", Outcome: ok, CreditsConsumed: n(20001)},
			threshold: 0,
			want:      generation.Reconciliation{Status: generation.CostOverExpected, Source: generation.CostSourceReported, Expected: n(20000), Actual: n(20001), DriftBps: 0, Drift: true},
		},
		{
			name:      "negative threshold: any difference drifts",
			in:        generation.CostInput{Provider: A, Outcome: ok, CreditsConsumed: n(11)},
			threshold: -5,
			want:      generation.Reconciliation{Status: generation.CostUnderExpected, Source: generation.CostSourceReported, Expected: n(12), Actual: n(11), DriftBps: 833, Drift: true},
		},
		{
			name:      "negative threshold: a match does not drift",
			in:        generation.CostInput{Provider: A, Outcome: ok, CreditsConsumed: n(12)},
			threshold: -5,
			want:      generation.Reconciliation{Status: generation.CostMatched, Source: generation.CostSourceReported, Expected: n(12), Actual: n(12)},
		},
		{
			name:      "extreme report saturates",
			in:        generation.CostInput{Provider: A, Outcome: failed, CreditsConsumed: n(math.MinInt64)},
			threshold: 100,
			want:      generation.Reconciliation{Status: generation.CostUnderExpected, Source: generation.CostSourceReported, Expected: n(0), Actual: n(math.MinInt64), DriftBps: math.MaxInt64, Drift: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := tt.table
			switch {
			case tt.nilTable:
				table = nil
			case table == nil:
				table = prices
			}
			before := clonePrices(table)
			var consumed *int64
			if tt.in.CreditsConsumed != nil {
				consumed = n(*tt.in.CreditsConsumed)
			}
			in := tt.in

			got := generation.Reconcile(in, table, tt.threshold)

			if !equalReconciliation(got, tt.want) {
				t.Fatalf("Reconcile() = %s, want %s", fmtReconciliation(got), fmtReconciliation(tt.want))
			}
			if in != tt.in {
				t.Errorf("input changed: %+v, was %+v", in, tt.in)
			}
			if consumed != nil && *tt.in.CreditsConsumed != *consumed {
				t.Errorf("CreditsConsumed changed to %d, was %d", *tt.in.CreditsConsumed, *consumed)
			}
			if !maps.EqualFunc(table, before, maps.Equal) {
				t.Errorf("price table changed: %v, was %v", table, before)
			}
			// The result owns its pointers: writing through them changes
			// neither the input nor the table.
			if got.Actual != nil && got.Actual == tt.in.CreditsConsumed {
				t.Errorf("Actual aliases the input's CreditsConsumed")
			}
			if got.Actual != nil {
				*got.Actual = 424242
			}
			if got.Expected != nil {
				*got.Expected = 434343
			}
			if consumed != nil && *tt.in.CreditsConsumed != *consumed {
				t.Errorf("writing the result changed CreditsConsumed to %d", *tt.in.CreditsConsumed)
			}
			if !maps.EqualFunc(table, before, maps.Equal) {
				t.Errorf("writing the result changed the price table: %v", table)
			}
		})
	}
}

func clonePrices(p generation.PriceTable) generation.PriceTable {
	if p == nil {
		return nil
	}
	c := make(generation.PriceTable, len(p))
	for k, v := range p {
		c[k] = maps.Clone(v)
	}
	return c
}

func int64PtrEqual(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func equalReconciliation(a, b generation.Reconciliation) bool {
	return a.Status == b.Status && a.Source == b.Source && int64PtrEqual(a.Expected, b.Expected) &&
		int64PtrEqual(a.Actual, b.Actual) && a.DriftBps == b.DriftBps && a.Drift == b.Drift
}

func fmtReconciliation(r generation.Reconciliation) string {
	p := func(v *int64) any {
		if v == nil {
			return "nil"
		}
		return *v
	}
	return fmt.Sprintf("{%s %s expected=%v actual=%v bps=%d drift=%t}", r.Status, r.Source, p(r.Expected), p(r.Actual), r.DriftBps, r.Drift)
}
