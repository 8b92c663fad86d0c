package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// The provider failure-mode tests (reference music-providers.md section 3,
// F1..F13): each drives a provider simulator into one failure and checks
// what a user of the API notices — the operation's status, stage and
// failure code, its two assets delivered once, its credits settled or
// released once — and that the provider was never asked for more tasks
// than right. They run on SQLite and PostgreSQL, on the fake clock: polls,
// retries and deadlines run only when a test advances it. Every wait is a
// bounded loop; no test asserts a timing.

// gfPrice is what one generation costs in platform credits (the default
// pricing policy).
const gfPrice = 15

// gfOptions are genOptions with short generation durations, so the fake
// clock reaches the first recovery poll after 2 s and the deadline after
// 10 min, and a media fetcher that does not sleep between its retries.
func gfOptions() platformtest.Options {
	o := genOptions()
	o.Generation = platform.GenerationConfig{Tuning: operation.Tuning{
		PollAfter: 2 * time.Second, PollMax: 4 * time.Second, PollMinInterval: time.Second,
		Deadline: 10 * time.Minute, AmbiguousWait: 5 * time.Minute,
		Fetcher: &generation.Fetcher{Attempts: 3, SleepFunc: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }},
	}}
	return o
}

// gfOp is one started generation.
type gfOp struct {
	id     string
	task   string // provider A's task id
	before int64  // the workspace's credits before the generate
}

// gfStart generates with the test key and waits until provider A accepted
// the create (its task is the n-th the simulator holds).
func gfStart(t *testing.T, s *platformtest.System, idem string) gfOp {
	t.Helper()
	before := creditInt(t, s, ledger.AccountWorkspaceCredits)
	n := len(s.ProviderA.Tasks())
	acc := acceptedID(t, generate(s, idem, map[string]any{"prompt": "A calm piano piece " + idem}))
	waitTasksA(t, s, n+1)
	waitOp(t, s, acc.OperationID, "accepted by provider A", func(v api.OperationView) bool {
		return len(v.Attempts) > 0 && v.Attempts[len(v.Attempts)-1].State == "accepted"
	})
	return gfOp{id: acc.OperationID, task: s.ProviderA.Tasks()[n].ID, before: before}
}

// gfAdvanceUntil moves the fake clock by step until cond holds, giving the
// job pool a moment after each step; it fails after a bounded wall time.
func gfAdvanceUntil(t *testing.T, s *platformtest.System, step time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 15s (fake clock at %s)", what, s.Clock.Now().Format(time.RFC3339))
		}
		s.Clock.Advance(step)
		for i := 0; i < 10 && !cond(); i++ {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// gfStatus reports whether the operation has the status.
func gfStatus(t *testing.T, s *platformtest.System, id, status string) func() bool {
	return func() bool { return getOp(t, s, id).Status == status }
}

// gfCompleted asserts a completed operation delivered exactly two assets
// and settled once: the reservation is empty, the workspace paid the price
// once, and one completed event was written.
func gfCompleted(t *testing.T, s *platformtest.System, op gfOp) api.OperationView {
	t.Helper()
	v := waitOp(t, s, op.id, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
	if v.Stage != "finished" || v.Failure != nil || len(v.Outputs) != 2 || v.Outputs[0].AssetID == nil || v.Outputs[1].AssetID == nil ||
		*v.Outputs[0].AssetID == *v.Outputs[1].AssetID {
		t.Fatalf("completed view = %+v", v)
	}
	if v.Billing.CreditsSettled == nil || *v.Billing.CreditsSettled != fmt.Sprint(gfPrice) || v.Billing.CreditsReleased == nil || *v.Billing.CreditsReleased != "0" {
		t.Fatalf("completed billing = %+v", v.Billing)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE operation_id = ?`, op.id); n != 2 {
		t.Fatalf("outputs = %d, want 2", n)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM assets a JOIN generation_outputs o ON o.asset_id = a.id WHERE o.operation_id = ? AND a.origin = 'generated'`, op.id); n != 2 {
		t.Fatalf("generated assets = %d, want 2", n)
	}
	if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != op.before-gfPrice {
		t.Fatalf("balance = %d, want %d (one settle)", got, op.before-gfPrice)
	}
	if got := reservationLeft(t, s, op.id); got != "0" {
		t.Fatalf("reservation left = %s, want 0", got)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND aggregate_id = ?`, operation.EventCompleted, op.id); n != 1 {
		t.Fatalf("completed events = %d, want 1", n)
	}
	return v
}

// gfReleased asserts an operation ended with status and failure code,
// delivered nothing and released its whole reservation once.
func gfReleased(t *testing.T, s *platformtest.System, op gfOp, status, code string) api.OperationView {
	t.Helper()
	v := waitOp(t, s, op.id, status, func(v api.OperationView) bool { return v.Status == status })
	if v.Failure == nil || v.Failure.Code != code {
		t.Fatalf("failure = %+v, want %s (view %+v)", v.Failure, code, v)
	}
	if v.Billing.CreditsSettled != nil || v.Billing.CreditsReleased == nil || *v.Billing.CreditsReleased != fmt.Sprint(gfPrice) {
		t.Fatalf("released billing = %+v", v.Billing)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE operation_id = ?`, op.id); n != 0 {
		t.Fatalf("outputs = %d, want 0", n)
	}
	if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != op.before {
		t.Fatalf("balance = %d, want %d (released)", got, op.before)
	}
	if got := reservationLeft(t, s, op.id); got != "0" {
		t.Fatalf("reservation left = %s, want 0", got)
	}
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + op.id + "/result", Key: s.Boot.TestKey})
	if r.Status != 409 || r.Code() != "RESULT_NOT_READY" {
		t.Fatalf("result of a %s operation: %d %s", status, r.Status, r.Body)
	}
	return v
}

