package platform

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/jobs"
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

// jobTokenVerify runs the registry's verification of one environment
// (payload {"environment": "test"}); jobTokenSchedule runs both and
// schedules the next period.
const (
	jobTokenVerify   = "token.verify"
	jobTokenSchedule = "token.verify.schedule"
)

// tokenJob is the payload of jobTokenVerify.
type tokenJob struct {
	Environment access.Environment `json:"environment"`
}

// startToken builds the token registry, the token sale and wallet
// verification.
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
	return nil
}

// tokenEvery is the scheduled verification period.
func (p *Platform) tokenEvery() time.Duration {
	if p.cfg.Chain.VerifyEvery > 0 {
		return p.cfg.Chain.VerifyEvery
	}
	return time.Hour
}

// tokenHandlers are the registry's job handlers.
func (p *Platform) tokenHandlers() map[string]jobs.Handler {
	return map[string]jobs.Handler{
		jobTokenVerify: func(ctx context.Context, j jobs.Job) error {
			var in tokenJob
			if err := json.Unmarshal(j.Payload, &in); err != nil || !in.Environment.Valid() {
				return fmt.Errorf("token.verify: bad payload %q", j.Payload)
			}
			if _, err := p.VerifyToken(ctx, in.Environment); err != nil {
				return err
			}
			_, err := p.VerifySales(ctx, in.Environment)
			return err
		},
		jobTokenSchedule: func(ctx context.Context, _ jobs.Job) error {
			for _, env := range []access.Environment{access.Test, access.Live} {
				if p.token.Config(env).Configured() {
					if _, err := p.VerifyToken(ctx, env); err != nil {
						return err
					}
				}
				if _, err := p.VerifySales(ctx, env); err != nil {
					return err
				}
			}
			return p.scheduleEvery(ctx, jobTokenSchedule, p.tokenEvery())
		},
	}
}

// scheduleToken enqueues, at start, a verification of every configured
// registry and its sales whose configuration has not been verified yet (a
// new or changed token or sale configuration), once across hosts, and the
// periodic schedule.
func (p *Platform) scheduleToken(ctx context.Context) error {
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		for _, env := range []access.Environment{access.Test, access.Live} {
			cfg := p.token.Config(env)
			if !cfg.Configured() && len(p.saleConfig(env).Sales) == 0 {
				continue
			}
			payload, _ := json.Marshal(tokenJob{Environment: env})
			if _, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: jobTokenVerify, Payload: payload,
				UniqueKey: jobTokenVerify + ":" + string(env) + ":" + cfg.Hash() + ":" + p.saleHash(env)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("platform: schedule token verification: %w", err)
	}
	return p.scheduleEvery(ctx, jobTokenSchedule, p.tokenEvery())
}

// VerifyToken runs the token registry's verification of env now: it reads
// the configured mint from env's cluster (outside any transaction) and
// stores the run, whatever its outcome. A run that could not read the
// cluster is stored as ERROR and moves nothing.
func (p *Platform) VerifyToken(ctx context.Context, env access.Environment) (token.Run, error) {
	if !env.Valid() {
		return token.Run{}, fmt.Errorf("platform: VerifyToken: unknown environment %q", env)
	}
	r := p.token.Verify(ctx, env)
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		r, err = tx.TokenRunInsert(ctx, r)
		return err
	})
	if err != nil {
		return token.Run{}, fmt.Errorf("platform: store token run: %w", err)
	}
	if r.Outcome == token.Errored {
		p.log.Warn("token verification could not read the cluster", "environment", string(env), "code", r.ErrorCode)
	}
	return r, nil
}

// saleHash identifies env's sale configuration (its cluster client
// aside), so that a changed sale is verified at the next start.
func (p *Platform) saleHash(env access.Environment) string {
	sc := p.saleConfig(env)
	sc.Chain = nil
	b, err := json.Marshal(sc)
	if err != nil {
		return "unhashable"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// saleConfig is env's sale configuration.
func (p *Platform) saleConfig(env access.Environment) sale.EnvConfig {
	if env == access.Test {
		return p.cfg.Chain.Test.Sale
	}
	return p.cfg.Chain.Live.Sale
}

// VerifySales runs the verification of every sale configured in env now,
// after the token registry's: a sale's production mint counts as verified
// only when the registry's verified mint is that same mint. Each run is
// stored whatever its outcome; chain reads happen outside any transaction.
func (p *Platform) VerifySales(ctx context.Context, env access.Environment) ([]sale.Run, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("platform: VerifySales: unknown environment %q", env)
	}
	sales := p.saleConfig(env).Sales
	if len(sales) == 0 {
		return nil, nil
	}
	v, err := p.token.View(ctx, env, p.db.Read())
	if err != nil {
		return nil, fmt.Errorf("platform: VerifySales: %w", err)
	}
	var out []sale.Run
	for _, sc := range sales {
		r, err := p.sale.Verify(ctx, env, sc.ID, v.Verified() && sc.ProductionMint != "" && sc.ProductionMint == v.Config.Mint)
		if err != nil {
			return nil, fmt.Errorf("platform: verify sale %s: %w", sc.ID, err)
		}
		err = p.db.InTx(ctx, func(tx *store.Tx) error {
			r, err = p.sale.RecordRun(ctx, tx, r)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("platform: store sale run %s: %w", sc.ID, err)
		}
		out = append(out, r)
	}
	return out, nil
}
