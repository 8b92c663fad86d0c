package platform

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/creatormusic/platform/architecture"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/task"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/internal/secret"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/realtime"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/transport/openapi"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/zk"
	"github.com/creatormusic/platform/webhook"
)

// ContractVersion is the version of the public API contract.
const ContractVersion = "1.0.0"

// Config configures a Platform. Zero values take the documented defaults.
type Config struct {
	// Store is an opened, migrated store (store/sqlite.Open or
	// store/postgres.Open). Required. Close does not close it.
	Store *store.DB
	// SecretKey is the master secret (at least 32 random bytes) from which
	// the platform derives its sealing key and its digest pepper. Required.
	// Changing it invalidates every API key and sealed record.
	SecretKey []byte
	// Logger receives request logs and failures; nil discards them. No log
	// line carries a secret or a raw Authorization value.
	Logger *slog.Logger
	// IdempotencyRetention is how long idempotency records are kept. Zero
	// means 24 hours; less than 24 hours is an error.
	IdempotencyRetention time.Duration
	// Keys configures API keys (rotation overlap, default and maximum limits).
	Keys apikey.Config
	// Jobs configures the durable job worker pool.
	Jobs JobsConfig
	// SessionLimits bound the requests of sessions and session-bound access
	// tokens per user and per workspace, as an API key's limits bound the
	// key's; zero fields take the documented defaults (see
	// transport.SessionLimits). The OpenAPI document states them.
	SessionLimits transport.SessionLimits
	// UsageFlushInterval is how often request counts are flushed to the
	// database. Zero means 1 second.
	UsageFlushInterval time.Duration
	// AuthzCacheSize bounds the authority cache. Zero means 10,000 entries.
	AuthzCacheSize int
	// BlobDir is the directory where uploaded and generated media is stored,
	// content-addressed (asset/fsblob). Required unless Blobs is set.
	BlobDir string
	// Blobs, when set, stores media instead of a directory at BlobDir.
	Blobs asset.BlobStore
	// MaxUploadBytes bounds one asset upload. Zero means
	// asset.DefaultMaxUploadBytes (200 MiB).
	MaxUploadBytes int64
	// Plans is the plan catalog, seeded on every start; the zero value is
	// plan.DefaultCatalog (free, pro, studio; 10,000 test credits a month).
	Plans plan.Catalog
	// Mailer sends account mail (email verification, password reset,
	// notices). Required: account/smtpmail for production, account/filemail
	// for a host on one machine.
	Mailer account.Mailer
	// Passwords are the argon2id parameters of new password hashes; the zero
	// value means account.DefaultPasswordParams.
	Passwords account.PasswordParams
	// PasswordHashing bounds the concurrent password hashing of logins,
	// signups and resets; nil means a pool of the host's own sized to the
	// machine (account.HashPoolConfig). Hosts in one process may share one.
	PasswordHashing *account.HashPool
	// BaseURL is the web app's address that mailed links point to; empty
	// means account.DefaultBaseURL (http://127.0.0.1:8080).
	BaseURL string
	// InsecureCookies drops the Secure attribute of session cookies, for a
	// host served over plain HTTP on localhost only.
	InsecureCookies bool
	// Payments are the payment provider accounts per environment
	// (billing/stripepay clients; webhook secrets live inside them). An
	// environment without one answers its checkouts 503
	// PROVIDER_UNAVAILABLE. Checkout success and cancel pages are under
	// BaseURL (/billing/checkout/{id}).
	Payments billing.Providers
	// PaymentTimeout bounds one call to a payment provider; past it the
	// call fails with PROVIDER_TIMEOUT. Zero means 10 seconds.
	PaymentTimeout time.Duration
	// MusicProviders are the music provider adapters per environment
	// (generation/providera, generation/providerb clients; simulators for
	// test mode) and the platform-managed provider credentials. A provider
	// without an adapter in an environment is reported not configured there
	// and its credential routes answer 503 PROVIDER_UNAVAILABLE.
	MusicProviders credential.Providers
	// Generation configures music generation operations.
	Generation GenerationConfig
	// Chain configures each environment's Solana cluster and token
	// registry.
	Chain ChainConfig
	// ZK configures the verification of zero-knowledge proofs bound to
	// transaction intents in each environment.
	ZK ZKConfig
	// AI configures the AI control plane's providers, model registry and
	// routing in each environment.
	AI AIConfig
	// TrustProxy takes the client address (for login throttling and the
	// account routes' per-address limits) from the first X-Forwarded-For
	// entry; set it only behind a proxy that sets it.
	TrustProxy bool
	// AllowLoopback lists exact loopback addresses with their port
	// (127.0.0.1:8931, [::1]:8931) that the platform's own outbound fetches
	// (provider media named by callbacks and polls) may reach although
	// loopback, so that tests and the example host can serve media from
	// simulators listening on loopback. Only these exact addresses pass:
	// every other loopback, private, link-local or cloud metadata address
	// stays refused (package urlguard), and an entry that is not a loopback
	// address with a port fails New. Leave it empty in production.
	AllowLoopback []netip.AddrPort
	// Webhooks tunes developer webhooks (package webhook): endpoint and
	// delivery limits, the fan-out's period and window, and
	// AllowTestLoopback, which lets test-environment endpoints use a
	// loopback address (the example host's -webhook-allow-loopback; off in
	// production). Endpoint URLs pass the URL guard of Outbound and
	// AllowLoopback.
	Webhooks webhook.Tuning
	// Realtime configures the realtime endpoint, GET /ws/v1, and the feed
	// behind it.
	Realtime RealtimeConfig
	// Outbound tunes the URL guards of the platform's outbound fetches of
	// URLs someone else named: provider media (named by callbacks and
	// polls) and submitted asset URLs (package project, Probes). The zero
	// value is production's: the host's resolver and trusted roots.
	Outbound Outbound
}

