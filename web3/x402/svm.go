package x402

// This file decodes an exact-on-Solana payment and applies the
// facilitator's rules that read the transaction alone (web3.md §1.6), as
// pure functions: what the chain says about its accounts is checked by
// CheckAccounts (accounts.go).

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// Limits of the exact scheme's layout on Solana (web3.md §1.6).
const (
	// MaxComputeUnitPrice is the highest compute unit price accepted, in
	// micro-lamports per unit: 5 lamports per unit, the reference's cap.
	MaxComputeUnitPrice = 5_000_000
	// MinInstructions and MaxInstructions bound the layout: the two
	// compute budget instructions and the transfer, then at most three
	// Lighthouse or Memo instructions.
	MinInstructions = 3
	MaxInstructions = 6
	// MaxMemoBytes bounds extra.memo.
	MaxMemoBytes = 256
	// maxBlockhashAge is how many blocks a blockhash stays usable
	// (chain.md §3): a blockhash valid at height h lands nothing after
	// h + maxBlockhashAge.
	maxBlockhashAge = 150
)

// LighthouseProgramID returns the Lighthouse program's id,
// L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95, whose assertions wallets
// add to a transaction they sign.
func LighthouseProgramID() chain.Address {
	return chain.Address{
		0x04, 0xdf, 0xad, 0x79, 0x62, 0xff, 0xb1, 0xdd, 0x92, 0x5d, 0x0a, 0x9f, 0xb5, 0xe6, 0xd0, 0x0c,
		0xe6, 0x19, 0x5b, 0xa8, 0xbb, 0x3a, 0x91, 0xfd, 0x07, 0xef, 0x98, 0x60, 0xc5, 0xe9, 0x7b, 0xb8,
	}
}

// Invalid is why a payment fails a rule: the protocol's reason and a
// message for people.
type Invalid struct {
	// Reason is the rule's reason (reasons.go).
	Reason string
	// Message says what was found.
	Message string
}

// Error implements error.
func (i *Invalid) Error() string { return "x402: " + i.Reason + ": " + i.Message }

