package solanarpc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain"
)

// MaxSignatureStatuses is the most signatures one GetSignatureStatuses
// call may ask about (a node refuses more).
const MaxSignatureStatuses = 256

// MaxSignaturesLimit is the largest page GetSignaturesForAddress may ask
// for, and the page size a zero SignaturesOptions.Limit means.
const MaxSignaturesLimit = 1000

// GetLatestBlockhash returns the newest blockhash of the node's bank at
// commitment and the last block height at which a transaction using it can
// land (getLatestBlockhash). Slot is the answer's context slot.
func (c *Client) GetLatestBlockhash(ctx context.Context, commitment chain.Commitment) (chain.Blockhash, error) {
	const method = "getLatestBlockhash"
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return chain.Blockhash{}, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	out, err := c.rpc.GetLatestBlockhash(ctx, cm)
	if err != nil {
		return chain.Blockhash{}, c.fail(method, err)
	}
	if out == nil || out.Value == nil {
		return chain.Blockhash{}, c.malformed(method, "null result")
	}
	if out.Value.Blockhash.IsZero() {
		return chain.Blockhash{}, c.malformed(method, "zero blockhash")
	}
	return chain.Blockhash{
		Hash:                 out.Value.Blockhash.String(),
		LastValidBlockHeight: out.Value.LastValidBlockHeight,
		Slot:                 out.Context.Slot,
	}, nil
}

// GetBlockHeight returns the block height of the node's bank at commitment
// (getBlockHeight).
func (c *Client) GetBlockHeight(ctx context.Context, commitment chain.Commitment) (uint64, error) {
	const method = "getBlockHeight"
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return 0, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	// A pointer tells a null result from zero (see GetSlot).
	var height *uint64
	if err := c.rpc.RPCCallForInto(ctx, &height, method, []any{rpc.M{"commitment": cm}}); err != nil {
		return 0, c.fail(method, err)
	}
	if height == nil {
		return 0, c.malformed(method, "null result")
	}
	return *height, nil
}

// IsBlockhashValid reports whether blockhash (base58) is still usable for
// a transaction in the node's bank at commitment (isBlockhashValid). A
// blockhash that is not base58 of 32 bytes fails before any request.
func (c *Client) IsBlockhashValid(ctx context.Context, blockhash string, commitment chain.Commitment) (bool, error) {
	const method = "isBlockhashValid"
	h, err := solana.HashFromBase58(blockhash)
	if err != nil {
		return false, fmt.Errorf("solanarpc: %s: blockhash %q is not base58 of 32 bytes", method, truncate(blockhash, 64))
	}
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return false, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	var out *struct {
		Value *bool `json:"value"`
	}
	if err := c.rpc.RPCCallForInto(ctx, &out, method, []any{h.String(), rpc.M{"commitment": cm}}); err != nil {
		return false, c.fail(method, err)
	}
	if out == nil || out.Value == nil {
		return false, c.malformed(method, "null result")
	}
	return *out.Value, nil
}