// Outbound is what the platform's outbound URL guards (package urlguard)
// resolve host names with and trust in TLS. Tests set both, so that
// HTTPS servers on loopback answer for public-looking names their
// certificates cover (with the servers' exact addresses in
// AllowLoopback) and other names resolve to private addresses, with no
// real DNS; production leaves both nil. Neither widens the guard's
// policy: every address a name resolves to is judged as before.
type Outbound struct {
	// Resolver looks up host names; nil means net.DefaultResolver.
	Resolver urlguard.Resolver
	// RootCAs are the certificate authorities TLS trusts; nil means the
	// host's.
	RootCAs *x509.CertPool
}

// guardConfig returns cfg with the resolver and roots of o.
func (o Outbound) guardConfig(cfg urlguard.Config) urlguard.Config {
	cfg.Resolver, cfg.RootCAs = o.Resolver, o.RootCAs
	return cfg
}

// JobsConfig configures the job worker pool that New starts. The pool runs
// four job classes, each on its own workers so that none waits behind
// another's work (package jobs, ClassMoney and the others; each domain
// declares the class of its kinds): money (jobs that move or verify
// value), provider (music generation's provider work), audio (sound engine
// operations) and maintenance (housekeeping and sound operation expiry).
// The defaults suit a 2-core host.
type JobsConfig struct {
	// Disabled leaves the pool stopped (a host that only serves requests).
	// The health route still reports each class's queue, which other hosts
	// may be working.
	Disabled bool
	// Workers, when positive, is the worker budget of every class whose own
	// budget below is zero, to scale all classes at once. Zero keeps each
	// class's default.
	Workers int
	// MoneyWorkers is how many jobs of the money class run at once. Zero
	// means Workers, or 2.
	MoneyWorkers int
	// ProviderWorkers is how many jobs of the provider class run at once;
	// they mostly wait on providers. Zero means Workers, or 4.
	ProviderWorkers int
	// AudioWorkers is how many sound operations run at once on this host;
	// each keeps a core busy. Zero means Workers, or 2.
	AudioWorkers int
	// AudioPerWorkspace bounds how many sound operations of one workspace
	// (test and live together) run at once, over every host on the
	// database; the others wait in queued. Zero means 1.
	AudioPerWorkspace int
	// MaintenanceWorkers is how many maintenance jobs run at once. Zero
	// means Workers, or 2.
	MaintenanceWorkers int
	// OutboundWorkers is how many fetches of caller-named URLs (submission
	// probes) run at once; one workspace's run one at a time over every
	// host. Zero means Workers, or 2.
	OutboundWorkers int
	// StarvedAfter is how long a class's oldest runnable job may wait
	// before /api/v1/health/services reports the class degraded; past ten
	// times as long it reports it down. Zero means 1 minute.
	StarvedAfter time.Duration
	// Lease is how long a claim holds. Zero means 30 seconds.
	Lease time.Duration
	// PollInterval is how often an idle pool looks for jobs. Zero means 200ms.
	PollInterval time.Duration
	// FaultHookFunc is a test hook; see jobs.Config.FaultHookFunc.
	FaultHookFunc func(ctx context.Context, job jobs.Job, point string) error
}

