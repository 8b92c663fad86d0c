package rewards

import (
	"crypto/ed25519"
	"errors"
)

// xorSealer is a test Sealer: it binds nothing, so a wrong length fails.
type xorSealer struct{}

func (xorSealer) Seal(p, _ []byte) []byte {
	out := make([]byte, len(p))
	for i := range p {
		out[i] = p[i] ^ 0x5a
	}
	return out
}

func (xorSealer) Open(s, _ []byte) ([]byte, error) {
	if len(s) == 0 {
		return nil, errors.New("empty")
	}
	return xorSealer{}.Seal(s, nil), nil
}

func ed25519Key(seed []byte) ed25519.PrivateKey { return ed25519.NewKeyFromSeed(seed) }
