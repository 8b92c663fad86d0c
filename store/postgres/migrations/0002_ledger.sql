-- Double-entry ledgers: accounts with their balances, movements keyed by a
-- unique business reference, and their postings. Amounts are integers in
-- NUMERIC(39,0) (an atomic amount fits in 20 digits, a balance in 39); the
-- arithmetic is done in Go, never in SQL. Times come from the injected clock.

CREATE TABLE ledger_accounts (
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	ledger TEXT NOT NULL,
	name TEXT NOT NULL,
	decimals INTEGER NOT NULL,
	allow_negative BOOLEAN NOT NULL,
	balance NUMERIC(39,0) NOT NULL,
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (tenant_id, workspace_id, environment, ledger, name)
);

CREATE TABLE ledger_movements (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	ledger TEXT NOT NULL,
	type TEXT NOT NULL,
	reference TEXT NOT NULL,
	decimals INTEGER NOT NULL,
	actor_user_id TEXT NOT NULL,
	actor_key_id TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	UNIQUE (tenant_id, workspace_id, environment, reference)
);
CREATE INDEX ledger_movements_scope ON ledger_movements (tenant_id, workspace_id, environment, ledger, id);
CREATE INDEX ledger_movements_actor ON ledger_movements (tenant_id, workspace_id, environment, actor_user_id, id);

CREATE TABLE ledger_postings (
	movement_id TEXT NOT NULL REFERENCES ledger_movements (id),
	seq INTEGER NOT NULL,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	ledger TEXT NOT NULL,
	account TEXT NOT NULL,
	direction TEXT NOT NULL CHECK (direction IN ('debit', 'credit')),
	amount NUMERIC(39,0) NOT NULL CHECK (amount > 0),
	PRIMARY KEY (movement_id, seq)
);
CREATE INDEX ledger_postings_account ON ledger_postings (tenant_id, workspace_id, environment, ledger, account);
