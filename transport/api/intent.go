package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/transport"

	"rsc.io/qr"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
)

// IntentRequest is the body of POST /api/v1/transactions/intent.
type IntentRequest struct {
	Purpose string `json:"purpose" example:"credit_purchase" doc:"A registered purpose: credit_purchase (a pack of credits) or marketplace_order (a listing's license)."`
	Credits string `json:"credits,omitempty" example:"500" doc:"For credit_purchase: one of the packs of the credits.packs policy. Refused for marketplace_order."`
	// ListingID names the listing a marketplace_order buys (POST /api/v1/marketplace/listings); refused for credit_purchase.
	ListingID string `json:"listingId,omitempty" example:"lst_01jd0000000000000000000000"`
	Mint      string `json:"mint,omitempty" example:"Mint111111111111111111111111111111111111111" doc:"For credit_purchase, one of the policy's payment mints (base58), required. For marketplace_order, optional: the listing sets the mint, and another is refused."`
	Wallet    string `json:"wallet" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T" doc:"A wallet the signed-in user verified (POST /api/v1/wallet/verify)."`
	// Recipient and Amount are refused: the server derives both.
	Recipient json.RawMessage `json:"recipient,omitempty" doc:"Refused with 422 INVALID_INPUT: the recipient is the environment's treasury."`
	Amount    json.RawMessage `json:"amount,omitempty" doc:"Refused with 422 INVALID_INPUT: the amount is derived from the purpose's policy."`
}

// PreparedTransactionView is the unsigned transaction a wallet signs.
type PreparedTransactionView struct {
	// UnsignedTransactionBase64 is the wire transaction with an empty
	// signature slot, as wallets' signTransaction take it.
	UnsignedTransactionBase64 string `json:"unsignedTransactionBase64" example:"AQAAAA=="`
	MessageBase64             string `json:"messageBase64" example:"AQAAAA==" doc:"The message bytes the payer signs."`
	// Blockhash is the recent blockhash the transaction was built on (base58).
	Blockhash string `json:"blockhash" example:"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N"`
	// LastValidBlockHeight is the last block height at which the network accepts the transaction;
	// past it the intent expires.
	LastValidBlockHeight uint64 `json:"lastValidBlockHeight" example:"1200"`
	// ExpiresAt is when the platform stops accepting the signed transaction.
	ExpiresAt time.Time `json:"expiresAt"`
}

