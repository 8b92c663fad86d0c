-- Assets: stored media records. The bytes live in the blob store, addressed
-- by sha256; several assets may share one blob. NULL audio columns mean the
-- format does not state the value.
CREATE TABLE assets (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL,
	media_type TEXT NOT NULL,
	size_bytes BIGINT NOT NULL,
	sha256 TEXT NOT NULL,
	duration_ms BIGINT,
	duration_estimated BOOLEAN NOT NULL DEFAULT FALSE,
	sample_rate INTEGER,
	channels INTEGER,
	bit_depth INTEGER,
	origin TEXT NOT NULL,
	filename TEXT NOT NULL DEFAULT '',
	created_by_user_id TEXT NOT NULL DEFAULT '',
	created_by_key_id TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX assets_scope ON assets (tenant_id, workspace_id, environment, id);
CREATE INDEX assets_sha256 ON assets (sha256);
