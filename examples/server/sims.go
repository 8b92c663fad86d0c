package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/billing/stripepay"
	"github.com/creatormusic/platform/billing/stripetest"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/providera"
	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/urlguard"
)

// servicesFile is the map of what the host started, in the data folder.
const servicesFile = "services.json"

// simOptions say which loopback simulators the host starts for the test
// environment, and how fast they move.
type simOptions struct {
	// stripe starts the Stripe simulator as test mode's payment provider.
	stripe bool
	// providers starts the music provider A and B simulators.
	providers bool
	// advance is how long a simulated music task stays in a stage.
	advance time.Duration
	// chain starts the loopback Solana cluster with a deployed mint, sale
	// and swap pool, and the aggregator routing through the pool.
	chain bool
	// slot is the simulated cluster's slot time.
	slot time.Duration
	// cctp starts the loopback EVM node and attestation service for the
	// test environment's cross-chain transfers, with their receive side
	// on the cluster (needs chain).
	cctp bool
	// secret is the host's master secret, which seals the
	// payment-required protocol's fee payer at rest.
	secret []byte
}

// simulators are the loopback simulators the host started. They serve the
// test environment only: wire sets the test side of a configuration and
// never its live side.
type simulators struct {
	opts   simOptions
	stripe *stripetest.Server
	// payments is the Stripe adapter pointed at the simulator.
	payments *stripepay.Client
	a        *provideratest.Server
	b        *providerbtest.Server
	// music are the provider adapters pointed at the simulators.
	music credential.Adapters
	chain *chainSim
	// chainEnv is the test environment's chain configuration.
	chainEnv platform.ChainEnvironment
	// cctp is the cross-chain transfer set-up.
	cctp *cctpSim
}

// startSimulators starts the simulators o asks for; data is the host's
// data folder (the demo wallet's keypair). On error, those already started
// are stopped.
func startSimulators(ctx context.Context, o simOptions, data string, log *slog.Logger) (s *simulators, err error) {
	s = &simulators{opts: o}
	defer func() {
		if err != nil {
			s.close()
			s = nil
		}
	}()
	if o.stripe {
		if s.stripe, err = stripetest.New(stripetest.Config{}); err != nil {
			return s, fmt.Errorf("stripe simulator: %w", err)
		}
		hc, err := simClient(s.stripe.URL())
		if err != nil {
			return s, err
		}
		s.payments, err = stripepay.New(stripepay.Config{SecretKey: s.stripe.SecretKey(), WebhookSecret: s.stripe.WebhookSecret(),
			BaseURL: s.stripe.URL(), Logger: log, HTTPClient: hc})
		if err != nil {
			return s, fmt.Errorf("stripe simulator client: %w", err)
		}
	}
	if o.providers {
		if err := s.startProviders(); err != nil {
			return s, err
		}
	}
	if o.cctp && !o.chain {
		return s, errors.New("-cctp-sim needs -chain-sim: the mint is verified on the simulated cluster")
	}
	if o.chain {
		if s.chain, s.chainEnv, err = startChainSim(ctx, o.slot, data, o.secret); err != nil {
			return s, err
		}
	}
	if o.cctp {
		var wallet chain.Address
		if wallet, err = token2022.ParsePublicKey(s.chain.wallet); err != nil {
			return s, err
		}
		if s.cctp, s.chainEnv.CCTP, err = startCCTPSim(s.chain.cluster, wallet); err != nil {
			return s, err
		}
	}
	return s, nil
}

// startProviders starts both music provider simulators on loopback, each
// advancing its tasks one stage per advance: A in the sunoapi dialect, and
// B, with adapters that reach exactly their addresses.
func (s *simulators) startProviders() error {
	if s.opts.advance <= 0 {
		return errors.New("-provider-sim-advance must be positive")
	}
	var err error
	if s.a, err = provideratest.New(provideratest.Config{Dialect: string(providera.DialectSunoAPI), AutoAdvance: s.opts.advance}); err != nil {
		return fmt.Errorf("provider A simulator: %w", err)
	}
	if s.b, err = providerbtest.New(providerbtest.Config{AutoAdvance: s.opts.advance}); err != nil {
		return fmt.Errorf("provider B simulator: %w", err)
	}
	hcA, err := simClient(s.a.URL())
	if err != nil {
		return err
	}
	hcB, err := simClient(s.b.URL())
	if err != nil {
		return err
	}
	clientA, err := providera.New(providera.Config{BaseURL: s.a.URL(), Dialect: providera.DialectSunoAPI, HTTPClient: hcA})
	if err != nil {
		return fmt.Errorf("provider A simulator client: %w", err)
	}
	clientB, err := providerb.New(providerb.Config{BaseURL: s.b.URL(), HTTPClient: hcB})
	if err != nil {
		return fmt.Errorf("provider B simulator client: %w", err)
	}
	s.music = credential.Adapters{generation.ProviderA: clientA, generation.ProviderB: clientB}
	return nil
}

