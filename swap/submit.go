package swap

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// SubmitInput is a submit request (spec, "Swap records": signature,
// signedTransactionBase64).
type SubmitInput struct {
	// Signature is the transaction's first signature, base58.
	Signature string
	// SignedTransactionBase64 is the signed transaction's wire bytes,
	// standard base64.
	SignedTransactionBase64 string
}

// Submitted is an operation after a submit, with its submission.
type Submitted struct {
	// Operation is the operation after the submit.
	Operation Operation
	// Submission is the network side of its transaction.
	Submission relay.Submission
	// Replay reports a submit of the signature already bound: nothing
	// changed.
	Replay bool
}

// SubmitStore is the unit of work of submitting and relaying: the
// operation and, beside it, the network side of its signed transaction
// (chain/relay's Submission), one per operation.
type SubmitStore interface {
	OperationStore
	// SwapSubmissionInsert writes operationID's submission. CONFLICT when
	// the operation has one.
	SwapSubmissionInsert(ctx context.Context, operationID string, s relay.Submission) error
	// SwapSubmission returns operationID's submission. NOT_FOUND when
	// none.
	SwapSubmission(ctx context.Context, operationID string) (relay.Submission, error)
	// SwapSubmissionUpdate writes operationID's submission when its
	// stored send count is prevAttempts and state prevState. CONFLICT
	// otherwise.
	SwapSubmissionUpdate(ctx context.Context, operationID string, s relay.Submission, prevAttempts int, prevState relay.State) error
	// SwapOperationByID returns the operation id, whoever owns it (for
	// the platform's own jobs). NOT_FOUND when none.
	SwapOperationByID(ctx context.Context, id string) (Operation, error)
	// SwapOperationsExpired lists up to limit operations in QUOTED,
	// INTENT_CREATED or AWAITING_SIGNATURE whose quote expired at or
	// before now, oldest expiry first.
	SwapOperationsExpired(ctx context.Context, now time.Time, limit int) ([]Operation, error)
}

// The relay's job kind and timing.
const (
	// JobWatch follows one submitted operation (payload {"operationId"};
	// key "swap.watch:<id>:<n>"): it relays the signed transaction
	// (chain/relay.Step: inspect first, send only identical bytes while
	// the blockhash is valid) and applies what the chain reports, every
	// WatchEvery until the operation is confirmed or ends.
	JobWatch = "swap.watch"
	// WatchEvery spaces one operation's relay steps.
	WatchEvery = time.Second
)

// watchPayload is JobWatch's payload.
type watchPayload struct {
	OperationID string `json:"operationId"`
	// Step numbers the watch's runs, for their unique keys.
	Step int `json:"step"`
}

// parsedSubmit is a submit request checked against its intent.
type parsedSubmit struct {
	intent    Intent
	signature string
	wire      []byte
}

// checkSubmit checks in against the intent id of p, reading st: the
// intent exists for p (NOT_FOUND), is intact (QUOTE_MISMATCH), the signed
// transaction parses (INVALID_INPUT), carries one signature equal to
// in.Signature over exactly the prepared message (SIGNATURE_REJECTED),
// and that signature verifies for the intent's wallet
// (SIGNATURE_REJECTED). Nothing is rebuilt or re-signed.
func checkSubmit(ctx context.Context, st OperationStore, p *access.Principal, intentID string, in SubmitInput) (parsedSubmit, error) {
	const op = "swap.Submit"
	owner := Owner{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: p.Environment}
	it, _, err := st.SwapIntent(ctx, owner, intentID)
	if err != nil {
		return parsedSubmit{}, fault.Wrap(op, err)
	}
	if err := it.CheckIntegrity(); err != nil {
		return parsedSubmit{}, err
	}
	wire, err := base64.StdEncoding.DecodeString(in.SignedTransactionBase64)
	if err != nil || len(wire) == 0 {
		return parsedSubmit{}, fault.Invalid(op, "signedTransactionBase64", "The signed transaction is standard base64 of its wire bytes.")
	}
	signed, err := message.ParseSigned(wire)
	if err != nil {
		return parsedSubmit{}, fault.Invalid(op, "signedTransactionBase64", "The signed transaction does not parse: "+err.Error())
	}
	rejected := func(reason, msg string) error {
		return fault.E(op, fault.SignatureRejected, msg).With("reason", reason)
	}
	if len(signed.Signatures) != 1 {
		return parsedSubmit{}, rejected("signers", "The prepared transaction has one signer, the intent's wallet.")
	}
	if err := it.CheckMessage(signed.Message); err != nil {
		return parsedSubmit{}, err
	}
	sig := token2022.EncodeBase58(signed.Signatures[0])
	if in.Signature != sig {
		return parsedSubmit{}, rejected("signature", "The signature is not the signed transaction's.")
	}
	if !message.VerifySignature(it.Wallet, signed.Message, signed.Signatures[0]) {
		return parsedSubmit{}, rejected("signature_invalid", "The signature does not verify for the intent's wallet.")
	}
	return parsedSubmit{intent: it, signature: sig, wire: wire}, nil
}

