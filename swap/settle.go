package swap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
)

// Settlement and reconciliation: what happens to a swap once its
// transaction was submitted (spec, "Swap operation": SUBMITTED onward and
// SETTLED; swap.md §2 and §7).
//
// Settle reads the bound signature's transaction from the environment's
// cluster at confirmed commitment, outside any unit of work, verifies it
// against the intent (Verify) and then, in one unit of work that
// compare-and-sets the operation's version at every move, walks the
// operation forward: SUBMITTED, CONFIRMING, CONFIRMED, then FAILED on
// meta.err, REQUIRES_REVIEW on a failed check, or VERIFYING, VERIFIED,
// SETTLING, SETTLED with the one settlement record, the one financial
// ledger movement of the fee received and the reconciliation job. The
// verification is stored whatever it found. Every caller (the verify
// route, the watch job, retries, refreshes) converges on that one
// outcome: a unit of work that loses the race for the operation's version
// rolls back and the next attempt finds the outcome written.
//
// Reconciliation (the JobReconcile job) reads the transaction again at
// finalized commitment, verifies it again, runs Reconcile over quote,
// intent and those effects, compares the settlement record and the ledger
// movement with them, and stores one reconciliation record per operation,
// moving SETTLED through RECONCILING to RECONCILED (MATCH, DRIFT_DETECTED)
// or REQUIRES_REVIEW. Drift is reported, never corrected.
//
// Decision, the fee's ledger movement. The service fee the fee
// recipient's account actually gained (the verification's FeeReceived,
// net of any Token-2022 transfer fee withheld on it) is platform revenue
// when the swap settles, and is recorded on the financial ledger in the
// swap owner's tenant, workspace and environment (test-mode revenue never
// mixes with live; the financial ledger's readers need treasury.read), as
// one movement of two postings, in the fee mint's atomic units and
// decimals: a debit of FeeRevenueAccount(mint), the system revenue
// account of swap fees in that mint (a source, so its balance is minus
// the revenue recognized), and a credit of FeeRecipientAccount(recipient,
// mint), the platform's holding of that mint in the fee recipient's
// wallet (its balance follows what the fees put there). Accounts are per
// mint because an account keeps one decimals and amounts of two mints
// never add. The withheld transfer fee is not revenue: it belongs to the
// mint's withdraw authority and is harvested outside swaps; the
// settlement keeps both the intended fee and the fee received. The
// movement's reference is FeeReference(operationID), "swap_fee:<id>", so
// the ledger itself refuses a second movement for the operation; its
// actor is the swap's user, whoever's call settled it. A fee received of
// zero posts nothing.

// TransactionReader reads landed transactions from a cluster: the part of
// ChainClient that settlement and reconciliation use.
type TransactionReader interface {
	// GetTransaction returns the landed transaction with signature sig as
	// the node's bank at commitment (confirmed or finalized) holds it;
	// chain.ErrTransactionNotFound (wrapped) while it does not show it.
	GetTransaction(ctx context.Context, sig string, commitment chain.Commitment) (chain.Transaction, error)
}

// SettleStore is what settlement and reconciliation write and read beside
// Store, in the same unit of work (Store.SettleStore): the ledger's
// movements, the job queue, and the verification, settlement and
// reconciliation records. Errors are *fault.Error: NOT_FOUND for a missing
// record, CONFLICT for a second one.
type SettleStore interface {
	ledger.Mover
	jobs.Enqueuer
	// SwapSignatureIntent returns the intent of the operation signature is
	// bound to, in any owner's scope ("" when none): signatures are unique
	// across operations.
	SwapSignatureIntent(ctx context.Context, signature string) (string, error)
	// SwapVerificationInsert stores an operation's verification. One per
	// operation: a second, or a taken id, is CONFLICT.
	SwapVerificationInsert(ctx context.Context, r VerificationRecord) error
	// SwapVerification returns the verification of operationID of owner.
	SwapVerification(ctx context.Context, owner Owner, operationID string) (VerificationRecord, error)
	// SwapSettlementInsert stores a settlement. One per operation and one
	// per signature: a second of either, or a taken id, is CONFLICT.
	SwapSettlementInsert(ctx context.Context, s Settlement) error
	// SwapSettlement returns the settlement of operationID of owner.
	SwapSettlement(ctx context.Context, owner Owner, operationID string) (Settlement, error)
	// SwapReconciliationInsert stores a reconciliation. One per operation:
	// a second, or a taken id, is CONFLICT.
	SwapReconciliationInsert(ctx context.Context, r ReconciliationRecord) error
	// SwapReconciliation returns the reconciliation of operationID of
	// owner.
	SwapReconciliation(ctx context.Context, owner Owner, operationID string) (ReconciliationRecord, error)
}

