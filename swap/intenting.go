package swap

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// IntentInput is an intent request (spec, "Swap records": quoteId,
// wallet).
type IntentInput struct {
	// QuoteID is the quote to bind.
	QuoteID string
	// Wallet is the wallet that will sign: the quote's.
	Wallet string
}

// Prepared is an intent's prepared transaction: the v0 message the
// wallet signs, unchanged, and nothing else.
type Prepared struct {
	// Message is the serialized v0 message; Unsigned the transaction wire
	// with an empty signature, for wallets that sign transactions.
	Message  []byte
	Unsigned []byte
	// LastValidBlockHeight is the last block height it can land at;
	// ExpiresAt the earlier of the intent's expiry and that height's
	// estimated time (400 ms per block).
	LastValidBlockHeight uint64
	ExpiresAt            time.Time
	// PriorityFeeLamports is the priority fee its compute budget costs;
	// RentLamports the rent of accounts it creates for the wallet.
	PriorityFeeLamports money.Atomic
	RentLamports        money.Atomic
}

// IntentResult is a bound intent with its prepared transaction.
type IntentResult struct {
	// Intent is sealed: its hash covers every bound field.
	Intent Intent
	// Prepared is the transaction to sign.
	Prepared Prepared
}

// slotDuration estimates a block's time, for a prepared transaction's
// expiry.
const slotDuration = 400 * time.Millisecond

