-- Version 26 stores swap intents: one per quote, kept whole as JSON (its
-- hash covers every bound field) beside the exact prepared message the
-- wallet signs. A transaction signature binds one operation only.
CREATE TABLE swap_intents (
	id TEXT PRIMARY KEY,
	operation_id TEXT NOT NULL UNIQUE REFERENCES swap_operations (id),
	quote_id TEXT NOT NULL UNIQUE REFERENCES swap_quotes (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	hash TEXT NOT NULL,
	body TEXT NOT NULL,
	message BLOB NOT NULL,
	prepared TEXT NOT NULL,
	expires_at TIMESTAMP NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX swap_operations_signature ON swap_operations (signature) WHERE signature <> '';
