// Package webhooktest is a webhook receiver for tests: an HTTP or HTTPS
// server on loopback that checks every delivery as the Standard Webhooks
// specification tells a receiver to (the three webhook- headers, the
// timestamp within a tolerance of its clock, one v1 signature equal in
// constant time to the HMAC-SHA256 of id.timestamp.body under a secret it
// trusts), records what it received and answers as the test scripts. Its
// check is written from the specification, not from package webhook's
// signer, so the two cannot share a mistake. Production code never
// imports it.
package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tolerance is how far a delivery's timestamp may lie from the
// receiver's clock, either way.
const Tolerance = 5 * time.Minute

// Delivery is one request the receiver got.
type Delivery struct {
	// ID, Timestamp and Signature are the webhook-id, webhook-timestamp
	// and webhook-signature headers as received.
	ID        string
	Timestamp string
	Signature string
	// Path is the request's path.
	Path string
	// Body is the raw body.
	Body []byte
	// Header is every request header.
	Header http.Header
	// Err is why the check refused it (the receiver answered 400); nil
	// when it verified.
	Err error
	// SignedBy lists the trusted secrets (by their index in the receiver's
	// secrets when it arrived) that one of its signatures matches.
	SignedBy []int
	// Status is what the receiver answered.
	Status int
}

// Event is a delivery's body as a test reads it: the fields of package
// webhook's Message (the event's id, type, schema version, aggregate and
// its version, occurrence time, environment, workspace and payload).
type Event struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	SchemaVersion    int             `json:"schemaVersion"`
	AggregateID      string          `json:"aggregateId"`
	AggregateVersion int64           `json:"aggregateVersion"`
	OccurredAt       time.Time       `json:"occurredAt"`
	Environment      string          `json:"environment"`
	WorkspaceID      string          `json:"workspaceId"`
	Payload          json.RawMessage `json:"payload"`
}

// Event decodes the body.
func (d Delivery) Event() (Event, error) {
	var e Event
	err := json.Unmarshal(d.Body, &e)
	return e, err
}

// Receiver is a webhook receiver on loopback.
type Receiver struct {
	// URL is the server's base URL (http:// or https://127.0.0.1:port).
	URL string
	srv *httptest.Server
	now func() time.Time

	mu      sync.Mutex
	secrets []string
	got     []Delivery
	respond func(n int, d Delivery) (int, string)
	arrived chan struct{}
}

// New starts a receiver, over TLS when tls is set (httptest's certificate
// covers example.com and *.example.com), stopped with t. now is its clock
// (the platform's, in tests on a fake one). It answers 200 "ok" to every
// delivery that verifies, until Respond says otherwise, and 400 to one
// that does not.
func New(t testing.TB, now func() time.Time, tls bool) *Receiver {
	r := &Receiver{now: now, arrived: make(chan struct{}, 1<<16),
		respond: func(int, Delivery) (int, string) { return http.StatusOK, "ok" }}
	h := http.HandlerFunc(r.serve)
	if tls {
		r.srv = httptest.NewTLSServer(h)
	} else {
		r.srv = httptest.NewServer(h)
	}
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

// Server is the receiver's server (its certificate, for a TLS one).
func (r *Receiver) Server() *httptest.Server { return r.srv }

// Trust sets the secrets the receiver verifies with, replacing earlier
// ones.
func (r *Receiver) Trust(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append([]string(nil), secrets...)
}

// Respond sets the answer to each verified delivery: fn gets its number
// (from 1, counting every delivery received) and returns the status and
// body.
func (r *Receiver) Respond(fn func(n int, d Delivery) (int, string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.respond = fn
}

// Deliveries returns what the receiver got, in order.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got...)
}

// Wait waits until the receiver has got n deliveries in all, or fails t
// after timeout; it returns them all.
func (r *Receiver) Wait(t testing.TB, n int, timeout time.Duration) []Delivery {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if got := r.Deliveries(); len(got) >= n {
			return got
		}
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("webhooktest: %d deliveries after %s, want %d", len(r.Deliveries()), timeout, n)
		}
	}
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "body", http.StatusBadRequest)
		return
	}
	d := Delivery{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signature: req.Header.Get("webhook-signature"), Path: req.URL.Path, Body: body, Header: req.Header.Clone()}
	r.mu.Lock()
	d.SignedBy, d.Err = Check(r.secrets, d, r.now(), Tolerance)
	status, answer := http.StatusBadRequest, "signature"
	if d.Err == nil {
		status, answer = r.respond(len(r.got)+1, d)
	}
	d.Status = status
	r.got = append(r.got, d)
	r.mu.Unlock()
	select {
	case r.arrived <- struct{}{}:
	default:
	}
	w.WriteHeader(status)
	io.WriteString(w, answer)
}

// Check verifies d as the Standard Webhooks specification says, against
// every secret of secrets ("whsec_" and base64): the headers present and
// the timestamp an integer; the timestamp within tolerance of now, either
// way; and, for each secret, whether a "v1," signature of the
// space-separated header equals, compared in constant time, the base64
// HMAC-SHA256 of id + "." + timestamp + "." + body keyed with the
// secret's decoded bytes. It returns the indexes of the secrets that
// signed d, and an error unless at least one did.
func Check(secrets []string, d Delivery, now time.Time, tolerance time.Duration) ([]int, error) {
	if d.ID == "" || d.Timestamp == "" || d.Signature == "" {
		return nil, errors.New("webhooktest: missing webhook headers")
	}
	ts, err := strconv.ParseInt(d.Timestamp, 10, 64)
	if err != nil {
		return nil, errors.New("webhooktest: the timestamp is not an integer")
	}
	at := time.Unix(ts, 0)
	if at.Before(now.Add(-tolerance)) || at.After(now.Add(tolerance)) {
		return nil, fmt.Errorf("webhooktest: timestamp %s is outside %s of %s", at.UTC(), tolerance, now.UTC())
	}
	content := d.ID + "." + d.Timestamp + "." + string(d.Body)
	var signed []int
	for i, secret := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if err != nil {
			return nil, fmt.Errorf("webhooktest: secret %d is not whsec_ and base64", i)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(content))
		want := mac.Sum(nil)
		for _, sig := range strings.Split(d.Signature, " ") {
			version, value, ok := strings.Cut(sig, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(value)
			if err == nil && hmac.Equal(got, want) {
				signed = append(signed, i)
				break
			}
		}
	}
	if len(signed) == 0 {
		return nil, errors.New("webhooktest: no signature matches a trusted secret")
	}
	return signed, nil
}
