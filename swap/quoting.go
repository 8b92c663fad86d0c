package swap

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// QuoteInput is a quote request (spec, "Swap records": inputMint,
// outputMint, amount as a human decimal string, slippageBps, wallet).
type QuoteInput struct {
	// InputMint and OutputMint are the trusted mints (base58).
	InputMint, OutputMint string
	// Amount is the gross input in whole units of the input token, a
	// decimal string; the server converts it with the registry's decimals.
	Amount string
	// SlippageBps is the accepted slippage; nil takes the policy default.
	SlippageBps *int
	// Wallet is the caller's verified wallet (base58).
	Wallet string
}

// QuoteResult is a built quote and what the review screen flags.
type QuoteResult struct {
	// Quote is sealed: its hash covers every frozen field.
	Quote Quote
	// PriceImpactWarning is set at or above the policy's warning
	// threshold.
	PriceImpactWarning bool
	// SettingsVersion is the swap.settings version that bounded it.
	SettingsVersion int
}

// PriorityFeeEstimateLamports is the priority fee a quote reserves for
// before the route's instructions exist: Jupiter's pinned 1,400,000
// compute units at 10,000 micro-lamports each (swap.md §5). The intent
// re-checks the reserve with the prepared transaction's own figures.
const PriorityFeeEstimateLamports = 14_000

// token2022AccountBytes is the size of a Token-2022 associated token
// account (ImmutableOwner), and with TransferFeeAmount for a fee mint;
// splAccountBytes an SPL Token account's (swap.md §5).
const (
	splAccountBytes         = 165
	token2022AccountBytes   = 170
	token2022FeeAccountByte = 182
)

// resolved is a registry entry read and matched on the cluster now.
type resolved struct {
	mint     chain.Address
	program  chain.Address
	fee      token2022.TransferFee
	decimals uint8
}

