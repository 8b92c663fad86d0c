// Package chain holds what the Solana adapters and their consumers share:
// the read-side records of a cluster (accounts, token balances, epochs),
// the commitment levels, the CAIP-2 network identifiers of known clusters,
// and the errors an adapter maps JSON-RPC answers to.
//
// Consumers declare the ports they need (token.ChainClient, for one) in
// terms of these types; chain/solanarpc satisfies them against a real
// cluster through solana-go, and chain/chaintest's loopback cluster
// satisfies them in process and over HTTP. chain itself imports only the
// standard library and chain/token2022.
package chain

import (
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/chain/token2022"
)

// Address is a 32-byte Solana address; its text form is base58.
type Address = token2022.PublicKey

// Commitment is how settled the bank a node answers from must be.
type Commitment string

// The commitment levels of Solana's JSON-RPC (chain.md §1.2).
const (
	// Processed is the node's heaviest bank; it may be skipped.
	Processed Commitment = "processed"
	// Confirmed is optimistically confirmed by a supermajority.
	Confirmed Commitment = "confirmed"
	// Finalized is rooted by a supermajority; the server default.
	Finalized Commitment = "finalized"
)

// AccountInfo is an account as a node reported it.
type AccountInfo struct {
	// Address is the account's address.
	Address Address
	// Owner is the program that owns the account.
	Owner Address
	// Lamports is the account's balance in lamports.
	Lamports uint64
	// Data is the account's raw data.
	Data []byte
	// Executable marks a program account.
	Executable bool
	// Slot is the context slot of the bank the node answered from.
	Slot uint64
}

// TokenAmount is a token account's balance as a node reported it.
type TokenAmount struct {
	// Amount is the balance in atomic units.
	Amount uint64
	// Decimals is the mint's decimals.
	Decimals uint8
	// Slot is the context slot of the answer.
	Slot uint64
}

// EpochInfo is a node's view of the current epoch (getEpochInfo).
type EpochInfo struct {
	// Epoch is the current epoch.
	Epoch uint64
	// AbsoluteSlot is the current slot.
	AbsoluteSlot uint64
	// BlockHeight is the current block height.
	BlockHeight uint64
	// SlotIndex is the slot's index within the epoch.
	SlotIndex uint64
	// SlotsInEpoch is the number of slots in the epoch.
	SlotsInEpoch uint64
}

// Known clusters' genesis hashes (chain.md §8).
const (
	// MainnetGenesisHash is mainnet-beta's genesis hash.
	MainnetGenesisHash = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
	// DevnetGenesisHash is devnet's genesis hash.
	DevnetGenesisHash = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
	// TestnetGenesisHash is testnet's genesis hash.
	TestnetGenesisHash = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
)

// Cluster names a cluster kind as the platform reports it.
type Cluster string

// The cluster kinds. Any genesis hash other than the three public
// clusters' is a local or private cluster (a test validator, the loopback
// simulator).
const (
	Mainnet  Cluster = "mainnet"
	Devnet   Cluster = "devnet"
	Testnet  Cluster = "testnet"
	Localnet Cluster = "localnet"
)

// Network is a cluster identified by its genesis hash.
type Network struct {
	// GenesisHash is the cluster's genesis hash in base58.
	GenesisHash string
}

// CAIP2 is the network's CAIP-2 identifier: "solana:" and the first 32
// characters of the genesis hash.
func (n Network) CAIP2() string {
	h := n.GenesisHash
	if len(h) > 32 {
		h = h[:32]
	}
	return "solana:" + h
}

// Cluster is the kind of cluster the genesis hash names.
func (n Network) Cluster() Cluster {
	switch n.GenesisHash {
	case MainnetGenesisHash:
		return Mainnet
	case DevnetGenesisHash:
		return Devnet
	case TestnetGenesisHash:
		return Testnet
	}
	return Localnet
}

// JSON-RPC error codes the platform acts on (chain.md §1.1 and §1.4).
const (
	CodeInvalidParams        = -32602
	CodeInternal             = -32603
	CodePreflightFailure     = -32002
	CodeSignatureFailure     = -32003
	CodeBlockNotAvailable    = -32004
	CodeNodeUnhealthy        = -32005
	CodeSlotSkipped          = -32007
	CodeLongTermSlotSkipped  = -32009
	CodeMinContextSlot       = -32016
	CodeUnsupportedTxVersion = -32015
)

// RPCError is a JSON-RPC error a node answered.
type RPCError struct {
	// Method is the JSON-RPC method called.
	Method string
	// Code is the JSON-RPC error code.
	Code int
	// Message is the node's message.
	Message string
	// NumSlotsBehind is set on -32005 when the node said how far behind it
	// is.
	NumSlotsBehind *uint64
	// Data is the error's data as JSON ("" when none): for -32002 the
	// simulation result, whose "err" names the failure (BlockhashNotFound,
	// AlreadyProcessed, an InstructionError).
	Data string
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("chain: %s: rpc error %d: %s", e.Method, e.Code, e.Message)
}

// Unhealthy reports whether the node said it is behind or unhealthy
// (-32005): the answer says nothing about the chain.
func (e *RPCError) Unhealthy() bool { return e.Code == CodeNodeUnhealthy }

// ErrAccountNotFound is returned when a node answers that an account does
// not exist (a null value).
var ErrAccountNotFound = errors.New("chain: account not found")

