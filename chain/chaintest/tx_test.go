package chaintest_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

func TestSystemTransferFinality(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	from := e.wallet(1_000_000_000)
	to := e.wallet(0)
	tx := e.build([]solana.Instruction{systemTransfer(from.addr, to.addr, 250_000_000)}, from)
	sig := e.mustSend(tx, false)
	if sig != tx.Signatures[0] {
		t.Fatalf("signature %s, want %s", sig, tx.Signatures[0])
	}
	st := e.status(sig)
	if st == nil || st.ConfirmationStatus != rpc.ConfirmationStatusProcessed || st.Confirmations == nil || *st.Confirmations != 0 || st.Err != nil {
		t.Fatalf("status after send: %+v", st)
	}
	if got := e.lamports(from.addr); got != 1_000_000_000-250_000_000-5000 {
		t.Errorf("payer balance %d", got)
	}
	if got := e.lamports(to.addr); got != 250_000_000 {
		t.Errorf("recipient balance %d", got)
	}
	// Not yet confirmed: getTransaction at confirmed is null; processed refused.
	if _, err := e.rpc.GetTransaction(e.ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed}); !errors.Is(err, rpc.ErrNotFound) {
		t.Errorf("unconfirmed getTransaction: %v", err)
	}
	_, err := e.rpc.GetTransaction(e.ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentProcessed})
	if re := requireCode(t, err, -32602); re.Message != "Method does not support commitment below `confirmed`" {
		t.Errorf("message %q", re.Message)
	}
	e.c.AdvanceSlots(1)
	if st := e.status(sig); st.ConfirmationStatus != rpc.ConfirmationStatusConfirmed || *st.Confirmations != 1 {
		t.Errorf("after 1 slot: %+v", st)
	}
	got, err := e.rpc.GetTransaction(e.ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta.Fee != 5000 || got.Meta.Err != nil || !reflect.DeepEqual(got.Meta.PreBalances, []uint64{1_000_000_000, 0, 1}) && !reflect.DeepEqual(got.Meta.PreBalances[:2], []uint64{1_000_000_000, 0}) {
		t.Errorf("meta %+v", got.Meta)
	}
	if got.Meta.PostBalances[0] != 1_000_000_000-250_000_000-5000 || got.Meta.PostBalances[1] != 250_000_000 {
		t.Errorf("post balances %v", got.Meta.PostBalances)
	}
	if got.Version != 0 { // omitted without maxSupportedTransactionVersion
		t.Errorf("version %d", got.Version)
	}
	parsed, err := got.Transaction.GetTransaction()
	if err != nil || parsed.Signatures[0] != sig || parsed.Message.RecentBlockhash != tx.Message.RecentBlockhash {
		t.Errorf("json transaction %v %v", parsed, err)
	}
	e.c.AdvanceSlots(30)
	if st := e.status(sig); st.ConfirmationStatus != rpc.ConfirmationStatusConfirmed {
		t.Errorf("after 31 slots: %+v", st)
	}
	if _, err := e.rpc.GetTransaction(e.ctx, sig, nil); !errors.Is(err, rpc.ErrNotFound) {
		t.Errorf("getTransaction at finalized before finality: %v", err)
	}
	e.c.AdvanceSlots(1)
	if st := e.status(sig); st.ConfirmationStatus != rpc.ConfirmationStatusFinalized || st.Confirmations != nil {
		t.Errorf("after 32 slots: %+v", st)
	}
	if _, err := e.rpc.GetTransaction(e.ctx, sig, nil); err != nil {
		t.Errorf("finalized getTransaction: %v", err)
	}
	// A resend with preflight is AlreadyProcessed; skipPreflight returns the
	// signature without landing twice.
	_, err = e.send(tx, false)
	requireCode(t, err, -32002)
	if again := e.mustSend(tx, true); again != sig || e.lamports(to.addr) != 250_000_000 {
		t.Errorf("resend: %s, balance %d", again, e.lamports(to.addr))
	}
	sigs, err := e.rpc.GetSignaturesForAddress(e.ctx, to.pk())
	if err != nil || len(sigs) != 1 || sigs[0].Signature != sig || sigs[0].Memo != nil || sigs[0].ConfirmationStatus != rpc.ConfirmationStatusFinalized {
		t.Errorf("getSignaturesForAddress: %+v %v", sigs, err)
	}
	// base58 encoding.
	tx2 := e.build([]solana.Instruction{systemTransfer(from.addr, to.addr, 1)}, from)
	raw2, _ := tx2.MarshalBinary()
	if _, err := e.rpc.SendEncodedTransactionWithOpts(e.ctx, solana.Base58(raw2).String(), rpc.TransactionOpts{Encoding: solana.EncodingBase58}); err != nil {
		t.Errorf("base58 send: %v", err)
	}
	if e.lamports(to.addr) != 250_000_001 {
		t.Errorf("base58 transfer did not land")
	}
}

