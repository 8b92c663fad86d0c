-- Declared creator relations (package creatorgraph): what a signed-in
-- creator states about themselves, such as following another creator.
-- One row per environment, declaring user, kind and target; withdrawing
-- keeps the row with state 'removed' (a later declaration reactivates
-- it), so the row's version counts its changes. tenant_id and
-- workspace_id are the declaring principal's, the scope of its outbox
-- events. Derived relations (collaborations, remixes) are read from
-- submissions and asset provenance and stored nowhere.
CREATE TABLE creator_relations (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	from_user_id TEXT NOT NULL REFERENCES users (id),
	to_user_id TEXT NOT NULL REFERENCES users (id),
	kind TEXT NOT NULL CHECK (kind IN ('follows')),
	state TEXT NOT NULL CHECK (state IN ('active', 'removed')),
	version BIGINT NOT NULL,
	declared_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	CHECK (from_user_id <> to_user_id),
	UNIQUE (environment, from_user_id, kind, to_user_id)
);
CREATE INDEX creator_relations_to ON creator_relations (environment, to_user_id, kind);
