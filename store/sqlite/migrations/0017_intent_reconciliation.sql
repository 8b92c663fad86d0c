-- Reconciliation after settlement (the chain/intent domain): SETTLED ->
-- RECONCILING -> RECONCILED.
--
-- intent_reconciliations holds the one reconciliation record of an intent
-- (intent_id is unique: racing job runs converge on one row). body is the
-- whole record as JSON (outcome, reason, every check as evidence, the
-- observed signature, slot and block time, when the chain was read); the
-- other columns copy what the store keys and constrains on. A record is
-- written once and never updated: reconciliation corrects nothing.
--
-- transaction_intents needs no new column: the new states are values of
-- state, and the intent's body carries its reconciliation id, outcome and
-- time. The partial index transaction_intents_reconcile (0014) still lists
-- exactly the states the sweep moves (CREATED to VERIFIED).
--
-- ledger_movements_reference serves the settlement reader, which looks a
-- settlement reference up across the tenant's workspaces and environments
-- to find a second settlement.
--
-- Backfill: intents settled before this version have no reconciliation
-- job; one is enqueued for each (kind intent.reconcile, payload {"id"},
-- unique key intent.reconcile:<id>, 10 attempts, as the platform's wiring
-- enqueues it), so they are reconciled like new ones.
CREATE TABLE intent_reconciliations (
	id TEXT PRIMARY KEY,
	intent_id TEXT NOT NULL UNIQUE REFERENCES transaction_intents (id),
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	outcome TEXT NOT NULL CHECK (outcome IN ('MATCH', 'DRIFT_DETECTED', 'REQUIRES_REVIEW')),
	created_at TIMESTAMP NOT NULL,
	body TEXT NOT NULL
);

CREATE INDEX ledger_movements_reference ON ledger_movements (tenant_id, reference);

INSERT INTO jobs (id, kind, payload, state, unique_key, run_at, attempts, max_attempts, created_at)
SELECT 'job_reconcile_' || id, 'intent.reconcile', '{"id":"' || id || '"}', 'available', 'intent.reconcile:' || id,
	updated_at, 0, 10, updated_at
FROM transaction_intents WHERE state = 'SETTLED';
