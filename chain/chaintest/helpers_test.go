package chaintest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"io"
	"net/http"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

type env struct {
	t   *testing.T
	c   *chaintest.Cluster
	rpc *rpc.Client
	ctx context.Context
}

func newEnv(t *testing.T, cfg chaintest.Config) *env {
	t.Helper()
	c, err := chaintest.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	cl := rpc.New(c.URL())
	t.Cleanup(func() {
		_ = cl.Close()
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &env{t: t, c: c, rpc: cl, ctx: context.Background()}
}

// wallet is a funded key pair.
type wallet struct {
	priv ed25519.PrivateKey
	addr chain.Address
}

func (w wallet) pk() solana.PublicKey { return solana.PublicKey(w.addr) }

func (e *env) wallet(lamports uint64) wallet {
	priv, addr := chaintest.NewKeypair()
	if lamports > 0 {
		e.c.Airdrop(addr, lamports)
	}
	return wallet{priv, addr}
}

var (
	t22  = solana.Token2022ProgramID
	memo = solana.MemoProgramID
)

// feeMintSpec is a Token-2022 mint with a 200 bps fee, a metadata pointer
// to itself and embedded metadata.
func feeMintSpec(addr, authority chain.Address, maxFee uint64) token2022.Mint {
	fee := token2022.TransferFee{Epoch: 0, MaximumFee: maxFee, BasisPoints: 200}
	return token2022.Mint{
		MintAuthority: &authority,
		Decimals:      9,
		IsInitialized: true,
		Extensions: []token2022.Extension{
			token2022.TransferFeeConfig{ConfigAuthority: authority, WithdrawWithheldAuthority: authority, Older: fee, Newer: fee},
			token2022.MetadataPointer{Authority: authority, MetadataAddress: addr},
			token2022.TokenMetadata{UpdateAuthority: authority, Mint: addr, Name: "Creator Coin", Symbol: "CRTR", URI: "https://example.test/crtr.json",
				AdditionalMetadata: []token2022.MetadataField{{Key: "artist", Value: "someone"}}},
		},
	}
}

func (e *env) feeMint(authority chain.Address) chain.Address {
	e.t.Helper()
	_, addr := chaintest.NewKeypair()
	if err := e.c.CreateMint(addr, feeMintSpec(addr, authority, 1_000_000_000_000)); err != nil {
		e.t.Fatalf("CreateMint: %v", err)
	}
	return addr
}

func transferCheckedWithFee(src, mint, dst, owner chain.Address, amount uint64, decimals uint8, fee uint64) solana.Instruction {
	data := make([]byte, 19)
	data[0], data[1] = 26, 1
	binary.LittleEndian.PutUint64(data[2:], amount)
	data[10] = decimals
	binary.LittleEndian.PutUint64(data[11:], fee)
	return solana.NewInstruction(t22, solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(src), true, false),
		solana.NewAccountMeta(solana.PublicKey(mint), false, false),
		solana.NewAccountMeta(solana.PublicKey(dst), true, false),
		solana.NewAccountMeta(solana.PublicKey(owner), false, true),
	}, data)
}

func transferChecked(prog solana.PublicKey, src, mint, dst, owner chain.Address, amount uint64, decimals uint8) solana.Instruction {
	data := make([]byte, 10)
	data[0] = 12
	binary.LittleEndian.PutUint64(data[1:], amount)
	data[9] = decimals
	return solana.NewInstruction(prog, solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(src), true, false),
		solana.NewAccountMeta(solana.PublicKey(mint), false, false),
		solana.NewAccountMeta(solana.PublicKey(dst), true, false),
		solana.NewAccountMeta(solana.PublicKey(owner), false, true),
	}, data)
}

func systemTransfer(from, to chain.Address, lamports uint64) solana.Instruction {
	data := make([]byte, 12)
	data[0] = 2
	binary.LittleEndian.PutUint64(data[4:], lamports)
	return solana.NewInstruction(solana.SystemProgramID, solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(from), true, true),
		solana.NewAccountMeta(solana.PublicKey(to), true, false),
	}, data)
}

