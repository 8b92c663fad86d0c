package platform

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/transport/api"
)

// The platform's job classes. Each runs on its own workers (package jobs,
// Classes), so the work of one never waits for workers busy with
// another's: payments and provider dispatch go on while the sound engine
// spends an hour on one file.
const (
	// jobClassMoney runs the jobs that move or verify value: billing
	// renewals, webhook events and provider cancellations, plan grants,
	// chain payment intents, token and sale verification.
	jobClassMoney = "money"
	// jobClassProvider runs music generation's provider work: dispatch,
	// polls, ingest, reconciliation, expiry and ambiguity resolution.
	jobClassProvider = "provider"
	// jobClassAudio runs sound engine operations, with a per-workspace
	// limit.
	jobClassAudio = "audio"
	// jobClassMaintenance runs housekeeping: the idempotency prune, the
	// staging cleanup, and sound operation expiry. Expiry is here, not in
	// the audio class, so that it never waits behind the very runs it is
	// meant to end.
	jobClassMaintenance = "maintenance"
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

// jobClassOf assigns every job kind the platform runs to its class. New
// refuses to start when a handler's kind is missing here, so a new kind is
// classed before it can run.
func jobClassOf() map[string]string {
	return map[string]string{
		billing.JobRenewal:        jobClassMoney,
		billing.JobApplyEvent:     jobClassMoney,
		billing.JobProviderCancel: jobClassMoney,
		plan.JobMonthlyGrant:      jobClassMoney,
		plan.JobScheduleGrants:    jobClassMoney,
		jobTokenVerify:            jobClassMoney,
		jobTokenSchedule:          jobClassMoney,
		jobIntentRelay:            jobClassMoney,
		jobIntentWatch:            jobClassMoney,
		jobIntentReconcile:        jobClassMoney,
		jobIntentSweep:            jobClassMoney,

		operation.JobDispatch:  jobClassProvider,
		operation.JobPoll:      jobClassProvider,
		operation.JobIngest:    jobClassProvider,
		operation.JobReconcile: jobClassProvider,
		operation.JobExpire:    jobClassProvider,
		operation.JobAmbiguous: jobClassProvider,

		sound.JobRun: jobClassAudio,

		sound.JobExpire:     jobClassMaintenance,
		jobIdempotencyPrune: jobClassMaintenance,
		jobCleanStaging:     jobClassMaintenance,
	}
}

// jobClasses builds the pool's classes for the handlers: each kind in its
// class, with the budgets cfg sets or the defaults. A handler whose kind
// has no class is an error.
func jobClasses(handlers map[string]jobs.Handler, cfg JobsConfig) ([]jobs.Class, error) {
	if cfg.Workers < 0 || cfg.MoneyWorkers < 0 || cfg.ProviderWorkers < 0 || cfg.AudioWorkers < 0 ||
		cfg.MaintenanceWorkers < 0 || cfg.AudioPerWorkspace < 0 || cfg.StarvedAfter < 0 {
		return nil, fmt.Errorf("platform: Config.Jobs: worker budgets, the per-workspace limit and StarvedAfter must not be negative")
	}
	budget := func(own, def int) int { return orDefault(own, orDefault(cfg.Workers, def)) }
	classes := []jobs.Class{
		{Name: jobClassMoney, Workers: budget(cfg.MoneyWorkers, defaultMoneyWorkers)},
		{Name: jobClassProvider, Workers: budget(cfg.ProviderWorkers, defaultProviderWorkers)},
		{Name: jobClassAudio, Workers: budget(cfg.AudioWorkers, defaultAudioWorkers),
			GroupLimit: orDefault(cfg.AudioPerWorkspace, defaultAudioPerWorkspace)},
		{Name: jobClassMaintenance, Workers: budget(cfg.MaintenanceWorkers, defaultMaintenanceWorkers)},
	}
	of := jobClassOf()
	for _, kind := range slices.Sorted(maps.Keys(handlers)) {
		i := slices.IndexFunc(classes, func(c jobs.Class) bool { return c.Name == of[kind] })
		if i < 0 {
			return nil, fmt.Errorf("platform: job kind %q has no job class (jobClassOf)", kind)
		}
		classes[i].Kinds = append(classes[i].Kinds, kind)
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
