package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// genOptions configures a System with both provider simulators as the
// platform-managed test accounts and fast job polling.
func genOptions() platformtest.Options {
	return platformtest.Options{Music: true, Jobs: platform.JobsConfig{PollInterval: 5 * time.Millisecond, Workers: 8}}
}

// grantTestCredits grants n test credits to the bootstrapped workspace.
func grantTestCredits(t testing.TB, s *platformtest.System, ref string, n uint64) {
	t.Helper()
	ctx := context.Background()
	sc := ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
	if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		_, _, err := ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: sc, Ref: ref, Amount: money.Atomic(n)})
		return err
	}); err != nil {
		t.Fatalf("grant: %v", err)
	}
}

// creditBalance reads a test-mode credit account of the workspace (0 when
// never posted to).
func creditBalance(t testing.TB, s *platformtest.System, name string) string {
	t.Helper()
	sc := ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
	a, err := s.DB.Read().LedgerAccountGet(context.Background(), sc, ledger.Credits, name)
	if err != nil {
		return "0"
	}
	return a.Balance.String()
}

// reservationLeft returns what is left of an operation's credit
// reservation: its reserve movement less its settle and release movements
// ("0" when it reserved nothing). Every reservation of a workspace is held
// on one account, so this is how one operation's share is read.
func reservationLeft(t testing.TB, s *platformtest.System, opID string) string {
	t.Helper()
	sc := ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
	left := money.Sum{}
	for _, typ := range []ledger.Type{ledger.TypeReserve, ledger.TypeSettle, ledger.TypeRelease} {
		m, err := s.DB.Read().LedgerMovementGet(context.Background(), sc, string(typ)+":"+opID)
		if fault.Is(err, fault.NotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Postings {
			if p.Direction != ledger.Credit {
				continue
			}
			if typ == ledger.TypeReserve {
				left, err = left.AddAtomic(p.Amount)
			} else {
				left, err = left.SubAtomic(p.Amount)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return left.String()
}

// creditInt is creditBalance as an integer.
func creditInt(t testing.TB, s *platformtest.System, name string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(creditBalance(t, s, name), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// raiseKeyLimits lifts the test key's limits so that concurrent requests
// meet the code under test, not the key's rate or concurrency limit.
func raiseKeyLimits(t testing.TB, s *platformtest.System) {
	t.Helper()
	if r := s.Do(platformtest.Request{Method: "PUT", Path: "/api/v1/api-keys/" + s.Boot.KeyID + "/limits", Key: s.Boot.TestKey,
		Body: map[string]any{"requestsPerMinute": 6000, "maxConcurrentRequests": 64, "monthlyRequestBudget": 1000000}}); r.Status != 200 {
		t.Fatalf("limits: %d %s", r.Status, r.Body)
	}
}

// holdAllBut reserves all but keep of the workspace's test credits for an
// operation that is not one of the test's (reference "reserve:held").
func holdAllBut(t testing.TB, s *platformtest.System, keep int64) {
	t.Helper()
	ctx := context.Background()
	sc := ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
	left := creditInt(t, s, ledger.AccountWorkspaceCredits)
	if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		_, _, err := ledger.New().Reserve(ctx, tx, ledger.CreditsInput{Scope: sc, Ref: "held", Amount: money.Atomic(left - keep)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// generate posts a generate request with the test key.
func generate(s *platformtest.System, idem string, body any) *platformtest.Response {
	return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/music/generate", Key: s.Boot.TestKey, Body: body,
		Header: map[string]string{"Idempotency-Key": idem}})
}

// getOp reads an operation with the test key.
func getOp(t testing.TB, s *platformtest.System, id string) api.OperationView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + id, Key: s.Boot.TestKey})
	if r.Status != 200 {
		t.Fatalf("GET operation: %d %s", r.Status, r.Body)
	}
	var v api.OperationView
	r.Data(t, &v)
	return v
}

// waitOp polls the operation until cond holds.
func waitOp(t testing.TB, s *platformtest.System, id, what string, cond func(api.OperationView) bool) api.OperationView {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		v := getOp(t, s, id)
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %s: %s: not after 15s (status %s, stage %s, attempts %+v)", id, what, v.Status, v.Stage, v.Attempts)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// acceptedID asserts a 202 answer and returns its operation id.
func acceptedID(t testing.TB, r *platformtest.Response) api.GenerationAccepted {
	t.Helper()
	if r.Status != http.StatusAccepted {
		t.Fatalf("generate: %d %s", r.Status, r.Body)
	}
	var a api.GenerationAccepted
	r.Data(t, &a)
	return a
}

// waitTask waits until the provider A simulator holds n tasks.
func waitTasksA(t testing.TB, s *platformtest.System, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d provider A tasks", n), func() bool { return len(s.ProviderA.Tasks()) >= n })
}

func TestGenerationEndToEnd(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		acc := acceptedID(t, generate(s, "gen-1", map[string]any{"prompt": "A calm piano piece", "duration": 90}))
		if acc.Status != "queued" || acc.Billing.Mode != "PLATFORM_MANAGED" || acc.Billing.CreditsReserved != "15" {
			t.Fatalf("accepted = %+v", acc)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-15 {
			t.Fatalf("balance after accept = %d, want %d", got, before-15)
		}
		waitTasksA(t, s, 1)
		v := waitOp(t, s, acc.OperationID, "dispatched", func(v api.OperationView) bool {
			return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted"
		})
		if v.Status != "dispatched" || v.Attempts[0].Provider != "MUSIC_PROVIDER_A" || v.DurationApplied == nil || *v.DurationApplied {
			t.Fatalf("dispatched view = %+v", v)
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + acc.OperationID + "/result", Key: s.Boot.TestKey})
		if r.Status != 409 || r.Code() != "RESULT_NOT_READY" {
			t.Fatalf("early result: %d %s", r.Status, r.Body)
		}
		task := s.ProviderA.Tasks()[0].ID
		if err := s.ProviderA.Complete(task); err != nil {
			t.Fatalf("complete: %v", err)
		}
		v = waitOp(t, s, acc.OperationID, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
		if v.Stage != "finished" || len(v.Outputs) != 2 || v.Billing.CreditsSettled == nil || *v.Billing.CreditsSettled != "15" ||
			v.Billing.CreditsReleased == nil || *v.Billing.CreditsReleased != "0" {
			t.Fatalf("completed view = %+v", v)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + acc.OperationID + "/result", Key: s.Boot.TestKey})
		if r.Status != 200 {
			t.Fatalf("result: %d %s", r.Status, r.Body)
		}
		var res api.GenerationResult
		r.Data(t, &res)
		if len(res.Tracks) != 2 || res.Tracks[0].AssetID == res.Tracks[1].AssetID {
			t.Fatalf("result = %+v", res)
		}
		for _, tr := range res.Tracks {
			c := s.Do(platformtest.Request{Method: "GET", Path: tr.ContentURL, Key: s.Boot.TestKey})
			if c.Status != 200 || c.Header.Get("Content-Type") != "audio/mpeg" || int64(len(c.Body)) != tr.SizeBytes || tr.MediaType != "audio/mpeg" {
				t.Fatalf("content of %s: %d %s, %d bytes", tr.AssetID, c.Status, c.Header.Get("Content-Type"), len(c.Body))
			}
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-15 {
			t.Fatalf("balance after completion = %d, want %d", got, before-15)
		}
		if got := creditBalance(t, s, ledger.AccountSystemConsumed); got != "15" {
			t.Fatalf("consumed = %s, want 15", got)
		}
		if got := reservationLeft(t, s, acc.OperationID); got != "0" {
			t.Fatalf("reservation left = %s, want 0", got)
		}
		v = waitOp(t, s, acc.OperationID, "cost reconciled", func(v api.OperationView) bool { return len(v.Billing.ProviderCost) == 1 })
		pc := v.Billing.ProviderCost[0]
		// Provider A's sunoapi dialect reports no consumption: the charge is
		// unknown, and the expected price is shown as expected only.
		if pc.Status != "UNKNOWN" || pc.Source != "none" || pc.ActualProviderCredits != nil ||
			pc.ExpectedProviderCredits == nil || *pc.ExpectedProviderCredits != "12" || pc.DriftBps != 0 {
			t.Fatalf("provider cost = %+v", pc)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'generation.operation.completed' AND aggregate_id = ?`, acc.OperationID); n != 1 {
			t.Fatalf("completed events = %d", n)
		}
	})
}

func TestGenerationConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		raiseKeyLimits(t, s)
		body := map[string]any{"prompt": "Fifty callers, one song", "model": "v4"}
		const n = 50
		ids := make(chan string, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				r := generate(s, "same-key", body)
				if r.Status != http.StatusAccepted {
					t.Errorf("generate: %d %s", r.Status, r.Body)
					ids <- ""
					return
				}
				var a api.GenerationAccepted
				r.Data(t, &a)
				ids <- a.OperationID
			})
		}
		wg.Wait()
		close(ids)
		first := ""
		for id := range ids {
			if first == "" {
				first = id
			}
			if id == "" || id != first {
				t.Fatalf("operation ids differ: %q and %q", first, id)
			}
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_operations`); c != 1 {
			t.Fatalf("operations = %d, want 1", c)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, "reserve:"+first); c != 1 {
			t.Fatalf("reservations = %d, want 1", c)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-10 {
			t.Fatalf("balance = %d, want %d", got, before-10)
		}
		r := generate(s, "same-key", map[string]any{"prompt": "Another song", "model": "v4"})
		if r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("same key, other body: %d %s", r.Status, r.Body)
		}
		waitTasksA(t, s, 1)
		waitOp(t, s, first, "dispatched once", func(v api.OperationView) bool { return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted" })
		if c := s.ProviderA.CreateCount(); c != 1 {
			t.Fatalf("provider creates = %d, want 1", c)
		}
	})
}

// TestGenerationConcurrentAcceptsDrainCredits races 24 different
// generate requests of one workspace whose credits cover ten: exactly ten
// are accepted and reserve, the rest are INSUFFICIENT_CREDITS and leave
// nothing, and the balance ends at what the ten left, never below. On
// PostgreSQL the accepts pass the workspace's admission gate (four at a
// time, in arrival order) and then its credit row's lock.
func TestGenerationConcurrentAcceptsDrainCredits(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		raiseKeyLimits(t, s)
		holdAllBut(t, s, 105) // ten v4 generations (10 each) and 5 over
		reservedBefore := creditInt(t, s, ledger.AccountWorkspaceReserved)
		const n = 24
		codes := make(chan string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := generate(s, fmt.Sprintf("drain-%d", i), map[string]any{"prompt": fmt.Sprintf("Song %d", i), "model": "v4"})
				switch {
				case r.Status == http.StatusAccepted:
					codes <- "accepted"
				case r.Status == http.StatusUnprocessableEntity && r.Code() == "INSUFFICIENT_CREDITS":
					codes <- "INSUFFICIENT_CREDITS"
				default:
					t.Errorf("generate %d: %d %s", i, r.Status, r.Body)
					codes <- "other"
				}
			})
		}
		wg.Wait()
		close(codes)
		got := map[string]int{}
		for c := range codes {
			got[c]++
		}
		if diff := cmp.Diff(map[string]int{"accepted": 10, "INSUFFICIENT_CREDITS": 14}, got); diff != "" {
			t.Fatalf("answers (-want +got):\n%s", diff)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_operations`); c != 10 {
			t.Fatalf("operations = %d, want 10", c)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference LIKE 'reserve:op_%'`); c != 10 {
			t.Fatalf("reservations = %d, want 10", c)
		}
		if b := creditInt(t, s, ledger.AccountWorkspaceCredits); b != 5 {
			t.Fatalf("balance = %d, want 5", b)
		}
		if r := creditInt(t, s, ledger.AccountWorkspaceReserved); r != reservedBefore+100 {
			t.Fatalf("reserved = %d, want %d", r, reservedBefore+100)
		}
	})
}

func TestGenerationStopBetweenCreateAndRecord(t *testing.T) {
	t.Parallel()
	var stopped atomic.Bool
	opts := genOptions()
	opts.Generation.Hook = func(ctx context.Context, point string) error {
		if point == operation.PointCreated && stopped.CompareAndSwap(false, true) {
			return errors.New("injected stop after the provider create")
		}
		return nil
	}
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		stopped.Store(false)
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		acc := acceptedID(t, generate(s, "stop-1", map[string]any{"prompt": "Survive a crash"}))
		waitTasksA(t, s, 1)
		waitFor(t, "the injected stop", stopped.Load)
		// The dispatch job failed; its retry finds the attempt still sending
		// and never sends it again.
		for i := 0; i < 40; i++ {
			s.Clock.Advance(time.Second)
			v := getOp(t, s, acc.OperationID)
			if len(v.Attempts) == 1 && v.Attempts[0].State == "ambiguous" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		v := getOp(t, s, acc.OperationID)
		if len(v.Attempts) != 1 || v.Attempts[0].State != "ambiguous" || v.Status != "dispatched" {
			t.Fatalf("after the stop: %+v", v)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_attempts WHERE task_id <> ''`); c != 0 {
			t.Fatalf("task ids recorded = %d before any callback", c)
		}
		// The provider's callbacks carry the attempt token: they name the task.
		if err := s.ProviderA.Complete(s.ProviderA.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		v = waitOp(t, s, acc.OperationID, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
		if len(v.Attempts) != 1 || v.Attempts[0].State != "accepted" {
			t.Fatalf("attempts = %+v", v.Attempts)
		}
		if c := s.ProviderA.CreateCount(); c != 1 {
			t.Fatalf("provider creates = %d, want 1", c)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-15 {
			t.Fatalf("balance = %d, want %d", got, before-15)
		}
	})
}

func TestGenerationFailoverToProviderB(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		s.ProviderA.SetCredits(0) // A answers "no credits": never retried on the same credential
		acc := acceptedID(t, generate(s, "failover-1", map[string]any{"prompt": "Provider A is out of credits"}))
		waitFor(t, "a provider B task", func() bool { return len(s.ProviderB.Tasks()) == 1 })
		v := waitOp(t, s, acc.OperationID, "B accepted", func(v api.OperationView) bool {
			return len(v.Attempts) == 2 && v.Attempts[1].State == "accepted"
		})
		a, b := v.Attempts[0], v.Attempts[1]
		if a.Provider != "MUSIC_PROVIDER_A" || a.State != "refused" || a.ErrorCode == nil || *a.ErrorCode != "PROVIDER_CREDITS_EXHAUSTED" ||
			b.Provider != "MUSIC_PROVIDER_B" || v.ID != acc.OperationID {
			t.Fatalf("attempts = %+v", v.Attempts)
		}
		if err := s.ProviderB.Complete(s.ProviderB.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		waitOp(t, s, acc.OperationID, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
		if c := s.ProviderA.CreateCount(); c != 0 {
			t.Fatalf("provider A tasks = %d", c)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE operation_id = ?`, acc.OperationID); c != 2 {
			t.Fatalf("outputs = %d", c)
		}
	})
}

func TestGenerationNoRouteLeftFails(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		s.ProviderA.SetCredits(0)
		s.ProviderB.SetCredits(0, 0)
		acc := acceptedID(t, generate(s, "noroute-1", map[string]any{"prompt": "Nobody has credits"}))
		v := waitOp(t, s, acc.OperationID, "failed", func(v api.OperationView) bool { return v.Status == "failed" })
		if v.Failure == nil || v.Failure.Code != "PROVIDER_CREDITS_EXHAUSTED" || len(v.Attempts) != 2 {
			t.Fatalf("failed view = %+v", v)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before {
			t.Fatalf("balance = %d, want %d (released)", got, before)
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + acc.OperationID + "/result", Key: s.Boot.TestKey})
		if r.Status != 409 || r.Code() != "RESULT_NOT_READY" {
			t.Fatalf("result of a failed operation: %d %s", r.Status, r.Body)
		}
	})
}

