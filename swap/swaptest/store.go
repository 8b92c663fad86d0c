// Package swaptest is an in-memory store for the swap domain: every method
// of swap.Store, swap.SubmitStore and swap.SettleStore (the registry's
// policies and verification runs, operations, quotes, intents,
// submissions, verifications, settlements, reconciliations, ledger
// accounts and movements, outbox events and jobs) with the semantics
// those ports document, so that a Go service can build swap.Service
// without SQL.
//
// It is meant for tests, examples and single-process embedding. Nothing is
// durable: the data lives as long as the Store value. For a service that
// must survive a restart, use package store.
//
// # Units of work
//
// Run and SubmitRun run one unit of work at a time, as SQLite's single
// writer does: the unit works on its own copy of the data, which replaces
// the committed data when its function returns nil and is dropped when it
// returns an error or panics. Functions registered with AfterCommit run
// once the unit has committed, after the store is free again. Read and
// SubmitRead return the store itself: its methods outside a unit read the
// committed data and commit each write on its own. Wired into swap.Config:
//
//	mem := swaptest.NewStore(clock)
//	cfg := swap.Config{Clock: clock, Run: mem.Run, ReadFunc: mem.Read,
//		SubmitRun: mem.SubmitRun, SubmitReadFunc: mem.SubmitRead, ...}
//
// Inside a unit, use the handle it was given: a write through the Store's
// own methods waits for the running unit to end, so from inside one it
// never returns. A handle is valid only while its unit runs.
//
// # Semantics
//
// Errors are *fault.Error, as the ports document: NOT_FOUND for a missing
// row, or another owner's (an owner is a tenant, workspace, user and
// environment); CONFLICT for a taken id, a lost compare-and-set of an
// operation's version or of a submission's send count and state, a second
// quote or intent of one operation, a second intent of one quote, a
// signature already bound to another operation, a second submission of
// one operation or one signature, a second verification, settlement or
// reconciliation of one operation, a second settlement of one signature,
// and a ledger reference already posted in its scope.
// Verifications, settlements and reconciliations are read by their
// owner only. SwapSignatureIntent answers for every owner, as signatures
// are unique across operations. Policy versions follow policy.Store:
// an existing (scope, id, version) is not stored again and reports
// inserted false, so policy.Publish's rules apply unchanged. Jobs are
// recorded, deduplicated by unique key, and never run: Jobs lists them.
// Events lists the outbox events in the order they were written.
//
// # Ledger
//
// The Store is also a ledger.Store, so ledger.Service posts, reads and
// audits movements through it: the swap domain posts the fee a settled
// swap received on the financial ledger (swap.FeeReference), and
// LedgerMovementGet or LedgerAccountGet read it back. Balances change by
// ledger.ApplyChanges, the rule every store keeps: an account that may
// not go negative refuses a debit below zero, and an account keeps the
// decimals it was opened with. A refused change leaves every account as
// it was.
package swaptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/swap"
)

// Store is an in-memory swap store. It is safe for concurrent use.
type Store struct {
	// view is the store's own handle: reads see the committed data and
	// each write is a unit of work of its own.
	*view

	clock swap.Clock
	// unit lets one unit of work run at a time.
	unit sync.Mutex
	// mu guards db, the committed data, which is never changed in place:
	// a unit commits by replacing it.
	mu sync.Mutex
	db *data
	// ids numbers NewID's identifiers; a number is never used twice, even
	// when its unit of work rolls back.
	ids atomic.Int64
}

// The Store is both ports, and its methods fill swap.Config.
var (
	_ swap.Store              = (*Store)(nil)
	_ swap.SubmitStore        = (*Store)(nil)
	_ swap.RunFunc            = (*Store)(nil).Run
	_ swap.SubmitRunFunc      = (*Store)(nil).SubmitRun
	_ func() swap.Store       = (*Store)(nil).Read
	_ func() swap.SubmitStore = (*Store)(nil).SubmitRead
	_ swap.SettleStore        = (*Store)(nil)
	_ ledger.Store            = (*Store)(nil)
)

// NewStore returns an empty store whose units of work take their time
// from clock.
func NewStore(clock swap.Clock) *Store {
	s := &Store{clock: clock, db: newData()}
	s.view = &view{s: s}
	return s
}

