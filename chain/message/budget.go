package message

// This file builds and reads the Compute Budget program's two instructions
// a payment may carry (chain.md §4): the compute unit limit and the
// compute unit price.

import (
	"encoding/binary"

	"github.com/creatormusic/platform/chain"
)

// Compute Budget instruction discriminants (chain.md §4).
const (
	// ixSetComputeUnitLimit is SetComputeUnitLimit: 2, u32 units.
	ixSetComputeUnitLimit = 2
	// ixSetComputeUnitPrice is SetComputeUnitPrice: 3, u64 micro-lamports
	// per compute unit.
	ixSetComputeUnitPrice = 3
)

// ComputeBudgetProgramID returns the Compute Budget program's id,
// ComputeBudget111111111111111111111111111111.
func ComputeBudgetProgramID() chain.Address {
	return chain.Address{
		0x03, 0x06, 0x46, 0x6f, 0xe5, 0x21, 0x17, 0x32, 0xff, 0xec, 0xad, 0xba, 0x72, 0xc3, 0x9b, 0xe7,
		0xbc, 0x8c, 0xe5, 0xbb, 0xc5, 0xf7, 0x12, 0x6b, 0x2c, 0x43, 0x9b, 0x3a, 0x40, 0x00, 0x00, 0x00,
	}
}

// SetComputeUnitLimit returns the Compute Budget instruction that bounds
// the transaction's compute units: data 2, u32 units; no accounts.
func SetComputeUnitLimit(units uint32) Instruction {
	return Instruction{ProgramID: ComputeBudgetProgramID(), Data: binary.LittleEndian.AppendUint32([]byte{ixSetComputeUnitLimit}, units)}
}

// SetComputeUnitPrice returns the Compute Budget instruction that sets
// the priority fee in micro-lamports per compute unit: data 3, u64; no
// accounts.
func SetComputeUnitPrice(microLamports uint64) Instruction {
	return Instruction{ProgramID: ComputeBudgetProgramID(), Data: binary.LittleEndian.AppendUint64([]byte{ixSetComputeUnitPrice}, microLamports)}
}

// DecodeComputeUnitLimit reads a SetComputeUnitLimit's data (5 bytes);
// ok is false for any other data. It does not look at the program id.
func DecodeComputeUnitLimit(data []byte) (units uint32, ok bool) {
	if len(data) != 5 || data[0] != ixSetComputeUnitLimit {
		return 0, false
	}
	return binary.LittleEndian.Uint32(data[1:]), true
}

// DecodeComputeUnitPrice reads a SetComputeUnitPrice's data (9 bytes);
// ok is false for any other data. It does not look at the program id.
func DecodeComputeUnitPrice(data []byte) (microLamports uint64, ok bool) {
	if len(data) != 9 || data[0] != ixSetComputeUnitPrice {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[1:]), true
}
