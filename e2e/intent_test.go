package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// buyer is a signed-in user in test mode with a verified, funded wallet.
type buyer struct {
	person
	wallet walletKey
}

// fundedBuyer signs a user up, gives them a workspace, verifies a fresh
// wallet for them and funds it with lamports for fees and tokens of the
// deployed mint.
func fundedBuyer(t testing.TB, s *platformtest.System, email string, tokens uint64) buyer {
	t.Helper()
	p := buyer{person: testSession(t, s, email), wallet: newWalletKey(t)}
	c := challenge(t, s, p.person, p.wallet.addr)
	if r := verifyWallet(s, p.person, c.ID, ed25519.Sign(p.wallet.priv, []byte(c.Message)), ""); r.Status != http.StatusOK {
		t.Fatalf("verify wallet: %d %s", r.Status, r.Body)
	}
	addr, err := token2022.ParsePublicKey(p.wallet.addr)
	if err != nil {
		t.Fatal(err)
	}
	s.Cluster.Airdrop(addr, 1_000_000_000)
	if _, err := s.Cluster.MintTo(addr, s.Token.Mint, tokens); err != nil {
		t.Fatal(err)
	}
	s.Cluster.AdvanceSlots(40)
	return p
}

// createIntent posts a credit_purchase intent as p in test mode.
func createIntent(s *platformtest.System, p buyer, key string, body map[string]any) *platformtest.Response {
	h := map[string]string{transport.EnvironmentHeader: "test", "Idempotency-Key": key}
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/intent", Cookie: p.cookie, Header: h, Body: body})
}

// signIntent signs the prepared message with p's wallet: the signature in
// base58 and the signed wire transaction in base64.
func signIntent(t testing.TB, p buyer, iv api.TransactionIntentView) (string, string) {
	t.Helper()
	msg, err := base64.StdEncoding.DecodeString(iv.Transaction.MessageBase64)
	if err != nil {
		t.Fatal(err)
	}
	sig := ed25519.Sign(p.wallet.priv, msg)
	wire := append(append([]byte{1}, sig...), msg...)
	return solana.SignatureFromBytes(sig).String(), base64.StdEncoding.EncodeToString(wire)
}

// intentGet reads an intent as p.
func intentGet(t *testing.T, s *platformtest.System, p buyer, id string) api.TransactionIntentView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/transactions/" + id, Cookie: p.cookie, Header: testMode})
	if r.Status != http.StatusOK {
		t.Fatalf("get intent: %d %s", r.Status, r.Body)
	}
	var v api.TransactionIntentView
	r.Data(t, &v)
	return v
}