// gfGenerated counts the workspace's generated assets.
func gfGenerated(t *testing.T, s *platformtest.System) int {
	t.Helper()
	return count(t, s, `SELECT COUNT(*) FROM assets WHERE origin = 'generated'`)
}

// gfPolls counts the recovery polls of an operation's attempts.
func gfPolls(t *testing.T, s *platformtest.System, id string) int {
	t.Helper()
	return count(t, s, `SELECT COALESCE(SUM(polls), 0) FROM generation_attempts WHERE operation_id = ?`, id)
}

// gfDeliveryStatuses lists provider A's callback answers for a task.
func gfDeliveryStatuses(s *platformtest.System, task string) []int {
	var out []int
	for _, d := range s.ProviderA.Deliveries() {
		if d.TaskID == task {
			out = append(out, d.Status)
		}
	}
	return out
}

// F1: the same stage's callback delivered again, also after the operation
// completed, is stored and merged once.
func TestGenerationFaultF1DuplicateCallbacks(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "f1")
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, op)
		for _, typ := range []string{"complete", "complete", "first", "text", "complete"} {
			if err := s.ProviderA.Redeliver(op.task, typ); err != nil {
				t.Fatalf("redeliver %s: %v", typ, err)
			}
		}
		for i, st := range gfDeliveryStatuses(s, op.task) {
			if st != 200 {
				t.Fatalf("delivery %d answered %d, want 200 (a duplicate is acknowledged)", i, st)
			}
		}
		v := gfCompleted(t, s, op)
		if v.Stage != "finished" {
			t.Fatalf("stage after duplicates = %s", v.Stage)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM generation_callbacks WHERE operation_id = ?`, op.id); n != 3 {
			t.Fatalf("stored callbacks = %d, want 3 (text, first, complete once each)", n)
		}
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want 2", n)
		}
		if s.ProviderA.CreateCount() != 1 {
			t.Fatalf("provider A creates = %d", s.ProviderA.CreateCount())
		}
	})
}

// F1 under concurrency: the complete callback delivered five times at once
// materializes two assets and settles once; every delivery is answered 200.
func TestGenerationFaultF1ConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "f1-concurrent")
		if err := s.ProviderA.DropCallbacks(op.task, "complete"); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 5)
		for range 5 {
			wg.Go(func() { errs <- s.ProviderA.Redeliver(op.task, "complete") })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("concurrent delivery: %v", err)
			}
		}
		gfCompleted(t, s, op)
		if n := count(t, s, `SELECT COUNT(*) FROM generation_callbacks WHERE operation_id = ? AND stage = 'provider_complete'`, op.id); n != 1 {
			t.Fatalf("stored complete callbacks = %d, want 1", n)
		}
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want 2", n)
		}
	})
}

// F2 on provider B: one clip finishes before the other (its webhook
// reports the task half done), and an old webhook is redelivered after
// completion.
func TestGenerationFaultF2ProviderBClipOrder(t *testing.T) {
	t.Parallel()
	o := gfOptions()
	o.Generation.Routes = []generation.ProviderID{generation.ProviderB}
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		before, acc, task := gfStartB(t, s, "f2b")
		for range 3 { // pending -> running -> streaming -> succeeded
			if err := s.ProviderB.AdvanceClip(task, 1); err != nil {
				t.Fatal(err)
			}
		}
		if len(s.ProviderB.Deliveries()) != 1 {
			t.Fatalf("deliveries = %d, want the half-done webhook", len(s.ProviderB.Deliveries()))
		}
		v := waitOp(t, s, acc.OperationID, "half done", func(v api.OperationView) bool { return v.Stage == "first" })
		if v.Status != "processing" || gfGenerated(t, s) != 0 {
			t.Fatalf("half-done view = %+v", v)
		}
		if err := s.ProviderB.Complete(task); err != nil {
			t.Fatal(err)
		}
		op := gfOp{id: acc.OperationID, before: before}
		gfCompleted(t, s, op)
		if err := s.ProviderB.Redeliver(0, true); err != nil {
			t.Fatal(err)
		}
		v = gfCompleted(t, s, op)
		if v.Stage != "finished" {
			t.Fatalf("stage after a stale webhook = %s", v.Stage)
		}
		if n := gfGenerated(t, s); n != 2 || s.ProviderB.CreateCount() != 1 {
			t.Fatalf("generated assets = %d, creates %d", n, s.ProviderB.CreateCount())
		}
	})
}

// F1 on provider B: every webhook arrives three times with the same id.
func TestGenerationFaultF1DuplicateWebhooksProviderB(t *testing.T) {
	t.Parallel()
	o := gfOptions()
	o.Generation.Routes = []generation.ProviderID{generation.ProviderB}
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		s.ProviderB.SetWebhookDuplicates(2)
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		acc := acceptedID(t, generate(s, "f1b", map[string]any{"prompt": "A calm piano piece"}))
		waitFor(t, "a provider B task", func() bool { return len(s.ProviderB.Tasks()) == 1 })
		waitOp(t, s, acc.OperationID, "accepted by provider B", func(v api.OperationView) bool {
			return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted"
		})
		if err := s.ProviderB.Complete(s.ProviderB.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		v := gfCompleted(t, s, gfOp{id: acc.OperationID, before: before})
		if v.Attempts[0].Provider != "MUSIC_PROVIDER_B" {
			t.Fatalf("attempts = %+v", v.Attempts)
		}
		ds := s.ProviderB.Deliveries()
		if len(ds) < 3 {
			t.Fatalf("deliveries = %d, want every webhook three times", len(ds))
		}
		for i, d := range ds {
			if d.Status != 200 {
				t.Fatalf("delivery %d (%s) answered %d %s", i, d.Event, d.Status, d.Err)
			}
		}
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want 2", n)
		}
		if s.ProviderB.CreateCount() != 1 || s.ProviderA.CreateCount() != 0 {
			t.Fatalf("creates: A %d, B %d", s.ProviderA.CreateCount(), s.ProviderB.CreateCount())
		}
	})
}

// F2: complete arrives without text or first, and a stale first arrives
// after complete: the operation completes and its stage never regresses.
func TestGenerationFaultF2Reorder(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "f2")
		if err := s.ProviderA.DropCallbacks(op.task, "text", "first"); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, op)
		if err := s.ProviderA.Redeliver(op.task, "first"); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Redeliver(op.task, "text"); err != nil {
			t.Fatal(err)
		}
		v := gfCompleted(t, s, op)
		if v.Stage != "finished" || v.Status != "completed" {
			t.Fatalf("after a stale first: %s/%s", v.Status, v.Stage)
		}
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want 2", n)
		}
	})
}

// F3: no callback ever arrives; the recovery poll finishes the operation,
// from a SUCCESS record or a CALLBACK_EXCEPTION record with its tracks; a
// CALLBACK_EXCEPTION without tracks fails it and releases the credits.
func TestGenerationFaultF3CallbackNeverArrives(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		dropped := gfStart(t, s, "f3-dropped")
		if err := s.ProviderA.DropCallbacks(dropped.task, "*"); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Complete(dropped.task); err != nil {
			t.Fatal(err)
		}
		if v := getOp(t, s, dropped.id); v.Status != "dispatched" {
			t.Fatalf("before the poll: %s", v.Status)
		}
		if n := len(gfDeliveryStatuses(s, dropped.task)); n != 0 {
			t.Fatalf("deliveries = %d, want none", n)
		}
		gfAdvanceUntil(t, s, time.Second, "the recovery poll completes it", gfStatus(t, s, dropped.id, "completed"))
		gfCompleted(t, s, dropped)
		if gfPolls(t, s, dropped.id) < 1 {
			t.Fatal("completed without a poll")
		}

		kept := gfStart(t, s, "f3-exception")
		if err := s.ProviderA.CallbackException(kept.task, true); err != nil {
			t.Fatal(err)
		}
		gfAdvanceUntil(t, s, time.Second, "CALLBACK_EXCEPTION with tracks completes", gfStatus(t, s, kept.id, "completed"))
		kept.before = dropped.before - gfPrice
		gfCompleted(t, s, kept)

		lost := gfStart(t, s, "f3-lost")
		if err := s.ProviderA.CallbackException(lost.task, false); err != nil {
			t.Fatal(err)
		}
		gfAdvanceUntil(t, s, time.Second, "CALLBACK_EXCEPTION without tracks fails", gfStatus(t, s, lost.id, "failed"))
		v := gfReleased(t, s, lost, "failed", "GENERATION_FAILED")
		if v.Stage != "failed" {
			t.Fatalf("stage = %s", v.Stage)
		}
		if n := gfGenerated(t, s); n != 4 {
			t.Fatalf("generated assets = %d, want 4", n)
		}
		if s.ProviderA.CreateCount() != 3 {
			t.Fatalf("provider A creates = %d, want 3", s.ProviderA.CreateCount())
		}
	})
}

// F4: the create's answer is lost after the provider made (and billed) the
// task. The platform's provider A client waits DefaultTimeout (30 s) of
// wall time for an answer and platformtest offers no option to shorten it,
// so a client-side timeout through DelayNextCreate would make the test
// slow; the equivalent the platform treats the same way is a worker that
// stops between the create and recording its answer (Generation.Hook at
// operation.PointCreated). The attempt becomes ambiguous, is never sent
// again, and the callback, which names the attempt by its URL token,
// resolves it; without any callback the ambiguous wait fails the
// operation with PROVIDER_TIMEOUT and releases the credits, and a callback
// after that delivers nothing. (A create that fails after the connection
// was made — PROVIDER_UNAVAILABLE with details.ambiguous — cannot be
// produced deterministically by either simulator, so it is not covered.)
func TestGenerationFaultF4LostCreateAnswer(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	o := gfOptions()
	o.Generation.Hook = func(ctx context.Context, point string) error {
		if point == operation.PointCreated && armed.CompareAndSwap(true, false) {
			return errors.New("the worker stopped before recording the create")
		}
		return nil
	}
	// ambiguous starts a generation whose create answer is lost and waits
	// until its attempt is ambiguous.
	ambiguous := func(t *testing.T, s *platformtest.System, idem string) gfOp {
		t.Helper()
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		n := len(s.ProviderA.Tasks())
		armed.Store(true)
		acc := acceptedID(t, generate(s, idem, map[string]any{"prompt": "A calm piano piece"}))
		waitTasksA(t, s, n+1)
		gfAdvanceUntil(t, s, time.Second, "the attempt is ambiguous", func() bool {
			v := getOp(t, s, acc.OperationID)
			return len(v.Attempts) == 1 && v.Attempts[0].State == "ambiguous"
		})
		v := getOp(t, s, acc.OperationID)
		if v.Status != "dispatched" || v.Attempts[0].ErrorCode == nil || *v.Attempts[0].ErrorCode != "PROVIDER_TIMEOUT" {
			t.Fatalf("ambiguous view = %+v", v)
		}
		return gfOp{id: acc.OperationID, task: s.ProviderA.Tasks()[n].ID, before: before}
	}
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		op := ambiguous(t, s, "f4-resolved")
		if s.ProviderA.CreateCount() != 1 {
			t.Fatalf("provider A creates = %d, want 1", s.ProviderA.CreateCount())
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		v := gfCompleted(t, s, op)
		if len(v.Attempts) != 1 || v.Attempts[0].State != "accepted" {
			t.Fatalf("attempts = %+v", v.Attempts)
		}

		gone := ambiguous(t, s, "f4-gone")
		if err := s.ProviderA.DropCallbacks(gone.task, "*"); err != nil {
			t.Fatal(err)
		}
		gfAdvanceUntil(t, s, 30*time.Second, "the ambiguous wait ends", gfStatus(t, s, gone.id, "failed"))
		gfReleased(t, s, gone, "failed", "PROVIDER_TIMEOUT")
		// The provider finishes the task after all and calls back late.
		if err := s.ProviderA.Complete(gone.task); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Redeliver(gone.task, "complete"); err != nil {
			t.Fatalf("late callback: %v", err)
		}
		gfReleased(t, s, gone, "failed", "PROVIDER_TIMEOUT")
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want 2 (the late task delivers nothing)", n)
		}
		if s.ProviderA.CreateCount() != 2 {
			t.Fatalf("provider A creates = %d, want 2 (never re-sent)", s.ProviderA.CreateCount())
		}
	})
}

// F5: a create answered 500, 455 or a malformed body is retried on the same
// candidate (no task was made); polls answered 500, a malformed body or
// 455 only schedule the next poll, which completes the operation.
func TestGenerationFaultF5TransientErrors(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		s.ProviderA.FailNext(provideratest.EndpointCreate, provideratest.Failure{HTTPStatus: 500, Code: 500, Msg: "Internal Server Error"})
		s.ProviderA.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: 455, Msg: "System maintenance"})
		s.ProviderA.FailNext(provideratest.EndpointCreate, provideratest.Failure{Raw: `{"code":200,"msg":"succ`})
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		acc := acceptedID(t, generate(s, "f5-create", map[string]any{"prompt": "A calm piano piece"}))
		gfAdvanceUntil(t, s, time.Second, "a create is accepted after the transient answers", func() bool {
			v := getOp(t, s, acc.OperationID)
			return len(v.Attempts) > 0 && v.Attempts[len(v.Attempts)-1].State == "accepted"
		})
		v := getOp(t, s, acc.OperationID)
		if len(v.Attempts) != 4 {
			t.Fatalf("attempts = %+v, want 3 transient then accepted", v.Attempts)
		}
		for _, a := range v.Attempts[:3] {
			if a.State != "transient" || a.Provider != "MUSIC_PROVIDER_A" || a.ErrorCode == nil || *a.ErrorCode != "PROVIDER_UNAVAILABLE" {
				t.Fatalf("transient attempt = %+v", a)
			}
		}
		if s.ProviderA.CreateCount() != 1 {
			t.Fatalf("provider A creates = %d, want 1", s.ProviderA.CreateCount())
		}
		op := gfOp{id: acc.OperationID, task: s.ProviderA.Tasks()[0].ID, before: before}
		if err := s.ProviderA.DropCallbacks(op.task, "*"); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		s.ProviderA.FailNext(provideratest.EndpointQuery, provideratest.Failure{HTTPStatus: 500, Code: 500, Msg: "Internal Server Error"})
		s.ProviderA.FailNext(provideratest.EndpointQuery, provideratest.Failure{Raw: `{"code":200,"msg":"success","data":{"taskId":`})
		s.ProviderA.FailNext(provideratest.EndpointQuery, provideratest.Failure{Code: 455, Msg: "System maintenance"})
		gfAdvanceUntil(t, s, time.Second, "a poll completes it after the failing ones", gfStatus(t, s, op.id, "completed"))
		gfCompleted(t, s, op)
		if n := gfPolls(t, s, op.id); n < 4 {
			t.Fatalf("polls = %d, want at least 4 (three failed)", n)
		}
		if s.ProviderA.CreateCount() != 1 {
			t.Fatalf("provider A creates = %d, want 1", s.ProviderA.CreateCount())
		}
	})
}

