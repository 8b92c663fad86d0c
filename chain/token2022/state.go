package token2022

import (
	"encoding/binary"
	"strconv"

	"github.com/creatormusic/platform/fault"
)

// Sizes of the base layouts (chain.md §5.1).
const (
	// MintSize is the length of a mint without extensions.
	MintSize = 82
	// AccountSize is the length of a token account without extensions; an
	// extended mint is zero-padded to it before its account-type byte.
	AccountSize = 165
)

// Offsets and markers of the extended layout (chain.md §5.2).
const (
	// accountTypeOffset is where the extended layout keeps its AccountType byte.
	accountTypeOffset = AccountSize
	// tlvOffset is where the first extension starts.
	tlvOffset = AccountSize + 1
	// accountTypeMint and accountTypeAccount are the AccountType byte values.
	accountTypeMint    = 1
	accountTypeAccount = 2
	// multisigSize is the Multisig account length; no mint or token account
	// may have it, so an extended layout that would is padded by two bytes.
	multisigSize = 355
	// coptionKeySize is a COption<Pubkey>: a u32 tag (0 none, 1 some) and 32 bytes.
	coptionKeySize = 4 + 32
)

// Mint is a decoded mint account of the SPL Token or Token-2022 program.
type Mint struct {
	// MintAuthority may mint new tokens; nil means none (supply is fixed).
	MintAuthority *PublicKey
	// Supply is the total supply in atomic units.
	Supply uint64
	// Decimals is the number of base-10 digits after the decimal point.
	Decimals uint8
	// IsInitialized is set once the mint has been initialized.
	IsInitialized bool
	// FreezeAuthority may freeze token accounts; nil means none.
	FreezeAuthority *PublicKey
	// Extensions are the Token-2022 extensions in TLV order. nil means the
	// base 82-byte layout; a non-nil slice, even empty, means the extended
	// layout (account-type byte at offset 165 and TLV after it).
	Extensions []Extension
}

// AccountState is the state byte of a token account.
type AccountState uint8

// Token account states (offset 108 of an account).
const (
	// StateUninitialized is an account not yet initialized.
	StateUninitialized AccountState = 0
	// StateInitialized is a usable account.
	StateInitialized AccountState = 1
	// StateFrozen is an account its mint's freeze authority has frozen.
	StateFrozen AccountState = 2
)

// String returns the state's name.
func (s AccountState) String() string {
	switch s {
	case StateUninitialized:
		return "Uninitialized"
	case StateInitialized:
		return "Initialized"
	case StateFrozen:
		return "Frozen"
	}
	return "AccountState(" + strconv.Itoa(int(s)) + ")"
}

// Account is a decoded token account of the SPL Token or Token-2022 program.
type Account struct {
	// Mint is the mint whose tokens the account holds.
	Mint PublicKey
	// Owner may transfer the account's tokens.
	Owner PublicKey
	// Amount is the balance in atomic units.
	Amount uint64
	// Delegate may transfer up to DelegatedAmount; nil means none.
	Delegate *PublicKey
	// State is uninitialized, initialized or frozen.
	State AccountState
	// IsNative, when not nil, marks a wrapped-SOL account and holds its
	// rent-exempt reserve in lamports.
	IsNative *uint64
	// DelegatedAmount is what the delegate may still transfer.
	DelegatedAmount uint64
	// CloseAuthority may close the account; nil means the owner.
	CloseAuthority *PublicKey
	// Extensions are the Token-2022 extensions in TLV order, such as
	// TransferFeeAmount. nil means the base 165-byte layout; a non-nil slice,
	// even empty, means the extended layout.
	Extensions []Extension
}

