package chaintest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// The loopback constant-product pool program. Its account layout, its one
// instruction (the data of Jupiter v6's route: discriminator, in_amount,
// quoted_out_amount, slippage_bps, platform_fee_bps; swap.md §1.8) and its
// errors are a contract shared with the aggregator simulator; the package
// doc lists them.

// PoolAccountSize is the size of a pool account's data.
const PoolAccountSize = 202

// poolDiscriminator starts every pool account's data.
const poolDiscriminator = "cppool01"

// routeDiscriminator is sha256("global:route")[:8], the Anchor
// discriminator of Jupiter v6's route instruction.
var routeDiscriminator = [8]byte{229, 23, 203, 151, 122, 227, 173, 42}

// routeDataSize is the swap instruction's data size: discriminator,
// in_amount u64, quoted_out_amount u64, slippage_bps u16,
// platform_fee_bps u8.
const routeDataSize = 8 + 8 + 8 + 2 + 1

// poolProgram is the pool program's id.
var poolProgram = chain.Address(sha256.Sum256([]byte("chaintest/constant-product-pool/v1")))

// PoolProgramID returns the pool program's id: the SHA-256 of
// "chaintest/constant-product-pool/v1".
func PoolProgramID() chain.Address { return poolProgram }

// The pool program's errors, as InstructionError Custom codes. The 6000s
// are Jupiter v6's codes for the same failures; the others are Anchor's
// framework codes for an instruction or account it cannot read.
const (
	PoolErrInstructionMissing           uint32 = 100  // data shorter than a discriminator
	PoolErrInstructionFallbackNotFound  uint32 = 101  // not the route discriminator
	PoolErrInstructionDidNotDeserialize uint32 = 102  // route data of the wrong size
	PoolErrConstraintMut                uint32 = 2000 // a writable account is read-only in the message
	PoolErrAccountDiscriminatorMismatch uint32 = 3002 // the pool account is not a pool
	PoolErrAccountOwnedByWrongProgram   uint32 = 3007 // the pool account is not the program's
	PoolErrEmptyRoute                   uint32 = 6000 // the swap would send nothing
	PoolErrSlippageToleranceExceeded    uint32 = 6001 // out is below the quote less slippage
	PoolErrMissingPlatformFeeAccount    uint32 = 6003 // platform_fee_bps is not 0
	PoolErrInvalidSlippage              uint32 = 6004 // slippage_bps above 10000
	PoolErrNotEnoughAccountKeys         uint32 = 6008 // fewer than 10 accounts
	PoolErrIncorrectTokenProgramID      uint32 = 6014 // a token program is not its mint's
	PoolErrInsufficientFunds            uint32 = 6024 // the source holds less than in_amount
	PoolErrInvalidTokenAccount          uint32 = 6025 // a mint, vault, source or destination does not match
)

// poolErrors names each code for the program's failure log.
var poolErrors = map[uint32][2]string{
	PoolErrInstructionMissing:           {"InstructionMissing", "8 byte instruction identifier not provided"},
	PoolErrInstructionFallbackNotFound:  {"InstructionFallbackNotFound", "Fallback functions are not supported"},
	PoolErrInstructionDidNotDeserialize: {"InstructionDidNotDeserialize", "The program could not deserialize the given instruction"},
	PoolErrConstraintMut:                {"ConstraintMut", "A mut constraint was violated"},
	PoolErrAccountDiscriminatorMismatch: {"AccountDiscriminatorMismatch", "8 byte discriminator did not match what was expected"},
	PoolErrAccountOwnedByWrongProgram:   {"AccountOwnedByWrongProgram", "The given account is owned by a different program than expected"},
	PoolErrEmptyRoute:                   {"EmptyRoute", "Empty route"},
	PoolErrSlippageToleranceExceeded:    {"SlippageToleranceExceeded", "Slippage tolerance exceeded"},
	PoolErrMissingPlatformFeeAccount:    {"MissingPlatformFeeAccount", "Missing platform fee account"},
	PoolErrInvalidSlippage:              {"InvalidSlippage", "Invalid slippage"},
	PoolErrNotEnoughAccountKeys:         {"NotEnoughAccountKeys", "Not Enough Account keys"},
	PoolErrIncorrectTokenProgramID:      {"IncorrectTokenProgramID", "Incorrect token program ID"},
	PoolErrInsufficientFunds:            {"InsufficientFunds", "Insufficient funds"},
	PoolErrInvalidTokenAccount:          {"InvalidTokenAccount", "Invalid token account"},
}

