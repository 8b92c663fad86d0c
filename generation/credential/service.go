package credential

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
)

// Store is the port the credential service reads and writes through, bound
// to one unit of work (or to the read pool for reads).
type Store interface {
	Getter
	Lister
	Updater
	// Now is the unit of work's time.
	Now() time.Time
	// NewID returns a fresh identifier with prefix.
	NewID(prefix string) string
	// ProviderCredentialInsert stores a new credential.
	ProviderCredentialInsert(ctx context.Context, c Credential) error
	// ProviderBalanceInsert stores a balance snapshot as its credential's
	// newest.
	ProviderBalanceInsert(ctx context.Context, s Snapshot) error
}

// Getter reads one credential: the part of Store that opens the
// credential an attempt authenticates with.
type Getter interface {
	// ProviderCredentialGet reads a credential of sc that is not deleted,
	// with its newest balance snapshot; NOT_FOUND otherwise.
	ProviderCredentialGet(ctx context.Context, sc access.Scope, id string) (Credential, error)
}

// Lister lists a workspace's credentials: the part of Store that Usable
// reads through.
type Lister interface {
	// ProviderCredentialList reads up to limit credentials of sc that are not
	// deleted, newest first, with ids below before when it is set.
	ProviderCredentialList(ctx context.Context, sc access.Scope, before string, limit int) ([]Credential, error)
}

// Updater writes a credential's health: the part of Store that marks a key
// a provider rejected.
type Updater interface {
	// ProviderCredentialUpdate writes c's Health, CheckedAt, UpdatedAt and
	// DeletedAt to the credential of c.Scope with c.ID that is not deleted;
	// NOT_FOUND when there is none.
	ProviderCredentialUpdate(ctx context.Context, c Credential) error
}

// Sealer seals secrets at rest and digests them; secret.Keyring satisfies
// it.
type Sealer interface {
	Seal(plaintext, aad []byte) []byte
	Open(sealed, aad []byte) ([]byte, error)
	Digest(credential string) string
}

// Adapters are the provider adapters of one environment.
type Adapters map[generation.ProviderID]generation.MusicProvider

// Keys are the platform-managed credentials of one environment.
type Keys map[generation.ProviderID]generation.Credential

// ManagedKeys are the platform-managed credentials per environment. They
// are platform secrets: configured on the host, never stored or shown.
type ManagedKeys struct {
	Test Keys
	Live Keys
}

// Providers are the provider adapters per environment and the platform's
// own credentials. A provider without an adapter in an environment is not
// configured there: it is reported so and never used.
type Providers struct {
	// Test and Live are the adapters of each environment (test mode talks to
	// simulators or sandbox accounts; live to the real providers).
	Test Adapters
	Live Adapters
	// PlatformKeys are the platform-managed credentials; a provider without
	// one offers only BYOK.
	PlatformKeys ManagedKeys
}

func (p Providers) adapters(env access.Environment) Adapters {
	if env == access.Live {
		return p.Live
	}
	return p.Test
}

func (p Providers) keys(env access.Environment) Keys {
	if env == access.Live {
		return p.PlatformKeys.Live
	}
	return p.PlatformKeys.Test
}

// Config configures the service.
type Config struct {
	// Sealer seals keys at rest and fingerprints them. Required.
	Sealer Sealer
	// Providers are the adapters and platform keys per environment.
	Providers Providers
}

// Service manages provider connections. It is safe for concurrent use.
type Service struct {
	sealer    Sealer
	providers Providers
}

// Routes returns the provider routes in a stable order.
func Routes() []generation.ProviderID {
	return []generation.ProviderID{generation.ProviderA, generation.ProviderB}
}

func knownProvider(id generation.ProviderID) bool {
	for _, r := range Routes() {
		if r == id {
			return true
		}
	}
	return false
}

