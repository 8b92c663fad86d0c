package intent

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// settledIntent takes a credit_purchase intent of 100 credits to SETTLED
// on the fakes (confirmed, verified, settled once).
func settledIntent(t *testing.T, h *harness) Intent {
	t.Helper()
	it := h.submitSigned(h.create())
	h.land(it, chain.Confirmed, it.NetAtomic)
	o := must[Outcome](t)(h.svc.Reconcile(context.Background(), it.ID))
	if o.Intent.State != StateSettled {
		t.Fatalf("setup: %s %+v", o.Intent.State, o.Intent.Evidence)
	}
	return o.Intent
}

// failed lists the names of the failed checks.
func failed(checks []Check) []string {
	var out []string
	for _, c := range checks {
		if !c.Passed {
			out = append(out, c.Name)
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := settledIntent(t, h)
	tx := landed(it, it.Signature, it.NetAtomic)
	base := ChainRecord{Network: it.Network, Commitment: chain.Confirmed, Transaction: &tx, ObservedAt: h.clock.Now()}
	settlement := must[Settlement](t)(h.settlement(context.Background(), nil, it))
	if len(settlement.Movements) != 1 {
		t.Fatalf("setup: %d movements", len(settlement.Movements))
	}
	// withTx returns base with a copy of its transaction changed by fn.
	withTx := func(fn func(tx *chain.Transaction)) ChainRecord {
		r := base
		c := tx
		c.PostTokenBalances = slices.Clone(tx.PostTokenBalances)
		c.Instructions = slices.Clone(tx.Instructions)
		fn(&c)
		r.Transaction = &c
		return r
	}
	// withMovements returns settlement with other movements.
	withMovements := func(ms ...SettlementMovement) Settlement {
		s := settlement
		s.Movements = ms
		return s
	}
	grant := settlement.Movements[0]
	elsewhere := grant
	elsewhere.ID, elsewhere.Scope = "mov_other", access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}
	short := grant
	short.Postings = []SettlementPosting{{Account: "system:grants", Amount: 100}, {Account: "workspace:credits", Credit: true, Amount: 99}}
	rehashed := it
	rehashed.NetAtomic--

	cases := []struct {
		name       string
		it         Intent
		rec        ChainRecord
		settlement Settlement
		want       ReconciliationOutcome
		failed     []string
	}{
		{"match", it, base, settlement, OutcomeMatch, nil},
		{"net short by one atomic unit", it, withTx(func(tx *chain.Transaction) { tx.PostTokenBalances[0].Amount-- }), settlement,
			OutcomeDriftDetected, []string{"chain.net", "chain.fee"}},
		{"gross one unit more, net right", it, withTx(func(tx *chain.Transaction) {
			tx.Instructions[1].Data = transferData(it.GrossAtomic+1, it.Decimals, it.HasTransferFee, it.FeeAtomic+1)
		}), settlement, OutcomeDriftDetected, []string{"chain.gross", "chain.fee"}},
		{"a second settlement movement", it, base, withMovements(grant, elsewhere), OutcomeRequiresReview, []string{"settlement.movements"}},
		{"no settlement movement", it, base, withMovements(), OutcomeRequiresReview, []string{"settlement.movements"}},
		{"settlement in another workspace only", it, base, withMovements(elsewhere), OutcomeRequiresReview, []string{"settlement.scope"}},
		{"settlement posting tampered", it, base, withMovements(short), OutcomeDriftDetected, []string{"settlement.amount", "settlement.balanced"}},
		{"chain record now failed", it, withTx(func(tx *chain.Transaction) { tx.Err = `{"InstructionError":[1,{"Custom":1}]}` }), settlement,
			OutcomeRequiresReview, []string{"chain.success"}},
		{"chain record missing", it, ChainRecord{Network: it.Network, Commitment: chain.Confirmed}, settlement,
			OutcomeRequiresReview, []string{"chain.transaction"}},
		{"chain unreadable", it, ChainRecord{Commitment: chain.Confirmed, Unreadable: "PROVIDER_UNAVAILABLE reading transaction"}, settlement,
			OutcomeRequiresReview, []string{"chain.read"}},
		{"another cluster", it, ChainRecord{Network: "solana:other", Commitment: chain.Confirmed}, settlement,
			OutcomeRequiresReview, []string{"chain.network"}},
		{"another signer", it, withTx(func(tx *chain.Transaction) {
			tx.AccountKeys = slices.Clone(tx.AccountKeys)
			tx.AccountKeys[0] = key("someone")
		}), settlement, OutcomeRequiresReview, []string{"chain.signer"}},
		{"another mint", it, withTx(func(tx *chain.Transaction) { tx.PostTokenBalances[0].Mint = key("other-mint") }), settlement,
			OutcomeRequiresReview, []string{"chain.mint"}},
		{"economics hash mismatch", rehashed, base, settlement, OutcomeRequiresReview, []string{"intent.economicsHash", "chain.net"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, checks := Compare(c.it, c.rec, c.settlement)
			if got != c.want || !slices.Equal(failed(checks), c.failed) {
				t.Fatalf("outcome %s, failed %v; want %s, %v\n%+v", got, failed(checks), c.want, c.failed, checks)
			}
			for _, ch := range checks {
				if ch.Passed != (ch.Expected == ch.Actual) && ch.Name != "chain.instruction" {
					t.Fatalf("check %+v: verdict disagrees with its values", ch)
				}
			}
		})
	}
	// The match compares every item the brief names.
	_, checks := Compare(it, base, settlement)
	names := map[string]bool{}
	for _, c := range checks {
		names[c.Name] = true
	}
	for _, n := range []string{"intent.economicsHash", "chain.transaction", "chain.success", "chain.signer", "chain.mint",
		"chain.recipient", "chain.net", "chain.fee", "settlement.movements", "settlement.amount"} {
		if !names[n] {
			t.Fatalf("match misses check %s: %+v", n, checks)
		}
	}
}

// TestReconcileSettledMatch: the job's body moves a settled intent
// through RECONCILING to RECONCILED with one record, and a second run
// changes nothing.
func TestReconcileSettledMatch(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := settledIntent(t, h)
	o := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{}))
	r := o.Reconciliation
	if !o.Changed || r == nil || o.Intent.State != StateReconciled || o.Intent.ReconciliationOutcome != OutcomeMatch ||
		o.Intent.ReconciliationID != r.ID || r.Outcome != OutcomeMatch || r.Reason != "" || r.Slot != 80 || r.Signature != it.Signature ||
		o.Intent.ReconciledAt.IsZero() || o.Intent.LastError != "" || o.Intent.Version != it.Version+2 {
		t.Fatalf("outcome %+v\nrecord %+v", o.Intent, r)
	}
	stored := h.store.intent(it.ID)
	if stored.State != StateReconciled || stored.ReconciliationOutcome != OutcomeMatch {
		t.Fatalf("stored %s %s", stored.State, stored.ReconciliationOutcome)
	}
	again := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{}))
	if again.Changed || again.Reconciliation == nil || again.Reconciliation.ID != r.ID {
		t.Fatalf("second run: %+v", again)
	}
	if got := must[*Reconciliation](t)(h.svc.Reconciliation(ctx, stored)); got == nil || got.ID != r.ID {
		t.Fatalf("record read back: %+v", got)
	}
	// The sweep leaves reconciled intents alone; the settlement happened once.
	if _, err := h.svc.ReconcileDue(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if len(h.settled) != 1 || len(h.ledger[it.BusinessReference]) != 1 {
		t.Fatalf("settled %v, ledger %+v", h.settled, h.ledger)
	}
}

