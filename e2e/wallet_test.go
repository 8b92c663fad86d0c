package e2e_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// walletKey is a wallet keypair and its base58 address.
type walletKey struct {
	priv ed25519.PrivateKey
	addr string
}

func newWalletKey(t testing.TB) walletKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return walletKey{priv: priv, addr: token2022.PublicKey(pub).String()}
}

// challenge asks for a link_wallet challenge for addr as p.
func challenge(t testing.TB, s *platformtest.System, p person, addr string) api.WalletChallengeView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/wallet/challenge", Cookie: p.cookie,
		Body: map[string]any{"address": addr, "purpose": "link_wallet"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("challenge: %d %s", r.Status, r.Body)
	}
	var c api.WalletChallengeView
	r.Data(t, &c)
	return c
}

// verifyWallet posts a signature over message for challenge id as p.
func verifyWallet(s *platformtest.System, p person, id string, sig []byte, signedMessage string) *platformtest.Response {
	body := map[string]any{"challengeId": id, "signature": base64.StdEncoding.EncodeToString(sig)}
	if signedMessage != "" {
		body["signedMessage"] = signedMessage
	}
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/wallet/verify", Cookie: p.cookie, Body: body})
}

// TestWalletVerification links a wallet with a Sign-In With Solana
// message signed by a real keypair, and refuses every way around it: a
// wrong signature, an altered message, a reused or expired challenge,
// another account's challenge and an API key. A verification creates a
// wallet link and nothing else: no session, role or entitlement.
func TestWalletVerification(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true}, func(t *testing.T, s *platformtest.System) {
		alice := testSession(t, s, "alice@example.test")
		bob := testSession(t, s, "bob@example.test")
		w := newWalletKey(t)

		c := challenge(t, s, alice, w.addr)
		if !strings.HasPrefix(c.Message, "platform.test wants you to sign in with your Solana account:\n"+w.addr+"\n\n") ||
			!strings.Contains(c.Message, "\nNonce: "+c.SignInInput.Nonce+"\n") || !strings.Contains(c.Message, "\nRequest ID: "+c.ID) ||
			strings.HasSuffix(c.Message, "\n") || c.Purpose != "link_wallet" || !c.ExpiresAt.After(c.IssuedAt) {
			t.Fatalf("challenge = %+v", c)
		}
		// Test mode with the loopback cluster names it; live has none.
		tc := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/wallet/challenge", Cookie: alice.cookie,
			Header: testMode, Body: map[string]any{"address": w.addr, "purpose": "link_wallet"}})
		var tcv api.WalletChallengeView
		tc.Data(t, &tcv)
		if tcv.SignInInput.ChainID != "localnet" || c.SignInInput.ChainID != "" {
			t.Fatalf("chain ids: test %q, live %q", tcv.SignInInput.ChainID, c.SignInInput.ChainID)
		}

		sessions := count(t, s, "SELECT COUNT(*) FROM sessions")
		roles := count(t, s, "SELECT COUNT(*) FROM membership_roles")
		entitlements := count(t, s, "SELECT COUNT(*) FROM entitlements")

		// A wrong signature and an altered message are refused and link nothing.
		other := newWalletKey(t)
		if r := verifyWallet(s, alice, c.ID, ed25519.Sign(other.priv, []byte(c.Message)), ""); r.Code() != "SIGNATURE_REJECTED" {
			t.Fatalf("wrong signature: %d %s", r.Status, r.Body)
		}
		altered := strings.Replace(c.Message, "Version: 1", "Version: 2", 1)
		if r := verifyWallet(s, alice, c.ID, ed25519.Sign(w.priv, []byte(altered)), altered); r.Code() != "SIGNATURE_REJECTED" {
			t.Fatalf("altered message: %d %s", r.Status, r.Body)
		}
		// Another account cannot use Alice's challenge, even with her wallet's signature.
		good := ed25519.Sign(w.priv, []byte(c.Message))
		if r := verifyWallet(s, bob, c.ID, good, ""); r.Code() != "NOT_FOUND" {
			t.Fatalf("another account's challenge: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM wallet_links"); n != 0 {
			t.Fatalf("%d links before a valid verification", n)
		}

		r := verifyWallet(s, alice, c.ID, good, c.Message)
		if r.Status != http.StatusOK {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		var link api.WalletLinkView
		r.Data(t, &link)
		if link.WalletAddress != w.addr || link.ChallengeID != c.ID || !strings.HasPrefix(link.LinkID, "wl_") {
			t.Fatalf("link = %+v", link)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM wallet_links WHERE address = ?", w.addr); n != 1 {
			t.Fatalf("%d links stored, want 1", n)
		}
		if count(t, s, "SELECT COUNT(*) FROM sessions") != sessions || count(t, s, "SELECT COUNT(*) FROM membership_roles") != roles ||
			count(t, s, "SELECT COUNT(*) FROM entitlements") != entitlements {
			t.Fatal("a wallet verification created a session, role or entitlement")
		}
		// A challenge is single-use.
		if r := verifyWallet(s, alice, c.ID, good, ""); r.Code() != "CONFLICT" {
			t.Fatalf("reused challenge: %d %s", r.Status, r.Body)
		}
		// Challenges are short-lived.
		late := challenge(t, s, alice, other.addr)
		s.Clock.Advance(6 * time.Minute)
		if r := verifyWallet(s, alice, late.ID, ed25519.Sign(other.priv, []byte(late.Message)), ""); r.Code() != "QUOTE_EXPIRED" {
			t.Fatalf("expired challenge: %d %s", r.Status, r.Body)
		}
		// An API key is refused on both routes.
		for _, path := range []string{"/api/v1/wallet/challenge", "/api/v1/wallet/verify"} {
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: path, Key: s.Boot.TestKey,
				Body: map[string]any{"address": w.addr, "purpose": "link_wallet", "challengeId": c.ID, "signature": "x"}})
			if r.Code() != "ACCESS_DENIED" {
				t.Fatalf("%s with an API key: %d %s", path, r.Status, r.Body)
			}
		}
	})
}
