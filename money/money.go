// Package money owns the platform's amounts: atomic integer amounts
// (Atomic, an unsigned 64-bit count of the smallest unit), signed sums with
// 128-bit range (Sum, for ledger balances and totals), and the human decimal
// strings clients send and read.
//
// It enforces the spec's Invariant 3 and the design's money rules: amounts
// that move value are integers with explicit decimals, floating point never
// touches them (nothing in this package uses a float), and amounts in JSON
// are strings. Human decimals are parsed and formatted with
// github.com/cockroachdb/apd/v3, an arbitrary-precision decimal, only at the
// edge; arithmetic is integer arithmetic with overflow checks. The token's
// maximum supply, 18,446,000,000,000,000,000 atomic units (spec, Limits),
// does not fit in an int64 but fits in Atomic.
//
// Every malformed amount (negative, exponent, too many fractional digits,
// empty, whitespace, overflow) is fault.InvalidAmount (INVALID_AMOUNT) with
// details.reason; the caller names the field with WithField.
package money

import (
	"errors"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/creatormusic/platform/fault"
)

// Atomic is an amount in atomic (smallest) units: a non-negative integer up
// to 18,446,744,073,709,551,615. Its decimals live beside it (an account's,
// a token's), never inside it. The zero value is zero.
//
// In JSON an Atomic is a string holding the canonical integer ("1500");
// a JSON number is rejected, so no client or intermediary ever rounds it
// through a float.
type Atomic uint64

// MaxAtomic is the largest Atomic.
const MaxAtomic = Atomic(^uint64(0))

// MaxDecimals bounds the decimals an amount may have: 10^19 is the largest
// power of ten below 2^64, so 19 fractional digits is the most a human
// decimal can meaningfully carry.
const MaxDecimals = 19

// Reasons reported in details.reason of INVALID_AMOUNT.
const (
	// ReasonEmpty is an empty string.
	ReasonEmpty = "empty"
	// ReasonSyntax is anything but digits (and, for decimals, one point):
	// signs, spaces, exponents, leading zeros, NaN, Infinity.
	ReasonSyntax = "syntax"
	// ReasonNegative is a leading minus sign.
	ReasonNegative = "negative"
	// ReasonPrecision is more fractional digits than the amount's decimals.
	ReasonPrecision = "precision"
	// ReasonOverflow is a value above MaxAtomic (or a result that would be).
	ReasonOverflow = "overflow"
	// ReasonUnderflow is a subtraction below zero.
	ReasonUnderflow = "underflow"
	// ReasonDecimals is a decimals argument outside 0..MaxDecimals.
	ReasonDecimals = "decimals"
)

// invalid returns an INVALID_AMOUNT error with a reason.
func invalid(op, reason, message string) *fault.Error {
	return fault.E(op, fault.InvalidAmount, message).With("reason", reason)
}

// WithField returns err with details.field set to field when err is (or
// wraps) a *fault.Error; other errors are returned unchanged. Parsers leave
// the field to the caller, which knows the request path ("amount",
// "postings[2].amountAtomic").
func WithField(err error, field string) error {
	var fe *fault.Error
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	return fe.With("field", field)
}

// ParseAtomic parses the canonical integer form of an atomic amount: ASCII
// digits only, no sign, no leading zeros except "0" itself, no spaces, no
// point, no exponent. Anything else, or a value above MaxAtomic, is
// INVALID_AMOUNT.
func ParseAtomic(s string) (Atomic, error) {
	const op = "money.ParseAtomic"
	if err := checkInteger(op, s); err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, invalid(op, ReasonOverflow, "The amount is too large.")
	}
	return Atomic(v), nil
}

// checkInteger checks the canonical integer syntax.
func checkInteger(op, s string) error {
	switch {
	case s == "":
		return invalid(op, ReasonEmpty, "The amount is empty.")
	case s[0] == '-':
		return invalid(op, ReasonNegative, "The amount must not be negative.")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return invalid(op, ReasonSyntax, "The amount must be an integer string of digits.")
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return invalid(op, ReasonSyntax, "The amount must not have leading zeros.")
	}
	return nil
}

