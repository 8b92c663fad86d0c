package wallet

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// fakeStore is an in-memory Store; its unit of work keeps writes only when
// fn succeeds.
type fakeStore struct {
	mu         sync.Mutex
	seq        int
	challenges map[string]Challenge
	links      map[string]Link
	fails      int // units committed with a failure
	now        func() time.Time
}

var _ Store = (*fakeStore)(nil)

func newFakeStore(now func() time.Time) *fakeStore {
	return &fakeStore{challenges: map[string]Challenge{}, links: map[string]Link{}, now: now}
}

func (f *fakeStore) NewID(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s%04d", prefix, f.seq)
}

func (f *fakeStore) WalletChallengeInsert(_ context.Context, c Challenge) error {
	f.challenges[c.ID] = c
	return nil
}

func (f *fakeStore) WalletChallengeGet(_ context.Context, tenantID, userID, id string) (Challenge, error) {
	c, ok := f.challenges[id]
	if !ok || c.TenantID != tenantID || c.UserID != userID {
		return Challenge{}, fault.E("fake", fault.NotFound, "")
	}
	return c, nil
}

func (f *fakeStore) WalletChallengeFail(_ context.Context, id string, at time.Time, maxAttempts int) (Challenge, error) {
	c := f.challenges[id]
	if c.Status != StatusPending || c.ConsumedAt != nil {
		return Challenge{}, fault.E("fake", fault.Conflict, "")
	}
	c.Attempts++
	if c.Attempts >= maxAttempts {
		c.Status, c.ConsumedAt = StatusExhausted, &at
	}
	f.challenges[id] = c
	return c, nil
}

func (f *fakeStore) WalletChallengeConsume(_ context.Context, id string, at time.Time) error {
	c := f.challenges[id]
	if c.Status != StatusPending || c.ConsumedAt != nil {
		return fault.E("fake", fault.Conflict, "")
	}
	c.Status, c.ConsumedAt = StatusVerified, &at
	f.challenges[id] = c
	return nil
}

func (f *fakeStore) WalletLinkInsert(_ context.Context, id, tenantID, userID, network, address string) error {
	k := tenantID + "|" + network + "|" + address
	if l, ok := f.links[k]; ok {
		if l.UserID != userID {
			return fault.E("fake", fault.Conflict, "")
		}
		return nil
	}
	f.links[k] = Link{ID: id, TenantID: tenantID, UserID: userID, Network: network, Address: address, VerifiedAt: f.now()}
	return nil
}

func (f *fakeStore) WalletLinkGet(_ context.Context, tenantID, network, address string) (Link, error) {
	l, ok := f.links[tenantID+"|"+network+"|"+address]
	if !ok {
		return Link{}, fault.E("fake", fault.NotFound, "")
	}
	return l, nil
}

func (f *fakeStore) WalletLinksOfUser(_ context.Context, tenantID, network, userID string) ([]Link, error) {
	var out []Link
	for _, l := range f.links {
		if l.TenantID == tenantID && l.Network == network && l.UserID == userID {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b Link) int { return a.VerifiedAt.Compare(b.VerifiedAt) })
	return out, nil
}

// unit is the fake's UnitOfWork: it rolls back on error.
func (f *fakeStore) unit(ctx context.Context, failure error, fn func(st Store) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs, ls := maps.Clone(f.challenges), maps.Clone(f.links)
	if err := fn(f); err != nil {
		f.challenges, f.links = cs, ls
		return err
	}
	if failure != nil {
		f.fails++
	}
	return nil
}

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

type fixture struct {
	svc   *Service
	st    *fakeStore
	clock *clock
	pub   ed25519.PublicKey
	priv  ed25519.PrivateKey
	addr  string
	alice *access.Principal
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.UTC)}
	svc, err := New(Config{BaseURL: "https://app.example.com", Clusters: map[access.Environment]chain.Cluster{access.Test: chain.Devnet},
		Purposes: []Purpose{{Name: "payout_wallet", Statement: "Use this wallet for payouts."}}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	return &fixture{svc: svc, st: newFakeStore(clk.Now), clock: clk, pub: pub, priv: priv, addr: token2022.PublicKey(pub).String(),
		alice: &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", UserID: "usr_alice", SessionID: "ses_1",
			Environment: access.Test}}
}

