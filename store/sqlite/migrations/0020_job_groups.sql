-- A job may name the group it works for (a workspace, for sound
-- operations), so that a job class can bound how many of one group's jobs
-- run at once. NULL: no group, never limited.
ALTER TABLE jobs ADD COLUMN group_key TEXT;

-- Each job class claims only its own kinds: its due jobs are found by kind
-- and state in run_at order.
CREATE INDEX jobs_claim ON jobs (kind, state, run_at);

-- A class with a per-group limit counts each group's running jobs when it
-- claims and when health measures its backlog.
CREATE INDEX jobs_group_running ON jobs (group_key, kind) WHERE state = 'running' AND group_key IS NOT NULL;
