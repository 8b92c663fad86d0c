package relay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
)

// TestTransitionTable: the table served as data is a function of (state,
// event), Transit answers exactly what it says, and no row moves a state
// backwards or out of a terminal state.
func TestTransitionTable(t *testing.T) {
	tbl := fsm.New("relay", "a submission", relay.Transitions())
	if err := tbl.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Enforced(relay.Transit); err != nil {
		t.Fatal(err)
	}
	order := relay.States()
	for _, r := range relay.Transitions() {
		if r.From.Terminal() {
			t.Fatalf("a terminal state moves: %+v", r)
		}
		if r.To != relay.Failed && r.To != relay.Dropped && slices.Index(order, r.To) <= slices.Index(order, r.From) {
			t.Fatalf("backward row %+v", r)
		}
	}
	if _, err := relay.Transit(relay.Confirmed, relay.EventProcessed); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("confirmed went back to processed: %v", err)
	}
	if _, err := relay.Transit(relay.Processed, relay.EventDrop); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("a landed transaction was dropped: %v", err)
	}
}

// TestAdvanceAndStateOf: observations move a state forward only, and a
// status maps to the level it reports.
func TestAdvanceAndStateOf(t *testing.T) {
	cases := []struct {
		current, observed, want relay.State
		moved                   bool
	}{
		{relay.Submitted, relay.Processed, relay.Processed, true},
		{relay.Submitted, relay.Finalized, relay.Finalized, true},
		{relay.Processed, relay.Confirmed, relay.Confirmed, true},
		{relay.Confirmed, relay.Processed, relay.Confirmed, false},
		{relay.Finalized, relay.Confirmed, relay.Finalized, false},
		{relay.Finalized, relay.Failed, relay.Finalized, false},
		{relay.Confirmed, relay.Submitted, relay.Confirmed, false},
		{relay.Failed, relay.Finalized, relay.Failed, false},
		{relay.Dropped, relay.Processed, relay.Dropped, false},
		{relay.Processed, relay.Failed, relay.Failed, true},
	}
	for _, c := range cases {
		if got, moved := relay.Advance(c.current, c.observed); got != c.want || moved != c.moved {
			t.Errorf("Advance(%s, %s) = %s %v; want %s %v", c.current, c.observed, got, moved, c.want, c.moved)
		}
	}
	for _, c := range []struct {
		st   *chain.SignatureStatus
		want relay.State
	}{
		{nil, relay.Submitted},
		{landedAt(chain.Processed), relay.Processed},
		{landedAt(chain.Confirmed), relay.Confirmed},
		{landedAt(chain.Finalized), relay.Finalized},
		{&chain.SignatureStatus{Status: chain.Finalized, Err: `{"InstructionError":[0,{"Custom":1}]}`}, relay.Failed},
	} {
		if got := relay.StateOf(c.st); got != c.want {
			t.Errorf("StateOf(%+v) = %s, want %s", c.st, got, c.want)
		}
	}
	if !relay.Finalized.AtLeast(chain.Confirmed) || relay.Processed.AtLeast(chain.Confirmed) || relay.Failed.AtLeast(chain.Processed) ||
		relay.Submitted.AtLeast(chain.Processed) {
		t.Fatal("AtLeast")
	}
}

