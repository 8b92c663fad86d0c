package chaintest_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	alt "github.com/gagliardetto/solana-go/programs/address-lookup-table"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
)

// signedV0 compiles ixs as a v0 message paid by signers[0] with the
// latest blockhash and the tables, and signs it.
func (e *env) signedV0(ixs []message.Instruction, tables []message.LookupTable, signers ...wallet) ([]byte, message.Compiled) {
	e.t.Helper()
	bh, err := e.rpc.GetLatestBlockhash(e.ctx, rpc.CommitmentProcessed)
	if err != nil {
		e.t.Fatalf("GetLatestBlockhash: %v", err)
	}
	c, err := message.Compile(message.V0, signers[0].addr, bh.Value.Blockhash.String(), ixs, tables)
	if err != nil {
		e.t.Fatalf("Compile: %v", err)
	}
	return signMessage(e.t, c, signers...), c
}

// signMessage wraps a compiled message in a transaction signed by the
// wallets its header names.
func signMessage(t *testing.T, c message.Compiled, signers ...wallet) []byte {
	t.Helper()
	raw := message.AppendCompactU16(nil, c.NumSigners)
	for _, k := range c.StaticKeys[:c.NumSigners] {
		i := slices.IndexFunc(signers, func(w wallet) bool { return w.addr == k })
		if i < 0 {
			t.Fatalf("no wallet for signer %s", k)
		}
		raw = append(raw, ed25519.Sign(signers[i].priv, c.Bytes)...)
	}
	return append(raw, c.Bytes...)
}

func (e *env) sendRaw(raw []byte, skipPreflight bool) (string, error) {
	sig, err := e.rpc.SendEncodedTransactionWithOpts(e.ctx, base64.StdEncoding.EncodeToString(raw), rpc.TransactionOpts{
		Encoding: solana.EncodingBase64, SkipPreflight: skipPreflight, PreflightCommitment: rpc.CommitmentProcessed,
	})
	return sig.String(), err
}

func (e *env) mustSendRaw(raw []byte) string {
	e.t.Helper()
	sig, err := e.sendRaw(raw, false)
	if err != nil {
		e.t.Fatalf("sendTransaction: %v", err)
	}
	return sig
}

// simulation is a simulateTransaction value.
type simulation struct {
	Err  json.RawMessage `json:"err"`
	Logs []string        `json:"logs"`
}

func (e *env) simulateRaw(raw []byte) (simulation, error) {
	var out struct {
		Value simulation `json:"value"`
	}
	err := e.rpc.RPCCallForInto(e.ctx, &out, "simulateTransaction", []any{
		base64.StdEncoding.EncodeToString(raw), map[string]any{"encoding": "base64", "commitment": "processed"},
	})
	return out.Value, err
}

// jsonText is raw JSON as text, "null" for an absent or null value.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	return string(raw)
}

// requireInvalidTx checks a -32602 "invalid transaction: <msg>" refusal.
func requireInvalidTx(t *testing.T, err error, msg string) {
	t.Helper()
	if re := requireCode(t, err, -32602); re.Message != "invalid transaction: "+msg {
		t.Errorf("message %q, want %q", re.Message, "invalid transaction: "+msg)
	}
}

// transferVia is a System transfer from payer to a recipient that a table
// may load.
func transferVia(from, to chain.Address, lamports uint64) message.Instruction {
	data := binary.LittleEndian.AppendUint32(nil, 2)
	data = binary.LittleEndian.AppendUint64(data, lamports)
	return message.Instruction{
		ProgramID: chain.Address(solana.SystemProgramID),
		Accounts:  []message.AccountMeta{{Key: from, Signer: true, Writable: true}, {Key: to, Writable: true}},
		Data:      data,
	}
}

