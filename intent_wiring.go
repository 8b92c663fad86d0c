package platform

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
)

// The chain payment path's jobs: relay sends an intent's signed bytes
// (payload {"id"}), watch moves one submitted intent until it settles or
// ends, sweep does the same for every pending intent (payments made from a
// chain payment request have no submit) and schedules itself again. A
// watch continues past settlement until the transaction is finalized.
// reconcile (payload {"id"}) is enqueued in the unit of work that settles
// an intent and runs its reconciliation; migration 0017 enqueues it for
// intents settled before, with the same kind, key and attempts.
const (
	jobIntentRelay     = "intent.relay"
	jobIntentWatch     = "intent.watch"
	jobIntentSweep     = "intent.sweep"
	jobIntentReconcile = "intent.reconcile"
)

// intentJob is the payload of the relay and watch jobs.
type intentJob struct {
	ID string `json:"id"`
}

// The timings of the chain payment jobs.
const (
	// watchEvery spaces one intent's reconciliations while it is open.
	watchEvery = time.Second
	// relayRetry spaces re-sends after an uncertain relay.
	relayRetry = 2 * time.Second
	// sweepBatch bounds one sweep.
	sweepBatch = 100
	// reconcileAttempts bounds a reconciliation job: a cluster that still
	// cannot be read on the last attempt (after about 17 minutes of
	// back-off) concludes REQUIRES_REVIEW.
	reconcileAttempts = 10
)

// sweepEvery is the chain payment sweep's period.
func (p *Platform) sweepEvery() time.Duration {
	if p.cfg.Chain.SweepEvery > 0 {
		return p.cfg.Chain.SweepEvery
	}
	return 5 * time.Second
}

// startIntents builds the chain payment path: the credit_purchase purpose
// priced by each environment's credits.packs policy (published at start
// when the environment has none) and settled by a ledger grant, over the
// environments that configure a cluster and a treasury.
func (p *Platform) startIntents(ctx context.Context, cfg ChainConfig) error {
	reg := intent.NewRegistry()
	if err := reg.Register(intent.CreditPurchase(p.creditPacks, p.settleCredits, p.creditSettlement)); err != nil {
		return fmt.Errorf("platform: intents: %w", err)
	}
	envs := map[access.Environment]intent.Environment{}
	for env, e := range map[access.Environment]ChainEnvironment{access.Test: cfg.Test, access.Live: cfg.Live} {
		if e.Client == nil || e.Treasury == "" {
			continue
		}
		treasury, err := token2022.ParsePublicKey(e.Treasury)
		if err != nil {
			return fmt.Errorf("platform: intents: %s treasury: %w", env, err)
		}
		envs[env] = intent.Environment{Client: e.Client, Treasury: treasury}
		if err := p.seedCreditPacks(ctx, env, e); err != nil {
			return err
		}
	}
	// References are derived under their own label of the master secret.
	key, err := hkdf.Key(sha256.New, p.cfg.SecretKey, nil, "platform/intent-reference/v1", 32)
	if err != nil {
		return fmt.Errorf("platform: intents: derive the reference key: %w", err)
	}
	svc, err := intent.New(intent.Config{Registry: reg, Environments: envs, Wallets: walletLinks{p.db}, Clock: p.db,
		Run: store.Runner[intent.Store](p.db), Read: store.Reader[intent.Store](p.db), ReferenceKey: key, Changed: p.intentChanged})
	if err != nil {
		return fmt.Errorf("platform: intents: %w", err)
	}
	p.intents = svc
	return nil
}

// seedCreditPacks publishes env's credit packs. Configured packs are the
// source of truth: content that differs from the current version is
// published as the next version (versions are immutable; intents keep the
// one that priced them). Without configured packs, DefaultCreditPacks
// priced in the registry's mint is published only when env has none, so a
// restart never overrides a policy published since.
func (p *Platform) seedCreditPacks(ctx context.Context, env access.Environment, e ChainEnvironment) error {
	packs := e.CreditPacks
	configured := packs != nil
	if packs == nil {
		if e.Token.Mint == "" {
			return nil
		}
		mint, err := token2022.ParsePublicKey(e.Token.Mint)
		if err != nil {
			return fmt.Errorf("platform: credit packs: %w", err)
		}
		d := intent.DefaultCreditPacks(map[chain.Address]uint8{mint: 9})
		packs = &d
	}
	if err := packs.Validate(); err != nil {
		return fmt.Errorf("platform: credit packs (%s): %w", env, err)
	}
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		sc := policy.Scope{Environment: env}
		if _, err := policy.Current(ctx, tx, sc, intent.CreditPacksPolicyID); err == nil && !configured {
			return nil
		} else if err != nil && !fault.Is(err, fault.NotFound) {
			return err
		}
		_, _, err := policy.Publish(ctx, tx, sc, intent.CreditPacksPolicyID, packs, "system:configuration")
		return err
	})
}

