package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/store"
)

// exerciseLedger runs the contract cases of the ledger adapter: exactly-once
// movements by reference, non-negative balances under concurrency, balances
// that equal their postings summed in Go, 128-bit balances, scoping and
// pagination.
func exerciseLedger(t *testing.T, open Opener) {
	t.Run("ReplayIsOneMovement", func(t *testing.T) { ledgerReplay(t, open) })
	t.Run("ConflictingReplay", func(t *testing.T) { ledgerConflict(t, open) })
	t.Run("NonNegative", func(t *testing.T) { ledgerNonNegative(t, open) })
	t.Run("ReserveSettleRelease", func(t *testing.T) { ledgerLifecycle(t, open) })
	t.Run("ReservationBound", func(t *testing.T) { ledgerReservationBound(t, open) })
	t.Run("SettleReleaseRace", func(t *testing.T) { ledgerSettleReleaseRace(t, open) })
	t.Run("OwnReservationAccount", func(t *testing.T) { ledgerOwnReservationAccount(t, open) })
	t.Run("EndsBesideReservations", func(t *testing.T) { ledgerEndsBesideReservations(t, open) })
	t.Run("ConcurrentDebits", func(t *testing.T) { ledgerConcurrentDebits(t, open) })
	t.Run("ConcurrentReplays", func(t *testing.T) { ledgerConcurrentReplays(t, open) })
	t.Run("WideBalances", func(t *testing.T) { ledgerWide(t, open) })
	t.Run("StaleUpdateFails", func(t *testing.T) { ledgerStaleUpdate(t, open) })
	t.Run("OtherDecimals", func(t *testing.T) { ledgerOtherDecimals(t, open) })
	t.Run("FreshReferenceTaken", func(t *testing.T) { ledgerFreshTaken(t, open) })
	t.Run("BalanceOverflow", func(t *testing.T) { ledgerOverflow(t, open) })
	t.Run("Scoping", func(t *testing.T) { ledgerScoping(t, open) })
	t.Run("Pagination", func(t *testing.T) { ledgerPagination(t, open) })
}

var ledgerScope = ledger.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}

// ledgerDo runs fn in one unit of work.
func ledgerDo(db *store.DB, fn func(ctx context.Context, tx *store.Tx) error) error {
	ctx := context.Background()
	return db.InTx(ctx, func(tx *store.Tx) error { return fn(ctx, tx) })
}

// ledgerGrant grants amount credits under ref and fails t on error.
func ledgerGrant(t *testing.T, db *store.DB, sc ledger.Scope, ref string, amount money.Atomic) {
	t.Helper()
	svc := ledger.New()
	if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Grant(ctx, tx, ledger.CreditsInput{Scope: sc, Ref: ref, Amount: amount, Actor: ledger.Actor{UserID: "usr_1"}})
		return err
	}); err != nil {
		t.Fatalf("grant %s: %v", ref, err)
	}
}

// ledgerBalance returns an account's balance as a string ("" when missing).
func ledgerBalance(t *testing.T, db *store.DB, sc ledger.Scope, name string) string {
	t.Helper()
	a, err := ledger.New().Balance(context.Background(), db.Read(), sc, ledger.Credits, name)
	if fault.Is(err, fault.NotFound) {
		return ""
	}
	if err != nil {
		t.Fatalf("balance %s: %v", name, err)
	}
	return a.Balance.String()
}

// ledgerBalances checks the balance of every account in want ("" for an
// account that was never opened).
func ledgerBalances(t *testing.T, db *store.DB, sc ledger.Scope, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got := ledgerBalance(t, db, sc, name); got != w {
			t.Errorf("%s = %q, want %q", name, got, w)
		}
	}
}