// PrepareIntent binds the quote in.QuoteID for p and prepares its
// transaction, reading the quote through st and the cluster and route
// provider; it writes nothing (SaveIntent does). The spec's intent checks
// run through NewIntent: the quote exists for p (NOT_FOUND otherwise),
// is unexpired (QUOTE_EXPIRED) and intact (QUOTE_MISMATCH), the wallet is
// the quote's (WALLET_MISMATCH), the fee policy and registry are the
// quote's versions (QUOTE_MISMATCH), and the fee recipient's token account
// of the input mint exists on the cluster (SWAP_NOT_CONFIGURED). The
// prepared transaction is one v0 message the wallet pays for: the route's
// compute budget and setup instructions, the service fee's transfer to
// the fee recipient's account (TransferCheckedWithFee for a mint with a
// transfer fee, whose recipient receives the fee less that mint's fee),
// a memo with the intent id, then the route's swap and the rest, with the
// route's lookup tables. The wallet's lamports are checked again against
// the prepared transaction's own priority fee and rent
// (INSUFFICIENT_NATIVE_RESERVE).
func (s *Service) PrepareIntent(ctx context.Context, st Store, p *access.Principal, in IntentInput) (IntentResult, error) {
	const op = "swap.PrepareIntent"
	env := p.Environment
	e := s.cfg.Environments[env]
	owner := Owner{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: env}
	q, err := st.SwapQuote(ctx, owner, in.QuoteID)
	if err != nil {
		return IntentResult{}, fault.Wrap(op, err)
	}
	wallet, err := token2022.ParsePublicKey(in.Wallet)
	if err != nil {
		return IntentResult{}, fault.E(op, fault.WalletMismatch, "The wallet is not the quote's wallet.").With("field", "wallet")
	}
	now := s.cfg.Clock.Now()
	// The cheap checks first: nothing is read from the chain or the
	// provider for a quote that cannot be bound.
	if _, err := NewIntent(q, Binding{ID: "check", Owner: owner, Wallet: wallet, FeePolicyVersion: q.FeePolicyVersion,
		RegistryVersion: q.RegistryVersion, FeeRecipient: q.Wallet, FeeAccount: q.Wallet, FeeRecipientVerified: true,
		Message: []byte{1}, RecentBlockhash: "-", LastValidBlockHeight: 1}, now); err != nil {
		return IntentResult{}, err
	}
	if e.Chain == nil || e.Routes == nil {
		return IntentResult{}, notConfigured(op, "cluster_not_configured")
	}
	var fees FeePolicy
	fver, _, err := current(ctx, st, env, PolicyFees, &fees)
	if err != nil {
		return IntentResult{}, fault.Wrap(op, err)
	}
	var reg Registry
	rver, _, err := current(ctx, st, env, PolicyTokens, &reg)
	if err != nil {
		return IntentResult{}, fault.Wrap(op, err)
	}
	b := Binding{ID: IntentPrefix + s.cfg.NewIDFunc(), Owner: owner, SessionID: p.SessionID, Wallet: wallet,
		FeePolicyVersion: strconv.Itoa(fver.Version), RegistryVersion: strconv.Itoa(rver.Version)}
	if fees.FeeRecipient != "" {
		if b.FeeRecipient, err = token2022.ParsePublicKey(fees.FeeRecipient); err != nil {
			return IntentResult{}, fault.Wrap(op, err)
		}
		b.FeeAccount = token2022.AssociatedTokenAddressFor(b.FeeRecipient, q.InputMint, q.InputTokenProgram)
		b.FeeRecipientVerified, err = s.feeAccountReady(ctx, e.Chain, b.FeeAccount, b.FeeRecipient, q.InputMint)
		if err != nil {
			return IntentResult{}, err
		}
	}
	if b.FeePolicyVersion != q.FeePolicyVersion || b.RegistryVersion != q.RegistryVersion || !b.FeeRecipientVerified {
		// NewIntent names the failing check.
		b.Message, b.RecentBlockhash, b.LastValidBlockHeight = []byte{1}, "-", 1
		_, err := NewIntent(q, b, now)
		return IntentResult{}, err
	}

	// The route's instructions, through the provider's breaker.
	ri, err := s.instructions(ctx, env, e.Routes, q, wallet)
	if err != nil {
		return IntentResult{}, err
	}
	source := token2022.AssociatedTokenAddressFor(wallet, q.InputMint, q.InputTokenProgram)
	var feeIx message.Instruction
	if q.InputTransferFee.BasisPoints > 0 || q.InputTransferFee.MaximumFee > 0 {
		feeIx = message.TransferCheckedWithFee(source, q.InputMint, b.FeeAccount, wallet, uint64(q.ServiceFeeAtomic), q.InputDecimals,
			q.InputTransferFee.Fee(uint64(q.ServiceFeeAtomic)))
	} else {
		feeIx = message.TransferChecked(q.InputTokenProgram, source, q.InputMint, b.FeeAccount, wallet, uint64(q.ServiceFeeAtomic), q.InputDecimals)
	}
	ixs := append([]message.Instruction{}, ri.Instructions[:ri.SwapIndex]...)
	ixs = append(ixs, feeIx, message.Memo("swap:"+b.ID, wallet))
	ixs = append(ixs, ri.Instructions[ri.SwapIndex:]...)
	tables, err := s.lookupTables(ctx, e.Chain, ri.LookupTables)
	if err != nil {
		return IntentResult{}, err
	}
	bh, err := e.Chain.GetLatestBlockhash(ctx, chain.Confirmed)
	if err != nil {
		return IntentResult{}, providerUnavailable(op, "cluster_unreadable", err)
	}
	msg, err := message.CompileV0(wallet, bh.Hash, ixs, tables)
	if err != nil {
		return IntentResult{}, fault.E(op, fault.QuoteUnavailable, "The route's transaction cannot be prepared.").
			With("reason", "message").With("cause", err.Error())
	}
	height, err := e.Chain.GetBlockHeight(ctx, chain.Confirmed)
	if err != nil {
		return IntentResult{}, providerUnavailable(op, "cluster_unreadable", err)
	}

	// The native reserve, against the prepared transaction's own costs.
	reserve := ReserveInputs{Signatures: 1, PriorityFeeLamports: money.Atomic(ri.PriorityFeeLamports)}
	if reserve.PriorityFeeLamports == 0 && ri.ComputeUnitLimit > 0 {
		if reserve.PriorityFeeLamports, err = PriorityFee(ri.ComputeUnitPriceMicroLamports, uint64(ri.ComputeUnitLimit)); err != nil {
			return IntentResult{}, err
		}
	}
	rent, err := checkReserve(ctx, e.Chain, wallet, q.OutputTokenProgram, q.OutputMint, q.OutputTransferFee, reserve)
	if err != nil {
		return IntentResult{}, err
	}

	b.Message, b.RecentBlockhash, b.LastValidBlockHeight = msg, bh.Hash, bh.LastValidBlockHeight
	it, err := NewIntent(q, b, now)
	if err != nil {
		return IntentResult{}, err
	}
	expires := it.ExpiresAt
	if bh.LastValidBlockHeight > height {
		if t := now.Add(time.Duration(bh.LastValidBlockHeight-height) * slotDuration); t.Before(expires) {
			expires = FreezeTime(t)
		}
	} else {
		expires = FreezeTime(now)
	}
	return IntentResult{Intent: it, Prepared: Prepared{Message: msg, Unsigned: message.Unsigned(msg),
		LastValidBlockHeight: bh.LastValidBlockHeight, ExpiresAt: expires, PriorityFeeLamports: reserve.PriorityFeeLamports,
		RentLamports: rent}}, nil
}

