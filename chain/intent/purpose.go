package intent

import (
	"context"
	"slices"
	"sync"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// PolicyRef is what an intent records about the policy that priced it: the
// policy id, its integer version and the hex SHA-256 of its canonical
// content (the policy package's Ref as the intent records it; PolicyPacks
// converts one to the other).
type PolicyRef struct {
	// ID is the policy id, such as "credits.packs".
	ID string
	// Version is the version applied.
	Version int
	// Hash is the version's content hash.
	Hash string
}

// PriceInput is what a purpose prices: the acting user and the request.
type PriceInput struct {
	// Actor is who asks; Actor.Environment selects the policy.
	Actor Actor
	// Request is the caller's request; Wallet is already verified.
	Request Request
	// Treasury is the actor's environment's treasury wallet, for a
	// purpose that pays it as one of several legs (a platform fee).
	Treasury chain.Address
}

// Price is a purpose's economics for one request. The intent domain adds
// the chain's part (transfer fee, gross amount, accounts) and freezes it.
//
// A purpose prices either one payment to the environment's treasury
// (NetAtomic, Legs empty: credit_purchase) or an ordered list of legs,
// each paying its own recipient (Legs, NetAtomic zero: a sale split into
// the seller's payout and the platform fee). Setting both is a bug of the
// purpose (INTERNAL).
type Price struct {
	// Mint is the payment mint; it must be a Token-2022 mint.
	Mint chain.Address
	// NetAtomic is what the treasury must receive, in the mint's atomic
	// units, after any transfer fee, when Legs is empty; zero otherwise.
	NetAtomic uint64
	// Legs are the recipients, in transfer order, 1 to MaxLegs of them,
	// with distinct roles and recipients, none the payer and each a
	// positive net; every recipient must already hold its Token-2022
	// associated token account for Mint (Create refuses the intent with
	// WALLET_REQUIRED otherwise). Empty means one leg to the treasury of
	// NetAtomic.
	Legs []PriceLeg
	// Quantity is what is bought, in the purpose's unit (credits for
	// credit_purchase), as a canonical decimal string.
	Quantity string
	// Description is the review text, such as "500 credits".
	Description string
	// Policy is the policy version that priced it.
	Policy PolicyRef
	// Terms is the purpose's own record of what it priced (a marketplace
	// order's snapshot), handed to its Open hook in the unit of work that
	// records the intent; nil when the purpose keeps none. The intent
	// neither stores nor hashes it.
	Terms any
}

// PriceFunc derives a purpose's economics from a request. It validates the
// purpose's own fields (INVALID_INPUT naming the field) and reads its
// policy; it never reads the chain.
type PriceFunc func(ctx context.Context, in PriceInput) (Price, error)

// SettleFunc applies a verified payment's business effect (credits granted,
// reward funded) inside the unit of work that moves the intent to
// SETTLED; st is that unit's store, whose accessors (CreditStore) give the
// owning domain's ports bound to the same unit. It must be idempotent by the
// intent's BusinessReference: the state compare-and-set already makes it
// run once per intent, and the reference makes a replay harmless.
type SettleFunc func(ctx context.Context, st Store, it Intent) error

// SettlementFunc reads back what the purpose's Settle wrote for it, for
// reconciliation: every movement that carries the intent's settlement
// reference, wherever it landed in the intent's tenant, with its postings.
// It runs in the reconciliation's unit of work (st), after the chain was
// read, and never writes. A settlement it cannot find is an empty
// Settlement, not an error; errors are the store's.
type SettlementFunc func(ctx context.Context, st Store, it Intent) (Settlement, error)

// OpenFunc records a purpose's own business object for a new intent (a
// marketplace order) in the unit of work that records the intent (st),
// from the terms its Price returned (Price.Terms). An error rolls the
// intent back with it.
type OpenFunc func(ctx context.Context, st Store, it Intent, terms any) error

// TrackFunc follows an intent's state in the purpose's own records: it
// runs in every unit of work that writes an intent of the purpose (st),
// after the write, with the intent as written, so that the purpose's
// object moves with the intent (a marketplace order submitted, expired or
// under review) and commits with it. It runs after Settle in the unit
// that settles the intent. An error rolls the unit back.
type TrackFunc func(ctx context.Context, st Store, it Intent) error

// Purpose is one registered kind of transaction intent, owned by the
// domain that settles it.
type Purpose struct {
	// Name is the purpose's stable name, such as "credit_purchase".
	Name string
	// Threshold is the network state settlement waits for: Confirmed for
	// user payments, Finalized for treasury and reward flows.
	// Reconciliation reads the transaction again at the same level.
	Threshold chain.Commitment
	// Price derives the economics. Required.
	Price PriceFunc
	// Settle applies the effect. Required.
	Settle SettleFunc
	// Settlement reads the effect back for reconciliation (Compare).
	// Required: every value-moving flow ends with reconciliation.
	Settlement SettlementFunc
	// Open, when set, records the purpose's own object with a new intent.
	Open OpenFunc
	// Track, when set, moves the purpose's own object with its intent.
	Track TrackFunc
	// TreasuryPays marks a payout: a wallet the server controls pays
	// (the payer PreparePayout names, such as a reward treasury, signing
	// through the owning domain's signer), and the request's wallet, a
	// verified wallet of the user, is the recipient its Price names.
	// Prepare (the create-intent route) refuses such a purpose: only the
	// owning domain creates its intents, through PreparePayout.
	TreasuryPays bool
}

// validPurposeName reports whether name is lower-case snake case: a letter,
// then letters, digits and underscores, at most 64 bytes.
func validPurposeName(name string) bool {
	if name == "" || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Registry is the closed set of purposes. Domains register theirs while
// the platform is wired; lookups are safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	purposes map[string]Purpose
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{purposes: map[string]Purpose{}} }

// Register adds p. It fails with INVALID_INPUT on a malformed name, a
// threshold other than confirmed or finalized, or a missing Price, Settle
// or Settlement, and with CONFLICT when the name is already registered.
func (r *Registry) Register(p Purpose) error {
	const op = "intent.Registry.Register"
	switch {
	case !validPurposeName(p.Name):
		return fault.Invalid(op, "name", "a purpose name is lower-case snake case")
	case p.Threshold != chain.Confirmed && p.Threshold != chain.Finalized:
		return fault.Invalid(op, "threshold", "a purpose settles at confirmed or finalized")
	case p.Price == nil || p.Settle == nil:
		return fault.Invalid(op, "price", "a purpose needs Price and Settle")
	case p.Settlement == nil:
		return fault.Invalid(op, "settlement", "a purpose needs a Settlement reader for reconciliation")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.purposes[p.Name]; dup {
		return fault.E(op, fault.Conflict, "the purpose is already registered").With("purpose", p.Name)
	}
	r.purposes[p.Name] = p
	return nil
}

// Lookup returns the purpose named name. An unknown name fails with
// INVALID_INPUT naming the field "purpose".
func (r *Registry) Lookup(name string) (Purpose, error) {
	r.mu.RLock()
	p, ok := r.purposes[name]
	r.mu.RUnlock()
	if !ok {
		return Purpose{}, fault.Invalid("intent.Registry.Lookup", "purpose", "unknown purpose").With("allowed", r.Names())
	}
	return p, nil
}

// Names lists the registered purposes, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.purposes))
	for n := range r.purposes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
