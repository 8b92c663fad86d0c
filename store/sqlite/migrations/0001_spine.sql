-- The spine: tenants, workspaces, users, access, API keys, idempotency,
-- receipts, usage, outbox, inbox and jobs. Times are passed in from the
-- injected clock; no column defaults to now().

CREATE TABLE tenants (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);

CREATE TABLE workspaces (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	name TEXT NOT NULL,
	state TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX workspaces_tenant ON workspaces (tenant_id);

CREATE TABLE users (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	email TEXT NOT NULL UNIQUE,
	display_name TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);

-- A membership can hold several workspace roles, one row each.
CREATE TABLE memberships (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	user_id TEXT NOT NULL REFERENCES users (id),
	status TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);
CREATE TABLE membership_roles (
	workspace_id TEXT NOT NULL,
	user_id TEXT NOT NULL,
	role TEXT NOT NULL,
	PRIMARY KEY (workspace_id, user_id, role),
	FOREIGN KEY (workspace_id, user_id) REFERENCES memberships (workspace_id, user_id)
);

-- Role-template assignments, workspace-scoped (project_id '') or project-scoped.
CREATE TABLE role_assignments (
	id TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL,
	user_id TEXT NOT NULL,
	template TEXT NOT NULL,
	project_id TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMP NOT NULL,
	UNIQUE (workspace_id, user_id, template, project_id),
	FOREIGN KEY (workspace_id, user_id) REFERENCES memberships (workspace_id, user_id)
);

-- Explicit denies beat every allow.
CREATE TABLE permission_denies (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	user_id TEXT NOT NULL,
	permission TEXT NOT NULL,
	PRIMARY KEY (workspace_id, user_id, permission)
);

-- Platform roles (super_admin) are granted only by the host's operator.
CREATE TABLE platform_roles (
	user_id TEXT NOT NULL REFERENCES users (id),
	role TEXT NOT NULL,
	granted_at TIMESTAMP NOT NULL,
	PRIMARY KEY (user_id, role)
);

CREATE TABLE entitlements (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	entitlement TEXT NOT NULL,
	source TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (workspace_id, entitlement)
);

-- Feature flags: workspace_id '' is the platform default, a row for a
-- workspace overrides it.
CREATE TABLE feature_flags (
	flag TEXT NOT NULL,
	workspace_id TEXT NOT NULL DEFAULT '',
	enabled BOOLEAN NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	PRIMARY KEY (flag, workspace_id)
);

-- Verified wallets per user and tenant; valid in both environments.
CREATE TABLE wallet_links (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	user_id TEXT NOT NULL REFERENCES users (id),
	network TEXT NOT NULL,
	address TEXT NOT NULL,
	verified_at TIMESTAMP NOT NULL,
	UNIQUE (tenant_id, network, address)
);
CREATE INDEX wallet_links_user ON wallet_links (tenant_id, user_id);

-- Authority versions: bumped in the same transaction as any change of role,
-- membership, entitlement, subscription or flag, so every host sees the
-- change on the next request. scope is a workspace id or 'global'.
CREATE TABLE authz_versions (
	scope TEXT PRIMARY KEY,
	version INTEGER NOT NULL
);

CREATE TABLE api_keys (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL,
	name TEXT NOT NULL,
	scopes TEXT NOT NULL,
	metadata TEXT NOT NULL,
	created_by_user_id TEXT NOT NULL,
	created_by_key_id TEXT NOT NULL DEFAULT '',
	internal BOOLEAN NOT NULL DEFAULT 0,
	status TEXT NOT NULL,
	rate_per_minute INTEGER NOT NULL,
	max_concurrent INTEGER NOT NULL,
	monthly_budget INTEGER NOT NULL,
	version INTEGER NOT NULL,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	last_used_at TIMESTAMP,
	revoked_at TIMESTAMP,
	deleted_at TIMESTAMP
);
CREATE INDEX api_keys_scope ON api_keys (tenant_id, workspace_id, environment, id);

-- A key's secrets: one row per issued plaintext, stored as an HMAC digest.
-- Rotation adds a secret and sets the previous one's expires_at.
CREATE TABLE api_key_secrets (
	digest TEXT PRIMARY KEY,
	key_id TEXT NOT NULL REFERENCES api_keys (id),
	prefix TEXT NOT NULL,
	last4 TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	expires_at TIMESTAMP
);
CREATE INDEX api_key_secrets_key ON api_key_secrets (key_id);

-- Monthly request counts per key, flushed in batches.
CREATE TABLE api_key_usage (
	key_id TEXT NOT NULL REFERENCES api_keys (id),
	period TEXT NOT NULL,
	requests INTEGER NOT NULL,
	PRIMARY KEY (key_id, period)
);

CREATE TABLE idempotency_records (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	endpoint TEXT NOT NULL,
	idem_key TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	state TEXT NOT NULL,
	response_status INTEGER NOT NULL DEFAULT 0,
	response_body BLOB,
	sealed BOOLEAN NOT NULL DEFAULT 0,
	created_at TIMESTAMP NOT NULL,
	expires_at TIMESTAMP NOT NULL,
	UNIQUE (tenant_id, workspace_id, environment, endpoint, idem_key)
);
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);

-- Durable receipts of mutations, written by the gateway.
CREATE TABLE request_receipts (
	request_id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	principal TEXT NOT NULL,
	method TEXT NOT NULL,
	operation_id TEXT NOT NULL,
	status INTEGER NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX request_receipts_scope ON request_receipts (tenant_id, workspace_id, environment, created_at);

CREATE TABLE outbox_events (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	type TEXT NOT NULL,
	schema_version INTEGER NOT NULL,
	aggregate_id TEXT NOT NULL,
	aggregate_version INTEGER NOT NULL,
	occurred_at TIMESTAMP NOT NULL,
	payload TEXT NOT NULL,
	published_at TIMESTAMP
);
CREATE INDEX outbox_events_unpublished ON outbox_events (published_at, id);

CREATE TABLE inbox_events (
	consumer TEXT NOT NULL,
	event_id TEXT NOT NULL,
	received_at TIMESTAMP NOT NULL,
	PRIMARY KEY (consumer, event_id)
);

CREATE TABLE jobs (
	id TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	payload TEXT NOT NULL,
	state TEXT NOT NULL,
	unique_key TEXT,
	run_at TIMESTAMP NOT NULL,
	attempts INTEGER NOT NULL,
	max_attempts INTEGER NOT NULL,
	locked_by TEXT,
	locked_until TIMESTAMP,
	last_error TEXT,
	created_at TIMESTAMP NOT NULL,
	finished_at TIMESTAMP
);
CREATE INDEX jobs_available ON jobs (state, run_at);
CREATE UNIQUE INDEX jobs_unique_key ON jobs (unique_key) WHERE unique_key IS NOT NULL;
