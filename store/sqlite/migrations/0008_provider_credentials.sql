-- Provider connections (issue 13): customer BYOK keys per workspace and
-- environment, and the provider balance snapshots read through them.
--
-- sealed_key is the AES-256-GCM sealed API key (aad = id); the optional
-- sealed_callback_key is sealed separately (aad = id || '/callback'). Only
-- the fingerprint (a prefix of the keyed digest) and last4 are readable.
-- balance_snapshot_id names the newest snapshot written through the
-- credential (set with each snapshot, so "newest" never depends on clocks).
-- Deleted credentials keep their row with deleted_at set and are never read.
-- Snapshot credits are the provider account's own credits, never platform
-- credits.

CREATE TABLE provider_credentials (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	provider TEXT NOT NULL,
	ownership TEXT NOT NULL,
	label TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	last4 TEXT NOT NULL,
	sealed_key BLOB NOT NULL,
	sealed_callback_key BLOB,
	health TEXT NOT NULL CHECK (health IN ('valid', 'invalid')),
	checked_at TIMESTAMP NOT NULL,
	created_by_user_id TEXT NOT NULL,
	created_by_key_id TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	balance_snapshot_id TEXT,
	deleted_at TIMESTAMP
);
CREATE INDEX provider_credentials_scope ON provider_credentials (tenant_id, workspace_id, environment, id);

CREATE TABLE provider_balance_snapshots (
	id TEXT PRIMARY KEY,
	credential_id TEXT NOT NULL REFERENCES provider_credentials (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	provider TEXT NOT NULL,
	credits BIGINT NOT NULL,
	extra_credits BIGINT NOT NULL,
	observed_at TIMESTAMP NOT NULL
);
CREATE INDEX provider_balance_snapshots_credential ON provider_balance_snapshots (credential_id, id);
