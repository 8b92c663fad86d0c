package solanarpc_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
)

// payer is the payment path's side of the adapter (the intent domain's
// ChainClient port adds it to the reads).
type payer interface {
	GetLatestBlockhash(ctx context.Context, commitment chain.Commitment) (chain.Blockhash, error)
	GetBlockHeight(ctx context.Context, commitment chain.Commitment) (uint64, error)
	IsBlockhashValid(ctx context.Context, blockhash string, commitment chain.Commitment) (bool, error)
	SendTransaction(ctx context.Context, signedTx []byte, opts chain.SendOptions) (string, error)
	GetSignatureStatuses(ctx context.Context, signatures []string, searchHistory bool) ([]*chain.SignatureStatus, error)
	GetTransaction(ctx context.Context, signature string, commitment chain.Commitment) (chain.Transaction, error)
	GetSignaturesForAddress(ctx context.Context, addr chain.Address, opts chain.SignaturesOptions, commitment chain.Commitment) ([]chain.SignatureInfo, error)
}

var _ payer = (*solanarpc.Client)(nil)

// txMethods are the JSON-RPC methods of the payment path.
var txMethods = []string{"getLatestBlockhash", "getBlockHeight", "isBlockhashValid", "sendTransaction", "getSignatureStatuses", "getTransaction", "getSignaturesForAddress"}

// signer is a key pair that signs transactions.
type signer struct {
	priv ed25519.PrivateKey
	addr chain.Address
}

func (s signer) pk() solana.PublicKey { return solana.PublicKey(s.addr) }

func newSigner(cl *chaintest.Cluster, lamports uint64) signer {
	priv, addr := chaintest.NewKeypair()
	if lamports > 0 {
		cl.Airdrop(addr, lamports)
	}
	return signer{priv, addr}
}

// signTx builds a transaction of ixs on blockhash, paid by the first
// signer and signed by all, and returns it with its bytes.
func signTx(t *testing.T, blockhash string, ixs []solana.Instruction, signers ...signer) (*solana.Transaction, []byte) {
	t.Helper()
	bh, err := solana.HashFromBase58(blockhash)
	if err != nil {
		t.Fatalf("blockhash %q: %v", blockhash, err)
	}
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
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	return tx, raw
}

// latest signs with the cluster's newest blockhash, read through the
// adapter.
func latest(t *testing.T, c *solanarpc.Client) string {
	t.Helper()
	bh, err := c.GetLatestBlockhash(context.Background(), chain.Processed)
	if err != nil {
		t.Fatalf("GetLatestBlockhash: %v", err)
	}
	return bh.Hash
}

func systemTransferIx(from, to chain.Address, lamports uint64) solana.Instruction {
	data := make([]byte, 12)
	data[0] = 2
	binary.LittleEndian.PutUint64(data[4:], lamports)
	return solana.NewInstruction(solana.SystemProgramID, solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(from), true, true),
		solana.NewAccountMeta(solana.PublicKey(to), true, false),
	}, data)
}

func transferCheckedWithFeeData(amount uint64, decimals uint8, fee uint64) []byte {
	data := make([]byte, 19)
	data[0], data[1] = 26, 1
	binary.LittleEndian.PutUint64(data[2:], amount)
	data[10] = decimals
	binary.LittleEndian.PutUint64(data[11:], fee)
	return data
}

// transferCheckedWithFeeIx is a Token-2022 TransferCheckedWithFee with the
// references appended as read-only non-signers (Solana Pay).
func transferCheckedWithFeeIx(src, mint, dst, owner chain.Address, amount uint64, decimals uint8, fee uint64, refs ...chain.Address) solana.Instruction {
	accts := solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(src), true, false),
		solana.NewAccountMeta(solana.PublicKey(mint), false, false),
		solana.NewAccountMeta(solana.PublicKey(dst), true, false),
		solana.NewAccountMeta(solana.PublicKey(owner), false, true),
	}
	for _, r := range refs {
		accts = append(accts, solana.NewAccountMeta(solana.PublicKey(r), false, false))
	}
	return solana.NewInstruction(solana.Token2022ProgramID, accts, transferCheckedWithFeeData(amount, decimals, fee))
}

func memoInstruction(s chain.Address, text string) solana.Instruction {
	return solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{
		solana.NewAccountMeta(solana.PublicKey(s), false, true),
	}, []byte(text))
}

// send submits raw with preflight at processed.
func send(t *testing.T, c *solanarpc.Client, raw []byte) string {
	t.Helper()
	sig, err := c.SendTransaction(context.Background(), raw, chain.SendOptions{PreflightCommitment: chain.Processed})
	if err != nil {
		t.Fatalf("SendTransaction: %v", err)
	}
	return sig
}

