package swaptest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/swaptest"
)

// The service fee op_2's settlement received, in the quote's input mint
// (addr(6), 9 decimals), and the ledger accounts it moved between.
var (
	op2Fee       = money.Atomic(19_600_000)
	revenue      = swap.FeeRevenueAccount(addr(6))
	feeRecipient = swap.FeeRecipientAccount(addr(4), addr(6))
)

// sums compares money.Sum values by value.
var sums = cmp.Comparer(func(a, b money.Sum) bool { return a.Cmp(b) == 0 })

// feeMovement is the fee movement of operation opID on alice's financial
// ledger.
func feeMovement(opID string, fee money.Atomic) ledger.Movement {
	return ledger.Movement{Scope: alice.Scope(), Ledger: ledger.Financial, Type: ledger.TypeTransfer, Reference: swap.FeeReference(opID),
		Decimals: 9, Actor: ledger.Actor{UserID: alice.UserID}, Postings: []ledger.Posting{
			{Account: revenue, Direction: ledger.Debit, Amount: fee},
			{Account: feeRecipient, Direction: ledger.Credit, Amount: fee},
		}}
}

// op2Verification is the verification of op_2's transaction sig_2: every
// kind of field, a failed check among them.
func op2Verification() swap.VerificationRecord {
	bt := t0.Add(-time.Second)
	return swap.VerificationRecord{ID: "swv_2", Owner: alice, CreatedAt: t0, Verification: swap.Verification{
		IntentID: "i_2", OperationID: "op_2", Signature: "sig_2", Network: "solana:localnet", Slot: 77, BlockTime: &bt,
		ObservedAt: t0, Success: true, Signers: []chain.Address{addr(1)}, Programs: []chain.Address{addr(8), addr(9)},
		BoundIntentID: "i_2", InputMint: addr(6), OutputMint: addr(7), InputDebited: money.SumOf(1_000_000_000),
		ExecutableInput: money.SumOf(980_000_000), FeeRecipient: addr(4), FeeAccount: addr(5), FeeReceived: money.SumOf(op2Fee),
		OutputReceived: money.SumOf(5_000_000), RequiredOutput: 4_975_000, NetworkFeeLamports: 5000, LamportsSpent: money.SumOf(19_000),
		LamportBalances: true, Checks: []swap.Check{{Name: swap.CheckNetwork, Passed: true, Expected: "solana:localnet", Actual: "solana:localnet"},
			{Name: swap.CheckServiceFee, Passed: false, Expected: "19600000", Actual: "19599999"}}}}
}

// op2Settlement is op_2's settlement, its fee on movement movementID.
func op2Settlement(movementID string) swap.Settlement {
	return swap.Settlement{ID: "sws_2", OperationID: "op_2", IntentID: "i_2", QuoteID: "q_2", Owner: alice, Signature: "sig_2",
		FeeMint: addr(6), FeeDecimals: 9, FeeRecipient: addr(4), FeeAccount: addr(5), ServiceFeeAtomic: 20_000_000,
		FeeReceivedAtomic: op2Fee, ActualInputAtomic: money.MaxAtomic, ActualOutputAtomic: 5_000_000, Slot: 77, ObservedAt: t0,
		MovementID: movementID, CreatedAt: t0}
}

// op2Reconciliation is op_2's reconciliation.
func op2Reconciliation() swap.ReconciliationRecord {
	return swap.ReconciliationRecord{ID: "swr_2", Owner: alice, CreatedAt: t0, Reconciliation: swap.Reconciliation{
		OperationID: "op_2", QuoteID: "q_2", IntentID: "i_2", Signature: "sig_2", Outcome: swap.OutcomeDriftDetected,
		Findings: []swap.Finding{{Rule: swap.RuleOutputAboveBand, Outcome: swap.OutcomeDriftDetected, Expected: "1", Actual: "2"}},
		Evidence: swap.Evidence{QuoteHash: "qh", ExpectedFee: 20_000_000, ActualFee: money.SumOf(op2Fee), FeeDelta: money.SumOf(0)},
		Checks:   op2Verification().Verification.Checks}}
}

// settleOp2 writes op_2's verification, fee movement, settlement and
// reconciliation through ss.
func settleOp2(ctx context.Context, ss swap.SettleStore) error {
	if err := ss.SwapVerificationInsert(ctx, op2Verification()); err != nil {
		return err
	}
	mv, _, err := ledger.New().Post(ctx, ss, feeMovement("op_2", op2Fee))
	if err != nil {
		return err
	}
	if err := ss.SwapSettlementInsert(ctx, op2Settlement(mv.ID)); err != nil {
		return err
	}
	return ss.SwapReconciliationInsert(ctx, op2Reconciliation())
}

