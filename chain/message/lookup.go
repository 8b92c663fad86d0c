package message

import (
	"encoding/binary"
	"fmt"

	"github.com/creatormusic/platform/chain"
)

// lookupTableMetaSize is the size of an address lookup table account's
// header (the program's LookupTableMeta, zero-padded); the table's 32-byte
// addresses follow it.
const lookupTableMetaSize = 56

// DecodeLookupTable reads the data of the address lookup table account at
// addr, as the Address Lookup Table program stores it, into the form
// CompileV0 takes. The header is the bincode of the program's
// ProgramState::LookupTable: a u32 discriminator 1, the u64 deactivation
// slot, the u64 last extended slot, its u8 start index and the optional
// authority (a tag byte 0 or 1 and 32 bytes), padded to
// lookupTableMetaSize; every following 32 bytes are one address, in index
// order.
//
// It fails on data that is not an initialized table: too short, another
// discriminator (0 is an uninitialized account), an authority tag other
// than 0 or 1, or addresses that do not fill whole 32-byte slots. It reads
// bytes only: the caller checks that the account is owned by the Address
// Lookup Table program (AddressLookupTab1e1111111111111111111111111), and
// a node, not this function, refuses a table deactivated long enough ago
// (chain.md §3).
func DecodeLookupTable(addr chain.Address, data []byte) (LookupTable, error) {
	if len(data) < lookupTableMetaSize {
		return LookupTable{}, fmt.Errorf("message: lookup table %s: %d bytes, shorter than its %d-byte header", addr, len(data), lookupTableMetaSize)
	}
	if d := binary.LittleEndian.Uint32(data); d != 1 {
		return LookupTable{}, fmt.Errorf("message: lookup table %s: discriminator %d, want 1 (an initialized table)", addr, d)
	}
	if tag := data[21]; tag > 1 {
		return LookupTable{}, fmt.Errorf("message: lookup table %s: authority tag %d, want 0 or 1", addr, tag)
	}
	rest := data[lookupTableMetaSize:]
	if len(rest)%32 != 0 {
		return LookupTable{}, fmt.Errorf("message: lookup table %s: %d address bytes, not a multiple of 32", addr, len(rest))
	}
	t := LookupTable{Address: addr, Addresses: make([]chain.Address, 0, len(rest)/32)}
	for i := 0; i < len(rest); i += 32 {
		t.Addresses = append(t.Addresses, chain.Address(rest[i:i+32]))
	}
	return t, nil
}
