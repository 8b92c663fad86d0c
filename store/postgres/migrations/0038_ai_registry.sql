-- The AI control plane's model registry and the models' health, per
-- environment. The routing policy is a policy version (policy_versions,
-- id "ai.routing") and needs no table of its own; providers come from
-- the host's configuration alone.
--
-- ai_models holds each environment's models: seeded from configuration
-- at start, changed by administrators (enabled and prices; admin_changed
-- then keeps configuration from setting them again), retired (kept, never
-- routed to) while configuration no longer lists them. capabilities is a
-- comma-separated list; prices are canonical decimal strings of US
-- dollars per unit, never floats. version is a compare-and-set counter.
CREATE TABLE ai_models (
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	id TEXT NOT NULL,
	provider_id TEXT NOT NULL,
	upstream_model TEXT NOT NULL,
	capabilities TEXT NOT NULL,
	context_window BIGINT NOT NULL CHECK (context_window > 0),
	privacy_class TEXT NOT NULL CHECK (privacy_class IN ('standard', 'no_retention', 'local')),
	input_price TEXT NOT NULL,
	output_price TEXT NOT NULL,
	enabled BOOLEAN NOT NULL,
	retired BOOLEAN NOT NULL DEFAULT FALSE,
	admin_changed BOOLEAN NOT NULL DEFAULT FALSE,
	version BIGINT NOT NULL CHECK (version >= 1),
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	updated_by TEXT NOT NULL,
	PRIMARY KEY (environment, id)
);

-- ai_model_health holds what calls to each model showed: the failure
-- streak and cooldown, counts of successes, failures and refusals, and
-- the latency mean of successful calls (milliseconds; NULL until one is
-- observed). A model never called has no row. version is a
-- compare-and-set counter, so concurrent observations from every host
-- are all counted.
CREATE TABLE ai_model_health (
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	model_id TEXT NOT NULL,
	consecutive_failures INTEGER NOT NULL,
	last_failure TEXT NOT NULL DEFAULT '',
	last_failure_at TIMESTAMPTZ,
	last_success_at TIMESTAMPTZ,
	cooldown_until TIMESTAMPTZ,
	cooldown_cause TEXT NOT NULL DEFAULT '',
	successes BIGINT NOT NULL,
	failures BIGINT NOT NULL,
	rejections BIGINT NOT NULL,
	latency_ms BIGINT,
	last_latency_ms BIGINT,
	latency_observations BIGINT NOT NULL,
	version BIGINT NOT NULL CHECK (version >= 1),
	updated_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (environment, model_id)
);