func oneStatus(t *testing.T, c *solanarpc.Client, sig string) *chain.SignatureStatus {
	t.Helper()
	st, err := c.GetSignatureStatuses(context.Background(), []string{sig}, false)
	if err != nil {
		t.Fatalf("GetSignatureStatuses: %v", err)
	}
	if len(st) != 1 {
		t.Fatalf("GetSignatureStatuses: %d entries", len(st))
	}
	return st[0]
}

// dataErr is the compact JSON of an RPC error's data.err.
func dataErr(t *testing.T, re *chain.RPCError) string {
	t.Helper()
	var d struct {
		Err json.RawMessage `json:"err"`
	}
	if err := json.Unmarshal([]byte(re.Data), &d); err != nil {
		t.Fatalf("RPCError.Data %q is not a JSON object: %v", re.Data, err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, d.Err); err != nil {
		t.Fatalf("data.err %q: %v", d.Err, err)
	}
	return buf.String()
}

func addrs(keys ...chain.Address) []chain.Address { return keys }

func sameAddrs(a, b []chain.Address) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBlockhashHeightAndValidity(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t)
	c := newClient(t, cl.URL(), 5*time.Second)
	cl.AdvanceSlots(50)

	for _, cm := range commitments {
		bh, err := c.GetLatestBlockhash(ctx, cm)
		if err != nil {
			t.Fatalf("GetLatestBlockhash(%q): %v", cm, err)
		}
		slot, _ := cl.GetSlot(ctx, cm)
		if bh.Slot != slot || bh.LastValidBlockHeight < slot {
			t.Errorf("GetLatestBlockhash(%q) = %+v, slot %d", cm, bh, slot)
		}
		height, err := c.GetBlockHeight(ctx, cm)
		if err != nil {
			t.Fatalf("GetBlockHeight(%q): %v", cm, err)
		}
		if height != slot { // chaintest: block height equals slot
			t.Errorf("GetBlockHeight(%q) = %d, want %d", cm, height, slot)
		}
	}
	bh, err := c.GetLatestBlockhash(ctx, chain.Processed)
	if err != nil {
		t.Fatal(err)
	}
	want, lastValid := cl.LatestBlockhash()
	if bh.Hash != want.String() || bh.LastValidBlockHeight != lastValid || bh.Slot != cl.Slot() {
		t.Errorf("processed blockhash %+v, cluster %s %d slot %d", bh, want, lastValid, cl.Slot())
	}
	if lastValid != cl.Slot()+chaintest.MaxBlockhashAge {
		t.Errorf("lastValidBlockHeight %d, slot %d", lastValid, cl.Slot())
	}

	for _, cm := range commitments {
		ok, err := c.IsBlockhashValid(ctx, bh.Hash, cm)
		if err != nil || !ok {
			t.Errorf("IsBlockhashValid(fresh, %q) = %v, %v", cm, ok, err)
		}
	}
	cl.ExpireBlockhashes()
	ok, err := c.IsBlockhashValid(ctx, bh.Hash, chain.Processed)
	if err != nil || ok {
		t.Errorf("IsBlockhashValid(expired) = %v, %v", ok, err)
	}
	fresh, err := c.GetLatestBlockhash(ctx, chain.Processed)
	if err != nil || fresh.Hash == bh.Hash {
		t.Fatalf("blockhash after ExpireBlockhashes: %+v, %v", fresh, err)
	}
	if ok, err := c.IsBlockhashValid(ctx, fresh.Hash, chain.Confirmed); err != nil || !ok {
		t.Errorf("IsBlockhashValid(new) = %v, %v", ok, err)
	}

	// Not a blockhash, a bad commitment: refused before any request.
	before := cl.Calls("isBlockhashValid")
	for _, h := range []string{"", "0OIl", bh.Hash + "1", solana.SignatureFromBytes(make([]byte, 64)).String()} {
		if _, err := c.IsBlockhashValid(ctx, h, chain.Processed); err == nil || errors.Is(err, chain.ErrUnavailable) {
			t.Errorf("IsBlockhashValid(%q) = %v, want a local error", h, err)
		}
	}
	if _, err := c.IsBlockhashValid(ctx, bh.Hash, "recent"); err == nil {
		t.Error("IsBlockhashValid with an unknown commitment succeeded")
	}
	if cl.Calls("isBlockhashValid") != before {
		t.Error("a refused IsBlockhashValid reached the node")
	}
	for _, call := range []func() error{
		func() error { _, err := c.GetLatestBlockhash(ctx, "max"); return err },
		func() error { _, err := c.GetBlockHeight(ctx, "root"); return err },
	} {
		if err := call(); err == nil {
			t.Error("unknown commitment accepted")
		}
	}
}

