-- Version 36 serves the payment-required protocol (web3/x402).
--
-- An idempotency record keeps the response headers its route documents
-- that the first answer carried (a PAYMENT-RESPONSE, say), as a JSON
-- object of name to value, so a replay answers them again; NULL when
-- none.
ALTER TABLE idempotency_records ADD COLUMN response_headers TEXT;

-- x402_settlements holds one row per payment the platform claimed: the
-- transaction by the SHA-256 of its message (unique across every tenant:
-- one transaction settles once, whoever sends it) and the request by its
-- scope's Idempotency-Key (unique per tenant, workspace and environment)
-- with the hash of the transaction it carried. payload and requirements
-- keep the payment and its requirements as JSON so the watch can ask the
-- facilitator again; version is a compare-and-set counter, and state
-- leaves SUBMITTING once. The amount is an atomic integer, NUMERIC(39,0).
CREATE TABLE x402_settlements (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	principal TEXT NOT NULL,
	idem_key TEXT NOT NULL,
	payload_hash TEXT NOT NULL,
	message_hash TEXT NOT NULL UNIQUE,
	resource_id TEXT NOT NULL,
	network TEXT NOT NULL,
	asset TEXT NOT NULL,
	pay_to TEXT NOT NULL,
	amount_atomic NUMERIC(39,0) NOT NULL CHECK (amount_atomic > 0),
	payer TEXT NOT NULL,
	payload TEXT NOT NULL,
	requirements TEXT NOT NULL,
	last_valid_block_height BIGINT NOT NULL,
	attempts INTEGER NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('SUBMITTING', 'SETTLED', 'FAILED', 'REQUIRES_REVIEW')),
	signature TEXT NOT NULL DEFAULT '',
	slot BIGINT NOT NULL DEFAULT 0,
	error_reason TEXT NOT NULL DEFAULT '',
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	UNIQUE (tenant_id, workspace_id, environment, idem_key)
);

-- x402_grants holds what a settled payment buys: one use of its resource
-- for the workspace and environment that paid, one grant per settlement.
-- A grant is spent once (state AVAILABLE to CONSUMED, used_by naming what
-- spent it); it is not an entitlement and nothing else reads it.
CREATE TABLE x402_grants (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	resource_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	settlement_id TEXT NOT NULL UNIQUE REFERENCES x402_settlements (id),
	state TEXT NOT NULL CHECK (state IN ('AVAILABLE', 'CONSUMED')),
	used_by TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMPTZ NOT NULL,
	consumed_at TIMESTAMPTZ
);
CREATE INDEX x402_grants_available ON x402_grants (tenant_id, workspace_id, environment, resource_id, state, created_at);

-- x402_checks holds each environment's newest check of its configuration
-- (one row per environment, replaced by the next check).
CREATE TABLE x402_checks (
	environment TEXT PRIMARY KEY CHECK (environment IN ('test', 'live')),
	config_hash TEXT NOT NULL,
	passed BOOLEAN NOT NULL,
	reason TEXT NOT NULL,
	network TEXT NOT NULL,
	fee_payer TEXT NOT NULL,
	token_program TEXT NOT NULL,
	checked_at TIMESTAMPTZ NOT NULL
);
