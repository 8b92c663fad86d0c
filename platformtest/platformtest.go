// Package platformtest starts the whole platform for tests: a fresh SQLite
// file (or a fresh PostgreSQL schema), a settable clock, the HTTP handler on
// a loopback server, a bootstrapped workspace with a test API key, a
// captured log, and a client that validates every response against the
// OpenAPI document the platform serves. The platform's URL guard
// (Config.AllowLoopback) and the adapters' guarded clients let through
// exactly the simulators' loopback addresses (and those of the servers a
// test adds, Options.AllowLoopback), nothing else on loopback. New
// returns once the jobs due at start (the free plan's first grants) have
// run, so that a test starts from a quiet system. At cleanup it checks
// every outbox event the system wrote against platform.EventCatalogue.
//
// Systems are independent and may run in parallel tests; only the
// compiled OpenAPI validators are shared within the process, one per
// served document.
package platformtest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"

	validator "github.com/pb33f/libopenapi-validator"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/billing/stripepay"
	"github.com/creatormusic/platform/billing/stripetest"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/providera"
	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/internal/secret"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/token/tokentest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/openapi"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/webhook"
)

// PostgresOnlyEnv names the variable that, set to 1, makes New skip
// every SQLite system: CI's PostgreSQL pass runs the end-to-end suite's
// PostgreSQL halves alone after the SQLite pass ran everything on SQLite.
const PostgresOnlyEnv = storetest.PostgresOnlyEnv

// Options tune a System.
type Options struct {
	// Postgres runs on a fresh schema of PLATFORM_TEST_POSTGRES_URL (the
	// test skips when it is unset) instead of SQLite.
	Postgres bool
	// Jobs configures the job pool.
	Jobs platform.JobsConfig
	// Keys configures API keys.
	Keys apikey.Config
	// SessionLimits bound sessions' and access tokens' requests per user
	// and per workspace; zero fields take the platform's defaults.
	SessionLimits transport.SessionLimits
	// MaxUploadBytes bounds asset uploads; zero means the platform default.
	MaxUploadBytes int64
	// Plans is the plan catalog; the zero value is the platform's default.
	Plans plan.Catalog
	// Passwords are the argon2id parameters; the zero value means cheap ones
	// (1 pass, 64 KiB, 1 lane), so tests do not spend time hashing.
	Passwords account.PasswordParams
	// TrustProxy makes the platform read client addresses from
	// X-Forwarded-For, so tests can act from several addresses.
	TrustProxy bool
	// NoPayments leaves the payment provider unconfigured; by default a
	// stripetest simulator on loopback (on the fake clock) is the test
	// account, reached through the stripepay adapter.
	NoPayments bool
	// PaymentTimeout bounds one call to the payment simulator
	// (platform.Config.PaymentTimeout), so that a test of a provider that
	// does not answer waits less than the default 10 seconds.
	PaymentTimeout time.Duration
	// Music configures both music provider simulators in test mode with
	// platform-managed credentials (provider A in ProviderADialect, with its
	// callback-signing key). Without it only provider B is configured, for
	// customer keys alone.
	Music bool
	// ProviderADialect is provider A's wire dialect ("sunoapi", "kie" or
	// "kie_market"); empty means sunoapi.
	ProviderADialect string
	// Generation configures music generation.
	Generation platform.GenerationConfig
	// Chain starts the loopback Solana cluster (chain/chaintest) as the test
	// environment's cluster, reached through chain/solanarpc over HTTP,
	// with a policy mint deployed (System.Token) and the test registry
	// configured for it. The live environment has no cluster.
	Chain bool
	// ChainConfig, when Chain is set, is passed on with its Test cluster
	// and registry filled in (VerifyEvery, for one).
	ChainConfig platform.ChainConfig
	// SaleFunc, when Chain is set, returns the test environment's sale
	// configuration once the mint is deployed, so a test can deploy a
	// sale's accounts on the cluster (tokentest.DeploySale).
	SaleFunc func(c *chaintest.Cluster, d tokentest.Deployment) sale.EnvConfig
	// SwapFunc, when Chain is set, returns the test environment's swap
	// configuration, given the cluster and the deployed token.
	SwapFunc func(t testing.TB, c *chaintest.Cluster, d tokentest.Deployment) platform.SwapEnvironment
	// ZK configures proof verification (platform.Config.ZK); the zero
	// value pins no circuit, so the route answers PROVIDER_UNAVAILABLE.
	ZK platform.ZKConfig
	// CCTPFunc, when Chain is set, returns the test environment's
	// cross-chain transfer configuration given the cluster (whose Solana
	// side it sets up: chaintest's InstallCCTP), with the EVM and
	// attestation simulators it starts.
	CCTPFunc func(t testing.TB, c *chaintest.Cluster) *cctp.Environment
	// X402Func, when Chain is set, returns the test environment's
	// payment-required protocol configuration, given the cluster and the
	// deployed token (web3/x402/x402test deploys a payment asset).
	X402Func func(t testing.TB, c *chaintest.Cluster, d tokentest.Deployment) platform.X402Environment
	// LiveSimulators configures the live environment with loopback
	// simulators too, so that a test can make live records through the
	// API: a second payment simulator as the provider's live account
	// (System.LiveStripe; not with NoPayments) and provider B's simulator
	// as the live music adapter, for customer keys alone. Without it the
	// live environment has no payment or music provider.
	LiveSimulators bool
	// Outbound is the resolver and the trusted roots of the platform's
	// outbound URL guards (platform.Config.Outbound): a test serving HTTPS
	// from loopback resolves names its certificate covers to its server
	// (httptest's covers example.com and *.example.com; see
	// urlguardtest.Resolver) and trusts the server's certificate. The zero
	// value keeps the host's resolver and roots.
	Outbound platform.Outbound
	// AI configures the AI control plane's providers, models and routing
	// in each environment (platform.Config.AI); the zero value configures
	// none.
	AI platform.AIConfig
	// Webhooks tunes developer webhooks (platform.Config.Webhooks).
	Webhooks webhook.Tuning
	// Realtime configures the realtime endpoint and its feed
	// (platform.Config.Realtime); zero values take the defaults.
	Realtime platform.RealtimeConfig
	// AllowLoopback lists the base URLs of more servers on loopback
	// (https://127.0.0.1:port, as httptest.Server.URL is) that the
	// platform's outbound fetches may reach, beside the simulators: their
	// exact addresses join platform.Config.AllowLoopback.
	AllowLoopback []string
}

