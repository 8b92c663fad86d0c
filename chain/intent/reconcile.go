package intent

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// ReconciliationOutcome is what reconciliation concluded about a settled
// intent (spec, the swap operation's last row: MATCH, DRIFT_DETECTED,
// REQUIRES_REVIEW or FAILED). A payment intent never concludes FAILED: a
// transaction that failed on chain fails the intent before it settles
// (business state FAILED, nothing credited), so a settled intent whose
// record now shows a failure has credits granted without a payment behind
// them, which a person must review.
type ReconciliationOutcome string

// The outcomes.
const (
	// OutcomeMatch: every check passed.
	OutcomeMatch ReconciliationOutcome = "MATCH"
	// OutcomeDriftDetected: the payment and the settlement are the
	// intent's, but an amount differs from the frozen economics or the
	// settlement's postings (net, fee, gross, credited amount, balance of
	// the movement's postings).
	OutcomeDriftDetected ReconciliationOutcome = "DRIFT_DETECTED"
	// OutcomeRequiresReview: an identity or integrity check failed (the
	// stored economics no longer match their hash; the transaction is
	// missing, failed or unreadable; signer, mint, accounts, reference or
	// memo differ; no settlement movement, or more than one), so nobody
	// can tell what happened without a person.
	OutcomeRequiresReview ReconciliationOutcome = "REQUIRES_REVIEW"
)

// ReconciliationOutcomes lists the outcomes, from best to worst.
func ReconciliationOutcomes() []ReconciliationOutcome {
	return []ReconciliationOutcome{OutcomeMatch, OutcomeDriftDetected, OutcomeRequiresReview}
}

// Check is one comparison of a reconciliation: what the intent (or the
// purpose's pricing) expected, what the chain or the settlement showed,
// and whether they agree. Name is one of the names Compare documents.
type Check struct {
	Name     string
	Expected string
	Actual   string
	Passed   bool
}

// Reconciliation is the record of one intent's reconciliation: the
// outcome, every check as evidence, and what was observed on the chain.
// There is exactly one per intent, and it is never corrected: a new
// finding needs a person, not a second record.
type Reconciliation struct {
	// ID is the record's id ("rec_..."); IntentID the reconciled intent.
	ID       string
	IntentID string
	// Actor is the intent's actor (its tenant, workspace and environment
	// scope the record).
	Actor Actor
	// Outcome is the conclusion; Reason says why it is not MATCH (the
	// failed checks, or why the chain could not be read); "" for MATCH.
	Outcome ReconciliationOutcome
	Reason  string
	// Checks is the evidence, in Compare's order.
	Checks []Check
	// Signature is the transaction signature that was read again; Slot
	// and BlockTime where and when it landed (zero when not observed).
	Signature string
	Slot      uint64
	BlockTime time.Time
	// ObservedAt is when the chain was read; CreatedAt when the record
	// was written.
	ObservedAt time.Time
	CreatedAt  time.Time
}

// ChainRecord is what reconciliation read from the chain about an
// intent's bound signature, before its unit of work.
type ChainRecord struct {
	// Network is the CAIP-2 id of the cluster read; "" when it could not
	// be read.
	Network string
	// Commitment is the level the transaction was read at: the purpose's
	// settlement threshold.
	Commitment chain.Commitment
	// Transaction is the landed transaction at Commitment; nil when the
	// cluster answered that it does not know it, or was not asked.
	Transaction *chain.Transaction
	// Unreadable, when not empty, is why the cluster could not be read (a
	// fault code and the read, never the node's message); nothing else is
	// known then.
	Unreadable string
	// ObservedAt is when the reads ended.
	ObservedAt time.Time
}

