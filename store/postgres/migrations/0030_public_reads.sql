-- Public reads across tenants. The community listing reads the public
-- projects of every tenant in one environment, newest first
-- (projects_public); a creator's list reads one owner's public projects
-- and the profile counts them (projects_public_owner); a creator is found
-- by wallet address in any tenant, where the (tenant_id, network, address)
-- key cannot serve (wallet_links_address). Queries name visibility =
-- 'public' literally, so both databases use the partial indexes.

CREATE INDEX projects_public ON projects (environment, id) WHERE visibility = 'public';
CREATE INDEX projects_public_owner ON projects (owner_user_id, environment, id) WHERE visibility = 'public';
CREATE INDEX wallet_links_address ON wallet_links (network, address, verified_at);
