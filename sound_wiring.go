package platform

import (
	"context"
	"fmt"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/sound/builtin"
	"github.com/creatormusic/platform/store"
)

// startSound builds the sound engine service on the asset service, with
// the built-in engine (package sound/builtin) and each plan's input
// duration bound (plan.Limits.SoundMaxDuration).
func (p *Platform) startSound(assets *asset.Service) error {
	svc, err := sound.New(sound.Config{Assets: assets, Engine: builtin.Engine{},
		Run: func(ctx context.Context, fn func(st sound.Store) error) error {
			return p.db.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
		},
		Read:             func() sound.Store { return p.db.Read() },
		MaxInputDuration: func(plan string) time.Duration { return p.plans.Limits(plan).SoundMaxDuration }})
	if err != nil {
		return fmt.Errorf("platform: sound: %w", err)
	}
	p.sound = svc
	return nil
}

// soundHandlers are the job handlers of the sound engine.
func (p *Platform) soundHandlers() map[string]jobs.Handler {
	return map[string]jobs.Handler{sound.JobRun: p.sound.RunHandler(), sound.JobExpire: p.sound.ExpireHandler()}
}
