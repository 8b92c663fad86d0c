package rewards

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/project"
)

// The store ports are declared beside their consumers, each with the
// methods its consumer calls: ChallengeReader, ChallengeLister and
// ChallengeStore (challenge.go: the lifecycle); FundingReader and
// FundingStore (funding.go: reconciliation); AllocationStore, RewardReader
// and RewardLister (reward.go: allocation and the reward reads);
// ClaimReader, ClaimStore and PayoutStore (claim.go: claims and the
// payout's intent hooks). Package store implements them all. Errors are
// *fault.Error: NOT_FOUND for a missing row, CONFLICT for a lost
// compare-and-set or a taken key. They are the seam between this package
// and SQL, not a stable API.

// projectGetter reads the project a challenge or a reward belongs to.
type projectGetter interface {
	// ProjectGet reads a project by id in env, of any tenant; NOT_FOUND
	// when none.
	ProjectGet(ctx context.Context, env access.Environment, id string) (project.Project, error)
}

// poolRewards is what closing a pool reads and writes (maybeDistributed):
// its rewards, and the outbox for its funding event.
type poolRewards interface {
	outbox.Writer
	// RewardsOfChallenge returns every reward of a challenge, oldest
	// first.
	RewardsOfChallenge(ctx context.Context, challengeID string) ([]Reward, error)
}

// ChainClient is what funding reconciliation reads from a cluster;
// chain/solanarpc.Client satisfies it. Errors: chain.ErrAccountNotFound
// for a missing account, anything else means the cluster could not be
// read.
type ChainClient interface {
	// GetTokenAccountBalance returns a token account's balance and the
	// answer's slot.
	GetTokenAccountBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.TokenAmount, error)
	// GetAccountInfo returns an account (the pool's mint).
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
	// GetEpochInfo returns the current epoch.
	GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error)
}

// TreasurySigner signs the treasury's payouts. The key never leaves it:
// a LocalSigner holds a keypair opened from its sealed form; a production
// deployment backs the interface with a KMS or HSM. Implementations never
// print, log or return the key.
type TreasurySigner interface {
	// Address is the treasury wallet: the payer of every payout.
	Address() chain.Address
	// Sign returns the treasury's ed25519 signature of message.
	Sign(ctx context.Context, message []byte) ([]byte, error)
}

// Environment is one environment's reward treasury: its cluster and the
// signer of the wallet that pays rewards.
type Environment struct {
	// Client reads the cluster. Required.
	Client ChainClient
	// Signer is the treasury's signer; its address is the treasury
	// wallet, whose Token-2022 account of a pool's mint backs the pool.
	// Required.
	Signer TreasurySigner
}

// Mints reads a pool's mint and decimals from an environment's cluster by
// the rules a transaction intent's mint is held to; *intent.Service
// satisfies it.
type Mints interface {
	// PaymentMint reads mint on env's cluster. Errors: INVALID_INPUT
	// naming "mint"; SERVICE_UNAVAILABLE without a cluster;
	// PROVIDER_UNAVAILABLE when it cannot be read.
	PaymentMint(ctx context.Context, env access.Environment, mint string) (intent.PaymentMint, error)
}

// Intents creates the payout's transaction intent; *intent.Service
// satisfies it.
type Intents interface {
	// PreparePayout freezes an intent of a purpose the treasury pays,
	// outside any unit of work (intent.Service.PreparePayout).
	PreparePayout(ctx context.Context, p *access.Principal, req intent.Request, payer chain.Address) (intent.Draft, error)
	// RecordSigned records the draft already signed and submitted, in
	// st's unit of work (intent.Service.RecordSigned).
	RecordSigned(ctx context.Context, st intent.Store, d intent.Draft, signed []byte) (intent.Intent, error)
}

// Wallets answers which wallets a user verified; chain/wallet.Links
// satisfies it.
type Wallets interface {
	// Of lists userID's verified wallets in tenantID, oldest first.
	Of(ctx context.Context, tenantID, userID string) ([]chain.Address, error)
}

// Clock tells the time; domain code never reads the wall clock itself.
type Clock interface {
	Now() time.Time
}

// RunFunc runs fn as one unit of work (a transaction) of a funding
// reconciliation and commits when it returns nil.
type RunFunc func(ctx context.Context, fn func(st FundingStore) error) error