// settleRefusals are the calls of swap.SettleStore and ledger.Mover the
// seeded store refuses.
func settleRefusals(t *testing.T) []refusal {
	ctx := context.Background()
	verification := func(id, opID string) swap.VerificationRecord {
		return swap.VerificationRecord{ID: id, Owner: alice, CreatedAt: t0,
			Verification: swap.Verification{OperationID: opID, IntentID: "i_x", Signature: "sig_x"}}
	}
	settlement := func(id, opID, sig string) swap.Settlement {
		s := op2Settlement("")
		s.ID, s.OperationID, s.Signature = id, opID, sig
		return s
	}
	reconciliation := func(id, opID string) swap.ReconciliationRecord {
		return swap.ReconciliationRecord{ID: id, Owner: alice, CreatedAt: t0,
			Reconciliation: swap.Reconciliation{OperationID: opID, Outcome: swap.OutcomeMatch}}
	}
	change := func(name string, decimals int, delta money.Sum) ledger.AccountChange {
		return ledger.AccountChange{AccountSpec: ledger.AccountSpec{Name: name, Decimals: decimals, AllowNegative: ledger.AllowsNegative(name)},
			Delta: delta}
	}
	overdraw, _ := money.SumOf(op2Fee + 1).Neg()
	out := []refusal{
		{"a second verification of an operation", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapVerificationInsert(ctx, verification("swv_9", "op_2"))
		}},
		{"a verification id taken", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapVerificationInsert(ctx, verification("swv_2", "op_1"))
		}},
		{"a second settlement of an operation", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapSettlementInsert(ctx, settlement("sws_9", "op_2", "sig_9"))
		}},
		{"a second settlement of a signature", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapSettlementInsert(ctx, settlement("sws_9", "op_1", "sig_2"))
		}},
		{"a settlement id taken", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapSettlementInsert(ctx, settlement("sws_2", "op_1", "sig_1"))
		}},
		{"a settlement without signature", fault.InvalidInput, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapSettlementInsert(ctx, settlement("sws_9", "op_1", ""))
		}},
		{"a second reconciliation of an operation", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapReconciliationInsert(ctx, reconciliation("swr_9", "op_2"))
		}},
		{"a reconciliation id taken", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().SwapReconciliationInsert(ctx, reconciliation("swr_2", "op_1"))
		}},
		// The ledger.
		{"a fee reference posted again with another amount", fault.Conflict, func(s seeded, tx unit) error {
			_, _, err := ledger.New().Post(ctx, tx.SettleStore(), feeMovement("op_2", op2Fee-1))
			return err
		}},
		{"a movement reference taken", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().LedgerMovementInsert(ctx, ledger.Posted{ID: "mov_new", Scope: alice.Scope(), Ledger: ledger.Rewards,
				Type: ledger.TypeTransfer, Reference: swap.FeeReference("op_2"), CreatedAt: t0}, false)
		}},
		{"a movement id taken", fault.Conflict, func(s seeded, tx unit) error {
			mv, err := tx.SettleStore().LedgerMovementGet(ctx, alice.Scope(), swap.FeeReference("op_2"))
			if err != nil {
				return err
			}
			return tx.SettleStore().LedgerMovementInsert(ctx, ledger.Posted{ID: mv.ID, Scope: alice.Scope(), Ledger: ledger.Financial,
				Type: ledger.TypeTransfer, Reference: "other", CreatedAt: t0}, true)
		}},
		{"a debit below zero, after an account opened", fault.InsufficientCredits, func(s seeded, tx unit) error {
			return tx.SettleStore().LedgerAccountsApply(ctx, alice.Scope(), ledger.Financial,
				[]ledger.AccountChange{change("a:new", 9, money.SumOf(5)), change(feeRecipient, 9, overdraw)}, fault.InsufficientCredits)
		}},
		{"a change in other decimals", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SettleStore().LedgerAccountsApply(ctx, alice.Scope(), ledger.Financial,
				[]ledger.AccountChange{change(feeRecipient, 6, money.SumOf(1))}, fault.InsufficientCredits)
		}},
		{"a missing movement", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SettleStore().LedgerMovementLock(ctx, alice.Scope(), swap.FeeReference("op_1"))
			return err
		}},
		{"another workspace's movement", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SettleStore().LedgerMovementGet(ctx, otherWorkspace.Scope(), swap.FeeReference("op_2"))
			return err
		}},
		{"the other environment's account", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.LedgerAccountGet(ctx, otherEnv.Scope(), ledger.Financial, feeRecipient)
			return err
		}},
		{"another ledger's account", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.LedgerAccountGet(ctx, alice.Scope(), ledger.Rewards, feeRecipient)
			return err
		}},
	}
	// Each record is its owner's: another owner, or an operation without
	// one, reads NOT_FOUND.
	for _, o := range []struct {
		name  string
		owner swap.Owner
		opID  string
	}{{"another user's", otherUser, "op_2"}, {"another workspace's", otherWorkspace, "op_2"}, {"another tenant's", otherTenant, "op_2"},
		{"the other environment's", otherEnv, "op_2"}, {"a missing", alice, "op_1"}} {
		out = append(out,
			refusal{o.name + " verification", fault.NotFound, func(s seeded, tx unit) error {
				_, err := tx.SettleStore().SwapVerification(ctx, o.owner, o.opID)
				return err
			}},
			refusal{o.name + " settlement", fault.NotFound, func(s seeded, tx unit) error {
				_, err := tx.SettleStore().SwapSettlement(ctx, o.owner, o.opID)
				return err
			}},
			refusal{o.name + " reconciliation", fault.NotFound, func(s seeded, tx unit) error {
				_, err := tx.SettleStore().SwapReconciliation(ctx, o.owner, o.opID)
				return err
			}})
	}
	return out
}

