package token2022

import (
	"encoding/binary"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/google/go-cmp/cmp"
)

// key returns a public key whose 32 bytes are all b.
func key(b byte) PublicKey {
	var k PublicKey
	for i := range k {
		k[i] = b
	}
	return k
}

func ptr[T any](v T) *T { return &v }

var le = binary.LittleEndian

// baseMintFixture writes the 82-byte mint layout field by field at the
// offsets of chain.md §5.1: mint authority Some(key 0xA1), supply 5e15,
// decimals 9, initialized, freeze authority None.
func baseMintFixture() []byte {
	b := make([]byte, 82)
	le.PutUint32(b[0:], 1) // mint_authority tag Some
	k := key(0xA1)
	copy(b[4:36], k[:])
	le.PutUint64(b[36:], 5_000_000_000_000_000) // supply
	b[44] = 9                                   // decimals
	b[45] = 1                                   // is_initialized
	le.PutUint32(b[46:], 0)                     // freeze_authority None
	return b
}

func baseMint() Mint {
	return Mint{
		MintAuthority: ptr(key(0xA1)),
		Supply:        5_000_000_000_000_000,
		Decimals:      9,
		IsInitialized: true,
	}
}

// feeMintFixture is the worked example of chain.md §5.6: a mint with
// TransferFeeConfig and MetadataPointer, 346 bytes.
func feeMintFixture() []byte {
	b := make([]byte, 346)
	copy(b, baseMintFixture())
	// 82..164 stay zero.
	b[165] = 1               // AccountType Mint
	le.PutUint16(b[166:], 1) // TLV type TransferFeeConfig
	le.PutUint16(b[168:], 108)
	copy(b[170:202], fill(0xC1)) // transfer_fee_config_authority
	copy(b[202:234], fill(0xC2)) // withdraw_withheld_authority
	le.PutUint64(b[234:], 777)   // withheld_amount
	le.PutUint64(b[242:], 3)     // older.epoch
	le.PutUint64(b[250:], 1_000_000_000)
	le.PutUint16(b[258:], 200) // older bps
	le.PutUint64(b[260:], 12)  // newer.epoch
	le.PutUint64(b[268:], 2_000_000_000)
	le.PutUint16(b[276:], 300) // newer bps
	le.PutUint16(b[278:], 18)  // TLV type MetadataPointer
	le.PutUint16(b[280:], 64)
	copy(b[282:314], fill(0xD1)) // authority
	// 314..345: metadata address zero (none)
	return b
}

func fill(v byte) []byte { k := key(v); return k[:] }

func feeConfig() TransferFeeConfig {
	return TransferFeeConfig{
		ConfigAuthority:           key(0xC1),
		WithdrawWithheldAuthority: key(0xC2),
		WithheldAmount:            777,
		Older:                     TransferFee{Epoch: 3, MaximumFee: 1_000_000_000, BasisPoints: 200},
		Newer:                     TransferFee{Epoch: 12, MaximumFee: 2_000_000_000, BasisPoints: 300},
	}
}

func feeMint() Mint {
	m := baseMint()
	m.Extensions = []Extension{feeConfig(), MetadataPointer{Authority: key(0xD1)}}
	return m
}

// metadataMintFixture appends an embedded TokenMetadata entry to the worked
// example, with the pointer aimed at the mint itself.
func metadataMintFixture(mint PublicKey) []byte {
	b := feeMintFixture()
	copy(b[314:346], mint[:])
	name, symbol, uri := "Creator", "CRT", "https://x.test/m.json"
	kv := [][2]string{{"genre", "ambient"}, {"k", ""}}
	n := 76 + len(name) + len(symbol) + len(uri) + 4
	for _, p := range kv {
		n += 8 + len(p[0]) + len(p[1])
	}
	v := make([]byte, 0, n)
	v = append(v, fill(0xE1)...) // update_authority
	v = append(v, mint[:]...)
	for _, s := range []string{name, symbol, uri} {
		v = le.AppendUint32(v, uint32(len(s)))
		v = append(v, s...)
	}
	v = le.AppendUint32(v, uint32(len(kv)))
	for _, p := range kv {
		v = le.AppendUint32(v, uint32(len(p[0])))
		v = append(v, p[0]...)
		v = le.AppendUint32(v, uint32(len(p[1])))
		v = append(v, p[1]...)
	}
	if len(v) != n {
		panic("metadata length formula")
	}
	b = le.AppendUint16(b, 19) // at 346
	b = le.AppendUint16(b, uint16(n))
	return append(b, v...)
}

