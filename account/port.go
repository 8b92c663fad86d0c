package account

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
)

// The ports of sign-up, login, sessions, the handoff and password reset
// (package documentation, "Ports"). Every one is implemented by the store
// package's *Tx; methods list the error codes they return, and any other
// failure is INTERNAL.

// UserReader reads users.
type UserReader interface {
	// UserGet returns a user of tenantID; NOT_FOUND otherwise.
	UserGet(ctx context.Context, tenantID, userID string) (access.User, error)
}

// WorkspaceReader reads workspaces.
type WorkspaceReader interface {
	// WorkspaceGet returns a workspace of tenantID; NOT_FOUND otherwise.
	WorkspaceGet(ctx context.Context, tenantID, workspaceID string) (access.Workspace, error)
}

// CodeConsumer consumes single-use codes (ConsumeCode).
type CodeConsumer interface {
	// CodeConsume marks the unused, unexpired code of purpose with digest
	// used at at, atomically: of concurrent calls exactly one consumes it.
	// It returns the code and whether this call consumed it; a code that
	// was already used or has expired is returned with consumed false.
	// NOT_FOUND when no code of purpose has the digest.
	CodeConsume(ctx context.Context, purpose Purpose, digest string, at time.Time) (c Code, consumed bool, err error)
}

// ThrottleStore keeps the counters of the login throttle and the mail
// limits.
type ThrottleStore interface {
	// ThrottleUpdate runs fn on the counters of subjects (in that order;
	// the zero Throttle with Subject set for a subject without one) at the
	// unit of work's time, with their rows locked against concurrent
	// updates, and writes back the counters fn returns: one
	// read-modify-write, so concurrent updates never lose a count. On the
	// read handle it runs in a short transaction of its own. When fn fails
	// nothing is written and its error is returned.
	ThrottleUpdate(ctx context.Context, subjects []string, fn func(now time.Time, cur []Throttle) ([]Throttle, error)) error
}

// SignupStore is the port of sign-up and email verification. Signup looks
// the address up and counts notices on the read handle, and creates the
// account in its unit of work, both through this port.
type SignupStore interface {
	CodeConsumer
	ThrottleStore
	Now() time.Time
	NewID(prefix string) string
	// UserGetByEmail returns the user with email; NOT_FOUND when none.
	UserGetByEmail(ctx context.Context, email string) (access.User, error)
	// TenantInsert creates a tenant.
	TenantInsert(ctx context.Context, id, name string) error
	// UserInsert creates a user; CONFLICT if the email is taken.
	UserInsert(ctx context.Context, id, tenantID, email, displayName string) error
	// CredentialInsert stores a user's password credential; CONFLICT if the
	// user has one.
	CredentialInsert(ctx context.Context, c PasswordCredential) error
	// CredentialEmailVerified records that the user's email was verified at
	// at (keeping an earlier time); NOT_FOUND without a credential.
	CredentialEmailVerified(ctx context.Context, userID string, at time.Time) error
	// CodeInsert stores a single-use code (by digest).
	CodeInsert(ctx context.Context, c Code) error
}

// LoginStore is the port of login: the throttle counters and the
// credential are read on the read handle, and the session is opened in the
// unit of work, both through this port.
type LoginStore interface {
	ThrottleStore
	Now() time.Time
	NewID(prefix string) string
	// UserGetByEmail returns the user with email; NOT_FOUND when none.
	UserGetByEmail(ctx context.Context, email string) (access.User, error)
	// CredentialGet returns the user's credential; NOT_FOUND when none.
	CredentialGet(ctx context.Context, userID string) (PasswordCredential, error)
	// UserDefaultWorkspace returns the workspace a new session of userID
	// acts in: the oldest active membership, or "" when there is none.
	UserDefaultWorkspace(ctx context.Context, userID string) (string, error)
	// SessionInsert stores a new session.
	SessionInsert(ctx context.Context, s Session) error
}

// SessionReader reads a session with its user (CurrentSession).
type SessionReader interface {
	UserReader
	// SessionGet returns a session by id; NOT_FOUND when none.
	SessionGet(ctx context.Context, id string) (Session, error)
}

// SessionAdmin is the port of a signed-in user's own sessions: listing
// them and signing them out.
type SessionAdmin interface {
	Now() time.Time
	// SessionListActive returns the user's sessions that are neither revoked
	// nor expired at now, newest first.
	SessionListActive(ctx context.Context, userID string, now time.Time) ([]Session, error)
	// SessionRevoke revokes a session (and its access token) at at; a
	// session already revoked keeps its time. NOT_FOUND when none.
	SessionRevoke(ctx context.Context, id string, at time.Time) error
	// SessionRevokeOthers revokes every active session of userID except
	// keepID ("" revokes all) and returns how many it revoked.
	SessionRevokeOthers(ctx context.Context, userID, keepID string, at time.Time) (int, error)
}

// HandoffStore is the port of the web-to-studio handoff: a handoff code
// issued for a web session and exchanged for a studio session.
type HandoffStore interface {
	SessionReader
	CodeConsumer
	Now() time.Time
	NewID(prefix string) string
	// CodeInsert stores a single-use code (by digest).
	CodeInsert(ctx context.Context, c Code) error
	// SessionInsert stores a new session.
	SessionInsert(ctx context.Context, s Session) error
}

// ResetMailStore is the port of a forgotten password: finding the
// account, counting the mail limits and storing the reset code.
type ResetMailStore interface {
	ThrottleStore
	Now() time.Time
	// UserGetByEmail returns the user with email; NOT_FOUND when none.
	UserGetByEmail(ctx context.Context, email string) (access.User, error)
	// CodeInsert stores a single-use code (by digest).
	CodeInsert(ctx context.Context, c Code) error
}

// ResetStore is the port of a password reset's unit of work: the code is
// consumed, the credential set and every session of the user revoked.
type ResetStore interface {
	CodeConsumer
	Now() time.Time
	// CredentialGet returns the user's credential; NOT_FOUND when none.
	CredentialGet(ctx context.Context, userID string) (PasswordCredential, error)
	// CredentialInsert stores a user's password credential; CONFLICT if the
	// user has one.
	CredentialInsert(ctx context.Context, c PasswordCredential) error
	// CredentialPasswordSet replaces the password hash; NOT_FOUND without a
	// credential.
	CredentialPasswordSet(ctx context.Context, userID, hash string, at time.Time) error
	// CredentialEmailVerified records that the user's email was verified at
	// at (keeping an earlier time); NOT_FOUND without a credential.
	CredentialEmailVerified(ctx context.Context, userID string, at time.Time) error
	// SessionRevokeOthers revokes every active session of userID except
	// keepID ("" revokes all) and returns how many it revoked.
	SessionRevokeOthers(ctx context.Context, userID, keepID string, at time.Time) (int, error)
}

// sessionOpener is what opening a session writes through; LoginStore and
// HandoffStore hold it.
type sessionOpener interface {
	Now() time.Time
	NewID(prefix string) string
	SessionInsert(ctx context.Context, s Session) error
}

// UnitOfWork runs fn in one transaction on port S, committed when fn
// returns nil. The operations that hash passwords take one beside the read
// handle, so the deliberately slow hashing never holds a transaction.
type UnitOfWork[S any] func(ctx context.Context, fn func(st S) error) error