func TestCreateLookupTableLayout(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.AdvanceSlots(7)
	auth := e.wallet(0)
	var addrs []chain.Address
	for range 3 {
		_, a := chaintest.NewKeypair()
		addrs = append(addrs, a)
	}
	table, err := e.c.CreateLookupTable(auth.addr, addrs)
	if err != nil {
		t.Fatal(err)
	}
	// The program derives the address from the authority and a recent slot.
	want, _, _ := solana.FindProgramAddress([][]byte{auth.addr[:], binary.LittleEndian.AppendUint64(nil, 7)}, solana.AddressLookupTableProgramID)
	if table != chain.Address(want) {
		t.Errorf("table address %s, want %s", table, want)
	}
	// A second table of the same authority in the same slot takes an
	// earlier recent slot.
	second, err := e.c.CreateLookupTable(auth.addr, addrs[:1])
	want6, _, _ := solana.FindProgramAddress([][]byte{auth.addr[:], binary.LittleEndian.AppendUint64(nil, 6)}, solana.AddressLookupTableProgramID)
	if err != nil || second != chain.Address(want6) {
		t.Errorf("second table %s %v, want %s", second, err, want6)
	}
	acct, ok := e.c.Account(table)
	if !ok || acct.Owner != chaintest.LookupTableProgramID() || acct.Owner != chain.Address(solana.AddressLookupTableProgramID) {
		t.Fatalf("table account %+v", acct)
	}
	if len(acct.Data) != 56+3*32 || acct.Lamports != chaintest.RentExemptMinimum(56+3*32) {
		t.Errorf("size %d lamports %d", len(acct.Data), acct.Lamports)
	}
	d := acct.Data
	if binary.LittleEndian.Uint32(d) != 1 || binary.LittleEndian.Uint64(d[4:]) != math.MaxUint64 ||
		binary.LittleEndian.Uint64(d[12:]) != 7 || d[20] != 0 || d[21] != 1 || chain.Address(d[22:54]) != auth.addr || d[54] != 0 || d[55] != 0 {
		t.Errorf("meta % x", d[:56])
	}
	// solana-go's decoder reads it as a real table.
	st, err := alt.DecodeAddressLookupTableState(d)
	if err != nil {
		t.Fatal(err)
	}
	if st.DeactivationSlot != math.MaxUint64 || st.LastExtendedSlot != 7 || st.Authority == nil || chain.Address(*st.Authority) != auth.addr || len(st.Addresses) != 3 {
		t.Errorf("decoded %+v", st)
	}
	for i, a := range st.Addresses {
		if chain.Address(a) != addrs[i] {
			t.Errorf("address %d %s, want %s", i, a, addrs[i])
		}
	}
	lt, err := e.c.LookupTable(table)
	if err != nil || lt.Address != table || !slices.Equal(lt.Addresses, addrs) {
		t.Errorf("LookupTable %+v %v", lt, err)
	}
}

func TestLookupTableUsableFromNextSlot(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	payer := e.wallet(1_000_000_000)
	to := e.wallet(0)
	later := e.wallet(0)
	table, err := e.c.CreateLookupTable(payer.addr, []chain.Address{to.addr})
	if err != nil {
		t.Fatal(err)
	}
	lt, _ := e.c.LookupTable(table)
	raw, c := e.signedV0([]message.Instruction{transferVia(payer.addr, to.addr, 1000)}, []message.LookupTable{lt}, payer)
	if len(c.LoadedWritable) != 1 || c.LoadedWritable[0] != to.addr {
		t.Fatalf("the recipient is not loaded: %+v", c)
	}
	// Extended in this slot: not usable yet, with or without preflight.
	_, err = e.sendRaw(raw, false)
	requireInvalidTx(t, err, "Transaction address table lookup uses an invalid index")
	_, err = e.sendRaw(raw, true)
	requireInvalidTx(t, err, "Transaction address table lookup uses an invalid index")
	_, err = e.simulateRaw(raw)
	requireInvalidTx(t, err, "Transaction address table lookup uses an invalid index")

	e.c.AdvanceSlots(1)
	raw, _ = e.signedV0([]message.Instruction{transferVia(payer.addr, to.addr, 1000)}, []message.LookupTable{lt}, payer)
	e.mustSendRaw(raw)
	if got := e.lamports(to.addr); got != 1000 {
		t.Errorf("recipient %d lamports", got)
	}

	// An extension is usable the slot after it; the older entries stay
	// usable meanwhile.
	if err := e.c.ExtendLookupTable(table, []chain.Address{later.addr}); err != nil {
		t.Fatal(err)
	}
	lt, _ = e.c.LookupTable(table)
	raw, _ = e.signedV0([]message.Instruction{transferVia(payer.addr, later.addr, 7)}, []message.LookupTable{lt}, payer)
	_, err = e.sendRaw(raw, false)
	requireInvalidTx(t, err, "Transaction address table lookup uses an invalid index")
	raw, _ = e.signedV0([]message.Instruction{transferVia(payer.addr, to.addr, 1)}, []message.LookupTable{lt}, payer)
	e.mustSendRaw(raw)
	e.c.AdvanceSlots(1)
	raw, _ = e.signedV0([]message.Instruction{transferVia(payer.addr, later.addr, 7)}, []message.LookupTable{lt}, payer)
	e.mustSendRaw(raw)
	if e.lamports(later.addr) != 7 || e.lamports(to.addr) != 1001 {
		t.Errorf("balances %d %d", e.lamports(later.addr), e.lamports(to.addr))
	}
}

