package apikey

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/outbox"
)

// Digester computes keyed digests of credentials; secret.Keyring satisfies it.
type Digester interface {
	Digest(credential string) string
}

// MaxRotationOverlap is the longest a rotated-out secret may keep working:
// 7 days. The rotate route's schema publishes it as the maximum of
// expireCurrentAfterSeconds; a host may lower it (Config.MaxRotationOverlap)
// but never raise it.
const MaxRotationOverlap = 7 * 24 * time.Hour

// Config configures the key service. Zero values take the documented defaults.
type Config struct {
	// RotationOverlap is how long a rotated-out secret keeps working when the
	// request names no overlap. Zero means 24 hours.
	RotationOverlap time.Duration
	// MaxRotationOverlap bounds a requested overlap. Zero, or more than
	// MaxRotationOverlap (the published maximum), means MaxRotationOverlap.
	MaxRotationOverlap time.Duration
	// DefaultLimits apply to new keys that name none. Zero fields take
	// 600 requests per minute, 16 concurrent requests, 1,000,000 per month.
	DefaultLimits Limits
	// MaxLimits bound what a key may be given. Zero fields take 6,000 per
	// minute, 256 concurrent, 100,000,000 per month.
	MaxLimits Limits
}

func (c Config) withDefaults() Config {
	if c.RotationOverlap == 0 {
		c.RotationOverlap = 24 * time.Hour
	}
	if c.MaxRotationOverlap <= 0 || c.MaxRotationOverlap > MaxRotationOverlap {
		c.MaxRotationOverlap = MaxRotationOverlap
	}
	if c.RotationOverlap > c.MaxRotationOverlap {
		c.RotationOverlap = c.MaxRotationOverlap
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.DefaultLimits.RequestsPerMinute, 600)
	def(&c.DefaultLimits.MaxConcurrentRequests, 16)
	if c.DefaultLimits.MonthlyRequestBudget == 0 {
		c.DefaultLimits.MonthlyRequestBudget = 1_000_000
	}
	def(&c.MaxLimits.RequestsPerMinute, 6000)
	def(&c.MaxLimits.MaxConcurrentRequests, 256)
	if c.MaxLimits.MonthlyRequestBudget == 0 {
		c.MaxLimits.MonthlyRequestBudget = 100_000_000
	}
	return c
}

// Service manages keys.
type Service struct {
	cfg    Config
	digest Digester
}

// New returns a key service.
func New(cfg Config, d Digester) *Service {
	return &Service{cfg: cfg.withDefaults(), digest: d}
}

// DefaultLimits reports the limits given to keys that name none.
func (s *Service) DefaultLimits() Limits { return s.cfg.DefaultLimits }

// Transition returns the state ev moves from to, or INVALID_STATE_TRANSITION.
func Transition(from Status, ev Event) (Status, error) {
	to, err := fsm.New("apikey.Transition", "A key", Moves()).Transition(from, ev)
	if err != nil {
		// Keys name the refusal by the key's status, as the key routes
		// document it.
		return "", fault.E("apikey.Transition", fault.InvalidState, fmt.Sprintf("A %s key cannot be %sd.", from, ev)).
			With("status", string(from))
	}
	return to, nil
}

// CreateInput is the body of POST /api/v1/api-keys.
type CreateInput struct {
	// Name labels the key (1 to 100 characters).
	Name string `json:"name" example:"CI pipeline"`
	// Environment is test or live; it defaults to the caller's environment.
	Environment access.Environment `json:"environment,omitempty" example:"test"`
	// Scopes the key holds; each must be within the caller's authority.
	Scopes []string `json:"scopes" example:"keys:read"`
	// Metadata is up to 20 string pairs for the caller's own use.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Limits override the default limits.
	Limits *Limits `json:"limits,omitempty"`
}