// Quote builds an executable quote for p, checking in the spec's order
// (each step its own code): the route's access policy has already run
// (session, permission); then the verified wallet (WALLET_REQUIRED), the
// active swap policy (SWAP_NOT_CONFIGURED, SWAP_PAUSED), trusted
// identities (TOKEN_NOT_TRUSTED; each mint re-read now), the network
// (NETWORK_MISMATCH), the slippage policy (SLIPPAGE_OUT_OF_POLICY), the
// human-to-atomic conversion (INVALID_AMOUNT), the balance snapshot read
// from the chain (BALANCE_UNAVAILABLE, never zero; INSUFFICIENT_BALANCE),
// the native-coin reserve (INSUFFICIENT_NATIVE_RESERVE), the 200 bps
// service fee from the gross input, the executable input, the provider's
// route (ROUTE_UNAVAILABLE, PROVIDER_UNAVAILABLE, SWAP_PAUSED while its
// breaker is open), the price-impact policy (PRICE_IMPACT_EXCEEDED), then
// the quote hash. It reads through st and the chain and writes nothing:
// SaveQuote writes the result.
func (s *Service) Quote(ctx context.Context, st Store, p *access.Principal, in QuoteInput) (QuoteResult, error) {
	const op = "swap.Quote"
	env := p.Environment
	e := s.cfg.Environments[env]
	owner := Owner{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: env}

	// Verified wallet.
	wallet, err := token2022.ParsePublicKey(in.Wallet)
	if err != nil || s.cfg.Wallets == nil {
		return QuoteResult{}, fault.E(op, fault.WalletRequired, "A verified wallet of the signed-in user is required.").With("field", "wallet")
	}
	ok, err := s.cfg.Wallets.Verified(ctx, p.TenantID, p.UserID, wallet)
	if err != nil {
		return QuoteResult{}, fault.Wrap(op, err)
	}
	if !ok {
		return QuoteResult{}, fault.E(op, fault.WalletRequired, "The wallet is not a verified wallet of the signed-in user.").With("field", "wallet")
	}

	// Active swap policy.
	ps, err := s.policies(ctx, st, env)
	if err != nil {
		return QuoteResult{}, fault.Wrap(op, err)
	}
	view := ps.view
	switch view.Status {
	case StatusNotConfigured:
		return QuoteResult{}, notConfigured(op, view.StatusReason)
	case StatusPaused:
		return QuoteResult{}, fault.E(op, fault.SwapPaused, "Swaps are paused in this environment.").With("reason", view.StatusReason)
	}
	settings := view.Settings

	// Trusted identities, read again from the cluster now.
	reg, run := ps.registry, ps.run
	if in.InputMint == in.OutputMint {
		return QuoteResult{}, fault.Invalid(op, "outputMint", "The output mint must differ from the input mint.")
	}
	epoch, err := e.Chain.GetEpochInfo(ctx, chain.Confirmed)
	if err != nil {
		return QuoteResult{}, providerUnavailable(op, "cluster_unreadable", err)
	}
	var tokens [2]resolved
	for i, f := range []struct{ field, mint string }{{"inputMint", in.InputMint}, {"outputMint", in.OutputMint}} {
		r, err := s.trusted(ctx, e.Chain, reg, run, f.field, f.mint, epoch.Epoch)
		if err != nil {
			return QuoteResult{}, err
		}
		tokens[i] = r
	}
	input, output := tokens[0], tokens[1]

	// Network: the cluster answering now is the one the registry was
	// verified on.
	genesis, err := e.Chain.GetGenesisHash(ctx)
	if err != nil {
		return QuoteResult{}, providerUnavailable(op, "cluster_unreadable", err)
	}
	network := chain.Network{GenesisHash: genesis}.CAIP2()
	if network != run.Network {
		return QuoteResult{}, fault.E(op, fault.NetworkMismatch, "The environment's cluster is not the network its registry was verified on.").
			With("network", network).With("registryNetwork", run.Network)
	}

	// Slippage policy.
	slippage := settings.Slippage.DefaultBps
	if in.SlippageBps != nil {
		slippage = *in.SlippageBps
	}
	if slippage < settings.Slippage.MinBps || slippage > settings.Slippage.MaxBps {
		return QuoteResult{}, fault.E(op, fault.SlippageOutOfPolicy, "The slippage is outside the policy's bounds.").
			With("field", "slippageBps").With("minBps", settings.Slippage.MinBps).With("maxBps", settings.Slippage.MaxBps)
	}

	// Human to atomic with the authoritative decimals.
	gross, err := ParseAmount(in.Amount, input.decimals)
	if err != nil {
		return QuoteResult{}, err
	}

	// Balance snapshot, from the chain.
	source := token2022.AssociatedTokenAddressFor(wallet, input.mint, input.program)
	bal, err := e.Chain.GetTokenAccountBalance(ctx, source, chain.Confirmed)
	switch {
	case errors.Is(err, chain.ErrAccountNotFound):
		bal = chain.TokenAmount{}
	case err != nil:
		return QuoteResult{}, fault.E(op, fault.BalanceUnavailable, "The wallet's balance cannot be read from the cluster now.").
			With("reason", "cluster_unreadable")
	}
	if money.Atomic(bal.Amount) < gross {
		return QuoteResult{}, fault.E(op, fault.InsufficientBalance, "The wallet's balance does not cover the amount.").
			With("balanceAtomic", strconv.FormatUint(bal.Amount, 10)).With("requiredAtomic", gross.String())
	}

	// Native-coin reserve: signature, estimated priority fee, and the
	// rent of the output account when the wallet has none yet.
	rent, err := checkReserve(ctx, e.Chain, wallet, output.program, output.mint, output.fee,
		ReserveInputs{Signatures: 1, PriorityFeeLamports: PriorityFeeEstimateLamports})
	if err != nil {
		return QuoteResult{}, err
	}

	// Service fee from the gross input; the executable input is the rest.
	fees := ps.fees
	split, err := SplitServiceFee(gross, uint16(fees.ServiceFeeBps))
	if err != nil {
		return QuoteResult{}, err
	}

	// The provider's route for the executable input.
	route, err := s.route(ctx, env, e.Routes, RouteRequest{InputMint: input.mint, OutputMint: output.mint, Amount: split.Executable,
		SlippageBps: uint16(slippage)})
	if err != nil {
		return QuoteResult{}, err
	}
	if route.InAtomic != split.Executable || route.OutAtomic == 0 {
		return QuoteResult{}, fault.E(op, fault.QuoteUnavailable, "The provider's route does not swap the executable input.").
			With("reason", "route_amounts")
	}

	// Price impact.
	impact, err := PriceImpactBps(route.PriceImpactPct)
	if err != nil {
		return QuoteResult{}, err
	}
	if int(impact) >= settings.PriceImpact.HardRejectBps {
		return QuoteResult{}, fault.E(op, fault.PriceImpactExceeded, "The route's price impact exceeds the policy.").
			With("priceImpactBps", impact).With("hardRejectBps", settings.PriceImpact.HardRejectBps)
	}
	minimum, err := MinimumOutput(route.OutAtomic, uint16(slippage))
	if err != nil {
		return QuoteResult{}, err
	}
	if !ThresholdAgrees(route.ThresholdAtomic, minimum) {
		return QuoteResult{}, fault.E(op, fault.QuoteUnavailable, "The provider's minimum output disagrees with the slippage.").
			With("reason", "threshold")
	}

	// The quote, frozen and hashed.
	now := s.cfg.Clock.Now()
	q := Quote{ID: QuotePrefix + s.cfg.NewIDFunc(), OperationID: OperationPrefix + s.cfg.NewIDFunc(), Owner: owner,
		Terms: Terms{Provider: e.Routes.Name(), Network: network, Wallet: wallet, RoutingMode: ExactIn,
			InputMint: input.mint, InputTokenProgram: input.program, InputDecimals: input.decimals, InputTransferFee: input.fee,
			OutputMint: output.mint, OutputTokenProgram: output.program, OutputDecimals: output.decimals, OutputTransferFee: output.fee,
			GrossInputAtomic: split.Gross, ServiceFeeAtomic: split.Fee, ExecutableInputAtomic: split.Executable,
			ExpectedOutputAtomic: route.OutAtomic, MinimumOutputAtomic: minimum, SlippageBps: uint16(slippage), PriceImpactBps: impact,
			Route: route.Steps,
			FeeBreakdown: FeeBreakdown{ServiceFeeBps: uint16(fees.ServiceFeeBps), ServiceFeeMint: input.mint,
				NetworkFeeLamports: SignatureFeeLamports, PriorityFeeLamports: PriorityFeeEstimateLamports}},
		FeePolicyVersion: strconv.Itoa(ps.feesVer), RegistryVersion: strconv.Itoa(ps.regVer),
		ProviderQuote: route.Raw, CreatedAt: now, ExpiresAt: now.Add(time.Duration(settings.QuoteTTLSeconds) * time.Second)}
	q.FeeBreakdown.RentLamports = rent
	if err := q.CheckEconomics(); err != nil {
		return QuoteResult{}, err
	}
	return QuoteResult{Quote: q.Seal(), PriceImpactWarning: int(impact) >= settings.PriceImpact.WarningBps,
		SettingsVersion: view.SettingsVersion}, nil
}

