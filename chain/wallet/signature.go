package wallet

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"

	"github.com/creatormusic/platform/chain/token2022"
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
	b, ok := token2022.DecodeBase58(s)
	if !ok || len(b) != ed25519.SignatureSize {
		return nil, bad
	}
	return b, nil
}
