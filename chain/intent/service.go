package intent

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// Defaults of Config.
const (
	// DefaultTTL is an intent's lifetime when Config.TTL is zero.
	DefaultTTL = 15 * time.Minute
	// DefaultDropGrace is how long after submission a signature the
	// wallet broadcast itself may stay unknown once the prepared
	// blockhash has lapsed, before the intent counts as dropped.
	DefaultDropGrace = 2 * time.Minute
	// DefaultLabel is the Solana Pay label when Config.Label is empty.
	DefaultLabel = "Creator Music"
	// slotTime is a slot's nominal duration (chain.md §10), used to
	// estimate when a blockhash lapses.
	slotTime = 400 * time.Millisecond
)

// Environment is one environment's cluster and treasury, and the credit
// packs SeedCreditPacks publishes there.
type Environment struct {
	// Client reads and sends to the environment's cluster. Required.
	Client ChainClient
	// Treasury is the wallet every payment of the environment goes to;
	// payments land in its Token-2022 associated token account for the
	// mint. Required.
	Treasury chain.Address
	// CreditPacks, when set, is the environment's credits.packs policy:
	// published as a new version whenever it differs from the current one.
	CreditPacks *CreditPacks
	// PackMint prices DefaultCreditPacks (as a 9-decimal mint) when
	// CreditPacks is nil; that policy is published only while the
	// environment has none. Zero, with CreditPacks nil, publishes nothing.
	PackMint chain.Address
}

// Config configures a Service. Zero values take the documented defaults.
type Config struct {
	// Registry is the closed set of purposes. Required.
	Registry *Registry
	// Environments maps test and live to their cluster and treasury; an
	// environment without an entry refuses intents (SERVICE_UNAVAILABLE).
	Environments map[access.Environment]Environment
	// Wallets answers wallet verification. Required.
	Wallets Wallets
	// Clock tells the time. Required.
	Clock Clock
	// Run runs a unit of work; ReadFunc returns the read pool. Required.
	Run      RunFunc
	ReadFunc func() Store
	// ReferenceKey is the server secret references are derived with
	// (HMAC-SHA256), at least 32 bytes. Required.
	ReferenceKey []byte
	// TTL is an intent's lifetime; zero means DefaultTTL.
	TTL time.Duration
	// DropGrace: see DefaultDropGrace; zero means that.
	DropGrace time.Duration
	// Label is the Solana Pay label; empty means DefaultLabel.
	Label string
	// NewIDFunc returns a fresh intent or payment-request id suffix; nil
	// means 16 random bytes in hex. The service adds "txi_" or "cpr_".
	NewIDFunc func() string
	// SweepEvery is the period of the sweep job (JobSweep), which
	// reconciles every open intent; zero means DefaultSweepEvery.
	SweepEvery time.Duration
	// WakeFunc, when set, runs after every unit of work that wrote an
	// intent has committed: it wakes the job workers for the jobs the
	// unit enqueued.
	WakeFunc func()
	// Logger receives the sweep's failures; nil discards them.
	Logger *slog.Logger
}