func metadataMint(mint PublicKey) Mint {
	m := feeMint()
	m.Extensions = []Extension{
		feeConfig(),
		MetadataPointer{Authority: key(0xD1), MetadataAddress: mint},
		TokenMetadata{
			UpdateAuthority: key(0xE1),
			Mint:            mint,
			Name:            "Creator",
			Symbol:          "CRT",
			URI:             "https://x.test/m.json",
			AdditionalMetadata: []MetadataField{
				{Key: "genre", Value: "ambient"},
				{Key: "k", Value: ""},
			},
		},
	}
	return m
}

// ataFixture is the associated token account of chain.md §5.6: 165 + 1 +
// (4+8) TransferFeeAmount + (4+0) ImmutableOwner = 182 bytes.
func ataFixture() []byte {
	b := make([]byte, 182)
	copy(b[0:32], fill(0x11))  // mint
	copy(b[32:64], fill(0x22)) // owner
	le.PutUint64(b[64:], 42_000)
	// delegate None at 72, is_native None at 109, close authority None at 129.
	b[108] = 1 // Initialized
	le.PutUint64(b[121:], 0)
	b[165] = 2                 // AccountType Account
	le.PutUint16(b[166:], 2)   // TransferFeeAmount
	le.PutUint16(b[168:], 8)   // length
	le.PutUint64(b[170:], 420) // withheld
	le.PutUint16(b[178:], 7)   // ImmutableOwner
	le.PutUint16(b[180:], 0)   // length 0
	return b
}

func ata() Account {
	return Account{
		Mint:       key(0x11),
		Owner:      key(0x22),
		Amount:     42_000,
		State:      StateInitialized,
		Extensions: []Extension{TransferFeeAmount{Withheld: 420}, RawExtension{Type: ExtensionImmutableOwner}},
	}
}

// fullBaseAccountFixture sets every COption of the 165-byte layout.
func fullBaseAccountFixture() []byte {
	b := make([]byte, 165)
	copy(b[0:32], fill(0x11))
	copy(b[32:64], fill(0x22))
	le.PutUint64(b[64:], 1<<63)
	le.PutUint32(b[72:], 1) // delegate Some
	copy(b[76:108], fill(0x33))
	b[108] = 2               // Frozen
	le.PutUint32(b[109:], 1) // is_native Some
	le.PutUint64(b[113:], 2_039_280)
	le.PutUint64(b[121:], 99) // delegated_amount
	le.PutUint32(b[129:], 1)  // close_authority Some
	copy(b[133:165], fill(0x44))
	return b
}

func fullBaseAccount() Account {
	return Account{
		Mint:            key(0x11),
		Owner:           key(0x22),
		Amount:          1 << 63,
		Delegate:        ptr(key(0x33)),
		State:           StateFrozen,
		IsNative:        ptr(uint64(2_039_280)),
		DelegatedAmount: 99,
		CloseAuthority:  ptr(key(0x44)),
	}
}

