package intent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// purposeSplitSale is the test purpose with two legs: the seller's payout
// and the platform fee to the treasury.
const purposeSplitSale = "split_sale"

// The split sale's nets, in atomic units of a 6-decimal mint.
const (
	sellerNet = 900_000
	feeNet    = 100_000
)

// splitSale registers, on h, a purpose priced by legs (nil: the split
// sale's seller payout and platform fee) and provisions the sellers'
// token accounts on the fake chain. It returns the seller wallet.
func (h *harness) splitSale(legs func(in PriceInput) []PriceLeg) chain.Address {
	h.t.Helper()
	seller := key("seller")
	if legs == nil {
		legs = func(in PriceInput) []PriceLeg {
			return []PriceLeg{{Role: "seller", Recipient: seller, NetAtomic: sellerNet}, {Role: "platform_fee", Recipient: in.Treasury, NetAtomic: feeNet}}
		}
	}
	err := h.registry.Register(Purpose{Name: purposeSplitSale, Threshold: chain.Confirmed, Settle: h.settle, Settlement: h.settlement,
		Price: func(_ context.Context, in PriceInput) (Price, error) {
			return Price{Mint: h.mint, Legs: legs(in), Quantity: "1", Description: "one licence", Policy: PolicyRef{ID: "marketplace.fees", Version: 1, Hash: "f00"}}, nil
		}})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, w := range []chain.Address{seller, h.treasury, key("seller-2"), key("seller-3")} {
		h.tokenAccount(w, token2022.StateInitialized)
	}
	return seller
}

// tokenAccount puts wallet's Token-2022 account of h's mint on the fake
// chain in state st.
func (h *harness) tokenAccount(wallet chain.Address, st token2022.AccountState) {
	h.chain.mu.Lock()
	defer h.chain.mu.Unlock()
	h.chain.accounts[token2022.AssociatedTokenAddress(wallet, h.mint)] = chain.AccountInfo{Owner: token2022.ProgramID(),
		Data: token2022.EncodeAccount(token2022.Account{Mint: h.mint, Owner: wallet, State: st})}
}

// createSplit makes a split_sale intent.
func (h *harness) createSplit() Intent {
	h.t.Helper()
	it, err := h.svc.Create(context.Background(), h.user, Request{Purpose: purposeSplitSale, Mint: h.mint.String(), Wallet: h.payer.String()})
	if err != nil {
		h.t.Fatal(err)
	}
	return it
}

// landedLegs returns the chain record of the prepared transaction of an
// intent with legs under sig, each leg's destination growing by nets[i].
func landedLegs(it Intent, sig string, nets ...uint64) chain.Transaction {
	keys := []chain.Address{it.Payer, it.Source}
	ixs := []chain.Instruction{{ProgramID: message.MemoProgramID(), Data: []byte(it.Memo)}}
	tx := chain.Transaction{Signature: sig, Slot: 80, NumSigners: 1}
	for i, l := range it.Legs {
		keys = append(keys, l.Destination)
		ixs = append(ixs, chain.Instruction{ProgramID: it.TokenProgram,
			Accounts: []chain.Address{it.Source, it.Mint, l.Destination, it.Payer, it.Reference},
			Data:     transferData(l.GrossAtomic, it.Decimals, it.HasTransferFee, l.FeeAtomic)})
		tx.PreTokenBalances = append(tx.PreTokenBalances, chain.TokenBalance{AccountIndex: 2 + i, Account: l.Destination, Mint: it.Mint,
			Owner: l.Recipient, Amount: 7})
		tx.PostTokenBalances = append(tx.PostTokenBalances, chain.TokenBalance{AccountIndex: 2 + i, Account: l.Destination, Mint: it.Mint,
			Owner: l.Recipient, Amount: 7 + nets[i]})
	}
	tx.AccountKeys = append(keys, message.MemoProgramID(), it.Mint, it.Reference, it.TokenProgram)
	tx.Instructions = ixs
	return tx
}

