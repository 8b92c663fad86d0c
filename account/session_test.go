package account

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// TestSessionCredentials: a cookie is signed, so a forged one is refused
// before any lookup; a session acts in live mode unless the request asks
// for test; it ends when revoked (UNAUTHENTICATED) or at its expiry
// (SESSION_EXPIRED), and its access token at the token's own expiry while
// the cookie still works; the last use is written at most once a minute.
func TestSessionCredentials(t *testing.T) {
	ctx := context.Background()
	st := newMemAccount()
	keys := testKeys{}
	auth := Authenticator{Keys: keys}
	cookie, cookieDigest := NewCookieValue(keys)
	token, tokenDigest := NewAccessToken(keys)
	t0 := st.now
	tokenExp := t0.Add(AccessTokenLifetime)
	st.sessions["ses_1"] = Session{ID: "ses_1", UserID: "usr_1", TenantID: "ten_1", WorkspaceID: "ws_1", Kind: KindWeb,
		CookieDigest: cookieDigest, TokenDigest: tokenDigest, TokenExpiresAt: &tokenExp, CreatedAt: t0, LastSeenAt: t0,
		AuthenticatedAt: t0, ExpiresAt: t0.Add(SessionLifetime)}
	if !strings.HasPrefix(cookie, "s1.") || !strings.HasPrefix(token, AccessTokenPrefix) || cookieDigest == cookie || tokenDigest == token {
		t.Fatalf("credentials %q %q stored as %q %q", cookie, token, cookieDigest, tokenDigest)
	}
	at := func(now time.Time, c Credential) (*access.Principal, error) {
		st.now = now
		p, _, err := auth.Authenticate(ctx, st, c)
		return p, err
	}

	p, err := at(t0.Add(30*time.Second), Credential{Cookie: cookie})
	if err != nil || p.Kind != access.CredentialSession || p.Environment != access.Live || p.SessionID != "ses_1" ||
		p.UserID != "usr_1" || p.WorkspaceID != "ws_1" || !p.AuthenticatedAt.Equal(t0) {
		t.Fatalf("cookie = %+v, %v", p, err)
	}
	if st.touches != 0 {
		t.Fatal("a use within a minute of the last was written")
	}
	p, err = at(t0.Add(time.Minute), Credential{Token: token, Environment: access.Test})
	if err != nil || p.Kind != access.CredentialAccessToken || p.Environment != access.Test {
		t.Fatalf("token in test mode = %+v, %v", p, err)
	}
	if st.touches != 1 || !st.sessions["ses_1"].LastSeenAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a use a minute after the last: %d touches, last seen %v", st.touches, st.sessions["ses_1"].LastSeenAt)
	}

	// Refused before any lookup: nothing, a forged or malformed cookie, a
	// token of another shape.
	lookups := st.lookups
	forged := cookie[:strings.LastIndexByte(cookie, '.')+1] + strings.Repeat("0", 32)
	for name, c := range map[string]Credential{
		"no credential":  {},
		"forged cookie":  {Cookie: forged},
		"foreign cookie": {Cookie: "session=abc"},
		"long cookie":    {Cookie: "s1." + strings.Repeat("a", 300)},
		"foreign token":  {Token: "platform_test_" + strings.Repeat("a", 40)},
	} {
		if _, err := at(t0, c); !fault.Is(err, fault.Unauthenticated) {
			t.Errorf("%s = %v, want UNAUTHENTICATED", name, err)
		}
	}
	if st.lookups != lookups {
		t.Fatalf("malformed credentials reached the store %d times", st.lookups-lookups)
	}
	if _, err := at(t0, Credential{Token: AccessTokenPrefix + "unknown"}); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("an unknown token = %v, want UNAUTHENTICATED", err)
	}

	// The token ends at its expiry, the session at its own.
	if _, err := at(tokenExp, Credential{Token: token}); !fault.Is(err, fault.SessionExpired) {
		t.Errorf("the token at its expiry = %v, want SESSION_EXPIRED", err)
	}
	if _, err := at(tokenExp, Credential{Cookie: cookie}); err != nil {
		t.Errorf("the cookie once the token expired: %v", err)
	}
	end := t0.Add(SessionLifetime)
	if _, err := at(end.Add(-time.Nanosecond), Credential{Cookie: cookie}); err != nil {
		t.Errorf("the cookie just before the session ends: %v", err)
	}
	if _, err := at(end, Credential{Cookie: cookie}); !fault.Is(err, fault.SessionExpired) {
		t.Errorf("the cookie when the session ends = %v, want SESSION_EXPIRED", err)
	}
	s := st.sessions["ses_1"]
	revoked := t0.Add(time.Hour)
	s.RevokedAt = &revoked
	st.sessions["ses_1"] = s
	for name, c := range map[string]Credential{"cookie": {Cookie: cookie}, "token": {Token: token}} {
		if _, err := at(t0.Add(2*time.Hour), c); !fault.Is(err, fault.Unauthenticated) {
			t.Errorf("the %s of a signed-out session = %v, want UNAUTHENTICATED", name, err)
		}
	}
}

