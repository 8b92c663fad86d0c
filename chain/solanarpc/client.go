package solanarpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/urlguard"
)

// DefaultTimeout is the per-call timeout when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config configures a Client.
type Config struct {
	// URL is the cluster's JSON-RPC endpoint (http or https). It may carry a
	// provider key, so it is a secret: it is never logged nor put in an
	// error message, which name the scheme and host only.
	URL string
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient sends the requests. Nil means a urlguard client (https
	// only, public addresses only, every resolved address judged and
	// pinned, redirects re-checked, no proxy from the environment), and URL
	// must pass its guard. A client that is set owns the outbound policy:
	// pass a urlguard client to keep it (a cluster on loopback needs one
	// with AllowHTTP and its exact address in AllowLoopback). Its own
	// Timeout, if any, applies as well.
	HTTPClient *http.Client
}

// Client reads a Solana cluster and submits transactions to it over
// JSON-RPC. It is safe for concurrent use.
type Client struct {
	rpc     *rpc.Client
	origin  string // scheme://host of the URL, the only part errors show
	secrets []string
	timeout time.Duration
}

// New validates cfg and returns a Client. It makes no network call.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		// url.Parse's error quotes the URL; say only what is wrong.
		return nil, errors.New("solanarpc: Config.URL does not parse as a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("solanarpc: Config.URL must be an http or https URL")
	}
	if u.Host == "" {
		return nil, errors.New("solanarpc: Config.URL has no host")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("solanarpc: negative Config.Timeout %s", cfg.Timeout)
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	// User info travels as a Basic Authorization header, as net/http would
	// send it, so the URL a client sees carries none (the guard refuses a
	// URL with credentials).
	user := u.User
	rpcURL := cfg.URL
	if user != nil {
		bare := *u
		bare.User = nil
		rpcURL = bare.String()
	}
	hc := cfg.HTTPClient
	if hc == nil {
		g, err := urlguard.New(urlguard.Config{})
		if err != nil {
			return nil, fmt.Errorf("solanarpc: %w", err)
		}
		if _, err := g.CheckURL(rpcURL); err != nil {
			// The guard's error never names the URL.
			return nil, fmt.Errorf("solanarpc: Config.URL is not allowed by the outbound URL policy (%s): %w", urlguard.Reason(err), err)
		}
		hc = g.Client()
	}
	c := &Client{
		origin:  u.Scheme + "://" + u.Host,
		timeout: timeout,
	}
	// The parts of the URL besides scheme and host are what a provider key
	// hides in; they are scrubbed from error text wherever they appear.
	for _, s := range []string{u.RawQuery, u.Query().Encode(), u.EscapedPath(), u.Path, u.Fragment} {
		if len(s) > 1 {
			c.secrets = append(c.secrets, s)
		}
	}
	if u.User != nil {
		c.secrets = append(c.secrets, u.User.String())
		if p, ok := u.User.Password(); ok && p != "" {
			c.secrets = append(c.secrets, p)
		}
	}
	rc := jsonrpc.NewClientWithOpts(rpcURL, &jsonrpc.RPCClientOpts{HTTPClient: statusCheckingClient{hc: hc, user: user}})
	c.rpc = rpc.NewWithCustomRPCClient(rc)
	return c, nil
}

// GetGenesisHash returns the cluster's genesis hash in base58
// (getGenesisHash).
func (c *Client) GetGenesisHash(ctx context.Context) (string, error) {
	const method = "getGenesisHash"
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	h, err := c.rpc.GetGenesisHash(ctx)
	if err != nil {
		return "", c.fail(method, err)
	}
	if h.IsZero() {
		return "", c.malformed(method, "zero genesis hash")
	}
	return h.String(), nil
}

// GetAccountInfo returns the account at addr as the node's bank at
// commitment holds it (getAccountInfo, base64 data). Slot is the answer's
// context slot. A null value fails with chain.ErrAccountNotFound.
func (c *Client) GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error) {
	const method = "getAccountInfo"
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return chain.AccountInfo{}, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	out, err := c.rpc.GetAccountInfoWithOpts(ctx, solana.PublicKey(addr), &rpc.GetAccountInfoOpts{
		Encoding:   solana.EncodingBase64,
		Commitment: cm,
	})
	if errors.Is(err, rpc.ErrNotFound) {
		return chain.AccountInfo{}, fmt.Errorf("solanarpc: %s %s: %w", method, addr, chain.ErrAccountNotFound)
	}
	if err != nil {
		return chain.AccountInfo{}, c.fail(method, err)
	}
	acc := out.Value
	if acc.Data == nil {
		return chain.AccountInfo{}, c.malformed(method, "account has no data field")
	}
	if acc.Data.GetRawJSON() != nil {
		return chain.AccountInfo{}, c.malformed(method, "account data is not base64")
	}
	if enc, err := dataEncoding(acc.Data); err != nil || enc != solana.EncodingBase64 {
		return chain.AccountInfo{}, c.malformed(method, "account data is not base64")
	}
	data := acc.Data.GetBinary()
	if data == nil {
		data = []byte{}
	}
	return chain.AccountInfo{
		Address:    addr,
		Owner:      chain.Address(acc.Owner),
		Lamports:   acc.Lamports,
		Data:       data,
		Executable: acc.Executable,
		Slot:       out.Context.Slot,
	}, nil
}