func (x *fixture) challenge(t *testing.T, p *access.Principal) Issued {
	t.Helper()
	is, err := x.svc.Challenge(context.Background(), x.st, p, ChallengeRequest{Address: x.addr, Purpose: PurposeLinkWallet})
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func (x *fixture) verify(p *access.Principal, req VerifyRequest) (Verified, error) {
	return x.svc.Verify(context.Background(), x.st, x.st.unit, p, req)
}

func (x *fixture) sign(msg string) string {
	return token2022.EncodeBase58(ed25519.Sign(x.priv, []byte(msg)))
}

func wantCode(t *testing.T, err error, code fault.Code, reason string) {
	t.Helper()
	if !fault.Is(err, code) {
		t.Fatalf("err = %v, want %s", err, code)
	}
	if reason == "" {
		return
	}
	_, _, details := fault.Public(err)
	if details["reason"] != reason {
		t.Fatalf("details = %v, want reason %s", details, reason)
	}
}

func TestChallengeMessage(t *testing.T) {
	x := newFixture(t)
	is := x.challenge(t, x.alice)
	c := is.Challenge
	if !strings.HasPrefix(c.ID, ChallengeIDPrefix) || c.Status != StatusPending || c.TenantID != "ten_1" || c.UserID != "usr_alice" ||
		c.SessionID != "ses_1" || c.Environment != access.Test || c.Address != x.addr || c.Purpose != PurposeLinkWallet || c.Attempts != 0 {
		t.Fatalf("challenge = %+v", c)
	}
	if len(c.Nonce) < 16 || !validNonce(c.Nonce) {
		t.Errorf("nonce %q is not 16+ alphanumerics", c.Nonce)
	}
	issued := time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	if !c.IssuedAt.Equal(issued) || !c.ExpiresAt.Equal(issued.Add(DefaultTTL)) {
		t.Errorf("issued %v, expires %v", c.IssuedAt, c.ExpiresAt)
	}
	want := "app.example.com wants you to sign in with your Solana account:\n" + x.addr + "\n\n" +
		"Link this wallet to your platform account for link_wallet. This request will not trigger a blockchain transaction or cost any fees.\n\n" +
		"URI: https://app.example.com\nVersion: 1\nChain ID: solana:devnet\nNonce: " + c.Nonce + "\n" +
		"Issued At: 2026-01-02T03:04:05.678Z\nExpiration Time: 2026-01-02T03:09:05.678Z\nRequest ID: " + c.ID
	if c.Message != want {
		t.Fatalf("message:\n%s\nwant\n%s", c.Message, want)
	}
	if is.Input.Text() != c.Message {
		t.Errorf("input does not rebuild the message")
	}
	if stored := x.st.challenges[c.ID]; stored.Message != c.Message {
		t.Errorf("stored message differs")
	}
	// Another purpose has its statement; the live environment, with no
	// cluster configured, writes no Chain ID.
	live := *x.alice
	live.Environment = access.Live
	is2, err := x.svc.Challenge(context.Background(), x.st, &live, ChallengeRequest{Address: x.addr, Purpose: "payout_wallet"})
	if err != nil {
		t.Fatal(err)
	}
	if is2.Input.Statement != "Use this wallet for payouts." || is2.Input.ChainID != "" || is2.Nonce == c.Nonce {
		t.Errorf("second challenge = %+v", is2.Input)
	}
}

func TestChallengeRefuses(t *testing.T) {
	x := newFixture(t)
	ctx := context.Background()
	key := &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", UserID: "usr_alice", KeyID: "key_1"}
	noTenant := &access.Principal{Kind: access.CredentialSession, UserID: "usr_alice"}
	for name, tc := range map[string]struct {
		p      *access.Principal
		req    ChallengeRequest
		code   fault.Code
		detail string
	}{
		"api key":         {key, ChallengeRequest{Address: x.addr, Purpose: PurposeLinkWallet}, fault.AccessDenied, "credential"},
		"no tenant":       {noTenant, ChallengeRequest{Address: x.addr, Purpose: PurposeLinkWallet}, fault.AccessDenied, "reason"},
		"anonymous":       {nil, ChallengeRequest{Address: x.addr, Purpose: PurposeLinkWallet}, fault.Unauthenticated, ""},
		"bad address":     {x.alice, ChallengeRequest{Address: "not-base58!", Purpose: PurposeLinkWallet}, fault.InvalidInput, "field"},
		"short address":   {x.alice, ChallengeRequest{Address: "4Nd1mBQtrMJV", Purpose: PurposeLinkWallet}, fault.InvalidInput, "field"},
		"unknown purpose": {x.alice, ChallengeRequest{Address: x.addr, Purpose: "sign_in"}, fault.InvalidInput, "allowed"},
		"no purpose":      {x.alice, ChallengeRequest{Address: x.addr}, fault.InvalidInput, "allowed"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := x.svc.Challenge(ctx, x.st, tc.p, tc.req)
			if !fault.Is(err, tc.code) {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if _, _, d := fault.Public(err); tc.detail != "" && d[tc.detail] == nil {
				t.Errorf("details %v lack %s", d, tc.detail)
			}
		})
	}
	if len(x.st.challenges) != 0 {
		t.Errorf("refused challenges were stored")
	}
}

func TestVerifySuccess(t *testing.T) {
	x := newFixture(t)
	c := x.challenge(t, x.alice)
	x.clock.t = x.clock.t.Add(time.Minute)
	v, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message), SignedMessage: c.Message})
	if err != nil {
		t.Fatal(err)
	}
	l := v.Link
	if v.ChallengeID != c.ID || v.Purpose != PurposeLinkWallet || !strings.HasPrefix(l.ID, LinkIDPrefix) || l.TenantID != "ten_1" ||
		l.UserID != "usr_alice" || l.Network != Network || l.Address != x.addr || !v.VerifiedAt.Equal(x.clock.t.Truncate(time.Millisecond)) {
		t.Fatalf("verified = %+v", v)
	}
	if got := x.st.challenges[c.ID]; got.Status != StatusVerified || got.ConsumedAt == nil {
		t.Errorf("challenge after = %+v", got)
	}

	// Base64 signature and base64 signedMessage, and a relink of the same
	// wallet, which returns the existing link.
	c2 := x.challenge(t, x.alice)
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(x.priv, []byte(c2.Message)))
	v2, err := x.verify(x.alice, VerifyRequest{ChallengeID: c2.ID, Signature: sig,
		SignedMessage: base64.StdEncoding.EncodeToString([]byte(c2.Message))})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Link.ID != l.ID || len(x.st.links) != 1 {
		t.Errorf("relink = %+v, links %d", v2.Link, len(x.st.links))
	}
}

