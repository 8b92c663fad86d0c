package platform

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/action"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/anthropic"
	"github.com/creatormusic/platform/ai/openai"
	"github.com/creatormusic/platform/ai/task"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/creatorgraph"
	"github.com/creatormusic/platform/discover"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/sound/builtin"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/transport/openapi"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/evmrpc"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/zk"
	"github.com/creatormusic/platform/webhook"
)

// This file is the one list of the platform's domains: how each is built
// (build), the job kinds each runs (jobKinds), what each schedules when a
// host starts (schedule), and the services the route table serves
// (services), with the event catalogue and the feature flags they
// declare. Adding a domain adds one step to each list it takes part in,
// beside its own package, its file in transport/api, its store adapter
// and migrations, and its contract-suite group. The build steps below the
// lists turn the configuration into each domain's own.

// build builds every domain, in order: a step may use the domains before
// it. Each step's error names the configuration it refuses.
func (p *Platform) build(ctx context.Context, cfg Config) error {
	p.keys = apikey.New(cfg.Keys, p.keyring)
	for _, step := range []func() error{
		func() error { return p.startAccounts(cfg) },
		func() error { return p.startPlans(ctx, cfg) },
		func() error { return p.startAssets(cfg) },
		func() error { return p.seedFeatureFlags(ctx) },
		func() error { return p.startBilling(cfg) },
		func() error { return p.startProviders(cfg) },
		func() error { return p.startGeneration(ctx, cfg, p.providers, p.assets) },
		func() error { return p.startSound(p.assets) },
		func() error { return p.startToken(cfg.Chain) },
		func() error { return p.startIntents(ctx, cfg.Chain) },
		func() error { return p.startSwap(ctx, cfg.Chain) },
		func() error { return p.startSubmissions(cfg) },
		func() error { return p.startZK(cfg.ZK) },
		func() error { return p.startCCTP(cfg.Chain) },
		func() error { return p.startX402(cfg.Chain) },
		func() error { return p.startTools() },
		func() error { return p.startAI(ctx, cfg) },
		func() error { return p.startWebhooks(cfg) },
		func() error { return p.buildRealtime(cfg) },
		func() (err error) { p.arch, err = architectureModel(); return err },
		func() (err error) { p.policies, err = policyCatalogue(); return err },
		func() error { return p.startLeaderboard(ctx) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// schedule enqueues what the domains schedule when a host starts: every
// periodic kind's next run, the plan grants of this period and the next,
// and the token registry's and sales' verification of a changed
// configuration. Each is keyed, so hosts starting together enqueue once.
func (p *Platform) schedule(ctx context.Context, kinds []jobs.Kind, s jobs.RunFunc) error {
	if err := jobs.Schedule(ctx, kinds, s); err != nil {
		return fmt.Errorf("platform: schedule jobs: %w", err)
	}
	if err := p.schedulePlanGrants(ctx); err != nil {
		return err
	}
	if err := p.verify.ScheduleNew(ctx, s); err != nil {
		return fmt.Errorf("platform: schedule token verification: %w", err)
	}
	if err := p.swap.ScheduleNew(ctx, s); err != nil {
		return fmt.Errorf("platform: schedule swap registry verification: %w", err)
	}
	if err := p.cctp.ScheduleNew(ctx, s); err != nil {
		return fmt.Errorf("platform: schedule cross-chain readiness: %w", err)
	}
	if err := p.x402.ScheduleNew(ctx, s); err != nil {
		return fmt.Errorf("platform: schedule the payment-required protocol's check: %w", err)
	}
	return nil
}

// services are the domain services the route table serves.
func (p *Platform) services(units routeStore) api.Services {
	return api.Services{Keys: p.keys, Assets: p.assets, Health: p.healthChecks(), Plans: p.plans,
		Ledger: ledger.New(), Accounts: p.account, Billing: p.billing, Store: units, Log: p.log, Providers: p.providers,
		Generation: p.generation, Sound: p.sound, Token: p.token, Sale: p.sale, Wallet: p.wallet, Intents: p.intents,
		Swap: p.swap, Projects: project.New(), Submissions: p.submissions, Creators: creator.New(), Discover: discover.New(),
		CreatorGraph: creatorgraph.New(), ZK: p.zk, CCTP: p.cctp, Marketplace: p.market,
		Rewards: p.rewards, X402: p.x402, AI: p.ai, AICompletions: p.aiOps, AITasks: p.aiTasks, Tools: p.tools, Architecture: p.arch,
		Policies: p.policies, Releases: release.New(), Actions: p.actions(), Attribution: attribution.New(), Analytics: analytics.New(),
		Leaderboard: p.leaderboard, Webhooks: p.webhooks, Realtime: p.realtime, WakeFunc: p.wake}
}

// actions builds the action catalog over the chain payment path, the
// credit packs it prices, wallet verification, the rewards' claims and
// the swap registry; nil when the payment path is not built.
func (p *Platform) actions() *action.Service {
	if p.intents == nil {
		return nil
	}
	cfg := action.Config{Intents: p.intents, Packs: intent.PolicyPacks(store.Reader[intent.Store](p.db)),
		Wallets: wallet.Links{ReadFunc: store.Reader[wallet.LinkReader](p.db)}}
	if p.rewards != nil {
		cfg.Claims = p.rewards
	}
	if p.swap != nil {
		read := store.Reader[swap.Store](p.db)
		cfg.Swap = func(ctx context.Context, env access.Environment) (string, []string, error) {
			v, err := p.swap.Tokens(ctx, read(), env)
			if err != nil {
				return "", nil, err
			}
			var mints []string
			for _, t := range v.Tokens {
				if t.Executable {
					mints = append(mints, t.Mint)
				}
			}
			return v.Network, mints, nil
		}
	}
	svc, err := action.New(cfg)
	if err != nil {
		return nil
	}
	return svc
}

// startAI builds the AI control plane's registry and routing and seeds
// each environment's registry and routing policy from the configuration,
// one unit of work per environment (every host does it on start;
// seeding twice changes nothing, and hosts starting together converge).
// It seals the configured provider keys into the store, publishes the
// default credit pricing where an environment has none, and builds the
// completion path, whose adapters reach providers through the AI URL
// guard (Config.Outbound, Config.AllowLoopback).
func (p *Platform) startAI(ctx context.Context, cfg Config) error {
	ac := cfg.AI
	svc, err := ai.New(ai.Config{Environments: map[access.Environment]ai.Environment{access.Test: ac.Test, access.Live: ac.Live},
		Health: ac.Health})
	if err != nil {
		return fmt.Errorf("platform: Config.AI: %w", err)
	}
	pricing := ai.DefaultCreditPricing()
	if ac.Pricing != nil {
		pricing = *ac.Pricing
	}
	for env, keys := range map[access.Environment]ai.ProviderKeys{access.Test: ac.TestKeys, access.Live: ac.LiveKeys} {
		if err := svc.Seed(ctx, ai.RunFunc(store.Runner[ai.Store](p.db)), env); err != nil {
			return fmt.Errorf("platform: seed the %s AI registry: %w", env, err)
		}
		err := p.db.InTx(ctx, func(tx *store.Tx) error {
			if err := svc.SealKeys(ctx, tx, p.keyring, env, keys); err != nil {
				return err
			}
			return ai.SeedCreditPricing(ctx, tx, env, pricing)
		})
		if err != nil {
			return fmt.Errorf("platform: Config.AI (%s keys and pricing): %w", env, err)
		}
	}
	// The keys are sealed in the store: the platform keeps no plaintext.
	p.cfg.AI.TestKeys, p.cfg.AI.LiveKeys = nil, nil
	limits := ac.Limits
	guard, err := urlguard.New(cfg.Outbound.guardConfig(aiGuardConfig(cfg.AllowLoopback, ac.Limits)))
	if err != nil {
		return fmt.Errorf("platform: Config.AllowLoopback: %w", err)
	}
	client := guard.Client()
	ops, err := ai.NewCompletions(ai.CompletionConfig{Registry: svc, Ledger: ledger.New(), Sealer: p.keyring,
		ProviderFunc: func(pc ai.ProviderConfig, key string) (ai.Provider, error) {
			switch pc.Kind {
			case ai.KindAnthropic:
				return anthropic.New(anthropic.Config{BaseURL: pc.BaseURL, APIKey: key, HTTPClient: client})
			case ai.KindOpenAICompatible:
				return openai.New(openai.Config{BaseURL: pc.BaseURL, APIKey: key, HTTPClient: client})
			}
			return nil, fmt.Errorf("platform: provider %s speaks an unknown wire %q", pc.ID, pc.Kind)
		},
		BeginRunFunc:  ai.UnitFunc[ai.BeginStore](store.Runner[ai.BeginStore](p.db)),
		EndRunFunc:    ai.UnitFunc[ai.EndStore](store.Runner[ai.EndStore](p.db)),
		HealthRunFunc: ai.RunFunc(store.Runner[ai.Store](p.db)), ReadFunc: store.Reader[ai.ReadStore](p.db),
		Tools: toolsOf(ac.Tools, p.tools), Limits: limits, Logger: p.log})
	if err != nil {
		return fmt.Errorf("platform: Config.AI: %w", err)
	}
	tasks, err := task.New()
	if err != nil {
		return fmt.Errorf("platform: the AI tasks: %w", err)
	}
	p.ai, p.aiOps, p.aiTasks = svc, ops, tasks
	return nil
}

// toolsOf is the completion path's tool runner: the configured one, or
// the platform's AI tools (package ai/tool), which authorize each call
// as its direct route when it runs.
func toolsOf(configured ai.ToolRunner, r *tool.Runner) ai.ToolRunner {
	if configured != nil || r == nil {
		return configured
	}
	return catalogRunner{r}
}

// catalogRunner offers a tool.Runner's whole catalog to every caller:
// a call the caller may not make is refused when it runs, exactly as
// its direct route refuses it.
type catalogRunner struct{ *tool.Runner }

// Tools returns the catalog's functions.
func (c catalogRunner) Tools(context.Context, *access.Principal) ([]ai.Tool, error) {
	return c.Catalog().Functions(), nil
}

// aiGuardConfig is the URL policy of the AI provider adapters: https to
// public addresses only, and, on a host that lists loopback allowances
// (tests, the example host), plain http to exactly those; a whole
// exchange is bounded by the operations' longest duration.
func aiGuardConfig(allow []netip.AddrPort, l ai.Limits) urlguard.Config {
	d := ai.DefaultLimits().MaxDuration
	if l.MaxDuration > 0 {
		d = l.MaxDuration
	}
	return urlguard.Config{AllowHTTP: len(allow) > 0, AllowLoopback: allow, Timeout: d + 10*time.Second,
		ResponseHeaderTimeout: openai.DefaultIdleTimeout, MaxBodyBytes: openai.DefaultMaxResponseBytes}
}

// startTools builds the AI tools' runner over the project and generation
// services. Its authorizer refuses every call until New binds it to the
// gateway and the route table.
func (p *Platform) startTools() error {
	p.toolAuthz = &api.ToolAuthorizer{}
	cfg := tool.Config{Authorizer: p.toolAuthz, Projects: project.New(),
		RunFunc: tool.RunFunc(store.Runner[tool.Store](p.db)), ReadFunc: tool.ReadFunc(store.Reader[tool.ReadStore](p.db))}
	if p.generation != nil {
		cfg.Generations = p.generation
	}
	r, err := tool.New(cfg)
	if err != nil {
		return fmt.Errorf("platform: AI tools: %w", err)
	}
	p.tools = r
	return nil
}

// Tools returns the AI tools' runner: the completion path runs a model's
// tool calls through it (Runner.RunTool), under the caller's own
// authority, and an embedder or a test may too.
func (p *Platform) Tools() *tool.Runner { return p.tools }

// Principal returns the principal a credential stands for, resolved as
// the gateway resolves a request's: an API key (which acts in its own
// environment), or an access token or session cookie value acting in env
// ("" is live), with the workspace's authority version read with it. A
// credential the gateway would refuse is refused with the same error.
// An embedder that runs a model's tool calls in process (Tools) names
// the caller with it.
func (p *Platform) Principal(ctx context.Context, credential string, env access.Environment) (*access.Principal, error) {
	read := p.db.Read()
	if strings.HasPrefix(credential, apikey.TestPrefix) || strings.HasPrefix(credential, apikey.LivePrefix) {
		pr, rec, err := p.keys.Authenticate(ctx, read, credential)
		if err != nil {
			return nil, err
		}
		pr.AuthzVersion = rec.AuthzVersion
		return pr, nil
	}
	cred := account.Credential{Cookie: credential, Environment: env}
	if strings.HasPrefix(credential, account.AccessTokenPrefix) {
		cred = account.Credential{Token: credential, Environment: env}
	}
	pr, sa, err := (&account.Authenticator{Keys: p.keyring}).Authenticate(ctx, read, cred)
	if err != nil {
		return nil, err
	}
	pr.AuthzVersion = sa.AuthzVersion
	return pr, nil
}

// startLeaderboard builds the leaderboards over the read pool (the
// signals' counts) and a unit of work per snapshot, and publishes the
// default scoring policy where an environment has none (every host does
// it on start; publishing the same content again changes nothing). The
// periodic snapshot job is its kind (jobKinds), scheduled with the rest.
func (p *Platform) startLeaderboard(ctx context.Context) error {
	svc, err := leaderboard.New(leaderboard.Config{RunFunc: leaderboard.RunFunc(store.Runner[leaderboard.Store](p.db)),
		ReadFunc: store.Reader[leaderboard.SourceStore](p.db), Logger: p.log})
	if err != nil {
		return fmt.Errorf("platform: leaderboard: %w", err)
	}
	for _, env := range []access.Environment{access.Test, access.Live} {
		if err := svc.Seed(ctx, env); err != nil {
			return fmt.Errorf("platform: leaderboard scoring (%s): %w", env, err)
		}
	}
	p.leaderboard = svc
	return nil
}

// startWebhooks builds developer webhooks: endpoint URLs pass the
// webhook URL guard (https, public addresses; Config.Outbound and
// Config.AllowLoopback), endpoints subscribe to the event catalogue's
// types, signing secrets are sealed with the keyring, and the fan-out and
// delivery jobs run their units of work on the store.
func (p *Platform) startWebhooks(cfg Config) error {
	var types []string
	for _, e := range EventCatalogue() {
		types = append(types, e.Type)
	}
	svc, err := webhook.New(webhook.Config{Sealer: p.keyring, Guard: cfg.Outbound.guardConfig(webhook.GuardConfig(cfg.AllowLoopback)),
		EventTypes: types, Clock: p.db, DeliveryRunFunc: store.Runner[webhook.DeliveryStore](p.db),
		FanoutRunFunc: store.Runner[webhook.FanoutStore](p.db), WakeFunc: p.wake, Tuning: cfg.Webhooks, Logger: p.log})
	if err != nil {
		return fmt.Errorf("platform: webhooks: %w", err)
	}
	p.webhooks = svc
	return nil
}

// Webhooks returns the developer webhooks' service: an embedder or a test
// may run its fan-out (Service.Fanout) beside the periodic job.
func (p *Platform) Webhooks() *webhook.Service { return p.webhooks }

// startSubmissions builds projects' community submissions over the asset
// service, with the URL guard of submitted asset URLs (https only, the
// probe's bounds, Config.AllowLoopback and Config.Outbound).
func (p *Platform) startSubmissions(cfg Config) error {
	g, err := urlguard.New(cfg.Outbound.guardConfig(project.ProbeGuardConfig(cfg.AllowLoopback)))
	if err != nil {
		return fmt.Errorf("platform: Config.AllowLoopback: %w", err)
	}
	p.probes = g
	svc, err := project.NewSubmissions(project.SubmissionConfig{Assets: p.assets, Guard: g,
		ProbeRun: store.Runner[project.ProbeStore](p.db), ProbeReadFunc: store.Reader[project.ProbeStore](p.db)})
	if err != nil {
		return fmt.Errorf("platform: submissions: %w", err)
	}
	p.submissions = svc
	return nil
}

// startAccounts builds the account service.
func (p *Platform) startAccounts(cfg Config) error {
	accounts, err := account.New(account.Config{Keys: p.keyring, Mailer: cfg.Mailer, Passwords: cfg.Passwords, BaseURL: cfg.BaseURL,
		InsecureCookies: cfg.InsecureCookies, TrustProxy: cfg.TrustProxy, HashPool: cfg.PasswordHashing})
	if err != nil {
		return fmt.Errorf("platform: accounts: %w", err)
	}
	p.account = accounts
	return nil
}

// startProviders builds the music provider connections and credentials.
func (p *Platform) startProviders(cfg Config) error {
	providers, err := credential.New(credential.Config{Sealer: p.keyring, Providers: cfg.MusicProviders})
	if err != nil {
		return fmt.Errorf("platform: Config.MusicProviders: %w", err)
	}
	p.providers = providers
	return nil
}

// startAssets builds the asset service over the configured blob store.
func (p *Platform) startAssets(cfg Config) error {
	assets, err := assetService(cfg, p.plans)
	if err != nil {
		return err
	}
	p.assets = assets
	return nil
}

// startBilling builds the billing service on the plan service and the
// configured payment provider accounts.
func (p *Platform) startBilling(cfg Config) error {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = account.DefaultBaseURL
	}
	// The provider sends the browser back to the read-only checkout route:
	// it shows the checkout's state with the browser's session cookie and
	// never activates anything (only reconcile or a verified webhook does).
	back := base + "/api/v1/saas/checkout/{CHECKOUT_ID}?environment={ENVIRONMENT}"
	svc, err := billing.New(billing.Config{Plans: p.plans, Ledger: ledger.New(), Providers: cfg.Payments,
		SuccessURL: back, CancelURL: back, ProviderTimeout: cfg.PaymentTimeout})
	if err != nil {
		return fmt.Errorf("platform: billing: %w", err)
	}
	p.billing = svc
	return nil
}

// startToken builds the token registry, the token sale, wallet
// verification, and the registry's verification jobs, which verify the
// sales after it.
func (p *Platform) startToken(cfg ChainConfig) error {
	envs := map[access.Environment]token.Environment{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		te := token.Environment{Config: e.Token}
		if e.Client != nil {
			te.Chain = e.Client
		}
		envs[env] = te
	}
	svc, err := token.New(token.ServiceConfig{Environments: envs, Clock: p.db})
	if err != nil {
		return fmt.Errorf("platform: token registry: %w", err)
	}
	p.token = svc
	sales := map[access.Environment]sale.EnvConfig{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		sc := e.Sale
		sc.Chain = nil
		if e.Client != nil {
			sc.Chain = e.Client
		}
		sales[env] = sc
	}
	// The handoff links' signing key is derived from the master secret
	// under its own label, like every other key of the platform.
	hk, err := hkdf.Key(sha256.New, p.cfg.SecretKey, nil, "platform/sale-handoff/v1", 32)
	if err != nil {
		return fmt.Errorf("platform: token sale: derive the handoff key: %w", err)
	}
	ss, err := sale.New(sale.Config{Environments: sales, Clock: p.db, HandoffKey: hk})
	if err != nil {
		return fmt.Errorf("platform: token sale: %w", err)
	}
	p.sale = ss
	// Wallet verification needs no cluster; a challenge names the
	// environment's cluster kind as its Chain ID where one is configured.
	clusters := map[access.Environment]chain.Cluster{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		if e.Client != nil {
			clusters[env] = p.token.Config(env).Cluster
		}
	}
	ws, err := wallet.New(wallet.Config{BaseURL: p.cfg.BaseURL, Clusters: clusters, Clock: p.db})
	if err != nil {
		return fmt.Errorf("platform: wallet verification: %w", err)
	}
	p.wallet = ws
	p.verify = token.Verification{Registry: p.token, Dependent: p.saleRuns(), Every: cfg.VerifyEvery, Logger: p.log,
		RunFunc: store.Runner[token.Store](p.db), ReadFunc: store.Reader[token.Store](p.db)}
	return nil
}

// saleRuns verifies the sales after the registry and stores their runs.
func (p *Platform) saleRuns() sale.Dependent {
	return sale.Dependent{Sales: p.sale, RunFunc: store.Runner[sale.Store](p.db)}
}

// startGeneration builds the generation service and publishes the default
// pricing where an environment has none.
func (p *Platform) startGeneration(ctx context.Context, cfg Config, providers *credential.Service, assets *asset.Service) error {
	g := cfg.Generation
	base := g.CallbackBaseURL
	if base == "" {
		base = cfg.BaseURL
	}
	if base == "" {
		base = account.DefaultBaseURL
	}
	tuning := g.Tuning
	media, err := urlguard.New(cfg.Outbound.guardConfig(generation.MediaGuardConfig(cfg.AllowLoopback)))
	if err != nil {
		return fmt.Errorf("platform: Config.AllowLoopback: %w", err)
	}
	p.media = media
	// Media URLs come from providers' callbacks and polls: every fetch goes
	// through the media guard, also with a Fetcher a test tuned.
	switch f := tuning.Fetcher; {
	case f == nil:
		tuning.Fetcher = &generation.Fetcher{Guard: media}
	case f.Guard == nil:
		c := *f
		c.Guard = media
		tuning.Fetcher = &c
	}
	if tuning.AcceptsInFlight == 0 && p.db.Dialect() == store.SQLite {
		// The single writer runs units of work in arrival order already;
		// holding accepts back would only shrink its group commits.
		tuning.AcceptsInFlight = -1
	}
	svc, err := operation.New(operation.Config{
		Credentials: providers, Ledger: ledger.New(), Assets: assets, Digester: p.keyring,
		// Each path's unit of work is one transaction of the store, which
		// implements every port.
		DispatchRunFunc: store.Runner[operation.DispatchStore](p.db),
		AnswerRunFunc:   store.Runner[operation.AnswerStore](p.db),
		TrackRunFunc:    store.Runner[operation.TrackStore](p.db),
		IngestRunFunc:   store.Runner[operation.IngestStore](p.db),
		ReadFunc:        store.Reader[operation.PoolReader](p.db), CallbackBase: strings.TrimRight(base, "/"),
		Tuning: tuning, Hook: g.Hook,
	})
	if err != nil {
		return fmt.Errorf("platform: generation: %w", err)
	}
	pricing := g.Pricing
	if pricing.Models == nil {
		pricing = operation.DefaultPricing()
	}
	for _, env := range []access.Environment{access.Test, access.Live} {
		if err := p.db.InTx(ctx, func(tx *store.Tx) error { return operation.SeedPricing(ctx, tx, env, pricing) }); err != nil {
			return fmt.Errorf("platform: generation pricing (%s): %w", env, err)
		}
	}
	p.generation = svc
	return nil
}

// wake wakes the job workers after a commit that enqueued work.
func (p *Platform) wake() {
	if p.pool != nil {
		p.pool.Notify()
	}
}

// startIntents builds the chain payment path over the environments that
// configure a cluster and a treasury: the credit_purchase purpose, priced
// by each environment's credits.packs policy (published at start) and
// settled by a ledger grant, and wallet verification's links.
func (p *Platform) startIntents(ctx context.Context, cfg ChainConfig) error {
	read := store.Reader[intent.Store](p.db)
	reg := intent.NewRegistry()
	if err := reg.Register(intent.CreditPurchase(intent.PolicyPacks(read), intent.SettleCredits, intent.CreditSettlement)); err != nil {
		return fmt.Errorf("platform: intents: %w", err)
	}
	orders, err := marketplace.NewOrders(marketplace.OrdersConfig{ReadFunc: store.Reader[marketplace.OrderStore](p.db),
		StoreFunc: marketUnit})
	if err != nil {
		return fmt.Errorf("platform: marketplace orders: %w", err)
	}
	if err := reg.Register(orders.Purpose()); err != nil {
		return fmt.Errorf("platform: intents: %w", err)
	}
	envs, err := intentEnvironments(cfg)
	if err != nil {
		return err
	}
	// References are derived under their own label of the master secret.
	key, err := hkdf.Key(sha256.New, p.cfg.SecretKey, nil, "platform/intent-reference/v1", 32)
	if err != nil {
		return fmt.Errorf("platform: intents: derive the reference key: %w", err)
	}
	svc, err := intent.New(intent.Config{Registry: reg, Environments: envs, Clock: p.db, ReferenceKey: key,
		Run: store.Runner[intent.Store](p.db), ReadFunc: read, SweepEvery: cfg.SweepEvery, WakeFunc: p.wake, Logger: p.log,
		Wallets: wallet.Links{ReadFunc: store.Reader[wallet.LinkReader](p.db)}})
	if err != nil {
		return fmt.Errorf("platform: intents: %w", err)
	}
	if err := svc.SeedCreditPacks(ctx); err != nil {
		return fmt.Errorf("platform: %w", err)
	}
	p.intents = svc
	// Listings read their mint from the cluster as intents do, and their
	// payout wallet from wallet verification's links.
	p.market = marketplace.New(marketplace.Config{Mints: svc, Wallets: wallet.Links{ReadFunc: store.Reader[wallet.LinkReader](p.db)}})
	// Challenge pools read their mint the same way; their payouts are
	// intents of purpose reward_claim, paid by each environment's reward
	// treasury.
	treasuries := map[access.Environment]rewards.Environment{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		if e.Client != nil && e.RewardSigner != nil {
			treasuries[env] = rewards.Environment{Client: e.Client, Signer: e.RewardSigner}
		}
	}
	p.rewards = rewards.New(rewards.Config{Mints: svc, Environments: treasuries, Intents: svc,
		Wallets: wallet.Links{ReadFunc: store.Reader[wallet.LinkReader](p.db)}, ReadFunc: store.Reader[rewards.RewardReader](p.db),
		Run: rewards.RunFunc(store.Runner[rewards.FundingStore](p.db))})
	if err := reg.Register(p.rewards.Purpose(rewardsUnit)); err != nil {
		return fmt.Errorf("platform: intents: %w", err)
	}
	return nil
}

// rewardsUnit is the payout's port of an intent's unit of work: the
// store's transaction implements both, so a payout's writes commit with
// its intent's.
func rewardsUnit(st intent.Store) (rewards.PayoutStore, error) {
	rs, ok := st.(rewards.PayoutStore)
	if !ok {
		return nil, fmt.Errorf("platform: the intent unit of work %T holds no rewards store", st)
	}
	return rs, nil
}

// marketUnit is the marketplace's ports of an intent's unit of work: the
// store's transaction implements both, so an order's writes commit with
// its intent's.
func marketUnit(st intent.Store) (marketplace.OrderStore, error) {
	ms, ok := st.(marketplace.OrderStore)
	if !ok {
		return nil, fmt.Errorf("platform: the intent unit of work %T holds no marketplace store", st)
	}
	return ms, nil
}

// startSwap builds the swap domain over each environment's cluster and
// publishes its configured registry, settings and fee policy.
func (p *Platform) startSwap(ctx context.Context, cfg ChainConfig) error {
	envs := map[access.Environment]swap.Environment{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		se := swap.Environment{Routes: e.Swap.Routes, Registry: e.Swap.Registry, Settings: e.Swap.Settings,
			FeeRecipient: e.Swap.FeeRecipient, SwapPrograms: e.Swap.SwapPrograms}
		if e.Client != nil {
			se.Chain = e.Client
		}
		envs[env] = se
	}
	svc, err := swap.New(swap.Config{Environments: envs, Clock: p.db, Run: store.Runner[swap.Store](p.db),
		SubmitRun: store.Runner[swap.SubmitStore](p.db), SubmitReadFunc: store.Reader[swap.SubmitStore](p.db),
		Wallets:  wallet.Links{ReadFunc: store.Reader[wallet.LinkReader](p.db)},
		ReadFunc: store.Reader[swap.Store](p.db)})
	if err != nil {
		return fmt.Errorf("platform: swap: %w", err)
	}
	if err := svc.Publish(ctx); err != nil {
		return fmt.Errorf("platform: %w", err)
	}
	p.swap = svc
	return nil
}

// startZK builds proof verification over each environment's pinned
// circuits, reading the intents proofs are bound to through the intent
// service (as their owner reads them).
func (p *Platform) startZK(cfg ZKConfig) error {
	svc, err := zk.New(zk.Config{Intents: p.intents,
		Environments: map[access.Environment]zk.Environment{access.Test: cfg.Test, access.Live: cfg.Live}})
	if err != nil {
		return fmt.Errorf("platform: Config.ZK: %w", err)
	}
	p.zk = svc
	return nil
}

// startCCTP builds cross-chain transfers over the environments that
// configure them, each minting on the environment's own cluster.
func (p *Platform) startCCTP(cfg ChainConfig) error {
	envs := map[access.Environment]cctp.Environment{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		if e.CCTP == nil {
			continue
		}
		if e.Client == nil {
			return fmt.Errorf("platform: %s cross-chain transfers need the environment's cluster (ChainEnvironment.Client)", env)
		}
		ce := *e.CCTP
		ce.Solana = e.Client
		envs[env] = ce
	}
	svc, err := cctp.New(cctp.Config{Environments: envs, Recovery: evmrpc.Recovery{}, Clock: p.db, Run: store.Runner[cctp.Store](p.db)})
	if err != nil {
		return fmt.Errorf("platform: %w", err)
	}
	p.cctp = svc
	return nil
}

// startX402 builds the payment-required protocol over the environments
// that configure resources: each on its cluster, with the local
// facilitator over it and the configured fee payer, or the configured
// remote facilitator. Memos are bound under their own label of the master
// secret.
func (p *Platform) startX402(cfg ChainConfig) error {
	envs := map[access.Environment]x402.Environment{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		xe := e.X402
		if len(xe.Resources) == 0 {
			continue
		}
		if e.Client == nil {
			return fmt.Errorf("platform: x402 (%s): resources need the environment's cluster", env)
		}
		asset, err := token2022.ParsePublicKey(xe.Asset)
		if err != nil {
			return fmt.Errorf("platform: x402 (%s) asset: %w", env, err)
		}
		payTo := xe.PayTo
		if payTo == "" {
			payTo = e.Treasury
		}
		to, err := token2022.ParsePublicKey(payTo)
		if err != nil {
			return fmt.Errorf("platform: x402 (%s) payTo (or the treasury): %w", env, err)
		}
		fac := xe.Facilitator
		if fac == nil {
			if xe.FeePayer == nil {
				return fmt.Errorf("platform: x402 (%s): a fee payer or a remote facilitator is required", env)
			}
			if fac, err = x402.NewLocal(x402.LocalConfig{Chain: e.Client, Signer: xe.FeePayer, PollInterval: cfg.X402.PollInterval}); err != nil {
				return fmt.Errorf("platform: x402 (%s): %w", env, err)
			}
		}
		envs[env] = x402.Environment{Chain: e.Client, Facilitator: fac, PayTo: to, Asset: asset, Decimals: xe.Decimals,
			Resources: xe.Resources, MaxTimeoutSeconds: xe.MaxTimeoutSeconds}
	}
	key, err := hkdf.Key(sha256.New, p.cfg.SecretKey, nil, "platform/x402-memo/v1", 32)
	if err != nil {
		return fmt.Errorf("platform: x402: derive the memo key: %w", err)
	}
	svc, err := x402.New(x402.Config{Environments: envs, Clock: p.db, Run: store.Runner[x402.Store](p.db),
		ReadFunc: store.Reader[x402.Store](p.db), MemoKey: key, BaseURL: p.cfg.BaseURL, SettleTimeout: cfg.X402.SettleTimeout,
		WatchEvery: cfg.X402.WatchEvery, CheckEvery: cfg.X402.CheckEvery, WakeFunc: p.wake, Logger: p.log})
	if err != nil {
		return fmt.Errorf("platform: x402: %w", err)
	}
	p.x402 = svc
	return nil
}

// intentEnvironments are the environments that take intents: those whose
// configuration has a cluster and a treasury, with their credit packs
// (or the registry's mint to price the default packs in).
func intentEnvironments(cfg ChainConfig) (map[access.Environment]intent.Environment, error) {
	envs := map[access.Environment]intent.Environment{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		if e.Client == nil || e.Treasury == "" {
			continue
		}
		treasury, err := token2022.ParsePublicKey(e.Treasury)
		if err != nil {
			return nil, fmt.Errorf("platform: intents: %s treasury: %w", env, err)
		}
		ie := intent.Environment{Client: e.Client, Treasury: treasury, CreditPacks: e.CreditPacks}
		if e.CreditPacks == nil && e.Token.Mint != "" {
			if ie.PackMint, err = token2022.ParsePublicKey(e.Token.Mint); err != nil {
				return nil, fmt.Errorf("platform: credit packs: %w", err)
			}
		}
		envs[env] = ie
	}
	return envs, nil
}

// startSound builds the sound engine service on the asset service, with
// the built-in engine (package sound/builtin) and each plan's input
// duration bound (plan.Limits.SoundMaxDuration).
func (p *Platform) startSound(assets *asset.Service) error {
	svc, err := sound.New(sound.Config{Assets: assets, Engine: builtin.Engine{},
		Run: store.Runner[sound.Store](p.db), ReadFunc: store.Reader[sound.Store](p.db),
		MaxInputDurationFunc: func(plan string) time.Duration { return p.plans.Limits(plan).SoundMaxDuration }})
	if err != nil {
		return fmt.Errorf("platform: sound: %w", err)
	}
	p.sound = svc
	return nil
}

// startPlans keeps the plan service New built from the catalog and seeds
// the catalog (idempotent; every host does it on start).
func (p *Platform) startPlans(ctx context.Context, cfg Config) error {
	svc, err := plan.New(cfg.Plans)
	if err != nil {
		return fmt.Errorf("platform: Config.Plans: %w", err)
	}
	p.plans = svc
	if err := p.db.InTx(ctx, func(tx *store.Tx) error { _, err := svc.Seed(ctx, tx); return err }); err != nil {
		return fmt.Errorf("platform: seed plans: %w", err)
	}
	return nil
}

// schedulePlanGrants enqueues the grant scheduler of this period and the
// next (once per period across every host).
func (p *Platform) schedulePlanGrants(ctx context.Context) error {
	if err := p.db.InTx(ctx, func(tx *store.Tx) error { return p.plans.EnsureSchedule(ctx, tx) }); err != nil {
		return fmt.Errorf("platform: schedule plan grants: %w", err)
	}
	return nil
}

// assetService builds the asset service on Config.Blobs, or on a filesystem
// blob store at Config.BlobDir. One of them is required: a route that exists
// must be able to store what it accepts. Storage quotas are the plan
// catalog's (plan.Limits.StorageQuotaBytes of the plan in effect).
func assetService(cfg Config, plans *plan.Service) (*asset.Service, error) {
	blobs := cfg.Blobs
	if blobs == nil {
		if cfg.BlobDir == "" {
			return nil, errors.New("platform: Config.BlobDir or Config.Blobs is required (where uploaded media is stored)")
		}
		fs, err := fsblob.New(cfg.BlobDir)
		if err != nil {
			return nil, fmt.Errorf("platform: Config.BlobDir: %w", err)
		}
		blobs = fs
	}
	svc, err := asset.New(asset.Config{Blobs: blobs, MaxUploadBytes: cfg.MaxUploadBytes, Logger: cfg.Logger,
		QuotaFunc: func(p string) int64 { return plans.Limits(p).StorageQuotaBytes }})
	if err != nil {
		return nil, fmt.Errorf("platform: assets: %w", err)
	}
	return svc, nil
}

// jobKinds are the job kinds of every domain, each in the class its
// domain declares.
func (p *Platform) jobKinds() []jobs.Kind {
	return slices.Concat(
		p.plans.Jobs(store.Runner[plan.Store](p.db), p.billing.PlanGranter(store.Runner[billing.GrantStore](p.db))),
		p.billing.Jobs(store.PairRunner[billing.EventStore, plan.Store](p.db)),
		p.generation.Jobs(),
		p.sound.Jobs(),
		p.verify.Jobs(),
		p.intents.Jobs(),
		p.swap.Jobs(),
		p.cctp.Jobs(),
		p.x402.Jobs(),
		idempotency.Jobs(store.Runner[idempotency.PruneStore](p.db)),
		p.assets.Jobs(),
		p.submissions.Jobs(),
		p.aiOps.Jobs(),
		p.leaderboard.Jobs(),
		p.webhooks.Jobs(),
	)
}

// jobClassChecks observe each job class's queue for the health route: the
// age of its oldest runnable job (available and due, or running under an
// expired lease, and not held back by its workspace's limit), read from
// the database, so it covers every host's workers. A class is up while
// that age is at most StarvedAfter, degraded past it and down past ten
// times it; a queue that cannot be read is down.
func (p *Platform) jobClassChecks() []api.HealthCheck {
	starved := p.cfg.Jobs.StarvedAfter
	if starved == 0 {
		starved = defaultStarvedAfter
	}
	var checks []api.HealthCheck
	for _, c := range p.pool.Classes() {
		checks = append(checks, api.HealthCheck{Name: "jobs." + c.Name, CheckFunc: func(ctx context.Context) api.ServiceHealth {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			h := api.ServiceHealth{Status: api.StatusUp, CheckedAt: p.db.Now()}
			b, err := p.db.Jobs().JobBacklog(ctx, jobs.BacklogParams{Kinds: c.Kinds, GroupLimit: c.GroupLimit})
			if err != nil {
				h.Status, h.Detail = api.StatusDown, "the job queue could not be read"
				return h
			}
			age, runnable := int64(b.Age/time.Second), int64(b.Runnable)
			h.OldestJobAgeSeconds, h.RunnableJobs = &age, &runnable
			switch {
			case b.Age > starvedDownFactor*starved:
				h.Status = api.StatusDown
			case b.Age > starved:
				h.Status = api.StatusDegraded
			}
			if h.Status != api.StatusUp {
				h.Detail = fmt.Sprintf("the oldest runnable %s job has waited %s (starved after %s)", c.Name, b.Age.Truncate(time.Second), starved)
			}
			return h
		}})
	}
	return checks
}

// EventCatalogue returns every outbox event type the platform writes, with
// its payload's schema version and the aggregate its aggregateId names,
// built on each call from the emitting domains' own constants where they
// export them. The OpenAPI document lists it (info.description, Events;
// x-event-catalogue; the enum of the outbox event's type), and two tests
// keep it whole: platformtest checks every event a test system wrote
// against it (type, schema version, aggregate id prefix), and
// TestEventCatalogueNamesEveryEmitter fails when an OutboxInsert call
// appears outside the emitters listed there.
func EventCatalogue() []openapi.EventType {
	row := func(typ, aggregate, prefix, when string) openapi.EventType {
		return openapi.EventType{Type: typ, SchemaVersion: 1, Aggregate: aggregate, AggregateIDPrefix: prefix, Description: when}
	}
	const (
		key   = "API key"
		op    = "generation operation"
		snd   = "sound operation"
		sub   = "workspace subscription"
		mov   = "ledger movement"
		txi   = "transaction intent"
		keyID = "key_"
	)
	out := []openapi.EventType{
		// apikey.Service.emit: "api_key." and the past tense of the key's
		// state machine event (apikey.Moves), or created.
		row("api_key.created", key, keyID, "A key was created (by a developer, or by the host's operator for the internal scope)."),
		row("api_key.updated", key, keyID, "A key's name, scopes, metadata or limits changed."),
		row("api_key.rotated", key, keyID, "A key's secret was rotated; the old secret works until the overlap ends."),
		row("api_key.revoked", key, keyID, "A key was revoked and no longer authenticates."),
		row("api_key.deleted", key, keyID, "A key was deleted."),
		row(genop.EventAccepted, op, genop.IDPrefix, "A generation operation was accepted (queued); payload.billingMode and payload.creditsReserved say how it is paid."),
		row(genop.EventCompleted, op, genop.IDPrefix, "A generation operation completed; its outputs are assets and its credits are settled."),
		row(genop.EventFailed, op, genop.IDPrefix, "A generation operation failed; payload.failureCode says why and its credits are released."),
		row(genop.EventCancelled, op, genop.IDPrefix, "A generation operation was cancelled by its owner."),
		row(genop.EventExpired, op, genop.IDPrefix, "A generation operation passed its deadline."),
		row(genop.EventCostDrift, op, genop.IDPrefix, "A provider's reported cost of an attempt differs from the expected cost by more than the configured drift."),
		row(sound.EventCompleted, snd, sound.IDPrefix, "A sound operation completed."),
		// project's events: created, each status move, each member change.
		row(project.EventCreated, "project", project.IDPrefix, "A project was created (in DRAFT)."),
		row(project.EventStatusChanged, "project", project.IDPrefix, "A project's status moved one step along its table; payload.from and payload.status say from where to where."),
		// project's submission event: created, and each review move.
		row(project.EventSubmissionCreated, "submission", project.SubmissionIDPrefix, "A submission was made to a project (moved from DRAFT to SUBMITTED); payload.projectId names the project."),
		row(project.EventSubmissionReviewed, "submission", project.SubmissionIDPrefix, "A review moved a submission's status along its table; payload.from and payload.status say from where to where."),
		row(project.EventMemberChanged, "project", project.IDPrefix, "A member's role on a project was set, replaced or removed; payload.userId, payload.template (null when removed) and payload.previousTemplate (null when new). The aggregate version is the workspace's authority version after the change."),
		// marketplace's event: an offer made, and withdrawn.
		row(marketplace.EventLicenseOffered, "license offer", marketplace.OfferPrefix, "A license offer was made on an asset under a rights policy version (payload.rightsPolicy: id, version, hash)."),
		row(marketplace.EventLicenseWithdrawn, "license offer", marketplace.OfferPrefix, "A license offer was withdrawn; licenses issued under it keep their terms."),
		// marketplace's listings and the entitlements orders issue.
		row(marketplace.EventListingPublished, "listing", marketplace.ListingPrefix, "A listing version was published: the first, or one superseding the listing's previous version (aggregate version: the listing version)."),
		row(marketplace.EventEntitlementIssued, "license entitlement", marketplace.EntitlementPrefix, "A settled order issued its buyer's license entitlement to the asset (payload.orderId, payload.terms)."),
		row(ledger.EventMovementPosted, mov, "mov_", "A ledger movement was posted (credits, financial, rewards or provider cost)."),
		row(billing.EventSubscriptionActivated, sub, "sub_", "A checkout's subscription became active."),
		row(billing.EventSubscriptionRenewed, sub, "sub_", "A subscription started its next period."),
		row(billing.EventSubscriptionChanged, sub, "sub_", "A subscription changed state (cancel scheduled, past due, ended)."),
	}
	// intent.Service.changed: one type per state an intent is written in.
	for _, s := range intent.States() {
		out = append(out, row(intent.EventType(s), txi, "txi_", "A transaction intent was written in state "+string(s)+"."))
	}
	// marketplace's orders: one type per state an order is written in.
	for _, st := range marketplace.OrderStates() {
		out = append(out, row(marketplace.OrderEventType(st), "marketplace order", marketplace.OrderPrefix,
			"A marketplace order was written in state "+string(st)+"."))
	}
	// release's event: created, and each status move.
	out = append(out,
		row(release.EventCreated, "release", release.IDPrefix, "A release was created (in DRAFT); payload.targetType and payload.targetId name the asset or project."),
		row(release.EventStatusChanged, "release", release.IDPrefix, "A release's status moved along its table; payload.from and payload.status say from where to where."))
	// rewards: a challenge created, its status moved, its pool's funding
	// moved; one type per state a reward is written in.
	out = append(out,
		row(rewards.EventChallengeCreated, "challenge", rewards.ChallengePrefix, "A challenge was created (DRAFT), its reward pool ANNOUNCED."),
		row(rewards.EventChallengeStatusChanged, "challenge", rewards.ChallengePrefix, "A challenge's status moved one step along its table; payload.from and payload.status say from where to where."),
		row(rewards.EventFundingChanged, "challenge", rewards.ChallengePrefix, "A challenge pool's funding status moved (payload.from, payload.fundingStatus); a reconciliation's move carries payload.evidence: the treasury account, slot, balance and what was required at finalized."))
	for _, st := range rewards.States() {
		out = append(out, row(rewards.RewardEventType(st), "reward", rewards.RewardPrefix, "A reward was written in state "+string(st)+"."))
	}
	// creatorgraph's relationEvent: a declared relation's state change.
	out = append(out, row(creatorgraph.EventType(creatorgraph.StateActive), "creator relation", creatorgraph.IDPrefix,
		"A creator declared a relation about themselves (follows), or made a withdrawn one active again."),
		row(creatorgraph.EventType(creatorgraph.StateRemoved), "creator relation", creatorgraph.IDPrefix,
			"A creator withdrew a relation they had declared."))
	// attribution's event: a touch recorded.
	out = append(out, row(attribution.EventRecorded, "attribution", attribution.IDPrefix,
		"A signed-in user's attribution touch was recorded; payload.first says whether it created the record (the first touch), "+
			"payload.touchCount, source, medium and campaign describe it (never the referrer or the landing path)."))
	// zk's Record: one type, when a statement is first verified.
	out = append(out, row(zk.EventVerified, "zk verification", zk.IDPrefix,
		"A zero-knowledge proof bound to a transaction intent verified and its statement was recorded; it settles nothing."))
	// swap's changed: one type per state an operation is written in.
	for _, s := range swap.States() {
		out = append(out, row(swap.EventType(s), "swap operation", swap.OperationPrefix, "A swap operation was written in state "+string(s)+"."))
	}
	// ai's emit: a model changed by an administrator, a routing policy
	// version published.
	out = append(out,
		row(ai.EventModelUpdated, "AI model", ai.ModelAggregatePrefix, "An administrator changed a model of an environment's registry "+
			"(enabled, prices); payload.modelId names it. The aggregate id is ai_model: and the model id, at the model's version."),
		row(ai.EventRoutingPublished, "AI routing policy", ai.PolicyRouting, "A new version of an environment's routing policy was "+
			"published; payload.version, payload.hash and payload.changedTasks (the tasks whose route it changed)."))
	// ai's operationEvent: one type per terminal state of an AI operation.
	for _, s := range ai.OperationStatuses() {
		if s.Terminal() {
			out = append(out, row(s.EventType(), "AI operation", ai.OperationIDPrefix, "An AI chat or completion operation ended "+string(s)+
				"; payload.operationId, status, task, model, provider, creditsReserved, creditsSettled, usageSource and, when it did "+
				"not complete, failureCode."))
		}
	}
	// ai/tool's emit: each move of an AI artifact.
	out = append(out,
		row(tool.EventTypeDrafted, "AI artifact", tool.IDPrefix, "A model's call of a mutating tool made a draft for its caller; "+
			"payload.tool, payload.operationId and payload.toolCallId say which."),
		row(tool.EventTypeApproved, "AI artifact", tool.IDPrefix, "The caller confirmed a draft; it is applied in the same transaction."),
		row(tool.EventTypeApplied, "AI artifact", tool.IDPrefix, "The owning domain applied a confirmed draft; payload.result (type, id) names what it made."),
		row(tool.EventTypeRejected, "AI artifact", tool.IDPrefix, "The caller declined a draft; it is never applied."))
	// web3/cctp's changed: one type per state a transfer is written in.
	for _, s := range cctp.States() {
		out = append(out, row(cctp.EventType(s), "cross-chain transfer", cctp.IDPrefix, "A cross-chain transfer was written in state "+string(s)+"."))
	}
	// x402's changed: one type per state a payment settlement is written
	// in; Consume: a grant spent.
	for _, s := range x402.States() {
		out = append(out, row(x402.EventType(s), "payment settlement", x402.SettlementPrefix,
			"A payment-required protocol settlement was written in state "+string(s)+"."))
	}
	out = append(out, row(x402.EventGrantConsumed, "payment grant", x402.GrantPrefix,
		"A grant bought with a payment was spent; payload.usedBy says on what."))
	// webhook's emitEvent: an endpoint's changes, the platform disabling
	// it, and a test event.
	const whe = "webhook endpoint"
	out = append(out,
		row(webhook.EventTypeCreated, whe, webhook.EndpointPrefix, "A webhook endpoint was created; payload.enabledEvents."),
		row(webhook.EventTypeUpdated, whe, webhook.EndpointPrefix, "A webhook endpoint's URL, enabled events, description or "+
			"enabled flag changed; payload.changed names the fields."),
		row(webhook.EventTypeDeleted, whe, webhook.EndpointPrefix, "A webhook endpoint was deleted."),
		row(webhook.EventTypeSecretRotated, whe, webhook.EndpointPrefix, "A webhook endpoint's signing secret was rotated; "+
			"payload.previousSecretExpiresAt is when the old one stops signing (null: at once)."),
		row(webhook.EventTypeDisabled, whe, webhook.EndpointPrefix, "The platform disabled a webhook endpoint: payload.reason "+
			"failing (a delivery, payload.deliveryId of payload.eventId, failed for its whole retry window with no delivery "+
			"succeeding meanwhile) or gone (the receiver answered 410 Gone)."),
		row(webhook.EventTypeTest, whe, webhook.EndpointPrefix, "A test event of a webhook endpoint, delivered to that "+
			"endpoint alone (POST /api/v1/webhook-endpoints/{endpointId}/test)."))
	return out
}

// FeatureFlag is one feature flag a route of the platform declares
// (transport.Policy.Feature): its name, its platform default and what it
// turns on.
type FeatureFlag struct {
	Name    string
	Default bool
	Doc     string
}

// FeatureFlags lists the platform's feature flags. New seeds each default
// once (an operator's later choice survives restarts); SetFeatureFlag
// changes one for a workspace or the platform. A flag with no row is off.
func FeatureFlags() []FeatureFlag {
	return []FeatureFlag{
		{Name: genop.FeatureGenerate, Default: true, Doc: "starting music generations"},
		{Name: sound.FeatureEngine, Default: true, Doc: "starting sound engine operations"},
		{Name: swap.FeatureSwap, Default: true, Doc: "starting token swaps (quotes)"},
		{Name: cctp.FeatureCCTP, Default: true, Doc: "starting cross-chain transfers (CCTP)"},
		{Name: marketplace.FeatureMarketplace, Default: true, Doc: "publishing rights policies, offering licenses and listing them for sale"},
		{Name: x402.FeaturePayments, Default: true, Doc: "verifying and settling payments of the payment-required protocol"},
	}
}

// seedFeatureFlags writes the platform default of every flag that has none.
func (p *Platform) seedFeatureFlags(ctx context.Context) error {
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		for _, f := range FeatureFlags() {
			if err := tx.FlagDefault(ctx, f.Name, f.Default); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("platform: seed feature flags: %w", err)
	}
	return nil
}

// checkFeatures refuses a route table whose routes declare a feature flag
// FeatureFlags does not list: such a flag would never be seeded, and a
// flag with no row is off, so the route would answer FEATURE_DISABLED to
// everyone.
func checkFeatures(routes []api.Route) error {
	for _, rt := range routes {
		f := rt.Policy.Feature
		if f != "" && !slices.ContainsFunc(FeatureFlags(), func(x FeatureFlag) bool { return x.Name == f }) {
			return fmt.Errorf("platform: route %s declares feature flag %q, which FeatureFlags does not list", rt.OperationID, f)
		}
	}
	return nil
}

// callbackSkewer is a provider adapter that states its callback timestamp
// window (generation/providera and generation/providerb clients).
type callbackSkewer interface {
	CallbackSkew() time.Duration
}

// callbackWindows returns the callback timestamp windows of the configured
// music provider adapters, test environment first, providers in id order.
func callbackWindows(p credential.Providers) []openapi.CallbackWindow {
	var out []openapi.CallbackWindow
	for _, env := range []struct {
		name     string
		adapters credential.Adapters
	}{{string(access.Test), p.Test}, {string(access.Live), p.Live}} {
		for _, id := range slices.Sorted(maps.Keys(env.adapters)) {
			if s, ok := env.adapters[id].(callbackSkewer); ok {
				out = append(out, openapi.CallbackWindow{Provider: string(id), Environment: env.name, Skew: s.CallbackSkew()})
			}
		}
	}
	return out
}

func (p *Platform) healthChecks() []api.HealthCheck {
	return append([]api.HealthCheck{
		{Name: "database", CheckFunc: func(ctx context.Context) api.ServiceHealth {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			h := api.ServiceHealth{Status: api.StatusUp, CheckedAt: p.db.Now()}
			if err := p.db.Ping(ctx); err != nil {
				h.Status, h.Detail = api.StatusDown, "the database did not answer"
			}
			return h
		}},
		{Name: "jobs", CheckFunc: func(ctx context.Context) api.ServiceHealth {
			h := api.ServiceHealth{Status: api.StatusUp, CheckedAt: p.db.Now()}
			ph := p.pool.Health()
			switch {
			case p.cfg.Jobs.Disabled:
				h.Status, h.Detail = api.StatusDown, "the job worker is disabled on this host"
			case !ph.Running:
				h.Status, h.Detail = api.StatusDown, "the job worker is stopped"
			case ph.LastPollError != "":
				h.Status, h.Detail = api.StatusDegraded, "the job worker's last claim failed"
			}
			return h
		}},
	}, p.jobClassChecks()...)
}