// ledgerAudit checks that every given account's balance equals its postings
// summed in Go, and that the ledger's balances sum to zero (double entry).
func ledgerAudit(t *testing.T, db *store.DB, sc ledger.Scope, accounts ...string) {
	t.Helper()
	ctx := context.Background()
	drift, err := ledger.New().Audit(ctx, db.Read(), sc, ledger.Credits, accounts)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	if len(drift) != 0 {
		t.Errorf("drift: %+v", drift)
	}
	sums, err := db.Read().LedgerPostingSums(ctx, sc, ledger.Credits)
	if err != nil {
		t.Fatal(err)
	}
	var total money.Sum
	for _, s := range sums {
		if total, err = total.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	if !total.IsZero() {
		t.Errorf("postings sum to %s, want 0", total)
	}
}

func ledgerEvents(t *testing.T, db *store.DB) int {
	t.Helper()
	evs, err := db.Read().OutboxList(context.Background(), outbox.ListParams{Environment: string(ledgerScope.Environment), Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == ledger.EventMovementPosted {
			n++
		}
	}
	return n
}

func ledgerReplay(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	in := ledger.CreditsInput{Scope: ledgerScope, Ref: "ws_1:2026-01", Amount: 500, Actor: ledger.Actor{UserID: "usr_1", KeyID: "key_1"}}
	var first ledger.Posted
	for i := range 3 {
		if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
			p, created, err := svc.Grant(ctx, tx, in)
			if err != nil {
				return err
			}
			if created != (i == 0) {
				t.Errorf("attempt %d: created = %v", i, created)
			}
			if i == 0 {
				first = p
			} else if p.ID != first.ID || p.Reference != "grant:ws_1:2026-01" || p.Actor != in.Actor {
				t.Errorf("replay = %+v, want %+v", p, first)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != "500" {
		t.Errorf("balance = %s, want 500", got)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountSystemGrants); got != "-500" {
		t.Errorf("grants = %s, want -500", got)
	}
	if n := ledgerEvents(t, db); n != 1 {
		t.Errorf("%d movement events, want 1", n)
	}
	got, err := db.Read().LedgerMovementGet(context.Background(), ledgerScope, "grant:ws_1:2026-01")
	if err != nil {
		t.Fatal(err)
	}
	want := []ledger.Posting{{Account: ledger.AccountSystemGrants, Direction: ledger.Debit, Amount: 500},
		{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Credit, Amount: 500}}
	if got.ID != first.ID || !slices.Equal(got.Postings, want) || got.Decimals != 0 || got.Type != ledger.TypeGrant ||
		got.Ledger != ledger.Credits || !got.CreatedAt.Equal(Epoch) {
		t.Errorf("stored = %+v", got)
	}
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountSystemGrants)
}

func ledgerConflict(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 100)
	cases := []struct {
		name string
		m    ledger.Movement
	}{
		{"other amount", ledger.Movement{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeGrant, Reference: "grant:g1",
			Postings: []ledger.Posting{{Account: ledger.AccountSystemGrants, Direction: ledger.Debit, Amount: 101},
				{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Credit, Amount: 101}}}},
		{"other type", ledger.Movement{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer, Reference: "grant:g1",
			Postings: []ledger.Posting{{Account: ledger.AccountSystemGrants, Direction: ledger.Debit, Amount: 100},
				{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Credit, Amount: 100}}}},
		{"other accounts", ledger.Movement{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeGrant, Reference: "grant:g1",
			Postings: []ledger.Posting{{Account: "system:promo", Direction: ledger.Debit, Amount: 100},
				{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Credit, Amount: 100}}}},
		{"other ledger", ledger.Movement{Scope: ledgerScope, Ledger: ledger.Rewards, Type: ledger.TypeGrant, Reference: "grant:g1",
			Postings: []ledger.Posting{{Account: ledger.AccountSystemGrants, Direction: ledger.Debit, Amount: 100},
				{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Credit, Amount: 100}}}},
	}
	for _, c := range cases {
		err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error { _, _, err := svc.Post(ctx, tx, c.m); return err })
		if !fault.Is(err, fault.Conflict) {
			t.Errorf("%s: err = %v, want CONFLICT", c.name, err)
		}
	}
	// Postings in another order are the same movement.
	err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, created, err := svc.Post(ctx, tx, ledger.Movement{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeGrant,
			Reference: "grant:g1", Postings: []ledger.Posting{{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Credit, Amount: 100},
				{Account: ledger.AccountSystemGrants, Direction: ledger.Debit, Amount: 100}}})
		if err == nil && created {
			t.Error("reordered replay created a movement")
		}
		return err
	})
	if err != nil {
		t.Errorf("reordered replay: %v", err)
	}
	// Malformed movements never reach the tables.
	bad := []ledger.Movement{
		{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer, Reference: "x",
			Postings: []ledger.Posting{{Account: "a", Direction: ledger.Debit, Amount: 1}, {Account: "b", Direction: ledger.Credit, Amount: 2}}},
		{Scope: ledgerScope, Ledger: "points", Type: ledger.TypeTransfer, Reference: "x",
			Postings: []ledger.Posting{{Account: "a", Direction: ledger.Debit, Amount: 1}, {Account: "b", Direction: ledger.Credit, Amount: 1}}},
		{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer, Reference: "x",
			Postings: []ledger.Posting{{Account: "a", Direction: ledger.Debit, Amount: 0}, {Account: "b", Direction: ledger.Credit, Amount: 0}}},
		{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer, Reference: "",
			Postings: []ledger.Posting{{Account: "a", Direction: ledger.Debit, Amount: 1}, {Account: "b", Direction: ledger.Credit, Amount: 1}}},
		{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer, Reference: "x",
			Postings: []ledger.Posting{{Account: "a", Direction: ledger.Debit, Amount: 1}, {Account: "a", Direction: ledger.Credit, Amount: 1}}},
		{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer, Reference: "x",
			Postings: []ledger.Posting{{Account: "a", Direction: ledger.Debit, Amount: money.MaxAtomic}, {Account: "b", Direction: ledger.Debit, Amount: 1},
				{Account: "c", Direction: ledger.Credit, Amount: money.MaxAtomic}}},
	}
	for i, m := range bad {
		err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error { _, _, err := svc.Post(ctx, tx, m); return err })
		if c := fault.CodeOf(err); c != fault.InvalidInput && c != fault.InvalidAmount {
			t.Errorf("bad movement %d: err = %v", i, err)
		}
	}
	if n := ledgerEvents(t, db); n != 1 {
		t.Errorf("%d movement events, want 1", n)
	}
}

