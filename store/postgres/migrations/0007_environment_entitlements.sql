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

ALTER TABLE entitlements ADD COLUMN environment TEXT NOT NULL DEFAULT ''
	CHECK (environment IN ('', 'test', 'live'));
ALTER TABLE entitlements DROP CONSTRAINT entitlements_pkey;
UPDATE entitlements SET environment = 'live' WHERE source LIKE 'plan:%';
ALTER TABLE entitlements ADD PRIMARY KEY (workspace_id, entitlement, environment);
ALTER TABLE entitlements ALTER COLUMN environment DROP DEFAULT;
INSERT INTO entitlements (workspace_id, entitlement, environment, source, created_at)
	SELECT wp.workspace_id, pe.entitlement, 'test', 'plan:free', wp.since
	FROM workspace_plans wp JOIN plan_entitlements pe ON pe.plan_id = 'free';

ALTER TABLE workspace_plans ADD COLUMN environment TEXT NOT NULL DEFAULT 'live'
	CHECK (environment IN ('test', 'live'));
ALTER TABLE workspace_plans DROP CONSTRAINT workspace_plans_pkey;
ALTER TABLE workspace_plans ADD PRIMARY KEY (workspace_id, environment);
ALTER TABLE workspace_plans ALTER COLUMN environment DROP DEFAULT;
INSERT INTO workspace_plans (workspace_id, environment, tenant_id, plan_id, since)
	SELECT workspace_id, 'test', tenant_id, 'free', since FROM workspace_plans
	WHERE environment = 'live' AND EXISTS (SELECT 1 FROM plans WHERE id = 'free');