// Id prefixes of the settlement records.
const (
	// VerificationPrefix starts a stored verification's id.
	VerificationPrefix = "swv_"
	// SettlementPrefix starts a settlement's id (settlementId).
	SettlementPrefix = "sws_"
	// ReconciliationPrefix starts a reconciliation's id
	// (reconciliationId).
	ReconciliationPrefix = "swr_"
)

// VerificationRecord is an operation's stored verification: the evidence
// behind its settlement, its failure or its review. Written once.
type VerificationRecord struct {
	// ID is the record's id; Owner the operation's owner.
	ID    string
	Owner Owner
	// Verification is what Verify found, with its operation, intent and
	// signature.
	Verification Verification
	// CreatedAt is when it was stored.
	CreatedAt time.Time
}

// Settlement is the one authoritative settlement of a swap operation:
// what the chain shows the swap moved, as verified. Written once per
// operation and once per signature.
type Settlement struct {
	// ID is the settlement's id (settlementId); OperationID, IntentID and
	// QuoteID what it settles; Owner the operation's owner.
	ID          string
	OperationID string
	IntentID    string
	QuoteID     string
	Owner       Owner
	// Signature is the settled transaction's.
	Signature string
	// FeeMint, FeeDecimals, FeeRecipient and FeeAccount say where the
	// service fee went.
	FeeMint      chain.Address
	FeeDecimals  uint8
	FeeRecipient chain.Address
	FeeAccount   chain.Address
	// ServiceFeeAtomic is the intent's service fee; FeeReceivedAtomic
	// what the fee account gained (less a Token-2022 fee withheld on it).
	ServiceFeeAtomic  money.Atomic
	FeeReceivedAtomic money.Atomic
	// ActualInputAtomic is what left the wallet in the input mint (the
	// service fee included when taken in it); ActualOutputAtomic what
	// reached it in the output mint.
	ActualInputAtomic  money.Atomic
	ActualOutputAtomic money.Atomic
	// Slot and BlockTime say when the transaction landed; ObservedAt when
	// it was read.
	Slot       uint64
	BlockTime  *time.Time
	ObservedAt time.Time
	// MovementID is the financial ledger movement of the fee received
	// ("" when the fee received is zero).
	MovementID string
	// CreatedAt is when it was written.
	CreatedAt time.Time
}

// ReconciliationRecord is an operation's stored reconciliation. Written
// once; never corrected.
type ReconciliationRecord struct {
	// ID is the record's id (reconciliationId); Owner the operation's
	// owner.
	ID    string
	Owner Owner
	// Reconciliation is the outcome with its findings and evidence.
	Reconciliation Reconciliation
	// CreatedAt is when it was written.
	CreatedAt time.Time
}

// Rules of reconciliation beside Reconcile's own.
const (
	// RuleSettlement: the settlement record differs from the finalized
	// transaction's effects (a field named in Expected).
	RuleSettlement Rule = "settlement"
	// RuleFeeMovement: the ledger movement of the fee is missing or
	// differs from the settlement's fee received.
	RuleFeeMovement Rule = "feeMovement"
)

// JobReconcile reconciles one settled operation (payload
// reconcilePayload; key "swap.reconcile:<operationId>"; ReconcileAttempts
// attempts), enqueued in the unit of work that settles it. Rows in
// existing databases carry this name, payload and key.
const JobReconcile = "swap.reconcile"

// ReconcileAttempts bounds a reconciliation job: a transaction still not
// finalized, or a cluster still unreadable, on the last attempt (after
// about 17 minutes of back-off) concludes REQUIRES_REVIEW, data missing.
const ReconcileAttempts = 10

// settleAttempts bounds the units of work one Settle call tries: a unit
// that lost the operation's version to another caller rolls back, and the
// next finds the outcome that caller wrote.
const settleAttempts = 3

// FeeReference is the business reference of an operation's fee movement
// on the financial ledger.
func FeeReference(operationID string) string { return "swap_fee:" + operationID }

