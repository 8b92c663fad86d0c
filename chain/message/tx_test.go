package message_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// keypair derives a deterministic ed25519 key from name.
func keypair(name string) (ed25519.PrivateKey, chain.Address) {
	seed := sha256.Sum256([]byte("key " + name))
	priv := ed25519.NewKeyFromSeed(seed[:])
	return priv, chain.Address(priv.Public().(ed25519.PublicKey))
}

// signAll returns the wire transaction of msg signed by privs in order.
func signAll(msg []byte, privs ...ed25519.PrivateKey) []byte {
	b := message.AppendCompactU16(nil, len(privs))
	for _, p := range privs {
		b = append(b, ed25519.Sign(p, msg)...)
	}
	return append(b, msg...)
}

func TestUnsigned(t *testing.T) {
	legacy, err := message.CompileLegacy(addr("payer"), blockhash, swapLike())
	if err != nil {
		t.Fatal(err)
	}
	v0, err := message.CompileV0(addr("payer"), blockhash, swapLike(), []message.LookupTable{{Address: addr("table"), Addresses: []chain.Address{addr("pool"), addr("mint in")}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string][]byte{"legacy": legacy, "v0": v0} {
		t.Run(name, func(t *testing.T) {
			wire := message.Unsigned(msg)
			tx, err := solana.TransactionFromBytes(wire)
			if err != nil {
				t.Fatalf("solana-go cannot decode the unsigned transaction: %v", err)
			}
			// swapLike has two signers: the payer and the cosigner.
			if len(tx.Signatures) != 2 || !tx.Signatures[0].IsZero() || !tx.Signatures[1].IsZero() {
				t.Fatalf("signature slots %v, want two zeroed", tx.Signatures)
			}
			back, err := tx.Message.MarshalBinary()
			if err != nil || !bytes.Equal(back, msg) {
				t.Fatalf("the message does not survive: %v", err)
			}
			parsed, err := message.ParseSigned(wire)
			if err != nil || len(parsed.Signatures) != 2 || !bytes.Equal(parsed.Message, msg) {
				t.Fatalf("ParseSigned: %v, %d signatures", err, len(parsed.Signatures))
			}
		})
	}
	if got := message.Unsigned(nil); !bytes.Equal(got, []byte{0}) {
		t.Fatalf("Unsigned(nil) = % x, want a zero count", got)
	}
}

// TestParseSignedFromSolanaGo parses transactions solana-go built and
// signed, v0 with a lookup table and legacy.
func TestParseSignedFromSolanaGo(t *testing.T) {
	payerKey, payer := keypair("payer")
	cosignerKey, cosigner := keypair("cosigner")
	keyOf := map[solana.PublicKey]solana.PrivateKey{
		solana.PublicKey(payer): solana.PrivateKey(payerKey), solana.PublicKey(cosigner): solana.PrivateKey(cosignerKey),
	}
	ix := solana.NewInstruction(solana.PublicKey(addr("pool program")), solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(addr("pool")), true, false),
		solana.NewAccountMeta(solana.PublicKey(cosigner), false, true),
		solana.NewAccountMeta(solana.PublicKey(addr("vault")), true, false),
		solana.NewAccountMeta(solana.PublicKey(addr("mint")), false, false),
	}, []byte{9, 8, 7})
	tables := map[solana.PublicKey]solana.PublicKeySlice{
		solana.PublicKey(addr("table")): {solana.PublicKey(addr("vault")), solana.PublicKey(addr("mint"))},
	}
	for name, opts := range map[string][]solana.TransactionOption{
		"v0":     {solana.TransactionPayer(solana.PublicKey(payer)), solana.TransactionAddressTables(tables)},
		"legacy": {solana.TransactionPayer(solana.PublicKey(payer))},
	} {
		t.Run(name, func(t *testing.T) {
			tx, err := solana.NewTransaction([]solana.Instruction{ix}, solana.Hash(addr("blockhash")), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
				p := keyOf[k]
				return &p
			}); err != nil {
				t.Fatal(err)
			}
			wire, err := tx.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			msg, err := tx.Message.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if v0 := msg[0] == 0x80; v0 != (name == "v0") {
				t.Fatalf("solana-go built the wrong version: first byte %#x", msg[0])
			}

			got, err := message.ParseSigned(wire)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Message, msg) || len(got.Signatures) != len(tx.Signatures) {
				t.Fatalf("got %d signatures and a message of %d bytes, want %d and %d", len(got.Signatures), len(got.Message), len(tx.Signatures), len(msg))
			}
			signers, err := message.Signers(got.Message)
			if err != nil {
				t.Fatal(err)
			}
			if want := []chain.Address{payer, cosigner}; !slices.Equal(signers, want) {
				t.Fatalf("signers %v, want %v", signers, want)
			}
			for i, s := range got.Signatures {
				if !bytes.Equal(s, tx.Signatures[i][:]) {
					t.Fatalf("signature %d differs", i)
				}
				if !message.VerifySignature(signers[i], got.Message, s) {
					t.Fatalf("signature %d does not verify for %s", i, signers[i])
				}
			}
		})
	}
}