// SendTransaction submits the signed, serialized transaction signedTx
// (sendTransaction, base64 encoding) and returns the signature the node
// answered, in base58. opts.PreflightCommitment is always sent (empty
// means finalized), skipPreflight too. The transaction's bytes are never
// logged nor put in an error.
//
// A node that refuses the transaction answers a JSON-RPC error, returned
// as a *chain.RPCError: -32002 when the preflight simulation failed (Data
// holds the simulation result, whose "err" says why: "BlockhashNotFound",
// "AlreadyProcessed", {"InstructionError":[i,{"Custom":n}]} ...), -32003
// for a bad signature, -32602 for bytes that do not decode. An answer whose
// signature is not the transaction's first signature is malformed.
func (c *Client) SendTransaction(ctx context.Context, signedTx []byte, opts chain.SendOptions) (string, error) {
	const method = "sendTransaction"
	if len(signedTx) == 0 {
		return "", fmt.Errorf("solanarpc: %s: empty transaction", method)
	}
	cm, err := commitmentType(method, opts.PreflightCommitment)
	if err != nil {
		return "", err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	sig, err := c.rpc.SendEncodedTransactionWithOpts(ctx, base64.StdEncoding.EncodeToString(signedTx), rpc.TransactionOpts{
		Encoding:            solana.EncodingBase64,
		SkipPreflight:       opts.SkipPreflight,
		PreflightCommitment: cm,
	})
	if err != nil {
		return "", c.fail(method, err)
	}
	if sig.IsZero() {
		return "", c.malformed(method, "zero signature")
	}
	if want, ok := firstSignature(signedTx); ok && want != sig {
		return "", c.malformed(method, "the answered signature is not the transaction's first signature")
	}
	return sig.String(), nil
}

// GetSignatureStatuses returns the status of each signature (base58), in
// order (getSignatureStatuses). A nil entry is a signature the node does
// not know: not landed (yet), dropped, or, without searchHistory, older
// than the node's status cache. At most MaxSignatureStatuses signatures may
// be asked at once; more, or one that is not base58 of 64 bytes, fails
// before any request. No signatures give an empty answer without a
// request.
func (c *Client) GetSignatureStatuses(ctx context.Context, signatures []string, searchHistory bool) ([]*chain.SignatureStatus, error) {
	const method = "getSignatureStatuses"
	if len(signatures) > MaxSignatureStatuses {
		return nil, fmt.Errorf("solanarpc: %s: %d signatures, at most %d per call", method, len(signatures), MaxSignatureStatuses)
	}
	if len(signatures) == 0 {
		return []*chain.SignatureStatus{}, nil
	}
	sigs := make([]string, len(signatures))
	for i, s := range signatures {
		sig, err := solana.SignatureFromBase58(s)
		if err != nil {
			return nil, fmt.Errorf("solanarpc: %s: signature %d %q is not base58 of 64 bytes", method, i, truncate(s, 100))
		}
		sigs[i] = sig.String()
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	var out *struct {
		Value []*wireStatus `json:"value"`
	}
	err := c.rpc.RPCCallForInto(ctx, &out, method, []any{sigs, rpc.M{"searchTransactionHistory": searchHistory}})
	if err != nil {
		return nil, c.fail(method, err)
	}
	if out == nil || out.Value == nil {
		return nil, c.malformed(method, "null result")
	}
	if len(out.Value) != len(sigs) {
		return nil, c.malformed(method, fmt.Sprintf("%d statuses for %d signatures", len(out.Value), len(sigs)))
	}
	res := make([]*chain.SignatureStatus, len(sigs))
	for i, w := range out.Value {
		if w == nil {
			continue
		}
		st, err := w.status()
		if err != nil {
			return nil, c.malformed(method, fmt.Sprintf("status %d: %v", i, err))
		}
		res[i] = st
	}
	return res, nil
}

// wireStatus is one getSignatureStatuses entry.
type wireStatus struct {
	Slot               *uint64         `json:"slot"`
	Confirmations      *uint64         `json:"confirmations"`
	Err                json.RawMessage `json:"err"`
	ConfirmationStatus *string         `json:"confirmationStatus"`
}

func (w *wireStatus) status() (*chain.SignatureStatus, error) {
	if w.Slot == nil {
		return nil, errors.New("no slot")
	}
	lvl, err := confirmationStatus(w.ConfirmationStatus)
	if err != nil {
		return nil, err
	}
	// A node reports no confirmations exactly when the slot is rooted.
	if (lvl == chain.Finalized) != (w.Confirmations == nil) {
		return nil, fmt.Errorf("confirmationStatus %s does not agree with confirmations", lvl)
	}
	txErr, err := compactJSON(w.Err)
	if err != nil {
		return nil, err
	}
	st := &chain.SignatureStatus{Slot: *w.Slot, Err: txErr, Status: lvl}
	if w.Confirmations != nil {
		n := *w.Confirmations
		st.Confirmations = &n
	}
	return st, nil
}

// GetTransaction returns the landed transaction with signature (base58) as
// the node's bank at commitment holds it (getTransaction, base64 encoding,
// maxSupportedTransactionVersion 0). commitment must be confirmed or
// finalized (empty means finalized): a node refuses processed, so it fails
// before any request, as does a signature that is not base58 of 64 bytes.
// A null answer fails with chain.ErrTransactionNotFound.
//
// The message is decoded with solana-go: AccountKeys are its static keys,
// LoadedWritable and LoadedReadonly meta.loadedAddresses (whose sizes must
// match the lookups'), and instructions' program ids and accounts, token
// balances' accounts and the lamport balances (whose lengths must match)
// are resolved over the full list, Keys(): the static keys, then the loaded
// writable, then the loaded read-only addresses. Err is meta.err as
// compact JSON, "" when null.
func (c *Client) GetTransaction(ctx context.Context, signature string, commitment chain.Commitment) (chain.Transaction, error) {
	const method = "getTransaction"
	sig, err := solana.SignatureFromBase58(signature)
	if err != nil {
		return chain.Transaction{}, fmt.Errorf("solanarpc: %s: signature %q is not base58 of 64 bytes", method, truncate(signature, 100))
	}
	cm, err := historyCommitment(method, commitment)
	if err != nil {
		return chain.Transaction{}, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	var out *wireTransaction
	err = c.rpc.RPCCallForInto(ctx, &out, method, []any{sig.String(), rpc.M{
		"encoding":                       solana.EncodingBase64,
		"commitment":                     cm,
		"maxSupportedTransactionVersion": 0,
	}})
	if err != nil {
		return chain.Transaction{}, c.fail(method, err)
	}
	if out == nil {
		return chain.Transaction{}, fmt.Errorf("solanarpc: %s %s: %w", method, sig, chain.ErrTransactionNotFound)
	}
	tx, err := out.transaction(sig)
	if err != nil {
		return chain.Transaction{}, c.malformed(method, err.Error())
	}
	return tx, nil
}

// wireTransaction is a getTransaction result in base64 encoding.
type wireTransaction struct {
	Slot        *uint64         `json:"slot"`
	BlockTime   *int64          `json:"blockTime"`
	Transaction json.RawMessage `json:"transaction"`
	Meta        *wireMeta       `json:"meta"`
	Version     json.RawMessage `json:"version"`
}

type wireMeta struct {
	Err               json.RawMessage     `json:"err"`
	Fee               *uint64             `json:"fee"`
	PreBalances       []uint64            `json:"preBalances"`
	PostBalances      []uint64            `json:"postBalances"`
	PreTokenBalances  []*wireTokenBalance `json:"preTokenBalances"`
	PostTokenBalances []*wireTokenBalance `json:"postTokenBalances"`
	LogMessages       []string            `json:"logMessages"`
	LoadedAddresses   *struct {
		Writable []solana.PublicKey `json:"writable"`
		Readonly []solana.PublicKey `json:"readonly"`
	} `json:"loadedAddresses"`
}

type wireTokenBalance struct {
	AccountIndex  *uint64           `json:"accountIndex"`
	Mint          *solana.PublicKey `json:"mint"`
	Owner         *solana.PublicKey `json:"owner"`
	ProgramID     *solana.PublicKey `json:"programId"`
	UITokenAmount *struct {
		Amount   string `json:"amount"`
		Decimals *uint8 `json:"decimals"`
	} `json:"uiTokenAmount"`
}

// transaction checks the answer against the signature asked for and
// converts it.
func (w *wireTransaction) transaction(sig solana.Signature) (chain.Transaction, error) {
	if w.Slot == nil {
		return chain.Transaction{}, errors.New("no slot")
	}
	if w.Meta == nil {
		return chain.Transaction{}, errors.New("no meta")
	}
	m := w.Meta
	if m.Fee == nil {
		return chain.Transaction{}, errors.New("no meta.fee")
	}
	var pair []string
	if err := json.Unmarshal(w.Transaction, &pair); err != nil || len(pair) != 2 || pair[1] != string(solana.EncodingBase64) {
		return chain.Transaction{}, errors.New("transaction is not a [content, \"base64\"] pair")
	}
	raw, err := base64.StdEncoding.DecodeString(pair[0])
	if err != nil {
		return chain.Transaction{}, errors.New("transaction is not base64")
	}
	tx, err := decodeTransaction(raw)
	if err != nil {
		return chain.Transaction{}, err
	}
	if tx.Signatures[0] != sig {
		return chain.Transaction{}, errors.New("the transaction's first signature is not the one asked for")
	}
	msg := &tx.Message
	versioned := msg.IsVersioned()
	if err := checkVersion(w.Version, versioned); err != nil {
		return chain.Transaction{}, err
	}

	// The full key list: static keys, then the lookups' loaded addresses.
	var wantWritable, wantReadonly int
	for _, l := range msg.AddressTableLookups {
		wantWritable += len(l.WritableIndexes)
		wantReadonly += len(l.ReadonlyIndexes)
	}
	keys := make([]chain.Address, 0, len(msg.AccountKeys)+wantWritable+wantReadonly)
	for _, k := range msg.AccountKeys {
		keys = append(keys, chain.Address(k))
	}
	static := len(keys)
	var gotWritable, gotReadonly int
	if la := m.LoadedAddresses; la != nil {
		gotWritable, gotReadonly = len(la.Writable), len(la.Readonly)
		for _, k := range la.Writable {
			keys = append(keys, chain.Address(k))
		}
		for _, k := range la.Readonly {
			keys = append(keys, chain.Address(k))
		}
	}
	if gotWritable != wantWritable || gotReadonly != wantReadonly {
		return chain.Transaction{}, fmt.Errorf("meta.loadedAddresses hold %d writable and %d read-only addresses, the lookups %d and %d",
			gotWritable, gotReadonly, wantWritable, wantReadonly)
	}

	ixs := make([]chain.Instruction, len(msg.Instructions))
	for i, ix := range msg.Instructions {
		if int(ix.ProgramIDIndex) >= len(keys) {
			return chain.Transaction{}, fmt.Errorf("instruction %d: program index %d outside %d keys", i, ix.ProgramIDIndex, len(keys))
		}
		accts := make([]chain.Address, len(ix.Accounts))
		for j, a := range ix.Accounts {
			if int(a) >= len(keys) {
				return chain.Transaction{}, fmt.Errorf("instruction %d: account index %d outside %d keys", i, a, len(keys))
			}
			accts[j] = keys[a]
		}
		ixs[i] = chain.Instruction{
			ProgramID: keys[ix.ProgramIDIndex],
			Accounts:  accts,
			Data:      bytes.Clone([]byte(ix.Data)),
		}
		if ixs[i].Data == nil {
			ixs[i].Data = []byte{}
		}
	}

	if len(m.PreBalances) != len(keys) || len(m.PostBalances) != len(keys) {
		return chain.Transaction{}, fmt.Errorf("meta.preBalances and postBalances hold %d and %d balances for %d keys",
			len(m.PreBalances), len(m.PostBalances), len(keys))
	}
	txErr, err := compactJSON(m.Err)
	if err != nil {
		return chain.Transaction{}, fmt.Errorf("meta.err: %v", err)
	}
	pre, err := tokenBalances(m.PreTokenBalances, keys)
	if err != nil {
		return chain.Transaction{}, fmt.Errorf("preTokenBalances: %v", err)
	}
	post, err := tokenBalances(m.PostTokenBalances, keys)
	if err != nil {
		return chain.Transaction{}, fmt.Errorf("postTokenBalances: %v", err)
	}
	bt, err := blockTime(w.BlockTime)
	if err != nil {
		return chain.Transaction{}, err
	}
	var logs []string
	if m.LogMessages != nil {
		logs = append([]string{}, m.LogMessages...)
	}
	return chain.Transaction{
		Signature:         sig.String(),
		Slot:              *w.Slot,
		BlockTime:         bt,
		Err:               txErr,
		Fee:               *m.Fee,
		AccountKeys:       keys[:static:static],
		NumSigners:        int(msg.Header.NumRequiredSignatures),
		LoadedWritable:    slices.Clone(keys[static : static+wantWritable]),
		LoadedReadonly:    slices.Clone(keys[static+wantWritable:]),
		RecentBlockhash:   msg.RecentBlockhash.String(),
		Instructions:      ixs,
		PreBalances:       slices.Clone(m.PreBalances),
		PostBalances:      slices.Clone(m.PostBalances),
		PreTokenBalances:  pre,
		PostTokenBalances: post,
		LogMessages:       logs,
	}, nil
}

// decodeTransaction decodes a serialized transaction with solana-go and
// accepts it only if it is canonical: re-encoding gives the same bytes
// (no trailing bytes, a legacy or v0 message), as many signatures as the
// header requires, and at least one.
func decodeTransaction(raw []byte) (*solana.Transaction, error) {
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("transaction does not decode: %v", err)
	}
	back, err := tx.MarshalBinary()
	if err != nil || !bytes.Equal(back, raw) {
		return nil, errors.New("transaction is not a canonical legacy or v0 transaction")
	}
	h := tx.Message.Header
	if len(tx.Signatures) == 0 || len(tx.Signatures) != int(h.NumRequiredSignatures) {
		return nil, fmt.Errorf("transaction has %d signatures, its header requires %d", len(tx.Signatures), h.NumRequiredSignatures)
	}
	if int(h.NumRequiredSignatures) > len(tx.Message.AccountKeys) {
		return nil, fmt.Errorf("transaction requires %d signers among %d keys", h.NumRequiredSignatures, len(tx.Message.AccountKeys))
	}
	return tx, nil
}

// checkVersion checks the answer's version against the decoded message:
// "legacy" for a legacy message, 0 for a v0 one. An answer without a
// version is left to the decoded message.
func checkVersion(v json.RawMessage, versioned bool) error {
	s := string(bytes.TrimSpace(v))
	switch {
	case s == "" || s == "null":
		return nil
	case s == `"legacy"` && !versioned, s == "0" && versioned:
		return nil
	}
	return fmt.Errorf("version %s does not match the message (versioned %t)", truncate(s, 16), versioned)
}

// tokenBalances converts meta token balances, resolving each account over
// keys.
func tokenBalances(in []*wireTokenBalance, keys []chain.Address) ([]chain.TokenBalance, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]chain.TokenBalance, len(in))
	for i, b := range in {
		if b == nil {
			return nil, fmt.Errorf("entry %d is null", i)
		}
		if b.AccountIndex == nil || *b.AccountIndex >= uint64(len(keys)) {
			return nil, fmt.Errorf("entry %d: account index missing or outside %d keys", i, len(keys))
		}
		if b.Mint == nil {
			return nil, fmt.Errorf("entry %d: no mint", i)
		}
		if b.UITokenAmount == nil || b.UITokenAmount.Decimals == nil {
			return nil, fmt.Errorf("entry %d: no uiTokenAmount", i)
		}
		amount, err := parseU64(b.UITokenAmount.Amount)
		if err != nil {
			return nil, fmt.Errorf("entry %d: amount: %v", i, err)
		}
		tb := chain.TokenBalance{
			AccountIndex: int(*b.AccountIndex),
			Account:      keys[*b.AccountIndex],
			Mint:         chain.Address(*b.Mint),
			Amount:       amount,
			Decimals:     *b.UITokenAmount.Decimals,
		}
		if b.Owner != nil {
			tb.Owner = chain.Address(*b.Owner)
		}
		if b.ProgramID != nil {
			tb.ProgramID = chain.Address(*b.ProgramID)
		}
		out[i] = tb
	}
	return out, nil
}

