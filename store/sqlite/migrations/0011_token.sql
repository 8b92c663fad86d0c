-- Token registry verification runs (issue 15): one row per run of the
-- thirteen required checks against the configured mint, per environment.
-- The GET routes read the newest run and never call the chain. checks is
-- the JSON array of check results in the spec's order; network (CAIP-2),
-- cluster, slot and block_time are the run's evidence and stay null when
-- the cluster could not be read (outcome ERROR). supply is the observed
-- atomic supply as a canonical decimal.

CREATE TABLE token_verification_runs (
	id TEXT PRIMARY KEY,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	config_hash TEXT NOT NULL,
	mint TEXT NOT NULL,
	network TEXT,
	cluster TEXT,
	outcome TEXT NOT NULL CHECK (outcome IN ('PASSED', 'FAILED', 'ERROR')),
	error_code TEXT NOT NULL DEFAULT '',
	error_message TEXT NOT NULL DEFAULT '',
	checks TEXT NOT NULL,
	slot BIGINT,
	block_time TIMESTAMP,
	supply TEXT,
	started_at TIMESTAMP NOT NULL,
	finished_at TIMESTAMP NOT NULL
);
CREATE INDEX token_verification_runs_latest ON token_verification_runs (environment, finished_at, id);
