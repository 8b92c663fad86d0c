package message_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
)

// TestDecodeReadsWhatCompileWrote decodes compiled legacy and v0 messages
// and checks every part against what solana-go reads of the same bytes.
func TestDecodeReadsWhatCompileWrote(t *testing.T) {
	tables := []message.LookupTable{{Address: addr("table"), Addresses: []chain.Address{addr("pool"), addr("mint in")}}}
	for _, v := range []message.Version{message.Legacy, message.V0} {
		var tbl []message.LookupTable
		if v == message.V0 {
			tbl = tables
		}
		c, err := message.Compile(v, addr("payer"), blockhash, swapLike(), tbl)
		if err != nil {
			t.Fatal(err)
		}
		d, err := message.Decode(c.Bytes)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		want := decode(t, c.Bytes, c.NumSigners)
		if d.V0 != (v == message.V0) || d.NumSigners != int(want.Message.Header.NumRequiredSignatures) ||
			d.NumReadonlySigned != int(want.Message.Header.NumReadonlySignedAccounts) ||
			d.NumReadonlyUnsigned != int(want.Message.Header.NumReadonlyUnsignedAccounts) {
			t.Fatalf("version %d: header %+v, want %+v", v, d, want.Message.Header)
		}
		if got := d.BlockhashString(); got != blockhash {
			t.Fatalf("blockhash %s, want %s", got, blockhash)
		}
		if len(d.StaticKeys) != len(want.Message.AccountKeys) {
			t.Fatalf("%d static keys, want %d", len(d.StaticKeys), len(want.Message.AccountKeys))
		}
		for i, k := range want.Message.AccountKeys {
			if d.StaticKeys[i] != chain.Address(k) {
				t.Fatalf("key %d is %s, want %s", i, d.StaticKeys[i], k)
			}
			if v == message.V0 {
				continue // solana-go answers writability only with the tables resolved
			}
			w, err := want.Message.IsWritable(k)
			if err != nil {
				t.Fatal(err)
			}
			if d.IsWritable(i) != w || d.IsSigner(i) != want.Message.IsSigner(k) {
				t.Fatalf("key %d: writable %v signer %v, want %v %v", i, d.IsWritable(i), d.IsSigner(i), w, want.Message.IsSigner(k))
			}
		}
		if len(d.Instructions) != len(want.Message.Instructions) {
			t.Fatalf("%d instructions, want %d", len(d.Instructions), len(want.Message.Instructions))
		}
		for i, ix := range want.Message.Instructions {
			got := d.Instructions[i]
			if uint16(got.ProgramIndex) != ix.ProgramIDIndex || !bytes.Equal(got.Data, ix.Data) || len(got.Accounts) != len(ix.Accounts) {
				t.Fatalf("instruction %d is %+v, want %+v", i, got, ix)
			}
			for j, a := range ix.Accounts {
				if uint16(got.Accounts[j]) != a {
					t.Fatalf("instruction %d account %d is %d, want %d", i, j, got.Accounts[j], a)
				}
			}
		}
		if len(d.Lookups) != len(c.Lookups) {
			t.Fatalf("%d lookups, want %d", len(d.Lookups), len(c.Lookups))
		}
		for i, l := range c.Lookups {
			if d.Lookups[i].Table != l.Table || !bytes.Equal(d.Lookups[i].Writable, l.Writable) || !bytes.Equal(d.Lookups[i].Readonly, l.Readonly) {
				t.Fatalf("lookup %d is %+v, want %+v", i, d.Lookups[i], l)
			}
		}
		if k, ok := d.Key(d.Instructions[1].ProgramIndex); !ok || k != addr("pool program") {
			t.Fatalf("Key of the program index: %s %v", k, ok)
		}
		if _, ok := d.Key(255); ok {
			t.Fatal("Key answers an index past the static keys")
		}
	}
}

func TestDecodeRefusesMalformed(t *testing.T) {
	msg, err := message.CompileLegacy(addr("payer"), blockhash, swapLike())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"empty": nil, "truncated": msg[:len(msg)-1], "trailing": append(append([]byte{}, msg...), 0)} {
		if _, err := message.Decode(b); !errors.Is(err, message.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestComputeBudgetMatchesSolanaGo(t *testing.T) {
	if got := message.ComputeBudgetProgramID().String(); got != solana.ComputeBudget.String() {
		t.Fatalf("program %s, want %s", got, solana.ComputeBudget)
	}
	limit, err := computebudget.NewSetComputeUnitLimitInstruction(200_000).ValidateAndBuild()
	if err != nil {
		t.Fatal(err)
	}
	price, err := computebudget.NewSetComputeUnitPriceInstruction(1_000_000).ValidateAndBuild()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got  message.Instruction
		want solana.Instruction
	}{{message.SetComputeUnitLimit(200_000), limit}, {message.SetComputeUnitPrice(1_000_000), price}} {
		data, err := c.want.Data()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.got.Data, data) || len(c.got.Accounts) != 0 || c.got.ProgramID != message.ComputeBudgetProgramID() {
			t.Fatalf("instruction %+v, want data % x", c.got, data)
		}
	}
	if u, ok := message.DecodeComputeUnitLimit(message.SetComputeUnitLimit(7).Data); !ok || u != 7 {
		t.Fatalf("DecodeComputeUnitLimit: %d %v", u, ok)
	}
	if p, ok := message.DecodeComputeUnitPrice(message.SetComputeUnitPrice(9).Data); !ok || p != 9 {
		t.Fatalf("DecodeComputeUnitPrice: %d %v", p, ok)
	}
	if _, ok := message.DecodeComputeUnitPrice(message.SetComputeUnitLimit(9).Data); ok {
		t.Fatal("a unit limit decodes as a price")
	}
	if _, ok := message.DecodeComputeUnitLimit(append(message.SetComputeUnitLimit(9).Data, 0)); ok {
		t.Fatal("a limit with a trailing byte decodes")
	}
}
