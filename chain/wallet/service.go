package wallet

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// Defaults and limits of Config.
const (
	// DefaultTTL is a challenge's lifetime when Config.TTL is zero.
	DefaultTTL = 5 * time.Minute
	// MaxTTL bounds Config.TTL.
	MaxTTL = time.Hour
	// DefaultMaxAttempts is how many failed verifications consume a
	// challenge when Config.MaxAttempts is zero.
	DefaultMaxAttempts = 5
	// DefaultBaseURL is the platform's address when Config.BaseURL is
	// empty, as the account package's default.
	DefaultBaseURL = "http://127.0.0.1:8080"
)

// Identifiers and values the package writes.
const (
	// ChallengeIDPrefix prefixes challenge ids; the id is the message's
	// Request ID.
	ChallengeIDPrefix = "wch_"
	// LinkIDPrefix prefixes wallet link ids.
	LinkIDPrefix = "wl_"
	// Network is the network a wallet link records: one ed25519 key
	// controls the same address on every Solana cluster, so a link holds
	// in both environments (the wallet_links table says so).
	Network = "solana"
	// PurposeLinkWallet links a wallet to the account; the default and
	// always-registered purpose.
	PurposeLinkWallet = "link_wallet"
)

// Purpose is a reason a challenge may be asked for. Each purpose has its
// own statement, so a signature given for one purpose is never a
// signature for another; every purpose's verification proves control of
// the address and records the wallet link, and the purpose is returned so
// the flow that asked can check it.
type Purpose struct {
	// Name identifies the purpose in requests: lower-case letters, digits
	// and underscores ("link_wallet").
	Name string
	// Statement is the message's statement, one line; empty means
	// DefaultStatement(Name).
	Statement string
}

// DefaultStatement is the statement of a purpose that sets none.
func DefaultStatement(purpose string) string {
	return "Link this wallet to your platform account for " + purpose +
		". This request will not trigger a blockchain transaction or cost any fees."
}

// Config configures a Service. The zero value is usable.
type Config struct {
	// BaseURL is the platform's web address: the message's URI, and its
	// host (with port) the message's domain. Empty means DefaultBaseURL.
	BaseURL string
	// Clusters maps each environment to its cluster kind, written as the
	// message's Chain ID (see ChainID). An environment without an entry
	// writes no Chain ID.
	Clusters map[access.Environment]chain.Cluster
	// Purposes are the purposes a challenge may name besides
	// PurposeLinkWallet, which is always registered (an entry named
	// link_wallet replaces its statement).
	Purposes []Purpose
	// TTL is a challenge's lifetime; zero means DefaultTTL, at most MaxTTL.
	TTL time.Duration
	// MaxAttempts is how many failed verifications consume a challenge;
	// zero means DefaultMaxAttempts.
	MaxAttempts int
	// Clock is the clock; nil means the wall clock.
	Clock Clock
}

// Clock tells the time.
type Clock interface {
	// Now is the current time.
	Now() time.Time
}

// wallClock is the default Clock.
type wallClock struct{}

// Now is time.Now.
func (wallClock) Now() time.Time { return time.Now() }

// Store is what the package reads and writes; store.Tx implements it.
type Store interface {
	// NewID returns a fresh id with prefix.
	NewID(prefix string) string
	// WalletChallengeInsert stores a new PENDING challenge.
	WalletChallengeInsert(ctx context.Context, c Challenge) error
	// WalletChallengeGet returns challenge id of userID in tenantID;
	// NOT_FOUND for an unknown id and for another user's or tenant's.
	WalletChallengeGet(ctx context.Context, tenantID, userID, id string) (Challenge, error)
	// WalletChallengeFail counts a failed attempt of a PENDING challenge
	// and, when the count reaches maxAttempts, moves it to EXHAUSTED with
	// consumed time at, in one compare-and-set; it returns the challenge
	// as updated. CONFLICT when the challenge is no longer PENDING.
	WalletChallengeFail(ctx context.Context, id string, at time.Time, maxAttempts int) (Challenge, error)
	// WalletChallengeConsume moves a PENDING, unconsumed challenge to
	// VERIFIED with consumed time at (UPDATE ... WHERE consumed_at IS
	// NULL); CONFLICT when it was consumed meanwhile, so of two concurrent
	// verifications exactly one succeeds.
	WalletChallengeConsume(ctx context.Context, id string, at time.Time) error
	// WalletLinkInsert records address as a verified wallet of userID in
	// tenantID; relinking the same user's wallet is a no-op; CONFLICT when
	// another user of the tenant holds it.
	WalletLinkInsert(ctx context.Context, id, tenantID, userID, network, address string) error
	LinkReader
}