// Platform is the whole system: the HTTP API, its store and its workers.
type Platform struct {
	cfg     Config
	db      *store.DB
	keyring *secret.Keyring
	keys    *apikey.Service
	account *account.Service
	// assets stores media; providers holds the music provider
	// connections and credentials.
	assets    *asset.Service
	providers *credential.Service
	plans     *plan.Service
	billing   *billing.Service
	// generation runs music generation operations.
	generation *operation.Service
	// sound runs sound engine operations.
	sound *sound.Service
	// token is the token registry; sale the token sale; verify runs
	// their verifications.
	token  *token.Service
	sale   *sale.Service
	verify token.Verification
	// wallet verifies wallets with Sign-In With Solana messages.
	wallet *wallet.Service
	// intents runs the chain payment path.
	intents *intent.Service
	// market runs the marketplace: rights, listings and the reads of
	// orders and entitlements (its orders are an intent purpose).
	market *marketplace.Service
	// rewards runs challenges, reward funding, allocation and claims.
	rewards *rewards.Service
	// swap runs token swaps.
	swap *swap.Service
	// x402 runs the payment-required protocol.
	x402 *x402.Service
	// zk verifies zero-knowledge proofs bound to intents.
	zk *zk.Service
	// cctp runs cross-chain transfers.
	cctp *cctp.Service
	// media is the urlguard policy of the platform's own fetches of
	// provider media; probes that of submitted asset URLs.
	media  *urlguard.Guard
	probes *urlguard.Guard
	// submissions runs projects' community submissions.
	submissions *project.Submissions
	// ai runs the AI control plane's model registry and routing; aiOps
	// its chat and task completions; aiTasks the structured tasks on them.
	ai      *ai.Service
	aiOps   *ai.Completions
	aiTasks *task.Service
	// webhooks runs developer webhook endpoints and their deliveries.
	webhooks *webhook.Service
	// arch is the architecture model the architecture route serves.
	arch *architecture.Model
	// policies is the catalogue of the policies the platform knows.
	policies *architecture.Policies
	pool     *jobs.Pool
	limiter  *transport.Limiter
	handler  http.Handler
	routes   []api.Route
	log      *slog.Logger

	// tools runs the AI tools' calls and artifacts; toolAuthz authorizes
	// them over the route table, bound once it is built.
	tools     *tool.Runner
	toolAuthz *api.ToolAuthorizer

	// leaderboard computes leaderboard snapshots and explains positions.
	leaderboard *leaderboard.Service
	// hub is the host's realtime feed; realtime its WebSocket endpoint.
	hub      *realtime.Hub
	realtime *api.Realtime

	stop      context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New builds the platform on cfg.Store and starts its background work (the
// job pool and the usage flusher). Call Close to stop them.
func New(ctx context.Context, cfg Config) (*Platform, error) {
	if cfg.Store == nil {
		return nil, errors.New("platform: Config.Store is required")
	}
	kr, err := secret.New(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("platform: Config.SecretKey: %w", err)
	}
	if cfg.IdempotencyRetention == 0 {
		cfg.IdempotencyRetention = idempotency.MinRetention
	}
	if cfg.IdempotencyRetention < idempotency.MinRetention {
		return nil, fmt.Errorf("platform: IdempotencyRetention must be at least %s", idempotency.MinRetention)
	}
	if err := cfg.SessionLimits.Validate(); err != nil {
		return nil, fmt.Errorf("platform: Config.SessionLimits: %w", err)
	}
	if cfg.UsageFlushInterval == 0 {
		cfg.UsageFlushInterval = time.Second
	}
	if cfg.AuthzCacheSize == 0 {
		cfg.AuthzCacheSize = 10_000
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Platform{cfg: cfg, db: cfg.Store, keyring: kr, log: log}
	p.limiter = transport.NewLimiter(p.db, cfg.SessionLimits)
	if err := p.build(ctx, cfg); err != nil {
		return nil, err
	}
	kinds := p.jobKinds()
	schedule := store.Runner[jobs.Scheduler](p.db)
	handlers, err := jobs.Handlers(kinds, schedule)
	if err != nil {
		return nil, fmt.Errorf("platform: jobs: %w", err)
	}
	classes, err := jobClasses(kinds, cfg.Jobs)
	if err != nil {
		return nil, err
	}
	pool, err := jobs.New(jobs.Config{
		Store: p.db.Jobs(), Handlers: handlers, Classes: classes,
		Lease: cfg.Jobs.Lease, PollInterval: cfg.Jobs.PollInterval,
		Logger: log, FaultHookFunc: cfg.Jobs.FaultHookFunc,
	})
	if err != nil {
		return nil, fmt.Errorf("platform: jobs: %w", err)
	}
	p.pool = pool

	units := routeStore{db: p.db, runFunc: store.Runner[api.Tx](p.db)}
	gw := &transport.Gateway[api.Tx]{
		DB: units, Keys: p.keys, Sessions: &account.Authenticator{Keys: kr}, Keyring: kr, Authz: access.NewCache(cfg.AuthzCacheSize),
		Limiter: p.limiter, Log: log, IdempotencyTTL: cfg.IdempotencyRetention,
		Offers: p.plans, FreshWindow: p.account.Config().FreshWindow,
	}
	api := api.Routes(p.services(units))
	if err := p.toolAuthz.Bind(gw, api, p.tools.Catalog()); err != nil {
		return nil, fmt.Errorf("platform: AI tools: %w", err)
	}
	if err := p.realtime.Bind(gw, api, p.market); err != nil {
		return nil, fmt.Errorf("platform: realtime: %w", err)
	}
	info := Info()
	info.IdempotencyRetention = cfg.IdempotencyRetention
	info.Callbacks = callbackWindows(cfg.MusicProviders)
	info.RateLimits = &openapi.RateLimits{Sessions: p.limiter.SessionLimits(), KeyDefaults: p.keys.DefaultLimits()}
	info.Realtime = p.realtime.Description()
	tooling, err := openapi.ToolingRoutes(api, info)
	if err != nil {
		return nil, fmt.Errorf("platform: tooling: %w", err)
	}
	p.routes = append(api, tooling...)
	if err := checkFeatures(p.routes); err != nil {
		return nil, err
	}
	h, err := transport.NewMux(p.routes, gw.Serve, log)
	if err != nil {
		return nil, fmt.Errorf("platform: routes: %w", err)
	}
	p.handler = h

	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.stop = cancel
	if !cfg.Jobs.Disabled {
		if err := p.schedule(ctx, kinds, schedule); err != nil {
			cancel()
			return nil, err
		}
		if err := pool.Start(bg); err != nil {
			cancel()
			return nil, fmt.Errorf("platform: start jobs: %w", err)
		}
	}
	p.startRealtime(bg)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.limiter.Run(bg, cfg.UsageFlushInterval, store.Runner[transport.UsageStore](p.db), store.Reader[transport.UsageStore](p.db), log)
	}()
	return p, nil
}

// Info describes the OpenAPI document: its title, version and
// description, and the event catalogue. New adds what the configuration
// decides: the idempotency retention, the providers' callback windows and
// the rate limits of keys, users and workspaces.
func Info() openapi.Info {
	return openapi.Info{
		Title:   "Creator Music Platform API",
		Version: ContractVersion,
		Description: "The HTTP API of the creator-music platform. Authenticate with Authorization: Bearer <API key> " +
			"(platform_test_... or platform_live_...). Test keys see only test objects and live keys only live ones. " +
			api.WebhookDescription(),
		Events: EventCatalogue(),
	}
}

// Handler returns the platform's HTTP handler: the API under /api/v1 and
// the tooling routes under /api/docs/ and /api/client-collection/.
func (p *Platform) Handler() http.Handler { return p.handler }

// Routes returns the route table the handler serves, internal receivers
// included. The OpenAPI document lists exactly its public entries.
func (p *Platform) Routes() []api.Route { return append([]api.Route(nil), p.routes...) }

// Close stops the job pool (waiting up to 10 seconds for running jobs),
// ends the realtime connections (1001 going away) and flushes usage
// counts. It does not close the store.
func (p *Platform) Close() error {
	p.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if !p.cfg.Jobs.Disabled {
			p.closeErr = p.pool.Stop(ctx)
		}
		_ = p.realtime.Close(ctx) // ends every connection with 1001 going away
		p.stop()
		p.wg.Wait()
		for _, g := range []*urlguard.Guard{p.media, p.probes} {
			if g != nil {
				g.CloseIdleConnections()
			}
		}
		if p.webhooks != nil {
			p.webhooks.Close()
		}
	})
	return p.closeErr
}

