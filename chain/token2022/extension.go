package token2022

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/creatormusic/platform/fault"
)

// ExtensionType is the u16 type of a Token-2022 TLV entry (chain.md §5.2).
type ExtensionType uint16

// Extension types. The comment gives the account kind the extension lives on
// and its value size in bytes.
const (
	// ExtensionUninitialized (0) ends the TLV scan; it is never an entry.
	ExtensionUninitialized ExtensionType = 0
	// ExtensionTransferFeeConfig (1) is the mint's fee schedule (mint, 108).
	ExtensionTransferFeeConfig ExtensionType = 1
	// ExtensionTransferFeeAmount (2) holds fees withheld on an account (account, 8).
	ExtensionTransferFeeAmount ExtensionType = 2
	// ExtensionMintCloseAuthority (3) lets an authority close the mint (mint, 32).
	ExtensionMintCloseAuthority ExtensionType = 3
	// ExtensionConfidentialTransferMint (4) configures confidential transfers (mint).
	ExtensionConfidentialTransferMint ExtensionType = 4
	// ExtensionConfidentialTransferAccount (5) holds confidential balances (account).
	ExtensionConfidentialTransferAccount ExtensionType = 5
	// ExtensionDefaultAccountState (6) sets new accounts' state (mint, 1).
	ExtensionDefaultAccountState ExtensionType = 6
	// ExtensionImmutableOwner (7) forbids changing the owner (account, 0).
	ExtensionImmutableOwner ExtensionType = 7
	// ExtensionMemoTransfer (8) requires a memo on incoming transfers (account).
	ExtensionMemoTransfer ExtensionType = 8
	// ExtensionNonTransferable (9) makes the tokens soulbound (mint, 0).
	ExtensionNonTransferable ExtensionType = 9
	// ExtensionInterestBearingConfig (10) displays accrued interest (mint, 52).
	ExtensionInterestBearingConfig ExtensionType = 10
	// ExtensionCpiGuard (11) restricts what programs may do via CPI (account).
	ExtensionCpiGuard ExtensionType = 11
	// ExtensionPermanentDelegate (12) is a delegate over every account (mint, 32).
	ExtensionPermanentDelegate ExtensionType = 12
	// ExtensionNonTransferableAccount (13) marks an account of a NonTransferable mint (account).
	ExtensionNonTransferableAccount ExtensionType = 13
	// ExtensionTransferHook (14) names a program called on transfer (mint, 64).
	ExtensionTransferHook ExtensionType = 14
	// ExtensionTransferHookAccount (15) marks a transfer in progress (account).
	ExtensionTransferHookAccount ExtensionType = 15
	// ExtensionConfidentialTransferFeeConfig (16) configures confidential fees (mint).
	ExtensionConfidentialTransferFeeConfig ExtensionType = 16
	// ExtensionConfidentialTransferFeeAmount (17) holds confidential withheld fees (account).
	ExtensionConfidentialTransferFeeAmount ExtensionType = 17
	// ExtensionMetadataPointer (18) points at the token's metadata (mint, 64).
	ExtensionMetadataPointer ExtensionType = 18
	// ExtensionTokenMetadata (19) is metadata embedded in the mint (mint, variable).
	ExtensionTokenMetadata ExtensionType = 19
	// ExtensionGroupPointer (20) points at a token group (mint).
	ExtensionGroupPointer ExtensionType = 20
	// ExtensionTokenGroup (21) is a token group embedded in the mint (mint).
	ExtensionTokenGroup ExtensionType = 21
	// ExtensionGroupMemberPointer (22) points at a group membership (mint).
	ExtensionGroupMemberPointer ExtensionType = 22
	// ExtensionTokenGroupMember (23) is a group membership embedded in the mint (mint).
	ExtensionTokenGroupMember ExtensionType = 23
	// ExtensionConfidentialMintBurn (24) configures confidential mint and burn (mint).
	ExtensionConfidentialMintBurn ExtensionType = 24
	// ExtensionScaledUiAmount (25) scales displayed amounts (mint, 56).
	ExtensionScaledUiAmount ExtensionType = 25
	// ExtensionPausable (26) lets an authority pause the mint (mint, 33).
	ExtensionPausable ExtensionType = 26
	// ExtensionPausableAccount (27) marks an account of a Pausable mint (account, 0).
	ExtensionPausableAccount ExtensionType = 27
	// ExtensionPermissionedBurn (28) restricts burning (mint).
	ExtensionPermissionedBurn ExtensionType = 28
)