// LinkReader reads the wallet links verification wrote; store.Tx
// implements it.
type LinkReader interface {
	// WalletLinkGet returns the link of address in tenantID; NOT_FOUND
	// when there is none.
	WalletLinkGet(ctx context.Context, tenantID, network, address string) (Link, error)
	// WalletLinksOfUser returns the links of userID in tenantID on
	// network, oldest first; none is an empty list.
	WalletLinksOfUser(ctx context.Context, tenantID, network, userID string) ([]Link, error)
}

// UnitOfWork runs fn in one transaction, committed when fn returns nil.
// failure is the error the caller will return once the unit committed (a
// rejected signature whose attempt is recorded), nil when the unit is the
// success; the transport records it as the request's outcome.
type UnitOfWork func(ctx context.Context, failure error, fn func(st Store) error) error

// Challenge is a stored challenge: the exact message the wallet must sign
// and what it is bound to. Signatures are never stored.
type Challenge struct {
	// ID is the challenge's id and the message's Request ID.
	ID string
	// TenantID, UserID and SessionID are the account and session that
	// asked; Environment is the session's mode when it asked.
	TenantID    string
	UserID      string
	SessionID   string
	Environment access.Environment
	// Address is the base58 key that must sign; Purpose the purpose.
	Address string
	Purpose string
	// Message is the exact text to sign (UTF-8), Nonce its nonce.
	Message string
	Nonce   string
	// IssuedAt and ExpiresAt bound its lifetime (millisecond precision).
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Attempts counts failed verifications.
	Attempts int
	// Status is PENDING until verified or exhausted; ConsumedAt is when it
	// left PENDING.
	Status     Status
	ConsumedAt *time.Time
}

// Link is a verified wallet of a user in a tenant.
type Link struct {
	// ID is the link's id ("wl_...").
	ID       string
	TenantID string
	UserID   string
	// Network is always Network; Address the base58 key.
	Network string
	Address string
	// VerifiedAt is when the link was first recorded.
	VerifiedAt time.Time
}

// ChallengeRequest is the body of a challenge request.
type ChallengeRequest struct {
	// Address is the base58 public key that will sign.
	Address string
	// Purpose is a registered purpose's name.
	Purpose string
}

// Issued is a new challenge with the fields of its message, which a
// wallet's signIn takes as input.
type Issued struct {
	Challenge
	// Input is Challenge.Message parsed.
	Input Message
}

// VerifyRequest is the body of a verification.
type VerifyRequest struct {
	// ChallengeID is the challenge's id.
	ChallengeID string
	// Signature is the ed25519 signature over the message (see
	// ParseSignature for the encodings).
	Signature string
	// SignedMessage, optional, is the message the wallet signed (a
	// signIn's signedMessage), as UTF-8 text or standard base64 of its
	// bytes; it must equal the challenge's message byte for byte.
	SignedMessage string
}

// Verified is a successful verification.
type Verified struct {
	// ChallengeID and Purpose are the consumed challenge's.
	ChallengeID string
	Purpose     string
	// Link is the wallet link, new or (for a wallet the user had linked
	// already) existing.
	Link Link
	// VerifiedAt is when this verification happened.
	VerifiedAt time.Time
}