func ledgerNonNegative(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 100)
	err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_1", Amount: 101})
		return err
	})
	if !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("overdraw err = %v, want INSUFFICIENT_CREDITS", err)
	}
	if _, _, d := fault.Public(err); d["account"] != ledger.AccountWorkspaceCredits {
		t.Errorf("details = %v", d)
	}
	// The caller's own code.
	err = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Post(ctx, tx, ledger.Movement{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer,
			Reference: "t1", InsufficientCode: fault.InsufficientBalance, Postings: []ledger.Posting{
				{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Debit, Amount: 1000},
				{Account: "workspace:other", Direction: ledger.Credit, Amount: 1000}}})
		return err
	})
	if !fault.Is(err, fault.InsufficientBalance) {
		t.Fatalf("custom code err = %v", err)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != "100" {
		t.Errorf("balance = %s, want 100", got)
	}
	// The exact balance can be spent; then nothing more.
	if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_2", Amount: 100})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != "0" {
		t.Errorf("balance = %s, want 0", got)
	}
	if n := ledgerEvents(t, db); n != 2 {
		t.Errorf("%d movement events, want 2", n)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceReserved); got != "100" {
		t.Errorf("reserved = %s, want 100", got)
	}
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountSystemGrants, ledger.AccountWorkspaceReserved)
}

func ledgerLifecycle(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 1000)
	steps := []struct {
		name    string
		runFunc func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error)
	}{
		{"reserve", func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_1", Amount: 300})
		}},
		{"settle", func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Settle(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_1", Amount: 180})
		}},
		{"release", func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Release(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_1", Amount: 120})
		}},
	}
	for _, s := range steps {
		for attempt := range 2 { // each step retried: it happens once
			if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				_, created, err := s.runFunc(ctx, tx)
				if err == nil && created != (attempt == 0) {
					t.Errorf("%s attempt %d: created = %v", s.name, attempt, created)
				}
				return err
			}); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
	}
	ledgerBalances(t, db, ledgerScope, map[string]string{
		ledger.AccountWorkspaceCredits: "820", ledger.AccountWorkspaceReserved: "0", ledger.AccountSystemConsumed: "180", ledger.AccountSystemGrants: "-1000",
	})
	// Settling past the reservation is refused.
	err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Settle(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_2", Amount: 1})
		return err
	})
	if !fault.Is(err, fault.InsufficientCredits) {
		t.Errorf("settle without reservation: %v", err)
	}
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved, ledger.AccountSystemConsumed, ledger.AccountSystemGrants)
}

