package cctp

import (
	"context"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/outbox"
)

// Log is one log of a receipt, as the adapter decoded it.
type Log struct {
	// Index is the log's index in its block.
	Index uint32
	// Address is the contract that emitted it.
	Address EVMAddress
}

// DepositForBurn is TokenMessengerV2's event (web3.md §2.3), decoded.
type DepositForBurn struct {
	Log
	// BurnToken and Depositor are its indexed addresses.
	BurnToken, Depositor EVMAddress
	// Amount and MaxFee are uint256 words.
	Amount, MaxFee Word
	// MintRecipient, DestinationTokenMessenger and DestinationCaller are
	// bytes32.
	MintRecipient, DestinationTokenMessenger, DestinationCaller Word
	// DestinationDomain and MinFinalityThreshold (indexed) are uint32.
	DestinationDomain    Domain
	MinFinalityThreshold uint32
	// HookData is empty for depositForBurn.
	HookData []byte
}

// MessageSent is MessageTransmitterV2's event: the message bytes as the
// source chain logged them.
type MessageSent struct {
	Log
	// Message is the event's bytes.
	Message []byte
}

// Receipt is an EVM transaction's receipt with the CCTP events it logged,
// decoded by the adapter whatever contract emitted them: checking the
// emitter is the domain's.
type Receipt struct {
	// TxHash is the transaction's hash.
	TxHash TxHash
	// Succeeded is status 1.
	Succeeded bool
	// BlockNumber and BlockHash place it.
	BlockNumber uint64
	BlockHash   Word
	// Burns and Messages are the DepositForBurn and MessageSent logs, in
	// log order.
	Burns    []DepositForBurn
	Messages []MessageSent
}

// ErrReceiptNotFound is returned by EVMClient.Receipt when the node knows
// no receipt for the hash (not mined, or not at all).
var ErrReceiptNotFound = errors.New("cctp: receipt not found")

// EVMClient reads one EVM chain over JSON-RPC (web3/cctp/evmrpc, with
// go-ethereum's client and ABI decoding). Errors other than
// ErrReceiptNotFound mean the node could not be read.
type EVMClient interface {
	// ChainID returns eth_chainId.
	ChainID(ctx context.Context) (uint64, error)
	// Receipt returns a transaction's receipt with its CCTP events.
	Receipt(ctx context.Context, tx TxHash) (Receipt, error)
	// FinalizedBlock returns the number of the newest finalized block.
	FinalizedBlock(ctx context.Context) (uint64, error)
	// HasCode reports whether a contract is deployed at addr.
	HasCode(ctx context.Context, addr EVMAddress) (bool, error)
}

// SignerRecovery recovers the EVM address that signed a 32-byte digest
// with a 65-byte secp256k1 signature (r, s, v with v 27 or 28), refusing
// a high s as MessageTransmitterV2 does. web3/cctp/evmrpc's Recovery
// implements it with go-ethereum's crypto.
type SignerRecovery interface {
	Recover(digest Word, sig []byte) (EVMAddress, error)
}

// AttestationStatus is the attestation service's state of one message.
type AttestationStatus string

// The statuses the service answers (web3.md §2.6).
const (
	// AttestationPending: indexed, not attested yet.
	AttestationPending AttestationStatus = "pending"
	// AttestationComplete: attested; Attestation holds the signatures.
	AttestationComplete AttestationStatus = "complete"
)

// Attested is one message of a burn transaction as the attestation
// service answered it.
type Attested struct {
	// Message is the message bytes (with the attester's fields filled in
	// once complete).
	Message []byte
	// Attestation is the concatenated 65-byte signatures; nil while
	// pending.
	Attestation []byte
	// Status is pending or complete (another answer is kept as it came).
	Status AttestationStatus
	// EventNonce is the service's nonce text, kept as evidence only (the
	// nonce is read from the message).
	EventNonce string
}