// ReviewView is what a wallet screen shows before the payer signs.
type ReviewView struct {
	// Purpose is what the payment buys, such as credit_purchase.
	Purpose string `json:"purpose" example:"credit_purchase"`
	// Description says what the payment buys, for people.
	Description string `json:"description" example:"500 credits"`
	// Quantity is how much the payment buys (credits for a credit purchase, 1 license for a marketplace order), an integer string.
	Quantity string `json:"quantity" example:"500"`
	Pay      string `json:"pay" example:"5.1" doc:"The gross amount the payer sends, in user units."`
	Fee      string `json:"fee" example:"0.1" doc:"The token's transfer fee withheld on it."`
	Net      string `json:"net" example:"5" doc:"What the recipient receives."`
	// Mint is the token paid with (base58 mint address).
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Decimals is the mint's decimals: an atomic amount is the user amount times 10^decimals.
	Decimals int `json:"decimals" example:"9"`
	// Payer is the verified wallet that pays (base58).
	Payer string `json:"payer" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// Recipient is the wallet that receives the payment (base58): the environment's treasury, or,
	// when the payment has several recipients, the first leg's; legs lists them all.
	Recipient string `json:"recipient" example:"Treasury11111111111111111111111111111111111"`
	// Network is the Solana cluster, as a CAIP-2 chain id.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Legs are every recipient of the payment with what it is sent and receives, in transfer
	// order; one (the treasury) for a payment to the platform.
	Legs []ReviewLegView `json:"legs"`
	// ExpiresAt is when the payment offer expires.
	ExpiresAt time.Time `json:"expiresAt"`
}

// ReviewLegView is one recipient of a payment on a review screen.
type ReviewLegView struct {
	// Role names the recipient's part: treasury, or a purpose's role such as seller or platform_fee.
	Role string `json:"role" example:"seller"`
	// Recipient is the wallet paid (base58).
	Recipient string `json:"recipient" example:"Seller1111111111111111111111111111111111111"`
	// Pay is what the payer sends to this recipient, in user units, a decimal string.
	Pay string `json:"pay" example:"4.591836"`
	// Fee is the token's transfer fee withheld on this recipient's transfer, in user units.
	Fee string `json:"fee" example:"0.091836"`
	// Net is what this recipient receives, in user units.
	Net string `json:"net" example:"4.5"`
}

// IntentLegView is one frozen leg of a transaction intent: a recipient, its token account and
// the amounts of its own transfer instruction.
type IntentLegView struct {
	// Role names the leg's part, stable within the intent: treasury for a payment to the platform,
	// else the purpose's role, such as seller or platform_fee.
	Role string `json:"role" example:"treasury"`
	// Recipient is the wallet the leg pays (base58).
	Recipient string `json:"recipient" example:"Treasury11111111111111111111111111111111111"`
	// RecipientTokenAccount is the recipient's Token-2022 token account for the mint that the
	// leg's transfer credits (base58).
	RecipientTokenAccount string `json:"recipientTokenAccount" example:"Dst1111111111111111111111111111111111111111"`
	// GrossAtomic is what the payer sends in this leg's transfer, in atomic units, an integer
	// string: the leg's net plus its transfer fee.
	GrossAtomic string `json:"grossAtomic" example:"5102040817"`
	// FeeAtomic is the transfer fee withheld on this leg's transfer, in atomic units, an integer
	// string; each transfer's fee is computed on its own amount.
	FeeAtomic string `json:"feeAtomic" example:"102040817"`
	// NetAtomic is what the recipient must receive, in atomic units, an integer string; effect
	// verification demands exactly this.
	NetAtomic string `json:"netAtomic" example:"5000000000"`
}

// MismatchView is one effect that differed from the intent.
type MismatchView struct {
	// Field names the effect that differed, such as net, mint or recipient; for an intent with
	// several legs, a leg's effect is named with its position, such as legs[1].net.
	Field string `json:"field" example:"net"`
	// Expected is the intent's value.
	Expected string `json:"expected" example:"5000000000"`
	// Actual is the value the chain shows.
	Actual string `json:"actual" example:"4900000000"`
}

// ReconciliationCheckView is one comparison of a reconciliation.
type ReconciliationCheckView struct {
	Check    string `json:"check" example:"chain.net" doc:"What was compared: intent.economicsHash; chain.read, chain.network, chain.transaction, chain.signature, chain.success, chain.signer, chain.program, chain.instruction, chain.source, chain.mint, chain.destination, chain.recipient, chain.reference, chain.memo, chain.decimals, chain.gross, chain.net, chain.fee (the landed transaction read again at the purpose's threshold; amounts in the mint's atomic units; for an intent with several legs, chain.legs then each leg's checks as chain.legs[i].program ... chain.legs[i].fee); settlement.movements, settlement.scope, settlement.amount, settlement.balanced (the settlement's ledger movements, amounts in credits)."`
	Expected string `json:"expected" example:"1000000000" doc:"What the intent's frozen economics or the purpose's pricing expect."`
	Actual   string `json:"actual" example:"999999999" doc:"What the chain or the ledger shows."`
	Passed   bool   `json:"passed" example:"false" doc:"Whether actual agrees with expected."`
}

// ReconciliationView is an intent's reconciliation: the comparison of the
// intent, the chain's record of its transaction and its settlement, made
// once after settlement. It reports and never corrects.
type ReconciliationView struct {
	ID string `json:"id" example:"rec_0123456789abcdef0123456789abcdef" doc:"The reconciliation record's id; one record per intent."`
	// Object is always "reconciliation".
	Object  string `json:"object" example:"reconciliation"`
	Outcome string `json:"outcome" example:"MATCH" enum:"MATCH,DRIFT_DETECTED,REQUIRES_REVIEW" doc:"MATCH: every check passed. DRIFT_DETECTED: the payment and settlement are the intent's but an amount differs (net received, fee withheld, gross, credited amount, unbalanced postings). REQUIRES_REVIEW: an identity or integrity check failed (economics hash, transaction missing, failed or unreadable after the job's attempts, signer, mint, accounts, reference, memo, no settlement or a second one). Never corrected automatically."`
	// Reason names the failed checks, or why the chain could not be read;
	// null for MATCH.
	Reason    *string    `json:"reason" example:"failed checks: chain.net, chain.fee" doc:"The failed checks, or why the chain could not be read; null for MATCH."`
	Signature string     `json:"signature" example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW" doc:"The transaction signature read again."`
	Slot      *uint64    `json:"slot" example:"1234" doc:"The slot the transaction landed in; null when it was not found."`
	BlockTime *time.Time `json:"blockTime" doc:"The block's time; null when unknown."`
	// ObservedAt is when the chain was read; ReconciledAt when the
	// outcome was recorded.
	ObservedAt   time.Time                 `json:"observedAt" doc:"When the chain was read (RFC 3339, UTC)."`
	ReconciledAt time.Time                 `json:"reconciledAt" doc:"When the outcome was recorded (RFC 3339, UTC)."`
	Evidence     []ReconciliationCheckView `json:"evidence" doc:"Every check made, passed or not, in a fixed order."`
}

