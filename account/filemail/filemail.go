// Package filemail is an account.Mailer that writes each message as an
// .eml file under a directory instead of sending it, for a host running on
// one machine: a person opens the newest file to follow a signup or reset
// link. Files are created with mode 0600 (they hold single-use links) in a
// directory of mode 0700.
package filemail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/creatormusic/platform/account"
)

var _ account.Mailer = (*Mailer)(nil)

// Mailer writes messages under Dir. It is safe for concurrent use.
type Mailer struct {
	dir   string
	from  string
	clock Clock
}

// Clock tells the time.
type Clock interface {
	// Now is the current time.
	Now() time.Time
}

// wallClock is the default Clock.
type wallClock struct{}

// Now is time.Now.
func (wallClock) Now() time.Time { return time.Now() }

// New returns a Mailer writing under dir (created if missing) with From set
// to from. clock names and dates the files; nil means the wall clock.
func New(dir, from string, clock Clock) (*Mailer, error) {
	if _, err := mail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("filemail: from %q: %w", from, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("filemail: %w", err)
	}
	if clock == nil {
		clock = wallClock{}
	}
	return &Mailer{dir: dir, from: from, clock: clock}, nil
}

// Dir is the directory messages are written to.
func (m *Mailer) Dir() string { return m.dir }

// Send writes msg to Dir as <time>-<recipient>-<random>.eml; the names sort
// by time.
func (m *Mailer) Send(ctx context.Context, msg account.Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("filemail: %w", err)
	}
	if strings.ContainsAny(msg.To+msg.Subject, "\r\n") {
		return fmt.Errorf("filemail: a header holds a line break")
	}
	now := m.clock.Now().UTC()
	r := make([]byte, 4)
	if _, err := rand.Read(r); err != nil {
		return fmt.Errorf("filemail: %w", err)
	}
	name := fmt.Sprintf("%s-%s-%s.eml", now.Format("20060102T150405.000000000Z"), safeName(msg.To), hex.EncodeToString(r))
	var b strings.Builder
	b.WriteString("From: " + m.from + "\r\n")
	b.WriteString("To: " + msg.To + "\r\n")
	b.WriteString("Subject: " + msg.Subject + "\r\n")
	b.WriteString("Date: " + now.Format(time.RFC1123Z) + "\r\n")
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(msg.Text, "\r\n", "\n"), "\n", "\r\n"))
	f, err := os.OpenFile(filepath.Join(m.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("filemail: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("filemail: write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("filemail: close %s: %w", name, err)
	}
	return nil
}

// safeName keeps letters, digits, '.', '-' and '@' of an address for a file name.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-', r == '@':
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	return b.String()
}
