-- The audit log gets the environment of its events, so that a read is
-- scoped by tenant, workspace and environment as every other record's is:
-- a test credential never reads a live event. The outbox, which already
-- carries its events' environment, is indexed for the publisher's reads,
-- which are now scoped by the internal key's environment.
--
-- New rows record the acting principal's environment (a session's chosen
-- mode, an API key's environment), or, for the platform's own work (jobs,
-- provider webhooks), the environment of the record it changed.
--
-- Existing rows are backfilled from what they record, in this order:
--   1. the request that made the change: its durable receipt, written in
--      the same unit of work, holds the principal's environment;
--   2. the subject, when it has an environment: a subscription's event
--      takes the subscription's (a webhook or renewal job has no request,
--      and a subscription's events belong to the subscription's
--      environment even when a request made them);
--   3. otherwise live. What is left are events no request or subject
--      places: the host operator's platform-role grants (platform-level,
--      no workspace) and account events made by sessions whose receipt is
--      gone. Sessions act in live mode unless a request asks for test mode,
--      and authority over a workspace is real authority, so live is where
--      such events were made and where their readers look.
--
-- The column's default serves the backfill only: PostgreSQL drops it after,
-- SQLite cannot drop a default and keeps it, unused, since the store names
-- the environment on every insert and the domain refuses an event without
-- one.

ALTER TABLE audit_events ADD COLUMN environment TEXT NOT NULL DEFAULT 'live'
	CHECK (environment IN ('test', 'live'));

UPDATE audit_events SET environment = (
	SELECT r.environment FROM request_receipts r WHERE r.request_id = audit_events.request_id)
WHERE request_id <> '' AND EXISTS (
	SELECT 1 FROM request_receipts r
	WHERE r.request_id = audit_events.request_id AND r.environment IN ('test', 'live'));

UPDATE audit_events SET environment = (
	SELECT s.environment FROM billing_subscriptions s WHERE s.id = audit_events.target_id)
WHERE target_type = 'subscription' AND EXISTS (
	SELECT 1 FROM billing_subscriptions s
	WHERE s.id = audit_events.target_id AND s.environment IN ('test', 'live'));

DROP INDEX audit_events_scope;
ALTER TABLE audit_events ALTER COLUMN environment DROP DEFAULT;
CREATE INDEX audit_events_scope ON audit_events (tenant_id, workspace_id, environment, id);

DROP INDEX outbox_events_unpublished;
CREATE INDEX outbox_events_unpublished ON outbox_events (environment, published_at, id);
