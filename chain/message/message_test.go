package message_test

import (
	"crypto/sha256"
	"errors"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
)

func addr(name string) chain.Address { return chain.Address(sha256.Sum256([]byte(name))) }

var blockhash = solana.Hash(addr("blockhash")).String()

// decode parses a compiled message with solana-go, wrapped in a
// transaction with zeroed signatures.
func decode(t *testing.T, msg []byte, signers int) *solana.Transaction {
	t.Helper()
	raw := append([]byte{byte(signers)}, make([]byte, 64*signers)...)
	tx, err := solana.TransactionFromBytes(append(raw, msg...))
	if err != nil {
		t.Fatalf("solana-go cannot decode the message: %v", err)
	}
	back, err := tx.Message.MarshalBinary()
	if err != nil || !slices.Equal(back, msg) {
		t.Fatalf("solana-go re-encodes the message differently: %v", err)
	}
	return tx
}

func keys(pks []solana.PublicKey) []chain.Address {
	out := make([]chain.Address, len(pks))
	for i, k := range pks {
		out[i] = chain.Address(k)
	}
	return out
}

// swapLike is an instruction with every kind of account: a writable and a
// read-only signer, writable and read-only non-signers.
func swapLike() []message.Instruction {
	return []message.Instruction{
		{ProgramID: addr("budget"), Data: []byte{2, 0, 0, 1, 0}},
		{
			ProgramID: addr("pool program"),
			Accounts: []message.AccountMeta{
				{Key: addr("pool"), Writable: true},
				{Key: addr("payer"), Signer: true},
				{Key: addr("source"), Writable: true},
				{Key: addr("destination"), Writable: true},
				{Key: addr("cosigner"), Signer: true},
				{Key: addr("mint in")},
				{Key: addr("mint out")},
				{Key: addr("token program")},
				{Key: addr("source")}, // again, read-only: the flags merge
			},
			Data: []byte{1, 2, 3},
		},
	}
}

func TestCompileLegacy(t *testing.T) {
	payer := addr("payer")
	msg, err := message.CompileLegacy(payer, blockhash, swapLike())
	if err != nil {
		t.Fatal(err)
	}
	tx := decode(t, msg, 2)
	m := tx.Message
	if m.IsVersioned() {
		t.Fatal("a legacy message decodes as versioned")
	}
	want := []chain.Address{payer, addr("cosigner"), addr("pool"), addr("source"), addr("destination"),
		addr("budget"), addr("mint in"), addr("mint out"), addr("token program"), addr("pool program")}
	if got := keys(m.AccountKeys); !slices.Equal(got, want) {
		t.Fatalf("keys\n got %v\nwant %v", got, want)
	}
	if h := m.Header; h.NumRequiredSignatures != 2 || h.NumReadonlySignedAccounts != 1 || h.NumReadonlyUnsignedAccounts != 5 {
		t.Errorf("header %+v", h)
	}
	if m.RecentBlockhash.String() != blockhash {
		t.Errorf("blockhash %s", m.RecentBlockhash)
	}
	ix := m.Instructions[1]
	if p, _ := m.Program(ix.ProgramIDIndex); chain.Address(p) != addr("pool program") || string(ix.Data) != "\x01\x02\x03" {
		t.Errorf("instruction 1 program %s data %v", p, ix.Data)
	}
	for i, a := range swapLike()[1].Accounts {
		k, _ := m.Account(ix.Accounts[i])
		if chain.Address(k) != a.Key {
			t.Errorf("instruction account %d is %s, want %s", i, k, a.Key)
		}
	}
	for _, k := range []string{"pool", "source", "destination", "payer"} {
		if w, _ := m.IsWritable(solana.PublicKey(addr(k))); !w {
			t.Errorf("%s is not writable", k)
		}
	}
	if w, _ := m.IsWritable(solana.PublicKey(addr("cosigner"))); w || !m.IsSigner(solana.PublicKey(addr("cosigner"))) {
		t.Error("cosigner is not a read-only signer")
	}
}

