package chaintest_test

import (
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/iristest"
)

// cctpSetup installs the receive side with a USDC mint, the attester set
// of an attestation simulator, a recipient's and a fee recipient's token
// accounts, and returns a message attested for the recipient.
type cctpSetup struct {
	e                       *env
	iris                    *iristest.Server
	usdc, recipient, feeAcc chain.Address
	payer                   wallet
}

func newCCTP(t *testing.T) cctpSetup {
	t.Helper()
	e := newEnv(t, chaintest.Config{})
	sim, err := iristest.New(iristest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	_, usdc := chaintest.NewKeypair()
	e.c.SetAccount(usdc, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82),
		Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})})
	if err := e.c.InstallCCTP(chaintest.CCTPConfig{Mint: usdc, VerifyAttestationFunc: sim.Verify}); err != nil {
		t.Fatal(err)
	}
	_, owner := chaintest.NewKeypair()
	recipient, err := e.c.MintTo(owner, usdc, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, feeOwner := chaintest.NewKeypair()
	feeAcc, err := e.c.MintTo(feeOwner, usdc, 0)
	if err != nil {
		t.Fatal(err)
	}
	return cctpSetup{e: e, iris: sim, usdc: usdc, recipient: recipient, feeAcc: feeAcc, payer: e.wallet(1_000_000_000)}
}

// attested is an attested V2 burn message of amount to recipient with
// fee executed, nonce n.
func (s cctpSetup) attested(recipient chain.Address, amount, fee uint64, n byte) []byte {
	var nonce cctp.Word
	nonce[31] = n
	return cctp.Message{Version: cctp.MessageVersion, SourceDomain: cctp.DomainBase, DestinationDomain: cctp.DomainSolana, Nonce: nonce,
		Recipient: cctp.WordOfAddress(cctp.MinterProgramID()), MinFinalityThreshold: 1000, FinalityThresholdExecuted: 1000,
		Body: cctp.BurnBody{Version: cctp.BurnMessageVersion, MintRecipient: cctp.WordOfAddress(recipient), Amount: cctp.WordOf(amount),
			MaxFee: cctp.WordOf(fee + 10), FeeExecuted: cctp.WordOf(fee)}}.Encode()
}

// receive sends a receive_message and returns its signature.
func (s cctpSetup) receive(t *testing.T, msg, att []byte) string {
	t.Helper()
	ix, err := chaintest.ReceiveMessageInstruction(s.payer.addr, s.recipient, s.feeAcc, s.usdc, msg, att)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := s.e.c.LatestBlockhash()
	wire, err := chaintest.SignedTransaction(s.payer.addr, hash.String(), []message.Instruction{ix}, s.payer.priv)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.e.rpc.SendRawTransactionWithOpts(s.e.ctx, wire, rpc.TransactionOpts{SkipPreflight: true})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	s.e.c.AdvanceSlots(1)
	return sig.String()
}

func (s cctpSetup) balance(t *testing.T, a chain.Address) uint64 {
	t.Helper()
	b, err := s.e.c.GetTokenAccountBalance(s.e.ctx, a, chain.Processed)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount
}

// TestReceiveMessageMintsOnce: an attested message mints the amount
// minus the fee executed to its recipient and the fee to the fee
// recipient, and records its nonce used; the same message again fails as
// Anchor's init of an existing account does and moves nothing.
func TestReceiveMessageMintsOnce(t *testing.T) {
	s := newCCTP(t)
	msg := s.attested(s.recipient, 5_000_000, 500, 1)
	sig := s.receive(t, msg, s.iris.Sign(msg))
	tx, err := s.e.c.GetTransaction(s.e.ctx, sig, chain.Confirmed)
	if err != nil || tx.Err != "" {
		t.Fatalf("mint: %+v, %v", tx, err)
	}
	if got := s.balance(t, s.recipient); got != 4_999_500 {
		t.Fatalf("recipient = %d, want 4999500", got)
	}
	if got := s.balance(t, s.feeAcc); got != 500 {
		t.Fatalf("fee recipient = %d, want 500", got)
	}
	m, _ := cctp.DecodeMessage(msg)
	pda, _ := cctp.UsedNonceAddress(cctp.TransmitterProgramID(), m.Nonce)
	used, ok := s.e.c.Account(pda)
	if !ok || used.Owner != cctp.TransmitterProgramID() || !cctp.UsedNonceSet(used.Data) {
		t.Fatalf("used nonce account: %+v, %v", used, ok)
	}
	again := s.receive(t, msg, s.iris.Sign(msg))
	tx, err = s.e.c.GetTransaction(s.e.ctx, again, chain.Confirmed)
	if err != nil || !strings.Contains(tx.Err, `"Custom":0`) {
		t.Fatalf("repeat: err %q, %v", tx.Err, err)
	}
	if got := s.balance(t, s.recipient); got != 4_999_500 {
		t.Fatalf("the repeat minted: recipient = %d", got)
	}
}

// TestReceiveMessageRefusals: an attestation of strangers, a message for
// another recipient than the account credited, another destination
// domain, and a fee executed above the max fee all fail and mint nothing.
func TestReceiveMessageRefusals(t *testing.T) {
	s := newCCTP(t)
	stranger, err := iristest.New(iristest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stranger.Close() })
	_, elsewhere := chaintest.NewKeypair()
	other := s.attested(elsewhere, 1_000, 0, 3)
	bad := cctp.Message{Version: cctp.MessageVersion, DestinationDomain: cctp.DomainBase, Nonce: cctp.WordOf(4),
		Recipient: cctp.WordOfAddress(cctp.MinterProgramID()),
		Body:      cctp.BurnBody{Version: cctp.BurnMessageVersion, MintRecipient: cctp.WordOfAddress(s.recipient), Amount: cctp.WordOf(1)}}.Encode()
	fee := cctp.Message{Version: cctp.MessageVersion, DestinationDomain: cctp.DomainSolana, Nonce: cctp.WordOf(5),
		Recipient: cctp.WordOfAddress(cctp.MinterProgramID()),
		Body: cctp.BurnBody{Version: cctp.BurnMessageVersion, MintRecipient: cctp.WordOfAddress(s.recipient), Amount: cctp.WordOf(100),
			MaxFee: cctp.WordOf(1), FeeExecuted: cctp.WordOf(2)}}.Encode()
	msg := s.attested(s.recipient, 1_000, 0, 2)
	for name, c := range map[string]struct {
		msg, att []byte
		code     string
	}{
		"strangers' attestation": {msg, stranger.Sign(msg), `"Custom":6027`},
		"another recipient":      {other, s.iris.Sign(other), `"Custom":6006`},
		"another domain":         {bad, s.iris.Sign(bad), `"Custom":6018`},
		"fee above max fee":      {fee, s.iris.Sign(fee), `"Custom":6008`},
	} {
		sig := s.receive(t, c.msg, c.att)
		tx, err := s.e.c.GetTransaction(s.e.ctx, sig, chain.Confirmed)
		if err != nil || !strings.Contains(tx.Err, c.code) {
			t.Errorf("%s: err %q, %v; want %s", name, tx.Err, err, c.code)
		}
	}
	if got := s.balance(t, s.recipient); got != 0 {
		t.Fatalf("a refused receive minted %d", got)
	}
}
