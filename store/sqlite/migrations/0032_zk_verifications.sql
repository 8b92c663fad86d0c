-- Zero-knowledge proof verifications (web3/zk): one row per verified
-- statement, a proof bound to a tenant, user and transaction intent that
-- verified against a verifying key the server pinned. A statement (the
-- circuit version and all its public inputs) is recorded once per tenant
-- and environment: a re-randomized proof of it finds the first row. A
-- proof is stored by its hash, once. Rows are never updated, and nothing
-- here refers to or changes the intent's own state.

CREATE TABLE zk_verifications (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	intent_id TEXT NOT NULL,
	circuit_id TEXT NOT NULL,
	circuit_version TEXT NOT NULL,
	binding TEXT NOT NULL,
	public_signals TEXT NOT NULL,
	statement_hash TEXT NOT NULL,
	proof_hash TEXT NOT NULL,
	proof TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX zk_verifications_statement ON zk_verifications (tenant_id, environment, statement_hash);
CREATE UNIQUE INDEX zk_verifications_proof ON zk_verifications (proof_hash);
CREATE INDEX zk_verifications_intent ON zk_verifications (intent_id);
