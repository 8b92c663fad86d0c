package swap

import (
	"reflect"
	"slices"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// reconcileInput reconciles testQuote and testIntent against the
// verification of p (testParams after edit).
func reconcileInput(t *testing.T, edit func(t *testing.T, p *VerifyParams)) ReconcileInput {
	t.Helper()
	p := testParams(t)
	if edit != nil {
		edit(t, &p)
	}
	v := verify(t, p)
	return ReconcileInput{Quote: testQuote(), Intent: p.Intent, Verification: &v, Final: true}
}

// rules returns the rules of r's findings.
func rules(r Reconciliation) []Rule {
	var out []Rule
	for _, f := range r.Findings {
		out = append(out, f.Rule)
	}
	return out
}

func TestReconcileMatch(t *testing.T) {
	in := reconcileInput(t, nil)
	r, err := Reconcile(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != OutcomeMatch || len(r.Findings) != 0 {
		t.Fatalf("outcome %s, findings %+v", r.Outcome, r.Findings)
	}
	if r.OperationID != "swo_1" || r.QuoteID != "swq_1" || r.IntentID != "swi_1" || r.Signature != "sig1" || len(r.Checks) != 13 {
		t.Errorf("identity: %+v", r)
	}
	e := r.Evidence
	for _, c := range []struct {
		name      string
		got, want string
	}{
		{"ExpectedInput", e.ExpectedInput.String(), "1000000000"}, {"ActualInput", e.ActualInput.String(), "1000000000"},
		{"InputDelta", e.InputDelta.String(), "0"},
		{"ExpectedFee", e.ExpectedFee.String(), "20000000"}, {"ActualFee", e.ActualFee.String(), "20000000"},
		{"FeeDelta", e.FeeDelta.String(), "0"},
		{"ExpectedOutput", e.ExpectedOutput.String(), "5000000"}, {"MinimumOutput", e.MinimumOutput.String(), "4975000"},
		{"MaximumOutput", e.MaximumOutput.String(), "5025000"}, {"ActualOutput", e.ActualOutput.String(), "4990000"},
		{"OutputDelta", e.OutputDelta.String(), "-10000"}, {"OutputOverMinimum", e.OutputOverMinimum.String(), "15000"},
		{"EstimatedLamports", e.EstimatedLamports.String(), "2058280"}, {"LamportLimit", e.LamportLimit.String(), "2264108"},
		{"LamportsSpent", e.LamportsSpent.String(), "2058280"}, {"LamportsDelta", e.LamportsDelta.String(), "0"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if e.QuoteHash != in.Quote.Hash || e.IntentHash != in.Intent.Hash || !e.LamportBalances {
		t.Errorf("evidence identity: %+v", e)
	}
	again, _ := Reconcile(in)
	if !reflect.DeepEqual(r, again) {
		t.Error("a second reconciliation of the same facts differs")
	}
}

func TestReconcileOutcomes(t *testing.T) {
	outBy := func(n uint64) func(*testing.T, *VerifyParams) {
		return func(t *testing.T, p *VerifyParams) { entry(t, p.Observed.PostTokenBalances, walletOut).Amount = n }
	}
	feeBy := func(d int64) func(*testing.T, *VerifyParams) {
		return func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, feeAccount).Amount = uint64(20_000_007 + d)
		}
	}
	lamportsBy := func(extra uint64) func(*testing.T, *VerifyParams) {
		return func(_ *testing.T, p *VerifyParams) { p.Observed.PostBalances[0] -= extra }
	}
	tests := []struct {
		name     string
		edit     func(*testing.T, *VerifyParams)
		in       func(*ReconcileInput)
		outcome  Outcome
		findings []Rule
	}{
		{name: "output at the top of the band", edit: outBy(5_025_000), outcome: OutcomeMatch},
		{name: "output above the band", edit: outBy(5_025_001), outcome: OutcomeDriftDetected,
			findings: []Rule{RuleOutputAboveBand}},
		{name: "output below the minimum", edit: outBy(4_974_999), outcome: OutcomeRequiresReview,
			findings: []Rule{Rule(CheckMinimumOutput)}},
		{name: "lamports at estimate + 10%", edit: lamportsBy(205_828), outcome: OutcomeMatch},
		{name: "lamports over estimate + 10%", edit: lamportsBy(205_829), outcome: OutcomeDriftDetected,
			findings: []Rule{RuleLamportsOverEstimate}},
		{name: "fee one unit over, with a rounding reason", edit: feeBy(1),
			in: func(in *ReconcileInput) { in.RoundingReason = "provider rounds the fee up" }, outcome: OutcomeDriftDetected,
			findings: []Rule{Rule(CheckServiceFee)}},
		{name: "fee one unit under, with a rounding reason", edit: feeBy(-1),
			in: func(in *ReconcileInput) { in.RoundingReason = "provider rounds the fee down" }, outcome: OutcomeDriftDetected,
			findings: []Rule{Rule(CheckServiceFee)}},
		{name: "fee one unit off, no reason", edit: feeBy(1), outcome: OutcomeRequiresReview,
			findings: []Rule{Rule(CheckServiceFee)}},
		{name: "fee two units off, with a reason", edit: feeBy(-2),
			in: func(in *ReconcileInput) { in.RoundingReason = "rounding" }, outcome: OutcomeRequiresReview,
			findings: []Rule{Rule(CheckServiceFee)}},
		{name: "input one unit over, with a reason", edit: func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletIn).Amount--
		}, in: func(in *ReconcileInput) { in.RoundingReason = "rounding" }, outcome: OutcomeDriftDetected,
			findings: []Rule{Rule(CheckExecutableInput)}},
		{name: "Token-2022 fee other than the snapshot", edit: func(_ *testing.T, p *VerifyParams) {
			p.TransferFees = map[chain.Address]token2022.TransferFee{outMint: {Epoch: 600, BasisPoints: 10}} // capped at 0
		}, outcome: OutcomeDriftDetected, findings: []Rule{RuleTransferFeeChanged}},
		{name: "unknown top-level program", edit: func(_ *testing.T, p *VerifyParams) {
			p.Observed.Instructions = append(p.Observed.Instructions, chain.Instruction{ProgramID: stranger})
		}, outcome: OutcomeRequiresReview, findings: []Rule{Rule(CheckPrograms)}},
		{name: "extra signer", edit: func(_ *testing.T, p *VerifyParams) { p.Observed.NumSigners = 2 },
			outcome: OutcomeRequiresReview, findings: []Rule{Rule(CheckExtraSigners)}},
		{name: "fee recipient mismatch", edit: func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, feeAccount).Owner = stranger
		}, outcome: OutcomeRequiresReview, findings: []Rule{Rule(CheckFeeRecipient)}},
		{name: "review outweighs drift", edit: func(t *testing.T, p *VerifyParams) {
			outBy(5_100_000)(t, p)
			p.Observed.NumSigners = 2
		}, outcome: OutcomeRequiresReview, findings: []Rule{Rule(CheckExtraSigners), RuleOutputAboveBand}},
		{name: "second signature", in: func(in *ReconcileInput) { in.SecondSignature = true },
			outcome: OutcomeRequiresReview, findings: []Rule{RuleSecondSignature}},
		{name: "transaction failed", edit: func(_ *testing.T, p *VerifyParams) { p.Observed.Err = `"BlockhashNotFound"` },
			outcome: OutcomeFailed, findings: []Rule{Rule(CheckSuccess)}},
		{name: "failed with nothing moved", edit: func(_ *testing.T, p *VerifyParams) {
			p.Observed.Err = `{"InstructionError":[2,{"Custom":6001}]}`
			p.Observed.PostTokenBalances = slices.Clone(p.Observed.PreTokenBalances)
		}, outcome: OutcomeFailed, findings: []Rule{Rule(CheckSuccess)}},
		{name: "failed with a second signature", edit: func(_ *testing.T, p *VerifyParams) { p.Observed.Err = "x" },
			in: func(in *ReconcileInput) { in.SecondSignature = true }, outcome: OutcomeRequiresReview,
			findings: []Rule{RuleSecondSignature, Rule(CheckSuccess)}},
		{name: "failed on another network", edit: func(_ *testing.T, p *VerifyParams) {
			p.Observed.Err = "x"
			p.Observed.Network = "solana:other"
		}, outcome: OutcomeRequiresReview, findings: []Rule{Rule(CheckSuccess), Rule(CheckNetwork)}},
		{name: "nothing found after the blockhash expired",
			in:      func(in *ReconcileInput) { in.Verification, in.BlockhashExpired = nil, true },
			outcome: OutcomeFailed, findings: []Rule{RuleNotFound}},
		{name: "nothing found after finality, blockhash valid",
			in:      func(in *ReconcileInput) { in.Verification = nil },
			outcome: OutcomeRequiresReview, findings: []Rule{RuleDataMissing}},
		{name: "tampered intent", in: func(in *ReconcileInput) { in.Intent.ServiceFeeAtomic-- },
			outcome: OutcomeRequiresReview, findings: []Rule{RuleIntentIntegrity}},
		{name: "tampered quote", in: func(in *ReconcileInput) { in.Quote.ExpectedOutputAtomic++ },
			outcome: OutcomeRequiresReview, findings: []Rule{RuleQuoteIntegrity}},
		{name: "intent of another quote", in: func(in *ReconcileInput) {
			q := in.Quote
			q.ID = "swq_2"
			in.Quote = q.Seal()
		}, outcome: OutcomeRequiresReview, findings: []Rule{RuleQuoteBinding}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := reconcileInput(t, tt.edit)
			if tt.in != nil {
				tt.in(&in)
			}
			r, err := Reconcile(in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != tt.outcome || !slices.Equal(rules(r), tt.findings) {
				t.Errorf("outcome %s, findings %v; want %s, %v", r.Outcome, rules(r), tt.outcome, tt.findings)
			}
			for _, f := range r.Findings {
				if r.Outcome == OutcomeMatch || f.Outcome == OutcomeMatch {
					t.Errorf("finding %+v under outcome %s", f, r.Outcome)
				}
			}
		})
	}
}

