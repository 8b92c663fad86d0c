package jupitertest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

// PoolSeed describes a pool for SeedPool.
type PoolSeed struct {
	// MintA and MintB are existing, distinct mints (SPL Token or
	// Token-2022; the mint account's owner is its token program).
	MintA, MintB chain.Address
	// ReserveA and ReserveB are the vaults' balances.
	ReserveA, ReserveB uint64
	// FeeBps is the venue fee, below 10000.
	FeeBps uint16
}

// SeedPool writes a pool on c as the pool contract lays it out and
// returns its address: the pool account (owned by PoolProgramID) at the
// first free sha256("chaintest/constant-product-pool/pool" ‖ mintA ‖ mintB
// ‖ n as u64 LE), and its two vaults at VaultAddress, token accounts of
// their mints owned by the pool (a Token-2022 vault with ImmutableOwner,
// and TransferFeeAmount for a fee mint) holding the reserves, which are
// added to the mints' supply. It stands in for the cluster's own pool
// constructor, which lays pools out the same way, and is the one place to
// change for it.
func SeedPool(c *chaintest.Cluster, s PoolSeed) (chain.Address, error) {
	if s.MintA == s.MintB {
		return chain.Address{}, fmt.Errorf("jupitertest: SeedPool: the two mints are the same")
	}
	if s.FeeBps >= bpsDenominator {
		return chain.Address{}, fmt.Errorf("jupitertest: SeedPool: fee %d bps, want below 10000", s.FeeBps)
	}
	var addr chain.Address
	for n := uint64(0); ; n++ {
		h := sha256.New()
		h.Write([]byte("chaintest/constant-product-pool/pool"))
		h.Write(s.MintA[:])
		h.Write(s.MintB[:])
		h.Write(binary.LittleEndian.AppendUint64(nil, n))
		h.Sum(addr[:0])
		if _, taken := c.Account(addr); !taken {
			break
		}
	}
	p := Pool{MintA: s.MintA, MintB: s.MintB, FeeBps: s.FeeBps,
		VaultA: VaultAddress(addr, s.MintA), VaultB: VaultAddress(addr, s.MintB)}
	var err error
	if p.ProgramA, err = seedVault(c, addr, s.MintA, p.VaultA, s.ReserveA); err != nil {
		return chain.Address{}, err
	}
	if p.ProgramB, err = seedVault(c, addr, s.MintB, p.VaultB, s.ReserveB); err != nil {
		return chain.Address{}, err
	}
	data := EncodePool(p)
	c.SetAccount(addr, chaintest.Account{Owner: PoolProgramID(), Lamports: chaintest.RentExemptMinimum(len(data)), Data: data})
	return addr, nil
}

// seedVault writes the pool's vault of mint with amount and returns the
// mint's token program.
func seedVault(c *chaintest.Cluster, pool, mint, vault chain.Address, amount uint64) (chain.Address, error) {
	acct, err := c.GetAccountInfo(context.Background(), mint, chain.Processed)
	if err != nil {
		return chain.Address{}, fmt.Errorf("jupitertest: SeedPool: mint %s: %w", mint, err)
	}
	prog := acct.Owner
	if prog != token2022.ProgramID() && prog != tokenProgram {
		return chain.Address{}, fmt.Errorf("jupitertest: SeedPool: %s is not owned by a token program", mint)
	}
	m, err := token2022.DecodeMint(acct.Data)
	if err != nil {
		return chain.Address{}, fmt.Errorf("jupitertest: SeedPool: mint %s: %w", mint, err)
	}
	a := token2022.Account{Mint: mint, Owner: pool, Amount: amount, State: token2022.StateInitialized}
	if prog == token2022.ProgramID() {
		a.Extensions = []token2022.Extension{token2022.RawExtension{Type: token2022.ExtensionImmutableOwner}}
		if _, fee := m.TransferFeeConfig(); fee {
			a.Extensions = append(a.Extensions, token2022.TransferFeeAmount{})
		}
	}
	data := token2022.EncodeAccount(a)
	c.SetAccount(vault, chaintest.Account{Owner: prog, Lamports: chaintest.RentExemptMinimum(len(data)), Data: data})
	if m.Supply+amount < m.Supply {
		return chain.Address{}, fmt.Errorf("jupitertest: SeedPool: supply of %s overflows", mint)
	}
	m.Supply += amount
	if err := c.SetMint(mint, m); err != nil {
		return chain.Address{}, fmt.Errorf("jupitertest: SeedPool: %w", err)
	}
	return prog, nil
}
