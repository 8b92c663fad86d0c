package cctp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// FeatureCCTP is the feature flag that gates creating transfers; an
// operator turns it off per workspace or platform-wide. The later steps
// of a transfer already created are not gated: they record evidence of
// value that may already have moved.
const FeatureCCTP = "cctp"

// Config configures a Service.
type Config struct {
	// Environments maps test and live to their configuration; an
	// environment without an entry answers SERVICE_UNAVAILABLE
	// (details.reason not_configured).
	Environments map[access.Environment]Environment
	// Recovery recovers attesters from signatures. Required with any
	// environment.
	Recovery SignerRecovery
	// Clock tells the time. Required.
	Clock Clock
	// Run runs the readiness runs' unit of work. Required.
	Run RunFunc
	// VerifyEvery is the readiness runs' period; zero means
	// DefaultVerifyEvery.
	VerifyEvery time.Duration
}

// Service runs cross-chain transfers. It is safe for concurrent use.
type Service struct {
	cfg  Config
	envs map[access.Environment]Environment
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Clock == nil || cfg.Run == nil {
		return nil, errors.New("cctp: Config.Clock and Run are required")
	}
	if len(cfg.Environments) > 0 && cfg.Recovery == nil {
		return nil, errors.New("cctp: Config.Recovery is required with an environment")
	}
	if cfg.VerifyEvery <= 0 {
		cfg.VerifyEvery = DefaultVerifyEvery
	}
	s := &Service{cfg: cfg, envs: map[access.Environment]Environment{}}
	for env, e := range cfg.Environments {
		if !env.Valid() {
			return nil, fmt.Errorf("cctp: unknown environment %q", env)
		}
		e = e.withDefaults()
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("cctp: %s: %w", env, err)
		}
		s.envs[env] = e
	}
	return s, nil
}

// environment returns env's configuration, or SERVICE_UNAVAILABLE.
func (s *Service) environment(op string, env access.Environment) (Environment, error) {
	e, ok := s.envs[env]
	if !ok {
		return Environment{}, fault.E(op, fault.ServiceUnavailable, "Cross-chain transfers are not configured in this environment.").
			With("reason", ReasonNotConfigured)
	}
	return e, nil
}

// CreateInput is what a transfer is created from.
type CreateInput struct {
	// Amount is the USDC to burn in atomic units (6 decimals), an integer
	// string.
	Amount string
	// SourceDomain is a configured EVM source; DestinationDomain must be
	// DomainSolana.
	SourceDomain, DestinationDomain int64
	// MintRecipient is the Solana USDC token account the mint credits
	// (base58).
	MintRecipient string
}

// PrepareCreate checks in and returns the transfer it pins, not yet
// stored: the environment is configured (SERVICE_UNAVAILABLE, reason
// not_configured) and its newest readiness run passed (SERVICE_UNAVAILABLE,
// reason not_verified or verification_failed); the source is a configured
// EVM chain and the destination Solana (INVALID_INPUT naming the field);
// the amount is an integer from 1 to MaxAmount (INVALID_AMOUNT); the
// recipient is an initialized, unfrozen token account of the
// environment's USDC mint, read now from the cluster (INVALID_INPUT,
// field mintRecipient, with details.reason; PROVIDER_UNAVAILABLE when the
// cluster cannot be read). st is the read pool.
func (s *Service) PrepareCreate(ctx context.Context, st Store, p *access.Principal, in CreateInput) (Transfer, error) {
	const op = "cctp.Create"
	e, err := s.environment(op, p.Environment)
	if err != nil {
		return Transfer{}, err
	}
	c, err := s.Capability(ctx, st, p.Environment)
	if err != nil {
		return Transfer{}, err
	}
	if !c.Verified {
		return Transfer{}, fault.E(op, fault.ServiceUnavailable, "Cross-chain transfers are configured but not verified in this environment.").
			With("reason", c.Reason)
	}
	if in.SourceDomain < 0 || in.SourceDomain > int64(^uint32(0)) {
		return Transfer{}, fault.Invalid(op, "sourceDomain", "sourceDomain is not a CCTP domain.")
	}
	if _, ok := e.source(Domain(in.SourceDomain)); !ok {
		return Transfer{}, fault.Invalid(op, "sourceDomain", "sourceDomain is not an EVM chain this environment reads burns on.").
			With("reason", "source_not_configured")
	}
	if in.DestinationDomain != int64(DomainSolana) {
		return Transfer{}, fault.Invalid(op, "destinationDomain", "destinationDomain must be 5 (Solana): mints are verified on Solana.")
	}
	amount, err := money.ParseAtomic(in.Amount)
	if err != nil {
		return Transfer{}, money.WithField(err, "amount")
	}
	if amount == 0 || amount > MaxAmount {
		return Transfer{}, fault.E(op, fault.InvalidAmount, "amount must be 1 to 10000000000000 (10,000,000 USDC).").
			With("field", "amount").With("reason", money.ReasonOverflow)
	}
	recipient, err := token2022.ParsePublicKey(in.MintRecipient)
	if err != nil {
		return Transfer{}, fault.Invalid(op, "mintRecipient", "mintRecipient must be a base58 Solana address.")
	}
	if err := s.checkRecipient(ctx, e, recipient); err != nil {
		return Transfer{}, err
	}
	return Transfer{Owner: OwnerOf(p), State: StateCreated, Amount: amount, SourceDomain: Domain(in.SourceDomain),
		DestinationDomain: DomainSolana, MintRecipient: recipient, Version: 1}, nil
}

