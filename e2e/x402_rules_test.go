package e2e_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/x402/x402test"
)

// x402Build is a payment under construction: the accepted requirement,
// the transaction's fee payer, blockhash, instructions and signing keys,
// and a last change to the payload.
type x402Build struct {
	req       x402.Requirements
	feePayer  chain.Address
	blockhash string
	ixs       []message.Instruction
	keys      []ed25519.PrivateKey
	payload   func(*x402.PaymentPayload)
}

// build signs b and returns its payload.
func (b x402Build) build(t *testing.T) x402.PaymentPayload {
	t.Helper()
	wire, err := x402.SignTransaction(b.feePayer, b.blockhash, b.ixs, b.keys...)
	if err != nil {
		t.Fatal(err)
	}
	pp := x402.NewPayload(b.req, nil, wire)
	if b.payload != nil {
		b.payload(&pp)
	}
	return pp
}

// TestX402FacilitatorRules breaks each rule of the offer and of the
// facilitator for Solana alone, builds the payment with a real keypair
// and asks the verify route: each is refused with its reason, nothing is
// written, and the unbroken payment is valid (from the header and from the
// body's paymentPayload alike).
func TestX402FacilitatorRules(t *testing.T) {
	dialects(t, func(t *testing.T, pg bool) {
		fx := newX402(t, pg, x402Setup{})
		s, key := fx.s, fx.s.Boot.TestKey
		_, _, required := fx.requirements(t, key)
		_, _, strangers := fx.requirements(t, s.Bootstrap("Stranger").TestKey) // a memo of another workspace
		req := required.Accepts[0]
		mint, payTo, prog := fx.dep.Mint, fx.dep.PayTo, fx.dep.TokenProgram
		source := token2022.AssociatedTokenAddressFor(fx.payer, mint, prog)
		dest := fx.dep.PayToAccount
		strangerKey, stranger := chaintest.NewKeypair()
		poorKey, poor := chaintest.NewKeypair()
		if _, err := fx.dep.Fund(s.Cluster, poor, 1); err != nil {
			t.Fatal(err)
		}
		emptyKey, empty := chaintest.NewKeypair() // no token account at all
		s.Cluster.Airdrop(empty, 10_000_000)
		transfer := func(src, m, dst, owner chain.Address, amount uint64, decimals uint8) message.Instruction {
			return message.TransferChecked(prog, src, m, dst, owner, amount, decimals)
		}
		base := func() x402Build {
			ixs, err := x402.PaymentInstructions(req, fx.payer, prog, x402test.Decimals, "")
			if err != nil {
				t.Fatal(err)
			}
			return x402Build{req: req, feePayer: fx.dep.FeePayerAddress, blockhash: fx.blockhash(t), ixs: ixs, keys: []ed25519.PrivateKey{fx.payerKey}}
		}
		payAs := func(wallet chain.Address, k ed25519.PrivateKey) func(*x402Build) {
			return func(b *x402Build) {
				b.ixs[2] = transfer(token2022.AssociatedTokenAddressFor(wallet, mint, prog), mint, dest, wallet, x402Price, x402test.Decimals)
				b.keys = []ed25519.PrivateKey{k}
			}
		}
		cases := []struct {
			name   string
			change func(b *x402Build)
			reason string
			setup  func() (undo func())
		}{
			{name: "valid"},
			// The offer (checked by the platform before any facilitator).
			{name: "x402 version 1", change: func(b *x402Build) { b.payload = func(p *x402.PaymentPayload) { p.X402Version = 1 } },
				reason: x402.ReasonVersion},
			{name: "another scheme", change: func(b *x402Build) { b.payload = func(p *x402.PaymentPayload) { p.Accepted.Scheme = "upto" } },
				reason: x402.ReasonScheme},
			{name: "another network", change: func(b *x402Build) {
				b.payload = func(p *x402.PaymentPayload) { p.Accepted.Network = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" }
			}, reason: x402.ReasonNetwork},
			{name: "a memo issued to another workspace", change: func(b *x402Build) {
				m := strangers.Accepts[0].Extra.Memo
				b.req.Extra.Memo, b.ixs[3] = m, message.Memo(m)
			}, reason: x402.ReasonMemoMismatch},
			{name: "a lower accepted amount", change: func(b *x402Build) {
				b.req.Amount = "1"
				b.ixs[2] = transfer(source, mint, dest, fx.payer, 1, x402test.Decimals)
			}, reason: x402.ReasonRequirements},
			{name: "another accepted payTo", change: func(b *x402Build) { b.req.PayTo = stranger.String() }, reason: x402.ReasonRequirements},
			// The transaction (the facilitator's rules for Solana).
			{name: "another fee payer", change: func(b *x402Build) { b.feePayer = stranger }, reason: x402.ReasonFeePayerMismatch},
			{name: "the fee payer's slot signed", change: func(b *x402Build) { b.keys = append(b.keys, fx.dep.FeePayer) },
				reason: x402.ReasonFeePayerSigned},
			{name: "lookup tables", change: func(b *x402Build) {
				c, err := message.Compile(message.V0, b.feePayer, b.blockhash, b.ixs,
					[]message.LookupTable{{Address: stranger, Addresses: []chain.Address{mint}}})
				if err != nil {
					t.Fatal(err)
				}
				wire := message.Unsigned(c.Bytes)
				b.payload = func(p *x402.PaymentPayload) {
					p.Payload = []byte(`{"transaction":"` + base64.StdEncoding.EncodeToString(wire) + `"}`)
				}
			}, reason: x402.ReasonLookupTables},
			{name: "two instructions", change: func(b *x402Build) { b.ixs, b.keys = b.ixs[:2], nil }, reason: x402.ReasonInstructionsLength},
			{name: "seven instructions", change: func(b *x402Build) {
				b.ixs = append(b.ixs, message.Memo("a"), message.Memo("b"), message.Memo("c"))
			}, reason: x402.ReasonInstructionsLength},
			{name: "no compute unit limit first", change: func(b *x402Build) { b.ixs[0], b.ixs[1] = b.ixs[1], b.ixs[0] },
				reason: x402.ReasonComputeLimit},
			{name: "no compute unit price second", change: func(b *x402Build) { b.ixs[1] = message.SetComputeUnitLimit(1) },
				reason: x402.ReasonComputePrice},
			{name: "a unit price over 5 lamports", change: func(b *x402Build) { b.ixs[1] = message.SetComputeUnitPrice(5_000_001) },
				reason: x402.ReasonComputePriceTooHigh},
			{name: "TransferCheckedWithFee", change: func(b *x402Build) {
				b.ixs[2] = message.TransferCheckedWithFee(source, mint, dest, fx.payer, x402Price, x402test.Decimals, 0)
			}, reason: x402.ReasonNoTransfer},
			{name: "an unknown fourth instruction", change: func(b *x402Build) {
				b.ixs[3] = message.Instruction{ProgramID: chaintest.PoolProgramID(), Data: []byte{1}}
			}, reason: x402.ReasonFourth},
			{name: "the fee payer as authority", change: func(b *x402Build) {
				b.ixs[2] = transfer(token2022.AssociatedTokenAddressFor(fx.dep.FeePayerAddress, mint, prog), mint, dest, fx.dep.FeePayerAddress,
					x402Price, x402test.Decimals)
				b.keys = nil
			}, reason: x402.ReasonFeePayerInInstruction},
			{name: "the fee payer as source", change: func(b *x402Build) {
				b.ixs[2] = transfer(fx.dep.FeePayerAddress, mint, dest, fx.payer, x402Price, x402test.Decimals)
			}, reason: x402.ReasonFeePayerInInstruction},
			{name: "another mint", change: func(b *x402Build) {
				b.ixs[2] = transfer(source, s.Token.Mint, dest, fx.payer, x402Price, x402test.Decimals)
			}, reason: x402.ReasonMint},
			{name: "payTo's wallet as destination", change: func(b *x402Build) {
				b.ixs[2] = transfer(source, mint, payTo, fx.payer, x402Price, x402test.Decimals)
			}, reason: x402.ReasonRecipient},
			{name: "one unit less", change: func(b *x402Build) {
				b.ixs[2] = transfer(source, mint, dest, fx.payer, x402Price-1, x402test.Decimals)
			}, reason: x402.ReasonAmount},
			{name: "one unit more", change: func(b *x402Build) {
				b.ixs[2] = transfer(source, mint, dest, fx.payer, x402Price+1, x402test.Decimals)
			}, reason: x402.ReasonAmount},
			{name: "no memo", change: func(b *x402Build) { b.ixs = b.ixs[:3] }, reason: x402.ReasonMemoCount},
			{name: "two memos", change: func(b *x402Build) { b.ixs = append(b.ixs, message.Memo(req.Extra.Memo)) }, reason: x402.ReasonMemoCount},
			{name: "another memo text", change: func(b *x402Build) { b.ixs[3] = message.Memo("my own memo") }, reason: x402.ReasonMemoMismatch},
			{name: "a third signer", change: func(b *x402Build) {
				b.ixs[3] = message.Memo(req.Extra.Memo, stranger)
				b.keys = append(b.keys, strangerKey)
			}, reason: x402.ReasonSigners},
			{name: "the authority did not sign", change: func(b *x402Build) { b.keys = nil }, reason: x402.ReasonSignature},
			// The chain (accounts and blockhash).
			{name: "another token program", change: func(b *x402Build) {
				t22 := token2022.ProgramID()
				b.ixs[2] = message.TransferChecked(t22, token2022.AssociatedTokenAddressFor(fx.payer, mint, t22), mint,
					token2022.AssociatedTokenAddressFor(payTo, mint, t22), fx.payer, x402Price, x402test.Decimals)
			}, reason: x402.ReasonTokenProgram},
			{name: "other decimals", change: func(b *x402Build) {
				b.ixs[2] = transfer(source, mint, dest, fx.payer, x402Price, 9)
			}, reason: x402.ReasonDecimals},
			{name: "no source account", change: payAs(empty, emptyKey), reason: x402.ReasonSourceMissing},
			{name: "not enough funds", change: payAs(poor, poorKey), reason: x402.ReasonInsufficientFunds},
			{name: "no destination account", setup: func() func() {
				a, _ := s.Cluster.Account(dest)
				s.Cluster.DeleteAccount(dest)
				return func() { s.Cluster.SetAccount(dest, a) }
			}, reason: x402.ReasonDestinationMissing},
			{name: "an unknown blockhash", change: func(b *x402Build) { b.blockhash = stranger.String() }, reason: x402.ReasonBlockhash},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				b := base()
				if c.change != nil {
					c.change(&b)
				}
				if c.setup != nil {
					defer c.setup()()
				}
				r := fx.verify(key, header(t, b.build(t)))
				var v api.X402VerifyView
				r.Data(t, &v)
				if r.Status != http.StatusOK {
					t.Fatalf("verify: %d %s", r.Status, r.Body)
				}
				if c.reason == "" {
					if !v.IsValid {
						t.Fatalf("the valid payment: %s", r.Body)
					}
					return
				}
				if v.IsValid || v.InvalidReason != c.reason {
					t.Fatalf("got %s, want %s", r.Body, c.reason)
				}
			})
		}
		if rows := outboxTypes(t, s, "test"); rows["x402_settlement.submitting"] != 0 {
			t.Fatalf("verification wrote settlements: %v", rows)
		}

		// The body's paymentPayload is the header's fallback; a header
		// that cannot be read, or no payment, is 400.
		pp := base().build(t)
		body := map[string]any{"paymentPayload": map[string]any{"x402Version": 2, "accepted": pp.Accepted,
			"payload": map[string]any{"transaction": txOf(t, pp)}}}
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/x402/verify", Key: key, Body: body})
		var v api.X402VerifyView
		r.Data(t, &v)
		if r.Status != http.StatusOK || !v.IsValid {
			t.Fatalf("verify from the body: %d %s", r.Status, r.Body)
		}
		for name, sig := range map[string]string{"base64url": base64.RawURLEncoding.EncodeToString([]byte(`{"x402Version":2}`)) + "-_",
			"not JSON": base64.StdEncoding.EncodeToString([]byte("hello"))} {
			if r := fx.verify(key, sig); r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/x402/verify", Key: key}); r.Status != http.StatusBadRequest {
			t.Errorf("no payment: %d %s", r.Status, r.Body)
		}
	})
}

// txOf is the base64 transaction of a payment.
func txOf(t *testing.T, pp x402.PaymentPayload) string {
	t.Helper()
	tx, inv := x402.DecodePaymentTransaction(pp)
	if inv != nil {
		t.Fatal(inv)
	}
	return base64.StdEncoding.EncodeToString(tx.Wire)
}
