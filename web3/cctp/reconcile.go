package cctp

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// Reconcile reads both sides of a DESTINATION_VERIFIED transfer of env
// again, at finality, and completes it only when everything still holds:
// the burn's receipt is in a finalized block and its DepositForBurn and
// MessageSent pass the source checks again and are the ones recorded;
// the attested message is still the burn's and its signatures still
// verify against the configured attesters; and the mint, read at
// finalized commitment, carries the attested message, used the nonce and
// credited the recipient with the amount minus the fee executed. Any
// difference is unexplained: REQUIRES_REVIEW with the evidence, never a
// correction. It is the operator's (the internal scope's) step, for a
// transfer of any tenant in env.
//
// Errors: NOT_FOUND; INVALID_STATE_TRANSITION before
// DESTINATION_VERIFIED (a COMPLETED or REQUIRES_REVIEW transfer is a
// Replay); RESULT_NOT_READY (details.reason source_not_final or
// destination_not_final) while a side is not final yet;
// PROVIDER_UNAVAILABLE.
func (s *Service) Reconcile(ctx context.Context, st Store, env access.Environment, id string) (Result, error) {
	const op = "cctp.Reconcile"
	t, err := st.CCTPTransferIn(ctx, env, id)
	if err != nil {
		return Result{}, fault.Wrap(op, err)
	}
	e, err := s.environment(op, t.Owner.Environment)
	if err != nil {
		return Result{}, err
	}
	if t.State.Terminal() {
		return Result{Transfer: t, Replay: true}, nil
	}
	if _, err := Transition(t.State, EventComplete); err != nil {
		return Result{}, err
	}
	ev := Evidence{Step: StepReconcile, Outcome: OutcomeCompleted, ObservedAt: s.cfg.Clock.Now().UTC(),
		Reference: t.BurnTxHash.String() + " -> solana:" + t.MintSignature}
	src, err := s.sourceAgain(ctx, op, t, e)
	if err != nil {
		return Result{}, err
	}
	ev.Checks = append(ev.Checks, src...)
	ev.Checks = append(ev.Checks, s.attestedAgain(t, e)...)
	tx, err := s.readMint(op, ctx, e, t.MintSignature, chain.Finalized)
	if fault.Is(err, fault.ResultNotReady) {
		return Result{}, notReady(op, "destination_not_final", "The mint is not finalized on Solana yet; reconcile later.")
	}
	if err != nil {
		return Result{}, err
	}
	pda, err := UsedNonceAddress(e.TransmitterProgram, t.Nonce)
	if err != nil {
		return Result{}, fault.Wrap(op, err)
	}
	ev.Checks = append(ev.Checks, prefixed("mint_", carriesMessage(e, tx, t.Message))...)
	mint, err := s.mintChecks(ctx, op, t, e, tx, pda, chain.Finalized)
	if err != nil {
		return Result{}, err
	}
	ev.Checks = append(ev.Checks, prefixed("mint_", mint[1:]...)...)
	if c, failed := ev.Failed(); failed {
		return review(t, "reconcile_"+c.Name, ev), nil
	}
	return Result{Transfer: t, Event: EventComplete, Evidence: &ev}, nil
}

// sourceAgain reads the burn again: the receipt must be final and still
// hold the recorded DepositForBurn and MessageSent.
func (s *Service) sourceAgain(ctx context.Context, op string, t Transfer, e Environment) ([]Check, error) {
	c, ok := e.source(t.SourceDomain)
	if !ok {
		return nil, fault.E(op, fault.ServiceUnavailable, "The transfer's source chain is no longer configured.").
			With("reason", ReasonNotConfigured)
	}
	rc, err := c.Client.Receipt(ctx, t.BurnTxHash)
	if errors.Is(err, ErrReceiptNotFound) {
		return []Check{{Name: "source_receipt", Expected: t.BurnTxHash.String() + " in block " +
			strconv.FormatUint(t.BurnBlock, 10), Actual: "no receipt"}}, nil
	}
	if err != nil {
		return nil, unavailable(op, "source_chain_unavailable", err)
	}
	final, err := c.Client.FinalizedBlock(ctx)
	if err != nil {
		return nil, unavailable(op, "source_chain_unavailable", err)
	}
	if rc.BlockNumber > final {
		return nil, notReady(op, "source_not_final", "The burn's block is not finalized on the source chain yet; reconcile later.")
	}
	checks := []Check{
		{Name: "source_final", Expected: "block at most " + strconv.FormatUint(final, 10), Actual: "block " +
			strconv.FormatUint(rc.BlockNumber, 10), Passed: true},
		{Name: "source_success", Expected: "status 1", Actual: map[bool]string{true: "status 1", false: "status 0"}[rc.Succeeded],
			Passed: rc.Succeeded},
	}
	var burn *DepositForBurn
	for i := range rc.Burns {
		if rc.Burns[i].Index == t.BurnLogIndex && rc.Burns[i].Address == c.TokenMessenger {
			burn = &rc.Burns[i]
		}
	}
	if burn == nil {
		return append(checks, Check{Name: "source_burn", Expected: "the DepositForBurn at log " +
			strconv.FormatUint(uint64(t.BurnLogIndex), 10), Actual: "none"}), nil
	}
	checks = append(checks, prefixed("source_", sourceChecks(t, e, c, *burn)...)...)
	sent, sentOK := messageBefore(rc, c.MessageTransmitter, burn.Index)
	checks = append(checks, prefixed("source_", messageCheck(t, c, *burn, sent, sentOK))...)
	checks = append(checks, Check{Name: "source_message_recorded", Expected: "the MessageSent recorded at verification",
		Actual: map[bool]string{true: "the same bytes", false: "other bytes"}[bytes.Equal(sent.Message, t.SourceMessage)],
		Passed: bytes.Equal(sent.Message, t.SourceMessage)})
	return checks, nil
}

// attestedAgain checks the stored attestation again: the message is the
// burn's and the signatures verify against the attesters configured now.
func (s *Service) attestedAgain(t Transfer, e Environment) []Check {
	m, err := DecodeMessage(t.Message)
	same := err == nil && bytes.Equal(m.SourceForm().Encode(), t.SourceMessage) && m.Nonce == t.Nonce
	ok, text := s.verifySignatures(e, Keccak256(t.Message), t.Attestation)
	return []Check{
		{Name: "attested_message", Expected: "the burn's message with nonce " + t.Nonce.String(),
			Actual: map[bool]string{true: "the burn's message", false: "another message"}[same], Passed: same},
		{Name: "attested_signatures", Expected: strconv.Itoa(e.SignatureThreshold) + " signatures of configured attesters",
			Actual: text, Passed: ok},
	}
}

// prefixed returns checks with their names prefixed.
func prefixed(prefix string, checks ...Check) []Check {
	out := make([]Check, len(checks))
	for i, c := range checks {
		c.Name = prefix + c.Name
		out[i] = c
	}
	return out
}
