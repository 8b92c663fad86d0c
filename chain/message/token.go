package message

// This file builds the token, memo and associated-account instructions a
// payment or a swap puts in its transaction (chain.md §4), and decodes the
// transfer instructions a verifier reads back.

import (
	"encoding/binary"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// Token instruction discriminants (chain.md §4).
const (
	ixTransferChecked = 12
	// ixTransferFeeExtension is Token-2022's transfer-fee extension
	// instruction; its second byte selects the sub-instruction.
	ixTransferFeeExtension   = 26
	ixTransferCheckedWithFee = 1
	// ixCreateIdempotent is the Associated Token Account program's
	// CreateIdempotent.
	ixCreateIdempotent = 1
)

// MemoProgramID returns the Memo program id transactions are built with,
// MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr (the crate calls it v2 or v3).
func MemoProgramID() chain.Address {
	return chain.Address{
		0x05, 0x4a, 0x53, 0x5a, 0x99, 0x29, 0x21, 0x06, 0x4d, 0x24, 0xe8, 0x71, 0x60, 0xda, 0x38, 0x7c,
		0x7c, 0x35, 0xb5, 0xdd, 0xbc, 0x92, 0xbb, 0x81, 0xe4, 0x1f, 0xa8, 0x40, 0x41, 0x05, 0x44, 0x8d,
	}
}

// MemoV1ProgramID returns the first Memo program's id,
// Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo, which some wallets still
// use: a verifier accepts a memo from either program.
func MemoV1ProgramID() chain.Address {
	return chain.Address{
		0x05, 0x4a, 0x53, 0x50, 0xf8, 0x5d, 0xc8, 0x82, 0xd6, 0x14, 0xa5, 0x56, 0x72, 0x78, 0x8a, 0x29,
		0x6d, 0xdf, 0x1e, 0xab, 0xab, 0xd0, 0xa6, 0x06, 0x78, 0x88, 0x49, 0x32, 0xf4, 0xee, 0xf6, 0xa0,
	}
}

// SPLTokenProgramID returns the classic SPL Token program id,
// TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA. The Token-2022 program id
// is token2022.ProgramID.
func SPLTokenProgramID() chain.Address {
	return chain.Address{
		0x06, 0xdd, 0xf6, 0xe1, 0xd7, 0x65, 0xa1, 0x93, 0xd9, 0xcb, 0xe1, 0x46, 0xce, 0xeb, 0x79, 0xac,
		0x1c, 0xb4, 0x85, 0xed, 0x5f, 0x5b, 0x37, 0x91, 0x3a, 0x8c, 0xf5, 0x85, 0x7e, 0xff, 0x00, 0xa9,
	}
}

// AssociatedTokenProgramID returns the Associated Token Account program
// id, ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL (token2022's).
func AssociatedTokenProgramID() chain.Address { return token2022.AssociatedTokenProgramID() }

// TransferChecked returns a TransferChecked of amount atomic units of mint
// with its decimals, from source to destination, authorized by owner, for
// program (the SPL Token or the Token-2022 program): data 12, u64 amount,
// u8 decimals; accounts source (w), mint, destination (w), owner (s). A
// caller may append further accounts, such as a Solana Pay reference.
func TransferChecked(program, source, mint, destination, owner chain.Address, amount uint64, decimals uint8) Instruction {
	data := []byte{ixTransferChecked}
	data = binary.LittleEndian.AppendUint64(data, amount)
	data = append(data, decimals)
	return Instruction{ProgramID: program, Accounts: transferAccounts(source, mint, destination, owner), Data: data}
}

// TransferCheckedWithFee returns Token-2022's TransferCheckedWithFee,
// which also states the transfer fee the mint withholds: data 26, 1, u64
// amount, u8 decimals, u64 fee; accounts as TransferChecked. The program
// fails the transfer when fee is not the fee it computes.
func TransferCheckedWithFee(source, mint, destination, owner chain.Address, amount uint64, decimals uint8, fee uint64) Instruction {
	data := []byte{ixTransferFeeExtension, ixTransferCheckedWithFee}
	data = binary.LittleEndian.AppendUint64(data, amount)
	data = append(data, decimals)
	data = binary.LittleEndian.AppendUint64(data, fee)
	return Instruction{ProgramID: token2022.ProgramID(), Accounts: transferAccounts(source, mint, destination, owner), Data: data}
}

// transferAccounts are the four accounts of both checked transfers.
func transferAccounts(source, mint, destination, owner chain.Address) []AccountMeta {
	return []AccountMeta{
		{Key: source, Writable: true},
		{Key: mint},
		{Key: destination, Writable: true},
		{Key: owner, Signer: true},
	}
}

// Memo returns a Memo (MemoProgramID) instruction carrying text as its
// data, which the program requires to be UTF-8. Each of signers is a
// read-only signer account the program checks has signed; with none the
// instruction has no accounts.
func Memo(text string, signers ...chain.Address) Instruction {
	ix := Instruction{ProgramID: MemoProgramID(), Data: []byte(text)}
	for _, s := range signers {
		ix.Accounts = append(ix.Accounts, AccountMeta{Key: s, Signer: true})
	}
	return ix
}

// CreateAssociatedTokenAccountIdempotent returns the Associated Token
// Account program's CreateIdempotent of wallet's account for mint under
// tokenProgram, paid by payer; it succeeds without change when the account
// already exists. Data 1; accounts payer (w, s), the associated account
// (w), wallet, mint, the System program, tokenProgram. The account is the
// program address of [wallet, tokenProgram, mint] under the Associated
// Token Account program, so a Token-2022 mint's differs from a classic
// one's.
func CreateAssociatedTokenAccountIdempotent(payer, wallet, mint, tokenProgram chain.Address) Instruction {
	// Three 32-byte seeds are within the limits, so the only failure left
	// is the search finding no off-curve bump, with odds of about 2^-255.
	ata, _, err := token2022.FindProgramAddress([][]byte{wallet[:], tokenProgram[:], mint[:]}, AssociatedTokenProgramID())
	if err != nil {
		panic("message: associated token address: " + err.Error())
	}
	return Instruction{
		ProgramID: AssociatedTokenProgramID(),
		Accounts: []AccountMeta{
			{Key: payer, Signer: true, Writable: true},
			{Key: ata, Writable: true},
			{Key: wallet},
			{Key: mint},
			{Key: chain.Address{}}, // the System program's id is all zeros
			{Key: tokenProgram},
		},
		Data: []byte{ixCreateIdempotent},
	}
}

// Transfer is a decoded TransferChecked or TransferCheckedWithFee.
type Transfer struct {
	// WithFee marks a TransferCheckedWithFee; Fee is set only then.
	WithFee bool
	// Amount is the atomic amount the source pays.
	Amount uint64
	// Decimals is the mint's decimals the instruction asserts.
	Decimals uint8
	// Fee is the transfer fee the instruction states.
	Fee uint64
}

// DecodeTransfer decodes the data of a TransferChecked (10 bytes) or a
// Token-2022 TransferCheckedWithFee (19 bytes); ok is false for any other
// data. It does not look at the program id, which a caller checks.
func DecodeTransfer(data []byte) (t Transfer, ok bool) {
	switch {
	case len(data) == 10 && data[0] == ixTransferChecked:
		return Transfer{Amount: binary.LittleEndian.Uint64(data[1:]), Decimals: data[9]}, true
	case len(data) == 19 && data[0] == ixTransferFeeExtension && data[1] == ixTransferCheckedWithFee:
		return Transfer{WithFee: true, Amount: binary.LittleEndian.Uint64(data[2:]), Decimals: data[10],
			Fee: binary.LittleEndian.Uint64(data[11:])}, true
	}
	return Transfer{}, false
}
