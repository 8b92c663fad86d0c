// Package web3 holds the platform's bridges to the wider chain ecosystem,
// one sub-package per protocol. This package itself has no code: it is the
// place that says how the adapters are laid out and which rules they share.
//
// # Layout
//
//   - web3/x402: payment-required resources (the x402 protocol, version 2,
//     scheme exact on Solana), bought one use at a time with a token
//     payment that a facilitator verifies and settles.
//   - web3/cctp: cross-chain USDC transfers over Circle's CCTP V2, each
//     step (burn, attestation, mint) recorded with the evidence the
//     platform read itself.
//   - web3/zk: Groth16 proof verification over BN254 in snarkjs's JSON
//     formats, against verifying keys the server pins per circuit version,
//     with the statement bound to a tenant, a user and a transaction intent.
//
// Each sub-package is one protocol adapter: a domain with its own types,
// ports (the store, the chain or service it reads, the intents it binds
// to), configuration and tests. They are separate packages because they
// share nothing but these rules: their wire formats, their evidence and
// their dependencies differ (a pairing library for one, an EVM client for
// another), and an embedder that needs one links none of the others. The
// HTTP routes of each live in transport/api, their tables in store, their
// wiring in the root package, as for every other domain.
//
// # Rules every adapter keeps
//
//   - Fail closed until configured and verified. An adapter whose keys,
//     endpoints or facilitator are not configured for an environment
//     refuses its routes there with a stable code, and
//     GET /api/v1/web3/capabilities reports it configured, enabled and
//     verified only as far as that is true.
//   - Claim nothing unverified. What a caller sends is a claim, never
//     evidence: the platform reads the chain, the attestation service or
//     its own records, and checks proofs against keys it pinned itself. A
//     cross-chain transfer does not say an external wallet burned or
//     minted until the receipt was read and checked; a valid proof proves
//     its statement and settles nothing; a payment-required access grants
//     one use of one resource and never a plan entitlement.
//   - Idempotent. Every mutation can be repeated safely: by an
//     Idempotency-Key, and by the natural key of what it records (a
//     payment's transaction, a transfer's burn, a proof's statement), so a
//     replay returns the record made the first time and never a second one.
package web3
