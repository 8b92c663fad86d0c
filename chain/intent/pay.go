package intent

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// PaymentRequest is a chain payment request: a Solana Pay transfer request
// derived from one intent (one per intent), for a wallet that builds its
// own transfer from a URI or QR code. Everything in it comes from the
// intent; nothing the caller sends.
type PaymentRequest struct {
	// ID is the request's id ("cpr_..."); IntentID its intent.
	ID       string
	IntentID string
	// Actor is the intent's actor.
	Actor Actor
	// URI is the Solana Pay transfer URI.
	URI string
	// Recipient is the treasury wallet (never its token account), Mint
	// the token, Reference the intent's reference, Memo the intent id.
	Recipient chain.Address
	Mint      chain.Address
	Reference chain.Address
	Memo      string
	// AmountAtomic is what the payer sends (the intent's gross) and
	// Amount the same in user units; NetAtomic and FeeAtomic are what the
	// treasury receives and the transfer fee withheld.
	AmountAtomic uint64
	Amount       string
	NetAtomic    uint64
	FeeAtomic    uint64
	Decimals     uint8
	// Label and Message are the URI's display fields.
	Label   string
	Message string
	// Network is the CAIP-2 id of the cluster to pay on.
	Network string
	// ExpiresAt is the intent's expiry; CreatedAt when the request was made.
	ExpiresAt time.Time
	CreatedAt time.Time
	// Requirements are what verification will demand of the payment.
	Requirements []Requirement
}

// Requirement is one condition a payment must meet to settle the intent.
type Requirement struct {
	// Field names the checked item, as Mismatch.Field does.
	Field string
	// Value is what it must be.
	Value string
}

// PaymentURI returns a Solana Pay transfer URI (chain.md §7):
// solana:<recipient>?amount=<amount>&spl-token=<mint>&reference=<ref>
// &label=<label>&message=<message>&memo=<memo>, empty fields left out. The
// values are percent-encoded with spaces as %20, never '+', which some
// wallets would show literally.
func PaymentURI(recipient chain.Address, amount string, mint, reference chain.Address, label, message, memo string) string {
	esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	var b strings.Builder
	b.WriteString("solana:")
	b.WriteString(recipient.String())
	sep := byte('?')
	add := func(k, v string) {
		if v == "" {
			return
		}
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(esc(v))
	}
	add("amount", amount)
	add("spl-token", mint.String())
	add("reference", reference.String())
	add("label", label)
	add("message", message)
	add("memo", memo)
	return b.String()
}

// Requirements lists what verification demands of a payment for it. For
// an intent with Legs, the transfer items are listed per leg, in transfer
// order, under the names its mismatches take ("legs[1].net").
func Requirements(it Intent) []Requirement {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	if len(it.Legs) > 0 {
		out := []Requirement{
			{"network", it.Network},
			{"success", "the transaction succeeds"},
			{"payer", it.Payer.String()},
			{"source", it.Source.String()},
			{"mint", it.Mint.String()},
			{"program", it.TokenProgram.String()},
			{"instruction", "a memo, then one TransferChecked or TransferCheckedWithFee per leg in leg order, last"},
			{"legs", u(uint64(len(it.Legs)))},
		}
		for i, l := range it.Legs {
			out = append(out,
				Requirement{legField(i, "role"), l.Role},
				Requirement{legField(i, "recipient"), l.Recipient.String()},
				Requirement{legField(i, "destination"), l.Destination.String()},
				Requirement{legField(i, "amount"), u(l.GrossAtomic)},
				Requirement{legField(i, "net"), u(l.NetAtomic)})
		}
		return append(out,
			Requirement{"reference", it.Reference.String()},
			Requirement{"memo", it.Memo},
			Requirement{"expiresAt", it.ExpiresAt.UTC().Format(time.RFC3339)})
	}
	return []Requirement{
		{"network", it.Network},
		{"success", "the transaction succeeds"},
		{"payer", it.Payer.String()},
		{"source", it.Source.String()},
		{"mint", it.Mint.String()},
		{"program", it.TokenProgram.String()},
		{"instruction", "TransferChecked or TransferCheckedWithFee, last"},
		{"amount", u(it.GrossAtomic)},
		{"destination", it.Destination.String()},
		{"recipient", it.Recipient.String()},
		{"net", u(it.NetAtomic)},
		{"reference", it.Reference.String()},
		{"memo", it.Memo},
		{"expiresAt", it.ExpiresAt.UTC().Format(time.RFC3339)},
	}
}

