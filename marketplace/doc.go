// Package marketplace owns the marketplace (spec, Rights and marketplace;
// States: Marketplace order; Architecture records: policy version): rights
// policies, license offers, the reading of asset provenance, listings,
// orders paid on chain with a non-custodial split, and the license
// entitlements their settlement issues.
//
// # Rights policies
//
// A rights policy states what a license lets a licensee do: commercial
// use, monetization, redistribution, modification, attribution and
// source resale (Rules: enums, and one bounded line of attribution text).
// Rules are validated strictly: every field is required, values outside
// their sets are INVALID_INPUT naming the field, and contradictions are
// refused (monetization without commercial use; source resale without
// redistribution; attribution text without required attribution).
//
// A workspace may keep several named policies ("standard", "exclusive").
// Each is an immutable versioned document of package policy: id
// "rights.<workspace id>.<name>" in the workspace's tenant and environment,
// integer versions from 1, and the hex SHA-256 of the canonical JSON of
// its Rules (keys sorted, no insignificant white space) as content hash,
// so the same rules hash the same however the request spelled them.
// Publishing rules equal to the current version's publishes nothing and
// answers that version (the route's 200; a new version is 201); any other
// rules, a revert to an older version's included, append the next version.
// Earlier versions never change and stay readable (RightsVersion).
//
// # License offers
//
// An offer licenses one asset of the seller's workspace under one rights
// policy version of that workspace, quoted by id, version and content hash
// (the terms hash): the hash must be the version's, so the seller offers
// exactly the terms it read (TERMS_MISMATCH otherwise). An offer has a
// name and a kind (non-exclusive or exclusive) and no price: a listing
// sets one. It is never edited; a change is a new offer. Its state is
// active or withdrawn (Moves: active -> withdrawn on withdraw, the only
// move), compare-and-set on its version. Creating one writes the outbox
// event license.offered and an audit record in the same unit of work;
// WithdrawLicense (POST /api/v1/licenses/{id}/withdraw) writes
// license.withdrawn.
//
// # Who may
//
// Publishing and offering need the permission marketplace.create_listing
// reaching a resource of the caller's own (OWNER and ADMIN workspace-wide,
// CREATOR its own assets; VIEWER, MEMBER, MODERATOR, FINANCE and DEVELOPER
// not at all) and the workspace entitlement marketplace.sell. The route
// declares both, so the gateway evaluates them in the spec's order: a
// caller without the permission is ACCESS_DENIED whatever the plan; a
// permitted caller on a plan without the entitlement is
// ENTITLEMENT_REQUIRED (SUBSCRIPTION_REQUIRED on a workspace with no paid
// plan, where a subscription would give it). The feature flag
// "marketplace" gates both mutations. API keys hold no scope for
// marketplace.create_listing: these routes take signed-in sessions.
//
// # Provenance
//
// Package asset writes each asset's provenance record with the asset
// (origin, creator, provider and model, operation, parents with their
// content hashes, output hash). Provenance serves it to the asset's
// workspace and to workspaces holding a license entitlement to the asset
// (Store.EntitledToAsset, a read of the entitlements orders issued);
// anyone else, and the other environment, is NOT_FOUND.
//
// # Listings
//
// A listing offers an asset of the seller's workspace under one active
// license offer of that asset at one authoritative price: an integer of
// the mint's atomic units, in a Token-2022 mint whose decimals are read
// from the mint account on the environment's cluster (Mints, the intent
// domain's PaymentMint, so a listing is priced only in a mint an intent
// can be paid in), never taken from the caller. It pays the seller's share
// to a payout wallet the seller verified: the one named (a wallet nobody
// verified is WALLET_REQUIRED, one another user verified WALLET_MISMATCH),
// or, when none is named, the seller's only verified wallet. Publishing
// needs what rights publishing needs (marketplace.create_listing reaching
// the asset, the entitlement marketplace.sell, the flag marketplace).
//
// Decision, editing with one route: a listing is the listing of one asset
// under one offer in one workspace and environment. Posting that asset and
// offer again with other content (title, price, mint, payout wallet)
// supersedes it: the next version of the same listing id; the same content
// answers the current version and writes nothing. Versions are immutable
// rows; orders keep the version they snapshotted. Withdrawing the offer is
// how a listing stops selling: the order's pricing refuses a withdrawn
// offer. Each version writes listing.published and an audit record.
//
// # Orders
//
// An order is created by a transaction intent of purpose marketplace_order
// (Orders.Purpose), whose request names the listing: Price reads the
// listing's current version, its offer (active), the asset's creator and
// the marketplace fee policy in force (fees.marketplace of the
// environment; none is SERVICE_UNAVAILABLE, never a zero fee), and splits
// the price (Split) into the seller's payout and the platform fee to the
// environment's treasury, the fee recipient: two legs of one transaction,
// each verified on chain net of the Token-2022 transfer fee by the intent
// domain, so the platform never holds the seller's money. Nothing of the
// economics comes from the caller. The snapshot (listing version and
// content hash, asset, title, seller and creator, price, mint, decimals,
// license id, name, kind and terms, fee policy version and rate, the
// split) rides in Price.Terms to the Open hook, which records the order in
// the unit of work that records the intent; it is never rewritten.
//
// States follow the spec's order as a table (OrderMoves): CREATED,
// QUOTE_LOCKED, PAYMENT_PENDING at creation; SUBMITTED and CONFIRMING as
// the intent is submitted and seen on chain (the Track hook); PAID,
// LICENSE_ISSUED and FULFILLED in the unit of work that settles the intent
// (the Settle hook): the financial ledger's movements, the entitlement
// and the three moves commit with the intent's move to SETTLED, once: the
// intent's compare-and-set runs Settle once, the movements' references and
// the entitlement's unique order make a replay write nothing. An intent
// that expires, fails or goes to review ends its order EXPIRED, FAILED or
// REQUIRES_REVIEW (a payment that landed but does not match: nothing is
// issued). Each state written is an outbox event marketplace_order.<state>.
// An exclusive offer has at most one live order: a second is CONFLICT
// (reason exclusive_license_taken) until the first expires or fails.
//
// Settlement posts two financial movements. The buyer's, in the buyer's
// scope (reference "purchase:marketplace_order:<intent>"): debit
// system:marketplace-buyer-paid:<mint> with what the wallet sent; credit
// marketplace-seller-proceeds:<wallet>:<mint> and
// marketplace-platform-fee:<recipient>:<mint> with the legs' nets and
// marketplace-transfer-fee-withheld:<mint> with the fees the mint withheld.
// The seller's, in the seller's scope ("sale:..."): debit
// system:marketplace-sales:<mint> with the price, credit the same two
// accounts. Reconciliation reads the buyer's back and checks each leg's
// account (intent.Settlement.LegCredits).
//
// Decision, corrections: a settled order is never mutated, refunded or
// deleted, nor are its movements or its entitlement. A correction (a
// refund agreed with the seller, a chargeback, a license revoked for
// abuse) would be a reversal record of its own, authorized separately
// (super_admin, fresh sign-in, audited): a "reversal:<order id>:<n>"
// financial movement posting the opposite of the order's postings in each
// scope, and a revocation row naming the entitlement, the reason and the
// approving principal, which EntitledToAsset would consult. Any payment
// back to the buyer is a new transaction intent. No route or code writes
// one yet.
//
// # Entitlements
//
// Settlement issues one license entitlement per order to the buyer's
// workspace (asset, license id, terms: rights policy id, version and
// content hash, order). Entitlements lists them beside the workspace's
// feature entitlements with their sources ("plan:studio"). A license is
// the one way into another workspace's asset: LicensedAsset serves its
// content to the holder (the asset content route), and nothing else does.
//
// The package imports no transport, store or SDK; package store
// implements Store.
package marketplace
