package chaintest

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

const (
	maxTxBytes       = 1232
	maxBase64TxChars = 1644
	maxBase58TxChars = 1683
	defaultUnitLimit = 200_000
	maxUnitLimit     = 1_400_000
)

// parsedTx is a decoded, sanitized transaction.
type parsedTx struct {
	raw     []byte
	msg     []byte // the signed message bytes
	tx      *solana.Transaction
	sigs    []solana.Signature
	keys    []chain.Address // static keys, then loaded writable, then loaded read-only
	static  int             // how many of keys are the message's own
	loadedW []chain.Address // addresses the lookups load as writable
	loadedR []chain.Address // and as read-only
	version int             // -1 legacy, 0 v0
	hash    string
}

func (p *parsedTx) sig() string { return p.sigs[0].String() }

func (p *parsedTx) isSigner(i int) bool { return i < int(p.tx.Message.Header.NumRequiredSignatures) }

func (p *parsedTx) isWritable(i int) bool {
	if i >= p.static {
		return i < p.static+len(p.loadedW)
	}
	h := p.tx.Message.Header
	req := int(h.NumRequiredSignatures)
	if i < req {
		return i < req-int(h.NumReadonlySignedAccounts)
	}
	return i < p.static-int(h.NumReadonlyUnsignedAccounts)
}

func (p *parsedTx) fee() uint64 { return LamportsPerSignature * uint64(len(p.sigs)) }

func invalidTx(msg string) *rpcError { return invalidParams("invalid transaction: " + msg) }

// decodeTx decodes and sanitizes an encoded transaction (chain.md §3).
func decodeTx(encoded, encoding string) (*parsedTx, *rpcError) {
	var raw []byte
	var err error
	switch encoding {
	case "", "base58":
		if len(encoded) > maxBase58TxChars {
			return nil, invalidParams(fmt.Sprintf("base58 encoded solana_transaction::versioned::VersionedTransaction too large: %d bytes (max: encoded/raw %d/%d)", len(encoded), maxBase58TxChars, maxTxBytes))
		}
		var b solana.Base58
		if err = b.UnmarshalJSON([]byte(strconv.Quote(encoded))); err != nil {
			return nil, invalidParams("invalid base58 encoding: " + err.Error())
		}
		raw = b
	case "base64":
		if len(encoded) > maxBase64TxChars {
			return nil, invalidParams(fmt.Sprintf("base64 encoded solana_transaction::versioned::VersionedTransaction too large: %d bytes (max: encoded/raw %d/%d)", len(encoded), maxBase64TxChars, maxTxBytes))
		}
		if raw, err = base64.StdEncoding.DecodeString(encoded); err != nil {
			return nil, invalidParams("invalid base64 encoding: " + err.Error())
		}
	default:
		return nil, invalidParams("unsupported encoding: " + encoding + ". Supported encodings: base58, base64")
	}
	if len(raw) > maxTxBytes {
		return nil, invalidParams(fmt.Sprintf("decoded solana_transaction::versioned::VersionedTransaction too large: %d bytes (max: %d bytes)", len(raw), maxTxBytes))
	}
	n, off, ok := compactU16(raw)
	if !ok || len(raw) < off+64*n+1 {
		return nil, invalidParams("failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: unexpected end of file")
	}
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		return nil, invalidParams("failed to deserialize solana_transaction::versioned::VersionedTransaction: " + err.Error())
	}
	p := &parsedTx{raw: raw, msg: raw[off+64*n:], tx: tx, sigs: tx.Signatures, version: -1}
	if p.msg[0]&0x80 != 0 {
		if v := p.msg[0] & 0x7f; v != 0 {
			return nil, invalidTx(fmt.Sprintf("unsupported message version %d", v))
		}
		p.version = 0
	}
	m := &tx.Message
	p.keys = make([]chain.Address, len(m.AccountKeys))
	seen := make(map[chain.Address]bool, len(m.AccountKeys))
	for i, k := range m.AccountKeys {
		p.keys[i] = chain.Address(k)
		if seen[p.keys[i]] {
			return nil, invalidTx("Account loaded twice")
		}
		seen[p.keys[i]] = true
	}
	p.static = len(p.keys)
	// A v0 message's instructions may index the addresses its lookups
	// load, after the static keys; program ids must be static keys.
	total := p.static
	for _, l := range m.AddressTableLookups {
		if len(l.WritableIndexes)+len(l.ReadonlyIndexes) == 0 {
			return nil, invalidTx("Transaction failed to sanitize accounts offsets correctly")
		}
		total += len(l.WritableIndexes) + len(l.ReadonlyIndexes)
	}
	h := m.Header
	bad := h.NumRequiredSignatures == 0 || h.NumReadonlySignedAccounts >= h.NumRequiredSignatures ||
		int(h.NumRequiredSignatures)+int(h.NumReadonlyUnsignedAccounts) > p.static || total > 256
	for _, ix := range m.Instructions {
		if int(ix.ProgramIDIndex) >= p.static || ix.ProgramIDIndex == 0 {
			bad = true
		}
		for _, a := range ix.Accounts {
			if int(a) >= total {
				bad = true
			}
		}
	}
	if bad {
		return nil, invalidTx("Transaction failed to sanitize accounts offsets correctly")
	}
	if len(p.sigs) != int(h.NumRequiredSignatures) {
		return nil, &rpcError{Code: -32013, Message: "Transaction signature length mismatch"}
	}
	p.hash = m.RecentBlockhash.String()
	return p, nil
}

