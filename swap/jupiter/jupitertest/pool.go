package jupitertest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

// The pool program's contract (shared notes, pool-contract.md): the
// account layout, the swap instruction and the quote math. chain/chaintest
// executes the same program.
const (
	// PoolAccountSize is the length of a pool account.
	PoolAccountSize = 202
	// poolDiscriminator starts every pool account.
	poolDiscriminator = "cppool01"
	// bpsDenominator is 100%.
	bpsDenominator = 10000
)

// routeDiscriminator is the first 8 bytes of sha256("global:route"), the
// swap instruction's discriminator.
func routeDiscriminator() [8]byte { return [8]byte{229, 23, 203, 151, 122, 227, 173, 42} }

// PoolProgramID is the loopback constant-product pool program:
// sha256("chaintest/constant-product-pool/v1").
func PoolProgramID() chain.Address {
	return chain.Address(sha256.Sum256([]byte("chaintest/constant-product-pool/v1")))
}

// VaultAddress is the pool's vault of mint: sha256("chaintest/pool-vault"
// ‖ pool ‖ mint).
func VaultAddress(pool, mint chain.Address) chain.Address {
	h := sha256.New()
	h.Write([]byte("chaintest/pool-vault"))
	h.Write(pool[:])
	h.Write(mint[:])
	var a chain.Address
	h.Sum(a[:0])
	return a
}

// Pool is a decoded pool account.
type Pool struct {
	// MintA and MintB are the pool's mints.
	MintA, MintB chain.Address
	// VaultA and VaultB are its token accounts of MintA and MintB.
	VaultA, VaultB chain.Address
	// FeeBps is the venue fee.
	FeeBps uint16
	// ProgramA and ProgramB are the token programs of MintA and MintB.
	ProgramA, ProgramB chain.Address
}

// EncodePool returns the 202 bytes of p's pool account.
func EncodePool(p Pool) []byte {
	b := make([]byte, PoolAccountSize)
	copy(b[0:], poolDiscriminator)
	copy(b[8:], p.MintA[:])
	copy(b[40:], p.MintB[:])
	copy(b[72:], p.VaultA[:])
	copy(b[104:], p.VaultB[:])
	binary.LittleEndian.PutUint16(b[136:], p.FeeBps)
	copy(b[138:], p.ProgramA[:])
	copy(b[170:], p.ProgramB[:])
	return b
}

// DecodePool reads a pool account's data.
func DecodePool(data []byte) (Pool, error) {
	if len(data) != PoolAccountSize || string(data[:8]) != poolDiscriminator {
		return Pool{}, errors.New("jupitertest: not a pool account (length or discriminator)")
	}
	var p Pool
	copy(p.MintA[:], data[8:40])
	copy(p.MintB[:], data[40:72])
	copy(p.VaultA[:], data[72:104])
	copy(p.VaultB[:], data[104:136])
	p.FeeBps = binary.LittleEndian.Uint16(data[136:138])
	copy(p.ProgramA[:], data[138:170])
	copy(p.ProgramB[:], data[170:202])
	if p.FeeBps > bpsDenominator {
		return Pool{}, fmt.Errorf("jupitertest: pool fee %d bps is above 10000", p.FeeBps)
	}
	return p, nil
}

// side is one direction through a pool.
type side struct {
	inMint, outMint       chain.Address
	vaultIn, vaultOut     chain.Address
	programIn, programOut chain.Address
}

// direction returns the side of p that takes in and gives out, if any.
func (p Pool) direction(in, out chain.Address) (side, bool) {
	switch {
	case p.MintA == in && p.MintB == out:
		return side{in, out, p.VaultA, p.VaultB, p.ProgramA, p.ProgramB}, true
	case p.MintB == in && p.MintA == out:
		return side{in, out, p.VaultB, p.VaultA, p.ProgramB, p.ProgramA}, true
	}
	return side{}, false
}

// priced is one pool's answer to a quote.
type priced struct {
	pool       chain.Address
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
// s.inMint through it at the current reserves and epoch.
func price(ctx context.Context, c *chaintest.Cluster, poolAddr chain.Address, p Pool, s side, amount, slot uint64) (priced, error) {
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
	pr := priced{pool: poolAddr, side: s, feeBps: p.FeeBps, reserveIn: rin.Amount, reserveOut: rout.Amount,
		receivedIn: amount - fee, inputFee: fee, slot: slot}
	pr.out = SwapOut(pr.reserveIn, pr.reserveOut, pr.receivedIn, p.FeeBps)
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

// SwapOut is the pool's output for receivedIn (the input after any
// transfer fee): floor(reserveOut × receivedIn × (10000 − feeBps) /
// (reserveIn × 10000 + receivedIn × (10000 − feeBps))), in big integers; 0
// when the denominator is 0.
func SwapOut(reserveIn, reserveOut, receivedIn uint64, feeBps uint16) uint64 {
	net := new(big.Int).Mul(new(big.Int).SetUint64(receivedIn), big.NewInt(int64(bpsDenominator)-int64(feeBps)))
	num := new(big.Int).Mul(new(big.Int).SetUint64(reserveOut), net)
	den := new(big.Int).Mul(new(big.Int).SetUint64(reserveIn), big.NewInt(bpsDenominator))
	den.Add(den, net)
	if den.Sign() == 0 {
		return 0
	}
	return num.Quo(num, den).Uint64() // below reserveOut, so it fits
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
