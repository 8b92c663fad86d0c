package intent

import (
	"context"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// ChainClient is what the intent domain reads from and sends to a
// cluster. chain/solanarpc.Client satisfies it; tests use a fake. Errors:
// chain.ErrUnavailable (wrapped) when no answer arrived, a *chain.RPCError
// when the node answered with an error, chain.ErrAccountNotFound for a
// missing account and chain.ErrTransactionNotFound for an unknown
// transaction.
type ChainClient interface {
	// GetGenesisHash returns the cluster's genesis hash (base58).
	GetGenesisHash(ctx context.Context) (string, error)
	// GetEpochInfo returns the current epoch and block height.
	GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error)
	// GetAccountInfo returns an account (the mint).
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
	// GetLatestBlockhash returns a recent blockhash and its last valid
	// block height.
	GetLatestBlockhash(ctx context.Context, commitment chain.Commitment) (chain.Blockhash, error)
	// GetBlockHeight returns the block height at commitment.
	GetBlockHeight(ctx context.Context, commitment chain.Commitment) (uint64, error)
	// IsBlockhashValid reports whether hash can still land a transaction.
	IsBlockhashValid(ctx context.Context, hash string, commitment chain.Commitment) (bool, error)
	// SendTransaction sends signed wire bytes and returns the first
	// signature.
	SendTransaction(ctx context.Context, signed []byte, opts chain.SendOptions) (string, error)
	// GetSignatureStatuses returns one status per signature, nil when the
	// node does not know it.
	GetSignatureStatuses(ctx context.Context, sigs []string, searchHistory bool) ([]*chain.SignatureStatus, error)
	// GetTransaction returns a landed transaction (commitment confirmed
	// or finalized).
	GetTransaction(ctx context.Context, sig string, commitment chain.Commitment) (chain.Transaction, error)
	// GetSignaturesForAddress lists signatures that touched addr, newest
	// first.
	GetSignaturesForAddress(ctx context.Context, addr chain.Address, opts chain.SignaturesOptions, commitment chain.Commitment) ([]chain.SignatureInfo, error)
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

// Store persists intents and chain payment requests, with the effects that
// commit with them: the intent's outbox event and its next job. A Store
// handed to a unit of work is bound to its transaction; Read's Store reads
// the pool. Errors are *fault.Error: NOT_FOUND for a missing row, CONFLICT
// for a lost compare-and-set or a unique violation.
type Store interface {
	outbox.Writer
	jobs.Enqueuer
	// Now is the unit of work's single timestamp.
	Now() time.Time
	// AfterCommit registers fn to run once the unit of work has committed
	// (the wake-up of the job workers).
	AfterCommit(fn func())
	// CreditStore returns the credit purchase's ports (its policy and the
	// credit ledger) bound to the same unit of work, so that settlement
	// commits with the intent's move to SETTLED.
	CreditStore() CreditStore

	// InsertIntent writes a new intent. CONFLICT if its id exists.
	InsertIntent(ctx context.Context, it Intent) error
	// Intent returns the intent id. NOT_FOUND when none.
	Intent(ctx context.Context, id string) (Intent, error)
	// LockIntent returns the intent id locked for update until the unit
	// of work ends (SELECT ... FOR UPDATE; SQLite's one writer). NOT_FOUND
	// when none.
	LockIntent(ctx context.Context, id string) (Intent, error)
	// UpdateIntent writes it when the stored version is prevVersion
	// (it.Version is prevVersion + 1). CONFLICT otherwise.
	UpdateIntent(ctx context.Context, it Intent, prevVersion int64) error
	// BindSignature records that signature belongs to intentID; the
	// signature is unique across all intents. Binding the same pair
	// again is a no-op; a signature bound to another intent is CONFLICT.
	BindSignature(ctx context.Context, signature, intentID string) error
	// SignatureIntent returns the intent a signature is bound to.
	// NOT_FOUND when none.
	SignatureIntent(ctx context.Context, signature string) (string, error)
	// InsertPaymentRequest writes a chain payment request; one per
	// intent, so a second for the same intent is CONFLICT.
	InsertPaymentRequest(ctx context.Context, pr PaymentRequest) error
	// PaymentRequest returns the payment request id. NOT_FOUND when none.
	PaymentRequest(ctx context.Context, id string) (PaymentRequest, error)
	// PaymentRequestByIntent returns the intent's payment request.
	// NOT_FOUND when none.
	PaymentRequestByIntent(ctx context.Context, intentID string) (PaymentRequest, error)
	// IntentsToReconcile lists up to limit intents in a pending state
	// (CREATED, SUBMITTED, CONFIRMING, VERIFIED: State.Pending), oldest
	// update first.
	IntentsToReconcile(ctx context.Context, limit int) ([]Intent, error)
	// InsertReconciliation writes an intent's reconciliation record. One
	// per intent: a second record for the same intent, or a taken id, is
	// CONFLICT.
	InsertReconciliation(ctx context.Context, r Reconciliation) error
	// Reconciliation returns the intent's reconciliation record.
	// NOT_FOUND when none.
	Reconciliation(ctx context.Context, intentID string) (Reconciliation, error)
}

// CreditStore is what the credit_purchase purpose reads and writes: the
// credits.packs policy that prices it, and the credit ledger that its
// settlement grants on and its reconciliation reads back. Package store
// implements it.
type CreditStore interface {
	policy.Store
	ledger.Mover
	// LedgerMovementsByReference returns every movement of tenantID whose
	// reference is reference, in any workspace and environment, with its
	// postings; none is an empty list, not an error.
	LedgerMovementsByReference(ctx context.Context, tenantID, reference string) ([]ledger.Posted, error)
}

// RunFunc runs fn as one unit of work (a transaction) and commits when it
// returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error
