package swap

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// ChainClient is what the swap domain reads from an environment's
// cluster. chain/solanarpc.Client and chain/chaintest's cluster satisfy
// it. Errors: chain.ErrUnavailable (wrapped) when no answer arrived, a
// *chain.RPCError when the node answered with an error,
// chain.ErrAccountNotFound for a missing account.
type ChainClient interface {
	// relay.ChainClient sends and follows signed transactions.
	relay.ChainClient
	// TransactionReader reads landed transactions for verification.
	TransactionReader
	// GetEpochInfo returns the current epoch.
	GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error)
	// GetAccountInfo returns an account (a mint, a token account).
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
	// GetTokenAccountBalance returns a token account's balance;
	// chain.ErrAccountNotFound when the account does not exist.
	GetTokenAccountBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.TokenAmount, error)
	// GetBalance returns an account's lamports (zero for an account that
	// does not exist, as a node answers) and the answer's slot.
	GetBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (lamports, slot uint64, err error)
	// GetLatestBlockhash returns a recent blockhash and its last valid
	// block height.
	GetLatestBlockhash(ctx context.Context, commitment chain.Commitment) (chain.Blockhash, error)
	// GetBlockHeight returns the block height at commitment.
	GetBlockHeight(ctx context.Context, commitment chain.Commitment) (uint64, error)
}

// Wallets answers whether an address is a verified wallet of a user (the
// chain/wallet domain's verification records).
type Wallets interface {
	// Verified reports whether address is a verified wallet of userID in
	// tenantID.
	Verified(ctx context.Context, tenantID, userID string, address chain.Address) (bool, error)
}

// Clock tells the time; domain code never reads the wall clock itself.
type Clock interface {
	Now() time.Time
}

// RegistryStore persists the registry's policies and verification runs.
// A store handed to a unit of work is bound to its transaction; a read
// store reads the pool. Errors are *fault.Error: NOT_FOUND for a missing
// row.
type RegistryStore interface {
	policy.Store
	// SwapRegistryRunInsert stores a registry verification run.
	SwapRegistryRunInsert(ctx context.Context, r RegistryRun) error
	// SwapRegistryRunLatest returns the newest run of env's registry
	// version that read the cluster (Unreadable false). NOT_FOUND when
	// none did.
	SwapRegistryRunLatest(ctx context.Context, env access.Environment, version int) (RegistryRun, error)
}

// OperationStore persists operations, quotes and intents with the effects
// that commit with them: the operation's outbox event and its next job.
// Errors are *fault.Error: NOT_FOUND for a missing row, CONFLICT for a
// lost compare-and-set or a taken id.
type OperationStore interface {
	outbox.Writer
	jobs.Enqueuer
	// Now is the unit of work's single timestamp.
	Now() time.Time
	// AfterCommit registers fn to run once the unit of work has committed
	// (the wake-up of the job workers).
	AfterCommit(fn func())
	// SettleStore returns the unit of work's settlement records, ledger
	// and jobs.
	SettleStore() SettleStore
	// SwapOperationInsert writes a new operation. CONFLICT if its id
	// exists.
	SwapOperationInsert(ctx context.Context, o Operation) error
	// SwapOperation returns the operation id of owner (another owner's,
	// another workspace's or environment's is NOT_FOUND).
	SwapOperation(ctx context.Context, owner Owner, id string) (Operation, error)
	// SwapOperationUpdate writes o when the stored version is prevVersion
	// (o.Version is prevVersion + 1). CONFLICT otherwise, and when o's
	// signature is bound to another operation.
	SwapOperationUpdate(ctx context.Context, o Operation, prevVersion int64) error
	// SwapQuoteInsert writes a sealed quote. CONFLICT if its id exists.
	SwapQuoteInsert(ctx context.Context, q Quote) error
	// SwapQuote returns the quote id of owner (NOT_FOUND for another
	// owner's).
	SwapQuote(ctx context.Context, owner Owner, id string) (Quote, error)
	// SwapIntentInsert writes a sealed intent with its prepared message.
	// One intent per quote: a second for the same quote, or a taken id,
	// is CONFLICT.
	SwapIntentInsert(ctx context.Context, it Intent, prepared Prepared) error
	// SwapIntent returns the intent id of owner with its prepared
	// transaction (NOT_FOUND for another owner's).
	SwapIntent(ctx context.Context, owner Owner, id string) (Intent, Prepared, error)
}

// Store is the unit of work of quoting and binding intents: the registry
// and policies they read, and the operations they write.
type Store interface {
	RegistryStore
	OperationStore
}

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// SubmitRunFunc runs fn as one unit of work of the relay.
type SubmitRunFunc func(ctx context.Context, fn func(st SubmitStore) error) error

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
