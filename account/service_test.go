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
	if c.Throttle != DefaultThrottlePolicy() || c.FreshWindow != FreshWindow || c.HashPool == nil ||
		c.AddressRate != (AddressRate{Burst: 30, PerMinute: 30}) || c.ResetMail != (MailLimit{PerAccount: 3, PerAddress: 10, Window: time.Hour}) {
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
		"bad pool":  {Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap, Hashing: HashPoolConfig{Slots: -1}},
		"bad throttle": {Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap,
			Throttle: ThrottlePolicy{Pair: ThrottleLimit{Backoff: time.Hour, MaxBackoff: time.Minute}}},
		"bad rate": {Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap, AddressRate: AddressRate{Burst: -1}},
		"bad mail": {Keys: testKeys{}, Mailer: nopMailer{}, Passwords: cheap, ResetMail: MailLimit{Window: -time.Hour}},
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
	a := s.loginSubjects("ada@example.com", "10.0.0.1")
	b := s.loginSubjects("ada@example.com", "10.0.0.2")
	c := s.loginSubjects("bob@example.com", "10.0.0.1")
	if a[2] != b[2] || a[1] == b[1] || a[0] == b[0] || a[1] != c[1] || a[0] == c[0] || a[2] == c[2] ||
		!strings.HasPrefix(a[0], "pair:") || !strings.HasPrefix(a[1], "addr:") || !strings.HasPrefix(a[2], "acct:") {
		t.Fatalf("subjects %v %v %v", a, b, c)
	}
	if all := strings.Join(a, " "); strings.Contains(all, "ada") || strings.Contains(all, "10.0.0.1") {
		t.Fatalf("a subject holds plaintext: %v", a)
	}
	// One IPv6 host is its /64.
	if v6a, v6b := s.loginSubjects("ada@example.com", "2001:db8:1:2::1"), s.loginSubjects("ada@example.com", "2001:db8:1:2:ffff::9"); v6a[0] != v6b[0] || v6a[1] != v6b[1] {
		t.Fatalf("one /64 throttled as two clients: %v %v", v6a, v6b)
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
	p, err := NewPasswords(DefaultPasswordParams(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Hash(context.Background(), "correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}