// ledgerReservationBound holds two operations' reservations on the one
// reserved account: neither operation's settle and release may spend past
// its own reservation, although the account would cover it.
func ledgerReservationBound(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 1000)
	do := func(fn func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error)) error {
		return ledgerDo(db, func(ctx context.Context, tx *store.Tx) error { _, _, err := fn(ctx, tx); return err })
	}
	in := func(ref string, amount money.Atomic) ledger.CreditsInput {
		return ledger.CreditsInput{Scope: ledgerScope, Ref: ref, Amount: amount}
	}
	for _, r := range []struct {
		ref    string
		amount money.Atomic
	}{{"op_a", 100}, {"op_b", 300}} {
		if err := do(func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Reserve(ctx, tx, in(r.ref, r.amount))
		}); err != nil {
			t.Fatal(err)
		}
	}
	// op_a reserved 100: settling 101 is refused though 400 are held.
	err := do(func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
		return svc.Settle(ctx, tx, in("op_a", 101))
	})
	if !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("settle past the reservation: %v", err)
	}
	if _, _, d := fault.Public(err); d["account"] != ledger.AccountWorkspaceReserved {
		t.Errorf("details = %v", d)
	}
	if err := do(func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
		return svc.Settle(ctx, tx, in("op_a", 60))
	}); err != nil {
		t.Fatal(err)
	}
	// 40 is left of op_a: releasing 41 is refused, 40 is not, and a replay
	// of either is still the same movement.
	err = do(func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
		return svc.Release(ctx, tx, in("op_a", 41))
	})
	if !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("release past the rest: %v", err)
	}
	for range 2 {
		if err := do(func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Release(ctx, tx, in("op_a", 40))
		}); err != nil {
			t.Fatal(err)
		}
		if err := do(func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Settle(ctx, tx, in("op_a", 60))
		}); err != nil {
			t.Fatal(err)
		}
	}
	ledgerBalances(t, db, ledgerScope, map[string]string{
		ledger.AccountWorkspaceCredits: "640", ledger.AccountWorkspaceReserved: "300", ledger.AccountSystemConsumed: "60",
	})
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved, ledger.AccountSystemConsumed, ledger.AccountSystemGrants)
}

// ledgerSettleReleaseRace races a settle and a release of one operation,
// each taking all of its reservation, many times: exactly one of each pair
// posts, and the reserved account keeps the other operations' holds.
func ledgerSettleReleaseRace(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	const rounds, amount = 20, 50
	ledgerGrant(t, db, ledgerScope, "g1", 10_000)
	// A hold of another operation, which a lost check would spend.
	if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_other", Amount: 1000})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	settled := 0
	for r := range rounds {
		ref := fmt.Sprintf("op_%02d", r)
		in := ledger.CreditsInput{Scope: ledgerScope, Ref: ref, Amount: amount}
		if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error { _, _, err := svc.Reserve(ctx, tx, in); return err }); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var serr, rerr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			serr = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error { _, _, err := svc.Settle(ctx, tx, in); return err })
		}()
		go func() {
			defer wg.Done()
			rerr = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error { _, _, err := svc.Release(ctx, tx, in); return err })
		}()
		wg.Wait()
		if (serr == nil) == (rerr == nil) {
			t.Fatalf("round %d: settle err %v, release err %v; want exactly one to post", r, serr, rerr)
		}
		for _, err := range []error{serr, rerr} {
			if err != nil && !fault.Is(err, fault.InsufficientCredits) {
				t.Fatalf("round %d: %v", r, err)
			}
		}
		if serr == nil {
			settled++
		}
	}
	want := map[string]string{
		ledger.AccountWorkspaceReserved: "1000",
		ledger.AccountSystemConsumed:    "", // opened by the first settle
		ledger.AccountWorkspaceCredits:  fmt.Sprint(10_000 - 1000 - settled*amount),
	}
	audited := []string{ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved, ledger.AccountSystemGrants}
	if settled > 0 {
		want[ledger.AccountSystemConsumed] = fmt.Sprint(settled * amount)
		audited = append(audited, ledger.AccountSystemConsumed)
	}
	ledgerBalances(t, db, ledgerScope, want)
	ledgerAudit(t, db, ledgerScope, audited...)
}

