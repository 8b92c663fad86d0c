// Package intent is the chain payment path's domain: transaction intents
// that freeze a payment's economics before any wallet signs, the unsigned
// transaction prepared for them, submission, relay, network state,
// effect verification from the chain, settlement through the owning
// domain, and Solana Pay chain payment requests (spec, "Transaction intent
// and chain payment request", the transactions and chain-pay routes, and
// the value-moving path: intent, explicit signature, submission, chain
// confirmation, effect verification, settlement, reconciliation).
//
// It is chain/intent rather than part of chain because chain stays a small
// leaf of shared types (addresses, commitments, RPC records and errors)
// that the token registry, the wallet domain and the adapters all import;
// this package is a domain with ports, state tables and policy, and would
// drag all of that into every consumer of those types. It imports no SDK:
// the legacy message is compiled by chain/message from chain.md §3, and
// solana-go appears only in tests, to decode what we build.
//
// # Purposes
//
// Intents come from a closed set of purposes registered by the domains that
// own them (Registry; unknown purposes and duplicates are refused). A
// Purpose has a settlement threshold (confirmed for user payments such as
// credit_purchase, finalized for treasury and reward flows), a Price that
// derives the economics from the request, a Settle hook that runs in the
// unit of work moving the intent to SETTLED, and a Settlement reader that
// reads back what Settle wrote, for reconciliation. A purpose that keeps a
// business object of its own beside the intent (marketplace_order: the
// order and its snapshot) adds two optional hooks: Open records it from
// Price.Terms in the unit of work that records the intent (Prepare returns
// a Draft carrying the terms; Record runs Open), and Track runs in every
// unit of work that writes one of its intents, after the write, so the
// object follows the intent (submitted, confirming, expired, failed, under
// review) and commits with it; in the unit that settles, Track runs after
// Settle. The terms are the purpose's: the intent neither stores nor
// hashes them. PaymentMint reads a mint by Create's rules for a domain
// that prices in one ahead of any intent (a listing). credit_purchase is
// provided here, priced by the "credits.packs" policy (CreditPacks,
// PolicyPacks; SeedCreditPacks publishes each environment's at start),
// settled by a grant on the credit ledger and read back from it
// (SettleCredits, CreditSettlement) through the unit of work's
// CreditStore, so settlement commits with the move to SETTLED.
//
// # Freezing
//
// Create verifies the principal (a signed-in user; API keys are refused),
// refuses caller-supplied recipient or amount, checks the wallet is the
// user's verified wallet, prices the request, then reads the cluster
// (genesis hash -> CAIP-2, epoch, mint, blockhash) and freezes: actor,
// network, payer and its Token-2022 ATA, the environment's treasury and
// its ATA (or each leg), mint and decimals (from the mint account), gross,
// transfer fee and net, the fee epoch and schedule, the policy reference, the business
// reference "<purpose>:<intent id>", a reference key, the memo (the intent
// id) and the expiry; EconomicsHash covers all of it and Submit and
// reconciliation recompute it (and rebuild the prepared message) before
// acting.
//
// # Legs
//
// A purpose prices either one payment to the environment's treasury
// (Price.NetAtomic: credit_purchase) or an ordered list of legs
// (Price.Legs, at most MaxLegs), each a PriceLeg {Role, Recipient wallet,
// NetAtomic}: a marketplace sale splits the buyer's payment into the
// seller's payout net of the platform fee and the platform fee to the fee
// recipient, in one transaction, without the platform ever holding the
// seller's money. The intent freezes each leg (Leg: role, recipient, the
// recipient's Token-2022 associated token account for the mint, gross,
// transfer fee, net), each grossed up on its own because the mint
// withholds its fee per transfer instruction (freezeLegs); the intent's
// GrossAtomic, FeeAtomic and NetAtomic are then the totals, and Recipient
// and Destination the first leg's. An intent without Legs keeps its
// single leg to the treasury (PaymentLegs derives it), and with it the
// canonical form, economics hash and prepared message it always had.
//
// Decision, a missing recipient account: every leg's destination is read
// at creation and the intent is refused (WALLET_REQUIRED naming
// "legs[i].recipient", with a reason) when it is missing, frozen, not the
// recipient's account of the mint, or requires a memo it would not get;
// the prepared transaction never creates accounts (checkDestinations
// says why). Roles and recipients are distinct, the payer is none of
// them, and a purpose that prices malformed legs fails with INTERNAL.
//
// Verification and reconciliation check every leg: the transaction's
// token instructions are matched to the legs in order, so a missing,
// extra, short, misdirected or wrong-mint leg is a mismatch naming it
// ("legs[1].net", check "chain.legs[1].net"). A chain payment request
// names one recipient, so an intent with several has none
// (CAPABILITY_UNSUPPORTED): its prepared transaction is the only way to
// pay it.
//
// Decision, gross-up: a pack price is what the treasury must receive. The
// payer sends the smallest gross whose transfer fee at the current epoch
// (TransferFeeConfig.FeeAt, maximum-fee cap included) leaves exactly the
// price (GrossUp proves gross − fee == net). A fee change scheduled by the
// mint takes effect two epochs after it is set, so it cannot land inside a
// 15-minute intent unless already visible; if it does, TransferCheckedWithFee
// fails on chain (FeeMismatch) and the intent FAILS, and a wallet-built
// TransferChecked delivers a different net and goes to review.
//
// Decision, expiry: an intent lives Config.TTL (15 minutes); its prepared
// transaction is further bounded by the blockhash's lastValidBlockHeight
// (shown as Prepared.ExpiresAt, estimated at 400 ms per block). Submitting
// after the intent's expiry is QUOTE_EXPIRED: the frozen terms are the
// intent's quote, and no closer code exists. A signed transaction whose
// blockhash lapsed cannot land; the relay then drops it (EXPIRED). There is
// no re-prepare: a client whose blockhash lapsed before signing creates a
// new intent (new idempotency key); never two live transactions for one
// intent.
//
// Decision, the reference: HMAC-SHA256(ReferenceKey, "intent-reference:"+id),
// 32 bytes, unique per intent and unlinkable without the key. It is a
// read-only non-signer account of the transfer, so getSignaturesForAddress
// finds the payment whoever built the transaction.
//
// # The prepared transaction
//
// A legacy message: fee payer first, then writable non-signers (source and
// destination token accounts), then read-only non-signers, each group in
// order of first appearance; instructions: a Memo (MemoSq4…) carrying the
// intent id, immediately before the first transfer, and the transfers
// last, one per leg in leg order —
// Token-2022 TransferCheckedWithFee (26, 1, amount, decimals, fee) when the
// mint has a TransferFeeConfig, else TransferChecked (12, amount, decimals)
// — each with accounts source (w), mint, the leg's destination (w), owner
// (s) and the reference (on every transfer: see buildMessage). No
// compute-budget instruction. The destination ATAs must exist (the
// treasury's accounts are provisioned once per mint; legs' are checked at
// creation).
//
// # Submission and relay
//
// Submit records the signature (unique across intents) and, optionally,
// the signed transaction, which must carry the prepared message byte for
// byte and the payer's valid signature; it never sends and never settles.
// A second, different signature for a submitted intent moves it to
// REQUIRES_REVIEW (spec). Relay, a job body, inspects the signature's
// status first (with history), sends only the identical stored bytes and
// only while the blockhash is valid; an unanswered send leaves the intent
// SUBMITTED with SUBMISSION_UNCERTAIN; AlreadyProcessed counts as sent;
// once the finalized block height passes lastValidBlockHeight with no
// status the intent EXPIRES (dropped), unless a payment under another
// signature carries its reference (review). A signature the wallet
// broadcast itself is never sent by us and gets Config.DropGrace before it
// counts as dropped, since the wallet may have re-signed with a later
// blockhash.
//
// Those network rules are chain/relay's, shared with the swap path: the
// intent hands its relay.Submission (network, signature, stored bytes,
// blockhash and last valid height, network state, send count, errors) to
// relay.Step and moves its own business state from the result (observed,
// waiting, sent, dropped, replaced); relay writes nothing. The reference
// search, the drop grace, effect verification and settlement stay here.
//
// # States
//
// Two tables as data. Network (relay.Transitions, under the intent's own
// type names): unsent < submitted < processed < confirmed < finalized,
// failed and dropped terminal; Advance applies an observation only forward
// and reports a lower one as stale. Business: CREATED ->
// SUBMITTED -> CONFIRMING -> VERIFIED -> SETTLED -> RECONCILING ->
// RECONCILED, with EXPIRED, FAILED and REQUIRES_REVIEW (Transitions,
// Transit). RECONCILED, EXPIRED, FAILED and REQUIRES_REVIEW are terminal;
// the pending states (CREATED to VERIFIED) are the watch's and the
// sweep's, SETTLED and RECONCILING the reconciliation job's. Every write
// is a compare-and-set on the intent's version inside one unit of work
// (Config.Run); chain reads always happen before it, never inside.
//
// # Verification and settlement
//
// Verify reads the chain's record (getTransaction at confirmed), never the
// caller's: cluster, success, fee payer and signer, the transfer last and of
// Token-2022, its accounts and amounts, the reference, the memo, and the
// treasury account's balance change (post − pre, missing pre = 0) equal to
// the expected net, owned by the treasury, of the mint — for an intent
// with Legs, every leg's transfer and its destination's change. Any mismatch moves
// the intent to REQUIRES_REVIEW with the mismatches as evidence and credits
// nothing. A match moves it to VERIFIED; at the purpose's threshold the
// Settle hook runs once, in the same unit of work as the move to SETTLED.
//
// # Reconciliation after settlement
//
// The unit of work that settles an intent also enqueues its
// reconciliation job (JobReconcile), which runs
// ReconcileSettled: SETTLED -> RECONCILING, then the chain's record of
// the bound signature is read again (getTransaction at the purpose's
// threshold, outside any unit of work), and one unit of work reads the
// settlement through the purpose's Settlement reader, compares all three
// (Compare, a pure function: economics hash, the transaction's success,
// signer, accounts, reference and memo, gross, net received and fee
// withheld against the frozen economics, exactly one settlement movement
// in the intent's scope crediting the priced quantity, balanced), writes
// one Reconciliation record per intent with every check as evidence, and
// moves RECONCILING -> RECONCILED with the outcome recorded on the intent.
//
// Decision, outcomes: MATCH; DRIFT_DETECTED when only amounts differ;
// REQUIRES_REVIEW when an identity or integrity check fails, including a
// second settlement movement (value granted twice is not an amount off the
// model) and a record that is missing or now failed. The spec's FAILED
// outcome does not apply to payment intents: a transaction that failed
// never settles (the intent is FAILED before settlement, nothing credited).
// A purpose that pays legs names, in its Settlement's LegCredits, the
// account its settlement credits with each leg's net, and each is compared
// (settlement.legs[i].amount); such a purpose may leave Credit empty when
// what it sells is no amount on an account (a license), and
// settlement.amount is then not compared.
// Nothing is ever corrected: no ledger write, no reversal (spec, Errors 5).
// A cluster that cannot be read leaves the intent RECONCILING and the job
// retries with back-off; after its bounded attempts the outcome is
// REQUIRES_REVIEW with the reason, never MATCH. The swap and marketplace
// domains reuse the step by registering a purpose with their own
// Settlement reader.
//
// # Chain payment requests
//
// RequestPayment derives one Solana Pay transfer request per intent:
// solana:<treasury wallet>?amount=<gross in user units>&spl-token=<mint>
// &reference=<reference>&label=&message=&memo=<intent id>, spaces as %20.
// The amount is the gross, because a wallet-built transfer has the fee
// withheld and the treasury must receive the net (a generic Solana Pay
// validator that demands received ≥ amount would fail on a fee mint; ours
// checks the net). The sweep finds such a payment by its reference
// (oldest successful signature), binds its signature and verifies it like
// any other, accepting TransferChecked or TransferCheckedWithFee and a
// missing memo (a memo that is present must match). The payer must still
// be the frozen wallet.
//
// # Jobs and events
//
// The package owns its jobs (Jobs, all of the money class) and its outbox
// events. Every unit of work that writes an intent records the event
// "transaction_intent.<state>" (EventType) and enqueues the intent's next
// job: JobRelay and JobWatch after a submit, JobReconcile in the unit that
// settles it. The relay re-sends after an uncertain send RelayRetry later;
// the watch reads the intent again every WatchEvery while it is pending or
// followed to finalized; the reconciliation gets ReconcileAttempts
// attempts with the pool's back-off; the periodic sweep (JobSweep,
// Config.SweepEvery) reconciles up to SweepBatch pending intents, which is
// how a payment made from a chain payment request is found. Wallet
// verification answers through the Wallets port (chain/wallet.Links).
package intent
