// Package swap is the token-swap domain: a wallet's swap of one trusted
// token for another through a route provider, from the quote request to
// reconciliation (spec, "Swap records", "Swap operation", the Swap routes
// and error codes; swap.md §2, §3, §5 and §7).
//
// The package imports no SDK, no store and no transport. It declares its
// small ports (ports.go): ChainClient (the environment's cluster, which
// chain/solanarpc implements), RouteProvider (quotes and swap
// instructions, which swap/jupiter's Client implements over the Jupiter
// wire), Wallets (wallet verification), Clock, and the stores of its units
// of work (RegistryStore, OperationStore, Store, SubmitStore,
// SettleStore), which package store implements on SQLite and PostgreSQL
// and swap/swaptest in memory. A Go service builds a Service from those
// alone (the package Example), without the HTTP layer.
//
// # The path of a swap
//
//   - Registry and settings (registry.go, settings.go, views.go): each
//     environment's trusted tokens are an immutable policy version
//     (swap.tokens) whose mints a durable job reads from the environment's
//     cluster; an entry is executable only while the newest readable
//     reading matched. Settings (swap.settings) and the fee policy
//     (fees.swap, 200 bps and the fee recipient) are policies too, and the
//     route provider sits behind a circuit breaker (breaker.go).
//     Capability (views.go) is the environment's swap state as the chain
//     capability and feature views report it: configured (the settings
//     are not NOT_CONFIGURED), verified (the newest readable run of the
//     current registry matched at least two mints: a swap's input and
//     output), enabled when both and not paused.
//   - Quote (quoting.go): the spec's checks in order, each its own code,
//     with balances and mints read from the chain at that moment, then the
//     route for the executable input; nothing is written unless every
//     check passed, and the quote is frozen under its hash.
//   - Intent (intenting.go): one per quote; the prepared transaction is a
//     v0 message the wallet pays for (the route's instructions, the
//     service fee's transfer, a memo with the intent id, the route's
//     lookup tables), bound by its digest.
//   - Submit and relay (submit.go): the signed bytes are checked against
//     the prepared message and the wallet, the signature binds one
//     operation, and a watch job relays the identical bytes through
//     chain/relay (inspect before any send) until the chain confirms or
//     refuses them.
//   - Settlement (settle.go): the landed transaction is verified from the
//     chain alone and settled once (the fee received, on the financial
//     ledger), then reconciled against quote, intent and settlement.
//
// # State machine
//
// The operation moves only through the Moves table, by Transition. The
// forward order is the spec's; the exceptional moves the spec leaves open
// are decided in Moves' documentation. In short: nothing that may already
// be signed is cancelled or expired until its blockhash is dead and the
// chain shows nothing; an uncertain send stays SUBMITTED and the chain is
// inspected before any resend; FAILED means at most network fees moved;
// a second signature for a bound intent, a mismatch, missing data after
// finality, a settlement that cannot be written, or a landing after the
// operation closed go to REQUIRES_REVIEW, which only a person leaves.
//
// # Amounts
//
// Amounts are money.Atomic (unsigned 64-bit atomic units) and signed
// money.Sum for deltas; products are computed in 128 bits; no float
// touches them. The quote request's human amount is parsed with the
// registry's decimals by money.ParseDecimal's strict grammar, and a zero
// amount is INVALID_AMOUNT too.
//
// Decision, service fee: fee = floor(gross × bps / 10000) and executable =
// gross − fee, so the platform never takes more than its published rate;
// the fee is taken in the input mint. Decision, minimum output:
// floor(expected × (10000 − slippage) / 10000), within one unit of the
// provider's own threshold. Decision, price impact: the provider's
// fraction × 10000 rounded half up, so a midpoint is never understated
// against the policy; a negative impact counts as 0 and one of 1 or more
// as 10000. The native-coin reserve is swap.md §5's sum: signature fees,
// priority fee, tips, rent of the accounts the wallet funds, the native
// input and a temporary wrapped account's rent when the input is the
// native coin, and the wallet's own rent-exempt floor of 890,880 lamports.
//
// # Hashes
//
// QuoteHash and IntentHash are SHA-256 over a length-prefixed encoding of
// every frozen field, named, in a fixed order, under a version tag
// ("swap-quote/v1", "swap-intent/v1"): unambiguous whatever a string
// holds, independent of any serializer, and stable across storage because
// times are frozen at millisecond precision (FreezeTime). The provider's
// raw quote is kept byte for byte and bound by its digest, and the intent
// binds the prepared message by its digest, so a signature over other
// bytes authorizes nothing.
//
// # Verification and reconciliation
//
// Verify reads a landed transaction as the chain recorded it (network,
// success, signers, signature uniqueness, top-level programs against an
// allow-list, token programs, mints, input, fee recipient, fee, output)
// and records each check; effects are raw atomic amounts aggregated by
// owner and mint, native-coin legs are measured on the wallet's lamports
// and wrapped balance together, and Token-2022 transfer fees are applied
// to what receivers get. Reconcile compares quote, intent and those
// effects into MATCH, DRIFT_DETECTED, REQUIRES_REVIEW or FAILED with every
// delta as evidence; drift is reported, never corrected.
package swap