// Pool is a constant-product pool: its account, mints, vaults, venue fee
// and the token program of each mint. Its reserves are the vaults'
// balances.
type Pool struct {
	// Address is the pool account's address.
	Address chain.Address
	// MintA and MintB are the pool's mints.
	MintA, MintB chain.Address
	// VaultA and VaultB are the pool's token accounts of MintA and MintB;
	// their owner is the pool.
	VaultA, VaultB chain.Address
	// FeeBps is the venue fee in basis points, taken from the input.
	FeeBps uint16
	// TokenProgramA and TokenProgramB are the token programs owning MintA
	// and MintB (SPL Token or Token-2022).
	TokenProgramA, TokenProgramB chain.Address
}

// PoolConfig describes a pool to create.
type PoolConfig struct {
	// MintA and MintB are existing mints (CreateMint, SetMint or
	// SetAccount), distinct.
	MintA, MintB chain.Address
	// ReserveA and ReserveB are the vaults' starting balances; they are
	// minted (the mints' supplies grow).
	ReserveA, ReserveB uint64
	// FeeBps is the venue fee in basis points, below 10000.
	FeeBps uint16
}

// PoolVaultAddress is the address of pool's vault of mint:
// sha256("chaintest/pool-vault" || pool || mint).
func PoolVaultAddress(pool, mint chain.Address) chain.Address {
	h := sha256.New()
	h.Write([]byte("chaintest/pool-vault"))
	h.Write(pool[:])
	h.Write(mint[:])
	return chain.Address(h.Sum(nil))
}

// encode is the pool account's data.
func (p Pool) encode() []byte {
	b := make([]byte, 0, PoolAccountSize)
	b = append(b, poolDiscriminator...)
	b = append(b, p.MintA[:]...)
	b = append(b, p.MintB[:]...)
	b = append(b, p.VaultA[:]...)
	b = append(b, p.VaultB[:]...)
	b = binary.LittleEndian.AppendUint16(b, p.FeeBps)
	b = append(b, p.TokenProgramA[:]...)
	return append(b, p.TokenProgramB[:]...)
}

// ErrNotPool is returned when an account's data is not a pool's.
var ErrNotPool = errors.New("chaintest: not a pool account")

// DecodePool decodes the data of the pool account at addr.
func DecodePool(addr chain.Address, data []byte) (Pool, error) {
	if len(data) != PoolAccountSize || string(data[:8]) != poolDiscriminator {
		return Pool{}, fmt.Errorf("%w: %s", ErrNotPool, addr)
	}
	return Pool{
		Address:       addr,
		MintA:         chain.Address(data[8:40]),
		MintB:         chain.Address(data[40:72]),
		VaultA:        chain.Address(data[72:104]),
		VaultB:        chain.Address(data[104:136]),
		FeeBps:        binary.LittleEndian.Uint16(data[136:138]),
		TokenProgramA: chain.Address(data[138:170]),
		TokenProgramB: chain.Address(data[170:202]),
	}, nil
}

// PoolAmountOut is what a pool with reserves reserveIn and reserveOut
// sends for receivedIn input tokens (the input less its transfer fee) at a
// venue fee of feeBps, in big-integer arithmetic with floor division:
// reserveOut × receivedIn × (10000 − feeBps) / (reserveIn × 10000 +
// receivedIn × (10000 − feeBps)). It is 0 when the denominator is.
func PoolAmountOut(reserveIn, reserveOut, receivedIn uint64, feeBps uint16) uint64 {
	if feeBps >= 10000 {
		return 0
	}
	in := new(big.Int).Mul(new(big.Int).SetUint64(receivedIn), big.NewInt(int64(10000-feeBps)))
	num := new(big.Int).Mul(new(big.Int).SetUint64(reserveOut), in)
	den := new(big.Int).Add(new(big.Int).Mul(new(big.Int).SetUint64(reserveIn), big.NewInt(10000)), in)
	if den.Sign() == 0 {
		return 0
	}
	return num.Quo(num, den).Uint64() // below reserveOut, so it fits
}

