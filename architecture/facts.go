package architecture

// Authority is a system that can be the authority of a fact.
type Authority string

// The systems a fact's authority can be.
const (
	// Database is the platform's own database: the fact is what its rows
	// say, written in the domain's units of work.
	Database Authority = "database"
	// Chain is the blockchain: the fact is what a confirmed (or, where the
	// flow asks, finalized) read of the cluster says; the database keeps
	// only what a verification observed.
	Chain Authority = "chain"
	// MusicProvider is the music generation provider running an attempt:
	// it alone knows how far its task went; the platform merges what it
	// reports (callback or poll) monotonically.
	MusicProvider Authority = "music_provider"
	// AIProvider is the AI model provider: it reports the units a call
	// consumed.
	AIProvider Authority = "ai_provider"
	// PaymentProvider is the card payment provider: payment and its
	// subscription's billing state are what it reports (webhook or
	// reconciliation read).
	PaymentProvider Authority = "payment_provider"
	// BlobStore is the blob store holding asset bytes; the database keeps
	// their digest, size and type.
	BlobStore Authority = "blob_store"
)

// Fact is one row of the authoritative-state matrix.
type Fact struct {
	// Fact names what is known, such as credit_balance.
	Fact string `json:"fact" example:"credit_balance"`
	// Authority is the system whose answer is the truth of the fact.
	Authority Authority `json:"authority" example:"database" enum:"database,chain,music_provider,ai_provider,payment_provider,blob_store"`
	// RecordedIn is where the platform keeps its own record of the fact:
	// the authority itself, or the database holding what was observed of
	// it.
	RecordedIn Authority `json:"recordedIn" example:"database" enum:"database,chain,music_provider,ai_provider,payment_provider,blob_store"`
	// Domain is the package path, inside the module, of the context that
	// owns the fact.
	Domain string `json:"domain" example:"ledger"`
	// Rule says how the platform keeps its record true to the authority.
	Rule string `json:"rule" example:"Double-entry movements in integer units, each keyed by a unique business reference."`
}

// Facts returns the authoritative-state matrix, built on each call.
func Facts() []Fact {
	return []Fact{
		{"credit_balance", Database, Database, "ledger",
			"The credits ledger: double-entry movements in integer units, each keyed by a unique business reference, so a reservation settles or releases once."},
		{"provider_cost", Database, Database, "ledger",
			"The provider-cost ledger, separate from customer credits; a provider's reported consumption beyond the expected cost raises PROVIDER_COST_DRIFT."},
		{"asset_bytes", BlobStore, BlobStore, "asset",
			"Bytes live in the blob store; the database keeps their SHA-256 digest, size and type, and a read checks the digest."},
		{"generation_status", MusicProvider, Database, "generation",
			"The provider reports its task's progress by callback or poll; one normalization path merges it monotonically along the operation's table, so a stale report never regresses it."},
		{"sound_operation_status", Database, Database, "sound",
			"The built-in engine runs from durable jobs; the operation's row is moved by its table only."},
		{"ai_usage", AIProvider, Database, "ai",
			"The provider reports the units a call consumed; credits are reserved before the call and settled once from that report."},
		{"payment_settlement", PaymentProvider, Database, "billing",
			"A checkout is paid when the payment provider says so (signed webhook or reconciliation read); the platform never marks it paid on a client's word."},
		{"subscription_state", PaymentProvider, Database, "billing",
			"The provider's subscription events move the workspace's subscription along its table; entitlements follow the recorded state."},
		{"token_balances", Chain, Chain, "swap",
			"Balances are read from the chain when a quote needs them; an unavailable read is BALANCE_UNAVAILABLE, never zero."},
		{"token_deployment", Chain, Database, "token",
			"A configured mint is not verified: only a verification run that read the mint and passed every required check records it verified, with slot evidence."},
		{"transaction_settlement", Chain, Database, "chain/intent",
			"An intent settles once its transaction is confirmed on chain and its effects verified; submission is not settlement."},
		{"swap_settlement", Chain, Database, "swap",
			"A swap settles from the verified transaction's effects (signer, mints, amounts, fee), once per operation, then is reconciled."},
		{"order_settlement", Chain, Database, "marketplace",
			"An order is paid from its verified transaction intent; settlement writes financial-ledger entries and issues the entitlement once."},
		{"reward_funding", Chain, Database, "rewards",
			"A pool is FUNDED only after a reconciliation read the treasury's balance at finalized and found it covering the pool."},
		{"wallet_ownership", Database, Database, "chain/wallet",
			"A wallet is verified by its signature over a single-use challenge; connecting a wallet proves nothing."},
		{"entitlements", Database, Database, "access",
			"Entitlements are derived on the server from the plan, subscription and grants recorded; client-held flags are never authority."},
		{"license_entitlements", Database, Database, "marketplace",
			"A license entitlement is issued by a settled order and keeps the license version and terms hash it was sold under."},
		{"policy_versions", Database, Database, "policy",
			"Versions are immutable rows (id, integer version, content hash); outcomes record the version they applied."},
		{"project_status", Database, Database, "project",
			"Moved only along the project table by the status route, compare-and-set on the current status."},
	}
}
