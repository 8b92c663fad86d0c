package message_test

import (
	"bytes"
	"testing"

	"github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// sameAccounts fails unless got has want's keys and flags in order.
func sameAccounts(t *testing.T, got []message.AccountMeta, want []*solana.AccountMeta) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d accounts, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Key != chain.Address(w.PublicKey) || g.Signer != w.IsSigner || g.Writable != w.IsWritable {
			t.Fatalf("account %d is %s signer=%v writable=%v, want %s signer=%v writable=%v",
				i, g.Key, g.Signer, g.Writable, w.PublicKey, w.IsSigner, w.IsWritable)
		}
	}
}

func TestProgramIDs(t *testing.T) {
	for name, c := range map[string]struct {
		got  chain.Address
		want string
	}{
		"memo":             {message.MemoProgramID(), solana.MemoProgramID.String()},
		"memo v1":          {message.MemoV1ProgramID(), "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"},
		"spl token":        {message.SPLTokenProgramID(), solana.TokenProgramID.String()},
		"associated token": {message.AssociatedTokenProgramID(), solana.SPLAssociatedTokenAccountProgramID.String()},
	} {
		if c.got.String() != c.want {
			t.Errorf("%s: %s, want %s", name, c.got, c.want)
		}
	}
}

func TestTransferCheckedMatchesSolanaGo(t *testing.T) {
	source, mint, destination, owner := addr("source"), addr("mint"), addr("destination"), addr("owner")
	const amount, decimals = 123_456_789_012, 9
	want := token.NewTransferCheckedInstruction(amount, decimals, solana.PublicKey(source), solana.PublicKey(mint),
		solana.PublicKey(destination), solana.PublicKey(owner), nil).Build()
	wantData, err := want.Data()
	if err != nil {
		t.Fatal(err)
	}
	for _, program := range []chain.Address{message.SPLTokenProgramID(), token2022.ProgramID()} {
		ix := message.TransferChecked(program, source, mint, destination, owner, amount, decimals)
		if ix.ProgramID != program {
			t.Fatalf("program %s, want %s", ix.ProgramID, program)
		}
		if !bytes.Equal(ix.Data, wantData) {
			t.Fatalf("data % x, want solana-go's % x", ix.Data, wantData)
		}
		sameAccounts(t, ix.Accounts, want.Accounts())
	}
}

func TestTransferCheckedWithFee(t *testing.T) {
	source, mint, destination, owner := addr("source"), addr("mint"), addr("destination"), addr("owner")
	ix := message.TransferCheckedWithFee(source, mint, destination, owner, 0x0102030405060708, 6, 0x1112131415161718)
	// chain.md §4: 26, 1, u64 amount, u8 decimals, u64 fee, little-endian.
	want := []byte{26, 1, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 6, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11}
	if !bytes.Equal(ix.Data, want) {
		t.Fatalf("data % x, want % x", ix.Data, want)
	}
	if ix.ProgramID != token2022.ProgramID() {
		t.Fatalf("program %s, want Token-2022", ix.ProgramID)
	}
	// The accounts are TransferChecked's.
	sameAccounts(t, ix.Accounts, token.NewTransferCheckedInstruction(1, 6, solana.PublicKey(source), solana.PublicKey(mint),
		solana.PublicKey(destination), solana.PublicKey(owner), nil).Build().Accounts())
}

func TestDecodeTransfer(t *testing.T) {
	k := addr("k")
	plain := message.TransferChecked(message.SPLTokenProgramID(), k, k, k, k, 5_000_000, 6).Data
	if got, ok := message.DecodeTransfer(plain); !ok || got != (message.Transfer{Amount: 5_000_000, Decimals: 6}) {
		t.Fatalf("TransferChecked decodes as %+v %v", got, ok)
	}
	fee := message.TransferCheckedWithFee(k, k, k, k, 5_000_000, 6, 10_000).Data
	if got, ok := message.DecodeTransfer(fee); !ok || got != (message.Transfer{WithFee: true, Amount: 5_000_000, Decimals: 6, Fee: 10_000}) {
		t.Fatalf("TransferCheckedWithFee decodes as %+v %v", got, ok)
	}
	for name, data := range map[string][]byte{
		"empty":                  nil,
		"plain transfer":         {3, 1, 0, 0, 0, 0, 0, 0, 0},
		"checked, short":         plain[:9],
		"checked, long":          append(append([]byte(nil), plain...), 0),
		"with fee, short":        fee[:18],
		"with fee, long":         append(append([]byte(nil), fee...), 0),
		"other fee instruction":  append([]byte{26, 2}, fee[2:]...),
		"checked with fee's len": append([]byte{12}, fee[1:]...),
	} {
		if got, ok := message.DecodeTransfer(data); ok {
			t.Errorf("%s decodes as %+v", name, got)
		}
	}
}

func TestMemo(t *testing.T) {
	signer, cosigner := addr("signer"), addr("cosigner")
	ix := message.Memo("order 42", signer, cosigner)
	if ix.ProgramID != chain.Address(solana.MemoProgramID) || string(ix.Data) != "order 42" {
		t.Fatalf("memo %s %q", ix.ProgramID, ix.Data)
	}
	want := memo.NewMemoInstruction([]byte("order 42"), solana.PublicKey(signer)).Build().Accounts()
	want = append(want, solana.Meta(solana.PublicKey(cosigner)).SIGNER())
	sameAccounts(t, ix.Accounts, want)
	if bare := message.Memo("x"); len(bare.Accounts) != 0 || string(bare.Data) != "x" {
		t.Fatalf("a memo without signers has accounts %v", bare.Accounts)
	}
}

func TestCreateAssociatedTokenAccountIdempotent(t *testing.T) {
	payer, wallet, mint := addr("payer"), addr("wallet"), addr("mint")
	// solana-go's builder is Create (empty data) for the classic program;
	// the accounts are the same.
	classic := message.CreateAssociatedTokenAccountIdempotent(payer, wallet, mint, message.SPLTokenProgramID())
	want := ata.NewCreateInstruction(solana.PublicKey(payer), solana.PublicKey(wallet), solana.PublicKey(mint)).Build()
	if classic.ProgramID != chain.Address(want.ProgramID()) || !bytes.Equal(classic.Data, []byte{1}) {
		t.Fatalf("program %s data % x, want %s and CreateIdempotent (1)", classic.ProgramID, classic.Data, want.ProgramID())
	}
	sameAccounts(t, classic.Accounts, want.Accounts())

	ext := message.CreateAssociatedTokenAccountIdempotent(payer, wallet, mint, token2022.ProgramID())
	addr22, _, err := solana.FindProgramAddress([][]byte{wallet[:], solana.Token2022ProgramID[:], mint[:]}, solana.SPLAssociatedTokenAccountProgramID)
	if err != nil {
		t.Fatal(err)
	}
	if ext.Accounts[1].Key != chain.Address(addr22) || ext.Accounts[1].Key != token2022.AssociatedTokenAddress(wallet, mint) {
		t.Fatalf("Token-2022 account %s, want %s", ext.Accounts[1].Key, addr22)
	}
	if ext.Accounts[1].Key == classic.Accounts[1].Key {
		t.Fatal("the Token-2022 account equals the classic one")
	}
	if last := ext.Accounts[5]; last.Key != token2022.ProgramID() || last.Signer || last.Writable {
		t.Fatalf("token program account %+v", last)
	}
}
