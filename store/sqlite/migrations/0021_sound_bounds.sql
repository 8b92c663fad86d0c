-- Storage quota and bounded sound operations (plan limits).
--
-- asset_storage counts the bytes of every asset of a workspace in one
-- environment, each record in full (identical content stored once still
-- counts per record). An upload or sound output adds its size in the unit
-- of work that inserts its row, under the quota of the plan in effect, so
-- two concurrent uploads serialize on the counter row and cannot both pass
-- the quota. Existing assets are counted here.
CREATE TABLE asset_storage (
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL,
	bytes BIGINT NOT NULL CHECK (bytes >= 0),
	PRIMARY KEY (workspace_id, environment)
);
INSERT INTO asset_storage (tenant_id, workspace_id, environment, bytes)
	SELECT MIN(tenant_id), workspace_id, environment, SUM(size_bytes) FROM assets GROUP BY workspace_id, environment;

-- plan_id is the plan in effect when the operation was accepted (its
-- storage quota applies to the outputs); failure_details is the client-safe
-- details object (JSON) of the error that failed it, such as the limit it
-- passed.
ALTER TABLE sound_operations ADD COLUMN plan_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sound_operations ADD COLUMN failure_details TEXT;
