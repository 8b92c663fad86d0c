// Package evmtest is a loopback EVM JSON-RPC node for tests and the
// example host: it serves the calls the cctp adapter makes (eth_chainId,
// eth_getTransactionReceipt, eth_getBlockByNumber, eth_getCode,
// eth_blockNumber) in the JSON-RPC 2.0 envelope, with receipts and logs
// encoded by go-ethereum's types and ABI as a node's would be.
//
// Burn mines a transaction that does what TokenMessengerV2's
// depositForBurn logs (web3.md §2.3): MessageTransmitterV2's
// MessageSent(bytes) carrying the V2 burn message with the attester's
// fields zero, then DepositForBurn with its indexed burn token, depositor
// and finality threshold. Any field can be set wrong on purpose, a burn
// can revert (status 0, no logs), and a transaction can hold several
// burns. Blocks are mined one per transaction; Finalize moves the
// finalized head. Faults: Inject queues a JSON-RPC error or a bare HTTP
// status for a method (or every method), HideReceipt answers null for a
// mined transaction (not mined yet, or dropped by a reorganisation).
package evmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/web3/cctp"
)

// Testnet contracts of web3.md §2.2 and Base Sepolia's USDC (§4): the
// defaults of Config.
const (
	TestnetTokenMessenger     = "0x8FE6B999Dc680CcFDD5Bf7EB0974218be2542DAA"
	TestnetMessageTransmitter = "0xE737e5cEBEEBa77EFE34D4aa090756590b1CE275"
	BaseSepoliaUSDC           = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	BaseSepoliaChainID        = 84532
)

// Config sets up a Server; zero fields take Base Sepolia's values.
type Config struct {
	// ChainID is answered by eth_chainId.
	ChainID uint64
	// Domain is the chain's CCTP domain, the source domain of its
	// messages (default 6, Base).
	Domain cctp.Domain
	// TokenMessenger, MessageTransmitter and USDC are deployed (they have
	// code) and emit the burns' logs.
	TokenMessenger, MessageTransmitter, USDC cctp.EVMAddress
}

// Fault is a scripted failure of one call.
type Fault struct {
	// Code and Message make a JSON-RPC error answer (Code non-zero).
	Code    int
	Message string
	// HTTPStatus, when set, answers that status with a plain body instead.
	HTTPStatus int
}

// Server is the loopback node. It is safe for concurrent use.
type Server struct {
	cfg Config
	srv *http.Server
	url string

	mu        sync.Mutex
	latest    uint64
	finalized uint64
	receipts  map[common.Hash]*types.Receipt
	hidden    map[common.Hash]bool
	code      map[common.Address][]byte
	nonce     uint64

	events abi.ABI
	faults simctl.Script[Fault]
	calls  sync.Map // method -> *atomic.Int64
}

// New starts a node on 127.0.0.1 at a free port.
func New(cfg Config) (*Server, error) {
	if cfg.ChainID == 0 {
		cfg.ChainID = BaseSepoliaChainID
	}
	if cfg.Domain == 0 {
		cfg.Domain = cctp.DomainBase
	}
	def := func(a *cctp.EVMAddress, s string) {
		if a.IsZero() {
			*a, _ = cctp.ParseEVMAddress(s)
		}
	}
	def(&cfg.TokenMessenger, TestnetTokenMessenger)
	def(&cfg.MessageTransmitter, TestnetMessageTransmitter)
	def(&cfg.USDC, BaseSepoliaUSDC)
	events, err := abi.JSON(strings.NewReader(eventsABI))
	if err != nil {
		return nil, fmt.Errorf("evmtest: %w", err)
	}
	s := &Server{cfg: cfg, receipts: map[common.Hash]*types.Receipt{}, hidden: map[common.Hash]bool{},
		code: map[common.Address][]byte{}, events: events, latest: 100, finalized: 90}
	for _, a := range []cctp.EVMAddress{cfg.TokenMessenger, cfg.MessageTransmitter, cfg.USDC} {
		s.code[common.Address(a)] = []byte{0x60, 0x80, 0x60, 0x40, 0x52} // a contract's first bytes
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("evmtest: listen: %w", err)
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the node's JSON-RPC endpoint.
func (s *Server) URL() string { return s.url }

// Close stops the node.
func (s *Server) Close() error { return s.srv.Close() }

// Config returns the node's configuration, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Calls counts the calls of method answered so far (faults included).
func (s *Server) Calls(method string) int {
	v, ok := s.calls.Load(method)
	if !ok {
		return 0
	}
	return int(v.(*atomic.Int64).Load())
}

// Inject makes the next times calls of method (every method for "")
// fail with f; times <= 0 means until Clear.
func (s *Server) Inject(method string, f Fault, times int) { s.faults.Add(method, f, times) }

// Clear removes every injected fault.
func (s *Server) Clear() { s.faults.Clear() }

// SetCode deploys code at addr (nil removes it).
func (s *Server) SetCode(addr cctp.EVMAddress, code []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code == nil {
		delete(s.code, common.Address(addr))
		return
	}
	s.code[common.Address(addr)] = bytes.Clone(code)
}

// Latest and Finalized are the newest block and the finalized head.
func (s *Server) Latest() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest
}

// Finalize moves the finalized head to the newest block.
func (s *Server) Finalize() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finalized = s.latest
}