// TestSendAnswers: each class of node answer to a send, and what the
// submission records.
func TestSendAnswers(t *testing.T) {
	preflight := func(data, msg string) error {
		return &chain.RPCError{Method: "sendTransaction", Code: chain.CodePreflightFailure, Message: "Transaction simulation failed: " + msg, Data: data}
	}
	cases := []struct {
		name       string
		err        error
		class      relay.SendClass
		state      relay.State
		lastError  fault.Code
		chainError string
		sendErr    fault.Code
	}{
		{"accepted", nil, relay.SendAccepted, relay.Submitted, "", "", ""},
		{"already processed", preflight(`{"err":"AlreadyProcessed","logs":[]}`, "AlreadyProcessed"),
			relay.SendAlreadyProcessed, relay.Submitted, "", "", ""},
		{"already processed, message only", preflight("", "This transaction has already been processed"),
			relay.SendAlreadyProcessed, relay.Submitted, "", "", ""},
		{"blockhash not found", preflight(`{"err":"BlockhashNotFound","accounts":null}`, "Blockhash not found"),
			relay.SendStaleBlockhash, relay.Submitted, fault.SubmissionUncertain, "", ""},
		{"timeout", fmt.Errorf("%w: context deadline exceeded", chain.ErrUnavailable),
			relay.SendUncertain, relay.Submitted, fault.SubmissionUncertain, "", fault.SubmissionUncertain},
		{"node unhealthy", &chain.RPCError{Code: chain.CodeNodeUnhealthy, Message: "Node is unhealthy"},
			relay.SendUncertain, relay.Submitted, fault.SubmissionUncertain, "", fault.SubmissionUncertain},
		{"internal error", &chain.RPCError{Code: chain.CodeInternal, Message: "Internal error"},
			relay.SendUncertain, relay.Submitted, fault.SubmissionUncertain, "", fault.SubmissionUncertain},
		{"instruction fails in simulation", preflight(`{"err":{"InstructionError":[1,{"Custom":1}]}}`, "Error processing Instruction 1"),
			relay.SendPreflightFailed, relay.Failed, fault.TransactionFailed, `{"InstructionError":[1,{"Custom":1}]}`, fault.TransactionFailed},
		{"fee payer cannot pay", preflight(`{"err":"InsufficientFundsForFee"}`, "InsufficientFundsForFee"),
			relay.SendPreflightFailed, relay.Failed, fault.TransactionFailed, "InsufficientFundsForFee", fault.TransactionFailed},
		{"malformed", &chain.RPCError{Code: chain.CodeInvalidParams, Message: "invalid transaction: failed to deserialize"},
			relay.SendMalformed, relay.Failed, fault.TransactionFailed, "invalid transaction: failed to deserialize", fault.TransactionFailed},
		{"bad signature", &chain.RPCError{Code: chain.CodeSignatureFailure, Message: "Transaction signature verification failure"},
			relay.SendSignatureRejected, relay.Failed, fault.SignatureRejected, "TransactionSignatureVerificationFailure", fault.SignatureRejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := newChain()
			fc.sendErrs = []error{c.err}
			s := submitted()
			r, err := relay.Step(context.Background(), fc, s, relay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := r.Submission
			if r.Outcome != relay.OutcomeSent || r.Send != c.class || !r.Changed || r.Observed != relay.Submitted {
				t.Fatalf("outcome %s class %s changed %v observed %s", r.Outcome, r.Send, r.Changed, r.Observed)
			}
			if n.State != c.state || n.LastError != c.lastError || n.ChainError != c.chainError || n.SendAttempts != 1 {
				t.Fatalf("record %s %q %q attempts %d", n.State, n.LastError, n.ChainError, n.SendAttempts)
			}
			if c.sendErr == "" && r.SendErr != nil || c.sendErr != "" && !fault.Is(r.SendErr, c.sendErr) {
				t.Fatalf("send error %v, want %q", r.SendErr, c.sendErr)
			}
			if c.err != nil && c.sendErr != "" && !errors.Is(r.SendErr, c.err) {
				t.Fatal("the send error lost the node's answer")
			}
			if len(fc.sent) != 1 || !bytes.Equal(fc.sent[0], s.Wire) {
				t.Fatal("the stored bytes were not what was sent")
			}
			if got := c.class.Sent(); got != (c.class == relay.SendAccepted || c.class == relay.SendAlreadyProcessed) {
				t.Fatalf("Sent() = %v", got)
			}
			if c.class.Refused() != (c.state == relay.Failed) {
				t.Fatalf("Refused() = %v", c.class.Refused())
			}
			// A refused transaction is never sent again.
			if c.state == relay.Failed {
				r, err := relay.Step(context.Background(), fc, n, relay.Options{})
				if err != nil || r.Outcome == relay.OutcomeSent || fc.count("sendTransaction") != 1 {
					t.Fatalf("failed submission stepped: %v %s", err, r.Outcome)
				}
			}
		})
	}
}