// Settlement is a purpose's settlement of one intent as its
// SettlementFunc reads it back: the accounts its Settle moves value
// between and every movement found under the intent's settlement
// reference.
type Settlement struct {
	// Credit is the account a settlement credits (the beneficiary, such
	// as "workspace:credits"); Debit the account it draws from (such as
	// "system:grants").
	Credit string
	Debit  string
	// Movements are the movements carrying the settlement reference, in
	// any workspace or environment of the intent's tenant. Exactly one,
	// in the intent's own scope, is expected.
	Movements []SettlementMovement
	// LegCredits maps a leg's role to the account the settlement credits
	// with that leg's net (a sale's seller proceeds and platform fee), for
	// a purpose that prices legs; each named leg is checked. Credit may
	// then be empty: what is bought (a license) is no amount on an
	// account, and settlement.amount is not checked.
	LegCredits map[string]string
}

// SettlementMovement is one movement of a settlement with its postings.
type SettlementMovement struct {
	// ID is the movement's id and Reference its business reference.
	ID        string
	Reference string
	// Scope is the tenant, workspace and environment it was posted in.
	Scope access.Scope
	// Postings are its lines.
	Postings []SettlementPosting
}

// SettlementPosting is one line of a settlement movement.
type SettlementPosting struct {
	// Account is the ledger account.
	Account string
	// Credit is true for a credit (value into Account), false for a debit.
	Credit bool
	// Amount is the posting's amount in the ledger's atomic units.
	Amount money.Atomic
}

// severity is how much a failed check weighs: drift is an amount off the
// model, review an identity or integrity failure.
type severity int

const (
	drift severity = iota + 1
	review
)

// checklist collects checks and the worst failure.
type checklist struct {
	checks []Check
	worst  severity
}

// add records a check that passes when actual equals expected.
func (c *checklist) add(name, expected, actual string, sev severity) {
	c.addIf(name, expected, actual, expected == actual, sev)
}

// addIf records a check with its own verdict.
func (c *checklist) addIf(name, expected, actual string, passed bool, sev severity) {
	c.checks = append(c.checks, Check{Name: name, Expected: expected, Actual: actual, Passed: passed})
	if !passed && sev > c.worst {
		c.worst = sev
	}
}

// outcome is the outcome the failures decide.
func (c *checklist) outcome() ReconciliationOutcome {
	switch c.worst {
	case review:
		return OutcomeRequiresReview
	case drift:
		return OutcomeDriftDetected
	}
	return OutcomeMatch
}

// Compare is reconciliation's comparison, a pure function of the intent,
// the chain's record of its signature and the purpose's settlement. It
// returns the outcome and every check it made, in this order:
//
//   - intent.economicsHash: the stored economics still hash to
//     EconomicsHash (review).
//   - chain.read: only when the cluster could not be read (review).
//   - chain.network: the cluster read is the intent's network (review;
//     on a mismatch nothing else of the chain is compared).
//   - chain.transaction: the signature's transaction exists at the
//     purpose's threshold (review; when missing, the chain checks below
//     are skipped).
//   - chain.signature, chain.success, chain.signer (fee payer, and a
//     signer), chain.program, chain.instruction (TransferChecked or
//     TransferCheckedWithFee last), chain.source, chain.mint,
//     chain.destination, chain.recipient (the treasury owns the
//     destination), chain.reference, chain.memo, chain.decimals (review).
//   - chain.gross (the transfer's amount), chain.net (what the treasury's
//     account gained, post − pre), chain.fee (gross − net, the fee
//     withheld) against the frozen gross, net and fee (drift).
//   - for an intent with Legs, in place of the transfer checks above:
//     chain.legs (one token instruction per leg), chain.instruction (the
//     transfers last, one after another), chain.memo (immediately before
//     the first), then for each leg i chain.legs[i].program,
//     .instruction, .source, .mint, .destination, .recipient (the leg's
//     recipient owns its destination), .reference, .decimals (review)
//     and chain.legs[i].gross, .net, .fee (drift); a missing leg is
//     chain.legs[i].instruction "missing" and a token instruction beyond
//     the legs chain.legs[i] (review).
//   - settlement.movements: exactly one movement (review: none means the
//     effect is missing, two mean it was applied twice).
//   - settlement.scope: that movement is in the intent's tenant,
//     workspace and environment (review).
//   - settlement.amount: it credits Settlement.Credit with the quantity
//     the purpose priced (drift); skipped when Credit is empty.
//   - settlement.legs[i].amount: for each leg whose role
//     Settlement.LegCredits names, the movement credits that account with
//     the leg's net (drift).
//   - settlement.balanced: its debits equal its credits (drift).
//
// The outcome is REQUIRES_REVIEW when a review check failed, else
// DRIFT_DETECTED when a drift check failed, else MATCH. A second
// settlement movement is REQUIRES_REVIEW, not drift: value was granted
// twice, which no rounding explains.
func Compare(it Intent, rec ChainRecord, s Settlement) (ReconciliationOutcome, []Check) {
	var c checklist
	c.add("intent.economicsHash", it.EconomicsHash, ComputeEconomicsHash(it), review)
	compareChain(&c, it, rec)
	compareSettlement(&c, it, s)
	return c.outcome(), c.checks
}