// ErrNotIndexed is returned by Attestations.Messages while the service
// answers 404: it has not indexed the transaction yet.
var ErrNotIndexed = errors.New("cctp: the attestation service has not indexed the transaction")

// FeeTier is one row of the attestation service's fee table.
type FeeTier struct {
	// FinalityThreshold is the finality it applies to (1000 fast, 2000
	// standard).
	FinalityThreshold uint32
	// MinimumFee is the least fee in basis points of the amount, as the
	// service wrote it (it may carry a fraction).
	MinimumFee string
}

// Attestations is the attestation service (web3/cctp/iris, the Iris V2
// wire). Errors: ErrNotIndexed; a *fault.Error PROVIDER_UNAVAILABLE for
// any other failure, with details.reason rate_limited and
// retryAfterSeconds while the adapter backs off after a 429.
type Attestations interface {
	// Messages returns the messages of a burn transaction on a source
	// domain, in log order.
	Messages(ctx context.Context, source Domain, tx TxHash) ([]Attested, error)
	// Fees returns the fee table of a route.
	Fees(ctx context.Context, source, destination Domain) ([]FeeTier, error)
}

// SolanaClient reads the destination cluster. chain/solanarpc.Client and
// chain/chaintest's cluster satisfy it. Errors:
// chain.ErrTransactionNotFound, chain.ErrAccountNotFound, and others when
// the cluster could not be read.
type SolanaClient interface {
	// GetGenesisHash returns the cluster's genesis hash.
	GetGenesisHash(ctx context.Context) (string, error)
	// GetAccountInfo returns an account.
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
	// GetTransaction returns a landed transaction.
	GetTransaction(ctx context.Context, sig string, commitment chain.Commitment) (chain.Transaction, error)
	// GetSignaturesForAddress lists the signatures that touched addr,
	// newest first.
	GetSignaturesForAddress(ctx context.Context, addr chain.Address, opts chain.SignaturesOptions, commitment chain.Commitment) ([]chain.SignatureInfo, error)
}

// Clock tells the time; domain code never reads the wall clock itself.
type Clock interface {
	Now() time.Time
}

// Store persists transfers, their evidence and the readiness runs, with
// the outbox events and audit records that commit with them. A store
// handed to a unit of work is bound to its transaction; the read pool
// reads. Errors are *fault.Error: NOT_FOUND for a missing row, CONFLICT
// for a lost compare-and-set or a unique binding taken.
type Store interface {
	outbox.Writer
	account.AuditWriter
	// CCTPTransferInsert writes a new transfer. CONFLICT if its id exists.
	CCTPTransferInsert(ctx context.Context, t Transfer) error
	// CCTPTransfer returns transfer id of owner's workspace and
	// environment created by owner's user (anyone else's is NOT_FOUND).
	CCTPTransfer(ctx context.Context, owner Owner, id string) (Transfer, error)
	// CCTPTransferIn returns transfer id of any tenant in env (the
	// internal reconciliation's read).
	CCTPTransferIn(ctx context.Context, env access.Environment, id string) (Transfer, error)
	// CCTPTransferUpdate writes t when the stored version is prevVersion.
	// CONFLICT otherwise, and when t's burn (source domain, hash, log
	// index) or mint signature is bound to another transfer of the
	// environment.
	CCTPTransferUpdate(ctx context.Context, t Transfer, prevVersion int64) error
	// CCTPEvidenceInsert appends evidence.
	CCTPEvidenceInsert(ctx context.Context, e Evidence) error
	// CCTPEvidence lists a transfer's evidence, oldest first.
	CCTPEvidence(ctx context.Context, transferID string) ([]Evidence, error)
	// CCTPReadinessInsert stores a readiness run.
	CCTPReadinessInsert(ctx context.Context, r Readiness) error
	// CCTPReadinessLatest returns env's newest run that read everything
	// (Unreadable false) of the configuration whose hash is configHash;
	// NOT_FOUND when none did.
	CCTPReadinessLatest(ctx context.Context, env access.Environment, configHash string) (Readiness, error)
}

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error