// compactU16 reads a compact-u16 length prefix.
func compactU16(b []byte) (n, size int, ok bool) {
	for i := 0; i < 3 && i < len(b); i++ {
		n |= int(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return n, i + 1, true
		}
	}
	return 0, 0, false
}

// verify checks every signature over the message bytes.
func (p *parsedTx) verify() bool {
	for i, s := range p.sigs {
		if !ed25519.Verify(ed25519.PublicKey(p.keys[i][:]), p.msg, s[:]) {
			return false
		}
	}
	return true
}

// instrErr is an InstructionError's inner error.
type instrErr struct {
	custom *uint32
	name   string
}

func customErr(n uint32) *instrErr { return &instrErr{custom: &n} }
func namedErr(s string) *instrErr  { return &instrErr{name: s} }

func (e *instrErr) json() any {
	if e.custom != nil {
		return map[string]uint32{"Custom": *e.custom}
	}
	return e.name
}

// text is the error as program logs and preflight messages print it.
func (e *instrErr) text() string {
	if e.custom != nil {
		return fmt.Sprintf("custom program error: 0x%x", *e.custom)
	}
	switch e.name {
	case "InvalidInstructionData":
		return "invalid instruction data"
	case "InvalidAccountData":
		return "invalid account data for instruction"
	case "MissingRequiredSignature":
		return "missing required signature for instruction"
	case "NotEnoughAccountKeys":
		return "insufficient account keys for instruction"
	case "IncorrectProgramId":
		return "incorrect program id for instruction"
	case "InvalidSeeds":
		return "Provided seeds do not result in a valid address"
	case "IllegalOwner":
		return "Provided owner is not allowed"
	case "InvalidArgument":
		return "invalid program argument"
	case "UnsupportedProgramId":
		return "Unsupported program id"
	case "ReadonlyLamportChange":
		return "instruction changed the balance of a read-only account"
	case "ReadonlyDataModified":
		return "instruction modified data of a read-only account"
	}
	return e.name
}

// txErr is a transaction error: a unit error such as "BlockhashNotFound",
// or an instruction's error.
type txErr struct {
	unit string
	ix   int
	in   *instrErr
}

// JSON is the error as the RPC reports it.
func (e *txErr) JSON() any {
	if e == nil {
		return nil
	}
	if e.in == nil {
		return e.unit
	}
	return map[string]any{"InstructionError": []any{e.ix, e.in.json()}}
}

// preflightMessage is -32002's message for e.
func (e *txErr) preflightMessage() string {
	if e.in != nil {
		return fmt.Sprintf("Transaction simulation failed: Error processing Instruction %d: %s", e.ix, e.in.text())
	}
	switch e.unit {
	case "BlockhashNotFound":
		return "Transaction simulation failed: Blockhash not found"
	case "AccountNotFound":
		return "Transaction simulation failed: Attempt to debit an account but found no record of a prior credit."
	case "InsufficientFundsForFee":
		return "Transaction simulation failed: Insufficient funds for fee"
	case "AlreadyProcessed":
		return "Transaction simulation failed: This transaction has already been processed"
	}
	return "Transaction simulation failed: " + e.unit
}

// tokenBalance is a meta pre/postTokenBalances entry.
type tokenBalance struct {
	AccountIndex int           `json:"accountIndex"`
	Mint         string        `json:"mint"`
	UITokenAmt   uiTokenAmount `json:"uiTokenAmount"`
	Owner        string        `json:"owner"`
	ProgramID    string        `json:"programId"`
}

// execResult is the outcome of executing a transaction on a bank.
type execResult struct {
	err    *txErr
	fee    uint64
	logs   []string
	units  uint64
	bank   *bank
	pre    []uint64
	post   []uint64
	preTok []tokenBalance
	postTk []tokenBalance
	memo   *string
}

// bank is a copy-on-write view of the cluster's accounts for one
// transaction. Its owner holds c.mu.
type bank struct {
	c     *Cluster
	p     *parsedTx
	over  map[chain.Address]*Account
	epoch uint64
}

func (b *bank) get(a chain.Address) (Account, bool) {
	if o, ok := b.over[a]; ok {
		if o == nil {
			return Account{}, false
		}
		return *o, true
	}
	if s, ok := b.c.accounts[a]; ok {
		return s.Account, true
	}
	return Account{}, false
}

func (b *bank) put(a chain.Address, acct Account) {
	b.over[a] = &acct
}

// checkFee is the unit error when the fee payer cannot pay the fee.
func (c *Cluster) checkFeeLocked(p *parsedTx) *txErr {
	s, ok := c.accounts[p.keys[0]]
	if !ok || s.Lamports == 0 {
		return &txErr{unit: "AccountNotFound"}
	}
	if s.Lamports < p.fee() {
		return &txErr{unit: "InsufficientFundsForFee"}
	}
	return nil
}

