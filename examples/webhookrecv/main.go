// Command webhookrecv receives the example host's webhook deliveries on a
// loopback address and prints each event, after checking it as the
// Standard Webhooks specification tells a receiver to (package webhook,
// Verify): the webhook-id, webhook-timestamp and webhook-signature
// headers, the timestamp within 5 minutes of this machine's clock, and
// one v1 signature equal to the HMAC-SHA256 of id.timestamp.body under
// the endpoint's signing secret.
//
//	go run ./examples/server -webhook-allow-loopback          # in one shell
//	go run ./examples/webhookrecv -url-file hook.url \
//	  -secret-file hook.secret -until generation.operation.completed
//
// It listens on -listen (a loopback address; port 0 takes a free one),
// writes its URL (http://127.0.0.1:PORT/hook) to -url-file once it
// listens, for the endpoint's registration, and reads the signing secret
// from -secret, $WEBHOOK_SECRET or -secret-file, the last on each
// delivery, so the secret can be written there once the endpoint is
// registered (POST /api/v1/webhook-endpoints answers it once). A delivery
// that verifies is answered 200 and printed: its webhook-id, type,
// aggregate and version, how many signatures it carried (two during a
// secret rotation's overlap) and its payload. One that does not is
// answered 400 (the host retries it) and printed with the reason. The
// secret is never printed.
//
// With -until TYPE it exits 0 after printing a verified event of that
// type, and 1 when none came within -timeout. Without it, it runs until
// interrupted.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/webhook"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "webhookrecv:", err)
		os.Exit(1)
	}
}

// maxBody bounds a delivery's body.
const maxBody = 1 << 20

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "loopback `address` to listen on (port 0: any free port)")
	urlFile := flag.String("url-file", "", "write the receiver's URL to this `file` once it listens")
	secretFlag := flag.String("secret", "", "the endpoint's signing `secret` (whsec_...); or $WEBHOOK_SECRET, or -secret-file")
	secretFile := flag.String("secret-file", "", "read the signing secret from this `file` on each delivery")
	until := flag.String("until", "", "exit after a verified event of this `type`")
	timeout := flag.Duration("timeout", time.Minute, "with -until, how long to wait for it")
	flag.Parse()

	ap, err := netip.ParseAddrPort(*listen)
	if err != nil || !ap.Addr().IsLoopback() {
		return fmt.Errorf("-listen %q is not a loopback address with a port", *listen)
	}
	secret := func() (string, error) {
		switch {
		case *secretFlag != "":
			return *secretFlag, nil
		case os.Getenv("WEBHOOK_SECRET") != "":
			return os.Getenv("WEBHOOK_SECRET"), nil
		case *secretFile != "":
			b, err := os.ReadFile(*secretFile)
			if err != nil {
				return "", errors.New("the secret file is not there yet")
			}
			return strings.TrimSpace(string(b)), nil
		}
		return "", errors.New("no signing secret: give -secret, $WEBHOOK_SECRET or -secret-file")
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/hook"
	done := make(chan struct{})
	var seen sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		sec, err := secret()
		if err == nil {
			err = webhook.Verify(sec, r.Header, body, time.Now(), webhook.DefaultTolerance)
		}
		if err != nil {
			fmt.Printf("refused %s: %v\n", r.Header.Get(webhook.HeaderID), err)
			http.Error(w, "not verified", http.StatusBadRequest)
			return
		}
		var m webhook.Message
		if err := json.Unmarshal(body, &m); err != nil {
			fmt.Printf("refused %s: the body is not an event\n", r.Header.Get(webhook.HeaderID))
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		sigs := len(strings.Fields(r.Header.Get(webhook.HeaderSignature)))
		fmt.Printf("verified %s %s %s v%d (%d signature(s)) %s\n", m.ID, m.Type, m.AggregateID, m.AggregateVersion, sigs, m.Payload)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "ok")
		if *until != "" && m.Type == *until {
			seen.Do(func() { close(done) })
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(url+"\n"), 0o600); err != nil {
			return err
		}
	}
	fmt.Printf("listening on %s\n", url)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var expired <-chan time.Time
	if *until != "" {
		expired = time.After(*timeout)
	}
	select {
	case <-done:
		return nil
	case <-expired:
		return fmt.Errorf("no %s event within %s", *until, *timeout)
	case <-ctx.Done():
		return nil
	}
}