// String returns the extension type's name in the program's spelling, or
// "ExtensionType(n)" for a type this package does not know.
func (t ExtensionType) String() string {
	switch t {
	case ExtensionUninitialized:
		return "Uninitialized"
	case ExtensionTransferFeeConfig:
		return "TransferFeeConfig"
	case ExtensionTransferFeeAmount:
		return "TransferFeeAmount"
	case ExtensionMintCloseAuthority:
		return "MintCloseAuthority"
	case ExtensionConfidentialTransferMint:
		return "ConfidentialTransferMint"
	case ExtensionConfidentialTransferAccount:
		return "ConfidentialTransferAccount"
	case ExtensionDefaultAccountState:
		return "DefaultAccountState"
	case ExtensionImmutableOwner:
		return "ImmutableOwner"
	case ExtensionMemoTransfer:
		return "MemoTransfer"
	case ExtensionNonTransferable:
		return "NonTransferable"
	case ExtensionInterestBearingConfig:
		return "InterestBearingConfig"
	case ExtensionCpiGuard:
		return "CpiGuard"
	case ExtensionPermanentDelegate:
		return "PermanentDelegate"
	case ExtensionNonTransferableAccount:
		return "NonTransferableAccount"
	case ExtensionTransferHook:
		return "TransferHook"
	case ExtensionTransferHookAccount:
		return "TransferHookAccount"
	case ExtensionConfidentialTransferFeeConfig:
		return "ConfidentialTransferFeeConfig"
	case ExtensionConfidentialTransferFeeAmount:
		return "ConfidentialTransferFeeAmount"
	case ExtensionMetadataPointer:
		return "MetadataPointer"
	case ExtensionTokenMetadata:
		return "TokenMetadata"
	case ExtensionGroupPointer:
		return "GroupPointer"
	case ExtensionTokenGroup:
		return "TokenGroup"
	case ExtensionGroupMemberPointer:
		return "GroupMemberPointer"
	case ExtensionTokenGroupMember:
		return "TokenGroupMember"
	case ExtensionConfidentialMintBurn:
		return "ConfidentialMintBurn"
	case ExtensionScaledUiAmount:
		return "ScaledUiAmount"
	case ExtensionPausable:
		return "Pausable"
	case ExtensionPausableAccount:
		return "PausableAccount"
	case ExtensionPermissionedBurn:
		return "PermissionedBurn"
	}
	return "ExtensionType(" + strconv.Itoa(int(t)) + ")"
}

// Extension is one TLV entry of an extended mint or account. The decoders
// produce TransferFeeConfig, TransferFeeAmount, MetadataPointer and
// TokenMetadata for those types and RawExtension for every other type. The
// set is closed: only this package's types implement it.
type Extension interface {
	// ExtensionType returns the TLV type the entry is stored under.
	ExtensionType() ExtensionType
	// appendValue appends the entry's TLV value to b.
	appendValue(b []byte) []byte
}

// RawExtension is an entry kept as its bytes: any type this package does not
// decode, including zero-length markers such as ImmutableOwner.
type RawExtension struct {
	// Type is the entry's TLV type; it must not be 0.
	Type ExtensionType
	// Value is the entry's value; nil when empty.
	Value []byte
}

// ExtensionType returns r.Type.
func (r RawExtension) ExtensionType() ExtensionType { return r.Type }

func (r RawExtension) appendValue(b []byte) []byte { return append(b, r.Value...) }

