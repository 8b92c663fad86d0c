-- Spread balances (PostgreSQL's migration 22 says why). SQLite's single
-- writer runs units of work one at a time, so its store keeps every balance
-- in the account's own row and never writes slots; the table exists so that
-- both schemas and the store's reads (the balance is the main row's plus
-- its slots') are the same.
CREATE TABLE ledger_account_slots (
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	ledger TEXT NOT NULL,
	name TEXT NOT NULL,
	slot INTEGER NOT NULL,
	balance TEXT NOT NULL,
	room TEXT NOT NULL,
	version INTEGER NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, workspace_id, environment, ledger, name, slot),
	FOREIGN KEY (tenant_id, workspace_id, environment, ledger, name)
		REFERENCES ledger_accounts (tenant_id, workspace_id, environment, ledger, name)
);
