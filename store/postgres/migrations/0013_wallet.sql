-- Wallet verification (chain.md §6): Sign-In With Solana challenges.
--
-- wallet_challenges holds each challenge a signed-in user asked for: the
-- account and session that asked, the address that must sign, the
-- purpose, the exact message (the nonce and the id, its Request ID, are
-- inside it), its lifetime, the failed attempts and the outcome. A
-- challenge is PENDING until a verification consumes it (VERIFIED) or its
-- last allowed failure does (EXHAUSTED); consumed_at is set then, once,
-- by a compare-and-set on consumed_at IS NULL. Signatures are never
-- stored. Verified wallets go to wallet_links (0001).
CREATE TABLE wallet_challenges (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	user_id TEXT NOT NULL REFERENCES users (id),
	session_id TEXT NOT NULL DEFAULT '',
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	address TEXT NOT NULL,
	purpose TEXT NOT NULL,
	message TEXT NOT NULL,
	nonce TEXT NOT NULL UNIQUE,
	issued_at TIMESTAMPTZ NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	status TEXT NOT NULL CHECK (status IN ('PENDING', 'VERIFIED', 'EXHAUSTED')),
	consumed_at TIMESTAMPTZ
);
CREATE INDEX wallet_challenges_user ON wallet_challenges (tenant_id, user_id, issued_at);