// TransactionIntentView is a transaction intent: its frozen economics,
// the prepared transaction, and its business and network state.
type TransactionIntentView struct {
	// ID is the intent's id; it is also the transfer's memo.
	ID string `json:"id" example:"txi_0123456789abcdef0123456789abcdef"`
	// Object is always "transaction_intent".
	Object string `json:"object" example:"transaction_intent"`
	// Environment is the environment (test or live); each has its own cluster and treasury.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Purpose is what the payment buys, such as credit_purchase.
	Purpose string `json:"purpose" example:"credit_purchase"`
	// BusinessReference is the unique reference of the purchase the settlement credits, so it
	// happens once.
	BusinessReference string `json:"businessReference" example:"credit_purchase:txi_0123456789abcdef0123456789abcdef"`
	// Quantity is how much the payment buys (credits for a credit purchase, 1 license for a marketplace order), an integer string.
	Quantity string `json:"quantity" example:"500"`
	// Description says what the payment buys, for people.
	Description string `json:"description" example:"500 credits"`
	// State is the business state; RECONCILED, EXPIRED, FAILED and REQUIRES_REVIEW are terminal
	// (a SETTLED intent is reconciled once, then RECONCILED).
	State string `json:"state" example:"CREATED" enum:"CREATED,SUBMITTED,CONFIRMING,VERIFIED,SETTLED,RECONCILING,RECONCILED,EXPIRED,FAILED,REQUIRES_REVIEW"`
	// NetworkState is the transaction's state on the network as last observed; it never moves
	// backwards.
	NetworkState string `json:"networkState" example:"unsent" enum:"unsent,submitted,processed,confirmed,finalized,failed,dropped"`
	// Network is the Solana cluster, as a CAIP-2 chain id.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Payer is the verified wallet that pays (base58).
	Payer string `json:"payer" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// SourceTokenAccount is the payer's token account the transfer debits (base58).
	SourceTokenAccount string `json:"sourceTokenAccount" example:"Src1111111111111111111111111111111111111111"`
	// Recipient is the wallet paid (base58): the environment's treasury, or, for an intent with
	// several legs, the first leg's recipient.
	Recipient string `json:"recipient" example:"Treasury11111111111111111111111111111111111"`
	// RecipientTokenAccount is that recipient's token account the transfer credits (base58).
	RecipientTokenAccount string `json:"recipientTokenAccount" example:"Dst1111111111111111111111111111111111111111"`
	// Legs are the payment's recipients in transfer order, each paid by its own transfer in the
	// one prepared transaction; a single leg (role treasury) for a payment to the platform.
	Legs []IntentLegView `json:"legs"`
	// Mint is the token paid with (base58 mint address).
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// TokenProgram is the mint's token program (base58), Token-2022 for mints with a transfer fee.
	TokenProgram string `json:"tokenProgram" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// Decimals is the mint's decimals: an atomic amount is the user amount times 10^decimals.
	Decimals int `json:"decimals" example:"9"`
	// GrossAtomic is the amount the payer sends, in atomic units, an integer string: the net plus
	// the transfer fee (summed over the legs).
	GrossAtomic string `json:"grossAtomic" example:"5102040817"`
	// FeeAtomic is the mint's transfer fee withheld on the transfer, in atomic units, an integer
	// string (summed over the legs' transfers).
	FeeAtomic string `json:"feeAtomic" example:"102040817"`
	// NetAtomic is what the recipients must receive, in atomic units, an integer string (summed
	// over the legs; the treasury's alone for a payment to the platform).
	NetAtomic string `json:"netAtomic" example:"5000000000"`
	// FeeEpoch is the epoch whose transfer fee configuration the fee was computed with.
	FeeEpoch uint64 `json:"feeEpoch" example:"12"`
	// Reference is the Solana Pay reference key the transfer carries, to find it on the chain
	// (base58).
	Reference string `json:"reference" example:"Ref1111111111111111111111111111111111111111"`
	// Memo is the memo the transfer carries: the intent's id.
	Memo string `json:"memo" example:"txi_0123456789abcdef0123456789abcdef"`
	// Policy is the pricing policy version that priced the intent.
	Policy PolicyRefView `json:"policy"`
	// EconomicsHash is the lowercase hex SHA-256 of everything the intent froze at
	// creation (network, payer, recipient and every leg, mint, amounts, fee, policy, references and
	// expiry); submission and reconciliation recompute it before acting.
	EconomicsHash string `json:"economicsHash" example:"5ab30000000000000000000000000000000000000000000000000000000000ff"`
	// Transaction is the prepared transaction while the intent awaits
	// its signature; null afterwards.
	Transaction *PreparedTransactionView `json:"transaction"`
	// Review is what a wallet screen shows before the payer signs.
	Review ReviewView `json:"review"`
	// Signature is the transaction's first signature (base58) once submitted; null before.
	Signature *string `json:"signature" example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	// LastError is SUBMISSION_UNCERTAIN while a relay's outcome is unknown.
	LastError *string `json:"lastError" example:"SUBMISSION_UNCERTAIN"`
	// ChainError is the transaction's error as the chain reported it (JSON); null when it did not
	// fail.
	ChainError *string `json:"chainError" example:"{\"InstructionError\":[1,{\"Custom\":1}]}"`
	// Slot is the slot the transaction landed in; null until observed.
	Slot *uint64 `json:"slot" example:"1234"`
	// SendAttempts counts the platform's relays of the signed transaction.
	SendAttempts int            `json:"sendAttempts" example:"1"`
	Evidence     []MismatchView `json:"evidence" doc:"For REQUIRES_REVIEW: each effect that differed from the intent."`
	// ExpiresAt is when an unsigned or unconfirmed intent expires.
	ExpiresAt time.Time `json:"expiresAt"`
	// CreatedAt is when the intent was created.
	CreatedAt time.Time `json:"createdAt"`
	// SubmittedAt is when the signed transaction was submitted; null before.
	SubmittedAt *time.Time `json:"submittedAt"`
	// VerifiedAt is when the chain's effects were verified against the intent; null before.
	VerifiedAt *time.Time `json:"verifiedAt"`
	// SettledAt is when the purchase was credited; null before.
	SettledAt *time.Time `json:"settledAt"`
	// ReconciledAt is when reconciliation recorded its outcome; null
	// before RECONCILED.
	ReconciledAt *time.Time `json:"reconciledAt"`
	// Reconciliation is the reconciliation's outcome and evidence; null
	// before RECONCILED.
	Reconciliation *ReconciliationView `json:"reconciliation"`
	// UpdatedAt is when the intent last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// SubmitIntentRequest is the body of POST /api/v1/transactions/{id}/submit.
type SubmitIntentRequest struct {
	Signature               string `json:"signature" example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW" doc:"The transaction's first signature (base58)."`
	SignedTransactionBase64 string `json:"signedTransactionBase64,omitempty" example:"AQAAAA==" doc:"The signed transaction for the platform to relay; it must carry exactly the prepared message. Omit it when the wallet broadcast the transaction itself."`
}