// TestSignedRoundTrip signs what Compile builds and reads it back.
func TestSignedRoundTrip(t *testing.T) {
	payerKey, payer := keypair("payer")
	cosignerKey, cosigner := keypair("cosigner")
	ixs := []message.Instruction{
		message.Memo("order 7", cosigner),
		message.TransferCheckedWithFee(addr("source"), addr("mint"), addr("destination"), payer, 1_000, 6, 3),
	}
	for _, v := range []message.Version{message.Legacy, message.V0} {
		var tables []message.LookupTable
		if v == message.V0 {
			tables = []message.LookupTable{{Address: addr("table"), Addresses: []chain.Address{addr("mint"), addr("destination")}}}
		}
		c, err := message.Compile(v, payer, blockhash, ixs, tables)
		if err != nil {
			t.Fatal(err)
		}
		wire := signAll(c.Bytes, payerKey, cosignerKey)
		tx, err := message.ParseSigned(wire)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if !bytes.Equal(tx.Message, c.Bytes) || len(tx.Signatures) != 2 {
			t.Fatalf("version %d: the transaction does not round-trip", v)
		}
		signers, err := message.Signers(c.Bytes)
		if err != nil || !slices.Equal(signers, c.StaticKeys[:c.NumSigners]) || signers[0] != payer || signers[1] != cosigner {
			t.Fatalf("version %d: signers %v (%v), want %v", v, signers, err, c.StaticKeys[:c.NumSigners])
		}
		for i, s := range tx.Signatures {
			if !message.VerifySignature(signers[i], tx.Message, s) {
				t.Fatalf("version %d: signature %d does not verify", v, i)
			}
		}
		// The signatures are capped views: appending to one leaves the
		// next intact.
		_ = append(tx.Signatures[0], 0xff)
		if !message.VerifySignature(cosigner, tx.Message, tx.Signatures[1]) {
			t.Fatalf("version %d: appending to a signature overwrote the next", v)
		}
	}
}

// raw is a hand-encoded message, valid until a case breaks it: a payer,
// one writable account and one program, one instruction.
type raw struct {
	v0       byte // the first byte of a versioned message; 0 for legacy
	header   [3]byte
	keys     int
	ixs      []rawIx
	lookups  [][2][]byte // writable and read-only indexes (v0 only)
	trailing []byte
}

type rawIx struct {
	program        byte
	accounts, data []byte
}

func validRaw() raw {
	return raw{header: [3]byte{1, 0, 1}, keys: 3, ixs: []rawIx{{program: 2, accounts: []byte{0, 1}, data: []byte{1, 2, 3}}}}
}

func validRawV0() raw {
	r := validRaw()
	r.v0 = 0x80
	r.lookups = [][2][]byte{{{4}, {0, 1}}}
	r.ixs[0].accounts = []byte{0, 1, 3, 4, 5}
	return r
}

