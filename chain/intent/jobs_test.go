package intent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// job is a claimed job of kind for intent id.
func job(kind, id string) jobs.Job {
	return jobs.Job{Kind: kind, Payload: []byte(`{"id":"` + id + `"}`), Attempts: 1, MaxAttempts: jobs.DefaultMaxAttempts}
}

// jobsOf returns the committed jobs of kind for intent id, in order.
func (h *harness) jobsOf(kind, id string) []jobs.InsertParams {
	var out []jobs.InsertParams
	for _, j := range h.store.committed().jobs {
		if j.Kind == kind && strings.Contains(j.UniqueKey, ":"+id+":") || j.UniqueKey == kind+":"+id {
			out = append(out, j)
		}
	}
	return out
}

// eventTypes returns the committed outbox event types of intent id.
func (h *harness) eventTypes(id string) []string {
	var out []string
	for _, e := range h.store.committed().events {
		if e.AggregateID == id {
			out = append(out, e.Type)
		}
	}
	return out
}

// TestJobsDeclareTheChainPaymentKinds: the four kinds, byte for byte, all
// of the money class, and only the sweep periodic, every SweepEvery.
func TestJobsDeclareTheChainPaymentKinds(t *testing.T) {
	h := newHarness(t, feeMint(6, 0, 0))
	got := map[string]time.Duration{}
	for _, k := range h.svc.Jobs() {
		if k.Class != jobs.ClassMoney || k.HandlerFunc == nil {
			t.Errorf("kind %s: class %q, handler set %v", k.Name, k.Class, k.HandlerFunc != nil)
		}
		got[k.Name] = k.Every
	}
	want := map[string]time.Duration{"intent.relay": 0, "intent.watch": 0, "intent.reconcile": 0, "intent.sweep": 5 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	h2 := newHarness(t, feeMint(6, 0, 0), func(_ *harness, c *Config) { c.SweepEvery = time.Minute })
	if k := h2.svc.Jobs()[3]; k.Name != JobSweep || k.Every != time.Minute {
		t.Fatalf("configured sweep %+v", k)
	}
}

// TestWritesRecordEventsAndScheduleNextJobs: each write of an intent
// records "transaction_intent.<state>"; a submit with signed bytes
// enqueues the relay (once) and the watch, a wallet-broadcast submit only
// the watch; the workers are woken after each commit.
func TestWritesRecordEventsAndScheduleNextJobs(t *testing.T) {
	ctx := context.Background()
	wakes := 0
	h := newHarness(t, feeMint(6, 200, 5_000_000), func(_ *harness, c *Config) { c.WakeFunc = func() { wakes++ } })
	it := h.submitSigned(h.create())
	if got := h.eventTypes(it.ID); !slices.Equal(got, []string{"transaction_intent.created", "transaction_intent.submitted"}) {
		t.Fatalf("events %v", got)
	}
	relay, watch := h.jobsOf(JobRelay, it.ID), h.jobsOf(JobWatch, it.ID)
	if len(relay) != 1 || relay[0].UniqueKey != "intent.relay:"+it.ID+":0" || string(relay[0].Payload) != `{"id":"`+it.ID+`"}` ||
		!relay[0].RunAt.IsZero() || len(watch) != 1 || watch[0].UniqueKey != "intent.watch:"+it.ID+":start" {
		t.Fatalf("relay %+v\nwatch %+v", relay, watch)
	}
	if wakes != 2 {
		t.Fatalf("woken %d times, want once per committed write", wakes)
	}
	e := h.store.committed().events[1]
	var body map[string]any
	if err := json.Unmarshal(e.Payload, &body); err != nil || body["state"] != "SUBMITTED" || body["signature"] != it.Signature ||
		e.SchemaVersion != 1 || e.AggregateVersion != it.Version || e.WorkspaceID != "ws_1" || e.Environment != "test" {
		t.Fatalf("event %+v %v", e, body)
	}

	other := h.create()
	sig, _ := h.sign(other)
	must[Intent](t)(h.svc.Submit(ctx, h.user, other.ID, SubmitRequest{Signature: sig}))
	if len(h.jobsOf(JobRelay, other.ID)) != 0 || len(h.jobsOf(JobWatch, other.ID)) != 1 {
		t.Fatalf("a wallet-broadcast submit: relay %v watch %v", h.jobsOf(JobRelay, other.ID), h.jobsOf(JobWatch, other.ID))
	}
}

// TestRelayJobRetriesOnlyUncertainSends: a send whose outcome is unknown
// enqueues the next relay RelayRetry later, keyed by the send count; an
// accepted send, an intent no longer waiting to be relayed and a refusal
// enqueue nothing more; a bad payload fails.
func TestRelayJobRetriesOnlyUncertainSends(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	h.chain.sendErrs = []error{errTimeout()}
	if err := h.svc.relayJob(ctx, job(JobRelay, it.ID)); err != nil {
		t.Fatalf("uncertain send: %v, want a planned retry instead of a failed job", err)
	}
	relay := h.jobsOf(JobRelay, it.ID)
	if len(relay) != 2 || relay[1].UniqueKey != "intent.relay:"+it.ID+":1" || !relay[1].RunAt.Equal(h.clock.Now().Add(2*time.Second)) {
		t.Fatalf("after an uncertain send: %+v", relay)
	}
	if err := h.svc.relayJob(ctx, job(JobRelay, it.ID)); err != nil || len(h.jobsOf(JobRelay, it.ID)) != 2 {
		t.Fatalf("accepted send: %v, jobs %+v", err, h.jobsOf(JobRelay, it.ID))
	}
	h.land(it, chain.Confirmed, it.NetAtomic)
	must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if err := h.svc.relayJob(ctx, job(JobRelay, it.ID)); err != nil || len(h.jobsOf(JobRelay, it.ID)) != 2 || h.chain.count("sendTransaction") != 2 {
		t.Fatalf("relay of a settled intent: %v, sends %d", err, h.chain.count("sendTransaction"))
	}

	refused := h.submitSigned(h.create())
	h.chain.sendErrs = []error{&chain.RPCError{Code: -32002, Message: "Transaction simulation failed: Error processing Instruction 1: custom program error: 0x1"}}
	if err := h.svc.relayJob(ctx, job(JobRelay, refused.ID)); err == nil {
		t.Fatal("a refused send: nil, want the refusal (the intent failed)")
	}
	if got := h.store.intent(refused.ID); got.State != StateFailed || len(h.jobsOf(JobRelay, refused.ID)) != 1 {
		t.Fatalf("refused: %s, relay jobs %+v", got.State, h.jobsOf(JobRelay, refused.ID))
	}
	for _, payload := range []string{`{}`, `not json`} {
		if err := h.svc.relayJob(ctx, jobs.Job{Kind: JobRelay, Payload: []byte(payload)}); err == nil || !strings.Contains(err.Error(), "intent.relay: bad payload") {
			t.Fatalf("payload %s: %v", payload, err)
		}
	}
}

// TestWatchJobFollowsUntilFinalized: the watch reads a pending intent
// again WatchEvery later, also when the cluster cannot be read; it keeps
// following a settled intent until finalized and then stops. The unit
// that settles enqueues the reconciliation with ReconcileAttempts.
func TestWatchJobFollowsUntilFinalized(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	sig, _ := h.sign(it)
	it = must[Intent](t)(h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: sig}))
	watch := func(want int) []jobs.InsertParams {
		t.Helper()
		if err := h.svc.watchJob(ctx, job(JobWatch, it.ID)); err != nil {
			t.Fatal(err)
		}
		ws := h.jobsOf(JobWatch, it.ID)
		if len(ws) != want {
			t.Fatalf("watch jobs %d, want %d: %+v", len(ws), want, ws)
		}
		return ws
	}
	ws := watch(2) // unknown signature, within its grace: look again
	now := h.clock.Now()
	if ws[1].UniqueKey != "intent.watch:"+it.ID+":"+now.Format(time.RFC3339Nano) || !ws[1].RunAt.Equal(now.Add(time.Second)) {
		t.Fatalf("next watch %+v", ws[1])
	}
	h.clock.Add(time.Second)
	h.chain.failRead = errTimeout()
	watch(3) // unreadable cluster: no news, look again
	h.chain.failRead = nil

	h.clock.Add(time.Second)
	h.land(it, chain.Confirmed, it.NetAtomic)
	watch(4) // settled at confirmed, followed to finalized
	if got := h.store.intent(it.ID); got.State != StateSettled {
		t.Fatalf("state %s", got.State)
	}
	rec := h.jobsOf(JobReconcile, it.ID)
	if len(rec) != 1 || rec[0].UniqueKey != "intent.reconcile:"+it.ID || rec[0].MaxAttempts != 10 || string(rec[0].Payload) != `{"id":"`+it.ID+`"}` {
		t.Fatalf("reconciliation job %+v", rec)
	}
	h.clock.Add(time.Second)
	h.land(it, chain.Finalized, it.NetAtomic)
	watch(4) // finalized: the watch ends
	watch(4)
}