// workspaceCredits is the test-mode credit balance of p's workspace.
func workspaceCredits(t testing.TB, s *platformtest.System, p buyer) int64 {
	t.Helper()
	ac := authContextIn(t, s, p.cookie)
	sc := ledger.Scope{TenantID: ac.Tenant.ID, WorkspaceID: ac.Workspace.ID, Environment: access.Test}
	a, err := s.DB.Read().LedgerAccountGet(context.Background(), sc, ledger.Credits, ledger.AccountWorkspaceCredits)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(a.Balance.String(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// authContextIn reads the auth context of a session in test mode.
func authContextIn(t testing.TB, s *platformtest.System, cookie string) api.AuthContext {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Cookie: cookie, Header: testMode})
	if r.Status != http.StatusOK {
		t.Fatalf("auth context: %d %s", r.Status, r.Body)
	}
	var ac api.AuthContext
	r.Data(t, &ac)
	return ac
}

// internalKey issues an internal-scope test key for the system's
// bootstrap workspace.
func internalKey(t *testing.T, s *platformtest.System) string {
	t.Helper()
	_, k, err := s.P.IssueInternalKey(context.Background(), s.Boot.TenantID, s.Boot.WorkspaceID, s.Boot.OwnerID, access.Test, "operator")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCreditPurchaseOnChain runs the whole chain payment path on the
// loopback cluster with a real keypair: challenge, verify, intent, sign,
// submit, relay, confirm, finalize, and the credits granted once.
func TestCreditPurchaseOnChain(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			p := fundedBuyer(t, s, "payer@example.test", 100_000_000_000)
			// The workspace's monthly plan grant lands from a job; wait for
			// it so that only the purchase moves the balance below.
			var before int64
			waitFor(t, "the plan grant", func() bool { before = workspaceCredits(t, s, p); return before > 0 })
			body := map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": s.Token.Mint.String(), "wallet": p.wallet.addr}
			r := createIntent(s, p, "buy-100", body)
			if r.Status != http.StatusCreated {
				t.Fatalf("intent: %d %s", r.Status, r.Body)
			}
			var iv api.TransactionIntentView
			r.Data(t, &iv)
			if iv.State != "CREATED" || iv.NetAtomic != "1000000000" || iv.Transaction == nil || iv.Recipient != s.Token.Treasury.String() ||
				iv.Network != s.Cluster.Network().CAIP2() || iv.Policy.ID != "credits.packs" || iv.Review.Net != "1" {
				t.Fatalf("intent = %+v", iv)
			}
			// 200 bps up to 5 tokens: the buyer sends enough for the treasury to net the price.
			if iv.GrossAtomic != "1020408164" || iv.FeeAtomic != "20408164" {
				t.Fatalf("gross %s fee %s", iv.GrossAtomic, iv.FeeAtomic)
			}
			// One leg, the treasury's, whose amounts are the intent's.
			if len(iv.Legs) != 1 || iv.Legs[0] != (api.IntentLegView{Role: "treasury", Recipient: iv.Recipient,
				RecipientTokenAccount: iv.RecipientTokenAccount, GrossAtomic: iv.GrossAtomic, FeeAtomic: iv.FeeAtomic, NetAtomic: iv.NetAtomic}) ||
				len(iv.Review.Legs) != 1 || iv.Review.Legs[0].Net != "1" || iv.Review.Legs[0].Recipient != iv.Recipient {
				t.Fatalf("legs %+v review legs %+v", iv.Legs, iv.Review.Legs)
			}
			// The same key and body replay the intent; another body is a conflict.
			if r := createIntent(s, p, "buy-100", body); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %s", r.Status, r.Body)
			}
			other := map[string]any{"purpose": "credit_purchase", "credits": "500", "mint": s.Token.Mint.String(), "wallet": p.wallet.addr}
			if r := createIntent(s, p, "buy-100", other); r.Code() != "IDEMPOTENCY_CONFLICT" {
				t.Fatalf("same key, other economics: %d %s", r.Status, r.Body)
			}

			sig, wire := signIntent(t, p, iv)
			r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/" + iv.ID + "/submit", Cookie: p.cookie,
				Header: testMode, Body: map[string]any{"signature": sig, "signedTransactionBase64": wire}})
			if r.Status != http.StatusOK {
				t.Fatalf("submit: %d %s", r.Status, r.Body)
			}
			var sv api.TransactionIntentView
			r.Data(t, &sv)
			if sv.State != "SUBMITTED" || sv.Signature == nil || *sv.Signature != sig || sv.Transaction != nil {
				t.Fatalf("submitted = %+v", sv)
			}
			if got := workspaceCredits(t, s, p); got != before {
				t.Fatalf("submit granted credits: %d -> %d", before, got)
			}
			var final api.TransactionIntentView
			waitFor(t, "the intent to settle and reconcile", func() bool {
				s.Cluster.AdvanceSlots(1)
				s.Clock.Advance(time.Second) // the watch job runs every second
				final = intentGet(t, s, p, iv.ID)
				return final.State == "RECONCILED"
			})
			if final.NetworkState != "confirmed" && final.NetworkState != "finalized" || final.Slot == nil || final.SettledAt == nil ||
				final.Reconciliation == nil || final.Reconciliation.Outcome != "MATCH" || final.ReconciledAt == nil {
				t.Fatalf("settled = %+v", final)
			}
			if got := workspaceCredits(t, s, p); got != before+100 {
				t.Fatalf("credits %d -> %d, want +100", before, got)
			}
			waitFor(t, "finalized", func() bool {
				s.Cluster.AdvanceSlots(4)
				s.Clock.Advance(time.Second) // the watch follows a settled intent to finalized
				return intentGet(t, s, p, iv.ID).NetworkState == "finalized"
			})
			// Settled once: repeated checks grant nothing more.
			internal := internalKey(t, s)
			for range 3 {
				r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/" + iv.ID + "/chain-status", Key: internal})
				if r.Status != http.StatusOK {
					t.Fatalf("chain-status: %d %s", r.Status, r.Body)
				}
			}
			if got := workspaceCredits(t, s, p); got != before+100 {
				t.Fatalf("credits after repeated checks: %d, want %d", got, before+100)
			}
			if n := count(t, s, "SELECT COUNT(*) FROM ledger_movements WHERE reference = ?", "grant:credit_purchase:"+iv.ID); n != 1 {
				t.Fatalf("%d grant movements, want 1", n)
			}
			// Money-path logs carry the signature at most: never the signed
			// bytes or any key material.
			logs := s.Log.String()
			for name, secret := range map[string]string{"signed transaction": wire,
				"private key": base64.StdEncoding.EncodeToString(p.wallet.priv), "seed": base64.StdEncoding.EncodeToString(p.wallet.priv.Seed())} {
				if strings.Contains(logs, secret) {
					t.Fatalf("the logs contain the %s", name)
				}
			}
		})
}

