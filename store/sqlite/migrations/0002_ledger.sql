-- Double-entry ledgers: accounts with their balances, movements keyed by a
-- unique business reference, and their postings. Amounts are canonical
-- decimal integers in TEXT (SQLite has no 128-bit integer): no sign on
-- posting amounts, no leading zeros. The arithmetic and every sum is done in
-- Go, never in SQL. Times come from the injected clock.

CREATE TABLE ledger_accounts (
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	ledger TEXT NOT NULL,
	name TEXT NOT NULL,
	decimals INTEGER NOT NULL,
	allow_negative BOOLEAN NOT NULL,
	balance TEXT NOT NULL,
	version INTEGER NOT NULL,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
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
	created_at TIMESTAMP NOT NULL,
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
	amount TEXT NOT NULL CHECK (amount <> '0' AND amount NOT LIKE '-%'),
	PRIMARY KEY (movement_id, seq)
);
CREATE INDEX ledger_postings_account ON ledger_postings (tenant_id, workspace_id, environment, ledger, account);
