package platform_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport"
)

// buyer is a signed-in user in test mode with a verified, funded wallet.
type buyer struct {
	person
	wallet walletKey
}

// fundedBuyer signs a user up, gives them a workspace, verifies a fresh
// wallet for them and funds it with lamports for fees and tokens of the
// deployed mint.
func fundedBuyer(t *testing.T, s *platformtest.System, email string, tokens uint64) buyer {
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
func signIntent(t *testing.T, p buyer, iv transport.TransactionIntentView) (string, string) {
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
func intentGet(t *testing.T, s *platformtest.System, p buyer, id string) transport.TransactionIntentView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/transactions/" + id, Cookie: p.cookie, Header: testMode})
	if r.Status != http.StatusOK {
		t.Fatalf("get intent: %d %s", r.Status, r.Body)
	}
	var v transport.TransactionIntentView
	r.Data(t, &v)
	return v
}

// workspaceCredits is the test-mode credit balance of p's workspace.
func workspaceCredits(t *testing.T, s *platformtest.System, p buyer) int64 {
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
func authContextIn(t *testing.T, s *platformtest.System, cookie string) transport.AuthContext {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Cookie: cookie, Header: testMode})
	if r.Status != http.StatusOK {
		t.Fatalf("auth context: %d %s", r.Status, r.Body)
	}
	var ac transport.AuthContext
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
			var iv transport.TransactionIntentView
			r.Data(t, &iv)
			if iv.State != "CREATED" || iv.NetAtomic != "1000000000" || iv.Transaction == nil || iv.Recipient != s.Token.Treasury.String() ||
				iv.Network != s.Cluster.Network().CAIP2() || iv.Policy.ID != "credits.packs" || iv.Review.Net != "1" {
				t.Fatalf("intent = %+v", iv)
			}
			// 200 bps up to 5 tokens: the buyer sends enough for the treasury to net the price.
			if iv.GrossAtomic != "1020408164" || iv.FeeAtomic != "20408164" {
				t.Fatalf("gross %s fee %s", iv.GrossAtomic, iv.FeeAtomic)
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
			var sv transport.TransactionIntentView
			r.Data(t, &sv)
			if sv.State != "SUBMITTED" || sv.Signature == nil || *sv.Signature != sig || sv.Transaction != nil {
				t.Fatalf("submitted = %+v", sv)
			}
			if got := workspaceCredits(t, s, p); got != before {
				t.Fatalf("submit granted credits: %d -> %d", before, got)
			}
			var final transport.TransactionIntentView
			waitFor(t, "the intent to settle", func() bool {
				s.Cluster.AdvanceSlots(1)
				s.Clock.Advance(time.Second) // the watch job runs every second
				final = intentGet(t, s, p, iv.ID)
				return final.State == "SETTLED"
			})
			if final.NetworkState != "confirmed" && final.NetworkState != "finalized" || final.Slot == nil || final.SettledAt == nil {
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
		})
}