// F6: a throttled create (sunoapi 405/430, kie 429/433) is RATE_LIMITED and
// retried; exactly one task is made in the end.
func TestGenerationFaultF6Throttle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dialect string
		codes   []int
	}{{"sunoapi", []int{405, 430}}, {"kie", []int{429, 433}}} {
		t.Run(c.dialect, func(t *testing.T) {
			o := gfOptions()
			o.ProviderADialect = c.dialect
			platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
				for _, code := range c.codes {
					s.ProviderA.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: code, Msg: "The call frequency is too high."})
				}
				before := creditInt(t, s, ledger.AccountWorkspaceCredits)
				acc := acceptedID(t, generate(s, "f6", map[string]any{"prompt": "A calm piano piece"}))
				gfAdvanceUntil(t, s, time.Second, "a create is accepted after the throttles", func() bool {
					v := getOp(t, s, acc.OperationID)
					return len(v.Attempts) > 0 && v.Attempts[len(v.Attempts)-1].State == "accepted"
				})
				v := getOp(t, s, acc.OperationID)
				if len(v.Attempts) != 3 {
					t.Fatalf("attempts = %+v", v.Attempts)
				}
				for _, a := range v.Attempts[:2] {
					if a.State != "transient" || a.ErrorCode == nil || *a.ErrorCode != "RATE_LIMITED" {
						t.Fatalf("throttled attempt = %+v", a)
					}
				}
				if s.ProviderA.CreateCount() != 1 {
					t.Fatalf("provider A creates = %d, want 1", s.ProviderA.CreateCount())
				}
				op := gfOp{id: acc.OperationID, task: s.ProviderA.Tasks()[0].ID, before: before}
				if err := s.ProviderA.Complete(op.task); err != nil {
					t.Fatal(err)
				}
				gfCompleted(t, s, op)
			})
		})
	}
}