func TestTransferCheckedWithFee(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.SetEpoch(3)
	auth := e.wallet(0)
	sender := e.wallet(1_000_000_000)
	recipient := e.wallet(0)
	mint := e.feeMint(auth.addr)
	src, err := e.c.MintTo(sender.addr, mint, 5_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	dst := chaintest.AssociatedTokenAddress(recipient.addr, mint, chain.Address(t22))
	const amount, fee = 1_000_000_000, 20_000_000
	tx := e.build([]solana.Instruction{
		createATAIdempotent(sender.addr, recipient.addr, mint),
		memoIx(sender.addr, "order 42"),
		transferCheckedWithFee(src, mint, dst, sender.addr, amount, 9, fee),
	}, sender)
	sig := e.mustSend(tx, false)
	if got := e.tokenAccount(src).Amount; got != 4_000_000_000 {
		t.Errorf("source amount %d", got)
	}
	d := e.tokenAccount(dst)
	if d.Amount != amount-fee {
		t.Errorf("destination amount %d", d.Amount)
	}
	if w, ok := d.TransferFeeAmount(); !ok || w.Withheld != fee {
		t.Errorf("withheld %+v %v", w, ok)
	}
	e.c.AdvanceSlots(1)
	got, err := e.rpc.GetTransaction(e.ctx, sig, &rpc.GetTransactionOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: rpc.NewTransactionVersion(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != rpc.LegacyTransactionVersion {
		t.Errorf("version %d", got.Version)
	}
	back, err := got.Transaction.GetTransaction()
	if err != nil || back.Signatures[0] != sig || len(back.Message.Instructions) != 3 {
		t.Fatalf("base64 transaction: %v", err)
	}
	m := got.Meta
	if m.Err != nil || m.Fee != 5000 {
		t.Fatalf("meta err %v fee %d logs %v", m.Err, m.Fee, m.LogMessages)
	}
	keys := back.Message.AccountKeys
	index := func(a chain.Address) uint16 {
		for i, k := range keys {
			if k == solana.PublicKey(a) {
				return uint16(i)
			}
		}
		t.Fatalf("%s not in keys", a)
		return 0
	}
	if len(m.PreTokenBalances) != 1 || m.PreTokenBalances[0].AccountIndex != index(src) || m.PreTokenBalances[0].UiTokenAmount.Amount != "5000000000" {
		t.Errorf("preTokenBalances %+v", m.PreTokenBalances)
	}
	if len(m.PostTokenBalances) != 2 {
		t.Fatalf("postTokenBalances %+v", m.PostTokenBalances)
	}
	for _, b := range m.PostTokenBalances {
		if b.Mint != solana.PublicKey(mint) || *b.ProgramId != t22 || b.UiTokenAmount.Decimals != 9 {
			t.Errorf("token balance %+v", b)
		}
		switch b.AccountIndex {
		case index(src):
			if b.UiTokenAmount.Amount != "4000000000" || *b.Owner != sender.pk() {
				t.Errorf("source post %+v", b)
			}
		case index(dst):
			if b.UiTokenAmount.Amount != "980000000" || *b.Owner != recipient.pk() || b.UiTokenAmount.UiAmountString != "0.98" {
				t.Errorf("destination post %+v", b.UiTokenAmount)
			}
		default:
			t.Errorf("unexpected index %d", b.AccountIndex)
		}
	}
	logs := strings.Join(m.LogMessages, "\n")
	if !strings.Contains(logs, "Instruction: TransferCheckedWithFee") || !strings.Contains(logs, `Memo (len 8): "order 42"`) {
		t.Errorf("logs:\n%s", logs)
	}
	// The memo shows in getSignaturesForAddress.
	limit := 10
	sigs, err := e.rpc.GetSignaturesForAddressWithOpts(e.ctx, recipient.pk(), &rpc.GetSignaturesForAddressOpts{Limit: &limit, Commitment: rpc.CommitmentConfirmed})
	if err != nil || len(sigs) != 1 || sigs[0].Memo == nil || *sigs[0].Memo != "[8] order 42" {
		t.Fatalf("getSignaturesForAddress %+v %v", sigs, err)
	}
	// TransferChecked on a fee mint withholds the computed fee too (1 → 1).
	tx2 := e.build([]solana.Instruction{transferChecked(t22, src, mint, dst, sender.addr, 1, 9)}, sender)
	e.mustSend(tx2, false)
	if w, _ := e.tokenAccount(dst).TransferFeeAmount(); w.Withheld != fee+1 || e.tokenAccount(dst).Amount != amount-fee {
		t.Errorf("after TransferChecked: withheld %d amount %d", w.Withheld, e.tokenAccount(dst).Amount)
	}
	e.c.AdvanceSlots(1)
	sigs, _ = e.rpc.GetSignaturesForAddressWithOpts(e.ctx, recipient.pk(), &rpc.GetSignaturesForAddressOpts{Commitment: rpc.CommitmentConfirmed})
	if len(sigs) != 1 { // the recipient's wallet is only in the first transaction
		t.Errorf("recipient history %d", len(sigs))
	}
	sigs, _ = e.rpc.GetSignaturesForAddressWithOpts(e.ctx, solana.PublicKey(dst), &rpc.GetSignaturesForAddressOpts{Commitment: rpc.CommitmentConfirmed})
	if len(sigs) != 2 || sigs[1].Signature != sig || sigs[0].Memo != nil {
		t.Errorf("ATA history newest first: %+v", sigs)
	}
}

func TestFeeMismatchFails(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	auth := e.wallet(0)
	sender := e.wallet(1_000_000_000)
	recipient := e.wallet(0)
	mint := e.feeMint(auth.addr)
	src, _ := e.c.MintTo(sender.addr, mint, 5_000_000_000)
	dst, _ := e.c.MintTo(recipient.addr, mint, 0)
	bad := []solana.Instruction{transferCheckedWithFee(src, mint, dst, sender.addr, 1_000_000_000, 9, 19_999_999)}
	// With preflight the node refuses it.
	_, err := e.send(e.build(bad, sender), false)
	re := requireCode(t, err, -32002)
	if re.Message != "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x20" {
		t.Errorf("message %q", re.Message)
	}
	if !strings.Contains(string(mustJSON(t, re.Data)), `"err":{"InstructionError":[0,{"Custom":32}]}`) {
		t.Errorf("data %s", mustJSON(t, re.Data))
	}
	// Without it, it lands failed and pays its fee only.
	e.c.AdvanceSlots(1)
	sig := e.mustSend(e.build(bad, sender), true)
	st := e.status(sig)
	if st == nil || !strings.Contains(string(mustJSON(t, st.Err)), `{"InstructionError":[0,{"Custom":32}]}`) {
		t.Fatalf("status %+v", st)
	}
	if e.tokenAccount(src).Amount != 5_000_000_000 || e.tokenAccount(dst).Amount != 0 {
		t.Error("a failed transfer moved tokens")
	}
	if got := e.lamports(sender.addr); got != 1_000_000_000-5000 {
		t.Errorf("sender lamports %d", got)
	}
	e.c.AdvanceSlots(1)
	got, err := e.rpc.GetTransaction(e.ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta.Fee != 5000 || got.Meta.Err == nil || !reflect.DeepEqual(got.Meta.PreTokenBalances, got.Meta.PostTokenBalances) {
		t.Errorf("failed meta %+v", got.Meta)
	}
	if !strings.Contains(strings.Join(got.Meta.LogMessages, "\n"), "failed: custom program error: 0x20") {
		t.Errorf("logs %v", got.Meta.LogMessages)
	}
	sigs, _ := e.rpc.GetSignaturesForAddressWithOpts(e.ctx, sender.pk(), &rpc.GetSignaturesForAddressOpts{Commitment: rpc.CommitmentConfirmed})
	if len(sigs) != 1 || sigs[0].Err == nil {
		t.Errorf("history %+v", sigs)
	}
	// simulateTransaction reports the same error.
	sim, err := e.rpc.SimulateTransactionWithOpts(e.ctx, e.build(bad, sender), &rpc.SimulateTransactionOpts{SigVerify: true, Commitment: rpc.CommitmentProcessed})
	if err != nil || sim.Value.Err == nil || sim.Value.UnitsConsumed == nil || len(sim.Value.Logs) == 0 {
		t.Errorf("simulate %+v %v", sim, err)
	}
}

func TestBadSignatureAndBlockhash(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	from := e.wallet(1_000_000_000)
	to := e.wallet(0)
	tx := e.build([]solana.Instruction{systemTransfer(from.addr, to.addr, 1)}, from)
	tx.Signatures[0][5] ^= 1
	_, err := e.send(tx, true)
	if re := requireCode(t, err, -32003); re.Message != "Transaction signature verification failure" {
		t.Errorf("message %q", re.Message)
	}
	// Expired by ExpireBlockhashes.
	old := e.build([]solana.Instruction{systemTransfer(from.addr, to.addr, 2)}, from)
	e.c.ExpireBlockhashes()
	_, err = e.send(old, false)
	re := requireCode(t, err, -32002)
	if re.Message != "Transaction simulation failed: Blockhash not found" {
		t.Errorf("message %q", re.Message)
	}
	var data struct{ Err string }
	if json.Unmarshal(mustJSON(t, re.Data), &data) != nil || data.Err != "BlockhashNotFound" {
		t.Errorf("data %v", re.Data)
	}
	valid, err := e.rpc.IsBlockhashValid(e.ctx, old.Message.RecentBlockhash, rpc.CommitmentProcessed)
	if err != nil || valid.Value {
		t.Errorf("isBlockhashValid of an expired hash: %v %v", valid, err)
	}
	// A skipPreflight send of it returns the signature but never lands.
	sig := e.mustSend(old, true)
	if e.status(sig) != nil {
		t.Error("expired transaction landed")
	}
	// Expired by age: valid for 150 slots.
	fresh := e.build([]solana.Instruction{systemTransfer(from.addr, to.addr, 3)}, from)
	bh, _ := e.rpc.GetLatestBlockhash(e.ctx, rpc.CommitmentProcessed)
	if bh.Value.LastValidBlockHeight != e.c.Slot()+150 || bh.Value.Blockhash != fresh.Message.RecentBlockhash {
		t.Errorf("latest blockhash %+v", bh.Value)
	}
	e.c.AdvanceSlots(151)
	_, err = e.send(fresh, false)
	requireCode(t, err, -32002)
	e.c.AdvanceSlots(1000)
	again := e.build([]solana.Instruction{systemTransfer(from.addr, to.addr, 4)}, from)
	e.mustSend(again, false)
	if e.lamports(to.addr) != 4 {
		t.Errorf("recipient %d", e.lamports(to.addr))
	}
}

func TestDropFailConfirmDelay(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	from := e.wallet(1_000_000_000)
	to := e.wallet(0)
	transfer := func(n uint64) *solana.Transaction {
		return e.build([]solana.Instruction{systemTransfer(from.addr, to.addr, n)}, from)
	}
	e.c.DropTransactions(1)
	dropped := e.mustSend(transfer(1), false)
	e.c.AdvanceSlots(40)
	if e.status(dropped) != nil || e.lamports(to.addr) != 0 {
		t.Error("dropped transaction landed")
	}
	if _, err := e.rpc.GetTransaction(e.ctx, dropped, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed}); !errors.Is(err, rpc.ErrNotFound) {
		t.Errorf("dropped getTransaction: %v", err)
	}
	e.c.FailTransactions(1)
	failed := e.mustSend(transfer(2), false)
	st := e.status(failed)
	if st == nil || string(mustJSON(t, st.Err)) != `{"InstructionError":[0,{"Custom":1}]}` {
		t.Fatalf("failed status %+v", st)
	}
	if e.lamports(to.addr) != 0 || e.lamports(from.addr) != 1_000_000_000-5000 {
		t.Errorf("failed transaction moved lamports: %d %d", e.lamports(to.addr), e.lamports(from.addr))
	}
	ok := e.mustSend(transfer(3), false)
	if st := e.status(ok); st == nil || st.Err != nil || e.lamports(to.addr) != 3 {
		t.Errorf("after the faults: %+v", st)
	}
	e.c.ConfirmDelay(5)
	slow := e.mustSend(transfer(4), false)
	e.c.AdvanceSlots(5)
	if st := e.status(slow); st.ConfirmationStatus != rpc.ConfirmationStatusProcessed {
		t.Errorf("slow after 5 slots: %+v", st)
	}
	e.c.AdvanceSlots(1)
	if st := e.status(slow); st.ConfirmationStatus != rpc.ConfirmationStatusConfirmed {
		t.Errorf("slow after 6 slots: %+v", st)
	}
	e.c.ConfirmDelay(0)
	quick := e.mustSend(transfer(5), false)
	e.c.AdvanceSlots(1)
	if st := e.status(quick); st.ConfirmationStatus != rpc.ConfirmationStatusConfirmed {
		t.Errorf("quick after 1 slot: %+v", st)
	}
}

func TestTransactionRefusals(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	poor := e.wallet(0)
	to := e.wallet(0)
	// A fee payer that does not exist.
	_, err := e.send(e.build([]solana.Instruction{systemTransfer(poor.addr, to.addr, 1)}, poor), false)
	re := requireCode(t, err, -32002)
	if !strings.Contains(string(mustJSON(t, re.Data)), `"err":"AccountNotFound"`) {
		t.Errorf("data %s", mustJSON(t, re.Data))
	}
	// Insufficient lamports for the transfer: Custom(1).
	e.c.Airdrop(poor.addr, 10_000)
	_, err = e.send(e.build([]solana.Instruction{systemTransfer(poor.addr, to.addr, 1_000_000)}, poor), false)
	re = requireCode(t, err, -32002)
	if !strings.Contains(re.Message, "custom program error: 0x1") {
		t.Errorf("message %q", re.Message)
	}
	// An invalid memo.
	_, err = e.send(e.build([]solana.Instruction{memoIx(poor.addr, "\xff\xfe")}, poor), false)
	re = requireCode(t, err, -32002)
	if !strings.Contains(string(mustJSON(t, re.Data)), `"InvalidInstructionData"`) {
		t.Errorf("data %s", mustJSON(t, re.Data))
	}
	// Garbage.
	var sig solana.Signature
	err = e.rpc.RPCCallForInto(e.ctx, &sig, "sendTransaction", []any{"AAAA", map[string]any{"encoding": "base64"}})
	requireCode(t, err, -32602)
}

func TestV0AndClassicToken(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	from := e.wallet(1_000_000_000)
	to := e.wallet(0)
	_, mint := chaintest.NewKeypair()
	e.c.SetAccount(mint, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82),
		Data: mustMint(t, 6)})
	src, err := e.c.MintTo(from.addr, mint, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := e.c.MintTo(to.addr, mint, 0)
	if want, _, _ := solana.FindAssociatedTokenAddress(to.pk(), solana.PublicKey(mint)); solana.PublicKey(dst) != want {
		t.Errorf("classic ATA %s, want %s", dst, want)
	}
	tx := e.build([]solana.Instruction{transferChecked(solana.TokenProgramID, src, mint, dst, from.addr, 250_000, 6)}, from)
	tx.Message.SetVersion(solana.MessageVersionV0)
	tx.Signatures = nil
	if _, err := tx.Sign(func(solana.PublicKey) *solana.PrivateKey { p := solana.PrivateKey(from.priv); return &p }); err != nil {
		t.Fatal(err)
	}
	sig := e.mustSend(tx, false)
	if e.tokenAccount(dst).Amount != 250_000 || e.tokenAccount(src).Amount != 750_000 {
		t.Errorf("classic transfer: %d %d", e.tokenAccount(src).Amount, e.tokenAccount(dst).Amount)
	}
	e.c.AdvanceSlots(1)
	_, err = e.rpc.GetTransaction(e.ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed})
	requireCode(t, err, -32015)
	got, err := e.rpc.GetTransaction(e.ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: rpc.NewTransactionVersion(0)})
	if err != nil || got.Version != 0 {
		t.Fatalf("v0 getTransaction: %+v %v", got, err)
	}
	if b := got.Meta.PostTokenBalances; len(b) != 2 || *b[0].ProgramId != solana.TokenProgramID {
		t.Errorf("post token balances %+v", b)
	}
	// A decimals mismatch is Custom(18).
	_, err = e.send(e.build([]solana.Instruction{transferChecked(solana.TokenProgramID, src, mint, dst, from.addr, 1, 9)}, from), false)
	if re := requireCode(t, err, -32002); !strings.Contains(re.Message, "0x12") {
		t.Errorf("message %q", re.Message)
	}
}

func mustMint(t *testing.T, decimals uint8) []byte {
	t.Helper()
	return token2022.EncodeMint(token2022.Mint{Decimals: decimals, IsInitialized: true})
}
