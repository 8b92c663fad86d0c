// Package swap is the token-swap domain: a wallet's swap of one trusted
// token for another through a route provider, from the quote request to
// reconciliation (spec, "Swap records", "Swap operation", the Swap routes
// and error codes; swap.md §2, §3, §5 and §7).
//
// This part is its pure core: no I/O, no clock, no SDK, no store, no
// transport. It holds the operation's state machine (Moves, Transition),
// the amount rules (ParseAmount, SplitServiceFee, MinimumOutput,
// PriceImpactBps, NativeReserve), the immutable Quote and Intent records
// with their hashes (QuoteHash, IntentHash, NewIntent), the verifier of a
// landed transaction (Verify over an Observed transaction) and
// reconciliation (Reconcile). The package will also hold its ports (the
// route provider, the chain client, the store), the service that drives
// the operation through them, the trusted-token registry and the swap
// settings; those sit on this core.
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
