package wallet

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"

	"github.com/creatormusic/platform/fault"
)

// ParseSignature decodes an ed25519 signature sent as text: base58, as
// Solana prints signatures (at most 88 characters), or standard padded
// base64 (88 characters ending in "=="), which wallet adapters produce
// from the signature bytes with btoa. The two never collide, since base58
// has no "=". Anything that does not decode to exactly 64 bytes is
// INVALID_INPUT with details.field "signature".
func ParseSignature(s string) ([]byte, error) {
	const op = "wallet.ParseSignature"
	bad := fault.Invalid(op, "signature", "signature is the 64-byte ed25519 signature in base58 or padded base64.")
	if s == "" || len(s) > 88 {
		return nil, bad
	}
	if strings.HasSuffix(s, "=") {
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err != nil || len(b) != ed25519.SignatureSize {
			return nil, bad
		}
		return b, nil
	}
	b, ok := decodeBase58(s)
	if !ok || len(b) != ed25519.SignatureSize {
		return nil, bad
	}
	return b, nil
}

// base58Alphabet is Bitcoin's alphabet, which Solana uses.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// decodeBase58 decodes s as a big-endian base-58 number; each leading '1'
// is a leading zero byte. ok is false on a character outside the alphabet.
func decodeBase58(s string) (b []byte, ok bool) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// le holds the value in base 256, least significant byte first.
	le := make([]byte, 0, len(s))
	for i := zeros; i < len(s); i++ {
		carry := strings.IndexByte(base58Alphabet, s[i])
		if carry < 0 {
			return nil, false
		}
		for j := range le {
			carry += int(le[j]) * 58
			le[j] = byte(carry)
			carry >>= 8
		}
		for ; carry > 0; carry >>= 8 {
			le = append(le, byte(carry))
		}
	}
	out := make([]byte, zeros+len(le))
	for i, c := range le {
		out[len(out)-1-i] = c
	}
	return out, true
}
