package message

// This file reads and writes whole wire transactions (chain.md §3): the
// signatures a message carries, the unsigned form wallets sign, and the
// structural checks a node's sanitizer applies before it looks at a
// transaction's meaning.

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// ErrMalformed is wrapped by every error ParseSigned and Signers return
// for bytes that are not a well-formed transaction or message.
var ErrMalformed = errors.New("message: malformed transaction")

// maxSignatureText is the longest base58 text of 64 bytes.
const maxSignatureText = 88

// Signed is a decoded wire transaction.
type Signed struct {
	// Signatures are the ed25519 signatures in key order: Signatures[i]
	// is the signature of the message's i-th static key, and
	// Signatures[0], the fee payer's, is the transaction id.
	Signatures [][]byte
	// Message is the serialized message the signatures cover.
	Message []byte
}

// Unsigned returns the wire transaction of message with every signature
// slot zeroed: compact-u16 S, S×64 zero bytes, the message, where S is the
// header's numRequiredSignatures. This is the form wallets take for
// signing. Unsigned reads only the header; it does not check the rest of
// the message, which Compile is expected to have produced. A message too
// short to hold a header gets no signature slot.
func Unsigned(message []byte) []byte {
	n := requiredSignatures(message)
	b := make([]byte, 0, 3+n*SignatureSize+len(message))
	b = AppendCompactU16(b, n)
	b = append(b, make([]byte, n*SignatureSize)...)
	return append(b, message...)
}

// requiredSignatures is the numRequiredSignatures of a legacy or versioned
// message's header, or 0 when there is no header byte to read.
func requiredSignatures(m []byte) int {
	switch {
	case len(m) == 0:
		return 0
	case m[0]&0x80 == 0:
		return int(m[0])
	case len(m) > 1:
		return int(m[1])
	}
	return 0
}

// ParseSigned splits a wire transaction into its signatures and message.
// The message may be legacy or v0 (prefix 0x80). It fails with
// ErrTooLarge over MaxTransactionSize bytes, and with an error wrapping
// ErrMalformed when the signature count is not a minimal compact-u16, the
// input is truncated or has bytes after the message, the message is not
// well formed (as Signers checks), or the signature count differs from the
// header's numRequiredSignatures. The returned slices share b's memory.
func ParseSigned(b []byte) (Signed, error) {
	if len(b) > MaxTransactionSize {
		return Signed{}, ErrTooLarge
	}
	n, size, ok := ReadCompactU16(b)
	if !ok {
		return Signed{}, malformed("the signature count is not a compact-u16")
	}
	rest := b[size:]
	if len(rest) < n*SignatureSize {
		return Signed{}, malformed("%d signatures need %d bytes, %d remain", n, n*SignatureSize, len(rest))
	}
	tx := Signed{Signatures: make([][]byte, n), Message: rest[n*SignatureSize:]}
	for i := range tx.Signatures {
		tx.Signatures[i] = rest[i*SignatureSize : (i+1)*SignatureSize : (i+1)*SignatureSize]
	}
	m, err := parseMessage(tx.Message)
	if err != nil {
		return Signed{}, err
	}
	if n != m.numSigners {
		return Signed{}, malformed("%d signatures for a message that requires %d", n, m.numSigners)
	}
	return tx, nil
}

// Signers returns the keys that must sign message, a legacy or v0
// message: its first numRequiredSignatures static keys, the fee payer
// first. It fails with an error wrapping ErrMalformed unless message is
// well formed: a supported version (legacy or v0), a header whose counts
// fit the static keys (at least one signer, which is writable), no
// truncated part and no trailing byte, at most MaxKeys keys with loaded
// ones, every v0 lookup loading a key, and every instruction's program a
// static key other than the fee payer and its accounts within the keys.
func Signers(message []byte) ([]chain.Address, error) {
	m, err := parseMessage(message)
	if err != nil {
		return nil, err
	}
	return m.static[:m.numSigners:m.numSigners], nil
}

// VerifySignature reports whether sig is signer's ed25519 signature of
// message.
func VerifySignature(signer chain.Address, message, sig []byte) bool {
	return len(sig) == SignatureSize && ed25519.Verify(ed25519.PublicKey(signer[:]), message, sig)
}

// ParseSignature decodes a base58 transaction signature, which is 64
// bytes; it fails on any other text.
func ParseSignature(s string) ([]byte, error) {
	if len(s) > maxSignatureText {
		return nil, fmt.Errorf("message: a signature is 64 bytes in base58, not %d characters", len(s))
	}
	b, ok := token2022.DecodeBase58(s)
	if !ok || len(b) != SignatureSize {
		return nil, errors.New("message: a signature is 64 bytes in base58")
	}
	return b, nil
}

// ReadCompactU16 decodes a compact-u16 at the start of b and returns it
// with the number of bytes read. ok is false when b is truncated, the
// encoding is longer than needed (a final zero byte after the first), or
// the value exceeds 0xffff.
func ReadCompactU16(b []byte) (n, size int, ok bool) {
	for i := 0; i < 3; i++ {
		if i >= len(b) {
			return 0, 0, false
		}
		c := b[i]
		n |= int(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i > 0 && c == 0 {
				return 0, 0, false
			}
			if n > 0xffff {
				return 0, 0, false
			}
			return n, i + 1, true
		}
	}
	return 0, 0, false
}

// malformed returns an error wrapping ErrMalformed with the formatted
// reason.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// parsedMessage is what parseMessage keeps of a message.
type parsedMessage struct {
	numSigners int
	static     []chain.Address
	// decoded is the whole message, for Decode.
	decoded Decoded
}

