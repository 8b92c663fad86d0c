package message

// This file reads a whole message back into its parts (chain.md §3), for
// a verifier that inspects a transaction someone else built: its header,
// static keys, blockhash, compiled instructions and address-table lookups.

import (
	"github.com/creatormusic/platform/chain"
)

// CompiledInstruction is one instruction as a message carries it: indexes
// into the message's full key list.
type CompiledInstruction struct {
	// ProgramIndex is the program's index; a well-formed message's is a
	// static key other than the fee payer.
	ProgramIndex uint8
	// Accounts are the instruction's account indexes, in order.
	Accounts []uint8
	// Data is the instruction data.
	Data []byte
}

// Decoded is a decoded legacy or v0 message.
type Decoded struct {
	// V0 marks a versioned (v0) message; false is legacy.
	V0 bool
	// NumSigners, NumReadonlySigned and NumReadonlyUnsigned are the
	// header's counts.
	NumSigners, NumReadonlySigned, NumReadonlyUnsigned int
	// StaticKeys are the message's account keys; StaticKeys[0] is the fee
	// payer.
	StaticKeys []chain.Address
	// Blockhash is the recent blockhash.
	Blockhash chain.Address
	// Instructions are the compiled instructions in order.
	Instructions []CompiledInstruction
	// Lookups are a v0 message's address-table lookups (nil for legacy,
	// and for a v0 message without any).
	Lookups []Lookup
}

// Decode reads message, a legacy or v0 message, into its parts after the
// checks Signers documents (ErrMalformed otherwise). The returned slices
// share message's memory. Keys a lookup loads are not resolved: Key
// answers only for static keys.
func Decode(message []byte) (Decoded, error) {
	m, err := parseMessage(message)
	if err != nil {
		return Decoded{}, err
	}
	return m.decoded, nil
}

// BlockhashString is the blockhash in base58.
func (d Decoded) BlockhashString() string { return d.Blockhash.String() }

// Key returns the static key at index i; ok is false for an index past
// the static keys (a loaded key, which Decode does not resolve).
func (d Decoded) Key(i uint8) (chain.Address, bool) {
	if int(i) >= len(d.StaticKeys) {
		return chain.Address{}, false
	}
	return d.StaticKeys[i], true
}

// IsSigner reports whether the key at index i must sign.
func (d Decoded) IsSigner(i int) bool { return i >= 0 && i < d.NumSigners }

// IsWritable reports whether the static key at index i is writable: a
// signer other than the last NumReadonlySigned signers, or a non-signer
// other than the last NumReadonlyUnsigned static keys. Loaded keys are
// not covered.
func (d Decoded) IsWritable(i int) bool {
	switch {
	case i < 0 || i >= len(d.StaticKeys):
		return false
	case i < d.NumSigners:
		return i < d.NumSigners-d.NumReadonlySigned
	}
	return i < len(d.StaticKeys)-d.NumReadonlyUnsigned
}