func TestDecodeMint(t *testing.T) {
	self := key(0x5A)
	cases := []struct {
		name string
		data []byte
		want Mint
	}{
		{"base", baseMintFixture(), baseMint()},
		{"base with freeze authority, no mint authority", func() []byte {
			b := baseMintFixture()
			le.PutUint32(b[0:], 0)
			copy(b[4:36], make([]byte, 32))
			le.PutUint32(b[46:], 1)
			copy(b[50:82], fill(0xF1))
			return b
		}(), func() Mint {
			m := baseMint()
			m.MintAuthority = nil
			m.FreezeAuthority = ptr(key(0xF1))
			return m
		}()},
		{"worked example 346 bytes", feeMintFixture(), feeMint()},
		{"embedded metadata", metadataMintFixture(self), metadataMint(self)},
		{"extended without extensions", func() []byte {
			b := make([]byte, 166)
			copy(b, baseMintFixture())
			b[165] = 1
			return b
		}(), func() Mint { m := baseMint(); m.Extensions = []Extension{}; return m }()},
		{"unknown type kept raw", func() []byte {
			b := append(feeMintFixture(), 0xE7, 0x03, 3, 0, 'a', 'b', 'c') // type 999
			return b
		}(), func() Mint {
			m := feeMint()
			m.Extensions = append(m.Extensions, RawExtension{Type: 999, Value: []byte("abc")})
			return m
		}()},
		{"zero type ends the scan", append(feeMintFixture(), 0, 0, 0xFF, 0xFF, 0xFF), feeMint()},
		{"a lone trailing byte ends the scan", append(feeMintFixture(), 0x01), feeMint()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeMint(c.data)
			if err != nil {
				t.Fatalf("DecodeMint: %v", err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("DecodeMint (-want +got):\n%s", d)
			}
		})
	}
}

func TestWorkedExample(t *testing.T) {
	b := feeMintFixture()
	if len(b) != 346 {
		t.Fatalf("fixture length %d", len(b))
	}
	if got := EncodeMint(feeMint()); !bytesEqual(got, b) {
		t.Fatalf("EncodeMint differs from the byte-by-byte fixture")
	}
	m, err := DecodeMint(b)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := m.TransferFeeConfig()
	if !ok || c.Older.BasisPoints != le.Uint16(b[258:]) || c.Newer.BasisPoints != le.Uint16(b[276:]) {
		t.Fatalf("TransferFeeConfig = %+v, %v", c, ok)
	}
	p, ok := m.MetadataPointer()
	if !ok || p.Authority != key(0xD1) || !p.MetadataAddress.IsZero() {
		t.Fatalf("MetadataPointer = %+v, %v", p, ok)
	}
	if _, ok := m.TokenMetadata(); ok {
		t.Fatal("TokenMetadata present")
	}
	self := key(0x5A)
	mb := metadataMintFixture(self)
	md, _ := metadataMint(self).TokenMetadata()
	wantLen := 76 + 7 + 3 + 21 + 4 + (8 + 5 + 7) + (8 + 1 + 0)
	if len(mb) != 346+4+wantLen || int(le.Uint16(mb[348:])) != wantLen {
		t.Fatalf("metadata mint length %d, value %d, want value %d", len(mb), le.Uint16(mb[348:]), wantLen)
	}
	if got := EncodeMint(metadataMint(self)); !bytesEqual(got, mb) {
		t.Fatalf("EncodeMint differs from the metadata fixture")
	}
	m, _ = DecodeMint(mb)
	if got, ok := m.TokenMetadata(); !ok || !cmp.Equal(got, md) {
		t.Fatalf("TokenMetadata = %+v, %v", got, ok)
	}
}

func TestDecodeAccount(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want Account
	}{
		{"base with every option", fullBaseAccountFixture(), fullBaseAccount()},
		{"associated account 182 bytes", ataFixture(), ata()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeAccount(c.data)
			if err != nil {
				t.Fatalf("DecodeAccount: %v", err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("DecodeAccount (-want +got):\n%s", d)
			}
			if e := EncodeAccount(c.want); !bytesEqual(e, c.data) {
				t.Fatalf("EncodeAccount differs from the fixture")
			}
		})
	}
	a, _ := DecodeAccount(ataFixture())
	if w, ok := a.TransferFeeAmount(); !ok || w.Withheld != 420 {
		t.Fatalf("TransferFeeAmount = %+v, %v", w, ok)
	}
	if _, ok := a.Extension(ExtensionImmutableOwner); !ok {
		t.Fatal("ImmutableOwner missing")
	}
	if _, ok := a.Extension(ExtensionTransferHookAccount); ok {
		t.Fatal("TransferHookAccount present")
	}
}