// ParseDecimal parses a human decimal such as "12.5" into atomic units of an
// amount with decimals fractional digits ("12.5" at 9 decimals is
// 12500000000). The form is digits, optionally a point and one or more
// digits: no sign, no spaces, no exponent, no leading zeros in the integer
// part ("0.5" is fine, "00.5" and ".5" are not), at most decimals fractional
// digits (trailing zeros count). Anything else, or a value above MaxAtomic,
// is INVALID_AMOUNT.
func ParseDecimal(s string, decimals int) (Atomic, error) {
	const op = "money.ParseDecimal"
	if decimals < 0 || decimals > MaxDecimals {
		return 0, invalid(op, ReasonDecimals, "The amount's decimals are out of range.")
	}
	intPart, frac, hasPoint := cut(s)
	if intPart == "" && s != "" && s[0] == '.' {
		return 0, invalid(op, ReasonSyntax, "The amount needs digits before the point.")
	}
	if err := checkInteger(op, intPart); err != nil {
		return 0, err
	}
	if hasPoint {
		if frac == "" {
			return 0, invalid(op, ReasonSyntax, "The amount needs digits after the point.")
		}
		for i := 0; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, invalid(op, ReasonSyntax, "The amount must be a decimal string of digits.")
			}
		}
		if len(frac) > decimals {
			return 0, invalid(op, ReasonPrecision, "The amount has more fractional digits than its decimals allow.").
				With("decimals", decimals)
		}
	}
	// 20 integer digits can exceed 2^64; more always do. The bound keeps apd
	// from working on megabyte strings.
	if len(intPart) > 20 {
		return 0, invalid(op, ReasonOverflow, "The amount is too large.")
	}
	d, _, err := apd.NewFromString(s)
	if err != nil {
		return 0, invalid(op, ReasonSyntax, "The amount is not a decimal.")
	}
	// Quantize to exactly decimals fractional digits; the syntax checks above
	// make it exact, and Inexact is checked anyway.
	ctx := apd.BaseContext.WithPrecision(uint32(len(intPart) + decimals + 1))
	var q apd.Decimal
	cond, err := ctx.Quantize(&q, d, -int32(decimals))
	if err != nil || cond.Inexact() {
		return 0, invalid(op, ReasonPrecision, "The amount has more fractional digits than its decimals allow.").
			With("decimals", decimals)
	}
	if q.Negative || !q.Coeff.IsUint64() {
		return 0, invalid(op, ReasonOverflow, "The amount is too large.")
	}
	return Atomic(q.Coeff.Uint64()), nil
}

// cut splits s at its first point.
func cut(s string) (intPart, frac string, hasPoint bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Format returns a as a human decimal with decimals fractional digits, with
// trailing fractional zeros trimmed and no point when nothing remains:
// Format(12500000000, 9) = "12.5", Format(1000, 3) = "1", Format(0, 9) = "0".
// ParseDecimal(Format(a, d), d) == a for every a and valid d. A decimals
// outside 0..MaxDecimals is clamped into that range.
func Format(a Atomic, decimals int) string {
	decimals = max(0, min(decimals, MaxDecimals))
	var coeff apd.BigInt
	coeff.SetUint64(uint64(a))
	s := apd.NewWithBigInt(&coeff, -int32(decimals)).Text('f') // "12.500000000"
	if decimals == 0 {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatFixed returns a as a human decimal with exactly decimals fractional
// digits: FormatFixed(12500000000, 9) = "12.500000000". A decimals outside
// 0..MaxDecimals is clamped into that range.
func FormatFixed(a Atomic, decimals int) string {
	decimals = max(0, min(decimals, MaxDecimals))
	var coeff apd.BigInt
	coeff.SetUint64(uint64(a))
	return apd.NewWithBigInt(&coeff, -int32(decimals)).Text('f')
}

// String returns the canonical integer form ("12500000000").
func (a Atomic) String() string { return strconv.FormatUint(uint64(a), 10) }

// Add returns a+b, or INVALID_AMOUNT (reason overflow) above MaxAtomic.
func (a Atomic) Add(b Atomic) (Atomic, error) {
	s, carry := bits.Add64(uint64(a), uint64(b), 0)
	if carry != 0 {
		return 0, invalid("money.Add", ReasonOverflow, "The amount is too large.")
	}
	return Atomic(s), nil
}

// Sub returns a-b, or INVALID_AMOUNT (reason underflow) below zero.
func (a Atomic) Sub(b Atomic) (Atomic, error) {
	d, borrow := bits.Sub64(uint64(a), uint64(b), 0)
	if borrow != 0 {
		return 0, invalid("money.Sub", ReasonUnderflow, "The amount would be negative.")
	}
	return Atomic(d), nil
}

// Mul returns a*n, or INVALID_AMOUNT (reason overflow) above MaxAtomic.
func (a Atomic) Mul(n uint64) (Atomic, error) {
	hi, lo := bits.Mul64(uint64(a), n)
	if hi != 0 {
		return 0, invalid("money.Mul", ReasonOverflow, "The amount is too large.")
	}
	return Atomic(lo), nil
}

// MarshalJSON encodes a as a JSON string of its canonical integer.
func (a Atomic) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 22)
	b = append(b, '"')
	b = strconv.AppendUint(b, uint64(a), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON decodes a JSON string holding a canonical integer (see
// ParseAtomic). A JSON number, null or any other value is INVALID_AMOUNT:
// amounts in JSON are strings.
func (a *Atomic) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return invalid("money.Atomic.UnmarshalJSON", ReasonSyntax, "Amounts in JSON are strings of an integer.")
	}
	v, err := ParseAtomic(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*a = v
	return nil
}