func TestSystemTransferThroughFinality(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t)
	c := newClient(t, cl.URL(), 5*time.Second)
	cl.AdvanceSlots(3)
	from := newSigner(cl, 1_000_000_000)
	to := newSigner(cl, 0)

	tx, raw := signTx(t, latest(t, c), []solana.Instruction{systemTransferIx(from.addr, to.addr, 250_000_000)}, from)
	sig := send(t, c, raw)
	if sig != tx.Signatures[0].String() {
		t.Fatalf("signature %s, want %s", sig, tx.Signatures[0])
	}
	landed := cl.Slot()

	st := oneStatus(t, c, sig)
	if st == nil || st.Status != chain.Processed || st.Confirmations == nil || *st.Confirmations != 0 || st.Err != "" || st.Slot != landed {
		t.Fatalf("status after send: %+v", st)
	}
	// Not yet confirmed: not found at confirmed nor finalized.
	for _, cm := range []chain.Commitment{chain.Confirmed, chain.Finalized, ""} {
		if _, err := c.GetTransaction(ctx, sig, cm); !errors.Is(err, chain.ErrTransactionNotFound) || errors.Is(err, chain.ErrUnavailable) {
			t.Errorf("GetTransaction(%q) before confirmation: %v", cm, err)
		}
	}

	cl.AdvanceSlots(1)
	st = oneStatus(t, c, sig)
	if st == nil || st.Status != chain.Confirmed || st.Confirmations == nil || *st.Confirmations != 1 {
		t.Fatalf("status after 1 slot: %+v", st)
	}
	got, err := c.GetTransaction(ctx, sig, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetTransaction(confirmed): %v", err)
	}
	if got.Signature != sig || got.Slot != landed || got.Err != "" || got.Fee != chaintest.LamportsPerSignature || got.NumSigners != 1 {
		t.Errorf("transaction %+v", got)
	}
	if got.BlockTime == nil || !got.BlockTime.Equal(cl.BlockTime(landed).Truncate(time.Second)) {
		t.Errorf("block time %v, want %v", got.BlockTime, cl.BlockTime(landed))
	}
	if got.RecentBlockhash != tx.Message.RecentBlockhash.String() {
		t.Errorf("recent blockhash %s", got.RecentBlockhash)
	}
	if !sameAddrs(got.AccountKeys, addrs(from.addr, to.addr, chain.Address(solana.SystemProgramID))) {
		t.Errorf("account keys %v", got.AccountKeys)
	}
	if len(got.Instructions) != 1 {
		t.Fatalf("instructions %+v", got.Instructions)
	}
	ix := got.Instructions[0]
	if ix.ProgramID != chain.Address(solana.SystemProgramID) || !sameAddrs(ix.Accounts, addrs(from.addr, to.addr)) ||
		!bytes.Equal(ix.Data, tx.Message.Instructions[0].Data) || len(ix.Data) != 12 {
		t.Errorf("instruction %+v", ix)
	}
	if len(got.PreTokenBalances) != 0 || len(got.PostTokenBalances) != 0 {
		t.Errorf("token balances of a system transfer: %+v %+v", got.PreTokenBalances, got.PostTokenBalances)
	}

	cl.AdvanceSlots(30)
	if st := oneStatus(t, c, sig); st.Status != chain.Confirmed || st.Confirmations == nil || *st.Confirmations != 31 {
		t.Errorf("status after 31 slots: %+v", st)
	}
	if _, err := c.GetTransaction(ctx, sig, chain.Finalized); !errors.Is(err, chain.ErrTransactionNotFound) {
		t.Errorf("GetTransaction(finalized) before finality: %v", err)
	}
	cl.AdvanceSlots(1)
	if st := oneStatus(t, c, sig); st.Status != chain.Finalized || st.Confirmations != nil || st.Slot != landed {
		t.Errorf("status after 32 slots: %+v", st)
	}
	fin, err := c.GetTransaction(ctx, sig, "")
	if err != nil || fin.Signature != sig || fin.Slot != landed {
		t.Errorf("GetTransaction(finalized) = %+v, %v", fin, err)
	}
	// searchTransactionHistory is accepted too.
	if st, err := c.GetSignatureStatuses(ctx, []string{sig}, true); err != nil || st[0] == nil || st[0].Status != chain.Finalized {
		t.Errorf("statuses with history: %+v %v", st, err)
	}

	// A resend under preflight is AlreadyProcessed; skipping preflight
	// answers the signature without landing it twice.
	_, err = c.SendTransaction(ctx, raw, chain.SendOptions{PreflightCommitment: chain.Confirmed})
	re := requireRPCError(t, err, "sendTransaction", chain.CodePreflightFailure)
	if e := dataErr(t, re); e != `"AlreadyProcessed"` {
		t.Errorf("resend data.err %s", e)
	}
	again, err := c.SendTransaction(ctx, raw, chain.SendOptions{SkipPreflight: true})
	if err != nil || again != sig {
		t.Errorf("skipPreflight resend = %q, %v", again, err)
	}
	if a, _ := cl.Account(to.addr); a.Lamports != 250_000_000 {
		t.Errorf("recipient lamports %d", a.Lamports)
	}
}

