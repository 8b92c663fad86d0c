package smtpmail

import (
	"bufio"
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/account"
)

// envelope is what the loopback server received.
type envelope struct {
	from, to string
	data     string
}

// serveSMTP speaks just enough SMTP on one connection: 220, EHLO/HELO,
// MAIL FROM, RCPT TO, DATA, QUIT.
func serveSMTP(t *testing.T, ln net.Listener, got chan<- envelope) {
	conn, err := ln.Accept()
	if err != nil {
		t.Errorf("accept: %v", err)
		close(got)
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	say := func(s string) { io.WriteString(conn, s+"\r\n") }
	var env envelope
	say("220 loopback ESMTP test")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Errorf("read: %v", err)
			close(got)
			return
		}
		cmd := strings.TrimRight(line, "\r\n")
		up := strings.ToUpper(cmd)
		switch {
		case strings.HasPrefix(up, "EHLO"):
			say("250-loopback")
			say("250 8BITMIME")
		case strings.HasPrefix(up, "HELO"):
			say("250 loopback")
		case strings.HasPrefix(up, "MAIL FROM:"):
			env.from = strings.Trim(cmd[len("MAIL FROM:"):], "<> ")
			if i := strings.IndexByte(env.from, '>'); i >= 0 {
				env.from = env.from[:i]
			}
			say("250 ok")
		case strings.HasPrefix(up, "RCPT TO:"):
			env.to = strings.Trim(cmd[len("RCPT TO:"):], "<> ")
			say("250 ok")
		case up == "DATA":
			say("354 end with <CRLF>.<CRLF>")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					t.Errorf("read data: %v", err)
					close(got)
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(strings.TrimPrefix(l, ".")) // undo dot-stuffing
			}
			env.data = b.String()
			say("250 queued")
		case up == "QUIT":
			say("221 bye")
			got <- env
			return
		default:
			say("502 not implemented")
		}
	}
}

func TestSendDeliversOverSMTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan envelope, 1)
	go serveSMTP(t, ln, got)

	date := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	m, err := New(Config{Addr: ln.Addr().String(), From: "Platform <no-reply@platform.test>", Clock: clockFunc(func() time.Time { return date })})
	if err != nil {
		t.Fatal(err)
	}
	link := "http://127.0.0.1:8080/verify-email?code=pc_abcdefghijklmnopqrstuvwxyz234567"
	err = m.Send(context.Background(), account.Message{To: "ada@example.test", Subject: "Vérifiez your email address",
		Text: "Welcome, Ada.\n\nOpen this link:\n\n" + link + "\n"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	env := <-got
	if env.from != "no-reply@platform.test" || env.to != "ada@example.test" {
		t.Fatalf("envelope from %q to %q", env.from, env.to)
	}
	msg, err := mail.ReadMessage(strings.NewReader(env.data))
	if err != nil {
		t.Fatalf("parse message: %v\n%s", err, env.data)
	}
	subj, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil || subj != "Vérifiez your email address" {
		t.Errorf("Subject = %q (%v)", subj, err)
	}
	if msg.Header.Get("To") != "<ada@example.test>" || !strings.Contains(msg.Header.Get("From"), "no-reply@platform.test") {
		t.Errorf("To %q From %q", msg.Header.Get("To"), msg.Header.Get("From"))
	}
	if d, err := msg.Header.Date(); err != nil || !d.Equal(date) {
		t.Errorf("Date = %v (%v)", d, err)
	}
	if msg.Header.Get("Message-Id") == "" || msg.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("headers = %v", msg.Header)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), link) || !strings.HasPrefix(string(body), "Welcome, Ada.\r\n") {
		t.Errorf("body = %q", body)
	}
}

func TestComposeRefusesHeaderInjection(t *testing.T) {
	from, _ := mail.ParseAddress("no-reply@platform.test")
	to, _ := mail.ParseAddress("ada@example.test")
	_, err := Compose(from, to, account.Message{Subject: "hi\r\nBcc: eve@example.test", Text: "x"}, time.Now(), "platform.test")
	if err == nil {
		t.Fatal("a subject with a line break was composed")
	}
	m, _ := New(Config{Addr: "127.0.0.1:1", From: "no-reply@platform.test"})
	if err := m.Send(context.Background(), account.Message{To: "ada@example.test\r\nBcc: eve@example.test", Subject: "s"}); err == nil {
		t.Fatal("a recipient with a line break was accepted")
	}
}

func TestSendFailsWhenServerUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, err := New(Config{Addr: addr, From: "no-reply@platform.test", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), account.Message{To: "ada@example.test", Subject: "s", Text: "t"}); err == nil {
		t.Fatal("Send to a closed port succeeded")
	}
}

// clockFunc adapts a function to the Clock shape, for tests.
type clockFunc func() time.Time

// Now calls f.
func (f clockFunc) Now() time.Time { return f() }