// nets returns the frozen nets of it's legs.
func nets(it Intent) []uint64 {
	var out []uint64
	for _, l := range it.Legs {
		out = append(out, l.NetAtomic)
	}
	return out
}

// TestCreditPurchaseCanonicalFormUnchanged pins the economics hash and the
// prepared message of a credit_purchase intent to the values they had
// before intents had legs: a single payment to the treasury keeps its
// canonical form (intent-economics/v1) and its message byte for byte.
func TestCreditPurchaseCanonicalFormUnchanged(t *testing.T) {
	for _, c := range []struct {
		name      string
		mint      token2022.Mint
		hash, msg string
	}{
		{"fee mint", feeMint(6, 200, 5_000_000),
			"519d404fbdbf6fd8c49b821546a7ae18ed160dbede4824aa4ee546259a601853", "95f801db9b3f531989d89aea6573bd9c1fab1d9289aef6e2018fe7dcb91afb07"},
		{"no fee", token2022.Mint{Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{}},
			"93550ee96d1b485de13138499eb024bf3512f7accd6191d4be404e914fb0cd17", "8984703b403b73bd367c2749927485e202bf8742fbc8f7b3da93b43fd5962ed1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.mint)
			it := h.create()
			sum := sha256.Sum256(it.Transaction.Message)
			if it.Legs != nil || it.EconomicsHash != c.hash || hex.EncodeToString(sum[:]) != c.msg {
				t.Fatalf("legs %v, hash %s, message sha256 %x", it.Legs, it.EconomicsHash, sum)
			}
			legs := it.PaymentLegs()
			if len(legs) != 1 || legs[0] != (Leg{Role: RoleTreasury, Recipient: h.treasury, Destination: it.Destination,
				GrossAtomic: it.GrossAtomic, FeeAtomic: it.FeeAtomic, NetAtomic: it.NetAtomic}) || it.MultiRecipient() {
				t.Fatalf("derived legs %+v", legs)
			}
		})
	}
}

func TestLegsCreateFreezesEachLeg(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	seller := h.splitSale(nil)
	it := h.createSplit()
	if len(it.Legs) != 2 || !it.MultiRecipient() {
		t.Fatalf("legs %+v", it.Legs)
	}
	// Each leg is grossed up on its own: 900,000 at 200 bps needs
	// 918,368 (fee 18,368); 100,000 needs 102,041 (fee 2,041).
	want := []Leg{
		{Role: "seller", Recipient: seller, Destination: token2022.AssociatedTokenAddress(seller, h.mint), GrossAtomic: 918_368, FeeAtomic: 18_368, NetAtomic: sellerNet},
		{Role: "platform_fee", Recipient: h.treasury, Destination: token2022.AssociatedTokenAddress(h.treasury, h.mint), GrossAtomic: 102_041, FeeAtomic: 2_041, NetAtomic: feeNet},
	}
	if !slices.Equal(it.Legs, want) {
		t.Fatalf("legs\n got %+v\nwant %+v", it.Legs, want)
	}
	for _, l := range it.Legs {
		if l.GrossAtomic-it.TransferFee.Fee(l.GrossAtomic) != l.NetAtomic {
			t.Fatalf("leg %s does not net its price", l.Role)
		}
	}
	// The intent's amounts are the totals; recipient and destination the first leg's.
	if it.GrossAtomic != 1_020_409 || it.FeeAtomic != 20_409 || it.NetAtomic != 1_000_000 || it.Recipient != seller ||
		it.Destination != want[0].Destination || it.Quantity != "1" || it.Policy.ID != "marketplace.fees" {
		t.Fatalf("totals %d/%d/%d recipient %s", it.GrossAtomic, it.FeeAtomic, it.NetAtomic, it.Recipient)
	}
	// The legs are frozen: any change to a leg breaks the hash.
	if it.EconomicsHash != ComputeEconomicsHash(it) {
		t.Fatal("hash not set")
	}
	for _, tamper := range []func(l *Leg){
		func(l *Leg) { l.NetAtomic-- }, func(l *Leg) { l.Role = "platform" }, func(l *Leg) { l.Recipient = key("x") },
		func(l *Leg) { l.Destination = key("x") }, func(l *Leg) { l.FeeAtomic++ }, func(l *Leg) { l.GrossAtomic++ },
	} {
		c := it
		c.Legs = slices.Clone(it.Legs)
		tamper(&c.Legs[1])
		if ComputeEconomicsHash(c) == it.EconomicsHash {
			t.Fatalf("a changed leg hashes the same: %+v", c.Legs[1])
		}
		if err := integrity("test", c); !fault.Is(err, fault.VerificationFailed) {
			t.Fatalf("integrity of a changed leg: %v", err)
		}
	}
	swapped := it
	swapped.Legs = []Leg{it.Legs[1], it.Legs[0]}
	dropped := it
	dropped.Legs = nil
	for _, c := range []Intent{swapped, dropped} {
		if ComputeEconomicsHash(c) == it.EconomicsHash {
			t.Fatal("reordered or dropped legs hash the same")
		}
	}
	r := it.Review()
	if r.Pay != "1.020409" || r.Net != "1" || len(r.Legs) != 2 || r.Legs[0] != (ReviewLeg{Role: "seller", Recipient: seller.String(), Pay: "0.918368",
		Fee: "0.018368", Net: "0.9"}) || r.Legs[1].Net != "0.1" {
		t.Fatalf("review %+v", r)
	}
}

