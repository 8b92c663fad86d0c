package stripetest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/creatormusic/platform/internal/simctl"
)

// Event is a webhook event the simulator created, with its delivery
// attempts so far.
type Event struct {
	// ID is the event id (evt_...).
	ID string
	// Type is Stripe's event type, for example invoice.paid.
	Type string
	// ObjectID is the id of data.object.
	ObjectID string
	// Created is the event's creation time on the simulator's clock.
	Created time.Time
	// Payload is the event JSON exactly as sent.
	Payload []byte
	// Attempts lists each delivery attempt, oldest first.
	Attempts []Attempt
}

// Delivered reports whether an attempt was answered with a 2xx status.
func (e Event) Delivered() bool {
	for _, a := range e.Attempts {
		if a.Status >= 200 && a.Status < 300 {
			return true
		}
	}
	return false
}

// Attempt is one delivery attempt of an event.
type Attempt struct {
	// At is the wall-clock time of the attempt.
	At time.Time
	// Signature is the Stripe-Signature header sent.
	Signature string
	// Status is the receiver's HTTP status, 0 when the request failed.
	Status int
	// Err describes a transport error.
	Err string
}

// event is the simulator's record of an Event.
type event struct {
	id, typ, objectID string
	created           time.Time
	payload           []byte
	attempts          []Attempt
}

func (e *event) export() Event {
	return Event{
		ID: e.id, Type: e.typ, ObjectID: e.objectID, Created: e.created,
		Payload: bytes.Clone(e.payload), Attempts: append([]Attempt(nil), e.attempts...),
	}
}

// Signing chooses how SendWebhook and SignedWebhook sign an event.
type Signing int

// The signing choices.
const (
	// SignValid signs with the webhook secret at the clock's current time.
	SignValid Signing = iota
	// SignForged signs with a secret other than the webhook secret.
	SignForged
	// SignStale signs with the webhook secret and a timestamp
	// WebhookOptions.StaleBy before the clock's time.
	SignStale
)

// WebhookOptions shape an event built by SendWebhook or SignedWebhook.
type WebhookOptions struct {
	// Signing chooses the signature. The zero value is SignValid.
	Signing Signing
	// StaleBy is how old a SignStale timestamp is. Zero means 10 minutes.
	StaleBy time.Duration
	// APIVersion stamps the event. Empty means stripe.APIVersion.
	APIVersion string
}

// buildEvent renders an event envelope around obj.
func buildEvent(id, typ string, created time.Time, apiVersion string, obj map[string]any, prev map[string]any) []byte {
	data := map[string]any{"object": obj}
	if prev != nil {
		data["previous_attributes"] = prev
	}
	return mustJSON(map[string]any{
		"id": id, "object": "event", "api_version": apiVersion, "created": created.Unix(),
		"data": data, "livemode": false, "pending_webhooks": 1, "type": typ,
		"request": map[string]any{"id": nil, "idempotency_key": nil},
	})
}

// emit records an event for obj and queues it for delivery once s.mu is
// released (flushOutbox). Called with s.mu held.
func (s *Server) emit(typ, objectID string, obj map[string]any, prev map[string]any) {
	now := s.now()
	ev := &event{id: newID("evt_"), typ: typ, objectID: objectID, created: now}
	ev.payload = buildEvent(ev.id, typ, now, stripe.APIVersion, obj, prev)
	s.events.Append(ev)
	s.outbox = append(s.outbox, ev)
}

// flushOutbox starts the delivery of queued events. Called without s.mu.
func (s *Server) flushOutbox() {
	s.mu.Lock()
	out := s.outbox
	s.outbox = nil
	target := s.webhookURL
	if s.closed || target == "" {
		s.mu.Unlock()
		return
	}
	for range out {
		s.beginDeliveryLocked()
	}
	s.mu.Unlock()
	for _, ev := range out {
		started := s.run.Go(func(context.Context) {
			defer s.endDelivery()
			s.deliver(ev, target, s.cfg.WebhookAttempts, SignValid, 0)
		})
		if !started { // Close came first
			s.endDelivery()
		}
	}
}

// beginDeliveryLocked counts one delivery under way, for Drain. Called
// with s.mu held and s.closed false.
func (s *Server) beginDeliveryLocked() {
	if s.pending == 0 {
		s.idle = make(chan struct{})
	}
	s.pending++
}

func (s *Server) endDelivery() {
	s.mu.Lock()
	s.pending--
	if s.pending == 0 {
		close(s.idle)
	}
	s.mu.Unlock()
}

// Drain waits until every webhook delivery under way has succeeded or
// exhausted its attempts, or ctx ends.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	if s.pending == 0 {
		s.mu.Unlock()
		return nil
	}
	idle := s.idle
	s.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stripetest: drain: %w", ctx.Err())
	}
}

// deliver sends ev to target up to attempts times with doubling backoff,
// signing each attempt afresh, and returns the last attempt.
func (s *Server) deliver(ev *event, target string, attempts int, signing Signing, staleBy time.Duration) Attempt {
	backoff := s.cfg.WebhookBackoff
	var last Attempt
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if s.run.Sleep(s.run.Context(), backoff) != nil {
				return last
			}
			backoff *= 2
		}
		last = s.attempt(ev, target, signing, staleBy)
		s.mu.Lock()
		ev.attempts = append(ev.attempts, last)
		s.mu.Unlock()
		if last.Status >= 200 && last.Status < 300 {
			return last
		}
		if s.run.Context().Err() != nil {
			return last
		}
	}
	return last
}