func createATAIdempotent(payer, owner, mint chain.Address) solana.Instruction {
	ata := chaintest.AssociatedTokenAddress(owner, mint, chain.Address(t22))
	return solana.NewInstruction(solana.SPLAssociatedTokenAccountProgramID, solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(payer), true, true),
		solana.NewAccountMeta(solana.PublicKey(ata), true, false),
		solana.NewAccountMeta(solana.PublicKey(owner), false, false),
		solana.NewAccountMeta(solana.PublicKey(mint), false, false),
		solana.NewAccountMeta(solana.SystemProgramID, false, false),
		solana.NewAccountMeta(t22, false, false),
	}, []byte{1})
}

func memoIx(signer chain.Address, text string) solana.Instruction {
	return solana.NewInstruction(memo, solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(signer), false, true),
	}, []byte(text))
}

// build signs a transaction paid by the first signer with the cluster's
// latest blockhash.
func (e *env) build(ixs []solana.Instruction, signers ...wallet) *solana.Transaction {
	e.t.Helper()
	bh, err := e.rpc.GetLatestBlockhash(e.ctx, rpc.CommitmentProcessed)
	if err != nil {
		e.t.Fatalf("GetLatestBlockhash: %v", err)
	}
	return buildWith(e.t, bh.Value.Blockhash, ixs, signers...)
}

func buildWith(t *testing.T, bh solana.Hash, ixs []solana.Instruction, signers ...wallet) *solana.Transaction {
	t.Helper()
	tx, err := solana.NewTransaction(ixs, bh, solana.TransactionPayer(signers[0].pk()))
	if err != nil {
		t.Fatalf("NewTransaction: %v", err)
	}
	if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		for _, s := range signers {
			if s.pk() == k {
				p := solana.PrivateKey(s.priv)
				return &p
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return tx
}

func (e *env) send(tx *solana.Transaction, skipPreflight bool) (solana.Signature, error) {
	return e.rpc.SendTransactionWithOpts(e.ctx, tx, rpc.TransactionOpts{SkipPreflight: skipPreflight, PreflightCommitment: rpc.CommitmentProcessed})
}

func (e *env) mustSend(tx *solana.Transaction, skipPreflight bool) solana.Signature {
	e.t.Helper()
	sig, err := e.send(tx, skipPreflight)
	if err != nil {
		e.t.Fatalf("SendTransaction: %v", err)
	}
	return sig
}

func (e *env) status(sig solana.Signature) *rpc.SignatureStatusesResult {
	e.t.Helper()
	out, err := e.rpc.GetSignatureStatuses(e.ctx, false, sig)
	if err != nil {
		e.t.Fatalf("GetSignatureStatuses: %v", err)
	}
	if len(out.Value) != 1 {
		e.t.Fatalf("GetSignatureStatuses: %d values", len(out.Value))
	}
	return out.Value[0]
}

func (e *env) tokenAccount(addr chain.Address) token2022.Account {
	e.t.Helper()
	a, ok := e.c.Account(addr)
	if !ok {
		e.t.Fatalf("no account at %s", addr)
	}
	acct, err := token2022.DecodeAccount(a.Data)
	if err != nil {
		e.t.Fatalf("DecodeAccount(%s): %v", addr, err)
	}
	return acct
}

func (e *env) lamports(addr chain.Address) uint64 {
	e.t.Helper()
	out, err := e.rpc.GetBalance(e.ctx, solana.PublicKey(addr), rpc.CommitmentProcessed)
	if err != nil {
		e.t.Fatalf("GetBalance: %v", err)
	}
	return out.Value
}

// raw posts body and returns the status and the response body.
func raw(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return resp.StatusCode, bytes.TrimSpace(b)
}