// TestLegsGrossUpPerTransfer shows why legs are grossed up one by one: the
// mint caps its fee per transfer, so one gross-up of the total would leave
// the legs short.
func TestLegsGrossUpPerTransfer(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000)) // a 5,000 cap: each leg's fee is capped
	h.splitSale(func(in PriceInput) []PriceLeg {
		return []PriceLeg{{Role: "seller", Recipient: key("seller"), NetAtomic: 9_000_000}, {Role: "platform_fee", Recipient: in.Treasury, NetAtomic: 1_000_000}}
	})
	it := h.createSplit()
	if it.Legs[0].FeeAtomic != 5_000 || it.Legs[1].FeeAtomic != 5_000 || it.FeeAtomic != 10_000 || it.GrossAtomic != 10_010_000 {
		t.Fatalf("legs %+v total fee %d", it.Legs, it.FeeAtomic)
	}
	total, _, err := GrossUp(it.NetAtomic, it.TransferFee)
	if err != nil {
		t.Fatal(err)
	}
	if total >= it.GrossAtomic {
		t.Fatalf("a single gross-up of the total (%d) should be cheaper, and wrong, than the legs' (%d)", total, it.GrossAtomic)
	}
}

func TestLegsPreparedMessage(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	h.splitSale(nil)
	it := h.createSplit()
	tx := must[*solana.Transaction](t)(solana.TransactionFromBase64(it.Transaction.UnsignedBase64()))
	m := tx.Message
	pk := func(a chain.Address) solana.PublicKey { return solana.PublicKeyFromBytes(a[:]) }
	// Payer; writable source and both destinations in order of appearance;
	// then the read-only memo program, mint, reference and Token-2022.
	wantKeys := []chain.Address{it.Payer, it.Source, it.Legs[0].Destination, it.Legs[1].Destination, message.MemoProgramID(), it.Mint,
		it.Reference, it.TokenProgram}
	if len(m.AccountKeys) != len(wantKeys) || m.Header.NumRequiredSignatures != 1 || m.Header.NumReadonlyUnsignedAccounts != 4 {
		t.Fatalf("keys %v header %+v", m.AccountKeys, m.Header)
	}
	for i, k := range wantKeys {
		if m.AccountKeys[i] != pk(k) {
			t.Fatalf("key %d is %s, want %s", i, m.AccountKeys[i], k)
		}
	}
	if len(m.Instructions) != 3 || m.AccountKeys[m.Instructions[0].ProgramIDIndex] != solana.MemoProgramID || string(m.Instructions[0].Data) != it.ID {
		t.Fatalf("want the memo then two transfers: %+v", m.Instructions)
	}
	for i, l := range it.Legs {
		tr := m.Instructions[1+i]
		if m.AccountKeys[tr.ProgramIDIndex] != solana.Token2022ProgramID {
			t.Fatalf("leg %d program", i)
		}
		for k, a := range []chain.Address{it.Source, it.Mint, l.Destination, it.Payer, it.Reference} {
			if m.AccountKeys[tr.Accounts[k]] != pk(a) {
				t.Fatalf("leg %d account %d", i, k)
			}
		}
		data := []byte(tr.Data)
		if len(data) != 19 || data[0] != 26 || data[1] != 1 || leU64(data[2:]) != l.GrossAtomic || data[10] != 6 || leU64(data[11:]) != l.FeeAtomic {
			t.Fatalf("leg %d data % x", i, data)
		}
	}
	raw := must[[]byte](t)(m.MarshalBinary())
	if string(raw) != string(it.Transaction.Message) {
		t.Fatal("solana-go re-encodes the message differently")
	}
}