// Service creates, submits, relays and reconciles transaction intents and
// their chain payment requests. It is safe for concurrent use.
type Service struct {
	cfg Config
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Registry == nil, cfg.Wallets == nil, cfg.Clock == nil, cfg.Run == nil, cfg.ReadFunc == nil:
		return nil, errors.New("intent: Registry, Wallets, Clock, Run and Read are required")
	case len(cfg.ReferenceKey) < 32:
		return nil, errors.New("intent: ReferenceKey must hold at least 32 bytes")
	}
	for env, e := range cfg.Environments {
		if !env.Valid() || e.Client == nil || e.Treasury.IsZero() {
			return nil, errors.New("intent: each environment needs a valid name, a Client and a Treasury")
		}
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.DropGrace <= 0 {
		cfg.DropGrace = DefaultDropGrace
	}
	if cfg.Label == "" {
		cfg.Label = DefaultLabel
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = DefaultSweepEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewIDFunc == nil {
		cfg.NewIDFunc = func() string {
			var b [16]byte
			_, _ = rand.Read(b[:])
			return hex.EncodeToString(b[:])
		}
	}
	return &Service{cfg: cfg}, nil
}

// actorOf checks that p may hold intents (a signed-in user: session or
// access token) and returns its actor. Errors: UNAUTHENTICATED without a
// user; ACCESS_DENIED for an API key.
func actorOf(op string, p *access.Principal) (Actor, error) {
	if p == nil || p.UserID == "" {
		return Actor{}, fault.E(op, fault.Unauthenticated, "a signed-in user is required")
	}
	if p.Kind != access.CredentialSession && p.Kind != access.CredentialAccessToken {
		return Actor{}, fault.E(op, fault.AccessDenied, "transaction intents need a signed-in user, not an API key")
	}
	return Actor{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: p.Environment}, nil
}

// owned returns NOT_FOUND unless it belongs to actor.
func owned(op string, it Intent, a Actor) error {
	if it.Actor != a {
		return fault.E(op, fault.NotFound, "the transaction intent was not found")
	}
	return nil
}

// Configured reports whether environment e takes intents (a cluster and
// a treasury are configured for it).
func (s *Service) Configured(e access.Environment) bool {
	_, ok := s.cfg.Environments[e]
	return ok
}

// env returns the environment's configuration. SERVICE_UNAVAILABLE when
// none is configured.
func (s *Service) env(op string, e access.Environment) (Environment, error) {
	c, ok := s.cfg.Environments[e]
	if !ok {
		return Environment{}, fault.E(op, fault.ServiceUnavailable, "no cluster is configured for this environment").With("environment", string(e))
	}
	return c, nil
}

// chainErr turns a chain read failure into PROVIDER_UNAVAILABLE (the
// cluster is the provider), keeping the cause.
func chainErr(op, what string, err error) error {
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "the cluster could not be read", Details: map[string]any{"read": what}, Err: err}
}

// network reads the cluster's CAIP-2 id.
func network(ctx context.Context, op string, c ChainClient) (string, error) {
	gh, err := c.GetGenesisHash(ctx)
	if err != nil {
		return "", chainErr(op, "genesisHash", err)
	}
	return chain.Network{GenesisHash: gh}.CAIP2(), nil
}

// Create freezes a new intent for p from req and prepares its unsigned
// transaction. All reads (purpose policy, wallet verification, the
// cluster's genesis hash, epoch, mint and blockhash) happen first; one
// unit of work then inserts the intent.
//
// Errors: UNAUTHENTICATED; ACCESS_DENIED for an API key; INVALID_INPUT
// naming "recipient" or "amount" when the caller sent either, "purpose"
// for an unknown purpose, "wallet", "mint" or "credits" for malformed or
// unoffered values (also a mint that is not an initialized, transferable
// Token-2022 mint), and "wallet" when the payer is one of the legs'
// recipients; WALLET_REQUIRED when the wallet is not a verified wallet of
// the user, or (details field "legs[i].recipient", role and reason) when
// a leg's recipient has no usable token account for the mint
// (checkDestinations); INVALID_AMOUNT when no payment covers the price
// after the transfer fee; INTERNAL when the purpose priced malformed legs
// (checkPriceLegs); SERVICE_UNAVAILABLE without a configured cluster;
// PROVIDER_UNAVAILABLE when the cluster cannot be read.
func (s *Service) Create(ctx context.Context, p *access.Principal, req Request) (Intent, error) {
	d, err := s.Prepare(ctx, p, req)
	if err != nil {
		return Intent{}, err
	}
	if err := s.run(ctx, func(st Store) error { return s.Record(ctx, st, d) }); err != nil {
		return Intent{}, fault.Wrap("intent.Create", err)
	}
	return d.Intent, nil
}

// Prepare is Create's first half: it checks the request, reads the
// cluster (outside any unit of work) and returns the frozen intent with
// its prepared transaction and its purpose's terms, unsaved. Record saves
// it; a caller that owns the transaction (an HTTP route committing its
// idempotency record with the intent) calls the two itself. Errors as
// Create's.
func (s *Service) Prepare(ctx context.Context, p *access.Principal, req Request) (Draft, error) {
	it, terms, err := s.prepare(ctx, p, req, chain.Address{})
	if err != nil {
		return Draft{}, err
	}
	return Draft{Intent: it, Terms: terms}, nil
}

