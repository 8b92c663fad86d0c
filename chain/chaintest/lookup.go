package chaintest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
)

// Address lookup tables as the Address Lookup Table program stores them:
// a 56-byte LookupTableMeta (bincode of ProgramState::LookupTable: u32
// discriminator 1, u64 deactivation_slot, u64 last_extended_slot, u8
// last_extended_slot_start_index, Option<Pubkey> authority as a 1-byte tag
// and 32 bytes, u16 padding), zero-filled to 56 bytes, then the 32-byte
// addresses.
const (
	lookupTableMetaSize     = 56
	lookupTableMaxAddresses = 256
	// slotHashesKept is how many recent slots the SlotHashes sysvar
	// remembers: a deactivated table stays usable while its deactivation
	// slot is among them.
	slotHashesKept = 512
	// activeSlot is the deactivation slot of an active table.
	activeSlot = math.MaxUint64
)

// lookupProgram is the Address Lookup Table program.
var lookupProgram = chain.Address(solana.AddressLookupTableProgramID)

// LookupTableProgramID returns the Address Lookup Table program id,
// AddressLookupTab1e1111111111111111111111111.
func LookupTableProgramID() chain.Address { return lookupProgram }

// lookupTable is a decoded table account.
type lookupTable struct {
	deactivationSlot uint64
	lastExtendedSlot uint64
	lastExtendedFrom uint8
	authority        *chain.Address
	addresses        []chain.Address
}

func (t lookupTable) encode() []byte {
	b := make([]byte, lookupTableMetaSize, lookupTableMetaSize+32*len(t.addresses))
	binary.LittleEndian.PutUint32(b[0:], 1)
	binary.LittleEndian.PutUint64(b[4:], t.deactivationSlot)
	binary.LittleEndian.PutUint64(b[12:], t.lastExtendedSlot)
	b[20] = t.lastExtendedFrom
	if t.authority != nil {
		b[21] = 1
		copy(b[22:54], t.authority[:])
	}
	for _, a := range t.addresses {
		b = append(b, a[:]...)
	}
	return b
}

// errLookupData is a table account whose bytes are not a lookup table.
var errLookupData = errors.New("not an initialized address lookup table")

func decodeLookupTable(data []byte) (lookupTable, error) {
	var t lookupTable
	if len(data) < lookupTableMetaSize || binary.LittleEndian.Uint32(data) != 1 {
		return t, errLookupData
	}
	t.deactivationSlot = binary.LittleEndian.Uint64(data[4:])
	t.lastExtendedSlot = binary.LittleEndian.Uint64(data[12:])
	t.lastExtendedFrom = data[20]
	switch data[21] {
	case 0:
	case 1:
		a := chain.Address(data[22:54])
		t.authority = &a
	default:
		return t, errLookupData
	}
	rest := data[lookupTableMetaSize:]
	if len(rest)%32 != 0 {
		return t, errLookupData
	}
	for i := 0; i < len(rest); i += 32 {
		t.addresses = append(t.addresses, chain.Address(rest[i:i+32]))
	}
	return t, nil
}

// activeLen is how many of the table's addresses a transaction in slot may
// load; ok is false once the table is deactivated past the SlotHashes
// cool-down. Addresses appended in slot itself are not usable yet.
func (t lookupTable) activeLen(slot uint64) (n int, ok bool) {
	if t.deactivationSlot != activeSlot && t.deactivationSlot != slot &&
		(t.deactivationSlot > slot || slot-t.deactivationSlot > slotHashesKept) {
		return 0, false
	}
	if slot > t.lastExtendedSlot {
		return len(t.addresses), true
	}
	return int(t.lastExtendedFrom), true
}

// CreateLookupTable stores an active address lookup table holding addrs,
// with authority as its authority, and returns its address. The address
// is derived as the program derives it, from the authority and a recent
// slot (the current one, or an earlier one still in SlotHashes if that
// address is taken); the account is owned by the Address Lookup Table
// program and holds rent-exempt lamports. As on a node, the addresses are
// usable from the next slot on: a transaction landing in the slot the
// table was filled cannot load them.
func (c *Cluster) CreateLookupTable(authority chain.Address, addrs []chain.Address) (chain.Address, error) {
	if len(addrs) > lookupTableMaxAddresses {
		return chain.Address{}, fmt.Errorf("chaintest: CreateLookupTable: %d addresses, a table holds at most %d", len(addrs), lookupTableMaxAddresses)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for back := uint64(0); back <= min(c.slot, slotHashesKept-1); back++ {
		recent := c.slot - back
		addr, _, err := solana.FindProgramAddress([][]byte{authority[:], binary.LittleEndian.AppendUint64(nil, recent)}, solana.PublicKey(lookupProgram))
		if err != nil {
			continue
		}
		if _, taken := c.accounts[chain.Address(addr)]; taken {
			continue
		}
		auth := authority
		t := lookupTable{deactivationSlot: activeSlot, authority: &auth, addresses: append([]chain.Address(nil), addrs...)}
		if len(addrs) > 0 {
			t.lastExtendedSlot = c.slot
		}
		data := t.encode()
		c.accounts[chain.Address(addr)] = newStored(Account{Owner: lookupProgram, Lamports: RentExemptMinimum(len(data)), Data: data})
		return chain.Address(addr), nil
	}
	return chain.Address{}, fmt.Errorf("chaintest: CreateLookupTable: every recent slot's table address of %s is taken", authority)
}

// ExtendLookupTable appends addrs to the table, as the program's
// ExtendLookupTable does: the new addresses are usable from the next slot,
// and lamports are topped up to rent exemption. A deactivated table cannot
// be extended.
func (c *Cluster) ExtendLookupTable(table chain.Address, addrs []chain.Address) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, t, err := c.lookupTableLocked(table)
	if err != nil {
		return fmt.Errorf("chaintest: ExtendLookupTable: %w", err)
	}
	if t.deactivationSlot != activeSlot {
		return fmt.Errorf("chaintest: ExtendLookupTable: %s is deactivated", table)
	}
	if len(addrs) == 0 || len(t.addresses)+len(addrs) > lookupTableMaxAddresses {
		return fmt.Errorf("chaintest: ExtendLookupTable: %d addresses onto %d (1 to %d in all)", len(addrs), len(t.addresses), lookupTableMaxAddresses)
	}
	if t.lastExtendedSlot != c.slot {
		t.lastExtendedSlot = c.slot
		t.lastExtendedFrom = uint8(len(t.addresses))
	}
	t.addresses = append(t.addresses, addrs...)
	a := s.Account
	a.Data = t.encode()
	a.Lamports = max(a.Lamports, RentExemptMinimum(len(a.Data)))
	c.accounts[table] = newStored(a)
	return nil
}

