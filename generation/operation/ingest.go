package operation

import (
	"context"
	"errors"
	"fmt"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
)

// errDiscard rolls back an ingestion whose operation no longer wants the
// asset (cancelled, expired, or the slot already ingested).
var errDiscard = errors.New("operation: ingestion discarded")

// IngestHandler is the handler of JobIngest: it copies one output's final
// MP3 into a durable asset. The URL is the merged snapshot's: from
// provider A's authenticated record query only (an A callback body never
// reaches the snapshot), from provider B's body-signed webhooks or its
// record. An expired or empty URL fails the operation
// and releases its credits; an unreachable one is retried by the job and
// fails the operation on the job's last attempt. A URL the media guard
// refuses (generation.Fetcher, urlguard: a loopback, private, link-local
// or metadata address, a hostile spelling, credentials) is never fetched:
// it fails the operation at once with GENERATION_FAILED and releases its
// credits.
func (s *Service) IngestHandler() jobs.Handler {
	return handler("ingest", func(ctx context.Context, job jobs.Job, ref jobRef) error {
		err := s.ingest(ctx, ref)
		if err == nil || errors.Is(err, errDiscard) {
			return nil
		}
		switch code := fault.CodeOf(err); {
		case code == fault.ResultExpired, code == fault.GenerationFailed, code == fault.UnsupportedMediaType, code == fault.InvalidInput,
			job.Attempts >= job.MaxAttempts:
			if code != fault.ResultExpired {
				code = fault.GenerationFailed
			}
			return s.ingestFailed(ctx, ref.Operation, string(code))
		}
		return err
	})
}

func (s *Service) ingest(ctx context.Context, ref jobRef) error {
	read := s.cfg.ReadFunc()
	o, err := read.GenerationOperationLock(ctx, ref.Operation)
	if err != nil {
		return err
	}
	if o.Status().Terminal() || ref.Slot < 0 || ref.Slot >= len(o.Snapshot.Outputs) || o.Snapshot.Outputs[ref.Slot].AssetID != "" {
		return nil
	}
	out := o.Snapshot.Outputs[ref.Slot]
	// The attempt that delivered the outputs names the provider the
	// asset's provenance records; the unit below checks that it is still
	// the operation's current one.
	delivered, err := read.GenerationAttemptGet(ctx, o.CurrentAttemptID)
	if err != nil {
		return err
	}
	media, err := s.cfg.Fetcher.Fetch(ctx, out.AudioURL)
	if err != nil {
		return err
	}
	defer media.Body.Close()
	in := asset.UploadInput{
		Scope:   asset.Scope{TenantID: o.Scope.TenantID, WorkspaceID: o.Scope.WorkspaceID, Environment: string(o.Scope.Environment)},
		Creator: asset.Creator{UserID: o.CreatedByUserID, KeyID: o.CreatedByKeyID},
		Body:    media.Body, DeclaredType: "audio/mpeg", Filename: fmt.Sprintf("%s-%d.mp3", o.ID, ref.Slot+1), Origin: asset.Generated,
		Lineage: asset.Lineage{Provider: string(delivered.Provider), Model: o.Request.Model, OperationID: o.ID},
	}
	_, err = s.cfg.Assets.Upload(ctx, read, in, func(ctx context.Context, insert func(asset.Store) (asset.Asset, error)) error {
		return s.cfg.IngestRunFunc(ctx, func(st IngestStore) error {
			stored, err := insert(st)
			if err != nil {
				return err
			}
			o, err := st.GenerationOperationLock(ctx, ref.Operation)
			if err != nil {
				return err
			}
			next, effects := generation.Ingested(o.Snapshot, ref.Slot, stored.ID)
			if next.Outputs == nil || ref.Slot >= len(next.Outputs) || next.Outputs[ref.Slot].AssetID != stored.ID {
				return errDiscard
			}
			ok, err := st.GenerationOutputInsert(ctx, Output{OperationID: o.ID, Slot: ref.Slot, AssetID: stored.ID,
				ProviderTrackID: out.ProviderTrackID, CreatedAt: st.Now()})
			if err != nil {
				return err
			}
			if !ok {
				return errDiscard
			}
			a, err := st.GenerationAttemptGet(ctx, o.CurrentAttemptID)
			if err != nil {
				return err
			}
			if a.ID != delivered.ID {
				// Not the attempt the provenance names: the job runs again
				// and reads the current one.
				return fmt.Errorf("ingest %s: the current attempt changed during ingestion", o.ID)
			}
			_, err = s.commit(ctx, st, o, next, effects, a)
			return err
		})
	})
	return err
}

