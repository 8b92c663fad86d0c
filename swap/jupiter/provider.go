package jupiter

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/swap"
)

// Client is the swap domain's route provider (swap.RouteProvider): Route
// quotes ExactIn through GET /quote, and Instructions posts that quote
// back byte for byte to POST /swap-instructions.
var _ swap.RouteProvider = (*Client)(nil)

// ProviderName is the route provider's id in quotes and settings.
const ProviderName = "jupiter"

// Name implements swap.RouteProvider.
func (c *Client) Name() string { return ProviderName }

// Route implements swap.RouteProvider: a direct-or-routed ExactIn quote
// of r.Amount at r.SlippageBps.
func (c *Client) Route(ctx context.Context, r swap.RouteRequest) (swap.ProviderRoute, error) {
	const op = "jupiter.Route"
	q, err := c.Quote(ctx, QuoteRequest{InputMint: r.InputMint.String(), OutputMint: r.OutputMint.String(),
		Amount: uint64(r.Amount), SlippageBps: r.SlippageBps})
	if err != nil {
		return swap.ProviderRoute{}, err
	}
	out := swap.ProviderRoute{Raw: []byte(q.Raw), Hash: q.Hash, InAtomic: money.Atomic(q.InAmount), OutAtomic: money.Atomic(q.OutAmount),
		ThresholdAtomic: money.Atomic(q.OtherAmountThreshold), PriceImpactPct: q.PriceImpactPct, ContextSlot: q.ContextSlot}
	for i, s := range q.RoutePlan {
		step := swap.RouteStep{Venue: s.Label, InAtomic: money.Atomic(s.InAmount), OutAtomic: money.Atomic(s.OutAmount), ShareBps: s.Bps}
		for _, f := range []struct {
			text string
			dst  *chain.Address
		}{{s.AmmKey, &step.Pool}, {s.InputMint, &step.InputMint}, {s.OutputMint, &step.OutputMint}} {
			k, err := token2022.ParsePublicKey(f.text)
			if err != nil {
				return swap.ProviderRoute{}, malformed(op, fmt.Sprintf("routePlan[%d]", i), err)
			}
			*f.dst = k
		}
		out.Steps = append(out.Steps, step)
	}
	return out, nil
}

// Instructions implements swap.RouteProvider: the quote's instructions
// for wallet, which keeps its own token accounts (no SOL wrapping, no
// shared accounts, no Jupiter platform fee: the platform takes its
// service fee in its own transfer).
func (c *Client) Instructions(ctx context.Context, route swap.ProviderRoute, wallet chain.Address) (swap.RouteInstructions, error) {
	const op = "jupiter.Instructions"
	in, err := c.SwapInstructions(ctx, json.RawMessage(route.Raw), SwapRequest{UserPublicKey: wallet.String()})
	if err != nil {
		return swap.RouteInstructions{}, err
	}
	out := swap.RouteInstructions{LookupTables: in.AddressLookupTables, ComputeUnitLimit: in.ComputeUnitLimit,
		ComputeUnitPriceMicroLamports: in.ComputeUnitPriceMicroLamports, PriorityFeeLamports: in.PrioritizationFeeLamports}
	add := func(ix Instruction) {
		m := message.Instruction{ProgramID: ix.ProgramID, Data: ix.Data}
		for _, a := range ix.Accounts {
			m.Accounts = append(m.Accounts, message.AccountMeta{Key: a.Pubkey, Signer: a.IsSigner, Writable: a.IsWritable})
		}
		out.Instructions = append(out.Instructions, m)
	}
	for _, ix := range in.ComputeBudget {
		add(ix)
	}
	for _, ix := range in.Setup {
		add(ix)
	}
	if in.TokenLedger != nil {
		add(*in.TokenLedger)
	}
	out.SwapIndex = len(out.Instructions)
	add(in.Swap)
	if in.Cleanup != nil {
		add(*in.Cleanup)
	}
	for _, ix := range in.Other {
		add(ix)
	}
	for _, ix := range out.Instructions {
		for _, a := range ix.Accounts {
			if a.Signer && a.Key != wallet {
				return swap.RouteInstructions{}, fault.E(op, fault.ProviderUnavailable,
					"The route provider's instructions need a signer other than the wallet.").With("reason", "foreign_signer")
			}
		}
	}
	return out, nil
}
