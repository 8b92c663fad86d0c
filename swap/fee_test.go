package swap

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

func TestSplitServiceFee(t *testing.T) {
	tests := []struct {
		gross     money.Atomic
		bps       uint16
		fee, exec money.Atomic
	}{
		{1_000_000_000, 200, 20_000_000, 980_000_000},
		{49, 200, 0, 49}, // 0.98 of a unit: the customer keeps the fraction
		{50, 200, 1, 49},
		{99, 200, 1, 98}, // 1.98 floors to 1
		{1_000_000_000, 0, 0, 1_000_000_000},
		{money.MaxAtomic, 200, 368_934_881_474_191_032, money.MaxAtomic - 368_934_881_474_191_032},
		{3, 9999, 2, 1},
	}
	for _, tt := range tests {
		got, err := SplitServiceFee(tt.gross, tt.bps)
		if err != nil || got.Fee != tt.fee || got.Executable != tt.exec || got.Gross != tt.gross {
			t.Errorf("SplitServiceFee(%d, %d) = %+v, %v; want fee %d, executable %d", tt.gross, tt.bps, got, err, tt.fee, tt.exec)
		}
	}
}

// TestServiceFeeNeverAbovePolicy checks against exact big-integer
// arithmetic that the fee is the largest integer not above gross × bps /
// 10000.
func TestServiceFeeNeverAbovePolicy(t *testing.T) {
	for _, gross := range []money.Atomic{1, 7, 49, 50, 51, 12_345, 999_999_999, 1 << 63, money.MaxAtomic} {
		for _, bps := range []uint16{1, 3, 199, 200, 201, 5000, 9999} {
			got, err := SplitServiceFee(gross, bps)
			if err != nil {
				t.Fatalf("SplitServiceFee(%d, %d): %v", gross, bps, err)
			}
			exact := new(big.Int).Mul(new(big.Int).SetUint64(uint64(gross)), big.NewInt(int64(bps)))
			fee := new(big.Int).SetUint64(uint64(got.Fee))
			if new(big.Int).Mul(fee, big.NewInt(10000)).Cmp(exact) > 0 {
				t.Errorf("SplitServiceFee(%d, %d) fee %d exceeds the rate", gross, bps, got.Fee)
			}
			if new(big.Int).Mul(new(big.Int).Add(fee, big.NewInt(1)), big.NewInt(10000)).Cmp(exact) <= 0 {
				t.Errorf("SplitServiceFee(%d, %d) fee %d is not the floor", gross, bps, got.Fee)
			}
			if got.Fee+got.Executable != gross {
				t.Errorf("SplitServiceFee(%d, %d) loses units: %+v", gross, bps, got)
			}
		}
	}
}

func TestSplitServiceFeeRefusals(t *testing.T) {
	tests := []struct {
		gross money.Atomic
		bps   uint16
		code  fault.Code
	}{
		{0, 200, fault.InvalidAmount},
		{1, 10000, fault.InvalidAmount}, // nothing left to swap
		{1_000, 10001, fault.InvalidInput},
	}
	for _, tt := range tests {
		if _, err := SplitServiceFee(tt.gross, tt.bps); !fault.Is(err, tt.code) {
			t.Errorf("SplitServiceFee(%d, %d) = %v, want %s", tt.gross, tt.bps, err, tt.code)
		}
	}
}

func TestMinimumOutput(t *testing.T) {
	tests := []struct {
		expected money.Atomic
		bps      uint16
		want     money.Atomic
	}{
		{17_057_460, 100, 16_886_885}, // swap.md §3's first example
		{16_198_753, 50, 16_117_759},  // its second, where the provider rounds up to 16,117,760
		{5_000_000, 50, 4_975_000},
		{1, 1, 0},
		{100, 0, 100},
		{100, 10000, 0},
		{money.MaxAtomic, 1, 18_444_899_399_302_180_659},
	}
	for _, tt := range tests {
		got, err := MinimumOutput(tt.expected, tt.bps)
		if err != nil || got != tt.want {
			t.Errorf("MinimumOutput(%d, %d) = %d, %v; want %d", tt.expected, tt.bps, got, err, tt.want)
		}
	}
	if _, err := MinimumOutput(100, 10001); !fault.Is(err, fault.SlippageOutOfPolicy) {
		t.Errorf("MinimumOutput over 100%% = %v, want SLIPPAGE_OUT_OF_POLICY", err)
	}
	if !ThresholdAgrees(16_117_760, 16_117_759) || !ThresholdAgrees(16_886_885, 16_886_885) || !ThresholdAgrees(9, 10) {
		t.Error("ThresholdAgrees refuses a one-unit rounding difference")
	}
	if ThresholdAgrees(16_117_761, 16_117_759) || ThresholdAgrees(8, 10) {
		t.Error("ThresholdAgrees accepts a two-unit difference")
	}
}