// buyerSetup is a system with the loopback cluster, a funded, verified
// buyer and a helper that creates intents for them.
func buyerSetup(t *testing.T, opts platformtest.Options) (*platformtest.System, buyer, func(key string) api.TransactionIntentView) {
	t.Helper()
	s := platformtest.New(t, opts)
	p := fundedBuyer(t, s, "payer@example.test", 100_000_000_000)
	create := func(key string) api.TransactionIntentView {
		t.Helper()
		r := createIntent(s, p, key, map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": s.Token.Mint.String(), "wallet": p.wallet.addr})
		if r.Status != http.StatusCreated {
			t.Fatalf("intent: %d %s", r.Status, r.Body)
		}
		var iv api.TransactionIntentView
		r.Data(t, &iv)
		return iv
	}
	return s, p, create
}

// submit posts a signature (and signed bytes when wire is set).
func submit(s *platformtest.System, p buyer, id, sig, wire string) *platformtest.Response {
	body := map[string]any{"signature": sig}
	if wire != "" {
		body["signedTransactionBase64"] = wire
	}
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/" + id + "/submit", Cookie: p.cookie,
		Header: testMode, Body: body})
}

// awaitState advances the cluster and the clock until the intent reaches
// state.
func awaitState(t *testing.T, s *platformtest.System, p buyer, id, state string, step time.Duration) api.TransactionIntentView {
	t.Helper()
	var v api.TransactionIntentView
	waitFor(t, "intent "+state, func() bool {
		s.Cluster.AdvanceSlots(1)
		s.Clock.Advance(step)
		v = intentGet(t, s, p, id)
		return v.State == state
	})
	return v
}

// TestIntentSubmitRefusals: a signed transaction whose message differs
// from the prepared one, a signature already bound to another intent and
// an expired intent are refused, and nothing is sent or settled.
func TestIntentSubmitRefusals(t *testing.T) {
	t.Parallel()
	s, p, create := buyerSetup(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}})
	a := create("a")
	b := create("b")
	sigA, wireA := signIntent(t, p, a)
	_, wireB := signIntent(t, p, b)
	// B's signed bytes carry B's message, not A's.
	if r := submit(s, p, a.ID, sigA, wireB); r.Code() != "SIGNATURE_REJECTED" {
		t.Fatalf("another message: %d %s", r.Status, r.Body)
	}
	// A message altered after signing fails the signature.
	raw, _ := base64.StdEncoding.DecodeString(wireA)
	raw[len(raw)-1] ^= 1
	if r := submit(s, p, a.ID, sigA, base64.StdEncoding.EncodeToString(raw)); r.Code() != "SIGNATURE_REJECTED" {
		t.Fatalf("altered message: %d %s", r.Status, r.Body)
	}
	if r := submit(s, p, a.ID, sigA, wireA); r.Status != http.StatusOK {
		t.Fatalf("submit a: %d %s", r.Status, r.Body)
	}
	// One signature pays at most one intent.
	if r := submit(s, p, b.ID, sigA, ""); r.Code() != "CONFLICT" {
		t.Fatalf("a's signature on b: %d %s", r.Status, r.Body)
	}
	// An intent past its expiry takes no signature.
	c := create("c")
	sigC, wireC := signIntent(t, p, c)
	s.Clock.Advance(16 * time.Minute)
	if r := submit(s, p, c.ID, sigC, wireC); r.Code() != "QUOTE_EXPIRED" {
		t.Fatalf("expired intent: %d %s", r.Status, r.Body)
	}
	// The server derives the recipient and the amount; an API key is no
	// signed-in user.
	for field, v := range map[string]any{"recipient": s.Token.Treasury.String(), "amount": "1"} {
		body := map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": s.Token.Mint.String(), "wallet": p.wallet.addr, field: v}
		if r := createIntent(s, p, "extra-"+field, body); r.Code() != "INVALID_INPUT" || !strings.Contains(string(r.Body), `"field":"`+field+`"`) {
			t.Fatalf("caller-supplied %s: %d %s", field, r.Status, r.Body)
		}
	}
	if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/intent", Key: s.Boot.TestKey,
		Header: map[string]string{"Idempotency-Key": "key-caller"}, Body: map[string]any{"purpose": "credit_purchase", "credits": "100",
			"mint": s.Token.Mint.String(), "wallet": p.wallet.addr}}); r.Code() != "ACCESS_DENIED" {
		t.Fatalf("an API key: %d %s", r.Status, r.Body)
	}
	// A wallet the user has not verified cannot pay.
	if r := createIntent(s, p, "unverified", map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": s.Token.Mint.String(),
		"wallet": newWalletKey(t).addr}); r.Code() != "WALLET_REQUIRED" {
		t.Fatalf("an unverified wallet: %d %s", r.Status, r.Body)
	}
	if n := s.Cluster.Calls("sendTransaction"); n != 0 {
		t.Fatalf("%d sends with the job pool disabled", n)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM ledger_movements WHERE reference LIKE 'grant:credit_purchase:%'"); n != 0 {
		t.Fatalf("%d grants", n)
	}
}

