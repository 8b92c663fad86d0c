package chaintest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

const (
	maxBodyBytes  = 1 << 20
	solanaCore    = "2.2.0"
	featureSet    = 3294202862
	rentEpochMax  = "18446744073709551615"
	maxBase58Data = 128
)

// Standard JSON-RPC errors (chain.md §1.1).
func parseError() *rpcError     { return &rpcError{Code: -32700, Message: "Parse error"} }
func invalidRequest() *rpcError { return &rpcError{Code: -32600, Message: "Invalid request"} }
func methodNotFound() *rpcError { return &rpcError{Code: -32601, Message: "Method not found"} }
func invalidParams(msg string) *rpcError {
	return &rpcError{Code: -32602, Message: msg}
}
func invalidParam(msg string) *rpcError { return invalidParams("Invalid param: " + msg) }

// serveHTTP answers one JSON-RPC request or batch.
func (c *Cluster) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/health" {
		if p := c.takeFaults("getHealth"); p.fault != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "behind")
			return
		}
		_, _ = io.WriteString(w, "ok")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return
	}
	if len(body) > maxBodyBytes {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	ctx := r.Context()
	var out []byte
	status := 0
	trimmed := bytes.TrimSpace(body)
	switch {
	case !json.Valid(trimmed):
		out = envelope(nil, nil, parseError())
	case len(trimmed) > 0 && trimmed[0] == '[':
		var reqs []json.RawMessage
		if err := json.Unmarshal(trimmed, &reqs); err != nil || len(reqs) == 0 {
			out = envelope(nil, nil, invalidRequest())
			break
		}
		out = append(out, '[')
		for i, raw := range reqs {
			one, st, ok := c.handleOne(ctx, raw)
			if !ok {
				return
			}
			if st != 0 {
				status = st
				break
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, one...)
		}
		out = append(out, ']')
	default:
		one, st, ok := c.handleOne(ctx, trimmed)
		if !ok {
			return
		}
		out, status = one, st
	}
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)+1))
	out = append(out, '\n')
	_, _ = w.Write(out)
}

// request is a JSON-RPC request; ID keeps the id's bytes verbatim.
type request struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// handleOne answers one request object: the envelope bytes, or a bare HTTP
// status; ok is false when the caller went away during a delay.
func (c *Cluster) handleOne(ctx context.Context, raw []byte) (out []byte, status int, ok bool) {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil || req.Method == nil || req.JSONRPC == nil || *req.JSONRPC != "2.0" {
		var id json.RawMessage
		if err == nil {
			id = req.ID
		}
		return envelope(id, nil, invalidRequest()), 0, true
	}
	method := *req.Method
	c.countCall(method)
	p := c.takeFaults(method)
	if err := c.wait(ctx, p.delay); err != nil {
		return nil, 0, false
	}
	if p.fault != nil {
		if p.fault.HTTPStatus != 0 {
			return nil, p.fault.HTTPStatus, true
		}
		return envelope(req.ID, nil, faultError(p.fault)), 0, true
	}
	var params []json.RawMessage
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &params); err != nil {
			return envelope(req.ID, nil, invalidParams("Invalid params: expected a sequence of positional arguments")), 0, true
		}
	}
	result, rerr := c.dispatch(method, params)
	if rerr != nil {
		return envelope(req.ID, nil, rerr), 0, true
	}
	var res []byte
	if rm, isRaw := result.(json.RawMessage); isRaw {
		res = rm
	} else {
		var err error
		if res, err = json.Marshal(result); err != nil {
			return envelope(req.ID, nil, &rpcError{Code: -32603, Message: "Internal error"}), 0, true
		}
	}
	return envelope(req.ID, res, nil), 0, true
}

