-- The realtime feed reads the outbox in an order no later commit can
-- enter behind a reader (package realtime). Event ids, and any sequence,
-- are drawn before commit, so on PostgreSQL an event with a smaller id or
-- number can commit after a reader passed it. tx_id is the writing
-- transaction's id: once every transaction below the oldest one still
-- running (pg_snapshot_xmin of the current snapshot) has ended, no event
-- with a smaller tx_id can appear, so the feed reads (tx_id, seq) in order
-- and only below that horizon. Events written before this migration share
-- the migration's transaction id and keep their insertion order in seq.
ALTER TABLE outbox_events ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;
ALTER TABLE outbox_events ADD COLUMN tx_id xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX outbox_events_feed ON outbox_events (tx_id, seq);
-- A subscription to one record replays that record's events.
CREATE INDEX outbox_events_aggregate ON outbox_events (aggregate_id, tx_id, seq);