// poolMinimumOut is quoted × (10000 − slippageBps) / 10000, floored.
func poolMinimumOut(quoted uint64, slippageBps uint16) uint64 {
	v := new(big.Int).Mul(new(big.Int).SetUint64(quoted), big.NewInt(int64(10000-slippageBps)))
	return v.Quo(v, big.NewInt(10000)).Uint64()
}

// PoolSwap is one swap through a pool.
type PoolSwap struct {
	// Pool is the pool swapped through.
	Pool Pool
	// InputMint is the mint sold: the pool's MintA or MintB.
	InputMint chain.Address
	// Authority owns Source and signs.
	Authority chain.Address
	// Source is the authority's token account of the input mint;
	// Destination a token account of the output mint.
	Source, Destination chain.Address
	// InAmount is what leaves Source; QuotedOutAmount and SlippageBps set
	// the least output accepted.
	InAmount        uint64
	QuotedOutAmount uint64
	SlippageBps     uint16
}

// PoolSwapInstruction builds the pool program's swap instruction for s.
// It fails when the input mint is not one of the pool's.
func PoolSwapInstruction(s PoolSwap) (message.Instruction, error) {
	p := s.Pool
	var vaultIn, vaultOut, mintOut, progIn, progOut chain.Address
	switch s.InputMint {
	case p.MintA:
		vaultIn, vaultOut, mintOut, progIn, progOut = p.VaultA, p.VaultB, p.MintB, p.TokenProgramA, p.TokenProgramB
	case p.MintB:
		vaultIn, vaultOut, mintOut, progIn, progOut = p.VaultB, p.VaultA, p.MintA, p.TokenProgramB, p.TokenProgramA
	default:
		return message.Instruction{}, fmt.Errorf("chaintest: PoolSwapInstruction: %s is not a mint of pool %s", s.InputMint, p.Address)
	}
	data := make([]byte, 0, routeDataSize)
	data = append(data, routeDiscriminator[:]...)
	data = binary.LittleEndian.AppendUint64(data, s.InAmount)
	data = binary.LittleEndian.AppendUint64(data, s.QuotedOutAmount)
	data = binary.LittleEndian.AppendUint16(data, s.SlippageBps)
	data = append(data, 0) // platform_fee_bps
	return message.Instruction{
		ProgramID: poolProgram,
		Accounts: []message.AccountMeta{
			{Key: p.Address, Writable: true},
			{Key: s.Authority, Signer: true},
			{Key: s.Source, Writable: true},
			{Key: s.Destination, Writable: true},
			{Key: vaultIn, Writable: true},
			{Key: vaultOut, Writable: true},
			{Key: s.InputMint},
			{Key: mintOut},
			{Key: progIn},
			{Key: progOut},
		},
		Data: data,
	}, nil
}

