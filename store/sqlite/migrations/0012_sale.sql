-- Token sale (issue 15): verification runs, access intents and each
-- account's declared jurisdiction.
--
-- sale_verification_runs holds one row per run of a configured sale, per
-- environment. The GET routes read the newest run and never call the
-- chain. config_hash identifies the sale configuration the run checked;
-- checks is the JSON array of the run's checks with their evidence; slot
-- is the highest context slot read, null when the chain could not be read
-- (outcome ERROR). error keeps the adapter's message for operators.
CREATE TABLE sale_verification_runs (
	id TEXT PRIMARY KEY,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	sale_id TEXT NOT NULL,
	config_hash TEXT NOT NULL,
	outcome TEXT NOT NULL CHECK (outcome IN ('PASSED', 'FAILED', 'ERROR')),
	error TEXT NOT NULL DEFAULT '',
	checks TEXT NOT NULL,
	slot BIGINT,
	activation_allowed BOOLEAN NOT NULL,
	started_at TIMESTAMP NOT NULL,
	finished_at TIMESTAMP NOT NULL
);
CREATE INDEX sale_verification_runs_latest ON sale_verification_runs (environment, sale_id, finished_at, id);

-- sale_access_intents records each evaluated access intent: who asked, in
-- which environment, tenant and workspace, for which sale, the outcome and
-- its reasons (JSON array of codes), the jurisdiction evaluated and, when
-- a handoff was issued, its expiry. The handoff URL is never stored.
CREATE TABLE sale_access_intents (
	id TEXT PRIMARY KEY,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL DEFAULT '',
	user_id TEXT NOT NULL REFERENCES users (id),
	sale_id TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('ELIGIBLE', 'INELIGIBLE')),
	reasons TEXT NOT NULL,
	jurisdiction TEXT NOT NULL DEFAULT '',
	handoff_expires_at TIMESTAMP,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX sale_access_intents_user ON sale_access_intents (user_id, environment, created_at);

-- sale_jurisdictions is the jurisdiction each account declared in its
-- first access intent: one row per user, first write wins.
CREATE TABLE sale_jurisdictions (
	user_id TEXT PRIMARY KEY REFERENCES users (id),
	jurisdiction TEXT NOT NULL,
	declared_at TIMESTAMP NOT NULL
);