// DeactivateLookupTable marks the table deactivated in the current slot.
// As on a node it stays usable while that slot is among the 512 recent
// slots of SlotHashes; from then on a transaction that loads from it fails
// as if the table did not exist.
func (c *Cluster) DeactivateLookupTable(table chain.Address) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, t, err := c.lookupTableLocked(table)
	if err != nil {
		return fmt.Errorf("chaintest: DeactivateLookupTable: %w", err)
	}
	if t.deactivationSlot != activeSlot {
		return fmt.Errorf("chaintest: DeactivateLookupTable: %s is already deactivated", table)
	}
	t.deactivationSlot = c.slot
	a := s.Account
	a.Data = t.encode()
	c.accounts[table] = newStored(a)
	return nil
}

// LookupTable returns the table at addr with every address it holds, in
// the form message.CompileV0 takes.
func (c *Cluster) LookupTable(addr chain.Address) (message.LookupTable, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, t, err := c.lookupTableLocked(addr)
	if err != nil {
		return message.LookupTable{}, fmt.Errorf("chaintest: LookupTable: %w", err)
	}
	return message.LookupTable{Address: addr, Addresses: t.addresses}, nil
}

func (c *Cluster) lookupTableLocked(addr chain.Address) (*stored, lookupTable, error) {
	s, ok := c.accounts[addr]
	if !ok {
		return nil, lookupTable{}, fmt.Errorf("no account at %s", addr)
	}
	if s.Owner != lookupProgram {
		return nil, lookupTable{}, fmt.Errorf("%s is owned by %s, not the lookup table program", addr, s.Owner)
	}
	t, err := decodeLookupTable(s.Data)
	if err != nil {
		return nil, lookupTable{}, fmt.Errorf("%s: %w", addr, err)
	}
	return s, t, nil
}

// loadAddressesLocked resolves p's address-table lookups against the
// current slot, as a node's address loader does when it sanitizes a
// transaction, and sets p's full key list: static keys, every lookup's
// writable addresses, then every lookup's read-only addresses. Its errors
// are the node's: -32602 "invalid transaction: …" with the
// TransactionError's text. The caller holds c.mu.
func (c *Cluster) loadAddressesLocked(p *parsedTx) *rpcError {
	p.keys = p.keys[:p.static]
	p.loadedW, p.loadedR = nil, nil
	if len(p.tx.Message.AddressTableLookups) == 0 {
		return nil
	}
	var w, r []chain.Address
	for _, l := range p.tx.Message.AddressTableLookups {
		s, ok := c.accounts[chain.Address(l.AccountKey)]
		if !ok {
			return invalidTx("Transaction loads an address table account that doesn't exist")
		}
		if s.Owner != lookupProgram {
			return invalidTx("Transaction loads an address table account with an invalid owner")
		}
		t, err := decodeLookupTable(s.Data)
		if err != nil {
			return invalidTx("Transaction loads an address table account with invalid data")
		}
		n, ok := t.activeLen(c.slot)
		if !ok {
			return invalidTx("Transaction loads an address table account that doesn't exist")
		}
		for _, idx := range [][]uint8{l.WritableIndexes, l.ReadonlyIndexes} {
			for _, i := range idx {
				if int(i) >= n {
					return invalidTx("Transaction address table lookup uses an invalid index")
				}
			}
		}
		for _, i := range l.WritableIndexes {
			w = append(w, t.addresses[i])
		}
		for _, i := range l.ReadonlyIndexes {
			r = append(r, t.addresses[i])
		}
	}
	keys := append(append(append([]chain.Address(nil), p.keys...), w...), r...)
	seen := make(map[chain.Address]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			return invalidTx("Account loaded twice")
		}
		seen[k] = true
	}
	p.keys, p.loadedW, p.loadedR = keys, w, r
	return nil
}