// F6: parallel generations never exceed the create window: the platform's
// scheduler holds the creates above its limit until the window moves, so
// the provider never throttles and every operation makes one task.
func TestGenerationFaultF6CreateWindow(t *testing.T) {
	t.Parallel()
	o := gfOptions()
	o.Generation.CreateLimit = 3
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		var ids []string
		for i := range 5 {
			ids = append(ids, acceptedID(t, generate(s, fmt.Sprintf("f6-window-%d", i), map[string]any{"prompt": "A calm piano piece"})).OperationID)
		}
		waitTasksA(t, s, 3)
		waitFor(t, "three operations dispatched", func() bool {
			n := 0
			for _, id := range ids {
				if v := getOp(t, s, id); len(v.Attempts) == 1 && v.Attempts[0].State == "accepted" {
					n++
				}
			}
			return n == 3
		})
		if s.ProviderA.CreateCount() != 3 {
			t.Fatalf("provider A creates in one window = %d, want 3", s.ProviderA.CreateCount())
		}
		gfAdvanceUntil(t, s, 2*time.Second, "the next window dispatches the rest", func() bool { return s.ProviderA.CreateCount() >= 5 })
		for _, id := range ids {
			waitOp(t, s, id, "accepted", func(v api.OperationView) bool {
				return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted"
			})
		}
		for _, task := range s.ProviderA.Tasks() {
			if err := s.ProviderA.Complete(task.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			waitOp(t, s, id, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
			if n := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE operation_id = ?`, id); n != 2 {
				t.Fatalf("outputs of %s = %d", id, n)
			}
		}
		if s.ProviderA.CreateCount() != 5 {
			t.Fatalf("provider A creates = %d, want 5", s.ProviderA.CreateCount())
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-5*gfPrice {
			t.Fatalf("balance = %d, want %d", got, before-5*gfPrice)
		}
		for _, d := range s.ProviderA.Deliveries() {
			if d.Status != 200 {
				t.Fatalf("delivery %s/%s answered %d", d.TaskID, d.Type, d.Status)
			}
		}
	})
}

// F6: a candidate throttled TransientRetries times is given up and the
// next route (provider B's platform credential) delivers, under the same
// operation id.
func TestGenerationFaultF6ThrottleFallsBackToB(t *testing.T) {
	t.Parallel()
	o := gfOptions()
	o.Generation.TransientRetries = 2
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		s.ProviderA.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: 405, Msg: "The call frequency is too high."})
		s.ProviderA.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: 405, Msg: "The call frequency is too high."})
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		acc := acceptedID(t, generate(s, "f6-fallback", map[string]any{"prompt": "A calm piano piece"}))
		gfAdvanceUntil(t, s, time.Second, "provider B makes the task", func() bool { return len(s.ProviderB.Tasks()) == 1 })
		v := waitOp(t, s, acc.OperationID, "accepted by B", func(v api.OperationView) bool {
			return len(v.Attempts) == 3 && v.Attempts[2].State == "accepted"
		})
		want := []struct{ provider, state string }{{"MUSIC_PROVIDER_A", "transient"}, {"MUSIC_PROVIDER_A", "refused"}, {"MUSIC_PROVIDER_B", "accepted"}}
		for i, w := range want {
			if a := v.Attempts[i]; a.Provider != w.provider || a.State != w.state {
				t.Fatalf("attempt %d = %+v, want %s %s", i+1, a, w.provider, w.state)
			}
		}
		if err := s.ProviderB.Complete(s.ProviderB.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, gfOp{id: acc.OperationID, before: before})
		if s.ProviderA.CreateCount() != 0 || s.ProviderB.CreateCount() != 1 {
			t.Fatalf("creates: A %d, B %d", s.ProviderA.CreateCount(), s.ProviderB.CreateCount())
		}
	})
}

// F7: an accepted task that fails at the provider fails the operation with
// the mapped code, releases the credits, delivers nothing, and is
// reconciled: nothing reported on sunoapi (UNKNOWN), creditsConsumed 0 on
// the kie market after a refunded 531 (MATCHED, next test).
func TestGenerationFaultF7AcceptedThenFails(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		policy := gfStart(t, s, "f7-400")
		if _, err := s.ProviderA.Advance(policy.task); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Fail(policy.task, 400); err != nil {
			t.Fatal(err)
		}
		v := gfReleased(t, s, policy, "failed", "CONTENT_POLICY_REJECTED")
		if v.Stage != "failed" {
			t.Fatalf("stage = %s", v.Stage)
		}
		// A duplicate error callback and a stray complete change nothing.
		if err := s.ProviderA.Redeliver(policy.task, "error"); err != nil {
			t.Fatal(err)
		}
		v = waitOp(t, s, policy.id, "cost reconciled", func(v api.OperationView) bool { return len(v.Billing.ProviderCost) == 1 })
		pc := v.Billing.ProviderCost[0]
		if pc.Status != "UNKNOWN" || pc.Source != "none" || pc.ExpectedProviderCredits == nil || *pc.ExpectedProviderCredits != "0" || pc.ActualProviderCredits != nil {
			t.Fatalf("provider cost of a failed sunoapi task = %+v", pc)
		}
		gfReleased(t, s, policy, "failed", "CONTENT_POLICY_REJECTED")

		other := gfStart(t, s, "f7-501")
		other.before = policy.before
		if err := s.ProviderA.Fail(other.task, 501); err != nil {
			t.Fatal(err)
		}
		gfReleased(t, s, other, "failed", "GENERATION_FAILED")
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND aggregate_id IN (?, ?)`, operation.EventFailed, policy.id, other.id); n != 2 {
			t.Fatalf("failed events = %d, want 2", n)
		}
		if n := gfGenerated(t, s); n != 0 {
			t.Fatalf("generated assets = %d", n)
		}
	})
}