// GetTokenAccountBalance returns the balance of the token account at addr
// (getTokenAccountBalance; classic and Token-2022 accounts alike). An
// account that is not a token account fails with chain.ErrNotTokenAccount,
// a missing one with chain.ErrAccountNotFound.
func (c *Client) GetTokenAccountBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.TokenAmount, error) {
	const method = "getTokenAccountBalance"
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return chain.TokenAmount{}, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	out, err := c.rpc.GetTokenAccountBalance(ctx, solana.PublicKey(addr), cm)
	if err != nil {
		var rerr *jsonrpc.RPCError
		if errors.As(err, &rerr) && rerr.Code == chain.CodeInvalidParams {
			re := toRPCError(method, rerr)
			switch {
			case isNotTokenAccount(rerr.Message):
				return chain.TokenAmount{}, fmt.Errorf("%w: %w", chain.ErrNotTokenAccount, re)
			case isAccountMissing(rerr.Message):
				return chain.TokenAmount{}, fmt.Errorf("%w: %w", chain.ErrAccountNotFound, re)
			}
		}
		return chain.TokenAmount{}, c.fail(method, err)
	}
	if out == nil {
		return chain.TokenAmount{}, c.malformed(method, "null result")
	}
	if out.Value == nil {
		return chain.TokenAmount{}, fmt.Errorf("solanarpc: %s %s: %w", method, addr, chain.ErrAccountNotFound)
	}
	amount, err := parseU64(out.Value.Amount)
	if err != nil {
		return chain.TokenAmount{}, c.malformed(method, "amount: "+err.Error())
	}
	return chain.TokenAmount{
		Amount:   amount,
		Decimals: out.Value.Decimals,
		Slot:     out.Context.Slot,
	}, nil
}

// GetBalance returns the lamports of the account at addr as the node's
// bank at commitment holds them, and the answer's context slot
// (getBalance). A missing account has balance 0, as a node answers; a null
// value is malformed.
func (c *Client) GetBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (lamports, slot uint64, err error) {
	const method = "getBalance"
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	// rpc.Client.GetBalance decodes the value into a plain uint64, which a
	// null would leave at zero, the balance of a missing account; a
	// pointer tells the two apart.
	var out *struct {
		Context struct {
			Slot uint64 `json:"slot"`
		} `json:"context"`
		Value *uint64 `json:"value"`
	}
	if err := c.rpc.RPCCallForInto(ctx, &out, method, []any{solana.PublicKey(addr).String(), rpc.M{"commitment": cm}}); err != nil {
		return 0, 0, c.fail(method, err)
	}
	if out == nil || out.Value == nil {
		return 0, 0, c.malformed(method, "null result")
	}
	return *out.Value, out.Context.Slot, nil
}

// GetEpochInfo returns the node's view of the current epoch at commitment
// (getEpochInfo).
func (c *Client) GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error) {
	const method = "getEpochInfo"
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return chain.EpochInfo{}, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	out, err := c.rpc.GetEpochInfo(ctx, cm)
	if err != nil {
		return chain.EpochInfo{}, c.fail(method, err)
	}
	if out == nil {
		return chain.EpochInfo{}, c.malformed(method, "null result")
	}
	if out.SlotsInEpoch == 0 || out.SlotIndex >= out.SlotsInEpoch {
		return chain.EpochInfo{}, c.malformed(method, fmt.Sprintf("slot index %d outside an epoch of %d slots", out.SlotIndex, out.SlotsInEpoch))
	}
	return chain.EpochInfo{
		Epoch:        out.Epoch,
		AbsoluteSlot: out.AbsoluteSlot,
		BlockHeight:  out.BlockHeight,
		SlotIndex:    out.SlotIndex,
		SlotsInEpoch: out.SlotsInEpoch,
	}, nil
}