// feeAccountReady reports whether account is an initialized token account
// of mint owned by recipient on the cluster: the only account the service
// fee may go to.
func (s *Service) feeAccountReady(ctx context.Context, c ChainClient, account, recipient, mint chain.Address) (bool, error) {
	acct, err := c.GetAccountInfo(ctx, account, chain.Confirmed)
	if errors.Is(err, chain.ErrAccountNotFound) {
		return false, nil
	}
	if err != nil {
		return false, providerUnavailable("swap.feeAccountReady", "cluster_unreadable", err)
	}
	ta, err := token2022.DecodeAccount(acct.Data)
	if err != nil {
		return false, nil
	}
	return ta.Mint == mint && ta.Owner == recipient && ta.State == token2022.StateInitialized, nil
}

// instructions asks the provider for q's instructions through env's
// breaker.
func (s *Service) instructions(ctx context.Context, env access.Environment, p RouteProvider, q Quote, wallet chain.Address) (RouteInstructions, error) {
	const op = "swap.instructions"
	b := s.breakers[env]
	if !b.Allow(s.cfg.Clock.Now()) {
		return RouteInstructions{}, fault.E(op, fault.SwapPaused, "Swaps are paused: the route provider keeps failing.").
			With("reason", "route_provider_circuit_open")
	}
	ri, err := p.Instructions(ctx, ProviderRoute{Raw: q.ProviderQuote, Hash: q.ProviderQuoteHash, InAtomic: q.ExecutableInputAtomic,
		OutAtomic: q.ExpectedOutputAtomic, Steps: q.Route}, wallet)
	if fault.Is(err, fault.ProviderUnavailable) {
		b.Failure(s.cfg.Clock.Now())
		return RouteInstructions{}, err
	}
	b.Success()
	if err != nil {
		return RouteInstructions{}, err
	}
	if ri.SwapIndex < 0 || ri.SwapIndex >= len(ri.Instructions) {
		return RouteInstructions{}, fault.E(op, fault.QuoteUnavailable, "The provider's instructions have no swap.").With("reason", "instructions")
	}
	return ri, nil
}

// lookupTableProgram is the Address Lookup Table program, the owner of
// every table a prepared message may use.
const lookupTableProgram = "AddressLookupTab1e1111111111111111111111111"

// maxLookupTables bounds the tables a route may ask the prepared message
// to use: each is read from the cluster while the request waits.
const maxLookupTables = 8

