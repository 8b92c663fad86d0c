package intent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// Actor is who an intent acts for: the signed-in user in a workspace of a
// tenant, in one environment.
type Actor struct {
	TenantID    string
	WorkspaceID string
	UserID      string
	Environment access.Environment
}

// Scope returns the actor's tenant, workspace and environment.
func (a Actor) Scope() access.Scope {
	return access.Scope{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID, Environment: a.Environment}
}

// Request is a create-intent request. Purpose, Credits, ListingID, Mint
// and Wallet are the economic input; Recipient and Amount exist only to be
// refused: the server derives both and a caller that sends either gets
// INVALID_INPUT naming it.
type Request struct {
	// Purpose names a registered purpose, such as "credit_purchase".
	Purpose string `json:"purpose"`
	// Credits is the pack size for credit_purchase, a canonical integer
	// string.
	Credits string `json:"credits,omitempty"`
	// ListingID names the marketplace listing a marketplace_order buys;
	// its price, recipients and fees are derived from the listing and the
	// fee policy, never from the caller.
	ListingID string `json:"listingId,omitempty"`
	// RewardID names the reward a reward_claim pays out; the amount and
	// recipient are the reward's, never the caller's.
	RewardID string `json:"rewardId,omitempty"`
	// Mint is the payment mint (base58).
	Mint string `json:"mint"`
	// Wallet is the payer, one of the user's verified wallets (base58).
	Wallet string `json:"wallet"`
	// Recipient and Amount, when present in any form, are refused.
	Recipient json.RawMessage `json:"recipient,omitempty"`
	Amount    json.RawMessage `json:"amount,omitempty"`
}

