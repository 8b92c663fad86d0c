-- Version 28 stores what follows a swap's submission (the swap package's
-- settlement notes): one verification, at most one settlement and at
-- most one reconciliation per operation, each written once and never
-- updated. Racing callers converge on the unique operation_id (and, for
-- settlements, the unique signature): at most one settlement per logical
-- operation and per transaction. body keeps the whole verification or
-- reconciliation as JSON (every check and finding as evidence); the other
-- columns copy what the store keys and constrains on. Settlement amounts
-- are canonical atomic integers as TEXT, summed in Go; the fee received
-- is also the financial ledger movement movement_id refers to ('' when
-- the fee received was zero). Every row is scoped to its owner: tenant,
-- workspace, environment and user.
CREATE TABLE swap_verifications (
	id TEXT PRIMARY KEY,
	operation_id TEXT NOT NULL UNIQUE REFERENCES swap_operations (id),
	intent_id TEXT NOT NULL REFERENCES swap_intents (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	signature TEXT NOT NULL,
	passed BOOLEAN NOT NULL,
	body TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE TABLE swap_settlements (
	id TEXT PRIMARY KEY,
	operation_id TEXT NOT NULL UNIQUE REFERENCES swap_operations (id),
	intent_id TEXT NOT NULL REFERENCES swap_intents (id),
	quote_id TEXT NOT NULL REFERENCES swap_quotes (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	signature TEXT NOT NULL UNIQUE CHECK (signature <> ''),
	fee_mint TEXT NOT NULL,
	fee_decimals INTEGER NOT NULL,
	fee_recipient TEXT NOT NULL,
	fee_account TEXT NOT NULL,
	service_fee_atomic TEXT NOT NULL CHECK (service_fee_atomic NOT LIKE '-%'),
	fee_received_atomic TEXT NOT NULL CHECK (fee_received_atomic NOT LIKE '-%'),
	actual_input_atomic TEXT NOT NULL CHECK (actual_input_atomic NOT LIKE '-%'),
	actual_output_atomic TEXT NOT NULL CHECK (actual_output_atomic NOT LIKE '-%'),
	slot BIGINT NOT NULL,
	block_time TIMESTAMP,
	observed_at TIMESTAMP NOT NULL,
	movement_id TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMP NOT NULL
);
CREATE TABLE swap_reconciliations (
	id TEXT PRIMARY KEY,
	operation_id TEXT NOT NULL UNIQUE REFERENCES swap_operations (id),
	intent_id TEXT NOT NULL REFERENCES swap_intents (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	signature TEXT NOT NULL,
	outcome TEXT NOT NULL CHECK (outcome IN ('MATCH', 'DRIFT_DETECTED', 'REQUIRES_REVIEW', 'FAILED')),
	body TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);
