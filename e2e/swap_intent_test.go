package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// intentAs posts an intent request for quoteID as p in test mode.
func intentAs(s *platformtest.System, p buyer, quoteID, wallet string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/swap/intents", Cookie: p.cookie, Header: testMode,
		Body: map[string]any{"quoteId": quoteID, "wallet": wallet}})
}

// newQuote quotes amount CMT for TUSD as p.
func newQuote(t *testing.T, s *platformtest.System, p buyer, key, amount string) api.SwapQuoteView {
	t.Helper()
	r := quoteAs(s, p, key, quoteBody(s, p, amount))
	if r.Status != http.StatusCreated {
		t.Fatalf("quote: %d %s", r.Status, r.Body)
	}
	var q api.SwapQuoteView
	r.Data(t, &q)
	return q
}

// tokenBalance reads a token account's balance from the cluster (zero
// when it does not exist).
func tokenBalance(t testing.TB, s *platformtest.System, owner, mint chain.Address) uint64 {
	t.Helper()
	a, err := s.Cluster.GetTokenAccountBalance(context.Background(), chaintest.AssociatedTokenAddress(owner, mint, token2022.ProgramID()), chain.Processed)
	if err != nil {
		return 0
	}
	return a.Amount
}

// signPrepared signs the intent's prepared message with p's wallet and
// returns the signed transaction's wire bytes and signature.
func signPrepared(t testing.TB, p buyer, iv api.SwapIntentView) ([]byte, string) {
	t.Helper()
	msg, err := base64.StdEncoding.DecodeString(iv.PreparedTransaction.MessageBase64)
	if err != nil {
		t.Fatal(err)
	}
	sig := ed25519.Sign(p.wallet.priv, msg)
	wire := append([]byte{1}, sig...)
	wire = append(wire, msg...)
	return wire, solana.SignatureFromBytes(sig).String()
}