func TestVerifyRejects(t *testing.T) {
	ctx := context.Background()
	t.Run("wrong signature", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		other := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
		_, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: token2022.EncodeBase58(ed25519.Sign(other, []byte(c.Message)))})
		wantCode(t, err, fault.SignatureRejected, "signature_invalid")
		if got := x.st.challenges[c.ID]; got.Status != StatusPending || got.Attempts != 1 || x.st.fails != 1 {
			t.Errorf("after a failure: %+v, failed units %d", got, x.st.fails)
		}
		// The failure consumed nothing: the right signature still links.
		if _, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("altered message", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		altered := []byte(c.Message)
		i := strings.Index(c.Message, "Version: 1") + len("Version: ")
		altered[i] = '2'
		// The wallet signed the altered text and says so: refused.
		_, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(string(altered)), SignedMessage: string(altered)})
		wantCode(t, err, fault.SignatureRejected, "message_mismatch")
		// The altered text's signature alone does not verify over the stored message.
		_, err = x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(string(altered))})
		wantCode(t, err, fault.SignatureRejected, "signature_invalid")
		if len(x.st.links) != 0 || x.st.challenges[c.ID].Attempts != 2 {
			t.Errorf("links %d, challenge %+v", len(x.st.links), x.st.challenges[c.ID])
		}
	})
	t.Run("expired", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		x.clock.t = x.clock.t.Add(DefaultTTL)
		_, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)})
		wantCode(t, err, fault.QuoteExpired, "challenge_expired")
		if len(x.st.links) != 0 || x.st.challenges[c.ID].Attempts != 0 {
			t.Errorf("an expired verify wrote")
		}
	})
	t.Run("reused", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		req := VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)}
		if _, err := x.verify(x.alice, req); err != nil {
			t.Fatal(err)
		}
		_, err := x.verify(x.alice, req)
		wantCode(t, err, fault.Conflict, "challenge_consumed")
	})
	t.Run("another user", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		bob := *x.alice
		bob.UserID, bob.SessionID = "usr_bob", "ses_2"
		_, err := x.verify(&bob, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)})
		wantCode(t, err, fault.NotFound, "")
	})
	t.Run("another tenant", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		other := *x.alice
		other.TenantID = "ten_2"
		_, err := x.verify(&other, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)})
		wantCode(t, err, fault.NotFound, "")
		_, err = x.verify(x.alice, VerifyRequest{ChallengeID: "wch_unknown", Signature: x.sign(c.Message)})
		wantCode(t, err, fault.NotFound, "")
	})
	t.Run("attempts exhausted", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		bad := token2022.EncodeBase58(make([]byte, 64))
		for i := 1; i <= DefaultMaxAttempts; i++ {
			_, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: bad})
			wantCode(t, err, fault.SignatureRejected, "signature_invalid")
			if _, _, d := fault.Public(err); d["attemptsRemaining"] != DefaultMaxAttempts-i {
				t.Errorf("attempt %d: remaining %v", i, d["attemptsRemaining"])
			}
		}
		if got := x.st.challenges[c.ID]; got.Status != StatusExhausted || got.ConsumedAt == nil {
			t.Fatalf("after %d failures: %+v", DefaultMaxAttempts, got)
		}
		_, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)})
		wantCode(t, err, fault.Conflict, "attempts_exhausted")
	})
	t.Run("api key", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		key := &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", UserID: "usr_alice", KeyID: "key_1"}
		_, err := x.verify(key, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)})
		wantCode(t, err, fault.AccessDenied, "")
		if x.st.challenges[c.ID].Status != StatusPending {
			t.Errorf("an API key's verify consumed the challenge")
		}
	})
	t.Run("malformed signature", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		for _, s := range []string{"", "abc", token2022.EncodeBase58(make([]byte, 63)), base64.StdEncoding.EncodeToString(make([]byte, 65)), "0OIl" + x.sign(c.Message)[4:]} {
			_, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: s})
			wantCode(t, err, fault.InvalidInput, "")
		}
		_, err := x.verify(x.alice, VerifyRequest{Signature: x.sign(c.Message)})
		wantCode(t, err, fault.InvalidInput, "")
		if x.st.challenges[c.ID].Attempts != 0 {
			t.Errorf("malformed input counted an attempt")
		}
	})
	t.Run("wallet of another user", func(t *testing.T) {
		x := newFixture(t)
		if err := x.st.WalletLinkInsert(ctx, "wl_bob", "ten_1", "usr_bob", Network, x.addr); err != nil {
			t.Fatal(err)
		}
		c := x.challenge(t, x.alice)
		_, err := x.verify(x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)})
		wantCode(t, err, fault.Conflict, "wallet_linked_elsewhere")
		if x.st.challenges[c.ID].Status != StatusPending {
			t.Errorf("a refused link consumed the challenge")
		}
	})
	t.Run("domain changed", func(t *testing.T) {
		x := newFixture(t)
		c := x.challenge(t, x.alice)
		svc, err := New(Config{BaseURL: "https://other.example.com", Clock: x.clock})
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Verify(ctx, x.st, x.st.unit, x.alice, VerifyRequest{ChallengeID: c.ID, Signature: x.sign(c.Message)})
		wantCode(t, err, fault.SignatureRejected, "message_mismatch")
	})
}

