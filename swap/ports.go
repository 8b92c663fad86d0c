package swap

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/policy"
)

// ChainClient is what the swap domain reads from an environment's
// cluster. chain/solanarpc.Client and chain/chaintest's cluster satisfy
// it. Errors: chain.ErrUnavailable (wrapped) when no answer arrived, a
// *chain.RPCError when the node answered with an error,
// chain.ErrAccountNotFound for a missing account.
type ChainClient interface {
	// GetGenesisHash returns the cluster's genesis hash (base58).
	GetGenesisHash(ctx context.Context) (string, error)
	// GetEpochInfo returns the current epoch.
	GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error)
	// GetAccountInfo returns an account (a mint, a token account).
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
}

// Clock tells the time; domain code never reads the wall clock itself.
type Clock interface {
	Now() time.Time
}

// Store persists what the swap domain records. A Store handed to a unit of
// work is bound to its transaction; a read Store reads the pool. Errors
// are *fault.Error: NOT_FOUND for a missing row.
type Store interface {
	policy.Store
	// SwapRegistryRunInsert stores a registry verification run.
	SwapRegistryRunInsert(ctx context.Context, r RegistryRun) error
	// SwapRegistryRunLatest returns the newest run of env's registry
	// version that read the cluster (Unreadable false). NOT_FOUND when
	// none did.
	SwapRegistryRunLatest(ctx context.Context, env access.Environment, version int) (RegistryRun, error)
	// SwapRegistryRunNewest returns the newest run of env's registry
	// version, readable or not. NOT_FOUND when none.
	SwapRegistryRunNewest(ctx context.Context, env access.Environment, version int) (RegistryRun, error)
}

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error