// PreparePayout is Prepare for a purpose the treasury pays
// (Purpose.TreasuryPays): payer, a wallet the calling domain signs for
// (a reward treasury), pays the legs the purpose prices, and req.Wallet
// must be a verified wallet of p's user (the recipient). Nothing is sent
// or signed: the calling domain signs the prepared message and records
// it with RecordSigned. Errors as Create's, and INVALID_INPUT naming
// "purpose" for a purpose the treasury does not pay.
func (s *Service) PreparePayout(ctx context.Context, p *access.Principal, req Request, payer chain.Address) (Draft, error) {
	if payer.IsZero() {
		return Draft{}, fault.Invalid("intent.PreparePayout", "payer", "a payout names its payer")
	}
	it, terms, err := s.prepare(ctx, p, req, payer)
	if err != nil {
		return Draft{}, err
	}
	return Draft{Intent: it, Terms: terms}, nil
}

// RecordSigned saves a payout PreparePayout returned, already signed by
// its payer, in st's unit of work: the intent is recorded SUBMITTED
// (network state submitted) with its signature bound and the signed
// bytes, which the relay job sends, and its purpose's Open hook runs
// there. The signed transaction must carry exactly the prepared message
// with the payer's one valid signature (SIGNATURE_REJECTED otherwise).
func (s *Service) RecordSigned(ctx context.Context, st Store, d Draft, signed []byte) (Intent, error) {
	const op = "intent.RecordSigned"
	p, err := s.cfg.Registry.Lookup(d.Purpose)
	if err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	if !p.TreasuryPays {
		return Intent{}, fault.Invalid(op, "purpose", "only a payout is recorded signed")
	}
	tx, err := message.ParseSigned(signed)
	if err != nil || len(tx.Signatures) != 1 {
		return Intent{}, fault.E(op, fault.SignatureRejected, "the payout is not a well-formed signed transaction")
	}
	sig := token2022.EncodeBase58(tx.Signatures[0])
	if err := checkSigned(op, d.Intent, tx, tx.Signatures[0]); err != nil {
		return Intent{}, err
	}
	it := d.Intent
	now := s.cfg.Clock.Now().UTC()
	if it.State, err = Transit(it.State, EventSubmit); err != nil {
		return Intent{}, err
	}
	if it.NetworkState, err = TransitNetwork(it.NetworkState, NetworkEventSign); err != nil {
		return Intent{}, err
	}
	it.Signature, it.SignedTransaction, it.Origin, it.SubmittedAt, it.UpdatedAt = sig, signed, OriginSigned, now, now
	if err := CheckSignatureFree(ctx, st, sig, it.ID); err != nil {
		return Intent{}, err
	}
	if err := st.InsertIntent(ctx, it); err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	if err := st.BindSignature(ctx, sig, it.ID); err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	if p.Open != nil {
		if err := p.Open(ctx, st, it, d.Terms); err != nil {
			return Intent{}, fault.Wrap(op, err)
		}
	}
	if err := s.changed(ctx, st, it); err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	return it, nil
}