// TestLegsBound: at most MaxLegs legs; the largest message stays far below
// the transaction size limit.
func TestLegsBound(t *testing.T) {
	four := func(in PriceInput) []PriceLeg {
		return []PriceLeg{{Role: "seller", Recipient: key("seller"), NetAtomic: 1}, {Role: "seller_2", Recipient: key("seller-2"), NetAtomic: 2},
			{Role: "seller_3", Recipient: key("seller-3"), NetAtomic: 3}, {Role: "platform_fee", Recipient: in.Treasury, NetAtomic: 4}}
	}
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	h.splitSale(four)
	it := h.createSplit()
	if len(it.Legs) != MaxLegs || 1+64+len(it.Transaction.Message) > 600 {
		t.Fatalf("%d legs, signed size %d", len(it.Legs), 1+64+len(it.Transaction.Message))
	}
	h2 := newHarness(t, feeMint(6, 200, 5_000_000))
	h2.splitSale(func(in PriceInput) []PriceLeg {
		return append(four(in), PriceLeg{Role: "extra", Recipient: key("extra"), NetAtomic: 5})
	})
	_, err := h2.svc.Create(context.Background(), h2.user, Request{Purpose: purposeSplitSale, Mint: h2.mint.String(), Wallet: h2.payer.String()})
	wantCode(t, err, fault.Internal)
}

