package swap

import (
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// Owner is who a swap operation belongs to: a signed-in user in a
// workspace of a tenant, in one environment. Every query is scoped by it.
type Owner struct {
	// TenantID, WorkspaceID and UserID name the user and where it acts.
	TenantID    string
	WorkspaceID string
	UserID      string
	// Environment is Test or Live; the two never see each other's records.
	Environment access.Environment
}

// Scope returns the owner's tenant, workspace and environment.
func (o Owner) Scope() access.Scope {
	return access.Scope{TenantID: o.TenantID, WorkspaceID: o.WorkspaceID, Environment: o.Environment}
}

// RoutingMode is how a quote's amount is fixed.
type RoutingMode string

// ExactIn fixes the input: the executable input is swapped, and the output
// floats above the minimum. It is the only mode the platform quotes.
const ExactIn RoutingMode = "ExactIn"

// RouteStep is one hop of a quote's route, as the provider planned it.
type RouteStep struct {
	// Venue is the provider's label of the venue ("Orca Whirlpool").
	Venue string
	// Pool is the venue's pool (Jupiter's ammKey).
	Pool chain.Address
	// InputMint and OutputMint are the hop's mints.
	InputMint  chain.Address
	OutputMint chain.Address
	// InAtomic and OutAtomic are the hop's amounts.
	InAtomic  money.Atomic
	OutAtomic money.Atomic
	// ShareBps is the share of the input routed through the hop, 10000
	// for all of it.
	ShareBps uint16
}

// VenueFee is a fee a venue or router takes inside the route.
type VenueFee struct {
	// Venue names who takes it.
	Venue string
	// Mint and Atomic are the fee's mint and amount.
	Mint   chain.Address
	Atomic money.Atomic
}

// FeeBreakdown is every cost the review screen shows beside the amounts.
type FeeBreakdown struct {
	// ServiceFeeBps is the service-fee rate of the fee policy;
	// ServiceFeeMint the mint it is taken in (the input mint).
	ServiceFeeBps  uint16
	ServiceFeeMint chain.Address
	// VenueFees are the route's own fees, already inside the expected
	// output.
	VenueFees []VenueFee
	// NetworkFeeLamports is the estimated signature fee,
	// PriorityFeeLamports the prepared priority fee, RentLamports the
	// rent of accounts the wallet funds. Together they are the lamport
	// estimate reconciliation holds the transaction to.
	NetworkFeeLamports  money.Atomic
	PriorityFeeLamports money.Atomic
	RentLamports        money.Atomic
}

// EstimatedLamports returns the network, priority and rent lamports the
// wallet is expected to spend beside the swap itself (saturating at
// 2^64 − 1, which no estimate reaches).
func (f FeeBreakdown) EstimatedLamports() money.Atomic {
	total := money.Atomic(0)
	for _, p := range []money.Atomic{f.NetworkFeeLamports, f.PriorityFeeLamports, f.RentLamports} {
		s, err := total.Add(p)
		if err != nil {
			return money.MaxAtomic
		}
		total = s
	}
	return total
}

// Quote is an immutable executable quote (spec, "Swap records": quote
// fields). Every field but Hash and ProviderQuote is frozen and covered by
// Hash; ProviderQuote is covered through ProviderQuoteHash. A change of
// token, amount, wallet, network, slippage, routing mode, fee policy or
// registry version needs a new quote.
type Quote struct {
	// ID is the quote's id (quoteId); OperationID the swap operation it
	// belongs to.
	ID          string
	OperationID string
	// Owner is who asked for it.
	Owner Owner
	// Terms are the trade's frozen economics, which an intent binds
	// unchanged.
	Terms
	// FeePolicyVersion and RegistryVersion are the versions of the fee
	// policy and the trusted-token registry it was priced under.
	FeePolicyVersion string
	RegistryVersion  string
	// ProviderQuoteHash is HashBytes of ProviderQuote, the provider's raw
	// quote kept byte for byte (it is passed back to the provider as it
	// came and never shown to clients).
	ProviderQuoteHash string
	ProviderQuote     []byte
	// CreatedAt and ExpiresAt bound its life (millisecond precision,
	// FreezeTime).
	CreatedAt time.Time
	ExpiresAt time.Time
	// Hash is the quote hash (quoteHash), QuoteHash of the fields above.
	Hash string
}

// Terms are a swap's frozen economics: who trades what for what, at
// which amounts, fees and route. A quote fixes them; the intent that binds
// the quote carries them unchanged, and both hashes cover them in the same
// order (encodeTerms).
type Terms struct {
	// Provider names the route provider ("jupiter").
	Provider string
	// Network is the cluster's CAIP-2 id.
	Network string
	// Wallet is the owner's verified wallet that pays and receives.
	Wallet chain.Address
	// RoutingMode is ExactIn.
	RoutingMode RoutingMode
	// InputMint, InputTokenProgram and InputDecimals identify the input
	// token as the registry verified it; InputTransferFee is its
	// Token-2022 transfer fee in force when quoted (zero when none).
	InputMint         chain.Address
	InputTokenProgram chain.Address
	InputDecimals     uint8
	InputTransferFee  token2022.TransferFee
	// OutputMint, OutputTokenProgram, OutputDecimals and
	// OutputTransferFee are the same for the output token.
	OutputMint         chain.Address
	OutputTokenProgram chain.Address
	OutputDecimals     uint8
	OutputTransferFee  token2022.TransferFee
	// GrossInputAtomic is what the wallet pays; ServiceFeeAtomic the
	// service fee taken from it; ExecutableInputAtomic the rest, which is
	// swapped (SplitServiceFee).
	GrossInputAtomic      money.Atomic
	ServiceFeeAtomic      money.Atomic
	ExecutableInputAtomic money.Atomic
	// ExpectedOutputAtomic is the provider's output for the executable
	// input; MinimumOutputAtomic the least accepted (MinimumOutput).
	ExpectedOutputAtomic money.Atomic
	MinimumOutputAtomic  money.Atomic
	// SlippageBps is the accepted slippage; PriceImpactBps the provider's
	// price impact (PriceImpactBps).
	SlippageBps    uint16
	PriceImpactBps uint16
	// Route is the provider's route; FeeBreakdown the costs beside it.
	Route        []RouteStep
	FeeBreakdown FeeBreakdown
}

// quoteSchema versions the quote hash's encoding; a new field or a new
// encoding is a new version.
const quoteSchema = "swap-quote/v1"

// QuoteHash returns the hex SHA-256 of every frozen field of q in a fixed
// order under a version tag (see canon): a change of any of them changes
// it, and storing and re-reading q (at millisecond time precision) never
// does. Hash and ProviderQuote themselves are not covered;
// ProviderQuoteHash is.
func QuoteHash(q Quote) string {
	var c canon
	c.str("schema", quoteSchema)
	c.str("quoteId", q.ID)
	c.str("operationId", q.OperationID)
	encodeOwner(&c, q.Owner)
	encodeTerms(&c, q.Terms)
	c.str("feePolicyVersion", q.FeePolicyVersion)
	c.str("registryVersion", q.RegistryVersion)
	c.str("providerQuoteHash", q.ProviderQuoteHash)
	c.time("createdAt", q.CreatedAt)
	c.time("expiresAt", q.ExpiresAt)
	return c.sum()
}

// encodeTerms appends a trade's terms, in the order both hashes have
// always had them.
func encodeTerms(c *canon, t Terms) {
	c.str("provider", t.Provider)
	c.str("network", t.Network)
	c.addr("wallet", t.Wallet)
	c.str("routingMode", string(t.RoutingMode))
	c.addr("inputMint", t.InputMint)
	c.addr("inputTokenProgram", t.InputTokenProgram)
	c.uint("inputDecimals", uint64(t.InputDecimals))
	c.transferFee("inputTransferFee", t.InputTransferFee)
	c.addr("outputMint", t.OutputMint)
	c.addr("outputTokenProgram", t.OutputTokenProgram)
	c.uint("outputDecimals", uint64(t.OutputDecimals))
	c.transferFee("outputTransferFee", t.OutputTransferFee)
	c.atomic("grossInputAtomic", t.GrossInputAtomic)
	c.atomic("serviceFeeAtomic", t.ServiceFeeAtomic)
	c.atomic("executableInputAtomic", t.ExecutableInputAtomic)
	c.atomic("expectedOutputAtomic", t.ExpectedOutputAtomic)
	c.atomic("minimumOutputAtomic", t.MinimumOutputAtomic)
	c.uint("slippageBps", uint64(t.SlippageBps))
	c.uint("priceImpactBps", uint64(t.PriceImpactBps))
	encodeRoute(c, t.Route)
	encodeFeeBreakdown(c, t.FeeBreakdown)
}

// encodeOwner appends the owner scope.
func encodeOwner(c *canon, o Owner) {
	c.str("tenantId", o.TenantID)
	c.str("workspaceId", o.WorkspaceID)
	c.str("userId", o.UserID)
	c.str("environment", string(o.Environment))
}

// encodeRoute appends the route's steps in order.
func encodeRoute(c *canon, r []RouteStep) {
	c.list("route", len(r), func(e *canon, i int) {
		s := r[i]
		e.str("venue", s.Venue)
		e.addr("pool", s.Pool)
		e.addr("inputMint", s.InputMint)
		e.addr("outputMint", s.OutputMint)
		e.atomic("inAtomic", s.InAtomic)
		e.atomic("outAtomic", s.OutAtomic)
		e.uint("shareBps", uint64(s.ShareBps))
	})
}

// encodeFeeBreakdown appends the fee breakdown.
func encodeFeeBreakdown(c *canon, f FeeBreakdown) {
	var e canon
	e.uint("serviceFeeBps", uint64(f.ServiceFeeBps))
	e.addr("serviceFeeMint", f.ServiceFeeMint)
	e.list("venueFees", len(f.VenueFees), func(v *canon, i int) {
		v.str("venue", f.VenueFees[i].Venue)
		v.addr("mint", f.VenueFees[i].Mint)
		v.atomic("atomic", f.VenueFees[i].Atomic)
	})
	e.atomic("networkFeeLamports", f.NetworkFeeLamports)
	e.atomic("priorityFeeLamports", f.PriorityFeeLamports)
	e.atomic("rentLamports", f.RentLamports)
	c.field("feeBreakdown", e.b)
}

// Seal returns q with its times frozen (FreezeTime), ProviderQuoteHash set
// from ProviderQuote, and Hash set: the quote as it is stored.
func (q Quote) Seal() Quote {
	q.CreatedAt = FreezeTime(q.CreatedAt)
	q.ExpiresAt = FreezeTime(q.ExpiresAt)
	q.ProviderQuoteHash = HashBytes(q.ProviderQuote)
	q.Hash = QuoteHash(q)
	return q
}

// CheckIntegrity fails with QUOTE_MISMATCH (details.reason "quoteHash" or
// "providerQuoteHash") when q's hash no longer matches its fields, or its
// raw provider quote no longer matches ProviderQuoteHash: a stored quote
// that changed is never executable.
func (q Quote) CheckIntegrity() error {
	const op = "swap.Quote.CheckIntegrity"
	if q.Hash == "" || QuoteHash(q) != q.Hash {
		return fault.E(op, fault.QuoteMismatch, "The quote does not match its hash.").With("reason", "quoteHash")
	}
	if HashBytes(q.ProviderQuote) != q.ProviderQuoteHash {
		return fault.E(op, fault.QuoteMismatch, "The provider quote does not match its hash.").
			With("reason", "providerQuoteHash")
	}
	return nil
}

// CheckEconomics fails with QUOTE_MISMATCH (details.reason naming the
// rule) when q's amounts are not the ones its own inputs give: the fee
// split of the gross at ServiceFeeBps, the minimum output at SlippageBps,
// the fee taken in the input mint, the minimum not above the expected
// output, distinct mints and the ExactIn mode. A builder calls it before
// sealing, and the intent binding again.
func (q Quote) CheckEconomics() error {
	const op = "swap.Quote.CheckEconomics"
	bad := func(reason string) error {
		return fault.E(op, fault.QuoteMismatch, "The quote's amounts are inconsistent.").With("reason", reason)
	}
	switch {
	case q.RoutingMode != ExactIn:
		return bad("routingMode")
	case q.InputMint == q.OutputMint:
		return bad("mints")
	case q.FeeBreakdown.ServiceFeeMint != q.InputMint:
		return bad("serviceFeeMint")
	}
	split, err := SplitServiceFee(q.GrossInputAtomic, q.FeeBreakdown.ServiceFeeBps)
	if err != nil || split.Fee != q.ServiceFeeAtomic || split.Executable != q.ExecutableInputAtomic {
		return bad("serviceFee")
	}
	minimum, err := MinimumOutput(q.ExpectedOutputAtomic, q.SlippageBps)
	if err != nil || minimum != q.MinimumOutputAtomic || q.ExpectedOutputAtomic == 0 {
		return bad("minimumOutput")
	}
	return nil
}
