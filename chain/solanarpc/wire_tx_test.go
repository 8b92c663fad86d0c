package solanarpc_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

// wireTx is a signed transaction for scripted answers.
type wireTx struct {
	tx     *solana.Transaction
	raw    []byte
	b64    string
	sig    string
	payer  signer
	to     chain.Address
	hash   string
	static []chain.Address
}

func newWireTx(t *testing.T) wireTx {
	t.Helper()
	priv, payer := chaintest.NewKeypair()
	_, to := chaintest.NewKeypair()
	s := signer{priv, payer}
	hash := solana.HashFromBytes(make([]byte, 32))
	hash[0] = 1
	tx, raw := signTx(t, hash.String(), []solana.Instruction{systemTransferIx(payer, to, 42)}, s)
	w := wireTx{tx: tx, raw: raw, b64: base64.StdEncoding.EncodeToString(raw), sig: tx.Signatures[0].String(), payer: s, to: to, hash: hash.String()}
	for _, k := range tx.Message.AccountKeys {
		w.static = append(w.static, chain.Address(k))
	}
	return w
}

// getTransactionAnswer is a base64 getTransaction result for raw with
// the given meta fields appended.
// The lamport balances list one entry per key (static keys and lookups),
// as a node's do.
func getTransactionAnswer(b64, version, metaExtra string) string {
	balances := "[1,0,1]"
	if raw, err := base64.StdEncoding.DecodeString(b64); err == nil {
		if tx, err := solana.TransactionFromBytes(raw); err == nil {
			n := len(tx.Message.AccountKeys) + tx.Message.NumLookups()
			balances = "[" + strings.TrimSuffix(strings.Repeat("7,", n), ",") + "]"
		}
	}
	meta := `"err":null,"status":{"Ok":null},"fee":5000,"preBalances":` + balances + `,"postBalances":` + balances + `,"innerInstructions":[],"logMessages":["Program 11111111111111111111111111111111 invoke [1]"],"rewards":[],"loadedAddresses":{"writable":[],"readonly":[]},"computeUnitsConsumed":150`
	if metaExtra != "" {
		meta += "," + metaExtra
	} else {
		meta += `,"preTokenBalances":[],"postTokenBalances":[]`
	}
	out := `{"slot":77,"blockTime":1767225600,"transaction":["` + b64 + `","base64"],"meta":{` + meta + `}`
	if version != "" {
		out += `,"version":` + version
	}
	return out + "}"
}