// TestStatusBeforeSend: the status is read (with history) before anything
// else, and a signature the chain knows is observed, never sent.
func TestStatusBeforeSend(t *testing.T) {
	ctx := context.Background()
	t.Run("unknown, then sent", func(t *testing.T) {
		fc := newChain()
		if _, err := relay.Step(ctx, fc, submitted(), relay.Options{}); err != nil {
			t.Fatal(err)
		}
		want := []string{"getSignatureStatuses", "getBlockHeight", "isBlockhashValid", "sendTransaction"}
		if got := fc.calls(); !slices.Equal(got, want) {
			t.Fatalf("calls %v, want %v", got, want)
		}
	})
	for _, c := range []struct {
		name  string
		st    *chain.SignatureStatus
		state relay.State
	}{
		{"processed", landedAt(chain.Processed), relay.Processed},
		{"confirmed", landedAt(chain.Confirmed), relay.Confirmed},
		{"finalized", landedAt(chain.Finalized), relay.Finalized},
		{"failed on chain", &chain.SignatureStatus{Slot: 77, Status: chain.Confirmed, Err: `{"InstructionError":[1,{"Custom":1}]}`}, relay.Failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := newChain()
			fc.setStatus(c.st)
			s := submitted()
			s.SendAttempts, s.LastError = 1, fault.SubmissionUncertain // an earlier send timed out
			r, err := relay.Step(ctx, fc, s, relay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := r.Submission
			if r.Outcome != relay.OutcomeObserved || !r.Changed || r.Stale || r.Status == nil || n.State != c.state || n.Slot != 77 {
				t.Fatalf("%s %+v", r.Outcome, n)
			}
			if fc.count("sendTransaction") != 0 || !slices.Equal(fc.calls(), []string{"getSignatureStatuses"}) {
				t.Fatalf("a known signature was acted on: %v", fc.calls())
			}
			switch c.state {
			case relay.Failed:
				if n.LastError != fault.TransactionFailed || n.ChainError != c.st.Err {
					t.Fatalf("failure not recorded: %q %q", n.LastError, n.ChainError)
				}
			default:
				if n.LastError != "" {
					t.Fatalf("a landing kept %s", n.LastError)
				}
			}
		})
	}
}

// TestStaleObservationIgnored: an observation behind the submission (a
// lagging node) is reported as stale and never applied.
func TestStaleObservationIgnored(t *testing.T) {
	cases := []struct {
		name   string
		state  relay.State
		st     *chain.SignatureStatus
		stale  bool
		moved  bool
		result relay.State
	}{
		{"processed behind confirmed", relay.Confirmed, landedAt(chain.Processed), true, false, relay.Confirmed},
		{"confirmed behind finalized", relay.Finalized, landedAt(chain.Confirmed), true, false, relay.Finalized},
		{"unknown behind processed", relay.Processed, nil, true, false, relay.Processed},
		{"unknown behind finalized", relay.Finalized, nil, true, false, relay.Finalized},
		{"failure after finalized", relay.Finalized, &chain.SignatureStatus{Status: chain.Confirmed, Err: "x"}, true, false, relay.Finalized},
		{"the same level again", relay.Confirmed, landedAt(chain.Confirmed), false, false, relay.Confirmed},
		{"forward", relay.Processed, landedAt(chain.Finalized), false, true, relay.Finalized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := newChain()
			fc.setStatus(c.st)
			s := submitted()
			s.State, s.Slot = c.state, 70
			r, err := relay.Step(context.Background(), fc, s, relay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != relay.OutcomeObserved || r.Stale != c.stale || r.Changed != c.moved || r.Submission.State != c.result {
				t.Fatalf("%s stale %v changed %v state %s", r.Outcome, r.Stale, r.Changed, r.Submission.State)
			}
			if !c.moved && (r.Submission.Slot != 70 || r.Submission.State != s.State) {
				t.Fatalf("an ignored observation changed the record: %+v", r.Submission)
			}
			if fc.count("sendTransaction") != 0 || fc.count("getBlockHeight") != 0 {
				t.Fatalf("a landed submission was pursued: %v", fc.calls())
			}
			// Observe, the pure half, agrees.
			n, ob := relay.Observe(s, c.st)
			if ob.Stale != c.stale || ob.Moved != c.moved || n.State != c.result {
				t.Fatalf("Observe: %+v %s", ob, n.State)
			}
		})
	}
}