// executeLocked runs p against the current accounts without committing.
// forceFail makes it fail with InstructionError [0, Custom(1)] after the fee.
// The caller holds c.mu and has checked the fee.
func (c *Cluster) executeLocked(p *parsedTx, forceFail bool) *execResult {
	b := &bank{c: c, p: p, over: make(map[chain.Address]*Account), epoch: c.slot / c.cfg.SlotsPerEpoch}
	r := &execResult{bank: b, fee: p.fee()}
	r.pre, r.preTok = b.balances()
	payer, _ := b.get(p.keys[0])
	payer.Lamports -= p.fee()
	b.put(p.keys[0], payer)
	feeOnly := func() {
		clear(b.over)
		b.put(p.keys[0], payer)
	}
	limit := uint64(0)
	nonBudget := uint64(0)
	for _, ix := range p.tx.Message.Instructions {
		prog := p.keys[ix.ProgramIDIndex]
		if prog != computeBudgetProg {
			nonBudget++
		} else if len(ix.Data) == 5 && ix.Data[0] == 2 {
			limit = uint64(binary.LittleEndian.Uint32(ix.Data[1:]))
		}
	}
	if limit == 0 {
		limit = min(defaultUnitLimit*max(nonBudget, 1), maxUnitLimit)
	}
	var memos []string
	for i, ix := range p.tx.Message.Instructions {
		prog := p.keys[ix.ProgramIDIndex]
		accts := make([]int, len(ix.Accounts))
		for j, a := range ix.Accounts {
			accts[j] = int(a)
		}
		r.logs = append(r.logs, fmt.Sprintf("Program %s invoke [1]", prog))
		var units uint64
		var ierr *instrErr
		var logs []string
		if forceFail && i == 0 {
			units, ierr = 150, customErr(1)
		} else {
			units, logs, ierr = b.run(prog, accts, ix.Data, &memos)
		}
		r.logs = append(r.logs, logs...)
		r.units += units
		if prog != computeBudgetProg {
			r.logs = append(r.logs, fmt.Sprintf("Program %s consumed %d of %d compute units", prog, units, limit-min(limit, r.units-units)))
		}
		if ierr != nil {
			r.logs = append(r.logs, fmt.Sprintf("Program %s failed: %s", prog, ierr.text()))
			r.err = &txErr{ix: i, in: ierr}
			feeOnly()
			break
		}
		r.logs = append(r.logs, fmt.Sprintf("Program %s success", prog))
	}
	if len(memos) > 0 {
		m := memos[0]
		for _, s := range memos[1:] {
			m += "; " + s
		}
		r.memo = &m
	}
	r.post, r.postTk = b.balances()
	return r
}

// balances are the lamports and token balances of every key in b's view.
func (b *bank) balances() ([]uint64, []tokenBalance) {
	lam := make([]uint64, len(b.p.keys))
	tok := []tokenBalance{}
	for i, k := range b.p.keys {
		a, ok := b.get(k)
		if !ok {
			continue
		}
		lam[i] = a.Lamports
		if a.Owner != tokenProgram && a.Owner != token2022Program {
			continue
		}
		acct, err := token2022.DecodeAccount(a.Data)
		if err != nil {
			continue
		}
		var dec uint8
		if ma, ok := b.get(acct.Mint); ok {
			if m, err := token2022.DecodeMint(ma.Data); err == nil {
				dec = m.Decimals
			}
		}
		tok = append(tok, tokenBalance{AccountIndex: i, Mint: acct.Mint.String(), UITokenAmt: newUITokenAmount(acct.Amount, dec), Owner: acct.Owner.String(), ProgramID: a.Owner.String()})
	}
	return lam, tok
}

// write stores acct at instruction account idx, refusing read-only keys.
func (b *bank) write(idx int, acct Account) *instrErr {
	if !b.p.isWritable(idx) {
		old, _ := b.get(b.p.keys[idx])
		if old.Lamports != acct.Lamports {
			return namedErr("ReadonlyLamportChange")
		}
		return namedErr("ReadonlyDataModified")
	}
	b.put(b.p.keys[idx], acct)
	return nil
}

// run executes one instruction.
func (b *bank) run(prog chain.Address, accts []int, data []byte, memos *[]string) (uint64, []string, *instrErr) {
	switch prog {
	case systemProgram:
		return b.runSystem(accts, data)
	case computeBudgetProg:
		if len(data) == 0 || data[0] > 4 {
			return 150, nil, namedErr("InvalidInstructionData")
		}
		return 150, nil, nil
	case memoProgram, memoV1Program:
		if !utf8.Valid(data) {
			return 500, []string{"Program log: Invalid UTF-8, from byte 0"}, namedErr("InvalidInstructionData")
		}
		for _, a := range accts {
			if !b.p.isSigner(a) {
				return 500, nil, namedErr("MissingRequiredSignature")
			}
		}
		*memos = append(*memos, fmt.Sprintf("[%d] %s", len(data), data))
		return 500 + uint64(len(data))*10, []string{fmt.Sprintf("Program log: Memo (len %d): %q", len(data), string(data))}, nil
	case ataProgram:
		return b.runATA(accts, data)
	case tokenProgram, token2022Program:
		return b.runToken(prog, accts, data)
	case poolProgram:
		return b.runPool(accts, data)
	case cctpTransmitterProgram:
		return b.runReceiveMessage(accts, data)
	}
	return 0, nil, namedErr("UnsupportedProgramId")
}