// envelope is a response with exactly the keys solana-go accepts:
// jsonrpc, result or error, id.
func envelope(id json.RawMessage, result []byte, e *rpcError) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b := make([]byte, 0, len(result)+len(id)+48)
	b = append(b, `{"jsonrpc":"2.0",`...)
	if e != nil {
		eb, err := json.Marshal(e)
		if err != nil {
			eb, _ = json.Marshal(&rpcError{Code: e.Code, Message: e.Message})
		}
		b = append(b, `"error":`...)
		b = append(b, eb...)
	} else {
		b = append(b, `"result":`...)
		b = append(b, result...)
	}
	b = append(b, `,"id":`...)
	b = append(b, id...)
	return append(b, '}')
}

// dispatch runs method.
func (c *Cluster) dispatch(method string, params []json.RawMessage) (any, *rpcError) {
	switch method {
	case "getAccountInfo":
		return c.rpcGetAccountInfo(params)
	case "getMultipleAccounts":
		return c.rpcGetMultipleAccounts(params)
	case "getBalance":
		return c.rpcGetBalance(params)
	case "getTokenAccountsByOwner":
		return c.rpcGetTokenAccountsByOwner(params)
	case "getTokenAccountBalance":
		return c.rpcGetTokenAccountBalance(params)
	case "getLatestBlockhash":
		return c.rpcGetLatestBlockhash(params)
	case "getBlockHeight", "getSlot":
		return c.rpcGetSlot(params)
	case "isBlockhashValid":
		return c.rpcIsBlockhashValid(params)
	case "sendTransaction":
		return c.rpcSendTransaction(params)
	case "simulateTransaction":
		return c.rpcSimulateTransaction(params)
	case "getSignatureStatuses":
		return c.rpcGetSignatureStatuses(params)
	case "getTransaction":
		return c.rpcGetTransaction(params)
	case "getBlockTime":
		return c.rpcGetBlockTime(params)
	case "getEpochInfo":
		return c.rpcGetEpochInfo(params)
	case "getSignaturesForAddress":
		return c.rpcGetSignaturesForAddress(params)
	case "getMinimumBalanceForRentExemption":
		return c.rpcGetMinimumBalance(params)
	case "getHealth":
		if err := checkArgs(params, 0); err != nil {
			return nil, err
		}
		return "ok", nil
	case "getGenesisHash":
		if err := checkArgs(params, 0); err != nil {
			return nil, err
		}
		return c.genesis, nil
	case "getVersion":
		if err := checkArgs(params, 0); err != nil {
			return nil, err
		}
		return map[string]any{"solana-core": solanaCore, "feature-set": featureSet}, nil
	}
	return nil, methodNotFound()
}

// config is the union of the config objects the methods take; each reads
// its own keys.
type config struct {
	Commitment                     string     `json:"commitment"`
	Encoding                       string     `json:"encoding"`
	DataSlice                      *dataSlice `json:"dataSlice"`
	MinContextSlot                 *uint64    `json:"minContextSlot"`
	SkipPreflight                  bool       `json:"skipPreflight"`
	PreflightCommitment            string     `json:"preflightCommitment"`
	SearchTransactionHistory       bool       `json:"searchTransactionHistory"`
	MaxSupportedTransactionVersion *uint64    `json:"maxSupportedTransactionVersion"`
	Limit                          *int       `json:"limit"`
	Before                         string     `json:"before"`
	Until                          string     `json:"until"`
	SigVerify                      bool       `json:"sigVerify"`
	ReplaceRecentBlockhash         bool       `json:"replaceRecentBlockhash"`
}

type dataSlice struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// checkArgs fails when more than n positional arguments were given.
func checkArgs(params []json.RawMessage, n int) *rpcError {
	if len(params) > n {
		return invalidParams("Invalid parameters: No parameters were expected")
	}
	return nil
}

func required(params []json.RawMessage, i int) *rpcError {
	if len(params) <= i {
		return invalidParams("`params` should have at least " + strconv.Itoa(i+1) + " argument(s)")
	}
	return nil
}

