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
// Transactions (legacy and v0, base64 or base58) are sanitized, their
// ed25519 signatures verified (-32003), their
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
// # Address lookup tables
//
// CreateLookupTable writes a table account as the Address Lookup Table
// program (AddressLookupTab1e1111111111111111111111111) stores it: a
// 56-byte LookupTableMeta (u32 discriminator 1, u64 deactivation slot,
// u64::MAX while active, u64 last extended slot, u8 its start index,
// Option<Pubkey> authority as a tag byte and 32 bytes, u16 padding), then
// the 32-byte addresses; the account is rent-exempt and its address is the
// program's derivation from the authority and a recent slot.
// ExtendLookupTable and DeactivateLookupTable change it as the program's
// instructions do. A v0 transaction's lookups are resolved when it is
// sanitized, at the current slot, before its signatures are checked, with
// a node's rules and errors (-32602 "invalid transaction: …"): an absent
// table, or one deactivated more than 512 slots ago, "Transaction loads an
// address table account that doesn't exist"; another owner, "… with an
// invalid owner"; unreadable bytes, "… with invalid data"; an index beyond
// the table, or into addresses added in the current slot, "Transaction
// address table lookup uses an invalid index"; a key loaded twice,
// "Account loaded twice"; a program id outside the static keys, "Transaction
// failed to sanitize accounts offsets correctly". The full key list is the
// static keys, then every lookup's writable addresses, then the read-only
// ones: instruction indexes, meta.preBalances/postBalances and token
// balances' accountIndex refer to it, getTransaction reports
// meta.loadedAddresses {writable, readonly} and the message's
// addressTableLookups, and getSignaturesForAddress finds a transaction by
// a loaded address too. Tables are read from the newest state whatever the
// preflight commitment.
//
// # The constant-product pool program
//
// PoolProgramID (the SHA-256 of "chaintest/constant-product-pool/v1") runs
// one instruction, a swap whose data is the tail of Jupiter v6's route
// (discriminator sha256("global:route")[:8], in_amount u64,
// quoted_out_amount u64, slippage_bps u16, platform_fee_bps u8) over ten
// accounts: pool (w), user transfer authority (s), source (w), destination
// (w), vault in (w), vault out (w), input mint, output mint, input token
// program, output token program. CreatePool writes the 202-byte pool
// account ("cppool01", mint A, mint B, vault A, vault B, u16 fee bps, token
// program A, token program B) and its two vaults (token accounts owned by
// the pool, at sha256("chaintest/pool-vault" || pool || mint)), whose
// balances are the reserves; SetPoolReserves moves the price;
// PoolSwapInstruction builds the instruction. The swap checks, in order:
// data (Anchor's Custom 100, 101, 102), at least ten accounts (6008),
// platform_fee_bps zero (6003), slippage_bps at most 10000 (6004), the
// authority's signature (MissingRequiredSignature), the writable flags
// (2000), the pool account (3007 wrong owner, 3002 not a pool), the mints
// against the pool's pair (6025), the token programs (6014), the vaults,
// source (of the input mint, owned by the authority) and destination (of
// the output mint) (6025), a frozen account (17, as the token program), the
// source's balance (6024). Then, with big integers and floor division,
// received = in_amount − the input mint's transfer fee at the current
// epoch, out = reserve_out × received × (10000 − fee) / (reserve_in × 10000
// + received × (10000 − fee)) over the vaults' balances before the swap;
// out = 0 fails with 6000, out below quoted_out_amount × (10000 −
// slippage_bps) / 10000 with 6001. in_amount moves from the source to vault
// in (its fee withheld there) and out from vault out to the destination
// (the output mint's fee withheld on the destination), as TransferChecked
// does. It logs "Instruction: Route" and "in_amount=<n> out_amount=<n>"; a
// failure logs Anchor's "AnchorError occurred. Error Code: …" line and,
// like any failed transaction, moves nothing but the fee.
//
// # The CCTP V2 receive side
//
// InstallCCTP deploys MessageTransmitterV2 and TokenMessengerMinterV2 at
// their real program ids; the transmitter's receive_message verifies an
// attestation through a hook (web3/cctp/iristest's Verify), refuses a used
// nonce as Anchor's init does (Custom(0)), writes the used-nonce account
// and mints the amount minus the fee executed to the message's recipient
// (cctp.go lists its accounts and errors).
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
// No WebSocket subscriptions; no Address Lookup Table instructions (tables
// are made and changed by the Cluster's methods only) and no
// writable-account demotion of loaded program ids or reserved keys; no
// inner instructions (the pool's token transfers are not reported as
// CPIs); no programs beyond those listed (any other program fails with
// UnsupportedProgramId); no jsonParsed output (account
// reads fall back to base64, as a node does for unparsable data, and
// base64+zstd is answered as base64; getTransaction refuses jsonParsed); no
// rent collection, no account-state versions per commitment, no forks or
// skipped slots (block height equals slot), no leader schedule, no
// priority fees, no multisig or delegate-approval instructions, and no
// status-cache expiry (statuses are kept for the life of the cluster).
package chaintest
