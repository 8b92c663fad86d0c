package cctp

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// DestinationInput names the mint of a transfer.
type DestinationInput struct {
	// Signature is the Solana transaction's signature (base58).
	Signature string
}

// VerifyDestination reads the mint transaction from the Solana cluster
// (outside any unit of work) and checks it against the attested message;
// the result, once applied, records the evidence and moves the transfer
// to DESTINATION_VERIFIED. Nothing a caller says about the mint is taken
// but its signature.
//
// The transaction must call MessageTransmitterV2's receive_message with
// exactly the message the platform fetched (else VERIFICATION_FAILED: it
// is not this transfer's mint, and nothing is recorded). Landed without
// error, it must have used the nonce (the used-nonce account exists with
// is_used set) and credited the recipient's USDC token account with the
// amount minus the fee executed. A repeated mint fails on chain because
// the nonce is used: then the used-nonce account is read, the mint that
// used it is found among its transactions and checked instead, and the
// repeat is recorded as replayed evidence. A mint that delivered
// something else, or a nonce used with no mint of the message to show for
// it, is unexplained: REQUIRES_REVIEW with the evidence.
//
// Errors: NOT_FOUND; INVALID_INPUT (the signature);
// INVALID_STATE_TRANSITION unless the transfer is ATTESTED (the same
// verified mint again is a Replay); RESULT_NOT_READY while the cluster
// does not show the transaction; PROVIDER_UNAVAILABLE; TRANSACTION_FAILED
// for a failed mint whose nonce is still unused (nothing was minted; a
// new mint may be submitted).
func (s *Service) VerifyDestination(ctx context.Context, st Store, p *access.Principal, id string, in DestinationInput) (Result, error) {
	const op = "cctp.VerifyDestination"
	raw, err := message.ParseSignature(in.Signature)
	if err != nil {
		return Result{}, fault.Invalid(op, "signature", "signature must be a base58 Solana transaction signature.")
	}
	sig := token2022.EncodeBase58(raw)
	t, err := st.CCTPTransfer(ctx, OwnerOf(p), id)
	if err != nil {
		return Result{}, fault.Wrap(op, err)
	}
	e, err := s.environment(op, t.Owner.Environment)
	if err != nil {
		return Result{}, err
	}
	if t.State != StateAttested {
		if t.MintSignature == sig {
			return Result{Transfer: t, Replay: true}, nil
		}
		_, err := Transition(t.State, EventVerifyDestination)
		return Result{}, err
	}
	tx, err := s.readMint(op, ctx, e, sig, chain.Confirmed)
	if err != nil {
		return Result{}, err
	}
	ev := Evidence{Step: StepDestination, Outcome: OutcomeVerified, Reference: "solana:" + sig, ObservedAt: s.cfg.Clock.Now().UTC()}
	carries := carriesMessage(e, tx, t.Message)
	if !carries.Passed {
		ev.Checks = []Check{carries}
		return Result{}, refused(op, "The transaction is not a mint of this transfer's attested message; nothing was recorded.", ev)
	}
	pda, err := UsedNonceAddress(e.TransmitterProgram, t.Nonce)
	if err != nil {
		return Result{}, fault.Wrap(op, err)
	}
	if tx.Err != "" {
		return s.replayed(ctx, op, t, e, tx, pda, ev)
	}
	ev.Checks, err = s.mintChecks(ctx, op, t, e, tx, pda, chain.Confirmed)
	if err != nil {
		return Result{}, err
	}
	if c, failed := ev.Failed(); failed {
		return review(t, "mint_"+c.Name, ev), nil
	}
	t.MintSignature, t.MintSlot = tx.Signature, tx.Slot
	return Result{Transfer: t, Event: EventVerifyDestination, Evidence: &ev}, nil
}

// readMint reads a transaction, mapping a missing one to RESULT_NOT_READY.
func (s *Service) readMint(op string, ctx context.Context, e Environment, sig string, cm chain.Commitment) (chain.Transaction, error) {
	tx, err := e.Solana.GetTransaction(ctx, sig, cm)
	if errors.Is(err, chain.ErrTransactionNotFound) {
		return chain.Transaction{}, notReady(op, "transaction_not_found", "The Solana cluster does not show the transaction at "+
			string(cm)+" commitment yet; retry later.")
	}
	if err != nil {
		return chain.Transaction{}, unavailable(op, "destination_unavailable", err)
	}
	return tx, nil
}

