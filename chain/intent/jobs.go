package intent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
)

// The chain payment path's job kinds (Jobs). Rows in existing databases
// carry these names, payloads and keys; migration 0017 enqueues
// JobReconcile for the intents settled before it with the same kind, key
// and attempts, so none of them may change.
const (
	// JobRelay sends a submitted intent's signed bytes (payload {"id"}):
	// first from the unit of work that submits it (key
	// "intent.relay:<id>:0"), again after an uncertain send (key
	// "intent.relay:<id>:<send attempts>", RelayRetry later).
	JobRelay = "intent.relay"
	// JobWatch moves one submitted intent until it settles or ends, and
	// past settlement until the transaction is finalized (payload {"id"};
	// key "intent.watch:<id>:start", then "intent.watch:<id>:<time>" every
	// WatchEvery).
	JobWatch = "intent.watch"
	// JobSweep reconciles every pending intent, at most SweepBatch per run
	// (payments made from a chain payment request have no submit, so only
	// the sweep finds them), once every Config.SweepEvery.
	JobSweep = "intent.sweep"
	// JobReconcile runs the reconciliation of a settled intent (payload
	// {"id"}; key "intent.reconcile:<id>"; ReconcileAttempts attempts),
	// enqueued in the unit of work that settles it.
	JobReconcile = "intent.reconcile"
)

// The timings of the chain payment jobs.
const (
	// WatchEvery spaces one intent's reconciliations while it is open.
	WatchEvery = time.Second
	// RelayRetry spaces re-sends after an uncertain relay.
	RelayRetry = 2 * time.Second
	// SweepBatch bounds one sweep.
	SweepBatch = 100
	// ReconcileAttempts bounds a reconciliation job: a cluster that still
	// cannot be read on the last attempt (after about 17 minutes of
	// back-off) concludes REQUIRES_REVIEW.
	ReconcileAttempts = 10
	// DefaultSweepEvery is the sweep's period when Config.SweepEvery is
	// zero.
	DefaultSweepEvery = 5 * time.Second
)

// jobRef is the payload of the relay, watch and reconcile jobs.
type jobRef struct {
	ID string `json:"id"`
}

// EventType is the outbox event type of an intent written in state s:
// "transaction_intent.created", "transaction_intent.submitted", ... one
// per state (States).
func EventType(s State) string {
	return "transaction_intent." + strings.ToLower(string(s))
}

// Jobs returns the chain payment path's job kinds, all in the money
// class: relay, watch, reconcile and the periodic sweep.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{
		{Name: JobRelay, Class: jobs.ClassMoney, HandlerFunc: s.relayJob},
		{Name: JobWatch, Class: jobs.ClassMoney, HandlerFunc: s.watchJob},
		{Name: JobReconcile, Class: jobs.ClassMoney, HandlerFunc: s.reconcileJob},
		{Name: JobSweep, Class: jobs.ClassMoney, HandlerFunc: s.sweepJob, Every: s.cfg.SweepEvery},
	}
}

// changed runs in every unit of work that writes an intent: it records
// the intent's event (EventType, with the reconciliation's id and outcome
// once reconciled), runs the purpose's Track hook, and schedules the
// intent's next job: the relay and the watch after a submit, the
// reconciliation in the unit that settles it. The workers are woken once
// the unit has committed.
func (s *Service) changed(ctx context.Context, st Store, it Intent) error {
	p, err := s.cfg.Registry.Lookup(it.Purpose)
	if err != nil {
		return err
	}
	if p.Track != nil {
		if err := p.Track(ctx, st, it); err != nil {
			return err
		}
	}
	event := map[string]any{"id": it.ID, "purpose": it.Purpose, "state": it.State,
		"networkState": it.NetworkState, "signature": it.Signature}
	if it.ReconciliationID != "" {
		event["reconciliationId"], event["outcome"] = it.ReconciliationID, it.ReconciliationOutcome
	}
	payload, _ := json.Marshal(event)
	if _, err := st.OutboxInsert(ctx, outbox.Event{TenantID: it.Actor.TenantID, WorkspaceID: it.Actor.WorkspaceID,
		Environment: string(it.Actor.Environment), Type: EventType(it.State), SchemaVersion: 1,
		AggregateID: it.ID, AggregateVersion: it.Version, OccurredAt: st.Now(), Payload: payload}); err != nil {
		return err
	}
	job, _ := json.Marshal(jobRef{ID: it.ID})
	if it.State == StateSubmitted && it.SignedTransaction != nil && it.SendAttempts == 0 {
		if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobRelay, Payload: job,
			UniqueKey: JobRelay + ":" + it.ID + ":0"}); err != nil {
			return err
		}
	}
	if it.State == StateSubmitted {
		if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobWatch, Payload: job,
			UniqueKey: JobWatch + ":" + it.ID + ":start"}); err != nil {
			return err
		}
	}
	if it.State == StateSettled {
		if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobReconcile, Payload: job,
			MaxAttempts: ReconcileAttempts, UniqueKey: JobReconcile + ":" + it.ID}); err != nil {
			return err
		}
	}
	if s.cfg.WakeFunc != nil {
		st.AfterCommit(s.cfg.WakeFunc)
	}
	return nil
}

