package x402

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
)

// ChainClient is what the protocol reads from and sends to an
// environment's cluster. chain/solanarpc.Client and chain/chaintest's
// cluster satisfy it. Errors: chain.ErrUnavailable (wrapped) when no
// answer arrived, a *chain.RPCError when the node answered with an error,
// chain.ErrAccountNotFound for a missing account.
type ChainClient interface {
	// relay.ChainClient sends and follows signed transactions.
	relay.ChainClient
	// GetAccountInfo returns an account (a mint, a token account, the fee
	// payer).
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
}

// VerifyRequest is a facilitator's /verify body: a payment and the
// requirements it must meet.
type VerifyRequest struct {
	// Payload is the client's payment.
	Payload PaymentPayload
	// Requirements are the platform's requirements for it.
	Requirements Requirements
}

// SettleRequest is a facilitator's /settle body, with a hint the remote
// wire does not carry.
type SettleRequest struct {
	// Payload is the client's payment.
	Payload PaymentPayload
	// Requirements are the platform's requirements for it.
	Requirements Requirements
	// LastValidBlockHeight, when not zero, bounds the block height at
	// which the transaction can land: the local facilitator calls it
	// dropped only once the finalized height passes it.
	LastValidBlockHeight uint64
}

// Facilitator verifies and settles payments (web3.md §1.7): Local over
// the environment's cluster with the platform's fee payer, or a remote
// one (web3/x402/facilitator) speaking /verify, /settle and /supported.
type Facilitator interface {
	// Name identifies the facilitator in checks and views: "local", or
	// the remote's base URL.
	Name() string
	// Supported lists the kinds it serves, with its fee payer per
	// network. PROVIDER_UNAVAILABLE when it did not answer.
	Supported(ctx context.Context) (Supported, error)
	// Verify judges a payment without settling it: a refusal is a
	// response with IsValid false, never an error. PROVIDER_UNAVAILABLE
	// when it did not answer.
	Verify(ctx context.Context, r VerifyRequest) (VerifyResponse, error)
	// Settle co-signs as fee payer, submits and waits for confirmation: a
	// refusal or a failure on chain is a response with Success false. An
	// error means the outcome is unknown (SUBMISSION_UNCERTAIN, or
	// PROVIDER_UNAVAILABLE when it did not answer): the transaction may
	// have been sent, and a later call inspects before anything else.
	Settle(ctx context.Context, r SettleRequest) (SettleResponse, error)
}

// Signer signs as the local facilitator's fee payer. Its key comes from
// configuration and never leaves it: not in a response, a log line or a
// record.
type Signer interface {
	// Address is the fee payer's address.
	Address() chain.Address
	// Sign returns the fee payer's ed25519 signature of message.
	Sign(ctx context.Context, message []byte) ([]byte, error)
}

// Clock tells the time; domain code never reads the wall clock itself.
type Clock interface {
	Now() time.Time
}

// Store persists settlements, grants and checks, with the effects that
// commit with them (outbox events, jobs). A Store handed to a unit of
// work is bound to its transaction; ReadFunc's reads the pool. Errors are
// *fault.Error: NOT_FOUND for a missing row, CONFLICT for a taken key or
// a lost compare-and-set.
type Store interface {
	outbox.Writer
	jobs.Enqueuer
	// Now is the unit of work's single timestamp.
	Now() time.Time
	// AfterCommit registers fn to run once the unit of work has committed.
	AfterCommit(fn func())

	// X402SettlementInsert writes a claimed settlement. CONFLICT when its
	// transaction (MessageHash) is claimed already, by anyone, or its
	// scope's IdempotencyKey is taken.
	X402SettlementInsert(ctx context.Context, s Settlement) error
	// X402Settlement returns the settlement id. NOT_FOUND when none.
	X402Settlement(ctx context.Context, id string) (Settlement, error)
	// X402SettlementByKey returns the settlement scope claimed under key.
	// NOT_FOUND when none.
	X402SettlementByKey(ctx context.Context, scope access.Scope, key string) (Settlement, error)
	// X402SettlementByMessage returns the settlement of a transaction,
	// whoever claimed it. NOT_FOUND when none.
	X402SettlementByMessage(ctx context.Context, messageHash string) (Settlement, error)
	// X402SettlementUpdate writes s when the stored version is
	// prevVersion (s.Version is prevVersion + 1). CONFLICT otherwise.
	X402SettlementUpdate(ctx context.Context, s Settlement, prevVersion int64) error
	// X402GrantInsert writes a grant; one per settlement, so a second is
	// CONFLICT.
	X402GrantInsert(ctx context.Context, g Grant) error
	// X402Grant returns the grant id of scope (NOT_FOUND for another
	// scope's, or none).
	X402Grant(ctx context.Context, scope access.Scope, id string) (Grant, error)
	// X402GrantBySettlement returns a settlement's grant. NOT_FOUND when
	// none.
	X402GrantBySettlement(ctx context.Context, settlementID string) (Grant, error)
	// X402GrantAvailable returns scope's oldest available grant of a
	// resource. NOT_FOUND when none.
	X402GrantAvailable(ctx context.Context, scope access.Scope, resourceID string) (Grant, error)
	// X402GrantConsume marks the grant id of scope consumed by usedBy at
	// the unit of work's time, when it is available. CONFLICT when it is
	// not (spent already), NOT_FOUND when scope holds none.
	X402GrantConsume(ctx context.Context, scope access.Scope, id, usedBy string) error
	// X402CheckSave stores env's newest check, replacing the previous.
	X402CheckSave(ctx context.Context, c Check) error
	// X402Check returns env's newest check. NOT_FOUND before any.
	X402Check(ctx context.Context, env access.Environment) (Check, error)
}

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error
