-- Leaderboard snapshots (package leaderboard): one row per computation of
-- an environment's leaderboards, as of window_end, counting the rows whose
-- event time is after window_start and at most window_end, under the
-- scoring policy version it names (policy_id, policy_version,
-- policy_hash). A snapshot is unique per environment and window end, so a
-- job that runs twice writes it once; the same index finds an
-- environment's newest. workspaces and subjects count its entries'
-- workspaces and rows. Rows are never updated: a later policy version
-- makes a later snapshot, and an old one keeps the version it used.
CREATE TABLE leaderboard_snapshots (
	id TEXT PRIMARY KEY,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	policy_id TEXT NOT NULL,
	policy_version INTEGER NOT NULL CHECK (policy_version >= 1),
	policy_hash TEXT NOT NULL,
	window_start TIMESTAMPTZ NOT NULL,
	window_end TIMESTAMPTZ NOT NULL,
	computed_at TIMESTAMPTZ NOT NULL,
	workspaces INTEGER NOT NULL CHECK (workspaces >= 0),
	subjects INTEGER NOT NULL CHECK (subjects >= 0),
	CHECK (window_start < window_end),
	UNIQUE (environment, window_end)
);

-- Leaderboard entries: one row per ranked user of a workspace's
-- leaderboard in a snapshot, in that workspace's tenant and the
-- snapshot's environment. counts holds the user's count of each of the
-- policy's signals as a JSON object; score is their weighted sum (above
-- zero: a user without a counted row has no entry); subject_rank is the
-- competition rank of the score in the workspace (equal scores share
-- it). Reads name the tenant, workspace and environment.
CREATE TABLE leaderboard_entries (
	snapshot_id TEXT NOT NULL REFERENCES leaderboard_snapshots (id),
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	counts TEXT NOT NULL,
	score BIGINT NOT NULL CHECK (score > 0),
	subject_rank INTEGER NOT NULL CHECK (subject_rank >= 1),
	PRIMARY KEY (snapshot_id, workspace_id, user_id)
);
CREATE INDEX leaderboard_entries_rank ON leaderboard_entries (snapshot_id, workspace_id, subject_rank);

-- What a computation counts, per signal: the rows in the counted state by
-- environment and event time, so a window reads only its own rows.
CREATE INDEX submissions_accepted_review ON submissions (environment, reviewed_at) WHERE status = 'ACCEPTED';
CREATE INDEX releases_live_since ON releases (environment, updated_at) WHERE status = 'LIVE';
CREATE INDEX generation_operations_completed ON generation_operations (environment, ended_at) WHERE status = 'completed';
CREATE INDEX sound_operations_completed ON sound_operations (environment, ended_at) WHERE status = 'completed';
