package jupitertest

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

// bpsDenominator is 100% in basis points.
const bpsDenominator = 10000

// side is one direction through a pool: the vaults and token programs of
// the mint it takes in and the mint it gives out.
type side struct {
	inMint, outMint       chain.Address
	vaultIn, vaultOut     chain.Address
	programIn, programOut chain.Address
}

// direction returns the side of p that takes in and gives out, if any.
func direction(p chaintest.Pool, in, out chain.Address) (side, bool) {
	switch {
	case p.MintA == in && p.MintB == out:
		return side{in, out, p.VaultA, p.VaultB, p.TokenProgramA, p.TokenProgramB}, true
	case p.MintB == in && p.MintA == out:
		return side{in, out, p.VaultB, p.VaultA, p.TokenProgramB, p.TokenProgramA}, true
	}
	return side{}, false
}

// priced is one pool's answer to a quote.
type priced struct {
	pool       chaintest.Pool
	side       side
	feeBps     uint16
	reserveIn  uint64
	reserveOut uint64
	receivedIn uint64
	out        uint64
	slot       uint64
	impact     string
	inputFee   uint64 // the input mint's transfer fee on the amount
}

// price reads the vaults of pool p (read at slot) and prices amount of
// s.inMint through it at the current reserves and epoch, with the pool
// program's own arithmetic (chaintest.PoolAmountOut).
func price(ctx context.Context, c *chaintest.Cluster, p chaintest.Pool, s side, amount, slot uint64) (priced, error) {
	rin, err := c.GetTokenAccountBalance(ctx, s.vaultIn, chain.Processed)
	if err != nil {
		return priced{}, fmt.Errorf("read vault %s: %w", s.vaultIn, err)
	}
	rout, err := c.GetTokenAccountBalance(ctx, s.vaultOut, chain.Processed)
	if err != nil {
		return priced{}, fmt.Errorf("read vault %s: %w", s.vaultOut, err)
	}
	fee, err := transferFee(ctx, c, s.inMint, amount)
	if err != nil {
		return priced{}, err
	}
	pr := priced{pool: p, side: s, feeBps: p.FeeBps, reserveIn: rin.Amount, reserveOut: rout.Amount,
		receivedIn: amount - fee, inputFee: fee, slot: slot}
	pr.out = chaintest.PoolAmountOut(pr.reserveIn, pr.reserveOut, pr.receivedIn, p.FeeBps)
	pr.impact = PriceImpactPct(pr.reserveIn, pr.reserveOut, pr.receivedIn, pr.out)
	return pr, nil
}

// transferFee is the input mint's Token-2022 transfer fee on amount at
// the current epoch: 0 for a classic SPL mint or a mint without
// TransferFeeConfig.
func transferFee(ctx context.Context, c *chaintest.Cluster, mint chain.Address, amount uint64) (uint64, error) {
	acct, err := c.GetAccountInfo(ctx, mint, chain.Processed)
	if err != nil {
		return 0, fmt.Errorf("read mint %s: %w", mint, err)
	}
	if acct.Owner != token2022.ProgramID() {
		return 0, nil
	}
	m, err := token2022.DecodeMint(acct.Data)
	if err != nil {
		return 0, fmt.Errorf("decode mint %s: %w", mint, err)
	}
	cfg, ok := m.TransferFeeConfig()
	if !ok {
		return 0, nil
	}
	ep, err := c.GetEpochInfo(ctx, chain.Processed)
	if err != nil {
		return 0, fmt.Errorf("read epoch: %w", err)
	}
	fee := cfg.FeeAt(ep.Epoch, amount)
	return min(fee, amount), nil
}

// Threshold is otherAmountThreshold: floor(out × (10000 − slippageBps) /
// 10000).
func Threshold(out uint64, slippageBps uint16) uint64 {
	n := new(big.Int).Mul(new(big.Int).SetUint64(out), big.NewInt(int64(bpsDenominator)-int64(slippageBps)))
	return n.Quo(n, big.NewInt(bpsDenominator)).Uint64()
}

// PriceImpactPct is 1 − (out / receivedIn) / (reserveOut / reserveIn) as
// a decimal string floored to at most 6 decimals, trailing zeros dropped,
// and "0" when it is not positive (or undefined).
func PriceImpactPct(reserveIn, reserveOut, receivedIn, out uint64) string {
	if receivedIn == 0 || reserveOut == 0 {
		return "0"
	}
	// impact = (receivedIn×reserveOut − out×reserveIn) / (receivedIn×reserveOut)
	den := new(big.Int).Mul(new(big.Int).SetUint64(receivedIn), new(big.Int).SetUint64(reserveOut))
	num := new(big.Int).Sub(den, new(big.Int).Mul(new(big.Int).SetUint64(out), new(big.Int).SetUint64(reserveIn)))
	if num.Sign() <= 0 {
		return "0"
	}
	micro := num.Quo(num.Mul(num, big.NewInt(1_000_000)), den) // floor(impact × 10^6)
	if micro.Sign() == 0 {
		return "0"
	}
	s := micro.String()
	if len(s) < 7 { // at least one integer digit
		s = strings.Repeat("0", 7-len(s)) + s
	}
	whole, frac := s[:len(s)-6], strings.TrimRight(s[len(s)-6:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
