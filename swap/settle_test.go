package swap

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// SettleStore of the registry tests' store: they never settle.
func (m *memStore) SettleStore() SettleStore { panic("not used") }

// settleData is what the settlement fake stores; a unit of work works on
// a copy and commits it whole.
type settleData struct {
	ops       map[string]Operation
	intents   map[string]Intent
	quotes    map[string]Quote
	verifs    map[string]VerificationRecord
	sets      map[string]Settlement
	recs      map[string]ReconciliationRecord
	movements map[string]ledger.Posted
	balances  map[string]money.Sum
	jobs      map[string]jobs.InsertParams
	events    []outbox.Event
	ids       int
}

func (d *settleData) clone() *settleData {
	return &settleData{ops: maps.Clone(d.ops), intents: maps.Clone(d.intents), quotes: maps.Clone(d.quotes),
		verifs: maps.Clone(d.verifs), sets: maps.Clone(d.sets), recs: maps.Clone(d.recs), movements: maps.Clone(d.movements),
		balances: maps.Clone(d.balances), jobs: maps.Clone(d.jobs), events: slices.Clone(d.events), ids: d.ids}
}

// settleFake is an in-memory Store and SettleStore whose units of work run
// one at a time, each on a copy committed only when it succeeds.
type settleFake struct {
	mu sync.Mutex
	d  *settleData
	// conflicts counts operation updates still to refuse with CONFLICT,
	// as when another caller moved the operation first.
	conflicts int
	// units counts the units of work run.
	units int
}

// settleTx is a unit of work of the fake (d set) or its read pool.
type settleTx struct {
	f *settleFake
	d *settleData
}

func (t *settleTx) data() (*settleData, func()) {
	if t.d != nil {
		return t.d, func() {}
	}
	t.f.mu.Lock()
	return t.f.d, t.f.mu.Unlock
}

func (f *settleFake) run(_ context.Context, fn func(st Store) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.units++
	d := f.d.clone()
	if err := fn(&settleTx{f: f, d: d}); err != nil {
		return err
	}
	f.d = d
	return nil
}

func (f *settleFake) read() Store { return &settleTx{f: f} }

func (t *settleTx) Now() time.Time           { return t0.Add(2 * time.Minute) }
func (t *settleTx) SettleStore() SettleStore { return t }

// AfterCommit runs nothing: the fake's units never wake job workers.
func (t *settleTx) AfterCommit(func()) {}
func (t *settleTx) NewID(prefix string) string {
	d, done := t.data()
	defer done()
	d.ids++
	return prefix + fmt.Sprint(d.ids)
}
func (t *settleTx) PolicyInsert(context.Context, policy.Version) (policy.Version, bool, error) {
	panic("not used")
}
func (t *settleTx) PolicyCurrent(context.Context, policy.Scope, string) (policy.Version, error) {
	panic("not used")
}
func (t *settleTx) PolicyGet(context.Context, policy.Scope, string, int) (policy.Version, error) {
	panic("not used")
}
func (t *settleTx) PolicyHistory(context.Context, policy.Scope, string, policy.HistoryParams) ([]policy.Version, error) {
	panic("not used")
}
func (t *settleTx) SwapOperationInsert(context.Context, Operation) error     { panic("not used") }
func (t *settleTx) SwapQuoteInsert(context.Context, Quote) error             { panic("not used") }
func (t *settleTx) SwapIntentInsert(context.Context, Intent, Prepared) error { panic("not used") }
func (t *settleTx) SwapRegistryRunInsert(context.Context, RegistryRun) error { panic("not used") }
func (t *settleTx) SwapRegistryRunLatest(context.Context, access.Environment, int) (RegistryRun, error) {
	panic("not used")
}
func (t *settleTx) SwapRegistryRunNewest(context.Context, access.Environment, int) (RegistryRun, error) {
	panic("not used")
}

func notFoundErr() error { return fault.E("fake", fault.NotFound, "") }