// prepare freezes the intent and returns it with its purpose's terms.
// A zero payer prepares a payment by the user's wallet; any other, a
// payout by payer (Purpose.TreasuryPays).
func (s *Service) prepare(ctx context.Context, p *access.Principal, req Request, treasuryPayer chain.Address) (Intent, any, error) {
	const op = "intent.Create"
	actor, err := actorOf(op, p)
	if err != nil {
		return Intent{}, nil, err
	}
	if len(req.Recipient) > 0 {
		return Intent{}, nil, fault.Invalid(op, "recipient", "the recipient is set by the server, never by the caller")
	}
	if len(req.Amount) > 0 {
		return Intent{}, nil, fault.Invalid(op, "amount", "the amount is derived from the purpose, never sent by the caller")
	}
	purpose, err := s.cfg.Registry.Lookup(req.Purpose)
	if err != nil {
		return Intent{}, nil, fault.Wrap(op, err)
	}
	if purpose.TreasuryPays != !treasuryPayer.IsZero() {
		return Intent{}, nil, fault.Invalid(op, "purpose", "this purpose is not created through this request").With("purpose", purpose.Name)
	}
	if req.Wallet == "" {
		return Intent{}, nil, fault.E(op, fault.WalletRequired, "a verified wallet is required").With("field", "wallet")
	}
	payer, err := token2022.ParsePublicKey(req.Wallet)
	if err != nil {
		return Intent{}, nil, fault.Invalid(op, "wallet", "wallet is a base58 address")
	}
	ok, err := s.cfg.Wallets.Verified(ctx, actor.TenantID, actor.UserID, payer)
	if err != nil {
		return Intent{}, nil, fault.Wrap(op, err)
	}
	if !ok {
		return Intent{}, nil, fault.E(op, fault.WalletRequired, "the wallet is not a verified wallet of this user").With("field", "wallet")
	}
	envc, err := s.env(op, actor.Environment)
	if err != nil {
		return Intent{}, nil, err
	}
	price, err := purpose.Price(ctx, PriceInput{Actor: actor, Request: req, Treasury: envc.Treasury})
	if err != nil {
		return Intent{}, nil, fault.Wrap(op, err)
	}
	if purpose.TreasuryPays {
		// The user's verified wallet is the recipient; the treasury pays.
		if len(price.Legs) == 0 {
			return Intent{}, nil, fault.E(op, fault.Internal, "a payout prices its legs")
		}
		payer = treasuryPayer
	}
	if err := checkPriceLegs(op, price, payer); err != nil {
		return Intent{}, nil, err
	}

	// Chain reads, outside any unit of work.
	c := envc.Client
	netID, err := network(ctx, op, c)
	if err != nil {
		return Intent{}, nil, err
	}
	mint, err := readMint(ctx, op, c, price.Mint)
	if err != nil {
		return Intent{}, nil, err
	}
	epoch, err := c.GetEpochInfo(ctx, chain.Confirmed)
	if err != nil {
		return Intent{}, nil, chainErr(op, "epochInfo", err)
	}

	var schedule token2022.TransferFee
	feeCfg, hasFee := mint.TransferFeeConfig()
	if hasFee {
		schedule = feeCfg.EpochFee(epoch.Epoch)
	}
	recipient, net := envc.Treasury, price.NetAtomic
	var legs []Leg
	var gross, fee uint64
	if len(price.Legs) == 0 {
		if gross, fee, err = GrossUp(net, schedule); err != nil {
			return Intent{}, nil, fault.Wrap(op, err)
		}
	} else {
		if legs, gross, fee, net, err = freezeLegs(op, price.Legs, price.Mint, schedule); err != nil {
			return Intent{}, nil, err
		}
		if err := checkDestinations(ctx, op, c, price.Mint, legs); err != nil {
			return Intent{}, nil, err
		}
		recipient = legs[0].Recipient
	}
	// The blockhash last, so that the prepared transaction lives as long
	// as it can.
	bh, err := c.GetLatestBlockhash(ctx, chain.Confirmed)
	if err != nil {
		return Intent{}, nil, chainErr(op, "latestBlockhash", err)
	}

	now := s.cfg.Clock.Now().UTC()
	id := "txi_" + s.cfg.NewIDFunc()
	it := Intent{
		ID: id, Version: 1, Actor: actor,
		Purpose: purpose.Name, BusinessReference: purpose.Name + ":" + id,
		Quantity: price.Quantity, Description: price.Description, Policy: price.Policy,
		Network: netID,
		Payer:   payer, Source: token2022.AssociatedTokenAddress(payer, price.Mint),
		Recipient: recipient, Destination: token2022.AssociatedTokenAddress(recipient, price.Mint), Legs: legs,
		Mint: price.Mint, TokenProgram: token2022.ProgramID(), Decimals: mint.Decimals,
		GrossAtomic: gross, FeeAtomic: fee, NetAtomic: net, FeeEpoch: epoch.Epoch,
		TransferFee: schedule, HasTransferFee: hasFee,
		Reference: DeriveReference(s.cfg.ReferenceKey, id), Memo: id,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.TTL),
		RequestFingerprint: RequestFingerprint(req),
		State:              StateCreated, NetworkState: NetworkUnsent, UpdatedAt: now,
	}
	if it.Payer == it.Recipient {
		return Intent{}, nil, fault.Invalid(op, "wallet", "the treasury cannot pay itself")
	}
	it.EconomicsHash = ComputeEconomicsHash(it)
	txExp := now
	if bh.LastValidBlockHeight > epoch.BlockHeight {
		txExp = now.Add(time.Duration(bh.LastValidBlockHeight-epoch.BlockHeight) * slotTime)
	}
	it.Transaction = Prepared{Blockhash: bh.Hash, LastValidBlockHeight: bh.LastValidBlockHeight, ExpiresAt: minTime(txExp, it.ExpiresAt)}
	if it.Transaction.Message, err = buildMessage(it); err != nil {
		return Intent{}, nil, fault.Wrap(op, err)
	}
	return it, price.Terms, nil
}

