package message_test

import (
	"encoding/binary"
	"slices"
	"testing"

	addresslookuptable "github.com/gagliardetto/solana-go/programs/address-lookup-table"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
)

// TestDecodeLookupTableReadsTheProgramsLayout decodes the table account
// the loopback cluster writes, checks it against solana-go's decoder and
// compiles a message with it.
func TestDecodeLookupTableReadsTheProgramsLayout(t *testing.T) {
	c, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	entries := []chain.Address{addr("pool"), addr("mint in"), addr("mint out"), addr("token program")}
	table, err := c.CreateLookupTable(addr("payer"), entries)
	if err != nil {
		t.Fatal(err)
	}
	acct, ok := c.Account(table)
	if !ok {
		t.Fatal("no table account")
	}
	got, err := message.DecodeLookupTable(table, acct.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Address != table || !slices.Equal(got.Addresses, entries) {
		t.Fatalf("decoded %+v, want %s holding %v", got, table, entries)
	}
	state, err := addresslookuptable.DecodeAddressLookupTableState(acct.Data)
	if err != nil || len(state.Addresses) != len(got.Addresses) {
		t.Fatalf("solana-go reads %+v (%v)", state, err)
	}
	for i, a := range state.Addresses {
		if chain.Address(a) != got.Addresses[i] {
			t.Errorf("address %d: solana-go %s, decoded %s", i, a, got.Addresses[i])
		}
	}

	// What the decoder returns is what CompileV0 loads from.
	ix := message.Instruction{ProgramID: addr("pool program"), Accounts: []message.AccountMeta{
		{Key: addr("pool"), Writable: true}, {Key: addr("payer"), Signer: true}, {Key: addr("mint in")},
	}}
	m, err := message.Compile(message.V0, addr("payer"), blockhash, []message.Instruction{ix}, []message.LookupTable{got})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Lookups) != 1 || m.Lookups[0].Table != table || !slices.Equal(m.Lookups[0].Writable, []uint8{0}) ||
		!slices.Equal(m.Lookups[0].Readonly, []uint8{1}) {
		t.Fatalf("lookups %+v", m.Lookups)
	}
}

func TestDecodeLookupTableRefusesOtherBytes(t *testing.T) {
	header := func(discriminator uint32, tag byte) []byte {
		b := make([]byte, 56)
		binary.LittleEndian.PutUint32(b, discriminator)
		binary.LittleEndian.PutUint64(b[4:], ^uint64(0))
		b[21] = tag
		return b
	}
	one := addr("entry")
	for _, tc := range []struct {
		name string
		data []byte
		want []chain.Address // nil: refused
	}{
		{"empty table without authority", header(1, 0), []chain.Address{}},
		{"one address", append(header(1, 1), one[:]...), []chain.Address{one}},
		{"no bytes", nil, nil},
		{"short header", header(1, 1)[:55], nil},
		{"uninitialized account", append(header(0, 0), one[:]...), nil},
		{"another discriminator", header(2, 0), nil},
		{"authority tag 2", header(1, 2), nil},
		{"partial address", append(header(1, 1), one[:31]...), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := message.DecodeLookupTable(addr("table"), tc.data)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("decoded %+v", got)
				}
				return
			}
			if err != nil || got.Address != addr("table") || !slices.Equal(got.Addresses, tc.want) {
				t.Fatalf("got %+v %v, want %v", got, err, tc.want)
			}
		})
	}
}
