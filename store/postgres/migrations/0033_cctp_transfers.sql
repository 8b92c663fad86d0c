-- Cross-chain transfers (package web3/cctp): one row per transfer of a
-- tenant, workspace, environment and user, moving only along the package's
-- state table by compare-and-set on version. A burn (source domain,
-- transaction hash, log index) and a mint signature each belong to one
-- transfer of an environment. Amounts are atomic USDC. Evidence rows are
-- append-only, numbered per transfer: what each step read and how it
-- judged it. Readiness runs
-- prove an environment's configuration, identified by its hash.

CREATE TABLE cctp_transfers (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	user_id TEXT NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('CREATED', 'SOURCE_VERIFIED', 'ATTESTATION_PENDING', 'ATTESTED',
		'DESTINATION_VERIFIED', 'COMPLETED', 'REQUIRES_REVIEW')),
	amount NUMERIC(39,0) NOT NULL CHECK (amount > 0),
	source_domain BIGINT NOT NULL,
	destination_domain BIGINT NOT NULL,
	mint_recipient TEXT NOT NULL,
	burn_tx_hash TEXT NOT NULL DEFAULT '',
	burn_log_index BIGINT NOT NULL DEFAULT 0,
	burn_block BIGINT NOT NULL DEFAULT 0,
	depositor TEXT NOT NULL DEFAULT '',
	max_fee NUMERIC(39,0) NOT NULL DEFAULT 0,
	min_finality_threshold BIGINT NOT NULL DEFAULT 0,
	source_message BYTEA,
	message BYTEA,
	attestation BYTEA,
	message_hash TEXT NOT NULL DEFAULT '',
	nonce TEXT NOT NULL DEFAULT '',
	fee_executed NUMERIC(39,0) NOT NULL DEFAULT 0,
	finality_threshold_executed BIGINT NOT NULL DEFAULT 0,
	mint_signature TEXT NOT NULL DEFAULT '',
	mint_slot BIGINT NOT NULL DEFAULT 0,
	review_reason TEXT NOT NULL DEFAULT '',
	version BIGINT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX cctp_transfers_owner ON cctp_transfers (tenant_id, workspace_id, environment, user_id, id);
CREATE UNIQUE INDEX cctp_transfers_burn ON cctp_transfers (environment, source_domain, burn_tx_hash, burn_log_index)
	WHERE burn_tx_hash <> '';
CREATE UNIQUE INDEX cctp_transfers_mint ON cctp_transfers (environment, mint_signature) WHERE mint_signature <> '';

CREATE TABLE cctp_evidence (
	id TEXT PRIMARY KEY,
	transfer_id TEXT NOT NULL REFERENCES cctp_transfers (id),
	seq BIGINT NOT NULL,
	step TEXT NOT NULL CHECK (step IN ('source', 'attestation', 'destination', 'reconcile')),
	outcome TEXT NOT NULL,
	reference TEXT NOT NULL,
	checks TEXT NOT NULL,
	observed_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX cctp_evidence_transfer ON cctp_evidence (transfer_id, seq);

CREATE TABLE cctp_readiness (
	id TEXT PRIMARY KEY,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	config_hash TEXT NOT NULL,
	passed BOOLEAN NOT NULL,
	unreadable BOOLEAN NOT NULL,
	error TEXT NOT NULL,
	checks TEXT NOT NULL,
	checked_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX cctp_readiness_latest ON cctp_readiness (environment, config_hash, checked_at, id);