// FeeRevenueAccount is the financial ledger's revenue account of swap
// service fees taken in mint: a system account, debited by every fee
// received, so that its balance is minus the revenue recognized.
func FeeRevenueAccount(mint chain.Address) string { return "system:swap-fee-revenue:" + mint.String() }

// FeeRecipientAccount is the financial ledger's account of the platform's
// holding of mint in the fee recipient's wallet, credited by every fee
// received.
func FeeRecipientAccount(recipient, mint chain.Address) string {
	return "swap-fee-recipient:" + recipient.String() + ":" + mint.String()
}

// SettleResult is where an operation stands after Settle, with its
// records.
type SettleResult struct {
	// Intent and Operation are the operation's, as written last.
	Intent    Intent
	Operation Operation
	// Pending says the cluster does not show the bound transaction at
	// confirmed commitment yet: the operation stays where it was (SUBMITTED
	// or CONFIRMING) and a later call continues.
	Pending bool
	// Verification, Settlement and Reconciliation are the stored records,
	// nil while none exists.
	Verification   *VerificationRecord
	Settlement     *Settlement
	Reconciliation *ReconciliationRecord
}

// settleable reports whether Settle reads the chain for an operation in
// s: a submitted transaction not yet verified.
func settleable(s State) bool {
	return s == StateSubmitted || s == StateConfirming || s == StateConfirmed || s == StateVerifying
}

// Settle verifies and settles the swap of intentID of owner (the verify
// route's and the watch job's work). Browser-supplied effects are never
// read: only the cluster's record of the operation's bound signature.
//
//   - The intent and operation are owner's: NOT_FOUND otherwise.
//   - An operation without a bound, submitted signature is
//     INVALID_STATE_TRANSITION (details from, event).
//   - An operation already past verification (settled, reconciled,
//     failed, in review) answers its records and changes nothing.
//   - Otherwise the transaction is read at confirmed commitment from
//     owner's environment (SWAP_NOT_CONFIGURED without a cluster,
//     PROVIDER_UNAVAILABLE when it cannot be read, NETWORK_MISMATCH when
//     the cluster is not the intent's network). Not found yet: the
//     answer is Pending and nothing changes. Found: it is verified and
//     settled in one unit of work (see the package's settlement notes):
//     meta.err moves the operation to FAILED (lastError
//     TRANSACTION_FAILED), a failed check to REQUIRES_REVIEW (lastError
//     VERIFICATION_FAILED), and success to SETTLED.
//
// The Token-2022 transfer fees are the intent's frozen ones: the prepared
// transaction pays the service fee with TransferCheckedWithFee and the
// frozen fee, which the token program refuses unless it is the fee in
// force at the transaction's epoch, so a transaction that succeeded
// proves the input mint's fee; the output mint's is reconciled against
// the same snapshot.
func (s *Service) Settle(ctx context.Context, owner Owner, intentID string) (SettleResult, error) {
	const op = "swap.Settle"
	read := s.cfg.ReadFunc()
	it, _, err := read.SwapIntent(ctx, owner, intentID)
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	o, err := read.SwapOperation(ctx, owner, it.OperationID)
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	if !settleable(o.State) {
		if o.Signature == "" || o.State == StateSigned {
			_, err := Transition(o.State, EventLand)
			return SettleResult{}, fault.Wrap(op, err)
		}
		return s.answer(ctx, read, it, o, false)
	}
	e := s.cfg.Environments[owner.Environment]
	if e.Chain == nil {
		return SettleResult{}, notConfigured(op, "cluster_not_configured")
	}
	tx, network, found, err := s.landed(ctx, e.Chain, it, o.Signature, chain.Confirmed)
	if err != nil {
		return SettleResult{}, err
	}
	if !found {
		return s.answer(ctx, read, it, o, true)
	}
	v, err := s.verify(ctx, read.SettleStore(), e, it, tx, network)
	if err != nil {
		return SettleResult{}, err
	}
	for attempt := 1; ; attempt++ {
		err = s.cfg.Run(ctx, func(st Store) error { return s.settleIn(ctx, st, it, v) })
		if !fault.Is(err, fault.Conflict) || attempt == settleAttempts {
			break
		}
	}
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	if o, err = read.SwapOperation(ctx, owner, it.OperationID); err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	return s.answer(ctx, read, it, o, false)
}

