// Package marketplace owns the rights side of the marketplace: rights
// policies, license offers and the reading of asset provenance (spec,
// Rights and marketplace; Architecture records: policy version). Listings,
// orders and entitlements build on it.
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
// WithdrawLicense (no route yet) writes license.withdrawn.
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
// workspace and to workspaces entitled to the asset; anyone else, and the
// other environment, is NOT_FOUND. Entitlements come with orders: until
// then Store.EntitledToAsset answers false for every asset.
//
// The package imports no transport, store or SDK; package store
// implements Store.
package marketplace