// routeStore runs the route table's units of work on the store: each
// transaction and the read pool as the route table's unit of work
// (api.Tx), which *store.Tx implements.
type routeStore struct {
	db *store.DB
	// runFunc is the store's unit of work (store.Runner[api.Tx]).
	runFunc func(ctx context.Context, fn func(st api.Tx) error) error
}

var _ api.Tx = (*store.Tx)(nil)

// InTx runs fn in one transaction.
func (s routeStore) InTx(ctx context.Context, fn func(api.Tx) error) error { return s.runFunc(ctx, fn) }

// Read returns the read pool.
func (s routeStore) Read() api.Tx { return s.db.Read() }

// ReadAhead returns the read pool with credential lookups that answer
// from memory, and their confirmation (store.DB.ReadAhead).
func (s routeStore) ReadAhead() (api.Tx, func(context.Context) (bool, error)) {
	tx, confirm := s.db.ReadAhead()
	return tx, confirm
}

// Now is the store's clock.
func (s routeStore) Now() time.Time { return s.db.Now() }

// ChainClient is what the platform asks of a Solana cluster: the token
// registry's reads, the chain payment path's sends and transaction reads,
// the swap domain's balance, blockhash and account reads (the token
// balance the sale's verification reads among them), the cross-chain
// transfers' mint reads, and what the payment-required protocol's local
// facilitator sends and reads. chain/solanarpc.Client satisfies it.
type ChainClient interface {
	token.ChainClient
	intent.ChainClient
	swap.ChainClient
	cctp.SolanaClient
	x402.ChainClient
}