// TestIntentRelayFaults: a relay whose send times out is uncertain, then
// resolved by inspecting the signature, with no second transaction; a
// transaction the cluster drops expires the intent once its blockhash
// can no longer land, crediting nothing.
func TestIntentRelayFaults(t *testing.T) {
	t.Parallel()
	s, p, create := buyerSetup(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}})
	before := workspaceCreditsAfterGrant(t, s, p)

	// A send whose answer comes after the adapter's timeout is uncertain:
	// the jobs inspect the signature before anything else and may only
	// re-send the identical bytes, so one transaction pays, once.
	s.Cluster.Inject(chaintest.Fault{Method: "sendTransaction", Times: 1, Delay: 3 * time.Second})
	slow := create("slow")
	sig, wire := signIntent(t, p, slow)
	if r := submit(s, p, slow.ID, sig, wire); r.Status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	awaitState(t, s, p, slow.ID, "RECONCILED", time.Second)
	ref, err := token2022.ParsePublicKey(slow.Reference)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := s.RPC.GetSignaturesForAddress(context.Background(), ref, chain.SignaturesOptions{}, chain.Confirmed)
	if err != nil || len(sigs) != 1 || sigs[0].Signature != sig {
		t.Fatalf("transactions paying the intent: %+v, %v; want exactly %s", sigs, err, sig)
	}
	if got := workspaceCredits(t, s, p); got != before+100 {
		t.Fatalf("credits %d -> %d", before, got)
	}

	// A dropped transaction: every send is accepted and none lands (the
	// jobs may re-send the identical bytes while the blockhash is valid).
	s.Cluster.DropTransactions(1000)
	lost := create("lost")
	sig, wire = signIntent(t, p, lost)
	if r := submit(s, p, lost.ID, sig, wire); r.Status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	waitFor(t, "the relay", func() bool { return intentGet(t, s, p, lost.ID).SendAttempts > 0 })
	s.Cluster.AdvanceSlots(200) // past the blockhash's last valid height
	v := awaitState(t, s, p, lost.ID, "EXPIRED", time.Minute)
	if v.NetworkState != "dropped" {
		t.Fatalf("dropped intent = %s/%s", v.State, v.NetworkState)
	}
	if got := workspaceCredits(t, s, p); got != before+100 {
		t.Fatalf("a dropped payment moved credits: %d", got)
	}
}

// workspaceCreditsAfterGrant waits for the workspace's plan grant and
// returns its balance.
func workspaceCreditsAfterGrant(t *testing.T, s *platformtest.System, p buyer) int64 {
	t.Helper()
	var n int64
	waitFor(t, "the plan grant", func() bool { n = workspaceCredits(t, s, p); return n > 0 })
	return n
}

