package swap

import (
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// ReasonZero is details.reason of INVALID_AMOUNT for an amount that parses
// but is zero: a swap of nothing. The other reasons are money's
// (money.ReasonEmpty, ReasonSyntax, ReasonNegative, ReasonPrecision,
// ReasonOverflow, ReasonDecimals).
const ReasonZero = "zero"

// ParseAmount converts the quote request's human decimal amount to atomic
// units of a token with decimals places, decimals being the registry's
// authoritative value read from the mint (never the client's). The form is
// money.ParseDecimal's: ASCII digits with at most one point and digits on
// both sides of it, no sign (a leading '+' or '-' included), no
// whitespace, no exponent, no leading zeros in the whole part, at most
// decimals fractional digits. Anything else, a zero amount, or one above
// 2^64 − 1 atomic units is INVALID_AMOUNT with details.reason and
// details.field "amount".
func ParseAmount(s string, decimals uint8) (money.Atomic, error) {
	const op = "swap.ParseAmount"
	a, err := money.ParseDecimal(s, int(decimals))
	if err != nil {
		return 0, money.WithField(err, "amount")
	}
	if a == 0 {
		return 0, fault.E(op, fault.InvalidAmount, "The amount must be greater than zero.").
			With("reason", ReasonZero).With("field", "amount")
	}
	return a, nil
}

// FormatAmount renders an atomic amount of a token with decimals places as
// the canonical human decimal ParseAmount reads: no exponent, no trailing
// fractional zeros, no point for a whole number ("1.5", "0.000001",
// "100"). ParseAmount(FormatAmount(a, d), d) == a for every positive a.
func FormatAmount(a money.Atomic, decimals uint8) string {
	return money.Format(a, int(decimals))
}