// ledgerCredits is a credit movement of amount a under reference ref in
// ledgerScope.
func ledgerCredits(ref string, a money.Atomic) ledger.CreditsInput {
	return ledger.CreditsInput{Scope: ledgerScope, Ref: ref, Amount: a}
}

// ledgerReserveOld reserves amount for each of n operations, op_old_00
// on, one unit of work each.
func ledgerReserveOld(t *testing.T, db *store.DB, n int, amount money.Atomic) {
	t.Helper()
	svc := ledger.New()
	for i := range n {
		if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
			_, _, err := svc.Reserve(ctx, tx, ledgerCredits(fmt.Sprintf("op_old_%02d", i), amount))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// ledgerEndsBesideReservations ends operations (a partial settle and a
// release of the rest, in one unit of work each) while new operations
// reserve in the same workspace: every unit succeeds (none waits on
// another in a cycle) and the balances add up.
func ledgerEndsBesideReservations(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	const n, amount, settle = 24, 10, 7
	ledgerGrant(t, db, ledgerScope, "g1", 100_000)
	in := ledgerCredits
	ledgerReserveOld(t, db, n, amount)
	var wg sync.WaitGroup
	errs := make([]error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs[i] = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				return svc.SettleAndRelease(ctx, tx, in(fmt.Sprintf("op_old_%02d", i), settle), amount-settle)
			})
		}()
		go func() {
			defer wg.Done()
			errs[n+i] = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				_, _, err := svc.Reserve(ctx, tx, in(fmt.Sprintf("op_new_%02d", i), amount))
				return err
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("unit %d: %v", i, err)
		}
	}
	// Ending again is a replay: nothing moves.
	for i := range n {
		if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
			return svc.SettleAndRelease(ctx, tx, in(fmt.Sprintf("op_old_%02d", i), settle), amount-settle)
		}); err != nil {
			t.Errorf("replay %d: %v", i, err)
		}
	}
	ledgerBalances(t, db, ledgerScope, map[string]string{
		ledger.AccountWorkspaceCredits:  fmt.Sprint(100_000 - n*amount - n*settle),
		ledger.AccountWorkspaceReserved: fmt.Sprint(n * amount),
		ledger.AccountSystemConsumed:    fmt.Sprint(n * settle),
	})
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved, ledger.AccountSystemConsumed, ledger.AccountSystemGrants)
}

// ledgerOwnReservationAccount settles and releases a reservation held on
// an operation's own account, as reservations were written before the
// workspace's reserved account: both spend from that account.
func ledgerOwnReservationAccount(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 1000)
	const own = "reserved:op_old"
	steps := []func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error){
		func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Post(ctx, tx, ledger.Movement{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeReserve,
				Reference: "reserve:op_old", Postings: []ledger.Posting{
					{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Debit, Amount: 200},
					{Account: own, Direction: ledger.Credit, Amount: 200}}})
		},
		func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Settle(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_old", Amount: 150})
		},
		func(ctx context.Context, tx *store.Tx) (ledger.Posted, bool, error) {
			return svc.Release(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_old", Amount: 50})
		},
	}
	for i, fn := range steps {
		if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error { _, _, err := fn(ctx, tx); return err }); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	ledgerBalances(t, db, ledgerScope, map[string]string{
		ledger.AccountWorkspaceCredits: "850", own: "0", ledger.AccountSystemConsumed: "150", ledger.AccountWorkspaceReserved: "",
	})
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, own, ledger.AccountSystemConsumed, ledger.AccountSystemGrants)
}