// compareChain adds the chain checks.
func compareChain(c *checklist, it Intent, rec ChainRecord) {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	want := "present at " + string(rec.Commitment)
	if rec.Unreadable != "" {
		c.add("chain.read", want, "unreadable: "+rec.Unreadable, review)
		return
	}
	c.add("chain.network", it.Network, rec.Network, review)
	if rec.Network != it.Network {
		return
	}
	if rec.Transaction == nil {
		c.add("chain.transaction", want, "missing", review)
		return
	}
	c.add("chain.transaction", want, want, review)
	tx := *rec.Transaction
	c.add("chain.signature", it.Signature, tx.Signature, review)
	success := "ok"
	if tx.Err != "" {
		success = tx.Err
	}
	c.add("chain.success", "ok", success, review)
	signer := ""
	if len(tx.AccountKeys) > 0 {
		signer = tx.AccountKeys[0].String()
		if tx.NumSigners < 1 {
			signer += " (not a signer)"
		}
	}
	c.add("chain.signer", it.Payer.String(), signer, review)
	if len(it.Legs) > 0 {
		compareLegs(c, it, tx)
		return
	}

	n := len(tx.Instructions)
	if n == 0 {
		c.add("chain.instruction", "token transfer last", "no instructions", review)
		return
	}
	ix := tx.Instructions[n-1]
	c.add("chain.program", it.TokenProgram.String(), ix.ProgramID.String(), review)
	tk, ok := message.DecodeTransfer(ix.Data)
	kind := "other"
	switch {
	case ok && tk.WithFee:
		kind = "TransferCheckedWithFee"
	case ok:
		kind = "TransferChecked"
	}
	c.addIf("chain.instruction", "TransferChecked or TransferCheckedWithFee", kind, ok, review)
	acct := func(i int) string {
		if i < len(ix.Accounts) {
			return ix.Accounts[i].String()
		}
		return "missing"
	}
	c.add("chain.source", it.Source.String(), acct(0), review)
	post, pre := tokenBalances(tx, it.Destination)
	mint := acct(1)
	if post != nil && post.Mint != it.Mint {
		mint = post.Mint.String()
	}
	c.add("chain.mint", it.Mint.String(), mint, review)
	c.add("chain.destination", it.Destination.String(), acct(2), review)
	owner := "missing"
	if post != nil {
		owner = post.Owner.String()
	}
	c.add("chain.recipient", it.Recipient.String(), owner, review)
	refs := "missing"
	if len(ix.Accounts) > 4 {
		parts := make([]string, 0, len(ix.Accounts)-4)
		for _, a := range ix.Accounts[4:] {
			parts = append(parts, a.String())
		}
		refs = strings.Join(parts, ",")
	}
	c.add("chain.reference", it.Reference.String(), refs, review)
	memo := "absent"
	if n >= 2 && isMemoProgram(tx.Instructions[n-2].ProgramID) {
		memo = string(tx.Instructions[n-2].Data)
	} else if it.Origin == OriginReference {
		// A wallet-built Solana Pay transfer may omit the memo (the
		// reference binds it), as effect verification accepted.
		memo = it.Memo
	}
	c.add("chain.memo", it.Memo, memo, review)
	if !ok {
		return
	}
	c.add("chain.decimals", u(uint64(it.Decimals)), u(uint64(tk.Decimals)), review)
	c.add("chain.gross", u(it.GrossAtomic), u(tk.Amount), drift)
	if post == nil {
		c.add("chain.net", u(it.NetAtomic), "missing", review)
		return
	}
	var before uint64
	if pre != nil {
		before = pre.Amount
	}
	c.add("chain.net", u(it.NetAtomic), diff(post.Amount, before), drift)
	if post.Amount >= before {
		c.add("chain.fee", u(it.FeeAtomic), diff(tk.Amount, post.Amount-before), drift)
	} else {
		c.add("chain.fee", u(it.FeeAtomic), "unknown", drift)
	}
}