// tokenFixture is a Token-2022 mint with a 200 bps transfer fee, a funded
// sender and a recipient with token accounts.
type tokenFixture struct {
	cl                  *chaintest.Cluster
	c                   *solanarpc.Client
	sender, recipient   signer
	mint, src, dst, ref chain.Address
}

const (
	payAmount = 1_000_000_000
	payFee    = 20_000_000 // 200 bps of payAmount
)

func newTokenFixture(t *testing.T) tokenFixture {
	t.Helper()
	cl := newCluster(t)
	cl.SetEpoch(2)
	f := tokenFixture{cl: cl, c: newClient(t, cl.URL(), 5*time.Second)}
	f.sender = newSigner(cl, 1_000_000_000)
	f.recipient = newSigner(cl, 0)
	_, f.mint = chaintest.NewKeypair()
	_, f.ref = chaintest.NewKeypair()
	fee := token2022.TransferFee{BasisPoints: 200, MaximumFee: 1_000_000_000_000}
	if err := cl.CreateMint(f.mint, token2022.Mint{Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{
		token2022.TransferFeeConfig{Older: fee, Newer: fee},
	}}); err != nil {
		t.Fatalf("CreateMint: %v", err)
	}
	var err error
	if f.src, err = cl.MintTo(f.sender.addr, f.mint, 5_000_000_000); err != nil {
		t.Fatalf("MintTo: %v", err)
	}
	if f.dst, err = cl.MintTo(f.recipient.addr, f.mint, 0); err != nil {
		t.Fatalf("MintTo: %v", err)
	}
	return f
}

func (f tokenFixture) payment(t *testing.T, memo string, fee uint64) (*solana.Transaction, []byte) {
	t.Helper()
	return signTx(t, latest(t, f.c), []solana.Instruction{
		memoInstruction(f.sender.addr, memo),
		transferCheckedWithFeeIx(f.src, f.mint, f.dst, f.sender.addr, payAmount, 9, fee, f.ref),
	}, f.sender)
}

func findBalance(bs []chain.TokenBalance, acct chain.Address) (chain.TokenBalance, bool) {
	for _, b := range bs {
		if b.Account == acct {
			return b, true
		}
	}
	return chain.TokenBalance{}, false
}

