// Package rewards owns challenges and their rewards (spec, Challenges and
// rewards; States: Challenge, reward funding, Reward claim; the
// Invariants on value-moving flows): a project's challenges and their
// lifecycle, reward pools funded only when the chain proves it, the
// allocation of rewards to creators, and claims paid from the treasury
// by a server-side signer and verified on chain.
//
// Challenges live here, beside the rewards, rather than in a package of
// their own: a challenge's pool and the rewards allocated from it are one
// aggregate of money (allocation locks the challenge, payouts move its
// pool's funding), and splitting them would put one transaction's rules
// in two packages.
//
// # Challenges
//
// A challenge belongs to a project of the creating workspace: a title, rules,
// a submission window (opensAt before closesAt) and a reward pool (an
// atomic amount of a Token-2022 mint whose decimals are read from the
// mint account on the environment's cluster, as listings read theirs).
// Creating one needs reward.allocate reaching the project (owners,
// admins, project leads). Submissions to a challenge are the project's
// submissions (package project).
//
// The lifecycle is one table (Moves): DRAFT, SCHEDULED, OPEN,
// SUBMISSIONS_CLOSED, REVIEW, VOTING, WINNERS_SELECTED,
// REWARDS_ALLOCATED, COMPLETED, one step at a time. Each move needs the
// permission MovePermission names, reaching the project: project.publish
// to announce and open, project.update to run the rounds, reward.allocate
// to select winners, mark rewards allocated (at least one allocated) and
// complete. A move the table lacks is INVALID_STATE_TRANSITION whoever
// asks. The route's description is generated from the same table.
//
// # Funding
//
// A pool's funding is separate from the lifecycle: ANNOUNCED, RESERVED,
// FUNDED, CLAIMABLE, DISTRIBUTED (FundingMoves). A pool is created
// ANNOUNCED and is never shown FUNDED without evidence: funding
// reconciliation (ReconcileFunding; the two funding routes, protected by
// reward.reconcile or the internal scope) reads the environment's reward
// treasury's Token-2022 account of the pool's mint at finalized
// commitment, and records the slot, the balance and what was required.
//
// Decision, coverage: one treasury backs every pool of its environment in
// a mint, across tenants. Pools are covered in the order they were first
// funded (then by id; a pool never funded comes last): a pool is covered
// when the finalized balance covers what it and every pool ahead of it
// still owe. What a pool owes is each unpaid reward (including one whose
// payout is in flight) and the unallocated rest of the pool, each grossed
// up for the mint's transfer fee at the current epoch, since the treasury
// pays every reward as its own transfer and the recipient must receive
// the full amount. A covered pool moves to FUNDED and its funding
// movement is posted in the rewards ledger once (system:reward-treasury
// -> reward-pool:<challenge>). A balance covering the pool only at
// confirmed moves an ANNOUNCED pool to RESERVED (funds on the way). An
// unreadable balance is BALANCE_UNAVAILABLE and nothing changes; an
// account that does not exist holds zero.
//
// Decision, a balance that drops after FUNDED: the next reconciliation
// finds the pool short and moves it back to RESERVED (the only backward
// move of the table, on event shortfall); its CLAIMABLE rewards go back
// to ALLOCATED and cannot be claimed, so no payout is signed against
// funds the treasury does not hold. A claim already in flight goes on
// (its transaction is signed); if the chain refuses it, the reward
// returns to ALLOCATED rather than CLAIMABLE. Distributed rewards are
// untouched. When the treasury is topped up, the next reconciliation
// funds the pool again (no second funding movement: its reference is the
// pool's) and its rewards are CLAIMABLE again, their allocation unchanged.
//
// # Allocation
//
// Allocate (reward.allocate reaching the project; the route requires an
// Idempotency-Key) allocates rewards from a challenge in WINNERS_SELECTED
// whose pool is FUNDED or CLAIMABLE: each item names a wallet some
// creator verified (the creator behind it, as package creator resolves a
// wallet, is the recipient), an atomic amount, and a reference (its
// identity in the challenge; the wallet by default). The allocation key
// (challenge and reference) is unique: repeating an item returns its
// reward, and the same reference with another wallet or amount is
// CONFLICT. The total never exceeds the pool: the domain checks it, and
// the ledger refuses it too, since each allocation moves its amount from
// reward-pool:<challenge> (which cannot go negative) to
// reward-payable:<reward>. A reward is recorded ALLOCATED and moved to
// CLAIMABLE in the same unit of work (its pool's funding is verified);
// the pool moves FUNDED -> CLAIMABLE with its first reward. A leaderboard
// position, engagement, a wallet connection or token ownership creates
// nothing: only an allocation does.
//
// Rewards are listed to their recipient (Mine, every tenant), to members
// whose project.read reaches the project (OfProject), and on a creator's
// public profile by wallet (OfCreator, public fields only). Each shows its
// creator state (State.Creator): ESTIMATED and ELIGIBLE are never stored
// (no record exists before allocation), ALLOCATED, CLAIMABLE, SUBMITTED,
// CONFIRMED, SETTLED (DISTRIBUTED) and RECONCILED.
//
// # Claims
//
// Claim: the signed-in recipient (API keys are refused), with the
// reward's wallet verified on their account (WALLET_REQUIRED when they
// verified none, WALLET_MISMATCH when not this one), on a CLAIMABLE
// reward. The claim freezes a transaction intent of purpose reward_claim
// (chain/intent: TreasuryPays, threshold finalized): the reward treasury
// pays the reward's amount to the wallet's Token-2022 account, a memo
// with the intent id and the intent's reference, TransferCheckedWithFee
// when the mint has a fee. The TreasurySigner signs the prepared message;
// one unit of work moves the reward CLAIMABLE -> SUBMITTED and records the
// intent submitted with the signed bytes, which the intent's relay job
// sends (never a rebuilt transaction). Two concurrent claims converge: the
// second finds the reward SUBMITTED under the reward's lock and answers
// the first's intent; nothing is recorded for it.
//
// Decision, transfer fees: the recipient receives the full reward. The
// treasury grosses up each payout at the current epoch's fee
// (intent.GrossUp: gross − fee == amount), so the intent's net is the
// reward and verification checks the recipient's account received exactly
// it. Coverage counts the gross. The rewards ledger records the fee the
// mint withheld (system:reward-transfer-fee), drawn from the treasury's
// commitment.
//
// The claim marks nothing claimed. The intent domain watches the
// transaction; at finalized it verifies the effect from the chain (payer
// and signer the treasury, the recipient's account received exactly the
// amount, the mint, the reference, the memo) and runs the purpose's
// Settle once, in the unit of work that moves the intent to SETTLED: the
// reward SUBMITTED -> CONFIRMED -> DISTRIBUTED (claimed) with two
// movements of the rewards ledger, once (their references are the
// intent's): in the claimant's scope "claim:reward_claim:<intent>"
// (system:reward-claims-paid debited with the gross; the recipient's
// reward-received account credited with the amount; the withheld fee),
// which reconciliation reads back and compares; in the reward's scope
// "distribution:reward_claim:<intent>" (reward-payable:<reward> to
// system:reward-distributed, and the fee from the treasury's commitment).
// The pool moves to DISTRIBUTED when its allocation is over
// (REWARDS_ALLOCATED or COMPLETED) and every reward is paid. The intent's
// reconciliation then moves the reward to RECONCILED (outcome MATCH) or
// REQUIRES_REVIEW.
//
// A payout whose intent FAILS (the chain refused it) or EXPIRES (dropped)
// returns the reward to CLAIMABLE through the Track hook, in the intent's
// unit of work, with the same allocation: a new claim makes a new intent
// and nothing is allocated twice.
//
// # The treasury key
//
// TreasurySigner is a port: LocalSigner, for test mode and the example
// host, opens an ed25519 key sealed at rest (SealKey: AES-256-GCM under
// the platform's secret, bound to its use) and keeps it in memory; it
// prints its address alone. A production deployment implements the port
// over a KMS or HSM, so the key never leaves it. The key is never logged,
// returned, or stored in plaintext: the database holds the signed
// transaction only.
//
// Decision, the payouts' state (Payouts, which GET /api/v1/features
// reports as reward_payouts): an environment's payouts are configured
// when it has a treasury (a cluster and a signer), and verified only once
// a funding reconciliation has read the current signer's token account on
// the cluster: a configured signer is no observation, and the route never
// calls the cluster. The newest funding evidence of the environment is
// that reading (a reading of another signer's account, before a key
// rotation, proves nothing). Enabled is both: no reward is claimable
// before a reconciliation funded its pool.
//
// # Events
//
// Each write records an outbox event in the unit of work: challenge.created,
// challenge.status_changed, challenge.funding_changed (with the evidence),
// and reward.<state> for every reward state written (allocated, claimable,
// submitted, confirmed, distributed, reconciled, requires_review).
//
// The package imports no transport, store or SDK. Its store ports are
// small, each declared beside the code that calls it (the challenge
// lifecycle, funding reconciliation, allocation, the reward reads, claims
// and the payout's intent hooks); package store implements every one.
package rewards
