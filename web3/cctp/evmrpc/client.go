// Package evmrpc is the EVM JSON-RPC adapter of package cctp: it reads a
// source chain's receipts, finalized head, chain id and contract code
// through go-ethereum's client, and decodes TokenMessengerV2's
// DepositForBurn and MessageTransmitterV2's MessageSent logs with
// go-ethereum's ABI package (web3.md §2.3). Decoding is all it does: which
// emitter, token, recipient and amount are acceptable is the domain's
// decision. Recovery recovers attester addresses from secp256k1
// signatures with go-ethereum's crypto.
//
// Every request goes through the HTTP client of the configuration; nil
// means a urlguard client (https, public addresses only), so an RPC URL
// from configuration cannot reach the platform's own network. A
// simulator on loopback needs a urlguard client that allows exactly its
// address (urlguardtest.Client in tests, the example host's simClient).
package evmrpc

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/web3/cctp"
)

// DefaultTimeout bounds each call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config configures a Client.
type Config struct {
	// URL is the node's JSON-RPC endpoint (http or https). Required. It
	// often carries a provider key: it is never logged or returned.
	URL string
	// HTTPClient makes the requests; nil means a urlguard client, and URL
	// must pass its guard.
	HTTPClient *http.Client
	// Timeout bounds each call on top of the caller's context; zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// Client is the adapter. It is safe for concurrent use.
type Client struct {
	rpc     *rpc.Client
	eth     *ethclient.Client
	timeout time.Duration
	events  abi.ABI
}

var _ cctp.EVMClient = (*Client)(nil)

// New returns a Client for cfg. It makes no network call.
func New(cfg Config) (*Client, error) {
	const op = "evmrpc.New"
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fault.Invalid(op, "url", "The RPC URL must be an http(s) URL.")
	}
	if cfg.Timeout < 0 {
		return nil, fault.Invalid(op, "timeout", "The timeout must not be negative.")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		g, err := urlguard.New(urlguard.Config{Timeout: cfg.Timeout})
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, err := g.CheckURL(cfg.URL); err != nil {
			return nil, fault.Invalid(op, "url", "The RPC URL is not allowed by the outbound URL policy.").With("reason", urlguard.Reason(err))
		}
		cfg.HTTPClient = g.Client()
	}
	rc, err := rpc.DialOptions(context.Background(), cfg.URL, rpc.WithHTTPClient(cfg.HTTPClient))
	if err != nil {
		return nil, fault.Invalid(op, "url", "The RPC URL cannot be used.")
	}
	events, err := abi.JSON(strings.NewReader(eventsABI))
	if err != nil {
		return nil, fmt.Errorf("evmrpc: the events ABI: %w", err)
	}
	return &Client{rpc: rc, eth: ethclient.NewClient(rc), timeout: cfg.Timeout, events: events}, nil
}

// Close closes the client's idle connections.
func (c *Client) Close() { c.rpc.Close() }

// call bounds ctx by the client's timeout.
func (c *Client) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// wrap returns err with the operation; the RPC URL never appears in it.
func wrap(op string, err error) error {
	return fmt.Errorf("evmrpc: %s: %w", op, redact(err))
}

// redact cuts a transport error to its operation and cause: an
// *url.Error quotes the URL, which may carry a provider key.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s request failed: %w", ue.Op, ue.Err)
	}
	return err
}

// ChainID implements cctp.EVMClient.
func (c *Client) ChainID(ctx context.Context) (uint64, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	id, err := c.eth.ChainID(ctx)
	if err != nil {
		return 0, wrap("eth_chainId", err)
	}
	if !id.IsUint64() {
		return 0, fmt.Errorf("evmrpc: eth_chainId: %s does not fit 64 bits", id)
	}
	return id.Uint64(), nil
}

// HasCode implements cctp.EVMClient.
func (c *Client) HasCode(ctx context.Context, addr cctp.EVMAddress) (bool, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	code, err := c.eth.CodeAt(ctx, common.Address(addr), nil)
	if err != nil {
		return false, wrap("eth_getCode", err)
	}
	return len(code) > 0, nil
}

// FinalizedBlock implements cctp.EVMClient: eth_getBlockByNumber
// "finalized", read for its number alone.
func (c *Client) FinalizedBlock(ctx context.Context) (uint64, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	var head *struct {
		Number *hexutil.Big `json:"number"`
	}
	if err := c.rpc.CallContext(ctx, &head, "eth_getBlockByNumber", "finalized", false); err != nil {
		return 0, wrap("eth_getBlockByNumber", err)
	}
	if head == nil || head.Number == nil || !(*big.Int)(head.Number).IsUint64() {
		return 0, errors.New("evmrpc: eth_getBlockByNumber: no finalized block")
	}
	return (*big.Int)(head.Number).Uint64(), nil
}