// CreatePool creates a pool of cfg's mints: the pool account (owned by
// PoolProgramID, rent-exempt) and its two vaults (token accounts of each
// mint under the mint's token program, owned by the pool, holding the
// reserves, with the extensions the mint requires). The pool's address is
// derived from the mints and a counter, so the same pair may have several
// pools.
func (c *Cluster) CreatePool(cfg PoolConfig) (Pool, error) {
	if cfg.MintA == cfg.MintB {
		return Pool{}, errors.New("chaintest: CreatePool: the two mints are the same")
	}
	if cfg.FeeBps >= 10000 {
		return Pool{}, fmt.Errorf("chaintest: CreatePool: fee %d bps, want below 10000", cfg.FeeBps)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	progA, mintA, err := c.mintLocked(cfg.MintA)
	if err != nil {
		return Pool{}, fmt.Errorf("chaintest: CreatePool: %w", err)
	}
	progB, mintB, err := c.mintLocked(cfg.MintB)
	if err != nil {
		return Pool{}, fmt.Errorf("chaintest: CreatePool: %w", err)
	}
	if mintA.Supply+cfg.ReserveA < mintA.Supply || mintB.Supply+cfg.ReserveB < mintB.Supply {
		return Pool{}, errors.New("chaintest: CreatePool: supply overflow")
	}
	var addr chain.Address
	for n := uint64(0); ; n++ {
		h := sha256.New()
		h.Write([]byte("chaintest/constant-product-pool/pool"))
		h.Write(cfg.MintA[:])
		h.Write(cfg.MintB[:])
		h.Write(binary.LittleEndian.AppendUint64(nil, n))
		addr = chain.Address(h.Sum(nil))
		if _, taken := c.accounts[addr]; !taken {
			break
		}
	}
	p := Pool{
		Address: addr, MintA: cfg.MintA, MintB: cfg.MintB,
		VaultA: PoolVaultAddress(addr, cfg.MintA), VaultB: PoolVaultAddress(addr, cfg.MintB),
		FeeBps: cfg.FeeBps, TokenProgramA: progA, TokenProgramB: progB,
	}
	for _, v := range []chain.Address{p.VaultA, p.VaultB} {
		if _, taken := c.accounts[v]; taken {
			return Pool{}, fmt.Errorf("chaintest: CreatePool: an account exists at vault %s", v)
		}
	}
	data := p.encode()
	c.accounts[addr] = newStored(Account{Owner: poolProgram, Lamports: RentExemptMinimum(len(data)), Data: data})
	c.putVaultLocked(p.VaultA, progA, cfg.MintA, mintA, addr, cfg.ReserveA)
	c.putVaultLocked(p.VaultB, progB, cfg.MintB, mintB, addr, cfg.ReserveB)
	if err := c.addSupplyLocked(cfg.MintA, cfg.ReserveA, 0); err != nil {
		return Pool{}, err
	}
	if err := c.addSupplyLocked(cfg.MintB, cfg.ReserveB, 0); err != nil {
		return Pool{}, err
	}
	return p, nil
}

// SetPoolReserves sets the balances of pool's vaults to a (MintA) and b
// (MintB), as if the price had moved; the mints' supplies follow.
func (c *Cluster) SetPoolReserves(pool chain.Address, a, b uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := c.poolLocked(pool)
	if err != nil {
		return fmt.Errorf("chaintest: SetPoolReserves: %w", err)
	}
	for _, v := range []struct {
		vault, mint chain.Address
		amount      uint64
	}{{p.VaultA, p.MintA, a}, {p.VaultB, p.MintB, b}} {
		s, ok := c.accounts[v.vault]
		if !ok {
			return fmt.Errorf("chaintest: SetPoolReserves: no vault at %s", v.vault)
		}
		acct, err := token2022.DecodeAccount(s.Data)
		if err != nil {
			return fmt.Errorf("chaintest: SetPoolReserves: vault %s: %w", v.vault, err)
		}
		old := acct.Amount
		acct.Amount = v.amount
		va := s.Account
		va.Data = token2022.EncodeAccount(acct)
		c.accounts[v.vault] = newStored(va)
		if err := c.addSupplyLocked(v.mint, v.amount, old); err != nil {
			return fmt.Errorf("chaintest: SetPoolReserves: %w", err)
		}
	}
	return nil
}

// PoolReserves returns the balances of pool's vaults: MintA's, then
// MintB's.
func (c *Cluster) PoolReserves(pool chain.Address) (a, b uint64, err error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, err := c.poolLocked(pool)
	if err != nil {
		return 0, 0, fmt.Errorf("chaintest: PoolReserves: %w", err)
	}
	var out [2]uint64
	for i, v := range []chain.Address{p.VaultA, p.VaultB} {
		s, ok := c.accounts[v]
		if !ok {
			return 0, 0, fmt.Errorf("chaintest: PoolReserves: no vault at %s", v)
		}
		acct, err := token2022.DecodeAccount(s.Data)
		if err != nil {
			return 0, 0, fmt.Errorf("chaintest: PoolReserves: vault %s: %w", v, err)
		}
		out[i] = acct.Amount
	}
	return out[0], out[1], nil
}

// Pools returns every pool account the cluster holds, ordered by address.
func (c *Cluster) Pools() []Pool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Pool
	for a, s := range c.accounts {
		if s.Owner != poolProgram {
			continue
		}
		if p, err := DecodePool(a, s.Data); err == nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(x, y Pool) int { return bytes.Compare(x.Address[:], y.Address[:]) })
	return out
}