// New validates cfg and returns a Service: every adapter must serve the
// route it is configured under.
func New(cfg Config) (*Service, error) {
	if cfg.Sealer == nil {
		return nil, fmt.Errorf("credential: Config.Sealer is required")
	}
	for env, as := range map[access.Environment]Adapters{access.Test: cfg.Providers.Test, access.Live: cfg.Providers.Live} {
		for id, a := range as {
			if !knownProvider(id) {
				return nil, fmt.Errorf("credential: %s provider %q is not a provider route", env, id)
			}
			if a == nil || a.ID() != id {
				return nil, fmt.Errorf("credential: %s adapter configured for %s does not serve it", env, id)
			}
		}
	}
	for env, ks := range map[access.Environment]Keys{access.Test: cfg.Providers.PlatformKeys.Test, access.Live: cfg.Providers.PlatformKeys.Live} {
		for id, k := range ks {
			if !knownProvider(id) || strings.TrimSpace(k.APIKey) == "" {
				return nil, fmt.Errorf("credential: %s platform key for %q is not usable", env, id)
			}
		}
	}
	return &Service{sealer: cfg.Sealer, providers: cfg.Providers}, nil
}

// Provider is a provider route's configured state in one environment. It
// never carries a secret.
type Provider struct {
	// ID is the provider route.
	ID generation.ProviderID
	// Environment is the caller's environment.
	Environment access.Environment
	// Configured reports an adapter in this environment; an unconfigured
	// provider is never available.
	Configured bool
	// PlatformManaged reports a platform-managed credential (with an
	// adapter).
	PlatformManaged bool
	// Modes are the billing modes usable now: PLATFORM_MANAGED needs the
	// platform credential, BYOK an adapter, the fallback mode both.
	Modes []BillingMode
	// Ownerships are the credential ownership values usable now.
	Ownerships []Ownership
	// Observed is the newest observation of the route in this environment
	// (a dispatch or poll of any workspace's operation); nil before any.
	Observed *Observation
}

// Catalog reports every provider route's state in p's environment: what is
// configured, and the newest observation of each route read through st.
func (s *Service) Catalog(ctx context.Context, st ObservationReader, p *access.Principal) ([]Provider, error) {
	env := p.Environment
	obs, err := st.ProviderObservations(ctx, env)
	if err != nil {
		return nil, fault.Wrap("credential.Catalog", err)
	}
	out := make([]Provider, 0, len(Routes()))
	for _, id := range Routes() {
		pr := Provider{ID: id, Environment: env, Modes: []BillingMode{}, Ownerships: []Ownership{}}
		_, pr.Configured = s.providers.adapters(env)[id]
		_, managed := s.providers.keys(env)[id]
		pr.PlatformManaged = pr.Configured && managed
		if pr.PlatformManaged {
			pr.Modes = append(pr.Modes, ModePlatformManaged)
			pr.Ownerships = append(pr.Ownerships, PlatformManaged)
		}
		if pr.Configured {
			pr.Modes = append(pr.Modes, ModeBYOK)
			pr.Ownerships = append(pr.Ownerships, CustomerBYOK)
		}
		if pr.PlatformManaged {
			pr.Modes = append(pr.Modes, ModeBYOKWithPlatformFallback)
		}
		for i := range obs {
			if obs[i].Provider == id && pr.Configured {
				pr.Observed = &obs[i]
			}
		}
		out = append(out, pr)
	}
	return out, nil
}

// adapter returns the adapter of id in env, or PROVIDER_UNAVAILABLE
// (details.reason not_configured).
func (s *Service) adapter(op string, env access.Environment, id generation.ProviderID) (generation.MusicProvider, error) {
	a, ok := s.providers.adapters(env)[id]
	if !ok {
		return nil, fault.E(op, fault.ProviderUnavailable, "The provider is not configured in this environment.").
			With("reason", "not_configured").With("provider", string(id))
	}
	return a, nil
}