// Record saves an intent Prepare returned, in st's unit of work, with its
// outbox event, and runs its purpose's Open hook there with the draft's
// terms, so that the purpose's own object (a marketplace order) commits
// with the intent or not at all.
func (s *Service) Record(ctx context.Context, st Store, d Draft) error {
	const op = "intent.Record"
	if err := st.InsertIntent(ctx, d.Intent); err != nil {
		return fault.Wrap(op, err)
	}
	p, err := s.cfg.Registry.Lookup(d.Purpose)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if p.Open != nil {
		if err := p.Open(ctx, st, d.Intent, d.Terms); err != nil {
			return fault.Wrap(op, err)
		}
	}
	return s.changed(ctx, st, d.Intent)
}

// unitKey carries a caller's unit of work in a context (WithUnit).
type unitKey struct{}

// WithUnit returns a context under which the service's next unit of work
// runs in run instead of Config.Run: an HTTP route that writes its
// request receipt in the same transaction passes its own. Each of
// Submit, RequestPayment and Check runs exactly one unit of work.
func WithUnit(ctx context.Context, run RunFunc) context.Context {
	return context.WithValue(ctx, unitKey{}, run)
}

// run runs fn in the context's unit of work, or Config.Run.
func (s *Service) run(ctx context.Context, fn func(st Store) error) error {
	if run, ok := ctx.Value(unitKey{}).(RunFunc); ok && run != nil {
		return run(ctx, fn)
	}
	return s.cfg.Run(ctx, fn)
}

// readMint reads and decodes a payment mint: it must exist, be owned by
// Token-2022, be initialized and have no extension that blocks or
// redirects a plain transfer (NonTransferable, TransferHook, Pausable).
func readMint(ctx context.Context, op string, c ChainClient, addr chain.Address) (token2022.Mint, error) {
	acct, err := c.GetAccountInfo(ctx, addr, chain.Confirmed)
	if errors.Is(err, chain.ErrAccountNotFound) {
		return token2022.Mint{}, fault.Invalid(op, "mint", "the mint does not exist on the cluster")
	}
	if err != nil {
		return token2022.Mint{}, chainErr(op, "mint", err)
	}
	if acct.Owner != token2022.ProgramID() {
		return token2022.Mint{}, fault.Invalid(op, "mint", "the mint is not a Token-2022 mint")
	}
	m, err := token2022.DecodeMint(acct.Data)
	if err != nil || !m.IsInitialized {
		return token2022.Mint{}, fault.Invalid(op, "mint", "the mint account is not an initialized mint")
	}
	for _, t := range []token2022.ExtensionType{token2022.ExtensionNonTransferable, token2022.ExtensionTransferHook, token2022.ExtensionPausable} {
		if _, has := m.Extension(t); has {
			return token2022.Mint{}, fault.Invalid(op, "mint", "the mint's extensions do not allow a plain transfer").With("extension", t.String())
		}
	}
	return m, nil
}

// PaymentMint is a payment mint as the cluster shows it: what a seller
// prices a listing in.
type PaymentMint struct {
	// Address is the mint.
	Address chain.Address
	// Decimals are the mint account's decimals.
	Decimals uint8
	// HasTransferFee reports a TransferFeeConfig: payments are grossed up
	// for the fee withheld on each transfer.
	HasTransferFee bool
}

