package swap

import (
	"math/bits"

	"github.com/cockroachdb/apd/v3"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// WholeBps is 100% in basis points.
const WholeBps = 10000

// FeeSplit is a gross input divided between the platform's service fee and
// what the route swaps.
type FeeSplit struct {
	// Gross is what the wallet pays in the input mint.
	Gross money.Atomic
	// Fee is the service fee, floor(Gross × bps / 10000).
	Fee money.Atomic
	// Executable is Gross − Fee, the amount quoted and swapped.
	Executable money.Atomic
}

// SplitServiceFee takes the service fee of bps basis points from gross:
// fee = floor(gross × bps / 10000), executable = gross − fee, computed in
// 128 bits so no amount overflows.
//
// Decision, floor: the platform never takes more than its published rate,
// so any fraction of an atomic unit is left with the customer (at 200 bps
// a gross below 50 units pays no fee). A minimum fee, if wanted, is a
// policy of the settings, not of this arithmetic.
//
// It fails with INVALID_AMOUNT (details.reason "zero") when gross is zero
// or nothing is left to swap, and INVALID_INPUT (details.field
// "serviceFeeBps") when bps exceeds 10000.
func SplitServiceFee(gross money.Atomic, bps uint16) (FeeSplit, error) {
	const op = "swap.SplitServiceFee"
	if bps > WholeBps {
		return FeeSplit{}, fault.Invalid(op, "serviceFeeBps", "The service fee exceeds 10000 basis points.").
			With("limit", WholeBps)
	}
	if gross == 0 {
		return FeeSplit{}, fault.E(op, fault.InvalidAmount, "The amount must be greater than zero.").
			With("reason", ReasonZero).With("field", "amount")
	}
	fee := mulDivFloor(gross, uint64(bps), WholeBps)
	exec := gross - fee
	if exec == 0 {
		return FeeSplit{}, fault.E(op, fault.InvalidAmount, "Nothing is left to swap after the service fee.").
			With("reason", ReasonZero).With("field", "amount")
	}
	return FeeSplit{Gross: gross, Fee: fee, Executable: exec}, nil
}

// MinimumOutput returns the least output the intent accepts:
// floor(expected × (10000 − slippageBps) / 10000), in 128 bits. Flooring
// errs toward the customer's tolerance, never beyond it, and matches the
// provider's threshold within one unit (ThresholdAgrees).
// SLIPPAGE_OUT_OF_POLICY when slippageBps exceeds 10000.
func MinimumOutput(expected money.Atomic, slippageBps uint16) (money.Atomic, error) {
	if slippageBps > WholeBps {
		return 0, fault.E("swap.MinimumOutput", fault.SlippageOutOfPolicy, "The slippage exceeds 10000 basis points.").
			With("field", "slippageBps").With("limit", WholeBps)
	}
	return mulDivFloor(expected, uint64(WholeBps-slippageBps), WholeBps), nil
}

// ThresholdAgrees reports whether a provider's own minimum output (Jupiter's
// otherAmountThreshold) is within one atomic unit of ours: providers round
// the same product either way (swap.md §3). Our minimum is the one the
// intent binds and verification enforces.
func ThresholdAgrees(provider, minimum money.Atomic) bool {
	if provider >= minimum {
		return provider-minimum <= 1
	}
	return minimum-provider <= 1
}

// maxImpactText bounds the price-impact text PriceImpactBps reads, so the
// arithmetic below stays exact at its fixed precision.
const maxImpactText = 64

// PriceImpactBps converts a provider's price impact, a decimal fraction
// string (Jupiter's priceImpactPct: "0.01" is 1%, "1" total loss), to
// basis points: round(fraction × 10000), rounding half up, so a midpoint
// is never understated against the policy's thresholds ("0.00005" is 1,
// "0.0000499" is 0). Plain and exponent forms are read; a negative impact
// (a price improvement) is 0, and one of 1 or more is 10000.
// QUOTE_UNAVAILABLE (details.reason "priceImpact") for text that is not a
// finite decimal or is longer than 64 characters: a quote whose impact
// cannot be read is not executable.
func PriceImpactBps(fraction string) (uint16, error) {
	const op = "swap.PriceImpactBps"
	bad := func() error {
		return fault.E(op, fault.QuoteUnavailable, "The provider's price impact cannot be read.").With("reason", "priceImpact")
	}
	if fraction == "" || len(fraction) > maxImpactText {
		return 0, bad()
	}
	d, _, err := apd.NewFromString(fraction)
	if err != nil || d.Form != apd.Finite {
		return 0, bad()
	}
	if d.Sign() <= 0 {
		return 0, nil
	}
	if d.Cmp(apd.New(1, 0)) >= 0 {
		return WholeBps, nil
	}
	// Below 10^-5 the impact is under a tenth of a basis point.
	if int64(d.NumDigits())+int64(d.Exponent) < -5 {
		return 0, nil
	}
	ctx := apd.BaseContext.WithPrecision(2 * maxImpactText)
	ctx.Rounding = apd.RoundHalfUp
	var x, r apd.Decimal
	if _, err := ctx.Mul(&x, d, apd.New(WholeBps, 0)); err != nil {
		return 0, bad()
	}
	if _, err := ctx.Quantize(&r, &x, 0); err != nil {
		return 0, bad()
	}
	v, err := r.Int64()
	if err != nil || v < 0 || v > WholeBps {
		return 0, bad()
	}
	return uint16(v), nil
}

// Native-coin costs (swap.md §5), in lamports.
const (
	// SignatureFeeLamports is the base fee of one signature.
	SignatureFeeLamports = 5000
	// RentLamportsPerByte is the rent-exempt price of one byte, including
	// the 128 bytes of account overhead (RentExempt).
	RentLamportsPerByte = 6960
	// AccountOverheadBytes is the storage every account is charged for
	// beside its data.
	AccountOverheadBytes = 128
	// WalletFloorLamports is the rent-exempt minimum of a wallet (no
	// data): what must stay in the wallet after the swap.
	WalletFloorLamports = 890_880
	// TokenAccountBytes is an SPL token account's size.
	TokenAccountBytes = 165
	// TokenAccountRentLamports is an SPL token account's rent-exempt
	// minimum, RentExempt(TokenAccountBytes).
	TokenAccountRentLamports = 2_039_280
	// MaxComputeUnitLimit is the largest compute-unit limit of a
	// transaction.
	MaxComputeUnitLimit = 1_400_000
)

// RentExempt returns the rent-exempt minimum of an account with dataBytes
// of data: (128 + dataBytes) × 6960. INVALID_AMOUNT (reason overflow) past
// 2^64 − 1.
func RentExempt(dataBytes uint64) (money.Atomic, error) {
	n, err := money.Atomic(AccountOverheadBytes).Add(money.Atomic(dataBytes))
	if err != nil {
		return 0, fault.Wrap("swap.RentExempt", err)
	}
	r, err := n.Mul(RentLamportsPerByte)
	return r, fault.Wrap("swap.RentExempt", err)
}

// PriorityFee returns the priority fee of a compute-unit price in
// micro-lamports per unit over a compute-unit limit:
// ceil(price × limit / 1,000,000), in 128 bits. INVALID_AMOUNT (reason
// overflow) when it exceeds 2^64 − 1.
func PriorityFee(microLamportsPerCU, computeUnitLimit uint64) (money.Atomic, error) {
	hi, lo := bits.Mul64(microLamportsPerCU, computeUnitLimit)
	lo, c := bits.Add64(lo, 1_000_000-1, 0)
	hi += c
	if hi >= 1_000_000 {
		return 0, fault.E("swap.PriorityFee", fault.InvalidAmount, "The priority fee is too large.").
			With("reason", money.ReasonOverflow)
	}
	q, _ := bits.Div64(hi, lo, 1_000_000)
	return money.Atomic(q), nil
}

// ReserveInputs are what the native-coin reserve of a swap depends on.
type ReserveInputs struct {
	// Signatures is the number of signatures the transaction needs (the
	// wallet's, at least 1).
	Signatures int
	// PriorityFeeLamports is the prepared transaction's priority fee
	// (PriorityFee, or the provider's prioritizationFeeLamports).
	PriorityFeeLamports money.Atomic
	// TipLamports is any tip the transaction pays (zero when none).
	TipLamports money.Atomic
	// MissingAccountBytes lists the data sizes of accounts the
	// transaction creates and the wallet funds: 165 for an SPL token
	// account, 170 or 182 for a Token-2022 one.
	MissingAccountBytes []uint64
	// NativeInput is, when the input is the native coin, the lamports the
	// swap takes: the executable input, plus the service fee when it is
	// paid in the native coin. Zero otherwise.
	NativeInput money.Atomic
	// TemporaryWrappedAccount is set when the transaction wraps the native
	// coin in a temporary token account: its rent is refunded within the
	// transaction but must be there while it runs.
	TemporaryWrappedAccount bool
}

// NativeReserve returns the lamports the wallet must hold before the swap
// (swap.md §5): 5,000 × signatures + priority fee + tips + the rent of
// each missing account + (native input: the input, and 2,039,280 for a
// temporary wrapped account) + the wallet's own floor of 890,880, which
// must remain afterwards. INVALID_INPUT (details.field "signatures") when
// signatures is below 1; INVALID_AMOUNT (reason overflow) past 2^64 − 1.
func NativeReserve(in ReserveInputs) (money.Atomic, error) {
	const op = "swap.NativeReserve"
	if in.Signatures < 1 {
		return 0, fault.Invalid(op, "signatures", "A transaction needs at least one signature.")
	}
	total, err := money.Atomic(SignatureFeeLamports).Mul(uint64(in.Signatures))
	if err != nil {
		return 0, fault.Wrap(op, err)
	}
	parts := []money.Atomic{in.PriorityFeeLamports, in.TipLamports, in.NativeInput, WalletFloorLamports}
	if in.TemporaryWrappedAccount {
		parts = append(parts, TokenAccountRentLamports)
	}
	for _, b := range in.MissingAccountBytes {
		r, err := RentExempt(b)
		if err != nil {
			return 0, fault.Wrap(op, err)
		}
		parts = append(parts, r)
	}
	for _, p := range parts {
		if total, err = total.Add(p); err != nil {
			return 0, fault.Wrap(op, err)
		}
	}
	return total, nil
}

// CheckNativeReserve returns the reserve NativeReserve computes, and
// INSUFFICIENT_NATIVE_RESERVE (details.required and details.available,
// canonical integer strings) when balance is below it. A balance that
// could not be read is the caller's BALANCE_UNAVAILABLE, never zero.
func CheckNativeReserve(balance money.Atomic, in ReserveInputs) (money.Atomic, error) {
	required, err := NativeReserve(in)
	if err != nil {
		return 0, err
	}
	if balance < required {
		return required, fault.E("swap.CheckNativeReserve", fault.InsufficientNativeReserve,
			"The wallet holds too little of the native coin for fees, rent and the swap.").
			With("required", required.String()).With("available", balance.String())
	}
	return required, nil
}

// mulDivFloor returns floor(a × n / d) for n ≤ d, exactly: the 128-bit
// product's high word is then below d, so the quotient fits 64 bits.
func mulDivFloor(a money.Atomic, n, d uint64) money.Atomic {
	q, _ := mulDiv(a, n, d)
	return q
}

// mulDiv returns floor(a × n / d) exactly, and false when the quotient
// exceeds 64 bits.
func mulDiv(a money.Atomic, n, d uint64) (money.Atomic, bool) {
	hi, lo := bits.Mul64(uint64(a), n)
	if hi >= d {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, d)
	return money.Atomic(q), true
}