// ledgerConcurrentDebits races 50 reservations against a balance that covers
// only some: the balance never goes negative, and the successes account for
// exactly what left it.
func ledgerConcurrentDebits(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	const n, amount, start = 50, 30, 1000 // covers 33
	ledgerGrant(t, db, ledgerScope, "g1", start)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: fmt.Sprintf("op_%02d", i), Amount: amount})
				return err
			})
		}()
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
	end, err := money.ParseSum(ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits))
	if err != nil {
		t.Fatal(err)
	}
	spent, _ := money.SumOf(start).Sub(end)
	if end.Negative() || spent.Cmp(money.SumOf(money.Atomic(ok*amount))) != 0 {
		t.Errorf("%d successes of %d, end balance %s", ok, amount, end)
	}
	if ok != start/amount {
		t.Errorf("%d successes, want %d (every failure saw a balance below the amount)", ok, start/amount)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceReserved); got != fmt.Sprint(ok*amount) {
		t.Errorf("reserved = %s, want %d", got, ok*amount)
	}
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceReserved, ledger.AccountWorkspaceCredits, ledger.AccountSystemGrants)
}

// ledgerConcurrentReplays posts one reference from 20 goroutines: one
// movement, one event, every answer the same movement.
func ledgerConcurrentReplays(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 1000)
	const n = 20
	var wg sync.WaitGroup
	ids := make([]string, n)
	created := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
				p, c, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_same", Amount: 70})
				ids[i], created[i] = p.ID, c
				return err
			})
		}()
	}
	wg.Wait()
	nc := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("replay %d: %v", i, errs[i])
		}
		if created[i] {
			nc++
		}
		if ids[i] != ids[0] {
			t.Errorf("replay %d got movement %s, want %s", i, ids[i], ids[0])
		}
	}
	if nc != 1 {
		t.Errorf("%d posts created the movement, want 1", nc)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != "930" {
		t.Errorf("balance = %s, want 930", got)
	}
	if n := ledgerEvents(t, db); n != 2 {
		t.Errorf("%d movement events, want 2", n)
	}
}

// ledgerWide stores balances past 64 bits: two grants of the largest atomic
// amount.
func ledgerWide(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ledgerGrant(t, db, ledgerScope, "g1", money.MaxAtomic)
	ledgerGrant(t, db, ledgerScope, "g2", money.MaxAtomic)
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != "36893488147419103230" {
		t.Errorf("balance = %s", got)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountSystemGrants); got != "-36893488147419103230" {
		t.Errorf("grants = %s", got)
	}
	ledgerAudit(t, db, ledgerScope, ledger.AccountWorkspaceCredits, ledger.AccountSystemGrants)
}

// ledgerStaleUpdate writes accounts at a version other than the one their
// lock read: the update fails as a conflict and no balance changes, even
// when only one of the accounts is stale.
func ledgerStaleUpdate(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ledgerGrant(t, db, ledgerScope, "g1", 100)
	specs := []ledger.AccountSpec{{Name: ledger.AccountSystemGrants, AllowNegative: true}, {Name: ledger.AccountWorkspaceCredits}}
	err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		accounts, err := tx.LedgerAccountsLock(ctx, ledgerScope, ledger.Credits, specs)
		if err != nil {
			return err
		}
		for i := range accounts {
			accounts[i].Balance = money.SumOf(5)
			accounts[i].Version++
		}
		accounts[1].Version++ // skips a version: stale
		return tx.LedgerAccountsUpdate(ctx, accounts)
	})
	if !fault.Is(err, fault.Conflict) {
		t.Fatalf("stale update: %v, want CONFLICT", err)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != "100" {
		t.Errorf("balance after a failed update = %s, want 100", got)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountSystemGrants); got != "-100" {
		t.Errorf("grants after a failed update = %s, want -100", got)
	}
}

