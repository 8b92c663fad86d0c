package jupitertest

import (
	"context"
	"fmt"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

// PoolSeed describes a pool for SeedPool.
type PoolSeed struct {
	// Address is the pool account's address. Required.
	Address chain.Address
	// MintA and MintB are existing mints (SPL Token or Token-2022; the
	// mint account's owner is its token program).
	MintA, MintB chain.Address
	// ReserveA and ReserveB are the vaults' balances.
	ReserveA, ReserveB uint64
	// FeeBps is the venue fee.
	FeeBps uint16
}

// SeedPool writes a pool on c as the pool contract lays it out: the pool
// account (owned by PoolProgramID) and its two vaults at VaultAddress,
// token accounts of their mints owned by the pool (a Token-2022 vault of a
// fee mint carries TransferFeeAmount), holding the reserves, which are
// added to the mints' supply. It stands in for the cluster's own pool
// constructor, and is the one place to change for it.
func SeedPool(c *chaintest.Cluster, s PoolSeed) error {
	if s.Address.IsZero() || s.MintA == s.MintB {
		return fmt.Errorf("jupitertest: SeedPool: a pool address and two distinct mints are required")
	}
	p := Pool{MintA: s.MintA, MintB: s.MintB, FeeBps: s.FeeBps,
		VaultA: VaultAddress(s.Address, s.MintA), VaultB: VaultAddress(s.Address, s.MintB)}
	var err error
	if p.ProgramA, err = seedVault(c, s.Address, s.MintA, p.VaultA, s.ReserveA); err != nil {
		return err
	}
	if p.ProgramB, err = seedVault(c, s.Address, s.MintB, p.VaultB, s.ReserveB); err != nil {
		return err
	}
	data := EncodePool(p)
	c.SetAccount(s.Address, chaintest.Account{Owner: PoolProgramID(), Lamports: chaintest.RentExemptMinimum(len(data)), Data: data})
	return nil
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
	if _, fee := m.TransferFeeConfig(); fee {
		a.Extensions = []token2022.Extension{token2022.TransferFeeAmount{}}
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
