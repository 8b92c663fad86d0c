// Package policy owns immutable, versioned policy documents: the one
// mechanism the fee, pricing, routing and payment policies use (spec,
// Architecture records and Versioning: "policy id, integer version, content
// hash; immutable; historical commercial and reward outcomes keep the
// versions and hashes they used").
//
// A policy is identified by an id such as "fees.marketplace",
// "pricing.generation" or "credits.packs" within a Scope: an environment
// (test or live, so a test-mode experiment never changes a live outcome) and
// optionally a tenant ("" is platform-wide). Each publication of new content
// in a scope appends version N+1; versions are never updated or deleted.
//
// Content is stored in canonical JSON (object keys sorted, no insignificant
// whitespace, numbers kept exactly as written; idempotency.Canonical) and
// its hash is the lower-case hex SHA-256 of those bytes, so the same
// document always hashes the same however the caller spelled it.
//
// Publish rules:
//   - content equal to the current version's publishes nothing and returns
//     the current version with created=false;
//   - any other content, including content equal to an older version (a
//     revert is a new decision), creates version N+1;
//   - concurrent publishes converge: versions are unique per (scope, id,
//     version), a publisher that loses the race re-reads the current version
//     and either returns it (same content) or appends after it.
//
// An outcome that applied a policy records its Ref (id, version, hash) so
// the decision can be explained and re-derived later.
package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/idempotency"
)

// MaxContentBytes bounds a policy document's canonical JSON.
const MaxContentBytes = 64 << 10

// MaxHistory bounds one History read: a page of at most 100 versions and
// one more, by which a pager tells whether more follow.
const MaxHistory = 101

// publishAttempts bounds how often Publish retries after losing a race.
const publishAttempts = 5

// idPattern is the form of a policy id: dot-separated lower-case segments,
// for example "fees.marketplace".
var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)

// Scope is where a policy applies: an environment and, optionally, one
// tenant. TenantID "" means platform-wide.
type Scope struct {
	// Environment is test or live. Required.
	Environment access.Environment
	// TenantID narrows the policy to one tenant; "" is platform-wide.
	TenantID string
}

