package x402

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/fault"
)

// SettleInput is one settle request.
type SettleInput struct {
	// Key is the request's Idempotency-Key.
	Key string
	// Payload is the client's payment.
	Payload PaymentPayload
}

// Settled is a settle request's outcome.
type Settled struct {
	// ResourceID is the resource paid for ("" when the payment named
	// none of the caller's).
	ResourceID string
	// Response is what PAYMENT-RESPONSE carries: Success true only for a
	// payment the chain confirmed.
	Response SettleResponse
	// Settlement is the claimed settlement; nil for a payment refused
	// before it was claimed (invalid, or another request's transaction).
	Settlement *Settlement
	// Grant is the use the payment bought; nil unless settled.
	Grant *Grant
}

// Settle settles p's payment under in.Key, as the package documentation's
// "Settlement" describes: a key seen before with the same transaction
// resumes or answers its settlement, with another transaction is
// IDEMPOTENCY_CONFLICT; a transaction claimed by another request is
// refused (duplicate_settlement); an invalid payment is refused without
// a claim; a valid one is claimed (its own unit of work), settled by the
// facilitator and recorded. st reads the pool. Errors:
// SERVICE_UNAVAILABLE and PROVIDER_UNAVAILABLE as Verify's, and
// SUBMISSION_UNCERTAIN when the outcome is not known within
// Config.SettleTimeout (the watch finishes it; a retry with the same key
// answers it).
func (s *Service) Settle(ctx context.Context, st Store, p *access.Principal, in SettleInput) (Settled, error) {
	const op = "x402.Settle"
	e, c, err := s.ready(ctx, st, op, p.Environment)
	if err != nil {
		return Settled{}, err
	}
	scope := scopeOf(p)
	tx, txInv := DecodePaymentTransaction(in.Payload)
	r, req, inv := s.match(e, c, p, in.Payload)
	switch prior, err := st.X402SettlementByKey(ctx, scope, in.Key); {
	case err == nil:
		if txInv != nil || prior.PayloadHash != tx.PayloadHash() {
			return Settled{}, keyConflict(op)
		}
		return s.resume(ctx, e, prior, false)
	case !fault.Is(err, fault.NotFound):
		return Settled{}, err
	}
	refuse := func(i *Invalid) (Settled, error) {
		return Settled{ResourceID: r.ID, Response: SettleResponse{ErrorReason: i.Reason, ErrorMessage: i.Message, Network: c.Network}}, nil
	}
	if inv == nil {
		inv = txInv
	}
	if inv != nil {
		return refuse(inv)
	}
	switch _, err := st.X402SettlementByMessage(ctx, tx.MessageHash()); {
	case err == nil:
		return refuse(invalid(ReasonDuplicate, "the transaction was settled, or is being settled, by another request"))
	case !fault.Is(err, fault.NotFound):
		return Settled{}, err
	}
	vr, err := e.Facilitator.Verify(ctx, VerifyRequest{Payload: in.Payload, Requirements: req})
	if err != nil {
		return Settled{}, facilitatorDown(op, err)
	}
	if !vr.IsValid {
		out, _ := refuse(&Invalid{Reason: vr.InvalidReason, Message: vr.InvalidMessage})
		out.Response.Payer = vr.Payer
		return out, nil
	}
	height, err := e.Chain.GetBlockHeight(ctx, chain.Processed)
	if err != nil {
		return Settled{}, unreadable(op, "blockHeight", err)
	}
	payload, _ := json.Marshal(in.Payload) // decoded from JSON, so it encodes
	reqJSON, _ := json.Marshal(req)
	claim := Settlement{ID: SettlementPrefix + s.cfg.NewIDFunc(), Scope: scope, Principal: p.StableID(), IdempotencyKey: in.Key,
		PayloadHash: tx.PayloadHash(), MessageHash: tx.MessageHash(), ResourceID: r.ID, Network: req.Network, Asset: req.Asset,
		PayTo: req.PayTo, Amount: r.Amount, Payer: vr.Payer, Payload: payload, Requirements: reqJSON,
		LastValidBlockHeight: height + maxBlockhashAge, Attempts: 1, State: StateSubmitting, Version: 1}
	err = s.cfg.Run(ctx, func(w Store) error {
		claim.CreatedAt, claim.UpdatedAt = w.Now(), w.Now()
		if err := w.X402SettlementInsert(ctx, claim); err != nil {
			return err
		}
		return s.changed(ctx, w, claim)
	})
	if fault.Is(err, fault.Conflict) {
		// Another request claimed the key or the transaction meanwhile.
		if prior, kerr := st.X402SettlementByKey(ctx, scope, in.Key); kerr == nil {
			if prior.PayloadHash != claim.PayloadHash {
				return Settled{}, keyConflict(op)
			}
			return Settled{}, fault.E(op, fault.IdempotencyInProgress, "").With("field", "Idempotency-Key")
		}
		return refuse(invalid(ReasonDuplicate, "the transaction was settled, or is being settled, by another request"))
	}
	if err != nil {
		return Settled{}, err
	}
	return s.resume(ctx, e, claim, true)
}

