package intent

import (
	"context"
	"errors"
	"fmt"
	"math/bits"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// MaxLegs is the most recipients one intent pays. Four transfers, the
// memo and their accounts (payer, source, four destinations, mint,
// reference and the two programs) make a signed transaction of 540 bytes,
// well inside the 1232-byte limit, which message.CompileLegacy enforces
// anyway (TestLegsBound).
const MaxLegs = 4

// RoleTreasury is the role of the single leg an intent has when its
// purpose prices no legs: the environment's treasury.
const RoleTreasury = "treasury"

// PriceLeg is one recipient of a purpose's price: what a purpose returns
// in Price.Legs. The intent domain derives the rest (the recipient's
// token account, the gross amount and the transfer fee) and freezes it as
// a Leg.
type PriceLeg struct {
	// Role is the leg's stable name within the intent, lower-case snake
	// case of at most 32 bytes, such as "seller" or "platform_fee";
	// unique within the intent.
	Role string
	// Recipient is the wallet paid (the owner of the destination token
	// account, never the account itself); unique within the intent, and
	// never the payer.
	Recipient chain.Address
	// NetAtomic is what Recipient must receive, in the mint's atomic
	// units, after any Token-2022 transfer fee; positive.
	NetAtomic uint64
}

// Leg is one frozen leg of an intent: a recipient, its token account and
// the amounts of its own transfer instruction.
type Leg struct {
	// Role is the purpose's name for the leg ("treasury" for the single
	// leg of an intent whose purpose priced none).
	Role string
	// Recipient is the wallet paid; Destination its Token-2022 associated
	// token account for the intent's mint, which the transfer credits.
	Recipient   chain.Address
	Destination chain.Address
	// GrossAtomic is what the payer sends in this leg's transfer,
	// FeeAtomic the transfer fee withheld on it at the intent's FeeEpoch
	// and NetAtomic what Recipient receives (GrossAtomic − FeeAtomic).
	GrossAtomic uint64
	FeeAtomic   uint64
	NetAtomic   uint64
}

// PaymentLegs returns every leg the intent pays, in transfer order: its
// frozen Legs, or, for an intent whose purpose priced none, the one leg
// to the treasury made of Recipient, Destination and the amounts.
func (it Intent) PaymentLegs() []Leg {
	if len(it.Legs) > 0 {
		return it.Legs
	}
	return []Leg{{Role: RoleTreasury, Recipient: it.Recipient, Destination: it.Destination,
		GrossAtomic: it.GrossAtomic, FeeAtomic: it.FeeAtomic, NetAtomic: it.NetAtomic}}
}

// MultiRecipient reports whether the intent pays more than one recipient,
// which no Solana Pay transfer request can express.
func (it Intent) MultiRecipient() bool { return len(it.PaymentLegs()) > 1 }

// validRole reports whether role is a leg role: lower-case snake case, at
// most 32 bytes.
func validRole(role string) bool { return len(role) <= 32 && validPurposeName(role) }

// checkPriceLegs checks the shape of a purpose's legs before anything is
// read from the chain. A malformed leg is the purpose's bug, so INTERNAL
// naming the leg; a payer that is one of the recipients is INVALID_INPUT
// naming "wallet", as a payer that is the treasury is.
func checkPriceLegs(op string, p Price, payer chain.Address) error {
	if len(p.Legs) == 0 {
		return nil
	}
	bad := func(i int, msg string) error {
		return fault.E(op, fault.Internal, "the purpose priced a malformed leg: "+msg).With("leg", fmt.Sprintf("legs[%d]", i))
	}
	if p.NetAtomic != 0 {
		return fault.E(op, fault.Internal, "a purpose prices either NetAtomic (one payment to the treasury) or Legs, not both")
	}
	if len(p.Legs) > MaxLegs {
		return fault.E(op, fault.Internal, "the purpose priced too many legs").With("legs", len(p.Legs)).With("max", MaxLegs)
	}
	roles := map[string]bool{}
	recipients := map[chain.Address]bool{}
	for i, l := range p.Legs {
		switch {
		case !validRole(l.Role):
			return bad(i, "a role is lower-case snake case of at most 32 bytes")
		case roles[l.Role]:
			return bad(i, "roles are unique within an intent")
		case l.Recipient.IsZero():
			return bad(i, "a leg needs a recipient wallet")
		case recipients[l.Recipient]:
			return bad(i, "recipients are unique within an intent")
		case l.NetAtomic == 0:
			return bad(i, "a leg's amount is positive (leave out a leg that pays nothing)")
		case l.Recipient == payer:
			return fault.Invalid(op, "wallet", "the payer cannot be a recipient of its own payment").With("leg", fmt.Sprintf("legs[%d]", i))
		}
		roles[l.Role], recipients[l.Recipient] = true, true
	}
	return nil
}

// freezeLegs grosses up each of a purpose's legs against the transfer fee
// in force and returns the frozen legs with their totals. Each leg is
// grossed up on its own because Token-2022 computes the fee per transfer
// instruction, on that instruction's amount: ceil(amount × bps / 10000),
// capped at MaximumFee per transfer. Grossing up the total and splitting
// it would leave a leg short by the rounding (up to one atomic unit per
// leg) or, under the cap, by a whole cap per extra leg; only a gross-up per
// transfer makes every recipient's net exact. INVALID_AMOUNT when a leg
// has no covering gross or the totals pass 2^64 − 1.
func freezeLegs(op string, legs []PriceLeg, mint chain.Address, fee token2022.TransferFee) (out []Leg, gross, withheld, net uint64, err error) {
	out = make([]Leg, 0, len(legs))
	for i, l := range legs {
		g, f, err := GrossUp(l.NetAtomic, fee)
		if err != nil {
			return nil, 0, 0, 0, fault.Wrap(op, err)
		}
		var c1, c2, c3 uint64
		gross, c1 = bits.Add64(gross, g, 0)
		withheld, c2 = bits.Add64(withheld, f, 0)
		net, c3 = bits.Add64(net, l.NetAtomic, 0)
		if c1|c2|c3 != 0 {
			return nil, 0, 0, 0, fault.E(op, fault.InvalidAmount, "the legs' total does not fit an atomic amount").
				With("leg", fmt.Sprintf("legs[%d]", i))
		}
		out = append(out, Leg{Role: l.Role, Recipient: l.Recipient, Destination: token2022.AssociatedTokenAddress(l.Recipient, mint),
			GrossAtomic: g, FeeAtomic: f, NetAtomic: l.NetAtomic})
	}
	return out, gross, withheld, net, nil
}

// Reasons a leg's destination is refused at creation (details.reason of
// WALLET_REQUIRED).
const (
	// ReasonRecipientAccountMissing: the recipient has no Token-2022
	// associated token account for the mint.
	ReasonRecipientAccountMissing = "recipient_token_account_missing"
	// ReasonRecipientAccountFrozen: the account is frozen by the mint's
	// freeze authority, so a transfer into it fails.
	ReasonRecipientAccountFrozen = "recipient_token_account_frozen"
	// ReasonRecipientAccountInvalid: the address holds something other
	// than an initialized token account of the mint owned by the
	// recipient.
	ReasonRecipientAccountInvalid = "recipient_token_account_invalid"
	// ReasonRecipientRequiresMemo: the account requires a memo right
	// before every incoming transfer (MemoTransfer), which only the first
	// leg's transfer has.
	ReasonRecipientRequiresMemo = "recipient_requires_memo"
)

// checkDestinations reads every leg's destination account from the
// cluster (outside any unit of work) and refuses an intent whose transfer
// could not land, before anything is saved or signed.
//
// Decision: a missing destination is refused, not created. An idempotent
// create-account instruction paid by the payer would make the buyer pay
// the account's rent (about 0.002 SOL) for an account the recipient then
// owns and may close to recover it, a value transfer outside the frozen
// economics and invisible on the review screen; it would also make the
// prepared message depend on the chain's state at creation. A recipient
// (a seller's payout wallet, the fee recipient) provisions its account
// once per mint, as the treasury does.
//
// WALLET_REQUIRED with details field "legs[i].recipient", role, account
// and reason (ReasonRecipientAccountMissing, ...Frozen, ...Invalid,
// ...RequiresMemo); PROVIDER_UNAVAILABLE when the cluster cannot be read.
func checkDestinations(ctx context.Context, op string, c ChainClient, mint chain.Address, legs []Leg) error {
	for i, l := range legs {
		refuse := func(reason, msg string) error {
			return fault.E(op, fault.WalletRequired, msg).With("field", fmt.Sprintf("legs[%d].recipient", i)).
				With("role", l.Role).With("account", l.Destination.String()).With("reason", reason)
		}
		acct, err := c.GetAccountInfo(ctx, l.Destination, chain.Confirmed)
		if errors.Is(err, chain.ErrAccountNotFound) {
			return refuse(ReasonRecipientAccountMissing, "the recipient has no token account for the mint; it must create one before it can be paid")
		}
		if err != nil {
			return chainErr(op, "recipientAccount", err)
		}
		ta, err := token2022.DecodeAccount(acct.Data)
		switch {
		case acct.Owner != token2022.ProgramID() || err != nil || ta.Mint != mint || ta.Owner != l.Recipient:
			return refuse(ReasonRecipientAccountInvalid, "the recipient's token account address does not hold its token account for the mint")
		case ta.State == token2022.StateFrozen:
			return refuse(ReasonRecipientAccountFrozen, "the recipient's token account is frozen")
		case ta.State != token2022.StateInitialized:
			return refuse(ReasonRecipientAccountInvalid, "the recipient's token account is not initialized")
		}
		if ext, ok := ta.Extension(token2022.ExtensionMemoTransfer); ok && i > 0 {
			if raw, isRaw := ext.(token2022.RawExtension); isRaw && len(raw.Value) > 0 && raw.Value[0] != 0 {
				return refuse(ReasonRecipientRequiresMemo, "the recipient's token account requires a memo before each incoming transfer")
			}
		}
	}
	return nil
}