// ChainConfig configures each environment's cluster and token registry.
// Each environment reads its own cluster: the token routes answer for the
// caller's environment (anonymous callers see live).
type ChainConfig struct {
	// Test and Live are the two environments' clusters and registries.
	Test, Live ChainEnvironment
	// VerifyEvery is the period of the registry's scheduled verification;
	// zero means one hour. A run also happens at start for a configuration
	// that has not been verified yet, and on demand (Platform.VerifyToken).
	VerifyEvery time.Duration
	// SweepEvery is the period of the chain payment sweep, which
	// reconciles every open transaction intent; zero means 5 seconds. A
	// submitted intent is also watched every second until it ends.
	SweepEvery time.Duration
	// X402 tunes the payment-required protocol's timings.
	X402 X402Tuning
}

// ChainEnvironment is one environment's cluster and registry.
type ChainEnvironment struct {
	// Client reads the cluster; nil means no cluster is configured (runs
	// record ERROR and the chain features report cluster_not_configured).
	Client ChainClient
	// Token is the registry's configuration; a zero value is
	// PRE_DEPLOYMENT.
	Token token.Config
	// Sale configures the token sales of the environment; its Chain is
	// set from Client.
	Sale sale.EnvConfig
	// Treasury is the wallet (base58) that chain payments of the
	// environment pay; with Client it enables transaction intents there.
	Treasury string
	// CreditPacks is the environment's credits.packs policy: published at
	// start as a new version whenever it differs from the current one.
	// nil means intent.DefaultCreditPacks priced in Token.Mint, published
	// only when the environment has no policy yet.
	CreditPacks *intent.CreditPacks
	// RewardSigner signs the environment's reward payouts: its address
	// is the reward treasury, whose Token-2022 accounts back challenge
	// pools and pay claims. nil leaves reward funding and claims not
	// configured (503). rewards.NewLocalSigner opens a key sealed at rest
	// (test mode, the example host); production backs the port with a KMS
	// or HSM. The platform never logs, returns or stores the key.
	RewardSigner rewards.TreasurySigner
	// Swap configures token swaps on the environment's cluster.
	Swap SwapEnvironment
	// CCTP configures cross-chain transfers (USDC from EVM chains to the
	// environment's cluster through CCTP V2); its Solana is set from
	// Client, which it needs. nil leaves them not configured: their routes
	// answer 503 and the capability says so.
	CCTP *cctp.Environment
	// X402 configures the payment-required protocol on the environment's
	// cluster.
	X402 X402Environment
}