// checkRecipient reads the recipient from the cluster: it must be an
// initialized, unfrozen SPL token account of the USDC mint.
func (s *Service) checkRecipient(ctx context.Context, e Environment, recipient chain.Address) error {
	const op = "cctp.Create"
	bad := func(reason, msg string) error {
		return fault.Invalid(op, "mintRecipient", msg).With("reason", reason)
	}
	a, err := e.Solana.GetAccountInfo(ctx, recipient, chain.Confirmed)
	if errors.Is(err, chain.ErrAccountNotFound) {
		return bad("token_account_missing", "mintRecipient does not exist: it must be a USDC token account (the owner's associated token account), created before the mint.")
	}
	if err != nil {
		return fault.E(op, fault.ProviderUnavailable, "The Solana cluster cannot be read now.").With("reason", "destination_unavailable").
			With("cause", "cluster")
	}
	acct, derr := token2022.DecodeAccount(a.Data)
	switch {
	case a.Owner != mustKey(SPLTokenProgram) || derr != nil:
		return bad("not_a_token_account", "mintRecipient is not an SPL token account: the mint credits a USDC token account, not a wallet.")
	case acct.Mint != e.USDCMint:
		return bad("not_a_usdc_token_account", "mintRecipient is a token account of another mint than USDC.")
	case acct.State != token2022.StateInitialized:
		return bad("token_account_frozen", "mintRecipient is frozen or not initialized.")
	}
	return nil
}

// RecordCreate stores a prepared transfer in st's unit of work with its
// outbox event and audit record, and returns it.
func (s *Service) RecordCreate(ctx context.Context, st Store, p *access.Principal, t Transfer, requestID string) (Transfer, error) {
	const op = "cctp.Create"
	now := st.Now()
	t.ID, t.CreatedAt, t.UpdatedAt = st.NewID(IDPrefix), now, now
	if err := st.CCTPTransferInsert(ctx, t); err != nil {
		return Transfer{}, fault.Wrap(op, err)
	}
	if err := changed(ctx, st, now, t, ""); err != nil {
		return Transfer{}, fault.Wrap(op, err)
	}
	if err := audit(ctx, st, p, t, ActionCreated, requestID, nil, map[string]any{"amount": t.Amount.String(),
		"sourceDomain": t.SourceDomain, "destinationDomain": t.DestinationDomain, "mintRecipient": t.MintRecipient.String(),
		"state": t.State}); err != nil {
		return Transfer{}, err
	}
	return t, nil
}

// Get returns p's transfer id with its evidence, oldest first (NOT_FOUND
// for anyone else's).
func (s *Service) Get(ctx context.Context, st Store, p *access.Principal, id string) (Transfer, []Evidence, error) {
	const op = "cctp.Get"
	t, err := st.CCTPTransfer(ctx, OwnerOf(p), id)
	if err != nil {
		return Transfer{}, nil, fault.Wrap(op, err)
	}
	ev, err := st.CCTPEvidence(ctx, t.ID)
	if err != nil {
		return Transfer{}, nil, fault.Wrap(op, err)
	}
	return t, ev, nil
}

