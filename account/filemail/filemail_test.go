package filemail

import (
	"context"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/account"
)

func TestSendWritesPrivateEMLFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	at := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	m, err := New(dir, "Platform <no-reply@platform.test>", clockFunc(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	link := "http://127.0.0.1:8080/verify-email?code=pc_abc"
	for _, to := range []string{"ada@example.test", "ada@example.test"} {
		if err := m.Send(context.Background(), account.Message{To: to, Subject: "Verify your email address", Text: "Open:\n" + link + "\n"}); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 2 {
		t.Fatalf("files = %v", files)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, %v", f, st.Mode(), err)
		}
		raw, _ := os.ReadFile(f)
		msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if msg.Header.Get("To") != "ada@example.test" || msg.Header.Get("Subject") != "Verify your email address" {
			t.Errorf("headers = %v", msg.Header)
		}
		if !strings.Contains(string(raw), link) {
			t.Errorf("body lacks the link: %s", raw)
		}
	}
	if err := m.Send(context.Background(), account.Message{To: "a@b.test", Subject: "x\nBcc: e@f.test"}); err == nil {
		t.Error("a header with a line break was written")
	}
}

// clockFunc adapts a function to the Clock shape, for tests.
type clockFunc func() time.Time

// Now calls f.
func (f clockFunc) Now() time.Time { return f() }