// TestRequireFresh: routes that need a recent sign-in accept one at most
// the window old, never an API key, and say how recent it must be.
func TestRequireFresh(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	user := func(signedIn time.Time) *access.Principal {
		return &access.Principal{Kind: access.CredentialSession, UserID: "usr_1", AuthenticatedAt: signedIn}
	}
	if err := RequireFresh(user(now.Add(-FreshWindow)), now, FreshWindow); err != nil {
		t.Errorf("a sign-in exactly the window old: %v", err)
	}
	for name, p := range map[string]*access.Principal{
		"stale sign-in": user(now.Add(-FreshWindow - time.Second)),
		"no sign-in":    user(time.Time{}),
		"api key":       {Kind: access.CredentialAPIKey, UserID: "usr_1", AuthenticatedAt: now},
		"nobody":        nil,
	} {
		err := RequireFresh(p, now, FreshWindow)
		if _, _, d := fault.Public(err); !fault.Is(err, fault.ReauthenticationRequired) || d["maxAgeSeconds"] != int64(600) {
			t.Errorf("%s = %v, want REAUTHENTICATION_REQUIRED with maxAgeSeconds 600", name, err)
		}
	}
}

// TestConsumeCodeReasons: a code is used once, within its lifetime; a
// refusal says whether it is unknown, used or expired, and a value that
// is not a code never reaches the store.
func TestConsumeCodeReasons(t *testing.T) {
	ctx := context.Background()
	st := newMemAccount()
	keys := testKeys{}
	t0 := st.now
	value, c := NewCode(keys, PurposePasswordReset, t0, ResetLifetime)
	c.UserID = "usr_1"
	st.codes[c.Digest] = c
	expired, e := NewCode(keys, PurposePasswordReset, t0.Add(-ResetLifetime), ResetLifetime)
	st.codes[e.Digest] = e
	reason := func(err error) any {
		_, _, d := fault.Public(err)
		if !fault.Is(err, fault.InvalidInput) || d["field"] != "code" {
			return err
		}
		return d["reason"]
	}
	for name, v := range map[string]string{"not a code": "abc", "too long": codePrefix + strings.Repeat("a", 62)} {
		if _, err := ConsumeCode(ctx, st, keys, PurposePasswordReset, v, "code", t0); reason(err) != CodeUnknown {
			t.Errorf("%s = %v, want unknown", name, err)
		}
	}
	if st.lookups != 0 {
		t.Fatal("a value that is not a code reached the store")
	}
	if _, err := ConsumeCode(ctx, st, keys, PurposeHandoff, value, "code", t0); reason(err) != CodeUnknown {
		t.Errorf("a code of another purpose = %v, want unknown", err)
	}
	if _, err := ConsumeCode(ctx, st, keys, PurposePasswordReset, expired, "code", t0); reason(err) != CodeExpired {
		t.Errorf("a code at its expiry = %v, want expired", err)
	}
	got, err := ConsumeCode(ctx, st, keys, PurposePasswordReset, " "+value+"\n", "code", t0.Add(ResetLifetime-time.Second))
	if err != nil || got.UserID != "usr_1" {
		t.Fatalf("a pasted code within its lifetime = %+v, %v", got, err)
	}
	if _, err := ConsumeCode(ctx, st, keys, PurposePasswordReset, value, "code", t0); reason(err) != CodeUsed {
		t.Errorf("a code used once already = %v, want used", err)
	}
}