func TestReconcileEvidenceRecordsDeltas(t *testing.T) {
	in := reconcileInput(t, func(t *testing.T, p *VerifyParams) {
		p.TransferFees = map[chain.Address]token2022.TransferFee{outMint: {BasisPoints: 100, MaximumFee: 1 << 40}}
		entry(t, p.Observed.PostTokenBalances, walletOut).Amount = 4_925_250
		entry(t, p.Observed.PostTokenBalances, feeAccount).Amount = 20_000_006
		p.Observed.PostBalances[0] -= 1_000
	})
	in.RoundingReason = "rounding"
	r, err := Reconcile(in)
	if err != nil {
		t.Fatal(err)
	}
	e := r.Evidence
	for _, c := range []struct {
		name      string
		got, want string
	}{
		{"ExpectedOutput", e.ExpectedOutput.String(), "4950000"}, // net of the 1% transfer fee
		{"MinimumOutput", e.MinimumOutput.String(), "4925250"},
		{"MaximumOutput", e.MaximumOutput.String(), "4974750"},
		{"OutputDelta", e.OutputDelta.String(), "-24750"},
		{"OutputOverMinimum", e.OutputOverMinimum.String(), "0"},
		{"FeeDelta", e.FeeDelta.String(), "-1"},
		{"LamportsDelta", e.LamportsDelta.String(), "1000"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if e.AppliedOutputTransferFee.BasisPoints != 100 || e.SnapshotOutputTransferFee.BasisPoints != 0 {
		t.Errorf("transfer fees: %+v", e)
	}
	if r.Outcome != OutcomeDriftDetected || !slices.Equal(rules(r), []Rule{Rule(CheckServiceFee), RuleTransferFeeChanged}) {
		t.Errorf("outcome %s, findings %v", r.Outcome, rules(r))
	}
}

func TestReconcileWaitsForFinality(t *testing.T) {
	in := reconcileInput(t, nil)
	in.Final = false
	if _, err := Reconcile(in); !fault.Is(err, fault.ResultNotReady) {
		t.Errorf("Reconcile before finality = %v, want RESULT_NOT_READY", err)
	}
	in.Verification = nil
	if _, err := Reconcile(in); !fault.Is(err, fault.ResultNotReady) {
		t.Errorf("Reconcile of a missing transaction before finality = %v, want RESULT_NOT_READY", err)
	}
}

func TestOutcomeCodesAndEvents(t *testing.T) {
	tests := []struct {
		o     Outcome
		code  fault.Code
		event Event
	}{
		{OutcomeMatch, "", EventConclude},
		{OutcomeDriftDetected, fault.ReconciliationDrift, EventConclude},
		{OutcomeRequiresReview, fault.RequiresReview, EventReview},
		{OutcomeFailed, fault.TransactionFailed, EventReview},
	}
	for _, tt := range tests {
		if tt.o.Code() != tt.code || tt.o.Event() != tt.event {
			t.Errorf("%s: code %s, event %s", tt.o, tt.o.Code(), tt.o.Event())
		}
		if to, err := Transition(StateReconciling, tt.o.Event()); err != nil || !to.Terminal() {
			t.Errorf("%s: RECONCILING on %s = %s, %v", tt.o, tt.o.Event(), to, err)
		}
	}
	if len(Outcomes()) != len(tests) {
		t.Errorf("Outcomes lists %d", len(Outcomes()))
	}
}