// argString reads positional argument i as a string.
func argString(params []json.RawMessage, i int) (string, *rpcError) {
	if err := required(params, i); err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(params[i], &s); err != nil {
		return "", invalidParams("Invalid params: invalid type: expected a string at position " + strconv.Itoa(i))
	}
	return s, nil
}

// argAddress reads positional argument i as a base58 address.
func argAddress(params []json.RawMessage, i int) (chain.Address, *rpcError) {
	s, err := argString(params, i)
	if err != nil {
		return chain.Address{}, err
	}
	return parseAddress(s)
}

func parseAddress(s string) (chain.Address, *rpcError) {
	a, err := token2022.ParsePublicKey(s)
	if err != nil {
		return chain.Address{}, invalidParam("Invalid")
	}
	return a, nil
}

// argConfig reads the optional config object at position i.
func argConfig(params []json.RawMessage, i int) (config, *rpcError) {
	var cfg config
	if len(params) <= i || string(params[i]) == "null" {
		return cfg, nil
	}
	if len(params) > i+1 {
		return cfg, invalidParams("Invalid params: too many arguments")
	}
	if err := json.Unmarshal(params[i], &cfg); err != nil {
		return cfg, invalidParams("Invalid params: " + err.Error())
	}
	return cfg, nil
}

// parseCommitment maps a commitment string (and the deprecated aliases) to
// a level; empty means finalized, the server default.
func parseCommitment(s string) (chain.Commitment, *rpcError) {
	switch s {
	case "", "finalized", "max", "root":
		return chain.Finalized, nil
	case "confirmed", "single", "singleGossip":
		return chain.Confirmed, nil
	case "processed", "recent":
		return chain.Processed, nil
	}
	return "", invalidParams("Invalid params: unknown variant `" + s + "`, expected one of `processed`, `confirmed`, `finalized`")
}

// contextSlot is the slot a read with cfg answers at, checking
// minContextSlot. Callers hold mu.
func (c *Cluster) contextSlotLocked(cfg config) (uint64, *rpcError) {
	cm, err := parseCommitment(cfg.Commitment)
	if err != nil {
		return 0, err
	}
	s := c.commitmentSlotLocked(cm)
	if cfg.MinContextSlot != nil && s < *cfg.MinContextSlot {
		return 0, &rpcError{Code: -32016, Message: "Minimum context slot has not been reached", Data: map[string]any{"contextSlot": s}}
	}
	return s, nil
}

// withContext wraps value in {"context":{...},"value":...}.
func withContext(slot uint64, value any) any {
	return map[string]any{
		"context": map[string]any{"slot": slot, "apiVersion": solanaCore},
		"value":   value,
	}
}

// appendContext appends {"context":{...},"value": to b; the caller appends
// the value and '}'.
func appendContext(b []byte, slot uint64) []byte {
	b = append(b, `{"context":{"apiVersion":"`+solanaCore+`","slot":`...)
	b = strconv.AppendUint(b, slot, 10)
	return append(b, `},"value":`...)
}

// checkEncoding validates an account encoding name; def replaces "".
func checkEncoding(enc, def string) (string, *rpcError) {
	if enc == "" {
		enc = def
	}
	switch enc {
	case "binary", "base58", "base64":
	case "jsonParsed", "base64+zstd":
		enc = "base64" // not simulated: answered as base64, as labelled
	default:
		return "", invalidParams("Invalid params: unknown variant `" + enc + "`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`")
	}
	return enc, nil
}