// TestSwapIntentPreparesTheTransactionItBinds binds a quote, checks the
// prepared v0 message instruction by instruction, signs it with the
// wallet's real key and lands it on the loopback cluster: the wallet pays
// exactly the gross input, the fee recipient's account receives the
// service fee less the input mint's 2% transfer fee, and the wallet
// receives at least the minimum output. The intent is bound once and read
// only by its owner.
func TestSwapIntentPreparesTheTransactionItBinds(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "intent@example.com", 10_000_000_000)
		q := newQuote(t, s, p, "iq-1", "1.5")
		r := intentAs(s, p, q.QuoteID, p.wallet.addr)
		if r.Status != http.StatusCreated {
			t.Fatalf("intent: %d %s", r.Status, r.Body)
		}
		var iv api.SwapIntentView
		r.Data(t, &iv)
		if iv.Status != "AWAITING_SIGNATURE" || iv.QuoteID != q.QuoteID || iv.OperationID != q.OperationID || iv.QuoteHash != q.QuoteHash ||
			len(iv.IntentHash) != 64 || iv.FeeRecipient != swapKey(62).String() || iv.GrossInputAtomic != q.GrossInputAtomic ||
			iv.MinimumOutputAtomic != q.MinimumOutputAtomic || !iv.ExpiresAt.Equal(q.ExpiresAt) {
			t.Fatalf("intent = %+v", iv)
		}
		if iv.Review.AmountPaid != "1.5" || iv.Review.ServiceFee != "0.03" || iv.Review.ExecutableInput != "1.47" || iv.Review.Wallet != p.wallet.addr ||
			iv.Review.Network != s.Cluster.Network().CAIP2() || len(iv.Review.Route) != 1 {
			t.Fatalf("review = %+v", iv.Review)
		}

		// The prepared message: v0, paid and signed by the wallet alone,
		// with the route's lookup table, the fee transfer, the memo and
		// the pool swap.
		msg, _ := base64.StdEncoding.DecodeString(iv.PreparedTransaction.MessageBase64)
		unsigned, _ := base64.StdEncoding.DecodeString(iv.PreparedTransaction.TransactionBase64)
		decoded, err := solana.TransactionFromBytes(unsigned)
		if err != nil {
			t.Fatalf("decode the prepared transaction: %v", err)
		}
		m := decoded.Message
		if !m.IsVersioned() || m.Header.NumRequiredSignatures != 1 || m.AccountKeys[0].String() != p.wallet.addr || len(m.AddressTableLookups) != 1 {
			t.Fatalf("message header %+v, keys %v, lookups %d", m.Header, m.AccountKeys, len(m.AddressTableLookups))
		}
		if !strings.Contains(string(msg), "swap:"+iv.IntentID) {
			t.Fatal("the memo with the intent id is missing")
		}

		// Bound once: asking again answers the same intent.
		var again api.SwapIntentView
		r2 := intentAs(s, p, q.QuoteID, p.wallet.addr)
		r2.Data(t, &again)
		if r2.Status != http.StatusOK || again.IntentID != iv.IntentID || again.PreparedTransaction.MessageBase64 != iv.PreparedTransaction.MessageBase64 {
			t.Fatalf("second intent request: %d, %s vs %s", r2.Status, again.IntentID, iv.IntentID)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM swap_intents"); n != 1 {
			t.Fatalf("%d intents stored", n)
		}

		// Durable status, for the owner only.
		var st api.SwapStatusView
		s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/" + iv.IntentID + "/status", Cookie: p.cookie, Header: testMode}).Data(t, &st)
		if st.Status != "AWAITING_SIGNATURE" || st.IntentID != iv.IntentID || st.Terminal || st.TransactionSignature != nil {
			t.Fatalf("status = %+v", st)
		}
		other := fundedBuyer(t, s, "other@example.com", 1_000_000_000)
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/" + iv.IntentID + "/status", Cookie: other.cookie, Header: testMode}); r.Status != http.StatusNotFound {
			t.Fatalf("another user's status read: %d %s", r.Status, r.Body)
		}
		if r := intentAs(s, other, q.QuoteID, other.wallet.addr); r.Status != http.StatusNotFound {
			t.Fatalf("another user bound the quote: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/" + iv.IntentID + "/status", Cookie: p.cookie,
			Header: map[string]string{transport.EnvironmentHeader: "live"}}); r.Status != http.StatusNotFound {
			t.Fatalf("the live environment read a test intent: %d %s", r.Status, r.Body)
		}

		// Signed by the wallet, the prepared transaction lands and moves
		// exactly what the intent bound.
		wallet, _ := token2022.ParsePublicKey(p.wallet.addr)
		usd := swapKey(61)
		inBefore, feeBefore := tokenBalance(t, s, wallet, s.Token.Mint), tokenBalance(t, s, swapKey(62), s.Token.Mint)
		wire, sig := signPrepared(t, p, iv)
		got, err := s.RPC.SendTransaction(context.Background(), wire, chain.SendOptions{})
		if err != nil || got != sig {
			t.Fatalf("send: %s, %v (want %s)", got, err, sig)
		}
		s.Cluster.AdvanceSlots(2)
		tx, err := s.RPC.GetTransaction(context.Background(), sig, chain.Confirmed)
		if err != nil || tx.Err != "" {
			t.Fatalf("landed: %+v, %v", tx, err)
		}
		paid := inBefore - tokenBalance(t, s, wallet, s.Token.Mint)
		feeGot := tokenBalance(t, s, swapKey(62), s.Token.Mint) - feeBefore
		out := tokenBalance(t, s, wallet, usd)
		feeFee := (30_000_000*200 + 9999) / 10000
		if paid != 1_500_000_000 || feeGot != uint64(30_000_000-feeFee) {
			t.Fatalf("paid %d (want 1500000000), fee account +%d (want %d), received %d (minimum %s)", paid, feeGot, 30_000_000-feeFee, out, iv.MinimumOutputAtomic)
		}
		if fmt.Sprint(out) != iv.ExpectedOutputAtomic {
			t.Fatalf("received %d, want the quote's expected %s at unchanged reserves", out, iv.ExpectedOutputAtomic)
		}
	})
}

// TestSwapIntentRefusals fails each intent check alone and checks that
// nothing was bound.
func TestSwapIntentRefusals(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		p := fundedBuyer(t, s, "refusal@example.com", 10_000_000_000)
		stranger := newWalletKey(t)
		refused := func(what string, r *platformtest.Response, status int, code string) {
			t.Helper()
			if r.Status != status || r.Code() != code {
				t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Body, status, code)
			}
			if n := count(t, s, "SELECT COUNT(*) FROM swap_intents"); n != 0 {
				t.Fatalf("%s bound an intent", what)
			}
		}
		q := newQuote(t, s, p, "rq-1", "1.5")
		refused("an unknown quote", intentAs(s, p, "swq_nope", p.wallet.addr), http.StatusNotFound, "NOT_FOUND")
		refused("another wallet", intentAs(s, p, q.QuoteID, stranger.addr), http.StatusUnprocessableEntity, "WALLET_MISMATCH")

		// A new fee policy version: the quote's terms no longer hold.
		q2 := newQuote(t, s, p, "rq-2", "1.5")
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			_, _, err := policy.Publish(ctx, tx, policy.Scope{Environment: access.Test}, swap.PolicyFees,
				swap.FeePolicy{ServiceFeeBps: swap.ServiceFeeBps, FeeRecipient: swapKey(65).String()}, "operator")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		refused("a changed fee policy", intentAs(s, p, q2.QuoteID, p.wallet.addr), http.StatusConflict, "QUOTE_MISMATCH")

		// Expired: the quote lived 30 seconds.
		q3 := newQuote(t, s, p, "rq-3", "1.5")
		s.Clock.Advance(31 * time.Second)
		refused("an expired quote", intentAs(s, p, q3.QuoteID, p.wallet.addr), http.StatusGone, "QUOTE_EXPIRED")
	})
}