// X402Environment is one environment's payment-required protocol
// (web3/x402): resources bought per use with a token payment on the
// environment's cluster. Without resources the protocol is not
// configured there and its routes answer 503 SERVICE_UNAVAILABLE.
type X402Environment struct {
	// Resources are the offers, each one use of its kind for an exact
	// amount of Asset.
	Resources []x402.Resource
	// Asset is the mint (base58) the resources are priced in; Decimals
	// its decimals, which the configuration's check compares with the
	// mint's.
	Asset    string
	Decimals uint8
	// PayTo is the wallet (base58) whose associated token account of
	// Asset receives the payments; empty means the environment's
	// Treasury.
	PayTo string
	// FeePayer signs as the local facilitator's fee payer
	// (x402.NewKeySigner over a key from the host's configuration). The
	// key stays in memory: the platform never returns, logs or stores it,
	// and the signer prints its address alone.
	FeePayer x402.Signer
	// Facilitator, when set, is a remote facilitator
	// (web3/x402/facilitator) that verifies and settles instead of the
	// local one; FeePayer is then unused.
	Facilitator x402.Facilitator
	// MaxTimeoutSeconds is the requirements' maxTimeoutSeconds; zero
	// means 60.
	MaxTimeoutSeconds int
}

// X402Tuning tunes the payment-required protocol's timings; zero values
// take the defaults of web3/x402.Config.
type X402Tuning struct {
	// SettleTimeout bounds how long a settle request waits for the
	// chain's confirmation (30 seconds).
	SettleTimeout time.Duration
	// WatchEvery spaces the watch of a settlement whose request did not
	// see its outcome (5 seconds).
	WatchEvery time.Duration
	// CheckEvery is the period of the configuration's check (one hour).
	CheckEvery time.Duration
	// PollInterval spaces the local facilitator's status reads while it
	// waits for confirmation (400ms).
	PollInterval time.Duration
}