// payFromURI pays a chain payment request the way a wallet does from its
// URI: it builds its own transfer (a memo, then TransferChecked of amount
// to the recipient's token account with the reference appended), signs it
// with the buyer's key and sends it to the cluster.
func payFromURI(t *testing.T, s *platformtest.System, p buyer, pv api.ChainPayView, amount uint64, recipient string) string {
	t.Helper()
	mint := solana.MustPublicKeyFromBase58(pv.Mint)
	payerKey := solana.MustPublicKeyFromBase58(p.wallet.addr)
	to := solana.MustPublicKeyFromBase58(recipient)
	src, _, err := solana.FindProgramAddress([][]byte{payerKey[:], solana.Token2022ProgramID[:], mint[:]}, solana.SPLAssociatedTokenAccountProgramID)
	if err != nil {
		t.Fatal(err)
	}
	dst, _, err := solana.FindProgramAddress([][]byte{to[:], solana.Token2022ProgramID[:], mint[:]}, solana.SPLAssociatedTokenAccountProgramID)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 10)
	data[0] = 12
	for i := range 8 {
		data[1+i] = byte(amount >> (8 * i))
	}
	data[9] = byte(pv.Decimals)
	memo := solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{solana.NewAccountMeta(payerKey, false, true)}, []byte(pv.Memo))
	transfer := solana.NewInstruction(solana.Token2022ProgramID, solana.AccountMetaSlice{
		solana.NewAccountMeta(src, true, false), solana.NewAccountMeta(mint, false, false), solana.NewAccountMeta(dst, true, false),
		solana.NewAccountMeta(payerKey, false, true), solana.NewAccountMeta(solana.MustPublicKeyFromBase58(pv.Reference), false, false),
	}, data)
	hash, _ := s.Cluster.LatestBlockhash()
	tx, err := solana.NewTransaction([]solana.Instruction{memo, transfer}, hash, solana.TransactionPayer(payerKey))
	if err != nil {
		t.Fatal(err)
	}
	priv := solana.PrivateKey(p.wallet.priv)
	if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		if k == payerKey {
			return &priv
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.RPC.SendTransaction(context.Background(), raw, chain.SendOptions{})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	return sig
}

