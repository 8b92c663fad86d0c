-- Billing: checkouts with their immutable price snapshot, subscriptions
-- (one per checkout, one per provider subscription), the credit grant of
-- each subscription period (once), provider invoices, and verified payment
-- webhooks kept with their payload (deduplicated through inbox_events).

CREATE TABLE billing_checkouts (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL,
	created_by TEXT NOT NULL,
	price TEXT NOT NULL,
	state TEXT NOT NULL,
	provider_session_id TEXT NOT NULL,
	payment_url TEXT NOT NULL,
	provider_subscription_id TEXT NOT NULL DEFAULT '',
	provider_customer_id TEXT NOT NULL DEFAULT '',
	paid_at TIMESTAMPTZ,
	subscription_id TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	UNIQUE (environment, provider_session_id)
);
CREATE INDEX billing_checkouts_workspace ON billing_checkouts (workspace_id, environment, id);

CREATE TABLE billing_subscriptions (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL,
	checkout_id TEXT NOT NULL UNIQUE REFERENCES billing_checkouts (id),
	price TEXT NOT NULL,
	state TEXT NOT NULL,
	provider_id TEXT NOT NULL,
	provider_customer_id TEXT NOT NULL,
	period_start TIMESTAMPTZ NOT NULL,
	period_end TIMESTAMPTZ NOT NULL,
	cancel_at_period_end BOOLEAN NOT NULL,
	ended_at TIMESTAMPTZ,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	UNIQUE (environment, provider_id)
);
CREATE INDEX billing_subscriptions_workspace ON billing_subscriptions (workspace_id, environment, id);

CREATE TABLE billing_credit_grants (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	subscription_id TEXT NOT NULL REFERENCES billing_subscriptions (id),
	period_start TIMESTAMPTZ NOT NULL,
	period_end TIMESTAMPTZ NOT NULL,
	credits BIGINT NOT NULL,
	reference TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	UNIQUE (subscription_id, period_start)
);
CREATE INDEX billing_credit_grants_workspace ON billing_credit_grants (workspace_id, environment, id);

CREATE TABLE billing_invoices (
	environment TEXT NOT NULL,
	id TEXT NOT NULL,
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	subscription_id TEXT NOT NULL,
	provider_subscription_id TEXT NOT NULL,
	status TEXT NOT NULL,
	billing_reason TEXT NOT NULL,
	amount_due BIGINT NOT NULL,
	amount_paid BIGINT NOT NULL,
	currency TEXT NOT NULL,
	period_start TIMESTAMPTZ NOT NULL,
	period_end TIMESTAMPTZ NOT NULL,
	created TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (environment, id)
);
CREATE INDEX billing_invoices_workspace ON billing_invoices (workspace_id, environment, created);

CREATE TABLE billing_webhook_events (
	environment TEXT NOT NULL,
	event_id TEXT NOT NULL,
	type TEXT NOT NULL,
	object_id TEXT NOT NULL,
	payload TEXT NOT NULL,
	created TIMESTAMPTZ NOT NULL,
	received_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (environment, event_id)
);
