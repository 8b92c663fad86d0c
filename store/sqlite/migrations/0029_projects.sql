-- Projects: one row per project of a tenant, workspace and environment,
-- owned by the user who created it. version is a compare-and-set counter;
-- the status moves only along the project package's table. Lists read
-- newest first by id within a workspace and environment; reads by id
-- cross tenants for public projects.

CREATE TABLE projects (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	owner_user_id TEXT NOT NULL,
	title TEXT NOT NULL,
	type TEXT NOT NULL,
	description TEXT NOT NULL,
	visibility TEXT NOT NULL CHECK (visibility IN ('workspace', 'public')),
	status TEXT NOT NULL CHECK (status IN ('DRAFT', 'OPEN', 'IN_PRODUCTION', 'REVIEW', 'COMPLETED', 'ARCHIVED')),
	version BIGINT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL
);
CREATE INDEX projects_scope ON projects (tenant_id, workspace_id, environment, id);
