package transport

// ContractVersion is the overall contract version (spec, Versioning).
const ContractVersion = "1.0.0"

// The tags of the spec's sixteen functional areas. Route tables use these
// constants; the names are short and stable because clients and generated
// SDKs group operations by them.
const (
	TagIdentity        = "Identity"
	TagAccount         = "Account"
	TagDeveloper       = "Developer"
	TagMusicGeneration = "Music Generation"
	TagSoundEngine     = "Sound Engine"
	TagAI              = "AI Control Plane"
	TagProjects        = "Projects"
	TagChallenges      = "Challenges and Rewards"
	TagMarketplace     = "Rights and Marketplace"
	TagWallet          = "Wallet and Transactions"
	TagSwap            = "Swap"
	TagWeb3            = "Web3 Adapters"
	TagTokenRegistry   = "Token Registry"
	TagTokenSale       = "Token Sale"
	TagArchitecture    = "Architecture"
	TagTooling         = "Tooling"
)

// TagInfo describes one functional area: its tag, what it covers and the
// contract version of its part of the API (spec, Versioning).
type TagInfo struct {
	// Name is the tag operations carry.
	Name string
	// Description says what the area covers.
	Description string
	// ContractVersion is the area's contract version, as "1.2.0".
	ContractVersion string
}

// Tags returns the sixteen functional areas in the spec's order.
func Tags() []TagInfo {
	return []TagInfo{
		{TagIdentity, "Identity and access: session context, route and resource access decisions, workspace and subscription projection.", ContractVersion},
		{TagAccount, "Account and SaaS: signup, login, onboarding, plans, checkout, subscriptions, administration.", ContractVersion},
		{TagDeveloper, "Developer: API keys, limits, usage, provider connections.", ContractVersion},
		{TagMusicGeneration, "Music generation: provider-independent asynchronous generation with credit accounting.", "1.3.0"},
		{TagSoundEngine, "Sound engine: asynchronous audio analysis, stems, mastering and enhancement under /api/v1/sound.", "1.2.0"},
		{TagAI, "AI control plane: model registry, routing, chat and completion, usage.", ContractVersion},
		{TagProjects, "Projects: AI blueprint, project lifecycle, community submissions and review.", ContractVersion},
		{TagChallenges, "Challenges and rewards: challenge lifecycle, reward funding, allocation, claims.", ContractVersion},
		{TagMarketplace, "Rights and marketplace: rights policies, licenses, listings, orders, entitlements.", ContractVersion},
		{TagWallet, "Wallet and transactions: wallet verification, transaction intents, submission, chain reconciliation.", ContractVersion},
		{TagSwap, "Swap: trusted tokens, quotes, intents, submission, verification, settlement.", ContractVersion},
		{TagWeb3, "Web3 adapters: chain payment requests, cross-chain transfers, payment-required protocol, ZK verification.", ContractVersion},
		{TagTokenRegistry, "Token registry: token metadata, deployment, verification, status, supply (token policy 1.0.0).", "1.0.0"},
		{TagTokenSale, "Token sale: planned sale projection, verification projection, market status.", ContractVersion},
		{TagArchitecture, "Architecture: features, actions, releases, policies, discovery, ledgers, outbox (architecture model 2.1).", "2.1.0"},
		{TagTooling, "Tooling: machine-readable contract, interactive docs, client collection.", ContractVersion},
	}
}