func (b *bank) runSystem(accts []int, data []byte) (uint64, []string, *instrErr) {
	const units = 150
	if len(data) < 4 || binary.LittleEndian.Uint32(data) != 2 {
		return units, nil, namedErr("InvalidInstructionData")
	}
	if len(data) != 12 {
		return units, nil, namedErr("InvalidInstructionData")
	}
	if len(accts) < 2 {
		return units, nil, namedErr("NotEnoughAccountKeys")
	}
	lamports := binary.LittleEndian.Uint64(data[4:])
	from, to := accts[0], accts[1]
	if !b.p.isSigner(from) {
		return units, []string{fmt.Sprintf("Transfer: `from` account %s must sign", b.p.keys[from])}, namedErr("MissingRequiredSignature")
	}
	fa, _ := b.get(b.p.keys[from])
	if len(fa.Data) > 0 {
		return units, []string{"Transfer: `from` must not carry data"}, namedErr("InvalidArgument")
	}
	if fa.Lamports < lamports {
		return units, []string{fmt.Sprintf("Transfer: insufficient lamports %d, need %d", fa.Lamports, lamports)}, customErr(1)
	}
	if from == to || lamports == 0 {
		return units, nil, nil
	}
	fa.Lamports -= lamports
	if err := b.write(from, fa); err != nil {
		return units, nil, err
	}
	ta, ok := b.get(b.p.keys[to])
	if !ok {
		ta = Account{Owner: systemProgram}
	}
	if ta.Lamports+lamports < ta.Lamports {
		return units, nil, namedErr("ArithmeticOverflow")
	}
	ta.Lamports += lamports
	if err := b.write(to, ta); err != nil {
		return units, nil, err
	}
	return units, nil, nil
}

func (b *bank) runATA(accts []int, data []byte) (uint64, []string, *instrErr) {
	idempotent := false
	switch {
	case len(data) == 0 || (len(data) == 1 && data[0] == 0):
	case len(data) == 1 && data[0] == 1:
		idempotent = true
	default:
		return 1000, nil, namedErr("InvalidInstructionData")
	}
	logs := []string{"Program log: Create"}
	if idempotent {
		logs = []string{"Program log: CreateIdempotent"}
	}
	if len(accts) < 6 {
		return 1000, logs, namedErr("NotEnoughAccountKeys")
	}
	k := func(i int) chain.Address { return b.p.keys[accts[i]] }
	payerIdx, ataIdx := accts[0], accts[1]
	wallet, mint, tprog := k(2), k(3), k(5)
	if tprog != tokenProgram && tprog != token2022Program {
		return 1500, logs, namedErr("IncorrectProgramId")
	}
	if AssociatedTokenAddress(wallet, mint, tprog) != k(1) {
		logs = append(logs, "Program log: Error: Associated address does not match seed derivation")
		return 1500, logs, namedErr("InvalidSeeds")
	}
	ma, ok := b.get(mint)
	if !ok || ma.Owner != tprog {
		return 3000, logs, namedErr("IncorrectProgramId")
	}
	m, err := token2022.DecodeMint(ma.Data)
	if err != nil {
		return 3000, logs, namedErr("InvalidAccountData")
	}
	existing, exists := b.get(k(1))
	if exists && (existing.Owner != systemProgram || len(existing.Data) > 0) {
		if !idempotent {
			logs = append(logs, fmt.Sprintf("Allocate: account Address { address: %s, base: None } already in use", k(1)))
			return 3000, logs, customErr(0)
		}
		acct, err := token2022.DecodeAccount(existing.Data)
		if existing.Owner != tprog || err != nil {
			return 3000, logs, namedErr("IllegalOwner")
		}
		if acct.Owner != wallet || acct.Mint != mint {
			return 3000, logs, namedErr("IllegalOwner")
		}
		return 3000, logs, nil
	}
	if !b.p.isSigner(payerIdx) {
		return 3000, logs, namedErr("MissingRequiredSignature")
	}
	acct := newTokenAccount(tprog, mint, m, wallet)
	adata := token2022.EncodeAccount(acct)
	rent := RentExemptMinimum(len(adata))
	payer, _ := b.get(b.p.keys[payerIdx])
	need := rent - min(rent, existing.Lamports)
	if payer.Lamports < need {
		logs = append(logs, fmt.Sprintf("Transfer: insufficient lamports %d, need %d", payer.Lamports, need))
		return 15000, logs, customErr(1)
	}
	payer.Lamports -= need
	if e := b.write(payerIdx, payer); e != nil {
		return 15000, logs, e
	}
	if e := b.write(ataIdx, Account{Owner: tprog, Lamports: existing.Lamports + need, Data: adata}); e != nil {
		return 15000, logs, e
	}
	if tprog == token2022Program {
		logs = append(logs, "Program log: Initialize the associated token account")
	}
	return 20000, logs, nil
}