// GetSlot returns the slot of the node's bank at commitment (getSlot).
func (c *Client) GetSlot(ctx context.Context, commitment chain.Commitment) (uint64, error) {
	const method = "getSlot"
	cm, err := commitmentType(method, commitment)
	if err != nil {
		return 0, err
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	// rpc.Client.GetSlot decodes into a plain uint64, which a null result
	// would leave at zero; a pointer tells the two apart.
	var slot *uint64
	err = c.rpc.RPCCallForInto(ctx, &slot, method, []any{rpc.M{"commitment": cm}})
	if err != nil {
		return 0, c.fail(method, err)
	}
	if slot == nil {
		return 0, c.malformed(method, "null result")
	}
	return *slot, nil
}

// GetBlockTime returns the estimated production time of the block at slot
// (getBlockTime), in UTC. A slot the node has no time for fails with
// chain.ErrBlockTimeUnavailable.
func (c *Client) GetBlockTime(ctx context.Context, slot uint64) (time.Time, error) {
	const method = "getBlockTime"
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	out, err := c.rpc.GetBlockTime(ctx, slot)
	if err != nil {
		var rerr *jsonrpc.RPCError
		if errors.As(err, &rerr) {
			switch rerr.Code {
			case chain.CodeBlockNotAvailable, chain.CodeSlotSkipped, chain.CodeLongTermSlotSkipped:
				return time.Time{}, fmt.Errorf("%w: %w", chain.ErrBlockTimeUnavailable, toRPCError(method, rerr))
			}
		}
		return time.Time{}, c.fail(method, err)
	}
	if out == nil {
		return time.Time{}, fmt.Errorf("solanarpc: %s slot %d: %w", method, slot, chain.ErrBlockTimeUnavailable)
	}
	if *out < 0 {
		return time.Time{}, c.malformed(method, fmt.Sprintf("negative block time %d", int64(*out)))
	}
	return time.Unix(int64(*out), 0).UTC(), nil
}

// GetHealth returns nil when the node answers "ok" (getHealth). A node that
// is behind answers -32005, returned as a *chain.RPCError whose
// NumSlotsBehind is set when the node said how far behind it is.
func (c *Client) GetHealth(ctx context.Context) error {
	const method = "getHealth"
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	out, err := c.rpc.GetHealth(ctx)
	if err != nil {
		return c.fail(method, err)
	}
	if out != rpc.HealthOk {
		return c.malformed(method, fmt.Sprintf("health %q is not %q", truncate(out, 32), rpc.HealthOk))
	}
	return nil
}

// callContext bounds one call by the configured timeout.
func (c *Client) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// commitmentType maps a commitment to solana-go's, with empty meaning
// finalized.
func commitmentType(method string, cm chain.Commitment) (rpc.CommitmentType, error) {
	switch cm {
	case "":
		return rpc.CommitmentFinalized, nil
	case chain.Processed, chain.Confirmed, chain.Finalized:
		return rpc.CommitmentType(cm), nil
	}
	return "", fmt.Errorf("solanarpc: %s: unknown commitment %q", method, truncate(string(cm), 32))
}

// dataEncoding reports the encoding a binary data field was answered in.
// solana-go keeps it private, but its JSON form is [content, encoding].
func dataEncoding(d *rpc.DataBytesOrJSON) (solana.EncodingType, error) {
	b, err := d.MarshalJSON()
	if err != nil {
		return "", err
	}
	var pair []string
	if err := json.Unmarshal(b, &pair); err != nil {
		return "", err
	}
	if len(pair) != 2 {
		return "", errors.New("data is not a [content, encoding] pair")
	}
	return solana.EncodingType(pair[1]), nil
}

// parseU64 parses a decimal u64 string strictly: digits only.
func parseU64(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a decimal integer", truncate(s, 32))
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q does not fit in u64", truncate(s, 32))
	}
	return v, nil
}

// isNotTokenAccount matches Agave's "Invalid param: not a Token account"
// and "Invalid param: not a v2.0 Token account".
func isNotTokenAccount(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "not a token account") || strings.Contains(m, "not a v2.0 token account")
}

// isAccountMissing matches Agave's "Invalid param: could not find account".
func isAccountMissing(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "could not find account") || strings.Contains(m, "account not found")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