// replayed handles a mint transaction of the message that failed on
// chain: it counts when the nonce is used, by the mint found among the
// used-nonce account's transactions, which is checked in its place.
func (s *Service) replayed(ctx context.Context, op string, t Transfer, e Environment, failed chain.Transaction, pda chain.Address,
	ev Evidence) (Result, error) {
	used, err := s.nonceUsed(ctx, e, pda, chain.Confirmed)
	if err != nil {
		return Result{}, unavailable(op, "destination_unavailable", err)
	}
	if !used {
		return Result{}, fault.E(op, fault.TransactionFailed, "The mint failed on chain and the nonce is unused: nothing was minted.").
			With("signature", failed.Signature).With("chainError", failed.Err)
	}
	ev.Outcome = OutcomeReplayed
	ev.Checks = []Check{{Name: "repeated_mint", Expected: "a mint of the attested message", Passed: true,
		Actual: "failed (" + failed.Err + ") with the nonce already used"}}
	sigs, err := e.Solana.GetSignaturesForAddress(ctx, pda, chain.SignaturesOptions{}, chain.Confirmed)
	if err != nil {
		return Result{}, unavailable(op, "destination_unavailable", err)
	}
	for i := len(sigs) - 1; i >= 0; i-- { // oldest first
		if sigs[i].Err != "" || sigs[i].Signature == failed.Signature {
			continue
		}
		orig, err := s.readMint(op, ctx, e, sigs[i].Signature, chain.Confirmed)
		if err != nil {
			return Result{}, err
		}
		if !carriesMessage(e, orig, t.Message).Passed {
			continue
		}
		checks, err := s.mintChecks(ctx, op, t, e, orig, pda, chain.Confirmed)
		if err != nil {
			return Result{}, err
		}
		ev.Checks = append(ev.Checks, Check{Name: "original_mint", Expected: "the mint that used the nonce",
			Actual: orig.Signature, Passed: true})
		ev.Checks = append(ev.Checks, checks...)
		if c, failed := ev.Failed(); failed {
			return review(t, "mint_"+c.Name, ev), nil
		}
		t.MintSignature, t.MintSlot = orig.Signature, orig.Slot
		return Result{Transfer: t, Event: EventVerifyDestination, Evidence: &ev}, nil
	}
	ev.Checks = append(ev.Checks, Check{Name: "original_mint", Expected: "the mint that used the nonce",
		Actual: "no successful mint of the message among the used-nonce account's transactions"})
	return review(t, "nonce_used_without_mint", ev), nil
}

// carriesMessage checks that tx calls receive_message of the transmitter
// with exactly msg.
func carriesMessage(e Environment, tx chain.Transaction, msg []byte) Check {
	c := Check{Name: "receive_message", Expected: "receive_message of the attested message " + Keccak256(msg).String(),
		Actual: "none"}
	for _, ix := range tx.Instructions {
		if ix.ProgramID != e.TransmitterProgram {
			continue
		}
		m, _, ok := DecodeReceiveMessage(ix.Data)
		if !ok {
			continue
		}
		if bytes.Equal(m, msg) {
			c.Actual, c.Passed = "receive_message of the attested message", true
			return c
		}
		c.Actual = "receive_message of another message " + Keccak256(m).String()
	}
	return c
}

// nonceUsed reads the used-nonce account.
func (s *Service) nonceUsed(ctx context.Context, e Environment, pda chain.Address, cm chain.Commitment) (bool, error) {
	a, err := e.Solana.GetAccountInfo(ctx, pda, cm)
	if errors.Is(err, chain.ErrAccountNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return a.Owner == e.TransmitterProgram && UsedNonceSet(a.Data), nil
}

// mintChecks judge a landed mint of the attested message: it succeeded,
// the nonce is used, and the recipient's USDC token account gained the
// amount minus the fee executed.
func (s *Service) mintChecks(ctx context.Context, op string, t Transfer, e Environment, tx chain.Transaction, pda chain.Address,
	cm chain.Commitment) ([]Check, error) {
	used, err := s.nonceUsed(ctx, e, pda, cm)
	if err != nil {
		return nil, unavailable(op, "destination_unavailable", err)
	}
	usedText := "unused"
	if used {
		usedText = "used"
	}
	gained, mintOK := received(tx, t.MintRecipient, e.USDCMint)
	return []Check{
		{Name: "receive_message", Expected: "receive_message of the attested message", Actual: "receive_message of the attested message", Passed: true},
		{Name: "success", Expected: "no error", Actual: errText(tx.Err), Passed: tx.Err == ""},
		{Name: "used_nonce", Expected: pda.String() + " used", Actual: usedText, Passed: used},
		{Name: "recipient_mint", Expected: e.USDCMint.String(), Actual: mintOK, Passed: mintOK == e.USDCMint.String()},
		{Name: "recipient_received", Expected: t.Received().String(), Actual: gained, Passed: gained == t.Received().String()},
	}, nil
}

// received returns what tx credited to account (post minus pre, as text)
// and the mint its balances name.
func received(tx chain.Transaction, account, mint chain.Address) (gained, mintOf string) {
	var pre, post *chain.TokenBalance
	for i := range tx.PreTokenBalances {
		if tx.PreTokenBalances[i].Account == account {
			pre = &tx.PreTokenBalances[i]
		}
	}
	for i := range tx.PostTokenBalances {
		if tx.PostTokenBalances[i].Account == account {
			post = &tx.PostTokenBalances[i]
		}
	}
	if post == nil {
		return "no balance reported", "none"
	}
	before := uint64(0)
	if pre != nil {
		before = pre.Amount
	}
	if post.Amount < before {
		return "-" + strconv.FormatUint(before-post.Amount, 10), post.Mint.String()
	}
	return strconv.FormatUint(post.Amount-before, 10), post.Mint.String()
}

func errText(e string) string {
	if e == "" {
		return "no error"
	}
	return e
}