// TestReconcileJobConcludesOnItsLastAttempt: an unreadable cluster fails
// the reconciliation's attempts (the pool retries them) until the last,
// which concludes REQUIRES_REVIEW and records the reconciled event.
func TestReconcileJobConcludesOnItsLastAttempt(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := settledIntent(t, h)
	h.chain.failRead = errors.New("connection refused")
	j := job(JobReconcile, it.ID)
	j.MaxAttempts = ReconcileAttempts
	for j.Attempts = 1; j.Attempts < ReconcileAttempts; j.Attempts++ {
		if err := h.svc.reconcileJob(ctx, j); !fault.Is(err, fault.ProviderUnavailable) {
			t.Fatalf("attempt %d: %v, want PROVIDER_UNAVAILABLE", j.Attempts, err)
		}
	}
	if err := h.svc.reconcileJob(ctx, j); err != nil {
		t.Fatalf("last attempt: %v", err)
	}
	got := h.store.intent(it.ID)
	if got.State != StateReconciled || got.ReconciliationOutcome != OutcomeRequiresReview {
		t.Fatalf("%s %s", got.State, got.ReconciliationOutcome)
	}
	events := h.store.committed().events
	last := events[len(events)-1]
	var body map[string]any
	if err := json.Unmarshal(last.Payload, &body); err != nil || last.Type != "transaction_intent.reconciled" ||
		body["reconciliationId"] != got.ReconciliationID || body["outcome"] != "REQUIRES_REVIEW" {
		t.Fatalf("reconciled event %s %v", last.Type, body)
	}
}

