-- Entitlements and workspace plans per environment (issue 12: a
-- subscription's entitlements carry the environment of its checkout).
--
-- entitlements.environment is '' for an entitlement that applies to both
-- environments (granted outside plans), else 'test' or 'live'. A plan's
-- entitlements are written for the environment the plan is assigned in.
-- workspace_plans holds one row per environment: every workspace starts on
-- the free plan in both, and a paid subscription moves only its own.
--
-- Existing data: plans were only ever assigned by live subscriptions, so the
-- current plan and its entitlements become the live ones, and the test
-- environment starts on the free plan with the free plan's entitlements.
-- SQLite cannot change a primary key: both tables are rebuilt.

CREATE TABLE entitlements_env (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	entitlement TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('', 'test', 'live')),
	source TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (workspace_id, entitlement, environment)
);
INSERT INTO entitlements_env (workspace_id, entitlement, environment, source, created_at)
	SELECT workspace_id, entitlement, CASE WHEN source LIKE 'plan:%' THEN 'live' ELSE '' END, source, created_at
	FROM entitlements;
INSERT INTO entitlements_env (workspace_id, entitlement, environment, source, created_at)
	SELECT wp.workspace_id, pe.entitlement, 'test', 'plan:free', wp.since
	FROM workspace_plans wp JOIN plan_entitlements pe ON pe.plan_id = 'free';
DROP TABLE entitlements;
ALTER TABLE entitlements_env RENAME TO entitlements;

CREATE TABLE workspace_plans_env (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	tenant_id TEXT NOT NULL,
	plan_id TEXT NOT NULL REFERENCES plans (id),
	since TIMESTAMP NOT NULL,
	PRIMARY KEY (workspace_id, environment)
);
INSERT INTO workspace_plans_env (workspace_id, environment, tenant_id, plan_id, since)
	SELECT workspace_id, 'live', tenant_id, plan_id, since FROM workspace_plans;
INSERT INTO workspace_plans_env (workspace_id, environment, tenant_id, plan_id, since)
	SELECT workspace_id, 'test', tenant_id, 'free', since FROM workspace_plans
	WHERE EXISTS (SELECT 1 FROM plans WHERE id = 'free');
DROP TABLE workspace_plans;
ALTER TABLE workspace_plans_env RENAME TO workspace_plans;
