-- The marketplace's sales: listings, orders and the license entitlements
-- their settlement issues.
--
-- marketplace_listings holds one row per listing version, never updated.
-- A listing (id) is one workspace's listing of one asset under one license
-- offer in one environment; publishing it again with other content
-- appends the next version under the same id, so two first versions of the
-- same asset and offer cannot both be stored (the unique index). The
-- price is an atomic integer in the mint's units, its decimals read from
-- the mint account.
CREATE TABLE marketplace_listings (
	id TEXT NOT NULL,
	version INTEGER NOT NULL CHECK (version >= 1),
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	asset_id TEXT NOT NULL REFERENCES assets (id),
	offer_id TEXT NOT NULL REFERENCES license_offers (id),
	title TEXT NOT NULL,
	price_atomic TEXT NOT NULL CHECK (price_atomic NOT LIKE '-%' AND price_atomic <> '0'),
	mint TEXT NOT NULL,
	decimals INTEGER NOT NULL,
	payout_wallet TEXT NOT NULL,
	content_hash TEXT NOT NULL,
	created_by_user_id TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (id, version)
);
CREATE UNIQUE INDEX marketplace_listings_offer ON marketplace_listings (tenant_id, workspace_id, environment, asset_id, offer_id, version);

-- marketplace_orders: one row per order, one order per transaction intent.
-- snapshot is the order's frozen snapshot (JSON: listing version, asset,
-- title, creator, price, mint, decimals, license terms, fee policy and the
-- split), written once by the insert and never again; state, version,
-- entitlement_id and updated_at move by compare-and-set on version. The
-- buyer's scope and the seller's are copied out for the reads. An
-- exclusive offer has at most one live order: the partial unique index
-- covers every order of an exclusive offer that has not expired or
-- failed.
CREATE TABLE marketplace_orders (
	id TEXT PRIMARY KEY,
	intent_id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	buyer_user_id TEXT NOT NULL,
	buyer_wallet TEXT NOT NULL,
	seller_tenant_id TEXT NOT NULL,
	seller_workspace_id TEXT NOT NULL,
	listing_id TEXT NOT NULL,
	listing_version INTEGER NOT NULL,
	offer_id TEXT NOT NULL,
	asset_id TEXT NOT NULL,
	exclusive BOOLEAN NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('CREATED', 'QUOTE_LOCKED', 'PAYMENT_PENDING', 'SUBMITTED', 'CONFIRMING', 'PAID',
		'LICENSE_ISSUED', 'FULFILLED', 'EXPIRED', 'FAILED', 'REQUIRES_REVIEW')),
	version BIGINT NOT NULL,
	snapshot TEXT NOT NULL,
	entitlement_id TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL
);
CREATE INDEX marketplace_orders_buyer ON marketplace_orders (tenant_id, workspace_id, environment, id);
CREATE INDEX marketplace_orders_seller ON marketplace_orders (seller_tenant_id, seller_workspace_id, environment, id);
CREATE UNIQUE INDEX marketplace_orders_exclusive ON marketplace_orders (offer_id)
	WHERE exclusive AND state NOT IN ('EXPIRED', 'FAILED');

-- marketplace_entitlements: the license entitlements settled orders
-- issued, one per order, never changed: the holder (the buyer's
-- workspace) may use the asset under the terms (rights policy id, version
-- and content hash) and download its content.
CREATE TABLE marketplace_entitlements (
	id TEXT PRIMARY KEY,
	order_id TEXT NOT NULL UNIQUE REFERENCES marketplace_orders (id),
	intent_id TEXT NOT NULL,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	asset_id TEXT NOT NULL,
	seller_tenant_id TEXT NOT NULL,
	seller_workspace_id TEXT NOT NULL,
	license_id TEXT NOT NULL,
	policy_id TEXT NOT NULL,
	policy_version INTEGER NOT NULL,
	terms_hash TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX marketplace_entitlements_holder ON marketplace_entitlements (tenant_id, workspace_id, environment, asset_id);
CREATE INDEX marketplace_entitlements_list ON marketplace_entitlements (tenant_id, workspace_id, environment, id);
