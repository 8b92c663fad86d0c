-- Releases: a track (asset) or project of a workspace put out to external
-- distribution, one row per release of a tenant, workspace and
-- environment, created by the user of the principal that made it.
-- target_type and target_id name the asset or project; project_id is the
-- project the target belongs to ('' for an asset). territories holds the
-- ISO 3166-1 alpha-2 codes, sorted and comma-separated, or WW alone.
-- version is a compare-and-set counter; the status moves only along the
-- release package's table. Lists read newest first by id within a
-- workspace and environment.

CREATE TABLE releases (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	created_by_user_id TEXT NOT NULL,
	target_type TEXT NOT NULL CHECK (target_type IN ('asset', 'project')),
	target_id TEXT NOT NULL,
	project_id TEXT NOT NULL,
	title TEXT NOT NULL,
	release_date TEXT NOT NULL,
	territories TEXT NOT NULL,
	distributor TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('DRAFT', 'SCHEDULED', 'SUBMITTED', 'LIVE', 'REJECTED', 'TAKEN_DOWN')),
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX releases_scope ON releases (tenant_id, workspace_id, environment, id);