// DecodeMint decodes mint account data: the 82-byte base layout, or the
// Token-2022 extended layout (base zero-padded to 165 bytes, AccountType 1 at
// offset 165, TLV extensions from 166). Unknown extension types are kept as
// RawExtension. It fails with INVALID_INPUT, details naming the offset, on a
// length that is neither layout (or the Multisig length 355), a COption tag or
// boolean other than 0 or 1, non-zero padding, a wrong account type, a
// truncated TLV entry, or a known extension whose value is malformed.
// Anything after a zero extension type, or a lone trailing byte, is ignored,
// as the program does.
func DecodeMint(data []byte) (Mint, error) {
	const op = "token2022.DecodeMint"
	var m Mint
	if len(data) < MintSize {
		return m, fault.E(op, fault.InvalidInput, "mint data is shorter than 82 bytes").With("length", len(data))
	}
	var err error
	if m.MintAuthority, err = decodeCOptionKey(op, data, 0); err != nil {
		return Mint{}, err
	}
	m.Supply = binary.LittleEndian.Uint64(data[36:])
	m.Decimals = data[44]
	if m.IsInitialized, err = decodeBool(op, data, 45); err != nil {
		return Mint{}, err
	}
	if m.FreezeAuthority, err = decodeCOptionKey(op, data, 46); err != nil {
		return Mint{}, err
	}
	if len(data) == MintSize {
		return m, nil
	}
	if m.Extensions, err = decodeExtended(op, data, MintSize, accountTypeMint); err != nil {
		return Mint{}, err
	}
	return m, nil
}

// DecodeAccount decodes token account data: the 165-byte base layout, or the
// Token-2022 extended layout (AccountType 2 at offset 165, TLV extensions from
// 166). It fails as DecodeMint does, and on a state byte above 2.
func DecodeAccount(data []byte) (Account, error) {
	const op = "token2022.DecodeAccount"
	var a Account
	if len(data) < AccountSize {
		return a, fault.E(op, fault.InvalidInput, "token account data is shorter than 165 bytes").With("length", len(data))
	}
	copy(a.Mint[:], data[0:32])
	copy(a.Owner[:], data[32:64])
	a.Amount = binary.LittleEndian.Uint64(data[64:])
	var err error
	if a.Delegate, err = decodeCOptionKey(op, data, 72); err != nil {
		return Account{}, err
	}
	a.State = AccountState(data[108])
	if a.State > StateFrozen {
		return Account{}, fault.E(op, fault.InvalidInput, "token account state is not 0, 1 or 2").With("offset", 108)
	}
	switch binary.LittleEndian.Uint32(data[109:]) {
	case 0:
	case 1:
		v := binary.LittleEndian.Uint64(data[113:])
		a.IsNative = &v
	default:
		return Account{}, fault.E(op, fault.InvalidInput, "COption tag is not 0 or 1").With("offset", 109)
	}
	a.DelegatedAmount = binary.LittleEndian.Uint64(data[121:])
	if a.CloseAuthority, err = decodeCOptionKey(op, data, 129); err != nil {
		return Account{}, err
	}
	if len(data) == AccountSize {
		return a, nil
	}
	if a.Extensions, err = decodeExtended(op, data, AccountSize, accountTypeAccount); err != nil {
		return Account{}, err
	}
	return a, nil
}

// EncodeMint returns the bytes of m, for tests and simulators: the 82-byte
// base layout when m.Extensions is nil, else the extended layout with the
// extensions in order (two zero bytes appended if the length would be the
// Multisig length 355, as the program does). DecodeMint(EncodeMint(m))
// equals m for any m whose extensions are well formed. It panics if an
// extension has type 0 or a value longer than 65535 bytes, which no account
// can hold.
func EncodeMint(m Mint) []byte {
	b := make([]byte, MintSize, MintSize+1)
	putCOptionKey(b[0:], m.MintAuthority)
	binary.LittleEndian.PutUint64(b[36:], m.Supply)
	b[44] = m.Decimals
	if m.IsInitialized {
		b[45] = 1
	}
	putCOptionKey(b[46:], m.FreezeAuthority)
	if m.Extensions == nil {
		return b
	}
	return appendExtended(b, accountTypeMint, m.Extensions)
}

// EncodeAccount returns the bytes of a, for tests and simulators, as
// EncodeMint does for mints: the 165-byte base layout when a.Extensions is
// nil, else the extended layout. DecodeAccount(EncodeAccount(a)) equals a for
// any a whose extensions are well formed. It panics as EncodeMint does.
func EncodeAccount(a Account) []byte {
	b := make([]byte, AccountSize, AccountSize+1)
	copy(b[0:], a.Mint[:])
	copy(b[32:], a.Owner[:])
	binary.LittleEndian.PutUint64(b[64:], a.Amount)
	putCOptionKey(b[72:], a.Delegate)
	b[108] = byte(a.State)
	if a.IsNative != nil {
		binary.LittleEndian.PutUint32(b[109:], 1)
		binary.LittleEndian.PutUint64(b[113:], *a.IsNative)
	}
	binary.LittleEndian.PutUint64(b[121:], a.DelegatedAmount)
	putCOptionKey(b[129:], a.CloseAuthority)
	if a.Extensions == nil {
		return b
	}
	return appendExtended(b, accountTypeAccount, a.Extensions)
}

