// Package x402 is the payment-required protocol's domain (x402 version 2,
// scheme exact on Solana; web3.md §1, the spec's Web3 adapters routes): the
// platform's resources bought per use with a token payment, their payment
// requirements, the verification of a payment against every facilitator
// rule for Solana, its settlement through a facilitator, and the one use
// a settled payment grants.
//
// # What is sold
//
// Decision: a resource sells one use of a kind, and the one kind is one
// analysis by the sound engine (KindSoundAnalysis; resource "sound-analysis"
// on the example host). A settled payment records a Grant of exactly one
// use for the workspace and environment that paid; POST /api/v1/sound/analyze
// naming the grant (x402GrantId) spends it in the unit of work that accepts
// the analysis, and a spent grant is refused (CONFLICT, reason
// grant_consumed). Analyses within a plan stay free (package sound,
// Credits): the protocol is a way to pay per call, for a caller that pays
// as it goes, and it never replaces a subscription's entitlements. A grant
// is not an entitlement: it lives in its own records, the access evaluator
// never reads it, and it opens nothing but the one analysis it is spent on.
//
// # Layout
//
// wire.go holds the protocol's objects and header encoding (standard
// base64 of JSON), reasons.go the refusal reasons, svm.go and accounts.go
// the facilitator's rules as pure functions (CheckTransaction over the
// transaction alone, CheckAccounts over what the cluster says of its
// accounts), resource.go the offers and the memos that bind a payment to
// its buyer, settlement.go the records and the settlement state table,
// ports.go the ports, local.go the facilitator the platform runs itself,
// service.go, settle.go, grant.go and jobs.go the service. Package
// web3/x402/facilitator adapts a remote facilitator (its /verify, /settle
// and /supported) to the Facilitator port, and web3/x402/x402test is a
// loopback facilitator, with faults, for tests and the example host.
//
// The package imports no SDK, store or transport: it reads and builds the
// wire transaction with chain/message and relays it with chain/relay.
//
// # Requirements
//
// Each environment configures a facilitator, its cluster, payTo (the
// treasury's wallet by default), the asset (a mint) with its decimals and
// the resources. A check (JobCheck, at start and every CheckEvery) reads
// the cluster's network, the facilitator's fee payer for it, the mint and
// its decimals, payTo's token account and the fee payer's funding; nothing
// is offered until a check of the current configuration passed: 503
// SERVICE_UNAVAILABLE while not configured, PROVIDER_UNAVAILABLE while not
// verified (the chain capability views say which, and why).
//
// Requirements are scheme exact, the cluster's CAIP-2 network, the
// resource's exact atomic amount, the asset, payTo, maxTimeoutSeconds and
// extra.feePayer. A signed-in caller's requirements also name extra.memo:
// "x402:<resource>:<nonce>:<tag>", the tag an HMAC of the caller's tenant,
// workspace and environment, the resource and a fresh nonce. The memo is
// how a payment names what it buys and for whom, without any state: a
// payload replayed under another workspace carries a memo whose tag does
// not verify there, and is refused before anything is claimed, and the
// nonce keeps two purchases from ever being one transaction.
//
// # Verification (the facilitator's rules for Solana)
//
// A payment must meet an offer (version 2, scheme exact, the network, a
// memo issued to the caller, the accepted amount, asset, payTo and fee
// payer equal to the offer's), then every rule of CheckTransaction and
// CheckAccounts: no lookup tables; the fee payer first, its signature slot
// empty; three to six instructions, SetComputeUnitLimit,
// SetComputeUnitPrice at most 5 lamports per unit, a TransferChecked of
// the SPL Token or Token-2022 program, then only Lighthouse or Memo; the
// fee payer in no instruction's accounts (so neither authority nor
// source); the mint, payTo's associated token account as destination, the
// exact amount; exactly one memo equal to extra.memo; only the fee payer
// and the authority sign, and the authority's signature verifies; the
// mint owned by the transfer's program with the stated decimals, the
// source the authority's account holding the amount, the destination
// existing, the blockhash still valid. The first rule broken is the
// refusal's reason.
//
// # Settlement
//
// A settle request needs an Idempotency-Key. Its outcome is recorded on a
// Settlement keyed by the transaction (the SHA-256 of its message, unique
// across every tenant) and by the request (the scope's key and the hash of
// the transaction sent):
//
//   - the same key and transaction again answers the recorded outcome
//     (the gateway replays a stored answer with its PAYMENT-RESPONSE; a
//     settlement not yet final is resumed);
//   - the same key with another transaction is IDEMPOTENCY_CONFLICT;
//   - a transaction another request claimed is refused with
//     duplicate_settlement and changes nothing;
//   - an invalid payment is refused with its reason and claims nothing.
//
// A valid payment is claimed in SUBMITTING (its own unit of work, with its
// event and a watch job), then the facilitator settles it: the local one
// signs as fee payer, inspects the signature, sends the identical bytes
// and follows them to confirmed (chain/relay's rules). Its answer counts
// only once the platform's own cluster agrees: a success needs a
// signature that is the fee payer's signature of the payment's message and
// a status confirmed without error. The outcome moves the settlement once
// (a compare-and-set; the request or the watch, whoever is first) along
// Moves: SETTLED with its Grant, FAILED (refused, failed on chain, or
// dropped once its blockhash lapsed), or REQUIRES_REVIEW (a remote
// facilitator that never named the transaction it sent before the
// blockhash lapsed, or named one that is not the payment's). A request
// whose outcome is not known within SettleTimeout answers
// SUBMISSION_UNCERTAIN and the watch (JobWatch) finishes it; a retry with
// the same key then answers what was recorded. The settle route answers
// 200 with PAYMENT-RESPONSE on success and 402 with PAYMENT-RESPONSE
// (success false) on failure.
//
// Decision, units of work: the claim, the outcome and the request's answer
// are separate units of work, because the chain is called between them
// and the watch may record the outcome first. The request's idempotency
// record is written last, with the answer read back from the settlement,
// so whatever order they run in, a key answers what the settlement says.
//
// Decision, a remote facilitator asked again: its own duplicate guard
// refuses a payment it already sent, so a refusal other than a chain
// failure on a second call proves nothing; such a settlement waits for its
// blockhash to lapse and then needs review, never failed and never
// settled on the facilitator's word alone.
package x402