func TestLookupErrors(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	payer := e.wallet(1_000_000_000)
	to := e.wallet(0)
	table, err := e.c.CreateLookupTable(payer.addr, []chain.Address{to.addr})
	if err != nil {
		t.Fatal(err)
	}
	e.c.AdvanceSlots(1)
	ix := []message.Instruction{transferVia(payer.addr, to.addr, 5)}
	try := func(name string, tables []message.LookupTable, want string) {
		t.Helper()
		raw, _ := e.signedV0(ix, tables, payer)
		_, err := e.sendRaw(raw, false)
		if err == nil {
			t.Errorf("%s: accepted", name)
			return
		}
		requireInvalidTx(t, err, want)
	}
	_, unknown := chaintest.NewKeypair()
	try("unknown table", []message.LookupTable{{Address: unknown, Addresses: []chain.Address{to.addr}}},
		"Transaction loads an address table account that doesn't exist")
	// The client believes the table holds more than it does.
	_, other := chaintest.NewKeypair()
	try("index out of range", []message.LookupTable{{Address: table, Addresses: []chain.Address{other, to.addr}}},
		"Transaction address table lookup uses an invalid index")
	wrongOwner := e.wallet(5_000_000).addr
	try("wrong owner", []message.LookupTable{{Address: wrongOwner, Addresses: []chain.Address{to.addr}}},
		"Transaction loads an address table account with an invalid owner")
	_, garbage := chaintest.NewKeypair()
	e.c.SetAccount(garbage, chaintest.Account{Owner: chaintest.LookupTableProgramID(), Lamports: 1, Data: []byte{1, 2, 3}})
	try("invalid data", []message.LookupTable{{Address: garbage, Addresses: []chain.Address{to.addr}}},
		"Transaction loads an address table account with invalid data")
	// A loaded address that is also a static key.
	dup := []message.Instruction{transferVia(payer.addr, to.addr, 5)}
	c, err := message.Compile(message.V0, payer.addr, latest(e), dup, []message.LookupTable{{Address: table, Addresses: []chain.Address{to.addr}}})
	if err != nil {
		t.Fatal(err)
	}
	c.Bytes = withStaticKey(t, c.Bytes, to.addr)
	_, err = e.sendRaw(signMessage(t, c, payer), false)
	requireInvalidTx(t, err, "Account loaded twice")

	// Deactivated: usable while the deactivation slot is among the 512
	// recent slot hashes, then as if it did not exist.
	lt := []message.LookupTable{{Address: table, Addresses: []chain.Address{to.addr}}}
	if err := e.c.DeactivateLookupTable(table); err != nil {
		t.Fatal(err)
	}
	raw, _ := e.signedV0(ix, lt, payer)
	e.mustSendRaw(raw)
	e.c.AdvanceSlots(512)
	raw, _ = e.signedV0(ix, lt, payer)
	if sim, err := e.simulateRaw(raw); err != nil || jsonText(sim.Err) != "null" {
		t.Errorf("512 slots after deactivation: %s %v", sim.Err, err)
	}
	e.c.AdvanceSlots(1)
	try("deactivated", lt, "Transaction loads an address table account that doesn't exist")
	if err := e.c.ExtendLookupTable(table, []chain.Address{other}); err == nil {
		t.Error("a deactivated table was extended")
	}
}

// latest is the cluster's newest blockhash in base58.
func latest(e *env) string {
	e.t.Helper()
	bh, err := e.rpc.GetLatestBlockhash(e.ctx, rpc.CommitmentProcessed)
	if err != nil {
		e.t.Fatal(err)
	}
	return bh.Value.Blockhash.String()
}