// ChainStatusView answers POST /api/v1/transactions/{id}/chain-status.
type ChainStatusView struct {
	// Intent is the intent after the observation.
	Intent TransactionIntentView `json:"intent"`
	// Observed is the network state the chain reported; Stale says it was
	// behind the intent's and was ignored (state never moves backwards).
	Observed *string `json:"observed" example:"confirmed"`
	// Stale is true when the observed state was behind the intent's and was ignored.
	Stale bool `json:"stale" example:"false"`
	// Changed is true when the observation moved the intent.
	Changed bool `json:"changed" example:"true"`
}

// ChainPayRequestBody is the body of POST /api/v1/chain-pay/requests.
type ChainPayRequestBody struct {
	// TransactionIntentID is the intent to pay, created by POST /api/v1/transactions/intent.
	TransactionIntentID string `json:"transactionIntentId" example:"txi_0123456789abcdef0123456789abcdef"`
	// Recipient and Amount are accepted and ignored, as the spec says: the
	// answer always carries the intent's.
	Recipient string `json:"recipient,omitempty" doc:"Ignored: the recipient is the intent's."`
	Amount    string `json:"amount,omitempty" doc:"Ignored: the amount is the intent's."`
}

// RequirementView is one condition a payment must meet.
type RequirementView struct {
	// Field names what the payment must carry: recipient, mint, amount, reference or memo.
	Field string `json:"field" example:"reference"`
	// Value is the value it must have.
	Value string `json:"value" example:"Ref1111111111111111111111111111111111111111"`
}

