package token2022

import (
	"math"
	"math/bits"

	"github.com/creatormusic/platform/fault"
)

// MaxFeeBasisPoints is the program's largest transfer fee, 10000 basis points
// (100%); SetTransferFee rejects more. It is a protocol limit: a registry's
// own, lower cap is its policy and not part of this package.
const MaxFeeBasisPoints = 10000

// TransferFee is one entry of a mint's fee schedule (18 bytes: epoch u64,
// maximum_fee u64, transfer_fee_basis_points u16).
type TransferFee struct {
	// Epoch is the first epoch the fee applies in.
	Epoch uint64
	// MaximumFee caps the fee of one transfer, in atomic units.
	MaximumFee uint64
	// BasisPoints is the fee rate in hundredths of a percent.
	BasisPoints uint16
}

// Fee returns the fee withheld on a transfer of amount under f (chain.md
// §5.4): 0 when BasisPoints or amount is 0, else
// min(ceil(amount × BasisPoints / 10000), MaximumFee). The product is
// computed in 128 bits, so no amount overflows. A rate above 10000, which the
// program never stores, still gives the exact minimum rather than a panic.
func (f TransferFee) Fee(amount uint64) uint64 {
	if f.BasisPoints == 0 || amount == 0 {
		return 0
	}
	hi, lo := bits.Mul64(amount, uint64(f.BasisPoints))
	// ceil(n / d) = floor((n + d - 1) / d); the sum cannot overflow 128 bits.
	lo, carry := bits.Add64(lo, MaxFeeBasisPoints-1, 0)
	hi += carry
	if hi >= MaxFeeBasisPoints {
		// The quotient does not fit in 64 bits, so it exceeds any cap.
		return f.MaximumFee
	}
	q, _ := bits.Div64(hi, lo, MaxFeeBasisPoints)
	return min(q, f.MaximumFee)
}

// EpochFee returns the fee in force in epoch: Newer when epoch >=
// Newer.Epoch, else Older.
func (c TransferFeeConfig) EpochFee(epoch uint64) TransferFee {
	if epoch >= c.Newer.Epoch {
		return c.Newer
	}
	return c.Older
}

// FeeAt returns the fee withheld on a transfer of amount in epoch: the fee in
// force in that epoch (EpochFee) applied to amount (TransferFee.Fee).
func (c TransferFeeConfig) FeeAt(epoch, amount uint64) uint64 {
	return c.EpochFee(epoch).Fee(amount)
}

// SetTransferFee returns c after the program's SetTransferFee instruction in
// currentEpoch (chain.md §5.4): if Newer is already in force (Newer.Epoch <=
// currentEpoch) it becomes Older; Newer becomes the new fee from
// currentEpoch + 2 (saturating), so a change never applies to the epoch it is
// made in nor the next. A mint is initialized with Older and Newer both equal
// to {currentEpoch, basisPoints, maximumFee}. It fails with INVALID_INPUT
// when basisPoints exceeds MaxFeeBasisPoints, as the program does.
func (c TransferFeeConfig) SetTransferFee(currentEpoch uint64, basisPoints uint16, maximumFee uint64) (TransferFeeConfig, error) {
	if basisPoints > MaxFeeBasisPoints {
		return c, fault.E("token2022.SetTransferFee", fault.InvalidInput, "transfer fee exceeds 10000 basis points").
			With("field", "basisPoints").With("limit", MaxFeeBasisPoints)
	}
	if c.Newer.Epoch <= currentEpoch {
		c.Older = c.Newer
	}
	epoch := uint64(math.MaxUint64)
	if currentEpoch <= math.MaxUint64-2 {
		epoch = currentEpoch + 2
	}
	c.Newer = TransferFee{Epoch: epoch, MaximumFee: maximumFee, BasisPoints: basisPoints}
	return c, nil
}
