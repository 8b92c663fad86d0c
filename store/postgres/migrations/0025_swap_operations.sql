-- Version 25 stores swap operations and their quotes. An operation is the
-- one record of a logical swap that its state machine (swap.Moves)
-- compare-and-sets by version; a quote is immutable and kept whole as
-- JSON (its hash covers every frozen field, so a stored quote that
-- changed is detected, never executed). Both are scoped to their owner:
-- tenant, workspace, environment and user.
CREATE TABLE swap_operations (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	state TEXT NOT NULL,
	quote_id TEXT NOT NULL,
	intent_id TEXT NOT NULL DEFAULT '',
	signature TEXT NOT NULL DEFAULT '',
	last_error TEXT NOT NULL DEFAULT '',
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX swap_operations_owner ON swap_operations (tenant_id, workspace_id, environment, user_id, created_at);
CREATE TABLE swap_quotes (
	id TEXT PRIMARY KEY,
	operation_id TEXT NOT NULL UNIQUE REFERENCES swap_operations (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	hash TEXT NOT NULL,
	body TEXT NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL,
	created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX swap_quotes_expiry ON swap_quotes (expires_at);
