-- Version 27 stores the network side of each submitted swap transaction
-- (chain/relay's Submission): the exact signed bytes the relay sends, its
-- blockhash and last valid block height, and how far the chain has taken
-- it. One per operation; a signature belongs to one submission.
CREATE TABLE swap_submissions (
	operation_id TEXT PRIMARY KEY REFERENCES swap_operations (id),
	network TEXT NOT NULL,
	signature TEXT NOT NULL UNIQUE,
	wire BLOB NOT NULL,
	blockhash TEXT NOT NULL,
	last_valid_block_height BIGINT NOT NULL,
	state TEXT NOT NULL,
	send_attempts INTEGER NOT NULL,
	last_error TEXT NOT NULL DEFAULT '',
	chain_error TEXT NOT NULL DEFAULT '',
	slot BIGINT NOT NULL DEFAULT 0,
	updated_at TIMESTAMP NOT NULL
);
