package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// reconcileGate holds the reconciliation jobs of a system until opened, so
// a test can change the world between settlement and reconciliation.
type reconcileGate struct {
	open chan struct{}
	once sync.Once
}

func newReconcileGate() *reconcileGate { return &reconcileGate{open: make(chan struct{})} }

// hook is a jobs fault hook that waits at the claim of every
// intent.reconcile job until the gate opens.
func (g *reconcileGate) hook(ctx context.Context, j jobs.Job, point string) error {
	if j.Kind != "intent.reconcile" || point != jobs.PointClaimed {
		return nil
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release opens the gate.
func (g *reconcileGate) release() { g.once.Do(func() { close(g.open) }) }

// payIntent creates a 100-credit intent for p, signs and submits it for the
// platform to relay, and returns it.
func payIntent(t *testing.T, s *platformtest.System, p buyer, key string) api.TransactionIntentView {
	t.Helper()
	r := createIntent(s, p, key, map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": s.Token.Mint.String(), "wallet": p.wallet.addr})
	if r.Status != http.StatusCreated {
		t.Fatalf("intent: %d %s", r.Status, r.Body)
	}
	var iv api.TransactionIntentView
	r.Data(t, &iv)
	sig, wire := signIntent(t, p, iv)
	if r := submit(s, p, iv.ID, sig, wire); r.Status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	return iv
}

// evidence returns the check named name of a reconciliation view.
func evidence(t *testing.T, v *api.ReconciliationView, name string) api.ReconciliationCheckView {
	t.Helper()
	for _, c := range v.Evidence {
		if c.Check == name {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", name, v.Evidence)
	return api.ReconciliationCheckView{}
}

// outboxPayloads returns the payloads of the outbox events of type typ for
// an aggregate, oldest first.
func outboxPayloads(t *testing.T, s *platformtest.System, typ, aggregate string) []map[string]any {
	t.Helper()
	var rows []string
	if err := s.DB.Read().IDB().NewRaw(`SELECT payload FROM outbox_events WHERE type = ? AND aggregate_id = ? ORDER BY aggregate_version`,
		typ, aggregate).Scan(context.Background(), &rows); err != nil && !strings.Contains(err.Error(), "no rows") {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestIntentReconciledMatch takes a credit purchase on the loopback
// cluster through settlement; the reconciliation job enqueued with the
// settlement reads the transaction again and the ledger's grant, and the
// intent reads RECONCILED with outcome MATCH, its record and evidence, and
// an outbox event carrying the outcome. Nothing moves the credits again.
func TestIntentReconciledMatch(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			p := fundedBuyer(t, s, "payer@example.test", 100_000_000_000)
			before := workspaceCreditsAfterGrant(t, s, p)
			iv := payIntent(t, s, p, "reconcile-match")
			v := awaitState(t, s, p, iv.ID, "RECONCILED", time.Second)
			rec := v.Reconciliation
			if rec == nil || rec.Outcome != "MATCH" || !strings.HasPrefix(rec.ID, "rec_") || rec.Object != "reconciliation" ||
				rec.Reason != nil || v.ReconciledAt == nil || rec.Slot == nil || *rec.Slot != *v.Slot || rec.BlockTime == nil ||
				v.Signature == nil || rec.Signature != *v.Signature || v.LastError != nil {
				t.Fatalf("reconciled intent = %+v\nreconciliation = %+v", v, rec)
			}
			for _, c := range rec.Evidence {
				if !c.Passed || c.Expected != c.Actual && c.Check != "chain.instruction" {
					t.Fatalf("check %+v", c)
				}
			}
			if c := evidence(t, rec, "chain.net"); c.Expected != v.NetAtomic {
				t.Fatalf("net check %+v, want %s", c, v.NetAtomic)
			}
			if c := evidence(t, rec, "chain.fee"); c.Actual != v.FeeAtomic {
				t.Fatalf("fee check %+v, want %s", c, v.FeeAtomic)
			}
			if c := evidence(t, rec, "settlement.amount"); c.Actual != "100" {
				t.Fatalf("settlement check %+v", c)
			}
			evidence(t, rec, "intent.economicsHash")
			evidence(t, rec, "chain.signer")
			evidence(t, rec, "settlement.movements")
			if n := count(t, s, "SELECT COUNT(*) FROM intent_reconciliations WHERE intent_id = ?", iv.ID); n != 1 {
				t.Fatalf("%d reconciliation records", n)
			}
			if n := len(outboxPayloads(t, s, "transaction_intent.reconciling", iv.ID)); n != 1 {
				t.Fatalf("%d reconciling events", n)
			}
			events := outboxPayloads(t, s, "transaction_intent.reconciled", iv.ID)
			if len(events) == 0 || events[0]["outcome"] != "MATCH" || events[0]["reconciliationId"] != rec.ID {
				t.Fatalf("reconciled events = %+v", events)
			}
			// The watch still follows the network state to finalized; the
			// reconciliation stands and the credits moved once.
			waitFor(t, "finalized", func() bool {
				s.Cluster.AdvanceSlots(4)
				s.Clock.Advance(time.Second)
				return intentGet(t, s, p, iv.ID).NetworkState == "finalized"
			})
			again := intentGet(t, s, p, iv.ID)
			if again.State != "RECONCILED" || again.Reconciliation == nil || again.Reconciliation.ID != rec.ID {
				t.Fatalf("after finalization: %+v", again)
			}
			if got := workspaceCredits(t, s, p); got != before+100 {
				t.Fatalf("credits %d -> %d, want +100", before, got)
			}
			if n := count(t, s, "SELECT COUNT(*) FROM ledger_movements WHERE reference = ?", "grant:credit_purchase:"+iv.ID); n != 1 {
				t.Fatalf("%d grant movements, want 1", n)
			}
		})
}

// TestIntentReconciliationDrift tampers with the settlement's ledger
// posting between settlement and reconciliation: the outcome is
// DRIFT_DETECTED with the evidence, and nothing is corrected (the balance,
// the tampered posting and the movements stay as they were).
func TestIntentReconciliationDrift(t *testing.T) {
	t.Parallel()
	gatedDialects(t, func(t *testing.T, s *platformtest.System, g *reconcileGate) {
		p := fundedBuyer(t, s, "payer@example.test", 100_000_000_000)
		iv := payIntent(t, s, p, "reconcile-drift")
		awaitState(t, s, p, iv.ID, "SETTLED", time.Second)
		balance := workspaceCredits(t, s, p)
		// Someone edits the grant's credit posting to 99 credits.
		ref := "grant:credit_purchase:" + iv.ID
		if err := s.DB.InTx(context.Background(), func(tx *store.Tx) error {
			_, err := tx.IDB().ExecContext(context.Background(), `UPDATE ledger_postings SET amount = '99'
					WHERE direction = 'credit' AND movement_id = (SELECT id FROM ledger_movements WHERE reference = ?)`, ref)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		g.release()
		v := awaitState(t, s, p, iv.ID, "RECONCILED", time.Second)
		rec := v.Reconciliation
		if rec == nil || rec.Outcome != "DRIFT_DETECTED" || v.LastError == nil || *v.LastError != "RECONCILIATION_DRIFT" ||
			rec.Reason == nil || *rec.Reason != "failed checks: settlement.amount, settlement.balanced" {
			t.Fatalf("reconciliation = %+v", rec)
		}
		if c := evidence(t, rec, "settlement.amount"); c.Passed || c.Expected != "100" || c.Actual != "99" {
			t.Fatalf("amount check %+v", c)
		}
		if c := evidence(t, rec, "chain.net"); !c.Passed {
			t.Fatalf("the chain side drifted too: %+v", c)
		}
		// Reported, never corrected.
		if got := workspaceCredits(t, s, p); got != balance {
			t.Fatalf("balance %d -> %d", balance, got)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM ledger_postings WHERE movement_id = (SELECT id FROM ledger_movements WHERE reference = ?) AND amount = '99'", ref); n != 1 {
			t.Fatalf("the tampered posting changed: %d", n)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM ledger_movements WHERE reference LIKE ?", "%"+iv.ID+"%"); n != 1 {
			t.Fatalf("%d movements for the intent, want the one grant", n)
		}
		events := outboxPayloads(t, s, "transaction_intent.reconciled", iv.ID)
		if len(events) == 0 || events[0]["outcome"] != "DRIFT_DETECTED" {
			t.Fatalf("reconciled events = %+v", events)
		}
	})
}

// gatedDialects is platformtest.Dialects for a system whose reconciliation
// jobs wait at a gate of its own (opened at the latest when the test ends).
func gatedDialects(t *testing.T, fn func(t *testing.T, s *platformtest.System, g *reconcileGate)) {
	for _, postgres := range []bool{false, true} {
		name := "sqlite"
		if postgres {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			g := newReconcileGate()
			s := platformtest.New(t, platformtest.Options{Postgres: postgres, Chain: true,
				Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond, FaultHookFunc: g.hook}})
			t.Cleanup(g.release)
			fn(t, s, g)
		})
	}
}

// TestIntentReconciliationChainUnavailable: while the cluster cannot
// serve the transaction, the intent stays RECONCILING without a record
// and the job retries with back-off; once its attempts are spent the
// outcome is REQUIRES_REVIEW with the reason, never MATCH.
func TestIntentReconciliationChainUnavailable(t *testing.T) {
	t.Parallel()
	gatedDialects(t, func(t *testing.T, s *platformtest.System, g *reconcileGate) {
		p := fundedBuyer(t, s, "payer@example.test", 100_000_000_000)
		iv := payIntent(t, s, p, "reconcile-unavailable")
		awaitState(t, s, p, iv.ID, "SETTLED", time.Second)
		s.Cluster.Inject(chaintest.Fault{Method: "getTransaction", HTTPStatus: http.StatusServiceUnavailable})
		g.release()
		job := func() jobs.Record {
			t.Helper()
			list, err := s.DB.Read().JobList(context.Background(), "intent.reconcile", 10)
			if err != nil || len(list) != 1 {
				t.Fatalf("reconciliation jobs: %+v %v", list, err)
			}
			return list[0]
		}
		waitFor(t, "a failed reconciliation attempt", func() bool {
			j := job()
			return j.State == jobs.Available && j.Attempts == 1
		})
		v := intentGet(t, s, p, iv.ID)
		if v.State != "RECONCILING" || v.Reconciliation != nil || v.ReconciledAt != nil {
			t.Fatalf("while the chain is unreadable: %s %+v", v.State, v.Reconciliation)
		}
		if j := job(); !j.RunAt.After(s.Clock.Now()) || j.LastError == "" {
			t.Fatalf("the failed attempt was not put back with a delay: %+v", j)
		}
		// Each retry waits its back-off; the fake clock moves only while the
		// job waits, to its run_at, until the tenth attempt concludes.
		waitFor(t, "the last attempt", func() bool {
			if j := job(); j.State == jobs.Available && j.RunAt.After(s.Clock.Now()) {
				if intentGet(t, s, p, iv.ID).State != "RECONCILING" {
					t.Fatal("the intent left RECONCILING before the attempts were spent")
				}
				s.Clock.Advance(j.RunAt.Sub(s.Clock.Now()) + time.Millisecond)
			}
			v = intentGet(t, s, p, iv.ID)
			return v.State == "RECONCILED"
		})
		rec := v.Reconciliation
		if rec == nil || rec.Outcome != "REQUIRES_REVIEW" || rec.Reason == nil ||
			!strings.Contains(*rec.Reason, "could not be read (PROVIDER_UNAVAILABLE reading transaction) after 10 attempts") {
			t.Fatalf("reconciliation = %+v", rec)
		}
		if c := evidence(t, rec, "chain.read"); c.Passed {
			t.Fatalf("chain.read passed: %+v", c)
		}
		// The job's own row is completed after the handler's unit of work
		// commits, in a transaction of its own.
		waitFor(t, "the job to complete", func() bool { return job().State != jobs.Running })
		if j := job(); j.Attempts != 10 || j.State != jobs.Succeeded {
			t.Fatalf("the job did not conclude on its last attempt: %+v", j)
		}
	})
}

// TestIntentReconciliationRace runs two reconciliations of one settled
// intent at once, repeatedly: each intent gets exactly one record, both
// runs report it, and one reconciled event is written.
func TestIntentReconciliationRace(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}},
		func(t *testing.T, s *platformtest.System) {
			p := fundedBuyer(t, s, "payer@example.test", 100_000_000_000)
			ctx := context.Background()
			var ids []string
			for i := range 4 {
				iv := payIntent(t, s, p, "race-"+string(rune('a'+i)))
				ids = append(ids, iv.ID)
			}
			// No job pool: relay and settle through the sweep.
			if _, err := s.P.ReconcileIntents(ctx, 10); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "every intent settled", func() bool {
				s.Cluster.AdvanceSlots(2)
				s.P.ReconcileIntents(ctx, 10)
				for _, id := range ids {
					if intentGet(t, s, p, id).State != "SETTLED" {
						return false
					}
				}
				return true
			})
			for _, id := range ids {
				var wg sync.WaitGroup
				recIDs := make([]string, 2)
				errs := make([]error, 2)
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r, err := s.P.ReconcileSettledIntent(ctx, id)
						errs[i] = err
						if r != nil {
							recIDs[i] = r.ID
						}
					}()
				}
				wg.Wait()
				if errs[0] != nil || errs[1] != nil || recIDs[0] == "" || recIDs[0] != recIDs[1] {
					t.Fatalf("%s: runs = %v %v, records %q %q", id, errs[0], errs[1], recIDs[0], recIDs[1])
				}
				if n := count(t, s, "SELECT COUNT(*) FROM intent_reconciliations WHERE intent_id = ?", id); n != 1 {
					t.Fatalf("%s: %d records", id, n)
				}
				if n := len(outboxPayloads(t, s, "transaction_intent.reconciled", id)); n != 1 {
					t.Fatalf("%s: %d reconciled events", id, n)
				}
				if v := intentGet(t, s, p, id); v.State != "RECONCILED" || v.Reconciliation == nil || v.Reconciliation.ID != recIDs[0] ||
					v.Reconciliation.Outcome != "MATCH" {
					t.Fatalf("%s: %+v", id, v.Reconciliation)
				}
			}
		})
}