// ChainPayView is a chain payment request: a Solana Pay transfer URI and
// QR for a wallet that builds its own transfer. The QR is transport, never
// proof: the payment is verified from the chain.
type ChainPayView struct {
	// ID is the payment request's id.
	ID string `json:"id" example:"cpr_0123456789abcdef0123456789abcdef"`
	// Object is always "chain_payment_request".
	Object string `json:"object" example:"chain_payment_request"`
	// TransactionIntentID is the intent the request pays.
	TransactionIntentID string `json:"transactionIntentId" example:"txi_0123456789abcdef0123456789abcdef"`
	// URI is the Solana Pay transfer request URI a wallet opens.
	URI   string `json:"uri" example:"solana:Treasury11111111111111111111111111111111111?amount=5.102040817&spl-token=Mint111111111111111111111111111111111111111&reference=Ref1111111111111111111111111111111111111111&label=Platform&message=500%20credits&memo=txi_0123456789abcdef0123456789abcdef"`
	QRSVG string `json:"qrSvg" doc:"The URI as a QR code, an SVG document."`
	// Recipient is the treasury wallet to pay (base58).
	Recipient string `json:"recipient" example:"Treasury11111111111111111111111111111111111"`
	// Mint is the token to pay with (base58 mint address).
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Reference is the reference key the transfer must carry (base58).
	Reference string `json:"reference" example:"Ref1111111111111111111111111111111111111111"`
	// Memo is the memo the transfer must carry: the intent's id.
	Memo string `json:"memo" example:"txi_0123456789abcdef0123456789abcdef"`
	// AmountAtomic is the gross amount to send in atomic units, an integer string (net plus
	// transfer fee).
	AmountAtomic string `json:"amountAtomic" example:"5102040817"`
	// Amount is the gross amount to send in user units, a decimal string, as the URI states it.
	Amount string `json:"amount" example:"5.102040817"`
	// NetAtomic is what the treasury must receive in atomic units, an integer string.
	NetAtomic string `json:"netAtomic" example:"5000000000"`
	// FeeAtomic is the transfer fee withheld in atomic units, an integer string.
	FeeAtomic string `json:"feeAtomic" example:"102040817"`
	// Decimals is the mint's decimals.
	Decimals int `json:"decimals" example:"9"`
	// Label is the payee's name a wallet shows.
	Label string `json:"label" example:"Platform"`
	// Message says what the payment buys, as a wallet shows it.
	Message string `json:"message" example:"500 credits"`
	// Network is the Solana cluster, as a CAIP-2 chain id.
	Network string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Requirements are the conditions the transfer must meet to count as the payment.
	Requirements []RequirementView `json:"requirements"`
	// ExpiresAt is when the request expires.
	ExpiresAt time.Time `json:"expiresAt"`
	// CreatedAt is when the request was created.
	CreatedAt time.Time `json:"createdAt"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// reconciliationView is the view of a reconciliation record.
func reconciliationView(r intent.Reconciliation) *ReconciliationView {
	v := &ReconciliationView{ID: r.ID, Object: "reconciliation", Outcome: string(r.Outcome), Reason: optional(r.Reason),
		Signature: r.Signature, BlockTime: timePtr(r.BlockTime), ObservedAt: r.ObservedAt, ReconciledAt: r.CreatedAt,
		Evidence: make([]ReconciliationCheckView, 0, len(r.Checks))}
	if r.Slot != 0 {
		slot := r.Slot
		v.Slot = &slot
	}
	for _, c := range r.Checks {
		v.Evidence = append(v.Evidence, ReconciliationCheckView{Check: c.Name, Expected: c.Expected, Actual: c.Actual, Passed: c.Passed})
	}
	return v
}

// reconciledView is intentView with the intent's reconciliation record,
// read when the intent has one.
func reconciledView(ctx context.Context, svc *intent.Service, it intent.Intent) (TransactionIntentView, error) {
	v := intentView(it)
	r, err := svc.Reconciliation(ctx, it)
	if err != nil || r == nil {
		return v, err
	}
	v.Reconciliation = reconciliationView(*r)
	return v, nil
}

func intentView(it intent.Intent) TransactionIntentView {
	r := it.Review()
	v := TransactionIntentView{ID: it.ID, Object: "transaction_intent", Environment: string(it.Actor.Environment),
		Purpose: it.Purpose, BusinessReference: it.BusinessReference, Quantity: it.Quantity, Description: it.Description,
		State: string(it.State), NetworkState: string(it.NetworkState), Network: it.Network, Payer: it.Payer.String(),
		SourceTokenAccount: it.Source.String(), Recipient: it.Recipient.String(), RecipientTokenAccount: it.Destination.String(),
		Mint: it.Mint.String(), TokenProgram: it.TokenProgram.String(), Decimals: int(it.Decimals),
		GrossAtomic: strconv.FormatUint(it.GrossAtomic, 10), FeeAtomic: strconv.FormatUint(it.FeeAtomic, 10),
		NetAtomic: strconv.FormatUint(it.NetAtomic, 10), FeeEpoch: it.FeeEpoch, Reference: it.Reference.String(), Memo: it.Memo,
		Policy:        PolicyRefView{ID: it.Policy.ID, Version: it.Policy.Version, Hash: it.Policy.Hash},
		EconomicsHash: it.EconomicsHash,
		Review: ReviewView{Purpose: r.Purpose, Description: r.Description, Quantity: r.Quantity, Pay: r.Pay, Fee: r.Fee, Net: r.Net,
			Mint: r.Mint, Decimals: int(r.Decimals), Payer: r.Payer, Recipient: r.Recipient, Network: r.Network, ExpiresAt: r.ExpiresAt,
			Legs: make([]ReviewLegView, 0, len(r.Legs))},
		Legs:      []IntentLegView{},
		Signature: optional(it.Signature), LastError: optional(string(it.LastError)), ChainError: optional(it.ChainError),
		SendAttempts: it.SendAttempts, Evidence: []MismatchView{}, ExpiresAt: it.ExpiresAt, CreatedAt: it.CreatedAt,
		SubmittedAt: timePtr(it.SubmittedAt), VerifiedAt: timePtr(it.VerifiedAt), SettledAt: timePtr(it.SettledAt),
		ReconciledAt: timePtr(it.ReconciledAt), UpdatedAt: it.UpdatedAt}
	for _, l := range r.Legs {
		v.Review.Legs = append(v.Review.Legs, ReviewLegView{Role: l.Role, Recipient: l.Recipient, Pay: l.Pay, Fee: l.Fee, Net: l.Net})
	}
	for _, l := range it.PaymentLegs() {
		v.Legs = append(v.Legs, IntentLegView{Role: l.Role, Recipient: l.Recipient.String(), RecipientTokenAccount: l.Destination.String(),
			GrossAtomic: strconv.FormatUint(l.GrossAtomic, 10), FeeAtomic: strconv.FormatUint(l.FeeAtomic, 10),
			NetAtomic: strconv.FormatUint(l.NetAtomic, 10)})
	}
	if it.State == intent.StateCreated {
		v.Transaction = &PreparedTransactionView{UnsignedTransactionBase64: it.Transaction.UnsignedBase64(),
			MessageBase64: base64.StdEncoding.EncodeToString(it.Transaction.Message), Blockhash: it.Transaction.Blockhash,
			LastValidBlockHeight: it.Transaction.LastValidBlockHeight, ExpiresAt: it.Transaction.ExpiresAt}
	}
	if it.Slot != 0 {
		slot := it.Slot
		v.Slot = &slot
	}
	for _, m := range it.Evidence {
		v.Evidence = append(v.Evidence, MismatchView{Field: m.Field, Expected: m.Expected, Actual: m.Actual})
	}
	return v
}

// qrSVG renders text as a QR code (medium error correction) in SVG: one
// path of unit squares with a four-module quiet zone.
func qrSVG(text string) (string, error) {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return "", fmt.Errorf("transport: QR code: %w", err)
	}
	const quiet = 4
	n := code.Size + 2*quiet
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`, n, n)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y := range code.Size {
		for x := range code.Size {
			if code.Black(x, y) {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x+quiet, y+quiet)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	return b.String(), nil
}

func chainPayView(pr intent.PaymentRequest) (ChainPayView, error) {
	svg, err := qrSVG(pr.URI)
	if err != nil {
		return ChainPayView{}, err
	}
	v := ChainPayView{ID: pr.ID, Object: "chain_payment_request", TransactionIntentID: pr.IntentID, URI: pr.URI, QRSVG: svg,
		Recipient: pr.Recipient.String(), Mint: pr.Mint.String(), Reference: pr.Reference.String(), Memo: pr.Memo,
		AmountAtomic: strconv.FormatUint(pr.AmountAtomic, 10), Amount: pr.Amount, NetAtomic: strconv.FormatUint(pr.NetAtomic, 10),
		FeeAtomic: strconv.FormatUint(pr.FeeAtomic, 10), Decimals: int(pr.Decimals), Label: pr.Label, Message: pr.Message,
		Network: pr.Network, Requirements: []RequirementView{}, ExpiresAt: pr.ExpiresAt, CreatedAt: pr.CreatedAt}
	for _, r := range pr.Requirements {
		v.Requirements = append(v.Requirements, RequirementView{Field: r.Field, Value: r.Value})
	}
	return v, nil
}

// unitOfCall makes the route's own unit of work the service's: the
// service's writes commit with the request receipt.
func unitOfCall(c *Call) intent.RunFunc {
	return func(ctx context.Context, fn func(st intent.Store) error) error {
		return c.Commit(ctx, func(tx Tx) error { return fn(tx) })
	}
}

// commitReceipt commits the request receipt alone when the service's
// unit of work did not run (nothing changed: a repeated submit, an
// existing payment request, a check that observed nothing new).
func commitReceipt(ctx context.Context, c *Call) error {
	if c.Committed() {
		return nil
	}
	return c.Commit(ctx, func(Tx) error { return nil })
}

func exampleIntent() TransactionIntentView {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return TransactionIntentView{ID: "txi_0123456789abcdef0123456789abcdef", Object: "transaction_intent", Environment: "test",
		Purpose: "credit_purchase", State: "CREATED", NetworkState: "unsent", Decimals: 9, GrossAtomic: "5102040817",
		FeeAtomic: "102040817", NetAtomic: "5000000000", Evidence: []MismatchView{},
		Legs:        []IntentLegView{{Role: "treasury", GrossAtomic: "5102040817", FeeAtomic: "102040817", NetAtomic: "5000000000"}},
		Review:      ReviewView{Legs: []ReviewLegView{{Role: "treasury", Pay: "5.102040817", Fee: "0.102040817", Net: "5"}}},
		Transaction: &PreparedTransactionView{UnsignedTransactionBase64: "AQAAAA==", MessageBase64: "AQAAAA==", ExpiresAt: t},
		ExpiresAt:   t, CreatedAt: t, UpdatedAt: t}
}

// exampleReconciledIntent is an intent after reconciliation.
func exampleReconciledIntent() TransactionIntentView {
	v := exampleIntent()
	t := time.Date(2026, 1, 2, 3, 6, 5, 0, time.UTC)
	v.State, v.NetworkState, v.Transaction, v.SettledAt, v.ReconciledAt = "RECONCILED", "finalized", nil, &t, &t
	slot := uint64(1234)
	v.Reconciliation = &ReconciliationView{ID: "rec_0123456789abcdef0123456789abcdef", Object: "reconciliation", Outcome: "MATCH",
		Signature: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW", Slot: &slot,
		BlockTime: &t, ObservedAt: t, ReconciledAt: t, Evidence: []ReconciliationCheckView{
			{Check: "chain.net", Expected: "5000000000", Actual: "5000000000", Passed: true},
			{Check: "settlement.amount", Expected: "500", Actual: "500", Passed: true}}}
	return v
}

func exampleChainPay() ChainPayView {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return ChainPayView{ID: "cpr_0123456789abcdef0123456789abcdef", Object: "chain_payment_request",
		TransactionIntentID: "txi_0123456789abcdef0123456789abcdef", QRSVG: `<svg xmlns="http://www.w3.org/2000/svg"></svg>`,
		AmountAtomic: "5102040817", Amount: "5.102040817", Decimals: 9, Requirements: []RequirementView{}, ExpiresAt: t, CreatedAt: t}
}

func intentRoutes(svc *intent.Service) []Route {
	if svc == nil {
		return nil
	}
	user := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagWallet, transport.AuthSession, true
		if r.Permission == "" && !r.SignedIn {
			r.AnyMember = true
		}
		return r
	}
	payView := func(pr intent.PaymentRequest, err error) (any, error) {
		if err != nil {
			return nil, err
		}
		return chainPayView(pr)
	}
	// requestPayment creates or returns the intent's payment request in
	// the route's unit of work.
	requestPayment := func(ctx context.Context, c *Call, id string) (any, error) {
		pr, err := svc.RequestPayment(intent.WithUnit(ctx, unitOfCall(c)), c.Principal, id)
		if err == nil {
			err = commitReceipt(ctx, c)
		}
		return payView(pr, err)
	}
	chainPayDesc := "The intent's chain payment request, created on first call and returned afterwards (one per intent): a Solana Pay " +
		"transfer URI to the treasury wallet with the intent's gross amount in user units, the mint as spl-token, the intent's " +
		"reference, a label, message and the intent id as memo (spaces as %20), the atomic and display amounts, the expiry, what " +
		"verification will require, and the URI as an SVG QR code. The QR is transport, never proof: the payment is found by its " +
		"reference and verified from the chain. With a transfer fee, the recipient receives the amount minus the fee; the intent's " +
		"net already accounts for it. A transfer request names one recipient, so an intent with several legs has none: 422 " +
		"CAPABILITY_UNSUPPORTED (details.reason multi_recipient_intent); its prepared transaction is the only way to pay it."
	return []Route{
		user(Route{Method: http.MethodPost, Pattern: "/api/v1/transactions/intent", OperationID: "createTransactionIntent",
			Permission: access.BillingManage, Idempotency: transport.IdempotencyRequired, OwnUnitOfWork: true, Status: http.StatusCreated,
			Summary: "Create a transaction intent",
			Description: "Freezes a payment for a registered purpose and answers the prepared unsigned transaction and the review " +
				"items a wallet screen shows. credit_purchase buys a pack of credits, priced by the credits.packs policy of the " +
				"caller's environment and paid to the treasury. marketplace_order buys the license a listing sells (listingId; " +
				"POST /api/v1/marketplace/listings): the price, the mint, the recipients and the fee are derived from the listing's " +
				"current version and the marketplace fee policy in force, never from the caller, as two legs of the one transaction: " +
				"the seller's payout wallet receives the price less the platform fee (role seller) and the environment's treasury, the " +
				"fee recipient, the platform fee (role platform_fee); the platform never holds the seller's money. It creates the order " +
				"(GET /api/v1/marketplace/orders) in the same unit of work, PAYMENT_PENDING, with its frozen snapshot; a verified " +
				"payment settles it once (financial ledger entries, the license entitlement, FULFILLED) and a payment that does not " +
				"match goes to REQUIRES_REVIEW and issues nothing. An unknown listing is 404 (details.field listingId), the buyer's own " +
				"workspace's listing 400 (reason own_listing), a withdrawn license offer 409 (reason license_withdrawn), an exclusive " +
				"license another order holds 409 (reason exclusive_license_taken), and without a published fee policy 503 " +
				"SERVICE_UNAVAILABLE (reason fee_policy_missing). " +
				"The server derives every economic item: network (CAIP-2 from the cluster), payer (a wallet the user verified), " +
				"recipient (the environment's treasury) and both token accounts, mint and decimals, the gross amount and the expected " +
				"net after the Token-2022 transfer fee at the current epoch (the payer sends enough for the treasury to receive the pack " +
				"price), the policy version and hash, the business reference, a unique reference account and the expiry. The prepared " +
				"transaction carries a memo with the intent id and then the transfer (TransferCheckedWithFee when the mint has a fee) " +
				"with the reference as a read-only account. A purpose may split the payment into legs (up to 4 recipients, such as a " +
				"seller's payout and a platform fee), each paid by its own transfer in the same transaction and grossed up for its own " +
				"transfer fee; legs lists them and the amounts are their totals. A leg whose recipient has no usable token account " +
				"for the mint is 422 WALLET_REQUIRED with details.field legs[i].recipient and details.reason. A caller-supplied " +
				"recipient or amount is 422. Needs a signed-in user " +
				"(API keys are refused) with billing.manage. Idempotency-Key is required: the same key and body return the same intent; " +
				"another body (another listing included) is 409 IDEMPOTENCY_CONFLICT.",
			Request: IntentRequest{Purpose: "credit_purchase", Credits: "500", Mint: "Mint111111111111111111111111111111111111111",
				Wallet: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"},
			Response: exampleIntent(),
			Errors: []string{string(fault.WalletRequired), string(fault.ProviderUnavailable), string(fault.ServiceUnavailable),
				string(fault.NetworkMismatch), string(fault.NotFound), string(fault.Conflict), string(fault.InvalidAmount)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in IntentRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				it, err := svc.Prepare(ctx, c.Principal, intent.Request{Purpose: in.Purpose, Credits: in.Credits, ListingID: in.ListingID,
					Mint: in.Mint, Wallet: in.Wallet, Recipient: in.Recipient, Amount: in.Amount})
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					if err := svc.Record(ctx, tx, it); err != nil {
						return nil, err
					}
					return intentView(it.Intent), nil
				})
			}}),
		user(Route{Method: http.MethodGet, Pattern: "/api/v1/transactions/{id}", OperationID: "getTransactionIntent",
			Summary: "Get a transaction intent",
			Description: "The intent's frozen economics, its business state (CREATED, SUBMITTED, CONFIRMING, VERIFIED, SETTLED, " +
				"RECONCILING, RECONCILED; EXPIRED, FAILED, REQUIRES_REVIEW with the evidence of each mismatch) and its network state, " +
				"which only moves forward (unsent < submitted < processed < confirmed < finalized; failed, dropped). After settlement " +
				"a job reconciles the intent once: it reads the transaction again at the purpose's threshold and compares it and the " +
				"settlement's ledger movement with the frozen economics; reconciliation then shows the outcome (MATCH, DRIFT_DETECTED " +
				"or REQUIRES_REVIEW), every check as evidence and the record's id, and reconciledAt when it was recorded. Mismatches " +
				"are reported, never corrected. The state is server-owned and survives refresh, wallet disconnect and session loss. " +
				"Another user's intent is 404.",
			Response: exampleReconciledIntent(), Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				it, err := svc.Get(ctx, c.Principal, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return reconciledView(ctx, svc, it)
			}}),
		user(Route{Method: http.MethodPost, Pattern: "/api/v1/transactions/{id}/submit", OperationID: "submitTransactionIntent",
			Idempotency: transport.IdempotencyNone, OwnUnitOfWork: true, Summary: "Submit a signed transaction intent",
			Description: "Records the transaction's signature and, when signedTransactionBase64 is sent, the signed bytes for the " +
				"platform to relay from a durable job. The signed transaction must carry exactly the prepared message and the payer's " +
				"valid signature (422 SIGNATURE_REJECTED otherwise); the intent's integrity and expiry are checked again. Submit never " +
				"settles: the payment is verified from the chain. A relay whose outcome is unknown leaves the intent recoverable with " +
				"lastError SUBMISSION_UNCERTAIN; the job inspects the signature before re-sending the identical bytes, and never builds " +
				"a second transaction. Idempotent by its signature: submitting the same signature again returns the intent; a " +
				"signature already bound to another intent is 409.",
			Request:  SubmitIntentRequest{Signature: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"},
			Response: exampleIntent(),
			Errors: []string{string(fault.NotFound), string(fault.SignatureRejected), string(fault.QuoteExpired), string(fault.Conflict),
				string(fault.VerificationFailed), string(fault.InvalidState)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in SubmitIntentRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				it, err := svc.Submit(intent.WithUnit(ctx, unitOfCall(c)), c.Principal, c.PathValue("id"),
					intent.SubmitRequest{Signature: in.Signature, SignedTransactionBase64: in.SignedTransactionBase64})
				if err != nil {
					return nil, err
				}
				if err := commitReceipt(ctx, c); err != nil {
					return nil, err
				}
				return reconciledView(ctx, svc, it)
			}}),
		{Method: http.MethodPost, Pattern: "/api/v1/transactions/{id}/chain-status", OperationID: "checkTransactionIntentChainStatus",
			Tag: transport.TagWallet, Auth: transport.AuthInternal, Private: true, Idempotency: transport.IdempotencyNone, OwnUnitOfWork: true,
			Summary: "Check an intent's transaction on the chain now",
			Description: "Internal scope (an operator's key, for any intent of its environment). Runs the reconciliation job's check at once: reads the signature's status (or, for a chain " +
				"payment request, the signatures for the reference), moves the network state forward only (an observation behind the " +
				"current state is reported stale and ignored), verifies the effects from the landed transaction (cluster, success, " +
				"payer and signer, recipient token account and owner, mint, net amount received, reference, memo, non-duplication) and " +
				"settles once the purpose's threshold is reached (confirmed for credit_purchase). A mismatch moves the intent to " +
				"REQUIRES_REVIEW with its evidence and credits nothing. Checks of one intent that race are settled once: each " +
				"write is a compare-and-set on the intent, and a check that lost it answers 409 CONFLICT (the intent changed " +
				"meanwhile; read it again).",
			Response: ChainStatusView{Intent: exampleIntent()},
			Errors:   []string{string(fault.NotFound), string(fault.ProviderUnavailable), string(fault.NetworkMismatch), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				out, err := svc.CheckInternal(intent.WithUnit(ctx, unitOfCall(c)), c.Principal.Environment, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				if err := commitReceipt(ctx, c); err != nil {
					return nil, err
				}
				v, err := reconciledView(ctx, svc, out.Intent)
				if err != nil {
					return nil, err
				}
				return ChainStatusView{Intent: v, Observed: optional(string(out.Observed)), Stale: out.Stale, Changed: out.Changed}, nil
			}},
		user(Route{Method: http.MethodPost, Pattern: "/api/v1/chain-pay/requests", OperationID: "createChainPaymentRequest",
			Idempotency: transport.IdempotencyNone, OwnUnitOfWork: true, Summary: "Create a chain payment request for an intent",
			Description: chainPayDesc + " recipient and amount in the body are accepted and ignored.",
			Request:     ChainPayRequestBody{TransactionIntentID: "txi_0123456789abcdef0123456789abcdef"},
			Response:    exampleChainPay(), Errors: []string{string(fault.NotFound), string(fault.InvalidState),
				string(fault.CapabilityUnsupported)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ChainPayRequestBody
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				if in.TransactionIntentID == "" {
					return nil, fault.Invalid("transport.chainPay", "transactionIntentId", "transactionIntentId is required.")
				}
				return requestPayment(ctx, c, in.TransactionIntentID)
			}}),
		user(Route{Method: http.MethodPost, Pattern: "/api/v1/transactions/{id}/chain-pay", OperationID: "createIntentChainPayment",
			Idempotency: transport.IdempotencyNone, OwnUnitOfWork: true, Summary: "Create an intent's chain payment request",
			Description: chainPayDesc + " Recipient, mint, amount, decimals and expiry are derived from the intent.",
			Response:    exampleChainPay(), Errors: []string{string(fault.NotFound), string(fault.InvalidState),
				string(fault.CapabilityUnsupported)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return requestPayment(ctx, c, c.PathValue("id"))
			}}),
		user(Route{Method: http.MethodGet, Pattern: "/api/v1/chain-pay/requests/{intentId}", OperationID: "getChainPaymentRequestByIntent",
			Summary: "Get an intent's chain payment request", Description: "The payment request of the intent; 404 before one was created.",
			Response: exampleChainPay(), Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return payView(svc.PaymentRequestByIntent(ctx, c.Principal, c.PathValue("intentId")))
			}}),
		user(Route{Method: http.MethodGet, Pattern: "/api/v1/chain-pay/{id}", OperationID: "getChainPaymentRequest",
			Summary: "Get a chain payment request", Description: "A chain payment request by its own id.",
			Response: exampleChainPay(), Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return payView(svc.PaymentRequest(ctx, c.Principal, c.PathValue("id")))
			}}),
	}
}
