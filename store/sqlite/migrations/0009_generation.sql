-- Music generation operations (issue 13).
--
-- generation_operations holds one row per accepted generate request: the
-- validated request, the pricing policy it was priced with, its routes and
-- billing mode, the credits reserved and settled, and the merged provider
-- snapshot (JSON) whose status is copied into status for reads. version is
-- a compare-and-set counter.
--
-- generation_attempts holds one row per provider create. token_digest is
-- the keyed digest of the unguessable token in the attempt's callback URL
-- (the token itself is never stored); task_id is correlation data, unique
-- per provider once known, and never returned as identity.
--
-- generation_callbacks is the durable inbox of verified callbacks, unique
-- on (provider, task, stage, payload hash), so a redelivered callback is
-- stored and merged once.
--
-- generation_outputs materializes each output slot once; generation_costs
-- reconciles each attempt's provider cost once.
--
-- provider_create_slots is the create scheduler's sliding window per
-- provider account, shared by every host on one database.

CREATE TABLE generation_operations (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	created_by_user_id TEXT NOT NULL,
	created_by_key_id TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,
	request TEXT NOT NULL,
	billing_mode TEXT NOT NULL,
	credits_reserved BIGINT NOT NULL,
	credits_settled BIGINT,
	byok_credits BIGINT NOT NULL,
	pricing TEXT NOT NULL,
	routes TEXT NOT NULL,
	duration_applied BOOLEAN,
	snapshot TEXT NOT NULL,
	version BIGINT NOT NULL,
	attempts INTEGER NOT NULL,
	current_attempt_id TEXT NOT NULL DEFAULT '',
	deadline_at TIMESTAMP NOT NULL,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	ended_at TIMESTAMP
);
CREATE INDEX generation_operations_scope ON generation_operations (tenant_id, workspace_id, environment, id);

CREATE TABLE generation_attempts (
	id TEXT PRIMARY KEY,
	operation_id TEXT NOT NULL REFERENCES generation_operations (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	number INTEGER NOT NULL,
	provider TEXT NOT NULL,
	credential_id TEXT NOT NULL DEFAULT '',
	ownership TEXT NOT NULL,
	token_digest TEXT NOT NULL UNIQUE,
	task_id TEXT NOT NULL DEFAULT '',
	state TEXT NOT NULL,
	error_code TEXT NOT NULL DEFAULT '',
	polls INTEGER NOT NULL DEFAULT 0,
	last_polled_at TIMESTAMP,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	UNIQUE (operation_id, number)
);
CREATE UNIQUE INDEX generation_attempts_task ON generation_attempts (provider, task_id) WHERE task_id <> '';

CREATE TABLE generation_callbacks (
	id TEXT PRIMARY KEY,
	provider TEXT NOT NULL,
	task_id TEXT NOT NULL,
	stage TEXT NOT NULL,
	payload_hash TEXT NOT NULL,
	attempt_id TEXT NOT NULL REFERENCES generation_attempts (id),
	operation_id TEXT NOT NULL,
	body BLOB NOT NULL,
	received_at TIMESTAMP NOT NULL,
	UNIQUE (provider, task_id, stage, payload_hash)
);

CREATE TABLE generation_outputs (
	operation_id TEXT NOT NULL REFERENCES generation_operations (id),
	slot INTEGER NOT NULL,
	asset_id TEXT NOT NULL REFERENCES assets (id),
	provider_track_id TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (operation_id, slot)
);

CREATE TABLE generation_costs (
	id TEXT PRIMARY KEY,
	operation_id TEXT NOT NULL REFERENCES generation_operations (id),
	attempt_id TEXT NOT NULL UNIQUE REFERENCES generation_attempts (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	provider TEXT NOT NULL,
	model TEXT NOT NULL,
	status TEXT NOT NULL,
	source TEXT NOT NULL,
	expected BIGINT,
	actual BIGINT,
	drift_bps BIGINT NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX generation_costs_operation ON generation_costs (operation_id);

CREATE TABLE provider_create_slots (
	id TEXT PRIMARY KEY,
	account TEXT NOT NULL,
	taken_at TIMESTAMP NOT NULL
);
CREATE INDEX provider_create_slots_account ON provider_create_slots (account, taken_at);