// Submit binds a signed transaction to the intent id of p and hands it
// to the relay, in st's unit of work (the route's, with its idempotency
// record). After checkSubmit: a submit of the signature already bound is
// a replay that changes nothing; another signature for an intent already
// bound is REQUIRES_REVIEW (the operation moves to review in a unit of
// work of its own, whatever the answer); an operation no longer awaiting
// its signature is INVALID_STATE_TRANSITION; an expired intent
// QUOTE_EXPIRED. Otherwise the operation moves to SIGNED and SUBMITTED
// with the signature bound (a signature binds one operation only), the
// submission is stored with the exact signed bytes, and the watch job
// that relays and follows it is enqueued. RPC acceptance is not
// settlement: the answer is SUBMITTED.
func (s *Service) Submit(ctx context.Context, st SubmitStore, p *access.Principal, intentID string, in SubmitInput) (Submitted, error) {
	const op = "swap.Submit"
	ps, err := checkSubmit(ctx, st, p, intentID, in)
	if err != nil {
		return Submitted{}, err
	}
	it := ps.intent
	o, err := st.SwapOperation(ctx, it.Owner, it.OperationID)
	if err != nil {
		return Submitted{}, fault.Wrap(op, err)
	}
	switch {
	case o.Signature == ps.signature:
		sub, err := st.SwapSubmission(ctx, o.ID)
		if err != nil {
			return Submitted{}, fault.Wrap(op, err)
		}
		return Submitted{Operation: o, Submission: sub, Replay: true}, nil
	case o.Signature != "":
		return Submitted{}, errConflictingSignature(o.ID)
	case o.State != StateAwaitingSignature:
		return Submitted{}, fault.E(op, fault.InvalidState, "The swap operation is not awaiting a signature.").With("state", string(o.State))
	case !st.Now().Before(it.ExpiresAt):
		return Submitted{}, fault.E(op, fault.QuoteExpired, "The intent has expired; request a new quote.").With("expiresAt", it.ExpiresAt)
	}
	prev := o.Version
	for _, e := range []Event{EventSign, EventSubmit} {
		if o, err = o.Move(e, st.Now()); err != nil {
			return Submitted{}, fault.Wrap(op, err)
		}
	}
	o.Version, o.Signature = prev+1, ps.signature
	if err := st.SwapOperationUpdate(ctx, o, prev); err != nil {
		return Submitted{}, fault.Wrap(op, err)
	}
	sub := relay.Submission{Network: it.Network, Signature: ps.signature, Wire: ps.wire, Blockhash: it.RecentBlockhash,
		LastValidBlockHeight: it.LastValidBlockHeight, State: relay.Submitted}
	if err := st.SwapSubmissionInsert(ctx, o.ID, sub); err != nil {
		return Submitted{}, fault.Wrap(op, err)
	}
	if err := s.watch(ctx, st, o.ID, 0, st.Now()); err != nil {
		return Submitted{}, fault.Wrap(op, err)
	}
	if err := changed(ctx, st, o); err != nil {
		return Submitted{}, fault.Wrap(op, err)
	}
	return Submitted{Operation: o, Submission: sub}, nil
}

// errConflictingSignature is the answer to a second signature; the route
// records the review (ReviewConflict) in a unit of work of its own.
func errConflictingSignature(operationID string) error {
	return fault.E("swap.Submit", fault.RequiresReview, "The intent is bound to another signature; the swap is held for review.").
		With("operationId", operationID)
}

// ReviewConflict moves the operation of the intent id of p to
// REQUIRES_REVIEW after a submit with another, valid signature than the
// one bound (checkSubmit passed), in a unit of work of its own; a
// repeated conflict changes nothing more.
func (s *Service) ReviewConflict(ctx context.Context, p *access.Principal, intentID string, in SubmitInput) error {
	const op = "swap.ReviewConflict"
	return s.cfg.SubmitRun(ctx, func(st SubmitStore) error {
		ps, err := checkSubmit(ctx, st, p, intentID, in)
		if err != nil {
			return err
		}
		o, err := st.SwapOperation(ctx, ps.intent.Owner, ps.intent.OperationID)
		if err != nil {
			return fault.Wrap(op, err)
		}
		if o.Signature == "" || o.Signature == ps.signature || o.State == StateRequiresReview {
			return nil
		}
		prev := o.Version
		if o, err = o.Move(EventConflictingSignature, st.Now()); err != nil {
			return fault.Wrap(op, err)
		}
		o.Version, o.LastError = prev+1, string(fault.RequiresReview)
		if err := st.SwapOperationUpdate(ctx, o, prev); err != nil {
			return fault.Wrap(op, err)
		}
		return changed(ctx, st, o)
	})
}

// watch enqueues the watch job's run number step for operationID at at.
func (s *Service) watch(ctx context.Context, st OperationStore, operationID string, step int, at time.Time) error {
	payload, _ := json.Marshal(watchPayload{OperationID: operationID, Step: step})
	_, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobWatch, Payload: payload, RunAt: at,
		UniqueKey: fmt.Sprintf("%s:%s:%d", JobWatch, operationID, step)})
	if err == nil && s.cfg.WakeFunc != nil {
		st.AfterCommit(s.cfg.WakeFunc)
	}
	return err
}