// lookupTables reads each table's addresses from the cluster.
func (s *Service) lookupTables(ctx context.Context, c ChainClient, addrs []chain.Address) ([]message.LookupTable, error) {
	const op = "swap.lookupTables"
	if len(addrs) > maxLookupTables {
		return nil, fault.E(op, fault.QuoteUnavailable, "The route needs more lookup tables than a prepared transaction may use.").
			With("reason", "lookup_tables").With("max", maxLookupTables)
	}
	var out []message.LookupTable
	for _, a := range addrs {
		acct, err := c.GetAccountInfo(ctx, a, chain.Confirmed)
		if err != nil {
			return nil, providerUnavailable(op, "cluster_unreadable", err)
		}
		t, err := message.DecodeLookupTable(a, acct.Data)
		if err != nil || acct.Owner.String() != lookupTableProgram {
			return nil, fault.E(op, fault.QuoteUnavailable, "A lookup table of the route cannot be read.").With("reason", "lookup_table").
				With("table", a.String())
		}
		out = append(out, t)
	}
	return out, nil
}

// ExistingIntent returns the intent already bound to quoteID for p, and
// found false when the quote has none yet: one quote binds one intent, so
// a repeated intent request answers the first.
func (s *Service) ExistingIntent(ctx context.Context, st Store, p *access.Principal, quoteID string) (IntentResult, Operation, bool, error) {
	const op = "swap.ExistingIntent"
	owner := Owner{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: p.Environment}
	q, err := st.SwapQuote(ctx, owner, quoteID)
	if err != nil {
		return IntentResult{}, Operation{}, false, fault.Wrap(op, err)
	}
	o, err := st.SwapOperation(ctx, owner, q.OperationID)
	if err != nil {
		return IntentResult{}, Operation{}, false, fault.Wrap(op, err)
	}
	if o.IntentID == "" {
		return IntentResult{}, o, false, nil
	}
	it, prepared, err := st.SwapIntent(ctx, owner, o.IntentID)
	if err != nil {
		return IntentResult{}, Operation{}, false, fault.Wrap(op, err)
	}
	return IntentResult{Intent: it, Prepared: prepared}, o, true, nil
}

// SaveIntent writes a bound intent and moves its operation from QUOTED
// through INTENT_CREATED to AWAITING_SIGNATURE (the prepared transaction
// is handed to the wallet in the same answer), with the operation's
// event, in st's unit of work. CONFLICT when the quote was bound
// meanwhile.
func (s *Service) SaveIntent(ctx context.Context, st Store, res IntentResult) (Operation, error) {
	const op = "swap.SaveIntent"
	it := res.Intent
	o, err := st.SwapOperation(ctx, it.Owner, it.OperationID)
	if err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	if o.IntentID != "" {
		return Operation{}, fault.E(op, fault.Conflict, "The quote is already bound to an intent.").With("intentId", o.IntentID)
	}
	prev := o.Version
	for _, e := range []Event{EventCreateIntent, EventRequestSignature} {
		if o, err = o.Move(e, st.Now()); err != nil {
			return Operation{}, fault.Wrap(op, err)
		}
	}
	o.Version, o.IntentID = prev+1, it.ID
	if err := st.SwapIntentInsert(ctx, it, res.Prepared); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	if err := st.SwapOperationUpdate(ctx, o, prev); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	if err := changed(ctx, st, o); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	return o, nil
}

// Status returns the intent id of p and its operation: NOT_FOUND for any
// other user, workspace or environment.
func (s *Service) Status(ctx context.Context, st Store, p *access.Principal, id string) (Intent, Operation, error) {
	const op = "swap.Status"
	owner := Owner{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: p.Environment}
	it, _, err := st.SwapIntent(ctx, owner, id)
	if err != nil {
		return Intent{}, Operation{}, fault.Wrap(op, err)
	}
	o, err := st.SwapOperation(ctx, owner, it.OperationID)
	if err != nil {
		return Intent{}, Operation{}, fault.Wrap(op, err)
	}
	return it, o, nil
}
