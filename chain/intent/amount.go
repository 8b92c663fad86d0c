package intent

import (
	"math"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// GrossUp returns the smallest gross amount whose transfer under fee
// leaves the recipient at least net, and the fee withheld on it. Because
// the fee grows by at most one atomic unit per unit of amount
// (ceil(amount × bps / 10000) with bps ≤ 10000, then capped at
// MaximumFee), gross − fee(gross) is non-decreasing in steps of 0 or 1, so
// the smallest such gross leaves exactly net: gross − fee == net.
//
// With no fee (zero rate) gross is net. A cap makes the fee at most
// MaximumFee, so gross ≤ net + MaximumFee. It fails with INVALID_AMOUNT
// when net is zero or no gross fits in a u64 (a 100% rate without a
// cap, or a sum past 2^64 − 1).
func GrossUp(net uint64, fee token2022.TransferFee) (gross, withheld uint64, err error) {
	const op = "intent.GrossUp"
	if net == 0 {
		return 0, 0, fault.E(op, fault.InvalidAmount, "the price must be positive")
	}
	if fee.BasisPoints == 0 || fee.MaximumFee == 0 {
		return net, 0, nil
	}
	received := func(g uint64) uint64 { return g - fee.Fee(g) }
	// hi bounds the search: net + MaximumFee always suffices, since the
	// fee never exceeds the cap; the sum saturates at the u64 maximum.
	hi := uint64(math.MaxUint64)
	if net <= math.MaxUint64-fee.MaximumFee {
		hi = net + fee.MaximumFee
	}
	if received(hi) < net {
		return 0, 0, fault.E(op, fault.InvalidAmount, "no payment amount covers the price after the transfer fee").
			With("net", strconv.FormatUint(net, 10))
	}
	lo := net // received(g) ≤ g, so nothing below net suffices
	for lo < hi {
		mid := lo + (hi-lo)/2
		if received(mid) >= net {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, fee.Fee(lo), nil
}

// FormatAtomic renders an atomic amount in user units with decimals
// places: no exponent, no trailing zeros after the point, no point for a
// whole number ("1.5", "0.000001", "100"). Solana Pay amounts and review
// screens use it.
func FormatAtomic(amount uint64, decimals uint8) string {
	s := strconv.FormatUint(amount, 10)
	d := int(decimals)
	if d == 0 {
		return s
	}
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	whole, frac := s[:len(s)-d], strings.TrimRight(s[len(s)-d:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// parseCanonicalUint parses a canonical decimal integer (no sign, no
// leading zeros, no spaces) that fits a u64.
func parseCanonicalUint(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || strconv.FormatUint(v, 10) != s {
		return 0, false
	}
	return v, true
}
