-- Developer webhooks: endpoints, the delivery of each event to each
-- endpoint, the attempts of each delivery, and the fan-out's cursor and
-- marks (package webhook).
--
-- webhook_endpoints: one row per endpoint of a tenant, workspace and
-- environment. enabled_events holds the subscribed event types, sorted and
-- comma-separated, or '*' alone. secret_sealed is the current signing
-- secret sealed with AES-256-GCM (aad: the endpoint id and
-- secret_version); previous_secret_sealed the secret the last rotation
-- replaced, which signs beside it until previous_expires_at. Deleted
-- endpoints keep their row (status 'deleted') with their secrets erased.
-- version is a compare-and-set counter.
CREATE TABLE webhook_endpoints (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	url TEXT NOT NULL,
	description TEXT NOT NULL,
	enabled_events TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('enabled', 'disabled', 'deleted')),
	disabled_reason TEXT NOT NULL,
	secret_sealed BYTEA NOT NULL,
	secret_version BIGINT NOT NULL,
	previous_secret_sealed BYTEA,
	previous_expires_at TIMESTAMPTZ,
	created_by_user_id TEXT NOT NULL,
	created_by_key_id TEXT NOT NULL,
	last_success_at TIMESTAMPTZ,
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints (tenant_id, workspace_id, environment, id);

-- webhook_deliveries: at most one per (endpoint, event), whoever makes it
-- (the fan-out of any host, the test route). version is the
-- compare-and-set counter that claims and records each attempt.
CREATE TABLE webhook_deliveries (
	id TEXT PRIMARY KEY,
	endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id),
	event_id TEXT NOT NULL,
	event_type TEXT NOT NULL,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
	attempts INTEGER NOT NULL,
	manual BOOLEAN NOT NULL,
	next_attempt_at TIMESTAMPTZ,
	last_attempt_at TIMESTAMPTZ,
	failure_reason TEXT NOT NULL,
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);

-- webhook_attempts: one row per attempt of a delivery; the primary key
-- makes a second record of one attempt fail.
CREATE TABLE webhook_attempts (
	delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
	attempt INTEGER NOT NULL,
	manual BOOLEAN NOT NULL,
	started_at TIMESTAMPTZ NOT NULL,
	status_code INTEGER NOT NULL,
	latency_ms BIGINT NOT NULL,
	error_class TEXT NOT NULL,
	error_reason TEXT NOT NULL,
	response_excerpt TEXT NOT NULL,
	PRIMARY KEY (delivery_id, attempt)
);

-- The fan-out's cursor: when the last complete pass started. One row.
CREATE TABLE webhook_fanout_cursor (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	scanned_at TIMESTAMPTZ NOT NULL
);

-- The events a fan-out pass fanned out, while the window may read them
-- again; pruned once it has passed.
CREATE TABLE webhook_fanout_marks (
	event_id TEXT PRIMARY KEY
);
