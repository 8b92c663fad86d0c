package swap

import (
	"errors"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in       string
		decimals uint8
		want     money.Atomic
		reason   string // "" means accepted
	}{
		{"1", 9, 1_000_000_000, ""},
		{"1.5", 9, 1_500_000_000, ""},
		{"0.000000001", 9, 1, ""},
		{"0.50", 2, 50, ""},
		{"12", 0, 12, ""},
		{"18446744073.709551615", 9, money.MaxAtomic, ""},
		{"18446744073.709551616", 9, 0, money.ReasonOverflow},
		{"18446744074", 9, 0, money.ReasonOverflow},
		{"99999999999999999999999999", 0, 0, money.ReasonOverflow},
		{"", 9, 0, money.ReasonEmpty},
		{"0", 9, 0, ReasonZero},
		{"0.000", 9, 0, ReasonZero},
		{"-1", 9, 0, money.ReasonNegative},
		{"+1", 9, 0, money.ReasonSyntax},
		{"1e9", 9, 0, money.ReasonSyntax},
		{"1E-3", 9, 0, money.ReasonSyntax},
		{" 1", 9, 0, money.ReasonSyntax},
		{"1 ", 9, 0, money.ReasonSyntax},
		{"1\t", 9, 0, money.ReasonSyntax},
		{"1,5", 9, 0, money.ReasonSyntax},
		{"1_000", 9, 0, money.ReasonSyntax},
		{"0x10", 9, 0, money.ReasonSyntax},
		{"١", 9, 0, money.ReasonSyntax},
		{"NaN", 9, 0, money.ReasonSyntax},
		{"Infinity", 9, 0, money.ReasonSyntax},
		{".5", 9, 0, money.ReasonSyntax},
		{"5.", 9, 0, money.ReasonSyntax},
		{"1.2.3", 9, 0, money.ReasonSyntax},
		{"01", 9, 0, money.ReasonSyntax},
		{"1.0000000001", 9, 0, money.ReasonPrecision},
		{"1.5", 0, 0, money.ReasonPrecision},
		{"1", 20, 0, money.ReasonDecimals},
	}
	for _, tt := range tests {
		got, err := ParseAmount(tt.in, tt.decimals)
		if tt.reason == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseAmount(%q, %d) = %d, %v; want %d", tt.in, tt.decimals, got, err, tt.want)
			}
			continue
		}
		var fe *fault.Error
		if !fault.Is(err, fault.InvalidAmount) || !errors.As(err, &fe) {
			t.Errorf("ParseAmount(%q, %d) = %d, %v; want INVALID_AMOUNT", tt.in, tt.decimals, got, err)
			continue
		}
		if fe.Details["reason"] != tt.reason || fe.Details["field"] != "amount" {
			t.Errorf("ParseAmount(%q, %d) details = %v; want reason %s, field amount", tt.in, tt.decimals, fe.Details, tt.reason)
		}
	}
}

func TestFormatAmountRoundTrips(t *testing.T) {
	tests := []struct {
		a        money.Atomic
		decimals uint8
		want     string
	}{
		{1_500_000_000, 9, "1.5"},
		{1, 9, "0.000000001"},
		{100_000_000_000, 9, "100"},
		{42, 0, "42"},
		{money.MaxAtomic, 9, "18446744073.709551615"},
		{money.MaxAtomic, 19, "1.8446744073709551615"},
	}
	for _, tt := range tests {
		s := FormatAmount(tt.a, tt.decimals)
		if s != tt.want {
			t.Errorf("FormatAmount(%d, %d) = %q, want %q", tt.a, tt.decimals, s, tt.want)
		}
		back, err := ParseAmount(s, tt.decimals)
		if err != nil || back != tt.a {
			t.Errorf("ParseAmount(FormatAmount(%d, %d)) = %d, %v", tt.a, tt.decimals, back, err)
		}
	}
}
