// Command server is the example host: the whole platform on one machine.
//
//	go run ./examples/server                 # SQLite under ./data, 127.0.0.1:8080
//	go run ./examples/server -postgres URL   # PostgreSQL instead of SQLite
//
// On first start it creates a demo tenant, workspace and owner (roles OWNER
// and DEVELOPER) and a test API key, prints the key once and writes it to
// DATA/demo-credentials.json (mode 0600) so a person can try the API, and
// a guest account of a tenant of its own (guest@demo.localhost, with its
// own test key and password under "guest" in the same file, and on the
// chain simulator its own funded wallet DATA/demo-wallet-guest.json), the
// second party of what takes two. It keeps its master secret in
// DATA/secret.key (mode 0600) and, on SQLite, its database in
// DATA/platform.db (mode 0600, in a data folder it creates with mode
// 0700). SIGINT or SIGTERM shuts it down gracefully.
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
// The product by default. The host starts the test environment's loopback
// simulators, so that every part of the API can be tried on one host
// started once: Stripe (billing/stripetest), music providers A and B
// (generation/providera/provideratest in the sunoapi dialect,
// generation/providerb/providerbtest), a Solana cluster (chain/chaintest),
// a Jupiter aggregator routing through a pool on it
// (swap/jupiter/jupitertest), and two AI providers
// (ai/openai/openaitest, ai/anthropic/anthropictest). -stripe-sim=false,
// -provider-sim=false, -ai-sim=false and -chain-sim=false turn each off
// (the last, the cluster and the aggregator). Simulators serve the test environment
// only: the live environment never uses one. Once it listens, the host
// prints a map of what it started (the API's docs, OpenAPI document and
// client collection; each simulator's URL and control key) and writes it
// to DATA/services.json (mode 0600).
//
// Payments. The Stripe simulator is test mode's payment provider: test
// checkouts answer its hosted page as paymentUrl, and it sends its signed
// webhooks to this host's receiver. -stripe-live-key (and, to accept live
// webhooks, -stripe-webhook-secret) configures the live provider against
// api.stripe.com. Without a provider, checkouts of that environment answer
// 503 PROVIDER_UNAVAILABLE.
//
// Music providers. Both simulators are wired as test mode's providers A
// and B with platform-managed keys (A's callback key verifies its
// callbacks), and B is also the provider that customer keys are validated
// against. Every task they accept moves one stage per -provider-sim-advance
// (default 3s) on its own and calls back this host at its loopback address
// (/internal/providers/{provider}/callbacks/...), so POST
// /api/v1/music/generate in test mode completes within seconds with two
// MP3 tracks stored as assets. Their simulator-only API keys are in the
// map; B's can be submitted to POST /api/v1/providers/credentials. Without
// them no music provider is configured: GET /api/v1/providers reports both
// as not_configured, and generating answers 503 PROVIDER_UNAVAILABLE.
//
// Chain. The loopback Solana cluster is the test environment's cluster,
// reached over HTTP through the solana-go adapter (chain/solanarpc). The
// host deploys on it a Token-2022 mint that meets the token policy (9
// decimals, 200 bps up to 5 tokens, mint authority revoked, embedded
// metadata) and an open token sale with its contract, funded inventory and
// pool; for swaps, a second trusted token (TESTUSD, a Token-2022 test
// dollar: 6 decimals, no transfer fee), a constant-product pool of the two
// (10,000,000 TOKEN against 150,000 TESTUSD: 1 TOKEN = 0.015 TESTUSD, a 30
// bps venue fee) with a lookup table of its accounts, and a fee recipient
// holding a token account of each mint. It funds the demo wallet
// (DATA/demo-wallet.json) with 2 SOL, 1,000 TOKEN and 1,000 TESTUSD, and
// advances one slot per -chain-sim-slot (default 400ms). The registry's verification
// job reads the mint at start, so the token routes with the demo test key
// show LOCALNET_CONFIGURED, then LOCALNET_VERIFIED on the simulator's own
// network (never mainnet, never production ready). Anonymous callers see
// the live environment, which has no cluster: PRE_DEPLOYMENT. The loopback
// aggregator, reached through the Jupiter adapter (swap/jupiter), is the
// test environment's route provider, with both tokens as its swap
// registry: with the test key GET /api/v1/swap/tokens lists both
// (executable once the registry's verification at start has read their
// mints) and GET /api/v1/swap/settings reads ACTIVE. The payment-required
// protocol (web3/x402) sells one sound-engine analysis per use for 0.25
// TESTUSD, paid to the treasury (whose test dollar account the host
// creates) and settled by the platform's local facilitator with the
// host's fee payer: its key is generated on first start and kept in
// DATA/x402-fee-payer.sealed, sealed with the master secret, and the fee
// payer is funded with 1 SOL on every start (examples/x402buy buys one).
// The cluster lives in memory: each start deploys new mints and a new
// pool.
//
// Rewards. The test environment's reward treasury pays challenge rewards
// from the cluster: its key is generated on first start and kept in
// DATA/reward-treasury.sealed (mode 0600), sealed with the master secret
// as package rewards seals it (rewards.SealKey), and opened with
// rewards.NewLocalSigner, which holds it in memory and shows its address
// alone; the host never prints or logs the key. Every start funds the
// treasury with 1 SOL for fees and 10,000 TOKEN of the deployed mint in its
// Token-2022 account, finalized before the first request, so a challenge's
// pool is FUNDED by funding reconciliation and a claim is paid by the
// treasury's signer (examples/rewards runs a challenge to a paid reward).
// The map shows the treasury's address and its key file.
//
// AI control plane. -ai-sim (on by default) starts two loopback AI
// provider simulators for the test environment: an OpenAI-compatible
// Chat Completions server (ai/openai/openaitest, provider openai) and an
// Anthropic Messages server (ai/anthropic/anthropictest, provider
// anthropic). The test registry holds a model of each, both with the
// chat, json_output, tools and streaming capabilities and an 8192-unit
// context window: general (openai's sim-gpt, privacy class standard,
// US$0.00000015 an input and US$0.0000006 an output unit) and private
// (anthropic's sim-claude, no_retention, US$0.000003 and US$0.000015).
// The routing policy published on first start (where the environment has
// none; later changes go through PUT /api/v1/ai/routing) sends every task
// to general, then private, except project_analyze, which takes only
// no_retention or local models: private. The simulators' API keys are
// random, handed to the platform as AIConfig.TestKeys, sealed into the
// store at start and printed nowhere; the map shows each simulator's
// control key instead, for its /_sim/ routes (scripting replies, tool
// calls and faults; its request log shows the API key redacted).
//
// -ai-openai-url points provider openai at a real OpenAI-compatible
// server instead of its simulator: OpenAI (https://api.openai.com/v1),
// OpenRouter (https://openrouter.ai/api/v1), or a server on this machine
// such as Ollama (http://127.0.0.1:11434/v1), vLLM, llama.cpp or a
// LiteLLM proxy. The URL must be https, or plain http to a loopback
// address with its port (not the name localhost), which the AI URL guard
// then lets through; any other private address stays refused.
// -ai-openai-key is its key (sealed like the simulators'; empty for a
// server that takes none), and -ai-openai-model the upstream model the
// model general names (default gpt-4o-mini). A server on loopback makes
// general of the local privacy class. With -ai-sim=false and no URL the
// test environment has no AI provider: its chats answer 503
// PROVIDER_UNAVAILABLE.
//
// Webhooks. -webhook-allow-loopback (off by default) lets webhook
// endpoints of the test environment use http or https to a loopback
// address with its port (http://127.0.0.1:8765/hook), so a person can
// receive test deliveries on this machine (examples/webhookrecv prints
// them, signatures checked). Without it an endpoint must be https to a
// public host, as in production; live endpoints never reach loopback.
//
// Cross-chain transfers. -cctp-sim (off by default; needs -chain-sim)
// starts a loopback EVM node (web3/cctp/evmtest: Base Sepolia's chain id,
// CCTP domain 6 and testnet CCTP V2 contracts) and a loopback attestation
// service (web3/cctp/iristest, on Iris's V2 wire, attesting a burn on its
// third lookup), and sets up on the cluster a USDC mint, the CCTP V2
// receive side and the demo wallet's USDC token account. The test
// environment's cross-chain transfers read them through their adapters;
// the readiness job proves them at start, so GET /api/v1/web3/capabilities
// with the demo test key shows cross_chain_transfers configured, verified
// and enabled. Without the flag it shows not_configured.
//
// Leaderboards. Every start enqueues a snapshot of both environments'
// leaderboards as of that moment, beside the platform's daily run (00:00
// UTC), so GET /api/v1/leaderboard/me/explain answers from a computed
// snapshot within seconds: not_ranked for the demo owner until the demo
// workspace has accepted submissions, live releases or completed
// generations in the window, then ranked from the next snapshot.
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
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/billing/stripepay"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
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
	// Guest is the second demo account, of its own tenant.
	Guest *guest `json:"guest,omitempty"`
}

// guest is the second demo account: a creator of another tenant (its own
// workspace, OWNER there, not super_admin) with its own test key and
// wallet (DATA/demo-wallet-guest.json), so a person can try what takes two
// parties: submitting to the demo owner's public project, buying a license
// the demo workspace sells.
type guest struct {
	APIKey      string `json:"apiKey"`
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	UserID      string `json:"userId"`
	Email       string `json:"email"`
	Password    string `json:"password"`
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
	stripeSim := flag.Bool("stripe-sim", true, "start the loopback Stripe simulator as the test-mode payment provider")
	stripeLiveKey := flag.String("stripe-live-key", "", "Stripe live secret or restricted `key` (sk_live_/rk_live_) for live-mode checkouts")
	stripeWebhookSecret := flag.String("stripe-webhook-secret", "", "signing `secret` (whsec_) of the live Stripe webhook endpoint")
	providerSim := flag.Bool("provider-sim", true, "start the loopback music provider A and B simulators as the test-mode providers")
	providerAdvance := flag.Duration("provider-sim-advance", 3*time.Second, "how long each simulated music task stays in a stage")
	chainSim := flag.Bool("chain-sim", true, "start the loopback Solana cluster (a deployed mint, sale and swap pool) and its Jupiter aggregator for the test environment")
	chainSlot := flag.Duration("chain-sim-slot", 400*time.Millisecond, "the simulated cluster's slot time")
	cctpSim := flag.Bool("cctp-sim", false, "start the loopback EVM node and CCTP attestation service for the test environment's cross-chain transfers (needs -chain-sim)")
	aiSim := flag.Bool("ai-sim", true, "start the loopback OpenAI-compatible and Anthropic simulators as the test-mode AI providers")
	aiURL := flag.String("ai-openai-url", "", "base `URL` of a real OpenAI-compatible server (https, or http to a loopback address) for the test-mode AI provider openai, instead of its simulator")
	aiKey := flag.String("ai-openai-key", "", "API `key` of the -ai-openai-url server; empty for a server that takes none")
	aiModel := flag.String("ai-openai-model", "", "upstream `model` of the -ai-openai-url server that the registry's model general names (default "+defaultAIModel+")")
	webhookLoopback := flag.Bool("webhook-allow-loopback", false, "let test-environment webhook endpoints use http or https to a loopback address with its port (examples/webhookrecv); live endpoints never")
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
	live, err := liveStripe(*stripeLiveKey, *stripeWebhookSecret, log)
	if err != nil {
		return err
	}
	sims, err := startSimulators(ctx, simOptions{stripe: *stripeSim, providers: *providerSim, advance: *providerAdvance,
		chain: *chainSim, slot: *chainSlot, cctp: *cctpSim, secret: key,
		ai: aiOptions{sim: *aiSim, url: *aiURL, key: *aiKey, model: *aiModel}}, *data, log)
	if err != nil {
		return err
	}
	defer sims.close()
	cfg := platform.Config{Store: db, SecretKey: key, Logger: log, BlobDir: filepath.Join(*data, "blobs"),
		Mailer: mailer, BaseURL: "http://" + *addr, InsecureCookies: true,
		Generation: platform.GenerationConfig{CallbackBaseURL: loopbackURL(*addr)}}
	cfg.Webhooks.AllowTestLoopback = *webhookLoopback
	if live != nil {
		cfg.Payments.Live = live
	}
	if err := sims.wire(&cfg); err != nil {
		return err
	}
	p, err := platform.New(ctx, cfg)
	cfg.AI.TestKeys = nil // sealed into the store by New
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

	for _, env := range []access.Environment{access.Test, access.Live} {
		if _, err := p.EnqueueLeaderboardSnapshot(ctx, env); err != nil {
			return err
		}
	}

	srv := newServer(*addr, p.Handler(), defaultTimeouts())
	errc, base, err := listenAndServe(srv, *addr, log)
	if err != nil {
		return err
	}
	if err := sims.listening(loopbackURL(*addr)); err != nil {
		return err
	}
	m := sims.services(base)
	if err := m.save(filepath.Join(*data, servicesFile)); err != nil {
		return err
	}
	m.print(os.Stdout)
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
	sims.close() // stops their callbacks and webhooks before the platform closes
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

// liveStripe is the live payment provider, Stripe's API with liveKey, or
// nil without a key.
func liveStripe(liveKey, webhookSecret string, log *slog.Logger) (*stripepay.Client, error) {
	if liveKey == "" {
		if webhookSecret != "" {
			log.Warn("-stripe-webhook-secret is ignored without -stripe-live-key")
		}
		return nil, nil
	}
	if !strings.HasPrefix(liveKey, "sk_live_") && !strings.HasPrefix(liveKey, "rk_live_") {
		return nil, errors.New("-stripe-live-key must be a live key (sk_live_ or rk_live_)")
	}
	live, err := stripepay.New(stripepay.Config{SecretKey: liveKey, WebhookSecret: webhookSecret, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("stripe live client: %w", err)
	}
	return live, nil
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

// ensureDemo bootstraps the demo workspace and the guest account on first
// start and prints their test keys once; later starts read the credentials
// file (and add the guest account to a file written before it existed).
func ensureDemo(ctx context.Context, p *platform.Platform, path string) (demo, error) {
	var d demo
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &d); err != nil {
			return d, fmt.Errorf("read %s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		const ownerEmail = "owner@demo.localhost"
		password, err := demoPassword()
		if err != nil {
			return d, err
		}
		boot, err := p.Bootstrap(ctx, platform.BootstrapInput{
			TenantName: "Demo Tenant", WorkspaceName: "Demo Studio",
			OwnerEmail: ownerEmail, OwnerName: "Demo Owner", KeyName: "Demo test key", Password: password, SuperAdmin: true,
		})
		if err != nil {
			return d, err
		}
		d = demo{APIKey: boot.TestKey, TenantID: boot.TenantID, WorkspaceID: boot.WorkspaceID, OwnerID: boot.OwnerID,
			OwnerEmail: ownerEmail, OwnerPassword: password}
		fmt.Printf("Demo workspace created. Test API key (shown once; also in %s, with the owner's password):\n\n  %s\n\n", path, boot.TestKey)
	default:
		return d, fmt.Errorf("read %s: %w", path, err)
	}
	if d.Guest != nil {
		return d, nil
	}
	const guestEmail = "guest@demo.localhost"
	password, err := demoPassword()
	if err != nil {
		return d, err
	}
	boot, err := p.Bootstrap(ctx, platform.BootstrapInput{
		TenantName: "Guest Tenant", WorkspaceName: "Guest Studio",
		OwnerEmail: guestEmail, OwnerName: "Demo Guest", KeyName: "Guest test key", Password: password,
	})
	if err != nil {
		return d, fmt.Errorf("bootstrap the guest account: %w", err)
	}
	d.Guest = &guest{APIKey: boot.TestKey, TenantID: boot.TenantID, WorkspaceID: boot.WorkspaceID, UserID: boot.OwnerID,
		Email: guestEmail, Password: password}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return d, err
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return d, fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Printf("Guest account created (%s, its own tenant; its test key and password are in %s).\n\n", guestEmail, path)
	return d, nil
}

// demoPassword returns a new random password for a demo account.
func demoPassword() (string, error) {
	pw := make([]byte, 18)
	if _, err := rand.Read(pw); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(pw), nil
}

// listenAndServe binds addr and only then logs that the host listens, with
// the addresses of the API's docs page, OpenAPI document and client
// collection; a failed bind is returned and nothing is logged. srv serves
// the listener until it fails, which the returned channel reports; base is
// the URL of the address bound.
func listenAndServe(srv *http.Server, addr string, log *slog.Logger) (<-chan error, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("listen on %s: %w", addr, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	log.Info("listening", "addr", base, "docs", base+"/api/docs/", "openapi", base+"/api/docs/openapi.json",
		"collection", base+"/api/client-collection/")
	return errc, base, nil
}