func TestTxRequestsOnTheWire(t *testing.T) {
	ctx := context.Background()
	f := newFakeNode(t)
	c := newClient(t, f.srv.URL, 5*time.Second)
	w := newWireTx(t)
	addr := mustAddr(t, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")

	f.result("getLatestBlockhash", `{"context":{"apiVersion":"2.2.0","slot":341197053},"value":{"blockhash":"`+w.hash+`","lastValidBlockHeight":18446744073709551615}}`)
	bh, err := c.GetLatestBlockhash(ctx, "")
	if err != nil || bh != (chain.Blockhash{Hash: w.hash, LastValidBlockHeight: 18446744073709551615, Slot: 341197053}) {
		t.Fatalf("GetLatestBlockhash = %+v, %v", bh, err)
	}
	requireParams(t, f.last(t), "getLatestBlockhash", `[{"commitment":"finalized"}]`)

	f.result("getBlockHeight", `18446744073709551615`)
	h, err := c.GetBlockHeight(ctx, chain.Confirmed)
	if err != nil || h != 18446744073709551615 {
		t.Fatalf("GetBlockHeight = %d, %v", h, err)
	}
	requireParams(t, f.last(t), "getBlockHeight", `[{"commitment":"confirmed"}]`)

	f.result("isBlockhashValid", `{"context":{"slot":5},"value":false}`)
	ok, err := c.IsBlockhashValid(ctx, w.hash, chain.Processed)
	if err != nil || ok {
		t.Fatalf("IsBlockhashValid = %v, %v", ok, err)
	}
	requireParams(t, f.last(t), "isBlockhashValid", `["`+w.hash+`",{"commitment":"processed"}]`)

	f.result("sendTransaction", `"`+w.sig+`"`)
	sig, err := c.SendTransaction(ctx, w.raw, chain.SendOptions{})
	if err != nil || sig != w.sig {
		t.Fatalf("SendTransaction = %q, %v", sig, err)
	}
	requireParams(t, f.last(t), "sendTransaction", `["`+w.b64+`",{"encoding":"base64","skipPreflight":false,"preflightCommitment":"finalized"}]`)
	if _, err := c.SendTransaction(ctx, w.raw, chain.SendOptions{SkipPreflight: true, PreflightCommitment: chain.Confirmed}); err != nil {
		t.Fatal(err)
	}
	requireParams(t, f.last(t), "sendTransaction", `["`+w.b64+`",{"encoding":"base64","skipPreflight":true,"preflightCommitment":"confirmed"}]`)

	other := solana.SignatureFromBytes(make([]byte, 64))
	other[0] = 3
	f.result("getSignatureStatuses", `{"context":{"slot":82},"value":[{"slot":72,"confirmations":10,"err":null,"status":{"Ok":null},"confirmationStatus":"confirmed"},null,`+
		`{"slot":48,"confirmations":null,"err":{ "InstructionError" : [ 0, { "Custom" : 1 } ] },"status":{"Err":{"InstructionError":[0,{"Custom":1}]}},"confirmationStatus":"finalized"}]}`)
	st, err := c.GetSignatureStatuses(ctx, []string{w.sig, other.String(), w.sig}, true)
	if err != nil || len(st) != 3 || st[1] != nil {
		t.Fatalf("GetSignatureStatuses = %+v, %v", st, err)
	}
	if s := st[0]; s.Slot != 72 || s.Confirmations == nil || *s.Confirmations != 10 || s.Err != "" || s.Status != chain.Confirmed {
		t.Errorf("status 0 %+v", s)
	}
	if s := st[2]; s.Slot != 48 || s.Confirmations != nil || s.Err != `{"InstructionError":[0,{"Custom":1}]}` || s.Status != chain.Finalized {
		t.Errorf("status 2 %+v", s)
	}
	requireParams(t, f.last(t), "getSignatureStatuses", `[["`+w.sig+`","`+other.String()+`","`+w.sig+`"],{"searchTransactionHistory":true}]`)
	if _, err := c.GetSignatureStatuses(ctx, []string{w.sig}, false); err == nil {
		t.Error("three statuses for one signature accepted")
	}
	requireParams(t, f.last(t), "getSignatureStatuses", `[["`+w.sig+`"],{"searchTransactionHistory":false}]`)

	f.result("getTransaction", getTransactionAnswer(w.b64, `"legacy"`, ""))
	got, err := c.GetTransaction(ctx, w.sig, "")
	if err != nil {
		t.Fatalf("GetTransaction: %v", err)
	}
	requireParams(t, f.last(t), "getTransaction", `["`+w.sig+`",{"encoding":"base64","commitment":"finalized","maxSupportedTransactionVersion":0}]`)
	if got.Signature != w.sig || got.Slot != 77 || got.BlockTime == nil || !got.BlockTime.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) ||
		got.Err != "" || got.Fee != 5000 || got.NumSigners != 1 || got.RecentBlockhash != w.hash || !sameAddrs(got.AccountKeys, w.static) ||
		len(got.LogMessages) != 1 || len(got.Instructions) != 1 || got.PreTokenBalances != nil {
		t.Errorf("GetTransaction = %+v", got)
	}
	if _, err := c.GetTransaction(ctx, w.sig, chain.Confirmed); err != nil {
		t.Fatal(err)
	}
	requireParams(t, f.last(t), "getTransaction", `["`+w.sig+`",{"encoding":"base64","commitment":"confirmed","maxSupportedTransactionVersion":0}]`)
	// No version, no block time, an error with odd spacing.
	f.result("getTransaction", strings.Replace(strings.Replace(getTransactionAnswer(w.b64, "", ""), `"blockTime":1767225600`, `"blockTime":null`, 1),
		`"err":null`, `"err":{ "InstructionError" : [0, "InvalidAccountData"] }`, 1))
	got, err = c.GetTransaction(ctx, w.sig, chain.Confirmed)
	if err != nil || got.BlockTime != nil || got.Err != `{"InstructionError":[0,"InvalidAccountData"]}` {
		t.Errorf("GetTransaction without version/time = %+v, %v", got, err)
	}
	f.result("getTransaction", `null`)
	if _, err := c.GetTransaction(ctx, w.sig, chain.Confirmed); !errors.Is(err, chain.ErrTransactionNotFound) || errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("null getTransaction: %v", err)
	}

	f.result("getSignaturesForAddress", `[{"signature":"`+w.sig+`","slot":114,"err":null,"memo":"[8] order 42","blockTime":1767225600,"confirmationStatus":"finalized"},`+
		`{"signature":"`+other.String()+`","slot":113,"err":"AccountNotFound","memo":null,"blockTime":null,"confirmationStatus":"confirmed"}]`)
	infos, err := c.GetSignaturesForAddress(ctx, addr, chain.SignaturesOptions{}, chain.Confirmed)
	if err != nil || len(infos) != 2 {
		t.Fatalf("GetSignaturesForAddress = %+v, %v", infos, err)
	}
	requireParams(t, f.last(t), "getSignaturesForAddress", `["`+addr.String()+`",{"commitment":"confirmed","limit":1000}]`)
	if i := infos[0]; i.Signature != w.sig || i.Slot != 114 || i.Err != "" || i.Memo != "[8] order 42" || i.BlockTime == nil || i.Status != chain.Finalized {
		t.Errorf("info 0 %+v", i)
	}
	if i := infos[1]; i.Signature != other.String() || i.Err != `"AccountNotFound"` || i.Memo != "" || i.BlockTime != nil || i.Status != chain.Confirmed {
		t.Errorf("info 1 %+v", i)
	}
	if _, err := c.GetSignaturesForAddress(ctx, addr, chain.SignaturesOptions{Limit: 5, Before: w.sig, Until: other.String()}, ""); err != nil {
		t.Fatal(err)
	}
	requireParams(t, f.last(t), "getSignaturesForAddress", `["`+addr.String()+`",{"commitment":"finalized","limit":5,"before":"`+w.sig+`","until":"`+other.String()+`"}]`)
	if _, err := c.GetSignaturesForAddress(ctx, addr, chain.SignaturesOptions{Limit: 1}, ""); err == nil {
		t.Error("two entries for limit 1 accepted")
	}
}

