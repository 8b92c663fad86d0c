package cctp

import (
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// Domain is a CCTP domain id (web3.md §2.1): Circle's number for a chain,
// the same on its testnet.
type Domain uint32

// Domains the package names.
const (
	// DomainEthereum is Ethereum (and Sepolia).
	DomainEthereum Domain = 0
	// DomainSolana is Solana (and devnet), the only destination this
	// package verifies mints on.
	DomainSolana Domain = 5
	// DomainBase is Base (and Base Sepolia).
	DomainBase Domain = 6
)

// Word is a 32-byte EVM word: a bytes32, a uint256 in big-endian, or an
// address left-padded with 12 zero bytes (web3.md §2.8). Its text form is
// 0x and 64 lower-case hex digits.
type Word [32]byte

// String renders w as 0x-prefixed lower-case hex.
func (w Word) String() string { return "0x" + hex.EncodeToString(w[:]) }

// IsZero reports whether every byte of w is zero.
func (w Word) IsZero() bool { return w == Word{} }

// Uint64 returns w as an unsigned integer when it fits in 64 bits.
func (w Word) Uint64() (uint64, bool) {
	for _, b := range w[:24] {
		if b != 0 {
			return 0, false
		}
	}
	return binary.BigEndian.Uint64(w[24:]), true
}

// WordOf returns n as a big-endian uint256.
func WordOf(n uint64) Word {
	var w Word
	binary.BigEndian.PutUint64(w[24:], n)
	return w
}

// SolanaAddress returns w as a Solana address (the 32 bytes as they are).
func (w Word) SolanaAddress() chain.Address { return chain.Address(w) }

// WordOfAddress returns a Solana address as a word.
func WordOfAddress(a chain.Address) Word { return Word(a) }

// ParseWord parses 0x and 64 hex digits (either case).
func ParseWord(s string) (Word, error) {
	var w Word
	b, ok := parseHex(s)
	if !ok || len(b) != len(w) {
		return Word{}, fault.E("cctp.ParseWord", fault.InvalidInput, "want 0x and 64 hex digits")
	}
	copy(w[:], b)
	return w, nil
}

// TxHash is an EVM transaction hash.
type TxHash = Word

// EVMAddress is a 20-byte EVM address; its text form is 0x and 40 lower-case
// hex digits (comparisons never depend on the checksum case).
type EVMAddress [20]byte

// String renders a as 0x-prefixed lower-case hex.
func (a EVMAddress) String() string { return "0x" + hex.EncodeToString(a[:]) }

// Word returns a left-padded with 12 zero bytes (web3.md §2.8).
func (a EVMAddress) Word() Word {
	var w Word
	copy(w[12:], a[:])
	return w
}

// IsZero reports whether a is the zero address.
func (a EVMAddress) IsZero() bool { return a == EVMAddress{} }

// ParseEVMAddress parses 0x and 40 hex digits (either case; the checksum
// is not required).
func ParseEVMAddress(s string) (EVMAddress, error) {
	var a EVMAddress
	b, ok := parseHex(s)
	if !ok || len(b) != len(a) {
		return EVMAddress{}, fault.E("cctp.ParseEVMAddress", fault.InvalidInput, "want 0x and 40 hex digits")
	}
	copy(a[:], b)
	return a, nil
}

// parseHex decodes 0x-prefixed hex.
func parseHex(s string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok {
		rest, ok = strings.CutPrefix(s, "0X")
	}
	if !ok {
		return nil, false
	}
	b, err := hex.DecodeString(rest)
	return b, err == nil
}

// HexBytes renders b as 0x-prefixed lower-case hex.
func HexBytes(b []byte) string { return "0x" + hex.EncodeToString(b) }

// ParseHexBytes decodes 0x-prefixed hex of any even length.
func ParseHexBytes(s string) ([]byte, bool) { return parseHex(s) }
