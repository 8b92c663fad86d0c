-- The marketplace's rights side: asset provenance and license offers.
-- Rights policies are policy versions (policy_versions, id
-- "rights.<workspace id>.<name>") and need no table of their own.
--
-- asset_provenance holds one record per asset, written with the asset in
-- one unit of work: its origin, creator, the provider and model of
-- generated audio, the operation that made it, its own content hash, and
-- (asset_provenance_parents) the assets it was computed from with their
-- content hashes. NULL is a fact the record does not know. basis is
-- 'creation' for records written when the asset was made and 'backfill'
-- for those rebuilt below, whose recorded_at is NULL.
CREATE TABLE asset_provenance (
	asset_id TEXT PRIMARY KEY REFERENCES assets (id),
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	origin TEXT NOT NULL CHECK (origin IN ('uploaded', 'generated', 'remixed', 'derived')),
	creator_user_id TEXT,
	provider TEXT,
	model TEXT,
	operation_id TEXT,
	output_sha256 TEXT NOT NULL,
	basis TEXT NOT NULL CHECK (basis IN ('creation', 'backfill')),
	recorded_at TIMESTAMPTZ
);
CREATE TABLE asset_provenance_parents (
	asset_id TEXT NOT NULL REFERENCES asset_provenance (asset_id),
	ordinal INTEGER NOT NULL,
	parent_asset_id TEXT NOT NULL,
	parent_sha256 TEXT,
	PRIMARY KEY (asset_id, ordinal)
);
CREATE INDEX asset_provenance_parents_parent ON asset_provenance_parents (parent_asset_id);

-- The backfill: every asset made before this migration gets a record from
-- what its rows say. The origin and creator come from the asset; a
-- generated asset's operation from generation_outputs, its model from the
-- operation's stored request and its provider from the operation's current
-- attempt (the one whose outputs were ingested); a sound output's
-- operation and parent (its input) from sound_outputs, with the parent's
-- content hash when the parent row is there. Nothing else is known and
-- nothing else is filled in.
INSERT INTO asset_provenance (asset_id, tenant_id, workspace_id, environment, origin, creator_user_id, provider, model,
	operation_id, output_sha256, basis, recorded_at)
SELECT a.id, a.tenant_id, a.workspace_id, a.environment, a.origin, NULLIF(a.created_by_user_id, ''),
	(SELECT NULLIF(ga.provider, '') FROM generation_outputs g
		JOIN generation_operations gop ON gop.id = g.operation_id
		JOIN generation_attempts ga ON ga.id = gop.current_attempt_id
		WHERE g.asset_id = a.id ORDER BY g.operation_id, g.slot LIMIT 1),
	(SELECT NULLIF(gop.request::jsonb ->> 'model', '') FROM generation_outputs g
		JOIN generation_operations gop ON gop.id = g.operation_id
		WHERE g.asset_id = a.id ORDER BY g.operation_id, g.slot LIMIT 1),
	COALESCE((SELECT g.operation_id FROM generation_outputs g WHERE g.asset_id = a.id ORDER BY g.operation_id, g.slot LIMIT 1),
		(SELECT s.operation_id FROM sound_outputs s WHERE s.asset_id = a.id ORDER BY s.operation_id, s.output LIMIT 1)),
	a.sha256, 'backfill', NULL
FROM assets a;

INSERT INTO asset_provenance_parents (asset_id, ordinal, parent_asset_id, parent_sha256)
SELECT s.asset_id, 0, s.parent_asset_id, p.sha256
FROM sound_outputs s LEFT JOIN assets p ON p.id = s.parent_asset_id
WHERE TRUE
ON CONFLICT (asset_id, ordinal) DO NOTHING;

-- license_offers: one row per license offer. An offer is never edited;
-- state moves active -> withdrawn by compare-and-set on version.
CREATE TABLE license_offers (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	asset_id TEXT NOT NULL REFERENCES assets (id),
	policy_id TEXT NOT NULL,
	policy_version INTEGER NOT NULL,
	terms_hash TEXT NOT NULL,
	name TEXT NOT NULL,
	kind TEXT NOT NULL CHECK (kind IN ('non_exclusive', 'exclusive')),
	state TEXT NOT NULL CHECK (state IN ('active', 'withdrawn')),
	version BIGINT NOT NULL,
	created_by_user_id TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX license_offers_scope ON license_offers (tenant_id, workspace_id, environment, id);
CREATE INDEX license_offers_asset ON license_offers (asset_id);