// TestChainPaymentRequest pays intents through their Solana Pay requests:
// the payer builds its own transfer from the URI's fields; the sweep finds
// it by the reference and verifies it from the chain. The right amount
// settles; an amount short by the transfer fee, or paid to another
// recipient, goes to REQUIRES_REVIEW with its evidence and credits nothing.
func TestChainPaymentRequest(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			p := fundedBuyer(t, s, "payer@example.test", 100_000_000_000)
			before := workspaceCreditsAfterGrant(t, s, p)
			request := func(key string) (api.TransactionIntentView, api.ChainPayView) {
				t.Helper()
				r := createIntent(s, p, key, map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": s.Token.Mint.String(), "wallet": p.wallet.addr})
				var iv api.TransactionIntentView
				r.Data(t, &iv)
				r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/" + iv.ID + "/chain-pay", Cookie: p.cookie, Header: testMode})
				if r.Status != http.StatusOK {
					t.Fatalf("chain-pay: %d %s", r.Status, r.Body)
				}
				var pv api.ChainPayView
				r.Data(t, &pv)
				return iv, pv
			}
			iv, pv := request("uri-good")
			if !strings.HasPrefix(pv.URI, "solana:"+s.Token.Treasury.String()+"?amount=1.020408164&spl-token="+s.Token.Mint.String()) ||
				!strings.Contains(pv.URI, "&reference="+iv.Reference) || !strings.Contains(pv.URI, "memo="+iv.ID) ||
				strings.Contains(pv.URI, "+") || !strings.HasPrefix(pv.QRSVG, "<svg") || pv.AmountAtomic != iv.GrossAtomic {
				t.Fatalf("payment request = %+v", pv)
			}
			// The same request is returned by intent, by id, and by the other create route.
			for _, path := range []string{"/api/v1/chain-pay/requests/" + iv.ID, "/api/v1/chain-pay/" + pv.ID} {
				var again api.ChainPayView
				r := s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Cookie: p.cookie, Header: testMode})
				r.Data(t, &again)
				if again.ID != pv.ID {
					t.Fatalf("%s: %d %s", path, r.Status, r.Body)
				}
			}
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/chain-pay/requests", Cookie: p.cookie, Header: testMode,
				Body: map[string]any{"transactionIntentId": iv.ID, "recipient": "11111111111111111111111111111111", "amount": "0.000001"}})
			var viaBody api.ChainPayView
			r.Data(t, &viaBody)
			if viaBody.ID != pv.ID || viaBody.Recipient != pv.Recipient || viaBody.AmountAtomic != pv.AmountAtomic {
				t.Fatalf("a caller's recipient or amount changed the request: %d %s", r.Status, r.Body)
			}

			gross, _ := strconv.ParseUint(iv.GrossAtomic, 10, 64)
			net, _ := strconv.ParseUint(iv.NetAtomic, 10, 64)
			payFromURI(t, s, p, pv, gross, pv.Recipient)
			if v := awaitState(t, s, p, iv.ID, "RECONCILED", 5*time.Second); v.Reconciliation == nil || v.Reconciliation.Outcome != "MATCH" {
				t.Fatalf("a wallet-built transfer reconciled as %+v", v.Reconciliation)
			}
			if got := workspaceCredits(t, s, p); got != before+100 {
				t.Fatalf("credits %d -> %d", before, got)
			}

			short, spv := request("uri-short")
			payFromURI(t, s, p, spv, net, spv.Recipient) // the fee comes off: the treasury nets less than the price
			v := awaitState(t, s, p, short.ID, "REQUIRES_REVIEW", 5*time.Second)
			if len(v.Evidence) == 0 {
				t.Fatalf("review without evidence: %+v", v)
			}
			wrongAmount, apv := request("uri-wrong-amount")
			payFromURI(t, s, p, apv, gross/2, apv.Recipient)
			if v := awaitState(t, s, p, wrongAmount.ID, "REQUIRES_REVIEW", 5*time.Second); len(v.Evidence) == 0 {
				t.Fatalf("review without evidence: %+v", v)
			}
			_, elsewhere := chaintest.NewKeypair()
			if _, err := s.Cluster.MintTo(elsewhere, s.Token.Mint, 0); err != nil {
				t.Fatal(err)
			}
			wrong, wpv := request("uri-wrong-recipient")
			payFromURI(t, s, p, wpv, gross, elsewhere.String())
			v = awaitState(t, s, p, wrong.ID, "REQUIRES_REVIEW", 5*time.Second)
			if len(v.Evidence) == 0 {
				t.Fatalf("review without evidence: %+v", v)
			}
			if got := workspaceCredits(t, s, p); got != before+100 {
				t.Fatalf("mismatched payments moved credits: %d, want %d", got, before+100)
			}
		})
}

// BenchmarkReconcileIntents measures the reconciliation job's verification
// throughput against the loopback cluster: b.N submitted intents whose
// transactions are confirmed are reconciled in batches of 100 (signature
// status, the landed transaction read and verified, the credits granted
// in one unit of work each). intents/s is reported.
func BenchmarkReconcileIntents(b *testing.B) {
	s := platformtest.New(b, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}})
	p := fundedBuyer(b, s, "bench@example.test", 1_000_000_000_000_000)
	for i := range b.N {
		r := createIntent(s, p, "bench-"+strconv.Itoa(i), map[string]any{"purpose": "credit_purchase", "credits": "100",
			"mint": s.Token.Mint.String(), "wallet": p.wallet.addr})
		var iv api.TransactionIntentView
		r.Data(b, &iv)
		sig, wire := signIntent(b, p, iv)
		raw, _ := base64.StdEncoding.DecodeString(wire)
		if _, err := s.RPC.SendTransaction(context.Background(), raw, chain.SendOptions{SkipPreflight: true}); err != nil {
			b.Fatal(err)
		}
		if r := submit(s, p, iv.ID, sig, ""); r.Status != http.StatusOK {
			b.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		if i%50 == 49 {
			s.Cluster.AdvanceSlots(1) // keep blockhashes fresh
		}
	}
	s.Cluster.AdvanceSlots(2) // every transaction confirmed
	b.ResetTimer()
	settled := 0
	for settled < b.N {
		n, err := s.P.ReconcileIntents(context.Background(), 100)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatalf("stalled after %d of %d", settled, b.N)
		}
		settled += n
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "intents/s")
	if n := count(b, s, "SELECT COUNT(*) FROM ledger_movements WHERE reference LIKE 'grant:credit_purchase:%'"); n != b.N {
		b.Fatalf("%d grants for %d intents", n, b.N)
	}
}