// landed reads sig's transaction at commitment from c after checking that
// c is the intent's network; found is false while c does not show it.
func (s *Service) landed(ctx context.Context, c ChainClient, it Intent, sig string, commitment chain.Commitment) (chain.Transaction, chain.Network, bool, error) {
	const op = "swap.landed"
	genesis, err := c.GetGenesisHash(ctx)
	if err != nil {
		return chain.Transaction{}, chain.Network{}, false, providerUnavailable(op, "cluster_unreadable", err)
	}
	network := chain.Network{GenesisHash: genesis}
	if network.CAIP2() != it.Network {
		return chain.Transaction{}, chain.Network{}, false, fault.E(op, fault.NetworkMismatch,
			"The environment's cluster is not the network the intent was bound on.").
			With("expected", it.Network).With("actual", network.CAIP2())
	}
	tx, err := c.GetTransaction(ctx, sig, commitment)
	if errors.Is(err, chain.ErrTransactionNotFound) {
		return chain.Transaction{}, network, false, nil
	}
	if err != nil {
		return chain.Transaction{}, chain.Network{}, false, providerUnavailable(op, "cluster_unreadable", err)
	}
	if tx.Signature != sig {
		return chain.Transaction{}, chain.Network{}, false, providerUnavailable(op, "cluster_answer",
			fmt.Errorf("asked for %s, the cluster answered %s", sig, tx.Signature))
	}
	return tx, network, true, nil
}

// observed converts a landed transaction for Verify: its full key list
// (loaded addresses included, which balances and instructions index) and
// its lamport balances when they cover every key.
func observed(tx chain.Transaction, network chain.Network) Observed {
	ob := ObservedFrom(tx, network)
	ob.Keys = tx.Keys()
	if len(tx.PreBalances) == len(ob.Keys) && len(tx.PostBalances) == len(ob.Keys) {
		ob.PreBalances, ob.PostBalances = slices.Clone(tx.PreBalances), slices.Clone(tx.PostBalances)
	}
	return ob
}

// verify runs Verify over tx for it: the environment's swap programs
// allowed beside the base programs, the intent's frozen transfer fees,
// and uniqueness read from the operations' bound signatures.
func (s *Service) verify(ctx context.Context, ss SettleStore, e Environment, it Intent, tx chain.Transaction, network chain.Network) (Verification, error) {
	fees := map[chain.Address]token2022.TransferFee{it.InputMint: it.InputTransferFee, it.OutputMint: it.OutputTransferFee}
	v, err := Verify(VerifyParams{Intent: it, Observed: observed(tx, network), SwapPrograms: e.SwapPrograms, TransferFees: fees,
		BoundIntentFunc: func(sig string) (string, error) { return ss.SwapSignatureIntent(ctx, sig) },
		ObservedAt:      s.cfg.Clock.Now().UTC()})
	if err != nil {
		return Verification{}, fault.Wrap("swap.verify", err)
	}
	return v, nil
}

// mover moves one operation in a unit of work: each move compare-and-sets
// the version and writes the move's event.
type mover struct {
	ctx context.Context
	st  Store
	o   Operation
}

// move applies e and sets the operation's last error.
func (m *mover) move(e Event, lastError fault.Code) error {
	prev := m.o.Version
	n, err := m.o.Move(e, m.st.Now())
	if err != nil {
		return err
	}
	n.LastError = string(lastError)
	if err := m.st.SwapOperationUpdate(m.ctx, n, prev); err != nil {
		return err
	}
	if err := changed(m.ctx, m.st, n); err != nil {
		return err
	}
	m.o = n
	return nil
}

// settleIn is Settle's unit of work: it re-reads the operation and walks
// it from where it stands, or does nothing when another caller already
// did.
func (s *Service) settleIn(ctx context.Context, st Store, it Intent, v Verification) error {
	o, err := st.SwapOperation(ctx, it.Owner, it.OperationID)
	if err != nil {
		return err
	}
	if !settleable(o.State) || o.Signature != v.Signature {
		return nil
	}
	ss := st.SettleStore()
	m := &mover{ctx: ctx, st: st, o: o}
	if m.o.State == StateSubmitted {
		if err := m.move(EventLand, ""); err != nil {
			return err
		}
	}
	if m.o.State == StateConfirming {
		if err := m.move(EventConfirm, ""); err != nil {
			return err
		}
	}
	if m.o.State == StateConfirmed && v.Success {
		if err := m.move(EventVerify, ""); err != nil {
			return err
		}
	}
	if err := ss.SwapVerificationInsert(ctx, VerificationRecord{ID: VerificationPrefix + s.cfg.NewIDFunc(), Owner: it.Owner,
		Verification: v, CreatedAt: st.Now()}); err != nil {
		return err
	}
	switch {
	case !v.Success:
		return m.move(EventFail, fault.TransactionFailed)
	case !v.Passed():
		return m.move(EventReview, fault.VerificationFailed)
	}
	for _, e := range []Event{EventVerified, EventSettle} {
		if err := m.move(e, ""); err != nil {
			return err
		}
	}
	if err := s.writeSettlement(ctx, st, ss, it, v); err != nil {
		return err
	}
	if err := m.move(EventSettled, ""); err != nil {
		return err
	}
	return s.EnqueueReconcile(ctx, ss, it)
}

