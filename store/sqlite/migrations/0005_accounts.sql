-- Accounts: password credentials, sessions with their access tokens,
-- single-use codes (email verification, password reset, invitations,
-- handoff), login throttling, onboarding records and the audit log.
-- Every secret is stored as a keyed digest; times come from the clock.

CREATE TABLE user_credentials (
	user_id TEXT PRIMARY KEY REFERENCES users (id),
	password_hash TEXT NOT NULL,
	email_verified_at TIMESTAMP,
	password_changed_at TIMESTAMP NOT NULL
);

-- A session is a signed-in user on one device: a web or studio cookie and,
-- for clients without cookies, a short-lived bearer access token bound to it.
CREATE TABLE sessions (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES users (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL DEFAULT '',
	kind TEXT NOT NULL,
	cookie_digest TEXT NOT NULL UNIQUE,
	token_digest TEXT UNIQUE,
	token_expires_at TIMESTAMP,
	user_agent TEXT NOT NULL,
	client_ip TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	last_seen_at TIMESTAMP NOT NULL,
	authenticated_at TIMESTAMP NOT NULL,
	expires_at TIMESTAMP NOT NULL,
	revoked_at TIMESTAMP
);
CREATE INDEX sessions_user ON sessions (user_id, created_at);

-- Single-use codes, stored only as digests.
CREATE TABLE account_codes (
	digest TEXT PRIMARY KEY,
	purpose TEXT NOT NULL,
	user_id TEXT NOT NULL DEFAULT '',
	email TEXT NOT NULL DEFAULT '',
	tenant_id TEXT NOT NULL DEFAULT '',
	workspace_id TEXT NOT NULL DEFAULT '',
	session_id TEXT NOT NULL DEFAULT '',
	payload TEXT NOT NULL DEFAULT '{}',
	created_by TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMP NOT NULL,
	expires_at TIMESTAMP NOT NULL,
	used_at TIMESTAMP
);
CREATE INDEX account_codes_user ON account_codes (purpose, user_id);

-- Failed-login counters per account and per client address.
CREATE TABLE login_throttle (
	subject TEXT PRIMARY KEY,
	failures INTEGER NOT NULL,
	window_started_at TIMESTAMP NOT NULL,
	locked_until TIMESTAMP
);

-- Onboarding answers per workspace.
CREATE TABLE workspace_onboarding (
	workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
	user_id TEXT NOT NULL,
	goal TEXT NOT NULL,
	selected_plan TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);

-- The audit log is append-only: rows are inserted, never updated or deleted.
CREATE TABLE audit_events (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	actor_user_id TEXT NOT NULL,
	actor_key_id TEXT NOT NULL DEFAULT '',
	action TEXT NOT NULL,
	target_type TEXT NOT NULL,
	target_id TEXT NOT NULL,
	request_id TEXT NOT NULL,
	before_state TEXT,
	after_state TEXT,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX audit_events_scope ON audit_events (tenant_id, workspace_id, id);