// PaymentMint reads mint from environment env's cluster, outside any unit
// of work, by the rules Create applies to an intent's mint: it must exist,
// be an initialized Token-2022 mint, and carry no extension that blocks or
// redirects a plain transfer. Its decimals are the mint account's, never a
// caller's.
//
// Errors: INVALID_INPUT naming "mint" for a malformed address or a mint
// that breaks those rules; SERVICE_UNAVAILABLE without a configured
// cluster; PROVIDER_UNAVAILABLE when the cluster cannot be read.
func (s *Service) PaymentMint(ctx context.Context, env access.Environment, mint string) (PaymentMint, error) {
	const op = "intent.PaymentMint"
	addr, err := token2022.ParsePublicKey(mint)
	if err != nil {
		return PaymentMint{}, fault.Invalid(op, "mint", "mint is a base58 address")
	}
	envc, err := s.env(op, env)
	if err != nil {
		return PaymentMint{}, err
	}
	m, err := readMint(ctx, op, envc.Client, addr)
	if err != nil {
		return PaymentMint{}, err
	}
	_, fee := m.TransferFeeConfig()
	return PaymentMint{Address: addr, Decimals: m.Decimals, HasTransferFee: fee}, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Get returns p's intent id. Errors: UNAUTHENTICATED, ACCESS_DENIED,
// NOT_FOUND (also for another user's intent).
func (s *Service) Get(ctx context.Context, p *access.Principal, id string) (Intent, error) {
	const op = "intent.Get"
	actor, err := actorOf(op, p)
	if err != nil {
		return Intent{}, err
	}
	it, err := s.cfg.ReadFunc().Intent(ctx, id)
	if err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	if err := owned(op, it, actor); err != nil {
		return Intent{}, err
	}
	return it, nil
}

// SubmitRequest is a submit request: the transaction signature, and the
// signed transaction when the client wants the platform to relay it.
type SubmitRequest struct {
	// Signature is the transaction's first signature in base58. Required.
	Signature string `json:"signature"`
	// SignedTransactionBase64 is the signed wire transaction; omitted when
	// the wallet broadcast it itself.
	SignedTransactionBase64 string `json:"signedTransactionBase64,omitempty"`
}

// Submit records a signature on p's intent and moves it to SUBMITTED; it
// never settles, and sends nothing (the relay job sends the signed
// bytes). A signed transaction must carry exactly the prepared message,
// byte for byte, signed by the payer with Signature. The intent's
// integrity (EconomicsHash and prepared message) and expiry are re-checked.
// Submitting the recorded signature again returns the intent unchanged
// (and attaches the signed bytes if they were not sent before).
//
// Errors: UNAUTHENTICATED; ACCESS_DENIED for an API key; NOT_FOUND;
// INVALID_INPUT naming "signature" or "signedTransactionBase64" for
// malformed values; SIGNATURE_REJECTED when the signed message differs
// from the prepared one, carries another signature than Signature, or the
// payer's signature does not verify; QUOTE_EXPIRED when the intent's
// lifetime has passed (the intent's frozen terms are its quote; the
// reconciler still finds a payment that landed by its reference before
// expiring it); CONFLICT when the signature is already bound to another
// intent, or the intent is settled, failed or under review; REQUIRES_REVIEW,
// after committing the move, when the intent is already bound to another
// signature and not yet settled; VERIFICATION_FAILED when the stored
// economics no longer match their hash.
func (s *Service) Submit(ctx context.Context, p *access.Principal, id string, req SubmitRequest) (Intent, error) {
	const op = "intent.Submit"
	actor, err := actorOf(op, p)
	if err != nil {
		return Intent{}, err
	}
	sig, err := message.ParseSignature(req.Signature)
	if err != nil {
		return Intent{}, fault.Invalid(op, "signature", "a signature is 64 bytes in base58")
	}
	var signed []byte
	var tx message.Signed
	if req.SignedTransactionBase64 != "" {
		signed, err = base64.StdEncoding.DecodeString(strings.TrimSpace(req.SignedTransactionBase64))
		if err != nil {
			return Intent{}, fault.Invalid(op, "signedTransactionBase64", "the signed transaction is standard base64")
		}
		if tx, err = message.ParseSigned(signed); err != nil {
			return Intent{}, fault.Invalid(op, "signedTransactionBase64", "the signed transaction is not a well-formed transaction")
		}
	}
	var out Intent
	var review error
	err = s.run(ctx, func(st Store) error {
		it, err := st.LockIntent(ctx, id)
		if err != nil {
			return err
		}
		if err := owned(op, it, actor); err != nil {
			return err
		}
		if err := integrity(op, it); err != nil {
			return err
		}
		if signed != nil {
			if err := checkSigned(op, it, tx, sig); err != nil {
				return err
			}
		}
		now := s.cfg.Clock.Now().UTC()
		next := it
		next.Version++
		next.UpdatedAt = now
		if it.Signature != "" {
			if it.Signature == req.Signature {
				if signed == nil || it.SignedTransaction != nil || it.State != StateSubmitted {
					out = it
					return nil
				}
				next.SignedTransaction, next.Origin = signed, OriginSigned
			} else {
				switch it.State {
				case StateSubmitted, StateConfirming, StateVerified:
				default:
					return fault.E(op, fault.Conflict, "the intent is already bound to another signature").With("state", string(it.State))
				}
				if next.State, err = Transit(it.State, EventConflictingSignature); err != nil {
					return err
				}
				next.Evidence = append(next.Evidence, Mismatch{Field: "signature", Expected: it.Signature, Actual: req.Signature})
				review = fault.E(op, fault.RequiresReview, "the intent is already bound to another signature; it needs review")
			}
		} else {
			switch {
			case it.State == StateExpired || (it.State == StateCreated && !now.Before(it.ExpiresAt)):
				return fault.E(op, fault.QuoteExpired, "the transaction intent has expired").With("expiresAt", it.ExpiresAt)
			case it.State != StateCreated:
				return fault.E(op, fault.Conflict, "the intent cannot be submitted in its current state").With("state", string(it.State))
			}
			if err := CheckSignatureFree(ctx, st, req.Signature, it.ID); err != nil {
				return err
			}
			if err := st.BindSignature(ctx, req.Signature, it.ID); err != nil {
				return err
			}
			if next.State, err = Transit(it.State, EventSubmit); err != nil {
				return err
			}
			if next.NetworkState, err = TransitNetwork(it.NetworkState, NetworkEventSign); err != nil {
				return err
			}
			next.Signature, next.SubmittedAt = req.Signature, now
			next.Origin = OriginSignature
			if signed != nil {
				next.SignedTransaction, next.Origin = signed, OriginSigned
			}
		}
		if err := st.UpdateIntent(ctx, next, it.Version); err != nil {
			return err
		}
		out = next
		return s.changed(ctx, st, next)
	})
	if err != nil {
		return Intent{}, fault.Wrap(op, err)
	}
	return out, review
}

// checkSigned checks a submitted signed transaction against the intent:
// one signature, equal to the submitted one, over exactly the prepared
// message, valid for the payer. SIGNATURE_REJECTED otherwise.
func checkSigned(op string, it Intent, tx message.Signed, sig []byte) error {
	if !hmac.Equal(tx.Message, it.Transaction.Message) {
		return fault.E(op, fault.SignatureRejected, "the signed transaction's message differs from the prepared transaction").
			With("field", "signedTransactionBase64")
	}
	if len(tx.Signatures) != 1 || !hmac.Equal(tx.Signatures[0], sig) {
		return fault.E(op, fault.SignatureRejected, "the signed transaction carries another signature than the one submitted").
			With("field", "signature")
	}
	if !message.VerifySignature(it.Payer, tx.Message, tx.Signatures[0]) {
		return fault.E(op, fault.SignatureRejected, "the payer's signature does not verify over the prepared transaction").
			With("field", "signedTransactionBase64")
	}
	return nil
}

// CheckSignatureFree enforces non-duplication: one signature settles at
// most one intent. It returns nil when signature is unbound or bound to
// intentID, and CONFLICT when another intent holds it. (The store's
// unique index enforces the same rule under concurrency; BindSignature
// returns CONFLICT there.)
func CheckSignatureFree(ctx context.Context, st Store, signature, intentID string) error {
	other, err := st.SignatureIntent(ctx, signature)
	switch {
	case fault.Is(err, fault.NotFound):
		return nil
	case err != nil:
		return fault.Wrap("intent.CheckSignatureFree", err)
	case other != intentID:
		return fault.E("intent.CheckSignatureFree", fault.Conflict, "the signature is already bound to another intent").With("field", "signature")
	}
	return nil
}

// Network returns env's CAIP-2 id, read from its cluster's genesis hash.
// SERVICE_UNAVAILABLE when env takes no intents; PROVIDER_UNAVAILABLE
// when the cluster cannot be read.
func (s *Service) Network(ctx context.Context, env access.Environment) (string, error) {
	const op = "intent.Network"
	c, err := s.env(op, env)
	if err != nil {
		return "", err
	}
	return network(ctx, op, c.Client)
}