// writeSettlement writes the settlement of a verified transaction and
// the financial ledger movement of the fee received.
func (s *Service) writeSettlement(ctx context.Context, st Store, ss SettleStore, it Intent, v Verification) error {
	amount := func(name string, x money.Sum) (money.Atomic, error) {
		a, ok := x.Atomic()
		if !ok {
			return 0, fault.E("swap.writeSettlement", fault.SettlementFailed, "A verified amount is out of range.").
				With("field", name).With("value", x.String())
		}
		return a, nil
	}
	fee, err := amount("feeReceived", v.FeeReceived)
	if err != nil {
		return err
	}
	in, err := amount("actualInput", v.InputDebited)
	if err != nil {
		return err
	}
	out, err := amount("actualOutput", v.OutputReceived)
	if err != nil {
		return err
	}
	decimals := it.InputDecimals
	if it.FeeMint() == it.OutputMint {
		decimals = it.OutputDecimals
	}
	set := Settlement{ID: SettlementPrefix + s.cfg.NewIDFunc(), OperationID: it.OperationID, IntentID: it.ID, QuoteID: it.QuoteID,
		Owner: it.Owner, Signature: v.Signature, FeeMint: it.FeeMint(), FeeDecimals: decimals, FeeRecipient: it.FeeRecipient,
		FeeAccount: it.FeeAccount, ServiceFeeAtomic: it.ServiceFeeAtomic, FeeReceivedAtomic: fee, ActualInputAtomic: in,
		ActualOutputAtomic: out, Slot: v.Slot, BlockTime: v.BlockTime, ObservedAt: v.ObservedAt, CreatedAt: st.Now()}
	if fee > 0 {
		mint := it.FeeMint()
		posted, _, err := ledger.New().Post(ctx, ss, ledger.Movement{Scope: it.Owner.Scope(), Ledger: ledger.Financial,
			Type: ledger.TypeTransfer, Reference: FeeReference(it.OperationID), Decimals: int(decimals),
			Actor: ledger.Actor{UserID: it.Owner.UserID},
			Postings: []ledger.Posting{
				{Account: FeeRevenueAccount(mint), Direction: ledger.Debit, Amount: fee},
				{Account: FeeRecipientAccount(it.FeeRecipient, mint), Direction: ledger.Credit, Amount: fee},
			}})
		if err != nil {
			return err
		}
		set.MovementID = posted.ID
	}
	return ss.SwapSettlementInsert(ctx, set)
}

// reconcilePayload is JobReconcile's payload: the operation's owner and
// intent.
type reconcilePayload struct {
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	UserID      string `json:"userId"`
	Environment string `json:"environment"`
	IntentID    string `json:"intentId"`
}

// EnqueueReconcile enqueues the reconciliation of it's operation in st's
// unit of work, once per operation (key "swap.reconcile:<operationId>").
func (s *Service) EnqueueReconcile(ctx context.Context, st jobs.Enqueuer, it Intent) error {
	payload, _ := json.Marshal(reconcilePayload{TenantID: it.Owner.TenantID, WorkspaceID: it.Owner.WorkspaceID,
		UserID: it.Owner.UserID, Environment: string(it.Owner.Environment), IntentID: it.ID})
	_, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobReconcile, Payload: payload, MaxAttempts: ReconcileAttempts,
		UniqueKey: JobReconcile + ":" + it.OperationID})
	return err
}

