// Package relay is the network side of a signed Solana transaction's
// life, whatever the transaction pays for: getting the exact signed bytes
// onto the cluster, following the signature's status up to finalized, and
// telling a dropped transaction from a slow one (chain.md §1.5, §2 and
// §10).
//
// # Why a package of its own
//
// The platform has more than one value path: the chain payment path
// (chain/intent: intents, effect verification, settlement of credits) and
// token swaps (swap). Each owns its records, business states, persistence,
// jobs and settlement, and each must relay a transaction the user signed
// under the same rules: never send what the chain already knows, never
// send anything but the identical signed bytes, never call a transaction
// dropped while it could still land, and never let a lagging node move a
// state backwards. Those rules are about the network alone, so they live
// here once and both paths call them; a second relay would be a second
// place for a double send to hide.
//
// The package is a domain leaf: it imports chain, chain/token2022 (for
// base58), fault and fsm, declares the small ChainClient it calls
// (chain/solanarpc.Client satisfies it, as does each value path's larger
// port), and stores nothing.
//
// # The record and its states
//
// A Submission is what the owning path stores about one signed
// transaction: its network (CAIP-2), signature, the exact signed wire
// bytes (or none, when the wallet broadcast them), the blockhash and its
// last valid block height, the network State, the send count, the last
// error and the chain's failure reason. States form one table as data
// (Transitions, moved only by Transit): unsent < submitted < processed <
// confirmed < finalized, with failed and dropped terminal; every row
// moves forward, so Advance applies an observation only forward and a
// lower one is stale.
//
// # One step
//
// Step takes a Submission and a ChainClient and returns the next
// Submission and what happened (Outcome: observed, waiting, sent, dropped
// or replaced), never writing anything itself; the caller stores the
// record and moves its own business state from the Result. Observe, the
// pure half, applies a status to a record; Inspect, FindByReference and
// CheckNetwork are the reads a caller also needs on its own (a watch
// that follows a settled record, a payment found by its reference, the
// cluster check before any step).
//
// Decision, send answers (Classify): an answer that says nothing about
// the transaction (a timeout, an unreachable or unhealthy node, an
// unknown error) is uncertain: the state stays submitted with
// SUBMISSION_UNCERTAIN and the next step inspects the signature before
// anything else. -32002 AlreadyProcessed counts as sent. -32002
// BlockhashNotFound is recorded as uncertain without an error: a lagging
// node says it too, so only the finalized block height decides a drop. A
// failed simulation or malformed bytes fail the record with
// TRANSACTION_FAILED, a bad signature with SIGNATURE_REJECTED (SendClass
// keeps the distinction for a path whose contract says SIMULATION_FAILED).
//
// Decision, drops: a transaction is dropped only when the finalized block
// height is above its last valid block height and a second inspection
// still finds no status; at that height exactly it could still land. A
// caller may hold the drop back (a wallet that broadcast the transaction
// itself may have re-signed it) and may supply a search, such as
// FindByReference over the payment's reference address, that finds the
// payment under another signature; the Result then says replaced and
// leaves the record to the caller.
package relay