// keyConflict is the IDEMPOTENCY_CONFLICT of a key that claimed another
// transaction.
func keyConflict(op string) error {
	return fault.E(op, fault.IdempotencyConflict, "The Idempotency-Key was used with another payment.").With("field", "Idempotency-Key")
}

// resume answers a settlement: as recorded once it is final, else after
// asking the facilitator (first is true for the call of the request that
// claimed it, whose Attempts already counts it) and recording what it
// established. SUBMISSION_UNCERTAIN when nothing was.
func (s *Service) resume(ctx context.Context, e Environment, set Settlement, first bool) (Settled, error) {
	if set.State.Final() {
		return s.recorded(ctx, s.cfg.ReadFunc(), set)
	}
	if !first {
		var err error
		set, err = s.countAttempt(ctx, set)
		if fault.Is(err, fault.Conflict) {
			// Another attempt (the watch, a retry) counted itself first and
			// is asking the facilitator: its outcome is recorded for both.
			return Settled{}, uncertain("x402.resume", set.Signature, err)
		}
		if err != nil {
			return Settled{}, err
		}
		if set.State.Final() {
			return s.recorded(ctx, s.cfg.ReadFunc(), set)
		}
	}
	wait, cancel := context.WithTimeout(ctx, s.cfg.SettleTimeout)
	defer cancel()
	o, err := s.settleOnce(wait, e, set)
	if err != nil {
		return Settled{}, err
	}
	return s.finish(ctx, set, o)
}

// countAttempt records one more facilitator call on set before it is
// made (a compare-and-set), and returns the settlement as stored.
func (s *Service) countAttempt(ctx context.Context, set Settlement) (Settlement, error) {
	var out Settlement
	err := s.cfg.Run(ctx, func(w Store) error {
		cur, err := w.X402Settlement(ctx, set.ID)
		if err != nil || cur.State.Final() {
			out = cur
			return err
		}
		next := cur
		next.Attempts, next.Version, next.UpdatedAt = cur.Attempts+1, cur.Version+1, w.Now()
		if err := w.X402SettlementUpdate(ctx, next, cur.Version); err != nil {
			return err
		}
		out = next
		return nil
	})
	return out, err
}

// confirmPoll spaces the status reads that check a facilitator's success
// on the environment's cluster: a slot.
const confirmPoll = 400 * time.Millisecond

// outcome is what one call of the facilitator established.
type outcome struct {
	event     Event
	response  SettleResponse
	signature string
	slot      uint64
}

// settleOnce asks the facilitator to settle set and checks its answer on
// the environment's cluster: a success counts only with a signature that
// is the fee payer's of the payment's message (anything else is
// unexplained) and a status confirmed without error. With a remote
// facilitator asked again, a refusal other than a chain failure may be
// the answer to a transaction it already sent (its duplicate guard), so it
// counts only once the blockhash has lapsed, and then as unexplained.
// SUBMISSION_UNCERTAIN when nothing was established.
func (s *Service) settleOnce(ctx context.Context, e Environment, set Settlement) (outcome, error) {
	const op = "x402.settle"
	var pp PaymentPayload
	var req Requirements
	if err := json.Unmarshal(set.Payload, &pp); err != nil {
		return outcome{}, fault.Wrap(op, err)
	}
	if err := json.Unmarshal(set.Requirements, &req); err != nil {
		return outcome{}, fault.Wrap(op, err)
	}
	_, local := e.Facilitator.(*Local)
	resumed := set.Attempts > 1
	resp, err := e.Facilitator.Settle(ctx, SettleRequest{Payload: pp, Requirements: req, LastValidBlockHeight: set.LastValidBlockHeight})
	if err != nil || (!resp.Success && !local && resumed && resp.ErrorReason != ReasonTransactionFailed) {
		if !local && resumed {
			if lapsed, _ := s.lapsed(ctx, e, set); lapsed {
				return outcome{event: EventUnexplained, response: SettleResponse{ErrorReason: ReasonUnexplained, Network: set.Network,
					ErrorMessage: "the facilitator never named the transaction it sent, and its blockhash has lapsed"}}, nil
			}
		}
		return outcome{}, uncertain(op, set.Signature, err)
	}
	if !resp.Success {
		resp.Transaction, resp.Network = "", set.Network
		return outcome{event: EventFail, response: resp}, nil
	}
	tx, inv := DecodePaymentTransaction(pp)
	sig, perr := message.ParseSignature(resp.Transaction)
	if inv != nil || perr != nil || !message.VerifySignature(tx.FeePayer(), tx.Message, sig) {
		return outcome{event: EventUnexplained, response: SettleResponse{ErrorReason: ReasonUnexplained, Network: set.Network,
			ErrorMessage: "the facilitator's signature is not the payment's"}}, nil
	}
	for {
		st, err := relay.Inspect(ctx, e.Chain, resp.Transaction)
		switch {
		case err != nil && !fault.Is(err, fault.ProviderUnavailable):
			return outcome{}, err
		case st != nil && st.Err != "":
			return outcome{event: EventFail, signature: resp.Transaction, response: SettleResponse{ErrorReason: ReasonTransactionFailed,
				ErrorMessage: "the transaction landed with an error: " + st.Err, Payer: set.Payer, Network: set.Network}}, nil
		case st != nil && (st.Status == chain.Confirmed || st.Status == chain.Finalized):
			return outcome{event: EventConfirm, signature: resp.Transaction, slot: st.Slot, response: SettleResponse{Success: true,
				Payer: set.Payer, Transaction: resp.Transaction, Network: set.Network, Amount: set.Amount.String()}}, nil
		}
		t := time.NewTimer(confirmPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return outcome{}, uncertain(op, resp.Transaction, ctx.Err())
		case <-t.C:
		}
	}
}

