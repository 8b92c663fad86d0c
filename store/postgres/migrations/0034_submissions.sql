-- Submissions: community submissions to projects. A submission is listed
-- with its project (tenant_id, workspace_id and environment are the
-- project's) and records who submitted it, from which tenant and
-- workspace. Its status moves only along the project package's
-- submission table, by compare-and-set on version. The work is either a
-- platform asset of the submitter's workspace (asset_* hold a snapshot
-- of it) or one to five URLs (submission_assets), each probed once by the
-- platform. revision_of is unique: a submission is revised at most once.

CREATE TABLE submissions (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL REFERENCES projects (id),
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	submitter_user_id TEXT NOT NULL,
	submitter_tenant_id TEXT NOT NULL REFERENCES tenants (id),
	submitter_workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	submitter_key_id TEXT NOT NULL,
	type TEXT NOT NULL,
	title TEXT NOT NULL,
	description TEXT NOT NULL,
	asset_id TEXT,
	asset_content_type TEXT,
	asset_bytes BIGINT,
	asset_sha256 TEXT,
	revision_of TEXT UNIQUE REFERENCES submissions (id),
	status TEXT NOT NULL CHECK (status IN ('DRAFT', 'SUBMITTED', 'UNDER_REVIEW', 'ACCEPTED', 'REJECTED', 'REVISION_REQUESTED')),
	review_note TEXT NOT NULL,
	reviewed_by_user_id TEXT NOT NULL,
	reviewed_at TIMESTAMPTZ,
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	CHECK ((asset_id IS NULL) = (asset_sha256 IS NULL))
);
CREATE INDEX submissions_project ON submissions (project_id, environment, id);

-- The asset URLs of a submission, in order, and what the platform's
-- probe of each found: a row leaves 'pending' once and never changes
-- after.
CREATE TABLE submission_assets (
	submission_id TEXT NOT NULL REFERENCES submissions (id),
	position INTEGER NOT NULL CHECK (position >= 0),
	url TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('pending', 'verified', 'refused', 'unreachable')),
	content_type TEXT NOT NULL,
	bytes BIGINT NOT NULL,
	sha256 TEXT NOT NULL,
	reason TEXT NOT NULL,
	checked_at TIMESTAMPTZ,
	PRIMARY KEY (submission_id, position)
);
