package intent

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// Wire limits (chain.md §3).
const (
	// MaxTransactionSize is the largest serialized transaction (1280 − 40 − 8).
	MaxTransactionSize = 1232
	// SignatureSize is an ed25519 signature's length.
	SignatureSize = 64
)

// Token instruction discriminants (chain.md §4).
const (
	ixTransferChecked        = 12
	ixTransferFeeExtension   = 26
	ixTransferCheckedWithFee = 1
)

// MemoProgramID returns the Memo program id the prepared transaction uses,
// MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr.
func MemoProgramID() chain.Address {
	return chain.Address{
		0x05, 0x4a, 0x53, 0x5a, 0x99, 0x29, 0x21, 0x06, 0x4d, 0x24, 0xe8, 0x71, 0x60, 0xda, 0x38, 0x7c,
		0x7c, 0x35, 0xb5, 0xdd, 0xbc, 0x92, 0xbb, 0x81, 0xe4, 0x1f, 0xa8, 0x40, 0x41, 0x05, 0x44, 0x8d,
	}
}

// memoV1ProgramID is the first Memo program,
// Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo, which some wallets still use.
func memoV1ProgramID() chain.Address {
	k, _ := token2022.ParsePublicKey("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo")
	return k
}

// appendCompactU16 appends n in Solana's compact-u16 encoding: 7 bits per
// byte, low first, 0x80 marking more.
func appendCompactU16(b []byte, n int) []byte {
	v := uint16(n)
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// readCompactU16 decodes a compact-u16 at the start of b and returns it
// with the number of bytes read; ok is false on truncated or overlong
// input.
func readCompactU16(b []byte) (n, size int, ok bool) {
	for i := 0; i < 3; i++ {
		if i >= len(b) {
			return 0, 0, false
		}
		c := b[i]
		n |= int(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i > 0 && c == 0 {
				return 0, 0, false // non-minimal encoding
			}
			if n > 0xffff {
				return 0, 0, false
			}
			return n, i + 1, true
		}
	}
	return 0, 0, false
}

// transferData encodes the transfer instruction data: Token-2022
// TransferCheckedWithFee (26, 1, u64 amount, u8 decimals, u64 fee) when
// withFee, else TransferChecked (12, u64 amount, u8 decimals).
func transferData(amount uint64, decimals uint8, withFee bool, fee uint64) []byte {
	if withFee {
		b := []byte{ixTransferFeeExtension, ixTransferCheckedWithFee}
		b = binary.LittleEndian.AppendUint64(b, amount)
		b = append(b, decimals)
		return binary.LittleEndian.AppendUint64(b, fee)
	}
	b := []byte{ixTransferChecked}
	b = binary.LittleEndian.AppendUint64(b, amount)
	return append(b, decimals)
}

// transferKind is the decoded form of a token transfer instruction.
type transferKind struct {
	withFee  bool
	amount   uint64
	decimals uint8
	fee      uint64
}

// decodeTransfer decodes TransferChecked or TransferCheckedWithFee data.
func decodeTransfer(data []byte) (transferKind, bool) {
	switch {
	case len(data) == 10 && data[0] == ixTransferChecked:
		return transferKind{amount: binary.LittleEndian.Uint64(data[1:]), decimals: data[9]}, true
	case len(data) == 19 && data[0] == ixTransferFeeExtension && data[1] == ixTransferCheckedWithFee:
		return transferKind{withFee: true, amount: binary.LittleEndian.Uint64(data[2:]), decimals: data[10],
			fee: binary.LittleEndian.Uint64(data[11:])}, true
	}
	return transferKind{}, false
}

// unsignedTransaction wraps a one-signer message with an empty signature:
// compact-u16 1, 64 zero bytes, the message.
func unsignedTransaction(message []byte) []byte {
	b := make([]byte, 0, 1+SignatureSize+len(message))
	b = appendCompactU16(b, 1)
	b = append(b, make([]byte, SignatureSize)...)
	return append(b, message...)
}

// signedTransaction is a decoded wire transaction.
type signedTransaction struct {
	signatures [][]byte
	message    []byte
}

// parseTransaction splits a wire transaction into its signatures and
// message; the signature count must equal the message's
// numRequiredSignatures (a legacy message's first byte).
func parseTransaction(b []byte) (signedTransaction, bool) {
	n, size, ok := readCompactU16(b)
	if !ok || n == 0 || len(b) > MaxTransactionSize {
		return signedTransaction{}, false
	}
	rest := b[size:]
	if len(rest) < n*SignatureSize+1 {
		return signedTransaction{}, false
	}
	var tx signedTransaction
	for i := 0; i < n; i++ {
		tx.signatures = append(tx.signatures, rest[i*SignatureSize:(i+1)*SignatureSize])
	}
	tx.message = rest[n*SignatureSize:]
	if tx.message[0]&0x80 == 0 && int(tx.message[0]) != n {
		return signedTransaction{}, false
	}
	return tx, true
}

// verifySignature reports whether sig is signer's ed25519 signature of
// message.
func verifySignature(signer chain.Address, message, sig []byte) bool {
	return len(sig) == SignatureSize && ed25519.Verify(ed25519.PublicKey(signer[:]), message, sig)
}

// base64Std encodes b in standard base64 with padding.
func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// ParseSignature decodes a base58 transaction signature (64 bytes). It
// fails with INVALID_INPUT naming the field "signature".
func ParseSignature(s string) ([]byte, error) {
	if len(s) > 88 {
		return nil, fault.Invalid("intent.ParseSignature", "signature", "a signature is 64 bytes in base58")
	}
	b, ok := token2022.DecodeBase58(s)
	if !ok || len(b) != SignatureSize {
		return nil, fault.Invalid("intent.ParseSignature", "signature", "a signature is 64 bytes in base58")
	}
	return b, nil
}
