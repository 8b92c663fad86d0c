-- The credential change log (store/credcache.go).
--
-- Each host keeps verified credentials and authority versions in memory.
-- Every transaction that changes what they depend on (a key's row or
-- secrets, a session, an authority version) takes the next number of
-- credential_epoch, locking its one row until it commits, and logs what
-- it changed under that number: numbers are assigned in commit order,
-- without gaps. Before a host answers from memory it reads, in one
-- statement shared by the requests that arrived meanwhile, the current
-- number and the changes it has not applied, and applies them first; so a
-- change committed before a request arrived is applied before that
-- request is answered, on every host. The log keeps the last 10,000
-- changes; a host further behind empties its cache.
CREATE TABLE credential_epoch (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	seq BIGINT NOT NULL
);
INSERT INTO credential_epoch (id, seq) VALUES (1, 0);

CREATE TABLE credential_changes (
	seq BIGINT PRIMARY KEY,
	tags TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL
);