func (t *settleTx) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	d, done := t.data()
	defer done()
	d.events = append(d.events, e)
	return e, nil
}

func (t *settleTx) SwapOperation(_ context.Context, owner Owner, id string) (Operation, error) {
	d, done := t.data()
	defer done()
	o, ok := d.ops[id]
	if !ok || o.Owner != owner {
		return Operation{}, notFoundErr()
	}
	return o, nil
}

func (t *settleTx) SwapOperationUpdate(_ context.Context, o Operation, prev int64) error {
	d, done := t.data()
	defer done()
	if t.f.conflicts > 0 {
		t.f.conflicts--
		return fault.E("fake", fault.Conflict, "")
	}
	if cur := d.ops[o.ID]; cur.Version != prev || o.Version != prev+1 {
		return fault.E("fake", fault.Conflict, "")
	}
	d.ops[o.ID] = o
	return nil
}

func (t *settleTx) SwapQuote(_ context.Context, owner Owner, id string) (Quote, error) {
	d, done := t.data()
	defer done()
	q, ok := d.quotes[id]
	if !ok || q.Owner != owner {
		return Quote{}, notFoundErr()
	}
	return q, nil
}

func (t *settleTx) SwapIntent(_ context.Context, owner Owner, id string) (Intent, Prepared, error) {
	d, done := t.data()
	defer done()
	it, ok := d.intents[id]
	if !ok || it.Owner != owner {
		return Intent{}, Prepared{}, notFoundErr()
	}
	return it, Prepared{}, nil
}

func (t *settleTx) SwapSignatureIntent(_ context.Context, sig string) (string, error) {
	d, done := t.data()
	defer done()
	for _, o := range d.ops {
		if o.Signature == sig {
			return o.IntentID, nil
		}
	}
	return "", nil
}

func (t *settleTx) SwapVerificationInsert(_ context.Context, r VerificationRecord) error {
	d, done := t.data()
	defer done()
	if _, ok := d.verifs[r.Verification.OperationID]; ok {
		return fault.E("fake", fault.Conflict, "")
	}
	d.verifs[r.Verification.OperationID] = r
	return nil
}

func (t *settleTx) SwapVerification(_ context.Context, owner Owner, id string) (VerificationRecord, error) {
	d, done := t.data()
	defer done()
	r, ok := d.verifs[id]
	if !ok || r.Owner != owner {
		return VerificationRecord{}, notFoundErr()
	}
	return r, nil
}

func (t *settleTx) SwapSettlementInsert(_ context.Context, s Settlement) error {
	d, done := t.data()
	defer done()
	for _, x := range d.sets {
		if x.OperationID == s.OperationID || x.Signature == s.Signature {
			return fault.E("fake", fault.Conflict, "")
		}
	}
	d.sets[s.OperationID] = s
	return nil
}

func (t *settleTx) SwapSettlement(_ context.Context, owner Owner, id string) (Settlement, error) {
	d, done := t.data()
	defer done()
	s, ok := d.sets[id]
	if !ok || s.Owner != owner {
		return Settlement{}, notFoundErr()
	}
	return s, nil
}

func (t *settleTx) SwapReconciliationInsert(_ context.Context, r ReconciliationRecord) error {
	d, done := t.data()
	defer done()
	if _, ok := d.recs[r.Reconciliation.OperationID]; ok {
		return fault.E("fake", fault.Conflict, "")
	}
	d.recs[r.Reconciliation.OperationID] = r
	return nil
}

func (t *settleTx) SwapReconciliation(_ context.Context, owner Owner, id string) (ReconciliationRecord, error) {
	d, done := t.data()
	defer done()
	r, ok := d.recs[id]
	if !ok || r.Owner != owner {
		return ReconciliationRecord{}, notFoundErr()
	}
	return r, nil
}

func (t *settleTx) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	d, done := t.data()
	defer done()
	if _, ok := d.jobs[p.UniqueKey]; ok {
		return false, nil
	}
	d.jobs[p.UniqueKey] = p
	return true, nil
}