// ErrNotTokenAccount is returned when a balance is asked of an account that
// is not a token account.
var ErrNotTokenAccount = errors.New("chain: not a token account")

// ErrUnavailable marks a call that reached no answer: a transport failure,
// an HTTP error status, a malformed envelope or a timeout. Adapters wrap
// it (errors.Is finds it) with the cause.
var ErrUnavailable = errors.New("chain: cluster unavailable")

// ErrBlockTimeUnavailable is returned by BlockTime when the node has no time
// for the slot (-32004, -32007, -32009 or a null answer).
var ErrBlockTimeUnavailable = errors.New("chain: block time unavailable")

// Blockhash is a recent blockhash (getLatestBlockhash).
type Blockhash struct {
	// Hash is the blockhash in base58.
	Hash string
	// LastValidBlockHeight is the last block height at which a
	// transaction using Hash can land.
	LastValidBlockHeight uint64
	// Slot is the context slot of the answer.
	Slot uint64
}

// SendOptions tune sendTransaction.
type SendOptions struct {
	// SkipPreflight skips the node's simulation.
	SkipPreflight bool
	// PreflightCommitment is the simulation's bank; empty means finalized.
	PreflightCommitment Commitment
}

// SignatureStatus is a signature's status (getSignatureStatuses).
type SignatureStatus struct {
	// Slot is the slot the transaction landed in.
	Slot uint64
	// Confirmations counts blocks confirmed since; nil once rooted.
	Confirmations *uint64
	// Err is the transaction's error as JSON ("" when it succeeded).
	Err string
	// Status is processed, confirmed or finalized.
	Status Commitment
}

// TokenBalance is a token account's balance before or after a
// transaction (meta.preTokenBalances / postTokenBalances).
type TokenBalance struct {
	// AccountIndex indexes the transaction's full key list
	// (Transaction.Keys: static keys, then loaded addresses).
	AccountIndex int
	// Account is the token account (Keys()[AccountIndex]).
	Account Address
	// Mint, Owner and ProgramID are the account's mint, owner and token
	// program.
	Mint      Address
	Owner     Address
	ProgramID Address
	// Amount is the balance in atomic units; Decimals the mint's.
	Amount   uint64
	Decimals uint8
}

// Instruction is one compiled instruction with its keys resolved.
type Instruction struct {
	// ProgramID is the program called.
	ProgramID Address
	// Accounts are the instruction's accounts in order.
	Accounts []Address
	// Data is the instruction data.
	Data []byte
}

// Transaction is a landed transaction (getTransaction) with the facts
// effect verification reads.
type Transaction struct {
	// Signature is the first signature in base58.
	Signature string
	// Slot and BlockTime say when it landed; BlockTime may be unknown.
	Slot      uint64
	BlockTime *time.Time
	// Err is meta.err as JSON ("" when the transaction succeeded).
	Err string
	// Fee is the fee paid in lamports.
	Fee uint64
	// AccountKeys are the message's static keys; the first NumSigners
	// signed it and AccountKeys[0] paid the fee.
	AccountKeys []Address
	NumSigners  int
	// LoadedWritable and LoadedReadonly are the addresses a v0 message's
	// address-table lookups loaded (meta.loadedAddresses), empty for a
	// legacy message. Keys lists them after AccountKeys.
	LoadedWritable []Address
	LoadedReadonly []Address
	// RecentBlockhash is the message's blockhash in base58.
	RecentBlockhash string
	// Instructions are the top-level instructions.
	Instructions []Instruction
	// PreBalances and PostBalances are the lamports of each key of Keys
	// before and after the transaction (the fee already taken from the
	// payer in PostBalances).
	PreBalances  []uint64
	PostBalances []uint64
	// PreTokenBalances and PostTokenBalances are the token balances
	// around the transaction.
	PreTokenBalances  []TokenBalance
	PostTokenBalances []TokenBalance
	// LogMessages are the program logs.
	LogMessages []string
}

// Keys is the transaction's full key list, which every index of the
// transaction (instruction accounts, balances, token balances) refers to:
// AccountKeys, then LoadedWritable, then LoadedReadonly (swap.md §2).
func (t Transaction) Keys() []Address {
	out := make([]Address, 0, len(t.AccountKeys)+len(t.LoadedWritable)+len(t.LoadedReadonly))
	out = append(out, t.AccountKeys...)
	out = append(out, t.LoadedWritable...)
	return append(out, t.LoadedReadonly...)
}

// SignatureInfo is one entry of getSignaturesForAddress, newest first.
type SignatureInfo struct {
	// Signature is the transaction's first signature in base58.
	Signature string
	// Slot is where it landed; BlockTime when, if known.
	Slot      uint64
	BlockTime *time.Time
	// Err is the transaction's error as JSON ("" when it succeeded).
	Err string
	// Memo is the node's memo summary ("[len] text; ...").
	Memo string
	// Status is processed, confirmed or finalized.
	Status Commitment
}

// SignaturesOptions page getSignaturesForAddress.
type SignaturesOptions struct {
	// Limit bounds the answer (1 to 1000; zero means 1000).
	Limit int
	// Before and Until bound the page by signature.
	Before, Until string
}

// ErrTransactionNotFound is returned when a node has no transaction for a
// signature (a null getTransaction).
var ErrTransactionNotFound = errors.New("chain: transaction not found")