// withStaticKey re-encodes a v0 message with key appended to its static
// read-only keys (instruction indexes into loaded keys shift by one).
func withStaticKey(t *testing.T, msg []byte, key chain.Address) []byte {
	t.Helper()
	tx, err := solana.TransactionFromBytes(append(append([]byte{1}, make([]byte, 64)...), msg...))
	if err != nil {
		t.Fatal(err)
	}
	m := tx.Message
	n := uint16(len(m.AccountKeys))
	m.AccountKeys = append(m.AccountKeys, solana.PublicKey(key))
	m.Header.NumReadonlyUnsignedAccounts++
	for i := range m.Instructions {
		for j, a := range m.Instructions[i].Accounts {
			if a >= n {
				m.Instructions[i].Accounts[j] = a + 1
			}
		}
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestV0ProgramMustBeStatic(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	payer := e.wallet(1_000_000_000)
	table, err := e.c.CreateLookupTable(payer.addr, []chain.Address{chain.Address(solana.MemoProgramID)})
	if err != nil {
		t.Fatal(err)
	}
	e.c.AdvanceSlots(1)
	bh := latest(e)
	m := solana.Message{
		Header:          solana.MessageHeader{NumRequiredSignatures: 1},
		AccountKeys:     solana.PublicKeySlice{payer.pk()},
		RecentBlockhash: solana.MustHashFromBase58(bh),
		Instructions:    []solana.CompiledInstruction{{ProgramIDIndex: 1, Data: []byte("hi")}},
		AddressTableLookups: []solana.MessageAddressTableLookup{
			{AccountKey: solana.PublicKey(table), ReadonlyIndexes: []uint8{0}, WritableIndexes: []uint8{}},
		},
	}
	m.SetVersion(solana.MessageVersionV0)
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	raw := append([]byte{1}, ed25519.Sign(payer.priv, b)...)
	_, err = e.sendRaw(append(raw, b...), false)
	requireInvalidTx(t, err, "Transaction failed to sanitize accounts offsets correctly")
}

func TestGetTransactionLoadedAddresses(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	payer := e.wallet(1_000_000_000)
	auth := e.wallet(0)
	rcpt := e.wallet(0)
	mint := e.feeMint(auth.addr)
	src, err := e.c.MintTo(payer.addr, mint, 5_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := e.c.MintTo(rcpt.addr, mint, 0)
	table, err := e.c.CreateLookupTable(auth.addr, []chain.Address{rcpt.addr, dst, mint})
	if err != nil {
		t.Fatal(err)
	}
	e.c.AdvanceSlots(1)
	lt, _ := e.c.LookupTable(table)
	tr := transferCheckedWithFee(src, mint, dst, payer.addr, 1_000_000_000, 9, 20_000_000)
	ixs := []message.Instruction{transferVia(payer.addr, rcpt.addr, 3000), fromSolana(tr)}
	raw, c := e.signedV0(ixs, []message.LookupTable{lt}, payer)
	sig := e.mustSendRaw(raw)
	if !slices.Equal(c.LoadedWritable, []chain.Address{rcpt.addr, dst}) || !slices.Equal(c.LoadedReadonly, []chain.Address{mint}) {
		t.Fatalf("loaded %v %v", c.LoadedWritable, c.LoadedReadonly)
	}
	full := c.Keys()
	e.c.AdvanceSlots(1)

	var got struct {
		Version     json.RawMessage `json:"version"`
		Transaction struct {
			Message struct {
				AccountKeys         []string `json:"accountKeys"`
				AddressTableLookups []struct {
					AccountKey      string `json:"accountKey"`
					WritableIndexes []int  `json:"writableIndexes"`
					ReadonlyIndexes []int  `json:"readonlyIndexes"`
				} `json:"addressTableLookups"`
			} `json:"message"`
		} `json:"transaction"`
		Meta struct {
			Err             json.RawMessage `json:"err"`
			PreBalances     []uint64        `json:"preBalances"`
			PostBalances    []uint64        `json:"postBalances"`
			LoadedAddresses struct {
				Writable []string `json:"writable"`
				Readonly []string `json:"readonly"`
			} `json:"loadedAddresses"`
			PreTokenBalances []struct {
				AccountIndex  int    `json:"accountIndex"`
				Mint          string `json:"mint"`
				Owner         string `json:"owner"`
				UITokenAmount struct {
					Amount string `json:"amount"`
				} `json:"uiTokenAmount"`
			} `json:"preTokenBalances"`
			PostTokenBalances []struct {
				AccountIndex  int    `json:"accountIndex"`
				Owner         string `json:"owner"`
				UITokenAmount struct {
					Amount string `json:"amount"`
				} `json:"uiTokenAmount"`
			} `json:"postTokenBalances"`
		} `json:"meta"`
	}
	if err := e.rpc.RPCCallForInto(e.ctx, &got, "getTransaction", []any{sig, map[string]any{
		"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0,
	}}); err != nil {
		t.Fatal(err)
	}
	m := got.Transaction.Message
	if string(got.Version) != "0" || jsonText(got.Meta.Err) != "null" || len(m.AccountKeys) != len(c.StaticKeys) {
		t.Fatalf("version %s err %s static keys %v", got.Version, got.Meta.Err, m.AccountKeys)
	}
	if l := m.AddressTableLookups; len(l) != 1 || l[0].AccountKey != table.String() || !slices.Equal(l[0].WritableIndexes, []int{0, 1}) || !slices.Equal(l[0].ReadonlyIndexes, []int{2}) {
		t.Errorf("addressTableLookups %+v", l)
	}
	la := got.Meta.LoadedAddresses
	if !slices.Equal(la.Writable, []string{rcpt.addr.String(), dst.String()}) || !slices.Equal(la.Readonly, []string{mint.String()}) {
		t.Errorf("loadedAddresses %+v", la)
	}
	if len(got.Meta.PreBalances) != len(full) || len(got.Meta.PostBalances) != len(full) {
		t.Fatalf("balances over %d and %d keys, want %d", len(got.Meta.PreBalances), len(got.Meta.PostBalances), len(full))
	}
	ri := slices.Index(full, rcpt.addr)
	if got.Meta.PreBalances[ri] != 0 || got.Meta.PostBalances[ri] != 3000 || got.Meta.PostBalances[0] != 1_000_000_000-3000-5000 {
		t.Errorf("lamports pre %v post %v", got.Meta.PreBalances, got.Meta.PostBalances)
	}
	di := slices.Index(full, dst)
	if di < len(c.StaticKeys) {
		t.Fatalf("destination %d is static", di)
	}
	find := func(idx int, amounts []struct {
		AccountIndex  int    `json:"accountIndex"`
		Owner         string `json:"owner"`
		UITokenAmount struct {
			Amount string `json:"amount"`
		} `json:"uiTokenAmount"`
	}) string {
		for _, b := range amounts {
			if b.AccountIndex == idx {
				return b.Owner + "/" + b.UITokenAmount.Amount
			}
		}
		return ""
	}
	if got := find(di, got.Meta.PostTokenBalances); got != rcpt.addr.String()+"/980000000" {
		t.Errorf("destination post balance %q", got)
	}
	if got := find(slices.Index(full, src), got.Meta.PostTokenBalances); got != payer.addr.String()+"/4000000000" {
		t.Errorf("source post balance %q", got)
	}
	for _, b := range got.Meta.PreTokenBalances {
		if b.AccountIndex == di && (b.UITokenAmount.Amount != "0" || b.Mint != mint.String()) {
			t.Errorf("destination pre balance %+v", b)
		}
	}
	// base64 carries the same meta and the lookups inside the bytes.
	var b64 struct {
		Transaction []string `json:"transaction"`
		Meta        struct {
			LoadedAddresses struct {
				Writable []string `json:"writable"`
			} `json:"loadedAddresses"`
		} `json:"meta"`
	}
	if err := e.rpc.RPCCallForInto(e.ctx, &b64, "getTransaction", []any{sig, map[string]any{
		"encoding": "base64", "commitment": "confirmed", "maxSupportedTransactionVersion": 0,
	}}); err != nil {
		t.Fatal(err)
	}
	if len(b64.Transaction) != 2 || b64.Transaction[0] != base64.StdEncoding.EncodeToString(raw) || len(b64.Meta.LoadedAddresses.Writable) != 2 {
		t.Errorf("base64 answer %+v", b64)
	}
	// The loaded recipient's history lists the transaction.
	sigs, err := e.rpc.GetSignaturesForAddressWithOpts(e.ctx, rcpt.pk(), &rpc.GetSignaturesForAddressOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil || len(sigs) != 1 || sigs[0].Signature.String() != sig {
		t.Errorf("signatures of a loaded address: %v %v", sigs, err)
	}
	if !strings.Contains(strings.Join(logsOf(t, e, sig), "\n"), "TransferCheckedWithFee") {
		t.Error("logs lack the transfer")
	}
}

func logsOf(t *testing.T, e *env, sig string) []string {
	t.Helper()
	out, err := e.rpc.GetTransaction(e.ctx, solana.MustSignatureFromBase58(sig), &rpc.GetTransactionOpts{
		Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: rpc.NewTransactionVersion(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Meta.LogMessages
}

// fromSolana converts a solana-go instruction to the message package's.
func fromSolana(ix solana.Instruction) message.Instruction {
	data, _ := ix.Data()
	out := message.Instruction{ProgramID: chain.Address(ix.ProgramID()), Data: data}
	for _, a := range ix.Accounts() {
		out.Accounts = append(out.Accounts, message.AccountMeta{Key: chain.Address(a.PublicKey), Signer: a.IsSigner, Writable: a.IsWritable})
	}
	return out
}