// appendAccount appends the UiAccount JSON of s, or null.
func appendAccount(b []byte, s *stored, enc string, slice *dataSlice) ([]byte, *rpcError) {
	if s == nil {
		return append(b, "null"...), nil
	}
	data := s.Data
	if slice != nil {
		off := min(slice.Offset, uint64(len(data)))
		end := min(off+min(slice.Length, uint64(len(data))), uint64(len(data)))
		data = data[off:end]
	}
	b = append(b, `{"lamports":`...)
	b = strconv.AppendUint(b, s.Lamports, 10)
	b = append(b, `,"owner":"`...)
	b = append(b, s.ownerB58...)
	b = append(b, `","data":`...)
	switch enc {
	case "base64":
		b = append(b, `["`...)
		b = base64.StdEncoding.AppendEncode(b, data)
		b = append(b, `","base64"]`...)
	case "base58", "binary":
		if len(data) > maxBase58Data {
			return nil, &rpcError{Code: -32600, Message: "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding."}
		}
		if enc == "binary" {
			b = append(b, '"')
			b = append(b, solana.Base58(data).String()...)
			b = append(b, '"')
		} else {
			b = append(b, `["`...)
			b = append(b, solana.Base58(data).String()...)
			b = append(b, `","base58"]`...)
		}
	}
	b = append(b, `,"executable":`...)
	b = strconv.AppendBool(b, s.Executable)
	b = append(b, `,"rentEpoch":`+rentEpochMax+`,"space":`...)
	b = strconv.AppendUint(b, uint64(len(s.Data)), 10)
	return append(b, '}'), nil
}

func (c *Cluster) rpcGetAccountInfo(params []json.RawMessage) (any, *rpcError) {
	addr, err := argAddress(params, 0)
	if err != nil {
		return nil, err
	}
	cfg, err := argConfig(params, 1)
	if err != nil {
		return nil, err
	}
	enc, err := checkEncoding(cfg.Encoding, "binary")
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	slot, err := c.contextSlotLocked(cfg)
	s := c.accounts[addr]
	c.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 128+len(s.dataLen())*4/3)
	b = appendContext(b, slot)
	b, err = appendAccount(b, s, enc, cfg.DataSlice)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(append(b, '}')), nil
}

// dataLen is a nil-safe view of the data for sizing buffers.
func (s *stored) dataLen() []byte {
	if s == nil {
		return nil
	}
	return s.Data
}

