package account

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// TestValidatePasswordCountsCharacters: a new password is 10 to 256
// characters, counted as characters, not bytes, and a refusal says the
// bounds.
func TestValidatePasswordCountsCharacters(t *testing.T) {
	for _, ok := range []string{strings.Repeat("a", 10), strings.Repeat("é", 10), strings.Repeat("a", 256), strings.Repeat("🎵", 256)} {
		if err := ValidatePassword("op", "password", ok); err != nil {
			t.Errorf("%d characters (%d bytes): %v", len([]rune(ok)), len(ok), err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", 9), strings.Repeat("é", 9), strings.Repeat("a", 257), strings.Repeat("🎵", 257)} {
		err := ValidatePassword("op", "password", bad)
		if _, _, d := fault.Public(err); !fault.Is(err, fault.InvalidInput) || d["field"] != "password" || d["min"] != MinPasswordLen || d["max"] != MaxPasswordLen {
			t.Errorf("%d characters (%d bytes) = %v, want INVALID_INPUT with the bounds", len([]rune(bad)), len(bad), err)
		}
	}
}

// newTestService returns a service on cheap hashing that mails into box,
// and a store holding ada (verified) and bob (not verified), both with
// the password "correct horse battery".
func newTestService(t *testing.T, box *mailbox) (*Service, *memAccount) {
	t.Helper()
	s, err := New(Config{Keys: testKeys{}, Mailer: box, Passwords: cheap})
	if err != nil {
		t.Fatal(err)
	}
	st := newMemAccount()
	hash, err := s.Passwords().Hash(context.Background(), "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	verified := st.now.Add(-time.Hour)
	for _, u := range []struct {
		id, email string
		verified  *time.Time
	}{{"usr_ada", "ada@example.com", &verified}, {"usr_bob", "bob@example.com", nil}} {
		st.users[u.id] = access.User{ID: u.id, TenantID: "ten_1", Email: u.email}
		st.creds[u.id] = PasswordCredential{UserID: u.id, PasswordHash: hash, EmailVerifiedAt: u.verified}
	}
	return s, st
}

// TestLoginThrottle: wrong passwords are counted before any hashing, the
// fifth from one address locks that pair for a minute and refuses even the
// right password there, without counting the refused attempts; another
// address signs in; a sign-in clears the pair. An unknown email and a
// wrong password answer alike, and an unverified address is revealed only
// to someone who gave its password.
func TestLoginThrottle(t *testing.T) {
	ctx := context.Background()
	s, st := newTestService(t, &mailbox{})
	login := func(email, pw, ip string) (SignIn, error) {
		return s.Login(ctx, st, st.unit, LoginInput{Email: email, Password: pw, ClientIP: ip, UserAgent: "test"})
	}
	subjects := s.loginSubjects("ada@example.com", "10.0.0.1")
	for i := range 5 {
		if _, err := login("ada@example.com", "wrong horse battery", "10.0.0.1"); !fault.Is(err, fault.Unauthenticated) {
			t.Fatalf("wrong password %d = %v, want UNAUTHENTICATED", i+1, err)
		}
	}
	for _, pw := range []string{"wrong horse battery", "correct horse battery"} {
		_, err := login("Ada@Example.com ", pw, "10.0.0.1")
		if _, _, d := fault.Public(err); !fault.Is(err, fault.RateLimited) || d["limit"] != "loginFailures" || d["retryAfter"] != int64(60) {
			t.Fatalf("%q from the locked pair = %v, want RATE_LIMITED (loginFailures, retryAfter 60)", pw, err)
		}
	}
	if pair := st.throttles[subjects[0]]; pair.Failures != 5 || pair.LockedUntil == nil || !pair.LockedUntil.Equal(st.now.Add(time.Minute)) {
		t.Fatalf("the pair after refused attempts = %+v, want 5 failures locked for a minute", pair)
	}

	in, err := login("ada@example.com", "correct horse battery", "10.0.0.2")
	if err != nil {
		t.Fatalf("the right password from another address: %v", err)
	}
	ses := st.sessions[in.Session.ID]
	if ses.Kind != KindWeb || ses.UserID != "usr_ada" || ses.WorkspaceID != "ws_1" || ses.CookieDigest != (testKeys{}).Digest(in.Cookie) ||
		ses.TokenDigest != (testKeys{}).Digest(in.Token) || !ses.ExpiresAt.Equal(st.now.Add(SessionLifetime)) ||
		ses.TokenExpiresAt == nil || !ses.TokenExpiresAt.Equal(st.now.Add(AccessTokenLifetime)) || !ses.AuthenticatedAt.Equal(st.now) {
		t.Fatalf("session = %+v", ses)
	}
	if acct := st.throttles[subjects[2]]; acct.Failures != 5 {
		t.Fatalf("the account counter after a sign-in = %d failures, want the 5 wrong ones", acct.Failures)
	}

	st.now = st.now.Add(time.Minute)
	if _, err := login("ada@example.com", "correct horse battery", "10.0.0.1"); err != nil {
		t.Fatalf("the right password once the lock ended: %v", err)
	}
	if pair := st.throttles[subjects[0]]; pair.Failures != 0 {
		t.Fatalf("the pair after a sign-in = %+v, want cleared", pair)
	}

	if _, err := login("nobody@example.com", "correct horse battery", "10.0.0.3"); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("an unknown email = %v, want UNAUTHENTICATED", err)
	}
	if _, err := login("bob@example.com", "wrong horse battery", "10.0.0.3"); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("a wrong password on an unverified address = %v, want UNAUTHENTICATED", err)
	}
	_, err = login("bob@example.com", "correct horse battery", "10.0.0.3")
	if _, _, d := fault.Public(err); !fault.Is(err, fault.AccessDenied) || d["reason"] != "email_not_verified" {
		t.Errorf("the right password on an unverified address = %v, want ACCESS_DENIED (email_not_verified)", err)
	}

	// Malformed attempts are refused before they are counted.
	before := len(st.throttles)
	for name, in := range map[string]LoginInput{
		"no email":      {Password: "x", ClientIP: "10.0.0.9"},
		"no password":   {Email: "ada@example.com", ClientIP: "10.0.0.9"},
		"long password": {Email: "ada@example.com", Password: strings.Repeat("a", 4*MaxPasswordLen+1), ClientIP: "10.0.0.9"},
	} {
		if _, err := s.Login(ctx, st, st.unit, in); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("%s = %v, want INVALID_INPUT", name, err)
		}
	}
	if len(st.throttles) != before {
		t.Fatal("a malformed attempt was counted")
	}
}