// TestGetTransactionV0WithLookups resolves a v0 transaction's loaded
// addresses from meta.loadedAddresses against scripted answers (the
// loopback cluster's own answers: TestV0SwapThroughLookupTable).
func TestGetTransactionV0WithLookups(t *testing.T) {
	ctx := context.Background()
	f := newFakeNode(t)
	c := newClient(t, f.srv.URL, 5*time.Second)
	priv, payer := chaintest.NewKeypair()
	owner := signer{priv, payer}
	_, src := chaintest.NewKeypair()
	_, mint := chaintest.NewKeypair()
	_, dst := chaintest.NewKeypair()
	_, ref := chaintest.NewKeypair()
	_, table := chaintest.NewKeypair()
	hash := solana.HashFromBytes(make([]byte, 32))
	hash[5] = 9
	tx, err := solana.NewTransaction(
		[]solana.Instruction{transferCheckedWithFeeIx(src, mint, dst, payer, 100, 6, 2, ref)},
		hash,
		solana.TransactionPayer(owner.pk()),
		solana.TransactionAddressTables(map[solana.PublicKey]solana.PublicKeySlice{
			solana.PublicKey(table): {solana.PublicKey(ref), solana.PublicKey(dst)},
		}),
	)
	if err != nil {
		t.Fatalf("NewTransaction: %v", err)
	}
	if _, err := tx.Sign(func(solana.PublicKey) *solana.PrivateKey { p := solana.PrivateKey(owner.priv); return &p }); err != nil {
		t.Fatal(err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !tx.Message.IsVersioned() || len(tx.Message.AddressTableLookups) != 1 {
		t.Fatalf("not a v0 transaction with a lookup: %+v", tx.Message)
	}
	back, err := solana.TransactionFromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	var static []chain.Address
	for _, k := range back.Message.AccountKeys {
		static = append(static, chain.Address(k))
	}
	for _, k := range static {
		if k == dst || k == ref {
			t.Fatalf("%s is a static key, want it loaded", k)
		}
	}
	sig := tx.Signatures[0].String()
	b64 := base64.StdEncoding.EncodeToString(raw)
	dstIndex := len(static) // writable loaded addresses come first
	balances := func(amount string) string {
		return fmt.Sprintf(`[{"accountIndex":%d,"mint":"%s","uiTokenAmount":{"uiAmount":0.000098,"decimals":6,"amount":"%s","uiAmountString":"0.000098"},"owner":"%s","programId":"%s"}]`,
			dstIndex, mint, amount, payer, token2022.ProgramID())
	}
	meta := func(writable, readonly string) string {
		return strings.Replace(getTransactionAnswer(b64, "0", `"preTokenBalances":`+balances("0")+`,"postTokenBalances":`+balances("98")),
			`"loadedAddresses":{"writable":[],"readonly":[]}`, `"loadedAddresses":{"writable":[`+writable+`],"readonly":[`+readonly+`]}`, 1)
	}
	q := func(a chain.Address) string { return `"` + a.String() + `"` }

	f.result("getTransaction", meta(q(dst), q(ref)))
	got, err := c.GetTransaction(ctx, sig, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetTransaction: %v", err)
	}
	if !sameAddrs(got.AccountKeys, static) || got.NumSigners != 1 {
		t.Errorf("keys %v signers %d, want static %v", got.AccountKeys, got.NumSigners, static)
	}
	if len(got.Instructions) != 1 || got.Instructions[0].ProgramID != token2022.ProgramID() ||
		!sameAddrs(got.Instructions[0].Accounts, addrs(src, mint, dst, payer, ref)) {
		t.Errorf("instructions %+v", got.Instructions)
	}
	if !sameAddrs(got.LoadedWritable, addrs(dst)) || !sameAddrs(got.LoadedReadonly, addrs(ref)) || !sameAddrs(got.Keys(), append(append(static, dst), ref)) {
		t.Errorf("loaded %v %v keys %v", got.LoadedWritable, got.LoadedReadonly, got.Keys())
	}
	if len(got.PreBalances) != len(static)+2 || len(got.PostBalances) != len(static)+2 || got.PreBalances[len(static)+1] != 7 {
		t.Errorf("balances %v %v", got.PreBalances, got.PostBalances)
	}
	if len(got.PostTokenBalances) != 1 || got.PostTokenBalances[0].Account != dst || got.PostTokenBalances[0].AccountIndex != dstIndex ||
		got.PostTokenBalances[0].Amount != 98 || got.PreTokenBalances[0].Amount != 0 || got.PostTokenBalances[0].Owner != payer {
		t.Errorf("token balances %+v %+v", got.PreTokenBalances, got.PostTokenBalances)
	}

	// Loaded addresses that do not match the lookups, a legacy version.
	for name, answer := range map[string]string{
		"no loaded addresses":  meta("", ""),
		"swapped sizes":        meta(q(dst)+","+q(ref), ""),
		"loadedAddresses null": strings.Replace(meta("", ""), `"loadedAddresses":{"writable":[],"readonly":[]}`, `"loadedAddresses":null`, 1),
		"version legacy":       strings.Replace(meta(q(dst), q(ref)), `"version":0`, `"version":"legacy"`, 1),
		"a balance too many":   strings.Replace(meta(q(dst), q(ref)), `"preBalances":[`, `"preBalances":[9,`, 1),
		"no postBalances":      strings.Replace(meta(q(dst), q(ref)), `"postBalances":`, `"postBalancesX":`, 1),
		"version 1":            strings.Replace(meta(q(dst), q(ref)), `"version":0`, `"version":1`, 1),
	} {
		f.result("getTransaction", answer)
		_, err := c.GetTransaction(ctx, sig, chain.Confirmed)
		if !errors.Is(err, chain.ErrUnavailable) {
			t.Errorf("%s: %v, want unavailable", name, err)
		}
	}
}

// TestMalformedTxAnswersAreUnavailable covers answers the payment-path
// methods cannot use.
func TestMalformedTxAnswersAreUnavailable(t *testing.T) {
	w := newWireTx(t)
	other := newWireTx(t)
	ok := func(result string) func(json.RawMessage) (int, string) {
		return func(id json.RawMessage) (int, string) {
			return http.StatusOK, `{"jsonrpc":"2.0","result":` + result + `,"id":` + string(id) + `}`
		}
	}
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	legacy := func(b64 string) string { return getTransactionAnswer(b64, `"legacy"`, "") }
	replace := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("%q not in %s", old, s)
		}
		return strings.Replace(s, old, new, 1)
	}
	// A message whose instruction names an account outside the keys.
	outside := *w.tx
	outside.Message.Instructions = []solana.CompiledInstruction{{ProgramIDIndex: 2, Accounts: []uint16{0, 9}, Data: outside.Message.Instructions[0].Data}}
	outsideRaw, err := outside.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Two signatures where the header requires one.
	twoSigs := append([]byte{2}, w.raw[1:65]...)
	twoSigs = append(twoSigs, w.raw[1:]...)
	balance := func(index, amount, decimals string) string {
		return `"preTokenBalances":[],"postTokenBalances":[{"accountIndex":` + index + `,"mint":"` + w.to.String() + `","uiTokenAmount":{"amount":` + amount + `,"decimals":` + decimals + `,"uiAmount":null,"uiAmountString":"0"}}]`
	}
	status := func(entry string) string { return `{"context":{"slot":1},"value":[` + entry + `]}` }
	info := func(entry string) string { return `[` + entry + `]` }
	goodInfo := `{"signature":"` + w.sig + `","slot":1,"err":null,"memo":null,"blockTime":null,"confirmationStatus":"confirmed"}`

	for _, tc := range []struct {
		name, method, result string
	}{
		{"blockhash null", "getLatestBlockhash", `null`},
		{"blockhash value null", "getLatestBlockhash", `{"context":{"slot":1},"value":null}`},
		{"blockhash zero", "getLatestBlockhash", `{"context":{"slot":1},"value":{"blockhash":"11111111111111111111111111111111","lastValidBlockHeight":5}}`},
		{"blockhash not base58", "getLatestBlockhash", `{"context":{"slot":1},"value":{"blockhash":"0OIl","lastValidBlockHeight":5}}`},
		{"blockhash short", "getLatestBlockhash", `{"context":{"slot":1},"value":{"blockhash":"2","lastValidBlockHeight":5}}`},
		{"last valid negative", "getLatestBlockhash", `{"context":{"slot":1},"value":{"blockhash":"` + w.hash + `","lastValidBlockHeight":-1}}`},
		{"height null", "getBlockHeight", `null`},
		{"height negative", "getBlockHeight", `-1`},
		{"height over u64", "getBlockHeight", `18446744073709551616`},
		{"height string", "getBlockHeight", `"5"`},
		{"valid null", "isBlockhashValid", `null`},
		{"valid value null", "isBlockhashValid", `{"context":{"slot":1},"value":null}`},
		{"valid string", "isBlockhashValid", `{"context":{"slot":1},"value":"true"}`},
		{"send null", "sendTransaction", `null`},
		{"send not base58", "sendTransaction", `"0OIl"`},
		{"send short", "sendTransaction", `"` + w.hash + `"`},
		{"send other signature", "sendTransaction", `"` + other.sig + `"`},
		{"statuses null", "getSignatureStatuses", `null`},
		{"statuses value null", "getSignatureStatuses", `{"context":{"slot":1},"value":null}`},
		{"statuses too few", "getSignatureStatuses", `{"context":{"slot":1},"value":[]}`},
		{"statuses too many", "getSignatureStatuses", `{"context":{"slot":1},"value":[null,null]}`},
		{"status unknown level", "getSignatureStatuses", status(`{"slot":1,"confirmations":1,"err":null,"confirmationStatus":"recent"}`)},
		{"status no level", "getSignatureStatuses", status(`{"slot":1,"confirmations":1,"err":null,"confirmationStatus":null}`)},
		{"status finalized with confirmations", "getSignatureStatuses", status(`{"slot":1,"confirmations":3,"err":null,"confirmationStatus":"finalized"}`)},
		{"status confirmed without confirmations", "getSignatureStatuses", status(`{"slot":1,"confirmations":null,"err":null,"confirmationStatus":"confirmed"}`)},
		{"status no slot", "getSignatureStatuses", status(`{"confirmations":1,"err":null,"confirmationStatus":"processed"}`)},
		{"status negative slot", "getSignatureStatuses", status(`{"slot":-1,"confirmations":1,"err":null,"confirmationStatus":"processed"}`)},
		{"status negative confirmations", "getSignatureStatuses", status(`{"slot":1,"confirmations":-1,"err":null,"confirmationStatus":"processed"}`)},
		{"tx json encoding", "getTransaction", replace(legacy(w.b64), `["`+w.b64+`","base64"]`, `{"signatures":["`+w.sig+`"],"message":{}}`)},
		{"tx base58 pair", "getTransaction", replace(legacy(w.b64), `"base64"]`, `"base58"]`)},
		{"tx not base64", "getTransaction", legacy("!!!")},
		{"tx null", "getTransaction", replace(legacy(w.b64), `["`+w.b64+`","base64"]`, `null`)},
		{"tx truncated", "getTransaction", legacy(b64(w.raw[:len(w.raw)-3]))},
		{"tx trailing bytes", "getTransaction", legacy(b64(append(append([]byte{}, w.raw...), 0)))},
		{"tx other signature", "getTransaction", legacy(other.b64)},
		{"tx empty", "getTransaction", legacy("")},
		{"tx two signatures", "getTransaction", legacy(b64(twoSigs))},
		{"tx index outside keys", "getTransaction", legacy(b64(outsideRaw))},
		{"tx version 0 for legacy", "getTransaction", getTransactionAnswer(w.b64, `0`, "")},
		{"tx version unknown", "getTransaction", getTransactionAnswer(w.b64, `"v9"`, "")},
		{"tx meta null", "getTransaction", replace(legacy(w.b64), `"meta":{`, `"meta":null,"x":{`)},
		{"tx no fee", "getTransaction", replace(legacy(w.b64), `"fee":5000,`, ``)},
		{"tx negative fee", "getTransaction", replace(legacy(w.b64), `"fee":5000`, `"fee":-5000`)},
		{"tx no slot", "getTransaction", replace(legacy(w.b64), `"slot":77,`, ``)},
		{"tx negative block time", "getTransaction", replace(legacy(w.b64), `"blockTime":1767225600`, `"blockTime":-1`)},
		{"balance index outside", "getTransaction", getTransactionAnswer(w.b64, `"legacy"`, balance("3", `"1"`, "0"))},
		{"balance index negative", "getTransaction", getTransactionAnswer(w.b64, `"legacy"`, balance("-1", `"1"`, "0"))},
		{"balance amount over u64", "getTransaction", getTransactionAnswer(w.b64, `"legacy"`, balance("1", `"18446744073709551616"`, "0"))},
		{"balance amount decimal", "getTransaction", getTransactionAnswer(w.b64, `"legacy"`, balance("1", `"1.5"`, "0"))},
		{"balance amount number", "getTransaction", getTransactionAnswer(w.b64, `"legacy"`, balance("1", `1`, "0"))},
		{"balance decimals over u8", "getTransaction", getTransactionAnswer(w.b64, `"legacy"`, balance("1", `"1"`, "256"))},
		{"balance null entry", "getTransaction", getTransactionAnswer(w.b64, `"legacy"`, `"preTokenBalances":[null],"postTokenBalances":[]`)},
		{"legacy with loaded addresses", "getTransaction", replace(legacy(w.b64), `"writable":[]`, `"writable":["`+w.to.String()+`"]`)},
		{"history null", "getSignaturesForAddress", `null`},
		{"history null entry", "getSignaturesForAddress", info(`null`)},
		{"history over limit", "getSignaturesForAddress", info(goodInfo + "," + goodInfo + "," + goodInfo)},
		{"history no signature", "getSignaturesForAddress", info(replace(goodInfo, `"signature":"`+w.sig+`",`, ``))},
		{"history bad signature", "getSignaturesForAddress", info(replace(goodInfo, w.sig, w.hash))},
		{"history no slot", "getSignaturesForAddress", info(replace(goodInfo, `"slot":1,`, ``))},
		{"history unknown level", "getSignaturesForAddress", info(replace(goodInfo, `"confirmed"`, `"rooted"`))},
		{"history negative block time", "getSignaturesForAddress", info(replace(goodInfo, `"blockTime":null`, `"blockTime":-7`))},
		{"history memo number", "getSignaturesForAddress", info(replace(goodInfo, `"memo":null`, `"memo":5`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeNode(t)
			f.raw(tc.method, ok(tc.result))
			c := newClient(t, f.srv.URL, 5*time.Second)
			ctx := context.Background()
			var err error
			switch tc.method {
			case "getLatestBlockhash":
				_, err = c.GetLatestBlockhash(ctx, chain.Confirmed)
			case "getBlockHeight":
				_, err = c.GetBlockHeight(ctx, chain.Confirmed)
			case "isBlockhashValid":
				_, err = c.IsBlockhashValid(ctx, w.hash, chain.Confirmed)
			case "sendTransaction":
				_, err = c.SendTransaction(ctx, w.raw, chain.SendOptions{})
			case "getSignatureStatuses":
				_, err = c.GetSignatureStatuses(ctx, []string{w.sig}, false)
			case "getTransaction":
				_, err = c.GetTransaction(ctx, w.sig, chain.Confirmed)
			case "getSignaturesForAddress":
				_, err = c.GetSignaturesForAddress(ctx, w.to, chain.SignaturesOptions{Limit: 2}, chain.Confirmed)
			}
			t.Logf("%s: %v", tc.method, err)
			requireUnavailable(t, err)
			if strings.Contains(err.Error(), w.b64[:40]) {
				t.Errorf("error shows the transaction: %v", err)
			}
		})
	}
}

// TestTxRPCErrorsOnTheWire scripts Agave's send failures byte for byte.
func TestTxRPCErrorsOnTheWire(t *testing.T) {
	ctx := context.Background()
	f := newFakeNode(t)
	c := newClient(t, f.srv.URL, 5*time.Second)
	w := newWireTx(t)

	f.rpcError("sendTransaction", `{"code":-32002,"message":"Transaction simulation failed: Blockhash not found","data":{"accounts":null,"err":"BlockhashNotFound","innerInstructions":null,"loadedAccountsDataSize":0,"logs":[],"replacementBlockhash":null,"returnData":null,"unitsConsumed":0}}`)
	_, err := c.SendTransaction(ctx, w.raw, chain.SendOptions{})
	re := requireRPCError(t, err, "sendTransaction", chain.CodePreflightFailure)
	if e := dataErr(t, re); e != `"BlockhashNotFound"` || !strings.Contains(re.Data, `"unitsConsumed":0`) || !strings.Contains(re.Data, `"logs":[]`) {
		t.Errorf("data %s", re.Data)
	}
	if strings.Contains(err.Error(), w.b64[:40]) {
		t.Error("the error shows the transaction")
	}

	f.rpcError("sendTransaction", `{"code":-32002,"message":"Transaction simulation failed: Error processing Instruction 1: custom program error: 0x20","data":{"err":{"InstructionError":[1,{"Custom":32}]},"logs":["Program log: <fee>"],"unitsConsumed":18446744073709551615}}`)
	_, err = c.SendTransaction(ctx, w.raw, chain.SendOptions{})
	re = requireRPCError(t, err, "sendTransaction", chain.CodePreflightFailure)
	if e := dataErr(t, re); e != `{"InstructionError":[1,{"Custom":32}]}` {
		t.Errorf("data.err %s", e)
	}
	if re.Data != `{"err":{"InstructionError":[1,{"Custom":32}]},"logs":["Program log: <fee>"],"unitsConsumed":18446744073709551615}` {
		t.Errorf("data %s", re.Data)
	}

	f.rpcError("sendTransaction", `{"code":-32003,"message":"Transaction signature verification failure"}`)
	_, err = c.SendTransaction(ctx, w.raw, chain.SendOptions{})
	if re := requireRPCError(t, err, "sendTransaction", chain.CodeSignatureFailure); re.Data != "" {
		t.Errorf("data %q", re.Data)
	}
	f.rpcError("sendTransaction", `{"code":-32602,"message":"invalid transaction: Transaction failed to sanitize accounts offsets correctly","data":null}`)
	_, err = c.SendTransaction(ctx, w.raw, chain.SendOptions{})
	if re := requireRPCError(t, err, "sendTransaction", chain.CodeInvalidParams); re.Data != "" {
		t.Errorf("data %q", re.Data)
	}

	f.rpcError("getTransaction", `{"code":-32602,"message":"Method does not support commitment below `+"`confirmed`"+`"}`)
	_, err = c.GetTransaction(ctx, w.sig, chain.Confirmed)
	requireRPCError(t, err, "getTransaction", chain.CodeInvalidParams)
	if errors.Is(err, chain.ErrTransactionNotFound) {
		t.Errorf("-32602 read as not found: %v", err)
	}
	f.rpcError("getTransaction", `{"code":-32015,"message":"Transaction version (1) is not supported by the requesting client."}`)
	_, err = c.GetTransaction(ctx, w.sig, chain.Confirmed)
	requireRPCError(t, err, "getTransaction", chain.CodeUnsupportedTxVersion)
	f.rpcError("getSignaturesForAddress", `{"code":-32016,"message":"Minimum context slot has not been reached","data":{"contextSlot":12}}`)
	_, err = c.GetSignaturesForAddress(ctx, w.to, chain.SignaturesOptions{}, chain.Confirmed)
	if re := requireRPCError(t, err, "getSignaturesForAddress", chain.CodeMinContextSlot); re.Data != `{"contextSlot":12}` {
		t.Errorf("data %q", re.Data)
	}
	f.rpcError("getSignatureStatuses", `{"code":-32602,"message":"Too many inputs provided; max 256"}`)
	_, err = c.GetSignatureStatuses(ctx, []string{w.sig}, false)
	requireRPCError(t, err, "getSignatureStatuses", chain.CodeInvalidParams)
}