// UpdateInput is the body of PATCH /api/v1/api-keys/{keyId}; absent fields
// are unchanged.
type UpdateInput struct {
	// Name is the key's new label (1 to 100 characters); absent keeps it.
	Name *string `json:"name,omitempty" example:"CI pipeline (renamed)"`
	// Scopes replace the key's scopes, each within the caller's authority;
	// absent keeps them.
	Scopes []string `json:"scopes,omitempty" example:"keys:read"`
	// Metadata replaces the key's metadata (up to 20 string pairs); absent
	// keeps it.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// RotateInput is the body of POST /api/v1/api-keys/{keyId}/rotate.
type RotateInput struct {
	// ExpireCurrentAfterSeconds is how long the current secret keeps working
	// (0 = at once), at most 604800 (7 days); a value outside 0..604800 is
	// INVALID_INPUT. Absent means the configured overlap (24 hours by
	// default).
	ExpireCurrentAfterSeconds *int64 `json:"expireCurrentAfterSeconds,omitempty" example:"3600" minimum:"0" maximum:"604800"`
}

// Caller is who acts: the principal, its authority now (for a key, its
// creator's) and the workspace scopes it may grant (access.ScopesFor of its
// authority, narrowed by its own scopes for keys). CallerOf builds one.
type Caller struct {
	Principal *access.Principal
	// Authority is the principal's authority snapshot, read on this
	// request; rotation compares it with the key creator's.
	Authority *access.Authority
	// Grantable are the scopes the caller may put on a key, and so the
	// scopes of the keys it may manage.
	Grantable []string
}

// CallerOf returns the caller p with authority a: what it may grant is
// access.ScopesFor(a), narrowed by p's own scopes when p is a key (a key
// never grants or manages more than it holds).
func CallerOf(p *access.Principal, a *access.Authority) Caller {
	grantable := access.ScopesFor(a)
	if p.Kind == access.CredentialAPIKey {
		grantable = slices.DeleteFunc(grantable, func(s string) bool { return !p.HasScope(s) })
	}
	return Caller{Principal: p, Authority: a, Grantable: grantable}
}

// Management decisions: who may manage which key.
//
// A key acts with its creator's authority narrowed by its scopes, so
// managing a key is managing that authority. A caller may update, re-limit,
// revoke or delete a key only when every scope of the key is within what
// the caller may grant now (the check Create makes); otherwise the call is
// ACCESS_DENIED with details.reason "key_exceeds_caller", and nothing
// changes. Two exceptions only ever take authority away: a key may revoke or
// delete itself, and a signed-in user may revoke or delete keys made on
// their own authority (by their sessions or their keys) after losing some of
// it.
//
// Rotation hands a new secret of that authority to the caller, so it needs
// more: the key's scopes within the caller's grantable scopes, and the key
// made on the caller's own authority (the same user, through a session or a
// key; for a key, the scope check already bounds it by its own scopes) or,
// for a workspace administrator (OWNER or ADMIN), a key whose authority the
// caller holds in full (access.Authority.Covers against the creator's
// authority read in the same unit of work). Otherwise ACCESS_DENIED with
// details.reason "not_key_creator" or "creator_authority_exceeds_caller".
const (
	reasonExceeds        = "key_exceeds_caller"
	reasonNotCreator     = "not_key_creator"
	reasonCreatorExceeds = "creator_authority_exceeds_caller"
)

// withinGrantable reports whether every scope of k is one c may grant.
func (c Caller) withinGrantable(k Key) bool {
	for _, s := range k.Scopes {
		if !slices.Contains(c.Grantable, s) {
			return false
		}
	}
	return true
}

// madeOnOwnAuthority reports whether k was made on the caller's user's
// authority: by that user's session or one of that user's keys.
func (c Caller) madeOnOwnAuthority(k Key) bool {
	return c.Principal.UserID != "" && k.CreatedByUserID == c.Principal.UserID
}

// mayManage checks that c may update, re-limit, revoke or delete k; shrink
// reports an event that only takes authority away (revoke, delete).
func (c Caller) mayManage(op string, k Key, shrink bool) error {
	if c.withinGrantable(k) {
		return nil
	}
	if shrink && (k.ID == c.Principal.KeyID ||
		c.Principal.Kind != access.CredentialAPIKey && c.madeOnOwnAuthority(k)) {
		return nil
	}
	return denyKey(op, reasonExceeds)
}

func denyKey(op, reason string) error {
	return fault.E(op, fault.AccessDenied, "The key's authority exceeds what the caller may manage.").With("reason", reason)
}

// Created is a key with its plaintext, returned once.
type Created struct {
	Key    Key
	Secret string
}

const (
	maxName         = 100
	maxMetadata     = 20
	maxMetadataKey  = 40
	maxMetadataVal  = 500
	secretBytes     = 25 // 40 base32 characters, 200 bits
	displayRandLen  = 4
	eventSchemaV1   = 1
	eventKeyCreated = "api_key.created"
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func newPlaintext(env access.Environment) string {
	var b [secretBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("apikey: crypto/rand failed: " + err.Error())
	}
	return PrefixFor(env) + strings.ToLower(b32.EncodeToString(b[:]))
}

func (s *Service) newSecret(st Store, keyID string, env access.Environment) (Secret, string) {
	pt := newPlaintext(env)
	rnd := strings.TrimPrefix(pt, PrefixFor(env))
	return Secret{
		Digest:    s.digest.Digest(pt),
		KeyID:     keyID,
		Prefix:    PrefixFor(env) + rnd[:displayRandLen],
		Last4:     pt[len(pt)-4:],
		CreatedAt: st.Now(),
	}, pt
}

func validName(op, name string) error {
	n := utf8.RuneCountInString(strings.TrimSpace(name))
	if n == 0 || utf8.RuneCountInString(name) > maxName {
		return fault.Invalid(op, "name", "name must be 1 to 100 characters.")
	}
	return nil
}

func validMetadata(op string, md map[string]string) error {
	if len(md) > maxMetadata {
		return fault.Invalid(op, "metadata", "metadata holds at most 20 entries.").With("limit", maxMetadata)
	}
	for k, v := range md {
		if k == "" || len(k) > maxMetadataKey {
			return fault.Invalid(op, "metadata", "metadata keys must be 1 to 40 bytes.")
		}
		if len(v) > maxMetadataVal {
			return fault.Invalid(op, "metadata."+k, "metadata values must be at most 500 bytes.")
		}
	}
	return nil
}

// ValidateLimits checks l against the service's maximums.
func (s *Service) ValidateLimits(op string, l Limits) error {
	m := s.cfg.MaxLimits
	if l.RequestsPerMinute < 1 || l.RequestsPerMinute > m.RequestsPerMinute {
		return fault.Invalid(op, "limits.requestsPerMinute", fmt.Sprintf("requestsPerMinute must be 1 to %d.", m.RequestsPerMinute)).With("max", m.RequestsPerMinute)
	}
	if l.MaxConcurrentRequests < 1 || l.MaxConcurrentRequests > m.MaxConcurrentRequests {
		return fault.Invalid(op, "limits.maxConcurrentRequests", fmt.Sprintf("maxConcurrentRequests must be 1 to %d.", m.MaxConcurrentRequests)).With("max", m.MaxConcurrentRequests)
	}
	if l.MonthlyRequestBudget < 1 || l.MonthlyRequestBudget > m.MonthlyRequestBudget {
		return fault.Invalid(op, "limits.monthlyRequestBudget", fmt.Sprintf("monthlyRequestBudget must be 1 to %d.", m.MonthlyRequestBudget)).With("max", m.MonthlyRequestBudget)
	}
	return nil
}

func normalizeScopes(in []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Create makes a key in the caller's workspace and returns its plaintext once.
func (s *Service) Create(ctx context.Context, st Store, c Caller, in CreateInput) (Created, error) {
	const op = "apikey.Create"
	p := c.Principal
	env := in.Environment
	if env == "" {
		env = p.Environment
	}
	if !env.Valid() {
		return Created{}, fault.Invalid(op, "environment", "environment must be test or live.")
	}
	if p.Kind == access.CredentialAPIKey && env != p.Environment {
		return Created{}, fault.E(op, fault.AccessDenied, "A key can only create keys of its own environment.").With("field", "environment")
	}
	if err := validName(op, in.Name); err != nil {
		return Created{}, err
	}
	if len(in.Scopes) == 0 {
		return Created{}, fault.Invalid(op, "scopes", "scopes must name at least one scope.")
	}
	scopes := normalizeScopes(in.Scopes)
	if err := access.ValidateScopes(scopes, c.Grantable); err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	if err := validMetadata(op, in.Metadata); err != nil {
		return Created{}, err
	}
	limits := s.cfg.DefaultLimits
	if in.Limits != nil {
		limits = *in.Limits
	}
	if err := s.ValidateLimits(op, limits); err != nil {
		return Created{}, err
	}
	now := st.Now()
	k := Key{
		ID: st.NewID("key_"), TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: env,
		Name: strings.TrimSpace(in.Name), Scopes: scopes, Metadata: in.Metadata, Status: Active, Limits: limits,
		CreatedByUserID: p.UserID, CreatedByKeyID: p.KeyID, CreatedAt: now, UpdatedAt: now, Version: 1,
	}
	if k.Metadata == nil {
		k.Metadata = map[string]string{}
	}
	sec, pt := s.newSecret(st, k.ID, env)
	k.Prefix, k.Last4 = sec.Prefix, sec.Last4
	if err := st.KeyInsert(ctx, k, sec); err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	if err := s.emit(ctx, st, k, eventKeyCreated); err != nil {
		return Created{}, err
	}
	return Created{Key: k, Secret: pt}, nil
}

// IssueInternal makes a key holding the internal scope. Only the host's
// operator calls it (the example host's -issue-internal-key flag); no route
// can, since access.ValidateScopes never grants the internal scope.
func (s *Service) IssueInternal(ctx context.Context, st Store, tenantID, workspaceID, userID string, env access.Environment, name string) (Created, error) {
	const op = "apikey.IssueInternal"
	if err := validName(op, name); err != nil {
		return Created{}, err
	}
	now := st.Now()
	k := Key{
		ID: st.NewID("key_"), TenantID: tenantID, WorkspaceID: workspaceID, Environment: env, Name: name,
		Scopes: []string{access.ScopeInternal}, Metadata: map[string]string{}, Status: Active,
		Limits: s.cfg.DefaultLimits, Internal: true, CreatedByUserID: userID, CreatedAt: now, UpdatedAt: now, Version: 1,
	}
	sec, pt := s.newSecret(st, k.ID, env)
	k.Prefix, k.Last4 = sec.Prefix, sec.Last4
	if err := st.KeyInsert(ctx, k, sec); err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	if err := s.emit(ctx, st, k, eventKeyCreated); err != nil {
		return Created{}, err
	}
	return Created{Key: k, Secret: pt}, nil
}

// Get returns a key the caller may see; another tenant's, workspace's or
// environment's key is NOT_FOUND, never a 403 that leaks its existence.
func (s *Service) Get(ctx context.Context, st Store, p *access.Principal, keyID string) (Key, error) {
	k, err := st.KeyGet(ctx, ScopeOf(p), keyID)
	if err != nil {
		return Key{}, fault.Wrap("apikey.Get", err)
	}
	return k, nil
}

// List returns a page of keys, newest first, and whether more follow.
func (s *Service) List(ctx context.Context, st Store, p *access.Principal, before string, limit int) ([]Key, bool, error) {
	ks, err := st.KeyList(ctx, ScopeOf(p), before, limit+1)
	if err != nil {
		return nil, false, fault.Wrap("apikey.List", err)
	}
	more := len(ks) > limit
	if more {
		ks = ks[:limit]
	}
	return ks, more, nil
}

// move applies ev to the caller's key keyID after allow approves the
// caller, then edit, and writes it with its outbox event.
func (s *Service) move(ctx context.Context, st Store, c Caller, keyID string, ev Event, allow func(Key) error, edit func(*Key) error) (Key, error) {
	op := "apikey." + string(ev)
	k, err := st.KeyGet(ctx, ScopeOf(c.Principal), keyID)
	if err != nil {
		return Key{}, fault.Wrap(op, err)
	}
	if k.Internal {
		// Internal keys are managed only by the host's operator.
		return Key{}, fault.E(op, fault.NotFound, "")
	}
	if err := allow(k); err != nil {
		return Key{}, err
	}
	to, err := Transition(k.Status, ev)
	if err != nil {
		return Key{}, err
	}
	from := k.Status
	if edit != nil {
		if err := edit(&k); err != nil {
			return Key{}, err
		}
	}
	k.Status = to
	k.UpdatedAt = st.Now()
	k.Version++
	if err := st.KeyUpdate(ctx, k, from); err != nil {
		return Key{}, fault.Wrap(op, err)
	}
	if err := s.emit(ctx, st, k, "api_key."+pastTense(ev)); err != nil {
		return Key{}, err
	}
	return k, nil
}

func pastTense(ev Event) string {
	switch ev {
	case EventRotate:
		return "rotated"
	case EventRevoke:
		return "revoked"
	case EventDelete:
		return "deleted"
	}
	return "updated"
}

// Update changes a key's name, scopes or metadata.
func (s *Service) Update(ctx context.Context, st Store, c Caller, keyID string, in UpdateInput) (Key, error) {
	const op = "apikey.Update"
	allow := func(k Key) error { return c.mayManage(op, k, false) }
	return s.move(ctx, st, c, keyID, EventUpdate, allow, func(k *Key) error {
		if in.Name != nil {
			if err := validName(op, *in.Name); err != nil {
				return err
			}
			k.Name = strings.TrimSpace(*in.Name)
		}
		if in.Scopes != nil {
			if len(in.Scopes) == 0 {
				return fault.Invalid(op, "scopes", "scopes must name at least one scope.")
			}
			scopes := normalizeScopes(in.Scopes)
			if err := access.ValidateScopes(scopes, c.Grantable); err != nil {
				return fault.Wrap(op, err)
			}
			k.Scopes = scopes
		}
		if in.Metadata != nil {
			if err := validMetadata(op, in.Metadata); err != nil {
				return err
			}
			k.Metadata = in.Metadata
		}
		return nil
	})
}

// Rotate issues a new secret under the same key id and keeps the current
// secrets working for the overlap, then expires them.
//
// The caller must be allowed to rotate the key (see the management
// decisions above): ACCESS_DENIED otherwise, with nothing changed.
func (s *Service) Rotate(ctx context.Context, st Store, c Caller, keyID string, in RotateInput) (Created, error) {
	const op = "apikey.Rotate"
	overlap := s.cfg.RotationOverlap
	if in.ExpireCurrentAfterSeconds != nil {
		sec := *in.ExpireCurrentAfterSeconds
		// Compared in seconds: converting a huge count to a Duration first
		// would overflow to a negative overlap.
		if sec < 0 || sec > int64(s.cfg.MaxRotationOverlap/time.Second) {
			return Created{}, fault.Invalid(op, "expireCurrentAfterSeconds",
				fmt.Sprintf("expireCurrentAfterSeconds must be 0 to %d.", int64(s.cfg.MaxRotationOverlap/time.Second)))
		}
		overlap = time.Duration(sec) * time.Second
	}
	allow := func(k Key) error { return s.mayRotate(ctx, st, c, k) }
	var pt string
	k, err := s.move(ctx, st, c, keyID, EventRotate, allow, func(k *Key) error {
		var sec Secret
		sec, pt = s.newSecret(st, k.ID, k.Environment)
		if err := st.KeySecretInsert(ctx, sec); err != nil {
			return fault.Wrap(op, err)
		}
		if err := st.KeySecretsExpire(ctx, k.ID, sec.Digest, st.Now().Add(overlap)); err != nil {
			return fault.Wrap(op, err)
		}
		k.Prefix, k.Last4 = sec.Prefix, sec.Last4
		return nil
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Key: k, Secret: pt}, nil
}

// mayRotate checks that c may receive a new secret of k.
func (s *Service) mayRotate(ctx context.Context, st Store, c Caller, k Key) error {
	const op = "apikey.rotate"
	if err := c.mayManage(op, k, false); err != nil {
		return err
	}
	if c.madeOnOwnAuthority(k) {
		return nil
	}
	if !c.Authority.Administrator() {
		return denyKey(op, reasonNotCreator)
	}
	creator, err := st.AuthorityLoad(ctx, k.TenantID, k.WorkspaceID, k.CreatedByUserID, k.Environment)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if !c.Authority.Covers(&creator, k.Scopes) {
		return denyKey(op, reasonCreatorExceeds)
	}
	return nil
}

// Revoke stops every secret of the key at once. Revoking a revoked key
// returns it unchanged in state.
func (s *Service) Revoke(ctx context.Context, st Store, c Caller, keyID string) (Key, error) {
	allow := func(k Key) error { return c.mayManage("apikey.revoke", k, true) }
	return s.move(ctx, st, c, keyID, EventRevoke, allow, func(k *Key) error {
		now := st.Now()
		if k.RevokedAt == nil {
			k.RevokedAt = &now
		}
		return st.KeySecretsExpire(ctx, k.ID, "", now)
	})
}

// Delete removes the key from reads and stops it authenticating.
func (s *Service) Delete(ctx context.Context, st Store, c Caller, keyID string) (Key, error) {
	allow := func(k Key) error { return c.mayManage("apikey.delete", k, true) }
	return s.move(ctx, st, c, keyID, EventDelete, allow, func(k *Key) error {
		return st.KeySecretsExpire(ctx, k.ID, "", st.Now())
	})
}

// SetLimits replaces a key's limits.
func (s *Service) SetLimits(ctx context.Context, st Store, c Caller, keyID string, l Limits) (Key, error) {
	const op = "apikey.SetLimits"
	if err := s.ValidateLimits(op, l); err != nil {
		return Key{}, err
	}
	allow := func(k Key) error { return c.mayManage(op, k, false) }
	return s.move(ctx, st, c, keyID, EventUpdate, allow, func(k *Key) error {
		k.Limits = l
		return nil
	})
}

func (s *Service) emit(ctx context.Context, st Store, k Key, typ string) error {
	payload, err := json.Marshal(struct {
		KeyID       string `json:"keyId"`
		Status      Status `json:"status"`
		Environment string `json:"environment"`
	}{k.ID, k.Status, string(k.Environment)})
	if err != nil {
		return fault.Wrap("apikey.emit", err)
	}
	_, err = st.OutboxInsert(ctx, outbox.Event{
		TenantID: k.TenantID, WorkspaceID: k.WorkspaceID, Environment: string(k.Environment),
		Type: typ, SchemaVersion: eventSchemaV1, AggregateID: k.ID, AggregateVersion: k.Version, Payload: payload,
	})
	return fault.Wrap("apikey.emit", err)
}

// Authenticate resolves a presented plaintext key into a principal. A
// malformed, unknown, revoked or deleted key is UNAUTHENTICATED; a secret
// that was rotated out and whose overlap ended is SESSION_EXPIRED. Each
// refusal says in its message what is wrong with the key, and in its
// details which credential failed (credential "api_key") and why (reason
// "malformed", "unknown", "revoked", "deleted" or "expired"); the
// presented key is never echoed.
func (s *Service) Authenticate(ctx context.Context, st AuthStore, plaintext string) (*access.Principal, AuthRecord, error) {
	const op = "apikey.Authenticate"
	refuse := func(code fault.Code, reason, message string) error {
		return fault.E(op, code, message).With("credential", string(access.CredentialAPIKey)).With("reason", reason)
	}
	var env access.Environment
	switch {
	case strings.HasPrefix(plaintext, TestPrefix):
		env = access.Test
	case strings.HasPrefix(plaintext, LivePrefix):
		env = access.Live
	default:
		return nil, AuthRecord{}, refuse(fault.Unauthenticated, "malformed", "The API key is malformed.")
	}
	if len(plaintext) > 128 {
		return nil, AuthRecord{}, refuse(fault.Unauthenticated, "malformed", "The API key is malformed.")
	}
	rec, err := st.KeyAuth(ctx, s.digest.Digest(plaintext))
	if fault.Is(err, fault.NotFound) {
		return nil, AuthRecord{}, refuse(fault.Unauthenticated, "unknown", "The API key is not valid.")
	}
	if err != nil {
		return nil, AuthRecord{}, fault.Wrap(op, err)
	}
	k, sec := rec.Key, rec.Secret
	switch {
	case k.Environment != env:
		return nil, AuthRecord{}, refuse(fault.Unauthenticated, "unknown", "The API key is not valid.")
	case k.Status == Revoked:
		return nil, AuthRecord{}, refuse(fault.Unauthenticated, "revoked", "The API key was revoked.")
	case k.Status == Deleted:
		return nil, AuthRecord{}, refuse(fault.Unauthenticated, "deleted", "The API key was deleted.")
	case k.Status != Active:
		return nil, AuthRecord{}, refuse(fault.Unauthenticated, "unknown", "The API key is not valid.")
	}
	if sec.ExpiresAt != nil && !st.Now().Before(*sec.ExpiresAt) {
		return nil, AuthRecord{}, refuse(fault.SessionExpired, "expired", "The API key's secret was rotated out and has expired; use the key's current secret.")
	}
	return &access.Principal{
		Kind: access.CredentialAPIKey, TenantID: k.TenantID, WorkspaceID: k.WorkspaceID, Environment: k.Environment,
		UserID: k.CreatedByUserID, KeyID: k.ID, Scopes: k.Scopes,
	}, rec, nil
}