func TestTokenPaymentWithFeeMemoAndReference(t *testing.T) {
	ctx := context.Background()
	f := newTokenFixture(t)
	c := f.c
	tx, raw := f.payment(t, "order 42", payFee)
	sig := send(t, c, raw)
	if sig != tx.Signatures[0].String() {
		t.Fatalf("signature %s, want %s", sig, tx.Signatures[0])
	}
	if st := oneStatus(t, c, sig); st == nil || st.Status != chain.Processed || st.Err != "" {
		t.Fatalf("status %+v", st)
	}
	f.cl.AdvanceSlots(1)
	if st := oneStatus(t, c, sig); st == nil || st.Status != chain.Confirmed {
		t.Fatalf("status after 1 slot %+v", st)
	}

	got, err := c.GetTransaction(ctx, sig, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetTransaction: %v", err)
	}
	if got.Err != "" || got.Fee != chaintest.LamportsPerSignature || got.NumSigners != 1 || got.AccountKeys[0] != f.sender.addr {
		t.Errorf("transaction %+v", got)
	}
	wantKeys := make([]chain.Address, len(tx.Message.AccountKeys))
	for i, k := range tx.Message.AccountKeys {
		wantKeys[i] = chain.Address(k)
	}
	if !sameAddrs(got.AccountKeys, wantKeys) {
		t.Errorf("account keys %v, want %v", got.AccountKeys, wantKeys)
	}
	if len(got.Instructions) != 2 {
		t.Fatalf("instructions %+v", got.Instructions)
	}
	memoIx, pay := got.Instructions[0], got.Instructions[1]
	if memoIx.ProgramID != chain.Address(solana.MemoProgramID) || !sameAddrs(memoIx.Accounts, addrs(f.sender.addr)) || string(memoIx.Data) != "order 42" {
		t.Errorf("memo instruction %+v", memoIx)
	}
	if pay.ProgramID != token2022.ProgramID() || !sameAddrs(pay.Accounts, addrs(f.src, f.mint, f.dst, f.sender.addr, f.ref)) ||
		!bytes.Equal(pay.Data, transferCheckedWithFeeData(payAmount, 9, payFee)) {
		t.Errorf("transfer instruction %+v", pay)
	}
	srcPre, ok1 := findBalance(got.PreTokenBalances, f.src)
	dstPre, ok2 := findBalance(got.PreTokenBalances, f.dst)
	srcPost, ok3 := findBalance(got.PostTokenBalances, f.src)
	dstPost, ok4 := findBalance(got.PostTokenBalances, f.dst)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("token balances pre %+v post %+v", got.PreTokenBalances, got.PostTokenBalances)
	}
	if srcPre.Amount != 5_000_000_000 || srcPost.Amount != 5_000_000_000-payAmount {
		t.Errorf("source %d -> %d", srcPre.Amount, srcPost.Amount)
	}
	if dstPost.Amount-dstPre.Amount != payAmount-payFee {
		t.Errorf("destination net %d, want %d", dstPost.Amount-dstPre.Amount, payAmount-payFee)
	}
	for _, b := range []chain.TokenBalance{srcPre, dstPre, srcPost, dstPost} {
		if b.Mint != f.mint || b.ProgramID != token2022.ProgramID() || b.Decimals != 9 || got.AccountKeys[b.AccountIndex] != b.Account {
			t.Errorf("token balance %+v", b)
		}
	}
	if dstPost.Owner != f.recipient.addr || srcPost.Owner != f.sender.addr {
		t.Errorf("owners %s %s", srcPost.Owner, dstPost.Owner)
	}
	if !strings.Contains(strings.Join(got.LogMessages, "\n"), "TransferCheckedWithFee") {
		t.Errorf("logs %v", got.LogMessages)
	}

	// The reference finds the payment, with its memo.
	sigs, err := c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{}, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetSignaturesForAddress: %v", err)
	}
	if len(sigs) != 1 || sigs[0].Signature != sig || sigs[0].Memo != "[8] order 42" || sigs[0].Err != "" ||
		sigs[0].Status != chain.Confirmed || sigs[0].Slot != got.Slot || sigs[0].BlockTime == nil || !sigs[0].BlockTime.Equal(*got.BlockTime) {
		t.Errorf("signatures for the reference: %+v", sigs)
	}
	// Not finalized yet.
	if sigs, err := c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{}, chain.Finalized); err != nil || len(sigs) != 0 {
		t.Errorf("finalized signatures %+v %v", sigs, err)
	}

	// Paging: a second payment, newest first, limit, before and until.
	_, raw2 := f.payment(t, "order 43", payFee)
	sig2 := send(t, c, raw2)
	f.cl.AdvanceSlots(1)
	sigs, err = c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{}, chain.Confirmed)
	if err != nil || len(sigs) != 2 || sigs[0].Signature != sig2 || sigs[1].Signature != sig || sigs[0].Memo != "[8] order 43" {
		t.Fatalf("two payments: %+v %v", sigs, err)
	}
	if sigs, err := c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{Limit: 1}, chain.Confirmed); err != nil || len(sigs) != 1 || sigs[0].Signature != sig2 {
		t.Errorf("limit 1: %+v %v", sigs, err)
	}
	if sigs, err := c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{Before: sig2}, chain.Confirmed); err != nil || len(sigs) != 1 || sigs[0].Signature != sig {
		t.Errorf("before: %+v %v", sigs, err)
	}
	if sigs, err := c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{Until: sig}, chain.Confirmed); err != nil || len(sigs) != 1 || sigs[0].Signature != sig2 {
		t.Errorf("until: %+v %v", sigs, err)
	}

	// Both statuses in one call, with an unknown signature between them.
	unknown := solana.SignatureFromBytes(bytes.Repeat([]byte{7}, 64)).String()
	st, err := c.GetSignatureStatuses(ctx, []string{sig, unknown, sig2}, false)
	if err != nil || len(st) != 3 || st[0] == nil || st[1] != nil || st[2] == nil || st[2].Status != chain.Confirmed {
		t.Errorf("three statuses: %+v %v", st, err)
	}
	f.cl.AdvanceSlots(32)
	if st := oneStatus(t, c, sig2); st == nil || st.Status != chain.Finalized || st.Confirmations != nil {
		t.Errorf("finalized status %+v", st)
	}
	if sigs, err := c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{}, chain.Finalized); err != nil || len(sigs) != 2 || sigs[0].Status != chain.Finalized {
		t.Errorf("finalized signatures %+v %v", sigs, err)
	}
}

