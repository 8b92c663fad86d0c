package jupitertest

import (
	"fmt"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
)

// SeedPool creates a pool on c with the cluster's own constructor
// (chaintest's CreatePool, whose layout and program the pool contract
// fixes) and an address lookup table holding the pool's accounts: the
// pool, vault A, vault B, mint A, mint B and the two token programs, each
// once, in that order, with the pool as the table's authority. It returns
// the pool and the table's address, to be passed to AddPool.
//
// As on a node, the table's addresses are usable from the next slot: a
// v0 transaction that loads from it must land after c.AdvanceSlots(1).
func SeedPool(c *chaintest.Cluster, cfg chaintest.PoolConfig) (chaintest.Pool, chain.Address, error) {
	p, err := c.CreatePool(cfg)
	if err != nil {
		return chaintest.Pool{}, chain.Address{}, fmt.Errorf("jupitertest: SeedPool: %w", err)
	}
	table, err := c.CreateLookupTable(p.Address, PoolAccounts(p))
	if err != nil {
		return chaintest.Pool{}, chain.Address{}, fmt.Errorf("jupitertest: SeedPool: %w", err)
	}
	return p, table, nil
}

// PoolAccounts lists the accounts of p that every swap through it names
// besides the user's: the pool, vault A, vault B, mint A, mint B and the
// token programs of the two mints, each once, in that order. SeedPool
// fills the pool's lookup table with them.
func PoolAccounts(p chaintest.Pool) []chain.Address {
	var out []chain.Address
	seen := map[chain.Address]bool{}
	for _, a := range []chain.Address{p.Address, p.VaultA, p.VaultB, p.MintA, p.MintB, p.TokenProgramA, p.TokenProgramB} {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