// Watch runs one relay step of a submitted operation: it inspects the
// signature, sends the stored bytes when the chain does not know them and
// the blockhash is valid, and applies the outcome: a landing moves the
// operation to CONFIRMING and, at confirmed, CONFIRMED; a failure on
// chain, a refusal that can never succeed, or a drop (every block that
// could hold it is final and nothing landed) moves it to FAILED; an
// uncertain send records SUBMISSION_UNCERTAIN and the next step inspects
// the chain before anything else. Once confirmed (or failed) it runs
// Settle, as the verify route does. It returns whether the operation
// still needs watching.
func (s *Service) Watch(ctx context.Context, operationID string) (bool, error) {
	const op = "swap.Watch"
	read := s.cfg.SubmitReadFunc()
	o, err := read.SwapOperationByID(ctx, operationID)
	if err != nil {
		return false, fault.Wrap(op, err)
	}
	if o.State != StateSubmitted && o.State != StateConfirming {
		return false, nil
	}
	sub, err := read.SwapSubmission(ctx, operationID)
	if err != nil {
		return false, fault.Wrap(op, err)
	}
	e := s.cfg.Environments[o.Owner.Environment]
	if e.Chain == nil {
		return true, notConfigured(op, "cluster_not_configured")
	}
	if err := relay.CheckNetwork(ctx, e.Chain, sub.Network); err != nil {
		return true, err
	}
	res, stepErr := relay.Step(ctx, e.Chain, sub, relay.Options{})
	if stepErr != nil && !res.Changed {
		return true, stepErr
	}
	next := o
	var events []Event
	lastError := o.LastError
	// A transaction the chain shows failed landed: Settle concludes it from
	// the chain's record (FAILED, with the verification as evidence), as
	// the verify route does, so both leave the same records.
	landedFailed := res.Outcome == relay.OutcomeObserved && res.Submission.State == relay.Failed
	switch {
	case landedFailed:
	case res.Submission.State == relay.Failed || res.Outcome == relay.OutcomeDropped:
		events = append(events, EventFail)
		lastError = string(fault.TransactionFailed)
		if res.Send == relay.SendPreflightFailed {
			lastError = string(fault.SimulationFailed)
		} else if res.Submission.LastError != "" {
			lastError = string(res.Submission.LastError)
		}
	case res.Submission.State.AtLeast(chain.Confirmed):
		if o.State == StateSubmitted {
			events = append(events, EventLand)
		}
		events = append(events, EventConfirm)
		lastError = ""
	case res.Submission.State == relay.Processed && o.State == StateSubmitted:
		events = append(events, EventLand)
		lastError = ""
	case res.Outcome == relay.OutcomeSent:
		lastError = string(res.Submission.LastError)
	}
	for _, ev := range events {
		if next, err = next.Move(ev, s.cfg.Clock.Now()); err != nil {
			return false, fault.Wrap(op, err)
		}
	}
	moved := next.State != o.State || lastError != o.LastError
	if res.Changed || moved {
		err := s.cfg.SubmitRun(ctx, func(st SubmitStore) error {
			if res.Changed {
				if err := st.SwapSubmissionUpdate(ctx, operationID, res.Submission, sub.SendAttempts, sub.State); err != nil {
					return err
				}
			}
			if !moved {
				return nil
			}
			next.Version, next.LastError, next.UpdatedAt = o.Version+1, lastError, st.Now()
			if err := st.SwapOperationUpdate(ctx, next, o.Version); err != nil {
				return err
			}
			return changed(ctx, st, next)
		})
		if err != nil {
			return true, fault.Wrap(op, err)
		}
	}
	if stepErr != nil {
		return true, stepErr
	}
	if next.State == StateConfirmed || landedFailed {
		// Verify and settle at once, or conclude the failure: the verify
		// route does the same, and every path converges on the one outcome.
		res, err := s.Settle(ctx, next.Owner, next.IntentID)
		if err != nil {
			return true, err
		}
		// Not at confirmed commitment yet: watch on.
		return res.Pending, nil
	}
	return next.State == StateSubmitted || next.State == StateConfirming, nil
}

// watchJob runs Watch and, while the operation still needs it, enqueues
// the next run WatchEvery later. An error leaves the job to the pool's
// retries, which inspect the chain again before anything else.
func (s *Service) watchJob(ctx context.Context, j jobs.Job) error {
	var in watchPayload
	if err := json.Unmarshal(j.Payload, &in); err != nil || in.OperationID == "" {
		return fmt.Errorf("%s: bad payload %q", JobWatch, j.Payload)
	}
	again, err := s.Watch(ctx, in.OperationID)
	if err != nil && !fault.Is(err, fault.SubmissionUncertain) && !fault.Is(err, fault.ProviderUnavailable) {
		return err
	}
	if !again {
		return nil
	}
	return s.cfg.SubmitRun(ctx, func(st SubmitStore) error {
		return s.watch(ctx, st, in.OperationID, in.Step+1, st.Now().Add(WatchEvery))
	})
}
