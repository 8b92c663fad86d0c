package platform

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// Default worker budgets of the job classes, sized for a 2-core host.
const (
	// defaultMoneyWorkers: value-moving jobs are short database and chain
	// calls.
	defaultMoneyWorkers = 2
	// defaultProviderWorkers: provider calls mostly wait on HTTP, so more
	// run at once than there are cores.
	defaultProviderWorkers = 4
	// defaultAudioWorkers: decoding and analysis keep a core busy; one per
	// core.
	defaultAudioWorkers = 2
	// defaultAudioPerWorkspace: one sound operation of a workspace runs at
	// a time, so that with the default two audio workers a second
	// workspace always finds one free.
	defaultAudioPerWorkspace = 1
	// defaultMaintenanceWorkers: housekeeping is light; two so that an
	// expiry does not wait for a staging sweep.
	defaultMaintenanceWorkers = 2
	// defaultStarvedAfter is how long a class's oldest runnable job may
	// wait before health reports the class degraded.
	defaultStarvedAfter = time.Minute
	// starvedDownFactor: a class whose oldest runnable job has waited this
	// many times StarvedAfter is reported down.
	starvedDownFactor = 10
)

// jobKinds are the job kinds of every domain, each in the class its
// domain declares.
func (p *Platform) jobKinds(assets *asset.Service) []jobs.Kind {
	return slices.Concat(
		p.plans.Jobs(store.Runner[plan.Store](p.db), p.billing.PlanGranter(store.Runner[billing.GrantStore](p.db))),
		p.billing.Jobs(store.PairRunner[billing.EventStore, plan.Store](p.db)),
		p.generation.Jobs(),
		p.sound.Jobs(),
		p.verify.Jobs(),
		p.intents.Jobs(),
		idempotency.Jobs(store.Runner[idempotency.PruneStore](p.db)),
		assets.Jobs(),
	)
}

// jobClasses builds the pool's classes for the kinds the domains declare:
// each kind in its class, with the budgets cfg sets or the defaults. A
// kind without a class the platform runs is an error.
func jobClasses(kinds []jobs.Kind, cfg JobsConfig) ([]jobs.Class, error) {
	if cfg.Workers < 0 || cfg.MoneyWorkers < 0 || cfg.ProviderWorkers < 0 || cfg.AudioWorkers < 0 ||
		cfg.MaintenanceWorkers < 0 || cfg.AudioPerWorkspace < 0 || cfg.StarvedAfter < 0 {
		return nil, fmt.Errorf("platform: Config.Jobs: worker budgets, the per-workspace limit and StarvedAfter must not be negative")
	}
	budget := func(own, def int) int { return orDefault(own, orDefault(cfg.Workers, def)) }
	classes := []jobs.Class{
		{Name: jobs.ClassMoney, Workers: budget(cfg.MoneyWorkers, defaultMoneyWorkers)},
		{Name: jobs.ClassProvider, Workers: budget(cfg.ProviderWorkers, defaultProviderWorkers)},
		{Name: jobs.ClassAudio, Workers: budget(cfg.AudioWorkers, defaultAudioWorkers),
			GroupLimit: orDefault(cfg.AudioPerWorkspace, defaultAudioPerWorkspace)},
		{Name: jobs.ClassMaintenance, Workers: budget(cfg.MaintenanceWorkers, defaultMaintenanceWorkers)},
	}
	for _, k := range slices.SortedFunc(slices.Values(kinds), func(a, b jobs.Kind) int { return strings.Compare(a.Name, b.Name) }) {
		i := slices.IndexFunc(classes, func(c jobs.Class) bool { return c.Name == k.Class })
		if i < 0 {
			return nil, fmt.Errorf("platform: job kind %q has no job class", k.Name)
		}
		classes[i].Kinds = append(classes[i].Kinds, k.Name)
	}
	return slices.DeleteFunc(classes, func(c jobs.Class) bool { return len(c.Kinds) == 0 }), nil
}

// orDefault is v, or def when v is zero.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// jobClassChecks observe each job class's queue for the health route: the
// age of its oldest runnable job (available and due, or running under an
// expired lease, and not held back by its workspace's limit), read from
// the database, so it covers every host's workers. A class is up while
// that age is at most StarvedAfter, degraded past it and down past ten
// times it; a queue that cannot be read is down.
func (p *Platform) jobClassChecks() []api.HealthCheck {
	starved := p.cfg.Jobs.StarvedAfter
	if starved == 0 {
		starved = defaultStarvedAfter
	}
	var checks []api.HealthCheck
	for _, c := range p.pool.Classes() {
		checks = append(checks, api.HealthCheck{Name: "jobs." + c.Name, CheckFunc: func(ctx context.Context) api.ServiceHealth {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			h := api.ServiceHealth{Status: api.StatusUp, CheckedAt: p.db.Now()}
			b, err := p.db.Jobs().JobBacklog(ctx, jobs.BacklogParams{Kinds: c.Kinds, GroupLimit: c.GroupLimit})
			if err != nil {
				h.Status, h.Detail = api.StatusDown, "the job queue could not be read"
				return h
			}
			age, runnable := int64(b.Age/time.Second), int64(b.Runnable)
			h.OldestJobAgeSeconds, h.RunnableJobs = &age, &runnable
			switch {
			case b.Age > starvedDownFactor*starved:
				h.Status = api.StatusDown
			case b.Age > starved:
				h.Status = api.StatusDegraded
			}
			if h.Status != api.StatusUp {
				h.Detail = fmt.Sprintf("the oldest runnable %s job has waited %s (starved after %s)", c.Name, b.Age.Truncate(time.Second), starved)
			}
			return h
		}})
	}
	return checks
}