// RequestPayment returns p's chain payment request for intent id,
// creating it on first call (one per intent: later calls, including
// concurrent ones, return the first). The amount is the intent's gross:
// a wallet-built transfer of it (TransferChecked, as Solana Pay wallets
// send) has the mint's transfer fee withheld, so the treasury receives the
// intent's net, which is what verification demands. (A plain Solana Pay
// validator checking "received ≥ amount" would fail on a fee mint; ours
// checks the net.)
//
// A Solana Pay transfer request names one recipient, so an intent that
// pays several (MultiRecipient) has none: it is paid only by its prepared
// transaction, which carries every leg's transfer.
//
// Errors: UNAUTHENTICATED; ACCESS_DENIED for an API key; NOT_FOUND;
// CAPABILITY_UNSUPPORTED (details reason "multi_recipient_intent", legs)
// for an intent with more than one recipient; QUOTE_EXPIRED when the
// intent has expired; CONFLICT when the intent is no longer awaiting
// payment; VERIFICATION_FAILED when its stored economics no longer match
// their hash.
func (s *Service) RequestPayment(ctx context.Context, p *access.Principal, id string) (PaymentRequest, error) {
	const op = "intent.RequestPayment"
	actor, err := actorOf(op, p)
	if err != nil {
		return PaymentRequest{}, err
	}
	var out PaymentRequest
	err = s.run(ctx, func(st Store) error {
		it, err := st.LockIntent(ctx, id)
		if err != nil {
			return err
		}
		if err := owned(op, it, actor); err != nil {
			return err
		}
		if it.MultiRecipient() {
			return fault.E(op, fault.CapabilityUnsupported, "a chain payment request names one recipient; this intent pays several "+
				"and is paid only by its prepared transaction").With("reason", ReasonMultiRecipient).With("legs", len(it.PaymentLegs()))
		}
		if pr, err := st.PaymentRequestByIntent(ctx, it.ID); err == nil {
			out = pr
			return nil
		} else if !fault.Is(err, fault.NotFound) {
			return err
		}
		if err := integrity(op, it); err != nil {
			return err
		}
		now := s.cfg.Clock.Now().UTC()
		switch {
		case it.State == StateExpired || (it.State == StateCreated && !now.Before(it.ExpiresAt)):
			return fault.E(op, fault.QuoteExpired, "the transaction intent has expired").With("expiresAt", it.ExpiresAt)
		case it.State != StateCreated:
			return fault.E(op, fault.Conflict, "the intent is no longer awaiting payment").With("state", string(it.State))
		}
		out = paymentRequest(it, "cpr_"+s.cfg.NewIDFunc(), s.cfg.Label, now)
		return st.InsertPaymentRequest(ctx, out)
	})
	if fault.Is(err, fault.Conflict) {
		// A concurrent first call won; return its request.
		if pr, rerr := s.cfg.ReadFunc().PaymentRequestByIntent(ctx, id); rerr == nil && pr.Actor == actor {
			return pr, nil
		}
	}
	if err != nil {
		return PaymentRequest{}, fault.Wrap(op, err)
	}
	return out, nil
}

// ReasonMultiRecipient is details.reason of the CAPABILITY_UNSUPPORTED
// that RequestPayment answers for an intent with more than one recipient.
const ReasonMultiRecipient = "multi_recipient_intent"

// paymentRequest derives the payment request of it.
func paymentRequest(it Intent, id, label string, now time.Time) PaymentRequest {
	amount := FormatAtomic(it.GrossAtomic, it.Decimals)
	return PaymentRequest{
		ID: id, IntentID: it.ID, Actor: it.Actor,
		URI:       PaymentURI(it.Recipient, amount, it.Mint, it.Reference, label, it.Description, it.Memo),
		Recipient: it.Recipient, Mint: it.Mint, Reference: it.Reference, Memo: it.Memo,
		AmountAtomic: it.GrossAtomic, Amount: amount, NetAtomic: it.NetAtomic, FeeAtomic: it.FeeAtomic,
		Decimals: it.Decimals, Label: label, Message: it.Description, Network: it.Network,
		ExpiresAt: it.ExpiresAt, CreatedAt: now, Requirements: Requirements(it),
	}
}

// PaymentRequest returns p's payment request id. Errors: UNAUTHENTICATED,
// ACCESS_DENIED, NOT_FOUND.
func (s *Service) PaymentRequest(ctx context.Context, p *access.Principal, id string) (PaymentRequest, error) {
	const op = "intent.PaymentRequest"
	actor, err := actorOf(op, p)
	if err != nil {
		return PaymentRequest{}, err
	}
	pr, err := s.cfg.ReadFunc().PaymentRequest(ctx, id)
	if err != nil {
		return PaymentRequest{}, fault.Wrap(op, err)
	}
	if pr.Actor != actor {
		return PaymentRequest{}, fault.E(op, fault.NotFound, "the payment request was not found")
	}
	return pr, nil
}

// PaymentRequestByIntent returns the payment request of p's intent.
// Errors: UNAUTHENTICATED, ACCESS_DENIED, NOT_FOUND.
func (s *Service) PaymentRequestByIntent(ctx context.Context, p *access.Principal, intentID string) (PaymentRequest, error) {
	const op = "intent.PaymentRequestByIntent"
	actor, err := actorOf(op, p)
	if err != nil {
		return PaymentRequest{}, err
	}
	pr, err := s.cfg.ReadFunc().PaymentRequestByIntent(ctx, intentID)
	if err != nil {
		return PaymentRequest{}, fault.Wrap(op, err)
	}
	if pr.Actor != actor {
		return PaymentRequest{}, fault.E(op, fault.NotFound, "the payment request was not found")
	}
	return pr, nil
}