// F7 on the kie market: a 531 failure is refunded by the provider and
// reported with creditsConsumed 0, which reconciles as MATCHED.
func TestGenerationFaultF7RefundedMarket(t *testing.T) {
	t.Parallel()
	o := gfOptions()
	o.ProviderADialect = "kie_market"
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "f7-531")
		if err := s.ProviderA.Fail(op.task, 531); err != nil {
			t.Fatal(err)
		}
		gfReleased(t, s, op, "failed", "GENERATION_FAILED")
		if got := s.ProviderA.Credits(); got != 1000 {
			t.Fatalf("provider balance after the refunded failure = %d, want 1000", got)
		}
		v := waitOp(t, s, op.id, "cost reconciled", func(v api.OperationView) bool { return len(v.Billing.ProviderCost) == 1 })
		pc := v.Billing.ProviderCost[0]
		if pc.Status != "MATCHED" || pc.Source != "reported" || pc.ExpectedProviderCredits == nil || *pc.ExpectedProviderCredits != "0" ||
			pc.ActualProviderCredits == nil || *pc.ActualProviderCredits != "0" {
			t.Fatalf("provider cost of a refunded market task = %+v", pc)
		}
	})
}

// F8: the first stage carries the stream link in audio_url: nothing is
// ingested from it; the assets are the final MP3s, byte for byte.
func TestGenerationFaultF8StreamURL(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		s.ProviderA.SetStreamInAudioURL(true)
		op := gfStart(t, s, "f8")
		for range 2 { // text, first
			if _, err := s.ProviderA.Advance(op.task); err != nil {
				t.Fatal(err)
			}
		}
		v := waitOp(t, s, op.id, "first stage", func(v api.OperationView) bool { return v.Stage == "first" })
		if v.Status != "processing" || len(v.Outputs) != 1 || v.Outputs[0].AssetID != nil {
			t.Fatalf("first-stage view = %+v", v)
		}
		// A poll at the first stage sees the stream link too.
		gfAdvanceUntil(t, s, time.Second, "a poll at the first stage", func() bool { return gfPolls(t, s, op.id) >= 1 })
		if v := getOp(t, s, op.id); v.Stage != "first" || gfGenerated(t, s) != 0 {
			t.Fatalf("after a first-stage poll: stage %s, %d assets", v.Stage, gfGenerated(t, s))
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, op)
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + op.id + "/result", Key: s.Boot.TestKey})
		if r.Status != 200 {
			t.Fatalf("result: %d %s", r.Status, r.Body)
		}
		var res api.GenerationResult
		r.Data(t, &res)
		for _, tr := range res.Tracks {
			mp3, err := s.ProviderA.TrackMP3(op.task, tr.Index)
			if err != nil {
				t.Fatal(err)
			}
			c := s.Do(platformtest.Request{Method: "GET", Path: tr.ContentURL, Key: s.Boot.TestKey})
			if c.Status != 200 || !bytes.Equal(c.Body, mp3) || tr.SizeBytes != int64(len(mp3)) {
				t.Fatalf("track %d: %d, %d bytes, want the final MP3's %d", tr.Index, c.Status, len(c.Body), len(mp3))
			}
		}
	})
}