func (c *Cluster) rpcGetMultipleAccounts(params []json.RawMessage) (any, *rpcError) {
	if err := required(params, 0); err != nil {
		return nil, err
	}
	var keys []string
	if err := json.Unmarshal(params[0], &keys); err != nil {
		return nil, invalidParams("Invalid params: expected an array of addresses")
	}
	if len(keys) > 100 {
		return nil, invalidParams("Too many inputs provided; max 100")
	}
	addrs := make([]chain.Address, len(keys))
	for i, k := range keys {
		a, err := parseAddress(k)
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	cfg, err := argConfig(params, 1)
	if err != nil {
		return nil, err
	}
	enc, err := checkEncoding(cfg.Encoding, "base64")
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	slot, err := c.contextSlotLocked(cfg)
	accts := make([]*stored, len(addrs))
	for i, a := range addrs {
		accts[i] = c.accounts[a]
	}
	c.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	b := appendContext(nil, slot)
	b = append(b, '[')
	for i, s := range accts {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendAccount(b, s, enc, cfg.DataSlice); err != nil {
			return nil, err
		}
	}
	return json.RawMessage(append(b, "]}"...)), nil
}

func (c *Cluster) rpcGetBalance(params []json.RawMessage) (any, *rpcError) {
	addr, err := argAddress(params, 0)
	if err != nil {
		return nil, err
	}
	cfg, err := argConfig(params, 1)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.contextSlotLocked(cfg)
	if err != nil {
		return nil, err
	}
	var lamports uint64
	if s := c.accounts[addr]; s != nil {
		lamports = s.Lamports
	}
	return withContext(slot, lamports), nil
}

// uiTokenAmount is the JSON UiTokenAmount (chain.md §2).
type uiTokenAmount struct {
	Amount         string   `json:"amount"`
	Decimals       uint8    `json:"decimals"`
	UIAmount       *float64 `json:"uiAmount"`
	UIAmountString string   `json:"uiAmountString"`
}

func newUITokenAmount(amount uint64, decimals uint8) uiTokenAmount {
	s := uiAmountString(amount, decimals)
	f, _ := strconv.ParseFloat(s, 64)
	return uiTokenAmount{Amount: strconv.FormatUint(amount, 10), Decimals: decimals, UIAmount: &f, UIAmountString: s}
}

// uiAmountString is amount / 10^decimals in decimal without trailing zeros.
func uiAmountString(amount uint64, decimals uint8) string {
	s := strconv.FormatUint(amount, 10)
	if decimals == 0 {
		return s
	}
	d := int(decimals)
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	s = s[:len(s)-d] + "." + s[len(s)-d:]
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// tokenAccountLocked decodes s as a token account and finds its mint's
// decimals. ok is false when s is not a token account.
func (c *Cluster) tokenAccountLocked(s *stored) (acct token2022.Account, decimals uint8, ok bool) {
	if s == nil || (s.Owner != tokenProgram && s.Owner != token2022Program) {
		return acct, 0, false
	}
	acct, err := token2022.DecodeAccount(s.Data)
	if err != nil {
		return acct, 0, false
	}
	if ms := c.accounts[acct.Mint]; ms != nil {
		if m, err := token2022.DecodeMint(ms.Data); err == nil {
			decimals = m.Decimals
		}
	}
	return acct, decimals, true
}

func (c *Cluster) rpcGetTokenAccountBalance(params []json.RawMessage) (any, *rpcError) {
	addr, err := argAddress(params, 0)
	if err != nil {
		return nil, err
	}
	cfg, err := argConfig(params, 1)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.contextSlotLocked(cfg)
	if err != nil {
		return nil, err
	}
	s := c.accounts[addr]
	if s == nil {
		return nil, invalidParam("could not find account")
	}
	acct, dec, ok := c.tokenAccountLocked(s)
	if !ok {
		return nil, invalidParam("not a Token account")
	}
	return withContext(slot, newUITokenAmount(acct.Amount, dec)), nil
}

func (c *Cluster) rpcGetTokenAccountsByOwner(params []json.RawMessage) (any, *rpcError) {
	owner, err := argAddress(params, 0)
	if err != nil {
		return nil, err
	}
	if err := required(params, 1); err != nil {
		return nil, err
	}
	var filter struct {
		Mint      *string `json:"mint"`
		ProgramID *string `json:"programId"`
	}
	if json.Unmarshal(params[1], &filter) != nil || (filter.Mint == nil) == (filter.ProgramID == nil) {
		return nil, invalidParams("Invalid params: expected {\"mint\": <address>} or {\"programId\": <address>}")
	}
	var mint, prog chain.Address
	if filter.Mint != nil {
		if mint, err = parseAddress(*filter.Mint); err != nil {
			return nil, err
		}
	} else {
		if prog, err = parseAddress(*filter.ProgramID); err != nil {
			return nil, err
		}
		if prog != tokenProgram && prog != token2022Program {
			return nil, invalidParam("unrecognized Token program id")
		}
	}
	cfg, err := argConfig(params, 2)
	if err != nil {
		return nil, err
	}
	enc, err := checkEncoding(cfg.Encoding, "binary")
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	slot, err := c.contextSlotLocked(cfg)
	type hit struct {
		addr chain.Address
		s    *stored
	}
	var hits []hit
	if err == nil {
		for a, s := range c.accounts {
			if s.Owner != tokenProgram && s.Owner != token2022Program {
				continue
			}
			if filter.ProgramID != nil && s.Owner != prog {
				continue
			}
			acct, derr := token2022.DecodeAccount(s.Data)
			if derr != nil || acct.Owner != owner || (filter.Mint != nil && acct.Mint != mint) {
				continue
			}
			hits = append(hits, hit{a, s})
		}
	}
	c.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	// Stable order: by address bytes.
	slices.SortFunc(hits, func(x, y hit) int { return bytes.Compare(x.addr[:], y.addr[:]) })
	b := appendContext(nil, slot)
	b = append(b, '[')
	for i, h := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"pubkey":"`...)
		b = append(b, h.addr.String()...)
		b = append(b, `","account":`...)
		if b, err = appendAccount(b, h.s, enc, cfg.DataSlice); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return json.RawMessage(append(b, "]}"...)), nil
}

func (c *Cluster) rpcGetLatestBlockhash(params []json.RawMessage) (any, *rpcError) {
	cfg, err := argConfig(params, 0)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.contextSlotLocked(cfg)
	if err != nil {
		return nil, err
	}
	h, hs := c.latestBlockhashLocked(slot)
	return withContext(slot, map[string]any{"blockhash": h, "lastValidBlockHeight": hs + MaxBlockhashAge}), nil
}

func (c *Cluster) rpcGetSlot(params []json.RawMessage) (any, *rpcError) {
	cfg, err := argConfig(params, 0)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.contextSlotLocked(cfg)
	if err != nil {
		return nil, err
	}
	return slot, nil
}

func (c *Cluster) rpcIsBlockhashValid(params []json.RawMessage) (any, *rpcError) {
	h, err := argString(params, 0)
	if err != nil {
		return nil, err
	}
	if _, perr := solana.HashFromBase58(h); perr != nil {
		return nil, invalidParam("Invalid")
	}
	cfg, err := argConfig(params, 1)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.contextSlotLocked(cfg)
	if err != nil {
		return nil, err
	}
	return withContext(slot, c.blockhashValidLocked(h)), nil
}

func (c *Cluster) rpcGetBlockTime(params []json.RawMessage) (any, *rpcError) {
	if err := required(params, 0); err != nil {
		return nil, err
	}
	var slot uint64
	if err := json.Unmarshal(params[0], &slot); err != nil {
		return nil, invalidParams("Invalid params: invalid type: expected u64")
	}
	if err := checkArgs(params, 1); err != nil {
		return nil, err
	}
	t, rerr := c.blockTime(slot)
	if rerr != nil {
		return nil, rerr
	}
	return t, nil
}

// blockTime is slot's unix block time, or -32004 for a slot not yet
// produced.
func (c *Cluster) blockTime(slot uint64) (int64, *rpcError) {
	c.mu.RLock()
	cur := c.slot
	c.mu.RUnlock()
	if slot > cur {
		return 0, &rpcError{Code: -32004, Message: "Block not available for slot " + strconv.FormatUint(slot, 10)}
	}
	return c.BlockTime(slot).Unix(), nil
}

// epochInfoLocked is the epoch view at slot.
func (c *Cluster) epochInfoLocked(slot uint64) chain.EpochInfo {
	return chain.EpochInfo{
		Epoch:        slot / c.cfg.SlotsPerEpoch,
		AbsoluteSlot: slot,
		BlockHeight:  slot,
		SlotIndex:    slot % c.cfg.SlotsPerEpoch,
		SlotsInEpoch: c.cfg.SlotsPerEpoch,
	}
}

func (c *Cluster) rpcGetEpochInfo(params []json.RawMessage) (any, *rpcError) {
	cfg, err := argConfig(params, 0)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.contextSlotLocked(cfg)
	if err != nil {
		return nil, err
	}
	e := c.epochInfoLocked(slot)
	return map[string]any{
		"absoluteSlot":     e.AbsoluteSlot,
		"blockHeight":      e.BlockHeight,
		"epoch":            e.Epoch,
		"slotIndex":        e.SlotIndex,
		"slotsInEpoch":     e.SlotsInEpoch,
		"transactionCount": c.txCount,
	}, nil
}

func (c *Cluster) rpcGetMinimumBalance(params []json.RawMessage) (any, *rpcError) {
	if err := required(params, 0); err != nil {
		return nil, err
	}
	var n uint64
	if err := json.Unmarshal(params[0], &n); err != nil || n > 10<<20 {
		return nil, invalidParams("Invalid params: invalid type: expected usize")
	}
	if _, err := argConfig(params, 1); err != nil {
		return nil, err
	}
	return RentExemptMinimum(int(n)), nil
}