// reconcileJob reconciles the operation of the job's intent; the last
// attempt concludes whatever the cluster answers.
func (s *Service) reconcileJob(ctx context.Context, j jobs.Job) error {
	var in reconcilePayload
	if err := json.Unmarshal(j.Payload, &in); err != nil || in.IntentID == "" {
		return jobs.Permanent(fmt.Errorf("%s: bad payload %q", JobReconcile, j.Payload))
	}
	owner := Owner{TenantID: in.TenantID, WorkspaceID: in.WorkspaceID, UserID: in.UserID, Environment: access.Environment(in.Environment)}
	if !owner.Environment.Valid() {
		return jobs.Permanent(fmt.Errorf("%s: bad environment %q", JobReconcile, in.Environment))
	}
	_, err := s.ReconcileSettled(ctx, owner, in.IntentID, j.Attempts >= j.MaxAttempts)
	return err
}

// ReconcileSettled reconciles the settled swap of intentID of owner (the
// JobReconcile job's work) and returns the operation's result. An
// operation not SETTLED changes nothing. The transaction is read at
// finalized commitment; while it is not final there, or the cluster
// cannot be read, it fails with RESULT_NOT_READY or PROVIDER_UNAVAILABLE
// and changes nothing, so the job retries, unless last is set: the last
// attempt concludes with no transaction, REQUIRES_REVIEW for data missing
// after finality. The outcome is Reconcile's over quote, intent and the
// finalized effects, with REQUIRES_REVIEW findings when the settlement
// record or the fee's ledger movement differs from those effects; it is
// stored once, and the operation moves through RECONCILING to RECONCILED
// (lastError RECONCILIATION_DRIFT on drift) or REQUIRES_REVIEW.
func (s *Service) ReconcileSettled(ctx context.Context, owner Owner, intentID string, last bool) (SettleResult, error) {
	const op = "swap.ReconcileSettled"
	read := s.cfg.ReadFunc()
	it, _, err := read.SwapIntent(ctx, owner, intentID)
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	o, err := read.SwapOperation(ctx, owner, it.OperationID)
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	if o.State != StateSettled {
		return s.answer(ctx, read, it, o, false)
	}
	q, err := read.SwapQuote(ctx, owner, it.QuoteID)
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	in := ReconcileInput{Quote: q, Intent: it, Final: true}
	e := s.cfg.Environments[owner.Environment]
	var v Verification
	switch {
	case e.Chain == nil && !last:
		return SettleResult{}, notConfigured(op, "cluster_not_configured")
	case e.Chain != nil:
		tx, network, found, err := s.landed(ctx, e.Chain, it, o.Signature, chain.Finalized)
		switch {
		case err != nil && !last:
			return SettleResult{}, err
		case err == nil && !found && !last:
			return SettleResult{}, fault.E(op, fault.ResultNotReady, "The transaction is not finalized yet.")
		case err == nil && found:
			if v, err = s.verify(ctx, read.SettleStore(), e, it, tx, network); err != nil {
				return SettleResult{}, err
			}
			in.Verification = &v
		}
	}
	r, err := Reconcile(in)
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	for attempt := 1; ; attempt++ {
		err = s.cfg.Run(ctx, func(st Store) error { return s.reconcileIn(ctx, st, it, r) })
		if !fault.Is(err, fault.Conflict) || attempt == settleAttempts {
			break
		}
	}
	if err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	if o, err = read.SwapOperation(ctx, owner, it.OperationID); err != nil {
		return SettleResult{}, fault.Wrap(op, err)
	}
	return s.answer(ctx, read, it, o, false)
}

// reconcileIn is ReconcileSettled's unit of work: it compares the
// settlement and the fee's movement with the reconciled effects, stores
// the record and moves the operation, or does nothing when another run
// already did.
func (s *Service) reconcileIn(ctx context.Context, st Store, it Intent, r Reconciliation) error {
	o, err := st.SwapOperation(ctx, it.Owner, it.OperationID)
	if err != nil {
		return err
	}
	if o.State != StateSettled {
		return nil
	}
	ss := st.SettleStore()
	set, err := ss.SwapSettlement(ctx, it.Owner, it.OperationID)
	switch {
	case fault.Is(err, fault.NotFound):
		r.Findings = append(r.Findings, Finding{Rule: RuleSettlement, Outcome: OutcomeRequiresReview, Expected: "settlement", Actual: "none"})
	case err != nil:
		return err
	default:
		r.Findings = append(r.Findings, settlementFindings(set, r)...)
		mv, err := ss.LedgerMovementGet(ctx, it.Owner.Scope(), FeeReference(it.OperationID))
		if err != nil && !fault.Is(err, fault.NotFound) {
			return err
		}
		r.Findings = append(r.Findings, movementFindings(set, mv, err == nil)...)
	}
	r.Outcome = worst(r.Findings)
	m := &mover{ctx: ctx, st: st, o: o}
	if err := m.move(EventReconcile, ""); err != nil {
		return err
	}
	if err := ss.SwapReconciliationInsert(ctx, ReconciliationRecord{ID: ReconciliationPrefix + s.cfg.NewIDFunc(), Owner: it.Owner,
		Reconciliation: r, CreatedAt: st.Now()}); err != nil {
		return err
	}
	return m.move(r.Outcome.Event(), r.Outcome.Code())
}

