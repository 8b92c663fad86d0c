package intent

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

func TestCreateFreezesEconomics(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	if it.State != StateCreated || it.NetworkState != NetworkUnsent || it.Version != 1 {
		t.Fatalf("state %s/%s v%d", it.State, it.NetworkState, it.Version)
	}
	if it.Network != "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" {
		t.Fatalf("network %s", it.Network)
	}
	// 1,000,000 net at 200 bps: gross 1,020,409 withholds ceil(20408.18) = 20,409.
	if it.NetAtomic != 1_000_000 || it.GrossAtomic != 1_020_409 || it.FeeAtomic != 20_409 || it.GrossAtomic-it.FeeAtomic != it.NetAtomic {
		t.Fatalf("gross %d fee %d net %d", it.GrossAtomic, it.FeeAtomic, it.NetAtomic)
	}
	if it.Payer != h.payer || it.Recipient != h.treasury || it.Mint != h.mint || it.Decimals != 6 || !it.HasTransferFee {
		t.Fatalf("frozen parties wrong: %+v", it)
	}
	if it.Source != token2022.AssociatedTokenAddress(h.payer, h.mint) || it.Destination != token2022.AssociatedTokenAddress(h.treasury, h.mint) {
		t.Fatal("token accounts are not the Token-2022 ATAs")
	}
	if it.Policy != (PolicyRef{ID: CreditPacksPolicyID, Version: 3, Hash: "abc"}) || it.Quantity != "100" || it.FeeEpoch != 5 {
		t.Fatalf("policy/quantity/epoch: %+v %s %d", it.Policy, it.Quantity, it.FeeEpoch)
	}
	if it.BusinessReference != "credit_purchase:"+it.ID || it.Memo != it.ID {
		t.Fatalf("business reference %s memo %s", it.BusinessReference, it.Memo)
	}
	if it.Reference != DeriveReference([]byte("0123456789abcdef0123456789abcdef"), it.ID) {
		t.Fatal("reference is not the HMAC of the id")
	}
	if !it.ExpiresAt.Equal(h.clock.Now().Add(DefaultTTL)) {
		t.Fatalf("expiresAt %v", it.ExpiresAt)
	}
	// 150 blocks of 400 ms bound the prepared transaction.
	if !it.Transaction.ExpiresAt.Equal(h.clock.Now().Add(60*time.Second)) || it.Transaction.LastValidBlockHeight != 1150 {
		t.Fatalf("transaction expiry %v", it.Transaction.ExpiresAt)
	}
	if it.EconomicsHash != ComputeEconomicsHash(it) || len(it.EconomicsHash) != 64 {
		t.Fatal("economics hash not set")
	}
	if h.store.intent(it.ID).EconomicsHash != it.EconomicsHash {
		t.Fatal("intent not stored")
	}
	r := it.Review()
	if r.Pay != "1.020409" || r.Fee != "0.020409" || r.Net != "1" || r.Recipient != h.treasury.String() ||
		r.Description != "100 credits" || !r.ExpiresAt.Equal(it.Transaction.ExpiresAt) || r.Network != it.Network {
		t.Fatalf("review %+v", r)
	}
	// A second intent gets another reference.
	it2 := h.create()
	if it2.Reference == it.Reference || it2.ID == it.ID {
		t.Fatal("references must be unique per intent")
	}
}

func TestCreateWithoutTransferFeeUsesTransferChecked(t *testing.T) {
	h := newHarness(t, token2022.Mint{Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{}})
	it := h.create()
	if it.HasTransferFee || it.GrossAtomic != 1_000_000 || it.FeeAtomic != 0 {
		t.Fatalf("%+v", it)
	}
	tx := must[*solana.Transaction](t)(solana.TransactionFromBase64(it.Transaction.UnsignedBase64()))
	data := []byte(tx.Message.Instructions[1].Data)
	if len(data) != 10 || data[0] != 12 || data[9] != 9 {
		t.Fatalf("transfer data % x", data)
	}
}

