package account

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
)

// Lifetimes of single-use codes (the spec leaves them open).
const (
	// VerificationLifetime bounds an email verification code.
	VerificationLifetime = 24 * time.Hour
	// ResetLifetime bounds a password reset code.
	ResetLifetime = 30 * time.Minute
	// HandoffLifetime bounds a web-to-studio handoff code.
	HandoffLifetime = 60 * time.Second
)

// DefaultBaseURL is the address mailed links point to when Config.BaseURL is
// empty.
const DefaultBaseURL = "http://127.0.0.1:8080"

// Config configures a Service. Zero values take the documented defaults.
type Config struct {
	// Keys digests codes and session credentials. Required; secret.Keyring
	// satisfies it.
	Keys Keyring
	// Mailer sends verification, reset and notice mail. Required.
	Mailer Mailer
	// Passwords are the argon2id parameters of new hashes; the zero value
	// means DefaultPasswordParams.
	Passwords PasswordParams
	// HashPool bounds the concurrent argon2id work of every hash and
	// verification (login, signup, password reset). Nil means
	// NewHashPool(Hashing, Passwords): a pool of the service's own.
	HashPool *HashPool
	// Hashing sizes the service's own pool when HashPool is nil; its zero
	// value sizes it to the machine (HashPoolConfig).
	Hashing HashPoolConfig
	// BaseURL is the web app's address that mailed links point to, without a
	// trailing slash. Empty means DefaultBaseURL.
	BaseURL string
	// InsecureCookies drops the Secure attribute of session cookies, for a
	// host served over plain HTTP on localhost. Never set it in production.
	InsecureCookies bool
	// TrustProxy makes the client address the first X-Forwarded-For entry
	// instead of the connection's peer; set it only behind a proxy that
	// overwrites that header.
	TrustProxy bool
	// Throttle bounds failed logins; zero fields take
	// DefaultThrottlePolicy's.
	Throttle ThrottlePolicy
	// AddressRate bounds the requests each client address sends to the
	// unauthenticated account routes; zero fields mean 30 at once, 30 a
	// minute.
	AddressRate AddressRate
	// ResetMail bounds password reset mail and the notices a signup with a
	// registered address sends; zero fields mean 3 per account and 10
	// requests per client address an hour.
	ResetMail MailLimit
	// FreshWindow is how recent a sign-in must be for routes that require
	// fresh authentication. Zero means FreshWindow (10 minutes).
	FreshWindow time.Duration
}

// Service runs signup, verification, login, sessions, password reset and
// the web-to-studio handoff, invitations, onboarding and member
// administration. Each method takes the unit of work it runs in as the
// narrow port of its operation (package documentation, "Ports"); the few
// that hash passwords take the read handle and a UnitOfWork, so the
// deliberately slow hashing never holds a transaction. It is safe for
// concurrent use.
type Service struct {
	cfg   Config
	pw    *Passwords
	keys  Keyring
	mail  Mailer
	addrs *addressLimiter
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Keys == nil {
		return nil, errors.New("account: Config.Keys is required")
	}
	if cfg.Mailer == nil {
		return nil, errors.New("account: Config.Mailer is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("account: Config.BaseURL %q is not an http(s) URL", cfg.BaseURL)
	}
	var err error
	if cfg.Throttle, err = cfg.Throttle.withDefaults(); err != nil {
		return nil, err
	}
	if cfg.ResetMail, err = cfg.ResetMail.withDefaults(); err != nil {
		return nil, err
	}
	addrs, rate, err := newAddressLimiter(cfg.AddressRate)
	if err != nil {
		return nil, err
	}
	cfg.AddressRate = rate
	if cfg.FreshWindow == 0 {
		cfg.FreshWindow = FreshWindow
	}
	if cfg.HashPool == nil {
		if cfg.HashPool, err = NewHashPool(cfg.Hashing, cfg.Passwords); err != nil {
			return nil, err
		}
	}
	pw, err := NewPasswords(cfg.Passwords, cfg.HashPool)
	if err != nil {
		return nil, err
	}
	cfg.Passwords = pw.Params
	return &Service{cfg: cfg, pw: pw, keys: cfg.Keys, mail: cfg.Mailer, addrs: addrs}, nil
}

// Config returns the service's configuration with its defaults applied.
func (s *Service) Config() Config { return s.cfg }

// Passwords returns the service's password hasher.
func (s *Service) Passwords() *Passwords { return s.pw }

// Mailer returns the service's mailer.
func (s *Service) Mailer() Mailer { return s.mail }

// Keys returns the service's keyring.
func (s *Service) Keys() Keyring { return s.keys }

// Link returns the web app's address for path with a code parameter, as
// mailed to users: BaseURL + path + "?code=" + code.
func (s *Service) Link(path, code string) string {
	return s.cfg.BaseURL + path + "?code=" + url.QueryEscape(code)
}

// NormalizeEmail trims and lower-cases an email address.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// PasswordCredential is a user's password credential.
type PasswordCredential struct {
	UserID       string
	PasswordHash string
	// EmailVerifiedAt is nil until the user follows the verification link.
	EmailVerifiedAt   *time.Time
	PasswordChangedAt time.Time
}

// User returns user userID of tenantID; NOT_FOUND otherwise.
func (s *Service) User(ctx context.Context, st UserReader, tenantID, userID string) (access.User, error) {
	return st.UserGet(ctx, tenantID, userID)
}

// Workspace returns the principal's workspace; NOT_FOUND when it is not
// one of the principal's tenant.
func (s *Service) Workspace(ctx context.Context, st WorkspaceReader, p *access.Principal) (access.Workspace, error) {
	return st.WorkspaceGet(ctx, p.TenantID, p.WorkspaceID)
}
