package platform

import (
	"context"
	"fmt"
	"strings"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/urlguard"
)

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
	media, err := urlguard.New(generation.MediaGuardConfig(cfg.AllowLoopback))
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
