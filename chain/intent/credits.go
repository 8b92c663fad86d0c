package intent

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// PurposeCreditPurchase is the purpose of buying a pack of platform
// credits with a token payment to the environment's treasury.
const PurposeCreditPurchase = "credit_purchase"

// CreditPacksPolicyID is the policy that lists the credit packs and their
// prices, per environment.
const CreditPacksPolicyID = "credits.packs"

// CreditPacks is the content of the "credits.packs" policy: the packs a
// user may buy and, for each, the price per allowed payment mint. A mint
// is allowed when some pack prices it.
type CreditPacks struct {
	// Packs are the offered packs.
	Packs []CreditPack `json:"packs"`
}

// CreditPack is one pack of credits.
type CreditPack struct {
	// Credits is the number of credits, a canonical positive integer
	// string.
	Credits string `json:"credits"`
	// Prices maps a payment mint (base58) to the atomic amount the
	// treasury must receive net of any transfer fee, a canonical positive
	// integer string.
	Prices map[string]string `json:"prices"`
}

// DefaultCreditPacks is the pack policy published when an environment has
// none: 100 credits for 1 token, 500 for 4.5 and 2000 for 16, priced in each
// given mint (mint -> decimals). A mint whose prices would not fit a u64
// (more than 18 decimals) is left out.
func DefaultCreditPacks(mints map[chain.Address]uint8) CreditPacks {
	// Prices in tenths of a token.
	packs := []struct {
		credits string
		tenths  uint64
	}{{"100", 10}, {"500", 45}, {"2000", 160}}
	out := CreditPacks{}
	for _, p := range packs {
		pack := CreditPack{Credits: p.credits, Prices: map[string]string{}}
		for mint, dec := range mints {
			if dec < 1 || dec > 18 {
				continue
			}
			unit := uint64(1)
			for range dec - 1 {
				unit *= 10
			}
			if p.tenths > math.MaxUint64/unit {
				continue
			}
			pack.Prices[mint.String()] = fmt.Sprint(p.tenths * unit)
		}
		out.Packs = append(out.Packs, pack)
	}
	return out
}

// Validate checks the document: at least one pack, pack sizes canonical
// positive integers without duplicates, each pack priced in at least one
// mint, mints valid addresses and prices canonical positive u64 integers.
// It fails with INVALID_INPUT whose details.field is the JSON path.
func (c CreditPacks) Validate() error {
	const op = "intent.CreditPacks.Validate"
	if len(c.Packs) == 0 {
		return fault.Invalid(op, "packs", "at least one credit pack is required")
	}
	seen := map[uint64]bool{}
	for i, p := range c.Packs {
		n, ok := parseCanonicalUint(p.Credits)
		if !ok || n == 0 {
			return fault.Invalid(op, fmt.Sprintf("packs[%d].credits", i), "credits is a positive integer string")
		}
		if seen[n] {
			return fault.Invalid(op, fmt.Sprintf("packs[%d].credits", i), "pack sizes are unique")
		}
		seen[n] = true
		if len(p.Prices) == 0 {
			return fault.Invalid(op, fmt.Sprintf("packs[%d].prices", i), "a pack is priced in at least one mint")
		}
		for mint, price := range p.Prices {
			field := fmt.Sprintf("packs[%d].prices.%s", i, mint)
			if _, err := token2022.ParsePublicKey(mint); err != nil {
				return fault.Invalid(op, field, "a price is keyed by a mint address")
			}
			if v, ok := parseCanonicalUint(price); !ok || v == 0 {
				return fault.Invalid(op, field, "a price is a positive atomic integer string")
			}
		}
	}
	return nil
}

// Mints lists the allowed payment mints (those some pack prices), sorted.
func (c CreditPacks) Mints() []string {
	var out []string
	for _, p := range c.Packs {
		for m := range p.Prices {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Price returns the net atomic price of the pack of credits in mint. It
// fails with INVALID_INPUT naming "credits" when no pack has that size and
// "mint" when the pack is not priced in mint.
func (c CreditPacks) Price(credits string, mint chain.Address) (uint64, error) {
	const op = "intent.CreditPacks.Price"
	n, ok := parseCanonicalUint(credits)
	if !ok || n == 0 {
		return 0, fault.Invalid(op, "credits", "credits is a positive integer string")
	}
	for _, p := range c.Packs {
		if v, _ := parseCanonicalUint(p.Credits); v != n {
			continue
		}
		price, ok := p.Prices[mint.String()]
		if !ok {
			return 0, fault.Invalid(op, "mint", "the mint is not an allowed payment mint for this pack").With("allowed", c.Mints())
		}
		v, ok := parseCanonicalUint(price)
		if !ok || v == 0 {
			return 0, fault.E(op, fault.Internal, "the credit pack policy holds a malformed price")
		}
		return v, nil
	}
	sizes := make([]string, 0, len(c.Packs))
	for _, p := range c.Packs {
		sizes = append(sizes, p.Credits)
	}
	return 0, fault.Invalid(op, "credits", "credits is not one of the offered packs").With("allowed", sizes)
}

// PacksFunc returns the current credit-pack policy of an environment and
// its reference; PolicyPacks reads it through the policy package.
type PacksFunc func(ctx context.Context, env access.Environment) (CreditPacks, PolicyRef, error)

// CreditPurchase returns the credit_purchase purpose: priced by the
// "credits.packs" policy of the actor's environment (the request's
// credits must be a pack size and its mint one the pack is priced in),
// settled at confirmed by settle (the ledger's grant of the credits, keyed
// by the intent's business reference) and read back for reconciliation
// by settlement (the grant movements carrying that reference; reconciliation
// expects exactly one, crediting Quantity credits).
func CreditPurchase(packs PacksFunc, settle SettleFunc, settlement SettlementFunc) Purpose {
	return Purpose{
		Name:       PurposeCreditPurchase,
		Threshold:  chain.Confirmed,
		Settle:     settle,
		Settlement: settlement,
		Price: func(ctx context.Context, in PriceInput) (Price, error) {
			const op = "intent.CreditPurchase.Price"
			if in.Request.ListingID != "" {
				return Price{}, fault.Invalid(op, "listingId", "listingId names what a marketplace_order buys; a credit purchase buys a pack")
			}
			if in.Request.Mint == "" {
				return Price{}, fault.Invalid(op, "mint", "mint is required")
			}
			mint, err := token2022.ParsePublicKey(in.Request.Mint)
			if err != nil {
				return Price{}, fault.Invalid(op, "mint", "mint is a base58 address")
			}
			if in.Request.Credits == "" {
				return Price{}, fault.Invalid(op, "credits", "credits is required")
			}
			doc, ref, err := packs(ctx, in.Actor.Environment)
			if err != nil {
				return Price{}, fault.Wrap(op, err)
			}
			if err := doc.Validate(); err != nil {
				return Price{}, &fault.Error{Op: op, Code: fault.Internal, Message: "the credit pack policy is invalid", Err: err}
			}
			net, err := doc.Price(in.Request.Credits, mint)
			if err != nil {
				return Price{}, err
			}
			if ref.ID == "" {
				ref.ID = CreditPacksPolicyID
			}
			return Price{Mint: mint, NetAtomic: net, Quantity: in.Request.Credits,
				Description: in.Request.Credits + " credits", Policy: ref}, nil
		},
	}
}