// TransferFeeConfig is the mint's fee schedule (TLV type 1, 108 bytes,
// chain.md §5.3). The fee rules are its methods and TransferFee's.
type TransferFeeConfig struct {
	// ConfigAuthority may change the fee (transfer_fee_config_authority);
	// zero means none.
	ConfigAuthority PublicKey
	// WithdrawWithheldAuthority may withdraw withheld fees; zero means none.
	WithdrawWithheldAuthority PublicKey
	// WithheldAmount is the fees harvested from accounts to the mint.
	WithheldAmount uint64
	// Older is the fee in force before Newer.Epoch.
	Older TransferFee
	// Newer is the fee in force from Newer.Epoch on.
	Newer TransferFee
}

// transferFeeConfigSize is the value length of TransferFeeConfig.
const transferFeeConfigSize = 108

// ExtensionType returns ExtensionTransferFeeConfig.
func (TransferFeeConfig) ExtensionType() ExtensionType { return ExtensionTransferFeeConfig }

func (c TransferFeeConfig) appendValue(b []byte) []byte {
	b = append(b, c.ConfigAuthority[:]...)
	b = append(b, c.WithdrawWithheldAuthority[:]...)
	b = binary.LittleEndian.AppendUint64(b, c.WithheldAmount)
	b = c.Older.appendValue(b)
	return c.Newer.appendValue(b)
}

func (f TransferFee) appendValue(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, f.Epoch)
	b = binary.LittleEndian.AppendUint64(b, f.MaximumFee)
	return binary.LittleEndian.AppendUint16(b, f.BasisPoints)
}

func decodeTransferFee(v []byte) TransferFee {
	return TransferFee{
		Epoch:       binary.LittleEndian.Uint64(v[0:]),
		MaximumFee:  binary.LittleEndian.Uint64(v[8:]),
		BasisPoints: binary.LittleEndian.Uint16(v[16:]),
	}
}

func decodeTransferFeeConfig(v []byte) (TransferFeeConfig, error) {
	var c TransferFeeConfig
	if len(v) != transferFeeConfigSize {
		return c, errValueSize(transferFeeConfigSize, len(v))
	}
	copy(c.ConfigAuthority[:], v[0:32])
	copy(c.WithdrawWithheldAuthority[:], v[32:64])
	c.WithheldAmount = binary.LittleEndian.Uint64(v[64:])
	c.Older = decodeTransferFee(v[72:90])
	c.Newer = decodeTransferFee(v[90:108])
	return c, nil
}

// TransferFeeAmount holds the transfer fees withheld on a token account (TLV
// type 2, 8 bytes).
type TransferFeeAmount struct {
	// Withheld is the fees withheld on the account, in atomic units.
	Withheld uint64
}

// ExtensionType returns ExtensionTransferFeeAmount.
func (TransferFeeAmount) ExtensionType() ExtensionType { return ExtensionTransferFeeAmount }

func (a TransferFeeAmount) appendValue(b []byte) []byte {
	return binary.LittleEndian.AppendUint64(b, a.Withheld)
}

func decodeTransferFeeAmount(v []byte) (TransferFeeAmount, error) {
	if len(v) != 8 {
		return TransferFeeAmount{}, errValueSize(8, len(v))
	}
	return TransferFeeAmount{Withheld: binary.LittleEndian.Uint64(v)}, nil
}

// MetadataPointer names the account holding the token's metadata (TLV type
// 18, 64 bytes, chain.md §5.5): the mint itself when the metadata is
// embedded as TokenMetadata.
type MetadataPointer struct {
	// Authority may change the pointer; zero means none.
	Authority PublicKey
	// MetadataAddress is the metadata account; zero means none.
	MetadataAddress PublicKey
}

// ExtensionType returns ExtensionMetadataPointer.
func (MetadataPointer) ExtensionType() ExtensionType { return ExtensionMetadataPointer }

func (p MetadataPointer) appendValue(b []byte) []byte {
	b = append(b, p.Authority[:]...)
	return append(b, p.MetadataAddress[:]...)
}

