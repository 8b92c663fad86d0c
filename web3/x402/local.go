package x402

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// LocalConfig configures a Local facilitator.
type LocalConfig struct {
	// Chain is the environment's cluster. Required.
	Chain ChainClient
	// Signer signs as the fee payer. Required.
	Signer Signer
	// PollInterval spaces the status reads while a settlement waits for
	// confirmation; zero means 400ms, a slot.
	PollInterval time.Duration
}

// Local is the facilitator the platform runs itself, over the
// environment's cluster with its own fee payer (web3.md §1.6 and §1.7).
// Verify reads the transaction (CheckTransaction) and then its accounts
// and blockhash on the cluster (CheckAccounts). Settle signs the
// transaction as fee payer (ed25519 is deterministic, so the transaction's
// id is known before anything is sent), inspects that signature first
// (chain/relay: never send what the chain knows), verifies again when the
// chain does not know it, sends the identical bytes and follows them to
// confirmed. A Settle called again for the same payment (after an answer
// that never came) follows the same transaction: it never builds another.
// The caller's context bounds the wait; past it the outcome is unknown
// (SUBMISSION_UNCERTAIN).
type Local struct {
	cfg LocalConfig

	mu      sync.Mutex
	network string // the cluster's CAIP-2 id, once read
}

var _ Facilitator = (*Local)(nil)

// NewLocal returns a Local facilitator.
func NewLocal(cfg LocalConfig) (*Local, error) {
	if cfg.Chain == nil || cfg.Signer == nil {
		return nil, errors.New("x402: the local facilitator needs a cluster and a fee payer")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 400 * time.Millisecond
	}
	return &Local{cfg: cfg}, nil
}

// Name is "local".
func (l *Local) Name() string { return "local" }

// FeePayer is the fee payer's address.
func (l *Local) FeePayer() chain.Address { return l.cfg.Signer.Address() }

// Supported lists exact on the cluster's network with the fee payer.
func (l *Local) Supported(ctx context.Context) (Supported, error) {
	network, err := l.clusterNetwork(ctx)
	if err != nil {
		return Supported{}, err
	}
	fp := l.FeePayer().String()
	return Supported{Kinds: []SupportedKind{{X402Version: Version, Scheme: SchemeExact, Network: network, Extra: &Extra{FeePayer: fp}}},
		Extensions: []string{}, Signers: map[string][]string{"solana:*": {fp}}}, nil
}

// clusterNetwork reads (once) the cluster's CAIP-2 id.
func (l *Local) clusterNetwork(ctx context.Context) (string, error) {
	l.mu.Lock()
	n := l.network
	l.mu.Unlock()
	if n != "" {
		return n, nil
	}
	gh, err := l.cfg.Chain.GetGenesisHash(ctx)
	if err != nil {
		return "", unreadable("x402.Local", "genesisHash", err)
	}
	n = chain.Network{GenesisHash: gh}.CAIP2()
	l.mu.Lock()
	l.network = n
	l.mu.Unlock()
	return n, nil
}

// Verify judges the payment against the requirements: the protocol's
// fields, then CheckTransaction, then CheckAccounts over the cluster's
// accounts and blockhash.
func (l *Local) Verify(ctx context.Context, r VerifyRequest) (VerifyResponse, error) {
	_, p, inv, err := l.static(ctx, r.Payload, r.Requirements)
	if err != nil {
		return VerifyResponse{}, err
	}
	if inv != nil {
		return verdict(p, inv), nil
	}
	inv, err = l.accounts(ctx, r.Requirements, p)
	if err != nil {
		return VerifyResponse{}, err
	}
	return verdict(p, inv), nil
}

// verdict is a VerifyResponse of a payment and its first broken rule.
func verdict(p Payment, inv *Invalid) VerifyResponse {
	var payer string
	if !p.Authority.IsZero() {
		payer = p.Authority.String()
	}
	if inv != nil {
		return VerifyResponse{InvalidReason: inv.Reason, InvalidMessage: inv.Message, Payer: payer}
	}
	return VerifyResponse{IsValid: true, Payer: payer}
}

// static checks the protocol's fields and the transaction alone.
func (l *Local) static(ctx context.Context, pp PaymentPayload, req Requirements) (Transaction, Payment, *Invalid, error) {
	network, err := l.clusterNetwork(ctx)
	if err != nil {
		return Transaction{}, Payment{}, nil, err
	}
	a := pp.Accepted
	switch {
	case pp.X402Version != Version:
		return Transaction{}, Payment{}, invalid(ReasonVersion, "x402Version %d, not %d", pp.X402Version, Version), nil
	case a.Scheme != SchemeExact || req.Scheme != SchemeExact:
		return Transaction{}, Payment{}, invalid(ReasonScheme, "scheme %q, not exact", a.Scheme), nil
	case a.Network != req.Network || req.Network != network:
		return Transaction{}, Payment{}, invalid(ReasonNetwork, "network %s, not the cluster's %s", a.Network, network), nil
	case a.Amount != req.Amount || a.Asset != req.Asset || a.PayTo != req.PayTo || a.Extra.FeePayer != req.Extra.FeePayer:
		return Transaction{}, Payment{}, invalid(ReasonRequirements, "the accepted requirement is not the one offered"), nil
	case req.Extra.FeePayer != l.FeePayer().String():
		return Transaction{}, Payment{}, invalid(ReasonFeePayerMismatch, "the fee payer %s is not this facilitator's", req.Extra.FeePayer), nil
	}
	tx, inv := DecodePaymentTransaction(pp)
	if inv != nil {
		return Transaction{}, Payment{}, inv, nil
	}
	p, inv := CheckTransaction(req, tx)
	return tx, p, inv, nil
}

