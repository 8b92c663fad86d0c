// Package cctp is the cross-chain transfer domain: USDC moved from an EVM
// chain to Solana through Circle's CCTP V2, recorded step by step with
// the evidence of each (spec, Web3 adapters; web3.md §2). The platform
// holds no key and signs nothing here: the depositor's wallet burns on
// the EVM chain, anyone relays the mint on Solana, and the platform
// verifies. It never claims that an external wallet signed a burn or a
// mint until that transaction was read from its chain and checked.
//
// # Layout
//
// The package imports no SDK, no store and no transport. Its ports
// (ports.go) are EVMClient and SignerRecovery (web3/cctp/evmrpc, over
// go-ethereum's JSON-RPC client, ABI decoding and secp256k1 recovery),
// Attestations (web3/cctp/iris, Circle's Iris V2 wire), SolanaClient
// (the environment's cluster: chain/solanarpc), Store (package store, on
// SQLite and PostgreSQL) and Clock. The loopback simulators are
// web3/cctp/evmtest (an EVM JSON-RPC node serving receipts and logs, with
// faults), web3/cctp/iristest (an attestation service that signs with
// test attester keys) and chain/chaintest's receive_message program.
//
// # A transfer
//
// One table of states (Moves): CREATED -> SOURCE_VERIFIED ->
// ATTESTATION_PENDING -> ATTESTED -> DESTINATION_VERIFIED -> COMPLETED,
// and REQUIRES_REVIEW for anything unexplained. Each step reads its
// chain outside any unit of work, judges what it read into Evidence (a
// list of checks, expected against actual), and Apply writes the move,
// the evidence, the outbox event cctp_transfer.<state> and an audit
// record in one unit of work, compare-and-setting the transfer's version.
//
//   - Create pins the amount (atomic USDC, 6 decimals, at most 10,000,000
//     USDC), the source domain (a configured EVM chain), the destination
//     (domain 5, Solana) and the recipient: the Solana USDC token account,
//     not a wallet (web3.md §2.8), read from the cluster at creation so a
//     burn never targets an account the mint cannot credit. Creation
//     fails closed until the environment is configured and its newest
//     readiness run passed.
//   - VerifySource takes the burn's transaction hash alone. The server
//     reads the receipt and checks the DepositForBurn of the configured
//     TokenMessengerV2 and the MessageSent logged before it (burn token,
//     destination domain and TokenMessenger, recipient, amount, fee bound,
//     finality, no hook, and a message that carries exactly that burn).
//     A burn that fails a check is refused and nothing is recorded: it is
//     not this transfer's burn.
//   - FetchAttestation asks the attestation service from the server; a
//     caller never supplies an attestation. The attested message must be
//     the burn's (equal once the attester's fields are zeroed), and its
//     signatures are verified against the configured attesters as the
//     destination program would. A service answer that is not the burn's
//     message, or a complete attestation that fails a check, goes to
//     REQUIRES_REVIEW.
//   - VerifyDestination takes the mint's signature alone and reads it
//     from Solana: receive_message of the attested message, the nonce's
//     used-nonce account set, the recipient credited with the amount
//     minus the fee executed. A repeated mint fails on chain with the
//     nonce used; it counts once the nonce is checked and the mint that
//     used it is found and verified in its place.
//   - Reconcile (the operator's: the internal scope) reads both sides
//     again at finality and completes only when both still hold.
//
// # Decisions
//
//   - Direction: EVM to Solana only, since mints are verified on Solana;
//     a destination other than domain 5 is INVALID_INPUT.
//   - Refuse or review: a transaction that is not this transfer's (a
//     burn with another recipient, amount, domain or token; a Solana
//     transaction without the attested message) is refused with
//     VERIFICATION_FAILED and moves nothing. Once a step verified, a chain
//     or the service contradicting it is unexplained and goes to
//     REQUIRES_REVIEW, which only a person leaves.
//   - Fee bound: a burn's maxFee must be below its amount and within
//     Environment.MaxFeeBps of it (default 100 bps).
//   - Readiness: a configuration is proven by a run (job cctp.verify at
//     start per configuration hash, then hourly) that reads each source's
//     chain id and contract code, the Solana USDC mint and programs, and
//     each route's fee table from the attestation service. The capability
//     reports configured, verified and enabled from it; creation needs it.
//   - The feature flag cctp gates creation only; later steps record
//     evidence of value that may already have moved.
package cctp
