// Command server is the example host: the whole platform on one machine.
//
//	go run ./examples/server                 # SQLite under ./data, 127.0.0.1:8080
//	go run ./examples/server -postgres URL   # PostgreSQL instead of SQLite
//
// On first start it creates a demo tenant, workspace and owner (roles OWNER
// and DEVELOPER) and a test API key, prints the key once and writes it to
// DATA/demo-credentials.json (mode 0600) so a person can try the API. It
// keeps its master secret in DATA/secret.key (mode 0600) and, on SQLite,
// its database in DATA/platform.db (mode 0600, in a data folder it creates
// with mode 0700). SIGINT or SIGTERM shuts it down gracefully.
//
// Timeouts. A client must send its request headers within 10 seconds (a
// slower one is disconnected), a whole request within 30 seconds, and take
// the answer within 60 seconds of its headers; an idle kept-alive
// connection is closed after 2 minutes. Uploads (POST /api/v1/assets) and
// content downloads (GET /api/v1/assets/{assetId}/content) are the
// exceptions: the gateway gives each request its own read and write
// deadlines of 1 minute plus 4 seconds per MiB of the upload limit or of
// the content (transport.TransferDeadline).
//
// -issue-internal-key prints a new key holding the internal scope (outbox
// publication) for the demo workspace and exits; no route can issue one.
//
// -grant-super-admin EMAIL grants the super_admin platform role to the
// user with that email and exits; no route can grant it. On first start the
// demo owner is made super_admin, and its email and a generated password
// are written to demo-credentials.json with the test key, so a person can
// sign in.
//
// Payments. -stripe-sim starts the Stripe simulator (billing/stripetest)
// in-process on a loopback port as the test-mode payment provider: test
// checkouts answer its hosted page as paymentUrl, and it sends its signed
// webhooks to this host's receiver. The host prints the simulator's URL and
// the key of its /_sim/ control routes. -stripe-live-key (and, to accept
// live webhooks, -stripe-webhook-secret) configures the live provider
// against api.stripe.com. Without them, checkouts of that environment answer
// 503 PROVIDER_UNAVAILABLE.
//
// Music providers. -provider-sim starts both music provider simulators
// in-process on loopback ports: provider A (generation/providera/
// provideratest, sunoapi dialect) and provider B (generation/providerb/
// providerbtest). They are wired as test mode's providers A and B with
// platform-managed keys (A's callback key verifies its callbacks), and B
// is also the provider that customer keys are validated against. Every
// task they accept moves one stage per -provider-sim-advance (default 3s)
// on its own and calls back this host at its loopback address
// (/internal/providers/{provider}/callbacks/...), so POST
// /api/v1/music/generate in test mode completes within seconds with two
// MP3 tracks stored as assets. The host prints both simulators' URLs and
// their (simulator-only) API keys; B's can be submitted to POST
// /api/v1/providers/credentials. Without it no music provider is
// configured: GET /api/v1/providers reports both as not_configured,
// credential routes answer 503 PROVIDER_UNAVAILABLE and generating
// answers 503 PROVIDER_UNAVAILABLE.
//
// Chain. -chain-sim starts the loopback Solana cluster (chain/chaintest)
// in-process as the test environment's cluster, reached over HTTP through
// the solana-go adapter (chain/solanarpc), deploys on it a Token-2022 mint
// that meets the token policy (9 decimals, 200 bps up to 5 tokens, mint
// authority revoked, embedded metadata) and an open token sale with its
// contract, funded inventory and pool, and advances one slot per
// -chain-sim-slot (default 400ms). The registry's verification job reads
// the mint at start, so the token routes with the demo test key show
// LOCALNET_CONFIGURED, then LOCALNET_VERIFIED on the simulator's own
// network (never mainnet, never production ready). Anonymous callers see
// the live environment, which has no cluster: PRE_DEPLOYMENT. The cluster
// lives in memory: each start deploys a new mint.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/billing/stripepay"
	"github.com/creatormusic/platform/billing/stripetest"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/providera"
	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
	"github.com/creatormusic/platform/urlguard"
)

// demo is what the host remembers about the demo workspace.
type demo struct {
	APIKey      string `json:"apiKey"`
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	OwnerID     string `json:"ownerId"`
	// OwnerEmail and OwnerPassword sign the demo owner (super_admin) in.
	OwnerEmail    string `json:"ownerEmail,omitempty"`
	OwnerPassword string `json:"ownerPassword,omitempty"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	data := flag.String("data", "./data", "data folder (SQLite file, secret key, demo credentials)")
	pgURL := flag.String("postgres", "", "PostgreSQL URL; empty means SQLite under -data")
	internalKey := flag.Bool("issue-internal-key", false, "print a new internal-scope key for the demo workspace and exit")
	superAdmin := flag.String("grant-super-admin", "", "grant the super_admin platform role to the user with this `email` and exit")
	stripeSim := flag.Bool("stripe-sim", false, "start the loopback Stripe simulator as the test-mode payment provider")
	stripeLiveKey := flag.String("stripe-live-key", "", "Stripe live secret or restricted `key` (sk_live_/rk_live_) for live-mode checkouts")
	stripeWebhookSecret := flag.String("stripe-webhook-secret", "", "signing `secret` (whsec_) of the live Stripe webhook endpoint")
	providerSim := flag.Bool("provider-sim", false, "start the loopback music provider A and B simulators as the test-mode providers")
	providerAdvance := flag.Duration("provider-sim-advance", 3*time.Second, "with -provider-sim, how long each simulated task stays in a stage")
	chainSimFlag := flag.Bool("chain-sim", false, "start the loopback Solana cluster with a deployed mint and sale as the test environment's cluster")
	chainSlot := flag.Duration("chain-sim-slot", 400*time.Millisecond, "with -chain-sim, the simulated slot time")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if err := os.MkdirAll(*data, 0o700); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	key, err := masterKey(filepath.Join(*data, "secret.key"))
	if err != nil {
		return err
	}
	var db *store.DB
	if *pgURL != "" {
		db, err = postgres.Open(ctx, postgres.Config{URL: *pgURL})
	} else {
		db, err = sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(*data, "platform.db")})
	}
	if err != nil {
		return err
	}
	defer db.Close()

	// Mail is written under DATA/mail, one .eml file per message, so a
	// person can follow the signup link; the host serves plain HTTP on
	// localhost, hence cookies without Secure.
	mailer, err := filemail.New(filepath.Join(*data, "mail"), "Platform <no-reply@platform.localhost>", nil)
	if err != nil {
		return err
	}
	payments, sim, err := paymentProviders(*stripeSim, *stripeLiveKey, *stripeWebhookSecret, log)
	if err != nil {
		return err
	}
	if sim != nil {
		defer sim.Close()
	}
	music, sims, err := musicProviders(*providerSim, *providerAdvance)
	if err != nil {
		return err
	}
	defer sims.close()
	var chainCfg platform.ChainConfig
	var cs *chainSim
	if *chainSimFlag {
		if cs, chainCfg.Test, err = startChainSim(ctx, *chainSlot, *data); err != nil {
			return err
		}
		defer cs.close()
	}
	// The platform fetches provider media from the simulators: exactly their
	// loopback addresses pass its URL guard, and only when they run.
	allow, err := sims.mediaAddrs()
	if err != nil {
		return err
	}
	p, err := platform.New(ctx, platform.Config{Store: db, SecretKey: key, Logger: log, BlobDir: filepath.Join(*data, "blobs"),
		Mailer: mailer, BaseURL: "http://" + *addr, InsecureCookies: true, Payments: payments, MusicProviders: music,
		Generation: platform.GenerationConfig{CallbackBaseURL: loopbackURL(*addr)}, Chain: chainCfg, AllowLoopback: allow})
	if err != nil {
		return err
	}
	defer p.Close()

	credPath := filepath.Join(*data, "demo-credentials.json")
	d, err := ensureDemo(ctx, p, credPath)
	if err != nil {
		return err
	}
	if *superAdmin != "" {
		if err := p.GrantSuperAdmin(ctx, *superAdmin); err != nil {
			return err
		}
		fmt.Printf("Granted super_admin to %s.\n", *superAdmin)
		return nil
	}
	if *internalKey {
		_, pt, err := p.IssueInternalKey(ctx, d.TenantID, d.WorkspaceID, d.OwnerID, access.Test, "Operator internal key")
		if err != nil {
			return err
		}
		fmt.Println(pt)
		return nil
	}

	srv := newServer(*addr, p.Handler(), defaultTimeouts())
	errc, err := listenAndServe(srv, *addr, log)
	if err != nil {
		return err
	}
	if sim != nil {
		if err := sim.SetWebhookURL(loopbackURL(*addr) + "/internal/payments/test/webhook"); err != nil {
			return err
		}
		fmt.Printf("Stripe simulator (test mode): %s\n  control routes: %s/_sim/... with Authorization: Bearer %s\n",
			sim.URL(), sim.URL(), sim.SecretKey())
	}
	if sims.a != nil {
		fmt.Printf("Music provider A simulator (test mode, sunoapi dialect, a stage every %s): %s\n  simulator API key (test mode only): %s\n  control routes: %s/_sim/... (tasks, events) with Authorization: Bearer <the key>\n",
			*providerAdvance, sims.a.URL(), sims.a.APIKey(), sims.a.URL())
	}
	if sims.b != nil {
		fmt.Printf("Music provider B simulator (test mode, a step every %s): %s\n  simulator API key (test mode only): %s\n  control routes: %s/_sim/... (tasks, events) with Authorization: Bearer <the key>\n",
			*providerAdvance, sims.b.URL(), sims.b.APIKey(), sims.b.URL())
	}
	if cs != nil {
		fmt.Printf("Solana cluster simulator (test mode, localnet %s, a slot every %s): %s\n  deployed mint: %s\n",
			cs.cluster.Network().CAIP2(), *chainSlot, cs.cluster.URL(), cs.mint)
		fmt.Printf("  payment treasury: %s\n  demo wallet (funded with 2 SOL and 1,000 tokens): %s\n  demo wallet keypair: %s\n",
			cs.treasury, cs.wallet, cs.walletPath)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	sims.close() // stops their callbacks before the platform closes
	if sim != nil {
		return sim.Close() // stops its webhook deliveries before the platform closes
	}
	return nil
}

// timeouts bound how long the host waits on a client.
type timeouts struct {
	// readHeader bounds the request line and headers: a client that sends
	// them slower is disconnected.
	readHeader time.Duration
	// read bounds reading a whole request, body included.
	read time.Duration
	// write bounds the time from the end of the request's headers to the
	// end of the response.
	write time.Duration
	// idle bounds how long a kept-alive connection waits for its next
	// request.
	idle time.Duration
}

// defaultTimeouts are the host's timeouts: 10 seconds for the headers, 30
// for a request (JSON bodies are at most a few MiB), 60 for its answer, 2
// minutes idle. Uploads and content downloads set their own deadlines per
// request, from their size (transport.TransferDeadline).
func defaultTimeouts() timeouts {
	return timeouts{readHeader: 10 * time.Second, read: 30 * time.Second, write: time.Minute, idle: 2 * time.Minute}
}

// newServer is the host's HTTP server for h on addr, with timeouts t.
func newServer(addr string, h http.Handler, t timeouts) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: t.readHeader, ReadTimeout: t.read,
		WriteTimeout: t.write, IdleTimeout: t.idle}
}

// paymentProviders builds the payment provider accounts: the loopback
// simulator as the test account when sim is set (its webhook URL is set
// once the host listens), and Stripe's live API when liveKey is set.
func paymentProviders(sim bool, liveKey, webhookSecret string, log *slog.Logger) (billing.Providers, *stripetest.Server, error) {
	var out billing.Providers
	var srv *stripetest.Server
	if sim {
		var err error
		if srv, err = stripetest.New(stripetest.Config{}); err != nil {
			return out, nil, err
		}
		hc, err := simClient(srv.URL())
		if err != nil {
			srv.Close()
			return out, nil, err
		}
		out.Test, err = stripepay.New(stripepay.Config{SecretKey: srv.SecretKey(), WebhookSecret: srv.WebhookSecret(),
			BaseURL: srv.URL(), Logger: log, HTTPClient: hc})
		if err != nil {
			srv.Close()
			return out, nil, fmt.Errorf("stripe simulator client: %w", err)
		}
	}
	if liveKey != "" {
		if !strings.HasPrefix(liveKey, "sk_live_") && !strings.HasPrefix(liveKey, "rk_live_") {
			if srv != nil {
				srv.Close()
			}
			return out, nil, errors.New("-stripe-live-key must be a live key (sk_live_ or rk_live_)")
		}
		live, err := stripepay.New(stripepay.Config{SecretKey: liveKey, WebhookSecret: webhookSecret, Logger: log})
		if err != nil {
			if srv != nil {
				srv.Close()
			}
			return out, nil, fmt.Errorf("stripe live client: %w", err)
		}
		out.Live = live
	} else if webhookSecret != "" {
		log.Warn("-stripe-webhook-secret is ignored without -stripe-live-key")
	}
	return out, srv, nil
}

// providerSims are the music provider simulators the host started.
type providerSims struct {
	a *provideratest.Server
	b *providerbtest.Server
}

// mediaAddrs are the loopback addresses of the simulators that run, where
// they serve their tracks' media.
func (s providerSims) mediaAddrs() ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, u := range []string{s.urlA(), s.urlB()} {
		if u == "" {
			continue
		}
		ap, err := urlguard.LoopbackOf(u)
		if err != nil {
			return nil, err
		}
		out = append(out, ap)
	}
	return out, nil
}

// urlA and urlB are the simulators' base URLs, empty when not running.
func (s providerSims) urlA() string {
	if s.a == nil {
		return ""
	}
	return s.a.URL()
}

func (s providerSims) urlB() string {
	if s.b == nil {
		return ""
	}
	return s.b.URL()
}

// close stops the simulators that run.
func (s providerSims) close() {
	if s.a != nil {
		s.a.Close()
	}
	if s.b != nil {
		s.b.Close()
	}
}

// musicProviders builds the music providers: with sim, both simulators on
// loopback, each advancing its tasks one stage per advance, as test mode's
// providers A (sunoapi dialect) and B, with their keys as the
// platform-managed test credentials.
func musicProviders(sim bool, advance time.Duration) (credential.Providers, providerSims, error) {
	var out credential.Providers
	var sims providerSims
	if !sim {
		return out, sims, nil
	}
	if advance <= 0 {
		return out, sims, errors.New("-provider-sim-advance must be positive")
	}
	var err error
	if sims.a, err = provideratest.New(provideratest.Config{Dialect: string(providera.DialectSunoAPI), AutoAdvance: advance}); err != nil {
		return out, sims, fmt.Errorf("provider A simulator: %w", err)
	}
	if sims.b, err = providerbtest.New(providerbtest.Config{AutoAdvance: advance}); err != nil {
		sims.close()
		return out, sims, fmt.Errorf("provider B simulator: %w", err)
	}
	hcA, err := simClient(sims.a.URL())
	if err != nil {
		sims.close()
		return out, sims, err
	}
	hcB, err := simClient(sims.b.URL())
	if err != nil {
		sims.close()
		return out, sims, err
	}
	clientA, err := providera.New(providera.Config{BaseURL: sims.a.URL(), Dialect: providera.DialectSunoAPI, HTTPClient: hcA})
	if err != nil {
		sims.close()
		return out, sims, fmt.Errorf("provider A simulator client: %w", err)
	}
	clientB, err := providerb.New(providerb.Config{BaseURL: sims.b.URL(), HTTPClient: hcB})
	if err != nil {
		sims.close()
		return out, sims, fmt.Errorf("provider B simulator client: %w", err)
	}
	out.Test = credential.Adapters{generation.ProviderA: clientA, generation.ProviderB: clientB}
	out.PlatformKeys.Test = credential.Keys{
		generation.ProviderA: {APIKey: sims.a.APIKey(), CallbackKey: sims.a.CallbackKey()},
		generation.ProviderB: {APIKey: sims.b.APIKey()},
	}
	return out, sims, nil
}

// simClient is a guarded client (urlguard) for a simulator this host
// started on loopback: http, and exactly the simulator's address let
// through; every other loopback, private or metadata address stays
// refused. Clients of real providers keep their adapters' defaults.
func simClient(simURL string) (*http.Client, error) {
	ap, err := urlguard.LoopbackOf(simURL)
	if err != nil {
		return nil, err
	}
	g, err := urlguard.New(urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{ap}})
	if err != nil {
		return nil, err
	}
	return g.Client(), nil
}

// loopbackURL is the http URL of a listen address, with an unspecified
// host (":8080", "0.0.0.0:8080") reached on 127.0.0.1.
func loopbackURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// masterKey reads the master secret, creating 32 random bytes on first start.
func masterKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return b, nil
}

// ensureDemo bootstraps the demo workspace on first start and prints its
// test key once; later starts read the credentials file.
func ensureDemo(ctx context.Context, p *platform.Platform, path string) (demo, error) {
	var d demo
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &d); err != nil {
			return d, fmt.Errorf("read %s: %w", path, err)
		}
		return d, nil
	}
	pw := make([]byte, 18)
	if _, err := rand.Read(pw); err != nil {
		return d, err
	}
	const ownerEmail = "owner@demo.localhost"
	password := base64.RawURLEncoding.EncodeToString(pw)
	boot, err := p.Bootstrap(ctx, platform.BootstrapInput{
		TenantName: "Demo Tenant", WorkspaceName: "Demo Studio",
		OwnerEmail: ownerEmail, OwnerName: "Demo Owner", KeyName: "Demo test key", Password: password, SuperAdmin: true,
	})
	if err != nil {
		return d, err
	}
	d = demo{APIKey: boot.TestKey, TenantID: boot.TenantID, WorkspaceID: boot.WorkspaceID, OwnerID: boot.OwnerID,
		OwnerEmail: ownerEmail, OwnerPassword: password}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return d, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return d, fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Printf("Demo workspace created. Test API key (shown once; also in %s, with the owner's password):\n\n  %s\n\n", path, boot.TestKey)
	return d, nil
}

// listenAndServe binds addr and only then logs that the host listens, with
// the addresses of the API's docs page, OpenAPI document and client
// collection; a failed bind is returned and nothing is logged. srv serves
// the listener until it fails, which the returned channel reports.
func listenAndServe(srv *http.Server, addr string, log *slog.Logger) (<-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	log.Info("listening", "addr", base, "docs", base+"/api/docs/", "openapi", base+"/api/docs/openapi.json",
		"collection", base+"/api/client-collection/")
	return errc, nil
}
