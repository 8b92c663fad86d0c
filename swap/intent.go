package swap

import (
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// Intent binds a quote to one transaction before the wallet signs (spec,
// "Swap records": the intent binds). Every field but Hash is frozen and
// covered by Hash; the quote's economics are copied, not referenced, so
// the intent alone says what the signature authorizes.
type Intent struct {
	// ID is the intent's id (intentId); OperationID and QuoteID what it
	// belongs to and binds.
	ID          string
	OperationID string
	QuoteID     string
	// Owner and SessionID are the session authority that created it.
	Owner     Owner
	SessionID string
	// Terms are the bound quote's, unchanged.
	Terms
	// FeeRecipient is the verified wallet that receives the service fee;
	// FeeAccount its token account of the fee mint
	// (FeeBreakdown.ServiceFeeMint).
	FeeRecipient chain.Address
	FeeAccount   chain.Address
	// FeePolicyVersion and RegistryVersion are the quote's, unchanged at
	// binding.
	FeePolicyVersion string
	RegistryVersion  string
	// QuoteHash is the bound quote's hash.
	QuoteHash string
	// MessageHash is HashBytes of the prepared unsigned message: the only
	// bytes a signature of this intent may cover. RecentBlockhash and
	// LastValidBlockHeight are that message's blockhash and the last
	// block height it can land at.
	MessageHash          string
	RecentBlockhash      string
	LastValidBlockHeight uint64
	// CreatedAt is when it was bound; ExpiresAt is the quote's expiry
	// (millisecond precision, FreezeTime).
	CreatedAt time.Time
	ExpiresAt time.Time
	// Hash is the intent hash (intentHash), IntentHash of the fields above.
	Hash string
}

// FeeMint returns the mint the service fee is taken in.
func (it Intent) FeeMint() chain.Address { return it.FeeBreakdown.ServiceFeeMint }

// intentSchema versions the intent hash's encoding.
const intentSchema = "swap-intent/v1"

// IntentHash returns the hex SHA-256 of every frozen field of it in a fixed
// order under a version tag (see canon): a change of any of them changes
// it, and storing and re-reading it never does. Hash itself is not
// covered.
func IntentHash(it Intent) string {
	var c canon
	c.str("schema", intentSchema)
	c.str("intentId", it.ID)
	c.str("operationId", it.OperationID)
	c.str("quoteId", it.QuoteID)
	encodeOwner(&c, it.Owner)
	c.str("sessionId", it.SessionID)
	encodeTerms(&c, it.Terms)
	c.addr("feeRecipient", it.FeeRecipient)
	c.addr("feeAccount", it.FeeAccount)
	c.str("feePolicyVersion", it.FeePolicyVersion)
	c.str("registryVersion", it.RegistryVersion)
	c.str("quoteHash", it.QuoteHash)
	c.str("messageHash", it.MessageHash)
	c.str("recentBlockhash", it.RecentBlockhash)
	c.uint("lastValidBlockHeight", it.LastValidBlockHeight)
	c.time("createdAt", it.CreatedAt)
	c.time("expiresAt", it.ExpiresAt)
	return c.sum()
}

// CheckIntegrity fails with QUOTE_MISMATCH (details.reason "intentHash")
// when it's hash no longer matches its fields.
func (it Intent) CheckIntegrity() error {
	if it.Hash == "" || IntentHash(it) != it.Hash {
		return fault.E("swap.Intent.CheckIntegrity", fault.QuoteMismatch, "The intent does not match its hash.").
			With("reason", "intentHash")
	}
	return nil
}

// CheckMessage fails with SIGNATURE_REJECTED (details.reason "message")
// when message is not the prepared message the intent binds: a signature
// over any other bytes authorizes nothing here.
func (it Intent) CheckMessage(message []byte) error {
	if HashBytes(message) != it.MessageHash {
		return fault.E("swap.Intent.CheckMessage", fault.SignatureRejected, "The signed message is not the prepared one.").
			With("reason", "message")
	}
	return nil
}

// Binding is what an intent adds to its quote, and what the intent request
// is checked against.
type Binding struct {
	// ID is the new intent's id.
	ID string
	// Owner and SessionID are the caller's session authority.
	Owner     Owner
	SessionID string
	// Wallet is the wallet the intent request names.
	Wallet chain.Address
	// FeePolicyVersion and RegistryVersion are the versions in force now.
	FeePolicyVersion string
	RegistryVersion  string
	// FeeRecipient and FeeAccount are the configured fee recipient and its
	// token account of the fee mint; FeeRecipientVerified says the
	// settings verified them.
	FeeRecipient         chain.Address
	FeeAccount           chain.Address
	FeeRecipientVerified bool
	// Message is the prepared unsigned message; RecentBlockhash and
	// LastValidBlockHeight its blockhash.
	Message              []byte
	RecentBlockhash      string
	LastValidBlockHeight uint64
}

// NewIntent binds q under b at now, after the spec's intent checks, in
// order:
//
//   - the quote is intact (Quote.CheckIntegrity, CheckEconomics):
//     QUOTE_MISMATCH;
//   - the caller is the quote's owner: NOT_FOUND, so nobody learns of
//     another's quote;
//   - the quote is unexpired (now before ExpiresAt): QUOTE_EXPIRED;
//   - the wallet is the quote's: WALLET_MISMATCH;
//   - the fee-policy and registry versions are unchanged: QUOTE_MISMATCH
//     (details.reason "feePolicyVersion" or "registryVersion"); a new
//     quote is needed;
//   - a verified fee recipient and its account are configured:
//     SWAP_NOT_CONFIGURED;
//   - a prepared message and its blockhash are given: INVALID_INPUT.
//
// The intent copies the quote's frozen fields, expires with the quote, and
// is sealed under IntentHash.
func NewIntent(q Quote, b Binding, now time.Time) (Intent, error) {
	const op = "swap.NewIntent"
	if err := q.CheckIntegrity(); err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	if err := q.CheckEconomics(); err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	if b.Owner != q.Owner {
		return Intent{}, fault.E(op, fault.NotFound, "The quote was not found.")
	}
	if !now.Before(q.ExpiresAt) {
		return Intent{}, fault.E(op, fault.QuoteExpired, "The quote has expired.").
			With("expiresAt", canonTime(q.ExpiresAt))
	}
	if b.Wallet != q.Wallet {
		return Intent{}, fault.E(op, fault.WalletMismatch, "The wallet is not the quote's wallet.").With("field", "wallet")
	}
	if b.FeePolicyVersion != q.FeePolicyVersion {
		return Intent{}, fault.E(op, fault.QuoteMismatch, "The fee policy changed since the quote; request a new quote.").
			With("reason", "feePolicyVersion")
	}
	if b.RegistryVersion != q.RegistryVersion {
		return Intent{}, fault.E(op, fault.QuoteMismatch, "The token registry changed since the quote; request a new quote.").
			With("reason", "registryVersion")
	}
	if !b.FeeRecipientVerified || b.FeeRecipient.IsZero() || b.FeeAccount.IsZero() {
		return Intent{}, fault.E(op, fault.SwapNotConfigured, "No verified fee recipient is configured.")
	}
	if len(b.Message) == 0 || b.RecentBlockhash == "" || b.LastValidBlockHeight == 0 {
		return Intent{}, fault.E(op, fault.InvalidInput, "The intent needs a prepared message and its blockhash.").
			With("field", "message")
	}
	it := Intent{
		ID: b.ID, OperationID: q.OperationID, QuoteID: q.ID,
		Owner: b.Owner, SessionID: b.SessionID,
		Terms:        q.Terms.clone(),
		FeeRecipient: b.FeeRecipient, FeeAccount: b.FeeAccount,
		FeePolicyVersion: q.FeePolicyVersion, RegistryVersion: q.RegistryVersion,
		QuoteHash: q.Hash, MessageHash: HashBytes(b.Message),
		RecentBlockhash: b.RecentBlockhash, LastValidBlockHeight: b.LastValidBlockHeight,
		CreatedAt: FreezeTime(now), ExpiresAt: FreezeTime(q.ExpiresAt),
	}
	it.Hash = IntentHash(it)
	return it, nil
}

// clone copies t with its own route and venue fees.
func (t Terms) clone() Terms {
	t.Route = append([]RouteStep(nil), t.Route...)
	t.FeeBreakdown = cloneFeeBreakdown(t.FeeBreakdown)
	return t
}

// cloneFeeBreakdown copies f with its own slice of venue fees.
func cloneFeeBreakdown(f FeeBreakdown) FeeBreakdown {
	f.VenueFees = append([]VenueFee(nil), f.VenueFees...)
	return f
}
