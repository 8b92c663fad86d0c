package account

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
)

// testKeys is a keyed digest like secret.Keyring's.
type testKeys struct{}

func (testKeys) Digest(s string) string {
	m := hmac.New(sha256.New, []byte("test pepper"))
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}

type nopMailer struct{}

func (nopMailer) Send(context.Context, Message) error { return nil }

var cheap = PasswordParams{Time: 1, MemoryKiB: 64, Threads: 1}

func TestNewAppliesDefaultsAndRefusesBadConfig(t *testing.T) {
	s, err := New(Config{Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap, BaseURL: "https://app.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Config()
	if c.Throttle != (ThrottlePolicy{MaxFailures: 5, Window: 15 * time.Minute, Lockout: 15 * time.Minute}) || c.FreshWindow != FreshWindow {
		t.Errorf("defaults = %+v", c)
	}
	if got := s.Link("/verify-email", "pc_a b"); got != "https://app.example.com/verify-email?code=pc_a+b" {
		t.Errorf("Link = %q", got)
	}
	for name, bad := range map[string]Config{
		"no keys":   {Mailer: nopMailer{}},
		"no mailer": {Keys: testKeys{}},
		"bad url":   {Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap, BaseURL: "javascript:alert(1)"},
		"bad argon": {Keys: testKeys{}, Mailer: nopMailer{}, Passwords: PasswordParams{Time: 1}},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	d, err := New(Config{Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap})
	if err != nil || d.Config().BaseURL != DefaultBaseURL {
		t.Errorf("default BaseURL = %q, %v", d.Config().BaseURL, err)
	}
}

func TestCodesAreRandomAndStoredAsDigests(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	v1, c1 := NewCode(testKeys{}, PurposeHandoff, now, HandoffLifetime)
	v2, _ := NewCode(testKeys{}, PurposeHandoff, now, HandoffLifetime)
	if v1 == v2 || !strings.HasPrefix(v1, "pc_") || len(v1) != 35 {
		t.Fatalf("codes %q %q", v1, v2)
	}
	if c1.Digest != CodeDigest(testKeys{}, v1) || strings.Contains(c1.Digest, v1[3:]) || !c1.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("record = %+v", c1)
	}
}

func TestValidEmail(t *testing.T) {
	for in, want := range map[string]string{" Ada@Example.COM ": "ada@example.com", "a.b+c@d.example": "a.b+c@d.example"} {
		if got, err := validEmail("op", "email", in); err != nil || got != want {
			t.Errorf("validEmail(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "ada", "ada@localhost", "Ada <ada@example.com>", "a@b.c\r\nBcc: x@y.z"} {
		if _, err := validEmail("op", "email", in); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("validEmail(%q) = %v", in, err)
		}
	}
}

func TestThrottleSubjectsAreDigests(t *testing.T) {
	s, err := New(Config{Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap})
	if err != nil {
		t.Fatal(err)
	}
	a := s.throttleSubjects("ada@example.com", "10.0.0.1")
	b := s.throttleSubjects("ada@example.com", "10.0.0.2")
	if a[0] != b[0] || a[1] == b[1] || !strings.HasPrefix(a[0], "acct:") || !strings.HasPrefix(a[1], "addr:") {
		t.Fatalf("subjects %v %v", a, b)
	}
	if strings.Contains(a[0]+a[1], "ada") || strings.Contains(a[1], "10.0.0.1") {
		t.Fatalf("a subject holds plaintext: %v", a)
	}
}

func TestCodeRefusalReasons(t *testing.T) {
	for _, reason := range []string{CodeUnknown, CodeUsed, CodeExpired} {
		err := codeRefused("op", "code", reason)
		if code, msg, details := fault.Public(err); code != fault.InvalidInput || msg == "" || details["reason"] != reason || details["field"] != "code" {
			t.Errorf("%s: %v %q %v", reason, code, msg, details)
		}
	}
}

// BenchmarkPasswordHash measures one argon2id hash with the default
// parameters, the cost of every login and signup.
func BenchmarkPasswordHash(b *testing.B) {
	p, err := NewPasswords(DefaultPasswordParams())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Hash("correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}