func decodeMetadataPointer(v []byte) (MetadataPointer, error) {
	var p MetadataPointer
	if len(v) != 64 {
		return p, errValueSize(64, len(v))
	}
	copy(p.Authority[:], v[0:32])
	copy(p.MetadataAddress[:], v[32:64])
	return p, nil
}

// TokenMetadata is token metadata embedded in the mint (TLV type 19, Borsh,
// variable length, chain.md §5.5). Its value length is
// 76 + len(Name) + len(Symbol) + len(URI) + 4 + Σ(8 + len(key) + len(value)).
type TokenMetadata struct {
	// UpdateAuthority may change the metadata; zero means none (immutable).
	UpdateAuthority PublicKey
	// Mint is the mint the metadata describes.
	Mint PublicKey
	// Name is the token's name.
	Name string
	// Symbol is the token's ticker symbol.
	Symbol string
	// URI points at the off-chain JSON metadata.
	URI string
	// AdditionalMetadata is the extra key/value pairs in order; nil when none.
	AdditionalMetadata []MetadataField
}

// MetadataField is one additional key/value pair of TokenMetadata.
type MetadataField struct {
	// Key is the field name.
	Key string
	// Value is the field value.
	Value string
}

// ExtensionType returns ExtensionTokenMetadata.
func (TokenMetadata) ExtensionType() ExtensionType { return ExtensionTokenMetadata }

func (t TokenMetadata) appendValue(b []byte) []byte {
	b = append(b, t.UpdateAuthority[:]...)
	b = append(b, t.Mint[:]...)
	b = appendBorshString(b, t.Name)
	b = appendBorshString(b, t.Symbol)
	b = appendBorshString(b, t.URI)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.AdditionalMetadata)))
	for _, f := range t.AdditionalMetadata {
		b = appendBorshString(b, f.Key)
		b = appendBorshString(b, f.Value)
	}
	return b
}

func appendBorshString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// decodeTokenMetadata reads the Borsh value, which must be consumed exactly
// and whose strings must be UTF-8, as Borsh requires.
func decodeTokenMetadata(v []byte) (TokenMetadata, error) {
	var t TokenMetadata
	if len(v) < 64 {
		return t, errAt("token metadata is shorter than its two keys", len(v))
	}
	copy(t.UpdateAuthority[:], v[0:32])
	copy(t.Mint[:], v[32:64])
	off := 64
	var err error
	for _, s := range []*string{&t.Name, &t.Symbol, &t.URI} {
		if *s, off, err = readBorshString(v, off); err != nil {
			return TokenMetadata{}, err
		}
	}
	if len(v)-off < 4 {
		return TokenMetadata{}, errAt("token metadata ends before its field count", off)
	}
	n := binary.LittleEndian.Uint32(v[off:])
	off += 4
	// Each pair takes at least 8 bytes: bound the count before allocating.
	if uint64(n) > uint64(len(v)-off)/8 {
		return TokenMetadata{}, errAt("token metadata field count exceeds its bytes", off-4)
	}
	if n > 0 {
		t.AdditionalMetadata = make([]MetadataField, n)
	}
	for i := range t.AdditionalMetadata {
		f := &t.AdditionalMetadata[i]
		if f.Key, off, err = readBorshString(v, off); err != nil {
			return TokenMetadata{}, err
		}
		if f.Value, off, err = readBorshString(v, off); err != nil {
			return TokenMetadata{}, err
		}
	}
	if off != len(v) {
		return TokenMetadata{}, errAt("token metadata has trailing bytes", off)
	}
	return t, nil
}

func readBorshString(v []byte, off int) (string, int, error) {
	if len(v)-off < 4 {
		return "", 0, errAt("token metadata ends inside a string length", off)
	}
	n := binary.LittleEndian.Uint32(v[off:])
	if uint64(n) > uint64(len(v)-off-4) {
		return "", 0, errAt("token metadata string runs past its value", off)
	}
	s := v[off+4 : off+4+int(n)]
	if !utf8.Valid(s) {
		return "", 0, errAt("token metadata string is not UTF-8", off)
	}
	return string(s), off + 4 + int(n), nil
}