// settleSnapshot renders the settlement records and alice's financial
// ledger.
func settleSnapshot(t *testing.T, st *swaptest.Store) []any {
	t.Helper()
	ctx := context.Background()
	var out []any
	for _, id := range []string{"op_1", "op_2"} {
		v, verr := st.SwapVerification(ctx, alice, id)
		s, serr := st.SwapSettlement(ctx, alice, id)
		r, rerr := st.SwapReconciliation(ctx, alice, id)
		out = append(out, v, fault.CodeOf(verr), s, fault.CodeOf(serr), r, fault.CodeOf(rerr))
	}
	ms, err := st.LedgerMovementList(ctx, ledger.ListParams{Scope: alice.Scope(), Limit: 100})
	out = append(out, ms, fault.CodeOf(err))
	for _, name := range []string{revenue, feeRecipient, "a:new"} {
		a, err := st.LedgerAccountGet(ctx, alice.Scope(), ledger.Financial, name)
		out = append(out, a, fault.CodeOf(err))
	}
	sums, err := st.LedgerPostingSums(ctx, alice.Scope(), ledger.Financial)
	return append(out, sums, fault.CodeOf(err))
}

// TestSettlementRecordsReadBack: verifications, settlements and
// reconciliations read back whole, the largest atomic amount and a
// missing block time included; nothing a caller holds, passed in or got
// back, aliases the store; a signature names the intent of the operation
// it is bound to, whoever owns it.
func TestSettlementRecordsReadBack(t *testing.T) {
	ctx := context.Background()
	s := seed(t)
	mv, err := s.st.LedgerMovementGet(ctx, alice.Scope(), swap.FeeReference("op_2"))
	if err != nil {
		t.Fatal(err)
	}
	ss := s.st.SettleStore()
	v, err := ss.SwapVerification(ctx, alice, "op_2")
	if d := cmp.Diff(op2Verification(), v, sums); err != nil || d != "" {
		t.Fatalf("verification (%v), -want +got:\n%s", err, d)
	}
	set, err := ss.SwapSettlement(ctx, alice, "op_2")
	if d := cmp.Diff(op2Settlement(mv.ID), set); err != nil || d != "" {
		t.Fatalf("settlement (%v), -want +got:\n%s", err, d)
	}
	r, err := ss.SwapReconciliation(ctx, alice, "op_2")
	if d := cmp.Diff(op2Reconciliation(), r, sums); err != nil || d != "" {
		t.Fatalf("reconciliation (%v), -want +got:\n%s", err, d)
	}

	// What a caller got back is its own.
	*v.Verification.BlockTime = t0.Add(time.Hour)
	v.Verification.Signers[0], v.Verification.Checks[0].Passed = addr(9), false
	r.Reconciliation.Findings[0].Actual = "changed"
	if again, _ := ss.SwapVerification(ctx, alice, "op_2"); cmp.Diff(op2Verification(), again, sums) != "" {
		t.Fatal("changing a returned verification changed the store")
	}
	if again, _ := ss.SwapReconciliation(ctx, alice, "op_2"); cmp.Diff(op2Reconciliation(), again, sums) != "" {
		t.Fatal("changing a returned reconciliation changed the store")
	}

	// What a caller passed in is its own too; the store's own handle
	// commits each write.
	bt := t0.Add(2 * time.Second)
	in := op2Settlement("")
	in.ID, in.OperationID, in.IntentID, in.QuoteID, in.Signature, in.BlockTime = "sws_1", "op_1", "i_1", "q_1", "sig_1", &bt
	vin := op2Verification()
	vin.ID, vin.Verification.OperationID = "swv_1", "op_1"
	if err := ss.SwapSettlementInsert(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := ss.SwapVerificationInsert(ctx, vin); err != nil {
		t.Fatal(err)
	}
	bt = t0.Add(time.Hour)
	vin.Verification.Checks[1].Actual = "changed"
	got1, err := ss.SwapSettlement(ctx, alice, "op_1")
	if err != nil || got1.BlockTime == nil || !got1.BlockTime.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("settlement of op_1: block time %v, %v", got1.BlockTime, err)
	}
	if gotV, err := ss.SwapVerification(ctx, alice, "op_1"); err != nil || gotV.Verification.Checks[1].Actual != "19599999" {
		t.Fatalf("verification of op_1: %+v, %v", gotV.Verification.Checks, err)
	}

	// Signatures: op_1 binds sig_1 and its intent i_1; another tenant's
	// operation binds sig_3; op_2's sig_2 names no intent.
	o1 := operation("op_1", alice)
	o1.State, o1.IntentID, o1.Signature, o1.Version = swap.StateSubmitted, "i_1", "sig_1", 2
	if err := s.st.SwapOperationUpdate(ctx, o1, 1); err != nil {
		t.Fatal(err)
	}
	o3 := operation("op_3", otherTenant)
	o3.IntentID, o3.Signature = "i_3", "sig_3"
	if err := s.st.SwapOperationInsert(ctx, o3); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sig := range []string{"sig_1", "sig_3", "sig_2", "sig_9", ""} {
		id, err := ss.SwapSignatureIntent(ctx, sig)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%q", id))
	}
	if fmt.Sprint(got) != `["i_1" "i_3" "" "" ""]` {
		t.Fatalf("intents of sig_1, sig_3, sig_2, sig_9 and none: %v", got)
	}
}