// System is a running platform under test.
type System struct {
	t      testing.TB
	P      *platform.Platform
	DB     *store.DB
	Clock  *storetest.Clock
	Server *httptest.Server
	// Boot is the bootstrapped tenant, workspace, owner and test key.
	Boot platform.Bootstrap
	// Log captures every log line the platform wrote.
	Log *SyncBuffer
	// BlobDir is the platform's blob directory (a temp dir of the test).
	BlobDir string
	// Mail captures every message the platform sent.
	Mail *Mailer
	// Stripe is the payment provider simulator serving the test
	// environment (nil with Options.NoPayments).
	Stripe *stripetest.Server
	// LiveStripe is the payment provider simulator serving the live
	// environment (Options.LiveSimulators only).
	LiveStripe *stripetest.Server
	// ProviderB is the music provider B simulator serving the test
	// environment (generation/providerb/providerbtest, on the fake clock).
	ProviderB *providerbtest.Server
	// ProviderA is the music provider A simulator (Options.Music only).
	ProviderA *provideratest.Server
	// Cluster is the loopback Solana cluster and Token the mint deployed
	// on it (Options.Chain only).
	Cluster *chaintest.Cluster
	Token   tokentest.Deployment
	// RPC reaches Cluster over HTTP, as the platform does.
	RPC *solanarpc.Client
	// RewardTreasury is the test environment's reward treasury wallet
	// (Options.Chain only): its signer is a rewards.LocalSigner opened
	// from the key sealed under SecretKey; it holds lamports for fees and
	// an empty Token-2022 account of Token.Mint. RewardTreasuryKey is that
	// key, for the tests that prove it never leaks.
	RewardTreasury    chain.Address
	RewardTreasuryKey ed25519.PrivateKey
	doc               validator.Validator
	// cfg is the platform's configuration, and pgURL the PostgreSQL
	// database's URL ("" on SQLite), for SecondHost.
	cfg   platform.Config
	pgURL string
}