// valueError is a malformed extension value; decodeTLV turns it into a fault
// naming the extension and the absolute offset.
type valueError struct {
	msg string
	off int // relative to the value's start
}

func (e *valueError) Error() string { return e.msg }

func errAt(msg string, off int) error { return &valueError{msg: msg, off: off} }

func errValueSize(want, got int) error {
	return &valueError{msg: "extension value is " + strconv.Itoa(got) + " bytes, not " + strconv.Itoa(want)}
}

// decodeExtension decodes the typed extensions and keeps the rest raw.
func decodeExtension(t ExtensionType, v []byte) (Extension, error) {
	switch t {
	case ExtensionTransferFeeConfig:
		return decodeTransferFeeConfig(v)
	case ExtensionTransferFeeAmount:
		return decodeTransferFeeAmount(v)
	case ExtensionMetadataPointer:
		return decodeMetadataPointer(v)
	case ExtensionTokenMetadata:
		return decodeTokenMetadata(v)
	}
	r := RawExtension{Type: t}
	if len(v) > 0 {
		r.Value = bytes.Clone(v)
	}
	return r, nil
}

// decodeTLV scans entries from start the way the program does: fewer than two
// bytes left or a zero type ends the scan; a type without its full length, or
// a value running past the data, is an error.
func decodeTLV(op string, data []byte, start int) ([]Extension, error) {
	exts := []Extension{}
	off := start
	for len(data)-off >= 2 {
		t := ExtensionType(binary.LittleEndian.Uint16(data[off:]))
		if t == ExtensionUninitialized {
			break
		}
		if len(data)-off < 4 {
			return nil, fault.E(op, fault.InvalidInput, "extension entry is truncated before its length").
				With("offset", off).With("extension", t.String())
		}
		n := int(binary.LittleEndian.Uint16(data[off+2:]))
		v := off + 4
		if len(data)-v < n {
			return nil, fault.E(op, fault.InvalidInput, "extension value runs past the data").
				With("offset", off).With("extension", t.String()).With("length", n)
		}
		e, err := decodeExtension(t, data[v:v+n])
		if err != nil {
			var ve *valueError
			if !errors.As(err, &ve) {
				ve = &valueError{msg: err.Error()}
			}
			return nil, fault.E(op, fault.InvalidInput, ve.msg).
				With("offset", v+ve.off).With("extension", t.String())
		}
		exts = append(exts, e)
		off = v + n
	}
	return exts, nil
}

// appendTLV appends each extension as u16 type, u16 length, value.
func appendTLV(b []byte, exts []Extension) []byte {
	for _, e := range exts {
		t := e.ExtensionType()
		if t == ExtensionUninitialized {
			panic("token2022: an extension of type 0 would end the TLV scan")
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(t))
		at := len(b)
		b = append(b, 0, 0)
		b = e.appendValue(b)
		n := len(b) - at - 2
		if n > math.MaxUint16 {
			panic("token2022: extension " + t.String() + " value exceeds 65535 bytes")
		}
		binary.LittleEndian.PutUint16(b[at:], uint16(n))
	}
	return b
}

// findExtension returns the first entry of type t.
func findExtension(exts []Extension, t ExtensionType) (Extension, bool) {
	for _, e := range exts {
		if e != nil && e.ExtensionType() == t {
			return e, true
		}
	}
	return nil, false
}

// typedExtension returns the first entry of type t as T, decoding it if it is
// held raw; false if there is none or it does not decode.
func typedExtension[T Extension](exts []Extension, t ExtensionType, decode func([]byte) (T, error)) (T, bool) {
	var zero T
	e, ok := findExtension(exts, t)
	if !ok {
		return zero, false
	}
	switch v := e.(type) {
	case T:
		return v, true
	case RawExtension:
		d, err := decode(v.Value)
		if err != nil {
			return zero, false
		}
		return d, true
	}
	return zero, false
}