func (t *settleTx) LedgerAccountsApply(_ context.Context, _ ledger.Scope, _ ledger.Kind, changes []ledger.AccountChange, code fault.Code) error {
	d, done := t.data()
	defer done()
	for _, c := range changes {
		b, err := d.balances[c.Name].Add(c.Delta)
		if err != nil {
			return err
		}
		if b.Negative() && !c.AllowNegative {
			return ledger.ErrInsufficient(code, c.Name)
		}
		d.balances[c.Name] = b
	}
	return nil
}

func (t *settleTx) LedgerMovementGet(_ context.Context, _ ledger.Scope, ref string) (ledger.Posted, error) {
	d, done := t.data()
	defer done()
	m, ok := d.movements[ref]
	if !ok {
		return ledger.Posted{}, notFoundErr()
	}
	return m, nil
}

func (t *settleTx) LedgerMovementLock(ctx context.Context, s ledger.Scope, ref string) (ledger.Posted, error) {
	return t.LedgerMovementGet(ctx, s, ref)
}

func (t *settleTx) LedgerMovementInsert(_ context.Context, m ledger.Posted, _ bool) error {
	d, done := t.data()
	defer done()
	if _, ok := d.movements[m.Reference]; ok {
		return fault.E("fake", fault.Conflict, "")
	}
	d.movements[m.Reference] = m
	return nil
}

// fakeCluster answers GetTransaction with tx (confirmed always, finalized
// when final); every other read but the genesis hash is unused.
type fakeCluster struct {
	ChainClient
	mu      sync.Mutex
	genesis string
	tx      *chain.Transaction
	final   bool
	err     error
	reads   int
	// hook runs once, on the next read, before it answers.
	hook func()
}

func (c *fakeCluster) GetGenesisHash(context.Context) (string, error) { return c.genesis, nil }

func (c *fakeCluster) GetTransaction(_ context.Context, sig string, cm chain.Commitment) (chain.Transaction, error) {
	c.mu.Lock()
	hook := c.hook
	c.hook = nil
	c.reads++
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.err != nil:
		return chain.Transaction{}, c.err
	case c.tx == nil || c.tx.Signature != sig || (cm == chain.Finalized && !c.final):
		return chain.Transaction{}, fmt.Errorf("fake: %w", chain.ErrTransactionNotFound)
	}
	return *c.tx, nil
}

// landedTx is testObserved as the cluster reports it.
func landedTx() *chain.Transaction {
	o := testObserved()
	bt := t0.Add(90 * time.Second)
	return &chain.Transaction{Signature: o.Signature, Slot: o.Slot, BlockTime: &bt, Fee: o.Fee, AccountKeys: o.Keys,
		NumSigners: o.NumSigners, Instructions: o.Instructions, PreTokenBalances: o.PreTokenBalances,
		PostTokenBalances: o.PostTokenBalances, PreBalances: o.PreBalances, PostBalances: o.PostBalances}
}

// settleFixture is a Service over the fake with testIntent's operation
// SUBMITTED under signature sig1 and the cluster showing testObserved.
type settleFixture struct {
	store   *settleFake
	cluster *fakeCluster
	svc     *Service
	it      Intent
	owner   Owner
}