// runToken executes Transfer (3), TransferChecked (12) and, on Token-2022,
// TransferCheckedWithFee (26, 1).
func (b *bank) runToken(prog chain.Address, accts []int, data []byte) (uint64, []string, *instrErr) {
	if len(data) == 0 {
		return 1000, nil, namedErr("InvalidInstructionData")
	}
	var (
		amount    uint64
		decimals  *uint8
		stated    *uint64
		mintIdx   = -1
		src, dst  int
		auth      int
		name      string
		need      int
		units     = uint64(4500)
		dataValid bool
	)
	switch data[0] {
	case 3:
		name, need, dataValid = "Transfer", 3, len(data) == 9
		if dataValid {
			amount = binary.LittleEndian.Uint64(data[1:])
		}
	case 12:
		name, need, dataValid = "TransferChecked", 4, len(data) == 10
		if dataValid {
			amount = binary.LittleEndian.Uint64(data[1:])
			d := data[9]
			decimals = &d
		}
		units = 6200
	case 26:
		if prog != token2022Program || len(data) < 2 || data[1] != 1 {
			return 1000, nil, namedErr("InvalidInstructionData")
		}
		name, need, dataValid = "TransferCheckedWithFee", 4, len(data) == 19
		if dataValid {
			amount = binary.LittleEndian.Uint64(data[2:])
			d := data[10]
			decimals = &d
			f := binary.LittleEndian.Uint64(data[11:])
			stated = &f
		}
		units = 8000
	default:
		return 1000, nil, namedErr("InvalidInstructionData")
	}
	logs := []string{"Program log: Instruction: " + name}
	if !dataValid {
		return 1000, logs, namedErr("InvalidInstructionData")
	}
	if len(accts) < need {
		return units, logs, namedErr("NotEnoughAccountKeys")
	}
	if need == 3 {
		src, dst, auth = accts[0], accts[1], accts[2]
	} else {
		src, mintIdx, dst, auth = accts[0], accts[1], accts[2], accts[3]
	}
	key := func(i int) chain.Address { return b.p.keys[i] }
	load := func(i int) (Account, token2022.Account, *instrErr) {
		a, ok := b.get(key(i))
		if !ok || a.Owner != prog {
			return a, token2022.Account{}, namedErr("IncorrectProgramId")
		}
		t, err := token2022.DecodeAccount(a.Data)
		if err != nil {
			return a, t, namedErr("InvalidAccountData")
		}
		if t.State == token2022.StateUninitialized {
			return a, t, customErr(9)
		}
		return a, t, nil
	}
	sa, st, e := load(src)
	if e != nil {
		return units, logs, e
	}
	da, dt, e := load(dst)
	if e != nil {
		return units, logs, e
	}
	if st.State == token2022.StateFrozen || dt.State == token2022.StateFrozen {
		return units, logs, customErr(17)
	}
	if st.Mint != dt.Mint {
		return units, logs, customErr(3)
	}
	mintAddr := st.Mint
	if mintIdx >= 0 && key(mintIdx) != mintAddr {
		return units, logs, customErr(3)
	}
	ma, ok := b.get(mintAddr)
	var mint token2022.Mint
	var mintOK bool
	if ok && ma.Owner == prog {
		if m, err := token2022.DecodeMint(ma.Data); err == nil {
			mint, mintOK = m, true
		}
	}
	if mintIdx >= 0 && !mintOK {
		return units, logs, namedErr("InvalidAccountData")
	}
	if decimals != nil && *decimals != mint.Decimals {
		return units, logs, customErr(18)
	}
	authKey := key(auth)
	switch {
	case authKey == st.Owner:
		if !b.p.isSigner(auth) {
			return units, logs, namedErr("MissingRequiredSignature")
		}
	case st.Delegate != nil && *st.Delegate == authKey:
		if !b.p.isSigner(auth) {
			return units, logs, namedErr("MissingRequiredSignature")
		}
		if st.DelegatedAmount < amount {
			return units, logs, customErr(1)
		}
		st.DelegatedAmount -= amount
		if st.DelegatedAmount == 0 {
			st.Delegate = nil
		}
	default:
		return units, logs, customErr(4)
	}
	if st.Amount < amount {
		return units, logs, customErr(1)
	}
	var fee uint64
	if mintOK {
		if _, nt := mint.Extension(token2022.ExtensionNonTransferable); nt {
			return units, logs, customErr(37)
		}
		if _, has := mint.TransferFeeConfig(); has {
			if mintIdx < 0 {
				return units, logs, customErr(31)
			}
			fee = transferFee(mint, b.epoch, amount)
		}
	}
	if stated != nil && *stated != fee {
		logs = append(logs, fmt.Sprintf("Program log: Calculated fee %d, received %d", fee, *stated))
		return units, logs, customErr(32)
	}
	if key(src) == key(dst) {
		return units, logs, nil
	}
	return units, logs, b.settleTransfer(src, dst, sa, da, st, dt, amount, fee)
}

// transferFee is the Token-2022 transfer fee on amount of mint at epoch:
// zero for a mint without a TransferFeeConfig (chain.md §5.4).
func transferFee(mint token2022.Mint, epoch, amount uint64) uint64 {
	cfg, has := mint.TransferFeeConfig()
	if !has {
		return 0
	}
	return cfg.FeeAt(epoch, amount)
}

// settleTransfer moves amount from the token account at instruction index
// src to the one at dst, as a token transfer does once its checks passed:
// the source loses amount, the destination gains amount − fee, and the fee
// is withheld on the destination's TransferFeeAmount.
func (b *bank) settleTransfer(src, dst int, sa, da Account, st, dt token2022.Account, amount, fee uint64) *instrErr {
	st.Amount -= amount
	if dt.Amount+(amount-fee) < dt.Amount {
		return customErr(14)
	}
	dt.Amount += amount - fee
	if fee > 0 {
		found := false
		for i, ext := range dt.Extensions {
			if w, ok := ext.(token2022.TransferFeeAmount); ok {
				w.Withheld += fee
				dt.Extensions[i] = w
				found = true
				break
			}
		}
		if !found {
			return namedErr("InvalidAccountData")
		}
	}
	sa.Data = token2022.EncodeAccount(st)
	da.Data = token2022.EncodeAccount(dt)
	if e := b.write(src, sa); e != nil {
		return e
	}
	return b.write(dst, da)
}