func TestFailedAndRefusedTransactions(t *testing.T) {
	ctx := context.Background()
	f := newTokenFixture(t)
	c, cl := f.c, f.cl

	// Preflight catches a wrong fee: -32002 with the instruction error.
	_, bad := f.payment(t, "order 1", payFee-1)
	_, err := c.SendTransaction(ctx, bad, chain.SendOptions{PreflightCommitment: chain.Processed})
	re := requireRPCError(t, err, "sendTransaction", chain.CodePreflightFailure)
	if e := dataErr(t, re); e != `{"InstructionError":[1,{"Custom":32}]}` {
		t.Errorf("fee mismatch data.err %s (data %s)", e, re.Data)
	}
	if !strings.Contains(re.Message, "custom program error: 0x20") {
		t.Errorf("message %q", re.Message)
	}
	if strings.Contains(err.Error(), base64Of(bad)) {
		t.Error("the error shows the transaction")
	}
	// Without preflight it lands failed.
	badSig, err := c.SendTransaction(ctx, bad, chain.SendOptions{SkipPreflight: true})
	if err != nil {
		t.Fatalf("skipPreflight send: %v", err)
	}
	if st := oneStatus(t, c, badSig); st == nil || st.Err != `{"InstructionError":[1,{"Custom":32}]}` {
		t.Errorf("failed status %+v", st)
	}

	// FailTransactions: lands with an error, pays its fee only.
	cl.FailTransactions(1)
	_, raw := f.payment(t, "order 2", payFee)
	failed := send(t, c, raw)
	cl.AdvanceSlots(1)
	st := oneStatus(t, c, failed)
	if st == nil || st.Err != `{"InstructionError":[0,{"Custom":1}]}` || st.Status != chain.Confirmed {
		t.Fatalf("failed status %+v", st)
	}
	got, err := c.GetTransaction(ctx, failed, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetTransaction(failed): %v", err)
	}
	var anyErr any
	if got.Err == "" || json.Unmarshal([]byte(got.Err), &anyErr) != nil || got.Err != st.Err || got.Fee != chaintest.LamportsPerSignature {
		t.Errorf("failed transaction Err %q fee %d", got.Err, got.Fee)
	}
	if dstPost, _ := findBalance(got.PostTokenBalances, f.dst); dstPost.Amount != 0 {
		t.Errorf("a failed payment moved tokens: %+v", got.PostTokenBalances)
	}
	sigs, err := c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{}, chain.Confirmed)
	if err != nil || len(sigs) != 2 || sigs[0].Signature != failed || sigs[0].Err == "" {
		t.Errorf("failed in history: %+v %v", sigs, err)
	}

	// An expired blockhash: -32002 BlockhashNotFound.
	_, old := f.payment(t, "order 3", payFee)
	cl.ExpireBlockhashes()
	_, err = c.SendTransaction(ctx, old, chain.SendOptions{PreflightCommitment: chain.Processed})
	re = requireRPCError(t, err, "sendTransaction", chain.CodePreflightFailure)
	if e := dataErr(t, re); e != `"BlockhashNotFound"` {
		t.Errorf("expired data.err %s", e)
	}

	// A bad signature: -32003, with or without preflight.
	tx, raw := f.payment(t, "order 4", payFee)
	n := len(raw) - len(mustMessage(t, tx))
	tampered := bytes.Clone(raw)
	tampered[n-1] ^= 1
	for _, skip := range []bool{false, true} {
		_, err = c.SendTransaction(ctx, tampered, chain.SendOptions{SkipPreflight: skip})
		re = requireRPCError(t, err, "sendTransaction", chain.CodeSignatureFailure)
		if re.Data != "" {
			t.Errorf("-32003 data %q", re.Data)
		}
	}
	// Garbage: -32602.
	_, err = c.SendTransaction(ctx, []byte{0, 1, 2}, chain.SendOptions{})
	requireRPCError(t, err, "sendTransaction", chain.CodeInvalidParams)
	// Empty: refused before any request.
	before := cl.Calls("sendTransaction")
	if _, err := c.SendTransaction(ctx, nil, chain.SendOptions{}); err == nil || errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("empty transaction: %v", err)
	}
	if _, err := c.SendTransaction(ctx, raw, chain.SendOptions{PreflightCommitment: "recent"}); err == nil {
		t.Error("unknown preflight commitment accepted")
	}
	if cl.Calls("sendTransaction") != before {
		t.Error("a refused send reached the node")
	}

	// A dropped transaction: answered, never seen again.
	cl.DropTransactions(1)
	_, raw = f.payment(t, "order 5", payFee)
	dropped := send(t, c, raw)
	cl.AdvanceSlots(40)
	stats, err := c.GetSignatureStatuses(ctx, []string{dropped}, true)
	if err != nil || len(stats) != 1 || stats[0] != nil {
		t.Errorf("dropped status %+v %v", stats, err)
	}
	for _, cm := range []chain.Commitment{chain.Confirmed, chain.Finalized} {
		_, err := c.GetTransaction(ctx, dropped, cm)
		if !errors.Is(err, chain.ErrTransactionNotFound) {
			t.Errorf("dropped GetTransaction(%q): %v", cm, err)
		}
		var re *chain.RPCError
		if errors.As(err, &re) || errors.Is(err, chain.ErrUnavailable) {
			t.Errorf("not found reads as more: %v", err)
		}
	}
}