// parseMessage reads a whole legacy or v0 message and applies the checks
// Signers documents.
func parseMessage(b []byte) (parsedMessage, error) {
	r := reader{b: b}
	first, ok := r.u8()
	if !ok {
		return parsedMessage{}, malformed("the message is empty")
	}
	v0 := first&0x80 != 0
	if v0 && first&0x7f != 0 {
		return parsedMessage{}, malformed("message version %d is not supported", first&0x7f)
	}
	var header [3]byte
	h := header[:]
	if !v0 {
		header[0], h = first, header[1:]
	}
	raw, ok := r.take(len(h))
	if !ok {
		return parsedMessage{}, malformed("the message header is truncated")
	}
	copy(h, raw)
	signers, roSigned, roUnsigned := int(header[0]), int(header[1]), int(header[2])

	numStatic, ok := r.compactU16()
	if !ok {
		return parsedMessage{}, malformed("the key count is not a compact-u16")
	}
	raw, ok = r.take(numStatic * 32)
	if !ok {
		return parsedMessage{}, malformed("the message is truncated in its %d keys", numStatic)
	}
	switch {
	case signers == 0:
		return parsedMessage{}, malformed("the message requires no signature; the fee payer must sign")
	case roSigned >= signers:
		return parsedMessage{}, malformed("%d of %d signers are read-only; the fee payer is writable", roSigned, signers)
	case signers+roUnsigned > numStatic:
		return parsedMessage{}, malformed("the header counts %d signers and %d read-only non-signers among %d keys", signers, roUnsigned, numStatic)
	}
	m := parsedMessage{numSigners: signers, static: make([]chain.Address, numStatic)}
	for i := range m.static {
		copy(m.static[i][:], raw[i*32:])
	}
	d := &m.decoded
	d.V0, d.NumSigners, d.NumReadonlySigned, d.NumReadonlyUnsigned, d.StaticKeys = v0, signers, roSigned, roUnsigned, m.static
	bh, ok := r.take(32)
	if !ok {
		return parsedMessage{}, malformed("the message is truncated in its blockhash")
	}
	copy(d.Blockhash[:], bh)

	numIxs, ok := r.compactU16()
	if !ok {
		return parsedMessage{}, malformed("the instruction count is not a compact-u16")
	}
	// The indexes are checked once the lookups give the key count.
	var programs []byte
	var accounts [][]byte
	for i := 0; i < numIxs; i++ {
		p, ok := r.u8()
		if !ok {
			return parsedMessage{}, malformed("instruction %d is truncated", i)
		}
		a, ok := r.vec()
		if !ok {
			return parsedMessage{}, malformed("instruction %d is truncated in its accounts", i)
		}
		data, ok := r.vec()
		if !ok {
			return parsedMessage{}, malformed("instruction %d is truncated in its data", i)
		}
		programs, accounts = append(programs, p), append(accounts, a)
		d.Instructions = append(d.Instructions, CompiledInstruction{ProgramIndex: p, Accounts: a, Data: data})
	}

	loaded := 0
	if v0 {
		numLookups, ok := r.compactU16()
		if !ok {
			return parsedMessage{}, malformed("the lookup count is not a compact-u16")
		}
		for i := 0; i < numLookups; i++ {
			table, ok := r.take(32)
			if !ok {
				return parsedMessage{}, malformed("lookup %d is truncated in its table", i)
			}
			w, ok := r.vec()
			if !ok {
				return parsedMessage{}, malformed("lookup %d is truncated in its writable indexes", i)
			}
			ro, ok := r.vec()
			if !ok {
				return parsedMessage{}, malformed("lookup %d is truncated in its read-only indexes", i)
			}
			if len(w)+len(ro) == 0 {
				return parsedMessage{}, malformed("lookup %d loads no key", i)
			}
			loaded += len(w) + len(ro)
			d.Lookups = append(d.Lookups, Lookup{Table: chain.Address(table), Writable: w, Readonly: ro})
		}
	}
	if extra := len(b) - r.off; extra > 0 {
		return parsedMessage{}, malformed("%d bytes follow the message", extra)
	}
	total := numStatic + loaded
	if total > MaxKeys {
		return parsedMessage{}, malformed("the message references %d keys, over %d", total, MaxKeys)
	}
	for i, p := range programs {
		if p == 0 || int(p) >= numStatic {
			return parsedMessage{}, malformed("instruction %d calls key %d, which is not a static key other than the fee payer", i, p)
		}
		for _, a := range accounts[i] {
			if int(a) >= total {
				return parsedMessage{}, malformed("instruction %d names key %d of %d", i, a, total)
			}
		}
	}
	return m, nil
}

// reader reads a message front to back; every method reports false
// instead of reading past the end.
type reader struct {
	b   []byte
	off int
}

// u8 reads one byte.
func (r *reader) u8() (byte, bool) {
	if r.off >= len(r.b) {
		return 0, false
	}
	r.off++
	return r.b[r.off-1], true
}

// take reads n bytes.
func (r *reader) take(n int) ([]byte, bool) {
	if n > len(r.b)-r.off {
		return nil, false
	}
	r.off += n
	return r.b[r.off-n : r.off], true
}

// compactU16 reads a compact-u16.
func (r *reader) compactU16() (int, bool) {
	n, size, ok := ReadCompactU16(r.b[r.off:])
	if !ok {
		return 0, false
	}
	r.off += size
	return n, true
}

// vec reads a compact-u16 length and that many bytes.
func (r *reader) vec() ([]byte, bool) {
	n, ok := r.compactU16()
	if !ok {
		return nil, false
	}
	return r.take(n)
}
