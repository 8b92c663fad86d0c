-- Immutable policy versions (package policy). A policy is scoped by
-- environment and tenant ('' = platform-wide); versions of one (scope,
-- policy) number from 1 and are never updated. content is the canonical JSON
-- as TEXT (JSONB would reorder it and change the hashed bytes).
CREATE TABLE policy_versions (
	environment TEXT NOT NULL,
	tenant_id TEXT NOT NULL DEFAULT '',
	policy_id TEXT NOT NULL,
	version INTEGER NOT NULL CHECK (version >= 1),
	content_hash TEXT NOT NULL,
	content TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	created_by TEXT NOT NULL,
	PRIMARY KEY (environment, tenant_id, policy_id, version)
);
CREATE INDEX policy_versions_hash ON policy_versions (environment, tenant_id, policy_id, content_hash);

-- The plan catalog (package plan), seeded from configuration.
CREATE TABLE plans (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	monthly_credits NUMERIC(39,0) NOT NULL CHECK (monthly_credits >= 0),
	position INTEGER NOT NULL,
	active BOOLEAN NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE plan_entitlements (
	plan_id TEXT NOT NULL REFERENCES plans (id),
	entitlement TEXT NOT NULL,
	PRIMARY KEY (plan_id, entitlement)
);

-- Immutable price versions: amount in minor units of currency (ISO 4217).
-- Only active changes, when a newer version replaces a version.
CREATE TABLE plan_price_versions (
	id TEXT PRIMARY KEY,
	plan_id TEXT NOT NULL REFERENCES plans (id),
	currency TEXT NOT NULL,
	billing_interval TEXT NOT NULL,
	version INTEGER NOT NULL CHECK (version >= 1),
	amount BIGINT NOT NULL CHECK (amount >= 0),
	active BOOLEAN NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	UNIQUE (plan_id, currency, billing_interval, version)
);

-- Each workspace's plan, shared by its test and live environments.
CREATE TABLE workspace_plans (
	workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
	tenant_id TEXT NOT NULL,
	plan_id TEXT NOT NULL REFERENCES plans (id),
	since TIMESTAMPTZ NOT NULL
);