func (c *Cluster) poolLocked(addr chain.Address) (Pool, error) {
	s, ok := c.accounts[addr]
	if !ok {
		return Pool{}, fmt.Errorf("no account at %s", addr)
	}
	if s.Owner != poolProgram {
		return Pool{}, fmt.Errorf("%w: %s is owned by %s", ErrNotPool, addr, s.Owner)
	}
	return DecodePool(addr, s.Data)
}

// mintLocked reads the mint at addr and its token program.
func (c *Cluster) mintLocked(addr chain.Address) (chain.Address, token2022.Mint, error) {
	s, ok := c.accounts[addr]
	if !ok {
		return chain.Address{}, token2022.Mint{}, fmt.Errorf("no mint at %s", addr)
	}
	if s.Owner != tokenProgram && s.Owner != token2022Program {
		return chain.Address{}, token2022.Mint{}, fmt.Errorf("%s is owned by %s, not a token program", addr, s.Owner)
	}
	m, err := token2022.DecodeMint(s.Data)
	if err != nil {
		return chain.Address{}, token2022.Mint{}, fmt.Errorf("mint %s: %w", addr, err)
	}
	return s.Owner, m, nil
}

// putVaultLocked stores a pool vault holding amount.
func (c *Cluster) putVaultLocked(vault, prog, mintAddr chain.Address, m token2022.Mint, pool chain.Address, amount uint64) {
	acct := newTokenAccount(prog, mintAddr, m, pool)
	acct.Amount = amount
	data := token2022.EncodeAccount(acct)
	c.accounts[vault] = newStored(Account{Owner: prog, Lamports: RentExemptMinimum(len(data)), Data: data})
}

// addSupplyLocked raises mint's supply by add and lowers it by sub,
// floored at zero.
func (c *Cluster) addSupplyLocked(mint chain.Address, add, sub uint64) error {
	s, ok := c.accounts[mint]
	if !ok {
		return fmt.Errorf("no mint at %s", mint)
	}
	m, err := token2022.DecodeMint(s.Data)
	if err != nil {
		return fmt.Errorf("mint %s: %w", mint, err)
	}
	if m.Supply+add < m.Supply {
		return fmt.Errorf("mint %s: supply overflow", mint)
	}
	m.Supply += add
	m.Supply -= min(m.Supply, sub)
	data, err := encodeMint(m)
	if err != nil {
		return err
	}
	a := s.Account
	a.Data = data
	c.accounts[mint] = newStored(a)
	return nil
}

// poolFail is the program's failure with code, and its log line.
func poolFail(logs []string, code uint32) ([]string, *instrErr) {
	if n, ok := poolErrors[code]; ok {
		logs = append(logs, fmt.Sprintf("Program log: AnchorError occurred. Error Code: %s. Error Number: %d. Error Message: %s.", n[0], code, n[1]))
	}
	return logs, customErr(code)
}