// HideReceipt makes eth_getTransactionReceipt answer null for tx (true)
// or its receipt again (false).
func (s *Server) HideReceipt(tx cctp.TxHash, hide bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hidden[common.Hash(tx)] = hide
}

// Burn is one depositForBurn's logs. Zero fields take the values of a
// well-formed burn to Solana by the configured contracts.
type Burn struct {
	// Depositor signed the burn.
	Depositor cctp.EVMAddress
	// BurnToken is burned; zero means Config.USDC.
	BurnToken cctp.EVMAddress
	// Amount and MaxFee are atomic USDC.
	Amount, MaxFee uint64
	// DestinationDomain is where the mint goes (zero means Solana, 5;
	// set NoDestinationDefault to burn towards domain 0).
	DestinationDomain    cctp.Domain
	NoDestinationDefault bool
	// MintRecipient is the destination account (the Solana USDC token
	// account); DestinationTokenMessenger the destination's
	// TokenMessenger (zero means Solana's TokenMessengerMinterV2);
	// DestinationCaller may relay (zero: anyone).
	MintRecipient, DestinationTokenMessenger, DestinationCaller cctp.Word
	// MinFinalityThreshold is the finality asked for (zero means 2000).
	MinFinalityThreshold uint32
	// HookData is depositForBurnWithHook's data.
	HookData []byte
	// TokenMessenger and MessageTransmitter emit the logs; zero means the
	// configured ones.
	TokenMessenger, MessageTransmitter cctp.EVMAddress
	// Message replaces the MessageSent bytes (nil: the burn's message).
	Message []byte
}

// Burned is what Burn mined.
type Burned struct {
	// TxHash is the transaction's hash; Block its block.
	TxHash cctp.TxHash
	Block  uint64
	// Messages are the MessageSent bytes of each burn, in order, and
	// LogIndexes the index of each DepositForBurn log.
	Messages   [][]byte
	LogIndexes []uint32
}

// Burn mines one transaction with one burn.
func (s *Server) Burn(b Burn) (Burned, error) { return s.BurnAll(false, b) }

// Revert mines a burn transaction that reverted: status 0, no logs.
func (s *Server) Revert() (Burned, error) { return s.BurnAll(true) }

// BurnAll mines one transaction holding every burn, each logging
// MessageSent then DepositForBurn; reverted mines status 0 and no logs.
func (s *Server) BurnAll(reverted bool, burns ...Burn) (Burned, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nonce++
	s.latest++
	block := s.latest
	txHash := crypto.Keccak256Hash([]byte(fmt.Sprintf("evmtest/tx/%d/%d", s.cfg.ChainID, s.nonce)))
	blockHash := crypto.Keccak256Hash([]byte(fmt.Sprintf("evmtest/block/%d/%d", s.cfg.ChainID, block)))
	out := Burned{TxHash: cctp.TxHash(txHash), Block: block}
	rc := &types.Receipt{Type: types.DynamicFeeTxType, Status: types.ReceiptStatusSuccessful, CumulativeGasUsed: 120_000,
		GasUsed: 120_000, TxHash: txHash, BlockHash: blockHash, BlockNumber: new(big.Int).SetUint64(block),
		EffectiveGasPrice: big.NewInt(1_000_000_000), Logs: []*types.Log{}}
	if reverted {
		rc.Status = types.ReceiptStatusFailed
	}
	for _, b := range burns {
		if reverted {
			break
		}
		b = s.withDefaults(b)
		msg := b.Message
		if msg == nil {
			msg = s.message(b)
		}
		sentData, err := s.events.Events["MessageSent"].Inputs.Pack(msg)
		if err != nil {
			return Burned{}, fmt.Errorf("evmtest: pack MessageSent: %w", err)
		}
		burnData, err := s.events.Events["DepositForBurn"].Inputs.NonIndexed().Pack(new(big.Int).SetUint64(b.Amount),
			[32]byte(b.MintRecipient), uint32(b.DestinationDomain), [32]byte(b.DestinationTokenMessenger),
			[32]byte(b.DestinationCaller), new(big.Int).SetUint64(b.MaxFee), b.HookData)
		if err != nil {
			return Burned{}, fmt.Errorf("evmtest: pack DepositForBurn: %w", err)
		}
		var finality common.Hash
		new(big.Int).SetUint64(uint64(b.MinFinalityThreshold)).FillBytes(finality[:])
		topics := []common.Hash{s.events.Events["DepositForBurn"].ID, common.BytesToHash(b.BurnToken[:]),
			common.BytesToHash(b.Depositor[:]), finality}
		base := uint(len(rc.Logs))
		rc.Logs = append(rc.Logs,
			&types.Log{Address: common.Address(b.MessageTransmitter), Topics: []common.Hash{s.events.Events["MessageSent"].ID},
				Data: sentData, BlockNumber: block, TxHash: txHash, BlockHash: blockHash, Index: base},
			&types.Log{Address: common.Address(b.TokenMessenger), Topics: topics, Data: burnData, BlockNumber: block,
				TxHash: txHash, BlockHash: blockHash, Index: base + 1})
		out.Messages = append(out.Messages, msg)
		out.LogIndexes = append(out.LogIndexes, uint32(base+1))
	}
	rc.Bloom = types.CreateBloom(rc)
	s.receipts[txHash] = rc
	return out, nil
}