func TestNewValidates(t *testing.T) {
	for name, cfg := range map[string]Config{
		"relative base":  {BaseURL: "/app"},
		"ftp base":       {BaseURL: "ftp://x.io"},
		"ttl too long":   {TTL: 2 * time.Hour},
		"negative tries": {MaxAttempts: -1},
		"bad purpose":    {Purposes: []Purpose{{Name: "Link Wallet"}}},
		"two lines":      {Purposes: []Purpose{{Name: "x", Statement: "a\nb"}}},
		"field-like":     {Purposes: []Purpose{{Name: "x", Statement: "Nonce: 12345678"}}},
		"bad cluster":    {Clusters: map[access.Environment]chain.Cluster{access.Live: "moon"}},
		"bad env":        {Clusters: map[access.Environment]chain.Cluster{"prod": chain.Mainnet}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Domain() != "127.0.0.1:8080" || s.TTL() != DefaultTTL || strings.Join(s.Purposes(), ",") != PurposeLinkWallet {
		t.Errorf("defaults: %s %v %v", s.Domain(), s.TTL(), s.Purposes())
	}
}

func TestTransition(t *testing.T) {
	if to, err := Transition(StatusPending, EventVerify); err != nil || to != StatusVerified {
		t.Errorf("pending+verify = %s, %v", to, err)
	}
	if _, err := Transition(StatusVerified, EventFail); !fault.Is(err, fault.InvalidState) {
		t.Errorf("verified+fail = %v", err)
	}
}