// F9: a media URL answering 403 once is fetched again; URLs that expired
// fail the operation with RESULT_EXPIRED, and zero-byte media with
// GENERATION_FAILED; both release the credits.
func TestGenerationFaultF9Media(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "f9-403")
		for n := range 2 {
			if err := s.ProviderA.SetMediaFault(op.task, n, provideratest.MediaFault{Forbidden: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, op)

		expired := gfStart(t, s, "f9-expired")
		for n := range 2 {
			if err := s.ProviderA.SetMediaFault(expired.task, n, provideratest.MediaFault{ExpireAt: s.Clock.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ProviderA.Complete(expired.task); err != nil {
			t.Fatal(err)
		}
		gfReleased(t, s, expired, "failed", "RESULT_EXPIRED")

		empty := gfStart(t, s, "f9-empty")
		for n := range 2 {
			if err := s.ProviderA.SetMediaFault(empty.task, n, provideratest.MediaFault{Empty: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ProviderA.Complete(empty.task); err != nil {
			t.Fatal(err)
		}
		gfReleased(t, s, empty, "failed", "GENERATION_FAILED")
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want 2", n)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != op.before-gfPrice {
			t.Fatalf("balance = %d, want %d", got, op.before-gfPrice)
		}
	})
}

// F10: placeholder tracks (empty ids, .../None.mp3) before the tracks are
// ready never take an output slot: exactly two outputs.
func TestGenerationFaultF10Placeholders(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		s.ProviderA.SetPlaceholders(true)
		op := gfStart(t, s, "f10")
		for range 2 {
			if _, err := s.ProviderA.Advance(op.task); err != nil {
				t.Fatal(err)
			}
		}
		gfAdvanceUntil(t, s, time.Second, "a poll of the placeholder record", func() bool { return gfPolls(t, s, op.id) >= 1 })
		v := waitOp(t, s, op.id, "first stage", func(v api.OperationView) bool { return v.Stage == "first" })
		if len(v.Outputs) != 1 {
			t.Fatalf("outputs at the first stage = %+v, want the one real track", v.Outputs)
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, op)
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want 2", n)
		}
	})
}

// F11: callbacks name the task as taskId and records carry a top-level
// sunoData: the callback path and the poll path both complete.
func TestGenerationFaultF11KeyDrift(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		s.ProviderA.SetKeyDrift(true)
		byCallback := gfStart(t, s, "f11-callback")
		if err := s.ProviderA.Complete(byCallback.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, byCallback)
		for i, st := range gfDeliveryStatuses(s, byCallback.task) {
			if st != 200 {
				t.Fatalf("delivery %d answered %d", i, st)
			}
		}

		byPoll := gfStart(t, s, "f11-poll")
		if err := s.ProviderA.DropCallbacks(byPoll.task, "*"); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Complete(byPoll.task); err != nil {
			t.Fatal(err)
		}
		gfAdvanceUntil(t, s, time.Second, "the poll of a flat record completes it", gfStatus(t, s, byPoll.id, "completed"))
		gfCompleted(t, s, byPoll)
	})
}