// withDefaults fills a burn's zero fields.
func (s *Server) withDefaults(b Burn) Burn {
	if b.BurnToken.IsZero() {
		b.BurnToken = s.cfg.USDC
	}
	if b.DestinationDomain == 0 && !b.NoDestinationDefault {
		b.DestinationDomain = cctp.DomainSolana
	}
	if b.DestinationTokenMessenger.IsZero() {
		b.DestinationTokenMessenger = cctp.WordOfAddress(cctp.MinterProgramID())
	}
	if b.MinFinalityThreshold == 0 {
		b.MinFinalityThreshold = 2000
	}
	if b.TokenMessenger.IsZero() {
		b.TokenMessenger = s.cfg.TokenMessenger
	}
	if b.MessageTransmitter.IsZero() {
		b.MessageTransmitter = s.cfg.MessageTransmitter
	}
	return b
}

// message is the V2 burn message b's MessageSent carries.
func (s *Server) message(b Burn) []byte {
	return cctp.Message{Version: cctp.MessageVersion, SourceDomain: s.cfg.Domain, DestinationDomain: b.DestinationDomain,
		Sender: b.TokenMessenger.Word(), Recipient: b.DestinationTokenMessenger, DestinationCaller: b.DestinationCaller,
		MinFinalityThreshold: b.MinFinalityThreshold,
		Body: cctp.BurnBody{Version: cctp.BurnMessageVersion, BurnToken: b.BurnToken.Word(), MintRecipient: b.MintRecipient,
			Amount: cctp.WordOf(b.Amount), MessageSender: b.Depositor.Word(), MaxFee: cctp.WordOf(b.MaxFee),
			HookData: b.HookData}}.Encode()
}

// request is a JSON-RPC 2.0 request.
type request struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "parse error"}})
		return
	}
	v, _ := s.calls.LoadOrStore(req.Method, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	if f, ok := s.faults.Next(req.Method); ok {
		if f.HTTPStatus != 0 {
			http.Error(w, http.StatusText(f.HTTPStatus), f.HTTPStatus)
			return
		}
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": rpcError{f.Code, f.Message}})
		return
	}
	result, rerr := s.answer(req)
	if rerr != nil {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": rerr})
		return
	}
	writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// answer serves one method.
func (s *Server) answer(req request) (any, *rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Method {
	case "eth_chainId":
		return hexutil.EncodeUint64(s.cfg.ChainID), nil
	case "eth_blockNumber":
		return hexutil.EncodeUint64(s.latest), nil
	case "eth_getTransactionReceipt":
		var h common.Hash
		if len(req.Params) != 1 || json.Unmarshal(req.Params[0], &h) != nil {
			return nil, &rpcError{-32602, "invalid argument 0: hex string of 32 bytes expected"}
		}
		rc, ok := s.receipts[h]
		if !ok || s.hidden[h] {
			return nil, nil
		}
		return rc, nil
	case "eth_getCode":
		var a common.Address
		if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &a) != nil {
			return nil, &rpcError{-32602, "invalid argument 0: hex string of 20 bytes expected"}
		}
		return hexutil.Bytes(s.code[a]), nil
	case "eth_getBlockByNumber":
		var tag string
		if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &tag) != nil {
			return nil, &rpcError{-32602, "invalid argument 0"}
		}
		var n uint64
		switch tag {
		case "latest", "pending":
			n = s.latest
		case "finalized", "safe":
			n = s.finalized
		case "earliest":
			n = 0
		default:
			v, err := hexutil.DecodeUint64(tag)
			if err != nil {
				return nil, &rpcError{-32602, "invalid argument 0: block number"}
			}
			if v > s.latest {
				return nil, nil
			}
			n = v
		}
		return map[string]any{"number": hexutil.EncodeUint64(n),
			"hash": crypto.Keccak256Hash([]byte(fmt.Sprintf("evmtest/block/%d/%d", s.cfg.ChainID, n)))}, nil
	}
	return nil, &rpcError{-32601, "the method " + req.Method + " does not exist/is not available"}
}

// eventsABI declares the events the node logs, as TokenMessengerV2 and
// MessageTransmitterV2 declare them.
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