func TestGenerationProviderPolicyNeedsScope(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		_, narrow := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "gen only", "scopes": []string{"music:generate"}}, "")
		body := map[string]any{"prompt": "Choose B", "providerPolicy": map[string]any{"preferred": "MUSIC_PROVIDER_B"}}
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/music/generate", Key: narrow.Secret, Body: body,
			Header: map[string]string{"Idempotency-Key": "pp-1"}})
		if r.Status != 403 || r.Code() != "ACCESS_DENIED" {
			t.Fatalf("policy without providers:select: %d %s", r.Status, r.Body)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_operations`); c != 0 {
			t.Fatalf("operations = %d", c)
		}
		acc := acceptedID(t, generate(s, "pp-2", body))
		waitFor(t, "a provider B task", func() bool { return len(s.ProviderB.Tasks()) == 1 })
		v := waitOp(t, s, acc.OperationID, "dispatched", func(v api.OperationView) bool { return len(v.Attempts) == 1 })
		if v.Attempts[0].Provider != "MUSIC_PROVIDER_B" {
			t.Fatalf("attempt = %+v", v.Attempts[0])
		}
		r = generate(s, "pp-3", map[string]any{"prompt": "x", "providerPolicy": map[string]any{"preferred": "MUSIC_PROVIDER_C"}})
		if r.Status != 400 || r.Code() != "INVALID_INPUT" {
			t.Fatalf("unknown provider: %d %s", r.Status, r.Body)
		}
	})
}

func TestGenerationInsufficientCredits(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		holdAllBut(t, s, 14) // for another operation
		r := generate(s, "poor-1", map[string]any{"prompt": "Too expensive", "model": "v5"})
		if r.Status != 422 || r.Code() != "INSUFFICIENT_CREDITS" {
			t.Fatalf("generate: %d %s", r.Status, r.Body)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_operations`); c != 0 {
			t.Fatalf("operations = %d", c)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != 14 {
			t.Fatalf("balance = %d, want 14", got)
		}
		cheaper := map[string]any{"prompt": "Cheaper", "model": "v4"}
		first := acceptedID(t, generate(s, "poor-2", cheaper))
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != 4 {
			t.Fatalf("balance = %d, want 4", got)
		}
		// The route reads a key's record only when the request fails (or
		// its record meets the key): a retry that a new accept could no
		// longer cover still gets the recorded answer, and the same key
		// with a body that fails validation is still a conflict.
		r = generate(s, "poor-2", cheaper)
		if again := acceptedID(t, r); again != first || r.Header.Get(idempotency.ReplayedHeader) != "true" {
			t.Fatalf("retry: %+v (replayed %q), want %+v replayed", again, r.Header.Get(idempotency.ReplayedHeader), first)
		}
		r = generate(s, "poor-2", map[string]any{"prompt": "Cheaper", "model": "v9"})
		if r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("same key, invalid body: %d %s", r.Status, r.Body)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_operations`); c != 1 {
			t.Fatalf("operations = %d, want 1", c)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != 4 {
			t.Fatalf("balance after the retries = %d, want 4", got)
		}
		r = generate(s, "poor-3", map[string]any{"prompt": "Unknown model", "model": "v9"})
		if r.Status != 400 || r.Code() != "INVALID_INPUT" {
			t.Fatalf("unknown model: %d %s", r.Status, r.Body)
		}
	})
}

func TestGenerationCancel(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		acc := acceptedID(t, generate(s, "cancel-1", map[string]any{"prompt": "Changed my mind"}))
		waitTasksA(t, s, 1)
		waitOp(t, s, acc.OperationID, "dispatched", func(v api.OperationView) bool { return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted" })
		cancel := func() *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/operations/" + acc.OperationID + "/cancel", Key: s.Boot.TestKey})
		}
		for i := 0; i < 2; i++ {
			r := cancel()
			if r.Status != 200 {
				t.Fatalf("cancel %d: %d %s", i, r.Status, r.Body)
			}
			var v api.OperationView
			r.Data(t, &v)
			if v.Status != "cancelled" || v.Billing.CreditsReleased == nil || *v.Billing.CreditsReleased != "15" {
				t.Fatalf("cancel %d: %+v", i, v)
			}
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before {
			t.Fatalf("balance = %d, want %d", got, before)
		}
		// The provider finishes anyway: no asset, the cost is still reconciled.
		if err := s.ProviderA.Complete(s.ProviderA.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		v := waitOp(t, s, acc.OperationID, "cost reconciled", func(v api.OperationView) bool { return len(v.Billing.ProviderCost) == 1 })
		if v.Status != "cancelled" || len(v.Outputs) != 2 || v.Outputs[0].AssetID != nil {
			t.Fatalf("after a late completion: %+v", v)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_outputs`); c != 0 {
			t.Fatalf("outputs = %d", c)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, "release:"+acc.OperationID); c != 1 {
			t.Fatalf("releases = %d", c)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, "settle:"+acc.OperationID); c != 0 {
			t.Fatalf("settles = %d", c)
		}
	})
}

func TestGenerationCancelRacesCompletion(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		for round := range 4 {
			before := creditInt(t, s, ledger.AccountWorkspaceCredits)
			acc := acceptedID(t, generate(s, fmt.Sprintf("race-%d", round), map[string]any{"prompt": "Race"}))
			waitTasksA(t, s, round+1)
			waitOp(t, s, acc.OperationID, "dispatched", func(v api.OperationView) bool { return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted" })
			task := s.ProviderA.Tasks()[round].ID
			var wg sync.WaitGroup
			wg.Go(func() { _ = s.ProviderA.Complete(task) })
			wg.Go(func() {
				s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/operations/" + acc.OperationID + "/cancel", Key: s.Boot.TestKey})
			})
			wg.Wait()
			v := waitOp(t, s, acc.OperationID, "terminal", func(v api.OperationView) bool {
				return v.Status == "completed" || v.Status == "cancelled"
			})
			time.Sleep(50 * time.Millisecond) // let any ingestion in flight finish
			v = getOp(t, s, acc.OperationID)
			settles := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, "settle:"+acc.OperationID)
			releases := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, "release:"+acc.OperationID)
			outputs := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE operation_id = ?`, acc.OperationID)
			after := creditInt(t, s, ledger.AccountWorkspaceCredits)
			switch v.Status {
			case "completed":
				if settles != 1 || releases != 0 || outputs != 2 || after != before-15 {
					t.Fatalf("round %d completed: settles %d releases %d outputs %d balance %d→%d", round, settles, releases, outputs, before, after)
				}
			case "cancelled":
				if settles != 0 || releases != 1 || outputs != 0 || after != before {
					t.Fatalf("round %d cancelled: settles %d releases %d outputs %d balance %d→%d", round, settles, releases, outputs, before, after)
				}
			}
			if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/operations/" + acc.OperationID + "/cancel", Key: s.Boot.TestKey}); v.Status == "completed" &&
				(r.Status != 409 || r.Code() != "INVALID_STATE_TRANSITION") {
				t.Fatalf("cancel of a completed operation: %d %s", r.Status, r.Body)
			}
		}
	})
}

// TestGenerationMergeOrdersThroughStore drives the merge through the real
// path (callback receiver, store, jobs) on both databases: for each of 50
// seeded orders, a task finished at the provider has its text, first and
// complete callbacks delivered in that order with duplicates, and a
// recovery poll at a random point; every order ends the same way — one
// completed operation, two outputs, one settlement.
func TestGenerationMergeOrdersThroughStore(t *testing.T) {
	t.Parallel()
	opts := genOptions()
	opts.Generation.PollAfter = time.Second
	opts.Generation.PollMinInterval = time.Millisecond
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		rng := rand.New(rand.NewPCG(13, 42))
		const orders = 50
		for i := range orders {
			before := creditInt(t, s, ledger.AccountWorkspaceCredits)
			acc := acceptedID(t, generate(s, fmt.Sprintf("order-%d", i), map[string]any{"prompt": fmt.Sprintf("Order %d", i)}))
			waitTasksA(t, s, i+1)
			task := s.ProviderA.Tasks()[i].ID
			waitOp(t, s, acc.OperationID, "dispatched", func(v api.OperationView) bool { return len(v.Attempts) == 1 && v.Attempts[0].State == "accepted" })
			if err := s.ProviderA.DropCallbacks(task, "*"); err != nil {
				t.Fatal(err)
			}
			if err := s.ProviderA.Complete(task); err != nil {
				t.Fatal(err)
			}
			seq := []string{"text", "first", "complete", "poll"}
			for range rng.IntN(3) {
				seq = append(seq, []string{"text", "first", "complete"}[rng.IntN(3)])
			}
			rng.Shuffle(len(seq), func(a, b int) { seq[a], seq[b] = seq[b], seq[a] })
			for _, step := range seq {
				if step == "poll" {
					s.Clock.Advance(2 * time.Second)
					continue
				}
				if err := s.ProviderA.Redeliver(task, step); err != nil {
					t.Fatalf("order %d %v: redeliver %s: %v", i, seq, step, err)
				}
			}
			v := waitOp(t, s, acc.OperationID, fmt.Sprintf("order %d %v completed", i, seq), func(v api.OperationView) bool { return v.Status == "completed" })
			time.Sleep(5 * time.Millisecond) // a late duplicate ingestion would show here
			if v.Stage != "finished" || len(v.Outputs) != 2 || v.Outputs[0].AssetID == nil || v.Outputs[1].AssetID == nil {
				t.Fatalf("order %d %v: %+v", i, seq, v)
			}
			if c := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE operation_id = ?`, acc.OperationID); c != 2 {
				t.Fatalf("order %d %v: outputs = %d", i, seq, c)
			}
			if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference IN (?, ?)`, "settle:"+acc.OperationID, "release:"+acc.OperationID); c != 1 {
				t.Fatalf("order %d %v: settle and release movements = %d, want one settle", i, seq, c)
			}
			if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-15 {
				t.Fatalf("order %d %v: balance %d, want %d", i, seq, got, before-15)
			}
		}
		if c := count(t, s, `SELECT COUNT(*) FROM assets`); c != 2*orders {
			t.Fatalf("assets = %d, want %d", c, 2*orders)
		}
	})
}

func TestGenerationBYOK(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		submit := func() string {
			r := createCredential(s, s.Boot.TestKey, map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": s.ProviderB.APIKey()}, nil)
			if r.Status != 201 {
				t.Fatalf("credential: %d %s", r.Status, r.Body)
			}
			var c api.ProviderCredentialView
			r.Data(t, &c)
			return c.ID
		}
		// A customer key the provider rejects at create: the attempt is
		// refused, the key's health records it, the platform credential
		// takes over and the full price is settled.
		cred := submit()
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		s.ProviderB.FailNext(providerbtest.EndpointCreate, http.StatusUnauthorized, 1)
		acc := acceptedID(t, generate(s, "byok-1", map[string]any{"prompt": "My own key"}))
		if acc.Billing.Mode != "BYOK_WITH_PLATFORM_FALLBACK" || acc.Billing.CreditsReserved != "15" {
			t.Fatalf("accepted = %+v", acc)
		}
		v := waitOp(t, s, acc.OperationID, "fallback accepted", func(v api.OperationView) bool {
			return len(v.Attempts) == 2 && v.Attempts[1].State == "accepted"
		})
		a, b := v.Attempts[0], v.Attempts[1]
		if a.Provider != "MUSIC_PROVIDER_B" || a.Ownership != "CUSTOMER_BYOK" || a.State != "refused" || a.ErrorCode == nil ||
			*a.ErrorCode != "PROVIDER_CREDENTIAL_INVALID" || b.Ownership != "PLATFORM_MANAGED" || b.Provider != "MUSIC_PROVIDER_A" {
			t.Fatalf("attempts = %+v", v.Attempts)
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: credentialsPath + "/" + cred, Key: s.Boot.TestKey})
		var cv api.ProviderCredentialView
		r.Data(t, &cv)
		if cv.Health.Status != "invalid" {
			t.Fatalf("credential health = %+v", cv.Health)
		}
		if err := s.ProviderA.Complete(s.ProviderA.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		v = waitOp(t, s, acc.OperationID, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
		if *v.Billing.CreditsSettled != "15" || creditInt(t, s, ledger.AccountWorkspaceCredits) != before-15 {
			t.Fatalf("billing = %+v", v.Billing)
		}

		// A healthy customer key delivers: the BYOK fee is settled and the
		// rest of the reservation released.
		submit()
		before = creditInt(t, s, ledger.AccountWorkspaceCredits)
		acc = acceptedID(t, generate(s, "byok-2", map[string]any{"prompt": "My own key again"}))
		waitFor(t, "a provider B task", func() bool { return len(s.ProviderB.Tasks()) == 1 })
		if err := s.ProviderB.Complete(s.ProviderB.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		v = waitOp(t, s, acc.OperationID, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
		if len(v.Attempts) != 1 || v.Attempts[0].Ownership != "CUSTOMER_BYOK" || *v.Billing.CreditsSettled != "2" ||
			*v.Billing.CreditsReleased != "13" {
			t.Fatalf("byok operation = %+v", v)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-2 {
			t.Fatalf("balance = %d, want %d", got, before-2)
		}
	})
}

func TestGenerationCreateScheduler(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		raiseKeyLimits(t, s)
		const n = 20
		for i := range n {
			acceptedID(t, generate(s, fmt.Sprintf("burst-%d", i), map[string]any{"prompt": fmt.Sprintf("Burst %d", i)}))
		}
		// 18 creates per 10 s per provider account: two operations wait for
		// the window on the injected clock, not for a provider throttle.
		waitTasksA(t, s, 18)
		waitFor(t, "two dispatches deferred", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM jobs WHERE kind = 'generation.dispatch' AND state = 'available'`) == 2
		})
		if c := s.ProviderA.CreateCount(); c != 18 {
			t.Fatalf("creates in the first window = %d, want 18", c)
		}
		s.Clock.Advance(10 * time.Second)
		waitTasksA(t, s, n)
		if c := s.ProviderA.CreateCount(); c != n {
			t.Fatalf("creates = %d, want %d", c, n)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM generation_attempts WHERE state = 'transient'`); c != 0 {
			t.Fatalf("throttled attempts = %d: the scheduler let the provider throttle", c)
		}
	})
}

// TestGenerationSecondHostSeesCredentialChanges: a host keeps each
// workspace's usable customer credentials under the workspace's authority
// version; a key added, found invalid or deleted through another host
// changes the billing mode of the very next accept on this one.
func TestGenerationSecondHostSeesCredentialChanges(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		host2 := s.SecondHost()
		n := 0
		modeOn2 := func() string {
			t.Helper()
			n++
			r := s.DoAt(host2, platformtest.Request{Method: "POST", Path: "/api/v1/music/generate", Key: s.Boot.TestKey,
				Body: map[string]any{"prompt": "Second host"}, Header: map[string]string{"Idempotency-Key": fmt.Sprintf("host2-%d", n)}})
			return acceptedID(t, r).Billing.Mode
		}
		if m := modeOn2(); m != "PLATFORM_MANAGED" {
			t.Fatalf("before any customer key: %s", m)
		}
		if m := modeOn2(); m != "PLATFORM_MANAGED" {
			t.Fatalf("again, from host 2's cache: %s", m)
		}
		r := createCredential(s, s.Boot.TestKey, map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": s.ProviderB.APIKey()}, nil)
		if r.Status != 201 {
			t.Fatalf("credential on host 1: %d %s", r.Status, r.Body)
		}
		var c api.ProviderCredentialView
		r.Data(t, &c)
		if m := modeOn2(); m != "BYOK_WITH_PLATFORM_FALLBACK" {
			t.Fatalf("after host 1 added a key: %s", m)
		}
		if r := s.Do(platformtest.Request{Method: "DELETE", Path: credentialsPath + "/" + c.ID, Key: s.Boot.TestKey}); r.Status != 200 {
			t.Fatalf("delete on host 1: %d %s", r.Status, r.Body)
		}
		if m := modeOn2(); m != "PLATFORM_MANAGED" {
			t.Fatalf("after host 1 deleted the key: %s", m)
		}
	})
}