// creditPacks reads env's current credits.packs policy.
func (p *Platform) creditPacks(ctx context.Context, env access.Environment) (intent.CreditPacks, intent.PolicyRef, error) {
	const op = "platform.creditPacks"
	v, err := policy.Current(ctx, p.db.Read(), policy.Scope{Environment: env}, intent.CreditPacksPolicyID)
	if fault.Is(err, fault.NotFound) {
		return intent.CreditPacks{}, intent.PolicyRef{}, fault.E(op, fault.ServiceUnavailable, "Credits are not sold in this environment.")
	}
	if err != nil {
		return intent.CreditPacks{}, intent.PolicyRef{}, fault.Wrap(op, err)
	}
	var packs intent.CreditPacks
	if err := json.Unmarshal(v.Content, &packs); err != nil {
		return intent.CreditPacks{}, intent.PolicyRef{}, fault.Wrap(op, fmt.Errorf("credits.packs v%d: %w", v.Version, err))
	}
	ref := v.Ref()
	return packs, intent.PolicyRef{ID: ref.ID, Version: ref.Version, Hash: ref.Hash}, nil
}

// settleCredits grants a settled credit purchase's credits to the
// intent's workspace, in the intent's environment, once: the grant's
// reference is the intent's business reference.
func (p *Platform) settleCredits(ctx context.Context, st intent.Store, it intent.Intent) error {
	tx, ok := st.(*store.Tx)
	if !ok {
		return fmt.Errorf("platform: settle credits: the unit of work's store is %T", st)
	}
	credits, err := money.ParseAtomic(it.Quantity)
	if err != nil {
		return fmt.Errorf("platform: settle credits: quantity %q: %w", it.Quantity, err)
	}
	_, _, err = ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: it.Actor.Scope(), Ref: it.BusinessReference, Amount: credits,
		Actor: ledger.Actor{UserID: it.Actor.UserID}})
	return err
}

// creditSettlement reads back a credit purchase's settlement for
// reconciliation: every grant movement carrying the intent's business
// reference in the intent's tenant (one is expected, in its workspace
// and environment), from system:grants to workspace:credits.
func (p *Platform) creditSettlement(ctx context.Context, st intent.Store, it intent.Intent) (intent.Settlement, error) {
	tx, ok := st.(*store.Tx)
	if !ok {
		return intent.Settlement{}, fmt.Errorf("platform: credit settlement: the unit of work's store is %T", st)
	}
	ms, err := tx.LedgerMovementsByReference(ctx, it.Actor.TenantID, string(ledger.TypeGrant)+":"+it.BusinessReference)
	if err != nil {
		return intent.Settlement{}, err
	}
	out := intent.Settlement{Credit: ledger.AccountWorkspaceCredits, Debit: ledger.AccountSystemGrants}
	for _, m := range ms {
		sm := intent.SettlementMovement{ID: m.ID, Reference: m.Reference, Scope: m.Scope}
		for _, ps := range m.Postings {
			sm.Postings = append(sm.Postings, intent.SettlementPosting{Account: ps.Account, Credit: ps.Direction == ledger.Credit,
				Amount: ps.Amount})
		}
		out.Movements = append(out.Movements, sm)
	}
	return out, nil
}

// intentChanged runs in every unit of work that writes an intent: it
// records the intent's event ("transaction_intent.<state>", with the
// reconciliation's id and outcome once reconciled) and schedules the
// intent's next job: the relay and the watch after a submit, the
// reconciliation in the unit that settles it.
func (p *Platform) intentChanged(ctx context.Context, st intent.Store, it intent.Intent) error {
	tx, ok := st.(*store.Tx)
	if !ok {
		return fmt.Errorf("platform: intent changed: the unit of work's store is %T", st)
	}
	event := map[string]any{"id": it.ID, "purpose": it.Purpose, "state": it.State,
		"networkState": it.NetworkState, "signature": it.Signature}
	if it.ReconciliationID != "" {
		event["reconciliationId"], event["outcome"] = it.ReconciliationID, it.ReconciliationOutcome
	}
	payload, _ := json.Marshal(event)
	if _, err := tx.OutboxInsert(ctx, outbox.Event{TenantID: it.Actor.TenantID, WorkspaceID: it.Actor.WorkspaceID,
		Environment: string(it.Actor.Environment), Type: intentEventType(it.State), SchemaVersion: 1,
		AggregateID: it.ID, AggregateVersion: it.Version, OccurredAt: tx.Now(), Payload: payload}); err != nil {
		return err
	}
	job, _ := json.Marshal(intentJob{ID: it.ID})
	if it.State == intent.StateSubmitted && it.SignedTransaction != nil && it.SendAttempts == 0 {
		if _, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: jobIntentRelay, Payload: job,
			UniqueKey: jobIntentRelay + ":" + it.ID + ":0"}); err != nil {
			return err
		}
	}
	if it.State == intent.StateSubmitted {
		if _, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: jobIntentWatch, Payload: job,
			UniqueKey: jobIntentWatch + ":" + it.ID + ":start"}); err != nil {
			return err
		}
	}
	if it.State == intent.StateSettled {
		if _, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: jobIntentReconcile, Payload: job,
			MaxAttempts: reconcileAttempts, UniqueKey: jobIntentReconcile + ":" + it.ID}); err != nil {
			return err
		}
	}
	tx.AfterCommit(p.wake)
	return nil
}

