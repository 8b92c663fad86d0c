package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// The wallet modes let a shell drive the API with curl while chainpay
// plays only the wallet's part, with the demo keypair: its address, a
// signed message, a signed prepared transaction, or a payment built from a
// Solana Pay transfer request URI and sent to the cluster.

// walletAddress prints the wallet's address.
func walletAddress(w io.Writer, key ed25519.PrivateKey) {
	fmt.Fprintln(w, solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String())
}

// signMessage prints the base58 ed25519 signature of message's bytes, as
// a wallet's signMessage returns it (Sign-In With Solana).
func signMessage(w io.Writer, key ed25519.PrivateKey, message string) {
	fmt.Fprintln(w, solana.SignatureFromBytes(ed25519.Sign(key, []byte(message))).String())
}

// submitBody is the body of POST /api/v1/transactions/{id}/submit.
type submitBody struct {
	Signature               string `json:"signature"`
	SignedTransactionBase64 string `json:"signedTransactionBase64"`
}

// signTransaction signs a prepared message (base64, as an intent's
// transaction.messageBase64 carries it) and prints the submit route's
// body: the signature and the signed wire transaction (the signature
// count, the signature, the message).
func signTransaction(w io.Writer, key ed25519.PrivateKey, messageBase64 string) error {
	msg, err := base64.StdEncoding.DecodeString(messageBase64)
	if err != nil {
		return fmt.Errorf("decode the prepared message: %w", err)
	}
	var m solana.Message
	if err := m.UnmarshalBase64(messageBase64); err != nil {
		return fmt.Errorf("the prepared message is not a Solana message: %w", err)
	}
	payer := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
	if len(m.AccountKeys) == 0 || m.AccountKeys[0] != payer {
		return fmt.Errorf("the message's fee payer is not this wallet (%s)", payer)
	}
	sig := ed25519.Sign(key, msg)
	wire := append(append([]byte{1}, sig...), msg...)
	return json.NewEncoder(w).Encode(submitBody{Signature: solana.SignatureFromBytes(sig).String(),
		SignedTransactionBase64: base64.StdEncoding.EncodeToString(wire)})
}

// transferRequest is a Solana Pay transfer request.
type transferRequest struct {
	recipient, mint solana.PublicKey
	amount          string
	references      []solana.PublicKey
	memo            string
}

// parseTransferRequest reads a solana: URI of an SPL token transfer
// request: the recipient, amount, spl-token, reference (one or more) and
// memo fields.
func parseTransferRequest(uri string) (transferRequest, error) {
	var r transferRequest
	rest, ok := strings.CutPrefix(uri, "solana:")
	if !ok {
		return r, errors.New("not a solana: URI")
	}
	addr, query, _ := strings.Cut(rest, "?")
	var err error
	if r.recipient, err = solana.PublicKeyFromBase58(addr); err != nil {
		return r, fmt.Errorf("recipient: %w", err)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return r, fmt.Errorf("query: %w", err)
	}
	if r.amount = q.Get("amount"); r.amount == "" {
		return r, errors.New("the request names no amount")
	}
	if r.mint, err = solana.PublicKeyFromBase58(q.Get("spl-token")); err != nil {
		return r, fmt.Errorf("spl-token: %w", err)
	}
	for _, s := range q["reference"] {
		ref, err := solana.PublicKeyFromBase58(s)
		if err != nil {
			return r, fmt.Errorf("reference: %w", err)
		}
		r.references = append(r.references, ref)
	}
	r.memo = q.Get("memo")
	return r, nil
}

// atomic is a decimal amount in units of 10^-decimals; more fractional
// digits than decimals is an error.
func atomic(amount string, decimals uint8) (uint64, error) {
	whole, frac, _ := strings.Cut(amount, ".")
	if len(frac) > int(decimals) {
		return 0, fmt.Errorf("amount %s has more than %d decimals", amount, decimals)
	}
	n, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", int(decimals)-len(frac)), 10)
	if !ok || n.Sign() < 0 || !n.IsUint64() {
		return 0, fmt.Errorf("amount %q is not a token amount", amount)
	}
	return n.Uint64(), nil
}

// payTransferRequest pays a transfer request as a wallet does: a memo
// instruction, then Token-2022 TransferChecked of the amount from the
// wallet's token account to the recipient's, with the references appended
// as read-only accounts, signed and sent to the cluster at rpcURL. It
// prints the transaction's signature.
func payTransferRequest(ctx context.Context, w io.Writer, key ed25519.PrivateKey, rpcURL, uri string) error {
	r, err := parseTransferRequest(uri)
	if err != nil {
		return fmt.Errorf("read the payment request: %w", err)
	}
	payer := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
	ata := func(owner solana.PublicKey) (solana.PublicKey, error) {
		a, _, err := solana.FindProgramAddress([][]byte{owner[:], solana.Token2022ProgramID[:], r.mint[:]}, solana.SPLAssociatedTokenAccountProgramID)
		return a, err
	}
	src, err := ata(payer)
	if err != nil {
		return err
	}
	dst, err := ata(r.recipient)
	if err != nil {
		return err
	}
	cluster := rpc.New(rpcURL)
	bal, err := cluster.GetTokenAccountBalance(ctx, src, rpc.CommitmentConfirmed)
	if err != nil {
		return fmt.Errorf("read the wallet's token account: %w", err)
	}
	amount, err := atomic(r.amount, bal.Value.Decimals)
	if err != nil {
		return err
	}
	data := make([]byte, 10)
	data[0] = 12 // TransferChecked
	binary.LittleEndian.PutUint64(data[1:9], amount)
	data[9] = bal.Value.Decimals
	accounts := solana.AccountMetaSlice{solana.NewAccountMeta(src, true, false), solana.NewAccountMeta(r.mint, false, false),
		solana.NewAccountMeta(dst, true, false), solana.NewAccountMeta(payer, false, true)}
	for _, ref := range r.references {
		accounts = append(accounts, solana.NewAccountMeta(ref, false, false))
	}
	var ixs []solana.Instruction
	if r.memo != "" {
		ixs = append(ixs, solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{solana.NewAccountMeta(payer, false, true)}, []byte(r.memo)))
	}
	ixs = append(ixs, solana.NewInstruction(solana.Token2022ProgramID, accounts, data))
	hash, err := cluster.GetLatestBlockhash(ctx, rpc.CommitmentFinalized)
	if err != nil {
		return fmt.Errorf("read the latest blockhash: %w", err)
	}
	tx, err := solana.NewTransaction(ixs, hash.Value.Blockhash, solana.TransactionPayer(payer))
	if err != nil {
		return fmt.Errorf("build the transfer: %w", err)
	}
	priv := solana.PrivateKey(key)
	if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		if k == payer {
			return &priv
		}
		return nil
	}); err != nil {
		return fmt.Errorf("sign the transfer: %w", err)
	}
	sig, err := cluster.SendTransaction(ctx, tx)
	if err != nil {
		return fmt.Errorf("send the transfer: %w", err)
	}
	fmt.Fprintln(w, sig.String())
	return nil
}

// clusterURL reads the simulated cluster's URL from the map the example
// host saves in its data folder.
func clusterURL(data string) (string, error) {
	path := filepath.Join(data, "services.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the host's services map (start the host first): %w", err)
	}
	var m struct {
		Simulators []struct {
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"simulators"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	for _, s := range m.Simulators {
		if s.Name == "solana" {
			return s.URL, nil
		}
	}
	return "", fmt.Errorf("%s: the host runs no Solana cluster (it was started with -chain-sim=false)", path)
}
