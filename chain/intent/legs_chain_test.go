package intent_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"sync"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// splitWorld is a chain payment path over a real store and the loopback
// cluster, with a two-leg purpose: a sale whose buyer pays the seller's
// payout and the platform fee to the treasury in one transaction.
type splitWorld struct {
	t         *testing.T
	db        *store.DB
	cluster   *chaintest.Cluster
	rpc       *solanarpc.Client
	svc       *intent.Service
	user      *access.Principal
	payerKey  ed25519.PrivateKey
	payer     chain.Address
	seller    chain.Address
	treasury  chain.Address
	stranger  chain.Address
	mint      chain.Address
	otherMint chain.Address
}

// The sale's nets, in atomic units of the 6-decimal fee mint.
const (
	chainSellerNet = 4_500_000
	chainFeeNet    = 500_000
)

// verifiedWallets verifies one address.
type verifiedWallets chain.Address

func (w verifiedWallets) Verified(_ context.Context, _, _ string, a chain.Address) (bool, error) {
	return a == chain.Address(w), nil
}

// wallet returns a deterministic key pair.
func wallet(name string) (ed25519.PrivateKey, chain.Address) {
	seed := sha256.Sum256([]byte("legs:" + name))
	priv := ed25519.NewKeyFromSeed(seed[:])
	return priv, chain.Address(priv.Public().(ed25519.PublicKey))
}