// Run runs fn as one unit of work, committed when fn returns nil (a
// swap.RunFunc).
func (s *Store) Run(ctx context.Context, fn func(st swap.Store) error) error {
	return s.run(ctx, func(v *view) error { return fn(v) })
}

// SubmitRun runs fn as one unit of work of the relay, committed when fn
// returns nil (a swap.SubmitRunFunc).
func (s *Store) SubmitRun(ctx context.Context, fn func(st swap.SubmitStore) error) error {
	return s.run(ctx, func(v *view) error { return fn(v) })
}

// Read returns the store as the read pool (swap.Config.ReadFunc).
func (s *Store) Read() swap.Store { return s }

// SubmitRead returns the store as the relay's read pool
// (swap.Config.SubmitReadFunc).
func (s *Store) SubmitRead() swap.SubmitStore { return s }

// Jobs returns the jobs enqueued so far, in the order they were enqueued.
// They stay available: the store runs nothing.
func (s *Store) Jobs() []jobs.Record {
	out := slices.Clone(s.committed().jobs)
	for i := range out {
		out[i].Payload = slices.Clone(out[i].Payload)
	}
	return out
}

// Events returns the outbox events written so far, in the order they were
// written.
func (s *Store) Events() []outbox.Event {
	out := slices.Clone(s.committed().events)
	for i := range out {
		out[i].Payload = slices.Clone(out[i].Payload)
	}
	return out
}

// committed returns the committed data; it is never changed in place.
func (s *Store) committed() *data {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db
}

// run runs fn on a copy of the committed data that replaces it when fn
// returns nil, then the functions fn registered with AfterCommit.
func (s *Store) run(ctx context.Context, fn func(v *view) error) error {
	if err := ctx.Err(); err != nil {
		return fault.Wrap("swaptest.Run", err)
	}
	s.unit.Lock()
	v := &view{s: s, db: s.committed().clone(), now: s.clock.Now()}
	if err := s.apply(v, fn); err != nil {
		return err
	}
	for _, f := range v.after {
		f()
	}
	return nil
}

// apply runs fn on v, ends v, and commits v's data when fn returned nil;
// the unit lock, taken by the caller, is released whatever happens.
func (s *Store) apply(v *view, fn func(v *view) error) error {
	defer s.unit.Unlock()
	err := func() error {
		defer v.end()
		return fn(v)
	}()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.db = v.db
	s.mu.Unlock()
	return nil
}

// data is one version of the store's contents. A unit of work changes its
// own copy; committed data is only read.
type data struct {
	policies map[policyKey][]policy.Version // by version, ascending
	runs     []storedRun
	ops      map[string]swap.Operation
	sigs     map[string]string // signature -> operation id
	quotes   map[string]storedQuote
	quoteOf  map[string]string // operation id -> quote id
	intents  map[string]storedIntent
	intentOf map[string]string // quote id -> intent id
	opIntent map[string]string // operation id -> intent id
	subs     map[string]relay.Submission
	subSigs  map[string]string // signature -> operation id
	jobs     []jobs.Record
	jobKeys  map[string]bool
	events   []outbox.Event
	seq      int64
	// The settlement records, by operation id, and the ids and
	// signatures they took.
	verifs   map[string]storedRecord
	verifIDs map[string]bool
	sets     map[string]swap.Settlement
	setIDs   map[string]bool
	setSigs  map[string]string // signature -> operation id
	recs     map[string]storedRecord
	recIDs   map[string]bool
	// The ledgers: accounts and movements (by scope and reference), and
	// the references of the movement ids.
	accounts  map[accountKey]ledger.Account
	movements map[movementKey]ledger.Posted
	moveIDs   map[string]bool
}

type policyKey struct {
	env      access.Environment
	tenantID string
	id       string
}

// storedRun is a registry run with its insertion order.
type storedRun struct {
	seq int64
	run swap.RegistryRun
}

// storedQuote is a quote as stored: its owner beside its JSON, as the SQL
// store keeps it.
type storedQuote struct {
	owner swap.Owner
	body  []byte
}

// storedIntent is an intent as stored, with its prepared transaction.
type storedIntent struct {
	owner    swap.Owner
	body     []byte
	prepared swap.Prepared // Unsigned is derived on every read
}