func TestCreateRefusals(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	ctx := context.Background()
	good := Request{Purpose: PurposeCreditPurchase, Credits: "100", Mint: h.mint.String(), Wallet: h.payer.String()}
	apiKey := &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", KeyID: "key_1", Environment: access.Test}
	token := *h.user
	token.Kind = access.CredentialAccessToken
	if _, err := h.svc.Create(ctx, &token, good); err != nil {
		t.Fatalf("access token principal: %v", err)
	}
	_, err := h.svc.Create(ctx, apiKey, good)
	wantCode(t, err, fault.AccessDenied)
	_, err = h.svc.Create(ctx, nil, good)
	wantCode(t, err, fault.Unauthenticated)

	_, strangerAddr := keypair("stranger")
	otherMint := key("other-mint")
	h.chain.accounts[otherMint] = chain.AccountInfo{Owner: token2022.ProgramID(), Data: token2022.EncodeMint(feeMint(6, 0, 0))}
	classic := key("classic-mint")
	h.chain.accounts[classic] = chain.AccountInfo{Owner: key("spl-token"), Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})}

	cases := []struct {
		name  string
		req   func(r *Request)
		code  fault.Code
		field string
	}{
		{"recipient", func(r *Request) { r.Recipient = json.RawMessage(`"x"`) }, fault.InvalidInput, "recipient"},
		{"recipient null", func(r *Request) { r.Recipient = json.RawMessage(`null`) }, fault.InvalidInput, "recipient"},
		{"amount", func(r *Request) { r.Amount = json.RawMessage(`"5"`) }, fault.InvalidInput, "amount"},
		{"unknown purpose", func(r *Request) { r.Purpose = "reward_payout" }, fault.InvalidInput, "purpose"},
		{"no wallet", func(r *Request) { r.Wallet = "" }, fault.WalletRequired, "wallet"},
		{"bad wallet", func(r *Request) { r.Wallet = "not-base58!" }, fault.InvalidInput, "wallet"},
		{"unverified wallet", func(r *Request) { r.Wallet = strangerAddr.String() }, fault.WalletRequired, "wallet"},
		{"credits not a pack", func(r *Request) { r.Credits = "101" }, fault.InvalidInput, "credits"},
		{"credits not canonical", func(r *Request) { r.Credits = "0100" }, fault.InvalidInput, "credits"},
		{"mint not allowed", func(r *Request) { r.Mint = otherMint.String() }, fault.InvalidInput, "mint"},
		{"bad mint", func(r *Request) { r.Mint = "zz" }, fault.InvalidInput, "mint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := good
			c.req(&r)
			_, err := h.svc.Create(ctx, h.user, r)
			wantCode(t, err, c.code)
			_, _, d := fault.Public(err)
			if d["field"] != c.field {
				t.Fatalf("details %v, want field %s", d, c.field)
			}
		})
	}
	// A mint the policy allows but the chain says is not Token-2022.
	h2 := newHarness(t, feeMint(6, 200, 5_000_000))
	h2.chain.accounts[h2.mint] = chain.AccountInfo{Owner: key("spl-token"), Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})}
	_, err = h2.svc.Create(ctx, h2.user, Request{Purpose: PurposeCreditPurchase, Credits: "100", Mint: h2.mint.String(), Wallet: h2.payer.String()})
	wantCode(t, err, fault.InvalidInput)
	// A cluster that cannot be read.
	h3 := newHarness(t, feeMint(6, 200, 5_000_000))
	h3.chain.failRead = errTimeout()
	_, err = h3.svc.Create(ctx, h3.user, Request{Purpose: PurposeCreditPurchase, Credits: "100", Mint: h3.mint.String(), Wallet: h3.payer.String()})
	wantCode(t, err, fault.ProviderUnavailable)
	// No environment configured.
	live := *h.user
	live.Environment = access.Live
	_, err = h.svc.Create(ctx, &live, good)
	wantCode(t, err, fault.ServiceUnavailable)
}

