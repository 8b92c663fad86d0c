-- Version 22 counts the monthly requests of sessions and session-bound
-- access tokens, as api_key_usage counts those of API keys.
--
-- subject is who the requests count against: "user:<user id>" (every
-- session and access token of one user) or "ws:<workspace id>" (those of
-- every user of one workspace). Hosts flush their counts in batches and
-- read the totals back, so a monthly budget holds across hosts and
-- restarts. No foreign key: a subject names a user or a workspace.
CREATE TABLE request_usage (
	subject TEXT NOT NULL,
	period TEXT NOT NULL,
	requests INTEGER NOT NULL,
	PRIMARY KEY (subject, period)
);