// TestDropAtBoundary: a transaction is dropped only once the finalized
// block height is above its last valid block height; at that height
// exactly it can still land, and is re-sent if the blockhash is valid.
func TestDropAtBoundary(t *testing.T) {
	ctx := context.Background()
	s := submitted()
	s.SendAttempts, s.LastError = 1, fault.SubmissionUncertain

	t.Run("at the last valid height, blockhash lapsing", func(t *testing.T) {
		fc := newChain()
		fc.height, fc.valid = s.LastValidBlockHeight, false
		r, err := relay.Step(ctx, fc, s, relay.Options{})
		if err != nil || r.Outcome != relay.OutcomeWaiting || r.Changed || fc.count("sendTransaction") != 0 {
			t.Fatalf("%v %s changed %v sends %d", err, r.Outcome, r.Changed, fc.count("sendTransaction"))
		}
	})
	t.Run("at the last valid height, blockhash valid", func(t *testing.T) {
		fc := newChain()
		fc.height = s.LastValidBlockHeight
		r, err := relay.Step(ctx, fc, s, relay.Options{})
		if err != nil || r.Outcome != relay.OutcomeSent || r.Submission.State != relay.Submitted {
			t.Fatalf("%v %s", err, r.Outcome)
		}
	})
	t.Run("one past it", func(t *testing.T) {
		fc := newChain()
		fc.height, fc.valid = s.LastValidBlockHeight+1, true
		r, err := relay.Step(ctx, fc, s, relay.Options{})
		n := r.Submission
		if err != nil || r.Outcome != relay.OutcomeDropped || !r.Changed || n.State != relay.Dropped || n.LastError != "" {
			t.Fatalf("%v %s %+v", err, r.Outcome, n)
		}
		if fc.count("getSignatureStatuses") != 2 || fc.count("sendTransaction") != 0 || fc.count("isBlockhashValid") != 0 {
			t.Fatalf("calls %v", fc.calls())
		}
		// A dropped submission is never sent again.
		r, err = relay.Step(ctx, fc, n, relay.Options{})
		if err != nil || r.Outcome != relay.OutcomeObserved || !r.Stale || fc.count("sendTransaction") != 0 {
			t.Fatalf("dropped submission stepped: %v %s", err, r.Outcome)
		}
	})
	t.Run("landing between the two inspections", func(t *testing.T) {
		fc := newChain()
		fc.height = s.LastValidBlockHeight + 1
		fc.statuses = []*chain.SignatureStatus{nil, landedAt(chain.Confirmed)}
		r, err := relay.Step(ctx, fc, s, relay.Options{})
		if err != nil || r.Outcome != relay.OutcomeObserved || r.Submission.State != relay.Confirmed {
			t.Fatalf("%v %s %s", err, r.Outcome, r.Submission.State)
		}
	})
	t.Run("held back", func(t *testing.T) {
		fc := newChain()
		fc.height = s.LastValidBlockHeight + 100
		w := s
		w.Wire = nil // the wallet broadcast it
		r, err := relay.Step(ctx, fc, w, relay.Options{HoldDrop: true})
		if err != nil || r.Outcome != relay.OutcomeWaiting || r.Changed || fc.count("sendTransaction") != 0 {
			t.Fatalf("%v %s", err, r.Outcome)
		}
		r, err = relay.Step(ctx, fc, w, relay.Options{})
		if err != nil || r.Outcome != relay.OutcomeDropped {
			t.Fatalf("after the hold: %v %s", err, r.Outcome)
		}
	})
}

// TestDropSearch: at drop time, the caller's search may find the payment
// under another signature; the submission is then left to the caller.
func TestDropSearch(t *testing.T) {
	ctx := context.Background()
	s := submitted()
	ref := chain.Address{7}
	search := func(fc *fakeChain) relay.Options {
		return relay.Options{SearchFunc: func(ctx context.Context) (string, error) { return relay.FindByReference(ctx, fc, ref, s.Signature) }}
	}
	t.Run("only when the drop is certain", func(t *testing.T) {
		fc := newChain()
		fc.refs[ref] = []chain.SignatureInfo{{Signature: "Other"}}
		if _, err := relay.Step(ctx, fc, s, search(fc)); err != nil {
			t.Fatal(err)
		}
		if fc.count("getSignaturesForAddress") != 0 {
			t.Fatal("searched before the last valid height passed")
		}
	})
	t.Run("replaced by the oldest successful other signature", func(t *testing.T) {
		fc := newChain()
		fc.height = s.LastValidBlockHeight + 1
		fc.refs[ref] = []chain.SignatureInfo{{Signature: "Newest"}, {Signature: "Failed", Err: `"x"`}, {Signature: "Oldest"}, {Signature: s.Signature}}
		r, err := relay.Step(ctx, fc, s, search(fc))
		if err != nil || r.Outcome != relay.OutcomeReplaced || r.Replacement != "Oldest" || r.Changed || r.Submission.State != relay.Submitted {
			t.Fatalf("%v %s %q", err, r.Outcome, r.Replacement)
		}
	})
	t.Run("nothing found: dropped", func(t *testing.T) {
		fc := newChain()
		fc.height = s.LastValidBlockHeight + 1
		fc.refs[ref] = []chain.SignatureInfo{{Signature: "Failed", Err: `"x"`}}
		r, err := relay.Step(ctx, fc, s, search(fc))
		if err != nil || r.Outcome != relay.OutcomeDropped || r.Submission.State != relay.Dropped {
			t.Fatalf("%v %s", err, r.Outcome)
		}
	})
	t.Run("unreadable: nothing changes", func(t *testing.T) {
		fc := newChain()
		fc.height = s.LastValidBlockHeight + 1
		fc.fail["getSignaturesForAddress"] = errors.New("connection refused")
		r, err := relay.Step(ctx, fc, s, search(fc))
		if !fault.Is(err, fault.ProviderUnavailable) || r.Changed || r.Submission.State != relay.Submitted || r.Observed != relay.Submitted {
			t.Fatalf("%v %+v", err, r)
		}
	})
}