// RequestFingerprint is the hex SHA-256 of a request's economic input
// (purpose, credits, listing, mint, wallet) in a fixed canonical form. The
// idempotency layer compares it to tell a replay from a key reused with
// materially different input (IDEMPOTENCY_CONFLICT): a key reused with
// another listing is another request. A request without a listing keeps
// the intent-request/v1 form it always had, so the fingerprints frozen in
// existing intents still describe their requests; one with a listing is
// intent-request/v2, the v1 items then the listing id; one naming a
// reward is intent-request/v3, the v2 items then the reward id.
func RequestFingerprint(r Request) string {
	items := []string{"intent-request/v1", r.Purpose, r.Credits, r.Mint, r.Wallet}
	switch {
	case r.RewardID != "":
		items = []string{"intent-request/v3", r.Purpose, r.Credits, r.Mint, r.Wallet, r.ListingID, r.RewardID}
	case r.ListingID != "":
		items = []string{"intent-request/v2", r.Purpose, r.Credits, r.Mint, r.Wallet, r.ListingID}
	}
	b, _ := json.Marshal(items)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Prepared is the unsigned transaction an intent offers the payer's
// wallet.
type Prepared struct {
	// Message is the legacy message the payer signs.
	Message []byte
	// Blockhash is the message's recent blockhash (base58) and
	// LastValidBlockHeight the last block height it can land at.
	Blockhash            string
	LastValidBlockHeight uint64
	// ExpiresAt estimates when the blockhash lapses (400 ms per block
	// from the height at preparation), never after the intent's
	// expiry.
	ExpiresAt time.Time
}

// UnsignedBase64 is the wire transaction with an empty (zero) signature
// slot, in base64, as wallets take it for signing.
func (p Prepared) UnsignedBase64() string { return base64Std(message.Unsigned(p.Message)) }

// base64Std encodes b in standard base64 with padding.
func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// Intent is a transaction intent: the frozen economics of one payment, the
// transaction prepared for it, and its progress. The fields from Actor to
// ExpiresAt are frozen at creation and covered by EconomicsHash.
type Intent struct {
	// ID is the intent's id ("txi_..."); Version counts its updates and
	// is the store's compare-and-set token.
	ID      string
	Version int64

	// Actor is who created it.
	Actor Actor
	// Purpose and BusinessReference ("<purpose>:<id>") name what it pays
	// for and key its settlement.
	Purpose           string
	BusinessReference string
	// Quantity and Description are the purpose's units ("500") and review
	// text ("500 credits").
	Quantity    string
	Description string
	// Policy is the policy version that priced it.
	Policy PolicyRef
	// Network is the cluster's CAIP-2 id.
	Network string
	// Payer is the paying wallet; Source its Token-2022 associated token
	// account for Mint.
	Payer  chain.Address
	Source chain.Address
	// Recipient is the wallet paid and Destination its Token-2022
	// associated token account for Mint: the environment's treasury for
	// an intent without Legs, else the first leg's recipient and account.
	Recipient   chain.Address
	Destination chain.Address
	// Legs are the frozen legs of an intent whose purpose priced legs, in
	// transfer order; nil for one payment to the treasury, whose one leg
	// is Recipient, Destination and the amounts (PaymentLegs gives every
	// intent's legs).
	Legs []Leg
	// Mint, TokenProgram and Decimals identify the asset.
	Mint         chain.Address
	TokenProgram chain.Address
	Decimals     uint8
	// GrossAtomic is what the payer sends, FeeAtomic the transfer fee
	// withheld on it at FeeEpoch, NetAtomic what the recipients receive
	// (GrossAtomic − FeeAtomic, the purpose's price): totals over the legs,
	// each leg's transfer being grossed up on its own.
	GrossAtomic uint64
	FeeAtomic   uint64
	NetAtomic   uint64
	FeeEpoch    uint64
	// TransferFee is the fee schedule entry in force at FeeEpoch; zero
	// when the mint has no TransferFeeConfig. HasTransferFee selects
	// TransferCheckedWithFee.
	TransferFee    token2022.TransferFee
	HasTransferFee bool
	// Reference is the intent's unique Solana Pay reference, a read-only
	// non-signer account of the transfer; Memo is the memo text (the id).
	Reference chain.Address
	Memo      string
	// CreatedAt and ExpiresAt bound the intent's life.
	CreatedAt time.Time
	ExpiresAt time.Time
	// EconomicsHash is the hex SHA-256 over the frozen items above.
	EconomicsHash string
	// RequestFingerprint is the fingerprint of the request it came from.
	RequestFingerprint string

	// Transaction is the prepared transaction.
	Transaction Prepared

	// State and NetworkState are the business and network states.
	State        State
	NetworkState NetworkState
	// Signature is the bound transaction signature (base58), once known;
	// SignedTransaction the signed bytes the client submitted, which the
	// relay job sends (never a rebuilt transaction).
	Signature         string
	SignedTransaction []byte
	// Origin says how the signature became known.
	Origin Origin
	// SendAttempts counts relay sends; LastError is the code of the last
	// relay or reconciliation problem (SUBMISSION_UNCERTAIN while a send's
	// outcome is unknown), "" when none.
	SendAttempts int
	LastError    fault.Code
	// ChainError is the transaction's error as the chain reported it.
	ChainError string
	// Slot is where the transaction landed.
	Slot uint64
	// Evidence lists what did not match, for REQUIRES_REVIEW.
	Evidence []Mismatch
	// SubmittedAt, VerifiedAt, SettledAt and UpdatedAt are the progress
	// timestamps (zero until reached).
	SubmittedAt time.Time
	VerifiedAt  time.Time
	SettledAt   time.Time
	UpdatedAt   time.Time
	// ReconciliationID names the intent's reconciliation record ("rec_..."),
	// ReconciliationOutcome is that record's outcome and ReconciledAt when
	// it was recorded; empty and zero until RECONCILED.
	ReconciliationID      string
	ReconciliationOutcome ReconciliationOutcome
	ReconciledAt          time.Time
}

// Draft is an intent Prepare froze and Record has not saved yet: the
// intent, and the terms its purpose's Price returned (Price.Terms), which
// Record hands to the purpose's Open hook. The terms are never stored with
// the intent nor hashed: a purpose that keeps them records them itself, in
// the unit of work that records the intent.
type Draft struct {
	Intent
	// Terms is Price.Terms, nil for a purpose that returns none.
	Terms any
}

// Origin says how an intent's signature became known.
type Origin string

// The origins.
const (
	// OriginSigned: the client submitted the signed prepared transaction,
	// which the relay job sends.
	OriginSigned Origin = "signed_transaction"
	// OriginSignature: the client submitted only the signature; its
	// wallet broadcast the transaction.
	OriginSignature Origin = "signature"
	// OriginReference: reconciliation found the payment by the intent's
	// reference (a wallet-built Solana Pay transfer).
	OriginReference Origin = "reference"
)

// Mismatch is one item of effect verification that differs from the
// intent: the field, what the intent expected and what the chain showed.
type Mismatch struct {
	Field    string
	Expected string
	Actual   string
}

// frozen is the canonical form EconomicsHash covers. Field order is fixed
// by the struct, amounts are decimal strings and times RFC 3339 UTC.
type frozen struct {
	Schema             string    `json:"schema"`
	ID                 string    `json:"id"`
	Tenant             string    `json:"tenant"`
	Workspace          string    `json:"workspace"`
	User               string    `json:"user"`
	Environment        string    `json:"environment"`
	Purpose            string    `json:"purpose"`
	BusinessReference  string    `json:"businessReference"`
	Quantity           string    `json:"quantity"`
	Policy             PolicyRef `json:"policy"`
	Network            string    `json:"network"`
	Payer              string    `json:"payer"`
	Source             string    `json:"source"`
	Recipient          string    `json:"recipient"`
	Destination        string    `json:"destination"`
	Mint               string    `json:"mint"`
	TokenProgram       string    `json:"tokenProgram"`
	Decimals           uint8     `json:"decimals"`
	Gross              string    `json:"gross"`
	Fee                string    `json:"fee"`
	Net                string    `json:"net"`
	FeeEpoch           string    `json:"feeEpoch"`
	FeeBasisPoints     uint16    `json:"feeBasisPoints"`
	FeeMaximum         string    `json:"feeMaximum"`
	HasTransferFee     bool      `json:"hasTransferFee"`
	Reference          string    `json:"reference"`
	Memo               string    `json:"memo"`
	ExpiresAt          string    `json:"expiresAt"`
	RequestFingerprint string    `json:"requestFingerprint"`
}

// frozenLegs is the canonical form of an intent with legs (schema
// intent-economics/v2): every v1 item, then the legs in transfer order.
type frozenLegs struct {
	frozen
	Legs []frozenLeg `json:"legs"`
}

// frozenLeg is one leg in canonical form.
type frozenLeg struct {
	Role        string `json:"role"`
	Recipient   string `json:"recipient"`
	Destination string `json:"destination"`
	Gross       string `json:"gross"`
	Fee         string `json:"fee"`
	Net         string `json:"net"`
}

// ComputeEconomicsHash returns the hex SHA-256 of the intent's frozen items in
// canonical form. Create stores it; Submit and reconciliation recompute it
// and refuse an intent whose stored economics no longer match.
//
// An intent without Legs (one payment to the treasury) hashes its
// intent-economics/v1 form, unchanged since it was introduced, so intents
// created before legs existed still verify. An intent with Legs hashes
// intent-economics/v2: the v1 items (Recipient and Destination the first
// leg's, amounts the totals) followed by every leg's role, recipient,
// destination, gross, fee and net, in order. The schema name is hashed
// too, so neither form can pass for the other.
func ComputeEconomicsHash(it Intent) string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := frozen{
		Schema: "intent-economics/v1", ID: it.ID,
		Tenant: it.Actor.TenantID, Workspace: it.Actor.WorkspaceID, User: it.Actor.UserID,
		Environment: string(it.Actor.Environment), Purpose: it.Purpose, BusinessReference: it.BusinessReference,
		Quantity: it.Quantity, Policy: it.Policy, Network: it.Network,
		Payer: it.Payer.String(), Source: it.Source.String(), Recipient: it.Recipient.String(),
		Destination: it.Destination.String(), Mint: it.Mint.String(), TokenProgram: it.TokenProgram.String(),
		Decimals: it.Decimals, Gross: u(it.GrossAtomic), Fee: u(it.FeeAtomic), Net: u(it.NetAtomic),
		FeeEpoch: u(it.FeeEpoch), FeeBasisPoints: it.TransferFee.BasisPoints, FeeMaximum: u(it.TransferFee.MaximumFee),
		HasTransferFee: it.HasTransferFee, Reference: it.Reference.String(), Memo: it.Memo,
		ExpiresAt: it.ExpiresAt.UTC().Format(time.RFC3339Nano), RequestFingerprint: it.RequestFingerprint,
	}
	var b []byte
	if len(it.Legs) == 0 {
		b, _ = json.Marshal(f)
	} else {
		f.Schema = "intent-economics/v2"
		fl := frozenLegs{frozen: f, Legs: make([]frozenLeg, len(it.Legs))}
		for i, l := range it.Legs {
			fl.Legs[i] = frozenLeg{Role: l.Role, Recipient: l.Recipient.String(), Destination: l.Destination.String(),
				Gross: u(l.GrossAtomic), Fee: u(l.FeeAtomic), Net: u(l.NetAtomic)}
		}
		b, _ = json.Marshal(fl)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// DeriveReference returns the intent's Solana Pay reference:
// HMAC-SHA256(key, "intent-reference:"+id). Distinct ids give distinct
// references (short of a SHA-256 collision), the same id always the same
// one, and without the key nobody can link a reference to an intent.
func DeriveReference(key []byte, id string) chain.Address {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("intent-reference:" + id))
	var a chain.Address
	m.Sum(a[:0])
	return a
}

// integrity checks that the intent's stored economics still hash to its
// EconomicsHash and that its prepared message is the one its frozen items
// build. It fails with VERIFICATION_FAILED; nothing may move such an
// intent.
func integrity(op string, it Intent) error {
	if ComputeEconomicsHash(it) != it.EconomicsHash {
		return fault.E(op, fault.VerificationFailed, "the intent's frozen economics do not match their hash").With("intentId", it.ID)
	}
	msg, err := buildMessage(it)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if !hmac.Equal(msg, it.Transaction.Message) {
		return fault.E(op, fault.VerificationFailed, "the intent's prepared transaction does not match its economics").With("intentId", it.ID)
	}
	return nil
}

// buildMessage builds the prepared transaction's message from the frozen
// items: a Memo with the intent id immediately before the first transfer,
// then one transfer per leg in leg order, the transfers last
// (TransferCheckedWithFee of the leg's gross and fee when the mint has a
// transfer fee config, else TransferChecked) with accounts source (w),
// mint, the leg's destination (w), owner (s) and the reference as a
// read-only non-signer. For an intent without Legs that is the memo and
// the one transfer to the treasury, byte for byte as before legs existed.
//
// Decision, the reference on every transfer: getSignaturesForAddress
// indexes a transaction under every account key it carries, so one
// occurrence would do for the search; every transfer carries it anyway,
// so each is the Solana Pay shape (exactly one account after the four
// required ones) and verification checks every leg alike. The key is
// listed once; each further transfer costs one index byte.
func buildMessage(it Intent) ([]byte, error) {
	ixs := []message.Instruction{message.Memo(it.Memo)}
	for _, l := range it.PaymentLegs() {
		transfer := message.TransferChecked(it.TokenProgram, it.Source, it.Mint, l.Destination, it.Payer, l.GrossAtomic, it.Decimals)
		if it.HasTransferFee {
			transfer = message.TransferCheckedWithFee(it.Source, it.Mint, l.Destination, it.Payer, l.GrossAtomic, it.Decimals, l.FeeAtomic)
			// The message calls the frozen program, which creation sets to
			// Token-2022, the one program with transfer fees.
			transfer.ProgramID = it.TokenProgram
		}
		transfer.Accounts = append(transfer.Accounts, message.AccountMeta{Key: it.Reference})
		ixs = append(ixs, transfer)
	}
	msg, err := message.CompileLegacy(it.Payer, it.Transaction.Blockhash, ixs)
	if err != nil {
		return nil, fault.Wrap("intent.buildMessage", err)
	}
	return msg, nil
}

// Review is what a wallet screen shows before the payer signs.
type Review struct {
	// Purpose and Description say what is bought; Quantity how much.
	Purpose     string
	Description string
	Quantity    string
	// Pay is the gross amount in user units; Fee the transfer fee; Net
	// what the recipient receives. Amounts are decimal strings.
	Pay string
	Fee string
	Net string
	// Mint and Decimals identify the token.
	Mint     string
	Decimals uint8
	// Payer and Recipient are wallets (Recipient the first leg's);
	// Network the CAIP-2 id.
	Payer     string
	Recipient string
	Network   string
	// Legs are every recipient with what it is sent and receives, in
	// transfer order (one, the treasury, for an intent without Legs).
	Legs []ReviewLeg
	// ExpiresAt is the earlier of the intent's and the prepared
	// transaction's expiry.
	ExpiresAt time.Time
}

// ReviewLeg is one recipient on a review screen.
type ReviewLeg struct {
	// Role names the leg, such as "treasury", "seller" or "platform_fee".
	Role string
	// Recipient is the wallet paid.
	Recipient string
	// Pay is what the payer sends in this leg, Fee the transfer fee
	// withheld on it and Net what the recipient receives, in user units.
	Pay string
	Fee string
	Net string
}

// Review returns the review items of it.
func (it Intent) Review() Review {
	exp := it.ExpiresAt
	if !it.Transaction.ExpiresAt.IsZero() && it.Transaction.ExpiresAt.Before(exp) {
		exp = it.Transaction.ExpiresAt
	}
	r := Review{
		Purpose: it.Purpose, Description: it.Description, Quantity: it.Quantity,
		Pay: FormatAtomic(it.GrossAtomic, it.Decimals), Fee: FormatAtomic(it.FeeAtomic, it.Decimals),
		Net: FormatAtomic(it.NetAtomic, it.Decimals), Mint: it.Mint.String(), Decimals: it.Decimals,
		Payer: it.Payer.String(), Recipient: it.Recipient.String(), Network: it.Network, ExpiresAt: exp,
	}
	for _, l := range it.PaymentLegs() {
		r.Legs = append(r.Legs, ReviewLeg{Role: l.Role, Recipient: l.Recipient.String(), Pay: FormatAtomic(l.GrossAtomic, it.Decimals),
			Fee: FormatAtomic(l.FeeAtomic, it.Decimals), Net: FormatAtomic(l.NetAtomic, it.Decimals)})
	}
	return r
}