// TestSweepTakesOneBatchOldestFirst: one sweep reconciles SweepBatch
// pending intents, least recently updated first; a failing sweep logs and
// succeeds, so its next period comes.
func TestSweepTakesOneBatchOldestFirst(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	h := newHarness(t, feeMint(6, 200, 5_000_000), func(_ *harness, c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		n := 0
		c.NewIDFunc = func() string { n++; return fmt.Sprintf("id%03d", n) }
	})
	var ids []string
	for range SweepBatch + 1 {
		ids = append(ids, h.create().ID)
		h.clock.Add(time.Millisecond)
	}
	h.clock.Add(DefaultTTL)
	if err := h.svc.sweepJob(ctx, jobs.Job{Kind: JobSweep}); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		want := StateExpired
		if i == SweepBatch {
			want = StateCreated
		}
		if got := h.store.intent(id).State; got != want {
			t.Fatalf("intent %d of %d: %s, want %s", i+1, len(ids), got, want)
		}
	}
	h.chain.failRead = errors.New("connection refused")
	if err := h.svc.sweepJob(ctx, jobs.Job{Kind: JobSweep}); err != nil || !strings.Contains(logs.String(), "chain payment sweep") {
		t.Fatalf("failing sweep: %v, log %q", err, logs.String())
	}
}
