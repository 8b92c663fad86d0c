package intent

import (
	"context"
	"errors"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/fault"
)

// Outcome is what one relay or reconciliation run did.
type Outcome struct {
	// Intent is the intent after the run.
	Intent Intent
	// Changed reports that the run wrote the intent.
	Changed bool
	// Observed is the network state the chain reported ("" when the
	// run did not ask, NetworkSubmitted when the signature was unknown).
	Observed NetworkState
	// Stale reports an observation behind the intent's network state (a
	// lagging node); it was ignored, never applied.
	Stale bool
	// Sent reports that the run sent the signed bytes.
	Sent bool
	// Reconciliation is the intent's reconciliation record after a
	// ReconcileSettled run that concluded (now or before); nil otherwise.
	Reconciliation *Reconciliation
}

// Relay is the relay job's body: it sends an intent's stored signed
// transaction. It inspects the signature's status first (with history)
// and never sends a transaction the chain already knows; it re-sends only
// the identical stored bytes, only while the blockhash is valid, and never
// builds another transaction. A send whose outcome is unknown (timeout,
// unavailable node) leaves the intent SUBMITTED with LastError
// SUBMISSION_UNCERTAIN and returns that error, so the job retries and the
// next run inspects the chain before anything else. A refusal that can
// never succeed (a failed preflight, a bad signature) fails the intent; a
// -32002 AlreadyProcessed counts as sent. Once the finalized block height
// passes the blockhash's last valid height with no status, the
// transaction was dropped and the intent EXPIRES (or goes to review when
// another payment carries its reference). The rules are relay.Step's;
// Relay maps its result onto the intent.
//
// Intents not waiting to be relayed are returned unchanged.
//
// Errors: NOT_FOUND; NETWORK_MISMATCH when the environment's cluster is
// not the intent's; PROVIDER_UNAVAILABLE when the cluster cannot be read
// (nothing changes); SUBMISSION_UNCERTAIN; TRANSACTION_FAILED or
// SIGNATURE_REJECTED when the node refused the transaction for good (the
// intent is FAILED); CONFLICT when the intent changed meanwhile.
func (s *Service) Relay(ctx context.Context, id string) (Outcome, error) {
	const op = "intent.Relay"
	it, err := s.cfg.ReadFunc().Intent(ctx, id)
	if err != nil {
		return Outcome{}, fault.Wrap(op, err)
	}
	if it.State != StateSubmitted || it.Origin != OriginSigned || it.NetworkState != NetworkSubmitted {
		return Outcome{Intent: it}, nil
	}
	c, netID, err := s.cluster(ctx, op, it)
	if err != nil {
		return Outcome{Intent: it}, err
	}
	return s.step(ctx, op, c, netID, it)
}

// Reconcile is the watch and sweep jobs' body: it moves one pending
// intent as far as the chain allows, up to SETTLED (the comparison after
// settlement is ReconcileSettled's). A CREATED intent is searched by its reference
// (getSignaturesForAddress, oldest successful signature first), which
// finds a wallet-built Solana Pay transfer or a prepared transaction the
// wallet broadcast without a submit; with none found it EXPIRES once its
// lifetime passes. A known signature's status is then read (with history):
// unknown goes through the relay's rules (send or drop); known advances the
// network state (never backwards: a lagging observation is ignored and
// reported as Stale), verifies the effects once confirmed (VERIFIED, or
// REQUIRES_REVIEW with the mismatches as evidence, crediting nothing) and
// settles through the purpose's Settle hook once the network state reaches
// the purpose's threshold, exactly once: nothing moves an intent back to
// VERIFIED, and the move is a compare-and-set in the hook's unit of work.
// A settled (or reconciling, or reconciled) intent only has its network
// state followed to finalized.
//
// Errors: as Relay, plus VERIFICATION_FAILED when the stored economics no
// longer match their hash, and the Settle hook's error (the move to
// SETTLED is rolled back and retried).
func (s *Service) Reconcile(ctx context.Context, id string) (Outcome, error) {
	const op = "intent.Reconcile"
	it, err := s.cfg.ReadFunc().Intent(ctx, id)
	if err != nil {
		return Outcome{}, fault.Wrap(op, err)
	}
	return s.reconcile(ctx, op, it)
}

// Check runs Reconcile for p's own intent: the protected chain-status
// route. Errors: UNAUTHENTICATED, ACCESS_DENIED, NOT_FOUND, and those of
// Reconcile.
func (s *Service) Check(ctx context.Context, p *access.Principal, id string) (Outcome, error) {
	const op = "intent.Check"
	it, err := s.Get(ctx, p, id)
	if err != nil {
		return Outcome{}, fault.Wrap(op, err)
	}
	return s.reconcile(ctx, op, it)
}

