// Package zk verifies zero-knowledge proofs bound to transaction intents:
// Groth16 proofs over BN254 in snarkjs's JSON formats, checked against
// verifying keys the server pins per circuit version, for a statement
// that names the caller's tenant, user and intent (spec, Web3 adapters;
// reference web3.md §3). A valid proof verifies its statement and
// settles nothing: no intent moves, no ledger entry is written, no
// entitlement is granted. It is the route POST
// /api/v1/transactions/{id}/zk-verify.
//
// # Formats
//
// The proof is snarkjs's proof.json: {"pi_a": [x, y, "1"], "pi_b":
// [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]], "pi_c": [x, y, "1"],
// "protocol": "groth16", "curve": "bn128"}; the public signals are
// public.json, an array of decimal strings; a key is
// verification_key.json (protocol, curve, nPublic, vk_alpha_1, vk_beta_2,
// vk_gamma_2, vk_delta_2, IC; vk_alphabeta_12 is ignored and recomputed
// by the pairing). Coordinates are decimal strings, an Fp2 element is
// [c0, c1] with c0 the real part (as snarkjs writes it; the Solidity
// verifiers it exports swap them, its JSON does not).
//
// # Validation
//
// Everything is checked before any pairing, and refused with the path of
// the offending value (FormatError, INVALID_INPUT at the route): protocol
// groth16 and curve bn128 only; every number a canonical decimal (digits
// only, no sign, no leading zero) below its modulus (the base field p for
// coordinates, the scalar field r for public signals); points in affine
// form; every point on the curve, every G2 point in the prime-order
// subgroup (G1's cofactor is 1), none the point at infinity; as many
// public signals as the key's IC points less one. A key is checked the
// same way when the host starts, so a bad key stops the host instead of
// failing requests.
//
// The pairing check is gnark-crypto's (ecc/bn254.PairingCheck), on
// e(-A, B)·e(alpha, beta)·e(L, gamma)·e(C, delta) = 1 with
// L = IC[0] + Σ public[i]·IC[i+1]. gnark itself is not used.
//
// # Pinned keys
//
// Verifying keys come from configuration (Environment, per environment:
// Circuit id, version, key and binding input), never from a request: a
// request names a circuit id and version and the server uses its own key.
// A new key is a new version. A circuit must declare its binding input.
//
// # Statement binding
//
// A proof is bound to one tenant, user and intent through one public
// input, its circuit's binding input, which must equal
//
//	Binding = SHA-256("platform/zk/v1" 0x00 tenantId 0x00 userId 0x00 intentId 0x00 economicsHash) mod r
//
// where the tenant and user are the intent's (always the caller's: only
// the intent's own user reads it) and economicsHash is the intent's
// lowercase hex economics hash (its frozen terms). The server computes it
// from its records at every request; a proof made for another user,
// another intent or another tenant carries another value and is refused
// with STATEMENT_MISMATCH before any pairing. A client computes the same
// value from the intent it reads (GET /api/v1/transactions/{id}: id and
// economicsHash) and its session's tenant and user, and feeds it to its
// circuit as that public input. The 256-bit hash is reduced modulo r; the
// bias is negligible.
//
// # Deduplication
//
// Groth16 proofs can be re-randomized: anyone holding a proof can make
// other valid proofs of the same statement. So a verification is recorded
// once per statement, StatementHash of the circuit version and all its
// public inputs, per tenant and environment. A second proof of a
// statement already recorded (a resent proof, or a re-randomized one)
// is verified like the first (a corrupted proof is refused whatever was
// recorded before) and answers the existing verification, recording
// nothing. The record keeps the first proof and its ProofHash (SHA-256 of
// its uncompressed points), unique too. Another statement of the same
// intent (other public inputs) is its own verification.
//
// # Availability
//
// Decision: an environment without an enabled verifier answers 503
// PROVIDER_UNAVAILABLE, with details.reason verifier_not_configured (no
// circuit pinned there) or verifier_not_enabled (circuits pinned,
// Environment.Enabled false), and GET /api/v1/web3/capabilities reports
// zk_verification with the same reason. PROVIDER_UNAVAILABLE rather than
// FEATURE_DISABLED because the gap is the deployment's, not the caller's:
// FEATURE_DISABLED is an access code (403) that says a workspace's feature
// flag is off for it, and clients read 403 as final; the verifier is to
// this route what the cluster is to intents and the payment provider to
// checkouts, whose absence the platform already answers with
// PROVIDER_UNAVAILABLE, and it is what reference §3.3 asks (unavailable,
// 503). The check comes first, before the intent is read.
//
// Capabilities: configured when a circuit is pinned, enabled when also
// Enabled; never verified, since nothing on chain is proven (as wallet
// verification).
//
// # Records
//
// A new verification is written in one unit of work with its outbox
// event (EventVerified, "zk_verification.verified") and an audit record
// (ActionVerified); the idempotency record of the request commits with
// them. Failed proofs record nothing.
//
// # Test circuit
//
// The test circuit (zktest.Square: x·x = y with public inputs [y, b], b
// the binding input), its verifying key and proofs bound to a fixed
// tenant, user and intent are committed under testdata; testdata/README.md
// says how they were made (go run ./web3/zk/internal/gen). Its setup's
// toxic waste is public: the key is for tests only.
package zk
