package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// bindForeignSignature binds to an operation, as SUBMITTED, a signature
// whose transaction is not the intent's. No route can: submit refuses any
// signature that is not over the prepared message. It writes the row
// directly to exercise verification's own defence against a transaction
// that does not match its intent.
func bindForeignSignature(t testing.TB, s *platformtest.System, operationID, sig string) {
	t.Helper()
	err := s.DB.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.IDB().ExecContext(context.Background(),
			`UPDATE swap_operations SET state='SUBMITTED', signature=?, version=version+1 WHERE id=?`, sig, operationID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// submitSent submits the signed swap through the route and waits until
// the relay has sent it.
func submitSent(t *testing.T, s *platformtest.System, p buyer, iv api.SwapIntentView, wire []byte, sig string) {
	t.Helper()
	if r := submitAs(s, p, "submit-"+iv.IntentID, iv.IntentID, sig, wire); r.Status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	waitFor(t, "the relay's send", func() bool {
		return count(t, s, "SELECT COUNT(*) FROM swap_submissions WHERE signature = ? AND send_attempts >= 1", sig) == 1
	})
}

// verifyAs posts the verify request for intentID as p in test mode.
func verifyAs(s *platformtest.System, p buyer, intentID string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/swap/" + intentID + "/verify", Cookie: p.cookie, Header: testMode})
}

// verified posts the verify request and decodes its 200 answer.
func verified(t testing.TB, s *platformtest.System, p buyer, intentID string) api.SwapVerifyView {
	t.Helper()
	r := verifyAs(s, p, intentID)
	if r.Status != http.StatusOK {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	var v api.SwapVerifyView
	r.Data(t, &v)
	return v
}

// preparedSwap quotes amount CMT for TUSD as p and binds the intent; it
// returns the intent and its signed transaction, not sent.
func preparedSwap(t *testing.T, s *platformtest.System, p buyer, key, amount string) (api.SwapIntentView, []byte, string) {
	t.Helper()
	q := newQuote(t, s, p, key, amount)
	r := intentAs(s, p, q.QuoteID, p.wallet.addr)
	if r.Status != http.StatusCreated {
		t.Fatalf("intent: %d %s", r.Status, r.Body)
	}
	var iv api.SwapIntentView
	r.Data(t, &iv)
	wire, sig := signPrepared(t, p, iv)
	return iv, wire, sig
}

// sendSwap sends signed wire bytes to the loopback cluster.
func sendSwap(t testing.TB, s *platformtest.System, wire []byte, skipPreflight bool) {
	t.Helper()
	if _, err := s.RPC.SendTransaction(context.Background(), wire, chain.SendOptions{SkipPreflight: skipPreflight}); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// feeMovements reads the financial ledger's movements of an operation's
// fee as p sees them.
func feeMovements(t testing.TB, s *platformtest.System, p buyer, operationID string) []api.LedgerMovement {
	t.Helper()
	var page api.LedgerPage
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ledgers/financial?limit=100", Cookie: p.cookie, Header: testMode})
	if r.Status != http.StatusOK {
		t.Fatalf("financial ledger: %d %s", r.Status, r.Body)
	}
	r.Data(t, &page)
	var out []api.LedgerMovement
	for _, m := range page.Items {
		if m.Reference == swap.FeeReference(operationID) {
			out = append(out, m)
		}
	}
	return out
}

// TestSwapVerifySettlesOnceAndReconciles runs a swap from its quote to its
// reconciliation on the loopback cluster: verified before it is sent, it
// is pending; once it lands it is SETTLED with one settlement whose
// amounts are what the chain moved and one financial ledger movement of
// exactly what the fee recipient's account gained; the reconciliation job
// waits for finality, then records MATCH and the operation is
// RECONCILED. Repeats answer the same records; nobody else may verify it.
func TestSwapVerifySettlesOnceAndReconciles(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "settle@example.com", 10_000_000_000)
		iv, wire, sig := preparedSwap(t, s, p, "vq-1", "1.5")
		if r := verifyAs(s, p, iv.IntentID); r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" {
			t.Fatalf("verify before submission: %d %s", r.Status, r.Body)
		}
		wallet, _ := token2022.ParsePublicKey(p.wallet.addr)
		usd := swapKey(61)
		feeBefore, outBefore := tokenBalance(t, s, swapKey(62), s.Token.Mint), tokenBalance(t, s, wallet, usd)
		submitSent(t, s, p, iv, wire, sig)

		// Submitted and processed, not confirmed yet: pending, nothing
		// changes.
		if v := verified(t, s, p, iv.IntentID); !v.Pending || v.Status != "SUBMITTED" || len(v.Checks) != 0 || v.Settlement != nil {
			t.Fatalf("pending answer %+v", v)
		}

		s.Cluster.AdvanceSlots(2) // confirmed, not finalized
		feeGained := tokenBalance(t, s, swapKey(62), s.Token.Mint) - feeBefore
		outGained := tokenBalance(t, s, wallet, usd) - outBefore

		v := verified(t, s, p, iv.IntentID)
		if v.Pending || (v.Status != "SETTLED" && v.Status != "RECONCILED") || v.LastError != nil || v.TransactionSignature == nil ||
			*v.TransactionSignature != sig || len(v.Checks) != 13 {
			t.Fatalf("verify after landing: %+v", v)
		}
		for _, c := range v.Checks {
			if !c.Passed {
				t.Errorf("check %s failed: expected %s, actual %s", c.Name, c.Expected, c.Actual)
			}
		}
		set := v.Settlement
		if set == nil || set.Signature != sig || set.ServiceFeeAtomic != iv.ServiceFeeAtomic || set.FeeReceivedAtomic != fmt.Sprint(feeGained) ||
			set.ActualInputAtomic != iv.GrossInputAtomic || set.ActualOutputAtomic != fmt.Sprint(outGained) || set.Slot == 0 {
			t.Fatalf("settlement %+v; fee account gained %d, wallet received %d", set, feeGained, outGained)
		}
		if feeGained != 30_000_000-600_000 {
			t.Fatalf("the fee account gained %d, want the fee less its 2%% transfer fee", feeGained)
		}

		// One movement, of exactly what the fee account gained.
		ms := feeMovements(t, s, p, iv.OperationID)
		if len(ms) != 1 || ms[0].Ledger != "financial" || len(ms[0].Postings) != 2 {
			t.Fatalf("fee movements %+v", ms)
		}
		for _, ps := range ms[0].Postings {
			if ps.AmountAtomic != fmt.Sprint(feeGained) || ps.Decimals != 9 {
				t.Errorf("posting %+v, want %d at 9 decimals", ps, feeGained)
			}
		}

		// The reconciliation waits for finality, then matches.
		key := swap.JobReconcile + ":" + iv.OperationID
		waitFor(t, "the reconciliation's first attempt", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM jobs WHERE unique_key = ? AND attempts > 0`, key) == 1
		})
		if n := count(t, s, `SELECT COUNT(*) FROM swap_reconciliations`); n != 0 {
			t.Fatalf("reconciled before finality: %d records", n)
		}
		s.Cluster.AdvanceSlots(40)
		waitJob(t, s, key)
		v = verified(t, s, p, iv.IntentID)
		if v.Status != "RECONCILED" || v.Reconciliation == nil || v.Reconciliation.Outcome != "MATCH" || v.Settlement == nil ||
			v.Settlement.ID != set.ID || v.LastError != nil || !v.Terminal {
			t.Fatalf("after reconciliation: %+v", v)
		}
		for table, want := range map[string]int{"swap_settlements": 1, "swap_reconciliations": 1, "swap_verifications": 1} {
			if n := count(t, s, "SELECT COUNT(*) FROM "+table); n != want {
				t.Errorf("%s: %d rows, want %d", table, n, want)
			}
		}
		if ms := feeMovements(t, s, p, iv.OperationID); len(ms) != 1 {
			t.Fatalf("%d fee movements after repeats", len(ms))
		}

		// Nobody else verifies it.
		other := fundedBuyer(t, s, "nosy@example.com", 1_000_000_000)
		if r := verifyAs(s, other, iv.IntentID); r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
			t.Fatalf("another user's verify: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/swap/" + iv.IntentID + "/verify", Cookie: p.cookie,
			Header: map[string]string{transport.EnvironmentHeader: "live"}}); r.Status != http.StatusNotFound {
			t.Fatalf("the live environment verified a test swap: %d %s", r.Status, r.Body)
		}
	})
}

// TestSwapVerifyConvergesUnderConcurrency verifies one landed swap fifty
// times at once: every answer names the same settlement, and the database
// holds one settlement and one fee movement.
func TestSwapVerifyConvergesUnderConcurrency(t *testing.T) {
	t.Parallel()
	// Fifty requests of one user at once: above a user's default
	// concurrency, which is not what this test is about.
	opts := platformtest.Options{Chain: true, SwapFunc: swapEnv, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond},
		SessionLimits: transport.SessionLimits{User: apikey.Limits{MaxConcurrentRequests: 64}}}
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		waitFor(t, "the registry's start-up verification", func() bool {
			var v api.SwapTokensView
			s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/tokens", Key: s.Boot.TestKey}).Data(t, &v)
			return v.VerifiedAt != nil
		})
		p := fundedBuyer(t, s, "race@example.com", 10_000_000_000)
		iv, wire, sig := preparedSwap(t, s, p, "vq-race", "1.5")
		submitSent(t, s, p, iv, wire, sig)
		s.Cluster.AdvanceSlots(2)

		const n = 50
		answers := make([]*platformtest.Response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = verifyAs(s, p, iv.IntentID)
			}()
		}
		wg.Wait()
		ids := map[string]int{}
		for i, r := range answers {
			if r.Status != http.StatusOK {
				t.Fatalf("verify %d: %d %s", i, r.Status, r.Body)
			}
			var v api.SwapVerifyView
			r.Data(t, &v)
			if v.Settlement == nil {
				t.Fatalf("verify %d answered no settlement: %+v", i, v)
			}
			ids[v.Settlement.ID]++
		}
		if len(ids) != 1 {
			t.Fatalf("%d settlements answered: %v", len(ids), ids)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM swap_settlements WHERE operation_id = ?`, iv.OperationID); n != 1 {
			t.Fatalf("%d settlement rows", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, swap.FeeReference(iv.OperationID)); n != 1 {
			t.Fatalf("%d fee movements", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND aggregate_id = ?`, swap.EventType(swap.StateSettled),
			iv.OperationID); n != 1 {
			t.Fatalf("%d settled events", n)
		}
	})
}

// TestSwapVerifyFailedOnChain moves the pool's price after the quote so
// the swap's minimum output cannot be met, and lands the transaction
// without preflight: it fails on chain, the operation is FAILED with
// TRANSACTION_FAILED, and nothing is settled.
func TestSwapVerifyFailedOnChain(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "slipped@example.com", 10_000_000_000)
		iv, wire, sig := preparedSwap(t, s, p, "vq-fail", "1.5")
		pool := s.Cluster.Pools()[0]
		if err := s.Cluster.SetPoolReserves(pool.Address, swapPoolCMT*2, swapPoolUSD); err != nil {
			t.Fatal(err)
		}
		// The wallet broadcast it itself, without preflight; then it is
		// submitted: the relay finds it on chain and sends nothing.
		sendSwap(t, s, wire, true)
		s.Cluster.AdvanceSlots(2)
		if r := submitAs(s, p, "vs-fail", iv.IntentID, sig, wire); r.Status != http.StatusAccepted {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}

		v := verified(t, s, p, iv.IntentID)
		if v.Status != "FAILED" || v.LastError == nil || *v.LastError != "TRANSACTION_FAILED" || v.Settlement != nil || !v.Terminal {
			t.Fatalf("after a failed transaction: %+v", v)
		}
		if c := v.Checks[1]; c.Name != "success" || c.Passed {
			t.Fatalf("success check %+v", c)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM swap_settlements`); n != 0 {
			t.Fatalf("%d settlements", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, swap.FeeReference(iv.OperationID)); n != 0 {
			t.Fatalf("%d fee movements", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM jobs WHERE kind = ?`, swap.JobReconcile); n != 0 {
			t.Fatalf("%d reconciliation jobs", n)
		}
		if again := verified(t, s, p, iv.IntentID); again.Status != "FAILED" {
			t.Fatalf("a repeat moved FAILED to %s", again.Status)
		}
	})
}

// TestSwapVerifyMismatchGoesToReview binds to one swap's operation the
// signature of another transaction of the same wallet that did land (a
// larger swap): its effects do not match the intent, so the operation
// goes to REQUIRES_REVIEW with VERIFICATION_FAILED, the verification is
// kept as evidence, and nothing is settled.
func TestSwapVerifyMismatchGoesToReview(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "mismatch@example.com", 10_000_000_000)
		iv, _, _ := preparedSwap(t, s, p, "vq-a", "1.5")
		_, otherWire, otherSig := preparedSwap(t, s, p, "vq-b", "2")
		sendSwap(t, s, otherWire, false)
		s.Cluster.AdvanceSlots(2)
		bindForeignSignature(t, s, iv.OperationID, otherSig)

		v := verified(t, s, p, iv.IntentID)
		if v.Status != "REQUIRES_REVIEW" || v.LastError == nil || *v.LastError != "VERIFICATION_FAILED" || v.Settlement != nil || !v.Terminal {
			t.Fatalf("after a mismatched transaction: %+v", v)
		}
		failed := map[string]bool{}
		for _, c := range v.Checks {
			if !c.Passed {
				failed[c.Name] = true
			}
		}
		if !failed["executableInput"] || !failed["serviceFee"] || failed["signer"] || failed["success"] {
			t.Fatalf("failed checks %v", failed)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM swap_verifications WHERE operation_id = ? AND passed = ?`, iv.OperationID, false); n != 1 {
			t.Fatalf("%d failed verifications kept", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM swap_settlements`); n != 0 {
			t.Fatalf("%d settlements", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, swap.FeeReference(iv.OperationID)); n != 0 {
			t.Fatalf("%d fee movements", n)
		}
	})
}