// CreateInput submits a customer key.
type CreateInput struct {
	// Provider is MUSIC_PROVIDER_A or MUSIC_PROVIDER_B.
	Provider generation.ProviderID `json:"provider" example:"MUSIC_PROVIDER_B" enum:"MUSIC_PROVIDER_A,MUSIC_PROVIDER_B"`
	// APIKey is the provider API key; it is validated, sealed and never
	// returned.
	APIKey string `json:"apiKey" example:"REPLACE_WITH_YOUR_PROVIDER_KEY"`
	// CallbackKey is an optional callback-signing key, sealed separately.
	CallbackKey string `json:"callbackKey,omitempty" example:"REPLACE_WITH_YOUR_CALLBACK_KEY"`
	// Label names the credential for the customer.
	Label string `json:"label,omitempty" example:"Studio account"`
}

// Input bounds.
const (
	minKeyLen   = 8
	maxKeyLen   = 512
	maxLabelLen = 100
)

func validSecret(s string) bool {
	if len(s) < minKeyLen || len(s) > maxKeyLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Checked is a submitted key the provider accepted, ready to be stored by
// Insert.
type Checked struct {
	in      CreateInput
	balance generation.Balance
}

// Check validates in and asks the provider, with the submitted key, for
// the account's balance. Run it outside any transaction. Errors:
// INVALID_INPUT (details.field provider, apiKey, callbackKey or label);
// PROVIDER_UNAVAILABLE when the provider is not configured in p's
// environment (details.reason not_configured) or cannot be reached;
// PROVIDER_CREDENTIAL_INVALID when it rejects the key; PROVIDER_TIMEOUT,
// RATE_LIMITED and PROVIDER_CREDITS_EXHAUSTED as the adapter reports them.
func (s *Service) Check(ctx context.Context, p *access.Principal, in CreateInput) (Checked, error) {
	const op = "credential.Check"
	in.Label = strings.TrimSpace(in.Label)
	switch {
	case !knownProvider(in.Provider):
		return Checked{}, fault.Invalid(op, "provider", "provider must be MUSIC_PROVIDER_A or MUSIC_PROVIDER_B.")
	case !validSecret(in.APIKey):
		return Checked{}, fault.Invalid(op, "apiKey", "apiKey must be 8 to 512 characters without spaces.")
	case in.CallbackKey != "" && !validSecret(in.CallbackKey):
		return Checked{}, fault.Invalid(op, "callbackKey", "callbackKey must be 8 to 512 characters without spaces.")
	case utf8.RuneCountInString(in.Label) > maxLabelLen || !utf8.ValidString(in.Label):
		return Checked{}, fault.Invalid(op, "label", "label must be at most 100 characters.").With("max", maxLabelLen)
	}
	a, err := s.adapter(op, p.Environment, in.Provider)
	if err != nil {
		return Checked{}, err
	}
	b, err := a.Balance(ctx, generation.Credential{APIKey: in.APIKey, CallbackKey: in.CallbackKey})
	if err != nil {
		return Checked{}, providerError(op, err)
	}
	return Checked{in: in, balance: b}, nil
}

// providerError keeps the adapter's documented codes and turns anything
// else into PROVIDER_UNAVAILABLE, so a failure is never read as a balance.
func providerError(op string, err error) error {
	switch fault.CodeOf(err) {
	case fault.ProviderCredentialInvalid, fault.ProviderUnavailable, fault.ProviderTimeout, fault.RateLimited,
		fault.ProviderCreditsExhausted:
		return fault.Wrap(op, err)
	}
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The provider gave an unexpected answer.", Err: err}
}

// Insert stores a checked key for p: sealed, fingerprinted, healthy as of
// now, with the balance the check observed as its first snapshot.
func (s *Service) Insert(ctx context.Context, st Store, p *access.Principal, ck Checked) (Credential, error) {
	const op = "credential.Insert"
	if ck.in.APIKey == "" {
		return Credential{}, fault.Wrap(op, fmt.Errorf("credential: Insert of an unchecked key"))
	}
	now := st.Now()
	id := st.NewID(IDPrefix)
	c := Credential{
		ID: id, Scope: p.Scope(), Provider: ck.in.Provider, Ownership: CustomerBYOK, Label: ck.in.Label,
		Fingerprint: s.sealer.Digest(ck.in.APIKey)[:FingerprintLen], Last4: last4(ck.in.APIKey),
		SealedKey: s.sealer.Seal([]byte(ck.in.APIKey), []byte(id)),
		Health:    Valid, CheckedAt: now, CreatedByUserID: p.UserID, CreatedByKeyID: p.KeyID,
		CreatedAt: now, UpdatedAt: now,
	}
	if ck.in.CallbackKey != "" {
		c.SealedCallbackKey = s.sealer.Seal([]byte(ck.in.CallbackKey), []byte(id+CallbackAAD))
	}
	if err := st.ProviderCredentialInsert(ctx, c); err != nil {
		return Credential{}, fault.Wrap(op, err)
	}
	snap, err := s.snapshot(ctx, st, c, ck.balance)
	if err != nil {
		return Credential{}, err
	}
	c.Balance = &snap
	return c, nil
}

func last4(key string) string {
	r := []rune(key)
	return string(r[len(r)-4:])
}

func (s *Service) snapshot(ctx context.Context, st Store, c Credential, b generation.Balance) (Snapshot, error) {
	snap := Snapshot{ID: st.NewID(SnapshotPrefix), CredentialID: c.ID, Scope: c.Scope, Provider: c.Provider,
		Credits: b.Credits, ExtraCredits: b.ExtraCredits, ObservedAt: st.Now()}
	if err := st.ProviderBalanceInsert(ctx, snap); err != nil {
		return Snapshot{}, fault.Wrap("credential.snapshot", err)
	}
	return snap, nil
}

// Get reads a credential of p's scope; NOT_FOUND for any other.
func (s *Service) Get(ctx context.Context, st Store, p *access.Principal, id string) (Credential, error) {
	c, err := st.ProviderCredentialGet(ctx, p.Scope(), id)
	if err != nil {
		return Credential{}, fault.Wrap("credential.Get", err)
	}
	return c, nil
}

// List reads up to limit credentials of p's scope, newest first, before the
// id before ("" for the first page); more reports a further page.
func (s *Service) List(ctx context.Context, st Store, p *access.Principal, before string, limit int) (cs []Credential, more bool, err error) {
	cs, err = st.ProviderCredentialList(ctx, p.Scope(), before, limit+1)
	if err != nil {
		return nil, false, fault.Wrap("credential.List", err)
	}
	if len(cs) > limit {
		return cs[:limit], true, nil
	}
	return cs, false, nil
}

// Delete soft-deletes a credential of p's scope: it is gone from reads on
// the next request. NOT_FOUND for any other (or an already deleted) one.
func (s *Service) Delete(ctx context.Context, st Store, p *access.Principal, id string) (Credential, error) {
	const op = "credential.Delete"
	c, err := st.ProviderCredentialGet(ctx, p.Scope(), id)
	if err != nil {
		return Credential{}, fault.Wrap(op, err)
	}
	now := st.Now()
	c.DeletedAt, c.UpdatedAt = &now, now
	if err := st.ProviderCredentialUpdate(ctx, c); err != nil {
		return Credential{}, fault.Wrap(op, err)
	}
	return c, nil
}

// Open unseals a credential for one provider call. The result must not be
// kept, logged or returned.
func (s *Service) Open(c Credential) (generation.Credential, error) {
	const op = "credential.Open"
	key, err := s.sealer.Open(c.SealedKey, []byte(c.ID))
	if err != nil {
		return generation.Credential{}, fault.Wrap(op, err)
	}
	out := generation.Credential{APIKey: string(key)}
	if c.HasCallbackKey() {
		cb, err := s.sealer.Open(c.SealedCallbackKey, []byte(c.ID+CallbackAAD))
		if err != nil {
			return generation.Credential{}, fault.Wrap(op, err)
		}
		out.CallbackKey = string(cb)
	}
	return out, nil
}

// Recheck is a stored credential checked again against its provider.
type Recheck struct {
	// Credential is the credential as read before the check.
	Credential Credential
	// Health is Valid or Invalid.
	Health  Health
	balance generation.Balance
}

// Recheck reads a credential of p's scope and asks its provider for the
// balance with it, outside any transaction (st is the read pool). A
// rejected key is not an error: Health is Invalid. Errors: NOT_FOUND;
// PROVIDER_UNAVAILABLE (not configured, unreachable or an unexpected
// answer), PROVIDER_TIMEOUT, RATE_LIMITED, PROVIDER_CREDITS_EXHAUSTED.
func (s *Service) Recheck(ctx context.Context, st Store, p *access.Principal, id string) (Recheck, error) {
	const op = "credential.Recheck"
	c, err := st.ProviderCredentialGet(ctx, p.Scope(), id)
	if err != nil {
		return Recheck{}, fault.Wrap(op, err)
	}
	a, err := s.adapter(op, c.Scope.Environment, c.Provider)
	if err != nil {
		return Recheck{}, err
	}
	cred, err := s.Open(c)
	if err != nil {
		return Recheck{}, err
	}
	b, err := a.Balance(ctx, cred)
	switch {
	case fault.Is(err, fault.ProviderCredentialInvalid):
		return Recheck{Credential: c, Health: Invalid}, nil
	case err != nil:
		return Recheck{}, providerError(op, err)
	}
	return Recheck{Credential: c, Health: Valid, balance: b}, nil
}

// RecordHealth stores a recheck's outcome (health, checked now). NOT_FOUND
// when the credential was deleted meanwhile.
func (s *Service) RecordHealth(ctx context.Context, st Store, r Recheck) (Credential, error) {
	c := r.Credential
	now := st.Now()
	c.Health, c.CheckedAt, c.UpdatedAt = r.Health, now, now
	if err := st.ProviderCredentialUpdate(ctx, c); err != nil {
		return Credential{}, fault.Wrap("credential.RecordHealth", err)
	}
	return c, nil
}

// RecordBalance stores a valid recheck's balance as a snapshot and the
// credential's health. A recheck whose key was rejected is
// PROVIDER_CREDENTIAL_INVALID; NOT_FOUND when the credential was deleted
// meanwhile.
func (s *Service) RecordBalance(ctx context.Context, st Store, r Recheck) (Snapshot, error) {
	const op = "credential.RecordBalance"
	if r.Health != Valid {
		return Snapshot{}, fault.E(op, fault.ProviderCredentialInvalid, "The provider rejected the stored key.")
	}
	c, err := s.RecordHealth(ctx, st, r)
	if err != nil {
		return Snapshot{}, err
	}
	return s.snapshot(ctx, st, c, r.balance)
}

// Adapter returns the adapter of provider route id in env; it is
// PROVIDER_UNAVAILABLE (details.reason not_configured) when the route has
// none there.
func (s *Service) Adapter(env access.Environment, id generation.ProviderID) (generation.MusicProvider, error) {
	return s.adapter("credential.Adapter", env, id)
}

// PlatformKey returns the platform-managed credential of route id in env,
// when one is configured together with an adapter. The result must not be
// kept, logged or returned.
func (s *Service) PlatformKey(env access.Environment, id generation.ProviderID) (generation.Credential, bool) {
	if _, ok := s.providers.adapters(env)[id]; !ok {
		return generation.Credential{}, false
	}
	k, ok := s.providers.keys(env)[id]
	return k, ok
}

// Usable returns the newest healthy customer credential of each provider
// route in sc, in one pass over the workspace's credentials (st is any unit
// of work or the read pool).
func (s *Service) Usable(ctx context.Context, st Lister, sc access.Scope) (map[generation.ProviderID]Credential, error) {
	out := map[generation.ProviderID]Credential{}
	before := ""
	for {
		cs, err := st.ProviderCredentialList(ctx, sc, before, 100)
		if err != nil {
			return nil, fault.Wrap("credential.Usable", err)
		}
		for _, c := range cs {
			if _, seen := out[c.Provider]; !seen && c.Health == Valid {
				out[c.Provider] = c
			}
		}
		if len(cs) < 100 {
			return out, nil
		}
		before = cs[len(cs)-1].ID
	}
}