// SwapEnvironment is one environment's swap configuration. With Client,
// the registry's mints are read from the environment's cluster.
type SwapEnvironment struct {
	// Routes is the route provider (swap/jupiter's Client); nil leaves
	// swaps SWAP_NOT_CONFIGURED.
	Routes swap.RouteProvider
	// Registry is published as the swap.tokens policy at start whenever
	// it differs from the current version; nil publishes nothing.
	Registry *swap.Registry
	// Settings is published as the swap.settings policy whenever it
	// differs; nil publishes swap.DefaultSettings only where none exists.
	Settings *swap.Settings
	// FeeRecipient is the wallet (base58) that receives the service fee,
	// published with it as the fees.swap policy.
	FeeRecipient string
	// SwapPrograms are the route provider's swap programs, allowed at a
	// swap transaction's top level beside the base programs (see
	// swap.Environment.SwapPrograms; Jupiter's is swap.JupiterV6ProgramID).
	SwapPrograms []chain.Address
}

// ZKConfig configures POST /api/v1/transactions/{id}/zk-verify in each
// environment: the circuits whose verifying keys the server pins (by
// circuit id and version, as snarkjs writes verification_key.json, with
// the index of the input that binds a proof to tenant, user and intent)
// and whether verification is enabled. Keys come only from here, never
// from a request, and are checked when New runs: a bad key fails New. An
// environment with no circuit, or not enabled, answers the route 503
// PROVIDER_UNAVAILABLE and reports zk_verification not enabled on
// /api/v1/web3/capabilities (package web3/zk).
type ZKConfig struct {
	// Test and Live are the two environments' verifiers.
	Test, Live zk.Environment
}

// AIConfig configures the AI control plane in each environment: its
// upstream providers (base URL and a reference to the sealed key, never
// the key), the models seeded into its registry at start (an
// administrator's later change of a model's enabled flag or prices
// survives restarts), and the routing policy published where the
// environment has none (package ai). An environment that lists no model
// keeps its registry as the database holds it.
type AIConfig struct {
	// Test and Live are the two environments' configurations.
	Test, Live ai.Environment
	// Health says when a failing model cools down; zero values take
	// ai.DefaultThreshold and ai.DefaultCooldown.
	Health ai.HealthPolicy
	// TestKeys and LiveKeys are each environment's provider keys by
	// KeyRef. New seals them into the store (AES-256-GCM under SecretKey)
	// and keeps no plaintext; each call unseals its provider's key for
	// that call only. A KeyRef without a key here keeps the key sealed
	// before; a key for a KeyRef no provider names fails New.
	TestKeys, LiveKeys ai.ProviderKeys
	// Pricing is published as each environment's ai.pricing policy where
	// it has none; nil means ai.DefaultCreditPricing.
	Pricing *ai.CreditPricing
	// Limits bound chat and completion requests; zero values take
	// ai.DefaultLimits.
	Limits ai.Limits
	// Tools runs the tool calls models propose under the caller's own
	// authority; nil means the platform's AI tools (package ai/tool,
	// Platform.Tools).
	Tools ai.ToolRunner
}

// GenerationConfig configures music generation. Zero values take the
// documented defaults of generation/operation.Config.
type GenerationConfig struct {
	// CallbackBaseURL is the address providers call back
	// (scheme://host[:port]); empty means Config.BaseURL. Callbacks go to
	// /internal/providers/{provider}/callbacks/{token} under it.
	CallbackBaseURL string
	// Pricing is published as the pricing.generation policy of an
	// environment that has none; the zero value means
	// operation.DefaultPricing. A published policy is never overridden.
	Pricing operation.Pricing
	// Tuning holds the limits and timings (create scheduler, polls,
	// deadlines, cost drift); see operation.Tuning. A Tuning.Fetcher
	// without a Guard gets the platform's media guard (urlguard, with
	// Config.AllowLoopback); one with its own Guard keeps it.
	operation.Tuning
	// Hook injects faults in tests; nil in production.
	Hook operation.Hook
}