func newSettleFixture(t *testing.T) *settleFixture {
	t.Helper()
	q := testQuote()
	it := testIntent(t)
	o := Operation{ID: it.OperationID, Owner: it.Owner, State: StateSubmitted, QuoteID: q.ID, IntentID: it.ID, Signature: "sig1",
		LastError: string(fault.SubmissionUncertain), Version: 5, CreatedAt: t0, UpdatedAt: t0}
	d := &settleData{ops: map[string]Operation{o.ID: o}, intents: map[string]Intent{it.ID: it}, quotes: map[string]Quote{q.ID: q},
		verifs: map[string]VerificationRecord{}, sets: map[string]Settlement{}, recs: map[string]ReconciliationRecord{},
		movements: map[string]ledger.Posted{}, balances: map[string]money.Sum{}, jobs: map[string]jobs.InsertParams{}}
	f := &settleFixture{store: &settleFake{d: d}, cluster: &fakeCluster{genesis: chain.MainnetGenesisHash, tx: landedTx()}, it: it,
		owner: it.Owner}
	n := 0
	svc, err := New(Config{Clock: &clock{t0.Add(2 * time.Minute)}, Run: f.store.run, ReadFunc: f.store.read,
		// Settling never relays: these tests start from a bound signature.
		SubmitRun:      func(context.Context, func(SubmitStore) error) error { panic("not used") },
		SubmitReadFunc: func() SubmitStore { panic("not used") },
		NewIDFunc:      func() string { n++; return fmt.Sprint(n) },
		Environments:   map[access.Environment]Environment{access.Live: {Chain: f.cluster, SwapPrograms: []chain.Address{JupiterV6ProgramID()}}}})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

func (f *settleFixture) settle(t *testing.T) SettleResult {
	t.Helper()
	res, err := f.svc.Settle(context.Background(), f.owner, f.it.ID)
	if err != nil {
		t.Fatalf("Settle: %v", err)
	}
	return res
}

// state returns the stored operation and the types of its events.
func (f *settleFixture) state() (Operation, []string) {
	f.store.mu.Lock()
	defer f.store.mu.Unlock()
	var types []string
	for _, e := range f.store.d.events {
		types = append(types, e.Type)
	}
	return f.store.d.ops[f.it.OperationID], types
}

// eventTypes are the event types of operations written in states; ""
// stands for the fee's ledger movement.
func eventTypes(states ...State) []string {
	var out []string
	for _, s := range states {
		if s == "" {
			out = append(out, ledger.EventMovementPosted)
			continue
		}
		out = append(out, EventType(s))
	}
	return out
}

func TestSettleSettlesOnceWithTheFeeOnTheFinancialLedger(t *testing.T) {
	f := newSettleFixture(t)
	res := f.settle(t)
	o, events := f.state()
	if o.State != StateSettled || o.LastError != "" || o.Version != 11 || res.Operation.State != StateSettled || res.Pending {
		t.Fatalf("operation %+v, answer %+v", o, res.Operation)
	}
	want := append(eventTypes(StateConfirming, StateConfirmed, StateVerifying, StateVerified, StateSettling), ledger.EventMovementPosted,
		EventType(StateSettled))
	if !slices.Equal(events, want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	d := f.store.d
	if len(d.sets) != 1 || len(d.movements) != 1 || len(d.verifs) != 1 || len(d.jobs) != 1 {
		t.Fatalf("%d settlements, %d movements, %d verifications, %d jobs", len(d.sets), len(d.movements), len(d.verifs), len(d.jobs))
	}
	set := res.Settlement
	if set == nil || set.Signature != "sig1" || set.ServiceFeeAtomic != 20_000_000 || set.FeeReceivedAtomic != 20_000_000 ||
		set.ActualInputAtomic != 1_000_000_000 || set.ActualOutputAtomic != 4_990_000 || set.Slot != 77 || set.FeeMint != inMint ||
		set.FeeDecimals != 9 || set.FeeRecipient != feeRecipient || set.FeeAccount != feeAccount || set.QuoteID != "swq_1" {
		t.Fatalf("settlement %+v", set)
	}
	mv := d.movements[FeeReference(f.it.OperationID)]
	if mv.ID != set.MovementID || mv.Ledger != ledger.Financial || mv.Decimals != 9 || mv.Scope != f.owner.Scope() || len(mv.Postings) != 2 {
		t.Fatalf("movement %+v", mv)
	}
	if got := d.balances[FeeRecipientAccount(feeRecipient, inMint)].String(); got != "20000000" {
		t.Errorf("fee recipient account %s", got)
	}
	if got := d.balances[FeeRevenueAccount(inMint)].String(); got != "-20000000" {
		t.Errorf("revenue account %s", got)
	}
	job := d.jobs[JobReconcile+":"+f.it.OperationID]
	var payload reconcilePayload
	if err := json.Unmarshal(job.Payload, &payload); err != nil || job.Kind != JobReconcile || job.MaxAttempts != ReconcileAttempts ||
		payload.IntentID != f.it.ID || payload.UserID != f.owner.UserID || payload.Environment != "live" {
		t.Fatalf("job %+v, payload %+v", job, payload)
	}
	if res.Verification == nil || !res.Verification.Verification.Passed() || len(res.Verification.Verification.Checks) != 13 {
		t.Fatalf("verification %+v", res.Verification)
	}

	// A repeat answers the same settlement, reads nothing and writes
	// nothing.
	reads, units := f.cluster.reads, f.store.units
	again := f.settle(t)
	if again.Settlement == nil || again.Settlement.ID != set.ID || f.cluster.reads != reads || f.store.units != units {
		t.Fatalf("repeat: %+v; %d reads, %d units", again.Settlement, f.cluster.reads-reads, f.store.units-units)
	}
}

func TestSettleWaitsForTheTransaction(t *testing.T) {
	f := newSettleFixture(t)
	f.cluster.tx = nil
	res := f.settle(t)
	o, events := f.state()
	if !res.Pending || o.State != StateSubmitted || len(events) != 0 || f.store.units != 0 || res.Verification != nil {
		t.Fatalf("pending answer %+v, operation %s, %d events", res, o.State, len(events))
	}
	f.cluster.tx = landedTx()
	if res := f.settle(t); res.Pending || res.Operation.State != StateSettled {
		t.Fatalf("once landed: %+v", res.Operation)
	}
}

func TestSettleOutcomes(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(t *testing.T, f *settleFixture)
		state   State
		lastErr fault.Code
		failed  []CheckName
		events  []State
	}{
		{"failed on chain", func(_ *testing.T, f *settleFixture) { f.cluster.tx.Err = `{"InstructionError":[2,{"Custom":1}]}` },
			StateFailed, fault.TransactionFailed, []CheckName{CheckSuccess}, []State{StateConfirming, StateConfirmed, StateFailed}},
		{"the fee account got less", func(t *testing.T, f *settleFixture) {
			entry(t, f.cluster.tx.PostTokenBalances, feeAccount).Amount--
		}, StateRequiresReview, fault.VerificationFailed, []CheckName{CheckServiceFee},
			[]State{StateConfirming, StateConfirmed, StateVerifying, StateRequiresReview}},
		{"an unknown program", func(_ *testing.T, f *settleFixture) {
			f.cluster.tx.Instructions = append(f.cluster.tx.Instructions, chain.Instruction{ProgramID: stranger})
		}, StateRequiresReview, fault.VerificationFailed, []CheckName{CheckPrograms},
			[]State{StateConfirming, StateConfirmed, StateVerifying, StateRequiresReview}},
		{"already confirming", func(_ *testing.T, f *settleFixture) {
			o := f.store.d.ops[f.it.OperationID]
			o.State = StateConfirming
			f.store.d.ops[o.ID] = o
		}, StateSettled, "", nil, []State{StateConfirmed, StateVerifying, StateVerified, StateSettling, "", StateSettled}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newSettleFixture(t)
			c.edit(t, f)
			res := f.settle(t)
			o, events := f.state()
			if o.State != c.state || o.LastError != string(c.lastErr) || res.Operation.State != c.state {
				t.Fatalf("operation %s (%s), want %s (%s)", o.State, o.LastError, c.state, c.lastErr)
			}
			if want := eventTypes(c.events...); !slices.Equal(events, want) {
				t.Fatalf("events %v, want %v", events, want)
			}
			if res.Verification == nil || !slices.Equal(failed(res.Verification.Verification), c.failed) {
				t.Fatalf("verification %+v", res.Verification)
			}
			d := f.store.d
			if settled := c.state == StateSettled; (len(d.sets) == 1) != settled || (len(d.movements) == 1) != settled || (len(d.jobs) == 1) != settled {
				t.Fatalf("%d settlements, %d movements, %d jobs", len(d.sets), len(d.movements), len(d.jobs))
			}
			units := f.store.units
			if again := f.settle(t); again.Operation.State != c.state || f.store.units != units {
				t.Fatalf("repeat moved %s -> %s", c.state, again.Operation.State)
			}
		})
	}
}

