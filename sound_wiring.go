package platform

import (
	"fmt"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/sound/builtin"
	"github.com/creatormusic/platform/store"
)

// startSound builds the sound engine service on the asset service, with
// the built-in engine (package sound/builtin) and each plan's input
// duration bound (plan.Limits.SoundMaxDuration).
func (p *Platform) startSound(assets *asset.Service) error {
	svc, err := sound.New(sound.Config{Assets: assets, Engine: builtin.Engine{},
		Run: store.Runner[sound.Store](p.db), Read: store.Reader[sound.Store](p.db),
		MaxInputDuration: func(plan string) time.Duration { return p.plans.Limits(plan).SoundMaxDuration }})
	if err != nil {
		return fmt.Errorf("platform: sound: %w", err)
	}
	p.sound = svc
	return nil
}
