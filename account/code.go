package account

import (
	"context"
	"strings"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Purpose says what a single-use code is for.
type Purpose string

// Code purposes.
const (
	// PurposeVerifyEmail codes verify a new account's email address.
	PurposeVerifyEmail Purpose = "verify_email"
	// PurposePasswordReset codes set a new password.
	PurposePasswordReset Purpose = "password_reset"
	// PurposeHandoff codes exchange a web session for a studio session.
	PurposeHandoff Purpose = "handoff"
)

// Reasons a code is refused, in the details.reason of INVALID_INPUT.
const (
	// CodeUnknown: no code of this purpose has that value.
	CodeUnknown = "unknown"
	// CodeUsed: the code was already used.
	CodeUsed = "used"
	// CodeExpired: the code's lifetime has passed.
	CodeExpired = "expired"
)

// Code is a single-use code as stored: only its digest, never its value.
type Code struct {
	Digest      string
	Purpose     Purpose
	UserID      string
	Email       string
	TenantID    string
	WorkspaceID string
	SessionID   string
	// Payload is purpose-specific JSON ("{}" when empty).
	Payload   string
	CreatedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// codePrefix marks code values so that a code pasted into the wrong form is
// recognizably a code.
const codePrefix = "pc_"

// CodeDigest returns the digest a code value is stored under.
func CodeDigest(k Keyring, value string) string { return k.Digest("account-code:" + value) }

// NewCode returns a fresh random code value (160 bits) and the stored record
// for it, created at now and expiring after lifetime. The caller fills the
// record's subject fields and inserts it.
func NewCode(k Keyring, purpose Purpose, now time.Time, lifetime time.Duration) (value string, c Code) {
	value = codePrefix + random(20)
	return value, Code{Digest: CodeDigest(k, value), Purpose: purpose, Payload: "{}", CreatedAt: now, ExpiresAt: now.Add(lifetime)}
}

// ConsumeCode consumes the code value of purpose in st at now. An unknown,
// used or expired code is INVALID_INPUT with details.field set to field and
// details.reason to CodeUnknown, CodeUsed or CodeExpired.
func ConsumeCode(ctx context.Context, st CodeConsumer, k Keyring, purpose Purpose, value, field string, now time.Time) (Code, error) {
	const op = "account.ConsumeCode"
	value = strings.TrimSpace(value)
	if !strings.HasPrefix(value, codePrefix) || len(value) > 64 {
		return Code{}, codeRefused(op, field, CodeUnknown)
	}
	c, consumed, err := st.CodeConsume(ctx, purpose, CodeDigest(k, value), now)
	switch {
	case fault.Is(err, fault.NotFound):
		return Code{}, codeRefused(op, field, CodeUnknown)
	case err != nil:
		return Code{}, fault.Wrap(op, err)
	case consumed:
		return c, nil
	case c.UsedAt != nil:
		return Code{}, codeRefused(op, field, CodeUsed)
	default:
		return Code{}, codeRefused(op, field, CodeExpired)
	}
}

func codeRefused(op, field, reason string) error {
	msg := map[string]string{
		CodeUnknown: "The code is not valid.",
		CodeUsed:    "The code was already used.",
		CodeExpired: "The code has expired; ask for a new one.",
	}[reason]
	return fault.Invalid(op, field, msg).With("reason", reason)
}
