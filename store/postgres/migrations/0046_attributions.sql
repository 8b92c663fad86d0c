-- Attribution (package attribution): where a signed-in user came from.
-- One row per user and environment, never more: the first touch (first_*,
-- written once by the insert and never again) and the last touch
-- (last_*, replaced by each later touch), with a bounded touch counter.
-- Campaign values are 1 to 100 characters or '' when absent; referrer
-- and landing path are stored without query and fragment, at most 512
-- characters. tenant_id and workspace_id are those of the principal that
-- first recorded the row (workspace_id '' for a user who had not
-- onboarded yet), the scope of its outbox events. version is a
-- compare-and-set counter.
CREATE TABLE attributions (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL REFERENCES users (id),
	first_source TEXT NOT NULL CHECK (length(first_source) BETWEEN 1 AND 100),
	first_medium TEXT NOT NULL CHECK (length(first_medium) <= 100),
	first_campaign TEXT NOT NULL CHECK (length(first_campaign) <= 100),
	first_term TEXT NOT NULL CHECK (length(first_term) <= 100),
	first_content TEXT NOT NULL CHECK (length(first_content) <= 100),
	first_referrer TEXT NOT NULL CHECK (length(first_referrer) <= 512),
	first_landing_path TEXT NOT NULL CHECK (length(first_landing_path) <= 512),
	first_at TIMESTAMPTZ NOT NULL,
	last_source TEXT NOT NULL CHECK (length(last_source) BETWEEN 1 AND 100),
	last_medium TEXT NOT NULL CHECK (length(last_medium) <= 100),
	last_campaign TEXT NOT NULL CHECK (length(last_campaign) <= 100),
	last_term TEXT NOT NULL CHECK (length(last_term) <= 100),
	last_content TEXT NOT NULL CHECK (length(last_content) <= 100),
	last_referrer TEXT NOT NULL CHECK (length(last_referrer) <= 512),
	last_landing_path TEXT NOT NULL CHECK (length(last_landing_path) <= 512),
	last_at TIMESTAMPTZ NOT NULL,
	touch_count BIGINT NOT NULL CHECK (touch_count BETWEEN 1 AND 1000000),
	version BIGINT NOT NULL CHECK (version >= 1),
	UNIQUE (environment, user_id)
);
-- Product analytics count first touches per environment and period.
CREATE INDEX attributions_first ON attributions (environment, first_at);
