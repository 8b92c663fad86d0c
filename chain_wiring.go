package platform

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
)

// ChainClient is what the platform asks of a Solana cluster: the token
// registry's reads, the token balance the sale's verification reads, and
// the chain payment path's sends and transaction reads.
// chain/solanarpc.Client satisfies it.
type ChainClient interface {
	token.ChainClient
	intent.ChainClient
	GetTokenAccountBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.TokenAmount, error)
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
	svc, err := token.New(token.ServiceConfig{Environments: envs, Now: p.db.Now})
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
	ss, err := sale.New(sale.Config{Environments: sales, Now: p.db.Now, HandoffKey: hk})
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
	ws, err := wallet.New(wallet.Config{BaseURL: p.cfg.BaseURL, Clusters: clusters, Now: p.db.Now})
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

// VerifyToken runs the token registry's verification of env now, as its
// jobs do: it reads the configured mint from env's cluster (outside any
// transaction) and stores the run, whatever its outcome. A run that could
// not read the cluster is stored as ERROR and moves nothing.
func (p *Platform) VerifyToken(ctx context.Context, env access.Environment) (token.Run, error) {
	r, err := p.verify.VerifyToken(ctx, env)
	if err != nil {
		return token.Run{}, fmt.Errorf("platform: VerifyToken: %w", err)
	}
	return r, nil
}

// VerifySales runs the verification of every sale configured in env now,
// after the token registry's: a sale's production mint counts as verified
// only when the registry's verified mint is that same mint. Each run is
// stored whatever its outcome; chain reads happen outside any transaction.
func (p *Platform) VerifySales(ctx context.Context, env access.Environment) ([]sale.Run, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("platform: VerifySales: unknown environment %q", env)
	}
	runs := p.saleRuns()
	if !runs.Configured(env) {
		return nil, nil
	}
	v, err := p.token.View(ctx, env, p.db.Read())
	if err != nil {
		return nil, fmt.Errorf("platform: VerifySales: %w", err)
	}
	out, err := runs.VerifyAll(ctx, env, v)
	if err != nil {
		return nil, fmt.Errorf("platform: VerifySales: %w", err)
	}
	return out, nil
}