func TestLegsCreateRefusals(t *testing.T) {
	ctx := context.Background()
	seller := key("seller")
	malformed := []struct {
		name string
		legs func(in PriceInput) []PriceLeg
	}{
		{"duplicate role", func(in PriceInput) []PriceLeg {
			return []PriceLeg{{Role: "seller", Recipient: seller, NetAtomic: 1}, {Role: "seller", Recipient: in.Treasury, NetAtomic: 1}}
		}},
		{"duplicate recipient", func(in PriceInput) []PriceLeg {
			return []PriceLeg{{Role: "seller", Recipient: seller, NetAtomic: 1}, {Role: "platform_fee", Recipient: seller, NetAtomic: 1}}
		}},
		{"zero net", func(in PriceInput) []PriceLeg {
			return []PriceLeg{{Role: "seller", Recipient: seller, NetAtomic: 1}, {Role: "platform_fee", Recipient: in.Treasury}}
		}},
		{"no recipient", func(in PriceInput) []PriceLeg { return []PriceLeg{{Role: "seller", NetAtomic: 1}} }},
		{"bad role", func(in PriceInput) []PriceLeg { return []PriceLeg{{Role: "Seller", Recipient: seller, NetAtomic: 1}} }},
	}
	for _, c := range malformed {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, feeMint(6, 200, 5_000_000))
			h.splitSale(c.legs)
			_, err := h.svc.Create(ctx, h.user, Request{Purpose: purposeSplitSale, Mint: h.mint.String(), Wallet: h.payer.String()})
			wantCode(t, err, fault.Internal)
			if len(h.store.committed().intents) != 0 {
				t.Fatal("a refused intent was stored")
			}
		})
	}
	t.Run("price and legs both", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		err := h.registry.Register(Purpose{Name: purposeSplitSale, Threshold: chain.Confirmed, Settle: h.settle,
			Settlement: h.settlement, Price: func(context.Context, PriceInput) (Price, error) {
				return Price{Mint: h.mint, NetAtomic: 5, Legs: []PriceLeg{{Role: "seller", Recipient: seller, NetAtomic: 1}}}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.svc.Create(ctx, h.user, Request{Purpose: purposeSplitSale, Mint: h.mint.String(), Wallet: h.payer.String()})
		wantCode(t, err, fault.Internal)
	})
	t.Run("payer is a recipient", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		h.splitSale(func(in PriceInput) []PriceLeg {
			return []PriceLeg{{Role: "seller", Recipient: h.payer, NetAtomic: 1}, {Role: "platform_fee", Recipient: in.Treasury, NetAtomic: 1}}
		})
		_, err := h.svc.Create(ctx, h.user, Request{Purpose: purposeSplitSale, Mint: h.mint.String(), Wallet: h.payer.String()})
		wantCode(t, err, fault.InvalidInput)
		if _, _, d := fault.Public(err); d["field"] != "wallet" {
			t.Fatalf("details %v", d)
		}
	})
	// Recipients' accounts: missing, frozen, another mint's, requiring memos.
	for _, c := range []struct {
		name   string
		setup  func(h *harness, seller chain.Address)
		reason string
	}{
		{"missing", func(h *harness, s chain.Address) {
			delete(h.chain.accounts, token2022.AssociatedTokenAddress(h.treasury, h.mint))
		}, ReasonRecipientAccountMissing},
		{"frozen", func(h *harness, s chain.Address) { h.tokenAccount(h.treasury, token2022.StateFrozen) }, ReasonRecipientAccountFrozen},
		{"another mint", func(h *harness, s chain.Address) {
			h.chain.accounts[token2022.AssociatedTokenAddress(h.treasury, h.mint)] = chain.AccountInfo{Owner: token2022.ProgramID(),
				Data: token2022.EncodeAccount(token2022.Account{Mint: key("other-mint"), Owner: h.treasury, State: token2022.StateInitialized})}
		}, ReasonRecipientAccountInvalid},
		{"memo required", func(h *harness, s chain.Address) {
			h.chain.accounts[token2022.AssociatedTokenAddress(h.treasury, h.mint)] = chain.AccountInfo{Owner: token2022.ProgramID(),
				Data: token2022.EncodeAccount(token2022.Account{Mint: h.mint, Owner: h.treasury, State: token2022.StateInitialized,
					Extensions: []token2022.Extension{token2022.RawExtension{Type: token2022.ExtensionMemoTransfer, Value: []byte{1}}}})}
		}, ReasonRecipientRequiresMemo},
	} {
		t.Run("recipient account "+c.name, func(t *testing.T) {
			h := newHarness(t, feeMint(6, 200, 5_000_000))
			s := h.splitSale(nil)
			c.setup(h, s)
			_, err := h.svc.Create(ctx, h.user, Request{Purpose: purposeSplitSale, Mint: h.mint.String(), Wallet: h.payer.String()})
			wantCode(t, err, fault.WalletRequired)
			_, _, d := fault.Public(err)
			if d["field"] != "legs[1].recipient" || d["role"] != "platform_fee" || d["reason"] != c.reason {
				t.Fatalf("details %v", d)
			}
			if len(h.store.committed().intents) != 0 {
				t.Fatal("a refused intent was stored")
			}
		})
	}
}

