-- Sound engine operations (issue 14): one row per accepted request, with
-- the validated request and the capability snapshot it was checked
-- against (JSON), its state, stage and progress, and the analysis result
-- (JSON) once completed. version is a compare-and-set counter.

CREATE TABLE sound_operations (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	created_by_user_id TEXT NOT NULL,
	created_by_key_id TEXT NOT NULL DEFAULT '',
	type TEXT NOT NULL,
	status TEXT NOT NULL,
	stage TEXT NOT NULL,
	progress INTEGER NOT NULL,
	input_asset_id TEXT NOT NULL REFERENCES assets (id),
	request TEXT NOT NULL,
	capabilities TEXT NOT NULL,
	result TEXT,
	failure_code TEXT NOT NULL DEFAULT '',
	failure_message TEXT NOT NULL DEFAULT '',
	version BIGINT NOT NULL,
	deadline_at TIMESTAMPTZ NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	started_at TIMESTAMPTZ,
	updated_at TIMESTAMPTZ NOT NULL,
	ended_at TIMESTAMPTZ
);
CREATE INDEX sound_operations_scope ON sound_operations (tenant_id, workspace_id, environment, id);

-- sound_outputs materializes each output of an operation once: the asset
-- and the input asset it was derived from.
CREATE TABLE sound_outputs (
	operation_id TEXT NOT NULL REFERENCES sound_operations (id),
	output TEXT NOT NULL,
	asset_id TEXT NOT NULL REFERENCES assets (id),
	parent_asset_id TEXT NOT NULL REFERENCES assets (id),
	format TEXT NOT NULL,
	sample_rate INTEGER NOT NULL,
	bit_depth INTEGER NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (operation_id, output)
);