// attempt makes one signed POST of ev to target.
func (s *Server) attempt(ev *event, target string, signing Signing, staleBy time.Duration) Attempt {
	header := s.sign(ev.payload, signing, staleBy)
	a := Attempt{At: time.Now(), Signature: header}
	req, err := http.NewRequestWithContext(s.run.Context(), http.MethodPost, target, bytes.NewReader(ev.payload))
	if err != nil {
		a.Err = err.Error()
		return a
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set("Stripe-Signature", header)
	res, err := s.cfg.WebhookClient.Do(req)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	a.Status = res.StatusCode
	return a
}

// sign computes the Stripe-Signature header for payload.
func (s *Server) sign(payload []byte, signing Signing, staleBy time.Duration) string {
	t := s.now()
	secret := s.cfg.WebhookSecret
	switch signing {
	case SignForged:
		secret = "whsec_forged_" + simctl.RandomAlnum(16)
	case SignStale:
		if staleBy <= 0 {
			staleBy = 10 * time.Minute
		}
		t = t.Add(-staleBy)
	}
	return SignatureHeader(payload, secret, t)
}

// SignatureHeader returns the Stripe-Signature header value Stripe sends
// for payload signed with secret at t: "t=<unix>,v1=<hex HMAC-SHA256 of
// t.payload>".
func SignatureHeader(payload []byte, secret string, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(payload)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Events returns a copy of the events created so far, oldest first: the
// newest 10,000 (simctl.DefaultLimit).
func (s *Server) Events() []Event {
	evs := s.events.Snapshot()
	s.mu.Lock() // attempts are appended under mu
	defer s.mu.Unlock()
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = e.export()
	}
	return out
}

// ReplayLastWebhook sends the most recent event again, same id and
// payload with a fresh signature, as Stripe's resend does. Delivery is
// asynchronous (see Drain).
func (s *Server) ReplayLastWebhook() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	last, ok := s.events.Last()
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("stripetest: replay: no event yet: %w", ErrNotFound)
	}
	s.outbox = append(s.outbox, last)
	s.mu.Unlock()
	s.flushOutbox()
	return nil
}

// snapshot renders the current state of the object with id. Called with
// s.mu held.
func (s *Server) snapshot(objectID string) (map[string]any, error) {
	switch {
	case strings.HasPrefix(objectID, "cs_"):
		if cs, ok := s.sessions[objectID]; ok {
			return s.sessionJSON(cs, nil), nil
		}
	case strings.HasPrefix(objectID, "sub_"):
		if sub, ok := s.subs[objectID]; ok {
			return s.subscriptionJSON(sub, nil), nil
		}
	case strings.HasPrefix(objectID, "in_"):
		if inv, ok := s.invoices[objectID]; ok {
			return s.invoiceJSON(inv), nil
		}
	case strings.HasPrefix(objectID, "cus_"):
		if c, ok := s.customers[objectID]; ok {
			return s.customerJSON(c), nil
		}
	}
	return nil, fmt.Errorf("stripetest: object %q: %w", objectID, ErrNotFound)
}

// SignedWebhook builds a new event of eventType around the current state of
// objectID and signs it per opts, without recording or sending it. It
// returns the payload and the Stripe-Signature header, for tests of a
// receiver or of stripepay's VerifyWebhook.
func (s *Server) SignedWebhook(eventType, objectID string, opts WebhookOptions) (payload []byte, header string, err error) {
	ev, err := s.newEvent(eventType, objectID, opts)
	if err != nil {
		return nil, "", err
	}
	return ev.payload, s.sign(ev.payload, opts.Signing, opts.StaleBy), nil
}

func (s *Server) newEvent(eventType, objectID string, opts WebhookOptions) (*event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.snapshot(objectID)
	if err != nil {
		return nil, err
	}
	v := opts.APIVersion
	if v == "" {
		v = stripe.APIVersion
	}
	now := s.now()
	ev := &event{id: newID("evt_"), typ: eventType, objectID: objectID, created: now}
	ev.payload = buildEvent(ev.id, eventType, now, v, obj, nil)
	return ev, nil
}

// SendWebhook builds a new event of eventType around the current state of
// objectID, signs it per opts, records it and sends it once, synchronously,
// to the webhook URL. It returns the event with its one attempt.
func (s *Server) SendWebhook(eventType, objectID string, opts WebhookOptions) (Event, error) {
	ev, err := s.newEvent(eventType, objectID, opts)
	if err != nil {
		return Event{}, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Event{}, ErrClosed
	}
	target := s.webhookURL
	if target == "" {
		s.mu.Unlock()
		return Event{}, fmt.Errorf("stripetest: send webhook: no webhook URL: %w", ErrState)
	}
	s.events.Append(ev)
	s.beginDeliveryLocked()
	s.mu.Unlock()
	// The attempt runs on the runner, so that Close waits for it.
	done := make(chan struct{})
	started := s.run.Go(func(context.Context) {
		defer close(done)
		s.deliver(ev, target, 1, opts.Signing, opts.StaleBy)
	})
	if !started { // Close came first
		s.endDelivery()
		return Event{}, ErrClosed
	}
	<-done
	s.endDelivery()
	s.mu.Lock()
	defer s.mu.Unlock()
	return ev.export(), nil
}

// eventsJSON renders events for GET /_sim/events.
func eventsJSON(evs []Event) []byte {
	out := make([]map[string]any, len(evs))
	for i, e := range evs {
		out[i] = map[string]any{
			"id": e.ID, "type": e.Type, "object_id": e.ObjectID, "created": e.Created.Unix(),
			"delivered": e.Delivered(), "attempts": len(e.Attempts), "payload": json.RawMessage(e.Payload),
		}
	}
	return mustJSON(map[string]any{"object": "list", "data": out})
}
