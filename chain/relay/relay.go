package relay

import (
	"bytes"
	"context"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// ChainClient is what the relay reads from and sends to a cluster.
// chain/solanarpc.Client satisfies it, and so does every value path's own
// larger port (intent.ChainClient, for one). Errors: chain.ErrUnavailable
// (wrapped) when no answer arrived, a *chain.RPCError when the node
// answered with an error.
type ChainClient interface {
	// GetGenesisHash returns the cluster's genesis hash (base58).
	GetGenesisHash(ctx context.Context) (string, error)
	// GetBlockHeight returns the block height at commitment.
	GetBlockHeight(ctx context.Context, commitment chain.Commitment) (uint64, error)
	// IsBlockhashValid reports whether hash can still land a transaction.
	IsBlockhashValid(ctx context.Context, hash string, commitment chain.Commitment) (bool, error)
	// SendTransaction sends signed wire bytes and returns the first
	// signature.
	SendTransaction(ctx context.Context, signed []byte, opts chain.SendOptions) (string, error)
	// GetSignatureStatuses returns one status per signature, nil when the
	// node does not know it.
	GetSignatureStatuses(ctx context.Context, sigs []string, searchHistory bool) ([]*chain.SignatureStatus, error)
	// GetSignaturesForAddress lists signatures that touched addr, newest
	// first.
	GetSignaturesForAddress(ctx context.Context, addr chain.Address, opts chain.SignaturesOptions, commitment chain.Commitment) ([]chain.SignatureInfo, error)
}

// Submission is the network side of one signed transaction: where it
// goes, what exactly is sent, until when it can land, and how far the
// chain has taken it. The value path that owns the transaction stores it
// (as its own columns or fields) and hands it to Step; nothing here
// knows what the transaction pays for.
type Submission struct {
	// Network is the cluster's CAIP-2 id (chain.Network.CAIP2).
	Network string
	// Signature is the transaction's first signature in base58.
	Signature string
	// Wire is the exact signed transaction the relay sends, identical on
	// every send; nil when the signer's wallet broadcast it and the relay
	// only watches.
	Wire []byte
	// Blockhash is the transaction's recent blockhash (base58) and
	// LastValidBlockHeight the last block height at which it can land.
	Blockhash            string
	LastValidBlockHeight uint64
	// State is the network state; it moves only through Transit.
	State State
	// SendAttempts counts sends.
	SendAttempts int
	// LastError is the relay's last problem: SUBMISSION_UNCERTAIN while a
	// send's outcome is unknown, TRANSACTION_FAILED or SIGNATURE_REJECTED
	// once failed; "" when none (cleared by a landing or a drop).
	LastError fault.Code
	// ChainError is why the transaction failed, as the chain or the
	// refusing node said it.
	ChainError string
	// Slot is where the transaction landed, once observed.
	Slot uint64
}

// Observation is what applying one status to a submission did.
type Observation struct {
	// Observed is the state the status reports (Submitted for a node that
	// does not know the signature).
	Observed State
	// Moved reports that the submission's state moved forward.
	Moved bool
	// Stale reports an observation behind the submission's state (a
	// lagging node); it was ignored, never applied.
	Stale bool
}

// Observe applies a signature status to s, a pure function: the state
// moves forward only (Advance), the landing slot is recorded, a landing
// clears LastError and a failure records TRANSACTION_FAILED with the
// chain's error. An observation at s's state changes nothing; one behind
// it is Stale.
func Observe(s Submission, st *chain.SignatureStatus) (Submission, Observation) {
	observed := StateOf(st)
	next, moved := Advance(s.State, observed)
	ob := Observation{Observed: observed, Moved: moved, Stale: !moved && observed != s.State}
	if !moved {
		return s, ob
	}
	n := s
	n.State = next
	if st.Slot != 0 {
		n.Slot = st.Slot
	}
	if next == Failed {
		n.LastError, n.ChainError = fault.TransactionFailed, st.Err
	} else {
		n.LastError = ""
	}
	return n, ob
}

// Outcome names what one Step did.
type Outcome string

// The outcomes of a step.
const (
	// OutcomeObserved: the chain reported on the signature
	// (Result.Status), applied by Observe; Result.Stale when it was
	// behind the submission, including a node that does not know a
	// signature the submission has seen land (Status nil).
	OutcomeObserved Outcome = "observed"
	// OutcomeWaiting: the chain does not know the signature and nothing
	// is to be done now: no bytes to send, a lapsing blockhash whose last
	// valid height is not final yet, or a drop the caller holds back.
	OutcomeWaiting Outcome = "waiting"
	// OutcomeSent: the stored bytes were sent; Result.Send says how the
	// node answered.
	OutcomeSent Outcome = "sent"
	// OutcomeDropped: every block that could hold the transaction is
	// final and the chain has no status for it: the submission is
	// Dropped.
	OutcomeDropped Outcome = "dropped"
	// OutcomeReplaced: as dropped, but Options.SearchFunc found another
	// signature carrying what the transaction was for
	// (Result.Replacement). The submission is left as it was; the caller
	// decides.
	OutcomeReplaced Outcome = "replaced"
)

// Options tune one Step.
type Options struct {
	// HoldDrop keeps an unknown signature from counting as dropped even
	// past its last valid block height: a wallet that broadcast the
	// transaction itself may have re-signed it with a later blockhash,
	// and the caller grants it a grace period.
	HoldDrop bool
	// SearchFunc, when set, runs once a drop is otherwise certain and
	// returns another signature that carries what the transaction was for
	// (a payment found by its reference address: FindByReference), or ""
	// when there is none.
	SearchFunc func(ctx context.Context) (string, error)
}

// Result is what one Step did and the submission after it.
type Result struct {
	// Submission is the submission after the step; the caller stores it
	// when Changed.
	Submission Submission
	// Changed reports that Submission differs from the one stepped.
	Changed bool
	// Outcome says what happened.
	Outcome Outcome
	// Status is the status the chain reported (OutcomeObserved); nil when
	// it did not know the signature.
	Status *chain.SignatureStatus
	// Observed is the state the chain reported: "" when the step failed
	// before any status was read, Submitted when the chain did not know
	// the signature.
	Observed State
	// Stale reports an observation behind the submission, ignored.
	Stale bool
	// Send is how the node answered (OutcomeSent).
	Send SendClass
	// SendErr is the fault of a send that was neither accepted nor
	// already processed, to be reported once Submission is stored:
	// SUBMISSION_UNCERTAIN when no answer came (the caller retries; the
	// next step inspects before anything else), TRANSACTION_FAILED or
	// SIGNATURE_REJECTED when the node refused it for good. A stale
	// blockhash records SUBMISSION_UNCERTAIN without an error: the drop
	// rule decides.
	SendErr error
	// Replacement is the other signature SearchFunc found
	// (OutcomeReplaced).
	Replacement string
}

// Step runs the relay's rules once for s, whose signature is known:
//
//  1. Inspect the signature's status (with history) before anything
//     else. A status is observed (Observe) and nothing is sent: the relay
//     never sends what the chain knows.
//  2. A node that does not know a signature s has seen land is lagging:
//     stale, ignored.
//  3. Once the finalized block height passes s.LastValidBlockHeight no
//     block can hold the transaction any more; one more inspection closes
//     the race with a landing in between, then SearchFunc may find a
//     replacement, else s is Dropped. HoldDrop postpones this.
//  4. Otherwise, only with stored bytes and only while the blockhash is
//     valid, the identical bytes are sent again; the answer is classified
//     (Classify) and recorded: SendAttempts, LastError, and for a refusal
//     the Failed state and ChainError.
//
// Step never builds or signs a transaction and never sends bytes that do
// not carry s.Signature. It does not check the cluster: call CheckNetwork
// first. A read that fails changes nothing and returns
// PROVIDER_UNAVAILABLE with the read named in details ("read"), with the
// Result as far as it got (Observed). A submission without a signature is
// INVALID_STATE_TRANSITION; stored bytes without s.Signature as their
// first signature are SIGNATURE_REJECTED, and nothing is sent; SearchFunc's
// errors are returned as they are.
func Step(ctx context.Context, c ChainClient, s Submission, opts Options) (Result, error) {
	const op = "relay.Step"
	if s.Signature == "" {
		return Result{Submission: s}, fault.E(op, fault.InvalidState, "a submission without a signature cannot be relayed").
			With("state", string(s.State))
	}
	st, err := Inspect(ctx, c, s.Signature)
	if err != nil {
		return Result{Submission: s}, err
	}
	if st != nil {
		return observed(s, st), nil
	}
	wait := Result{Submission: s, Outcome: OutcomeWaiting, Observed: Submitted}
	if s.State != Submitted {
		// The signature was seen before: this node lags. Ignore it.
		return Result{Submission: s, Outcome: OutcomeObserved, Observed: Submitted, Stale: true}, nil
	}
	height, err := c.GetBlockHeight(ctx, chain.Finalized)
	if err != nil {
		return wait, unreadable(op, "blockHeight", err)
	}
	if height > s.LastValidBlockHeight && !opts.HoldDrop {
		// Every block that could hold it is final; one more look closes
		// the race with a landing between the first status and the height.
		st, err := Inspect(ctx, c, s.Signature)
		if err != nil {
			return wait, err
		}
		if st != nil {
			return observed(s, st), nil
		}
		return drop(ctx, s, opts)
	}
	if len(s.Wire) == 0 {
		return wait, nil
	}
	valid, err := c.IsBlockhashValid(ctx, s.Blockhash, chain.Processed)
	if err != nil {
		return wait, unreadable(op, "isBlockhashValid", err)
	}
	if !valid {
		// Lapsing but not yet final: a later step drops it.
		return wait, nil
	}
	if !carries(s.Wire, s.Signature) {
		return wait, fault.E(op, fault.SignatureRejected, "the stored transaction does not carry the submission's signature")
	}
	return send(ctx, c, s)
}

// observed is the Result of applying a known status.
func observed(s Submission, st *chain.SignatureStatus) Result {
	n, ob := Observe(s, st)
	return Result{Submission: n, Changed: ob.Moved, Outcome: OutcomeObserved, Status: st, Observed: ob.Observed, Stale: ob.Stale}
}

// drop ends a submission whose transaction can no longer land, unless
// SearchFunc finds a replacement.
func drop(ctx context.Context, s Submission, opts Options) (Result, error) {
	wait := Result{Submission: s, Outcome: OutcomeWaiting, Observed: Submitted}
	if opts.SearchFunc != nil {
		other, err := opts.SearchFunc(ctx)
		switch {
		case err != nil:
			return wait, err
		case other == s.Signature:
			// The search sees the transaction itself: the chain knows it
			// after all, and the next step observes it.
			return wait, nil
		case other != "":
			return Result{Submission: s, Outcome: OutcomeReplaced, Observed: Submitted, Replacement: other}, nil
		}
	}
	n := s
	var err error
	if n.State, err = Transit(s.State, EventDrop); err != nil {
		return wait, err
	}
	n.LastError = ""
	return Result{Submission: n, Changed: true, Outcome: OutcomeDropped, Observed: Submitted}, nil
}

// send sends the stored bytes, identical every time, and records the
// answer.
func send(ctx context.Context, c ChainClient, s Submission) (Result, error) {
	const op = "relay.Step"
	_, sendErr := c.SendTransaction(ctx, s.Wire, chain.SendOptions{PreflightCommitment: chain.Confirmed})
	class, detail := Classify(sendErr)
	n := s
	n.SendAttempts++
	n.LastError = class.Code()
	r := Result{Changed: true, Outcome: OutcomeSent, Observed: Submitted, Send: class}
	switch {
	case class == SendUncertain:
		r.SendErr = &fault.Error{Op: op, Code: fault.SubmissionUncertain,
			Message: "the transaction's submission is uncertain; the chain is inspected before any retry", Err: sendErr}
	case class.Refused():
		var err error
		if n.State, err = Transit(s.State, EventFailed); err != nil {
			return Result{Submission: s, Outcome: OutcomeWaiting, Observed: Submitted}, err
		}
		n.ChainError = detail
		r.SendErr = &fault.Error{Op: op, Code: class.Code(), Message: "the cluster refused the transaction", Err: sendErr}
	}
	r.Submission = n
	return r, nil
}

// carries reports whether wire is a transaction whose first signature is
// sig (base58).
func carries(wire []byte, sig string) bool {
	want, ok := token2022.DecodeBase58(sig)
	if !ok || len(want) != signatureSize {
		return false
	}
	n, size, ok := compactU16(wire)
	return ok && n >= 1 && len(wire) >= size+signatureSize && bytes.Equal(wire[size:size+signatureSize], want)
}

// signatureSize is an ed25519 signature's length.
const signatureSize = 64

// compactU16 decodes Solana's compact-u16 at the start of b (7 bits per
// byte, low first, 0x80 marking more) and returns it with its length.
func compactU16(b []byte) (n, size int, ok bool) {
	for i := 0; i < 3 && i < len(b); i++ {
		n |= int(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return n, i + 1, n <= 0xffff
		}
	}
	return 0, 0, false
}

// Inspect reads one signature's status with history (the status cache
// alone forgets a transaction some minutes after it lands). It returns
// nil when the node does not know the signature, and PROVIDER_UNAVAILABLE
// when the cluster cannot be read.
func Inspect(ctx context.Context, c ChainClient, sig string) (*chain.SignatureStatus, error) {
	sts, err := c.GetSignatureStatuses(ctx, []string{sig}, true)
	if err != nil {
		return nil, unreadable("relay.Inspect", "signatureStatuses", err)
	}
	if len(sts) == 0 {
		return nil, nil
	}
	return sts[0], nil
}

// FindByReference returns the oldest successful signature, other than
// exclude, of a transaction that touched ref ("" when none): how a payment
// carrying a Solana Pay reference is found whoever built it. It reads
// getSignaturesForAddress at confirmed, up to 1000 signatures.
// PROVIDER_UNAVAILABLE when the cluster cannot be read.
func FindByReference(ctx context.Context, c ChainClient, ref chain.Address, exclude string) (string, error) {
	infos, err := c.GetSignaturesForAddress(ctx, ref, chain.SignaturesOptions{Limit: 1000}, chain.Confirmed)
	if err != nil {
		return "", unreadable("relay.FindByReference", "signaturesForAddress", err)
	}
	for i := len(infos) - 1; i >= 0; i-- {
		if infos[i].Err == "" && infos[i].Signature != exclude {
			return infos[i].Signature, nil
		}
	}
	return "", nil
}

// CheckNetwork checks that c serves network (a CAIP-2 id): nothing is
// sent to or read from another cluster for a submission. It returns
// NETWORK_MISMATCH, with details expected and actual, when it serves
// another, and PROVIDER_UNAVAILABLE when the cluster cannot be read.
func CheckNetwork(ctx context.Context, c ChainClient, network string) error {
	const op = "relay.CheckNetwork"
	gh, err := c.GetGenesisHash(ctx)
	if err != nil {
		return unreadable(op, "genesisHash", err)
	}
	if got := (chain.Network{GenesisHash: gh}).CAIP2(); got != network {
		return fault.E(op, fault.NetworkMismatch, "the configured cluster is not the submission's network").
			With("expected", network).With("actual", got)
	}
	return nil
}

// unreadable turns a chain read failure into PROVIDER_UNAVAILABLE (the
// cluster is the provider), naming the read and keeping the cause.
func unreadable(op, read string, err error) error {
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "the cluster could not be read",
		Details: map[string]any{"read": read}, Err: err}
}
