package account

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Session kinds: the web app's cookie session and the studio app's, which
// is obtained only through a single-use handoff from a web session.
const (
	KindWeb    = "web"
	KindStudio = "studio"
)

// Credential formats. A session cookie's value is "s1.<random>.<signature>":
// the signature (a keyed HMAC) rejects forged cookies before any lookup, and
// the random part is stored only as a digest. An access token is
// "platform_at_<random>": a short-lived bearer credential bound to one
// session, for clients without cookies; it proves the user's session, not an
// application (the spec's "access token"), and is revoked with the session.
const (
	cookieVersion     = "s1."
	AccessTokenPrefix = "platform_at_"
	// CookieName is the session cookie's name.
	CookieName = "platform_session"
)

// Lifetimes (the spec leaves them open; Authentication 13).
const (
	// SessionLifetime bounds a session from its sign-in.
	SessionLifetime = 30 * 24 * time.Hour
	// AccessTokenLifetime bounds an access token from its issue.
	AccessTokenLifetime = time.Hour
	// touchEvery bounds how often a session's last use is written.
	touchEvery = time.Minute
)

// Session is a signed-in user on one device.
type Session struct {
	ID              string
	UserID          string
	TenantID        string
	WorkspaceID     string
	Kind            string
	CookieDigest    string
	TokenDigest     string
	TokenExpiresAt  *time.Time
	UserAgent       string
	ClientIP        string
	CreatedAt       time.Time
	LastSeenAt      time.Time
	AuthenticatedAt time.Time
	ExpiresAt       time.Time
	RevokedAt       *time.Time
}

// SessionAuth is what one session lookup returns.
type SessionAuth struct {
	Session Session
	// AuthzVersion is the authority version of the session's workspace, read
	// in the same round trip.
	AuthzVersion int64
}

// SessionStore is the port sessions are read and written through.
type SessionStore interface {
	Now() time.Time
	NewID(prefix string) string
	// SessionInsert stores a new session.
	SessionInsert(ctx context.Context, s Session) error
	// SessionByCookie and SessionByToken return the session owning the
	// digest with its workspace's authority version; NOT_FOUND otherwise.
	SessionByCookie(ctx context.Context, digest string) (SessionAuth, error)
	SessionByToken(ctx context.Context, digest string) (SessionAuth, error)
	// SessionTouch records the session's last use.
	SessionTouch(ctx context.Context, id string, at time.Time) error
}

// Keyring digests and signs credentials; secret.Keyring satisfies it.
type Keyring interface {
	Digest(credential string) string
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func random(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("account: crypto/rand failed: " + err.Error())
	}
	return strings.ToLower(b32.EncodeToString(b))
}

// signature is the cookie's signature over its random part.
func signature(k Keyring, body string) string {
	return k.Digest("cookie-signature:" + body)[:32]
}

// NewCookieValue returns a fresh signed cookie value and the digest to store.
func NewCookieValue(k Keyring) (value, digest string) {
	body := cookieVersion + random(32)
	value = body + "." + signature(k, body)
	return value, k.Digest(value)
}

// NewAccessToken returns a fresh access token and the digest to store.
func NewAccessToken(k Keyring) (token, digest string) {
	token = AccessTokenPrefix + random(25)
	return token, k.Digest(token)
}

// validCookie checks a cookie value's shape and signature in constant time.
func validCookie(k Keyring, value string) bool {
	if !strings.HasPrefix(value, cookieVersion) || len(value) > 256 {
		return false
	}
	i := strings.LastIndexByte(value, '.')
	if i <= len(cookieVersion) {
		return false
	}
	return hmac.Equal([]byte(value[i+1:]), []byte(signature(k, value[:i])))
}

// Authenticator resolves session cookies and access tokens into principals.
type Authenticator struct {
	Keys Keyring
}

// Credential is what a request presented.
type Credential struct {
	// Cookie is the session cookie's value; Token an access token.
	Cookie string
	Token  string
	// Environment is the mode the request asks for: sessions act in live
	// mode unless the request asks for test mode.
	Environment access.Environment
}