// F12: a task that never finishes expires the operation at its deadline
// and releases the credits; a completion reported afterwards is ignored.
func TestGenerationFaultF12Hang(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "f12")
		if _, err := s.ProviderA.Advance(op.task); err != nil {
			t.Fatal(err)
		}
		waitOp(t, s, op.id, "processing", func(v api.OperationView) bool { return v.Status == "processing" })
		if err := s.ProviderA.Hang(op.task); err != nil {
			t.Fatal(err)
		}
		gfAdvanceUntil(t, s, time.Minute, "the deadline expires it", gfStatus(t, s, op.id, "expired"))
		v := gfReleased(t, s, op, "expired", "PROVIDER_TIMEOUT")
		if v.EndedAt == nil {
			t.Fatalf("expired view = %+v", v)
		}
		// The provider reports completion late.
		if err := s.ProviderA.Redeliver(op.task, "complete"); err != nil {
			t.Fatalf("late complete: %v", err)
		}
		s.Clock.Advance(time.Minute)
		gfReleased(t, s, op, "expired", "PROVIDER_TIMEOUT")
		if n := gfGenerated(t, s); n != 0 {
			t.Fatalf("generated assets = %d, want 0", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND aggregate_id = ?`, operation.EventExpired, op.id); n != 1 {
			t.Fatalf("expired events = %d, want 1", n)
		}
		if s.ProviderA.CreateCount() != 1 {
			t.Fatalf("provider A creates = %d", s.ProviderA.CreateCount())
		}
	})
}

// F13: a query answered "unknown task" (sunoapi: code 200 with null data;
// kie: 422 "recordInfo is null") keeps the operation running, and the next
// poll finishes it. The other half of F13, a create without callBackUrl
// answered 422, cannot happen through the platform: every create carries
// the attempt's callback URL, which the test checks on the simulator.
func TestGenerationFaultF13UnknownTask(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dialect string
		unknown provideratest.Failure
	}{
		{"sunoapi", provideratest.Failure{Code: 200, Msg: "success"}},
		{"kie", provideratest.Failure{Code: 422, Msg: "recordInfo is null"}},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			o := gfOptions()
			o.ProviderADialect = c.dialect
			platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
				op := gfStart(t, s, "f13")
				if cb := s.ProviderA.Tasks()[0].CallbackURL; !strings.HasPrefix(cb, s.Server.URL+"/internal/providers/MUSIC_PROVIDER_A/callbacks/") {
					t.Fatalf("callBackUrl = %q", cb)
				}
				if err := s.ProviderA.DropCallbacks(op.task, "*"); err != nil {
					t.Fatal(err)
				}
				s.ProviderA.FailNext(provideratest.EndpointQuery, c.unknown)
				s.ProviderA.FailNext(provideratest.EndpointQuery, c.unknown)
				gfAdvanceUntil(t, s, time.Second, "two polls", func() bool { return gfPolls(t, s, op.id) >= 2 })
				if v := getOp(t, s, op.id); v.Status != "dispatched" || v.Failure != nil {
					t.Fatalf("after unknown-task polls: %+v", v)
				}
				if err := s.ProviderA.Complete(op.task); err != nil {
					t.Fatal(err)
				}
				gfAdvanceUntil(t, s, time.Second, "a later poll completes it", gfStatus(t, s, op.id, "completed"))
				gfCompleted(t, s, op)
			})
		})
	}
}

// A callback with a bad, stale or missing signature is refused (400) and
// stored nowhere; the recovery poll still completes the operation.
func TestGenerationFaultBadSignature(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "sig")
		s.ProviderA.SetSignature(provideratest.SignBad)
		for range 3 { // text, first, complete: each delivery is refused
			if _, err := s.ProviderA.Advance(op.task); err == nil {
				t.Fatal("a badly signed callback was accepted")
			}
		}
		s.ProviderA.SetSignature(provideratest.SignStale)
		_ = s.ProviderA.Redeliver(op.task, "complete")
		s.ProviderA.SetSignature(provideratest.SignNone)
		_ = s.ProviderA.Redeliver(op.task, "complete")
		st := gfDeliveryStatuses(s, op.task)
		if len(st) != 5 {
			t.Fatalf("deliveries = %v, want 5", st)
		}
		for i, c := range st {
			if c != 400 {
				t.Fatalf("delivery %d answered %d, want 400", i, c)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM generation_callbacks WHERE operation_id = ?`, op.id); n != 0 {
			t.Fatalf("stored callbacks = %d, want 0", n)
		}
		if v := getOp(t, s, op.id); v.Status != "dispatched" {
			t.Fatalf("status after refused callbacks = %s", v.Status)
		}
		gfAdvanceUntil(t, s, time.Second, "the recovery poll completes it", gfStatus(t, s, op.id, "completed"))
		gfCompleted(t, s, op)
	})
}