// TestResendIdenticalBytesOnly: after an uncertain send the identical
// stored bytes go again, and only while the blockhash is valid; without
// stored bytes, or with bytes of another signature, nothing is sent.
func TestResendIdenticalBytesOnly(t *testing.T) {
	ctx := context.Background()
	fc := newChain()
	fc.sendErrs = []error{fmt.Errorf("%w: timeout", chain.ErrUnavailable)}
	s := submitted()
	orig := bytes.Clone(s.Wire)
	r, err := relay.Step(ctx, fc, s, relay.Options{})
	if err != nil || !fault.Is(r.SendErr, fault.SubmissionUncertain) {
		t.Fatalf("%v %v", err, r.SendErr)
	}
	r, err = relay.Step(ctx, fc, r.Submission, relay.Options{})
	if err != nil || r.Outcome != relay.OutcomeSent || r.Send != relay.SendAccepted || r.Submission.SendAttempts != 2 || r.Submission.LastError != "" {
		t.Fatalf("resend: %v %s %+v", err, r.Outcome, r.Submission)
	}
	if len(fc.sent) != 2 || !sameBytes(fc.sent, orig) {
		t.Fatal("a re-send must carry the identical signed bytes")
	}

	fc.valid = false
	r, err = relay.Step(ctx, fc, r.Submission, relay.Options{})
	if err != nil || r.Outcome != relay.OutcomeWaiting || len(fc.sent) != 2 {
		t.Fatalf("sent under a lapsed blockhash: %v %s", err, r.Outcome)
	}

	fc = newChain()
	watched := submitted()
	watched.Wire = nil
	r, err = relay.Step(ctx, fc, watched, relay.Options{})
	if err != nil || r.Outcome != relay.OutcomeWaiting || len(fc.sent) != 0 || fc.count("isBlockhashValid") != 0 {
		t.Fatalf("without bytes: %v %s %v", err, r.Outcome, fc.calls())
	}

	other := submitted()
	other.Wire, _ = signed("another transaction")
	r, err = relay.Step(ctx, fc, other, relay.Options{})
	if !fault.Is(err, fault.SignatureRejected) || r.Changed || len(fc.sent) != 0 {
		t.Fatalf("bytes of another signature: %v %v", err, fc.sent)
	}
}

// TestReadFailures: a read that fails changes nothing and names itself.
func TestReadFailures(t *testing.T) {
	cases := []struct {
		method   string
		read     string
		observed relay.State
	}{
		{"getSignatureStatuses", "signatureStatuses", ""},
		{"getBlockHeight", "blockHeight", relay.Submitted},
		{"isBlockhashValid", "isBlockhashValid", relay.Submitted},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			fc := newChain()
			cause := fmt.Errorf("%w: connection refused", chain.ErrUnavailable)
			fc.fail[c.method] = cause
			s := submitted()
			r, err := relay.Step(context.Background(), fc, s, relay.Options{})
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.ProviderUnavailable || fe.Details["read"] != c.read || !errors.Is(err, chain.ErrUnavailable) {
				t.Fatalf("%v", err)
			}
			if r.Changed || r.Observed != c.observed || r.Submission.SendAttempts != s.SendAttempts || fc.count("sendTransaction") != 0 {
				t.Fatalf("%+v", r)
			}
		})
	}
	if _, err := relay.Step(context.Background(), newChain(), relay.Submission{State: relay.Unsent}, relay.Options{}); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("stepped a submission without a signature: %v", err)
	}
}

// TestCheckNetwork: a cluster serving another network is refused.
func TestCheckNetwork(t *testing.T) {
	ctx := context.Background()
	fc := newChain()
	devnet := chain.Network{GenesisHash: chain.DevnetGenesisHash}.CAIP2()
	if err := relay.CheckNetwork(ctx, fc, devnet); err != nil {
		t.Fatal(err)
	}
	fc.genesis = chain.MainnetGenesisHash
	err := relay.CheckNetwork(ctx, fc, devnet)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.NetworkMismatch || fe.Details["expected"] != devnet ||
		fe.Details["actual"] != (chain.Network{GenesisHash: chain.MainnetGenesisHash}).CAIP2() {
		t.Fatalf("%v", err)
	}
	fc.fail["getGenesisHash"] = errors.New("timeout")
	if err := relay.CheckNetwork(ctx, fc, devnet); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("%v", err)
	}
}