// newAccountBytes is the size of a new associated token account of a mint
// of program, with TransferFeeAmount when the mint has a transfer fee.
func newAccountBytes(program chain.Address, fee token2022.TransferFee) uint64 {
	switch {
	case program == SPLTokenProgramID():
		return splAccountBytes
	case fee.BasisPoints > 0 || fee.MaximumFee > 0:
		return token2022FeeAccountByte
	}
	return token2022AccountBytes
}

// checkReserve checks the wallet's lamports against reserve plus the rent
// of its associated account of outputMint when that does not exist yet,
// both read from the cluster now, and returns that rent:
// INSUFFICIENT_NATIVE_RESERVE, or BALANCE_UNAVAILABLE when the cluster
// cannot be read (never zero).
func checkReserve(ctx context.Context, c ChainClient, wallet, outputProgram, outputMint chain.Address, outputFee token2022.TransferFee,
	reserve ReserveInputs) (money.Atomic, error) {
	const op = "swap.checkReserve"
	unreadable := func(what string) error {
		return fault.E(op, fault.BalanceUnavailable, "The wallet's "+what+" cannot be read from the cluster now.").
			With("reason", "cluster_unreadable")
	}
	dest := token2022.AssociatedTokenAddressFor(wallet, outputMint, outputProgram)
	switch _, err := c.GetAccountInfo(ctx, dest, chain.Confirmed); {
	case errors.Is(err, chain.ErrAccountNotFound):
		reserve.MissingAccountBytes = append(reserve.MissingAccountBytes, newAccountBytes(outputProgram, outputFee))
	case err != nil:
		return 0, unreadable("accounts")
	}
	lamports, _, err := c.GetBalance(ctx, wallet, chain.Confirmed)
	if err != nil {
		return 0, unreadable("native balance")
	}
	if _, err := CheckNativeReserve(money.Atomic(lamports), reserve); err != nil {
		return 0, err
	}
	var rent money.Atomic
	for _, size := range reserve.MissingAccountBytes {
		r, err := RentExempt(size)
		if err != nil {
			return 0, err
		}
		rent += r
	}
	return rent, nil
}

