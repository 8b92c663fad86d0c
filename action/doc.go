// Package action is the catalog of the value-moving and community actions
// the platform offers, their preflight, and the hand-off of an action to
// the domain that owns its flow (spec, Architecture and operations:
// GET /api/v1/actions/definitions, POST /api/v1/actions/preflight, POST
// /api/v1/actions; Invariant 7: value-moving flows follow one path).
//
// # Catalog
//
// Definitions lists, for the caller's environment: credit_purchase (buy a
// pack of credits: a transaction intent of purpose credit_purchase),
// marketplace_order (buy the license a listing sells: purpose
// marketplace_order), reward_claim (claim a reward allocated to the
// caller: the rewards domain's claim) and swap (the swap routes). Each
// names the permission it needs (that of the route or domain call it hands
// off to: billing.manage for purchases, reward.claim for claims,
// wallet.sign for swaps), the feature it stands on, its subject type, its
// destination wallet, and the networks and currencies the configuration
// allows: the environment's cluster (its CAIP-2 id, read from the
// cluster), the credits.packs policy's mints, the swap registry's
// executable mints. A listing and a reward fix their own currency, so
// those actions list none. Nothing is hard-coded and nothing comes from a
// wallet or a caller.
//
// # Preflight
//
// Preflight runs seven checks in this order and answers every one,
// changing nothing:
//
//  1. feature: the environment takes chain payments (a cluster and a
//     treasury; SERVICE_UNAVAILABLE, reason not_configured), has a reward
//     treasury for claims and a swap registry for swaps (the same), a
//     claim's treasury was read by a funding reconciliation (reward
//     payouts as GET /api/v1/features reports them; SERVICE_UNAVAILABLE,
//     reason not_checked), and
//     the workspace's flag is on for listings (marketplace) and swaps
//     (swap) (FEATURE_DISABLED, reason disabled_by_flag);
//  2. subject: the pack is offered by the credits.packs policy, the
//     listing exists in the environment, the reward is the caller's and
//     claimable (NOT_FOUND, CONFLICT reason not_claimable); a swap has no
//     subject here (CAPABILITY_UNSUPPORTED, reason quote_required);
//  3. actor: a signed-in user (API keys never move value) holding the
//     action's permission, and not the listing's seller (ACCESS_DENIED;
//     INVALID_INPUT reason own_listing);
//  4. destination: the wallet is a verified wallet of the caller, and for
//     a claim the reward's own (WALLET_REQUIRED, WALLET_MISMATCH);
//  5. amount: what the subject moves (the pack's price in the requested
//     currency, the listing's price, the reward); a stated amountAtomic
//     must equal it (INVALID_AMOUNT);
//  6. network: the stated CAIP-2 id is the environment's, for a swap
//     the one its registry observed (NETWORK_MISMATCH);
//  7. currency: the stated mint is one the subject takes
//     (TOKEN_NOT_TRUSTED).
//
// A check whose inputs are unknown (the amount of a subject that was not
// found, the network of an environment without a cluster) is skipped,
// never passed. A preflight that passes promises nothing: the owning flow
// checks everything again when the action runs.
//
// # Running an action
//
// Run (POST /api/v1/actions) takes an Idempotency-Key, runs preflight and
// answers its first failed check as the error, then hands off: a purchase
// to the intent service's Prepare and Record, the very calls of POST
// /api/v1/transactions/intent, so the intent is the one that route would
// freeze; a claim to the rewards domain's Claim. Swap is refused
// (CAPABILITY_UNSUPPORTED, reason quote_required, details.flow the quote
// route): a swap starts from a quote, which has its own idempotent route.
//
// The package imports no transport, store or SDK.
package action