// Default worker budgets of the job classes, sized for a 2-core host.
const (
	// defaultMoneyWorkers: value-moving jobs are short database and chain
	// calls.
	defaultMoneyWorkers = 2
	// defaultProviderWorkers: provider calls mostly wait on HTTP, so more
	// run at once than there are cores.
	defaultProviderWorkers = 4
	// defaultAudioWorkers: decoding and analysis keep a core busy; one per
	// core.
	defaultAudioWorkers = 2
	// defaultAudioPerWorkspace: one sound operation of a workspace runs at
	// a time, so that with the default two audio workers a second
	// workspace always finds one free.
	defaultAudioPerWorkspace = 1
	// defaultMaintenanceWorkers: housekeeping is light; two so that an
	// expiry does not wait for a staging sweep.
	defaultMaintenanceWorkers = 2
	// defaultOutboundWorkers: probes wait on other hosts' networks; two, and
	// one per workspace at a time (outboundPerWorkspace), so a second
	// workspace always finds one free.
	defaultOutboundWorkers = 2
	outboundPerWorkspace   = 1
	// defaultStarvedAfter is how long a class's oldest runnable job may
	// wait before health reports the class degraded.
	defaultStarvedAfter = time.Minute
	// starvedDownFactor: a class whose oldest runnable job has waited this
	// many times StarvedAfter is reported down.
	starvedDownFactor = 10
)

// jobClasses builds the pool's classes for the kinds the domains declare:
// each kind in its class, with the budgets cfg sets or the defaults. A
// kind without a class the platform runs is an error.
func jobClasses(kinds []jobs.Kind, cfg JobsConfig) ([]jobs.Class, error) {
	if cfg.Workers < 0 || cfg.MoneyWorkers < 0 || cfg.ProviderWorkers < 0 || cfg.AudioWorkers < 0 ||
		cfg.MaintenanceWorkers < 0 || cfg.OutboundWorkers < 0 || cfg.AudioPerWorkspace < 0 || cfg.StarvedAfter < 0 {
		return nil, fmt.Errorf("platform: Config.Jobs: worker budgets, the per-workspace limit and StarvedAfter must not be negative")
	}
	budget := func(own, def int) int { return orDefault(own, orDefault(cfg.Workers, def)) }
	classes := []jobs.Class{
		{Name: jobs.ClassMoney, Workers: budget(cfg.MoneyWorkers, defaultMoneyWorkers)},
		{Name: jobs.ClassProvider, Workers: budget(cfg.ProviderWorkers, defaultProviderWorkers)},
		{Name: jobs.ClassAudio, Workers: budget(cfg.AudioWorkers, defaultAudioWorkers),
			GroupLimit: orDefault(cfg.AudioPerWorkspace, defaultAudioPerWorkspace)},
		{Name: jobs.ClassMaintenance, Workers: budget(cfg.MaintenanceWorkers, defaultMaintenanceWorkers)},
		{Name: jobs.ClassOutbound, Workers: budget(cfg.OutboundWorkers, defaultOutboundWorkers), GroupLimit: outboundPerWorkspace},
	}
	for _, k := range slices.SortedFunc(slices.Values(kinds), func(a, b jobs.Kind) int { return strings.Compare(a.Name, b.Name) }) {
		i := slices.IndexFunc(classes, func(c jobs.Class) bool { return c.Name == k.Class })
		if i < 0 {
			return nil, fmt.Errorf("platform: job kind %q has no job class", k.Name)
		}
		classes[i].Kinds = append(classes[i].Kinds, k.Name)
	}
	return slices.DeleteFunc(classes, func(c jobs.Class) bool { return len(c.Kinds) == 0 }), nil
}

// orDefault is v, or def when v is zero.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
