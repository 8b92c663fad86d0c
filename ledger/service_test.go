package ledger_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
)

var (
	ctx = context.Background()
	ws1 = ledger.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
)

// detail returns details[key] of err's public form.
func detail(err error, key string) any {
	_, _, d := fault.Public(err)
	return d[key]
}

// TestApplyChangesRule: the balance rule every store keeps. Deltas add up
// and count a version each; only system accounts go below zero, a
// customer balance may reach zero exactly; an account keeps its decimals;
// a balance past 128 bits is refused.
func TestApplyChangesRule(t *testing.T) {
	sum := func(s string) money.Sum {
		v, err := money.ParseSum(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	change := func(name string, delta string) ledger.AccountChange {
		return ledger.AccountChange{AccountSpec: ledger.AccountSpec{Name: name, AllowNegative: ledger.AllowsNegative(name)}, Delta: sum(delta)}
	}
	accounts := []ledger.Account{
		{Name: "system:grants", AllowNegative: true, Balance: sum("-100"), Version: 3},
		{Name: "workspace:credits", Balance: sum("100"), Version: 3},
	}
	if err := ledger.ApplyChanges(accounts, []ledger.AccountChange{change("system:grants", "-50"), change("workspace:credits", "-100")}, fault.InsufficientCredits); err != nil {
		t.Fatalf("a change down to zero: %v", err)
	}
	if accounts[0].Balance.String() != "-150" || accounts[1].Balance.String() != "0" || accounts[0].Version != 4 || accounts[1].Version != 4 {
		t.Fatalf("after the change: %+v", accounts)
	}

	below := []ledger.Account{{Name: "workspace:credits", Balance: sum("5")}}
	err := ledger.ApplyChanges(below, []ledger.AccountChange{change("workspace:credits", "-6")}, fault.InsufficientBalance)
	if !fault.Is(err, fault.InsufficientBalance) || detail(err, "account") != "workspace:credits" {
		t.Errorf("a customer balance below zero = %v, want the movement's code naming the account", err)
	}

	other := []ledger.Account{{Name: "treasury", Decimals: 6}}
	err = ledger.ApplyChanges(other, []ledger.AccountChange{{AccountSpec: ledger.AccountSpec{Name: "treasury", Decimals: 9}, Delta: sum("1")}}, fault.InsufficientCredits)
	if !fault.Is(err, fault.Conflict) || detail(err, "account") != "treasury" {
		t.Errorf("a change in other decimals = %v, want CONFLICT naming the account", err)
	}

	top := []ledger.Account{{Name: "system:mint", AllowNegative: true, Balance: sum("170141183460469231731687303715884105727")}}
	err = ledger.ApplyChanges(top, []ledger.AccountChange{change("system:mint", "1")}, fault.InsufficientCredits)
	if !fault.Is(err, fault.InvalidAmount) || detail(err, "reason") != money.ReasonOverflow {
		t.Errorf("a balance past 128 bits = %v, want INVALID_AMOUNT (overflow)", err)
	}
}

// TestPostWritesOneBalancedMovement: a movement moves value between its
// accounts, writes its event with it, and the balances equal the postings
// summed.
func TestPostWritesOneBalancedMovement(t *testing.T) {
	st := newMemLedger()
	svc := ledger.New()
	m := ledger.Movement{Scope: ws1, Ledger: ledger.Financial, Type: ledger.TypeTransfer, Reference: "sale:1", Decimals: 6,
		Actor: ledger.Actor{UserID: "usr_1"}, Postings: []ledger.Posting{
			{Account: "system:buyer", Direction: ledger.Debit, Amount: 10_000_000},
			{Account: "seller", Direction: ledger.Credit, Amount: 9_500_000},
			{Account: "system:fees", Direction: ledger.Credit, Amount: 500_000},
		}}
	var p ledger.Posted
	var created bool
	if err := st.run(func(s ledger.Store) (err error) { p, created, err = svc.Post(ctx, s, m); return err }); err != nil || !created {
		t.Fatalf("Post = %v, created %v", err, created)
	}
	for name, want := range map[string]string{"system:buyer": "-10000000", "seller": "9500000", "system:fees": "500000"} {
		if got := st.balance(t, ws1, ledger.Financial, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	if len(st.events) != 1 {
		t.Fatalf("%d events, want 1", len(st.events))
	}
	e := st.events[0]
	var payload struct {
		MovementID string           `json:"movementId"`
		Reference  string           `json:"reference"`
		Postings   []ledger.Posting `json:"postings"`
	}
	if err := json.Unmarshal(e.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	if e.Type != ledger.EventMovementPosted || e.AggregateID != p.ID || e.Environment != "test" || e.WorkspaceID != "ws_1" ||
		payload.MovementID != p.ID || payload.Reference != "sale:1" || len(payload.Postings) != 3 {
		t.Fatalf("event = %+v, payload %+v", e, payload)
	}
	drift, err := svc.Audit(ctx, st, ws1, ledger.Financial, []string{"system:buyer", "seller", "system:fees"})
	if err != nil || len(drift) != 0 {
		t.Fatalf("audit = %+v, %v", drift, err)
	}
}

// TestPostOnceByReference: a replay with the same content (postings in any
// order, any actor) returns the first movement and writes nothing; other
// content under the reference is CONFLICT; a Fresh movement never returns
// an earlier one.
func TestPostOnceByReference(t *testing.T) {
	st := newMemLedger()
	svc := ledger.New()
	post := func(m ledger.Movement) (ledger.Posted, bool, error) {
		var p ledger.Posted
		var created bool
		err := st.run(func(s ledger.Store) (err error) { p, created, err = svc.Post(ctx, s, m); return err })
		return p, created, err
	}
	m := ledger.Movement{Scope: ws1, Ledger: ledger.Credits, Type: ledger.TypeGrant, Reference: "grant:ws_1:2026-01",
		Actor: ledger.Actor{UserID: "usr_1"}, Postings: []ledger.Posting{
			{Account: ledger.AccountSystemGrants, Direction: ledger.Debit, Amount: 100},
			{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Credit, Amount: 100},
		}}
	first, created, err := post(m)
	if err != nil || !created {
		t.Fatalf("first post = %v, created %v", err, created)
	}
	replay := m
	replay.Actor = ledger.Actor{KeyID: "key_retry"}
	replay.Postings = []ledger.Posting{m.Postings[1], m.Postings[0]}
	again, created, err := post(replay)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("replay = %+v, created %v, %v; want the first movement", again, created, err)
	}
	if got := st.balance(t, ws1, ledger.Credits, ledger.AccountWorkspaceCredits); got != "100" || len(st.events) != 1 || len(st.moves) != 1 {
		t.Fatalf("after a replay: balance %s, %d events, %d movements", got, len(st.events), len(st.moves))
	}

	for name, edit := range map[string]func(*ledger.Movement){
		"amount":   func(m *ledger.Movement) { m.Postings[0].Amount, m.Postings[1].Amount = 101, 101 },
		"type":     func(m *ledger.Movement) { m.Type = ledger.TypeTransfer },
		"decimals": func(m *ledger.Movement) { m.Decimals = 2 },
		"account":  func(m *ledger.Movement) { m.Postings[1].Account = "workspace:other" },
	} {
		other := m
		other.Postings = append([]ledger.Posting(nil), m.Postings...)
		edit(&other)
		if _, _, err := post(other); !fault.Is(err, fault.Conflict) || detail(err, "reference") != m.Reference {
			t.Errorf("other %s under the reference = %v, want CONFLICT naming it", name, err)
		}
	}
	fresh := m
	fresh.Fresh = true
	if _, _, err := post(fresh); !fault.Is(err, fault.Conflict) {
		t.Errorf("a Fresh movement whose reference is taken = %v, want CONFLICT", err)
	}
	// The same reference in another workspace is another movement.
	elsewhere := m
	elsewhere.Scope.WorkspaceID = "ws_2"
	if _, created, err := post(elsewhere); err != nil || !created {
		t.Errorf("the reference in another workspace = %v, created %v", err, created)
	}
	if got := st.balance(t, ws1, ledger.Credits, ledger.AccountWorkspaceCredits); got != "100" {
		t.Errorf("refused posts changed the balance to %s", got)
	}
}

// TestPostInsufficient: a debit past a customer balance fails with
// INSUFFICIENT_CREDITS, or the code the movement names, and its unit of
// work leaves nothing behind.
func TestPostInsufficient(t *testing.T) {
	st := newMemLedger()
	svc := ledger.New()
	grant := ledger.CreditsInput{Scope: ws1, Ref: "g1", Amount: 5}
	if err := st.run(func(s ledger.Store) error { _, _, err := svc.Grant(ctx, s, grant); return err }); err != nil {
		t.Fatal(err)
	}
	spend := func(code fault.Code) error {
		return st.run(func(s ledger.Store) error {
			_, _, err := svc.Post(ctx, s, ledger.Movement{Scope: ws1, Ledger: ledger.Credits, Type: ledger.TypeTransfer,
				Reference: "spend:" + string(code), InsufficientCode: code, Postings: []ledger.Posting{
					{Account: ledger.AccountWorkspaceCredits, Direction: ledger.Debit, Amount: 6},
					{Account: ledger.AccountSystemConsumed, Direction: ledger.Credit, Amount: 6},
				}})
			return err
		})
	}
	if err := spend(""); !fault.Is(err, fault.InsufficientCredits) || detail(err, "account") != ledger.AccountWorkspaceCredits {
		t.Errorf("debit past the balance = %v, want INSUFFICIENT_CREDITS naming the account", err)
	}
	if err := spend(fault.InsufficientBalance); !fault.Is(err, fault.InsufficientBalance) {
		t.Errorf("debit past the balance with a named code = %v, want INSUFFICIENT_BALANCE", err)
	}
	if got := st.balance(t, ws1, ledger.Credits, ledger.AccountWorkspaceCredits); got != "5" || len(st.moves) != 1 || len(st.events) != 1 {
		t.Fatalf("refused debits left balance %s, %d movements, %d events", got, len(st.moves), len(st.events))
	}
}

// TestReservationArithmetic: a reservation holds credits until the
// operation ends; what is settled and released together never exceeds
// it, a replay of either is not counted against itself, and a settle or
// release without a reservation is refused.
func TestReservationArithmetic(t *testing.T) {
	st := newMemLedger()
	svc := ledger.New()
	in := func(ref string, amount money.Atomic) ledger.CreditsInput {
		return ledger.CreditsInput{Scope: ws1, Ref: ref, Amount: amount}
	}
	do := func(fn func(ledger.Store) error) error { return st.run(fn) }
	grant := func(ref string, n money.Atomic) error {
		return do(func(s ledger.Store) error { _, _, err := svc.Grant(ctx, s, in(ref, n)); return err })
	}
	reserve := func(ref string, n money.Atomic) error {
		return do(func(s ledger.Store) error { _, _, err := svc.Reserve(ctx, s, in(ref, n)); return err })
	}
	settle := func(ref string, n money.Atomic) (bool, error) {
		var created bool
		err := do(func(s ledger.Store) (err error) { _, created, err = svc.Settle(ctx, s, in(ref, n)); return err })
		return created, err
	}
	release := func(ref string, n money.Atomic) (bool, error) {
		var created bool
		err := do(func(s ledger.Store) (err error) { _, created, err = svc.Release(ctx, s, in(ref, n)); return err })
		return created, err
	}
	balances := func(want map[string]string) {
		t.Helper()
		for name, w := range want {
			if got := st.balance(t, ws1, ledger.Credits, name); got != w {
				t.Errorf("%s = %q, want %q", name, got, w)
			}
		}
	}

	if err := grant("ws_1:2026-01", 100); err != nil {
		t.Fatal(err)
	}
	if err := grant("ws_1:2026-01", 100); err != nil {
		t.Fatalf("the month's grant again: %v", err)
	}
	balances(map[string]string{ledger.AccountWorkspaceCredits: "100", ledger.AccountSystemGrants: "-100"})

	if err := reserve("op_1", 60); err != nil {
		t.Fatal(err)
	}
	if err := reserve("op_2", 41); !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("a reservation past the balance = %v, want INSUFFICIENT_CREDITS", err)
	}
	balances(map[string]string{ledger.AccountWorkspaceCredits: "40", ledger.AccountWorkspaceReserved: "60"})

	if created, err := settle("op_1", 45); err != nil || !created {
		t.Fatalf("settle 45 of 60 = %v, created %v", err, created)
	}
	if _, err := release("op_1", 16); !fault.Is(err, fault.InsufficientCredits) || detail(err, "reference") != "reserve:op_1" {
		t.Fatalf("release 16 of the 15 left = %v, want INSUFFICIENT_CREDITS naming the reservation", err)
	}
	if created, err := release("op_1", 15); err != nil || !created {
		t.Fatalf("release the 15 left = %v, created %v", err, created)
	}
	balances(map[string]string{ledger.AccountWorkspaceCredits: "55", ledger.AccountWorkspaceReserved: "0", ledger.AccountSystemConsumed: "45"})
	// Replays: the settle is not counted against itself.
	if created, err := settle("op_1", 45); err != nil || created {
		t.Fatalf("settle replay = %v, created %v; want the first", err, created)
	}
	if created, err := release("op_1", 15); err != nil || created {
		t.Fatalf("release replay = %v, created %v; want the first", err, created)
	}
	if _, err := settle("op_1", 46); !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("a settle past the reservation less its release = %v, want INSUFFICIENT_CREDITS", err)
	}
	balances(map[string]string{ledger.AccountWorkspaceCredits: "55", ledger.AccountWorkspaceReserved: "0", ledger.AccountSystemConsumed: "45"})

	// No reservation, nothing to settle or release.
	if _, err := settle("op_none", 1); !fault.Is(err, fault.InsufficientCredits) || detail(err, "reference") != "reserve:op_none" {
		t.Errorf("settle without a reservation = %v", err)
	}
	if _, err := release("op_none", 1); !fault.Is(err, fault.InsufficientCredits) {
		t.Errorf("release without a reservation = %v", err)
	}
	for name, fn := range map[string]func() error{
		"grant":   func() error { return grant("", 1) },
		"reserve": func() error { return reserve("", 1) },
		"settle":  func() error { _, err := settle("", 1); return err },
		"release": func() error { _, err := release("", 1); return err },
	} {
		if err := fn(); !fault.Is(err, fault.InvalidInput) || detail(err, "field") != "ref" {
			t.Errorf("%s without a reference = %v, want INVALID_INPUT on ref", name, err)
		}
	}
}

// TestSettleAndRelease: an operation's end settles what it cost and
// releases the rest in one unit of work, or does neither.
func TestSettleAndRelease(t *testing.T) {
	st := newMemLedger()
	svc := ledger.New()
	in := func(ref string, amount money.Atomic) ledger.CreditsInput {
		return ledger.CreditsInput{Scope: ws1, Ref: ref, Amount: amount}
	}
	if err := st.run(func(s ledger.Store) error {
		if _, _, err := svc.Grant(ctx, s, in("g", 100)); err != nil {
			return err
		}
		_, _, err := svc.Reserve(ctx, s, in("op_1", 30))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Nothing to settle or release touches no store.
	if err := svc.SettleAndRelease(ctx, nil, in("op_1", 0), 0); err != nil {
		t.Fatalf("an empty end = %v", err)
	}
	over := st.run(func(s ledger.Store) error { return svc.SettleAndRelease(ctx, s, in("op_1", 20), 11) })
	if !fault.Is(over, fault.InsufficientCredits) {
		t.Fatalf("settle 20 and release 11 of 30 = %v, want INSUFFICIENT_CREDITS", over)
	}
	if len(st.moves) != 2 {
		t.Fatalf("a refused end left %d movements, want the grant and the reservation", len(st.moves))
	}
	if err := st.run(func(s ledger.Store) error { return svc.SettleAndRelease(ctx, s, in("op_1", 20), 10) }); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{ledger.AccountWorkspaceCredits: "80", ledger.AccountWorkspaceReserved: "0", ledger.AccountSystemConsumed: "20"} {
		if got := st.balance(t, ws1, ledger.Credits, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	// The whole reservation released, nothing settled.
	if err := st.run(func(s ledger.Store) error {
		if _, _, err := svc.Reserve(ctx, s, in("op_2", 25)); err != nil {
			return err
		}
		return svc.SettleAndRelease(ctx, s, in("op_2", 0), 25)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LedgerMovementGet(ctx, ws1, "settle:op_2"); !fault.Is(err, fault.NotFound) {
		t.Errorf("a zero settle was posted: %v", err)
	}
	if got := st.balance(t, ws1, ledger.Credits, ledger.AccountWorkspaceCredits); got != "80" {
		t.Errorf("credits after a full release = %s, want 80", got)
	}
}

// TestAuditReportsDrift: a balance that differs from its postings is
// reported with both values, never corrected.
func TestAuditReportsDrift(t *testing.T) {
	st := newMemLedger()
	svc := ledger.New()
	if err := st.run(func(s ledger.Store) error {
		_, _, err := svc.Grant(ctx, s, ledger.CreditsInput{Scope: ws1, Ref: "g", Amount: 7})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	names := []string{ledger.AccountSystemGrants, ledger.AccountWorkspaceCredits}
	key := accountKey(ws1, ledger.Credits, ledger.AccountWorkspaceCredits)
	a := st.accounts[key]
	a.Balance = money.SumOf(9)
	st.accounts[key] = a
	drift, err := svc.Audit(ctx, st, ws1, ledger.Credits, names)
	if err != nil || len(drift) != 1 || drift[0].Account != ledger.AccountWorkspaceCredits ||
		drift[0].Balance.String() != "9" || drift[0].Postings.String() != "7" {
		t.Fatalf("audit = %+v, %v", drift, err)
	}
	if st.accounts[key].Balance.String() != "9" {
		t.Fatal("the audit corrected the balance")
	}
}

// TestListPages: pages of movements newest first, with whether more
// follow; a page needs a positive limit.
func TestListPages(t *testing.T) {
	st := newMemLedger()
	svc := ledger.New()
	for _, ref := range []string{"a", "b", "c", "d", "e"} {
		if err := st.run(func(s ledger.Store) error {
			_, _, err := svc.Grant(ctx, s, ledger.CreditsInput{Scope: ws1, Ref: ref, Amount: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := svc.List(ctx, st, ledger.ListParams{Scope: ws1}); !fault.Is(err, fault.InvalidInput) || detail(err, "field") != "limit" {
		t.Fatalf("a page without a limit = %v", err)
	}
	var refs []string
	before, more := "", true
	for more {
		page, m, err := svc.List(ctx, st, ledger.ListParams{Scope: ws1, Before: before, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			refs = append(refs, p.Reference)
		}
		more, before = m, page[len(page)-1].ID
		if len(refs) > 5 {
			break
		}
	}
	want := []string{"grant:e", "grant:d", "grant:c", "grant:b", "grant:a"}
	if len(refs) != len(want) {
		t.Fatalf("pages = %v, want %v", refs, want)
	}
	for i := range want {
		if refs[i] != want[i] {
			t.Fatalf("pages = %v, want %v", refs, want)
		}
	}
}