// GetSignaturesForAddress returns the signatures of transactions that
// touched addr, newest first, as the node's bank at commitment holds them
// (getSignaturesForAddress). commitment must be confirmed or finalized
// (empty means finalized). opts.Limit is 1 to MaxSignaturesLimit, zero
// meaning MaxSignaturesLimit, and is always sent; Before and Until, when
// set, must be base58 signatures. Bad options fail before any request.
func (c *Client) GetSignaturesForAddress(ctx context.Context, addr chain.Address, opts chain.SignaturesOptions, commitment chain.Commitment) ([]chain.SignatureInfo, error) {
	const method = "getSignaturesForAddress"
	cm, err := historyCommitment(method, commitment)
	if err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit == 0 {
		limit = MaxSignaturesLimit
	}
	if limit < 1 || limit > MaxSignaturesLimit {
		return nil, fmt.Errorf("solanarpc: %s: limit %d outside 1..%d", method, opts.Limit, MaxSignaturesLimit)
	}
	cfg := rpc.M{"commitment": cm, "limit": limit}
	for _, b := range []struct{ key, val string }{{"before", opts.Before}, {"until", opts.Until}} {
		if b.val == "" {
			continue
		}
		s, err := solana.SignatureFromBase58(b.val)
		if err != nil {
			return nil, fmt.Errorf("solanarpc: %s: %s %q is not base58 of 64 bytes", method, b.key, truncate(b.val, 100))
		}
		cfg[b.key] = s.String()
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	var out *[]*wireSignatureInfo
	if err := c.rpc.RPCCallForInto(ctx, &out, method, []any{addr.String(), cfg}); err != nil {
		return nil, c.fail(method, err)
	}
	if out == nil {
		return nil, c.malformed(method, "null result")
	}
	if len(*out) > limit {
		return nil, c.malformed(method, fmt.Sprintf("%d entries for a limit of %d", len(*out), limit))
	}
	res := make([]chain.SignatureInfo, len(*out))
	for i, w := range *out {
		if w == nil {
			return nil, c.malformed(method, fmt.Sprintf("entry %d is null", i))
		}
		info, err := w.info()
		if err != nil {
			return nil, c.malformed(method, fmt.Sprintf("entry %d: %v", i, err))
		}
		res[i] = info
	}
	return res, nil
}

// wireSignatureInfo is one getSignaturesForAddress entry.
type wireSignatureInfo struct {
	Signature          *solana.Signature `json:"signature"`
	Slot               *uint64           `json:"slot"`
	Err                json.RawMessage   `json:"err"`
	Memo               *string           `json:"memo"`
	BlockTime          *int64            `json:"blockTime"`
	ConfirmationStatus *string           `json:"confirmationStatus"`
}

func (w *wireSignatureInfo) info() (chain.SignatureInfo, error) {
	if w.Signature == nil || w.Signature.IsZero() {
		return chain.SignatureInfo{}, errors.New("no signature")
	}
	if w.Slot == nil {
		return chain.SignatureInfo{}, errors.New("no slot")
	}
	lvl, err := confirmationStatus(w.ConfirmationStatus)
	if err != nil {
		return chain.SignatureInfo{}, err
	}
	txErr, err := compactJSON(w.Err)
	if err != nil {
		return chain.SignatureInfo{}, err
	}
	bt, err := blockTime(w.BlockTime)
	if err != nil {
		return chain.SignatureInfo{}, err
	}
	info := chain.SignatureInfo{
		Signature: w.Signature.String(),
		Slot:      *w.Slot,
		BlockTime: bt,
		Err:       txErr,
		Status:    lvl,
	}
	if w.Memo != nil {
		info.Memo = *w.Memo
	}
	return info, nil
}

// historyCommitment maps a commitment for getTransaction and
// getSignaturesForAddress, which a node serves at confirmed or finalized
// only; empty means finalized.
func historyCommitment(method string, cm chain.Commitment) (rpc.CommitmentType, error) {
	if cm == chain.Processed {
		return "", fmt.Errorf("solanarpc: %s: commitment %q is not supported (confirmed or finalized only)", method, cm)
	}
	return commitmentType(method, cm)
}

// confirmationStatus parses a confirmationStatus, which must be one of the
// three levels.
func confirmationStatus(s *string) (chain.Commitment, error) {
	if s == nil {
		return "", errors.New("no confirmationStatus")
	}
	switch cm := chain.Commitment(*s); cm {
	case chain.Processed, chain.Confirmed, chain.Finalized:
		return cm, nil
	}
	return "", fmt.Errorf("confirmationStatus %q is not a commitment level", truncate(*s, 32))
}

// blockTime converts an optional Unix time, which must not be negative.
func blockTime(t *int64) (*time.Time, error) {
	if t == nil {
		return nil, nil
	}
	if *t < 0 {
		return nil, fmt.Errorf("negative block time %d", *t)
	}
	bt := time.Unix(*t, 0).UTC()
	return &bt, nil
}

// compactJSON returns raw JSON compacted, "" for absent or null.
func compactJSON(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", errors.New("not JSON")
	}
	return buf.String(), nil
}

// firstSignature reads a serialized transaction's first signature: a
// compact-u16 count, then 64-byte signatures. ok is false when the bytes
// hold none.
func firstSignature(tx []byte) (sig solana.Signature, ok bool) {
	var n, size int
	for shift := 0; size < 3; shift += 7 {
		if size >= len(tx) {
			return sig, false
		}
		b := tx[size]
		size++
		n |= int(b&0x7f) << shift
		if b&0x80 == 0 {
			break
		}
		if size == 3 {
			return sig, false
		}
	}
	if n == 0 || len(tx) < size+64 {
		return sig, false
	}
	copy(sig[:], tx[size:size+64])
	return sig, true
}