// compareLegs adds the transfer checks of an intent with Legs, each
// leg's named chain.legs[i].<check>.
func compareLegs(c *checklist, it Intent, tx chain.Transaction) {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	tokens := tokenInstructions(tx)
	c.add("chain.legs", u(uint64(len(it.Legs))), u(uint64(len(tokens))), review)
	layout := "transfers last"
	if !transfersLast(tx, tokens) {
		layout = "other instructions among or after the transfers"
	}
	c.add("chain.instruction", "transfers last", layout, review)
	memo := "absent"
	if len(tokens) > 0 && tokens[0] > 0 && isMemoProgram(tx.Instructions[tokens[0]-1].ProgramID) {
		memo = string(tx.Instructions[tokens[0]-1].Data)
	} else if it.Origin == OriginReference {
		memo = it.Memo
	}
	c.add("chain.memo", it.Memo, memo, review)
	for i := range max(len(it.Legs), len(tokens)) {
		name := func(check string) string { return "chain." + legField(i, check) }
		switch {
		case i >= len(tokens):
			c.add(name("instruction"), "TransferChecked or TransferCheckedWithFee", "missing", review)
			continue
		case i >= len(it.Legs):
			c.add(name(""), "absent", "token instruction "+u(uint64(tokens[i])), review)
			continue
		}
		l, ix := it.Legs[i], tx.Instructions[tokens[i]]
		c.add(name("program"), it.TokenProgram.String(), ix.ProgramID.String(), review)
		tk, ok := message.DecodeTransfer(ix.Data)
		kind := "other"
		switch {
		case ok && tk.WithFee:
			kind = "TransferCheckedWithFee"
		case ok:
			kind = "TransferChecked"
		}
		c.addIf(name("instruction"), "TransferChecked or TransferCheckedWithFee", kind, ok, review)
		acct := func(k int) string {
			if k < len(ix.Accounts) {
				return ix.Accounts[k].String()
			}
			return "missing"
		}
		c.add(name("source"), it.Source.String(), acct(0), review)
		post, pre := tokenBalances(tx, l.Destination)
		mint := acct(1)
		if post != nil && post.Mint != it.Mint {
			mint = post.Mint.String()
		}
		c.add(name("mint"), it.Mint.String(), mint, review)
		c.add(name("destination"), l.Destination.String(), acct(2), review)
		owner := "missing"
		if post != nil {
			owner = post.Owner.String()
		}
		c.add(name("recipient"), l.Recipient.String(), owner, review)
		refs := "missing"
		if len(ix.Accounts) > 4 {
			parts := make([]string, 0, len(ix.Accounts)-4)
			for _, a := range ix.Accounts[4:] {
				parts = append(parts, a.String())
			}
			refs = strings.Join(parts, ",")
		}
		c.add(name("reference"), it.Reference.String(), refs, review)
		if !ok {
			continue
		}
		c.add(name("decimals"), u(uint64(it.Decimals)), u(uint64(tk.Decimals)), review)
		c.add(name("gross"), u(l.GrossAtomic), u(tk.Amount), drift)
		if post == nil {
			c.add(name("net"), u(l.NetAtomic), "missing", review)
			continue
		}
		var before uint64
		if pre != nil {
			before = pre.Amount
		}
		c.add(name("net"), u(l.NetAtomic), diff(post.Amount, before), drift)
		if post.Amount >= before {
			c.add(name("fee"), u(l.FeeAtomic), diff(tk.Amount, post.Amount-before), drift)
		} else {
			c.add(name("fee"), u(l.FeeAtomic), "unknown", drift)
		}
	}
}

