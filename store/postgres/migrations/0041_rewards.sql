-- Challenges and rewards (package rewards).
--
-- challenges: one row per challenge of a project, in the project's
-- tenant, workspace and environment. status moves along the challenge
-- table and funding_status along the funding table, each by
-- compare-and-set on version. The pool is an atomic amount of a mint
-- whose decimals were read from the mint account. funding_* hold the
-- evidence of the latest funding reconciliation that read the treasury at
-- finalized commitment (slot, balance, what the pools it backs required);
-- funded_at orders the pools the treasury covers (oldest first).
CREATE TABLE challenges (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	project_id TEXT NOT NULL,
	title TEXT NOT NULL,
	rules TEXT NOT NULL,
	opens_at TIMESTAMPTZ NOT NULL,
	closes_at TIMESTAMPTZ NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('DRAFT', 'SCHEDULED', 'OPEN', 'SUBMISSIONS_CLOSED', 'REVIEW', 'VOTING',
		'WINNERS_SELECTED', 'REWARDS_ALLOCATED', 'COMPLETED')),
	pool_atomic NUMERIC(39,0) NOT NULL CHECK (pool_atomic > 0),
	mint TEXT NOT NULL,
	decimals INTEGER NOT NULL,
	funding_status TEXT NOT NULL CHECK (funding_status IN ('ANNOUNCED', 'RESERVED', 'FUNDED', 'CLAIMABLE', 'DISTRIBUTED')),
	treasury_account TEXT NOT NULL DEFAULT '',
	funding_slot BIGINT NOT NULL DEFAULT 0,
	funding_balance_atomic TEXT NOT NULL DEFAULT '',
	funding_required_atomic TEXT NOT NULL DEFAULT '',
	funding_checked_at TIMESTAMPTZ,
	funded_at TIMESTAMPTZ,
	created_by_user_id TEXT NOT NULL,
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX challenges_list ON challenges (tenant_id, workspace_id, environment, id);
CREATE INDEX challenges_backed ON challenges (environment, mint, funding_status);

-- rewards: one row per reward allocated from a challenge's pool, in the
-- challenge's scope, to the creator behind a verified wallet (recipient
-- user and the tenant of the link that stood). allocation_key is the
-- allocation's identity (challenge and reference), unique, so an
-- allocation repeated allocates nothing twice. intent_id is the claim's
-- current transaction intent ('' when none): unique among rewards that
-- hold one, so one intent pays one reward.
CREATE TABLE rewards (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	project_id TEXT NOT NULL,
	challenge_id TEXT NOT NULL REFERENCES challenges (id),
	allocation_key TEXT NOT NULL UNIQUE,
	idempotency_key TEXT NOT NULL DEFAULT '',
	reference TEXT NOT NULL,
	recipient_user_id TEXT NOT NULL,
	wallet TEXT NOT NULL,
	amount_atomic NUMERIC(39,0) NOT NULL CHECK (amount_atomic > 0),
	mint TEXT NOT NULL,
	decimals INTEGER NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('ALLOCATED', 'CLAIMABLE', 'SUBMITTED', 'CONFIRMED', 'DISTRIBUTED', 'RECONCILED',
		'REQUIRES_REVIEW')),
	funding_status TEXT NOT NULL CHECK (funding_status IN ('ANNOUNCED', 'RESERVED', 'FUNDED', 'CLAIMABLE', 'DISTRIBUTED')),
	intent_id TEXT NOT NULL DEFAULT '',
	intent_state TEXT NOT NULL DEFAULT '',
	signature TEXT NOT NULL DEFAULT '',
	claim_attempts INTEGER NOT NULL DEFAULT 0,
	allocated_by_user_id TEXT NOT NULL,
	allocated_at TIMESTAMPTZ NOT NULL,
	claimed_at TIMESTAMPTZ,
	distributed_at TIMESTAMPTZ,
	version BIGINT NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX rewards_challenge ON rewards (challenge_id, id);
CREATE INDEX rewards_project ON rewards (tenant_id, workspace_id, environment, project_id, id);
CREATE INDEX rewards_recipient ON rewards (recipient_user_id, environment, id);
CREATE INDEX rewards_wallet ON rewards (wallet, environment, id);
CREATE UNIQUE INDEX rewards_intent ON rewards (intent_id) WHERE intent_id <> '';