// CheckInternal runs Check for an operator holding the internal scope
// (the chain-status route): any intent of environment env, whoever owns
// it. An intent of the other environment is NOT_FOUND.
func (s *Service) CheckInternal(ctx context.Context, env access.Environment, id string) (Outcome, error) {
	const op = "intent.CheckInternal"
	it, err := s.cfg.ReadFunc().Intent(ctx, id)
	if err != nil {
		return Outcome{}, fault.Wrap(op, err)
	}
	if it.Actor.Environment != env {
		return Outcome{}, fault.E(op, fault.NotFound, "the transaction intent was not found")
	}
	return s.reconcile(ctx, op, it)
}

// ReconcileDue reconciles up to limit pending intents (the sweep
// job) and returns each outcome; the errors of individual intents are
// joined, and one intent's error does not stop the others.
func (s *Service) ReconcileDue(ctx context.Context, limit int) ([]Outcome, error) {
	const op = "intent.ReconcileDue"
	list, err := s.cfg.ReadFunc().IntentsToReconcile(ctx, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	var outs []Outcome
	var errs []error
	for _, it := range list {
		o, err := s.reconcile(ctx, op, it)
		outs = append(outs, o)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return outs, errors.Join(errs...)
}

func (s *Service) reconcile(ctx context.Context, op string, it Intent) (Outcome, error) {
	if !it.State.Pending() {
		if Following(it) {
			return s.follow(ctx, op, it)
		}
		return Outcome{Intent: it}, nil
	}
	if err := integrity(op, it); err != nil {
		return Outcome{Intent: it}, err
	}
	c, netID, err := s.cluster(ctx, op, it)
	if err != nil {
		return Outcome{Intent: it}, err
	}
	if it.Signature == "" {
		sig, err := relay.FindByReference(ctx, c, it.Reference, "")
		if err != nil {
			return Outcome{Intent: it}, fault.Wrap(op, err)
		}
		now := s.cfg.Clock.Now().UTC()
		next := it
		next.Version++
		next.UpdatedAt = now
		if sig == "" {
			if now.Before(it.ExpiresAt) {
				return Outcome{Intent: it}, nil
			}
			if next.State, err = Transit(it.State, EventExpire); err != nil {
				return Outcome{Intent: it}, err
			}
			return s.apply(ctx, op, it, next, "", false)
		}
		if next.State, err = Transit(it.State, EventSubmit); err != nil {
			return Outcome{Intent: it}, err
		}
		if next.NetworkState, err = TransitNetwork(it.NetworkState, NetworkEventSign); err != nil {
			return Outcome{Intent: it}, err
		}
		next.Signature, next.Origin, next.SubmittedAt = sig, OriginReference, now
		o, err := s.apply(ctx, op, it, next, sig, false)
		if err != nil {
			return o, err
		}
		it = o.Intent
	}
	return s.step(ctx, op, c, netID, it)
}

// Following reports whether a settled intent's transaction is still
// followed: a purpose may settle at confirmed, and the network state then
// moves on to finalized (or failed) without moving the business state,
// through reconciliation and after it.
func Following(it Intent) bool {
	switch it.State {
	case StateSettled, StateReconciling, StateReconciled:
	default:
		return false
	}
	return it.Signature != "" && it.NetworkState != NetworkFinalized && !it.NetworkState.Terminal()
}

// follow advances a settled intent's network state from the signature's
// status (relay.Inspect, relay.Observe); the business state, the
// settlement and the landing slot never change, and nothing is sent.
func (s *Service) follow(ctx context.Context, op string, it Intent) (Outcome, error) {
	c, _, err := s.cluster(ctx, op, it)
	if err != nil {
		return Outcome{Intent: it}, err
	}
	st, err := relay.Inspect(ctx, c, it.Signature)
	if err != nil || st == nil {
		return Outcome{Intent: it}, fault.Wrap(op, err)
	}
	sub, ob := relay.Observe(submission(it), st)
	observed, next := NetworkState(ob.Observed), NetworkState(sub.State)
	if !ob.Moved || next == it.NetworkState {
		return Outcome{Intent: it, Observed: observed, Stale: !ob.Moved}, nil
	}
	n := it
	n.Version++
	n.UpdatedAt = s.cfg.Clock.Now().UTC()
	n.NetworkState = next
	o, err := s.apply(ctx, op, it, n, "", false)
	o.Observed = observed
	return o, err
}

// cluster returns the intent's environment client after checking that it
// serves the intent's network. NETWORK_MISMATCH otherwise.
func (s *Service) cluster(ctx context.Context, op string, it Intent) (ChainClient, string, error) {
	envc, err := s.env(op, it.Actor.Environment)
	if err != nil {
		return nil, "", err
	}
	netID, err := network(ctx, op, envc.Client)
	if err != nil {
		return nil, "", err
	}
	if netID != it.Network {
		return nil, "", fault.E(op, fault.NetworkMismatch, "the configured cluster is not the intent's network").
			With("expected", it.Network).With("actual", netID)
	}
	return envc.Client, netID, nil
}

// submission is the network side of the intent's transaction, as the
// relay takes it: the stored signed bytes only when the client submitted
// them (the relay sends nothing else), the prepared blockhash and its
// last valid height, and the intent's network state and relay fields.
func submission(it Intent) relay.Submission {
	sub := relay.Submission{Network: it.Network, Signature: it.Signature,
		Blockhash: it.Transaction.Blockhash, LastValidBlockHeight: it.Transaction.LastValidBlockHeight,
		State: relay.State(it.NetworkState), SendAttempts: it.SendAttempts, LastError: it.LastError,
		ChainError: it.ChainError, Slot: it.Slot}
	if it.Origin == OriginSigned {
		sub.Wire = it.SignedTransaction
	}
	return sub
}

// step runs the relay's rules once for a bound signature (relay.Step:
// status first, stale observations ignored, a drop only past the last
// valid height, the identical bytes re-sent only while the blockhash is
// valid) and moves the intent from the result. A signature the wallet
// broadcast itself gets Config.DropGrace after submission before it can
// count as dropped, and a dropped transaction whose reference carries
// another payment goes to review.
func (s *Service) step(ctx context.Context, op string, c ChainClient, netID string, it Intent) (Outcome, error) {
	r, err := relay.Step(ctx, c, submission(it), relay.Options{
		HoldDrop: it.Origin == OriginSignature && s.cfg.Clock.Now().Before(it.SubmittedAt.Add(s.cfg.DropGrace)),
		SearchFunc: func(ctx context.Context) (string, error) {
			return relay.FindByReference(ctx, c, it.Reference, it.Signature)
		},
	})
	if err != nil {
		return Outcome{Intent: it, Observed: NetworkState(r.Observed)}, fault.Wrap(op, err)
	}
	switch r.Outcome {
	case relay.OutcomeObserved:
		if r.Status == nil {
			// The signature was seen before: this node lags. Ignore it.
			return Outcome{Intent: it, Observed: NetworkSubmitted, Stale: true}, nil
		}
		return s.observe(ctx, op, c, netID, it, r.Status)
	case relay.OutcomeSent:
		return s.sent(ctx, op, it, r)
	case relay.OutcomeDropped, relay.OutcomeReplaced:
		return s.dropped(ctx, op, it, r)
	}
	return Outcome{Intent: it, Observed: NetworkSubmitted}, nil
}

// dropped expires an intent whose transaction can no longer land, unless
// another payment carries its reference (r.Replacement), which goes to
// review with the network state left as it was.
func (s *Service) dropped(ctx context.Context, op string, it Intent, r relay.Result) (Outcome, error) {
	next := it
	next.Version++
	next.UpdatedAt = s.cfg.Clock.Now().UTC()
	next.LastError = ""
	var err error
	if r.Outcome == relay.OutcomeReplaced {
		if next.State, err = Transit(it.State, EventConflictingSignature); err != nil {
			return Outcome{Intent: it}, err
		}
		next.Evidence = append(next.Evidence, Mismatch{Field: "signature", Expected: it.Signature, Actual: r.Replacement})
	} else {
		if next.State, err = Transit(it.State, EventExpire); err != nil {
			return Outcome{Intent: it}, err
		}
		next.NetworkState = NetworkState(r.Submission.State)
	}
	o, err := s.apply(ctx, op, it, next, "", false)
	o.Observed = NetworkSubmitted
	return o, err
}

// sent records a send of the stored signed bytes: the attempt, its last
// error and, when the node refused the transaction for good, the failure
// (the intent FAILS). The send's fault (SUBMISSION_UNCERTAIN, or the
// refusal's) is returned once the intent is written.
func (s *Service) sent(ctx context.Context, op string, it Intent, r relay.Result) (Outcome, error) {
	sub := r.Submission
	next := it
	next.Version++
	next.UpdatedAt = s.cfg.Clock.Now().UTC()
	next.NetworkState, next.SendAttempts, next.LastError, next.ChainError =
		NetworkState(sub.State), sub.SendAttempts, sub.LastError, sub.ChainError
	if r.Send.Refused() {
		var err error
		if next.State, err = Transit(it.State, EventFail); err != nil {
			return Outcome{Intent: it}, err
		}
	}
	o, err := s.apply(ctx, op, it, next, "", false)
	o.Sent, o.Observed = true, NetworkSubmitted
	if err != nil {
		return o, err
	}
	return o, fault.Wrap(op, r.SendErr)
}

// observe applies a known status: the network state moves forward only,
// the business state follows, effects are verified at confirmed, and
// settlement happens at the purpose's threshold.
func (s *Service) observe(ctx context.Context, op string, c ChainClient, netID string, it Intent, st *chain.SignatureStatus) (Outcome, error) {
	// The network part is the relay's (forward only, the landing slot);
	// LastError and ChainError follow the intent's own rules below.
	sub, ob := relay.Observe(submission(it), st)
	observed, netNext, moved, stale := NetworkState(ob.Observed), NetworkState(sub.State), ob.Moved, ob.Stale
	next := it
	changed := moved
	next.NetworkState, next.Slot = netNext, sub.Slot
	var err error
	settle := false
	if netNext == NetworkFailed {
		if it.State == StateSubmitted || it.State == StateConfirming {
			if next.State, err = Transit(it.State, EventFail); err != nil {
				return Outcome{Intent: it}, err
			}
			next.ChainError, next.LastError = st.Err, fault.TransactionFailed
			changed = true
		}
	} else {
		if next.State == StateSubmitted && netNext.AtLeast(chain.Processed) {
			if next.State, err = Transit(next.State, EventLand); err != nil {
				return Outcome{Intent: it}, err
			}
			next.LastError = ""
			changed = true
		}
		if next.State == StateConfirming && netNext.AtLeast(chain.Confirmed) {
			tx, err := c.GetTransaction(ctx, it.Signature, chain.Confirmed)
			switch {
			case errors.Is(err, chain.ErrTransactionNotFound):
				// Not served yet at confirmed: the next run verifies.
			case err != nil:
				return Outcome{Intent: it, Observed: observed}, chainErr(op, "transaction", err)
			default:
				now := s.cfg.Clock.Now().UTC()
				if mm := Verify(next, netID, tx); len(mm) > 0 {
					if next.State, err = Transit(next.State, EventMismatch); err != nil {
						return Outcome{Intent: it}, err
					}
					next.Evidence = append(next.Evidence, mm...)
					next.LastError = fault.RequiresReview
				} else {
					if next.State, err = Transit(next.State, EventVerify); err != nil {
						return Outcome{Intent: it}, err
					}
					next.VerifiedAt = now
				}
				if tx.Slot != 0 {
					next.Slot = tx.Slot
				}
				changed = true
			}
		}
		if next.State == StateVerified {
			p, err := s.cfg.Registry.Lookup(it.Purpose)
			if err != nil {
				return Outcome{Intent: it}, fault.Wrap(op, err)
			}
			if netNext.AtLeast(p.Threshold) {
				if next.State, err = Transit(next.State, EventSettle); err != nil {
					return Outcome{Intent: it}, err
				}
				next.SettledAt = s.cfg.Clock.Now().UTC()
				settle, changed = true, true
			}
		}
	}
	if !changed {
		return Outcome{Intent: it, Observed: observed, Stale: stale}, nil
	}
	next.Version = it.Version + 1
	next.UpdatedAt = s.cfg.Clock.Now().UTC()
	o, err := s.apply(ctx, op, it, next, "", settle)
	o.Observed, o.Stale = observed, stale
	return o, err
}

// apply writes next over prev in one unit of work: the intent is locked
// and must still be at prev's version (CONFLICT otherwise: another run
// moved it, and the job retries from the new state); bind, when set, is
// bound to the intent first; settle runs the purpose's Settle hook in the
// same unit, so the credits and the SETTLED state commit together.
func (s *Service) apply(ctx context.Context, op string, prev, next Intent, bind string, settle bool) (Outcome, error) {
	err := s.run(ctx, func(st Store) error {
		cur, err := st.LockIntent(ctx, prev.ID)
		if err != nil {
			return err
		}
		if cur.Version != prev.Version {
			return fault.E(op, fault.Conflict, "the intent changed meanwhile").With("intentId", prev.ID)
		}
		if bind != "" {
			if err := CheckSignatureFree(ctx, st, bind, prev.ID); err != nil {
				return err
			}
			if err := st.BindSignature(ctx, bind, prev.ID); err != nil {
				return err
			}
		}
		if settle {
			p, err := s.cfg.Registry.Lookup(next.Purpose)
			if err != nil {
				return err
			}
			if err := p.Settle(ctx, st, next); err != nil {
				if fault.CodeOf(err) == fault.Internal {
					return &fault.Error{Op: op, Code: fault.SettlementFailed, Message: "the payment could not be settled", Err: err}
				}
				return err
			}
		}
		if err := st.UpdateIntent(ctx, next, prev.Version); err != nil {
			return err
		}
		return s.changed(ctx, st, next)
	})
	if err != nil {
		return Outcome{Intent: prev}, fault.Wrap(op, err)
	}
	return Outcome{Intent: next, Changed: true}, nil
}
