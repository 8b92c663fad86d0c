-- The realtime feed reads the outbox in commit order (package realtime).
-- Event ids sort by occurrence but not by commit: two units of work of one
-- millisecond draw their ids' random parts independently. seq is the
-- commit order: SQLite has one writer, so the trigger's MAX(seq) + 1 runs
-- in the order units of work commit (a rolled-back unit's numbers are
-- drawn again by the next). Events written before this migration take
-- their rowid order, the order they were inserted.
ALTER TABLE outbox_events ADD COLUMN seq INTEGER;
UPDATE outbox_events SET seq = rowid;
CREATE UNIQUE INDEX outbox_events_seq ON outbox_events (seq);
CREATE TRIGGER outbox_events_seq AFTER INSERT ON outbox_events WHEN NEW.seq IS NULL
BEGIN
	UPDATE outbox_events SET seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM outbox_events) WHERE rowid = NEW.rowid;
END;
-- A subscription to one record replays that record's events.
CREATE INDEX outbox_events_aggregate ON outbox_events (aggregate_id, seq);
