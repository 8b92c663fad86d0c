package cctp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// SourceInput names the burn of a transfer.
type SourceInput struct {
	// TxHash is the burn transaction's hash (0x and 64 hex digits).
	TxHash string
	// LogIndex picks one DepositForBurn when the transaction has several;
	// nil for a transaction with one.
	LogIndex *uint32
}

// VerifySource reads the burn's receipt from the transfer's source chain
// (outside any unit of work) and checks it against the transfer; the
// result, once applied, records the evidence and moves the transfer to
// SOURCE_VERIFIED. Nothing a caller says about the burn is taken but its
// hash.
//
// Errors: NOT_FOUND (not p's transfer); INVALID_INPUT (the hash, or a
// transaction with several burns and no logIndex); INVALID_STATE_TRANSITION
// when another burn was verified before (the same burn again is a Replay);
// RESULT_NOT_READY while the node has no receipt; PROVIDER_UNAVAILABLE
// when the chain cannot be read; TRANSACTION_FAILED for a reverted
// transaction; VERIFICATION_FAILED (details check, expected, actual) for
// a burn that is not this transfer's: the DepositForBurn of the
// configured TokenMessengerV2 burns the configured USDC, for the pinned
// destination domain, recipient and amount, towards Solana's
// TokenMessengerMinterV2, with no hook, a finality threshold from 1000 to
// 2000 and a maxFee below the amount and within the configured bound; and
// the MessageSent the configured MessageTransmitterV2 logged before it
// carries exactly that burn.
func (s *Service) VerifySource(ctx context.Context, st Store, p *access.Principal, id string, in SourceInput) (Result, error) {
	const op = "cctp.VerifySource"
	hash, err := ParseWord(in.TxHash)
	if err != nil {
		return Result{}, fault.Invalid(op, "txHash", "txHash must be 0x and 64 hex digits.")
	}
	t, err := st.CCTPTransfer(ctx, OwnerOf(p), id)
	if err != nil {
		return Result{}, fault.Wrap(op, err)
	}
	e, err := s.environment(op, t.Owner.Environment)
	if err != nil {
		return Result{}, err
	}
	if t.State != StateCreated {
		if t.BurnTxHash == hash && (in.LogIndex == nil || *in.LogIndex == t.BurnLogIndex) {
			return Result{Transfer: t, Replay: true}, nil
		}
		if _, err := Transition(t.State, EventVerifySource); err != nil {
			return Result{}, err
		}
	}
	c, ok := e.source(t.SourceDomain)
	if !ok {
		return Result{}, fault.E(op, fault.ServiceUnavailable, "The transfer's source chain is no longer configured.").
			With("reason", ReasonNotConfigured)
	}
	rc, err := c.Client.Receipt(ctx, hash)
	if errors.Is(err, ErrReceiptNotFound) {
		return Result{}, notReady(op, "receipt_not_found", "The source chain has no receipt for txHash yet; retry once it is mined.")
	}
	if err != nil {
		return Result{}, unavailable(op, "source_chain_unavailable", err)
	}
	if !rc.Succeeded {
		return Result{}, fault.E(op, fault.TransactionFailed, "The burn transaction reverted: nothing was burned.").With("txHash", hash.String())
	}
	burn, err := pickBurn(op, rc, c, in.LogIndex)
	if err != nil {
		return Result{}, err
	}
	ev := Evidence{Step: StepSource, Outcome: OutcomeVerified, ObservedAt: s.cfg.Clock.Now().UTC(),
		Reference: c.Network() + ":" + hash.String() + "#" + strconv.FormatUint(uint64(burn.Index), 10)}
	if burn.Address != c.TokenMessenger {
		ev.Checks = append(ev.Checks, Check{Name: "deposit_for_burn", Expected: "a DepositForBurn of " + c.TokenMessenger.String(),
			Actual: "none in the transaction"})
		return Result{}, refused(op, "The transaction is not a burn of this transfer.", ev)
	}
	ev.Checks = sourceChecks(t, e, c, burn)
	sent, sentOK := messageBefore(rc, c.MessageTransmitter, burn.Index)
	ev.Checks = append(ev.Checks, messageCheck(t, c, burn, sent, sentOK))
	if _, failed := ev.Failed(); failed {
		return Result{}, refused(op, "The burn does not match the transfer; nothing was recorded.", ev)
	}
	maxFee, _ := burn.MaxFee.Uint64()
	t.BurnTxHash, t.BurnLogIndex, t.BurnBlock = hash, burn.Index, rc.BlockNumber
	t.Depositor, t.MaxFee, t.MinFinalityThreshold = burn.Depositor, money.Atomic(maxFee), burn.MinFinalityThreshold
	t.SourceMessage = bytes.Clone(sent.Message)
	return Result{Transfer: t, Event: EventVerifySource, Evidence: &ev}, nil
}