// accounts reads the payment's accounts and blockhash and judges them.
func (l *Local) accounts(ctx context.Context, req Requirements, p Payment) (*Invalid, error) {
	var f Facts
	for _, a := range []struct {
		addr chain.Address
		into **chain.AccountInfo
	}{{p.Mint, &f.Mint}, {p.Source, &f.Source}, {p.Destination, &f.Destination}} {
		info, err := l.cfg.Chain.GetAccountInfo(ctx, a.addr, chain.Confirmed)
		switch {
		case errors.Is(err, chain.ErrAccountNotFound):
		case err != nil:
			return nil, unreadable("x402.Local", "accountInfo", err)
		default:
			*a.into = &info
		}
	}
	valid, err := l.cfg.Chain.IsBlockhashValid(ctx, p.Blockhash, chain.Processed)
	if err != nil {
		return nil, unreadable("x402.Local", "isBlockhashValid", err)
	}
	f.BlockhashValid = valid
	return CheckAccounts(req, p, f), nil
}

// Settle settles the payment as the type's documentation says.
func (l *Local) Settle(ctx context.Context, r SettleRequest) (SettleResponse, error) {
	const op = "x402.Local.Settle"
	req := r.Requirements
	fail := func(payer, reason, msg string) SettleResponse {
		return SettleResponse{ErrorReason: reason, ErrorMessage: msg, Payer: payer, Network: req.Network, Transaction: ""}
	}
	tx, p, inv, err := l.static(ctx, r.Payload, req)
	if err != nil {
		return SettleResponse{}, err
	}
	payer := verdict(p, nil).Payer
	if inv != nil {
		return fail(payer, inv.Reason, inv.Message), nil
	}
	sig, err := l.cfg.Signer.Sign(ctx, tx.Message)
	if err != nil {
		return SettleResponse{}, fault.Wrap(op, err)
	}
	s := relay.Submission{Network: req.Network, Signature: token2022.EncodeBase58(sig), Wire: tx.WithFeePayerSignature(sig),
		Blockhash: p.Blockhash, LastValidBlockHeight: r.LastValidBlockHeight, State: relay.Submitted}
	st, err := relay.Inspect(ctx, l.cfg.Chain, s.Signature)
	if err != nil {
		return SettleResponse{}, err
	}
	if st == nil {
		// The chain does not know the transaction: verify it again now.
		inv, err := l.accounts(ctx, req, p)
		if err != nil {
			return SettleResponse{}, err
		}
		if inv != nil && inv.Reason == ReasonBlockhash {
			if dropped, err := l.dropped(ctx, s); err != nil || !dropped {
				return SettleResponse{}, uncertain(op, s.Signature, err)
			}
		}
		if inv != nil {
			return fail(payer, inv.Reason, inv.Message), nil
		}
		if s.LastValidBlockHeight == 0 {
			h, err := l.cfg.Chain.GetBlockHeight(ctx, chain.Processed)
			if err != nil {
				return SettleResponse{}, unreadable(op, "blockHeight", err)
			}
			s.LastValidBlockHeight = h + maxBlockhashAge
		}
	} else {
		s, _ = relay.Observe(s, st)
	}
	for {
		switch {
		case s.State.AtLeast(chain.Confirmed):
			return SettleResponse{Success: true, Payer: payer, Transaction: s.Signature, Network: req.Network,
				Amount: strconv.FormatUint(p.Amount, 10)}, nil
		case s.State == relay.Failed:
			return fail(payer, ReasonTransactionFailed, "the chain refused or failed the transaction: "+s.ChainError), nil
		case s.State == relay.Dropped:
			return fail(payer, ReasonBlockhash, "the transaction never landed and its blockhash lapsed"), nil
		}
		res, err := relay.Step(ctx, l.cfg.Chain, s, relay.Options{})
		if err != nil && !fault.Is(err, fault.ProviderUnavailable) {
			return SettleResponse{}, uncertain(op, s.Signature, err)
		}
		if err == nil {
			s = res.Submission
		}
		if s.State.AtLeast(chain.Confirmed) || s.State == relay.Failed || s.State == relay.Dropped {
			continue
		}
		t := time.NewTimer(l.cfg.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return SettleResponse{}, uncertain(op, s.Signature, ctx.Err())
		case <-t.C:
		}
	}
}

// dropped reports whether a transaction the chain does not know can no
// longer land: the finalized height is past its bound, and one more
// inspection still finds nothing. Without a bound it cannot tell.
func (l *Local) dropped(ctx context.Context, s relay.Submission) (bool, error) {
	if s.LastValidBlockHeight == 0 {
		// Never sent by anyone that recorded a bound: the blockhash lapsed
		// before the first send, so nothing of it can be in flight.
		return true, nil
	}
	h, err := l.cfg.Chain.GetBlockHeight(ctx, chain.Finalized)
	if err != nil {
		return false, unreadable("x402.Local", "blockHeight", err)
	}
	if h <= s.LastValidBlockHeight {
		return false, nil
	}
	st, err := relay.Inspect(ctx, l.cfg.Chain, s.Signature)
	return err == nil && st == nil, err
}

// uncertain is the SUBMISSION_UNCERTAIN of a settlement whose outcome is
// not known yet; the transaction's signature is in details.
func uncertain(op, signature string, cause error) error {
	return &fault.Error{Op: op, Code: fault.SubmissionUncertain,
		Message: "The payment's outcome is not known yet; the chain is inspected before anything is sent again.",
		Details: map[string]any{"transaction": signature}, Err: cause}
}

// unreadable is the PROVIDER_UNAVAILABLE of a cluster read that failed.
func unreadable(op, read string, err error) error {
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The cluster could not be read.",
		Details: map[string]any{"read": read}, Err: err}
}