// diff is a − b as a decimal string, negative when b > a.
func diff(a, b uint64) string {
	if a >= b {
		return strconv.FormatUint(a-b, 10)
	}
	return "-" + strconv.FormatUint(b-a, 10)
}

// tokenBalances returns the post and pre balance entries of account in
// tx (nil when absent).
func tokenBalances(tx chain.Transaction, account chain.Address) (post, pre *chain.TokenBalance) {
	for i := range tx.PostTokenBalances {
		if balanceAccount(tx, tx.PostTokenBalances[i]) == account {
			post = &tx.PostTokenBalances[i]
		}
	}
	for i := range tx.PreTokenBalances {
		if balanceAccount(tx, tx.PreTokenBalances[i]) == account {
			pre = &tx.PreTokenBalances[i]
		}
	}
	return post, pre
}

// scopeText names a scope in evidence: tenant/workspace/environment.
func scopeText(sc access.Scope) string {
	return sc.TenantID + "/" + sc.WorkspaceID + "/" + string(sc.Environment)
}

// compareSettlement adds the settlement checks.
func compareSettlement(c *checklist, it Intent, s Settlement) {
	c.add("settlement.movements", "1", strconv.Itoa(len(s.Movements)), review)
	if len(s.Movements) == 0 {
		return
	}
	want := it.Actor.Scope()
	m := s.Movements[0]
	for _, x := range s.Movements {
		if x.Scope == want {
			m = x
			break
		}
	}
	c.add("settlement.scope", scopeText(want), scopeText(m.Scope), review)
	var debits, credits money.Sum
	overflow := false
	for _, p := range m.Postings {
		var err error
		if p.Credit {
			credits, err = credits.AddAtomic(p.Amount)
		} else {
			debits, err = debits.AddAtomic(p.Amount)
		}
		overflow = overflow || err != nil
	}
	// credited is what m credits account with, net of debits to it.
	credited := func(account string) string {
		var sum money.Sum
		for _, p := range m.Postings {
			if p.Account != account {
				continue
			}
			var err error
			if p.Credit {
				sum, err = sum.AddAtomic(p.Amount)
			} else {
				sum, err = sum.SubAtomic(p.Amount)
			}
			if err != nil {
				return "overflow"
			}
		}
		return sum.String()
	}
	if s.Credit != "" {
		amount := credited(s.Credit)
		if overflow {
			amount = "overflow"
		}
		c.add("settlement.amount", it.Quantity, amount, drift)
	}
	for i, l := range it.Legs {
		if account, ok := s.LegCredits[l.Role]; ok {
			c.add("settlement."+legField(i, "amount"), strconv.FormatUint(l.NetAtomic, 10), credited(account), drift)
		}
	}
	balanced := "balanced"
	if debits.Cmp(credits) != 0 || overflow {
		balanced = "debits " + debits.String() + ", credits " + credits.String()
	}
	c.add("settlement.balanced", "balanced", balanced, drift)
}