// The kie market reports creditsConsumed above the published price: the
// operation shows OVER_EXPECTED from the reported figure and one
// PROVIDER_COST_DRIFT event is written; the customer still pays the price.
func TestGenerationFaultCostDrift(t *testing.T) {
	t.Parallel()
	o := gfOptions()
	o.ProviderADialect = "kie_market"
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		op := gfStart(t, s, "drift")
		if err := s.ProviderA.SetCreditsConsumed(op.task, 30); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Complete(op.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, op)
		v := waitOp(t, s, op.id, "cost reconciled", func(v api.OperationView) bool { return len(v.Billing.ProviderCost) == 1 })
		pc := v.Billing.ProviderCost[0]
		if pc.Status != "OVER_EXPECTED" || pc.Source != "reported" || pc.ExpectedProviderCredits == nil || *pc.ExpectedProviderCredits != "12" ||
			pc.ActualProviderCredits == nil || *pc.ActualProviderCredits != "30" || pc.DriftBps != 15000 || pc.AttemptNumber != 1 {
			t.Fatalf("provider cost = %+v", pc)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND aggregate_id = ?`, operation.EventCostDrift, op.id); n != 1 {
			t.Fatalf("drift events = %d, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM generation_costs WHERE operation_id = ?`, op.id); n != 1 {
			t.Fatalf("cost rows = %d, want 1", n)
		}
	})
}

// gfStartB generates with the test key on a System routed to provider B
// only, waits until B accepted the task, and returns the workspace's
// credits before the generate, the answer and B's task id.
func gfStartB(t *testing.T, s *platformtest.System, idem string) (int64, api.GenerationAccepted, string) {
	t.Helper()
	before := creditInt(t, s, ledger.AccountWorkspaceCredits)
	acc := acceptedID(t, generate(s, idem, map[string]any{"prompt": "A calm piano piece"}))
	waitFor(t, "a provider B task", func() bool { return len(s.ProviderB.Tasks()) == 1 })
	waitOp(t, s, acc.OperationID, "accepted by provider B", func(v api.OperationView) bool {
		return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted"
	})
	return before, acc, s.ProviderB.Tasks()[0].ID
}

// F5 and F3 on provider B: webhooks dropped, and the first polls answer
// 500 and a truncated body; a later poll completes the operation.
func TestGenerationFaultProviderBPolls(t *testing.T) {
	t.Parallel()
	o := gfOptions()
	o.Generation.Routes = []generation.ProviderID{generation.ProviderB}
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		before, acc, task := gfStartB(t, s, "b-polls")
		s.ProviderB.DropWebhooks(task)
		if err := s.ProviderB.Complete(task); err != nil {
			t.Fatal(err)
		}
		s.ProviderB.FailNext(providerbtest.EndpointTask, 500, 1)
		gfAdvanceUntil(t, s, time.Second, "a failed poll", func() bool { return gfPolls(t, s, acc.OperationID) >= 1 })
		s.ProviderB.MalformedNextPoll(1)
		gfAdvanceUntil(t, s, time.Second, "a later poll completes it", gfStatus(t, s, acc.OperationID, "completed"))
		gfCompleted(t, s, gfOp{id: acc.OperationID, before: before})
		if n := gfPolls(t, s, acc.OperationID); n < 3 {
			t.Fatalf("polls = %d, want at least 3", n)
		}
		if len(s.ProviderB.Deliveries()) != 0 || s.ProviderB.CreateCount() != 1 {
			t.Fatalf("deliveries %d, creates %d", len(s.ProviderB.Deliveries()), s.ProviderB.CreateCount())
		}
	})
}