// Service issues and verifies wallet challenges.
type Service struct {
	cfg      Config
	domain   string
	purposes map[string]string // name -> statement
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(cfg.BaseURL, " \t\r\n") {
		return nil, fmt.Errorf("wallet: Config.BaseURL %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.TTL < time.Second || cfg.TTL > MaxTTL {
		return nil, fmt.Errorf("wallet: Config.TTL %v is outside 1s..%v", cfg.TTL, MaxTTL)
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.MaxAttempts < 1 {
		return nil, fmt.Errorf("wallet: Config.MaxAttempts %d is below 1", cfg.MaxAttempts)
	}
	for env, c := range cfg.Clusters {
		if !env.Valid() || ChainID(c) == "" {
			return nil, fmt.Errorf("wallet: Config.Clusters: %q -> %q is not an environment and a cluster kind", env, c)
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	s := &Service{cfg: cfg, domain: u.Host, purposes: map[string]string{PurposeLinkWallet: DefaultStatement(PurposeLinkWallet)}}
	for _, p := range cfg.Purposes {
		if !validPurposeName(p.Name) {
			return nil, fmt.Errorf("wallet: Config.Purposes: name %q is not lower-case letters, digits and underscores", p.Name)
		}
		st := p.Statement
		if st == "" {
			st = DefaultStatement(p.Name)
		}
		if strings.ContainsAny(st, "\r\n") || isField(st) {
			return nil, fmt.Errorf("wallet: Config.Purposes: the statement of %q is not one line of text", p.Name)
		}
		s.purposes[p.Name] = st
	}
	s.cfg.Clusters = make(map[access.Environment]chain.Cluster, len(cfg.Clusters))
	for env, c := range cfg.Clusters {
		s.cfg.Clusters[env] = c
	}
	s.cfg.Purposes = nil
	return s, nil
}

// Purposes returns the registered purpose names, sorted.
func (s *Service) Purposes() []string {
	out := make([]string, 0, len(s.purposes))
	for n := range s.purposes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Domain is the domain the messages carry.
func (s *Service) Domain() string { return s.domain }

// TTL is a challenge's lifetime.
func (s *Service) TTL() time.Duration { return s.cfg.TTL }

func validPurposeName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, c := range n {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// now is the clock's time in UTC at the messages' millisecond precision.
func (s *Service) now() time.Time { return s.cfg.Clock.Now().UTC().Truncate(time.Millisecond) }

// signedIn admits a signed-in user of a tenant: an API key is
// ACCESS_DENIED (details.credential api_key), a principal without a tenant
// ACCESS_DENIED (details.reason no_tenant).
func signedIn(op string, p *access.Principal) error {
	if p == nil || p.UserID == "" {
		return fault.E(op, fault.Unauthenticated, "")
	}
	if p.Kind != access.CredentialSession && p.Kind != access.CredentialAccessToken {
		return fault.E(op, fault.AccessDenied, "Wallet verification needs a signed-in user; API keys are not accepted.").
			With("credential", string(p.Kind))
	}
	if p.TenantID == "" {
		return fault.E(op, fault.AccessDenied, "Wallet verification needs an account that belongs to a tenant.").With("reason", "no_tenant")
	}
	return nil
}

// Challenge issues a challenge for p to sign with req.Address: a Sign-In
// With Solana message with the platform's domain and URI, the purpose's
// statement, Version 1, the environment's Chain ID, a fresh nonce (26
// letters and digits from crypto/rand), Issued At now, Expiration Time now
// + TTL and the challenge id as Request ID. An API key is ACCESS_DENIED;
// an address that is not a base58 32-byte key is INVALID_INPUT (field
// address); an unregistered purpose INVALID_INPUT (field purpose,
// details.allowed).
func (s *Service) Challenge(ctx context.Context, st Store, p *access.Principal, req ChallengeRequest) (Issued, error) {
	const op = "wallet.Challenge"
	if err := signedIn(op, p); err != nil {
		return Issued{}, err
	}
	key, err := token2022.ParsePublicKey(req.Address)
	if err != nil {
		return Issued{}, fault.Invalid(op, "address", "address is a base58 ed25519 public key of 32 bytes.")
	}
	statement, ok := s.purposes[req.Purpose]
	if !ok {
		return Issued{}, fault.Invalid(op, "purpose", "purpose is not one of the registered purposes.").With("allowed", s.Purposes())
	}
	now := s.now()
	c := Challenge{ID: st.NewID(ChallengeIDPrefix), TenantID: p.TenantID, UserID: p.UserID, SessionID: p.SessionID,
		Environment: p.Environment, Address: key.String(), Purpose: req.Purpose, Nonce: rand.Text(),
		IssuedAt: now, ExpiresAt: now.Add(s.cfg.TTL), Status: StatusPending}
	m := Message{Domain: s.domain, Address: c.Address, Statement: statement, URI: s.cfg.BaseURL, Version: "1",
		ChainID: ChainID(s.cfg.Clusters[p.Environment]), Nonce: c.Nonce, IssuedAt: FormatTime(c.IssuedAt),
		ExpirationTime: FormatTime(c.ExpiresAt), RequestID: c.ID}
	c.Message = m.Text()
	if _, err := Parse(c.Message); err != nil {
		return Issued{}, fault.Wrap(op, fmt.Errorf("built an unparsable message: %w", err))
	}
	if err := st.WalletChallengeInsert(ctx, c); err != nil {
		return Issued{}, fault.Wrap(op, err)
	}
	return Issued{Challenge: c, Input: m}, nil
}

// Verify checks a signature over p's challenge and, when it holds, consumes
// the challenge and records the wallet link for p's user and tenant. It
// creates no session, role or entitlement. The checks, in order:
//
//   - p is a signed-in user of a tenant (ACCESS_DENIED otherwise);
//   - the signature decodes to 64 bytes (INVALID_INPUT, field signature);
//   - the challenge exists and is p's, same user and tenant (NOT_FOUND
//     otherwise, for another account's challenge too);
//   - it is PENDING (CONFLICT, details.reason challenge_consumed, or
//     attempts_exhausted after MaxAttempts failures);
//   - it has not expired (QUOTE_EXPIRED, details.reason challenge_expired:
//     the code of a server-issued offer whose lifetime passed, 410);
//   - signedMessage, when sent, equals the stored message byte for byte,
//     and the message parses with the challenge's address, nonce, Request
//     ID and the configured domain, and is inside its Not Before and
//     Expiration Time (SIGNATURE_REJECTED, details.reason
//     message_mismatch);
//   - the signature verifies with ed25519 over the stored message's bytes
//     under the address's key (SIGNATURE_REJECTED, details.reason
//     signature_invalid).
//
// A rejected signature or message is counted in its own unit of work
// (details.attemptsRemaining); the last allowed failure consumes the
// challenge. Reads go through read; every write through commit. On
// success one unit consumes the challenge (compare-and-set: of concurrent
// verifications one succeeds, the others are CONFLICT) and writes the
// link; a wallet linked to another user of the tenant is CONFLICT
// (details.reason wallet_linked_elsewhere) and consumes nothing.
func (s *Service) Verify(ctx context.Context, read Store, commit UnitOfWork, p *access.Principal, req VerifyRequest) (Verified, error) {
	const op = "wallet.Verify"
	if err := signedIn(op, p); err != nil {
		return Verified{}, err
	}
	if req.ChallengeID == "" {
		return Verified{}, fault.Invalid(op, "challengeId", "challengeId is required.")
	}
	sig, err := ParseSignature(req.Signature)
	if err != nil {
		return Verified{}, fault.Wrap(op, err)
	}
	c, err := read.WalletChallengeGet(ctx, p.TenantID, p.UserID, req.ChallengeID)
	if err != nil {
		return Verified{}, fault.Wrap(op, err)
	}
	now := s.now()
	if err := s.usable(op, c, now); err != nil {
		return Verified{}, err
	}
	if reason := s.check(c, req.SignedMessage, sig, now); reason != "" {
		return Verified{}, s.reject(ctx, op, commit, c, reason, now)
	}
	out := Verified{ChallengeID: c.ID, Purpose: c.Purpose, VerifiedAt: now}
	err = commit(ctx, nil, func(st Store) error {
		if err := st.WalletChallengeConsume(ctx, c.ID, now); err != nil {
			if fault.Is(err, fault.Conflict) {
				return fault.E(op, fault.Conflict, "The challenge was already used; ask for a new one.").With("reason", "challenge_consumed")
			}
			return err
		}
		err := st.WalletLinkInsert(ctx, st.NewID(LinkIDPrefix), c.TenantID, c.UserID, Network, c.Address)
		if fault.Is(err, fault.Conflict) {
			return fault.E(op, fault.Conflict, "The wallet is linked to another account.").With("reason", "wallet_linked_elsewhere")
		}
		if err != nil {
			return err
		}
		out.Link, err = st.WalletLinkGet(ctx, c.TenantID, Network, c.Address)
		return err
	})
	if err != nil {
		return Verified{}, fault.Wrap(op, err)
	}
	return out, nil
}

// usable refuses a consumed or expired challenge.
func (s *Service) usable(op string, c Challenge, now time.Time) error {
	switch {
	case c.Status == StatusExhausted:
		return fault.E(op, fault.Conflict, "The challenge had too many failed attempts; ask for a new one.").
			With("reason", "attempts_exhausted")
	case c.Status != StatusPending || c.ConsumedAt != nil:
		return fault.E(op, fault.Conflict, "The challenge was already used; ask for a new one.").With("reason", "challenge_consumed")
	case !now.Before(c.ExpiresAt):
		return fault.E(op, fault.QuoteExpired, "The challenge expired; ask for a new one.").
			With("reason", "challenge_expired").With("expiredAt", c.ExpiresAt)
	}
	return nil
}

// check returns why the signature or message is rejected, "" when both
// hold.
func (s *Service) check(c Challenge, signed string, sig []byte, now time.Time) string {
	if signed != "" && !sameMessage(signed, c.Message) {
		return "message_mismatch"
	}
	m, err := Parse(c.Message)
	if err != nil || m.Address != c.Address || m.Nonce != c.Nonce || m.RequestID != c.ID || m.Domain != s.domain {
		return "message_mismatch"
	}
	if !inWindow(m, now) {
		return "message_mismatch"
	}
	key, err := token2022.ParsePublicKey(m.Address)
	if err != nil || !ed25519.Verify(ed25519.PublicKey(key[:]), []byte(c.Message), sig) {
		return "signature_invalid"
	}
	return ""
}

// inWindow reports whether now is before the message's Expiration Time
// and not before its Not Before.
func inWindow(m Message, now time.Time) bool {
	if m.ExpirationTime != "" {
		exp, err := time.Parse(time.RFC3339Nano, m.ExpirationTime)
		if err != nil || !now.Before(exp) {
			return false
		}
	}
	if m.NotBefore != "" {
		nb, err := time.Parse(time.RFC3339Nano, m.NotBefore)
		if err != nil || now.Before(nb) {
			return false
		}
	}
	return true
}

// sameMessage reports whether signed, as UTF-8 text or as standard base64
// of the bytes, is message exactly.
func sameMessage(signed, message string) bool {
	if signed == message {
		return true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(signed)
	return err == nil && string(b) == message
}

// reject counts a failed attempt and returns the SIGNATURE_REJECTED error
// the caller answers with.
func (s *Service) reject(ctx context.Context, op string, commit UnitOfWork, c Challenge, reason string, now time.Time) error {
	msg := "The signature does not verify over the challenge's message."
	if reason == "message_mismatch" {
		msg = "The signed message differs from the challenge's message."
	}
	rejected := fault.E(op, fault.SignatureRejected, msg).With("reason", reason)
	remaining := -1
	err := commit(ctx, rejected, func(st Store) error {
		u, err := st.WalletChallengeFail(ctx, c.ID, now, s.cfg.MaxAttempts)
		if fault.Is(err, fault.Conflict) {
			remaining = 0 // consumed meanwhile; nothing to count
			return nil
		}
		if err != nil {
			return err
		}
		remaining = max(s.cfg.MaxAttempts-u.Attempts, 0)
		return nil
	})
	if err != nil {
		return fault.Wrap(op, fmt.Errorf("record the failed attempt: %w", err))
	}
	return rejected.With("attemptsRemaining", remaining)
}
