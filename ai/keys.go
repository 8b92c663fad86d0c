package ai

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// ProviderKeys are the provider keys of one environment, by KeyRef, as
// the host's configuration gives them. SealKeys seals them into the
// store at start; the platform keeps no plaintext copy afterwards.
type ProviderKeys map[string]string

// SealedKey is a provider key as stored: sealed with AES-256-GCM under
// the platform's secret (aad: KeyAAD), with a non-secret fingerprint.
type SealedKey struct {
	// Environment and Ref name the key (ProviderConfig.KeyRef).
	Environment access.Environment
	Ref         string
	// Sealed is the sealed key.
	Sealed []byte
	// Fingerprint is the first FingerprintLen hex digits of the key's
	// keyed digest: it tells whether a configured key changed without
	// opening the stored one.
	Fingerprint string
	// UpdatedAt is when it was last sealed.
	UpdatedAt time.Time
}

// FingerprintLen is how many hex digits of a key's keyed digest form its
// fingerprint.
const FingerprintLen = 12

// KeyAAD is the additional data a key of env and ref is sealed under, so
// that a sealed key cannot be moved to another row.
func KeyAAD(env access.Environment, ref string) []byte {
	return []byte("ai-provider-key/" + string(env) + "/" + ref)
}

// Sealer seals and opens secrets at rest and digests them;
// secret.Keyring satisfies it.
type Sealer interface {
	Seal(plaintext, aad []byte) []byte
	Open(sealed, aad []byte) ([]byte, error)
	Digest(credential string) string
}

// KeyReader reads sealed provider keys.
type KeyReader interface {
	// AIProviderKeyGet reads the sealed key ref of env; NOT_FOUND when
	// none was sealed.
	AIProviderKeyGet(ctx context.Context, env access.Environment, ref string) (SealedKey, error)
}

// KeyStore is the port SealKeys writes through.
type KeyStore interface {
	KeyReader
	// AIProviderKeyPut stores k, replacing the key of its environment and
	// ref.
	AIProviderKeyPut(ctx context.Context, k SealedKey) error
	// Now is the unit of work's time.
	Now() time.Time
}

// SealKeys seals env's configured provider keys into st: a key whose
// fingerprint differs from the stored one (or that was never stored) is
// sealed and written; others are left. A KeyRef the configuration names
// without a key keeps the key sealed before, if any. Keys for KeyRefs no
// provider of env names are refused, as are empty keys: a typo must not
// leave a provider silently keyless.
func (s *Service) SealKeys(ctx context.Context, st KeyStore, sealer Sealer, env access.Environment, keys ProviderKeys) error {
	const op = "ai.SealKeys"
	refs := map[string]bool{}
	for _, p := range s.cfg.Environments[env].Providers {
		if p.KeyRef != "" {
			refs[p.KeyRef] = true
		}
	}
	names := make([]string, 0, len(keys))
	for ref := range keys {
		names = append(names, ref)
	}
	slices.Sort(names)
	for _, ref := range names {
		key := keys[ref]
		if !refs[ref] {
			return fault.Invalid(op, "keys", "A key is configured for "+ref+", which no provider of "+string(env)+" names.")
		}
		if strings.TrimSpace(key) == "" {
			return fault.Invalid(op, "keys", "The key of "+ref+" is empty.")
		}
		fp := fingerprint(sealer, key)
		cur, err := st.AIProviderKeyGet(ctx, env, ref)
		switch {
		case err == nil && cur.Fingerprint == fp:
			continue
		case err != nil && !fault.Is(err, fault.NotFound):
			return fault.Wrap(op, err)
		}
		k := SealedKey{Environment: env, Ref: ref, Sealed: sealer.Seal([]byte(key), KeyAAD(env, ref)), Fingerprint: fp, UpdatedAt: st.Now()}
		if err := st.AIProviderKeyPut(ctx, k); err != nil {
			return fault.Wrap(op, err)
		}
	}
	return nil
}

// fingerprint is key's fingerprint.
func fingerprint(sealer Sealer, key string) string {
	d := sealer.Digest(key)
	if len(d) > FingerprintLen {
		d = d[:FingerprintLen]
	}
	return d
}

// openKey unseals provider p's key of env for one call; "" for a keyless
// provider. PROVIDER_UNAVAILABLE (reason no_key) when none was sealed,
// or when it cannot be opened (another secret sealed it); the key is in
// no error.
func openKey(ctx context.Context, st KeyReader, sealer Sealer, env access.Environment, p ProviderConfig) (string, error) {
	const op = "ai.openKey"
	if p.Keyless || p.KeyRef == "" {
		return "", nil
	}
	k, err := st.AIProviderKeyGet(ctx, env, p.KeyRef)
	if fault.Is(err, fault.NotFound) {
		return "", fault.E(op, fault.ProviderUnavailable, "The AI provider has no key configured.").With("reason", "no_key")
	}
	if err != nil {
		return "", fault.Wrap(op, err)
	}
	plain, err := sealer.Open(k.Sealed, KeyAAD(env, p.KeyRef))
	if err != nil {
		return "", fault.E(op, fault.ProviderUnavailable, "The AI provider's key cannot be opened.").With("reason", "no_key")
	}
	return string(plain), nil
}
