package x402

// This file is the payer's side of the exact scheme on Solana: the
// transaction a client builds from requirements and signs, leaving the fee
// payer's slot empty (web3.md §1.6). The platform never signs for a payer;
// clients (examples/x402buy, the tests) build their payments with it.

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// Defaults of a payment's compute budget.
const (
	// DefaultComputeUnitLimit bounds the payment's compute units.
	DefaultComputeUnitLimit = 20_000
	// DefaultComputeUnitPrice is its priority fee in micro-lamports per
	// unit, well under MaxComputeUnitPrice.
	DefaultComputeUnitPrice = 1_000
)

// PaymentInstructions returns the exact scheme's instructions paying req
// from payer's associated token account under tokenProgram (the mint's
// owner): SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked of
// the amount with decimals to payTo's associated token account, and a
// Memo of memo, or of extra.memo when memo is empty, or of 16 random bytes
// in hex when both are.
func PaymentInstructions(req Requirements, payer, tokenProgram chain.Address, decimals uint8, memo string) ([]message.Instruction, error) {
	mint, err := token2022.ParsePublicKey(req.Asset)
	if err != nil {
		return nil, fmt.Errorf("x402: asset: %w", err)
	}
	payTo, err := token2022.ParsePublicKey(req.PayTo)
	if err != nil {
		return nil, fmt.Errorf("x402: payTo: %w", err)
	}
	amount, err := strconv.ParseUint(req.Amount, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("x402: amount %q is not an atomic amount", req.Amount)
	}
	if memo == "" {
		memo = req.Extra.Memo
	}
	if memo == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		memo = hex.EncodeToString(b)
	}
	source := token2022.AssociatedTokenAddressFor(payer, mint, tokenProgram)
	destination := token2022.AssociatedTokenAddressFor(payTo, mint, tokenProgram)
	return []message.Instruction{
		message.SetComputeUnitLimit(DefaultComputeUnitLimit),
		message.SetComputeUnitPrice(DefaultComputeUnitPrice),
		message.TransferChecked(tokenProgram, source, mint, destination, payer, amount, decimals),
		message.Memo(memo),
	}, nil
}

// SignTransaction compiles a v0 message paid by feePayer with blockhash
// and ixs, and returns its wire transaction signed by keys: each key signs
// its own slot, and the slots of signers without a key (the fee payer's)
// stay empty.
func SignTransaction(feePayer chain.Address, blockhash string, ixs []message.Instruction, keys ...ed25519.PrivateKey) ([]byte, error) {
	c, err := message.Compile(message.V0, feePayer, blockhash, ixs, nil)
	if err != nil {
		return nil, err
	}
	wire := message.Unsigned(c.Bytes)
	_, size, _ := message.ReadCompactU16(wire)
	for _, k := range keys {
		var a chain.Address
		copy(a[:], k.Public().(ed25519.PublicKey))
		i := -1
		for j := 0; j < c.NumSigners; j++ {
			if c.StaticKeys[j] == a {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("x402: %s is not a signer of the transaction", a)
		}
		copy(wire[size+i*message.SignatureSize:], ed25519.Sign(k, c.Bytes))
	}
	return wire, nil
}

// NewPayload wraps a signed payment transaction as the payload paying
// req for resource (nil to name none).
func NewPayload(req Requirements, resource *ResourceInfo, wire []byte) PaymentPayload {
	body, _ := json.Marshal(SVMPayload{Transaction: base64.StdEncoding.EncodeToString(wire)}) // a struct of one string
	return PaymentPayload{X402Version: Version, Resource: resource, Accepted: req, Payload: body}
}

// BuildPayment is the whole client side: the payment of the first of
// required's requirements, signed by payer with blockhash, whose mint is
// owned by tokenProgram and has decimals.
func BuildPayment(required PaymentRequired, payer ed25519.PrivateKey, tokenProgram chain.Address, decimals uint8, blockhash string) (PaymentPayload, error) {
	if len(required.Accepts) == 0 {
		return PaymentPayload{}, errors.New("x402: the requirements accept nothing")
	}
	req := required.Accepts[0]
	if req.Scheme != SchemeExact {
		return PaymentPayload{}, fmt.Errorf("x402: scheme %q is not exact", req.Scheme)
	}
	feePayer, err := token2022.ParsePublicKey(req.Extra.FeePayer)
	if err != nil {
		return PaymentPayload{}, fmt.Errorf("x402: extra.feePayer: %w", err)
	}
	var from chain.Address
	copy(from[:], payer.Public().(ed25519.PublicKey))
	ixs, err := PaymentInstructions(req, from, tokenProgram, decimals, "")
	if err != nil {
		return PaymentPayload{}, err
	}
	wire, err := SignTransaction(feePayer, blockhash, ixs, payer)
	if err != nil {
		return PaymentPayload{}, err
	}
	res := required.Resource
	return NewPayload(req, &res, wire), nil
}