// submitAs posts a submit of wire with signature sig for intentID as p.
func submitAs(s *platformtest.System, p buyer, key, intentID, sig string, wire []byte) *platformtest.Response {
	h := map[string]string{transport.EnvironmentHeader: "test", "Idempotency-Key": key}
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/swap/" + intentID + "/submit", Cookie: p.cookie, Header: h,
		Body: map[string]any{"signature": sig, "signedTransactionBase64": base64.StdEncoding.EncodeToString(wire)}})
}

// swapStatus reads the status of intentID as p.
func swapStatus(t testing.TB, s *platformtest.System, p buyer, intentID string) api.SwapStatusView {
	t.Helper()
	var v api.SwapStatusView
	s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/swap/" + intentID + "/status", Cookie: p.cookie, Header: testMode}).Data(t, &v)
	return v
}

// awaitSwap waits for cond, moving the platform's clock by the relay's
// period between looks so that the watch job's next run comes due.
func awaitSwap(t *testing.T, s *platformtest.System, what string, cond func() bool) {
	t.Helper()
	waitFor(t, what, func() bool {
		s.Clock.Advance(swap.WatchEvery)
		return cond()
	})
}

// confirmedOrLater reports a swap state at or past CONFIRMED on the
// forward path (the watch job verifies and settles as soon as it sees the
// confirmation).
func confirmedOrLater(state string) bool {
	switch state {
	case "CONFIRMED", "VERIFYING", "VERIFIED", "SETTLING", "SETTLED", "RECONCILING", "RECONCILED":
		return true
	}
	return false
}

// preparedIntent quotes and binds a swap of amount CMT as p.
func preparedIntent(t *testing.T, s *platformtest.System, p buyer, key, amount string) api.SwapIntentView {
	t.Helper()
	q := newQuote(t, s, p, key, amount)
	r := intentAs(s, p, q.QuoteID, p.wallet.addr)
	if r.Status != http.StatusCreated {
		t.Fatalf("intent: %d %s", r.Status, r.Body)
	}
	var iv api.SwapIntentView
	r.Data(t, &iv)
	return iv
}

