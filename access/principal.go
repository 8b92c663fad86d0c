package access

import "time"

// Environment separates test data from live data, as Stripe's test and live
// modes do. Every record carries the environment of the principal that
// created it, and every read is scoped by it.
type Environment string

const (
	// Test is the sandbox environment: simulators, test clusters, test credits.
	Test Environment = "test"
	// Live is the production environment.
	Live Environment = "live"
)

// Valid reports whether e is Test or Live.
func (e Environment) Valid() bool { return e == Test || e == Live }

// CredentialKind says how a principal authenticated.
type CredentialKind string

const (
	// CredentialAPIKey is a developer API key (platform_test_ / platform_live_).
	CredentialAPIKey CredentialKind = "api_key"
	// CredentialSession is a signed web or studio session cookie.
	CredentialSession CredentialKind = "session"
	// CredentialAccessToken is a short-lived bearer token bound to a session.
	CredentialAccessToken CredentialKind = "access_token"
)

// Principal is the authenticated caller of one request, resolved on the
// server from the credential alone. It is passed explicitly to domain
// methods; nothing the client sends beyond the credential feeds it.
type Principal struct {
	// Kind says which credential authenticated the caller.
	Kind CredentialKind
	// TenantID and WorkspaceID scope every read and write.
	TenantID    string
	WorkspaceID string
	// Environment is the key's environment, or the session's chosen mode.
	Environment Environment
	// UserID is the signed-in user, or the user who created the API key.
	UserID string
	// KeyID is the API key's id when Kind is CredentialAPIKey. Rotation keeps it.
	KeyID string
	// SessionID is the session's id for session and access-token principals.
	SessionID string
	// Scopes are an API key's scopes; empty for sessions.
	Scopes []string
	// AuthenticatedAt is when the session last signed in (fresh-auth checks).
	AuthenticatedAt time.Time
	// AuthzVersion is the workspace's authority version, read with the
	// credential (zero when none was read). Every change to who may act
	// in the workspace, or to its provider credentials, raises it, so
	// state a host caches under it is never stale.
	AuthzVersion int64
}

// Scope is the tenant, workspace and environment a record belongs to and a
// read is confined to. Every domain scopes its rows by it.
type Scope struct {
	TenantID    string
	WorkspaceID string
	Environment Environment
}

// Scope returns the scope the principal acts in.
func (p *Principal) Scope() Scope {
	return Scope{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: p.Environment}
}

// StableID is the principal's identity for idempotency: the API key id (which
// rotation keeps) for keys, the user id for sessions.
func (p *Principal) StableID() string {
	if p.Kind == CredentialAPIKey {
		return "key:" + p.KeyID
	}
	return "user:" + p.UserID
}

// HasScope reports whether an API key principal holds scope.
func (p *Principal) HasScope(scope string) bool {
	for _, s := range p.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}
