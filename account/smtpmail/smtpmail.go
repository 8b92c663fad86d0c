// Package smtpmail sends account mail over SMTP: an account.Mailer adapter.
//
// It uses net/smtp from the standard library. That package is frozen (no new
// features) but maintained by the Go team, and it does everything this
// adapter needs: STARTTLS when the server offers it, PLAIN authentication
// (which net/smtp refuses over an unencrypted connection except to
// localhost), and one message per connection. A third-party client would add
// connection pooling and DKIM, which the platform's volume of mail (signup,
// reset, invitations) does not need.
//
// Messages are plain-text UTF-8 with quoted-printable bodies; header values
// are Q-encoded, and line breaks in them are refused, so a user-supplied
// name or address cannot inject headers.
package smtpmail

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"time"

	"github.com/creatormusic/platform/account"
)

var _ account.Mailer = (*Mailer)(nil)

// Config configures a Mailer.
type Config struct {
	// Addr is the server's host:port, for example "smtp.example.com:587".
	// Required.
	Addr string
	// From is the sender address, for example "Platform <no-reply@example.com>".
	// Required.
	From string
	// Username and Password, when Username is set, authenticate with PLAIN.
	Username string
	Password string
	// Timeout bounds one delivery, connection included. Zero means 30 seconds.
	Timeout time.Duration
	// Clock dates messages; nil means the wall clock.
	Clock Clock
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

// Mailer sends each message in its own SMTP session. It is safe for
// concurrent use.
type Mailer struct {
	cfg  Config
	from *mail.Address
	host string
}

// New validates cfg and returns a Mailer.
func New(cfg Config) (*Mailer, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("smtpmail: Addr %q: %w", cfg.Addr, err)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtpmail: From %q: %w", cfg.From, err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	return &Mailer{cfg: cfg, from: from, host: host}, nil
}

// Send delivers m. The context's deadline (or Config.Timeout) bounds the
// whole session.
func (s *Mailer) Send(ctx context.Context, m account.Message) error {
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return fmt.Errorf("smtpmail: recipient: %w", err)
	}
	msg, err := s.compose(to, m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("smtpmail: dial: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtpmail: greeting: %w", err)
	}
	defer c.Close()
	if err := s.deliver(c, to.Address, msg); err != nil {
		return fmt.Errorf("smtpmail: %w", err)
	}
	return nil
}

func (s *Mailer) deliver(c *smtp.Client, rcpt string, msg []byte) error {
	if err := c.Hello("localhost"); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(tlsConfig(s.host)); err != nil {
			return fmt.Errorf("starttls: %w", err)
		}
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.host)); err != nil {
			return fmt.Errorf("auth: %w", err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := c.Rcpt(rcpt); err != nil {
		return fmt.Errorf("rcpt to: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	return c.Quit()
}

// compose renders m as an RFC 5322 message with CRLF line endings.
func (s *Mailer) compose(to *mail.Address, m account.Message) ([]byte, error) {
	return Compose(s.from, to, m, s.cfg.Clock.Now(), s.host)
}

// Compose renders m from from to to as an RFC 5322 plain-text message dated
// date, with a Message-Id under domain. A header value holding a line break
// is an error.
func Compose(from, to *mail.Address, m account.Message, date time.Time, domain string) ([]byte, error) {
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, errors.New("smtpmail: the subject holds a line break")
	}
	id := make([]byte, 12)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("smtpmail: message id: %w", err)
	}
	var b bytes.Buffer
	hdr := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	hdr("From", from.String())
	hdr("To", to.String())
	hdr("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	hdr("Date", date.Format(time.RFC1123Z))
	hdr("Message-Id", "<"+hex.EncodeToString(id)+"@"+domain+">")
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", "text/plain; charset=utf-8")
	hdr("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	body := strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n", "\r\n")
	if _, err := qp.Write([]byte(body)); err != nil {
		return nil, fmt.Errorf("smtpmail: body: %w", err)
	}
	if err := qp.Close(); err != nil {
		return nil, fmt.Errorf("smtpmail: body: %w", err)
	}
	return b.Bytes(), nil
}