// commit stores b's changes in the cluster. The caller holds c.mu.
func (b *bank) commit() {
	for a, acct := range b.over {
		if acct == nil {
			delete(b.c.accounts, a)
			continue
		}
		b.c.accounts[a] = newStored(*acct)
	}
}

// txRecord is a landed transaction.
type txRecord struct {
	p          *parsedTx
	sig        string
	slot       uint64
	confirmAt  uint64
	finalizeAt uint64
	blockTime  int64
	res        *execResult
}

// level is the record's confirmation status at slot cur, with its
// confirmations (nil once finalized).
func (r *txRecord) level(cur uint64) (chain.Commitment, *uint64) {
	if cur >= r.finalizeAt {
		return chain.Finalized, nil
	}
	n := cur - r.slot
	if cur >= r.confirmAt {
		return chain.Confirmed, &n
	}
	return chain.Processed, &n
}

// visible reports whether r is seen at commitment cm at slot cur.
func (r *txRecord) visible(cm chain.Commitment, cur uint64) bool {
	switch cm {
	case chain.Processed:
		return true
	case chain.Confirmed:
		return cur >= r.confirmAt
	}
	return cur >= r.finalizeAt
}

// landLocked executes p and records it in the current slot. The caller
// holds c.mu for writing and has checked the fee.
func (c *Cluster) landLocked(p *parsedTx) *txRecord {
	force := false
	if c.failNext > 0 {
		c.failNext--
		force = true
	}
	res := c.executeLocked(p, force)
	res.bank.commit()
	res.bank = nil
	confirmAt := c.slot + c.cfg.ConfirmAfter + c.confirmXtra
	r := &txRecord{
		p:          p,
		sig:        p.sig(),
		slot:       c.slot,
		confirmAt:  confirmAt,
		finalizeAt: max(c.slot+c.cfg.FinalizeAfter, confirmAt),
		blockTime:  c.BlockTime(c.slot).Unix(),
		res:        res,
	}
	c.txs[r.sig] = r
	for _, k := range p.keys {
		c.byAddr[k] = append(c.byAddr[k], r)
	}
	c.txCount++
	return r
}

// simulationValue is the RpcSimulateTransactionResult of a run.
func simulationValue(err *txErr, logs []string, units uint64, replacement any) map[string]any {
	if logs == nil {
		logs = []string{}
	}
	return map[string]any{
		"err":                  err.JSON(),
		"logs":                 logs,
		"accounts":             nil,
		"unitsConsumed":        units,
		"returnData":           nil,
		"innerInstructions":    nil,
		"replacementBlockhash": replacement,
	}
}

func preflightError(e *txErr, logs []string, units uint64) *rpcError {
	return &rpcError{Code: -32002, Message: e.preflightMessage(), Data: simulationValue(e, logs, units, nil)}
}

func (c *Cluster) rpcSendTransaction(params []json.RawMessage) (any, *rpcError) {
	encoded, rerr := argString(params, 0)
	if rerr != nil {
		return nil, rerr
	}
	cfg, rerr := argConfig(params, 1)
	if rerr != nil {
		return nil, rerr
	}
	p, rerr := decodeTx(encoded, cfg.Encoding)
	if rerr != nil {
		return nil, rerr
	}
	// A node resolves lookups while it sanitizes, before it verifies
	// signatures (outside the write lock); they are resolved again under it.
	c.mu.RLock()
	rerr = c.loadAddressesLocked(p)
	c.mu.RUnlock()
	if rerr != nil {
		return nil, rerr
	}
	if !p.verify() {
		return nil, &rpcError{Code: -32003, Message: "Transaction signature verification failure"}
	}
	if cfg.PreflightCommitment != "" {
		if _, rerr := parseCommitment(cfg.PreflightCommitment); rerr != nil {
			return nil, rerr
		}
	}
	sig := p.sig()
	c.mu.Lock()
	defer c.mu.Unlock()
	if rerr := c.loadAddressesLocked(p); rerr != nil {
		return nil, rerr
	}
	if cfg.MinContextSlot != nil && c.slot < *cfg.MinContextSlot {
		return nil, &rpcError{Code: -32016, Message: "Minimum context slot has not been reached", Data: map[string]any{"contextSlot": c.slot}}
	}
	_, dup := c.txs[sig]
	if !cfg.SkipPreflight {
		if dup {
			return nil, preflightError(&txErr{unit: "AlreadyProcessed"}, nil, 0)
		}
		if !c.blockhashValidLocked(p.hash) {
			return nil, preflightError(&txErr{unit: "BlockhashNotFound"}, nil, 0)
		}
		if e := c.checkFeeLocked(p); e != nil {
			return nil, preflightError(e, nil, 0)
		}
		if res := c.executeLocked(p, false); res.err != nil {
			return nil, preflightError(res.err, res.logs, res.units)
		}
	}
	if c.dropNext > 0 {
		c.dropNext--
		return sig, nil
	}
	if dup || !c.blockhashValidLocked(p.hash) || c.checkFeeLocked(p) != nil {
		return sig, nil // never lands, as a node would drop it
	}
	c.landLocked(p)
	return sig, nil
}