func (r raw) bytes() []byte {
	var b []byte
	if r.v0 != 0 {
		b = append(b, r.v0)
	}
	b = append(b, r.header[:]...)
	b = message.AppendCompactU16(b, r.keys)
	for i := 0; i < r.keys; i++ {
		k := addr(string(rune('a' + i)))
		b = append(b, k[:]...)
	}
	b = append(b, make([]byte, 32)...)
	b = message.AppendCompactU16(b, len(r.ixs))
	for _, ix := range r.ixs {
		b = append(b, ix.program)
		b = message.AppendCompactU16(b, len(ix.accounts))
		b = append(b, ix.accounts...)
		b = message.AppendCompactU16(b, len(ix.data))
		b = append(b, ix.data...)
	}
	if r.v0 != 0 {
		b = message.AppendCompactU16(b, len(r.lookups))
		for _, l := range r.lookups {
			t := addr("table")
			b = append(b, t[:]...)
			for _, idx := range l {
				b = message.AppendCompactU16(b, len(idx))
				b = append(b, idx...)
			}
		}
	}
	return append(b, r.trailing...)
}

// wrap puts n zero signatures before msg.
func wrap(n int, msg []byte) []byte {
	b := message.AppendCompactU16(nil, n)
	return append(append(b, make([]byte, n*message.SignatureSize)...), msg...)
}

func TestParseSignedValidRaw(t *testing.T) {
	for name, r := range map[string]raw{"legacy": validRaw(), "v0": validRawV0()} {
		msg := r.bytes()
		if _, err := solana.TransactionFromBytes(wrap(1, msg)); err != nil {
			t.Fatalf("%s: the base case is not a transaction solana-go reads: %v", name, err)
		}
		tx, err := message.ParseSigned(wrap(1, msg))
		if err != nil || len(tx.Signatures) != 1 || !bytes.Equal(tx.Message, msg) {
			t.Fatalf("%s: %v", name, err)
		}
		if s, err := message.Signers(msg); err != nil || len(s) != 1 || s[0] != addr("a") {
			t.Fatalf("%s: signers %v %v", name, s, err)
		}
	}
}

func TestParseSignedRefuses(t *testing.T) {
	valid := validRaw().bytes()
	validV0 := validRawV0().bytes()
	mutate := func(base func() raw, f func(*raw)) []byte {
		r := base()
		f(&r)
		return r.bytes()
	}
	cases := map[string][]byte{
		"empty":                           nil,
		"count truncated":                 {0x80},
		"count not minimal":               append([]byte{0x81, 0x00}, make([]byte, 64)...),
		"signatures truncated":            append([]byte{1}, make([]byte, 63)...),
		"no message":                      wrap(1, nil),
		"no signature":                    wrap(0, valid),
		"more signatures than the header": wrap(2, valid),
		"v0 count differs":                wrap(2, validV0),
		"trailing byte":                   append(wrap(1, valid), 0),
		"v0 trailing byte":                append(wrap(1, validV0), 0),
		"version 1":                       wrap(1, mutate(validRawV0, func(r *raw) { r.v0 = 0x81 })),
		"no signer in the header":         wrap(0, mutate(validRaw, func(r *raw) { r.header[0] = 0 })),
		"read-only fee payer":             wrap(1, mutate(validRaw, func(r *raw) { r.header[1] = 1 })),
		"header counts more keys":         wrap(1, mutate(validRaw, func(r *raw) { r.header[2] = 3 })),
		"signers beyond the keys":         wrap(4, mutate(validRaw, func(r *raw) { r.header = [3]byte{4, 0, 0} })),
		"program is the fee payer":        wrap(1, mutate(validRaw, func(r *raw) { r.ixs[0].program = 0 })),
		"program out of range":            wrap(1, mutate(validRaw, func(r *raw) { r.ixs[0].program = 3 })),
		"account out of range":            wrap(1, mutate(validRaw, func(r *raw) { r.ixs[0].accounts = []byte{0, 3} })),
		"v0 program loaded":               wrap(1, mutate(validRawV0, func(r *raw) { r.ixs[0].program = 3 })),
		"v0 account out of range":         wrap(1, mutate(validRawV0, func(r *raw) { r.ixs[0].accounts = []byte{6} })),
		"v0 lookup loads nothing":         wrap(1, mutate(validRawV0, func(r *raw) { r.lookups = append(r.lookups, [2][]byte{}) })),
		"over 256 keys": wrap(1, mutate(validRawV0, func(r *raw) {
			r.lookups = [][2][]byte{{make([]byte, 200), make([]byte, 54)}}
		})),
	}
	for i := 0; i < len(valid); i++ {
		cases["legacy truncated at "+strconv.Itoa(i)] = wrap(1, valid[:i])
	}
	for i := 0; i < len(validV0); i++ {
		cases["v0 truncated at "+strconv.Itoa(i)] = wrap(1, validV0[:i])
	}
	for name, b := range cases {
		if tx, err := message.ParseSigned(b); !errors.Is(err, message.ErrMalformed) {
			t.Errorf("%s: got %d signatures, error %v; want ErrMalformed", name, len(tx.Signatures), err)
		}
	}
	big := wrap(1, mutate(validRaw, func(r *raw) { r.ixs[0].data = make([]byte, 1200) }))
	if _, err := message.ParseSigned(big); !errors.Is(err, message.ErrTooLarge) {
		t.Fatalf("a %d-byte transaction: %v, want ErrTooLarge", len(big), err)
	}
}