// Result is what a step concluded, before it is applied.
type Result struct {
	// Transfer is the transfer as the step read it, with the fields the
	// step sets already set; Apply moves its state by Event.
	Transfer Transfer
	// Event is the move ("" when nothing changes).
	Event Event
	// Evidence is what the step observed; written with the move.
	Evidence *Evidence
	// Observed is what the attestation service answered this time:
	// not_indexed, pending or complete ("" for the other steps).
	Observed string
	// Replay is true when the step had already been done with the same
	// input: nothing is written and the transfer is answered as it is.
	Replay bool
}

// Apply writes r in st's unit of work: the transfer moved by r.Event
// (compare-and-set on its version), its evidence, the outbox event of its
// new state and an audit record. A result that moves nothing writes
// nothing. CONFLICT when the transfer changed meanwhile, or when its burn
// or mint is bound to another transfer.
func (s *Service) Apply(ctx context.Context, st Store, actor *access.Principal, r Result, requestID string) (Transfer, error) {
	const op = "cctp.Apply"
	t := r.Transfer
	if r.Event == "" {
		return t, nil
	}
	from, prev := t.State, t.Version
	to, err := Transition(from, r.Event)
	if err != nil {
		return Transfer{}, err
	}
	if to == from {
		return t, nil
	}
	now := st.Now()
	if t, err = t.move(r.Event, now); err != nil {
		return Transfer{}, err
	}
	if err := st.CCTPTransferUpdate(ctx, t, prev); err != nil {
		return Transfer{}, fault.Wrap(op, err)
	}
	evID := ""
	if r.Evidence != nil {
		ev := *r.Evidence
		ev.ID, ev.TransferID = st.NewID(EvidencePrefix), t.ID
		if err := st.CCTPEvidenceInsert(ctx, ev); err != nil {
			return Transfer{}, fault.Wrap(op, err)
		}
		evID = ev.ID
	}
	if err := changed(ctx, st, now, t, evID); err != nil {
		return Transfer{}, fault.Wrap(op, err)
	}
	if err := audit(ctx, st, actor, t, ActionMoved, requestID, map[string]any{"state": from},
		map[string]any{"state": t.State, "evidenceId": evID, "reviewReason": t.ReviewReason}); err != nil {
		return Transfer{}, err
	}
	return t, nil
}

// review returns r sending t to REQUIRES_REVIEW for reason with ev.
func review(t Transfer, reason string, ev Evidence) Result {
	t.ReviewReason = reason
	ev.Outcome = OutcomeReview
	return Result{Transfer: t, Event: EventReview, Evidence: &ev}
}

// refused is the VERIFICATION_FAILED error of a step whose evidence has a
// failed check: nothing is recorded, the transfer does not move.
func refused(op, msg string, ev Evidence) error {
	c, _ := ev.Failed()
	return fault.E(op, fault.VerificationFailed, msg).With("check", c.Name).With("expected", c.Expected).With("actual", c.Actual)
}

// unavailable is a PROVIDER_UNAVAILABLE naming which side could not be
// read.
func unavailable(op, reason string, err error) error {
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "A chain or the attestation service cannot be read now; retry later.",
		Details: map[string]any{"reason": reason}, Err: err}
}

// notReady is a RESULT_NOT_READY: what the step reads is not there yet.
func notReady(op, reason, msg string) error {
	return fault.E(op, fault.ResultNotReady, msg).With("reason", reason)
}

// amountText renders a uint256 word as a decimal when it fits 64 bits,
// else as hex.
func amountText(w Word) string {
	if n, ok := w.Uint64(); ok {
		return strconv.FormatUint(n, 10)
	}
	return w.String()
}

// SourceNetwork returns the CAIP-2 id of env's source chain of domain d,
// "" when none is configured.
func (s *Service) SourceNetwork(env access.Environment, d Domain) string {
	if c, ok := s.envs[env].source(d); ok {
		return c.Network()
	}
	return ""
}

// Evidence lists transfer id's evidence, oldest first.
func (s *Service) Evidence(ctx context.Context, st Store, id string) ([]Evidence, error) {
	ev, err := st.CCTPEvidence(ctx, id)
	return ev, fault.Wrap("cctp.Evidence", err)
}