func (c *Cluster) rpcSimulateTransaction(params []json.RawMessage) (any, *rpcError) {
	encoded, rerr := argString(params, 0)
	if rerr != nil {
		return nil, rerr
	}
	cfg, rerr := argConfig(params, 1)
	if rerr != nil {
		return nil, rerr
	}
	if cfg.SigVerify && cfg.ReplaceRecentBlockhash {
		return nil, invalidParams("sigVerify may not be used with replaceRecentBlockhash")
	}
	p, rerr := decodeTx(encoded, cfg.Encoding)
	if rerr != nil {
		return nil, rerr
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if rerr := c.loadAddressesLocked(p); rerr != nil {
		return nil, rerr
	}
	if cfg.SigVerify && !p.verify() {
		return nil, &rpcError{Code: -32003, Message: "Transaction signature verification failure"}
	}
	slot, rerr := c.contextSlotLocked(cfg)
	if rerr != nil {
		return nil, rerr
	}
	var replacement any
	if cfg.ReplaceRecentBlockhash {
		h, hs := c.latestBlockhashLocked(c.slot)
		replacement = map[string]any{"blockhash": h, "lastValidBlockHeight": hs + MaxBlockhashAge}
	} else if !c.blockhashValidLocked(p.hash) {
		return withContext(slot, simulationValue(&txErr{unit: "BlockhashNotFound"}, nil, 0, nil)), nil
	}
	if e := c.checkFeeLocked(p); e != nil {
		return withContext(slot, simulationValue(e, nil, 0, replacement)), nil
	}
	res := c.executeLocked(p, false)
	return withContext(slot, simulationValue(res.err, res.logs, res.units, replacement)), nil
}

func (c *Cluster) rpcGetSignatureStatuses(params []json.RawMessage) (any, *rpcError) {
	if err := required(params, 0); err != nil {
		return nil, err
	}
	var sigs []string
	if err := json.Unmarshal(params[0], &sigs); err != nil {
		return nil, invalidParams("Invalid params: expected an array of signatures")
	}
	if len(sigs) > 256 {
		return nil, invalidParams("Too many inputs provided; max 256")
	}
	for _, s := range sigs {
		if _, err := solana.SignatureFromBase58(s); err != nil {
			return nil, invalidParam("Invalid")
		}
	}
	if _, err := argConfig(params, 1); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]any, len(sigs))
	for i, s := range sigs {
		r, ok := c.txs[s]
		if !ok {
			continue
		}
		lvl, conf := r.level(c.slot)
		status := map[string]any{"Ok": nil}
		if r.res.err != nil {
			status = map[string]any{"Err": r.res.err.JSON()}
		}
		out[i] = map[string]any{
			"slot":               r.slot,
			"confirmations":      conf,
			"err":                r.res.err.JSON(),
			"status":             status,
			"confirmationStatus": string(lvl),
		}
	}
	return withContext(c.slot, out), nil
}

// atLeastConfirmed parses a commitment refusing processed.
func atLeastConfirmed(s string) (chain.Commitment, *rpcError) {
	cm, err := parseCommitment(s)
	if err != nil {
		return "", err
	}
	if cm == chain.Processed {
		return "", invalidParams("Method does not support commitment below `confirmed`")
	}
	return cm, nil
}