func newData() *data {
	return &data{policies: map[policyKey][]policy.Version{}, ops: map[string]swap.Operation{}, sigs: map[string]string{},
		quotes: map[string]storedQuote{}, quoteOf: map[string]string{}, intents: map[string]storedIntent{},
		intentOf: map[string]string{}, opIntent: map[string]string{}, subs: map[string]relay.Submission{},
		subSigs: map[string]string{}, jobKeys: map[string]bool{}, verifs: map[string]storedRecord{},
		verifIDs: map[string]bool{}, sets: map[string]swap.Settlement{}, setIDs: map[string]bool{}, setSigs: map[string]string{},
		recs: map[string]storedRecord{}, recIDs: map[string]bool{}, accounts: map[accountKey]ledger.Account{},
		movements: map[movementKey]ledger.Posted{}, moveIDs: map[string]bool{}}
}

// clone returns a copy a unit of work may change. Stored values are never
// changed in place (a write replaces them), so the maps' values and the
// byte slices they hold are shared.
func (d *data) clone() *data {
	return &data{policies: maps.Clone(d.policies), runs: slices.Clone(d.runs), ops: maps.Clone(d.ops), sigs: maps.Clone(d.sigs),
		quotes: maps.Clone(d.quotes), quoteOf: maps.Clone(d.quoteOf), intents: maps.Clone(d.intents),
		intentOf: maps.Clone(d.intentOf), opIntent: maps.Clone(d.opIntent), subs: maps.Clone(d.subs),
		subSigs: maps.Clone(d.subSigs), jobs: slices.Clone(d.jobs), jobKeys: maps.Clone(d.jobKeys),
		events: slices.Clone(d.events), seq: d.seq, verifs: maps.Clone(d.verifs), verifIDs: maps.Clone(d.verifIDs),
		sets: maps.Clone(d.sets), setIDs: maps.Clone(d.setIDs), setSigs: maps.Clone(d.setSigs), recs: maps.Clone(d.recs),
		recIDs: maps.Clone(d.recIDs), accounts: maps.Clone(d.accounts), movements: maps.Clone(d.movements),
		moveIDs: maps.Clone(d.moveIDs)}
}

// next returns the data's next sequence number.
func (d *data) next() int64 {
	d.seq++
	return d.seq
}

// view is a handle on the store: a unit of work's (db set) or the store's
// own (db nil: reads see the committed data, writes commit on their own).
type view struct {
	s *Store
	// mu serializes the calls on one unit's handle.
	mu    sync.Mutex
	db    *data
	now   time.Time
	after []func()
	ended bool
}

// end makes a unit's handle refuse further calls.
func (v *view) end() {
	v.mu.Lock()
	v.ended = true
	v.mu.Unlock()
}

// errEnded is returned by a unit's handle used after its unit ended.
var errEnded = errors.New("swaptest: the unit of work has ended")