func newSplitWorld(t *testing.T, open storetest.Opener) *splitWorld {
	t.Helper()
	ctx := context.Background()
	w := &splitWorld{t: t}
	clock := storetest.NewClock(storetest.Epoch)
	w.db = open(t, clock)
	if err := w.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.TenantInsert(ctx, "ten_1", "Tenant One"); err != nil {
			return err
		}
		if err := tx.WorkspaceInsert(ctx, "ws_1", "ten_1", "One"); err != nil {
			return err
		}
		return tx.UserInsert(ctx, "usr_1", "ten_1", "buyer@example.com", "Buyer")
	}); err != nil {
		t.Fatal(err)
	}
	var err error
	if w.cluster, err = chaintest.New(chaintest.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cluster.Close() })
	if w.rpc, err = solanarpc.New(solanarpc.Config{URL: w.cluster.URL(), HTTPClient: urlguardtest.Client(t, w.cluster.URL())}); err != nil {
		t.Fatal(err)
	}
	w.payerKey, w.payer = wallet("payer")
	_, w.seller = wallet("seller")
	_, w.treasury = wallet("treasury")
	_, w.stranger = wallet("stranger")
	_, w.mint = wallet("mint")
	_, w.otherMint = wallet("other-mint")
	fee := token2022.TransferFee{MaximumFee: 5_000_000, BasisPoints: 200}
	for _, m := range []chain.Address{w.mint, w.otherMint} {
		if err := w.cluster.CreateMint(m, token2022.Mint{Decimals: 6, IsInitialized: true, Supply: 1e12,
			Extensions: []token2022.Extension{token2022.TransferFeeConfig{Older: fee, Newer: fee}}}); err != nil {
			t.Fatal(err)
		}
		// The payer holds both mints; every other wallet has its account.
		if _, err := w.cluster.MintTo(w.payer, m, 100_000_000); err != nil {
			t.Fatal(err)
		}
		for _, a := range []chain.Address{w.seller, w.treasury, w.stranger} {
			if _, err := w.cluster.MintTo(a, m, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.cluster.Airdrop(w.payer, 1_000_000_000)
	w.cluster.AdvanceSlots(40)

	reg := intent.NewRegistry()
	if err := reg.Register(intent.Purpose{Name: "split_sale", Threshold: chain.Confirmed,
		Settle: intent.SettleCredits, Settlement: intent.CreditSettlement,
		Price: func(_ context.Context, in intent.PriceInput) (intent.Price, error) {
			return intent.Price{Mint: w.mint, Quantity: "1", Description: "one licence",
				Policy: intent.PolicyRef{ID: "marketplace.fees", Version: 1, Hash: "f00"},
				Legs: []intent.PriceLeg{{Role: "seller", Recipient: w.seller, NetAtomic: chainSellerNet},
					{Role: "platform_fee", Recipient: in.Treasury, NetAtomic: chainFeeNet}}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	w.svc, err = intent.New(intent.Config{Registry: reg,
		Environments: map[access.Environment]intent.Environment{access.Test: {Client: w.rpc, Treasury: w.treasury}},
		Wallets:      verifiedWallets(w.payer), Clock: clock, Run: store.Runner[intent.Store](w.db), ReadFunc: store.Reader[intent.Store](w.db),
		ReferenceKey: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	w.user = &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", SessionID: "ses_1",
		Environment: access.Test}
	return w
}

// create freezes a split sale from the cluster's state.
func (w *splitWorld) create() intent.Intent {
	w.t.Helper()
	it, err := w.svc.Create(context.Background(), w.user, intent.Request{Purpose: "split_sale", Mint: w.mint.String(), Wallet: w.payer.String()})
	if err != nil {
		w.t.Fatal(err)
	}
	return it
}

// sign signs msg with the payer's key: the signature in base58 and the
// wire transaction.
func (w *splitWorld) sign(msg []byte) (string, []byte) {
	sig := ed25519.Sign(w.payerKey, msg)
	wire := append(append(message.AppendCompactU16(nil, 1), sig...), msg...)
	return token2022.EncodeBase58(sig), wire
}

// balance is the atomic balance of wallet's account of mint at confirmed.
func (w *splitWorld) balance(wallet, mint chain.Address) uint64 {
	w.t.Helper()
	b, err := w.cluster.GetTokenAccountBalance(context.Background(), token2022.AssociatedTokenAddress(wallet, mint), chain.Confirmed)
	if err != nil {
		w.t.Fatal(err)
	}
	return b.Amount
}

// settlements counts the ledger movements settling it.
func (w *splitWorld) settlements(it intent.Intent) int {
	w.t.Helper()
	ms, err := w.db.Read().LedgerMovementsByReference(context.Background(), "ten_1", string(ledger.TypeGrant)+":"+it.BusinessReference)
	if err != nil {
		w.t.Fatal(err)
	}
	return len(ms)
}

// TestSplitSaleOnChaintest pays a two-leg intent's prepared transaction on
// the loopback cluster, with a Token-2022 mint that withholds a 2% fee, on
// both dialects: each recipient receives exactly its net, and 50
// concurrent status checks settle the intent once; reconciliation then
// matches every leg.
func TestSplitSaleOnChaintest(t *testing.T) {
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newSplitWorld(t, open)
			sellerBefore, treasuryBefore, payerBefore := w.balance(w.seller, w.mint), w.balance(w.treasury, w.mint), w.balance(w.payer, w.mint)
			it := w.create()
			if len(it.Legs) != 2 || it.Legs[0].Recipient != w.seller || it.Legs[1].Recipient != w.treasury || !it.HasTransferFee {
				t.Fatalf("legs %+v", it.Legs)
			}
			stored, err := w.db.Read().Intent(ctx, it.ID)
			if err != nil || !slices.Equal(stored.Legs, it.Legs) || stored.EconomicsHash != it.EconomicsHash {
				t.Fatalf("stored legs %+v, %v", stored.Legs, err)
			}
			sig, wire := w.sign(it.Transaction.Message)
			if _, err := w.svc.Submit(ctx, w.user, it.ID, intent.SubmitRequest{Signature: sig,
				SignedTransactionBase64: base64.StdEncoding.EncodeToString(wire)}); err != nil {
				t.Fatal(err)
			}
			if o, err := w.svc.Relay(ctx, it.ID); err != nil || !o.Sent {
				t.Fatalf("relay: %v %+v", err, o)
			}
			w.cluster.AdvanceSlots(2)
			// Each recipient received exactly its net, to the atomic unit.
			if got := w.balance(w.seller, w.mint) - sellerBefore; got != chainSellerNet {
				t.Fatalf("seller received %d, want %d", got, chainSellerNet)
			}
			if got := w.balance(w.treasury, w.mint) - treasuryBefore; got != chainFeeNet {
				t.Fatalf("treasury received %d, want %d", got, chainFeeNet)
			}
			if got := payerBefore - w.balance(w.payer, w.mint); got != it.GrossAtomic || it.GrossAtomic != it.Legs[0].GrossAtomic+it.Legs[1].GrossAtomic {
				t.Fatalf("payer sent %d, gross %d", got, it.GrossAtomic)
			}

			// 50 status checks at once: the intent is verified and settled once.
			var wg sync.WaitGroup
			errs := make([]error, 50)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = w.svc.Check(ctx, w.user, it.ID)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil && !fault.Is(err, fault.Conflict) {
					t.Fatalf("a concurrent check failed: %v", err)
				}
			}
			got, err := w.svc.Check(ctx, w.user, it.ID)
			if err != nil || got.Intent.State != intent.StateSettled || len(got.Intent.Evidence) != 0 {
				t.Fatalf("after the checks: %v %s %+v", err, got.Intent.State, got.Intent.Evidence)
			}
			if n := w.settlements(it); n != 1 {
				t.Fatalf("%d settlements, want one", n)
			}
			r, err := w.svc.ReconcileSettled(ctx, it.ID, intent.ReconcileOptions{})
			if err != nil || r.Intent.ReconciliationOutcome != intent.OutcomeMatch {
				t.Fatalf("reconcile: %v %+v", err, r.Reconciliation)
			}
			if n := w.settlements(it); n != 1 {
				t.Fatalf("%d settlements after reconciliation", n)
			}
		})
	}
}

// TestSplitSaleMismatchOnChaintest lands, on the loopback cluster, a
// payment that differs from the prepared one on one leg (short by one
// atomic unit, to the wrong wallet, in the wrong mint), broadcast by the
// wallet itself: the intent goes to REQUIRES_REVIEW with the leg named in
// the evidence, and nothing is settled.
func TestSplitSaleMismatchOnChaintest(t *testing.T) {
	cases := []struct {
		name string
		// leg returns the transfer of leg i, given the prepared one's parts.
		leg  func(w *splitWorld, it intent.Intent, i int, l intent.Leg) message.Instruction
		want []string
	}{
		{"short by one atomic unit", func(w *splitWorld, it intent.Intent, i int, l intent.Leg) message.Instruction {
			gross := l.GrossAtomic
			if i == 1 {
				gross--
			}
			return message.TransferCheckedWithFee(it.Source, it.Mint, l.Destination, it.Payer, gross, it.Decimals, it.TransferFee.Fee(gross))
		}, []string{"legs[1].amount", "legs[1].net"}},
		{"paid to the wrong wallet", func(w *splitWorld, it intent.Intent, i int, l intent.Leg) message.Instruction {
			dst := l.Destination
			if i == 1 {
				dst = token2022.AssociatedTokenAddress(w.stranger, it.Mint)
			}
			return message.TransferCheckedWithFee(it.Source, it.Mint, dst, it.Payer, l.GrossAtomic, it.Decimals, l.FeeAtomic)
		}, []string{"legs[1].destination", "legs[1].recipientBalance"}},
		{"in the wrong mint", func(w *splitWorld, it intent.Intent, i int, l intent.Leg) message.Instruction {
			if i == 0 {
				return message.TransferCheckedWithFee(token2022.AssociatedTokenAddress(w.payer, w.otherMint), w.otherMint,
					token2022.AssociatedTokenAddress(w.seller, w.otherMint), it.Payer, l.GrossAtomic, it.Decimals, l.FeeAtomic)
			}
			return message.TransferCheckedWithFee(it.Source, it.Mint, l.Destination, it.Payer, l.GrossAtomic, it.Decimals, l.FeeAtomic)
		}, []string{"legs[0].source", "legs[0].mint", "legs[0].destination", "legs[0].recipientBalance"}},
	}
	for name, open := range storetest.Dialects() {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					ctx := context.Background()
					w := newSplitWorld(t, open)
					it := w.create()
					ixs := []message.Instruction{message.Memo(it.Memo)}
					for i, l := range it.Legs {
						ix := c.leg(w, it, i, l)
						ix.Accounts = append(ix.Accounts, message.AccountMeta{Key: it.Reference})
						ixs = append(ixs, ix)
					}
					msg, err := message.CompileLegacy(it.Payer, it.Transaction.Blockhash, ixs)
					if err != nil {
						t.Fatal(err)
					}
					sig, wire := w.sign(msg)
					if _, err := w.rpc.SendTransaction(ctx, wire, chain.SendOptions{PreflightCommitment: chain.Processed}); err != nil {
						t.Fatalf("the cluster refused the payment: %v", err)
					}
					w.cluster.AdvanceSlots(2)
					// The wallet broadcast it; the client reports the signature only.
					if _, err := w.svc.Submit(ctx, w.user, it.ID, intent.SubmitRequest{Signature: sig}); err != nil {
						t.Fatal(err)
					}
					o, err := w.svc.Check(ctx, w.user, it.ID)
					if err != nil || o.Intent.State != intent.StateRequiresReview {
						t.Fatalf("check: %v %s %+v", err, o.Intent.State, o.Intent.Evidence)
					}
					var fields []string
					for _, m := range o.Intent.Evidence {
						fields = append(fields, m.Field)
					}
					for _, f := range c.want {
						if !slices.Contains(fields, f) {
							t.Fatalf("evidence %v misses %s: %+v", fields, f, o.Intent.Evidence)
						}
					}
					stored, err := w.db.Read().Intent(ctx, it.ID)
					if err != nil || stored.State != intent.StateRequiresReview || w.settlements(it) != 0 {
						t.Fatalf("stored %s, %d settlements, %v", stored.State, w.settlements(it), err)
					}
				})
			}
		})
	}
}