// TestReconcileSettledNeverCorrects: drift is reported with its evidence
// and the settlement is left exactly as found.
func TestReconcileSettledNeverCorrects(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := settledIntent(t, h)
	h.ledger[it.BusinessReference][0].Postings[1].Amount = 90
	before := slices.Clone(h.ledger[it.BusinessReference][0].Postings)
	o := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{}))
	if o.Intent.ReconciliationOutcome != OutcomeDriftDetected || o.Intent.LastError != fault.ReconciliationDrift ||
		o.Reconciliation.Reason != "failed checks: settlement.amount, settlement.balanced" {
		t.Fatalf("%+v\n%+v", o.Intent, o.Reconciliation)
	}
	if ms := h.ledger[it.BusinessReference]; len(ms) != 1 || !slices.Equal(ms[0].Postings, before) || len(h.settled) != 1 {
		t.Fatalf("the settlement was touched: %+v", ms)
	}
}

// TestReconcileSettledUnreadableChain: an unreadable cluster leaves the
// intent RECONCILING without a record (the job retries); the last attempt
// concludes REQUIRES_REVIEW with the reason, never MATCH.
func TestReconcileSettledUnreadableChain(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := settledIntent(t, h)
	h.chain.failRead = errors.New("connection refused")
	_, err := h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{Attempts: 1})
	wantCode(t, err, fault.ProviderUnavailable)
	if got := h.store.intent(it.ID); got.State != StateReconciling || got.ReconciliationID != "" {
		t.Fatalf("after an unreadable chain: %s %q", got.State, got.ReconciliationID)
	}
	_, err = h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{Attempts: 2})
	wantCode(t, err, fault.ProviderUnavailable)
	h.clock.Add(time.Minute)
	o := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{LastAttempt: true, Attempts: 8}))
	r := o.Reconciliation
	if o.Intent.State != StateReconciled || r.Outcome != OutcomeRequiresReview || o.Intent.LastError != fault.RequiresReview ||
		r.Reason != "the chain could not be read (PROVIDER_UNAVAILABLE reading genesisHash) after 8 attempts" ||
		!slices.Equal(failed(r.Checks), []string{"chain.read"}) {
		t.Fatalf("%+v\n%+v", o.Intent, r)
	}
}

// TestReconcileSettledRecovers: the chain answers again on a retry and
// the intent reconciles to MATCH from RECONCILING.
func TestReconcileSettledRecovers(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := settledIntent(t, h)
	h.chain.failRead = errors.New("timeout")
	if _, err := h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{}); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatal(err)
	}
	h.chain.failRead = nil
	o := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{}))
	if o.Intent.ReconciliationOutcome != OutcomeMatch {
		t.Fatalf("%+v", o.Reconciliation)
	}
}

// TestReconcileSettledOnlySettled: intents that are not settled are left
// alone.
func TestReconcileSettledOnlySettled(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	o := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{LastAttempt: true}))
	if o.Changed || o.Reconciliation != nil || h.store.intent(it.ID).State != StateSubmitted {
		t.Fatalf("%+v", o)
	}
}

// TestSettlementAmountOverflow: postings that overflow are drift, never a
// panic or a match.
func TestSettlementAmountOverflow(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := settledIntent(t, h)
	tx := landed(it, it.Signature, it.NetAtomic)
	var ps []SettlementPosting
	for range 3 {
		ps = append(ps, SettlementPosting{Account: "workspace:credits", Credit: true, Amount: money.Atomic(^uint64(0))})
	}
	s := Settlement{Credit: "workspace:credits", Movements: []SettlementMovement{{Scope: it.Actor.Scope(), Postings: ps}}}
	got, _ := Compare(it, ChainRecord{Network: it.Network, Commitment: chain.Confirmed, Transaction: &tx}, s)
	if got != OutcomeDriftDetected {
		t.Fatalf("%s", got)
	}
}