func TestCompileV0WithLookups(t *testing.T) {
	payer := addr("payer")
	tableA := message.LookupTable{Address: addr("table a"), Addresses: []chain.Address{
		addr("unused"), addr("mint out"), addr("payer"), addr("pool program"), addr("pool"), addr("cosigner"),
	}}
	tableB := message.LookupTable{Address: addr("table b"), Addresses: []chain.Address{
		addr("pool"), addr("token program"), addr("destination"), addr("mint in"),
	}}
	empty := message.LookupTable{Address: addr("table c"), Addresses: []chain.Address{addr("nobody")}}
	c, err := message.Compile(message.V0, payer, blockhash, swapLike(), []message.LookupTable{tableA, empty, tableB})
	if err != nil {
		t.Fatal(err)
	}
	tx := decode(t, c.Bytes, 2)
	m := tx.Message
	if !m.IsVersioned() || c.Bytes[0] != 0x80 {
		t.Fatal("not a v0 message")
	}
	// Signers and program ids stay static even when a table holds them;
	// the source is held by no table.
	wantStatic := []chain.Address{payer, addr("cosigner"), addr("source"), addr("budget"), addr("pool program")}
	if got := keys(m.AccountKeys); !slices.Equal(got, wantStatic) || !slices.Equal(c.StaticKeys, wantStatic) {
		t.Fatalf("static keys\n got %v\nwant %v", got, wantStatic)
	}
	if h := m.Header; h.NumRequiredSignatures != 2 || h.NumReadonlySignedAccounts != 1 || h.NumReadonlyUnsignedAccounts != 2 {
		t.Errorf("header %+v", h)
	}
	// Table a loads the pool (writable) and the output mint (read-only);
	// table c loads nothing and is left out; table b loads the rest.
	lk := m.AddressTableLookups
	if len(lk) != 2 || chain.Address(lk[0].AccountKey) != tableA.Address || chain.Address(lk[1].AccountKey) != tableB.Address {
		t.Fatalf("lookups %+v", lk)
	}
	if !slices.Equal([]uint8(lk[0].WritableIndexes), []uint8{4}) || !slices.Equal([]uint8(lk[0].ReadonlyIndexes), []uint8{1}) {
		t.Errorf("table a indexes %v %v", lk[0].WritableIndexes, lk[0].ReadonlyIndexes)
	}
	if !slices.Equal([]uint8(lk[1].WritableIndexes), []uint8{2}) || !slices.Equal([]uint8(lk[1].ReadonlyIndexes), []uint8{3, 1}) {
		t.Errorf("table b indexes %v %v", lk[1].WritableIndexes, lk[1].ReadonlyIndexes)
	}
	wantW := []chain.Address{addr("pool"), addr("destination")}
	wantR := []chain.Address{addr("mint out"), addr("mint in"), addr("token program")}
	if !slices.Equal(c.LoadedWritable, wantW) || !slices.Equal(c.LoadedReadonly, wantR) {
		t.Fatalf("loaded %v %v", c.LoadedWritable, c.LoadedReadonly)
	}
	// Resolve the lookups as a node does and check every instruction
	// account against what was compiled.
	if err := m.SetAddressTables(map[solana.PublicKey]solana.PublicKeySlice{
		solana.PublicKey(tableA.Address): pks(tableA.Addresses),
		solana.PublicKey(tableB.Address): pks(tableB.Addresses),
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.ResolveLookups(); err != nil {
		t.Fatal(err)
	}
	all, err := m.GetAllKeys()
	if err != nil || !slices.Equal(keys(all), c.Keys()) {
		t.Fatalf("resolved keys %v %v, want %v", all, err, c.Keys())
	}
	for i, want := range swapLike() {
		ix := m.Instructions[i]
		if p, _ := m.Program(ix.ProgramIDIndex); chain.Address(p) != want.ProgramID {
			t.Errorf("instruction %d program %s", i, p)
		}
		for j, a := range want.Accounts {
			k, err := m.Account(ix.Accounts[j])
			if err != nil || chain.Address(k) != a.Key {
				t.Errorf("instruction %d account %d is %s (%v), want %s", i, j, k, err, a.Key)
			}
		}
	}
	for _, k := range []string{"pool", "destination", "source"} {
		if w, _ := m.IsWritable(solana.PublicKey(addr(k))); !w {
			t.Errorf("%s is not writable", k)
		}
	}
	for _, k := range []string{"mint in", "mint out", "token program"} {
		if w, _ := m.IsWritable(solana.PublicKey(addr(k))); w {
			t.Errorf("%s is writable", k)
		}
	}
	// Without tables a v0 message keeps every key static.
	plain, err := message.CompileV0(payer, blockhash, swapLike(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if pm := decode(t, plain, 2).Message; !pm.IsVersioned() || len(pm.AccountKeys) != 10 || len(pm.AddressTableLookups) != 0 {
		t.Errorf("v0 without tables: %d keys %d lookups", len(pm.AccountKeys), len(pm.AddressTableLookups))
	}
}

func pks(as []chain.Address) solana.PublicKeySlice {
	out := make(solana.PublicKeySlice, len(as))
	for i, a := range as {
		out[i] = solana.PublicKey(a)
	}
	return out
}

func TestCompileRefuses(t *testing.T) {
	payer := addr("payer")
	if _, err := message.CompileLegacy(payer, "not a hash", nil); err == nil {
		t.Error("a bad blockhash compiled")
	}
	if _, err := message.Compile(message.Legacy, payer, blockhash, nil, []message.LookupTable{{Address: addr("t")}}); err == nil {
		t.Error("a legacy message took lookup tables")
	}
	// 300 distinct read-only keys: too many for one message, whatever the
	// size, and still too many when a table loads most of them.
	var many []message.AccountMeta
	var table message.LookupTable
	for i := range 300 {
		k := addr(string(rune('a'+i%26)) + string(rune(i)))
		many = append(many, message.AccountMeta{Key: k})
		table.Addresses = append(table.Addresses, k)
	}
	ix := []message.Instruction{{ProgramID: addr("p"), Accounts: many}}
	if _, err := message.CompileLegacy(payer, blockhash, ix); !errors.Is(err, message.ErrTooManyKeys) {
		t.Errorf("300 keys: %v", err)
	}
	if _, err := message.CompileV0(payer, blockhash, ix, []message.LookupTable{table}); !errors.Is(err, message.ErrTooManyKeys) {
		t.Errorf("300 keys through a table: %v", err)
	}
	// 40 static keys and a large payload exceed 1232 bytes; the same keys
	// through a table fit.
	big := []message.Instruction{{ProgramID: addr("p"), Accounts: many[:40], Data: make([]byte, 100)}}
	if _, err := message.CompileLegacy(payer, blockhash, big); !errors.Is(err, message.ErrTooLarge) {
		t.Errorf("oversized legacy message: %v", err)
	}
	if _, err := message.CompileV0(payer, blockhash, big, []message.LookupTable{table}); err != nil {
		t.Errorf("the same through a table: %v", err)
	}
}
