package platformtest

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/creatormusic/platform/account"
)

// CheapPasswords are the argon2id parameters tests run with unless
// Options.Passwords says otherwise.
func CheapPasswords() account.PasswordParams {
	return account.PasswordParams{Time: 1, MemoryKiB: 64, Threads: 1}
}

// Mailer is an in-memory account.Mailer that keeps every message. It is safe
// for concurrent use.
type Mailer struct {
	mu   sync.Mutex
	msgs []account.Message
	// Fail, when set, makes Send fail with it.
	Fail error
}

var _ account.Mailer = (*Mailer)(nil)

// Send records m.
func (m *Mailer) Send(_ context.Context, msg account.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Fail != nil {
		return m.Fail
	}
	m.msgs = append(m.msgs, msg)
	return nil
}

// To returns the messages sent to address, oldest first.
func (m *Mailer) To(address string) []account.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []account.Message
	for _, msg := range m.msgs {
		if strings.EqualFold(msg.To, address) {
			out = append(out, msg)
		}
	}
	return out
}

// Last returns the newest message sent to address.
func (m *Mailer) Last(address string) (account.Message, bool) {
	msgs := m.To(address)
	if len(msgs) == 0 {
		return account.Message{}, false
	}
	return msgs[len(msgs)-1], true
}

// All returns every message sent.
func (m *Mailer) All() []account.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.msgs)
}

var codeInLink = regexp.MustCompile(`[?&]code=([A-Za-z0-9_%-]+)`)

// MailedCode returns the code of the link in the newest message to address
// whose subject contains subject; the test fails when there is none.
func (s *System) MailedCode(address, subject string) string {
	s.t.Helper()
	msgs := s.Mail.To(address)
	for i := len(msgs) - 1; i >= 0; i-- {
		if strings.Contains(msgs[i].Subject, subject) {
			if m := codeInLink.FindStringSubmatch(msgs[i].Text); m != nil {
				return m[1]
			}
		}
	}
	s.t.Fatalf("no mail to %s with subject %q and a code link (got %d messages)", address, subject, len(msgs))
	return ""
}

// Signup signs a person up through POST /api/v1/auth/signup and verifies
// the address with the code from the mailed link (POST
// /api/v1/auth/verify-email), failing the test on any error.
func (s *System) Signup(email, password, name string) {
	s.t.Helper()
	r := s.Do(Request{Method: http.MethodPost, Path: "/api/v1/auth/signup",
		Body: map[string]string{"email": email, "password": password, "name": name}})
	if r.Status != http.StatusAccepted {
		s.t.Fatalf("signup %s: %d %s", email, r.Status, r.Body)
	}
	code := s.MailedCode(email, "Verify your email")
	r = s.Do(Request{Method: http.MethodPost, Path: "/api/v1/auth/verify-email", Body: map[string]string{"code": code}})
	if r.Status != http.StatusOK {
		s.t.Fatalf("verify %s: %d %s", email, r.Status, r.Body)
	}
}

// Login signs in through POST /api/v1/auth/login and returns the session
// cookie's value (send it as Request.Cookie) and the session-bound access
// token (send it as Request.Key), failing the test on any error.
func (s *System) Login(email, password string) (cookie, token string) {
	s.t.Helper()
	r := s.Do(Request{Method: http.MethodPost, Path: "/api/v1/auth/login",
		Body: map[string]string{"email": email, "password": password}})
	if r.Status != http.StatusOK {
		s.t.Fatalf("login %s: %d %s", email, r.Status, r.Body)
	}
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	r.Data(s.t, &out)
	return SessionCookie(s.t, r), out.AccessToken
}

// SessionCookie returns the value of the session cookie a response set; the
// test fails when it set none.
func SessionCookie(t interface {
	Helper()
	Fatalf(string, ...any)
}, r *Response) string {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == account.CookieName && c.Value != "" {
			return c.Value
		}
	}
	t.Fatalf("no %s cookie in %v", account.CookieName, r.Header.Values("Set-Cookie"))
	return ""
}