func mustMessage(t *testing.T, tx *solana.Transaction) []byte {
	t.Helper()
	b, err := tx.Message.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// base64Of is a stretch of the transaction's base64 that no error may
// hold.
func base64Of(b []byte) string { return base64.StdEncoding.EncodeToString(b)[:40] }

func TestLocalRefusals(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t)
	c := newClient(t, cl.URL(), 5*time.Second)
	sig := solana.SignatureFromBytes(bytes.Repeat([]byte{9}, 64)).String()
	_, addr := chaintest.NewKeypair()
	calls := func() int {
		n := 0
		for _, m := range txMethods {
			n += cl.Calls(m)
		}
		return n
	}
	before := calls()
	local := func(name string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: accepted", name)
			return
		}
		var re *chain.RPCError
		if errors.Is(err, chain.ErrUnavailable) || errors.As(err, &re) || errors.Is(err, chain.ErrTransactionNotFound) {
			t.Errorf("%s: %v is not a local error", name, err)
		}
		requireNoSecret(t, err)
	}
	_, err := c.GetTransaction(ctx, sig, chain.Processed)
	local("GetTransaction processed", err)
	_, err = c.GetTransaction(ctx, sig, "single")
	local("GetTransaction unknown commitment", err)
	_, err = c.GetTransaction(ctx, "not-a-signature", chain.Confirmed)
	local("GetTransaction bad signature", err)
	_, err = c.GetTransaction(ctx, addr.String(), chain.Confirmed)
	local("GetTransaction address as signature", err)
	_, err = c.GetSignaturesForAddress(ctx, addr, chain.SignaturesOptions{}, chain.Processed)
	local("GetSignaturesForAddress processed", err)
	for _, o := range []chain.SignaturesOptions{{Limit: -1}, {Limit: 1001}, {Before: "x"}, {Until: addr.String()}} {
		_, err = c.GetSignaturesForAddress(ctx, addr, o, chain.Confirmed)
		local("GetSignaturesForAddress options", err)
	}
	many := make([]string, solanarpc.MaxSignatureStatuses+1)
	for i := range many {
		many[i] = sig
	}
	_, err = c.GetSignatureStatuses(ctx, many, false)
	local("GetSignatureStatuses 257", err)
	_, err = c.GetSignatureStatuses(ctx, []string{sig, "bad"}, false)
	local("GetSignatureStatuses bad signature", err)
	if st, err := c.GetSignatureStatuses(ctx, nil, false); err != nil || st == nil || len(st) != 0 {
		t.Errorf("no signatures: %v %v", st, err)
	}
	if calls() != before {
		t.Errorf("refused calls reached the node: %d calls", calls()-before)
	}

	// 256 is allowed.
	st, err := c.GetSignatureStatuses(ctx, many[:solanarpc.MaxSignatureStatuses], false)
	if err != nil || len(st) != solanarpc.MaxSignatureStatuses {
		t.Fatalf("256 statuses: %d %v", len(st), err)
	}
	for i, s := range st {
		if s != nil {
			t.Fatalf("unknown signature %d has status %+v", i, s)
		}
	}
}

// txFixture is a cluster with a landed, confirmed payment whose reference
// and signature every payment-path method can be called with.
type txFixture struct {
	tokenFixture
	sig       string
	blockhash string
	seq       atomic.Uint64
}

func newTxFixture(t *testing.T, timeout time.Duration) *txFixture {
	t.Helper()
	f := &txFixture{tokenFixture: newTokenFixture(t)}
	f.c = newClient(t, f.cl.URL(), timeout)
	_, raw := f.payment(t, "order 1", payFee)
	f.sig = send(t, f.c, raw)
	f.cl.AdvanceSlots(1)
	f.blockhash = latest(t, f.c)
	return f
}

// call runs method once; sendTransaction sends a fresh transfer each time.
func (f *txFixture) call(ctx context.Context, t *testing.T, method string) error {
	c := f.c
	var err error
	switch method {
	case "getLatestBlockhash":
		_, err = c.GetLatestBlockhash(ctx, chain.Confirmed)
	case "getBlockHeight":
		_, err = c.GetBlockHeight(ctx, chain.Finalized)
	case "isBlockhashValid":
		_, err = c.IsBlockhashValid(ctx, f.blockhash, chain.Processed)
	case "sendTransaction":
		n := f.seq.Add(1)
		_, raw := signTx(t, f.blockhash, []solana.Instruction{systemTransferIx(f.sender.addr, f.recipient.addr, n)}, f.sender)
		_, err = c.SendTransaction(ctx, raw, chain.SendOptions{PreflightCommitment: chain.Processed})
	case "getSignatureStatuses":
		_, err = c.GetSignatureStatuses(ctx, []string{f.sig}, false)
	case "getTransaction":
		_, err = c.GetTransaction(ctx, f.sig, chain.Confirmed)
	case "getSignaturesForAddress":
		_, err = c.GetSignaturesForAddress(ctx, f.ref, chain.SignaturesOptions{Limit: 10}, chain.Confirmed)
	default:
		t.Fatalf("unknown method %s", method)
	}
	return err
}

func (f *txFixture) callAll(ctx context.Context, t *testing.T) map[string]error {
	errs := map[string]error{}
	for _, m := range txMethods {
		errs[m] = f.call(ctx, t, m)
	}
	return errs
}

