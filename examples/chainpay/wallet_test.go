package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// TestTransferRequestFields: a wallet pays exactly what the request's URI
// names, in atomic units of the mint's decimals, and refuses an amount
// finer than the mint allows.
func TestTransferRequestFields(t *testing.T) {
	recipient, mint, ref := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	uri := "solana:" + recipient.String() + "?amount=1.020408164&spl-token=" + mint.String() + "&reference=" + ref.String() +
		"&label=Creator%20Music&message=100%20credits&memo=txi_1"
	r, err := parseTransferRequest(uri)
	if err != nil {
		t.Fatal(err)
	}
	if r.recipient != recipient || r.mint != mint || len(r.references) != 1 || r.references[0] != ref || r.memo != "txi_1" {
		t.Fatalf("request = %+v", r)
	}
	if n, err := atomic(r.amount, 9); err != nil || n != 1_020_408_164 {
		t.Fatalf("atomic = %d, %v", n, err)
	}
	if n, err := atomic("2", 6); err != nil || n != 2_000_000 {
		t.Fatalf("atomic(2) = %d, %v", n, err)
	}
	if _, err := atomic("0.0000000001", 9); err == nil {
		t.Fatal("an amount finer than the decimals was accepted")
	}
	for _, bad := range []string{"bitcoin:" + recipient.String() + "?amount=1", "solana:" + recipient.String() + "?spl-token=" + mint.String(),
		"solana:nope?amount=1&spl-token=" + mint.String()} {
		if _, err := parseTransferRequest(bad); err == nil {
			t.Fatalf("%s was accepted", bad)
		}
	}
}

// TestSignTransactionChecksThePayer: the wallet signs a prepared message
// only when it is the message's fee payer, and prints the submit route's
// body, whose wire transaction carries the message it signed.
func TestSignTransactionChecksThePayer(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	payer := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
	tx, err := solana.NewTransaction([]solana.Instruction{solana.NewInstruction(solana.MemoProgramID,
		solana.AccountMetaSlice{solana.NewAccountMeta(payer, false, true)}, []byte("hi"))}, solana.Hash{1}, solana.TransactionPayer(payer))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := signTransaction(&out, other, base64.StdEncoding.EncodeToString(msg)); err == nil || !strings.Contains(err.Error(), "fee payer") {
		t.Fatalf("another wallet signed: %v", err)
	}
	if err := signTransaction(&out, key, base64.StdEncoding.EncodeToString(msg)); err != nil {
		t.Fatal(err)
	}
	var body submitBody
	if err := json.Unmarshal(out.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	wire, _ := base64.StdEncoding.DecodeString(body.SignedTransactionBase64)
	sig := solana.MustSignatureFromBase58(body.Signature)
	if len(wire) != 1+64+len(msg) || wire[0] != 1 || !bytes.Equal(wire[1:65], sig[:]) || !bytes.Equal(wire[65:], msg) ||
		!ed25519.Verify(key.Public().(ed25519.PublicKey), msg, sig[:]) {
		t.Fatalf("submit body = %+v", body)
	}
}