// intentEventType is the outbox event type of an intent written in state
// s: "transaction_intent.created", "transaction_intent.submitted", ...
// (EventCatalogue lists one per state).
func intentEventType(s intent.State) string {
	return "transaction_intent." + strings.ToLower(string(s))
}

// intentHandlers are the chain payment path's job handlers.
func (p *Platform) intentHandlers() map[string]jobs.Handler {
	return map[string]jobs.Handler{
		jobIntentRelay: func(ctx context.Context, j jobs.Job) error {
			var in intentJob
			if err := json.Unmarshal(j.Payload, &in); err != nil || in.ID == "" {
				return fmt.Errorf("intent.relay: bad payload %q", j.Payload)
			}
			out, err := p.intents.Relay(ctx, in.ID)
			if err != nil && !fault.Is(err, fault.SubmissionUncertain) {
				return err
			}
			it := out.Intent
			if it.ID != "" && it.State == intent.StateSubmitted && it.LastError == fault.SubmissionUncertain {
				// The send's outcome is unknown: the next run inspects the
				// signature first and re-sends the identical bytes only
				// while nothing is known of it.
				return p.enqueueIntentJob(ctx, jobIntentRelay, in.ID, fmt.Sprintf("%d", it.SendAttempts), relayRetry)
			}
			return nil
		},
		jobIntentWatch: func(ctx context.Context, j jobs.Job) error {
			var in intentJob
			if err := json.Unmarshal(j.Payload, &in); err != nil || in.ID == "" {
				return fmt.Errorf("intent.watch: bad payload %q", j.Payload)
			}
			out, err := p.intents.Reconcile(ctx, in.ID)
			if err != nil && !errors.Is(err, chain.ErrUnavailable) && !fault.Is(err, fault.ProviderUnavailable) {
				return err
			}
			if out.Intent.ID != "" && !out.Intent.State.Pending() && !intent.Following(out.Intent) {
				return nil
			}
			return p.enqueueIntentJob(ctx, jobIntentWatch, in.ID, p.db.Now().Format(time.RFC3339Nano), watchEvery)
		},
		jobIntentReconcile: func(ctx context.Context, j jobs.Job) error {
			var in intentJob
			if err := json.Unmarshal(j.Payload, &in); err != nil || in.ID == "" {
				return fmt.Errorf("intent.reconcile: bad payload %q", j.Payload)
			}
			// An unreadable cluster fails the attempt, so the pool retries
			// with back-off; the last attempt concludes instead.
			_, err := p.intents.ReconcileSettled(ctx, in.ID, intent.ReconcileOptions{
				LastAttempt: j.Attempts >= j.MaxAttempts, Attempts: j.Attempts})
			return err
		},
		jobIntentSweep: func(ctx context.Context, _ jobs.Job) error {
			if _, err := p.ReconcileIntents(ctx, sweepBatch); err != nil {
				p.log.Warn("chain payment sweep", "error", err.Error())
			}
			return p.scheduleEvery(ctx, jobIntentSweep, p.sweepEvery())
		},
	}
}

// enqueueIntentJob enqueues kind for intent id after delay, once per key.
func (p *Platform) enqueueIntentJob(ctx context.Context, kind, id, key string, delay time.Duration) error {
	payload, _ := json.Marshal(intentJob{ID: id})
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: kind, Payload: payload, RunAt: tx.Now().Add(delay),
			UniqueKey: kind + ":" + id + ":" + key})
		return err
	})
}

// walletLinks answers the intent domain's wallet question from the wallet
// links that wallet verification writes.
type walletLinks struct{ db *store.DB }

// Verified reports whether address is linked to userID in tenantID.
func (w walletLinks) Verified(ctx context.Context, tenantID, userID string, address chain.Address) (bool, error) {
	l, err := w.db.Read().WalletLinkGet(ctx, tenantID, wallet.Network, address.String())
	if fault.Is(err, fault.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return l.UserID == userID, nil
}

// ReconcileIntents reconciles up to limit open transaction intents now,
// least recently updated first, as the sweep job does: each is checked
// against its cluster (signature status, or the payment reference),
// verified and settled at its threshold. It returns how many it changed;
// one intent's failure does not stop the others, and the errors are
// joined.
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