func TestSettleRefusals(t *testing.T) {
	ctx := context.Background()
	f := newSettleFixture(t)
	other := f.owner
	other.UserID = "usr_2"
	if _, err := f.svc.Settle(ctx, other, f.it.ID); !fault.Is(err, fault.NotFound) {
		t.Errorf("another user: %v, want NOT_FOUND", err)
	}
	f.cluster.genesis = chain.DevnetGenesisHash
	if _, err := f.svc.Settle(ctx, f.owner, f.it.ID); !fault.Is(err, fault.NetworkMismatch) {
		t.Errorf("another network: %v, want NETWORK_MISMATCH", err)
	}
	f.cluster.genesis = chain.MainnetGenesisHash
	f.cluster.err = fmt.Errorf("fake: %w", chain.ErrUnavailable)
	if _, err := f.svc.Settle(ctx, f.owner, f.it.ID); !fault.Is(err, fault.ProviderUnavailable) {
		t.Errorf("an unreadable cluster: %v, want PROVIDER_UNAVAILABLE", err)
	}
	f.cluster.err = nil
	for _, s := range []State{StateAwaitingSignature, StateSigned, StateExpired} {
		o := f.store.d.ops[f.it.OperationID]
		o.State = s
		if s == StateAwaitingSignature || s == StateExpired {
			o.Signature = ""
		}
		f.store.d.ops[o.ID] = o
		if _, err := f.svc.Settle(ctx, f.owner, f.it.ID); !fault.Is(err, fault.InvalidState) {
			t.Errorf("%s: %v, want INVALID_STATE_TRANSITION", s, err)
		}
	}
	if _, events := f.state(); len(events) != 0 || f.store.units != 0 {
		t.Fatalf("refusals wrote %d events in %d units", len(events), f.store.units)
	}
}