// lapsed reports whether set's transaction can no longer land: the
// finalized height is past its bound.
func (s *Service) lapsed(ctx context.Context, e Environment, set Settlement) (bool, error) {
	h, err := e.Chain.GetBlockHeight(ctx, chain.Finalized)
	return err == nil && h > set.LastValidBlockHeight, err
}

// finish records o on set in its own unit of work (a compare-and-set: a
// settlement leaves SUBMITTING once, whoever records it first) and
// answers the settlement as recorded.
func (s *Service) finish(ctx context.Context, set Settlement, o outcome) (Settled, error) {
	var done Settlement
	err := s.cfg.Run(ctx, func(w Store) error {
		cur, err := w.X402Settlement(ctx, set.ID)
		if err != nil {
			return err
		}
		done = cur
		if cur.State.Final() {
			return nil
		}
		to, err := Transition(cur.State, o.event)
		if err != nil {
			return err
		}
		next := cur
		next.State, next.Version, next.UpdatedAt = to, cur.Version+1, w.Now()
		next.Signature, next.Slot, next.ErrorReason = o.signature, o.slot, o.response.ErrorReason
		if err := w.X402SettlementUpdate(ctx, next, cur.Version); err != nil {
			return err
		}
		if to == StateSettled {
			r := s.grantOf(next)
			r.CreatedAt = w.Now()
			if err := w.X402GrantInsert(ctx, r); err != nil {
				return err
			}
		}
		done = next
		return s.changed(ctx, w, next)
	})
	if fault.Is(err, fault.Conflict) {
		// Recorded meanwhile (the watch, or a retry): answer that.
		cur, rerr := s.cfg.ReadFunc().X402Settlement(ctx, set.ID)
		if rerr != nil {
			return Settled{}, rerr
		}
		done, err = cur, nil
	}
	if err != nil {
		return Settled{}, err
	}
	out, err := s.recorded(ctx, s.cfg.ReadFunc(), done)
	if err == nil && done.State == StateFailed && o.response.ErrorMessage != "" && out.Response.ErrorReason == o.response.ErrorReason {
		out.Response.ErrorMessage = o.response.ErrorMessage
	}
	return out, err
}

// grantOf is the grant a settled settlement buys.
func (s *Service) grantOf(set Settlement) Grant {
	kind := KindSoundAnalysis
	if e, ok := s.cfg.Environments[set.Scope.Environment]; ok {
		if r, ok := e.resource(set.ResourceID); ok {
			kind = r.Kind
		}
	}
	return Grant{ID: GrantPrefix + s.cfg.NewIDFunc(), Scope: set.Scope, ResourceID: set.ResourceID, Kind: kind,
		SettlementID: set.ID, State: GrantAvailable}
}

// recorded answers a settlement as stored: PAYMENT-RESPONSE's success
// only once settled, with its grant.
func (s *Service) recorded(ctx context.Context, st Store, set Settlement) (Settled, error) {
	out := Settled{ResourceID: set.ResourceID, Settlement: &set,
		Response: SettleResponse{Payer: set.Payer, Network: set.Network, ErrorReason: set.ErrorReason}}
	switch set.State {
	case StateSettled:
		out.Response = SettleResponse{Success: true, Payer: set.Payer, Transaction: set.Signature, Network: set.Network,
			Amount: set.Amount.String()}
		g, err := st.X402GrantBySettlement(ctx, set.ID)
		if err != nil {
			return Settled{}, err
		}
		out.Grant = &g
	case StateSubmitting:
		return Settled{}, uncertain("x402.recorded", set.Signature, nil)
	}
	return out, nil
}
