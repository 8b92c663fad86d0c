-- Transaction intents and chain payment requests (the chain/intent domain).
--
-- transaction_intents holds one row per intent. body is the whole intent
-- as JSON (frozen economics, prepared transaction, signature, signed bytes,
-- progress and evidence) and is what a read returns; the other columns copy
-- the facts the store keys, constrains and queries on. The actor, purpose,
-- business reference ("<purpose>:<id>", unique: settlement is keyed by it),
-- expiry and creation time are written once; state, network_state,
-- signature, updated_at and body change together with version, which every
-- update compares and sets. transaction_intents_reconcile serves the
-- reconciliation sweep: non-terminal intents, least recently updated first
-- (the state list is the domain's non-terminal states).
--
-- intent_signatures binds each transaction signature to one intent; the
-- signature is the primary key, so no signature ever counts for two
-- intents. An intent can hold more than one (a second signature sends it
-- to review).
--
-- chain_payment_requests holds the Solana Pay transfer request derived from
-- an intent, at most one per intent (intent_id is unique), as JSON in body.
CREATE TABLE transaction_intents (
	id TEXT PRIMARY KEY,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	user_id TEXT NOT NULL REFERENCES users (id),
	purpose TEXT NOT NULL,
	business_reference TEXT NOT NULL UNIQUE,
	state TEXT NOT NULL,
	network_state TEXT NOT NULL,
	version BIGINT NOT NULL,
	signature TEXT,
	expires_at TIMESTAMP NOT NULL,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	body TEXT NOT NULL
);
CREATE INDEX transaction_intents_reconcile ON transaction_intents (updated_at, id)
	WHERE state IN ('CREATED', 'SUBMITTED', 'CONFIRMING', 'VERIFIED');

CREATE TABLE intent_signatures (
	signature TEXT PRIMARY KEY,
	intent_id TEXT NOT NULL REFERENCES transaction_intents (id),
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX intent_signatures_intent ON intent_signatures (intent_id);

CREATE TABLE chain_payment_requests (
	id TEXT PRIMARY KEY,
	intent_id TEXT NOT NULL UNIQUE REFERENCES transaction_intents (id),
	body TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);