// TestSwapSubmitRelaysTheSignedTransaction submits the wallet's signed
// transaction: the operation is SUBMITTED at once (RPC acceptance is not
// settlement), the relay sends the identical bytes again after the first
// send is lost, and the operation follows the chain to CONFIRMED; the
// same signature again changes nothing; every malformed or foreign
// signature is refused before anything is bound.
func TestSwapSubmitRelaysTheSignedTransaction(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "submit@example.com", 10_000_000_000)
		iv := preparedIntent(t, s, p, "sq-1", "1.5")
		wire, sig := signPrepared(t, p, iv)

		// Refusals first: nothing is bound by any of them.
		refused := func(what string, r *platformtest.Response, status int, code, reason string) {
			t.Helper()
			if r.Status != status || r.Code() != code {
				t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Body, status, code)
			}
			if reason != "" {
				if got := r.JSON()["error"].(map[string]any)["details"].(map[string]any)["reason"]; got != reason {
					t.Fatalf("%s: reason %v, want %s", what, got, reason)
				}
			}
			if st := swapStatus(t, s, p, iv.IntentID); st.Status != "AWAITING_SIGNATURE" || st.TransactionSignature != nil {
				t.Fatalf("%s bound something: %+v", what, st)
			}
		}
		tampered := append([]byte(nil), wire...)
		tampered[len(tampered)-1] ^= 1
		refused("a changed message", submitAs(s, p, "bad-1", iv.IntentID, sig, tampered), http.StatusUnprocessableEntity, "SIGNATURE_REJECTED", "message")
		other := newWalletKey(t)
		msg, _ := base64.StdEncoding.DecodeString(iv.PreparedTransaction.MessageBase64)
		forged := append([]byte{1}, ed25519.Sign(other.priv, msg)...)
		forged = append(forged, msg...)
		forgedSig := solana.SignatureFromBytes(forged[1:65]).String()
		refused("another key's signature", submitAs(s, p, "bad-2", iv.IntentID, forgedSig, forged), http.StatusUnprocessableEntity, "SIGNATURE_REJECTED", "signature_invalid")
		refused("a signature that is not the transaction's", submitAs(s, p, "bad-3", iv.IntentID, forgedSig, wire), http.StatusUnprocessableEntity, "SIGNATURE_REJECTED", "signature")
		refused("bytes that are no transaction", submitAs(s, p, "bad-4", iv.IntentID, sig, []byte{1, 2, 3}), http.StatusBadRequest, "INVALID_INPUT", "")
		stranger := fundedBuyer(t, s, "stranger@example.com", 1_000_000_000)
		if r := submitAs(s, stranger, "bad-5", iv.IntentID, sig, wire); r.Status != http.StatusNotFound {
			t.Fatalf("another user submitted: %d %s", r.Status, r.Body)
		}

		// The first send is lost on the way: the relay inspects, finds
		// nothing, and sends the identical bytes again.
		s.Cluster.DropTransactions(1)
		r := submitAs(s, p, "sub-1", iv.IntentID, sig, wire)
		if r.Status != http.StatusAccepted {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		var sv api.SwapSubmitView
		r.Data(t, &sv)
		if sv.Status != "SUBMITTED" || sv.TransactionSignature != sig || sv.NetworkState != "submitted" || sv.LastValidBlockHeight != iv.PreparedTransaction.LastValidBlockHeight {
			t.Fatalf("submitted = %+v", sv)
		}
		awaitSwap(t, s, "the relay's second send", func() bool {
			return count(t, s, "SELECT COUNT(*) FROM swap_submissions WHERE signature = ? AND send_attempts >= 2", sig) == 1
		})
		s.Cluster.AdvanceSlots(2)
		awaitSwap(t, s, "confirmation", func() bool { return confirmedOrLater(swapStatus(t, s, p, iv.IntentID).Status) })
		st := swapStatus(t, s, p, iv.IntentID)
		if st.TransactionSignature == nil || *st.TransactionSignature != sig || st.LastError != nil {
			t.Fatalf("status = %+v", st)
		}
		if n := count(t, s, "SELECT send_attempts FROM swap_submissions WHERE signature = ?", sig); n != 2 {
			t.Fatalf("%d sends, want 2 (one lost, one landed)", n)
		}

		// The same signature again: the operation as it stands.
		var again api.SwapSubmitView
		r = submitAs(s, p, "sub-2", iv.IntentID, sig, wire)
		r.Data(t, &again)
		if r.Status != http.StatusOK || !confirmedOrLater(again.Status) {
			t.Fatalf("resubmit: %d %+v", r.Status, again)
		}

		// An operation bound to another signature: a valid signature over
		// the prepared message puts it under review. (A wallet that signs
		// with fresh randomness can produce a second valid signature; the
		// deterministic test key cannot, so the first binding is made to
		// look like another's.)
		iv2 := preparedIntent(t, s, p, "sq-2", "1.5")
		wire2, sig2 := signPrepared(t, p, iv2)
		if err := s.DB.InTx(context.Background(), func(tx *store.Tx) error {
			_, err := tx.IDB().ExecContext(context.Background(), "UPDATE swap_operations SET signature = ?, state = ?, version = version + 1 WHERE id = ?",
				"OtherSignature1111111111111111111111111111111111111111111111111111111111111111111", "SUBMITTED", iv2.OperationID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		r = submitAs(s, p, "sub-3", iv2.IntentID, sig2, wire2)
		if r.Status != http.StatusConflict || r.Code() != "REQUIRES_REVIEW" {
			t.Fatalf("a second signature: %d %s", r.Status, r.Body)
		}
		if st := swapStatus(t, s, p, iv2.IntentID); st.Status != "REQUIRES_REVIEW" {
			t.Fatalf("after a second signature: %+v", st)
		}
	})
}

// TestSwapSubmitPriceMovedFailsAtSimulation moves the pool's price after
// the intent: the node's simulation refuses the transaction, the
// operation FAILS with SIMULATION_FAILED, and nothing but nothing moves.
func TestSwapSubmitPriceMovedFailsAtSimulation(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "moved@example.com", 10_000_000_000)
		iv := preparedIntent(t, s, p, "mq-1", "1.5")
		pools := s.Cluster.Pools()
		if len(pools) != 1 {
			t.Fatalf("%d pools", len(pools))
		}
		// Half the output reserve: the price falls far below the minimum.
		a, b, err := s.Cluster.PoolReserves(pools[0].Address)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Cluster.SetPoolReserves(pools[0].Address, a, b/2); err != nil {
			t.Fatal(err)
		}
		wallet, _ := token2022.ParsePublicKey(p.wallet.addr)
		before := tokenBalance(t, s, wallet, s.Token.Mint)
		wire, sig := signPrepared(t, p, iv)
		if r := submitAs(s, p, "mv-1", iv.IntentID, sig, wire); r.Status != http.StatusAccepted {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		awaitSwap(t, s, "the failure", func() bool { return swapStatus(t, s, p, iv.IntentID).Status == "FAILED" })
		st := swapStatus(t, s, p, iv.IntentID)
		if st.LastError == nil || *st.LastError != "SIMULATION_FAILED" || !st.Terminal {
			t.Fatalf("status = %+v", st)
		}
		if got := tokenBalance(t, s, wallet, s.Token.Mint); got != before {
			t.Fatalf("the wallet paid %d for a failed swap", before-got)
		}
	})
}