// TestForgotPasswordMailLimits: reset mail goes to a registered address at
// most 3 times an hour, from at most 10 requests an hour per client
// address; every request is answered alike and one over a limit sends
// nothing; a request refused by its address's limit does not count for the
// account.
func TestForgotPasswordMailLimits(t *testing.T) {
	ctx := context.Background()
	box := &mailbox{}
	s, st := newTestService(t, box)
	forgot := func(email, ip string) {
		t.Helper()
		if err := s.ForgotPassword(ctx, st, email, ip); err != nil {
			t.Fatalf("ForgotPassword(%s, %s): %v", email, ip, err)
		}
	}
	t0 := st.now
	for range 4 {
		forgot("ada@example.com", "10.0.0.1")
	}
	if len(box.sent) != 3 {
		t.Fatalf("%d reset mails in an hour, want 3", len(box.sent))
	}
	// Each mail carries a code stored only as its digest, for 30 minutes.
	m := box.sent[0]
	i := strings.Index(m.Text, "/reset-password?code=")
	if m.To != "ada@example.com" || i < 0 {
		t.Fatalf("mail = %+v", m)
	}
	u, err := url.Parse(strings.Fields(m.Text[i:])[0])
	if err != nil {
		t.Fatal(err)
	}
	code := u.Query().Get("code")
	c, ok := st.codes[CodeDigest(testKeys{}, code)]
	if !ok || c.Purpose != PurposePasswordReset || c.UserID != "usr_ada" || !c.ExpiresAt.Equal(t0.Add(ResetLifetime)) {
		t.Fatalf("stored code = %+v (found %v)", c, ok)
	}
	// The window runs an hour from the first request.
	st.now = t0.Add(time.Hour - time.Second)
	forgot("ada@example.com", "10.0.0.1")
	st.now = t0.Add(time.Hour)
	forgot("ada@example.com", "10.0.0.1")
	if len(box.sent) != 4 {
		t.Fatalf("%d mails once the hour passed, want 4", len(box.sent))
	}

	// One address asking about unknown accounts uses up its limit; its
	// next request, for bob, sends nothing and leaves bob's count alone.
	for i := range 10 {
		forgot(strings.Repeat("x", i+1)+"@example.com", "10.0.0.2")
	}
	forgot("bob@example.com", "10.0.0.2")
	if len(box.sent) != 4 {
		t.Fatalf("mail sent past the address's limit: %+v", box.sent[4:])
	}
	for range 3 {
		forgot("bob@example.com", "10.0.0.3")
	}
	if len(box.sent) != 7 {
		t.Fatalf("%d mails, want bob's 3 from a fresh address", len(box.sent))
	}
	if err := s.ForgotPassword(ctx, st, "not an address", "10.0.0.3"); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("a malformed address = %v, want INVALID_INPUT", err)
	}
}

// TestCeilSeconds: a Retry-After is whole seconds, rounded up, at least 1.
func TestCeilSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 1, time.Nanosecond: 1, time.Second: 1, time.Minute: 60,
		time.Minute + time.Millisecond: 61, -time.Second: 1} {
		if got := ceilSeconds(d); got != want {
			t.Errorf("ceilSeconds(%s) = %d, want %d", d, got, want)
		}
	}
}
