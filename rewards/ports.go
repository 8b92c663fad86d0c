package rewards

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/project"
)

// Store is what the package reads and writes, bound to one unit of work
// (or the read pool for reads). Errors are *fault.Error: NOT_FOUND for a
// missing row, CONFLICT for a lost compare-and-set or a taken key. It is
// the seam between this package and SQL, not a stable API.
type Store interface {
	outbox.Writer
	account.AuditWriter
	ledger.Mover
	// LedgerMovementsByReference returns every movement of tenantID whose
	// reference is reference, with its postings; none is an empty list.
	LedgerMovementsByReference(ctx context.Context, tenantID, reference string) ([]ledger.Posted, error)
	// ProjectGet reads a project by id in env, of any tenant; NOT_FOUND
	// when none.
	ProjectGet(ctx context.Context, env access.Environment, id string) (project.Project, error)
	// CreatorByWallet returns the creator behind the wallet link that
	// stands for q (package creator); NOT_FOUND when none holds it.
	CreatorByWallet(ctx context.Context, q creator.Lookup) (creator.Creator, error)

	// ChallengeInsert stores a new challenge. CONFLICT if its id exists.
	ChallengeInsert(ctx context.Context, c Challenge) error
	// ChallengeGet reads a challenge by id in env, of any tenant;
	// NOT_FOUND when none. The service decides who reads it.
	ChallengeGet(ctx context.Context, env access.Environment, id string) (Challenge, error)
	// ChallengeLock is ChallengeGet locked for update until the unit of
	// work ends.
	ChallengeLock(ctx context.Context, env access.Environment, id string) (Challenge, error)
	// ChallengeUpdate writes c's status, funding and its evidence,
	// version and update time when the stored version is prev. CONFLICT
	// otherwise.
	ChallengeUpdate(ctx context.Context, c Challenge, prev int64) error
	// ChallengeList returns up to limit challenges of sc, newest first,
	// with ids below before ("" for the newest).
	ChallengeList(ctx context.Context, sc access.Scope, before string, limit int) ([]Challenge, error)
	// ChallengesBacked returns every challenge of env whose pool is in
	// mint and whose funding is RESERVED, FUNDED or CLAIMABLE: the pools
	// the environment's treasury backs.
	ChallengesBacked(ctx context.Context, env access.Environment, mint chain.Address) ([]Challenge, error)

	// RewardInsert stores a new reward. CONFLICT when its id or its
	// allocation key is taken.
	RewardInsert(ctx context.Context, r Reward) error
	// RewardGet reads a reward by id in env, of any tenant.
	RewardGet(ctx context.Context, env access.Environment, id string) (Reward, error)
	// RewardLock is RewardGet locked for update.
	RewardLock(ctx context.Context, env access.Environment, id string) (Reward, error)
	// RewardByAllocation reads the reward of an allocation key.
	RewardByAllocation(ctx context.Context, key string) (Reward, error)
	// RewardLockByIntent reads the reward intentID pays, locked.
	RewardLockByIntent(ctx context.Context, intentID string) (Reward, error)
	// RewardUpdate writes r's state, funding, intent, signature, claim
	// attempts, timestamps, version and update time when the stored
	// version is prev. CONFLICT otherwise.
	RewardUpdate(ctx context.Context, r Reward, prev int64) error
	// RewardList returns up to limit rewards of env matching f, newest
	// first, with ids below before.
	RewardList(ctx context.Context, env access.Environment, f RewardFilter, before string, limit int) ([]Reward, error)
	// RewardsOfChallenge returns every reward of a challenge, oldest
	// first.
	RewardsOfChallenge(ctx context.Context, challengeID string) ([]Reward, error)
}

// RewardFilter narrows a reward list; exactly one of its keys is set.
type RewardFilter struct {
	// Scope and ProjectID keep one project's rewards.
	Scope     access.Scope
	ProjectID string
	// RecipientUserID keeps one recipient's rewards, in every tenant.
	RecipientUserID string
	// Wallet keeps the rewards paid to one wallet, in every tenant.
	Wallet string
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

// RunFunc runs fn as one unit of work (a transaction) and commits when it
// returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error
