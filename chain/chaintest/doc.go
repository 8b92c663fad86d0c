// Package chaintest is a loopback Solana cluster for tests, the example host
// and benchmarks: an in-memory bank behind a JSON-RPC 2.0 server on
// 127.0.0.1, plus the same reads in process.
//
// # What it simulates
//
// A Cluster holds accounts (lamports, owner, data, executable), real SPL
// Token and Token-2022 account bytes written with chain/token2022 (mints with
// TransferFeeConfig, MetadataPointer and TokenMetadata; token accounts at
// their associated addresses, Token-2022 ones with ImmutableOwner and, for a
// fee mint, TransferFeeAmount), a slot clock, epochs, blockhashes and
// transactions. Over HTTP it answers the methods of chain.md §2 with the
// envelope, error codes and messages of an Agave node: getAccountInfo,
// getMultipleAccounts, getBalance, getTokenAccountsByOwner,
// getTokenAccountBalance, getLatestBlockhash, getBlockHeight, getSlot,
// isBlockhashValid, sendTransaction, simulateTransaction,
// getSignatureStatuses, getTransaction, getBlockTime, getEpochInfo,
// getSignaturesForAddress, getMinimumBalanceForRentExemption, getHealth,
// getGenesisHash and getVersion. Request ids are echoed byte for byte,
// argument-less calls need no params, and batches are answered.
//
// Transactions (legacy and v0 without address-table lookups, base64 or
// base58) are sanitized, their ed25519 signatures verified (-32003), their
// blockhash checked (valid for 150 slots; -32002 BlockhashNotFound), and
// preflight-simulated unless skipPreflight is set. They land in the current
// slot, pay 5000 lamports per signature, and execute these instructions:
// System Transfer; SPL Token and Token-2022 Transfer and TransferChecked;
// Token-2022 TransferCheckedWithFee (fee from the mint's TransferFeeConfig at
// the current epoch, Custom(32) FeeMismatch when the stated fee differs, the
// fee withheld on the destination's TransferFeeAmount; TransferChecked on a
// fee mint withholds the computed fee too); Memo (v1 and v2, UTF-8 checked,
// every account must sign); Associated Token Account Create and
// CreateIdempotent (either token program); Compute Budget (accepted, no
// effect). A failing transaction lands with meta.err (InstructionError),
// keeps nothing but its fee, and is reported by getTransaction,
// getSignatureStatuses and getSignaturesForAddress.
//
// A landed transaction is processed at once, confirmed ConfirmAfter slots
// later (plus any ConfirmDelay) and finalized FinalizeAfter slots later. The
// clock only moves when told to: AdvanceSlots, SetEpoch, or Run in the
// background. Each slot lasts 400ms of block time from Config.Start and has
// its own blockhash.
//
// Defaults: 32 slots per epoch, confirmation after 1 slot, finalization after
// 32, slot 0 at 2026-01-01T00:00:00Z. The genesis hash is derived from a
// constant string, so it is stable, is none of mainnet's, devnet's or
// testnet's, and the cluster's chain.Network is a localnet.
//
// # Commitment
//
// Statuses, getTransaction and getSignaturesForAddress honour commitment.
// Account reads answer from the newest state whatever the commitment; the
// context slot is the slot of the requested level (the current slot for
// processed, ConfirmAfter and FinalizeAfter slots earlier for confirmed and
// finalized). getSlot, getBlockHeight and getEpochInfo answer at that slot
// too. getTransaction and getSignaturesForAddress refuse processed, as a
// node does.
//
// # Faults
//
// Inject queues a Fault for a method (or every method): a JSON-RPC error
// with any code, message and data; a node behind by N slots (-32005, which
// getHealth answers too); a delay before the answer (a timeout for a client
// with a shorter deadline); or a bare HTTP status with no JSON-RPC body.
// DropTransactions makes sendTransaction return signatures that never land,
// FailTransactions makes landed transactions fail with Custom(1),
// ConfirmDelay slows confirmation and ExpireBlockhashes invalidates every
// blockhash issued so far. The in-process reads (GetAccountInfo and the
// rest, the ChainClient port of the token package) go through the same
// faults under the same method names, mapped to chain's errors.
//
// # What it does not simulate
//
// No WebSocket subscriptions; no address-table lookups (a v0 transaction
// with lookups is refused); no programs beyond those listed (any other
// program fails with UnsupportedProgramId); no jsonParsed output (account
// reads fall back to base64, as a node does for unparsable data, and
// base64+zstd is answered as base64; getTransaction refuses jsonParsed); no
// rent collection, no account-state versions per commitment, no forks or
// skipped slots (block height equals slot), no leader schedule, no
// priority fees, no multisig or delegate-approval instructions, and no
// status-cache expiry (statuses are kept for the life of the cluster).
package chaintest
