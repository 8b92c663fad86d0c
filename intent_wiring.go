package platform

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/store"
)

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
		Run: store.Runner[intent.Store](p.db), Read: read, SweepEvery: cfg.SweepEvery, WakeFunc: p.wake, Logger: p.log,
		Wallets: wallet.Links{ReadFunc: store.Reader[wallet.LinkReader](p.db)}})
	if err != nil {
		return fmt.Errorf("platform: intents: %w", err)
	}
	if err := svc.SeedCreditPacks(ctx); err != nil {
		return fmt.Errorf("platform: %w", err)
	}
	p.intents = svc
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

// ReconcileIntents reconciles up to limit open transaction intents now,
// least recently updated first, as the sweep job (intent.JobSweep) does:
// each is checked against its cluster (signature status, or the payment
// reference), verified and settled at its threshold. It returns how many
// it changed; one intent's failure does not stop the others, and the
// errors are joined.
func (p *Platform) ReconcileIntents(ctx context.Context, limit int) (int, error) {
	outs, err := p.intents.ReconcileDue(ctx, limit)
	changed := 0
	for _, o := range outs {
		if o.Changed {
			changed++
		}
	}
	return changed, err
}

// ReconcileSettledIntent runs the reconciliation of one settled
// transaction intent now, as its job does (an unreadable cluster returns
// PROVIDER_UNAVAILABLE and leaves the intent RECONCILING), and returns the
// intent's reconciliation record; an intent already reconciled returns its
// record unchanged, and one that is not settled returns nil. The outcome
// is reported, never acted on.
func (p *Platform) ReconcileSettledIntent(ctx context.Context, id string) (*intent.Reconciliation, error) {
	out, err := p.intents.ReconcileSettled(ctx, id, intent.ReconcileOptions{})
	return out.Reconciliation, err
}