// ingestFailed fails the operation after an ingestion failure and
// releases its credits.
func (s *Service) ingestFailed(ctx context.Context, id, code string) error {
	return s.cfg.TrackRunFunc(ctx, func(st TrackStore) error {
		o, err := st.GenerationOperationLock(ctx, id)
		if err != nil {
			return err
		}
		next, effects := generation.IngestFailed(o.Snapshot, code)
		if len(effects) == 0 {
			return nil
		}
		_, err = s.commit(ctx, st, o, next, effects, Attempt{})
		return err
	})
}

// ProviderCostAccount is the provider-cost ledger account of a provider
// route: what the provider reported consuming. Its source is
// system:provider-usage.
func ProviderCostAccount(p generation.ProviderID) string {
	return "provider:" + string(p) + ":consumed"
}

// ReconcileHandler is the handler of JobReconcile: it reconciles one
// attempt's provider cost once. When the snapshot carries no
// creditsConsumed it queries the task once (kie market records report it);
// a failing query leaves the price table or UNKNOWN.
func (s *Service) ReconcileHandler() jobs.Handler {
	return handler("reconcile", func(ctx context.Context, job jobs.Job, ref jobRef) error {
		return s.reconcile(ctx, ref)
	})
}

func (s *Service) reconcile(ctx context.Context, ref jobRef) error {
	read := s.cfg.ReadFunc()
	o, a, err := load(ctx, read, ref)
	if err != nil {
		return err
	}
	snap := o.Snapshot
	if o.CurrentAttemptID != a.ID {
		snap = generation.Snapshot{}
	}
	in := generation.CostInput{Provider: a.Provider, Model: o.Request.Model, Outcome: snap.Outcome, Refunded: snap.Refunded,
		CreditsConsumed: snap.CreditsConsumed}
	if a.TaskID == "" {
		in.Outcome = generation.OutcomePending
	} else if in.CreditsConsumed == nil {
		if adapter, err := s.cfg.Credentials.Adapter(a.Scope.Environment, a.Provider); err == nil {
			if cred, err := s.open(ctx, read, a); err == nil {
				if st, err := adapter.Query(ctx, cred, a.TaskID); err == nil && st.TaskID == a.TaskID && st.CreditsConsumed != nil {
					in.CreditsConsumed = st.CreditsConsumed
				}
			}
		}
	}
	var rec generation.Reconciliation
	if in.Outcome == generation.OutcomePending {
		rec = generation.Reconciliation{Status: generation.CostUnknown, Source: generation.CostSource("none")}
	} else {
		rec = generation.Reconcile(in, s.cfg.Prices, s.cfg.CostDriftBps)
	}
	return s.cfg.TrackRunFunc(ctx, func(st TrackStore) error {
		c := Cost{ID: st.NewID("gcost_"), OperationID: o.ID, AttemptID: a.ID, Scope: o.Scope, Provider: a.Provider, Model: o.Request.Model,
			Status: rec.Status, Source: rec.Source, Expected: rec.Expected, Actual: rec.Actual, DriftBps: rec.DriftBps, CreatedAt: st.Now()}
		ok, err := st.GenerationCostInsert(ctx, c)
		if err != nil || !ok {
			return err
		}
		if rec.Actual != nil && *rec.Actual > 0 {
			if _, _, err := s.cfg.Ledger.Post(ctx, st, ledger.Movement{Scope: o.Scope, Ledger: ledger.ProviderCost, Type: ledger.TypeTransfer,
				Reference: "provider-cost:" + a.ID, Postings: []ledger.Posting{
					{Account: "system:provider-usage", Direction: ledger.Debit, Amount: money.Atomic(*rec.Actual)},
					{Account: ProviderCostAccount(a.Provider), Direction: ledger.Credit, Amount: money.Atomic(*rec.Actual)},
				}}); err != nil {
				return err
			}
		}
		if !rec.Drift {
			return nil
		}
		body := map[string]any{"operationId": o.ID, "attemptNumber": a.Number, "provider": string(a.Provider), "model": o.Request.Model,
			"status": string(rec.Status), "driftBps": rec.DriftBps}
		if rec.Expected != nil {
			body["expectedCredits"] = fmt.Sprint(*rec.Expected)
		}
		if rec.Actual != nil {
			body["actualCredits"] = fmt.Sprint(*rec.Actual)
		}
		return s.event(ctx, st, o, EventCostDrift, body)
	})
}
