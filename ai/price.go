package ai

import (
	"errors"
	"regexp"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Price is a non-negative decimal amount of US dollars, such as the cost
// of one token ("0.0000025"), in canonical form: no leading zeros, no
// trailing fractional zeros, no exponent ("0" for zero). Prices are never
// floats: they are compared and multiplied as exact decimals
// (cockroachdb/apd), and two prices that are the same number are the same
// string, so a routing policy's content hash does not depend on how a
// price was spelled.
type Price string

// pricePattern is a price as people write it: up to 12 integer digits
// and up to 18 fractional ones.
var pricePattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,11})(\.[0-9]{1,18})?$`)

// errPrice says what a price looks like.
var errPrice = errors.New("a price is a non-negative decimal string with at most 12 integer and 18 fractional digits, such as 0.0000025")

// ParsePrice returns s as a canonical Price, or an error when s is not a
// non-negative decimal string (no sign, exponent or spaces).
func ParsePrice(s string) (Price, error) {
	if !pricePattern.MatchString(s) {
		return "", errPrice
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return Price(s), nil
}

// decimal returns p as an exact decimal; an empty or malformed price is
// zero (callers parse prices before they use them).
func (p Price) decimal() *apd.Decimal {
	d, _, err := apd.NewFromString(string(p))
	if err != nil {
		return apd.New(0, 0)
	}
	return d
}

// Cmp compares p and q as numbers: -1, 0 or +1.
func (p Price) Cmp(q Price) int { return p.decimal().Cmp(q.decimal()) }

// costContext computes costs exactly: 60 digits hold any product of a
// price and a 64-bit count.
var costContext = apd.BaseContext.WithPrecision(60)

// Cost returns in units at inPrice plus out units at outPrice, exactly,
// as a canonical Price. Negative counts are an error.
func Cost(inPrice Price, in int64, outPrice Price, out int64) (Price, error) {
	if in < 0 || out < 0 {
		return "", errors.New("ai: unit counts must not be negative")
	}
	var a, b, sum apd.Decimal
	if _, err := costContext.Mul(&a, inPrice.decimal(), apd.New(in, 0)); err != nil {
		return "", err
	}
	if _, err := costContext.Mul(&b, outPrice.decimal(), apd.New(out, 0)); err != nil {
		return "", err
	}
	if _, err := costContext.Add(&sum, &a, &b); err != nil {
		return "", err
	}
	var r apd.Decimal
	r.Reduce(&sum)
	if r.IsZero() {
		return "0", nil
	}
	return Price(r.Text('f')), nil
}
