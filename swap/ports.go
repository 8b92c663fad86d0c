package swap

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/money"
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

// RouteRequest asks a route provider for an ExactIn route.
type RouteRequest struct {
	// InputMint and OutputMint are the trusted mints.
	InputMint, OutputMint chain.Address
	// Amount is the executable input (after the service fee).
	Amount money.Atomic
	// SlippageBps is the slippage the route is quoted with.
	SlippageBps uint16
}

// ProviderRoute is a route provider's quote for a RouteRequest.
type ProviderRoute struct {
	// Raw is the provider's quote exactly as received; it goes back to
	// the provider byte for byte and is never shown to clients. Hash is
	// HashBytes(Raw).
	Raw  []byte
	Hash string
	// InAtomic is the input the route consumes (the request's Amount);
	// OutAtomic the expected output after venue fees, before slippage;
	// ThresholdAtomic the provider's own minimum after slippage.
	InAtomic, OutAtomic, ThresholdAtomic money.Atomic
	// PriceImpactPct is the provider's price impact, a decimal fraction
	// ("0.01" is 1%).
	PriceImpactPct string
	// Steps are the route's hops in order.
	Steps []RouteStep
	// ContextSlot is the slot the provider priced at (0 when unknown).
	ContextSlot uint64
}

// RouteInstructions are the instructions that execute a route for a
// wallet, in execution order, and what the transaction needs beside them.
type RouteInstructions struct {
	// Instructions are the compute budget, setup, swap, cleanup and other
	// instructions in order; SwapIndex is the swap instruction's index.
	Instructions []message.Instruction
	SwapIndex    int
	// LookupTables are the address lookup tables the message uses.
	LookupTables []chain.Address
	// ComputeUnitLimit and ComputeUnitPriceMicroLamports are the compute
	// budget the instructions set (0 when none); PriorityFeeLamports the
	// priority fee they cost.
	ComputeUnitLimit              uint32
	ComputeUnitPriceMicroLamports uint64
	PriorityFeeLamports           uint64
}

// RouteProvider quotes routes and builds the instructions that execute
// them (swap/jupiter's Client). Errors are *fault.Error:
// ROUTE_UNAVAILABLE when no route exists, PROVIDER_UNAVAILABLE when the
// provider did not answer (rate limited, unavailable, timed out, a
// malformed answer), QUOTE_UNAVAILABLE for another refusal and
// SIMULATION_FAILED when the provider's simulation failed.
type RouteProvider interface {
	// Name is the provider's id ("jupiter").
	Name() string
	// Route quotes r.
	Route(ctx context.Context, r RouteRequest) (ProviderRoute, error)
	// Instructions returns the instructions executing route for wallet,
	// which signs and owns the token accounts the swap uses.
	Instructions(ctx context.Context, route ProviderRoute, wallet chain.Address) (RouteInstructions, error)
}