func TestSignersRefuses(t *testing.T) {
	valid := validRaw().bytes()
	for name, msg := range map[string][]byte{
		"empty":         nil,
		"truncated":     valid[:len(valid)-1],
		"trailing byte": append(append([]byte(nil), valid...), 0),
		"version 2":     append([]byte{0x82}, valid...),
	} {
		if s, err := message.Signers(msg); !errors.Is(err, message.ErrMalformed) {
			t.Errorf("%s: %v %v, want ErrMalformed", name, s, err)
		}
	}
}

func TestVerifySignature(t *testing.T) {
	key, signer := keypair("payer")
	_, other := keypair("other")
	msg := []byte("the message")
	sig := ed25519.Sign(key, msg)
	if !message.VerifySignature(signer, msg, sig) {
		t.Fatal("a valid signature does not verify")
	}
	if message.VerifySignature(other, msg, sig) {
		t.Fatal("another key's signature verifies")
	}
	if message.VerifySignature(signer, []byte("the massage"), sig) {
		t.Fatal("a signature verifies over another message")
	}
	if message.VerifySignature(signer, msg, sig[:63]) || message.VerifySignature(signer, msg, append(sig, 0)) {
		t.Fatal("a signature of the wrong length verifies")
	}
}

func TestParseSignature(t *testing.T) {
	key, _ := keypair("payer")
	sig := ed25519.Sign(key, []byte("m"))
	text := solana.SignatureFromBytes(sig).String()
	got, err := message.ParseSignature(text)
	if err != nil || !bytes.Equal(got, sig) {
		t.Fatalf("ParseSignature(%s) = %x, %v", text, got, err)
	}
	pub := addr("a key, 32 bytes")
	for _, bad := range []string{
		"",
		"abc",
		text[:len(text)-1] + "0", // 0 is not in the alphabet
		token2022.EncodeBase58(pub[:]),
		token2022.EncodeBase58(append(sig, 1)),
		strings.Repeat("1", 89),
	} {
		if b, err := message.ParseSignature(bad); err == nil {
			t.Errorf("ParseSignature(%q) = %x, want an error", bad, b)
		}
	}
}

func TestReadCompactU16(t *testing.T) {
	known := map[int][]byte{0: {0}, 127: {0x7f}, 128: {0x80, 0x01}, 16383: {0xff, 0x7f}, 16384: {0x80, 0x80, 0x01}, 65535: {0xff, 0xff, 0x03}}
	for n, enc := range known {
		if got := message.AppendCompactU16(nil, n); !bytes.Equal(got, enc) {
			t.Errorf("AppendCompactU16(%d) = % x, want % x", n, got, enc)
		}
	}
	for _, n := range []int{0, 1, 127, 128, 255, 16383, 16384, 65535} {
		b := message.AppendCompactU16(nil, n)
		got, size, ok := message.ReadCompactU16(append(b, 0xaa))
		if !ok || got != n || size != len(b) {
			t.Fatalf("%d: % x -> %d %d %v", n, b, got, size, ok)
		}
	}
	for _, bad := range [][]byte{nil, {0x80}, {0x80, 0x00}, {0xff, 0x80, 0x00}, {0x80, 0x80, 0x80}, {0xff, 0xff, 0x04}} {
		if n, size, ok := message.ReadCompactU16(bad); ok {
			t.Errorf("% x read as %d (%d bytes)", bad, n, size)
		}
	}
}