// TestSwapSubmitUncertainSendIsInspectedFirst makes the node hold its
// answer to the first send past the client's timeout: the operation stays
// SUBMITTED with SUBMISSION_UNCERTAIN, the next step inspects the chain
// before sending the identical bytes again, and the swap confirms with the
// error cleared.
func TestSwapSubmitUncertainSendIsInspectedFirst(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "uncertain@example.com", 10_000_000_000)
		iv := preparedIntent(t, s, p, "uq-1", "1.5")
		wire, sig := signPrepared(t, p, iv)
		s.Cluster.Inject(chaintest.Fault{Method: "sendTransaction", Times: 1, Delay: 5 * time.Second})
		if r := submitAs(s, p, "us-1", iv.IntentID, sig, wire); r.Status != http.StatusAccepted {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		waitFor(t, "the uncertain send", func() bool {
			st := swapStatus(t, s, p, iv.IntentID)
			return st.LastError != nil && *st.LastError == "SUBMISSION_UNCERTAIN" && st.Status == "SUBMITTED"
		})
		inspected := s.Cluster.Calls("getSignatureStatuses")
		awaitSwap(t, s, "the second send", func() bool {
			return count(t, s, "SELECT COUNT(*) FROM swap_submissions WHERE signature = ? AND send_attempts >= 2", sig) == 1
		})
		if s.Cluster.Calls("getSignatureStatuses") <= inspected {
			t.Fatal("the relay sent again without inspecting the signature first")
		}
		s.Cluster.AdvanceSlots(2)
		awaitSwap(t, s, "confirmation", func() bool { return confirmedOrLater(swapStatus(t, s, p, iv.IntentID).Status) })
		if st := swapStatus(t, s, p, iv.IntentID); st.LastError != nil {
			t.Fatalf("the uncertainty outlived the landing: %+v", st)
		}
	})
}

// TestSwapAggregatorFaultsAtIntent covers the aggregator's answers that
// reach the intent: a quote with undocumented fields is passed back byte
// for byte (the aggregator refuses one that lost them) and the swap still
// prepares; a failed simulation of the route's instructions is
// SIMULATION_FAILED and binds nothing.
func TestSwapAggregatorFaultsAtIntent(t *testing.T) {
	t.Parallel()
	swapSystem(t, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "faults@example.com", 10_000_000_000)
		agg := aggregatorOf(t, s)
		agg.Inject(jupitertest.Fault{Path: jupitertest.PathQuote, Times: 1, DynamicSwap: true})
		iv := preparedIntent(t, s, p, "fq-1", "1.5")
		if iv.Status != "AWAITING_SIGNATURE" {
			t.Fatalf("intent over a quote with undocumented fields: %+v", iv)
		}

		q := newQuote(t, s, p, "fq-2", "1.5")
		agg.Inject(jupitertest.Fault{Path: jupitertest.PathSwapInstructions, Times: 1,
			SimulationError: &jupitertest.SimulationError{ErrorCode: "TRANSACTION_ERROR", Message: "insufficient funds for the route"}})
		r := intentAs(s, p, q.QuoteID, p.wallet.addr)
		if r.Status != http.StatusUnprocessableEntity || r.Code() != "SIMULATION_FAILED" {
			t.Fatalf("intent with a failed simulation: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM swap_intents WHERE quote_id = ?", q.QuoteID); n != 0 {
			t.Fatalf("a failed simulation bound an intent")
		}
	})
}