// Receipt implements cctp.EVMClient: the receipt with every log that
// decodes as DepositForBurn or MessageSent, whoever emitted it. Removed
// logs and logs that carry an event's topic but do not decode as it are
// left out.
func (c *Client) Receipt(ctx context.Context, tx cctp.TxHash) (cctp.Receipt, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	r, err := c.eth.TransactionReceipt(ctx, common.Hash(tx))
	if errors.Is(err, ethereum.NotFound) {
		return cctp.Receipt{}, cctp.ErrReceiptNotFound
	}
	if err != nil {
		return cctp.Receipt{}, wrap("eth_getTransactionReceipt", err)
	}
	out := cctp.Receipt{TxHash: cctp.TxHash(r.TxHash), Succeeded: r.Status == types.ReceiptStatusSuccessful,
		BlockHash: cctp.Word(r.BlockHash)}
	if r.BlockNumber != nil && r.BlockNumber.IsUint64() {
		out.BlockNumber = r.BlockNumber.Uint64()
	}
	for _, l := range r.Logs {
		if l == nil || l.Removed || len(l.Topics) == 0 {
			continue
		}
		switch l.Topics[0] {
		case c.events.Events["DepositForBurn"].ID:
			if b, ok := c.decodeBurn(l); ok {
				out.Burns = append(out.Burns, b)
			}
		case c.events.Events["MessageSent"].ID:
			if m, ok := c.decodeSent(l); ok {
				out.Messages = append(out.Messages, m)
			}
		}
	}
	return out, nil
}

// decodeBurn decodes a DepositForBurn log.
func (c *Client) decodeBurn(l *types.Log) (cctp.DepositForBurn, bool) {
	ev := c.events.Events["DepositForBurn"]
	if len(l.Topics) != 4 {
		return cctp.DepositForBurn{}, false
	}
	data := map[string]any{}
	if err := ev.Inputs.NonIndexed().UnpackIntoMap(data, l.Data); err != nil {
		return cctp.DepositForBurn{}, false
	}
	var indexed abi.Arguments
	for _, a := range ev.Inputs {
		if a.Indexed {
			indexed = append(indexed, a)
		}
	}
	topics := map[string]any{}
	if err := abi.ParseTopicsIntoMap(topics, indexed, l.Topics[1:]); err != nil {
		return cctp.DepositForBurn{}, false
	}
	amount, ok1 := word(data["amount"])
	maxFee, ok2 := word(data["maxFee"])
	recipient, ok3 := data["mintRecipient"].([32]byte)
	messenger, ok4 := data["destinationTokenMessenger"].([32]byte)
	caller, ok5 := data["destinationCaller"].([32]byte)
	domain, ok6 := data["destinationDomain"].(uint32)
	hook, ok7 := data["hookData"].([]byte)
	token, ok8 := topics["burnToken"].(common.Address)
	depositor, ok9 := topics["depositor"].(common.Address)
	finality, ok10 := topics["minFinalityThreshold"].(uint32)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9 && ok10) {
		return cctp.DepositForBurn{}, false
	}
	return cctp.DepositForBurn{Log: cctp.Log{Index: uint32(l.Index), Address: cctp.EVMAddress(l.Address)},
		BurnToken: cctp.EVMAddress(token), Depositor: cctp.EVMAddress(depositor), Amount: amount, MaxFee: maxFee,
		MintRecipient: recipient, DestinationTokenMessenger: messenger, DestinationCaller: caller,
		DestinationDomain: cctp.Domain(domain), MinFinalityThreshold: finality, HookData: hook}, true
}

// decodeSent decodes a MessageSent log.
func (c *Client) decodeSent(l *types.Log) (cctp.MessageSent, bool) {
	data := map[string]any{}
	if len(l.Topics) != 1 || c.events.Events["MessageSent"].Inputs.UnpackIntoMap(data, l.Data) != nil {
		return cctp.MessageSent{}, false
	}
	msg, ok := data["message"].([]byte)
	if !ok {
		return cctp.MessageSent{}, false
	}
	return cctp.MessageSent{Log: cctp.Log{Index: uint32(l.Index), Address: cctp.EVMAddress(l.Address)}, Message: msg}, true
}

// word converts a decoded uint256 to a word; false when it does not fit.
func word(v any) (cctp.Word, bool) {
	n, ok := v.(*big.Int)
	if !ok || n.Sign() < 0 || n.BitLen() > 256 {
		return cctp.Word{}, false
	}
	var w cctp.Word
	n.FillBytes(w[:])
	return w, true
}

// eventsABI declares the two events the adapter decodes, as
// TokenMessengerV2 and MessageTransmitterV2 declare them (web3.md §2.3).
const eventsABI = `[
 {"type": "event", "name": "DepositForBurn", "anonymous": false, "inputs": [
  {"name": "burnToken", "type": "address", "indexed": true},
  {"name": "amount", "type": "uint256", "indexed": false},
  {"name": "depositor", "type": "address", "indexed": true},
  {"name": "mintRecipient", "type": "bytes32", "indexed": false},
  {"name": "destinationDomain", "type": "uint32", "indexed": false},
  {"name": "destinationTokenMessenger", "type": "bytes32", "indexed": false},
  {"name": "destinationCaller", "type": "bytes32", "indexed": false},
  {"name": "maxFee", "type": "uint256", "indexed": false},
  {"name": "minFinalityThreshold", "type": "uint32", "indexed": true},
  {"name": "hookData", "type": "bytes", "indexed": false}]},
 {"type": "event", "name": "MessageSent", "anonymous": false, "inputs": [
  {"name": "message", "type": "bytes", "indexed": false}]}
]`