// failedReason lists the failed checks of a conclusion.
func failedReason(checks []Check) string {
	var names []string
	for _, c := range checks {
		if !c.Passed {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "failed checks: " + strings.Join(names, ", ")
}

// ReconcileOptions tune ReconcileSettled.
type ReconcileOptions struct {
	// LastAttempt says no retry follows: a cluster that cannot be read is
	// then concluded REQUIRES_REVIEW, with the reason, instead of leaving
	// the intent RECONCILING. Never MATCH.
	LastAttempt bool
	// Attempts is how many times the caller tried, for that reason.
	Attempts int
}

// ReconcileSettled is the reconciliation job's body: it compares one
// settled intent with the chain's record of its signature and with what
// its purpose's Settle wrote, records the outcome with the evidence and
// moves the intent to RECONCILED. It never corrects anything: no ledger
// write, no reversal, no second settlement (spec, Errors 5).
//
// A SETTLED intent first moves to RECONCILING (its own unit of work). The
// chain is then read outside any unit of work: the cluster's network, and
// getTransaction at the purpose's threshold. A cluster that cannot be read
// leaves the intent RECONCILING and returns PROVIDER_UNAVAILABLE, so the
// job retries with back-off; with opts.LastAttempt the conclusion is
// REQUIRES_REVIEW instead. A transaction the cluster answers it does not
// know is evidence (REQUIRES_REVIEW), not an outage. Finally one unit of
// work locks the intent, reads the settlement through the purpose's
// Settlement reader, runs Compare, inserts the record (one per intent)
// and moves RECONCILING to RECONCILED with a compare-and-set on the
// version; the intent's outbox event is written there.
//
// Runs that race converge on one record: the loser of the move to
// RECONCILING continues from the winner's state, and a run that finds the
// intent RECONCILED under its lock returns the existing record. An intent
// in any other state is returned unchanged.
//
// Errors: NOT_FOUND; PROVIDER_UNAVAILABLE (or SERVICE_UNAVAILABLE without
// a configured cluster) when the chain cannot be read and this is not the
// last attempt; CONFLICT when the intent changed meanwhile; the
// Settlement reader's and the store's errors.
func (s *Service) ReconcileSettled(ctx context.Context, id string, opts ReconcileOptions) (Outcome, error) {
	const op = "intent.ReconcileSettled"
	it, err := s.cfg.ReadFunc().Intent(ctx, id)
	if err != nil {
		return Outcome{}, fault.Wrap(op, err)
	}
	// Take a settled intent. A lost compare-and-set (another run, or the
	// watch following the network state) is re-read and retried.
	for try := 0; it.State == StateSettled; try++ {
		next := it
		next.Version++
		next.UpdatedAt = s.cfg.Clock.Now().UTC()
		if next.State, err = Transit(it.State, EventReconcile); err != nil {
			return Outcome{Intent: it}, err
		}
		o, err := s.apply(ctx, op, it, next, "", false)
		switch {
		case err == nil:
			it = o.Intent
		case fault.Is(err, fault.Conflict) && try < 3:
			if it, err = s.cfg.ReadFunc().Intent(ctx, id); err != nil {
				return Outcome{}, fault.Wrap(op, err)
			}
		default:
			return o, err
		}
	}
	switch it.State {
	case StateReconciled:
		return s.reconciled(ctx, op, s.cfg.ReadFunc(), it)
	case StateReconciling:
	default:
		return Outcome{Intent: it}, nil
	}
	p, err := s.cfg.Registry.Lookup(it.Purpose)
	if err != nil {
		return Outcome{Intent: it}, fault.Wrap(op, err)
	}
	rec, readErr := s.readRecord(ctx, op, it, p.Threshold)
	if readErr != nil && !opts.LastAttempt {
		return Outcome{Intent: it}, readErr
	}
	var out Outcome
	err = s.run(ctx, func(st Store) error {
		cur, err := st.LockIntent(ctx, id)
		if err != nil {
			return err
		}
		switch cur.State {
		case StateReconciled:
			// A racing run concluded first: its record stands.
			out, err = s.reconciled(ctx, op, st, cur)
			return err
		case StateReconciling:
		default:
			return fault.E(op, fault.InvalidState, "the intent is not being reconciled").With("state", string(cur.State))
		}
		settlement, err := p.Settlement(ctx, st, cur)
		if err != nil {
			return err
		}
		outcome, checks := Compare(cur, rec, settlement)
		now := s.cfg.Clock.Now().UTC()
		r := Reconciliation{ID: "rec_" + s.cfg.NewIDFunc(), IntentID: cur.ID, Actor: cur.Actor, Outcome: outcome,
			Reason: failedReason(checks), Checks: checks, Signature: cur.Signature, ObservedAt: rec.ObservedAt, CreatedAt: now}
		if rec.Unreadable != "" {
			r.Reason = "the chain could not be read (" + rec.Unreadable + ") after " + strconv.Itoa(max(opts.Attempts, 1)) + " attempts"
		}
		if tx := rec.Transaction; tx != nil {
			r.Slot = tx.Slot
			if tx.BlockTime != nil {
				r.BlockTime = tx.BlockTime.UTC()
			}
		}
		if err := st.InsertReconciliation(ctx, r); err != nil {
			return err
		}
		next := cur
		next.Version++
		if next.State, err = Transit(cur.State, EventConclude); err != nil {
			return err
		}
		next.ReconciliationID, next.ReconciliationOutcome, next.ReconciledAt, next.UpdatedAt = r.ID, outcome, now, now
		switch outcome {
		case OutcomeDriftDetected:
			next.LastError = fault.ReconciliationDrift
		case OutcomeRequiresReview:
			next.LastError = fault.RequiresReview
		default:
			next.LastError = ""
		}
		if err := st.UpdateIntent(ctx, next, cur.Version); err != nil {
			return err
		}
		out = Outcome{Intent: next, Changed: true, Reconciliation: &r}
		return s.changed(ctx, st, next)
	})
	if err != nil {
		return Outcome{Intent: it}, fault.Wrap(op, err)
	}
	return out, nil
}

// reconciled returns a reconciled intent with its record.
func (s *Service) reconciled(ctx context.Context, op string, st Store, it Intent) (Outcome, error) {
	r, err := st.Reconciliation(ctx, it.ID)
	if err != nil {
		return Outcome{Intent: it}, fault.Wrap(op, err)
	}
	return Outcome{Intent: it, Reconciliation: &r}, nil
}

// readRecord reads the chain's record of it's signature at threshold:
// the cluster's network, then (on the intent's network) the transaction.
// The error is set, with rec.Unreadable, only when the cluster could not
// be read; an unknown transaction is a record without one.
func (s *Service) readRecord(ctx context.Context, op string, it Intent, threshold chain.Commitment) (ChainRecord, error) {
	rec := ChainRecord{Commitment: threshold}
	done := func(read string, err error) (ChainRecord, error) {
		rec.ObservedAt = s.cfg.Clock.Now().UTC()
		if err != nil {
			rec.Unreadable = string(fault.CodeOf(err)) + " reading " + read
		}
		return rec, err
	}
	envc, err := s.env(op, it.Actor.Environment)
	if err != nil {
		return done("cluster", err)
	}
	if rec.Network, err = network(ctx, op, envc.Client); err != nil {
		return done("genesisHash", err)
	}
	if rec.Network != it.Network {
		return done("", nil)
	}
	tx, err := envc.Client.GetTransaction(ctx, it.Signature, threshold)
	switch {
	case errors.Is(err, chain.ErrTransactionNotFound):
	case err != nil:
		return done("transaction", chainErr(op, "transaction", err))
	default:
		rec.Transaction = &tx
	}
	return done("", nil)
}

// Reconciliation returns the reconciliation record of it, which the
// caller already read (and authorized); nil before it is RECONCILED.
func (s *Service) Reconciliation(ctx context.Context, it Intent) (*Reconciliation, error) {
	if it.ReconciliationID == "" {
		return nil, nil
	}
	r, err := s.cfg.ReadFunc().Reconciliation(ctx, it.ID)
	if err != nil {
		return nil, fault.Wrap("intent.Reconciliation", err)
	}
	return &r, nil
}
