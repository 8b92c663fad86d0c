package rewards

import (
	"context"
	"crypto/ed25519"
	"errors"

	"github.com/creatormusic/platform/chain"
)

// Sealer seals and opens secrets at rest (AES-256-GCM under the
// platform's secret key: internal/secret.Keyring satisfies it).
type Sealer interface {
	// Seal encrypts plaintext bound to aad.
	Seal(plaintext, aad []byte) []byte
	// Open decrypts what Seal returned for the same aad.
	Open(sealed, aad []byte) ([]byte, error)
}

// sealAAD binds a sealed treasury key to its use: it opens as nothing
// else.
const sealAAD = "platform/reward-treasury-key/v1"

// SealKey seals an ed25519 private key for storage at rest: only the
// sealed bytes are ever written (a file of the host's, a secret store),
// never the key.
func SealKey(s Sealer, key ed25519.PrivateKey) []byte {
	return s.Seal(key.Seed(), []byte(sealAAD))
}

// LocalSigner is the TreasurySigner of test mode and the example host: an
// ed25519 keypair opened from its sealed form, held in memory and used
// only to sign. It never prints, logs or returns the key: its String and
// GoString show the address alone. A production deployment backs
// TreasurySigner with a KMS or HSM instead.
type LocalSigner struct {
	key  ed25519.PrivateKey
	addr chain.Address
}

// NewLocalSigner opens a key SealKey sealed. It fails when the bytes do
// not open under s (another platform secret, tampered bytes) or do not
// hold an ed25519 seed; the error never carries the key.
func NewLocalSigner(s Sealer, sealed []byte) (*LocalSigner, error) {
	seed, err := s.Open(sealed, []byte(sealAAD))
	if err != nil {
		return nil, errors.New("rewards: the sealed treasury key does not open under this platform's secret")
	}
	if len(seed) != ed25519.SeedSize {
		clear(seed)
		return nil, errors.New("rewards: the sealed treasury key does not open to an ed25519 key")
	}
	key := ed25519.NewKeyFromSeed(seed)
	clear(seed)
	var a chain.Address
	copy(a[:], key.Public().(ed25519.PublicKey))
	return &LocalSigner{key: key, addr: a}, nil
}

// Address is the treasury wallet.
func (s *LocalSigner) Address() chain.Address { return s.addr }

// Sign returns the ed25519 signature of message.
func (s *LocalSigner) Sign(_ context.Context, message []byte) ([]byte, error) {
	return ed25519.Sign(s.key, message), nil
}

// String shows the signer's address, never its key.
func (s *LocalSigner) String() string { return "rewards.LocalSigner(" + s.addr.String() + ")" }

// GoString shows the signer's address, never its key (%#v).
func (s *LocalSigner) GoString() string { return s.String() }