func TestRequestFingerprint(t *testing.T) {
	a := Request{Purpose: "credit_purchase", Credits: "100", Mint: "m", Wallet: "w"}
	b := a
	b.Credits = "500"
	if RequestFingerprint(a) == RequestFingerprint(b) {
		t.Fatal("different credits must fingerprint differently")
	}
	c := a
	c.Recipient = json.RawMessage(`"x"`) // not economic input
	if RequestFingerprint(a) != RequestFingerprint(c) {
		t.Fatal("fingerprint covers only the economic input")
	}
	// Field boundaries are unambiguous.
	if RequestFingerprint(Request{Purpose: "a", Credits: "bc"}) == RequestFingerprint(Request{Purpose: "ab", Credits: "c"}) {
		t.Fatal("ambiguous fingerprint")
	}
}

func TestPreparedMessageDecodesWithSolanaGo(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	tx := must[*solana.Transaction](t)(solana.TransactionFromBase64(it.Transaction.UnsignedBase64()))
	m := tx.Message
	if len(tx.Signatures) != 1 || !tx.Signatures[0].IsZero() {
		t.Fatal("want one empty signature slot")
	}
	if m.Header.NumRequiredSignatures != 1 || m.Header.NumReadonlySignedAccounts != 0 || m.Header.NumReadonlyUnsignedAccounts != 4 {
		t.Fatalf("header %+v", m.Header)
	}
	pk := func(a chain.Address) solana.PublicKey { return solana.PublicKeyFromBytes(a[:]) }
	if m.AccountKeys[0] != pk(it.Payer) {
		t.Fatal("fee payer is not first")
	}
	if m.RecentBlockhash.String() != it.Transaction.Blockhash {
		t.Fatal("blockhash")
	}
	if len(m.Instructions) != 2 {
		t.Fatalf("%d instructions", len(m.Instructions))
	}
	memo := m.Instructions[0]
	if m.AccountKeys[memo.ProgramIDIndex] != solana.MemoProgramID || string(memo.Data) != it.ID || len(memo.Accounts) != 0 {
		t.Fatal("memo instruction")
	}
	tr := m.Instructions[1]
	if m.AccountKeys[tr.ProgramIDIndex] != solana.Token2022ProgramID {
		t.Fatal("transfer program is not Token-2022")
	}
	want := []chain.Address{it.Source, it.Mint, it.Destination, it.Payer, it.Reference}
	for i, a := range want {
		if m.AccountKeys[tr.Accounts[i]] != pk(a) {
			t.Fatalf("transfer account %d", i)
		}
	}
	wantFlags := []struct{ w, s bool }{{true, false}, {false, false}, {true, false}, {true, true}, {false, false}}
	for i, f := range wantFlags {
		idx := tr.Accounts[i]
		w, _ := m.IsWritable(m.AccountKeys[idx])
		if w != f.w || m.IsSigner(m.AccountKeys[idx]) != f.s {
			t.Fatalf("account %d flags w=%v s=%v", i, w, m.IsSigner(m.AccountKeys[idx]))
		}
	}
	data := []byte(tr.Data)
	if len(data) != 19 || data[0] != 26 || data[1] != 1 || data[10] != 6 {
		t.Fatalf("TransferCheckedWithFee data % x", data)
	}
	if a, f := leU64(data[2:]), leU64(data[11:]); a != it.GrossAtomic || f != it.FeeAtomic {
		t.Fatalf("amount %d fee %d", a, f)
	}
	raw := must[[]byte](t)(m.MarshalBinary())
	if string(raw) != string(it.Transaction.Message) {
		t.Fatal("solana-go re-encodes the message differently")
	}
	// Sign with crypto/ed25519; solana-go verifies it.
	_, signed := h.sign(it)
	stx := must[*solana.Transaction](t)(solana.TransactionFromBytes(signed))
	if err := stx.VerifySignatures(); err != nil {
		t.Fatal(err)
	}
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
