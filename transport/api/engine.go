package api

import (
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/action"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/creatorgraph"
	"github.com/creatormusic/platform/discover"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/zk"
	"github.com/creatormusic/platform/webhook"
)

// Tx is the unit of work a handler runs in: the engine's (transport.Tx)
// and every domain port a handler hands it to. The host's store
// implements it; a handler passes c.Tx to a domain service as that
// domain's own port and never calls a store method itself.
type Tx interface {
	transport.Tx
	account.SignupStore
	account.LoginStore
	account.SessionAdmin
	account.HandoffStore
	account.ResetMailStore
	account.ResetStore
	account.InviteStore
	account.AdminStore
	account.AuditReader
	account.OnboardingStore
	ai.Store
	ai.EndStore
	ai.OperationReader
	tool.ReadStore
	tool.ApplyStore
	apikey.Store
	asset.Store
	attribution.Store
	analytics.ReadStore
	billing.CheckoutPreparer
	billing.CheckoutWriter
	billing.CheckoutReader
	billing.SubscriptionReader
	billing.OverviewReader
	billing.FeeStore
	billing.ActivateStore
	billing.CancelStore
	billing.WebhookStore
	creator.Store
	creatorgraph.Store
	discover.Store
	credential.Store
	credential.ObservationReader
	intent.Store
	leaderboard.ReadStore
	ledger.Store
	marketplace.Store
	marketplace.ListingStore
	marketplace.ReadStore
	marketplace.OrderReader
	outbox.Store
	operation.AcceptStore
	operation.CancelStore
	operation.PlanReader
	operation.Reader
	plan.Reader
	plan.Store
	policy.Store
	project.Store
	project.SubmitStore
	project.MemberStore
	release.Store
	action.Store
	rewards.ChallengeLister
	rewards.ChallengeStore
	rewards.FundingReader
	rewards.FundingStore
	rewards.RewardLister
	rewards.AllocationStore
	rewards.ClaimReader
	rewards.ClaimStore
	rewards.TreasuryReader
	sale.Store
	sound.Store
	swap.Store
	swap.SubmitStore
	token.Store
	wallet.Store
	zk.Store
	cctp.Store
	x402.Store
	webhook.Store
}

// Route, Call, Policy and HandlerFunc are the engine's types instantiated
// with the route table's unit of work.
type (
	Route       = transport.Route[Tx]
	Call        = transport.Call[Tx]
	Policy      = transport.Policy[Tx]
	HandlerFunc = transport.HandlerFunc[Tx]
)