func TestSettleConvergesWithAConcurrentSettler(t *testing.T) {
	f := newSettleFixture(t)
	// Another caller settles while this one reads the chain.
	f.cluster.hook = func() { f.settle(t) }
	res := f.settle(t)
	d := f.store.d
	if res.Operation.State != StateSettled || len(d.sets) != 1 || len(d.movements) != 1 || len(d.jobs) != 1 || len(d.verifs) != 1 {
		t.Fatalf("state %s, %d settlements, %d movements, %d jobs, %d verifications", res.Operation.State, len(d.sets),
			len(d.movements), len(d.jobs), len(d.verifs))
	}
	if _, events := f.state(); len(events) != 7 {
		t.Fatalf("%d events, want 7", len(events))
	}

	// A unit of work that loses the version race is tried again.
	g := newSettleFixture(t)
	g.store.conflicts = 1
	if res := g.settle(t); res.Operation.State != StateSettled || g.store.units != 2 || len(g.store.d.sets) != 1 {
		t.Fatalf("after a lost race: %s in %d units", res.Operation.State, g.store.units)
	}
}

func TestReconcileSettled(t *testing.T) {
	ctx := context.Background()
	job := func(f *settleFixture, attempt int) error {
		p := f.store.d.jobs[JobReconcile+":"+f.it.OperationID]
		return f.svc.reconcileJob(ctx, jobs.Job{Kind: p.Kind, Payload: p.Payload, Attempts: attempt, MaxAttempts: p.MaxAttempts})
	}

	t.Run("match once final", func(t *testing.T) {
		f := newSettleFixture(t)
		f.settle(t)
		if err := job(f, 1); !fault.Is(err, fault.ResultNotReady) {
			t.Fatalf("before finality: %v, want RESULT_NOT_READY", err)
		}
		if o, _ := f.state(); o.State != StateSettled || len(f.store.d.recs) != 0 {
			t.Fatalf("before finality: %s, %d records", o.State, len(f.store.d.recs))
		}
		f.cluster.final = true
		if err := job(f, 2); err != nil {
			t.Fatal(err)
		}
		o, events := f.state()
		r := f.store.d.recs[f.it.OperationID]
		if o.State != StateReconciled || o.LastError != "" || r.Reconciliation.Outcome != OutcomeMatch || len(r.Reconciliation.Findings) != 0 ||
			r.Reconciliation.Signature != "sig1" || r.Owner != f.owner {
			t.Fatalf("operation %s, record %+v", o.State, r)
		}
		if got := events[len(events)-2:]; !slices.Equal(got, eventTypes(StateReconciling, StateReconciled)) {
			t.Fatalf("last events %v", got)
		}
		units := f.store.units
		if err := job(f, 3); err != nil || f.store.units != units {
			t.Fatalf("a second run: %v, %d units", err, f.store.units-units)
		}
		res := f.settle(t)
		if res.Reconciliation == nil || res.Reconciliation.ID != r.ID {
			t.Fatalf("settle after reconciliation answers %+v", res.Reconciliation)
		}
	})

	t.Run("data missing on the last attempt", func(t *testing.T) {
		f := newSettleFixture(t)
		f.settle(t)
		f.cluster.tx = nil
		if err := job(f, 1); !fault.Is(err, fault.ResultNotReady) {
			t.Fatalf("not found: %v", err)
		}
		if err := job(f, ReconcileAttempts); err != nil {
			t.Fatal(err)
		}
		o, _ := f.state()
		r := f.store.d.recs[f.it.OperationID]
		if o.State != StateRequiresReview || o.LastError != string(fault.RequiresReview) || r.Reconciliation.Outcome != OutcomeRequiresReview ||
			!slices.Contains(rules(r.Reconciliation), RuleDataMissing) {
			t.Fatalf("operation %s (%s), findings %+v", o.State, o.LastError, r.Reconciliation.Findings)
		}
	})

	t.Run("a fee movement that is not the settlement's", func(t *testing.T) {
		f := newSettleFixture(t)
		f.settle(t)
		f.cluster.final = true
		delete(f.store.d.movements, FeeReference(f.it.OperationID))
		if err := job(f, 1); err != nil {
			t.Fatal(err)
		}
		o, _ := f.state()
		r := f.store.d.recs[f.it.OperationID]
		if o.State != StateRequiresReview || !slices.Equal(rules(r.Reconciliation), []Rule{RuleFeeMovement}) {
			t.Fatalf("operation %s, findings %+v", o.State, r.Reconciliation.Findings)
		}
	})

	t.Run("finalized effects other than the settlement's", func(t *testing.T) {
		f := newSettleFixture(t)
		f.settle(t)
		f.cluster.final = true
		entry(t, f.cluster.tx.PostTokenBalances, walletOut).Amount++
		if err := job(f, 1); err != nil {
			t.Fatal(err)
		}
		o, _ := f.state()
		r := f.store.d.recs[f.it.OperationID]
		if o.State != StateRequiresReview || !slices.Equal(rules(r.Reconciliation), []Rule{RuleSettlement}) {
			t.Fatalf("operation %s, findings %+v", o.State, r.Reconciliation.Findings)
		}
	})

	t.Run("a malformed payload is dropped", func(t *testing.T) {
		f := newSettleFixture(t)
		err := f.svc.reconcileJob(ctx, jobs.Job{Kind: JobReconcile, Payload: []byte(`{"intentId":""}`), Attempts: 1, MaxAttempts: 10})
		if !jobs.IsPermanent(err) {
			t.Fatalf("bad payload: %v, want a permanent error", err)
		}
	})
}