// decodeJob reads the intent id of a relay, watch or reconcile job.
func decodeJob(j jobs.Job) (string, error) {
	var in jobRef
	if err := json.Unmarshal(j.Payload, &in); err != nil || in.ID == "" {
		return "", fmt.Errorf("%s: bad payload %q", j.Kind, j.Payload)
	}
	return in.ID, nil
}

// relayJob sends the intent's signed bytes. A send whose outcome is
// unknown enqueues the next attempt RelayRetry later: it inspects the
// signature first and re-sends the identical bytes only while nothing is
// known of it. Any other failure fails the attempt.
func (s *Service) relayJob(ctx context.Context, j jobs.Job) error {
	id, err := decodeJob(j)
	if err != nil {
		return err
	}
	out, err := s.Relay(ctx, id)
	if err != nil && !fault.Is(err, fault.SubmissionUncertain) {
		return err
	}
	it := out.Intent
	if it.ID != "" && it.State == StateSubmitted && it.LastError == fault.SubmissionUncertain {
		return s.enqueue(ctx, JobRelay, id, fmt.Sprintf("%d", it.SendAttempts), RelayRetry)
	}
	return nil
}

// watchJob reconciles one intent and watches it again WatchEvery later
// while it is pending or followed to finalized. A cluster that cannot be
// read counts as no news (the next watch reads again); any other failure
// fails the attempt.
func (s *Service) watchJob(ctx context.Context, j jobs.Job) error {
	id, err := decodeJob(j)
	if err != nil {
		return err
	}
	out, err := s.Reconcile(ctx, id)
	if err != nil && !errors.Is(err, chain.ErrUnavailable) && !fault.Is(err, fault.ProviderUnavailable) {
		return err
	}
	if out.Intent.ID != "" && !out.Intent.State.Pending() && !Following(out.Intent) {
		return nil
	}
	return s.enqueue(ctx, JobWatch, id, s.cfg.Clock.Now().Format(time.RFC3339Nano), WatchEvery)
}

// reconcileJob runs a settled intent's reconciliation. An unreadable
// cluster fails the attempt, so the pool retries with back-off; the last
// attempt concludes instead.
func (s *Service) reconcileJob(ctx context.Context, j jobs.Job) error {
	id, err := decodeJob(j)
	if err != nil {
		return err
	}
	_, err = s.ReconcileSettled(ctx, id, ReconcileOptions{LastAttempt: j.Attempts >= j.MaxAttempts, Attempts: j.Attempts})
	return err
}

// sweepJob reconciles up to SweepBatch pending intents. Failures are
// logged, not returned: the next period sweeps again.
func (s *Service) sweepJob(ctx context.Context, _ jobs.Job) error {
	if _, err := s.ReconcileDue(ctx, SweepBatch); err != nil {
		s.cfg.Logger.Warn("chain payment sweep", "error", err.Error())
	}
	return nil
}

// enqueue enqueues kind for intent id after delay, once per key.
func (s *Service) enqueue(ctx context.Context, kind, id, key string, delay time.Duration) error {
	payload, _ := json.Marshal(jobRef{ID: id})
	return s.cfg.Run(ctx, func(st Store) error {
		_, err := st.JobInsert(ctx, jobs.InsertParams{Kind: kind, Payload: payload, RunAt: st.Now().Add(delay),
			UniqueKey: kind + ":" + id + ":" + key})
		return err
	})
}
