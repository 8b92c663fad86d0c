// Package apikey owns developer API keys: creation with the plaintext shown
// once, rotation with an overlap window, revocation, deletion, per-key
// limits, and authentication of a presented key.
//
// A key is Test or Live (prefix platform_test_ or platform_live_), like
// Stripe's test and live keys; every object it creates carries its
// environment and it never sees the other environment's objects. The
// plaintext is never stored: each issued secret is kept as a keyed
// HMAC-SHA256 digest with a display prefix and its last four characters.
// Rotation issues a new secret under the same key id (the principal's
// stable identity for idempotency) and keeps the previous secret valid for
// an overlap window. Revocation and deletion take effect on the next
// request, on every host, because every request looks its key up.
//
// A key's authority is its scopes, never more than its creator could grant
// when it was made, and never more than its creator holds now: the gateway
// evaluates a key's requests against its creator's current membership.
package apikey

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/outbox"
)

// Prefixes of plaintext keys, by environment.
const (
	TestPrefix = "platform_test_"
	LivePrefix = "platform_live_"
)

// PrefixFor returns the plaintext prefix of env.
func PrefixFor(env access.Environment) string {
	if env == access.Live {
		return LivePrefix
	}
	return TestPrefix
}

// Status is a key's lifecycle state.
type Status string

const (
	// Active keys authenticate.
	Active Status = "active"
	// Revoked keys no longer authenticate; they remain listed.
	Revoked Status = "revoked"
	// Deleted keys neither authenticate nor appear in reads.
	Deleted Status = "deleted"
)

// Event moves a key between states.
type Event string

const (
	// EventRotate issues a new secret; the key stays active.
	EventRotate Event = "rotate"
	// EventRevoke stops a key from authenticating.
	EventRevoke Event = "revoke"
	// EventDelete removes a key from reads.
	EventDelete Event = "delete"
	// EventUpdate changes a key's name, scopes, metadata or limits.
	EventUpdate Event = "update"
)

// Move is one row of the key state machine.
type Move = fsm.Row[Status, Event]

// Moves is the key state machine; Transition enforces it and the
// architecture route serves it.
func Moves() []Move {
	return []Move{
		{From: Active, Event: EventUpdate, To: Active},
		{From: Active, Event: EventRotate, To: Active},
		{From: Active, Event: EventRevoke, To: Revoked},
		{From: Revoked, Event: EventRevoke, To: Revoked},
		{From: Active, Event: EventDelete, To: Deleted},
		{From: Revoked, Event: EventDelete, To: Deleted},
	}
}

// Limits are a key's request limits.
type Limits struct {
	// RequestsPerMinute bounds the request rate (enforced per host).
	RequestsPerMinute int `json:"requestsPerMinute" example:"600"`
	// MaxConcurrentRequests bounds requests in flight (enforced per host).
	MaxConcurrentRequests int `json:"maxConcurrentRequests" example:"16"`
	// MonthlyRequestBudget bounds requests per calendar month (UTC), counted
	// in the database across hosts.
	MonthlyRequestBudget int64 `json:"monthlyRequestBudget" example:"1000000"`
}

// Key is an API key's record. It never holds the plaintext.
type Key struct {
	ID              string
	TenantID        string
	WorkspaceID     string
	Environment     access.Environment
	Name            string
	Scopes          []string
	Metadata        map[string]string
	Status          Status
	Limits          Limits
	Internal        bool
	CreatedByUserID string
	CreatedByKeyID  string
	// Prefix and Last4 identify the current secret for display.
	Prefix     string
	Last4      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// Version counts changes, for outbox events.
	Version int64
}

// Secret is one issued plaintext, kept as a digest.
type Secret struct {
	Digest    string
	KeyID     string
	Prefix    string
	Last4     string
	CreatedAt time.Time
	// ExpiresAt is set when the secret was rotated out or revoked.
	ExpiresAt *time.Time
}

// Scope selects the keys a principal may see: its tenant, workspace and
// environment.
type Scope = access.Scope

// ScopeOf returns the scope of p.
func ScopeOf(p *access.Principal) Scope { return p.Scope() }

// Store is the port the key service writes through, bound to one unit of
// work.
type Store interface {
	outbox.Writer
	// Now is the unit of work's time.
	Now() time.Time
	// NewID returns a fresh identifier with prefix.
	NewID(prefix string) string
	// KeyInsert stores a new key and its first secret.
	KeyInsert(ctx context.Context, k Key, s Secret) error
	// KeyGet returns a key in scope that is not deleted, or NOT_FOUND.
	KeyGet(ctx context.Context, sc Scope, id string) (Key, error)
	// KeyList returns up to limit keys in scope with ids below before
	// ("" = from the newest), newest first, deleted keys excluded.
	KeyList(ctx context.Context, sc Scope, before string, limit int) ([]Key, error)
	// KeyUpdate writes k if the stored status is still from and the stored
	// version is k.Version-1; otherwise CONFLICT.
	KeyUpdate(ctx context.Context, k Key, from Status) error
	// KeySecretInsert stores a new secret of a key.
	KeySecretInsert(ctx context.Context, s Secret) error
	// KeySecretsExpire sets expires_at of the key's secrets other than
	// except to at, unless they already expire earlier.
	KeySecretsExpire(ctx context.Context, keyID, except string, at time.Time) error
	// AuthorityLoad reads a user's authority now (access.Store), for
	// comparing a key creator's authority with a rotating administrator's.
	AuthorityLoad(ctx context.Context, tenantID, workspaceID, userID string, env access.Environment) (access.Authority, error)
}

// AuthRecord is what one authentication lookup returns.
type AuthRecord struct {
	Key    Key
	Secret Secret
	// AuthzVersion is the authority version of the key's workspace, read in
	// the same round trip so the gateway needs no second query to check its
	// cached authority snapshot.
	AuthzVersion int64
}

// AuthStore is the port authentication reads through.
type AuthStore interface {
	// Now is the current time.
	Now() time.Time
	// KeyAuth returns the key owning the secret with digest, the secret and
	// the workspace's authority version; NOT_FOUND when no secret has it.
	// Only the fields authentication and limits need are filled.
	KeyAuth(ctx context.Context, digest string) (AuthRecord, error)
}