func TestTxMethodsFaults(t *testing.T) {
	ctx := context.Background()

	t.Run("rpc error", func(t *testing.T) {
		f := newTxFixture(t, 5*time.Second)
		requireAllOK(t, f.callAll(ctx, t))
		for _, m := range txMethods {
			f.cl.Inject(chaintest.Fault{Method: m, Times: 1, Code: chain.CodeInternal, Message: "Internal error", Data: map[string]any{"detail": "injected", "n": uint64(18446744073709551615)}})
		}
		for m, err := range f.callAll(ctx, t) {
			re := requireRPCError(t, err, m, chain.CodeInternal)
			if re.Message != "Internal error" || re.Data != `{"detail":"injected","n":18446744073709551615}` || re.NumSlotsBehind != nil {
				t.Errorf("%s: %+v", m, re)
			}
			if errors.Is(err, chain.ErrTransactionNotFound) {
				t.Errorf("%s: -32603 read as not found", m)
			}
		}
		requireAllOK(t, f.callAll(ctx, t))
		// An error without data has Data "".
		f.cl.Inject(chaintest.Fault{Method: "getTransaction", Times: 1, Code: chain.CodeMinContextSlot, Message: "Minimum context slot has not been reached"})
		re := requireRPCError(t, f.call(ctx, t, "getTransaction"), "getTransaction", chain.CodeMinContextSlot)
		if re.Data != "" {
			t.Errorf("no data: Data %q", re.Data)
		}
	})

	t.Run("behind", func(t *testing.T) {
		f := newTxFixture(t, 5*time.Second)
		f.cl.Inject(chaintest.Fault{Behind: 7})
		for m, err := range f.callAll(ctx, t) {
			re := requireRPCError(t, err, m, chain.CodeNodeUnhealthy)
			if !re.Unhealthy() || re.NumSlotsBehind == nil || *re.NumSlotsBehind != 7 || re.Data != `{"numSlotsBehind":7}` {
				t.Errorf("%s: %+v", m, re)
			}
		}
		f.cl.ClearFaults()
		requireAllOK(t, f.callAll(ctx, t))
	})

	t.Run("delay beyond timeout", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		f := newTxFixture(t, timeout)
		for _, m := range txMethods {
			f.cl.Inject(chaintest.Fault{Method: m, Times: 1, Delay: 3 * time.Second})
		}
		for _, m := range txMethods {
			before := f.cl.Calls(m)
			start := time.Now()
			err := f.call(ctx, t, m)
			elapsed := time.Since(start)
			requireUnavailable(t, err)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: timeout does not unwrap to context.DeadlineExceeded: %v", m, err)
			}
			if elapsed < timeout || elapsed > timeout+time.Second {
				t.Errorf("%s returned after %s, want close to %s", m, elapsed, timeout)
			}
			if f.cl.Calls(m) != before+1 {
				t.Errorf("%s: cluster saw %d calls, want %d", m, f.cl.Calls(m), before+1)
			}
		}
		requireAllOK(t, f.callAll(ctx, t))
	})

	t.Run("http 503", func(t *testing.T) {
		f := newTxFixture(t, 5*time.Second)
		f.cl.Inject(chaintest.Fault{HTTPStatus: http.StatusServiceUnavailable})
		for m, err := range f.callAll(ctx, t) {
			requireUnavailable(t, err)
			var se *solanarpc.HTTPStatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%s: %v, want HTTPStatusError 503", m, err)
			}
		}
		f.cl.ClearFaults()
		requireAllOK(t, f.callAll(ctx, t))
	})

	t.Run("closed", func(t *testing.T) {
		f := newTxFixture(t, time.Second)
		_ = f.cl.Close()
		for _, err := range f.callAll(ctx, t) {
			requireUnavailable(t, err)
		}
	})
}

// TestRPCErrorDataOnReadMethods checks the existing reads fill Data too.
func TestRPCErrorDataOnReadMethods(t *testing.T) {
	ctx := context.Background()
	f := newFaultFixture(t, 5*time.Second)
	for _, m := range allMethods {
		f.cl.Inject(chaintest.Fault{Method: m, Times: 1, Code: chain.CodeInternal, Message: "Internal error", Data: map[string]any{"detail": "<injected>"}})
	}
	for m, err := range f.reads(ctx) {
		re := requireRPCError(t, err, m, chain.CodeInternal)
		if re.Data != `{"detail":"<injected>"}` {
			t.Errorf("%s: Data %q", m, re.Data)
		}
	}
	f.cl.Inject(chaintest.Fault{Behind: 3})
	for m, err := range f.reads(ctx) {
		if re := requireRPCError(t, err, m, chain.CodeNodeUnhealthy); re.Data != `{"numSlotsBehind":3}` {
			t.Errorf("%s: Data %q", m, re.Data)
		}
	}
}