// ledgerOtherDecimals posts to an account in other decimals than it was
// opened with: CONFLICT naming the account, and no balance changes.
func ledgerOtherDecimals(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ledgerGrant(t, db, ledgerScope, "g1", 100)
	err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := ledger.New().Post(ctx, tx, ledger.Movement{Scope: ledgerScope, Ledger: ledger.Credits, Type: ledger.TypeTransfer,
			Reference: "t-decimals", Decimals: 2, Postings: []ledger.Posting{
				{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Debit, Amount: 10},
				{Account: "workspace:other", Direction: ledger.Credit, Amount: 10}}})
		return err
	})
	if !fault.Is(err, fault.Conflict) {
		t.Fatalf("post in other decimals: %v, want CONFLICT", err)
	}
	if _, _, d := fault.Public(err); d["account"] != ledger.AccountWorkspaceCredits {
		t.Errorf("details = %v, want the account", d)
	}
	ledgerBalances(t, db, ledgerScope, map[string]string{ledger.AccountWorkspaceCredits: "100", "workspace:other": ""})
	if _, err := db.Read().LedgerMovementGet(context.Background(), ledgerScope, "t-decimals"); !fault.Is(err, fault.NotFound) {
		t.Errorf("the refused movement: %v, want NOT_FOUND", err)
	}
}

// ledgerFreshTaken posts a Fresh movement whose reference was posted
// before: the unit of work fails with CONFLICT (no replay), and neither
// balances nor events change.
func ledgerFreshTaken(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g1", 100)
	reserve := func(fresh bool) (bool, error) {
		var created bool
		err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
			var err error
			_, created, err = svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "op_1", Amount: 10, Fresh: fresh})
			return err
		})
		return created, err
	}
	if created, err := reserve(true); err != nil || !created {
		t.Fatalf("first fresh reserve: created=%v, %v", created, err)
	}
	if _, err := reserve(true); !fault.Is(err, fault.Conflict) {
		t.Fatalf("fresh reserve of a taken reference: %v, want CONFLICT", err)
	}
	// Without Fresh the same reference is the replay of the movement.
	if created, err := reserve(false); err != nil || created {
		t.Fatalf("replayed reserve: created=%v, %v; want the earlier movement", created, err)
	}
	ledgerBalances(t, db, ledgerScope, map[string]string{ledger.AccountWorkspaceCredits: "90", ledger.AccountWorkspaceReserved: "10"})
	if n := ledgerEvents(t, db); n != 2 {
		t.Errorf("%d movement events, want 2 (grant and one reserve)", n)
	}
}

// ledgerOverflow takes a balance to the edge of 128 bits and past it: the
// movement that would cross is INVALID_AMOUNT (reason overflow), and the
// balance stays as it was.
func ledgerOverflow(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ledgerGrant(t, db, ledgerScope, "g1", 1)
	const edge = "170141183460469231731687303715884105726" // 2^127 - 2
	if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.IDB().ExecContext(ctx, `UPDATE ledger_accounts SET balance = ? WHERE name = ?`, edge, ledger.AccountWorkspaceCredits)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ledgerGrant(t, db, ledgerScope, "g2", 1) // 2^127 - 1, the largest balance
	err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: "g3", Amount: 1})
		return err
	})
	if !fault.Is(err, fault.InvalidAmount) {
		t.Fatalf("grant past 128 bits: %v, want INVALID_AMOUNT", err)
	}
	if _, _, d := fault.Public(err); d["reason"] != money.ReasonOverflow {
		t.Errorf("details = %v, want reason overflow", d)
	}
	if got := ledgerBalance(t, db, ledgerScope, ledger.AccountWorkspaceCredits); got != "170141183460469231731687303715884105727" {
		t.Errorf("balance = %s, want 2^127 - 1", got)
	}
}