func (c *Cluster) rpcGetTransaction(params []json.RawMessage) (any, *rpcError) {
	sig, rerr := argString(params, 0)
	if rerr != nil {
		return nil, rerr
	}
	if _, err := solana.SignatureFromBase58(sig); err != nil {
		return nil, invalidParam("Invalid")
	}
	// The config may also be a bare encoding string (legacy form).
	var cfg config
	if len(params) > 1 {
		var enc string
		if json.Unmarshal(params[1], &enc) == nil {
			cfg.Encoding = enc
		} else if cfg, rerr = argConfig(params, 1); rerr != nil {
			return nil, rerr
		}
	}
	cm, rerr := atLeastConfirmed(cfg.Commitment)
	if rerr != nil {
		return nil, rerr
	}
	switch cfg.Encoding {
	case "", "json", "base64", "base58":
	case "jsonParsed":
		return nil, invalidParams("Invalid params: jsonParsed transactions are not supported by chaintest")
	default:
		return nil, invalidParams("Invalid params: unknown variant `" + cfg.Encoding + "`, expected one of `binary`, `base64`, `base58`, `json`, `jsonParsed`")
	}
	c.mu.RLock()
	r, ok := c.txs[sig]
	cur := c.slot
	c.mu.RUnlock()
	if !ok || !r.visible(cm, cur) {
		return nil, nil
	}
	if r.p.version >= 0 && (cfg.MaxSupportedTransactionVersion == nil || *cfg.MaxSupportedTransactionVersion < uint64(r.p.version)) {
		return nil, &rpcError{Code: -32015, Message: fmt.Sprintf("Transaction version (%d) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": %d", r.p.version, r.p.version)}
	}
	out := map[string]any{
		"slot":        r.slot,
		"blockTime":   r.blockTime,
		"transaction": txJSON(r.p, cfg.Encoding),
		"meta":        metaJSON(r.p, r.res),
	}
	if cfg.MaxSupportedTransactionVersion != nil {
		if r.p.version < 0 {
			out["version"] = "legacy"
		} else {
			out["version"] = r.p.version
		}
	}
	return out, nil
}

// txJSON is the transaction in the requested encoding.
func txJSON(p *parsedTx, enc string) any {
	switch enc {
	case "base64":
		return []string{base64.StdEncoding.EncodeToString(p.raw), "base64"}
	case "base58":
		return []string{solana.Base58(p.raw).String(), "base58"}
	}
	m := &p.tx.Message
	sigs := make([]string, len(p.sigs))
	for i, s := range p.sigs {
		sigs[i] = s.String()
	}
	keys := addressStrings(p.keys[:p.static])
	ixs := make([]map[string]any, len(m.Instructions))
	for i, ix := range m.Instructions {
		accts := make([]int, len(ix.Accounts))
		for j, a := range ix.Accounts {
			accts[j] = int(a)
		}
		ixs[i] = map[string]any{
			"programIdIndex": ix.ProgramIDIndex,
			"accounts":       accts,
			"data":           solana.Base58(ix.Data).String(),
			"stackHeight":    nil,
		}
	}
	msg := map[string]any{
		"accountKeys": keys,
		"header": map[string]any{
			"numRequiredSignatures":       m.Header.NumRequiredSignatures,
			"numReadonlySignedAccounts":   m.Header.NumReadonlySignedAccounts,
			"numReadonlyUnsignedAccounts": m.Header.NumReadonlyUnsignedAccounts,
		},
		"recentBlockhash": p.hash,
		"instructions":    ixs,
	}
	if p.version >= 0 {
		lookups := make([]map[string]any, len(m.AddressTableLookups))
		for i, l := range m.AddressTableLookups {
			lookups[i] = map[string]any{
				"accountKey":      l.AccountKey.String(),
				"writableIndexes": indexes(l.WritableIndexes),
				"readonlyIndexes": indexes(l.ReadonlyIndexes),
			}
		}
		msg["addressTableLookups"] = lookups
	}
	return map[string]any{"signatures": sigs, "message": msg}
}

// addressStrings is the base58 form of each address.
func addressStrings(as []chain.Address) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

// indexes is a lookup's indexes as JSON numbers (a []uint8 would marshal
// as base64).
func indexes(b []uint8) []int {
	out := make([]int, len(b))
	for i, v := range b {
		out[i] = int(v)
	}
	return out
}

// metaJSON is a landed transaction's meta; balances index the full key
// list (static keys, then loaded addresses).
func metaJSON(p *parsedTx, r *execResult) map[string]any {
	status := map[string]any{"Ok": nil}
	if r.err != nil {
		status = map[string]any{"Err": r.err.JSON()}
	}
	logs := r.logs
	if logs == nil {
		logs = []string{}
	}
	return map[string]any{
		"err":                  r.err.JSON(),
		"status":               status,
		"fee":                  r.fee,
		"preBalances":          r.pre,
		"postBalances":         r.post,
		"innerInstructions":    []any{},
		"logMessages":          logs,
		"preTokenBalances":     r.preTok,
		"postTokenBalances":    r.postTk,
		"rewards":              []any{},
		"loadedAddresses":      map[string]any{"writable": addressStrings(p.loadedW), "readonly": addressStrings(p.loadedR)},
		"computeUnitsConsumed": r.units,
	}
}

func (c *Cluster) rpcGetSignaturesForAddress(params []json.RawMessage) (any, *rpcError) {
	addr, rerr := argAddress(params, 0)
	if rerr != nil {
		return nil, rerr
	}
	cfg, rerr := argConfig(params, 1)
	if rerr != nil {
		return nil, rerr
	}
	cm, rerr := atLeastConfirmed(cfg.Commitment)
	if rerr != nil {
		return nil, rerr
	}
	limit := 1000
	if cfg.Limit != nil {
		limit = *cfg.Limit
		if limit < 1 || limit > 1000 {
			return nil, invalidParams("Invalid limit; max 1000")
		}
	}
	for _, s := range []string{cfg.Before, cfg.Until} {
		if s != "" {
			if _, err := solana.SignatureFromBase58(s); err != nil {
				return nil, invalidParam("Invalid")
			}
		}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if cfg.MinContextSlot != nil && c.commitmentSlotLocked(cm) < *cfg.MinContextSlot {
		return nil, &rpcError{Code: -32016, Message: "Minimum context slot has not been reached", Data: map[string]any{"contextSlot": c.commitmentSlotLocked(cm)}}
	}
	list := c.byAddr[addr]
	out := []map[string]any{}
	started := cfg.Before == ""
	for i := len(list) - 1; i >= 0 && len(out) < limit; i-- {
		r := list[i]
		if !started {
			if r.sig == cfg.Before {
				started = true
			}
			continue
		}
		if cfg.Until != "" && r.sig == cfg.Until {
			break
		}
		if !r.visible(cm, c.slot) {
			continue
		}
		lvl, _ := r.level(c.slot)
		out = append(out, map[string]any{
			"signature":          r.sig,
			"slot":               r.slot,
			"err":                r.res.err.JSON(),
			"memo":               r.res.memo,
			"blockTime":          r.blockTime,
			"confirmationStatus": string(lvl),
		})
	}
	return out, nil
}