// settlementFindings compares the settlement with the reconciled
// transaction: the signature and the amounts it recorded.
func settlementFindings(set Settlement, r Reconciliation) []Finding {
	var out []Finding
	differ := func(field, expected, actual string) {
		out = append(out, Finding{Rule: RuleSettlement, Outcome: OutcomeRequiresReview, Expected: field + "=" + expected,
			Actual: field + "=" + actual})
	}
	if r.Signature != set.Signature {
		differ("signature", set.Signature, r.Signature)
	}
	if r.Signature == "" {
		return out
	}
	e := r.Evidence
	for _, c := range []struct {
		field string
		set   money.Atomic
		chain money.Sum
	}{{"feeReceivedAtomic", set.FeeReceivedAtomic, e.ActualFee}, {"actualInputAtomic", set.ActualInputAtomic, e.ActualInput},
		{"actualOutputAtomic", set.ActualOutputAtomic, e.ActualOutput}} {
		if money.SumOf(c.set).Cmp(c.chain) != 0 {
			differ(c.field, c.set.String(), c.chain.String())
		}
	}
	return out
}

// movementFindings checks the fee's ledger movement against the
// settlement: one movement of the fee received from the fee mint's
// revenue account to the fee recipient's, none for a zero fee.
func movementFindings(set Settlement, mv ledger.Posted, found bool) []Finding {
	want := []ledger.Posting{
		{Account: FeeRevenueAccount(set.FeeMint), Direction: ledger.Debit, Amount: set.FeeReceivedAtomic},
		{Account: FeeRecipientAccount(set.FeeRecipient, set.FeeMint), Direction: ledger.Credit, Amount: set.FeeReceivedAtomic},
	}
	switch {
	case set.FeeReceivedAtomic == 0 && !found:
		return nil
	case !found:
		return []Finding{{Rule: RuleFeeMovement, Outcome: OutcomeRequiresReview, Expected: set.FeeReceivedAtomic.String(), Actual: "none"}}
	case mv.ID != set.MovementID || mv.Ledger != ledger.Financial || mv.Decimals != int(set.FeeDecimals) ||
		!slices.Equal(sortedPostings(mv.Postings), sortedPostings(want)):
		return []Finding{{Rule: RuleFeeMovement, Outcome: OutcomeRequiresReview, Expected: set.FeeReceivedAtomic.String(),
			Actual: mv.ID}}
	}
	return nil
}

// sortedPostings orders postings by account.
func sortedPostings(ps []ledger.Posting) []ledger.Posting {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b ledger.Posting) int { return strings.Compare(a.Account, b.Account) })
	return out
}

// answer reads the records of o through st.
func (s *Service) answer(ctx context.Context, st Store, it Intent, o Operation, pending bool) (SettleResult, error) {
	const op = "swap.answer"
	ss := st.SettleStore()
	res := SettleResult{Intent: it, Operation: o, Pending: pending}
	if v, err := ss.SwapVerification(ctx, it.Owner, o.ID); err == nil {
		res.Verification = &v
	} else if !fault.Is(err, fault.NotFound) {
		return SettleResult{}, fault.Wrap(op, err)
	}
	if set, err := ss.SwapSettlement(ctx, it.Owner, o.ID); err == nil {
		res.Settlement = &set
	} else if !fault.Is(err, fault.NotFound) {
		return SettleResult{}, fault.Wrap(op, err)
	}
	if r, err := ss.SwapReconciliation(ctx, it.Owner, o.ID); err == nil {
		res.Reconciliation = &r
	} else if !fault.Is(err, fault.NotFound) {
		return SettleResult{}, fault.Wrap(op, err)
	}
	return res, nil
}

// OwnerOf returns the owner a principal acts as: its user in its tenant,
// workspace and environment.
func OwnerOf(p *access.Principal) Owner {
	return Owner{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: p.Environment}
}