// Extension returns the first extension of type t, as the program searches
// by type.
func (m Mint) Extension(t ExtensionType) (Extension, bool) { return findExtension(m.Extensions, t) }

// TransferFeeConfig returns the mint's TransferFeeConfig extension, if any.
func (m Mint) TransferFeeConfig() (TransferFeeConfig, bool) {
	return typedExtension(m.Extensions, ExtensionTransferFeeConfig, decodeTransferFeeConfig)
}

// MetadataPointer returns the mint's MetadataPointer extension, if any.
func (m Mint) MetadataPointer() (MetadataPointer, bool) {
	return typedExtension(m.Extensions, ExtensionMetadataPointer, decodeMetadataPointer)
}

// TokenMetadata returns the mint's embedded TokenMetadata extension, if any.
func (m Mint) TokenMetadata() (TokenMetadata, bool) {
	return typedExtension(m.Extensions, ExtensionTokenMetadata, decodeTokenMetadata)
}

// Extension returns the first extension of type t, as the program searches
// by type.
func (a Account) Extension(t ExtensionType) (Extension, bool) {
	return findExtension(a.Extensions, t)
}

// TransferFeeAmount returns the account's TransferFeeAmount extension (the
// fees withheld on it), if any.
func (a Account) TransferFeeAmount() (TransferFeeAmount, bool) {
	return typedExtension(a.Extensions, ExtensionTransferFeeAmount, decodeTransferFeeAmount)
}

// decodeExtended checks the part of an extended layout between the base and
// the TLV, then decodes the TLV.
func decodeExtended(op string, data []byte, baseLen int, accountType byte) ([]Extension, error) {
	if len(data) <= accountTypeOffset {
		return nil, fault.E(op, fault.InvalidInput, "length is neither the base layout nor the extended layout").With("length", len(data))
	}
	if len(data) == multisigSize {
		return nil, fault.E(op, fault.InvalidInput, "length is the Multisig length").With("length", len(data))
	}
	for i := baseLen; i < accountTypeOffset; i++ {
		if data[i] != 0 {
			return nil, fault.E(op, fault.InvalidInput, "padding before the account type is not zero").With("offset", i)
		}
	}
	if data[accountTypeOffset] != accountType {
		return nil, fault.E(op, fault.InvalidInput, "account type byte does not match the layout").
			With("offset", accountTypeOffset).With("accountType", int(data[accountTypeOffset]))
	}
	return decodeTLV(op, data, tlvOffset)
}

// appendExtended pads b to the account length, appends the account type and
// the TLV, and avoids the Multisig length.
func appendExtended(b []byte, accountType byte, exts []Extension) []byte {
	b = append(b, make([]byte, accountTypeOffset-len(b))...)
	b = append(b, accountType)
	b = appendTLV(b, exts)
	if len(b) == multisigSize {
		b = append(b, 0, 0)
	}
	return b
}

// decodeCOptionKey reads a COption<Pubkey> at off. The 32 bytes of a none are
// ignored, as the program ignores them.
func decodeCOptionKey(op string, data []byte, off int) (*PublicKey, error) {
	switch binary.LittleEndian.Uint32(data[off:]) {
	case 0:
		return nil, nil
	case 1:
		var k PublicKey
		copy(k[:], data[off+4:off+coptionKeySize])
		return &k, nil
	}
	return nil, fault.E(op, fault.InvalidInput, "COption tag is not 0 or 1").With("offset", off)
}

// putCOptionKey writes k as a COption<Pubkey> into b, which is zeroed.
func putCOptionKey(b []byte, k *PublicKey) {
	if k == nil {
		return
	}
	binary.LittleEndian.PutUint32(b, 1)
	copy(b[4:coptionKeySize], k[:])
}

// decodeBool reads a 0/1 byte at off.
func decodeBool(op string, data []byte, off int) (bool, error) {
	switch data[off] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, fault.E(op, fault.InvalidInput, "boolean byte is not 0 or 1").With("offset", off)
}