// payLegs submits it signed and lands tx for it at confirmed, then runs
// the reconciler once.
func (h *harness) payLegs(it Intent, tx func(sig string) chain.Transaction) Outcome {
	h.t.Helper()
	it = h.submitSigned(it)
	h.chain.setStatus(it.Signature, chain.Confirmed, "")
	h.chain.mu.Lock()
	h.chain.txs[it.Signature] = tx(it.Signature)
	h.chain.mu.Unlock()
	return must[Outcome](h.t)(h.svc.Reconcile(context.Background(), it.ID))
}

func TestLegsPaidSettleOnceAndReconcile(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	h.splitSale(nil)
	it := h.createSplit()
	o := h.payLegs(it, func(sig string) chain.Transaction { return landedLegs(it, sig, nets(it)...) })
	if o.Intent.State != StateSettled || len(o.Intent.Evidence) != 0 || len(h.settled) != 1 || h.settled[0] != purposeSplitSale+":"+it.ID {
		t.Fatalf("%s %+v settled %v", o.Intent.State, o.Intent.Evidence, h.settled)
	}
	r := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{}))
	if r.Intent.ReconciliationOutcome != OutcomeMatch {
		t.Fatalf("%+v", r.Reconciliation)
	}
	names := map[string]bool{}
	for _, c := range r.Reconciliation.Checks {
		names[c.Name] = true
	}
	for _, n := range []string{"chain.legs", "chain.memo", "chain.legs[0].net", "chain.legs[1].net", "chain.legs[1].recipient",
		"chain.legs[1].fee", "chain.legs[0].destination", "settlement.amount"} {
		if !names[n] {
			t.Fatalf("reconciliation misses %s: %+v", n, r.Reconciliation.Checks)
		}
	}
	if len(h.settled) != 1 {
		t.Fatal("settled twice")
	}
}