// wire points the test environment of cfg at the simulators that run: the
// payment provider, the music providers with their platform-managed keys
// (A's callback key verifies its callbacks), the chain, and the loopback
// addresses the platform may fetch provider media from. The live side of
// cfg is never touched: the live environment never uses a simulator.
func (s *simulators) wire(cfg *platform.Config) error {
	if s.payments != nil {
		cfg.Payments.Test = s.payments
	}
	if s.music != nil {
		cfg.MusicProviders.Test = s.music
		cfg.MusicProviders.PlatformKeys.Test = credential.Keys{
			generation.ProviderA: {APIKey: s.a.APIKey(), CallbackKey: s.a.CallbackKey()},
			generation.ProviderB: {APIKey: s.b.APIKey()},
		}
		for _, u := range []string{s.a.URL(), s.b.URL()} {
			ap, err := urlguard.LoopbackOf(u)
			if err != nil {
				return err
			}
			cfg.AllowLoopback = append(cfg.AllowLoopback, ap)
		}
	}
	if s.chain != nil {
		cfg.Chain.Test = s.chainEnv
	}
	return nil
}

// listening tells the simulators that call the host back where it
// listens: the Stripe simulator sends its webhooks to the test receiver.
func (s *simulators) listening(base string) error {
	if s.stripe != nil {
		return s.stripe.SetWebhookURL(base + "/internal/payments/test/webhook")
	}
	return nil
}

// close stops the simulators that run; those that call the host back stop
// first. It may be called more than once.
func (s *simulators) close() {
	if s == nil {
		return
	}
	if s.a != nil {
		s.a.Close()
	}
	if s.b != nil {
		s.b.Close()
	}
	if s.stripe != nil {
		s.stripe.Close()
	}
	s.cctp.close()
	s.cctp = nil
	s.chain.close()
	s.chain = nil
}

// serviceMap is what the host started: the API's addresses and each
// simulator. The host prints it and writes it to DATA/services.json (mode
// 0600), where examples/chainpay reads the cluster's address.
type serviceMap struct {
	// API is the host's base URL; Docs, OpenAPI and Collection are the
	// interactive docs, the OpenAPI document and the client collection.
	API        string `json:"api"`
	Docs       string `json:"docs"`
	OpenAPI    string `json:"openapi"`
	Collection string `json:"collection"`
	// Simulators serve the test environment only.
	Simulators []simService `json:"simulators"`
}

// simService is one simulator the host started.
type simService struct {
	// Name is stripe, provider-a, provider-b, solana, jupiter, evm or
	// attestations.
	Name string `json:"name"`
	// URL is where it listens on loopback.
	URL string `json:"url"`
	// Key is the Bearer key of its /_sim/ control routes (for the music
	// providers, also the simulator-only API key).
	Key string `json:"key,omitempty"`
	// About says what it stands for, in one line.
	About string `json:"about"`
	// Chain is the deployment on the simulated cluster (solana only).
	Chain *chainDeployment `json:"chain,omitempty"`
	// Swap is the swap set-up the aggregator routes through (jupiter
	// only).
	Swap *swapDeployment `json:"swap,omitempty"`
	// CCTP is the cross-chain transfer set-up (evm only).
	CCTP *cctpDeployment `json:"cctp,omitempty"`
}

// chainDeployment is what the host deployed on the simulated cluster.
type chainDeployment struct {
	// Network is the cluster's CAIP-2 id (solana: and its genesis hash).
	Network string `json:"network"`
	// Mint is the deployed Token-2022 mint, Treasury the wallet holding
	// its supply, which the test environment's chain payments pay.
	Mint     string `json:"mint"`
	Treasury string `json:"treasury"`
	// Wallet is the demo wallet's address, Keypair its keypair file.
	Wallet  string `json:"wallet"`
	Keypair string `json:"keypair"`
	// GuestWallet is the guest account's wallet, GuestKeypair its keypair
	// file.
	GuestWallet  string `json:"guestWallet"`
	GuestKeypair string `json:"guestKeypair"`
	// X402 is the payment-required protocol's set-up.
	X402 *x402Deployment `json:"x402,omitempty"`
	// Rewards is the reward treasury that backs the test environment's
	// challenge pools and pays their claims.
	Rewards *rewardDeployment `json:"rewards,omitempty"`
}

