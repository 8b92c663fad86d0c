// Package message compiles Solana transaction messages, legacy and v0 with
// address lookup tables, from instructions (chain.md §3).
//
// It exists so that domain packages can build the transactions they hand
// to wallets without importing an SDK: the house rule keeps solana-go in
// adapters and tests, and a domain that prepares a payment or a swap needs
// only the wire format, which is small and stable. The package imports
// nothing of the module but chain; solana-go appears only in its tests,
// which decode what it compiles.
//
// Keys are ordered as a node expects them: the fee payer first, then the
// writable signers, the read-only signers, the writable non-signers and the
// read-only non-signers, each group in order of first appearance (an
// instruction's accounts, then its program id), with the flags of a key
// that appears more than once merged. A v0 message moves a key out of the
// static list into a lookup only when it is neither a signer nor a program
// id and a given table holds it; the first table that holds a key loads
// it. Loaded keys follow the static ones: every table's writable keys, then
// every table's read-only keys, which is the order instruction indexes and
// a node's balance arrays use.
//
// DecodeLookupTable reads an address lookup table account's data, as a
// getAccountInfo answer carries it, into the LookupTable a v0 message is
// compiled with.
package message

import (
	"errors"
	"fmt"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// Wire limits (chain.md §3).
const (
	// MaxTransactionSize is the largest serialized transaction, signatures
	// included (1280 − 40 − 8).
	MaxTransactionSize = 1232
	// MaxKeys is the most keys a message may reference, static and loaded
	// together: instruction account indexes are one byte.
	MaxKeys = 256
	// SignatureSize is an ed25519 signature's length.
	SignatureSize = 64
)

// ErrTooLarge is returned when the signed transaction would exceed
// MaxTransactionSize bytes.
var ErrTooLarge = errors.New("message: the transaction exceeds 1232 bytes")

// ErrTooManyKeys is returned when a message would reference more than
// MaxKeys keys.
var ErrTooManyKeys = errors.New("message: a message references at most 256 keys")

// AccountMeta is one account of an instruction with its flags.
type AccountMeta struct {
	// Key is the account's address.
	Key chain.Address
	// Signer marks an account whose signature the instruction needs.
	Signer bool
	// Writable marks an account the instruction may change.
	Writable bool
}

// Instruction is an instruction before compilation.
type Instruction struct {
	// ProgramID is the program called.
	ProgramID chain.Address
	// Accounts are the instruction's accounts in order.
	Accounts []AccountMeta
	// Data is the instruction data.
	Data []byte
}

// LookupTable is an address lookup table as a v0 message may use it: its
// account address and the addresses it holds, in order.
type LookupTable struct {
	// Address is the table account's address.
	Address chain.Address
	// Addresses are the table's entries; an entry's index is its position.
	Addresses []chain.Address
}

// Lookup is one compiled address-table lookup of a v0 message.
type Lookup struct {
	// Table is the table account's address.
	Table chain.Address
	// Writable and Readonly are indexes into the table.
	Writable, Readonly []uint8
}

// Compiled is a compiled message with the key layout it encodes.
type Compiled struct {
	// Bytes is the serialized message: what the signers sign.
	Bytes []byte
	// StaticKeys are the message's account keys; the first NumSigners sign.
	StaticKeys []chain.Address
	// NumSigners is the header's numRequiredSignatures.
	NumSigners int
	// Lookups are a v0 message's lookups (nil for legacy).
	Lookups []Lookup
	// LoadedWritable and LoadedReadonly are the addresses the lookups
	// load, in the order a node appends them to the static keys.
	LoadedWritable, LoadedReadonly []chain.Address
}

// Keys is the full key list: static keys, then loaded writable, then
// loaded read-only addresses.
func (c Compiled) Keys() []chain.Address {
	out := make([]chain.Address, 0, len(c.StaticKeys)+len(c.LoadedWritable)+len(c.LoadedReadonly))
	out = append(out, c.StaticKeys...)
	out = append(out, c.LoadedWritable...)
	return append(out, c.LoadedReadonly...)
}

// CompileLegacy serializes a legacy message paid by payer with the
// base58 recent blockhash and the instructions, and returns the bytes to
// sign.
func CompileLegacy(payer chain.Address, blockhash string, ixs []Instruction) ([]byte, error) {
	c, err := Compile(Legacy, payer, blockhash, ixs, nil)
	if err != nil {
		return nil, err
	}
	return c.Bytes, nil
}

// CompileV0 serializes a v0 message paid by payer with the base58 recent
// blockhash, the instructions and the lookup tables it may load keys
// from, and returns the bytes to sign. With no table (or no key a table
// holds) it is a v0 message without lookups.
func CompileV0(payer chain.Address, blockhash string, ixs []Instruction, tables []LookupTable) ([]byte, error) {
	c, err := Compile(V0, payer, blockhash, ixs, tables)
	if err != nil {
		return nil, err
	}
	return c.Bytes, nil
}

// Version is a message version.
type Version int

// The message versions.
const (
	// Legacy is the original message format; it cannot use lookup tables.
	Legacy Version = iota
	// V0 is the versioned format with address-table lookups (prefix 0x80).
	V0
)

// Compile compiles a message of version v as CompileLegacy or CompileV0
// do (a legacy message takes no tables) and returns it with its key
// layout.
func Compile(v Version, payer chain.Address, blockhash string, ixs []Instruction, tables []LookupTable) (Compiled, error) {
	if v != Legacy && v != V0 {
		return Compiled{}, fmt.Errorf("message: unknown version %d", v)
	}
	v0 := v == V0
	bh, err := token2022.ParsePublicKey(blockhash)
	if err != nil {
		return Compiled{}, fmt.Errorf("message: blockhash %q is not base58 of 32 bytes", truncate(blockhash, 64))
	}
	if !v0 && len(tables) > 0 {
		return Compiled{}, errors.New("message: a legacy message cannot use lookup tables")
	}
	static, invoked := orderKeys(payer, ixs)

	var c Compiled
	if v0 {
		static, c.Lookups, c.LoadedWritable, c.LoadedReadonly = extractLookups(static, invoked, tables)
	}
	if len(static) > MaxKeys || len(static)+len(c.LoadedWritable)+len(c.LoadedReadonly) > MaxKeys {
		return Compiled{}, ErrTooManyKeys
	}
	pos := make(map[chain.Address]int, MaxKeys)
	var signers, roSigners, roUnsigned int
	for i, e := range static {
		pos[e.key] = i
		c.StaticKeys = append(c.StaticKeys, e.key)
		switch {
		case e.signer && !e.writable:
			signers++
			roSigners++
		case e.signer:
			signers++
		case !e.writable:
			roUnsigned++
		}
	}
	n := len(static)
	for _, k := range c.LoadedWritable {
		pos[k] = n
		n++
	}
	for _, k := range c.LoadedReadonly {
		pos[k] = n
		n++
	}
	c.NumSigners = signers

	var b []byte
	if v0 {
		b = append(b, 0x80)
	}
	b = append(b, byte(signers), byte(roSigners), byte(roUnsigned))
	b = AppendCompactU16(b, len(static))
	for _, e := range static {
		b = append(b, e.key[:]...)
	}
	b = append(b, bh[:]...)
	b = AppendCompactU16(b, len(ixs))
	for _, ix := range ixs {
		b = append(b, byte(pos[ix.ProgramID]))
		b = AppendCompactU16(b, len(ix.Accounts))
		for _, a := range ix.Accounts {
			b = append(b, byte(pos[a.Key]))
		}
		b = AppendCompactU16(b, len(ix.Data))
		b = append(b, ix.Data...)
	}
	if v0 {
		b = AppendCompactU16(b, len(c.Lookups))
		for _, l := range c.Lookups {
			b = append(b, l.Table[:]...)
			b = AppendCompactU16(b, len(l.Writable))
			b = append(b, l.Writable...)
			b = AppendCompactU16(b, len(l.Readonly))
			b = append(b, l.Readonly...)
		}
	}
	if len(AppendCompactU16(nil, signers))+SignatureSize*signers+len(b) > MaxTransactionSize {
		return Compiled{}, ErrTooLarge
	}
	c.Bytes = b
	return c, nil
}

// entry is a key with its merged flags.
type entry struct {
	key              chain.Address
	signer, writable bool
}

// orderKeys lists every key the instructions use, payer first, in the
// static order of the package doc, and the set of invoked program ids.
func orderKeys(payer chain.Address, ixs []Instruction) ([]entry, map[chain.Address]bool) {
	var keys []entry
	index := map[chain.Address]int{}
	add := func(m AccountMeta) {
		if i, ok := index[m.Key]; ok {
			keys[i].signer = keys[i].signer || m.Signer
			keys[i].writable = keys[i].writable || m.Writable
			return
		}
		index[m.Key] = len(keys)
		keys = append(keys, entry{m.Key, m.Signer, m.Writable})
	}
	invoked := map[chain.Address]bool{}
	add(AccountMeta{Key: payer, Signer: true, Writable: true})
	for _, ix := range ixs {
		for _, a := range ix.Accounts {
			add(a)
		}
		add(AccountMeta{Key: ix.ProgramID})
		invoked[ix.ProgramID] = true
	}
	group := func(e entry) int {
		switch {
		case e.key == payer:
			return 0
		case e.signer && e.writable:
			return 1
		case e.signer:
			return 2
		case e.writable:
			return 3
		}
		return 4
	}
	ordered := make([]entry, 0, len(keys))
	for g := 0; g <= 4; g++ {
		for _, e := range keys {
			if group(e) == g {
				ordered = append(ordered, e)
			}
		}
	}
	return ordered, invoked
}

// extractLookups moves the non-signer, non-program keys that a table holds
// out of the static list. For each table in order it takes the writable
// keys it holds, then the read-only ones, at the first index holding each;
// a table that loads nothing is left out.
func extractLookups(static []entry, invoked map[chain.Address]bool, tables []LookupTable) (rest []entry, lookups []Lookup, writable, readonly []chain.Address) {
	loaded := map[chain.Address]bool{}
	for _, t := range tables {
		where := map[chain.Address]uint8{}
		for i, a := range t.Addresses {
			if i >= MaxKeys {
				break
			}
			if _, ok := where[a]; !ok {
				where[a] = uint8(i)
			}
		}
		l := Lookup{Table: t.Address}
		var w, r []chain.Address
		for _, e := range static {
			if e.signer || invoked[e.key] || loaded[e.key] {
				continue
			}
			i, ok := where[e.key]
			if !ok {
				continue
			}
			loaded[e.key] = true
			if e.writable {
				l.Writable = append(l.Writable, i)
				w = append(w, e.key)
			} else {
				l.Readonly = append(l.Readonly, i)
				r = append(r, e.key)
			}
		}
		if len(w)+len(r) == 0 {
			continue
		}
		lookups = append(lookups, l)
		writable = append(writable, w...)
		readonly = append(readonly, r...)
	}
	for _, e := range static {
		if !loaded[e.key] {
			rest = append(rest, e)
		}
	}
	return rest, lookups, writable, readonly
}

// AppendCompactU16 appends n in Solana's compact-u16 encoding: 7 bits per
// byte, low first, 0x80 marking more.
func AppendCompactU16(b []byte, n int) []byte {
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