// pickBurn returns the DepositForBurn the input names: the one at
// logIndex, or the only one of the receipt.
func pickBurn(op string, rc Receipt, c EVMChain, logIndex *uint32) (DepositForBurn, error) {
	if logIndex != nil {
		for _, b := range rc.Burns {
			if b.Index == *logIndex {
				return b, nil
			}
		}
		return DepositForBurn{}, fault.E(op, fault.VerificationFailed, "The transaction has no DepositForBurn at logIndex.").
			With("check", "deposit_for_burn").With("expected", "a DepositForBurn at log "+strconv.FormatUint(uint64(*logIndex), 10)).
			With("actual", "none")
	}
	var own []DepositForBurn
	for _, b := range rc.Burns {
		if b.Address == c.TokenMessenger {
			own = append(own, b)
		}
	}
	switch len(own) {
	case 0:
		if len(rc.Burns) > 0 {
			return rc.Burns[0], nil // another emitter: refused by the caller's check
		}
		return DepositForBurn{}, fault.E(op, fault.VerificationFailed, "The transaction is not a burn of this transfer.").
			With("check", "deposit_for_burn").With("expected", "a DepositForBurn of "+c.TokenMessenger.String()).With("actual", "none")
	case 1:
		return own[0], nil
	}
	return DepositForBurn{}, fault.Invalid(op, "logIndex", fmt.Sprintf("The transaction has %d burns: name the log index of this transfer's.", len(own))).
		With("burns", len(own))
}

// sourceChecks compares the burn with the transfer and the configuration.
func sourceChecks(t Transfer, e Environment, c EVMChain, b DepositForBurn) []Check {
	maxFee, feeFits := b.MaxFee.Uint64()
	bound := uint64(t.Amount) * uint64(e.MaxFeeBps) / 10_000
	minF := b.MinFinalityThreshold
	return []Check{
		{Name: "burn_token", Expected: c.USDC.String(), Actual: b.BurnToken.String(), Passed: b.BurnToken == c.USDC},
		{Name: "destination_domain", Expected: strconv.FormatUint(uint64(t.DestinationDomain), 10),
			Actual: strconv.FormatUint(uint64(b.DestinationDomain), 10), Passed: b.DestinationDomain == t.DestinationDomain},
		{Name: "mint_recipient", Expected: t.MintRecipient.String(), Actual: b.MintRecipient.SolanaAddress().String(),
			Passed: b.MintRecipient == WordOfAddress(t.MintRecipient)},
		{Name: "amount", Expected: t.Amount.String(), Actual: amountText(b.Amount), Passed: b.Amount == WordOf(uint64(t.Amount))},
		{Name: "destination_token_messenger", Expected: e.MinterProgram.String(), Actual: b.DestinationTokenMessenger.SolanaAddress().String(),
			Passed: b.DestinationTokenMessenger == WordOfAddress(e.MinterProgram)},
		{Name: "max_fee", Expected: "at most " + strconv.FormatUint(bound, 10) + " and below the amount", Actual: amountText(b.MaxFee),
			Passed: feeFits && maxFee <= bound && maxFee < uint64(t.Amount)},
		{Name: "min_finality_threshold", Expected: "1000 to 2000", Actual: strconv.FormatUint(uint64(minF), 10),
			Passed: minF >= 1000 && minF <= 2000},
		{Name: "hook_data", Expected: "none", Actual: strconv.Itoa(len(b.HookData)) + " bytes", Passed: len(b.HookData) == 0},
	}
}

