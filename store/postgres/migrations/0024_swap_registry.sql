-- Version 24 stores the swap domain's registry verification runs: each
-- reading of an environment's trusted-token registry version from its
-- cluster, with one check per entry (swap.RegistryRun, as JSON). A run
-- that could not read the cluster is kept as unreadable: evidence of
-- nothing, never of a match. seq orders runs stored in the same instant.
CREATE TABLE swap_registry_runs (
	id TEXT PRIMARY KEY,
	seq BIGINT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	registry_version INTEGER NOT NULL,
	registry_hash TEXT NOT NULL,
	network TEXT NOT NULL DEFAULT '',
	unreadable BOOLEAN NOT NULL,
	error TEXT NOT NULL DEFAULT '',
	checks TEXT NOT NULL,
	checked_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX swap_registry_runs_latest ON swap_registry_runs (environment, registry_version, unreadable, checked_at, seq);
