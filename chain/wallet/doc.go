// Package wallet is wallet verification (spec, Endpoints: Wallet
// verification; chain.md §6): a signed-in user asks for a short-lived,
// purpose-bound, single-use Sign-In With Solana challenge for one address,
// signs its exact message with the wallet, and the platform checks the
// ed25519 signature over those exact bytes and records a server-owned
// wallet link for the user and tenant. Verification proves control of one
// address only: it creates no session, role or entitlement.
//
// # Why a subpackage
//
// Package chain stays a small shared leaf of types (addresses, accounts,
// commitments, cluster kinds) that the token registry and the chain
// adapters import. Wallet verification has a store port and a flow of its
// own, so it lives here: embedders of the registry or of an adapter do not
// link the verification and payment path. wallet imports only the
// standard library and fault, access, chain and chain/token2022.
//
// # The message
//
// Messages follow Sign-In With Solana v1.0.0 exactly (Text, Parse): LF
// separated, no trailing newline,
//
//	<domain> wants you to sign in with your Solana account:
//	<base58 address>
//
//	Link this wallet to your platform account for link_wallet. This request will not trigger a blockchain transaction or cost any fees.
//
//	URI: <Config.BaseURL>
//	Version: 1
//	Chain ID: solana:devnet
//	Nonce: <26 letters and digits from crypto/rand>
//	Issued At: 2026-01-02T03:04:05.000Z
//	Expiration Time: 2026-01-02T03:09:05.000Z
//	Request ID: wch_...
//
// The domain is the host (with port) of Config.BaseURL and the URI the
// base URL itself. The Chain ID is the wallet-standard id of the
// environment's cluster kind (Config.Clusters; ChainID): solana:mainnet,
// solana:devnet, solana:testnet, and "localnet" for a local cluster,
// because Phantom's grammar has no solana:localnet (an environment with no
// cluster writes no Chain ID). Times are RFC 3339 UTC with milliseconds.
// Not Before and Resources are never written; Parse accepts them and
// Verify honours Not Before. The server stores the whole message; the
// wallet signs its UTF-8 bytes, with signMessage, or with signIn given the
// challenge's fields as input (the wallet then returns the same text as
// signedMessage).
//
// # Decisions
//
//   - Purposes are a closed set: PurposeLinkWallet, plus Config.Purposes.
//     Each purpose has its own statement, so a signature for one purpose
//     is not one for another. Every purpose's verification records the
//     link; the purpose is returned for the flow that asked.
//   - A challenge belongs to the user and tenant that asked; another
//     account's challenge is NOT_FOUND, never revealed. It holds for
//     TTL (five minutes by default).
//   - Verification answers, in order: ACCESS_DENIED for an API key (the
//     gateway refuses it first; this is defence in depth), INVALID_INPUT
//     for a signature that is not 64 bytes in base58 or padded base64,
//     NOT_FOUND, CONFLICT for a consumed challenge (details.reason
//     challenge_consumed or attempts_exhausted), QUOTE_EXPIRED (410, the
//     existing code for a server-issued offer whose lifetime passed;
//     details.reason challenge_expired) for an expired one, then
//     SIGNATURE_REJECTED (422) for an altered message (details.reason
//     message_mismatch) and for a bad signature (signature_invalid).
//   - The signature is checked over the stored message, never over text
//     the client sends; signedMessage, when sent (UTF-8 or base64), must
//     equal it byte for byte.
//   - A rejected attempt consumes nothing, so the user may retry until
//     expiry, but it is counted in its own unit of work; the
//     MaxAttempts-th (five by default) consumes the challenge (EXHAUSTED).
//     Verify therefore takes a read store and a UnitOfWork, as account's
//     Login does.
//   - Success consumes the challenge with a compare-and-set (UPDATE ...
//     WHERE consumed_at IS NULL) in the same unit of work as the link, so
//     two concurrent verifications give one success and one CONFLICT.
//   - Links record the network "solana": one key controls the same address
//     on every cluster, and links hold in both environments. Relinking a
//     wallet the user holds is a no-op that returns the existing link; a
//     wallet of another user of the tenant is CONFLICT and consumes
//     nothing.
//   - Signatures are never stored or logged; a challenge keeps its
//     message, attempt count and outcome (Status, Moves).
package wallet
