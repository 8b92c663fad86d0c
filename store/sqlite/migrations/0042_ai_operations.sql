-- The AI control plane's completion path: sealed provider keys and AI
-- operations with their usage records.
--
-- ai_provider_keys holds each environment's provider keys, sealed with
-- AES-256-GCM under the platform's secret (aad: the environment and key
-- reference); the plaintext is never stored. fingerprint is the first 12
-- hex digits of the key's keyed digest, to tell a changed key at start.
CREATE TABLE ai_provider_keys (
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	key_ref TEXT NOT NULL,
	sealed_key BLOB NOT NULL,
	fingerprint TEXT NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	PRIMARY KEY (environment, key_ref)
);

-- ai_operations holds every chat and task completion: who asked, the
-- routing record (policy version, reason, the model and provider that
-- executed, each call as attempts JSON), the usage the provider reported,
-- the credits reserved and settled (whole credits), the latency and the
-- terminal status. It never holds a prompt, context or answer. An
-- operation asked with an Idempotency-Key holds it with the request's
-- keyed hash: one operation per key, endpoint and scope. version is a
-- compare-and-set counter.
CREATE TABLE ai_operations (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	created_by_user_id TEXT NOT NULL,
	created_by_key_id TEXT NOT NULL,
	endpoint TEXT NOT NULL,
	task TEXT NOT NULL,
	mode TEXT NOT NULL,
	project_id TEXT NOT NULL,
	stream BOOLEAN NOT NULL,
	idempotency_key TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'expired')),
	routing_policy TEXT NOT NULL,
	routing_reason TEXT NOT NULL,
	model_id TEXT NOT NULL,
	provider_id TEXT NOT NULL,
	upstream_model TEXT NOT NULL,
	attempts TEXT NOT NULL,
	finish TEXT NOT NULL,
	input_units BIGINT NOT NULL,
	output_units BIGINT NOT NULL,
	cached_units BIGINT NOT NULL,
	reasoning_units BIGINT NOT NULL,
	usage_source TEXT NOT NULL,
	credits_reserved BIGINT NOT NULL CHECK (credits_reserved >= 0),
	credits_settled BIGINT,
	pricing_policy TEXT NOT NULL,
	latency_ms BIGINT NOT NULL,
	failure_code TEXT NOT NULL,
	tool_calls INTEGER NOT NULL,
	version BIGINT NOT NULL CHECK (version >= 1),
	deadline_at TIMESTAMP NOT NULL,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	ended_at TIMESTAMP
);

CREATE UNIQUE INDEX ai_operations_idempotency ON ai_operations (tenant_id, workspace_id, environment, endpoint, idempotency_key)
	WHERE idempotency_key <> '';
CREATE INDEX ai_operations_scope ON ai_operations (tenant_id, workspace_id, environment, id);
