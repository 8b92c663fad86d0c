package x402

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"

	"github.com/creatormusic/platform/chain"
)

// KeySigner is a Signer over an ed25519 key held in memory, from the
// host's configuration. It never prints its key: String, GoString and
// LogValue show the address alone, so a logged or formatted signer leaks
// nothing.
type KeySigner struct {
	key  ed25519.PrivateKey
	addr chain.Address
}

var _ Signer = (*KeySigner)(nil)

// NewKeySigner returns a signer of key, a 64-byte ed25519 private key
// (seed then public key, as the Solana CLI's keypair files hold it). The
// signer keeps its own copy.
func NewKeySigner(key ed25519.PrivateKey) (*KeySigner, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, errors.New("x402: a fee payer key is 64 bytes")
	}
	own := ed25519.NewKeyFromSeed(key.Seed())
	if !own.Equal(key) {
		return nil, errors.New("x402: the fee payer key's public half does not match its seed")
	}
	var a chain.Address
	copy(a[:], own.Public().(ed25519.PublicKey))
	return &KeySigner{key: own, addr: a}, nil
}

// Address is the fee payer's address.
func (s *KeySigner) Address() chain.Address { return s.addr }

// Sign returns the ed25519 signature of message (deterministic: the same
// message always gets the same signature, so a transaction's id is known
// before it is sent).
func (s *KeySigner) Sign(_ context.Context, message []byte) ([]byte, error) {
	return ed25519.Sign(s.key, message), nil
}

// String shows the signer's address, never its key.
func (s *KeySigner) String() string { return "x402.KeySigner(" + s.addr.String() + ")" }

// GoString is String, for %#v.
func (s *KeySigner) GoString() string { return s.String() }

// LogValue logs the address alone.
func (s *KeySigner) LogValue() slog.Value { return slog.StringValue(s.String()) }