// TestLegsMismatchesNameTheLeg: a payment that differs from the prepared
// one on any leg goes to REQUIRES_REVIEW, crediting nothing, with evidence
// naming the leg.
func TestLegsMismatchesNameTheLeg(t *testing.T) {
	stranger := key("stranger")
	otherMint := key("other-mint")
	cases := []struct {
		name   string
		tamper func(it Intent, tx *chain.Transaction)
		want   []string // fields that must be in the evidence
	}{
		{"leg short by one atomic unit", func(it Intent, tx *chain.Transaction) {
			l := it.Legs[1]
			tx.Instructions[2].Data = transferData(l.GrossAtomic-1, it.Decimals, true, it.TransferFee.Fee(l.GrossAtomic-1))
			tx.PostTokenBalances[1].Amount--
		}, []string{"legs[1].amount", "legs[1].net"}},
		{"net short by one, transfer as prepared", func(it Intent, tx *chain.Transaction) {
			tx.PostTokenBalances[0].Amount--
		}, []string{"legs[0].net"}},
		{"leg paid to the wrong wallet", func(it Intent, tx *chain.Transaction) {
			wrong := token2022.AssociatedTokenAddress(stranger, it.Mint)
			tx.Instructions[2].Accounts[2] = wrong
			tx.AccountKeys[3] = wrong
			tx.PreTokenBalances[1] = chain.TokenBalance{AccountIndex: 3, Account: wrong, Mint: it.Mint, Owner: stranger}
			tx.PostTokenBalances[1] = chain.TokenBalance{AccountIndex: 3, Account: wrong, Mint: it.Mint, Owner: stranger, Amount: it.Legs[1].NetAtomic}
		}, []string{"legs[1].destination", "legs[1].recipientBalance"}},
		{"leg's account owned by another wallet", func(it Intent, tx *chain.Transaction) {
			tx.PostTokenBalances[1].Owner = stranger
		}, []string{"legs[1].recipient"}},
		{"leg in the wrong mint", func(it Intent, tx *chain.Transaction) {
			tx.Instructions[1].Accounts[1] = otherMint
			tx.PostTokenBalances[0].Mint = otherMint
		}, []string{"legs[0].mint", "legs[0].recipientMint"}},
		{"leg missing", func(it Intent, tx *chain.Transaction) {
			tx.Instructions = tx.Instructions[:2]
			tx.PostTokenBalances[1].Amount = tx.PreTokenBalances[1].Amount
		}, []string{"legs", "legs[1]", "legs[1].net"}},
		{"extra leg", func(it Intent, tx *chain.Transaction) {
			tx.Instructions = append(tx.Instructions, chain.Instruction{ProgramID: it.TokenProgram,
				Accounts: []chain.Address{it.Source, it.Mint, token2022.AssociatedTokenAddress(stranger, it.Mint), it.Payer, it.Reference},
				Data:     transferData(5, it.Decimals, true, 1)})
		}, []string{"legs", "legs[2]"}},
		{"legs swapped", func(it Intent, tx *chain.Transaction) {
			tx.Instructions[1], tx.Instructions[2] = tx.Instructions[2], tx.Instructions[1]
		}, []string{"legs[0].amount", "legs[0].destination", "legs[1].amount", "legs[1].destination"}},
		{"no reference on a leg", func(it Intent, tx *chain.Transaction) {
			tx.Instructions[2].Accounts = tx.Instructions[2].Accounts[:4]
		}, []string{"legs[1].reference"}},
		{"memo not before the transfers", func(it Intent, tx *chain.Transaction) {
			tx.Instructions = append(tx.Instructions[1:], tx.Instructions[0])
		}, []string{"instruction", "memo"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, feeMint(6, 200, 5_000_000))
			h.splitSale(nil)
			it := h.createSplit()
			o := h.payLegs(it, func(sig string) chain.Transaction {
				tx := landedLegs(it, sig, nets(it)...)
				tx.AccountKeys = slices.Clone(tx.AccountKeys)
				for i := range tx.Instructions {
					tx.Instructions[i].Accounts = slices.Clone(tx.Instructions[i].Accounts)
				}
				c.tamper(it, &tx)
				return tx
			})
			if o.Intent.State != StateRequiresReview || o.Intent.LastError != fault.RequiresReview || len(h.settled) != 0 {
				t.Fatalf("state %s, settled %v", o.Intent.State, h.settled)
			}
			var got []string
			for _, m := range o.Intent.Evidence {
				got = append(got, m.Field)
			}
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Fatalf("evidence %v misses %s: %+v", got, w, o.Intent.Evidence)
				}
			}
			if h.store.intent(it.ID).State != StateRequiresReview {
				t.Fatal("review not stored")
			}
		})
	}
}

