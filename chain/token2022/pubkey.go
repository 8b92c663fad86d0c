package token2022

import (
	"strings"

	"github.com/creatormusic/platform/fault"
)

// PublicKey is a 32-byte Solana address: an ed25519 public key or a program
// derived address. Its text form is base58, as Solana prints addresses.
//
// Inside Token-2022 extensions an optional key is stored as 32 bytes where
// all zeros means none (OptionalNonZeroPubkey); such fields are plain
// PublicKey values and IsZero reports the none case.
type PublicKey [32]byte

// base58Alphabet is Bitcoin's base58 alphabet, which Solana uses.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// maxPublicKeyText is the length of the longest base58 text of 32 bytes.
const maxPublicKeyText = 44

// ProgramID returns the Token-2022 program id,
// TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb: the owner of every account
// this package's extended layouts describe.
func ProgramID() PublicKey {
	return PublicKey{
		0x06, 0xdd, 0xf6, 0xe1, 0xee, 0x75, 0x8f, 0xde, 0x18, 0x42, 0x5d, 0xbc, 0xe4, 0x6c, 0xcd, 0xda,
		0xb6, 0x1a, 0xfc, 0x4d, 0x83, 0xb9, 0x0d, 0x27, 0xfe, 0xbd, 0xf9, 0x28, 0xd8, 0xa1, 0x8b, 0xfc,
	}
}

// ParsePublicKey decodes a base58 address. It fails with INVALID_INPUT when s
// holds a character outside the alphabet or does not decode to exactly 32
// bytes.
func ParsePublicKey(s string) (PublicKey, error) {
	const op = "token2022.ParsePublicKey"
	var k PublicKey
	if len(s) == 0 || len(s) > maxPublicKeyText {
		return k, fault.E(op, fault.InvalidInput, "a public key is 32 to 44 base58 characters").With("length", len(s))
	}
	b, ok := DecodeBase58(s)
	if !ok {
		return k, fault.E(op, fault.InvalidInput, "a public key is base58 text")
	}
	if len(b) != len(k) {
		return k, fault.E(op, fault.InvalidInput, "a public key decodes to 32 bytes").With("bytes", len(b))
	}
	copy(k[:], b)
	return k, nil
}

// String returns the base58 text of k.
func (k PublicKey) String() string { return EncodeBase58(k[:]) }

// IsZero reports whether k is all zeros, which an OptionalNonZeroPubkey field
// uses to mean none. (The System Program's id is also all zeros.)
func (k PublicKey) IsZero() bool { return k == PublicKey{} }

// EncodeBase58 converts b, a big-endian number, to base 58 in Solana's
// (Bitcoin's) alphabet; each leading zero byte becomes a leading '1'.
// Addresses, signatures and blockhashes are printed this way.
func EncodeBase58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// digits holds the number in base 58, least significant digit first.
	digits := make([]byte, 0, len(b)*138/100+1)
	for _, c := range b[zeros:] {
		carry := int(c)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	var sb strings.Builder
	sb.Grow(zeros + len(digits))
	for range zeros {
		sb.WriteByte('1')
	}
	for i := len(digits) - 1; i >= 0; i-- {
		sb.WriteByte(base58Alphabet[digits[i]])
	}
	return sb.String()
}

// DecodeBase58 is the inverse of EncodeBase58; ok is false on a character
// outside the alphabet. Its work grows with the square of len(s): callers
// bound the length first.
func DecodeBase58(s string) (b []byte, ok bool) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// num holds the number in base 256, least significant byte first.
	num := make([]byte, 0, len(s))
	for i := zeros; i < len(s); i++ {
		carry := strings.IndexByte(base58Alphabet, s[i])
		if carry < 0 {
			return nil, false
		}
		for j := range num {
			carry += int(num[j]) * 58
			num[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			num = append(num, byte(carry))
			carry >>= 8
		}
	}
	out := make([]byte, zeros+len(num))
	for i, c := range num {
		out[len(out)-1-i] = c
	}
	return out, true
}
