package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/store"
)

// exerciseLedgerSpread runs the cases of spread balances (ledger.Spread):
// on PostgreSQL a workspace's credits and reserved credits are kept in
// parts that concurrent reservations change side by side. Whatever the
// parts hold, the whole balance can be spent, is never overdrawn, and is
// read exactly. SQLite keeps each balance in one row and must pass the
// same cases.
func exerciseLedgerSpread(t *testing.T, open Opener) {
	t.Run("SpendsTheWholeBalance", func(t *testing.T) { ledgerSpreadSpendAll(t, open) })
	t.Run("ConcurrentReservesAndEnds", func(t *testing.T) { ledgerSpreadConcurrent(t, open) })
	t.Run("ReadsAreExact", func(t *testing.T) { ledgerSpreadReads(t, open) })
}

// ledgerSlotsHolding counts the slots of account that hold a balance.
func ledgerSlotsHolding(t *testing.T, db *store.DB, name string) int {
	t.Helper()
	var n int
	if err := db.Read().IDB().NewRaw(`SELECT COUNT(*) FROM ledger_account_slots WHERE name = ? AND balance <> '0'`, name).
		Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// ledgerSpreadSpendAll spreads a balance over the parts unevenly (reserves
// of several sizes, some released), then reserves all that is left in one
// movement, more than any part holds: it passes, and one more credit does
// not.
func ledgerSpreadSpendAll(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 1000)
	reserve := func(ref string, amount money.Atomic) error {
		return ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
			_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: ref, Amount: amount})
			return err
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() { errs[i] = reserve(fmt.Sprintf("op_%02d", i), money.Atomic(3+i*7)) })
	}
	wg.Wait()
	spent := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("reserve %d: %v", i, err)
		}
		spent += 3 + i*7
	}
	// Releasing two of them puts their credits back on some part.
	for _, i := range []int{4, 9} {
		if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
			_, _, err := svc.Release(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: fmt.Sprintf("op_%02d", i), Amount: money.Atomic(3 + i*7)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		spent -= 3 + i*7
	}
	if db.Dialect() == store.Postgres {
		if n := ledgerSlotsHolding(t, db, ledger.AccountWorkspaceCredits); n < 2 {
			t.Errorf("the credits are held in %d slots, want them spread", n)
		}
	}
	left := 1000 - spent
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != fmt.Sprint(left) {
		t.Fatalf("balance = %s, want %d", got, left)
	}
	if err := reserve("op_all", money.Atomic(left)); err != nil {
		t.Fatalf("reserving the whole balance of %d: %v", left, err)
	}
	if err := reserve("op_more", 1); !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("reserving past the balance: %v, want INSUFFICIENT_CREDITS", err)
	}
	ledgerBalances(t, db, ledgerScope, map[string]string{
		ledger.AccountWorkspaceCredits: "0", ledger.AccountWorkspaceReserved: "1000",
	})
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved, ledger.AccountSystemGrants)
}

// ledgerSpreadConcurrent races reservations of one workspace against the
// ends (settle and release) of earlier operations and against grants: no
// unit fails but for INSUFFICIENT_CREDITS, none overdraws, a reservation
// is refused only when the whole balance could not cover it, and the
// balances are their postings.
func ledgerSpreadConcurrent(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	const old, n, amount, settle = 16, 64, 20, 15
	ledgerGrant(t, db, ledgerScope, "g1", 600)
	in := ledgerCredits
	ledgerReserveOld(t, db, old, amount)
	// 280 left, 320 held; the ends give back 16 x 5 = 80 and grants add
	// 4 x 10 = 40, so 400 credits cover at most 20 of the 64 new
	// reservations of 20. At least 14 pass: while fewer have, at least 20
	// credits are left, so a refusal (the whole balance below 20) cannot
	// happen. The ledger's balances then prove none overdrew.
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range old {
		wg.Go(func() {
			if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				return svc.SettleAndRelease(ctx, tx, in(fmt.Sprintf("op_old_%02d", i), settle), amount-settle)
			}); err != nil {
				t.Errorf("end %d: %v", i, err)
			}
		})
	}
	for i := range 4 {
		wg.Go(func() {
			if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				_, _, err := svc.Grant(ctx, tx, in(fmt.Sprintf("more_%d", i), 10))
				return err
			}); err != nil {
				t.Errorf("grant %d: %v", i, err)
			}
		})
	}
	for i := range n {
		wg.Go(func() {
			errs[i] = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				_, _, err := svc.Reserve(ctx, tx, in(fmt.Sprintf("op_new_%02d", i), amount))
				return err
			})
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !fault.Is(err, fault.InsufficientCredits):
			t.Errorf("reserve %d: %v", i, err)
		}
	}
	if ok < 14 || ok > 20 {
		t.Errorf("%d reservations passed, want 14 to 20", ok)
	}
	credits := 600 + 40 - old*amount + old*(amount-settle) - ok*amount
	ledgerBalances(t, db, ledgerScope, map[string]string{
		ledger.AccountWorkspaceCredits:  fmt.Sprint(credits),
		ledger.AccountWorkspaceReserved: fmt.Sprint(ok * amount),
		ledger.AccountSystemConsumed:    fmt.Sprint(old * settle),
	})
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved, ledger.AccountSystemConsumed, ledger.AccountSystemGrants)
}

// ledgerSpreadReads reads the credit balance while reservations of one
// amount change its parts and rebalance them: every read is the grant less
// a whole number of reservations, never a balance caught between a part
// and the rest.
func ledgerSpreadReads(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	const start, n, amount = 700, 40, 25 // covers 28
	ledgerGrant(t, db, ledgerScope, "g1", start)
	done := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				a, err := db.Read().LedgerAccountGet(context.Background(), ledgerScope, ledger.Credits, ledger.AccountWorkspaceCredits)
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				b, err := money.ParseSum(a.Balance.String())
				if err != nil {
					t.Error(err)
					return
				}
				spent, _ := money.SumOf(start).Sub(b)
				var k int
				if _, err := fmt.Sscan(spent.String(), &k); err != nil || k < 0 || k%amount != 0 || k > start {
					t.Errorf("read a balance of %s: not %d less whole reservations of %d", a.Balance, start, amount)
					return
				}
			}
		})
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: fmt.Sprintf("op_%02d", i), Amount: amount})
				return err
			})
			if err != nil && !fault.Is(err, fault.InsufficientCredits) {
				t.Errorf("reserve %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	ledgerBalances(t, db, ledgerScope, map[string]string{
		ledger.AccountWorkspaceCredits: fmt.Sprint(start % amount), ledger.AccountWorkspaceReserved: fmt.Sprint(start / amount * amount),
	})
}