// read runs fn on the data v sees.
func (v *view) read(fn func(d *data) error) error {
	if v.db == nil {
		return fn(v.s.committed())
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended {
		return errEnded
	}
	return fn(v.db)
}

// write runs fn on the unit's data, or as a unit of work of its own on
// the store's handle.
func (v *view) write(ctx context.Context, fn func(d *data, now time.Time) error) error {
	if v.db == nil {
		return v.s.run(ctx, func(u *view) error { return fn(u.db, u.now) })
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended {
		return errEnded
	}
	return fn(v.db, v.now)
}

// Now is the unit of work's single timestamp; on the store's own handle,
// the clock's time.
func (v *view) Now() time.Time {
	if v.db == nil {
		return v.s.clock.Now()
	}
	return v.now
}

// AfterCommit registers fn to run once the unit of work has committed; on
// the store's own handle, whose writes have committed already, fn runs at
// once.
func (v *view) AfterCommit(fn func()) {
	if v.db == nil {
		fn()
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.after = append(v.after, fn)
}

func notFound(op, what string) error {
	return fault.E(op, fault.NotFound, what+" does not exist.")
}

func conflict(op, message string) *fault.Error {
	return fault.E(op, fault.Conflict, message)
}

// PolicyInsert implements policy.Store: v is stored with CreatedAt the
// unit's time, unless its (scope, id, version) exists, in which case the
// stored version is returned with inserted false.
func (v *view) PolicyInsert(ctx context.Context, pv policy.Version) (stored policy.Version, inserted bool, err error) {
	err = v.write(ctx, func(d *data, now time.Time) error {
		k := policyKey{pv.Scope.Environment, pv.Scope.TenantID, pv.ID}
		vs := d.policies[k]
		i, found := slices.BinarySearchFunc(vs, pv.Version, func(x policy.Version, n int) int { return x.Version - n })
		if found {
			stored = copyPolicy(vs[i])
			return nil
		}
		pv.CreatedAt = now.UTC()
		pv.Content = slices.Clone(pv.Content)
		d.policies[k] = slices.Insert(slices.Clone(vs), i, pv)
		stored, inserted = copyPolicy(pv), true
		return nil
	})
	return stored, inserted, err
}

// PolicyCurrent implements policy.Store.
func (v *view) PolicyCurrent(_ context.Context, s policy.Scope, id string) (out policy.Version, err error) {
	err = v.read(func(d *data) error {
		vs := d.policies[policyKey{s.Environment, s.TenantID, id}]
		if len(vs) == 0 {
			return notFound("swaptest.PolicyCurrent", "The policy")
		}
		out = copyPolicy(vs[len(vs)-1])
		return nil
	})
	return out, err
}

// PolicyGet implements policy.Store.
func (v *view) PolicyGet(_ context.Context, s policy.Scope, id string, version int) (out policy.Version, err error) {
	err = v.read(func(d *data) error {
		for _, x := range d.policies[policyKey{s.Environment, s.TenantID, id}] {
			if x.Version == version {
				out = copyPolicy(x)
				return nil
			}
		}
		return notFound("swaptest.PolicyGet", "The policy version")
	})
	return out, err
}

// PolicyHistory implements policy.Store: newest first, below p.Before
// when it is positive, at most p.Limit.
func (v *view) PolicyHistory(_ context.Context, s policy.Scope, id string, p policy.HistoryParams) (out []policy.Version, err error) {
	err = v.read(func(d *data) error {
		vs := d.policies[policyKey{s.Environment, s.TenantID, id}]
		out = []policy.Version{}
		for i := len(vs) - 1; i >= 0 && len(out) < p.Limit; i-- {
			if p.Before <= 0 || vs[i].Version < p.Before {
				out = append(out, copyPolicy(vs[i]))
			}
		}
		return nil
	})
	return out, err
}

func copyPolicy(v policy.Version) policy.Version {
	v.Content = slices.Clone(v.Content)
	return v
}

// SwapRegistryRunInsert implements swap.RegistryStore. CONFLICT if its id
// exists.
func (v *view) SwapRegistryRunInsert(ctx context.Context, r swap.RegistryRun) error {
	const op = "swaptest.SwapRegistryRunInsert"
	r, err := copyRun(r)
	if err != nil {
		return fault.Wrap(op, err)
	}
	return v.write(ctx, func(d *data, _ time.Time) error {
		for _, x := range d.runs {
			if x.run.ID == r.ID {
				return conflict(op, "The registry run already exists.").With("id", r.ID)
			}
		}
		d.runs = append(d.runs, storedRun{seq: d.next(), run: r})
		return nil
	})
}

// SwapRegistryRunLatest implements swap.RegistryStore: the newest run
// of env's registry version that read the cluster, by check time, then
// insertion, then id.
func (v *view) SwapRegistryRunLatest(_ context.Context, env access.Environment, version int) (out swap.RegistryRun, err error) {
	err = v.read(func(d *data) error {
		var best *storedRun
		for i := range d.runs {
			r := &d.runs[i]
			if r.run.Environment != string(env) || r.run.RegistryVersion != version || r.run.Unreadable {
				continue
			}
			if best == nil || newer(r, best) {
				best = r
			}
		}
		if best == nil {
			return notFound("swaptest.SwapRegistryRunLatest", "The registry run")
		}
		out, err = copyRun(best.run)
		return err
	})
	return out, err
}

func newer(a, b *storedRun) bool {
	switch {
	case !a.run.CheckedAt.Equal(b.run.CheckedAt):
		return a.run.CheckedAt.After(b.run.CheckedAt)
	case a.seq != b.seq:
		return a.seq > b.seq
	}
	return a.run.ID > b.run.ID
}

// copyRun returns a run that shares nothing with r, as stored.
func copyRun(r swap.RegistryRun) (swap.RegistryRun, error) {
	checks := r.Checks
	if checks == nil {
		checks = []swap.MintCheck{}
	}
	b, err := json.Marshal(checks)
	if err != nil {
		return swap.RegistryRun{}, err
	}
	r.Checks = nil
	if err := json.Unmarshal(b, &r.Checks); err != nil {
		return swap.RegistryRun{}, err
	}
	r.CheckedAt = r.CheckedAt.UTC()
	return r, nil
}

// SwapOperationInsert implements swap.OperationStore. CONFLICT if its id
// exists or its signature is bound to another operation.
func (v *view) SwapOperationInsert(ctx context.Context, o swap.Operation) error {
	const op = "swaptest.SwapOperationInsert"
	return v.write(ctx, func(d *data, _ time.Time) error {
		if _, ok := d.ops[o.ID]; ok {
			return conflict(op, "The swap operation already exists.").With("operationId", o.ID)
		}
		if o.Signature != "" && d.sigs[o.Signature] != "" {
			return conflict(op, "The signature belongs to another swap operation.").With("operationId", o.ID)
		}
		o.CreatedAt, o.UpdatedAt = o.CreatedAt.UTC(), o.UpdatedAt.UTC()
		d.ops[o.ID] = o
		if o.Signature != "" {
			d.sigs[o.Signature] = o.ID
		}
		return nil
	})
}

// SwapOperation implements swap.OperationStore: NOT_FOUND for another
// owner's.
func (v *view) SwapOperation(_ context.Context, owner swap.Owner, id string) (out swap.Operation, err error) {
	err = v.read(func(d *data) error {
		o, ok := d.ops[id]
		if !ok || o.Owner != owner {
			return notFound("swaptest.SwapOperation", "The swap operation")
		}
		out = o
		return nil
	})
	return out, err
}

// SwapOperationByID implements swap.SubmitStore.
func (v *view) SwapOperationByID(_ context.Context, id string) (out swap.Operation, err error) {
	err = v.read(func(d *data) error {
		o, ok := d.ops[id]
		if !ok {
			return notFound("swaptest.SwapOperationByID", "The swap operation")
		}
		out = o
		return nil
	})
	return out, err
}

// SwapOperationUpdate implements swap.OperationStore: o's state, intent,
// signature, last error, version and update time are written when the
// stored version is prevVersion and o.Version is prevVersion + 1; its id,
// owner, quote and creation time stay as stored. CONFLICT otherwise
// (a missing operation included), and when o's signature is bound to
// another operation.
func (v *view) SwapOperationUpdate(ctx context.Context, o swap.Operation, prevVersion int64) error {
	const op = "swaptest.SwapOperationUpdate"
	return v.write(ctx, func(d *data, _ time.Time) error {
		if o.Version != prevVersion+1 {
			return conflict(op, "The operation's version must advance by one.").With("operationId", o.ID)
		}
		if o.Signature != "" {
			if other := d.sigs[o.Signature]; other != "" && other != o.ID {
				return conflict(op, "The signature belongs to another swap operation.").With("operationId", o.ID)
			}
		}
		cur, ok := d.ops[o.ID]
		if !ok || cur.Version != prevVersion {
			return conflict(op, "The swap operation changed meanwhile.").With("operationId", o.ID)
		}
		if cur.Signature != "" && cur.Signature != o.Signature {
			delete(d.sigs, cur.Signature)
		}
		cur.State, cur.IntentID, cur.Signature, cur.LastError = o.State, o.IntentID, o.Signature, o.LastError
		cur.Version, cur.UpdatedAt = o.Version, o.UpdatedAt.UTC()
		d.ops[o.ID] = cur
		if cur.Signature != "" {
			d.sigs[cur.Signature] = cur.ID
		}
		return nil
	})
}

// SwapQuoteInsert implements swap.OperationStore. CONFLICT if its id
// exists or its operation has a quote.
func (v *view) SwapQuoteInsert(ctx context.Context, q swap.Quote) error {
	const op = "swaptest.SwapQuoteInsert"
	body, err := json.Marshal(q)
	if err != nil {
		return fault.Wrap(op, err)
	}
	return v.write(ctx, func(d *data, _ time.Time) error {
		if _, ok := d.quotes[q.ID]; ok {
			return conflict(op, "The swap quote already exists.").With("quoteId", q.ID)
		}
		if d.quoteOf[q.OperationID] != "" {
			return conflict(op, "The swap operation already has a quote.").With("operationId", q.OperationID)
		}
		d.quotes[q.ID] = storedQuote{owner: q.Owner, body: body}
		d.quoteOf[q.OperationID] = q.ID
		return nil
	})
}

// SwapQuote implements swap.OperationStore: NOT_FOUND for another
// owner's.
func (v *view) SwapQuote(_ context.Context, owner swap.Owner, id string) (out swap.Quote, err error) {
	const op = "swaptest.SwapQuote"
	err = v.read(func(d *data) error {
		sq, ok := d.quotes[id]
		if !ok || sq.owner != owner {
			return notFound(op, "The swap quote")
		}
		if err := json.Unmarshal(sq.body, &out); err != nil {
			return fault.Wrap(op, err)
		}
		return nil
	})
	return out, err
}

// SwapIntentInsert implements swap.OperationStore. One intent per quote
// and per operation: a second, or a taken id, is CONFLICT.
func (v *view) SwapIntentInsert(ctx context.Context, it swap.Intent, p swap.Prepared) error {
	const op = "swaptest.SwapIntentInsert"
	body, err := json.Marshal(it)
	if err != nil {
		return fault.Wrap(op, err)
	}
	prepared := swap.Prepared{Message: slices.Clone(p.Message), LastValidBlockHeight: p.LastValidBlockHeight,
		ExpiresAt: p.ExpiresAt.UTC(), PriorityFeeLamports: p.PriorityFeeLamports, RentLamports: p.RentLamports}
	return v.write(ctx, func(d *data, _ time.Time) error {
		_, taken := d.intents[it.ID]
		switch {
		case taken:
			return conflict(op, "The swap intent already exists.").With("intentId", it.ID)
		case d.intentOf[it.QuoteID] != "":
			return conflict(op, "The quote is already bound to an intent.").With("quoteId", it.QuoteID)
		case d.opIntent[it.OperationID] != "":
			return conflict(op, "The swap operation already has an intent.").With("operationId", it.OperationID)
		}
		d.intents[it.ID] = storedIntent{owner: it.Owner, body: body, prepared: prepared}
		d.intentOf[it.QuoteID] = it.ID
		d.opIntent[it.OperationID] = it.ID
		return nil
	})
}

// SwapIntent implements swap.OperationStore: NOT_FOUND for another
// owner's.
func (v *view) SwapIntent(_ context.Context, owner swap.Owner, id string) (it swap.Intent, p swap.Prepared, err error) {
	const op = "swaptest.SwapIntent"
	err = v.read(func(d *data) error {
		si, ok := d.intents[id]
		if !ok || si.owner != owner {
			return notFound(op, "The swap intent")
		}
		if err := json.Unmarshal(si.body, &it); err != nil {
			return fault.Wrap(op, err)
		}
		p = si.prepared
		p.Message = slices.Clone(si.prepared.Message)
		p.Unsigned = message.Unsigned(p.Message)
		return nil
	})
	return it, p, err
}

// SwapSubmissionInsert implements swap.SubmitStore. CONFLICT when the
// operation or the signature has a submission.
func (v *view) SwapSubmissionInsert(ctx context.Context, operationID string, s relay.Submission) error {
	const op = "swaptest.SwapSubmissionInsert"
	s.Wire = slices.Clone(s.Wire)
	return v.write(ctx, func(d *data, _ time.Time) error {
		_, taken := d.subs[operationID]
		if taken || d.subSigs[s.Signature] != "" {
			return conflict(op, "The operation or the signature already has a submission.").With("operationId", operationID)
		}
		d.subs[operationID] = s
		d.subSigs[s.Signature] = operationID
		return nil
	})
}

// SwapSubmission implements swap.SubmitStore.
func (v *view) SwapSubmission(_ context.Context, operationID string) (out relay.Submission, err error) {
	err = v.read(func(d *data) error {
		s, ok := d.subs[operationID]
		if !ok {
			return notFound("swaptest.SwapSubmission", "The submission")
		}
		out = s
		out.Wire = slices.Clone(s.Wire)
		return nil
	})
	return out, err
}

// SwapSubmissionUpdate implements swap.SubmitStore: the state, send
// count, last error, chain error and slot are written when the stored
// send count is prevAttempts and state prevState; the signature, bytes,
// network and blockhash stay as stored. CONFLICT otherwise (a missing
// submission included).
func (v *view) SwapSubmissionUpdate(ctx context.Context, operationID string, s relay.Submission, prevAttempts int, prevState relay.State) error {
	const op = "swaptest.SwapSubmissionUpdate"
	return v.write(ctx, func(d *data, _ time.Time) error {
		cur, ok := d.subs[operationID]
		if !ok || cur.SendAttempts != prevAttempts || cur.State != prevState {
			return conflict(op, "The submission changed meanwhile.").With("operationId", operationID)
		}
		cur.State, cur.SendAttempts, cur.LastError, cur.ChainError, cur.Slot = s.State, s.SendAttempts, s.LastError, s.ChainError, s.Slot
		d.subs[operationID] = cur
		return nil
	})
}

// OutboxInsert implements outbox.Writer: ID (evt_ and a sequence number),
// OccurredAt (the unit's time), SchemaVersion (1) and Payload ({}) are
// set when empty. An event without environment is refused.
func (v *view) OutboxInsert(ctx context.Context, e outbox.Event) (out outbox.Event, err error) {
	const op = "swaptest.OutboxInsert"
	if e.Environment != string(access.Test) && e.Environment != string(access.Live) {
		return outbox.Event{}, fault.Wrap(op, fmt.Errorf("outbox event %s has no environment (%q)", e.Type, e.Environment))
	}
	e.Payload = slices.Clone(e.Payload)
	if len(e.Payload) == 0 {
		e.Payload = json.RawMessage("{}")
	}
	if e.SchemaVersion == 0 {
		e.SchemaVersion = 1
	}
	err = v.write(ctx, func(d *data, now time.Time) error {
		if e.ID == "" {
			e.ID = fmt.Sprintf("evt_%020d", d.next())
		}
		if e.OccurredAt.IsZero() {
			e.OccurredAt = now
		}
		e.OccurredAt = e.OccurredAt.UTC()
		d.events = append(d.events, e)
		return nil
	})
	if err != nil {
		return outbox.Event{}, err
	}
	out = e
	out.Payload = slices.Clone(e.Payload)
	return out, nil
}

// JobInsert implements jobs.Enqueuer: p with its defaults (the unit's
// time for RunAt) is recorded as an available job, unless its UniqueKey
// was used before (inserted false). Invalid params are INVALID_INPUT.
func (v *view) JobInsert(ctx context.Context, p jobs.InsertParams) (inserted bool, err error) {
	err = v.write(ctx, func(d *data, now time.Time) error {
		p, err := p.WithDefaults(now)
		if err != nil {
			return fault.Wrap("swaptest.JobInsert", err)
		}
		if p.UniqueKey != "" && d.jobKeys[p.UniqueKey] {
			return nil
		}
		if p.UniqueKey != "" {
			d.jobKeys[p.UniqueKey] = true
		}
		d.jobs = append(d.jobs, jobs.Record{
			Job: jobs.Job{ID: fmt.Sprintf("job_%020d", d.next()), Kind: p.Kind, Payload: slices.Clone(p.Payload),
				MaxAttempts: p.MaxAttempts, RunAt: p.RunAt.UTC()},
			State: jobs.Available, UniqueKey: p.UniqueKey, Group: p.Group, CreatedAt: now.UTC()})
		inserted = true
		return nil
	})
	return inserted, err
}

// SwapOperationsExpired implements swap.SubmitStore: up to limit
// operations in QUOTED, INTENT_CREATED or AWAITING_SIGNATURE whose quote
// expired at or before now, oldest expiry first.
func (v *view) SwapOperationsExpired(_ context.Context, now time.Time, limit int) (out []swap.Operation, err error) {
	const op = "swaptest.SwapOperationsExpired"
	type due struct {
		o   swap.Operation
		exp time.Time
	}
	err = v.read(func(d *data) error {
		var all []due
		for _, o := range d.ops {
			if o.State != swap.StateQuoted && o.State != swap.StateIntentCreated && o.State != swap.StateAwaitingSignature {
				continue
			}
			sq, ok := d.quotes[o.QuoteID]
			if !ok {
				continue
			}
			var q swap.Quote
			if err := json.Unmarshal(sq.body, &q); err != nil {
				return fault.Wrap(op, err)
			}
			if !q.ExpiresAt.After(now) {
				all = append(all, due{o, q.ExpiresAt})
			}
		}
		slices.SortFunc(all, func(a, b due) int {
			if c := a.exp.Compare(b.exp); c != 0 {
				return c
			}
			return strings.Compare(a.o.ID, b.o.ID)
		})
		for _, x := range all[:min(limit, len(all))] {
			out = append(out, x.o)
		}
		return nil
	})
	return out, err
}
