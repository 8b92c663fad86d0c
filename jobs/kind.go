package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The classes of the platform's pool (Config.Classes). Each runs on its own
// workers, so the work of one never waits for workers busy with another's:
// payments and provider dispatch go on while the sound engine spends an
// hour on one file. A domain names the class of each kind it owns
// (Kind.Class); the host sizes each class's workers.
const (
	// ClassMoney runs the jobs that move or verify value: billing
	// renewals, webhook events and provider cancellations, plan grants,
	// chain payment intents, token and sale verification.
	ClassMoney = "money"
	// ClassProvider runs music generation's provider work: dispatch,
	// polls, ingest, reconciliation, expiry and ambiguity resolution.
	ClassProvider = "provider"
	// ClassOutbound runs fetches of URLs that callers name (the probes of
	// submitted asset URLs), with a per-workspace limit: what a caller
	// points the platform at waits on its own workers, so a slow or
	// hostile host delays neither generation nor another workspace's
	// probes.
	ClassOutbound = "outbound"
	// ClassAudio runs sound engine operations, with a per-workspace limit.
	ClassAudio = "audio"
	// ClassMaintenance runs housekeeping: the idempotency prune, the
	// staging cleanup, and sound operation expiry. Expiry is here, not in
	// the audio class, so that it never waits behind the very runs it is
	// meant to end.
	ClassMaintenance = "maintenance"
)

// Kind is a job kind as the domain that owns it declares it: the name its
// rows carry, the class of workers that runs it, its handler and, for a
// periodic kind, its period. The host registers what each domain returns
// (Handlers, Schedule) and sizes the classes.
type Kind struct {
	// Name is the kind stored in job rows ("intent.relay"). Rows in
	// existing databases carry it, so it never changes.
	Name string
	// Class names the class of workers that runs the kind (ClassMoney,
	// ...).
	Class string
	// HandlerFunc runs one job of the kind.
	HandlerFunc Handler
	// Every, when positive, makes the kind periodic: it runs at the start
	// of every period of this length, once across every host. Schedule
	// enqueues the next run when the host starts, and the handler Handlers
	// returns enqueues the one after each time a run succeeds.
	Every time.Duration
}

// Scheduler is the unit of work a periodic kind's next run is enqueued in.
type Scheduler interface {
	Enqueuer
	// Now is the unit of work's time.
	Now() time.Time
}

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Scheduler) error) error

// Next returns the insert of a periodic kind's run at the start of the
// period of length every that follows now. Its unique key names the
// kind and the period's start ("idempotency.prune:2026-03-01T13:00:00Z"),
// so every host that enqueues it for that period inserts one row.
func Next(kind string, every time.Duration, now time.Time) InsertParams {
	next := now.Truncate(every).Add(every)
	return InsertParams{Kind: kind, RunAt: next, UniqueKey: kind + ":" + next.Format(time.RFC3339)}
}

// Handlers returns the pool's handlers (Config.Handlers) of kinds: each
// kind's HandlerFunc, except that a periodic kind's enqueues the kind's
// next run through run once its HandlerFunc succeeded. A run that fails is retried
// before the next one is planned; the retry plans it. A kind without a
// name or a handler, and two kinds of one name, are errors.
func Handlers(kinds []Kind, run RunFunc) (map[string]Handler, error) {
	out := make(map[string]Handler, len(kinds))
	for _, k := range kinds {
		switch {
		case k.Name == "" || k.HandlerFunc == nil:
			return nil, fmt.Errorf("jobs: kind %q needs a name and a handler", k.Name)
		case out[k.Name] != nil:
			return nil, fmt.Errorf("jobs: kind %q is declared twice", k.Name)
		case k.Every < 0:
			return nil, fmt.Errorf("jobs: kind %q has a negative period", k.Name)
		case k.Every > 0 && run == nil:
			return nil, errors.New("jobs: periodic kinds need a unit of work to plan their next runs")
		}
		h := k.HandlerFunc
		if k.Every > 0 {
			h = func(ctx context.Context, j Job) error {
				if err := k.HandlerFunc(ctx, j); err != nil {
					return err
				}
				return enqueueNext(ctx, run, k)
			}
		}
		out[k.Name] = h
	}
	return out, nil
}

// Schedule enqueues the next run of every periodic kind of kinds, in one
// unit of work. Hosts call it when they start; the unique key of a period
// makes the hosts that start in one period enqueue one run of it.
func Schedule(ctx context.Context, kinds []Kind, run RunFunc) error {
	return run(ctx, func(st Scheduler) error {
		for _, k := range kinds {
			if k.Every <= 0 {
				continue
			}
			if _, err := st.JobInsert(ctx, Next(k.Name, k.Every, st.Now())); err != nil {
				return fmt.Errorf("jobs: schedule %s: %w", k.Name, err)
			}
		}
		return nil
	})
}

// enqueueNext enqueues k's next run in a unit of work of its own.
func enqueueNext(ctx context.Context, run RunFunc, k Kind) error {
	return run(ctx, func(st Scheduler) error {
		_, err := st.JobInsert(ctx, Next(k.Name, k.Every, st.Now()))
		return err
	})
}
