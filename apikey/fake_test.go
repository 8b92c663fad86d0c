package apikey

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// hmacDigest is a keyed digest like secret.Keyring's: nothing of the
// plaintext shows in it.
type hmacDigest struct{}

func (hmacDigest) Digest(s string) string {
	m := hmac.New(sha256.New, []byte("test pepper"))
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}

// memKeys is an in-memory Store and AuthStore of one clock, keeping the
// port's promises: KeyGet hides deleted keys, KeyUpdate compares status and
// version, KeySecretsExpire never extends an earlier expiry.
type memKeys struct {
	now       time.Time
	ids       int
	keys      map[string]Key
	secrets   map[string]Secret // by digest
	events    []outbox.Event
	authority map[string]access.Authority // by user id
}

var (
	_ Store     = (*memKeys)(nil)
	_ AuthStore = (*memKeys)(nil)
)

func newMemKeys() *memKeys {
	return &memKeys{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), keys: map[string]Key{}, secrets: map[string]Secret{},
		authority: map[string]access.Authority{}}
}

func (m *memKeys) Now() time.Time { return m.now }

func (m *memKeys) NewID(prefix string) string {
	m.ids++
	return fmt.Sprintf("%s%04d", prefix, m.ids)
}

func (m *memKeys) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	m.events = append(m.events, e)
	return e, nil
}

func (m *memKeys) KeyInsert(_ context.Context, k Key, s Secret) error {
	if _, ok := m.keys[k.ID]; ok {
		return fault.E("mem.KeyInsert", fault.Conflict, "")
	}
	k.Scopes, k.Metadata = slices.Clone(k.Scopes), maps.Clone(k.Metadata)
	m.keys[k.ID] = k
	m.secrets[s.Digest] = s
	return nil
}

func (m *memKeys) KeyGet(_ context.Context, sc Scope, id string) (Key, error) {
	k, ok := m.keys[id]
	if !ok || k.Status == Deleted || k.TenantID != sc.TenantID || k.WorkspaceID != sc.WorkspaceID || k.Environment != sc.Environment {
		return Key{}, fault.E("mem.KeyGet", fault.NotFound, "")
	}
	return k, nil
}

func (m *memKeys) KeyList(context.Context, Scope, string, int) ([]Key, error) { return nil, nil }

func (m *memKeys) KeyUpdate(_ context.Context, k Key, from Status) error {
	cur, ok := m.keys[k.ID]
	if !ok || cur.Status != from || cur.Version != k.Version-1 {
		return fault.E("mem.KeyUpdate", fault.Conflict, "")
	}
	m.keys[k.ID] = k
	return nil
}

func (m *memKeys) KeySecretInsert(_ context.Context, s Secret) error {
	m.secrets[s.Digest] = s
	return nil
}

func (m *memKeys) KeySecretsExpire(_ context.Context, keyID, except string, at time.Time) error {
	for d, s := range m.secrets {
		if s.KeyID != keyID || d == except || s.ExpiresAt != nil && s.ExpiresAt.Before(at) {
			continue
		}
		s.ExpiresAt = &at
		m.secrets[d] = s
	}
	return nil
}

func (m *memKeys) AuthorityLoad(_ context.Context, _, _, userID string, _ access.Environment) (access.Authority, error) {
	return m.authority[userID], nil
}

func (m *memKeys) KeyAuth(_ context.Context, digest string) (AuthRecord, error) {
	s, ok := m.secrets[digest]
	if !ok {
		return AuthRecord{}, fault.E("mem.KeyAuth", fault.NotFound, "")
	}
	return AuthRecord{Key: m.keys[s.KeyID], Secret: s}, nil
}

// secretsOf returns the key's secrets.
func (m *memKeys) secretsOf(keyID string) []Secret {
	var out []Secret
	for _, s := range m.secrets {
		if s.KeyID == keyID {
			out = append(out, s)
		}
	}
	return out
}