// trusted resolves mint against the registry and its newest readable
// run, and reads the mint again: TOKEN_NOT_TRUSTED unless the entry
// exists, the run matched it and the mint still matches it now.
func (s *Service) trusted(ctx context.Context, c ChainClient, reg Registry, run RegistryRun, field, mint string, epoch uint64) (resolved, error) {
	const op = "swap.trusted"
	untrusted := func(reason string) error {
		return fault.E(op, fault.TokenNotTrusted, "The token is not an executable entry of the trusted registry.").
			With("field", field).With("reason", reason)
	}
	t, ok := reg.Find(mint)
	if !ok {
		return resolved{}, untrusted("not_listed")
	}
	if c, ok := run.Check(mint); !ok || c.Status != MintMatched {
		return resolved{}, untrusted("not_verified")
	}
	addr, err := token2022.ParsePublicKey(mint)
	if err != nil {
		return resolved{}, untrusted("not_listed")
	}
	acct, err := c.GetAccountInfo(ctx, addr, chain.Confirmed)
	missing := errors.Is(err, chain.ErrAccountNotFound)
	if err != nil && !missing {
		return resolved{}, providerUnavailable(op, "cluster_unreadable", err)
	}
	check := CheckMint(t, acct, missing, epoch)
	if check.Status != MintMatched {
		return resolved{}, untrusted(check.Reason)
	}
	r := resolved{mint: addr, program: acct.Owner, decimals: t.Decimals}
	if m, err := token2022.DecodeMint(acct.Data); err == nil {
		if fc, ok := m.TransferFeeConfig(); ok {
			r.fee = fc.EpochFee(epoch)
		}
	}
	return r, nil
}

// route asks the provider through env's breaker: SWAP_PAUSED while it is
// open; a failure to answer counts against it, an answer (a route or "no
// route") closes it.
func (s *Service) route(ctx context.Context, env access.Environment, p RouteProvider, r RouteRequest) (ProviderRoute, error) {
	const op = "swap.route"
	b := s.breakers[env]
	if !b.Allow(s.cfg.Clock.Now()) {
		return ProviderRoute{}, fault.E(op, fault.SwapPaused, "Swaps are paused: the route provider keeps failing.").
			With("reason", "route_provider_circuit_open")
	}
	out, err := p.Route(ctx, r)
	if fault.Is(err, fault.ProviderUnavailable) {
		b.Failure(s.cfg.Clock.Now())
		return ProviderRoute{}, err
	}
	b.Success()
	if err != nil {
		return ProviderRoute{}, err
	}
	return out, nil
}

// providerUnavailable is PROVIDER_UNAVAILABLE for a cluster that could
// not be read.
func providerUnavailable(op, reason string, err error) error {
	return fault.E(op, fault.ProviderUnavailable, "The environment's cluster cannot be read now.").With("reason", reason).
		With("cause", err.Error())
}

// SaveQuote writes a built quote and its operation (CREATED, VALIDATED,
// QUOTED) with the operation's event, in st's unit of work.
func (s *Service) SaveQuote(ctx context.Context, st Store, res QuoteResult) (Operation, error) {
	const op = "swap.SaveQuote"
	q := res.Quote
	o := Operation{ID: q.OperationID, Owner: q.Owner, State: StateCreated, QuoteID: q.ID, CreatedAt: st.Now(), UpdatedAt: st.Now()}
	var err error
	for _, e := range []Event{EventValidate, EventQuote} {
		if o, err = o.Move(e, st.Now()); err != nil {
			return Operation{}, fault.Wrap(op, err)
		}
	}
	o.Version = 1
	if err := st.SwapOperationInsert(ctx, o); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	if err := st.SwapQuoteInsert(ctx, q); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	if err := changed(ctx, st, o); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	return o, nil
}