// TestLedgerRules runs package ledger's own rules on the store: a fee
// moves once, replays answer the first movement, other content under its
// reference is refused, an account that may not go negative refuses an
// overdraft (and its unit of work leaves nothing), an account keeps its
// decimals, and balances always equal the sums of their postings.
func TestLedgerRules(t *testing.T) {
	ctx := context.Background()
	st := swaptest.NewStore(&clock{t: t0})
	led := ledger.New()
	post := func(m ledger.Movement) (mv ledger.Posted, created bool, err error) {
		err = st.Run(ctx, func(tx swap.Store) error {
			mv, created, err = led.Post(ctx, tx.SettleStore(), m)
			return err
		})
		return mv, created, err
	}
	balance := func(name string) string {
		a, err := led.Balance(ctx, st, alice.Scope(), ledger.Financial, name)
		if err != nil {
			return string(fault.CodeOf(err))
		}
		return fmt.Sprintf("%s v%d neg=%v", a.Balance, a.Version, a.AllowNegative)
	}

	fee, created, err := post(feeMovement("op_1", op2Fee))
	if err != nil || !created || fee.ID == "" || !fee.CreatedAt.Equal(t0) {
		t.Fatalf("the fee: %+v created %v, %v", fee, created, err)
	}
	if got := balance(revenue) + " | " + balance(feeRecipient); got != "-19600000 v1 neg=true | 19600000 v1 neg=false" {
		t.Fatalf("after the fee: %s", got)
	}
	if ev := st.Events(); len(ev) != 1 || ev[0].Type != ledger.EventMovementPosted || ev[0].AggregateID != fee.ID || ev[0].WorkspaceID != "ws_1" {
		t.Fatalf("events: %+v", ev)
	}
	again, created, err := post(feeMovement("op_1", op2Fee))
	if err != nil || created || again.ID != fee.ID {
		t.Fatalf("the fee again: %s created %v, %v", again.ID, created, err)
	}
	if _, _, err := post(feeMovement("op_1", op2Fee+1)); !fault.Is(err, fault.Conflict) {
		t.Fatalf("another fee under the reference: %v, want CONFLICT", err)
	}

	payout := func(ref string, amount money.Atomic, decimals int) ledger.Movement {
		return ledger.Movement{Scope: alice.Scope(), Ledger: ledger.Financial, Type: ledger.TypeTransfer, Reference: ref, Decimals: decimals,
			Postings: []ledger.Posting{{Account: feeRecipient, Direction: ledger.Debit, Amount: amount},
				{Account: "system:payouts", Direction: ledger.Credit, Amount: amount}}}
	}
	if _, _, err := post(payout("payout:1", op2Fee+1, 9)); !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("an overdraft: %v, want INSUFFICIENT_CREDITS", err)
	}
	if _, err := st.LedgerMovementGet(ctx, alice.Scope(), "payout:1"); !fault.Is(err, fault.NotFound) || len(st.Events()) != 1 {
		t.Fatalf("the refused overdraft left its movement (%v) or event (%d events)", err, len(st.Events()))
	}
	if _, _, err := post(payout("payout:1", 600_000, 9)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := post(payout("payout:2", 1, 6)); !fault.Is(err, fault.Conflict) {
		t.Fatalf("a movement in other decimals: %v, want CONFLICT", err)
	}
	if got := balance(feeRecipient) + " | " + balance("system:payouts"); got != "19000000 v2 neg=false | 600000 v1 neg=true" {
		t.Fatalf("after the payout: %s", got)
	}

	page, more, err := led.List(ctx, st, ledger.ListParams{Scope: alice.Scope(), Ledgers: []ledger.Kind{ledger.Financial}, Limit: 1})
	if err != nil || len(page) != 1 || page[0].Reference != "payout:1" || !more {
		t.Fatalf("the newest movement: %+v more %v, %v", page, more, err)
	}
	page, more, err = led.List(ctx, st, ledger.ListParams{Scope: alice.Scope(), Before: page[0].ID, Limit: 10})
	if err != nil || len(page) != 1 || page[0].ID != fee.ID || more || len(page[0].Postings) != 2 {
		t.Fatalf("the page after it: %+v more %v, %v", page, more, err)
	}
	if page, _, err := led.List(ctx, st, ledger.ListParams{Scope: alice.Scope(), ActorUserID: "usr_bob", Limit: 10}); err != nil || len(page) != 0 {
		t.Fatalf("bob's movements: %+v, %v", page, err)
	}
	drift, err := led.Audit(ctx, st, alice.Scope(), ledger.Financial, []string{revenue, feeRecipient, "system:payouts"})
	if err != nil || len(drift) != 0 {
		t.Fatalf("audit: %+v, %v", drift, err)
	}
	if page, _, err := led.List(ctx, st, ledger.ListParams{Scope: otherWorkspace.Scope(), Limit: 10}); err != nil || len(page) != 0 {
		t.Fatalf("another workspace's movements: %+v, %v", page, err)
	}
}