// invalid returns an Invalid with a formatted message.
func invalid(reason, format string, args ...any) *Invalid {
	return &Invalid{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Transaction is a payment transaction as the client sent it.
type Transaction struct {
	// Wire is the transaction's bytes as sent.
	Wire []byte
	// Signatures are its signature slots, the fee payer's first.
	Signatures [][]byte
	// Message is the signed message.
	Message []byte
	// Decoded is the message's parts.
	Decoded message.Decoded
}

// DecodeTransaction decodes an exact payload's transaction: base64 of a
// wire transaction (legacy or v0). It fails with ReasonUndecodable.
func DecodeTransaction(b64 string) (Transaction, *Invalid) {
	wire, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return Transaction{}, invalid(ReasonUndecodable, "the transaction is not base64")
	}
	signed, err := message.ParseSigned(wire)
	if err != nil {
		return Transaction{}, invalid(ReasonUndecodable, "%v", err)
	}
	d, err := message.Decode(signed.Message)
	if err != nil {
		return Transaction{}, invalid(ReasonUndecodable, "%v", err)
	}
	return Transaction{Wire: wire, Signatures: signed.Signatures, Message: signed.Message, Decoded: d}, nil
}

// DecodePaymentTransaction reads p's scheme payload ({"transaction":
// base64}) and decodes its transaction: ReasonPayload for another
// payload, ReasonUndecodable for bytes that are no transaction.
func DecodePaymentTransaction(p PaymentPayload) (Transaction, *Invalid) {
	var sp SVMPayload
	if len(p.Payload) == 0 || json.Unmarshal(p.Payload, &sp) != nil || sp.Transaction == "" {
		return Transaction{}, invalid(ReasonPayload, `the payload is not {"transaction": "<base64>"}`)
	}
	return DecodeTransaction(sp.Transaction)
}

// MessageHash identifies the transaction: the SHA-256 of its message, in
// hex. Signatures do not enter it, so a transaction is the same whoever
// signed what, and the fee payer's deterministic signature names it too.
func (t Transaction) MessageHash() string {
	sum := sha256.Sum256(t.Message)
	return hex.EncodeToString(sum[:])
}

// PayloadHash identifies what the client sent: the SHA-256 of the wire
// bytes, in hex.
func (t Transaction) PayloadHash() string {
	sum := sha256.Sum256(t.Wire)
	return hex.EncodeToString(sum[:])
}

// FeePayer is the transaction's fee payer, its first key.
func (t Transaction) FeePayer() chain.Address { return t.Decoded.StaticKeys[0] }

// WithFeePayerSignature returns the wire transaction with sig in the fee
// payer's slot and the other slots as sent.
func (t Transaction) WithFeePayerSignature(sig []byte) []byte {
	b := message.AppendCompactU16(nil, len(t.Signatures))
	b = append(b, sig...)
	for _, s := range t.Signatures[1:] {
		b = append(b, s...)
	}
	return append(b, t.Message...)
}

// Payment is what the rules read off a transaction that passed them.
type Payment struct {
	// TokenProgram is the transfer's program (SPL Token or Token-2022).
	TokenProgram chain.Address
	// Source, Mint, Destination and Authority are the transfer's accounts.
	Source, Mint, Destination, Authority chain.Address
	// Amount and Decimals are what the transfer states.
	Amount   uint64
	Decimals uint8
	// Memo is the memo, when the transaction carries exactly one.
	Memo string
	// ComputeUnitLimit and ComputeUnitPrice are the compute budget.
	ComputeUnitLimit uint32
	ComputeUnitPrice uint64
	// Blockhash is the transaction's blockhash (base58).
	Blockhash string
}

// CheckTransaction applies the rules that read the transaction alone, in
// order, and returns the payment it carries or the first rule it breaks:
//
//  1. No address lookup tables: every account must be visible
//     (ReasonLookupTables).
//  2. The fee payer is req's extra.feePayer (ReasonFeePayerMismatch) and
//     its signature slot is empty (ReasonFeePayerSigned).
//  3. Three to six instructions (ReasonInstructionsLength):
//     SetComputeUnitLimit (ReasonComputeLimit), SetComputeUnitPrice at
//     most MaxComputeUnitPrice (ReasonComputePrice,
//     ReasonComputePriceTooHigh), a TransferChecked of the SPL Token or
//     Token-2022 program with its four accounts (ReasonNoTransfer), then
//     Lighthouse or Memo instructions (ReasonFourth, ReasonFifth,
//     ReasonSixth).
//  4. The fee payer is no account of any instruction: not the
//     authority, not the source, nothing (ReasonFeePayerInInstruction).
//  5. The transfer: its mint is the asset (ReasonMint), its destination
//     payTo's associated token account of the asset under the transfer's
//     program (ReasonRecipient), its amount exactly the amount
//     (ReasonAmount).
//  6. With extra.memo, exactly one Memo instruction (ReasonMemoCount),
//     carrying extra.memo (ReasonMemoMismatch).
//  7. Exactly two signers, the fee payer and the transfer's authority
//     (ReasonSigners), and the authority's signature verifies
//     (ReasonSignature).
func CheckTransaction(req Requirements, tx Transaction) (Payment, *Invalid) {
	d := tx.Decoded
	if len(d.Lookups) > 0 {
		return Payment{}, invalid(ReasonLookupTables, "the transaction loads %d address lookup tables", len(d.Lookups))
	}
	if got := tx.FeePayer().String(); got != req.Extra.FeePayer {
		return Payment{}, invalid(ReasonFeePayerMismatch, "the fee payer is %s, not %s", got, req.Extra.FeePayer)
	}
	if !zero(tx.Signatures[0]) {
		return Payment{}, invalid(ReasonFeePayerSigned, "the fee payer's signature slot is not empty")
	}
	n := len(d.Instructions)
	if n < MinInstructions || n > MaxInstructions {
		return Payment{}, invalid(ReasonInstructionsLength, "%d instructions, not %d to %d", n, MinInstructions, MaxInstructions)
	}
	program := func(i int) chain.Address {
		k, _ := d.Key(d.Instructions[i].ProgramIndex) // a sanitized message calls static keys only
		return k
	}
	var p Payment
	p.Blockhash = d.BlockhashString()
	budget := message.ComputeBudgetProgramID()
	var ok bool
	if ix := d.Instructions[0]; program(0) != budget || len(ix.Accounts) != 0 {
		return Payment{}, invalid(ReasonComputeLimit, "the first instruction is not SetComputeUnitLimit")
	} else if p.ComputeUnitLimit, ok = message.DecodeComputeUnitLimit(ix.Data); !ok {
		return Payment{}, invalid(ReasonComputeLimit, "the first instruction is not SetComputeUnitLimit")
	}
	if ix := d.Instructions[1]; program(1) != budget || len(ix.Accounts) != 0 {
		return Payment{}, invalid(ReasonComputePrice, "the second instruction is not SetComputeUnitPrice")
	} else if p.ComputeUnitPrice, ok = message.DecodeComputeUnitPrice(ix.Data); !ok {
		return Payment{}, invalid(ReasonComputePrice, "the second instruction is not SetComputeUnitPrice")
	}
	if p.ComputeUnitPrice > MaxComputeUnitPrice {
		return Payment{}, invalid(ReasonComputePriceTooHigh, "a unit price of %d micro-lamports is over %d", p.ComputeUnitPrice, MaxComputeUnitPrice)
	}
	transfer := d.Instructions[2]
	p.TokenProgram = program(2)
	t, ok := message.DecodeTransfer(transfer.Data)
	if (p.TokenProgram != message.SPLTokenProgramID() && p.TokenProgram != token2022.ProgramID()) || !ok || t.WithFee || len(transfer.Accounts) != 4 {
		return Payment{}, invalid(ReasonNoTransfer, "the third instruction is not a TransferChecked of a token program with its four accounts")
	}
	accts := make([]chain.Address, 4)
	for i, idx := range transfer.Accounts {
		if accts[i], ok = d.Key(idx); !ok {
			return Payment{}, invalid(ReasonNoTransfer, "the transfer names a key outside the message")
		}
	}
	p.Source, p.Mint, p.Destination, p.Authority, p.Amount, p.Decimals = accts[0], accts[1], accts[2], accts[3], t.Amount, t.Decimals
	var memos []string
	for i := 3; i < n; i++ {
		switch program(i) {
		case LighthouseProgramID():
		case message.MemoProgramID():
			memos = append(memos, string(d.Instructions[i].Data))
		default:
			return Payment{}, invalid([]string{ReasonFourth, ReasonFifth, ReasonSixth}[i-3], "instruction %d calls %s, neither Lighthouse nor Memo", i+1, program(i))
		}
	}
	fee := tx.FeePayer()
	for i, ix := range d.Instructions {
		for _, a := range ix.Accounts {
			if int(a) == 0 {
				return Payment{}, invalid(ReasonFeePayerInInstruction, "the fee payer is an account of instruction %d", i+1)
			}
		}
		if program(i) == fee {
			return Payment{}, invalid(ReasonFeePayerInInstruction, "instruction %d calls the fee payer", i+1)
		}
	}
	if p.Mint.String() != req.Asset {
		return Payment{}, invalid(ReasonMint, "the mint is %s, not %s", p.Mint, req.Asset)
	}
	payTo, err := token2022.ParsePublicKey(req.PayTo)
	if err != nil {
		return Payment{}, invalid(ReasonRecipient, "payTo is not an address")
	}
	if want := token2022.AssociatedTokenAddressFor(payTo, p.Mint, p.TokenProgram); p.Destination != want {
		return Payment{}, invalid(ReasonRecipient, "the destination is %s, not payTo's associated token account %s", p.Destination, want)
	}
	if strconv.FormatUint(p.Amount, 10) != req.Amount {
		return Payment{}, invalid(ReasonAmount, "the transfer moves %d, not exactly %s", p.Amount, req.Amount)
	}
	if len(memos) == 1 {
		p.Memo = memos[0]
	}
	if req.Extra.Memo != "" {
		if len(memos) != 1 {
			return Payment{}, invalid(ReasonMemoCount, "%d memo instructions, not exactly one", len(memos))
		}
		if memos[0] != req.Extra.Memo {
			return Payment{}, invalid(ReasonMemoMismatch, "the memo is not the one the requirements name")
		}
	}
	if d.NumSigners != 2 || d.StaticKeys[1] != p.Authority {
		return Payment{}, invalid(ReasonSigners, "the transaction needs %d signatures; only the fee payer's and the authority's are allowed", d.NumSigners)
	}
	if !message.VerifySignature(p.Authority, tx.Message, tx.Signatures[1]) {
		return Payment{}, invalid(ReasonSignature, "the authority's signature is missing or does not verify")
	}
	return p, nil
}

// zero reports whether b holds only zero bytes.
func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