// Ref is what an outcome records about the policy it applied. Domains embed
// it in their records.
type Ref struct {
	// ID is the policy id, such as "fees.marketplace".
	ID string `json:"id" example:"fees.marketplace"`
	// Version is the integer version applied (1, 2, ...).
	Version int `json:"version" example:"1"`
	// Hash is the hex SHA-256 of the version's canonical content.
	Hash string `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
}

// Version is one immutable version of a policy.
type Version struct {
	// Scope is where the policy applies.
	Scope Scope
	// ID is the policy id.
	ID string
	// Version numbers versions of (Scope, ID) from 1 without gaps.
	Version int
	// Hash is the hex SHA-256 of Content.
	Hash string
	// Content is the canonical JSON document.
	Content json.RawMessage
	// CreatedAt is when the version was published (the unit of work's time).
	CreatedAt time.Time
	// CreatedBy names the publishing principal (a user id, an API key id, or
	// "system:..." for configuration).
	CreatedBy string
}

// Ref returns the reference an outcome records.
func (v Version) Ref() Ref { return Ref{ID: v.ID, Version: v.Version, Hash: v.Hash} }

// Decode unmarshals the version's content into dst.
func (v Version) Decode(dst any) error {
	if err := json.Unmarshal(v.Content, dst); err != nil {
		return fmt.Errorf("policy %s v%d: decode content: %w", v.ID, v.Version, err)
	}
	return nil
}

// HistoryParams select a page of a policy's versions, newest first.
type HistoryParams struct {
	// Before, when positive, lists versions lower than it (the keyset cursor).
	Before int
	// Limit bounds the read; 1..MaxHistory.
	Limit int
}

// Store is the policy port, implemented by the store on a unit of work. It
// is the seam between this package and SQL, not a stable API.
type Store interface {
	// PolicyInsert stores v (Version, Hash and Content set by the caller)
	// with CreatedAt = the unit of work's time. When (scope, id, version)
	// exists it stores nothing and returns inserted=false.
	PolicyInsert(ctx context.Context, v Version) (stored Version, inserted bool, err error)
	// PolicyCurrent returns the highest version of (scope, id); NOT_FOUND
	// when none was published.
	PolicyCurrent(ctx context.Context, s Scope, id string) (Version, error)
	// PolicyGet returns one version; NOT_FOUND when it does not exist.
	PolicyGet(ctx context.Context, s Scope, id string, version int) (Version, error)
	// PolicyHistory returns versions of (scope, id), newest first, lower
	// than p.Before when it is positive, at most p.Limit of them.
	PolicyHistory(ctx context.Context, s Scope, id string, p HistoryParams) ([]Version, error)
}

// ValidateID reports whether id is a well-formed policy id (INVALID_INPUT
// naming field "policyId" otherwise).
func ValidateID(id string) error {
	if len(id) == 0 || len(id) > 64 || !idPattern.MatchString(id) {
		return fault.Invalid("policy.ValidateID", "policyId", "A policy id is 1-64 characters of dot-separated lower-case segments, such as fees.marketplace.")
	}
	return nil
}

func validateScope(op string, s Scope) error {
	if !s.Environment.Valid() {
		return fault.Invalid(op, "environment", "The policy's environment must be test or live.")
	}
	return nil
}

// Canonicalize returns content's canonical JSON and its hash. content is a
// json.RawMessage or []byte holding JSON, or any value json.Marshal accepts.
// Null, empty and invalid documents are INVALID_INPUT, as are documents
// larger than MaxContentBytes.
func Canonicalize(content any) (json.RawMessage, string, error) {
	const op = "policy.Canonicalize"
	var raw []byte
	switch c := content.(type) {
	case json.RawMessage:
		raw = c
	case []byte:
		raw = c
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return nil, "", fault.Invalid(op, "content", "The policy content cannot be encoded as JSON.")
		}
		raw = b
	}
	canon, err := idempotency.Canonical(raw)
	if err != nil {
		return nil, "", fault.Invalid(op, "content", "The policy content must be valid JSON.")
	}
	if len(canon) == 0 || string(canon) == "null" {
		return nil, "", fault.Invalid(op, "content", "The policy content must not be empty.")
	}
	if len(canon) > MaxContentBytes {
		return nil, "", fault.Invalid(op, "content", "The policy content is too large.").With("maxBytes", MaxContentBytes)
	}
	sum := sha256.Sum256(canon)
	return json.RawMessage(canon), hex.EncodeToString(sum[:]), nil
}

// Publish makes content the current version of policy id in scope s, on the
// caller's unit of work st, published by actor. It returns the current
// version afterwards and whether this call created it (see the package doc
// for the rules). INVALID_INPUT for a bad id, scope, actor or content;
// CONFLICT when it kept losing races to other publishers.
func Publish(ctx context.Context, st Store, s Scope, id string, content any, actor string) (Version, bool, error) {
	const op = "policy.Publish"
	if err := ValidateID(id); err != nil {
		return Version{}, false, fault.Wrap(op, err)
	}
	if err := validateScope(op, s); err != nil {
		return Version{}, false, err
	}
	if actor == "" {
		return Version{}, false, fault.Invalid(op, "createdBy", "The publishing principal is required.")
	}
	canon, hash, err := Canonicalize(content)
	if err != nil {
		return Version{}, false, fault.Wrap(op, err)
	}
	for range publishAttempts {
		next := 1
		cur, err := st.PolicyCurrent(ctx, s, id)
		switch {
		case err == nil && cur.Hash == hash:
			return cur, false, nil
		case err == nil:
			next = cur.Version + 1
		case !fault.Is(err, fault.NotFound):
			return Version{}, false, fault.Wrap(op, err)
		}
		v, inserted, err := st.PolicyInsert(ctx, Version{Scope: s, ID: id, Version: next, Hash: hash, Content: canon, CreatedBy: actor})
		if err != nil {
			return Version{}, false, fault.Wrap(op, err)
		}
		if inserted {
			return v, true, nil
		}
		// Another publisher took version next: re-read and decide again.
	}
	return Version{}, false, fault.E(op, fault.Conflict, "The policy is being published concurrently; retry.")
}

// Current returns the current version of policy id in scope s; NOT_FOUND
// when none was published.
func Current(ctx context.Context, st Store, s Scope, id string) (Version, error) {
	const op = "policy.Current"
	if err := ValidateID(id); err != nil {
		return Version{}, fault.Wrap(op, err)
	}
	if err := validateScope(op, s); err != nil {
		return Version{}, err
	}
	v, err := st.PolicyCurrent(ctx, s, id)
	if err != nil {
		return Version{}, fault.Wrap(op, err)
	}
	return v, nil
}

// Get returns one version of policy id in scope s; NOT_FOUND when it does
// not exist, INVALID_INPUT for a version below 1.
func Get(ctx context.Context, st Store, s Scope, id string, version int) (Version, error) {
	const op = "policy.Get"
	if err := ValidateID(id); err != nil {
		return Version{}, fault.Wrap(op, err)
	}
	if err := validateScope(op, s); err != nil {
		return Version{}, err
	}
	if version < 1 {
		return Version{}, fault.Invalid(op, "version", "Policy versions start at 1.")
	}
	v, err := st.PolicyGet(ctx, s, id, version)
	if err != nil {
		return Version{}, fault.Wrap(op, err)
	}
	return v, nil
}

// Resolve returns the version a Ref names and checks its hash: an outcome
// re-derived from a Ref uses exactly the content it recorded. NOT_FOUND when
// the version does not exist; CONFLICT when its hash differs from the Ref's.
func Resolve(ctx context.Context, st Store, s Scope, r Ref) (Version, error) {
	const op = "policy.Resolve"
	v, err := Get(ctx, st, s, r.ID, r.Version)
	if err != nil {
		return Version{}, fault.Wrap(op, err)
	}
	if v.Hash != r.Hash {
		return Version{}, fault.E(op, fault.Conflict, "The policy version's hash does not match the reference.")
	}
	return v, nil
}

// History returns versions of policy id in scope s, newest first (see
// HistoryParams). A Limit outside 1..MaxHistory is INVALID_INPUT.
func History(ctx context.Context, st Store, s Scope, id string, p HistoryParams) ([]Version, error) {
	const op = "policy.History"
	if err := ValidateID(id); err != nil {
		return nil, fault.Wrap(op, err)
	}
	if err := validateScope(op, s); err != nil {
		return nil, err
	}
	if p.Limit < 1 || p.Limit > MaxHistory {
		return nil, fault.Invalid(op, "limit", fmt.Sprintf("The limit must be between 1 and %d.", MaxHistory)).With("max", MaxHistory)
	}
	vs, err := st.PolicyHistory(ctx, s, id, p)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return vs, nil
}