// messageBefore returns the last MessageSent of transmitter logged before
// the burn's log: the message the same depositForBurn call sent.
func messageBefore(rc Receipt, transmitter EVMAddress, burnIndex uint32) (MessageSent, bool) {
	var out MessageSent
	found := false
	for _, m := range rc.Messages {
		if m.Address == transmitter && m.Index < burnIndex && (!found || m.Index > out.Index) {
			out, found = m, true
		}
	}
	return out, found
}

// messageCheck checks that the MessageSent carries exactly the burn: the
// header names the source domain, the destination, the TokenMessengers
// and the caller, the body the burn's token, recipient, amount,
// depositor, fee and hook, and the attester's fields are still zero.
func messageCheck(t Transfer, c EVMChain, b DepositForBurn, sent MessageSent, ok bool) Check {
	ck := Check{Name: "message_sent", Expected: "the burn's message, logged by " + c.MessageTransmitter.String()}
	if !ok {
		ck.Actual = "no MessageSent before the burn"
		return ck
	}
	m, err := DecodeMessage(sent.Message)
	if err != nil {
		ck.Actual = "not a V2 burn message"
		return ck
	}
	want := Message{Version: MessageVersion, SourceDomain: t.SourceDomain, DestinationDomain: b.DestinationDomain,
		Sender: c.TokenMessenger.Word(), Recipient: b.DestinationTokenMessenger, DestinationCaller: b.DestinationCaller,
		MinFinalityThreshold: b.MinFinalityThreshold,
		Body: BurnBody{Version: BurnMessageVersion, BurnToken: b.BurnToken.Word(), MintRecipient: b.MintRecipient, Amount: b.Amount,
			MessageSender: b.Depositor.Word(), MaxFee: b.MaxFee, HookData: b.HookData}}
	if field := differs(want, m); field != "" {
		ck.Actual = "differs in " + field
		return ck
	}
	ck.Actual, ck.Passed = "the burn's message", true
	return ck
}

// differs names the first field in which got differs from want, or "".
func differs(want, got Message) string {
	switch {
	case got.SourceDomain != want.SourceDomain:
		return "sourceDomain"
	case got.DestinationDomain != want.DestinationDomain:
		return "destinationDomain"
	case got.Nonce != want.Nonce:
		return "nonce"
	case got.Sender != want.Sender:
		return "sender"
	case got.Recipient != want.Recipient:
		return "recipient"
	case got.DestinationCaller != want.DestinationCaller:
		return "destinationCaller"
	case got.MinFinalityThreshold != want.MinFinalityThreshold:
		return "minFinalityThreshold"
	case got.FinalityThresholdExecuted != want.FinalityThresholdExecuted:
		return "finalityThresholdExecuted"
	case got.Body.BurnToken != want.Body.BurnToken:
		return "burnToken"
	case got.Body.MintRecipient != want.Body.MintRecipient:
		return "mintRecipient"
	case got.Body.Amount != want.Body.Amount:
		return "amount"
	case got.Body.MessageSender != want.Body.MessageSender:
		return "messageSender"
	case got.Body.MaxFee != want.Body.MaxFee:
		return "maxFee"
	case got.Body.FeeExecuted != want.Body.FeeExecuted:
		return "feeExecuted"
	case got.Body.ExpirationBlock != want.Body.ExpirationBlock:
		return "expirationBlock"
	case !bytes.Equal(got.Body.HookData, want.Body.HookData):
		return "hookData"
	}
	return ""
}