func TestRoundTrip(t *testing.T) {
	self := key(0x5A)
	mints := map[string]Mint{
		"zero":     {},
		"base":     baseMint(),
		"fee":      feeMint(),
		"metadata": metadataMint(self),
		"empty extended": func() Mint {
			m := baseMint()
			m.Extensions = []Extension{}
			return m
		}(),
		"raw and zero-length": func() Mint {
			m := baseMint()
			m.Extensions = []Extension{RawExtension{Type: ExtensionNonTransferable}, RawExtension{Type: ExtensionPermanentDelegate, Value: fill(0x77)}}
			return m
		}(),
		// 166 + 4+108 + 4+73 = 355, the Multisig length: the encoder pads two bytes.
		"multisig length": func() Mint {
			m := baseMint()
			m.Extensions = []Extension{feeConfig(), RawExtension{Type: 4242, Value: make([]byte, 73)}}
			return m
		}(),
	}
	for name, m := range mints {
		t.Run("mint/"+name, func(t *testing.T) {
			b := EncodeMint(m)
			if len(b) == multisigSize {
				t.Fatalf("encoded to the Multisig length")
			}
			got, err := DecodeMint(b)
			if err != nil {
				t.Fatalf("DecodeMint(EncodeMint): %v", err)
			}
			if d := cmp.Diff(m, got); d != "" {
				t.Fatalf("round trip (-want +got):\n%s", d)
			}
		})
	}
	if n := len(EncodeMint(mints["multisig length"])); n != 357 {
		t.Fatalf("multisig-length mint encoded to %d bytes, want 357", n)
	}
	accounts := map[string]Account{
		"zero": {},
		"full": fullBaseAccount(),
		"ata":  ata(),
		"extended full": func() Account {
			a := fullBaseAccount()
			a.Extensions = []Extension{RawExtension{Type: ExtensionMemoTransfer, Value: []byte{1}}, TransferFeeAmount{Withheld: 1<<64 - 1}}
			return a
		}(),
	}
	for name, a := range accounts {
		t.Run("account/"+name, func(t *testing.T) {
			got, err := DecodeAccount(EncodeAccount(a))
			if err != nil {
				t.Fatalf("DecodeAccount(EncodeAccount): %v", err)
			}
			if d := cmp.Diff(a, got); d != "" {
				t.Fatalf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeMintErrors(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		offset int // -1 when the error names a length instead
	}{
		{"empty", nil, -1},
		{"81 bytes", baseMintFixture()[:81], -1},
		{"83 bytes", append(baseMintFixture(), 0), -1},
		{"165 bytes", make([]byte, 165), -1},
		{"Multisig length", func() []byte {
			b := make([]byte, 355)
			copy(b, baseMintFixture())
			b[165] = 1
			return b
		}(), -1},
		{"mint authority tag 2", func() []byte { b := baseMintFixture(); b[0] = 2; return b }(), 0},
		{"mint authority tag high byte", func() []byte { b := baseMintFixture(); b[3] = 1; return b }(), 0},
		{"is_initialized 2", func() []byte { b := baseMintFixture(); b[45] = 2; return b }(), 45},
		{"freeze authority tag 7", func() []byte { b := baseMintFixture(); b[46] = 7; return b }(), 46},
		{"padding not zero", func() []byte { b := feeMintFixture(); b[100] = 1; return b }(), 100},
		{"account type Account on a mint", func() []byte { b := feeMintFixture(); b[165] = 2; return b }(), 165},
		{"account type Uninitialized", func() []byte { b := feeMintFixture(); b[165] = 0; return b }(), 165},
		{"TLV header truncated", append(feeMintFixture(), 0x03, 0x00, 0x20), 346},
		{"TLV value past the end", feeMintFixture()[:345], 278},
		{"TransferFeeConfig length 107", func() []byte {
			b := feeMintFixture()
			le.PutUint16(b[168:], 107)
			return b
		}(), 170},
		{"MetadataPointer length 0", append(feeMintFixture(), 18, 0, 0, 0), 350},
		{"metadata trailing byte", func() []byte {
			b := metadataMintFixture(key(1))
			le.PutUint16(b[348:], le.Uint16(b[348:])+1)
			return append(b, 0)
		}(), 350 + 76 + 7 + 3 + 21 + 4 + 20 + 9},
		{"metadata name length past value", func() []byte {
			b := metadataMintFixture(key(1))
			le.PutUint32(b[350+64:], 1<<31)
			return b
		}(), 350 + 64},
		{"metadata field count past value", func() []byte {
			b := metadataMintFixture(key(1))
			le.PutUint32(b[350+64+4+7+4+3+4+21:], 0xFFFFFFFF)
			return b
		}(), 350 + 64 + 4 + 7 + 4 + 3 + 4 + 21},
		{"metadata name not UTF-8", func() []byte {
			b := metadataMintFixture(key(1))
			b[350+64+4] = 0xFF
			return b
		}(), 350 + 64},
		{"metadata shorter than its keys", append(feeMintFixture(), 19, 0, 10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 350 + 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeMint(c.data)
			assertInvalid(t, err, c.offset)
		})
	}
}

func TestDecodeAccountErrors(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		offset int
	}{
		{"164 bytes", fullBaseAccountFixture()[:164], -1},
		{"Multisig length", func() []byte {
			b := make([]byte, 355)
			copy(b, ataFixture())
			return b
		}(), -1},
		{"delegate tag 2", func() []byte { b := fullBaseAccountFixture(); b[72] = 2; return b }(), 72},
		{"state 3", func() []byte { b := fullBaseAccountFixture(); b[108] = 3; return b }(), 108},
		{"is_native tag 2", func() []byte { b := fullBaseAccountFixture(); b[109] = 2; return b }(), 109},
		{"close authority tag 9", func() []byte { b := fullBaseAccountFixture(); b[129] = 9; return b }(), 129},
		{"account type Mint", func() []byte { b := ataFixture(); b[165] = 1; return b }(), 165},
		{"TransferFeeAmount length 9", func() []byte {
			b := append(ataFixture(), 0)
			le.PutUint16(b[168:], 9)
			return b
		}(), 170},
		{"value past the end", ataFixture()[:177], 166},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeAccount(c.data)
			assertInvalid(t, err, c.offset)
		})
	}
}

// assertInvalid checks the code and, when offset >= 0, the offset detail.
func assertInvalid(t *testing.T, err error, offset int) {
	t.Helper()
	if fault.CodeOf(err) != fault.InvalidInput {
		t.Fatalf("error = %v, want INVALID_INPUT", err)
	}
	_, _, details := fault.Public(err)
	if offset < 0 {
		if _, ok := details["length"]; !ok {
			t.Fatalf("details %v lack length", details)
		}
		return
	}
	if details["offset"] != offset {
		t.Fatalf("details %v, want offset %d", details, offset)
	}
}

func TestExtensionAccessorsOnRaw(t *testing.T) {
	var v []byte
	v = feeConfig().appendValue(v)
	m := Mint{Extensions: []Extension{RawExtension{Type: ExtensionTransferFeeConfig, Value: v}}}
	if c, ok := m.TransferFeeConfig(); !ok || c != feeConfig() {
		t.Fatalf("TransferFeeConfig from raw = %+v, %v", c, ok)
	}
	m = Mint{Extensions: []Extension{RawExtension{Type: ExtensionMetadataPointer, Value: []byte{1}}}}
	if _, ok := m.MetadataPointer(); ok {
		t.Fatal("malformed raw MetadataPointer accepted")
	}
}

func TestStrings(t *testing.T) {
	if ExtensionTransferFeeConfig.String() != "TransferFeeConfig" || ExtensionType(999).String() != "ExtensionType(999)" {
		t.Fatal("ExtensionType.String")
	}
	if StateFrozen.String() != "Frozen" || AccountState(9).String() != "AccountState(9)" {
		t.Fatal("AccountState.String")
	}
}

func TestEncodePanicsOnImpossibleExtensions(t *testing.T) {
	for name, e := range map[string]Extension{
		"type 0":    RawExtension{Type: 0},
		"too large": RawExtension{Type: 500, Value: make([]byte, 65536)},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			EncodeMint(Mint{Extensions: []Extension{e}})
		})
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }
