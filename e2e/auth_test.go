package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

const authPassword = "correct horse battery staple"

func post(s *platformtest.System, path string, body any) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: path, Body: body})
}

// errDetails returns error.details of an error envelope.
func errDetails(r *platformtest.Response) map[string]any {
	var env struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	json.Unmarshal(r.Body, &env)
	return env.Error.Details
}

func errMessage(r *platformtest.Response) string {
	var env struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(r.Body, &env)
	return env.Error.Message
}

func dataOf(r *platformtest.Response) string {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	json.Unmarshal(r.Body, &env)
	return string(env.Data)
}

func TestSignupVerifyLoginSessionsLogout(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		r := post(s, "/api/v1/auth/signup", map[string]string{"email": "Ada@Example.test", "password": authPassword, "name": "Ada"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("signup: %d %s", r.Status, r.Body)
		}
		msg, ok := s.Mail.Last("ada@example.test")
		if !ok || !strings.Contains(msg.Text, "http://platform.test/verify-email?code=pc_") {
			t.Fatalf("verification mail = %+v", msg)
		}
		// Not verified yet: the right password says so; a wrong one does not.
		r = post(s, "/api/v1/auth/login", map[string]string{"email": "ada@example.test", "password": authPassword})
		if r.Code() != "ACCESS_DENIED" || errDetails(r)["reason"] != "email_not_verified" {
			t.Fatalf("login before verification: %d %s", r.Status, r.Body)
		}
		if r := post(s, "/api/v1/auth/login", map[string]string{"email": "ada@example.test", "password": "wrong password!"}); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("wrong password before verification: %d %s", r.Status, r.Body)
		}
		code := s.MailedCode("ada@example.test", "Verify your email")
		r = post(s, "/api/v1/auth/verify-email", map[string]string{"code": code})
		var ev api.EmailVerified
		if r.Status != 200 {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		r.Data(t, &ev)
		if ev.Email != "ada@example.test" || !ev.Verified {
			t.Fatalf("verified = %+v", ev)
		}

		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/login", Header: map[string]string{"User-Agent": "laptop-browser"},
			Body: map[string]string{"email": "ADA@example.test", "password": authPassword}})
		if r.Status != 200 {
			t.Fatalf("login: %d %s", r.Status, r.Body)
		}
		sc := r.Header.Get("Set-Cookie")
		for _, want := range []string{"platform_session=s1.", "Path=/", "Max-Age=2592000", "HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(sc, want) {
				t.Errorf("Set-Cookie %q lacks %q", sc, want)
			}
		}
		if r.Header.Get("Cache-Control") != "private, no-store" {
			t.Errorf("Cache-Control = %q", r.Header.Get("Cache-Control"))
		}
		var si api.SignedIn
		r.Data(t, &si)
		cookie := platformtest.SessionCookie(t, r)
		if !strings.HasPrefix(si.AccessToken, "platform_at_") || si.TokenType != "Bearer" || si.Session.Kind != "web" ||
			si.User.Email != "ada@example.test" || si.Session.Workspace != nil || !si.AccessTokenExpiresAt.Equal(s.Clock.Now().Add(time.Hour).Truncate(time.Microsecond).UTC()) {
			t.Fatalf("signed in = %+v", si)
		}

		// The session, by cookie and by access token.
		for _, req := range []platformtest.Request{{Cookie: cookie}, {Key: si.AccessToken}} {
			req.Method, req.Path = http.MethodGet, "/api/v1/auth/session"
			r := s.Do(req)
			var cs api.CurrentSession
			if r.Status != 200 {
				t.Fatalf("session: %d %s", r.Status, r.Body)
			}
			r.Data(t, &cs)
			if cs.Session.ID != si.Session.ID || cs.User.ID != si.User.ID || cs.Environment != "live" || !cs.Session.Current {
				t.Fatalf("session = %+v", cs)
			}
		}
		// A second device; the list shows both, the current one marked, no secrets.
		s.Clock.Advance(2 * time.Minute)
		cookie2, _ := s.Login("ada@example.test", authPassword)
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/sessions", Cookie: cookie})
		var list api.SessionList
		r.Data(t, &list)
		if len(list.Items) != 2 || list.Items[1].ID != si.Session.ID || !list.Items[1].Current || list.Items[0].Current ||
			list.Items[1].Device != "laptop-browser" {
			t.Fatalf("sessions = %+v", list)
		}
		if strings.Contains(string(r.Body), cookie) || strings.Contains(string(r.Body), si.AccessToken) || strings.Contains(string(r.Body), "digest") {
			t.Fatalf("the session list shows a credential: %s", r.Body)
		}

		// Logout: the cookie is cleared and both credentials fail on the next request.
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/logout", Cookie: cookie})
		if r.Status != 200 || !strings.Contains(r.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Fatalf("logout: %d %v %s", r.Status, r.Header, r.Body)
		}
		for _, req := range []platformtest.Request{{Cookie: cookie}, {Key: si.AccessToken}} {
			req.Method, req.Path = http.MethodGet, "/api/v1/auth/session"
			r := s.Do(req)
			if r.Status != 401 || r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("after logout: %d %s", r.Status, r.Body)
			}
			if req.Cookie != "" {
				credentialFailure(t, r, "session", "signed_out", "signed out")
			} else {
				credentialFailure(t, r, "access_token", "signed_out", "signed out")
			}
		}
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/session", Cookie: cookie2}); r.Status != 200 {
			t.Fatalf("the other device was signed out: %d %s", r.Status, r.Body)
		}
		// API keys are not sessions.
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/session", Key: s.Boot.TestKey}); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("session with an API key: %d %s", r.Status, r.Body)
		}
	})
}

func TestSignupDuplicateEmailAnswersAlike(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		first := post(s, "/api/v1/auth/signup", map[string]string{"email": "bo@example.test", "password": authPassword, "name": "Bo"})
		again := post(s, "/api/v1/auth/signup", map[string]string{"email": "BO@example.test", "password": "another password here", "name": "Mallory"})
		owner := post(s, "/api/v1/auth/signup", map[string]string{"email": "owner@example.test", "password": authPassword, "name": "X"})
		for _, r := range []*platformtest.Response{first, again, owner} {
			if r.Status != first.Status || dataOf(r) != dataOf(first) {
				t.Fatalf("answers differ: %d %s vs %d %s", first.Status, first.Body, r.Status, r.Body)
			}
		}
		var n int
		if err := s.DB.Read().IDB().NewRaw(`SELECT COUNT(*) FROM users WHERE email = ?`, "bo@example.test").Scan(context.Background(), &n); err != nil || n != 1 {
			t.Fatalf("users with the address = %d (%v)", n, err)
		}
		msgs := s.Mail.To("bo@example.test")
		if len(msgs) != 2 || !strings.Contains(msgs[1].Subject, "Someone tried to sign up") || strings.Contains(msgs[1].Text, "code=") {
			t.Fatalf("mail = %+v", msgs)
		}
		// The first password is the one that works.
		s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/verify-email",
			Body: map[string]string{"code": codeFrom(t, msgs[0].Text)}})
		s.Login("bo@example.test", authPassword)
		if r := post(s, "/api/v1/auth/login", map[string]string{"email": "bo@example.test", "password": "another password here"}); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("the duplicate's password: %d %s", r.Status, r.Body)
		}
	})
}

func codeFrom(t *testing.T, text string) string {
	t.Helper()
	_, after, ok := strings.Cut(text, "code=")
	if !ok {
		t.Fatalf("no code in %q", text)
	}
	return strings.Fields(after)[0]
}

func TestVerificationCodeReusedExpiredUnknown(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		post(s, "/api/v1/auth/signup", map[string]string{"email": "cy@example.test", "password": authPassword, "name": "Cy"})
		code := s.MailedCode("cy@example.test", "Verify")
		if r := post(s, "/api/v1/auth/verify-email", map[string]string{"code": code}); r.Status != 200 {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		r := post(s, "/api/v1/auth/verify-email", map[string]string{"code": code})
		if r.Status != 400 || r.Code() != "INVALID_INPUT" || errDetails(r)["reason"] != "used" || errDetails(r)["field"] != "code" {
			t.Fatalf("reused: %d %s", r.Status, r.Body)
		}
		post(s, "/api/v1/auth/signup", map[string]string{"email": "di@example.test", "password": authPassword, "name": "Di"})
		late := s.MailedCode("di@example.test", "Verify")
		s.Clock.Advance(24*time.Hour + time.Second)
		if r := post(s, "/api/v1/auth/verify-email", map[string]string{"code": late}); errDetails(r)["reason"] != "expired" {
			t.Fatalf("expired: %d %s", r.Status, r.Body)
		}
		if r := post(s, "/api/v1/auth/verify-email", map[string]string{"code": "pc_doesnotexist"}); errDetails(r)["reason"] != "unknown" {
			t.Fatalf("unknown: %d %s", r.Status, r.Body)
		}
	})
}

func TestPasswordResetIsSingleUseAndSignsOutEverywhere(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		s.Signup("eve@example.test", authPassword, "Eve")
		cookie, token := s.Login("eve@example.test", authPassword)
		r := post(s, "/api/v1/auth/password/forgot", map[string]string{"email": "eve@example.test"})
		nobody := post(s, "/api/v1/auth/password/forgot", map[string]string{"email": "nobody@example.test"})
		if r.Status != 202 || nobody.Status != 202 || dataOf(r) != dataOf(nobody) {
			t.Fatalf("forgot: %d %s / %d %s", r.Status, r.Body, nobody.Status, nobody.Body)
		}
		if len(s.Mail.To("nobody@example.test")) != 0 {
			t.Fatal("mail went to an address without an account")
		}
		code := s.MailedCode("eve@example.test", "Reset your password")
		const newPassword = "a brand new passphrase"
		if r := post(s, "/api/v1/auth/password/reset", map[string]string{"code": code, "password": newPassword}); r.Status != 200 {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}
		for _, req := range []platformtest.Request{{Cookie: cookie}, {Key: token}} {
			req.Method, req.Path = http.MethodGet, "/api/v1/auth/session"
			if r := s.Do(req); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("old credential after reset: %d %s", r.Status, r.Body)
			}
		}
		r = post(s, "/api/v1/auth/password/reset", map[string]string{"code": code, "password": "yet another passphrase"})
		if r.Code() != "INVALID_INPUT" || errDetails(r)["reason"] != "used" {
			t.Fatalf("reset twice: %d %s", r.Status, r.Body)
		}
		if r := post(s, "/api/v1/auth/login", map[string]string{"email": "eve@example.test", "password": authPassword}); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("old password: %d %s", r.Status, r.Body)
		}
		s.Login("eve@example.test", newPassword)
		// A reset code lives 30 minutes.
		post(s, "/api/v1/auth/password/forgot", map[string]string{"email": "eve@example.test"})
		late := s.MailedCode("eve@example.test", "Reset your password")
		s.Clock.Advance(30*time.Minute + time.Second)
		if r := post(s, "/api/v1/auth/password/reset", map[string]string{"code": late, "password": "too late passphrase"}); errDetails(r)["reason"] != "expired" {
			t.Fatalf("expired reset: %d %s", r.Status, r.Body)
		}
	})
}

func TestHandoffExchangesOnceWithinAMinute(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		s.Signup("fay@example.test", authPassword, "Fay")
		_, token := s.Login("fay@example.test", authPassword)
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/handoff", Key: token})
		var h api.HandoffCode
		if r.Status != 201 {
			t.Fatalf("handoff: %d %s", r.Status, r.Body)
		}
		r.Data(t, &h)
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/handoff/exchange", Body: map[string]string{"code": h.Code},
			Header: map[string]string{"User-Agent": "studio-app/1.0"}})
		if r.Status != 200 {
			t.Fatalf("exchange: %d %s", r.Status, r.Body)
		}
		studio := platformtest.SessionCookie(t, r)
		if !strings.Contains(r.Header.Get("Set-Cookie"), "HttpOnly") || strings.Contains(string(r.Body), "platform_at_") {
			t.Fatalf("exchange answer: %v %s", r.Header, r.Body)
		}
		var cs api.CurrentSession
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/session", Cookie: studio})
		r.Data(t, &cs)
		if cs.Session.Kind != "studio" || cs.User.Email != "fay@example.test" || cs.Session.AccessTokenExpiresAt != nil {
			t.Fatalf("studio session = %+v", cs)
		}
		if r := post(s, "/api/v1/auth/handoff/exchange", map[string]string{"code": h.Code}); errDetails(r)["reason"] != "used" {
			t.Fatalf("exchanged twice: %d %s", r.Status, r.Body)
		}
		// Only a web session hands off.
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/handoff", Cookie: studio}); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("handoff from studio: %d %s", r.Status, r.Body)
		}
		r = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/handoff", Key: token})
		r.Data(t, &h)
		s.Clock.Advance(61 * time.Second)
		if r := post(s, "/api/v1/auth/handoff/exchange", map[string]string{"code": h.Code}); errDetails(r)["reason"] != "expired" {
			t.Fatalf("exchange after expiry: %d %s", r.Status, r.Body)
		}
	})
}

func TestHandoffCodeConcurrentExchangeYieldsOneSession(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		s.Signup("gus@example.test", authPassword, "Gus")
		_, token := s.Login("gus@example.test", authPassword)
		var h api.HandoffCode
		s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/handoff", Key: token}).Data(t, &h)
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = post(s, "/api/v1/auth/handoff/exchange", map[string]string{"code": h.Code}).Status
			}()
		}
		wg.Wait()
		ok := 0
		for _, st := range statuses {
			if st == 200 {
				ok++
			} else if st != 400 {
				t.Errorf("status %d", st)
			}
		}
		if ok != 1 {
			t.Fatalf("%d exchanges succeeded: %v", ok, statuses)
		}
	})
}

// TestLoginThrottleEngagesAndReleases walks the throttle's counters: an
// (account, address) pair backs off after 5 failures (1 minute, then
// doubling) without touching the account from elsewhere; an address backs
// off after 30 failures on any accounts; failures older than the window
// do not add up.
func TestLoginThrottleEngagesAndReleases(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{TrustProxy: true}, func(t *testing.T, s *platformtest.System) {
		s.Signup("hal@example.test", authPassword, "Hal")
		from := func(ip, email, pw string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/login",
				Header: map[string]string{"X-Forwarded-For": ip}, Body: map[string]string{"email": email, "password": pw}})
		}
		locked := func(r *platformtest.Response, retryAfter string) bool {
			return r.Status == 429 && r.Code() == "RATE_LIMITED" && r.Header.Get("Retry-After") == retryAfter &&
				errDetails(r)["limit"] == "loginFailures"
		}
		// Per pair: five failures from one address.
		for i := range 5 {
			if r := from("10.0.0.1", "hal@example.test", "wrong password!"); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("failure %d: %d %s", i, r.Status, r.Body)
			}
		}
		if r := from("10.0.0.1", "hal@example.test", authPassword); !locked(r, "60") {
			t.Fatalf("locked pair: %d %v %s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
		if r := from("10.0.0.2", "hal@example.test", authPassword); r.Status != 200 {
			t.Fatalf("the account from another address: %d %s", r.Status, r.Body)
		}
		s.Clock.Advance(30 * time.Second)
		if r := from("10.0.0.1", "hal@example.test", authPassword); !locked(r, "30") {
			t.Fatalf("Retry-After later: %v %s", r.Header.Get("Retry-After"), r.Body)
		}
		s.Clock.Advance(30 * time.Second)
		if r := from("10.0.0.1", "hal@example.test", "wrong password!"); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("after the lock: %d %s", r.Status, r.Body)
		}
		if r := from("10.0.0.1", "hal@example.test", authPassword); !locked(r, "120") {
			t.Fatalf("doubled lock: %d %v %s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
		s.Clock.Advance(2 * time.Minute)
		if r := from("10.0.0.1", "hal@example.test", authPassword); r.Status != 200 {
			t.Fatalf("after the doubled lock: %d %s", r.Status, r.Body)
		}
		// The sign-in cleared the pair: five failures again before a lock.
		for i := range 5 {
			if r := from("10.0.0.1", "hal@example.test", "wrong password!"); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("failure %d after a sign-in: %d %s", i, r.Status, r.Body)
			}
		}
		// Per address: thirty failures on other accounts lock the address.
		for i := range 30 {
			if r := from("10.1.1.1", fmt.Sprintf("nobody%d@example.test", i), "wrong password!"); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("address failure %d: %d %s", i, r.Status, r.Body)
			}
		}
		s.Clock.Advance(2 * time.Second) // a token for the address's request rate
		if r := from("10.1.1.1", "hal@example.test", authPassword); !locked(r, "58") {
			t.Fatalf("locked address: %d %v %s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
		if r := from("10.2.2.2", "hal@example.test", authPassword); r.Status != 200 {
			t.Fatalf("another address: %d %s", r.Status, r.Body)
		}
		// Failures older than the window do not add up.
		for range 4 {
			from("10.3.3.3", "hal@example.test", "wrong password!")
		}
		s.Clock.Advance(16 * time.Minute)
		for range 4 {
			from("10.3.3.3", "hal@example.test", "wrong password!")
		}
		if r := from("10.3.3.3", "hal@example.test", authPassword); r.Status != 200 {
			t.Fatalf("failures across windows locked: %d %s", r.Status, r.Body)
		}
	})
}

func TestRevokedSessionsTokensFail(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		s.Signup("ida@example.test", authPassword, "Ida")
		c1, t1 := s.Login("ida@example.test", authPassword)
		c2, t2 := s.Login("ida@example.test", authPassword)
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/sessions/revoke-others", Key: t2})
		var rv api.RevokedSessions
		r.Data(t, &rv)
		if rv.Revoked != 1 {
			t.Fatalf("revoked = %+v", rv)
		}
		for _, req := range []platformtest.Request{{Cookie: c1}, {Key: t1}} {
			req.Method, req.Path = http.MethodGet, "/api/v1/auth/session"
			if r := s.Do(req); r.Status != 401 || r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("revoked session: %d %s", r.Status, r.Body)
			}
		}
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/session", Cookie: c2}); r.Status != 200 {
			t.Fatalf("current session: %d %s", r.Status, r.Body)
		}
		// The access token lasts an hour; the cookie session goes on.
		s.Clock.Advance(time.Hour + time.Second)
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/session", Key: t2}); r.Code() != "SESSION_EXPIRED" {
			t.Fatalf("expired token: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/session", Cookie: c2}); r.Status != 200 {
			t.Fatalf("cookie after the token expired: %d %s", r.Status, r.Body)
		}
	})
}

func TestUnknownEmailAndWrongPasswordLookAlike(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		s.Signup("jo@example.test", authPassword, "Jo")
		wrong := post(s, "/api/v1/auth/login", map[string]string{"email": "jo@example.test", "password": "wrong password!"})
		unknown := post(s, "/api/v1/auth/login", map[string]string{"email": "nobody@example.test", "password": "wrong password!"})
		if wrong.Status != 401 || wrong.Status != unknown.Status || wrong.Code() != unknown.Code() ||
			errMessage(wrong) != errMessage(unknown) || wrong.Header.Get("Set-Cookie") != "" {
			t.Fatalf("answers differ: %d %s / %d %s", wrong.Status, wrong.Body, unknown.Status, unknown.Body)
		}
	})
}

func TestAuthSecretsNeitherLoggedNorStored(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		post(s, "/api/v1/auth/signup", map[string]string{"email": "kit@example.test", "password": authPassword, "name": "Kit"})
		verify := s.MailedCode("kit@example.test", "Verify")
		post(s, "/api/v1/auth/verify-email", map[string]string{"code": verify})
		cookie, token := s.Login("kit@example.test", authPassword)
		post(s, "/api/v1/auth/password/forgot", map[string]string{"email": "kit@example.test"})
		reset := s.MailedCode("kit@example.test", "Reset")
		var h api.HandoffCode
		s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/handoff", Key: token}).Data(t, &h)
		secrets := map[string]string{"password": authPassword, "verification code": verify, "reset code": reset,
			"handoff code": h.Code, "cookie": cookie, "access token": token}

		ctx := context.Background()
		var stored []string
		for _, q := range []string{
			`SELECT cookie_digest || ' ' || COALESCE(token_digest, '') || ' ' || user_agent FROM sessions`,
			`SELECT digest || ' ' || payload FROM account_codes`,
			`SELECT password_hash FROM user_credentials`,
			`SELECT subject FROM login_throttle`,
		} {
			var rows []string
			if err := s.DB.Read().IDB().NewRaw(q).Scan(ctx, &rows); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			stored = append(stored, rows...)
		}
		if len(stored) < 4 {
			t.Fatalf("rows = %v", stored)
		}
		all, logs := strings.Join(stored, "\n"), s.Log.String()
		for what, v := range secrets {
			if strings.Contains(all, v) {
				t.Errorf("the %s is stored in plaintext", what)
			}
			if strings.Contains(logs, v) {
				t.Errorf("the %s is in the log", what)
			}
		}
	})
}
