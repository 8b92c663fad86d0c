package evmrpc_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/evmrpc"
	"github.com/creatormusic/platform/web3/cctp/evmtest"
)

// node starts a simulator and an adapter reaching exactly it.
func node(t *testing.T) (*evmtest.Server, *evmrpc.Client) {
	t.Helper()
	sim, err := evmtest.New(evmtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c, err := evmrpc.New(evmrpc.Config{URL: sim.URL(), HTTPClient: urlguardtest.Client(t, sim.URL())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return sim, c
}

func word(b byte) cctp.Word {
	var w cctp.Word
	for i := range w {
		w[i] = b
	}
	return w
}

// TestReceiptDecodesBurnsAndMessages: a depositForBurn's receipt decodes
// into its DepositForBurn (every field, indexed and not) and the
// MessageSent logged before it, with log indexes and emitters; a
// transaction with two burns keeps both in log order.
func TestReceiptDecodesBurnsAndMessages(t *testing.T) {
	sim, c := node(t)
	ctx := context.Background()
	cfg := sim.Config()
	depositor := cctp.EVMAddress{0xde, 0xad}
	b := evmtest.Burn{Depositor: depositor, Amount: 25_000_000, MaxFee: 2_500, MintRecipient: word(7), DestinationCaller: word(9),
		MinFinalityThreshold: 1000}
	burned, err := sim.BurnAll(false, b, evmtest.Burn{Depositor: depositor, Amount: 1, MintRecipient: word(8)})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.Receipt(ctx, burned.TxHash)
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Succeeded || rc.TxHash != burned.TxHash || rc.BlockNumber != burned.Block || len(rc.Burns) != 2 || len(rc.Messages) != 2 {
		t.Fatalf("receipt = %+v", rc)
	}
	got := rc.Burns[0]
	want := cctp.DepositForBurn{Log: cctp.Log{Index: 1, Address: cfg.TokenMessenger}, BurnToken: cfg.USDC, Depositor: depositor,
		Amount: cctp.WordOf(25_000_000), MaxFee: cctp.WordOf(2_500), MintRecipient: word(7),
		DestinationTokenMessenger: cctp.WordOfAddress(cctp.MinterProgramID()), DestinationCaller: word(9),
		DestinationDomain: cctp.DomainSolana, MinFinalityThreshold: 1000, HookData: []byte{}}
	if got.Log != want.Log || got.BurnToken != want.BurnToken || got.Depositor != want.Depositor || got.Amount != want.Amount ||
		got.MaxFee != want.MaxFee || got.MintRecipient != want.MintRecipient || got.DestinationTokenMessenger != want.DestinationTokenMessenger ||
		got.DestinationCaller != want.DestinationCaller || got.DestinationDomain != want.DestinationDomain ||
		got.MinFinalityThreshold != want.MinFinalityThreshold || len(got.HookData) != 0 {
		t.Fatalf("burn = %+v\nwant %+v", got, want)
	}
	if rc.Burns[1].Index != 3 || rc.Messages[1].Index != 2 || rc.Messages[0].Address != cfg.MessageTransmitter {
		t.Fatalf("log layout: burns %+v messages %+v", rc.Burns, rc.Messages)
	}
	if !bytes.Equal(rc.Messages[0].Message, burned.Messages[0]) {
		t.Fatal("MessageSent bytes differ from the mined message")
	}
	m, err := cctp.DecodeMessage(rc.Messages[0].Message)
	if err != nil || m.SourceDomain != cctp.DomainBase || m.Body.MessageSender != depositor.Word() || m.Body.Amount != cctp.WordOf(25_000_000) {
		t.Fatalf("message = %+v, %v", m, err)
	}
}

// TestReceiptOutcomes: a reverted transaction decodes as failed with no
// burn; an unknown or hidden one is ErrReceiptNotFound; a JSON-RPC error
// and an HTTP failure are errors of their own, never "not found".
func TestReceiptOutcomes(t *testing.T) {
	sim, c := node(t)
	ctx := context.Background()
	rev, err := sim.Revert()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.Receipt(ctx, rev.TxHash)
	if err != nil || rc.Succeeded || len(rc.Burns) != 0 {
		t.Fatalf("reverted: %+v, %v", rc, err)
	}
	if _, err := c.Receipt(ctx, word(1)); !errors.Is(err, cctp.ErrReceiptNotFound) {
		t.Fatalf("unknown transaction: %v", err)
	}
	ok, err := sim.Burn(evmtest.Burn{Amount: 5, MintRecipient: word(2)})
	if err != nil {
		t.Fatal(err)
	}
	sim.HideReceipt(ok.TxHash, true)
	if _, err := c.Receipt(ctx, ok.TxHash); !errors.Is(err, cctp.ErrReceiptNotFound) {
		t.Fatalf("hidden receipt: %v", err)
	}
	sim.HideReceipt(ok.TxHash, false)
	sim.Inject("eth_getTransactionReceipt", evmtest.Fault{Code: -32000, Message: "header not found"}, 1)
	if _, err := c.Receipt(ctx, ok.TxHash); err == nil || errors.Is(err, cctp.ErrReceiptNotFound) {
		t.Fatalf("JSON-RPC error: %v", err)
	}
	sim.Inject("", evmtest.Fault{HTTPStatus: 502}, 1)
	if _, err := c.Receipt(ctx, ok.TxHash); err == nil || errors.Is(err, cctp.ErrReceiptNotFound) {
		t.Fatalf("HTTP 502: %v", err)
	}
	if rc, err := c.Receipt(ctx, ok.TxHash); err != nil || len(rc.Burns) != 1 {
		t.Fatalf("after the faults: %+v, %v", rc, err)
	}
}

// TestChainReads: the chain id, contract code and the finalized head as
// the node answers them.
func TestChainReads(t *testing.T) {
	sim, c := node(t)
	ctx := context.Background()
	if id, err := c.ChainID(ctx); err != nil || id != evmtest.BaseSepoliaChainID {
		t.Fatalf("chain id = %d, %v", id, err)
	}
	if has, err := c.HasCode(ctx, sim.Config().TokenMessenger); err != nil || !has {
		t.Fatalf("TokenMessenger code: %v, %v", has, err)
	}
	if has, err := c.HasCode(ctx, cctp.EVMAddress{1}); err != nil || has {
		t.Fatalf("empty address code: %v, %v", has, err)
	}
	if _, err := sim.Burn(evmtest.Burn{Amount: 1, MintRecipient: word(3)}); err != nil {
		t.Fatal(err)
	}
	before, err := c.FinalizedBlock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sim.Finalize()
	after, err := c.FinalizedBlock(ctx)
	if err != nil || after != sim.Latest() || after <= before {
		t.Fatalf("finalized head %d -> %d (latest %d), %v", before, after, sim.Latest(), err)
	}
}

// TestNewGuardsTheURL: without a client of its own, the adapter takes
// the URL guard's, which refuses a loopback RPC URL before any request.
func TestNewGuardsTheURL(t *testing.T) {
	sim, _ := node(t)
	_, err := evmrpc.New(evmrpc.Config{URL: sim.URL()})
	if !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("loopback URL without an allowance: %v, want INVALID_INPUT", err)
	}
	if n := sim.Calls("eth_chainId"); n != 0 {
		t.Fatalf("the node was called %d times", n)
	}
	if _, err := evmrpc.New(evmrpc.Config{URL: "ftp://example.com"}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("ftp URL: %v", err)
	}
}

// TestRecovery recovers the signer of a digest, with v as 27/28 or 0/1,
// and refuses a high s, a bad recovery id and a short signature.
func TestRecovery(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	want := cctp.EVMAddress(crypto.PubkeyToAddress(key.PublicKey))
	digest := cctp.Keccak256([]byte("a CCTP message"))
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := (evmrpc.Recovery{}).Recover(digest, sig); err != nil || got != want {
		t.Fatalf("v 0/1: %s, %v; want %s", got, err, want)
	}
	eth := bytes.Clone(sig)
	eth[64] += 27
	if got, err := (evmrpc.Recovery{}).Recover(digest, eth); err != nil || got != want {
		t.Fatalf("v 27/28: %s, %v", got, err)
	}
	high := bytes.Clone(eth)
	n := crypto.S256().Params().N
	s := new(big.Int).Sub(n, new(big.Int).SetBytes(high[32:64]))
	s.FillBytes(high[32:64])
	high[64] ^= 1 // the flipped s recovers with the other parity
	if _, err := (evmrpc.Recovery{}).Recover(digest, high); err == nil {
		t.Fatal("a high-s signature was accepted")
	}
	bad := bytes.Clone(eth)
	bad[64] = 29
	if _, err := (evmrpc.Recovery{}).Recover(digest, bad); err == nil {
		t.Fatal("recovery id 29 was accepted")
	}
	if _, err := (evmrpc.Recovery{}).Recover(digest, sig[:64]); err == nil {
		t.Fatal("a 64-byte signature was accepted")
	}
	other := cctp.Keccak256([]byte("another message"))
	if got, err := (evmrpc.Recovery{}).Recover(other, eth); err == nil && got == want {
		t.Fatal("a signature over another digest recovered the signer")
	}
}