// runPool executes the pool program's swap (the package doc lists its
// checks in order).
func (b *bank) runPool(accts []int, data []byte) (uint64, []string, *instrErr) {
	const units = 40_000
	fail := func(logs []string, code uint32) (uint64, []string, *instrErr) {
		l, e := poolFail(logs, code)
		return units, l, e
	}
	if len(data) < 8 {
		return fail(nil, PoolErrInstructionMissing)
	}
	if [8]byte(data[:8]) != routeDiscriminator {
		return fail(nil, PoolErrInstructionFallbackNotFound)
	}
	logs := []string{"Program log: Instruction: Route"}
	if len(data) != routeDataSize {
		return fail(logs, PoolErrInstructionDidNotDeserialize)
	}
	inAmount := binary.LittleEndian.Uint64(data[8:])
	quoted := binary.LittleEndian.Uint64(data[16:])
	slippage := binary.LittleEndian.Uint16(data[24:])
	platformFee := data[26]
	if len(accts) < 10 {
		return fail(logs, PoolErrNotEnoughAccountKeys)
	}
	if platformFee != 0 {
		return fail(logs, PoolErrMissingPlatformFeeAccount)
	}
	if slippage > 10000 {
		return fail(logs, PoolErrInvalidSlippage)
	}
	key := func(i int) chain.Address { return b.p.keys[accts[i]] }
	if !b.p.isSigner(accts[1]) {
		return units, logs, namedErr("MissingRequiredSignature")
	}
	for _, i := range []int{0, 2, 3, 4, 5} {
		if !b.p.isWritable(accts[i]) {
			return fail(logs, PoolErrConstraintMut)
		}
	}
	pa, _ := b.get(key(0))
	if pa.Owner != poolProgram {
		return fail(logs, PoolErrAccountOwnedByWrongProgram)
	}
	pool, err := DecodePool(key(0), pa.Data)
	if err != nil {
		return fail(logs, PoolErrAccountDiscriminatorMismatch)
	}
	var vaultIn, vaultOut, progIn, progOut chain.Address
	switch mintIn, mintOut := key(6), key(7); {
	case mintIn == pool.MintA && mintOut == pool.MintB:
		vaultIn, vaultOut, progIn, progOut = pool.VaultA, pool.VaultB, pool.TokenProgramA, pool.TokenProgramB
	case mintIn == pool.MintB && mintOut == pool.MintA:
		vaultIn, vaultOut, progIn, progOut = pool.VaultB, pool.VaultA, pool.TokenProgramB, pool.TokenProgramA
	default:
		return fail(logs, PoolErrInvalidTokenAccount)
	}
	if key(8) != progIn || key(9) != progOut {
		return fail(logs, PoolErrIncorrectTokenProgramID)
	}
	if key(4) != vaultIn || key(5) != vaultOut {
		return fail(logs, PoolErrInvalidTokenAccount)
	}
	// Each token account must belong to its mint's program and mint;
	// the source to the authority and the vaults to the pool.
	type tokenAcct struct {
		a Account
		t token2022.Account
	}
	load := func(i int, prog, mint chain.Address, owner *chain.Address) (tokenAcct, bool) {
		a, ok := b.get(key(i))
		if !ok || a.Owner != prog {
			return tokenAcct{}, false
		}
		t, err := token2022.DecodeAccount(a.Data)
		if err != nil || t.State == token2022.StateUninitialized || t.Mint != mint || (owner != nil && t.Owner != *owner) {
			return tokenAcct{}, false
		}
		return tokenAcct{a, t}, true
	}
	auth := key(1)
	src, ok1 := load(2, progIn, key(6), &auth)
	dst, ok2 := load(3, progOut, key(7), nil)
	vin, ok3 := load(4, progIn, key(6), &pool.Address)
	vout, ok4 := load(5, progOut, key(7), &pool.Address)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return fail(logs, PoolErrInvalidTokenAccount)
	}
	for _, t := range []tokenAcct{src, dst, vin, vout} {
		if t.t.State == token2022.StateFrozen {
			return units, logs, customErr(17) // the token program's AccountFrozen
		}
	}
	if src.t.Amount < inAmount {
		return fail(logs, PoolErrInsufficientFunds)
	}
	mint := func(i int, prog chain.Address) (token2022.Mint, bool) {
		a, ok := b.get(key(i))
		if !ok || a.Owner != prog {
			return token2022.Mint{}, false
		}
		m, err := token2022.DecodeMint(a.Data)
		return m, err == nil
	}
	mIn, ok1 := mint(6, progIn)
	mOut, ok2 := mint(7, progOut)
	if !ok1 || !ok2 {
		return units, logs, namedErr("InvalidAccountData")
	}
	feeIn := transferFee(mIn, b.epoch, inAmount)
	out := PoolAmountOut(vin.t.Amount, vout.t.Amount, inAmount-feeIn, pool.FeeBps)
	if out == 0 {
		return fail(logs, PoolErrEmptyRoute)
	}
	if out < poolMinimumOut(quoted, slippage) {
		return fail(logs, PoolErrSlippageToleranceExceeded)
	}
	if e := b.settleTransfer(accts[2], accts[4], src.a, vin.a, src.t, vin.t, inAmount, feeIn); e != nil {
		return units, logs, e
	}
	feeOut := transferFee(mOut, b.epoch, out)
	if e := b.settleTransfer(accts[5], accts[3], vout.a, dst.a, vout.t, dst.t, out, feeOut); e != nil {
		return units, logs, e
	}
	logs = append(logs, fmt.Sprintf("Program log: in_amount=%d out_amount=%d", inAmount, out))
	return units, logs, nil
}