// TestConcurrentLedgerPosts: movements of one account posted from many
// goroutines, each in its own unit of work, all count.
func TestConcurrentLedgerPosts(t *testing.T) {
	ctx := context.Background()
	st := swaptest.NewStore(&clock{t: t0})
	led := ledger.New()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := st.Run(ctx, func(tx swap.Store) error {
					_, _, err := led.Post(ctx, tx.SettleStore(), ledger.Movement{Scope: alice.Scope(), Ledger: ledger.Financial,
						Type: ledger.TypeTransfer, Reference: fmt.Sprintf("tip:%d:%d", w, i), Postings: []ledger.Posting{
							{Account: "system:tips", Direction: ledger.Debit, Amount: 1},
							{Account: "creator:tips", Direction: ledger.Credit, Amount: 1}}})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a reader alongside
		defer wg.Done()
		for range 100 {
			_, _ = st.LedgerAccountGet(ctx, alice.Scope(), ledger.Financial, "creator:tips")
			_, _ = st.LedgerPostingSums(ctx, alice.Scope(), ledger.Financial)
		}
	}()
	wg.Wait()
	a, err := st.LedgerAccountGet(ctx, alice.Scope(), ledger.Financial, "creator:tips")
	if err != nil || a.Balance.Cmp(money.SumOf(writers*each)) != 0 || a.Version != writers*each {
		t.Fatalf("creator:tips: %s v%d (%v), want %d", a.Balance, a.Version, err, writers*each)
	}
	drift, err := led.Audit(ctx, st, alice.Scope(), ledger.Financial, []string{"system:tips", "creator:tips"})
	if err != nil || len(drift) != 0 {
		t.Fatalf("audit: %+v, %v", drift, err)
	}
}
