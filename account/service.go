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
// the web-to-studio handoff. Its methods take the unit of work they run in
// as a Store; the few that hash passwords take the read handle and a
// UnitOfWork, so the deliberately slow hashing never holds a transaction.
// It is safe for concurrent use.
type Service struct {
	cfg   Config
	pw    *Passwords
	keys  Keyring
	mail  Mailer
	addrs *addressLimiter
}

// UnitOfWork runs fn in one transaction, committed when fn returns nil.
type UnitOfWork func(ctx context.Context, fn func(st Store) error) error

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

// Store is the port the account service reads and writes through; the
// store package's *Tx implements it. Methods list the error codes they
// return; any other failure is INTERNAL.
type Store interface {
	SessionStore
	// TenantInsert creates a tenant.
	TenantInsert(ctx context.Context, id, name string) error
	// UserInsert creates a user; CONFLICT if the email is taken.
	UserInsert(ctx context.Context, id, tenantID, email, displayName string) error
	// UserGet returns a user of tenantID; NOT_FOUND otherwise.
	UserGet(ctx context.Context, tenantID, userID string) (access.User, error)
	// UserGetByEmail returns the user with email; NOT_FOUND when none.
	UserGetByEmail(ctx context.Context, email string) (access.User, error)
	// UserDefaultWorkspace returns the workspace a new session of userID
	// acts in: the oldest active membership, or "" when there is none.
	UserDefaultWorkspace(ctx context.Context, userID string) (string, error)

	// CredentialInsert stores a user's password credential; CONFLICT if the
	// user has one.
	CredentialInsert(ctx context.Context, c PasswordCredential) error
	// CredentialGet returns the user's credential; NOT_FOUND when none.
	CredentialGet(ctx context.Context, userID string) (PasswordCredential, error)
	// CredentialEmailVerified records that the user's email was verified at
	// at (keeping an earlier time); NOT_FOUND without a credential.
	CredentialEmailVerified(ctx context.Context, userID string, at time.Time) error
	// CredentialPasswordSet replaces the password hash; NOT_FOUND without a
	// credential.
	CredentialPasswordSet(ctx context.Context, userID, hash string, at time.Time) error

	// CodeInsert stores a single-use code (by digest).
	CodeInsert(ctx context.Context, c Code) error
	// CodeConsume marks the unused, unexpired code of purpose with digest
	// used at at, atomically: of concurrent calls exactly one consumes it.
	// It returns the code and whether this call consumed it; a code that
	// was already used or has expired is returned with consumed false.
	// NOT_FOUND when no code of purpose has the digest.
	CodeConsume(ctx context.Context, purpose Purpose, digest string, at time.Time) (c Code, consumed bool, err error)

	// SessionGet returns a session by id; NOT_FOUND when none.
	SessionGet(ctx context.Context, id string) (Session, error)
	// SessionListActive returns the user's sessions that are neither revoked
	// nor expired at now, newest first.
	SessionListActive(ctx context.Context, userID string, now time.Time) ([]Session, error)
	// SessionRevoke revokes a session (and its access token) at at; a
	// session already revoked keeps its time. NOT_FOUND when none.
	SessionRevoke(ctx context.Context, id string, at time.Time) error
	// SessionRevokeOthers revokes every active session of userID except
	// keepID ("" revokes all) and returns how many it revoked.
	SessionRevokeOthers(ctx context.Context, userID, keepID string, at time.Time) (int, error)
	// SessionWorkspaceSet points a session at a workspace (after onboarding
	// or accepting an invitation): its next request acts there. NOT_FOUND
	// when the session does not exist.
	SessionWorkspaceSet(ctx context.Context, id, workspaceID string) error

	// ThrottleUpdate runs fn on the counters of subjects (in that order;
	// the zero Throttle with Subject set for a subject without one) at the
	// unit of work's time, with their rows locked against concurrent
	// updates, and writes back the counters fn returns: one
	// read-modify-write, so concurrent updates never lose a count. On the
	// read handle it runs in a short transaction of its own. When fn fails
	// nothing is written and its error is returned.
	ThrottleUpdate(ctx context.Context, subjects []string, fn func(now time.Time, cur []Throttle) ([]Throttle, error)) error
}

// UserReader reads users.
type UserReader interface {
	// UserGet returns a user of tenantID; NOT_FOUND otherwise.
	UserGet(ctx context.Context, tenantID, userID string) (access.User, error)
}

// User returns user userID of tenantID; NOT_FOUND otherwise.
func (s *Service) User(ctx context.Context, st UserReader, tenantID, userID string) (access.User, error) {
	return st.UserGet(ctx, tenantID, userID)
}

// WorkspaceReader reads workspaces.
type WorkspaceReader interface {
	// WorkspaceGet returns a workspace of tenantID; NOT_FOUND otherwise.
	WorkspaceGet(ctx context.Context, tenantID, workspaceID string) (access.Workspace, error)
}

// Workspace returns the principal's workspace; NOT_FOUND when it is not
// one of the principal's tenant.
func (s *Service) Workspace(ctx context.Context, st WorkspaceReader, p *access.Principal) (access.Workspace, error) {
	return st.WorkspaceGet(ctx, p.TenantID, p.WorkspaceID)
}
