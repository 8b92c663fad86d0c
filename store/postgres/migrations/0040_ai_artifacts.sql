-- The AI control plane's artifacts: what a model's call of a mutating
-- tool proposed for its caller, waiting for the caller's decision
-- (package ai/tool). Each belongs to the tenant, workspace and
-- environment of the principal whose call made it (created_by_*), and
-- names its provenance: the AI operation whose model proposed it and the
-- model's call id. arguments is the proposal, validated against the
-- tool's schema, as canonical JSON. status moves draft -> approved ->
-- applied, or draft -> rejected; result_type and result_id name what
-- applying made (a project, a generation operation). version is a
-- compare-and-set counter, so concurrent confirmations apply once.
CREATE TABLE ai_artifacts (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	tool TEXT NOT NULL,
	operation_id TEXT NOT NULL,
	tool_call_id TEXT NOT NULL,
	arguments TEXT NOT NULL,
	created_by_kind TEXT NOT NULL,
	created_by_user_id TEXT NOT NULL,
	created_by_key_id TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL CHECK (status IN ('draft', 'approved', 'applied', 'rejected')),
	result_type TEXT NOT NULL DEFAULT '',
	result_id TEXT NOT NULL DEFAULT '',
	decided_by_kind TEXT NOT NULL DEFAULT '',
	decided_by_user_id TEXT NOT NULL DEFAULT '',
	decided_by_key_id TEXT NOT NULL DEFAULT '',
	decided_at TIMESTAMPTZ,
	version BIGINT NOT NULL CHECK (version >= 1),
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);

CREATE INDEX ai_artifacts_operation ON ai_artifacts (tenant_id, workspace_id, environment, operation_id);
