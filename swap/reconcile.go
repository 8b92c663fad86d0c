package swap

import (
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// Outcome is what reconciliation concluded about an operation (spec, the
// swap operation's last row; swap.md §7).
type Outcome string

// The outcomes.
const (
	// OutcomeMatch: the transaction succeeded, every identity check passed,
	// input and fee are exact, the output is at least the minimum and
	// within expected + slippage, and the lamports spent are within the
	// estimate + 10%.
	OutcomeMatch Outcome = "MATCH"
	// OutcomeDriftDetected: acceptable but off the model: output above the
	// band, fee or input off by one unit with a recorded rounding reason,
	// lamports over the estimate + 10%, or a Token-2022 fee other than the
	// registry's snapshot. Reported (RECONCILIATION_DRIFT), never
	// corrected.
	OutcomeDriftDetected Outcome = "DRIFT_DETECTED"
	// OutcomeRequiresReview: an identity or integrity check failed (unknown
	// program, extra signer, second signature, recipient or mint mismatch,
	// output below the minimum on a successful transaction, an amount off
	// without a rounding reason, a record that no longer matches its hash),
	// or data is missing after finality.
	OutcomeRequiresReview Outcome = "REQUIRES_REVIEW"
	// OutcomeFailed: meta.err is set, or the blockhash expired and no
	// transaction was found; only network fees moved.
	OutcomeFailed Outcome = "FAILED"
)

// Outcomes lists the outcomes, from best to worst.
func Outcomes() []Outcome {
	return []Outcome{OutcomeMatch, OutcomeDriftDetected, OutcomeFailed, OutcomeRequiresReview}
}

// Code returns the error code that reports the outcome: none for MATCH,
// RECONCILIATION_DRIFT, REQUIRES_REVIEW, TRANSACTION_FAILED.
func (o Outcome) Code() fault.Code {
	switch o {
	case OutcomeDriftDetected:
		return fault.ReconciliationDrift
	case OutcomeRequiresReview:
		return fault.RequiresReview
	case OutcomeFailed:
		return fault.TransactionFailed
	}
	return ""
}

// Event returns the event that moves a RECONCILING operation on this
// outcome: conclude for MATCH and DRIFT_DETECTED (RECONCILED, the drift
// recorded), review for REQUIRES_REVIEW and for FAILED, since a settled
// operation whose transaction failed was settled without a swap behind it.
func (o Outcome) Event() Event {
	switch o {
	case OutcomeMatch, OutcomeDriftDetected:
		return EventConclude
	}
	return EventReview
}

// Rule names why a finding was made: a verification check's name, or one
// of the Rule constants.
type Rule string

// The rules beside the verification checks.
const (
	// RuleQuoteIntegrity: the quote no longer matches its hash.
	RuleQuoteIntegrity Rule = "quoteIntegrity"
	// RuleIntentIntegrity: the intent no longer matches its hash.
	RuleIntentIntegrity Rule = "intentIntegrity"
	// RuleQuoteBinding: the intent does not bind this quote (id or hash).
	RuleQuoteBinding Rule = "quoteBinding"
	// RuleSecondSignature: another signature was submitted for the intent.
	RuleSecondSignature Rule = "secondSignature"
	// RuleNotFound: no transaction was found and the blockhash expired.
	RuleNotFound Rule = "notFound"
	// RuleDataMissing: no transaction was found after finality while its
	// blockhash was still valid, so what happened is unknown.
	RuleDataMissing Rule = "dataMissing"
	// RuleOutputAboveBand: the output exceeds expected + slippage.
	RuleOutputAboveBand Rule = "outputAboveBand"
	// RuleLamportsOverEstimate: the wallet spent more lamports than the
	// estimate + 10%.
	RuleLamportsOverEstimate Rule = "lamportsOverEstimate"
	// RuleTransferFeeChanged: a Token-2022 fee applied at the
	// transaction's epoch differs from the registry snapshot the quote
	// froze.
	RuleTransferFeeChanged Rule = "transferFeeChanged"
)

// Finding is one reason for an outcome other than MATCH.
type Finding struct {
	// Rule names it; Outcome is what it implies.
	Rule    Rule
	Outcome Outcome
	// Expected and Actual are the values compared, when there are any.
	Expected string
	Actual   string
}

// Evidence records every compared amount and its delta (actual −
// expected), whatever the outcome.
type Evidence struct {
	// QuoteHash and IntentHash are the hashes reconciled.
	QuoteHash  string
	IntentHash string
	// ExpectedInput is the executable input plus the service fee when it
	// is taken in the input mint; ActualInput what the wallet paid.
	ExpectedInput money.Atomic
	ActualInput   money.Sum
	InputDelta    money.Sum
	// ExpectedFee is the service fee less the fee mint's transfer fee;
	// ActualFee what the fee account gained.
	ExpectedFee money.Atomic
	ActualFee   money.Sum
	FeeDelta    money.Sum
	// ExpectedOutput, MinimumOutput and MaximumOutput bound the output,
	// each net of the output mint's transfer fee (MaximumOutput is expected
	// + slippage); ActualOutput what the wallet received; OutputDelta is
	// actual − expected and OutputOverMinimum actual − minimum.
	ExpectedOutput    money.Atomic
	MinimumOutput     money.Atomic
	MaximumOutput     money.Atomic
	ActualOutput      money.Sum
	OutputDelta       money.Sum
	OutputOverMinimum money.Sum
	// EstimatedLamports is the quote's estimate, LamportLimit the estimate
	// + 10% (floored), LamportsSpent what the wallet spent and
	// LamportsDelta spent − estimate. LamportBalances false means spent is
	// only the network fee, a lower bound.
	EstimatedLamports money.Atomic
	LamportLimit      money.Atomic
	LamportsSpent     money.Sum
	LamportsDelta     money.Sum
	LamportBalances   bool
	// The Token-2022 fees as the quote froze them and as applied at the
	// transaction's epoch.
	SnapshotInputTransferFee  token2022.TransferFee
	AppliedInputTransferFee   token2022.TransferFee
	SnapshotOutputTransferFee token2022.TransferFee
	AppliedOutputTransferFee  token2022.TransferFee
}

// Reconciliation is the record of one operation's reconciliation: the
// outcome, why, the evidence and the verification checks behind it. It is
// written once and never corrected.
type Reconciliation struct {
	// OperationID, QuoteID and IntentID name what was reconciled;
	// Signature the transaction ("" when none was found).
	OperationID string
	QuoteID     string
	IntentID    string
	Signature   string
	// Outcome is the conclusion; Findings the reasons (none for MATCH).
	Outcome  Outcome
	Findings []Finding
	// Evidence holds the amounts compared; Checks the verification's.
	Evidence Evidence
	Checks   []Check
	// RoundingReason is the recorded reason that lets an input or fee off
	// by one unit count as drift rather than review.
	RoundingReason string
}

// ReconcileInput is what Reconcile compares.
type ReconcileInput struct {
	// Quote and Intent are the stored records.
	Quote  Quote
	Intent Intent
	// Verification is the transaction's verification; nil when no
	// transaction was found for the bound signature.
	Verification *Verification
	// Final says the chain's answer is final: the transaction was read at
	// finalized commitment, or, none found, finality has passed.
	Final bool
	// BlockhashExpired says block height is past the intent's
	// LastValidBlockHeight, so its transaction can no longer land.
	BlockhashExpired bool
	// SecondSignature says another signature was submitted for the intent.
	SecondSignature bool
	// RoundingReason, when set, is why an input or fee may be one unit
	// off (swap.md §7: ±1 only with a recorded rounding reason).
	RoundingReason string
}

// Reconcile compares quote, intent and the transaction's verified effects
// and returns the outcome with its evidence (swap.md §7). The same input
// always gives the same record, so a repeated run converges. The outcome
// is the worst finding's: REQUIRES_REVIEW over FAILED over DRIFT_DETECTED
// over MATCH. On a failed transaction only identity findings (integrity,
// second signature, network, uniqueness) are made beside FAILED, since
// nothing but fees moved. Tolerances: input and fee exact (one unit with
// a rounding reason is drift, anything else review); output at least the
// minimum (else review) and at most expected + slippage (else drift);
// lamports at most the estimate + 10% (else drift).
//
// RESULT_NOT_READY when the answer is not final: nothing is concluded from
// a chain that may still change.
func Reconcile(in ReconcileInput) (Reconciliation, error) {
	const op = "swap.Reconcile"
	if !in.Final {
		return Reconciliation{}, fault.E(op, fault.ResultNotReady, "The chain's answer is not final yet.")
	}
	q, it, v := in.Quote, in.Intent, in.Verification
	r := Reconciliation{OperationID: it.OperationID, QuoteID: q.ID, IntentID: it.ID, RoundingReason: in.RoundingReason}
	find := func(rule Rule, o Outcome, expected, actual string) {
		r.Findings = append(r.Findings, Finding{Rule: rule, Outcome: o, Expected: expected, Actual: actual})
	}

	if q.CheckIntegrity() != nil {
		find(RuleQuoteIntegrity, OutcomeRequiresReview, q.Hash, QuoteHash(q))
	}
	if it.CheckIntegrity() != nil {
		find(RuleIntentIntegrity, OutcomeRequiresReview, it.Hash, IntentHash(it))
	}
	if it.QuoteID != q.ID || it.QuoteHash != q.Hash {
		find(RuleQuoteBinding, OutcomeRequiresReview, q.ID+"/"+q.Hash, it.QuoteID+"/"+it.QuoteHash)
	}
	if in.SecondSignature {
		find(RuleSecondSignature, OutcomeRequiresReview, "one signature", "another signature")
	}
	r.Evidence = evidence(q, it, v)

	switch {
	case v == nil && in.BlockhashExpired:
		find(RuleNotFound, OutcomeFailed, "transaction", "none before expiry")
	case v == nil:
		find(RuleDataMissing, OutcomeRequiresReview, "transaction", "none after finality")
	default:
		r.Signature = v.Signature
		r.Checks = append([]Check(nil), v.Checks...)
		reconcileChecks(&r, in, find)
	}
	r.Outcome = worst(r.Findings)
	return r, nil
}

// reconcileChecks turns the verification's checks and the evidence into
// findings.
func reconcileChecks(r *Reconciliation, in ReconcileInput, find func(Rule, Outcome, string, string)) {
	v, e := in.Verification, &r.Evidence
	if !v.Success {
		find(Rule(CheckSuccess), OutcomeFailed, "ok", v.Err)
		for _, c := range v.Failed() {
			if c.Name == CheckNetwork || c.Name == CheckUniqueness {
				find(Rule(c.Name), OutcomeRequiresReview, c.Expected, c.Actual)
			}
		}
		return
	}
	offByOne := func(d money.Sum) bool {
		return in.RoundingReason != "" && (d.Cmp(money.SumOf(1)) == 0 || d.Cmp(neg(money.SumOf(1))) == 0)
	}
	for _, c := range v.Failed() {
		switch {
		case c.Name == CheckExecutableInput && offByOne(e.InputDelta),
			c.Name == CheckServiceFee && offByOne(e.FeeDelta):
			find(Rule(c.Name), OutcomeDriftDetected, c.Expected, c.Actual)
		default:
			find(Rule(c.Name), OutcomeRequiresReview, c.Expected, c.Actual)
		}
	}
	if e.ActualOutput.Cmp(money.SumOf(e.MaximumOutput)) > 0 {
		find(RuleOutputAboveBand, OutcomeDriftDetected, e.MaximumOutput.String(), e.ActualOutput.String())
	}
	if e.LamportsSpent.Cmp(money.SumOf(e.LamportLimit)) > 0 {
		find(RuleLamportsOverEstimate, OutcomeDriftDetected, e.LamportLimit.String(), e.LamportsSpent.String())
	}
	if e.SnapshotInputTransferFee != e.AppliedInputTransferFee || e.SnapshotOutputTransferFee != e.AppliedOutputTransferFee {
		find(RuleTransferFeeChanged, OutcomeDriftDetected, "registry snapshot", "applied at the transaction's epoch")
	}
}

// evidence computes the compared amounts. Without a verification only the
// expectations are filled.
func evidence(q Quote, it Intent, v *Verification) Evidence {
	e := Evidence{
		QuoteHash: q.Hash, IntentHash: it.Hash,
		ExpectedInput:             it.ExecutableInputAtomic,
		EstimatedLamports:         it.FeeBreakdown.EstimatedLamports(),
		SnapshotInputTransferFee:  it.InputTransferFee,
		SnapshotOutputTransferFee: it.OutputTransferFee,
	}
	if it.FeeMint() == it.InputMint {
		if s, err := e.ExpectedInput.Add(it.ServiceFeeAtomic); err == nil {
			e.ExpectedInput = s
		}
	}
	e.LamportLimit = money.MaxAtomic
	if l, ok := mulDiv(e.EstimatedLamports, 11, 10); ok {
		e.LamportLimit = l
	}
	var outFee, feeFee token2022.TransferFee
	if v != nil {
		outFee, feeFee = v.OutputTransferFee, v.FeeMintTransferFee
		e.AppliedInputTransferFee, e.AppliedOutputTransferFee = v.InputTransferFee, v.OutputTransferFee
	} else {
		outFee = it.OutputTransferFee
		switch it.FeeMint() {
		case it.InputMint:
			feeFee = it.InputTransferFee
		case it.OutputMint:
			feeFee = it.OutputTransferFee
		}
		e.AppliedInputTransferFee, e.AppliedOutputTransferFee = it.InputTransferFee, it.OutputTransferFee
	}
	e.ExpectedFee = netOf(it.ServiceFeeAtomic, feeFee)
	e.ExpectedOutput = netOf(it.ExpectedOutputAtomic, outFee)
	e.MinimumOutput = netOf(it.MinimumOutputAtomic, outFee)
	e.MaximumOutput = money.MaxAtomic
	if upper, ok := mulDiv(it.ExpectedOutputAtomic, uint64(WholeBps)+uint64(it.SlippageBps), WholeBps); ok {
		e.MaximumOutput = netOf(upper, outFee)
	}
	if v == nil {
		return e
	}
	e.ActualInput = v.InputDebited
	e.InputDelta = sub(e.ActualInput, money.SumOf(e.ExpectedInput))
	e.ActualFee = v.FeeReceived
	e.FeeDelta = sub(e.ActualFee, money.SumOf(e.ExpectedFee))
	e.ActualOutput = v.OutputReceived
	e.OutputDelta = sub(e.ActualOutput, money.SumOf(e.ExpectedOutput))
	e.OutputOverMinimum = sub(e.ActualOutput, money.SumOf(e.MinimumOutput))
	e.LamportsSpent = v.LamportsSpent
	e.LamportsDelta = sub(e.LamportsSpent, money.SumOf(e.EstimatedLamports))
	e.LamportBalances = v.LamportBalances
	return e
}

// worst returns the outcome of the worst finding, MATCH when none.
func worst(fs []Finding) Outcome {
	rank := map[Outcome]int{OutcomeMatch: 0, OutcomeDriftDetected: 1, OutcomeFailed: 2, OutcomeRequiresReview: 3}
	o := OutcomeMatch
	for _, f := range fs {
		if rank[f.Outcome] > rank[o] {
			o = f.Outcome
		}
	}
	return o
}