// services is the map of what runs, for an API listening at base.
func (s *simulators) services(base string) serviceMap {
	m := serviceMap{API: base, Docs: base + "/api/docs/", OpenAPI: base + "/api/docs/openapi.json",
		Collection: base + "/api/client-collection/", Simulators: []simService{}}
	if s.stripe != nil {
		m.Simulators = append(m.Simulators, simService{Name: "stripe", URL: s.stripe.URL(), Key: s.stripe.SecretKey(),
			About: "Stripe API, hosted checkout and signed webhooks: test mode's payment provider"})
	}
	if s.a != nil {
		m.Simulators = append(m.Simulators, simService{Name: "provider-a", URL: s.a.URL(), Key: s.a.APIKey(),
			About: fmt.Sprintf("music provider A (sunoapi dialect), a stage every %s", s.opts.advance)})
	}
	if s.b != nil {
		m.Simulators = append(m.Simulators, simService{Name: "provider-b", URL: s.b.URL(), Key: s.b.APIKey(),
			About: fmt.Sprintf("music provider B, a step every %s", s.opts.advance)})
	}
	if s.chain != nil {
		m.Simulators = append(m.Simulators, simService{Name: "solana", URL: s.chain.cluster.URL(),
			About: fmt.Sprintf("Solana JSON-RPC cluster (localnet), a slot every %s", s.opts.slot),
			Chain: &chainDeployment{Network: s.chain.cluster.Network().CAIP2(), Mint: s.chain.mint, Treasury: s.chain.treasury,
				Wallet: s.chain.wallet, Keypair: s.chain.walletPath, GuestWallet: s.chain.guest, GuestKeypair: s.chain.guestPath,
				X402: s.chain.x402, Rewards: s.chain.reward}})
		m.Simulators = append(m.Simulators, simService{Name: "jupiter", URL: s.chain.swap.aggregator.URL(),
			About: "Jupiter swap API (quotes, swap instructions) over the cluster's pool: the test environment's route provider",
			Swap:  s.chain.swap.deployment()})
	}
	if s.cctp != nil {
		m.Simulators = append(m.Simulators, s.cctp.services()...)
	}
	return m
}

// print writes the map for a person: the API's addresses, then each
// simulator with its URL, key and what it stands for.
func (m serviceMap) print(w io.Writer) {
	fmt.Fprintf(w, "API         %s\n  docs        %s\n  openapi     %s\n  collection  %s\n", m.API, m.Docs, m.OpenAPI, m.Collection)
	if len(m.Simulators) == 0 {
		fmt.Fprintln(w, "No simulators: the test environment has no payment provider, music provider or cluster.")
		return
	}
	fmt.Fprintln(w, "Simulators (test environment only; the live environment never uses one):")
	for _, s := range m.Simulators {
		fmt.Fprintf(w, "  %-11s %s  %s\n", s.Name, s.URL, s.About)
		if s.Key != "" {
			fmt.Fprintf(w, "              control routes %s/_sim/... with Authorization: Bearer %s\n", s.URL, s.Key)
		}
		if c := s.Chain; c != nil {
			fmt.Fprintf(w, "              network %s\n              mint %s\n              treasury %s\n", c.Network, c.Mint, c.Treasury)
			fmt.Fprintf(w, "              demo wallet %s (%s), keypair %s\n", c.Wallet, demoFunding(), c.Keypair)
			fmt.Fprintf(w, "              guest wallet %s (%s), keypair %s\n", c.GuestWallet, guestFunding(), c.GuestKeypair)
			if c.X402 != nil {
				c.X402.print(w)
			}
			if c.Rewards != nil {
				c.Rewards.print(w)
			}
		}
		if s.Swap != nil {
			s.Swap.print(w)
		}
		if s.CCTP != nil {
			s.CCTP.print(w)
		}
	}
}

// save writes the map to path, mode 0600 (it holds the simulators' keys).
func (m serviceMap) save(path string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
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