// Authenticate returns the principal of a cookie or access token. A
// malformed, forged, unknown or revoked credential is UNAUTHENTICATED; an
// expired session or token is SESSION_EXPIRED. Each refusal's details name
// the credential that failed ("session" or "access_token") and why
// ("malformed", "unknown", "signed_out" or "expired").
func (a Authenticator) Authenticate(ctx context.Context, st SessionStore, c Credential) (*access.Principal, SessionAuth, error) {
	const op = "account.Authenticate"
	refuse := func(code fault.Code, kind access.CredentialKind, reason, message string) error {
		return fault.E(op, code, message).With("credential", string(kind)).With("reason", reason)
	}
	var (
		sa   SessionAuth
		err  error
		kind access.CredentialKind
	)
	switch {
	case c.Token != "":
		if !strings.HasPrefix(c.Token, AccessTokenPrefix) || len(c.Token) > 128 {
			return nil, sa, refuse(fault.Unauthenticated, access.CredentialAccessToken, "malformed", "The access token is malformed.")
		}
		kind = access.CredentialAccessToken
		sa, err = st.SessionByToken(ctx, a.Keys.Digest(c.Token))
	case c.Cookie != "":
		if !validCookie(a.Keys, c.Cookie) {
			return nil, sa, refuse(fault.Unauthenticated, access.CredentialSession, "malformed", "The session cookie is not valid.")
		}
		kind = access.CredentialSession
		sa, err = st.SessionByCookie(ctx, a.Keys.Digest(c.Cookie))
	default:
		return nil, sa, fault.E(op, fault.Unauthenticated, "")
	}
	if fault.Is(err, fault.NotFound) {
		if kind == access.CredentialAccessToken {
			return nil, sa, refuse(fault.Unauthenticated, kind, "unknown", "The access token is not valid.")
		}
		return nil, sa, refuse(fault.Unauthenticated, kind, "unknown", "The session is not valid.")
	}
	if err != nil {
		return nil, sa, fault.Wrap(op, err)
	}
	s, now := sa.Session, st.Now()
	if s.RevokedAt != nil {
		if kind == access.CredentialAccessToken {
			return nil, sa, refuse(fault.Unauthenticated, kind, "signed_out", "The access token's session was signed out.")
		}
		return nil, sa, refuse(fault.Unauthenticated, kind, "signed_out", "The session was signed out.")
	}
	if !now.Before(s.ExpiresAt) {
		return nil, sa, refuse(fault.SessionExpired, kind, "expired", "The session has expired; sign in again.")
	}
	if kind == access.CredentialAccessToken && (s.TokenExpiresAt == nil || !now.Before(*s.TokenExpiresAt)) {
		return nil, sa, refuse(fault.SessionExpired, kind, "expired", "The access token has expired; sign in again.")
	}
	env := c.Environment
	if env == "" {
		env = access.Live
	}
	if now.Sub(s.LastSeenAt) >= touchEvery {
		if err := st.SessionTouch(ctx, s.ID, now); err != nil {
			return nil, sa, fault.Wrap(op, err)
		}
	}
	return &access.Principal{
		Kind: kind, TenantID: s.TenantID, WorkspaceID: s.WorkspaceID, Environment: env,
		UserID: s.UserID, SessionID: s.ID, AuthenticatedAt: s.AuthenticatedAt,
	}, sa, nil
}

// FreshWindow is how recent a sign-in must be for routes that require fresh
// authentication, unless configured otherwise.
const FreshWindow = 10 * time.Minute

// RequireFresh returns REAUTHENTICATION_REQUIRED unless p signed in within
// window of now. API keys never pass: a fresh sign-in is a user's act.
func RequireFresh(p *access.Principal, now time.Time, window time.Duration) error {
	const op = "account.RequireFresh"
	if p == nil || p.Kind == access.CredentialAPIKey || p.AuthenticatedAt.IsZero() || now.Sub(p.AuthenticatedAt) > window {
		return fault.E(op, fault.ReauthenticationRequired, "Sign in again to continue; this action needs a recent sign-in.").
			With("maxAgeSeconds", int64(window/time.Second))
	}
	return nil
}
