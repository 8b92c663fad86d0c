package money

import (
	"math/bits"
	"strconv"

	"github.com/creatormusic/platform/fault"
)

// Sum is a signed integer of 128 bits (two's complement in two words), for
// ledger balances and totals: any sum of up to 2^63 Atomic values, with
// either sign, fits. Arithmetic is overflow-checked. The zero value is zero.
//
// In JSON a Sum is a string of its decimal integer ("-1500").
type Sum struct {
	hi uint64 // high word; its top bit is the sign
	lo uint64
}

// SumOf returns a as a Sum.
func SumOf(a Atomic) Sum { return Sum{lo: uint64(a)} }

// ErrSumOverflow is the error of a Sum outside 128 bits: INVALID_AMOUNT,
// reason overflow. Stores that add balances themselves return it too.
func ErrSumOverflow(op string) error {
	return invalid(op, ReasonOverflow, "The total is too large.")
}

// Negative reports whether s < 0.
func (s Sum) Negative() bool { return int64(s.hi) < 0 }

// IsZero reports whether s == 0.
func (s Sum) IsZero() bool { return s.hi == 0 && s.lo == 0 }

// Sign returns -1, 0 or +1.
func (s Sum) Sign() int {
	switch {
	case s.Negative():
		return -1
	case s.IsZero():
		return 0
	}
	return 1
}

// Cmp returns -1, 0 or +1 as s is less than, equal to or greater than t.
func (s Sum) Cmp(t Sum) int {
	switch {
	case int64(s.hi) < int64(t.hi):
		return -1
	case int64(s.hi) > int64(t.hi):
		return 1
	case s.lo < t.lo:
		return -1
	case s.lo > t.lo:
		return 1
	}
	return 0
}

// Add returns s+t, or INVALID_AMOUNT (reason overflow) outside 128 bits.
func (s Sum) Add(t Sum) (Sum, error) {
	lo, c := bits.Add64(s.lo, t.lo, 0)
	hi, _ := bits.Add64(s.hi, t.hi, c)
	r := Sum{hi: hi, lo: lo}
	if s.Negative() == t.Negative() && r.Negative() != s.Negative() {
		return Sum{}, ErrSumOverflow("money.Sum.Add")
	}
	return r, nil
}

// Sub returns s-t, or INVALID_AMOUNT (reason overflow) outside 128 bits.
func (s Sum) Sub(t Sum) (Sum, error) {
	lo, b := bits.Sub64(s.lo, t.lo, 0)
	hi, _ := bits.Sub64(s.hi, t.hi, b)
	r := Sum{hi: hi, lo: lo}
	if s.Negative() != t.Negative() && r.Negative() != s.Negative() {
		return Sum{}, ErrSumOverflow("money.Sum.Sub")
	}
	return r, nil
}

// AddAtomic returns s+a.
func (s Sum) AddAtomic(a Atomic) (Sum, error) { return s.Add(SumOf(a)) }

// SubAtomic returns s-a.
func (s Sum) SubAtomic(a Atomic) (Sum, error) { return s.Sub(SumOf(a)) }

// Neg returns -s, or INVALID_AMOUNT for the one value without a negation.
func (s Sum) Neg() (Sum, error) { return Sum{}.Sub(s) }

// Atomic returns s as an Atomic, and false when s is negative or above
// MaxAtomic.
func (s Sum) Atomic() (Atomic, bool) {
	if s.hi != 0 {
		return 0, false
	}
	return Atomic(s.lo), true
}

// abs returns the magnitude of s as an unsigned 128-bit pair.
func (s Sum) abs() (hi, lo uint64) {
	if !s.Negative() {
		return s.hi, s.lo
	}
	lo, b := bits.Sub64(0, s.lo, 0)
	hi, _ = bits.Sub64(0, s.hi, b)
	return hi, lo
}

// String returns the decimal integer, with a leading "-" when negative.
func (s Sum) String() string {
	hi, lo := s.abs()
	if hi == 0 {
		if s.Negative() {
			return "-" + strconv.FormatUint(lo, 10)
		}
		return strconv.FormatUint(lo, 10)
	}
	// Divide the 128-bit magnitude by 10^19 twice: at most 39 digits.
	const e19 = 10_000_000_000_000_000_000
	var parts [3]uint64
	for i := 2; i >= 0; i-- {
		qhi := hi / e19
		var r uint64
		hi, r = qhi, hi%e19
		var qlo uint64
		qlo, r = bits.Div64(r, lo, e19)
		lo = qlo
		parts[i] = r
	}
	var b []byte
	if s.Negative() {
		b = append(b, '-')
	}
	first := true
	for _, p := range parts {
		switch {
		case first && p == 0:
			continue
		case first:
			b = strconv.AppendUint(b, p, 10)
			first = false
		default:
			d := strconv.FormatUint(p, 10)
			for range 19 - len(d) {
				b = append(b, '0')
			}
			b = append(b, d...)
		}
	}
	return string(b)
}

// ParseSum parses a decimal integer with an optional leading "-": digits
// only, no leading zeros except "0", no "-0". It is how stores read
// balances back; anything else is INVALID_AMOUNT.
func ParseSum(str string) (Sum, error) {
	const op = "money.ParseSum"
	neg := false
	digits := str
	if len(str) > 0 && str[0] == '-' {
		neg, digits = true, str[1:]
		if digits == "0" {
			return Sum{}, invalid(op, ReasonSyntax, "The total is not canonical.")
		}
	}
	if digits == "" {
		return Sum{}, invalid(op, ReasonEmpty, "The total is empty.")
	}
	if err := checkInteger(op, digits); err != nil {
		return Sum{}, err
	}
	if len(digits) > 40 {
		return Sum{}, ErrSumOverflow(op)
	}
	// Accumulate the magnitude as unsigned 128 bits, then apply the sign.
	var hi, lo uint64
	for i := 0; i < len(digits); i++ {
		h1, l1 := bits.Mul64(lo, 10)
		h2, h2lo := bits.Mul64(hi, 10)
		if h2 != 0 {
			return Sum{}, ErrSumOverflow(op)
		}
		var c uint64
		hi, c = bits.Add64(h2lo, h1, 0)
		if c != 0 {
			return Sum{}, ErrSumOverflow(op)
		}
		lo, c = bits.Add64(l1, uint64(digits[i]-'0'), 0)
		hi, c = bits.Add64(hi, 0, c)
		if c != 0 {
			return Sum{}, ErrSumOverflow(op)
		}
	}
	m := Sum{hi: hi, lo: lo}
	if !neg {
		if m.Negative() {
			return Sum{}, ErrSumOverflow(op)
		}
		return m, nil
	}
	if m.Negative() && !(m.hi == 1<<63 && m.lo == 0) { // -2^127 is representable
		return Sum{}, ErrSumOverflow(op)
	}
	lo, b := bits.Sub64(0, m.lo, 0)
	hi, _ = bits.Sub64(0, m.hi, b)
	return Sum{hi: hi, lo: lo}, nil
}

// MarshalJSON encodes s as a JSON string of its decimal integer.
func (s Sum) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// UnmarshalJSON decodes a JSON string holding a decimal integer (see
// ParseSum); a JSON number is INVALID_AMOUNT.
func (s *Sum) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fault.E("money.Sum.UnmarshalJSON", fault.InvalidAmount, "Totals in JSON are strings of an integer.").
			With("reason", ReasonSyntax)
	}
	v, err := ParseSum(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