func ledgerScoping(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	svc := ledger.New()
	live := ledgerScope
	live.Environment = access.Live
	other := ledgerScope
	other.WorkspaceID = "ws_2"
	ledgerGrant(t, db, ledgerScope, "g1", 100)
	ledgerGrant(t, db, live, "g1", 7) // the same reference in another environment is its own movement
	for _, c := range []struct {
		sc   ledger.Scope
		want string
		n    int
	}{{ledgerScope, "100", 1}, {live, "7", 1}, {other, "", 0}} {
		if got := ledgerBalance(t, db, c.sc, ledger.AccountWorkspaceCredits); got != c.want {
			t.Errorf("%+v: balance %q, want %q", c.sc, got, c.want)
		}
		ms, _, err := svc.List(context.Background(), db.Read(), ledger.ListParams{Scope: c.sc, Limit: 10})
		if err != nil || len(ms) != c.n {
			t.Errorf("%+v: %d movements, %v; want %d", c.sc, len(ms), err, c.n)
		}
		for _, m := range ms {
			if m.Scope != c.sc {
				t.Errorf("movement of %+v listed in %+v", m.Scope, c.sc)
			}
		}
	}
	// A live debit cannot spend test credits.
	err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: live, Ref: "op_1", Amount: 8})
		return err
	})
	if !fault.Is(err, fault.InsufficientCredits) {
		t.Errorf("live overdraw: %v", err)
	}
}

func ledgerPagination(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	svc := ledger.New()
	ledgerGrant(t, db, ledgerScope, "g0", 1000)
	for i := range 7 {
		clock.Advance(time.Millisecond) // identifiers sort by time across units of work
		actor := ledger.Actor{UserID: "usr_1"}
		if i%2 == 1 {
			actor = ledger.Actor{UserID: "usr_2", KeyID: "key_2"}
		}
		if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
			_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: ledgerScope, Ref: fmt.Sprintf("op_%d", i), Amount: 10, Actor: actor})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// A movement of another ledger is filtered out by Ledgers.
	clock.Advance(time.Millisecond)
	if err := ledgerDo(db, func(ctx context.Context, tx *store.Tx) error {
		_, _, err := svc.Post(ctx, tx, ledger.Movement{Scope: ledgerScope, Ledger: ledger.Rewards, Type: ledger.TypeTransfer,
			Reference: "fund:1", Decimals: 9, Actor: ledger.Actor{UserID: "usr_1"}, Postings: []ledger.Posting{
				{Account: "system:treasury", Direction: ledger.Debit, Amount: 5_000_000_000},
				{Account: "pool:challenge_1", Direction: ledger.Credit, Amount: 5_000_000_000}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	collect := func(p ledger.ListParams) []ledger.Posted {
		var all []ledger.Posted
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("pagination does not end")
			}
			ms, more, err := svc.List(context.Background(), db.Read(), p)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) > p.Limit || (more && len(ms) != p.Limit) {
				t.Fatalf("page of %d (limit %d, more %v)", len(ms), p.Limit, more)
			}
			all = append(all, ms...)
			if !more {
				return all
			}
			p.Before = ms[len(ms)-1].ID
		}
	}
	all := collect(ledger.ListParams{Scope: ledgerScope, Ledgers: []ledger.Kind{ledger.Credits}, Limit: 3})
	if len(all) != 8 {
		t.Fatalf("%d movements, want 8", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Errorf("order: %s after %s", all[i].ID, all[i-1].ID)
		}
	}
	for _, m := range all {
		if m.Ledger != ledger.Credits || len(m.Postings) != 2 {
			t.Errorf("movement %+v", m)
		}
	}
	mine := collect(ledger.ListParams{Scope: ledgerScope, ActorUserID: "usr_2", Limit: 2})
	if len(mine) != 3 {
		t.Errorf("%d movements of usr_2, want 3", len(mine))
	}
	for _, m := range mine {
		if m.Actor != (ledger.Actor{UserID: "usr_2", KeyID: "key_2"}) {
			t.Errorf("actor = %+v", m.Actor)
		}
	}
	everything := collect(ledger.ListParams{Scope: ledgerScope, Limit: 100})
	if len(everything) != 9 || everything[0].Ledger != ledger.Rewards || everything[0].Decimals != 9 ||
		everything[0].Postings[0].Amount != 5_000_000_000 {
		t.Errorf("all ledgers: %d movements, newest %+v", len(everything), everything[0])
	}
}
