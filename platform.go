package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/secret"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/transport/openapi"
	"github.com/creatormusic/platform/urlguard"
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
	// StarvedAfter is how long a class's oldest runnable job may wait
	// before /api/v1/health/services reports the class degraded; past ten
	// times as long it reports it down. Zero means 1 minute.
	StarvedAfter time.Duration
	// Lease is how long a claim holds. Zero means 30 seconds.
	Lease time.Duration
	// PollInterval is how often an idle pool looks for jobs. Zero means 200ms.
	PollInterval time.Duration
	// FaultHook is a test hook; see jobs.Config.FaultHook.
	FaultHook func(ctx context.Context, job jobs.Job, point string) error
}

// Platform is the whole system: the HTTP API, its store and its workers.
type Platform struct {
	cfg     Config
	db      *store.DB
	keyring *secret.Keyring
	keys    *apikey.Service
	account *account.Service
	plans   *plan.Service
	billing *billing.Service
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
	// media is the urlguard policy of the platform's own fetches.
	media   *urlguard.Guard
	pool    *jobs.Pool
	limiter *transport.Limiter
	handler http.Handler
	routes  []api.Route
	log     *slog.Logger

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
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	plans, err := plan.New(cfg.Plans)
	if err != nil {
		return nil, fmt.Errorf("platform: Config.Plans: %w", err)
	}
	assets, err := assetService(cfg, plans)
	if err != nil {
		return nil, err
	}
	accounts, err := account.New(account.Config{Keys: kr, Mailer: cfg.Mailer, Passwords: cfg.Passwords, BaseURL: cfg.BaseURL,
		InsecureCookies: cfg.InsecureCookies, TrustProxy: cfg.TrustProxy, HashPool: cfg.PasswordHashing})
	if err != nil {
		return nil, fmt.Errorf("platform: accounts: %w", err)
	}
	providers, err := credential.New(credential.Config{Sealer: kr, Providers: cfg.MusicProviders})
	if err != nil {
		return nil, fmt.Errorf("platform: Config.MusicProviders: %w", err)
	}
	p := &Platform{cfg: cfg, db: cfg.Store, keyring: kr, keys: apikey.New(cfg.Keys, kr), account: accounts, log: log}
	p.limiter = transport.NewLimiter(p.db, cfg.SessionLimits)
	if err := p.startPlans(ctx, plans); err != nil {
		return nil, err
	}
	if err := p.seedFeatureFlags(ctx); err != nil {
		return nil, err
	}
	if err := p.startBilling(cfg); err != nil {
		return nil, err
	}
	if err := p.startGeneration(ctx, cfg, providers, assets); err != nil {
		return nil, err
	}
	if err := p.startSound(assets); err != nil {
		return nil, err
	}
	if err := p.startToken(cfg.Chain); err != nil {
		return nil, err
	}
	if err := p.startIntents(ctx, cfg.Chain); err != nil {
		return nil, err
	}
	kinds := p.jobKinds(assets)
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
		Logger: log, FaultHook: cfg.Jobs.FaultHook,
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
	api := api.Routes(api.Services{Keys: p.keys, Assets: assets, Health: p.healthChecks(), Plans: p.plans,
		Ledger: ledger.New(), Accounts: p.account, Billing: p.billing, Store: units, Log: log, Providers: providers,
		Generation: p.generation, Sound: p.sound, Token: p.token, Sale: p.sale, Wallet: p.wallet, Intents: p.intents, WakeFunc: p.wake})
	info := Info()
	info.IdempotencyRetention = cfg.IdempotencyRetention
	info.Callbacks = callbackWindows(cfg.MusicProviders)
	info.RateLimits = &openapi.RateLimits{Sessions: p.limiter.SessionLimits(), KeyDefaults: p.keys.DefaultLimits()}
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
		if err := jobs.Schedule(ctx, kinds, schedule); err != nil {
			cancel()
			return nil, fmt.Errorf("platform: schedule jobs: %w", err)
		}
		if err := p.schedulePlanGrants(ctx); err != nil {
			cancel()
			return nil, err
		}
		if err := p.verify.ScheduleNew(ctx, schedule); err != nil {
			cancel()
			return nil, fmt.Errorf("platform: schedule token verification: %w", err)
		}
		if err := pool.Start(bg); err != nil {
			cancel()
			return nil, fmt.Errorf("platform: start jobs: %w", err)
		}
	}
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
			"(platform_test_... or platform_live_...). Test keys see only test objects and live keys only live ones.",
		Events: EventCatalogue(),
	}
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

// Handler returns the platform's HTTP handler: the API under /api/v1 and
// the tooling routes under /api/docs/ and /api/client-collection/.
func (p *Platform) Handler() http.Handler { return p.handler }

// Routes returns the route table the handler serves, internal receivers
// included. The OpenAPI document lists exactly its public entries.
func (p *Platform) Routes() []api.Route { return append([]api.Route(nil), p.routes...) }

// Close stops the job pool (waiting up to 10 seconds for running jobs) and
// flushes usage counts. It does not close the store.
func (p *Platform) Close() error {
	p.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if !p.cfg.Jobs.Disabled {
			p.closeErr = p.pool.Stop(ctx)
		}
		p.stop()
		p.wg.Wait()
		if p.media != nil {
			p.media.CloseIdleConnections()
		}
	})
	return p.closeErr
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

// Now is the store's clock.
func (s routeStore) Now() time.Time { return s.db.Now() }