func TestPriceImpactBps(t *testing.T) {
	tests := []struct {
		in   string
		want uint16
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "0.01", want: 100},
		{in: "0.00005", want: 1}, // a midpoint rounds up
		{in: "0.0000499", want: 0},
		{in: "0.00015", want: 2},
		{in: "0.00025", want: 3},
		{in: "0.12345", want: 1235},
		{in: "0.1234499999999999999999999999999999999999999999", want: 1234},
		{in: "0.99994", want: 9999},
		{in: "0.99995", want: 10000},
		{in: "1", want: 10000},
		{in: "3.5", want: 10000},
		{in: "1e-3", want: 10},
		{in: "1E-2", want: 100},
		{in: "1e-99999", want: 0},
		{in: "1e99999", want: 10000},
		{in: "-0.001", want: 0},
		{in: "-5", want: 0},
		{in: "", bad: true},
		{in: "NaN", bad: true},
		{in: "Infinity", bad: true},
		{in: "-Infinity", bad: true},
		{in: "abc", bad: true},
		{in: "0.0.1", bad: true},
		{in: " 0.1", bad: true},
		{in: "0." + strings.Repeat("1", 70), bad: true},
	}
	for _, tt := range tests {
		got, err := PriceImpactBps(tt.in)
		if tt.bad {
			if !fault.Is(err, fault.QuoteUnavailable) {
				t.Errorf("PriceImpactBps(%q) = %d, %v; want QUOTE_UNAVAILABLE", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("PriceImpactBps(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestRentExempt(t *testing.T) {
	for bytes, want := range map[uint64]money.Atomic{0: 890_880, 165: 2_039_280, 170: 2_074_080, 182: 2_157_600} {
		if got, err := RentExempt(bytes); err != nil || got != want {
			t.Errorf("RentExempt(%d) = %d, %v; want %d", bytes, got, err, want)
		}
	}
	if got, _ := RentExempt(TokenAccountBytes); got != TokenAccountRentLamports {
		t.Errorf("TokenAccountRentLamports %d is not RentExempt(165) %d", TokenAccountRentLamports, got)
	}
	if got, _ := RentExempt(0); got != WalletFloorLamports {
		t.Errorf("WalletFloorLamports %d is not RentExempt(0) %d", WalletFloorLamports, got)
	}
	if _, err := RentExempt(1 << 62); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("RentExempt(2^62) = %v, want INVALID_AMOUNT", err)
	}
}

func TestPriorityFee(t *testing.T) {
	tests := []struct {
		price, limit uint64
		want         money.Atomic
	}{
		{10_000, MaxComputeUnitLimit, 14_000}, // swap.md §5
		{1, 200_000, 1},                       // 0.2 rounds up
		{0, MaxComputeUnitLimit, 0},
		{1_000_000, 1, 1},
		{1_000_001, 1, 2},
		{82_000_000_000, MaxComputeUnitLimit, 114_800_000_000}, // a spiked estimate
	}
	for _, tt := range tests {
		if got, err := PriorityFee(tt.price, tt.limit); err != nil || got != tt.want {
			t.Errorf("PriorityFee(%d, %d) = %d, %v; want %d", tt.price, tt.limit, got, err, tt.want)
		}
	}
	if _, err := PriorityFee(^uint64(0), ^uint64(0)); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("PriorityFee overflow = %v, want INVALID_AMOUNT", err)
	}
}

func TestNativeReserve(t *testing.T) {
	tests := []struct {
		name string
		in   ReserveInputs
		want money.Atomic
	}{
		{"token to token, output account exists", ReserveInputs{Signatures: 1, PriorityFeeLamports: 14_000},
			5_000 + 14_000 + 890_880},
		{"output account missing", ReserveInputs{Signatures: 1, PriorityFeeLamports: 14_000, MissingAccountBytes: []uint64{165}},
			5_000 + 14_000 + 2_039_280 + 890_880},
		{"Token-2022 output account with a fee", ReserveInputs{Signatures: 1, MissingAccountBytes: []uint64{182}},
			5_000 + 2_157_600 + 890_880},
		{"native input wrapped in a temporary account", ReserveInputs{Signatures: 1, PriorityFeeLamports: 14_000,
			NativeInput: 1_000_000_000, TemporaryWrappedAccount: true, MissingAccountBytes: []uint64{165}},
			5_000 + 14_000 + 1_000_000_000 + 2_039_280 + 2_039_280 + 890_880},
		{"two signatures and a tip", ReserveInputs{Signatures: 2, TipLamports: 1_000_000},
			10_000 + 1_000_000 + 890_880},
	}
	for _, tt := range tests {
		got, err := NativeReserve(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("%s: NativeReserve = %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
	if _, err := NativeReserve(ReserveInputs{}); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("NativeReserve without signatures = %v, want INVALID_INPUT", err)
	}
	if _, err := NativeReserve(ReserveInputs{Signatures: 1, NativeInput: money.MaxAtomic}); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("NativeReserve overflow = %v, want INVALID_AMOUNT", err)
	}
}

func TestCheckNativeReserve(t *testing.T) {
	in := ReserveInputs{Signatures: 1, PriorityFeeLamports: 14_000, MissingAccountBytes: []uint64{165}}
	const need = 5_000 + 14_000 + 2_039_280 + 890_880
	if got, err := CheckNativeReserve(need, in); err != nil || got != need {
		t.Errorf("CheckNativeReserve(exact) = %d, %v", got, err)
	}
	_, err := CheckNativeReserve(need-1, in)
	var fe *fault.Error
	if !fault.Is(err, fault.InsufficientNativeReserve) || !errors.As(err, &fe) {
		t.Fatalf("CheckNativeReserve(short) = %v, want INSUFFICIENT_NATIVE_RESERVE", err)
	}
	if fe.Details["required"] != "2949160" || fe.Details["available"] != "2949159" {
		t.Errorf("details = %v", fe.Details)
	}
}
