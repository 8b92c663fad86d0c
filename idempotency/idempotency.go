// Package idempotency defines the platform's idempotency rule, as Stripe's:
// a client sends Idempotency-Key on a mutation; the first request with that
// key executes and its response is stored in the same transaction as its
// effects; a retry with the same key and the same request replays the stored
// status, body and the route's documented response headers (and header
// Idempotent-Replayed: true); the same key with a
// different request, or from a different principal, is 409
// IDEMPOTENCY_CONFLICT and never sees the first answer.
//
// Scope is tenant + workspace + environment + endpoint + key (the spec's
// idempotency domain). The request hash is an HMAC under the server pepper
// over the canonical JSON body (sorted keys, no insignificant whitespace),
// the path parameters and the principal's stable id (the user, or the API
// key's id, which rotation keeps), so a retry after re-login or key rotation
// recovers the same operation.
//
// Only executions that succeed are recorded: a request rejected by
// validation or a domain rule rolls back with its effects and may be retried
// with the same key (Stripe records nothing for requests that fail
// validation either). The record is written once, with its response, after
// the handler's writes (one statement, not a claim and a later update):
// the transaction's other writes are rolled back with it if the key is
// taken. Concurrent duplicates converge on one execution:
// the record's unique index makes the later transactions wait for the
// first (or, on SQLite's single writer, run after it) and then replay its
// answer.
//
// Records are kept for the configured retention (at least 24 hours) and then
// pruned by the package's job (JobPrune), hourly, with the spent sign-in and
// mail throttle counters, which are housekeeping of the same kind.
package idempotency

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Header is the request header carrying the key.
const Header = "Idempotency-Key"

// ReplayedHeader marks a replayed response.
const ReplayedHeader = "Idempotent-Replayed"

// MaxKeyLen bounds a key's length, as Stripe does.
const MaxKeyLen = 255

// MinRetention is the shortest retention the platform accepts.
const MinRetention = 24 * time.Hour

// Scope is the tenant, workspace and environment a record belongs to.
type Scope struct {
	TenantID    string
	WorkspaceID string
	Environment string
}

// Record is one stored execution.
type Record struct {
	ID          string
	Scope       Scope
	Endpoint    string
	Key         string
	RequestHash string
	// Status and Body are the stored response (the success envelope's data).
	Status int
	Body   []byte
	// Headers are the response headers the route documents that the
	// handler set (a payment response, say), replayed with the body; nil
	// when none. They are never sealed, so a route keeps secrets out of
	// its headers.
	Headers map[string]string
	// Sealed says Body is AES-256-GCM sealed because it carries a one-time secret.
	Sealed    bool
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Store is the port the gateway uses, on the transaction of the mutation.
type Store interface {
	// IdempotencyInsert inserts r, a completed execution with its
	// response, unless a record with its scope, endpoint and key exists; it
	// reports whether it inserted. On PostgreSQL a concurrent uncommitted
	// insert of the same key makes it wait for that transaction to finish.
	IdempotencyInsert(ctx context.Context, r Record) (bool, error)
	// IdempotencyGet returns the record, or NOT_FOUND.
	IdempotencyGet(ctx context.Context, s Scope, endpoint, key string) (Record, error)
	// IdempotencyPrune deletes up to limit records that expired before t.
	IdempotencyPrune(ctx context.Context, before time.Time, limit int) (int, error)
}

// ValidKey checks a client's key: 1 to MaxKeyLen printable ASCII characters.
func ValidKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fault.E("idempotency.ValidKey", fault.InvalidInput, "Idempotency-Key must be 1 to 255 printable ASCII characters.").With("field", Header)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return fault.E("idempotency.ValidKey", fault.InvalidInput, "Idempotency-Key must be 1 to 255 printable ASCII characters.").With("field", Header)
		}
	}
	return nil
}

// Canonical returns the canonical form of a JSON body: object keys sorted,
// numbers kept exactly as written, no insignificant whitespace. An empty body
// is canonical as itself.
func Canonical(body []byte) ([]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Hasher computes request hashes; secret.Keyring satisfies it.
type Hasher interface {
	IdempotencyHash(parts ...[]byte) string
}

// RequestHash binds the principal, the endpoint, the path parameters and the
// canonical body.
func RequestHash(h Hasher, principalID, endpoint string, params []string, canonicalBody []byte) string {
	parts := [][]byte{[]byte(principalID), []byte(endpoint)}
	for _, p := range params {
		parts = append(parts, []byte(p))
	}
	parts = append(parts, canonicalBody)
	return h.IdempotencyHash(parts...)
}

// Receipt is the durable record of one mutation request, written in the
// request's unit of work whatever its outcome, so that an operator can tell
// which requests reached the platform and what each answered.
type Receipt struct {
	// RequestID is the request's X-Request-Id.
	RequestID string
	// TenantID, WorkspaceID and Environment scope the request; empty for an
	// anonymous caller.
	TenantID    string
	WorkspaceID string
	Environment string
	// Principal is the caller's stable id (access.Principal.StableID).
	Principal string
	// Method and OperationID name the route.
	Method      string
	OperationID string
	// Status is the HTTP status answered.
	Status int
}