// SecondHost starts another platform on the system's database with the
// same configuration, as a second host of a deployment has: its own
// caches and limiter, and no job pool (the first host runs the jobs). It
// returns the base URL it serves, for DoAt; it stops with the test.
func (s *System) SecondHost() string {
	s.t.Helper()
	return s.AnotherHost().URL
}

// Host is another host of a System's deployment.
type Host struct {
	// URL is the base URL it serves.
	URL string
	// DB is its store: on PostgreSQL its own connection to the system's
	// database, with its own pool, credential cache and notification
	// listener, as a host on another machine has; on SQLite the system's
	// own DB, since one process serves a SQLite database.
	DB *store.DB
	// P is its platform.
	P *platform.Platform
}

// AnotherHost is SecondHost, also returning the host's store.
func (s *System) AnotherHost() Host {
	s.t.Helper()
	return s.AnotherHostWithJobs(platform.JobsConfig{Disabled: true})
}

// AnotherHostWithJobs is AnotherHost with a job pool of its own
// configured by jobs (Disabled leaves it stopped), as a deployment's
// hosts on one PostgreSQL database each run one. It also returns the
// host's platform.
func (s *System) AnotherHostWithJobs(jobs platform.JobsConfig) Host {
	s.t.Helper()
	cfg := s.cfg
	cfg.Jobs = jobs
	if s.pgURL != "" {
		cfg.Store = storetest.OpenPostgresAt(s.t, s.pgURL, s.Clock)
	}
	p, err := platform.New(context.Background(), cfg)
	if err != nil {
		s.t.Fatalf("second host: platform.New: %v", err)
	}
	srv := httptest.NewServer(p.Handler())
	s.t.Cleanup(func() {
		srv.Close()
		p.Close()
	})
	return Host{URL: srv.URL, DB: cfg.Store, P: p}
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// SecretKey is the master secret every System uses.
var SecretKey = []byte("platformtest-master-secret-0123456789abcdef")

// New starts a System, stopped at t's cleanup.
func New(t testing.TB, opts Options) *System {
	t.Helper()
	if !opts.Postgres && os.Getenv(PostgresOnlyEnv) == "1" {
		t.Skipf("%s=1: this pass runs the PostgreSQL systems alone; the SQLite pass runs this one", PostgresOnlyEnv)
	}
	clock := storetest.NewClock(storetest.Epoch)
	var (
		db    *store.DB
		pgURL string
	)
	if opts.Postgres {
		pgURL = storetest.PostgresURL(t)
		db = storetest.OpenPostgresAt(t, pgURL, clock)
	} else {
		db = storetest.OpenSQLite(t, clock)
	}
	logs := &SyncBuffer{}
	ctx := context.Background()
	blobDir := t.TempDir()
	mailer := &Mailer{}
	pw := opts.Passwords
	if pw == (account.PasswordParams{}) {
		pw = CheapPasswords()
	}
	var payments billing.Providers
	var sim, liveSim *stripetest.Server
	if !opts.NoPayments {
		sim, payments.Test = startPayments(t, clock)
		if opts.LiveSimulators {
			liveSim, payments.Live = startPayments(t, clock)
		}
	}
	provB, err := providerbtest.New(providerbtest.Config{Clock: clock})
	if err != nil {
		t.Fatalf("providerbtest.New: %v", err)
	}
	t.Cleanup(provB.Close)
	clientB, err := providerb.New(providerb.Config{BaseURL: provB.URL(), HTTPClient: urlguardtest.Client(t, provB.URL())})
	if err != nil {
		t.Fatalf("providerb.New: %v", err)
	}
	music := credential.Providers{Test: credential.Adapters{generation.ProviderB: clientB}}
	if opts.LiveSimulators {
		music.Live = credential.Adapters{generation.ProviderB: clientB}
	}
	// The platform fetches media from the provider simulators on loopback:
	// exactly their addresses pass its URL guard, nothing else on loopback.
	simURLs := []string{provB.URL()}
	var provA *provideratest.Server
	if opts.Music {
		provA = startProviderA(t, clock, opts.ProviderADialect, &music)
		music.PlatformKeys.Test[generation.ProviderB] = generation.Credential{APIKey: provB.APIKey()}
		simURLs = append(simURLs, provA.URL())
	}
	simURLs = append(simURLs, opts.AllowLoopback...)
	// The server starts before the platform so that its address is the
	// providers' callback base; it serves once the platform is built.
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := handler.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	gen := opts.Generation
	if gen.CallbackBaseURL == "" {
		gen.CallbackBaseURL = srv.URL
	}
	var cluster *chaintest.Cluster
	var deployed tokentest.Deployment
	var rewardKey ed25519.PrivateKey
	var rewardTreasury chain.Address
	chainCfg := opts.ChainConfig
	if opts.Chain {
		cluster, deployed, chainCfg.Test = startCluster(t)
		rewardKey, rewardTreasury = rewardSigner(t, cluster, deployed, &chainCfg.Test)
		if opts.SaleFunc != nil {
			chainCfg.Test.Sale = opts.SaleFunc(cluster, deployed)
			cluster.AdvanceSlots(40) // the sale's accounts are finalized
		}
		if opts.SwapFunc != nil {
			chainCfg.Test.Swap = opts.SwapFunc(t, cluster, deployed)
			cluster.AdvanceSlots(40) // the swap's accounts are finalized
		}
		if opts.CCTPFunc != nil {
			chainCfg.Test.CCTP = opts.CCTPFunc(t, cluster)
			cluster.AdvanceSlots(40) // the mint and the programs are finalized
		}
		if opts.X402Func != nil {
			chainCfg.Test.X402 = opts.X402Func(t, cluster, deployed)
			cluster.AdvanceSlots(40) // the payment asset's accounts are finalized
		}
	}
	cfg := platform.Config{Payments: payments, PaymentTimeout: opts.PaymentTimeout, MusicProviders: music, Generation: gen, Chain: chainCfg,
		Store: db, SecretKey: SecretKey, Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Jobs: opts.Jobs, Keys: opts.Keys, SessionLimits: opts.SessionLimits, BlobDir: blobDir, MaxUploadBytes: opts.MaxUploadBytes,
		Plans: opts.Plans, Mailer: mailer, Passwords: pw, BaseURL: "http://platform.test", InsecureCookies: true, TrustProxy: opts.TrustProxy,
		AllowLoopback: urlguardtest.Allow(t, simURLs...), Outbound: opts.Outbound, ZK: opts.ZK, AI: opts.AI, Webhooks: opts.Webhooks, Realtime: opts.Realtime,
	}
	p, err := platform.New(ctx, cfg)
	if err != nil {
		t.Fatalf("platform.New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	h := p.Handler()
	handler.Store(&h)
	boot, err := p.Bootstrap(ctx, platform.BootstrapInput{TenantName: "Test Tenant", WorkspaceName: "Test Studio",
		OwnerEmail: "owner@example.test", OwnerName: "Test Owner", LiveKey: true})
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	for env, sm := range map[string]*stripetest.Server{"test": sim, "live": liveSim} {
		if sm == nil {
			continue
		}
		if err := sm.SetWebhookURL(srv.URL + "/internal/payments/" + env + "/webhook"); err != nil {
			t.Fatalf("stripetest webhook URL: %v", err)
		}
	}
	s := &System{t: t, P: p, DB: db, Clock: clock, Server: srv, Boot: boot, Log: logs, BlobDir: blobDir, Mail: mailer, Stripe: sim, LiveStripe: liveSim,
		ProviderB: provB, ProviderA: provA,
		Cluster: cluster, Token: deployed, RewardTreasury: rewardTreasury, RewardTreasuryKey: rewardKey, cfg: cfg, pgURL: pgURL}
	if c, ok := chainCfg.Test.Client.(*solanarpc.Client); ok && opts.Chain {
		s.RPC = c
	}
	s.doc = s.loadValidator()
	if !opts.Jobs.Disabled {
		s.waitStartJobs()
	}
	// Registered last, so it runs first: while the platform and the
	// database are still up.
	t.Cleanup(s.checkEvents)
	return s
}

// startWait bounds how long New waits for the jobs due at start.
const startWait = 20 * time.Second

// waitStartJobs waits until every job due when the system started (the
// free plan's grants its bootstrap enqueued, for one) has run, so that a
// test starts from a quiet system whose workspace holds its free credits.
func (s *System) waitStartJobs() {
	s.t.Helper()
	ctx := context.Background()
	now := s.Clock.Now()
	deadline := time.Now().Add(startWait)
	for {
		var rows []struct {
			Kind  string    `bun:"kind"`
			State string    `bun:"state"`
			RunAt time.Time `bun:"run_at"`
		}
		if err := s.DB.Read().IDB().NewRaw(`SELECT kind, state, run_at FROM jobs WHERE state IN (?, ?)`,
			string(jobs.Available), string(jobs.Running)).Scan(ctx, &rows); err != nil {
			s.t.Fatalf("jobs due at start: %v", err)
		}
		var due []string
		for _, j := range rows {
			if !j.RunAt.After(now) {
				due = append(due, j.Kind+" ("+j.State+")")
			}
		}
		if len(due) == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("jobs due at start still pending after %s: %s", startWait, strings.Join(due, ", "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startPayments starts a payment provider simulator on clock, stopped at
// t's cleanup, and the adapter reaching it.
func startPayments(t testing.TB, clock *storetest.Clock) (*stripetest.Server, billing.PaymentProvider) {
	t.Helper()
	sim, err := stripetest.New(stripetest.Config{Clock: clock})
	if err != nil {
		t.Fatalf("stripetest.New: %v", err)
	}
	t.Cleanup(func() { sim.Close() })
	client, err := stripepay.New(stripepay.Config{SecretKey: sim.SecretKey(), WebhookSecret: sim.WebhookSecret(),
		BaseURL: sim.URL(), Clock: clock, HTTPClient: urlguardtest.Client(t, sim.URL())})
	if err != nil {
		t.Fatalf("stripepay.New: %v", err)
	}
	return sim, client
}

// checkEvents fails the test when the platform wrote an outbox event that
// the event catalogue (platform.EventCatalogue, which the OpenAPI document
// publishes) does not list with the event's schema version and aggregate
// id prefix.
func (s *System) checkEvents() {
	s.t.Helper()
	catalogue := map[string]openapi.EventType{}
	for _, e := range platform.EventCatalogue() {
		catalogue[e.Type] = e
	}
	ctx := context.Background()
	// The outbox lists one environment at a time, as publishers read it.
	for _, env := range []access.Environment{access.Test, access.Live} {
		after := ""
		for {
			evs, err := s.DB.Read().OutboxList(ctx, outbox.ListParams{Environment: string(env), After: after, Limit: 500})
			if err != nil {
				s.t.Errorf("event catalogue check: list the %s outbox: %v", env, err)
				return
			}
			for _, e := range evs {
				row, ok := catalogue[e.Type]
				switch {
				case !ok:
					s.t.Errorf("outbox event %s has type %q, which platform.EventCatalogue does not list", e.ID, e.Type)
				case e.SchemaVersion != row.SchemaVersion:
					s.t.Errorf("outbox event %s (%s) has schema version %d, the catalogue %d", e.ID, e.Type, e.SchemaVersion, row.SchemaVersion)
				case !strings.HasPrefix(e.AggregateID, row.AggregateIDPrefix):
					s.t.Errorf("outbox event %s (%s) names aggregate %q, the catalogue a %s (%s...)", e.ID, e.Type, e.AggregateID, row.Aggregate, row.AggregateIDPrefix)
				}
			}
			if len(evs) < 500 {
				break
			}
			after = evs[len(evs)-1].ID
		}
	}
}

// startCluster starts the loopback cluster with a policy mint deployed and
// returns the test environment's chain configuration, reaching the cluster
// over HTTP through the solanarpc adapter.
func startCluster(t testing.TB) (*chaintest.Cluster, tokentest.Deployment, platform.ChainEnvironment) {
	t.Helper()
	c, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatalf("chaintest.New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	d, err := tokentest.Deploy(context.Background(), c)
	if err != nil {
		t.Fatalf("tokentest.Deploy: %v", err)
	}
	c.AdvanceSlots(40) // the deployment is finalized
	client, err := solanarpc.New(solanarpc.Config{URL: c.URL(), Timeout: 2 * time.Second, HTTPClient: urlguardtest.Client(t, c.URL())})
	if err != nil {
		t.Fatalf("solanarpc.New: %v", err)
	}
	// The deployment's treasury, which holds the supply in its associated
	// token account, is also the environment's payment treasury.
	return c, d, platform.ChainEnvironment{Client: client, Token: d.Config, Treasury: d.Treasury.String()}
}

// rewardSigner makes the test environment's reward treasury: a fresh
// keypair sealed under SecretKey and opened by rewards.NewLocalSigner, as
// a host opens its sealed key; lamports for its fees and an empty
// Token-2022 account of the deployed mint, finalized.
func rewardSigner(t testing.TB, c *chaintest.Cluster, d tokentest.Deployment, env *platform.ChainEnvironment) (ed25519.PrivateKey, chain.Address) {
	t.Helper()
	key, addr := chaintest.NewKeypair()
	kr, err := secret.New(SecretKey)
	if err != nil {
		t.Fatalf("keyring: %v", err)
	}
	signer, err := rewards.NewLocalSigner(kr, rewards.SealKey(kr, key))
	if err != nil {
		t.Fatalf("reward signer: %v", err)
	}
	c.Airdrop(addr, 1_000_000_000)
	if _, err := c.MintTo(addr, d.Mint, 0); err != nil {
		t.Fatalf("reward treasury account: %v", err)
	}
	c.AdvanceSlots(40)
	env.RewardSigner = signer
	return key, addr
}

// startProviderA starts the provider A simulator on the clock and adds it
// to music with its platform-managed key and callback key.
func startProviderA(t testing.TB, clock *storetest.Clock, dialect string, music *credential.Providers) *provideratest.Server {
	t.Helper()
	sim, err := provideratest.New(provideratest.Config{Dialect: dialect, Clock: clock})
	if err != nil {
		t.Fatalf("provideratest.New: %v", err)
	}
	t.Cleanup(func() { sim.Close() })
	client, err := providera.New(providera.Config{BaseURL: sim.URL(), Dialect: providera.Dialect(dialect),
		HTTPClient: urlguardtest.Client(t, sim.URL())})
	if err != nil {
		t.Fatalf("providera.New: %v", err)
	}
	music.Test[generation.ProviderA] = client
	music.PlatformKeys.Test = credential.Keys{generation.ProviderA: {APIKey: sim.APIKey(), CallbackKey: sim.CallbackKey()}}
	return sim
}

// Bootstrap creates another tenant with its own workspace, owner and keys.
func (s *System) Bootstrap(name string) platform.Bootstrap {
	s.t.Helper()
	b, err := s.P.Bootstrap(context.Background(), platform.BootstrapInput{TenantName: name, WorkspaceName: name + " Studio",
		OwnerEmail: strings.ToLower(name) + "@example.test", OwnerName: name + " Owner", LiveKey: true})
	if err != nil {
		s.t.Fatalf("bootstrap %s: %v", name, err)
	}
	return b
}

// Dialects runs fn as a subtest on SQLite and on PostgreSQL (which skips
// when PLATFORM_TEST_POSTGRES_URL is unset).
func Dialects(t *testing.T, opts Options, fn func(t *testing.T, s *System)) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			o := opts
			o.Postgres = pg
			fn(t, New(t, o))
		})
	}
}

// loadValidator returns the validator of the document the system serves.
func (s *System) loadValidator() validator.Validator {
	s.t.Helper()
	resp, err := http.Get(s.Server.URL + "/api/docs/openapi.json")
	if err != nil {
		s.t.Fatalf("fetch OpenAPI document: %v", err)
	}
	defer resp.Body.Close()
	spec, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		s.t.Fatalf("fetch OpenAPI document: %d %v", resp.StatusCode, err)
	}
	v, err := validators.get(spec)
	if err != nil {
		s.t.Fatalf("OpenAPI document: %v", err)
	}
	return v
}

// Response is a response read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *Response) JSON() map[string]any {
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return m
}

// Data decodes the success envelope's data into v.
func (r *Response) Data(t testing.TB, v any) {
	t.Helper()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Data == nil {
		t.Fatalf("not a success envelope (%d): %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("decode data: %v: %s", err, env.Data)
	}
}

// Code returns error.code of an error envelope, or "".
func (r *Response) Code() string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(r.Body, &env)
	return env.Error.Code
}

// Request is one call of the client.
type Request struct {
	Method string
	Path   string
	// Key is sent as Authorization: Bearer; empty sends none.
	Key string
	// Cookie is sent as the session cookie's value; empty sends none.
	Cookie string
	// Body is marshalled to JSON unless it is a string or []byte, sent as is.
	Body any
	// Header adds headers; Content-Type defaults to application/json when a
	// body is present.
	Header map[string]string
}

// Do sends req and validates the response against the served OpenAPI
// document; a response the document does not describe fails the test.
func (s *System) Do(req Request) *Response {
	s.t.Helper()
	return s.DoAt(s.Server.URL, req)
}

// DoAt is Do against another host serving the same platform (a second
// platform.New on the same database), validated against this System's
// document.
func (s *System) DoAt(baseURL string, req Request) *Response {
	s.t.Helper()
	var body io.Reader
	var raw []byte
	switch b := req.Body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			s.t.Fatalf("marshal body: %v", err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.Method, baseURL+req.Path, body)
	if err != nil {
		s.t.Fatalf("request: %v", err)
	}
	if raw != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.Key)
	}
	if req.Cookie != "" {
		hr.AddCookie(&http.Cookie{Name: account.CookieName, Value: req.Cookie})
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	hresp, err := http.DefaultClient.Do(hr)
	if err != nil {
		s.t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer hresp.Body.Close()
	rb, err := io.ReadAll(hresp.Body)
	if err != nil {
		s.t.Fatalf("read body: %v", err)
	}
	out := &Response{Status: hresp.StatusCode, Header: hresp.Header, Body: rb}
	s.validate(hr, raw, hresp, rb)
	return out
}

// validate checks a response of a documented route against the document.
// Answers of the fallback (unknown paths and methods) are checked for the
// error envelope instead, since no operation describes them.
func (s *System) validate(hr *http.Request, reqBody []byte, hresp *http.Response, body []byte) {
	s.t.Helper()
	if hresp.StatusCode == http.StatusNotFound || hresp.StatusCode == http.StatusMethodNotAllowed {
		var env map[string]any
		if json.Unmarshal(body, &env) != nil || env["error"] == nil || env["meta"] == nil {
			s.t.Errorf("%s %s: %d without the error envelope: %s", hr.Method, hr.URL.Path, hresp.StatusCode, body)
		}
		if hresp.StatusCode == http.StatusNotFound && strings.Contains(string(body), "ROUTE_NOT_FOUND") || hresp.StatusCode == http.StatusMethodNotAllowed {
			return
		}
	}
	vreq, _ := http.NewRequest(hr.Method, hr.URL.String(), bytes.NewReader(reqBody))
	vreq.Header = hr.Header.Clone()
	vresp := &http.Response{StatusCode: hresp.StatusCode, Header: hresp.Header.Clone(), Body: io.NopCloser(bytes.NewReader(body)), Request: vreq}
	if ok, errs := s.doc.ValidateHttpResponse(vreq, vresp); !ok {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
			for _, sv := range e.SchemaValidationErrors {
				msgs = append(msgs, "  "+sv.FieldPath+": "+sv.Reason)
			}
		}
		s.t.Errorf("%s %s: response %d does not match the OpenAPI document:\n%s\nbody: %s",
			hr.Method, hr.URL.Path, hresp.StatusCode, strings.Join(msgs, "\n"), body)
	}
}

// Principal returns the principal req's credential stands for (Key, else
// Cookie), acting in the environment its Platform-Environment header asks
// for, as the gateway resolves it; a refused credential fails the test.
// Tests that run the AI tools in process (Platform.Tools) name the caller
// with it.
func (s *System) Principal(req Request) *access.Principal {
	s.t.Helper()
	cred := req.Key
	if cred == "" {
		cred = req.Cookie
	}
	env := access.Environment(req.Header[transport.EnvironmentHeader])
	p, err := s.P.Principal(context.Background(), cred, env)
	if err != nil {
		s.t.Fatalf("principal of %s: %v", req.Path, err)
	}
	return p
}