func TestLegsCompare(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	h.splitSale(nil)
	it := h.createSplit()
	o := h.payLegs(it, func(sig string) chain.Transaction { return landedLegs(it, sig, nets(it)...) })
	it = o.Intent
	settlement := must[Settlement](t)(h.settlement(context.Background(), nil, it))
	record := func(fn func(tx *chain.Transaction)) ChainRecord {
		tx := landedLegs(it, it.Signature, nets(it)...)
		tx.AccountKeys = slices.Clone(tx.AccountKeys)
		fn(&tx)
		return ChainRecord{Network: it.Network, Commitment: chain.Confirmed, Transaction: &tx}
	}
	for _, c := range []struct {
		name   string
		rec    ChainRecord
		want   ReconciliationOutcome
		failed []string
	}{
		{"match", record(func(*chain.Transaction) {}), OutcomeMatch, nil},
		{"second leg short by one", record(func(tx *chain.Transaction) { tx.PostTokenBalances[1].Amount-- }), OutcomeDriftDetected,
			[]string{"chain.legs[1].net", "chain.legs[1].fee"}},
		{"first leg's account owned by another", record(func(tx *chain.Transaction) { tx.PostTokenBalances[0].Owner = key("stranger") }),
			OutcomeRequiresReview, []string{"chain.legs[0].recipient"}},
		{"leg missing", record(func(tx *chain.Transaction) { tx.Instructions = tx.Instructions[:2] }), OutcomeRequiresReview,
			[]string{"chain.legs", "chain.legs[1].instruction"}},
		{"extra leg", record(func(tx *chain.Transaction) {
			tx.Instructions = append(tx.Instructions, tx.Instructions[2])
		}), OutcomeRequiresReview, []string{"chain.legs", "chain.legs[2]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, checks := Compare(it, c.rec, settlement)
			if got != c.want || !slices.Equal(failed(checks), c.failed) {
				t.Fatalf("outcome %s, failed %v; want %s, %v", got, failed(checks), c.want, c.failed)
			}
			for _, ch := range checks {
				if ch.Passed != (ch.Expected == ch.Actual) && !strings.HasSuffix(ch.Name, ".instruction") {
					t.Fatalf("check %+v: verdict disagrees with its values", ch)
				}
			}
		})
	}
}

func TestLegsPaymentRequestRefused(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	h.splitSale(nil)
	it := h.createSplit()
	_, err := h.svc.RequestPayment(ctx, h.user, it.ID)
	wantCode(t, err, fault.CapabilityUnsupported)
	if _, _, d := fault.Public(err); d["reason"] != ReasonMultiRecipient {
		t.Fatalf("details %v", d)
	}
	if len(h.store.committed().requests) != 0 {
		t.Fatal("a payment request was stored")
	}
	// The requirements still list every leg.
	req := map[string]string{}
	for _, r := range Requirements(it) {
		req[r.Field] = r.Value
	}
	for i, l := range it.Legs {
		if req[legField(i, "recipient")] != l.Recipient.String() || req[legField(i, "destination")] != l.Destination.String() ||
			req[legField(i, "net")] != u64(l.NetAtomic) || req[legField(i, "amount")] != u64(l.GrossAtomic) || req[legField(i, "role")] != l.Role {
			t.Fatalf("requirements %v miss leg %d", req, i)
		}
	}
	if req["legs"] != "2" || req["reference"] != it.Reference.String() || req["memo"] != it.ID {
		t.Fatalf("requirements %v", req)
	}
}

// TestOneLegPaymentRequest: a purpose that prices a single leg (a sale
// without platform fee) still takes a Solana Pay request to that leg's
// recipient, and a wallet-built transfer settles it.
func TestOneLegPaymentRequest(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	seller := h.splitSale(func(PriceInput) []PriceLeg {
		return []PriceLeg{{Role: "seller", Recipient: key("seller"), NetAtomic: sellerNet}}
	})
	it := h.createSplit()
	pr := must[PaymentRequest](t)(h.svc.RequestPayment(ctx, h.user, it.ID))
	if pr.Recipient != seller || pr.AmountAtomic != it.Legs[0].GrossAtomic || pr.NetAtomic != sellerNet ||
		!strings.HasPrefix(pr.URI, "solana:"+seller.String()+"?amount=0.918368&") {
		t.Fatalf("%+v", pr)
	}
	sig := "WalletBuiltSig"
	tx := landedLegs(it, sig, sellerNet)
	tx.Instructions = tx.Instructions[1:] // no memo
	tx.Instructions[0].Data = transferData(it.Legs[0].GrossAtomic, it.Decimals, false, 0)
	h.chain.refs[it.Reference] = []chain.SignatureInfo{{Signature: sig}}
	h.chain.txs[sig] = tx
	h.chain.setStatus(sig, chain.Confirmed, "")
	o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateSettled || o.Intent.Origin != OriginReference {
		t.Fatalf("%s %+v", o.Intent.State, o.Intent.Evidence)
	}
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }
