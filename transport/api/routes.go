package api

import (
	"log/slog"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/action"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/task"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/architecture"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/creatorgraph"
	"github.com/creatormusic/platform/discover"
	"github.com/creatormusic/platform/generation/credential"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/zk"
	"github.com/creatormusic/platform/webhook"
)

// Services are the domain services the route table serves.
type Services struct {
	// Keys manages developer API keys.
	Keys *apikey.Service
	// Health observes the platform's services for /api/v1/health/services.
	Health []HealthCheck
	// Assets stores and serves media assets.
	Assets *asset.Service
	// Plans serves the plan catalog.
	Plans *plan.Service
	// Ledger reads the credits, financial and rewards ledgers.
	Ledger *ledger.Service
	// Accounts runs signup, login, sessions, onboarding and administration.
	Accounts *account.Service
	// Billing runs checkout, subscriptions and the fee policy; nil leaves
	// those routes out.
	Billing *billing.Service
	// Providers manages provider connections and customer provider keys;
	// nil leaves those routes out.
	Providers *credential.Service
	// Generation runs music generation operations; nil leaves those routes
	// out.
	Generation *genop.Service
	// Sound runs sound engine operations; nil leaves those routes out.
	Sound *sound.Service
	// Token is the token registry; nil leaves the token and chain status
	// routes out.
	Token *token.Service
	// Sale is the token sale; nil leaves its routes out.
	Sale *sale.Service
	// Wallet verifies wallets; nil leaves its routes out.
	Wallet *wallet.Service
	// Swap is the swap domain; nil leaves its routes out.
	Swap *swap.Service
	// Intents runs the chain payment path; nil leaves its routes out.
	Intents *intent.Service
	// Projects runs projects; nil leaves their routes out.
	Projects *project.Service
	// Submissions runs projects' community submissions; nil leaves their
	// routes out.
	Submissions *project.Submissions
	// Creators reads creator profiles by wallet; nil leaves their routes
	// out.
	Creators *creator.Service
	// Discover lists public projects, tracks and creators; nil leaves its
	// route out.
	Discover *discover.Service
	// CreatorGraph reads creator graphs and takes declared relations; nil
	// leaves its routes out.
	CreatorGraph *creatorgraph.Service
	// ZK verifies zero-knowledge proofs bound to transaction intents; nil
	// leaves its route out and zk_verification not available.
	ZK *zk.Service
	// CCTP runs cross-chain transfers; nil leaves their routes out and
	// reports the feature not_available.
	CCTP *cctp.Service
	// Marketplace runs rights policies, license offers, listings and the
	// reads of provenance, orders and entitlements; nil leaves their
	// routes out, and asset content to licensees.
	Marketplace *marketplace.Service
	// Actions runs the action catalog, preflight and hand-off; nil
	// leaves their routes out.
	Actions *action.Service
	// Releases runs releases to external distribution; nil leaves their
	// routes out.
	Releases *release.Service
	// Attribution records where signed-in users came from; nil leaves
	// its route out.
	Attribution *attribution.Service
	// Analytics answers product analytics; nil leaves its route out.
	Analytics *analytics.Service
	// Rewards runs challenges, reward funding, allocation and claims;
	// nil leaves their routes out.
	Rewards *rewards.Service
	// AI runs the AI control plane's model registry and routing; nil
	// leaves those routes out.
	AI *ai.Service
	// AICompletions runs AI chat and task completions with credits; nil
	// leaves those routes out.
	AICompletions *ai.Completions
	// AITasks runs the structured tasks (music brief, lyrics, prompt
	// enhance, project analyze, project blueprint) on AICompletions; nil
	// leaves their routes out.
	AITasks *task.Service
	// Tools runs the AI tools and their artifacts; nil leaves the tool
	// catalog and artifact routes out.
	Tools *tool.Runner
	// X402 runs the payment-required protocol; nil leaves its routes
	// out, and a sound analysis then takes no payment grant.
	X402 *x402.Service
	// Architecture is the architecture model; nil leaves its route out.
	Architecture *architecture.Model
	// Policies is the catalogue of the policies the platform knows; nil
	// leaves the policy routes out.
	Policies *architecture.Policies
	// Leaderboard explains a caller's leaderboard position; nil leaves
	// its route out.
	Leaderboard *leaderboard.Service
	// Webhooks runs developer webhook endpoints and their deliveries; nil
	// leaves their routes out.
	Webhooks *webhook.Service
	// Realtime serves the realtime endpoint, GET /ws/v1; nil leaves it
	// out.
	Realtime *Realtime
	// WakeFunc, when set, wakes the job workers after a commit that enqueued
	// work (a generation accepted, a callback merged).
	WakeFunc func()
	// Store runs the units of work of routes that ask a provider first
	// (reconcile, cancel) and of the payment webhook receiver.
	Store transport.Store[Tx]
	// Log receives failures of raw receivers.
	Log *slog.Logger
}

// Routes is the route table of the /api/v1 surface built so far. Routes
// of the spec that are not built yet are absent (404 ROUTE_NOT_FOUND),
// never stubs.
func Routes(s Services) []Route {
	var rs []Route
	rs = append(rs, identityRoutes(s.Accounts, s.Billing, s.Ledger)...)
	rs = append(rs, keyRoutes(s.Keys)...)
	rs = append(rs, opsRoutes(s.Health)...)
	rs = append(rs, assetRoutes(s.Assets, s.Marketplace)...)
	rs = append(rs, planRoutes(s.Plans)...)
	rs = append(rs, ledgerRoutes(s.Ledger)...)
	rs = append(rs, authRoutes(s.Accounts)...)
	rs = append(rs, onboardingRoutes(s.Accounts, s.Plans)...)
	rs = append(rs, adminRoutes(s.Accounts)...)
	rs = append(rs, billingRoutes(s.Billing, s.Accounts, s.Store, s.Log)...)
	rs = append(rs, feeRoutes(s.Billing)...)
	rs = append(rs, providerRoutes(s.Providers)...)
	rs = append(rs, generationRoutes(s.Generation, s.WakeFunc, s.Log)...)
	rs = append(rs, soundRoutes(s.Sound, s.X402)...)
	rs = append(rs, tokenRoutes(s.Token)...)
	cf := chainFeatures{wallet: s.Wallet != nil}
	if s.Intents != nil {
		cf.paymentsFunc = s.Intents.Configured
	}
	if s.ZK != nil {
		cf.zkFunc = s.ZK.Availability
	}
	if s.CCTP != nil {
		cf.crossChainFunc = cctpFeature(s.CCTP)
	}
	cf.paymentRequired = s.X402
	if s.Swap != nil {
		cf.swapFunc = swapFeature(s.Swap)
	}
	rs = append(rs, web3Routes(s.Token, cf, s.Store)...)
	rs = append(rs, featureRoutes(s, cf)...)
	rs = append(rs, walletRoutes(s.Wallet)...)
	rs = append(rs, intentRoutes(s.Intents)...)
	rs = append(rs, saleRoutes(s.Sale)...)
	rs = append(rs, swapRoutes(s.Swap)...)
	rs = append(rs, projectRoutes(s.Projects)...)
	rs = append(rs, submissionRoutes(s.Submissions, s.WakeFunc)...)
	rs = append(rs, creatorRoutes(s.Creators)...)
	rs = append(rs, zkRoutes(s.ZK)...)
	rs = append(rs, projectMemberRoutes(s.Projects)...)
	rs = append(rs, cctpRoutes(s.CCTP)...)
	rs = append(rs, marketplaceRoutes(s.Marketplace)...)
	rs = append(rs, aiRoutes(s.AI)...)
	rs = append(rs, aiOperationRoutes(s.AICompletions, s.Projects)...)
	rs = append(rs, aiTaskRoutes(s.AICompletions, s.AITasks, s.Projects)...)
	rs = append(rs, aiToolRoutes(s.Tools, s.WakeFunc)...)
	rs = append(rs, x402Routes(s.X402)...)
	rs = append(rs, marketplaceOrderRoutes(s.Marketplace)...)
	rs = append(rs, rewardsRoutes(s.Rewards)...)
	rs = append(rs, architectureRoutes(s.Architecture)...)
	rs = append(rs, policyRoutes(s.Policies)...)
	rs = append(rs, networkRoutes(s.Token)...)
	rs = append(rs, discoverRoutes(s.Discover)...)
	rs = append(rs, creatorGraphRoutes(s.CreatorGraph)...)
	rs = append(rs, releaseRoutes(s.Releases)...)
	rs = append(rs, actionRoutes(s.Actions, s.Store)...)
	rs = append(rs, attributionRoutes(s.Attribution)...)
	rs = append(rs, analyticsRoutes(s.Analytics)...)
	rs = append(rs, leaderboardRoutes(s.Leaderboard)...)
	rs = append(rs, webhookRoutes(s.Webhooks, s.WakeFunc)...)
	rs = append(rs, realtimeRoutes(s.Realtime)...)
	return rs
}
