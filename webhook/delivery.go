package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/urlguard"
)

// UserAgent is the User-Agent of every delivery.
const UserAgent = "creator-music-platform-webhooks/1"

// Message is the JSON body of a delivery: the outbox event as the
// platform recorded it. The receiver verifies the raw body it received,
// never a re-encoding of this.
type Message struct {
	// ID is the event's id, also the webhook-id header.
	ID string `json:"id"`
	// Type is the event's type (the catalogue of the OpenAPI document
	// lists them).
	Type string `json:"type"`
	// SchemaVersion is the version of the payload's shape for the type.
	SchemaVersion int `json:"schemaVersion"`
	// AggregateID is the record that changed; AggregateVersion its version
	// after the change, which orders the events of one record.
	AggregateID      string `json:"aggregateId"`
	AggregateVersion int64  `json:"aggregateVersion"`
	// OccurredAt is when the change committed.
	OccurredAt time.Time `json:"occurredAt"`
	// Environment and WorkspaceID are the scope of the change.
	Environment string `json:"environment"`
	WorkspaceID string `json:"workspaceId"`
	// Payload is the event's data; it never carries a secret.
	Payload json.RawMessage `json:"payload"`
}

// messageOf returns the body of ev's deliveries.
func messageOf(ev outbox.Event) ([]byte, error) {
	payload := ev.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	return json.Marshal(Message{ID: ev.ID, Type: ev.Type, SchemaVersion: ev.SchemaVersion, AggregateID: ev.AggregateID,
		AggregateVersion: ev.AggregateVersion, OccurredAt: ev.OccurredAt.UTC(), Environment: ev.Environment,
		WorkspaceID: ev.WorkspaceID, Payload: payload})
}

// RetrySchedule returns the nominal delay after each failed attempt of a
// delivery's automatic round: after attempt n fails, attempt n+1 comes
// RetrySchedule()[n-1] later, spread by ±10% jitter. Eleven attempts
// over about three days (71 hours 36 minutes nominal), after the
// Standard Webhooks example schedule:
//
//	attempt  1  at once
//	attempt  2  5 seconds later
//	attempt  3  1 minute later
//	attempt  4  5 minutes later
//	attempt  5  30 minutes later
//	attempt  6  2 hours later
//	attempt  7  5 hours later
//	attempt  8  10 hours later
//	attempt  9  14 hours later
//	attempt 10  20 hours later
//	attempt 11  20 hours later
func RetrySchedule() []time.Duration {
	return []time.Duration{5 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 20 * time.Hour}
}

// MaxAttempts is how many attempts a delivery's automatic round makes.
func MaxAttempts() int { return len(RetrySchedule()) + 1 }

// MaxRetryDelay is the longest delay, jitter included, after attempt n
// fails (1 <= n < MaxAttempts()).
func MaxRetryDelay(n int) time.Duration { return retryDelay(n, 1) }

// retryDelay is the delay after attempt n fails with jitter j in [0, 1]:
// the nominal delay times 0.9 + 0.2j.
func retryDelay(n int, j float64) time.Duration {
	s := RetrySchedule()
	d := s[min(max(n, 1), len(s))-1]
	j = min(max(j, 0), 1)
	return time.Duration(float64(d) * (0.9 + 0.2*j))
}

// attemptPlan is one claimed attempt: what to send and where, or an
// interrupted attempt to record.
type attemptPlan struct {
	// delivery is the delivery as the claim left it.
	delivery Delivery
	number   int
	// interrupted marks an attempt claimed earlier whose outcome was
	// never recorded: it is recorded interrupted, and nothing is sent.
	interrupted bool
	url         string
	secrets     []string
	body        []byte
	eventID     string
	startedAt   time.Time
}

// outcome is what an attempt met.
type outcome struct {
	statusCode int
	latency    time.Duration
	class      string
	reason     string
	excerpt    string
}

// errLost reports that another worker recorded the attempt first.
var errLost = errors.New("webhook: the attempt was recorded by another worker")

// deliverJob makes one attempt of the job's delivery: it claims the
// attempt (a compare-and-set of the delivery's version), sends it outside
// any unit of work, and records its outcome with the next step: success,
// the next attempt planned, or the delivery failed (and the endpoint
// disabled when it failed for the whole window). A job whose delivery has
// moved on since it was planned does nothing; one whose own claim
// committed but whose outcome did not (a crash, a lost lease) records the
// attempt interrupted instead of sending it again.
func (s *Service) deliverJob(ctx context.Context, j jobs.Job) error {
	var pl deliverPayload
	if err := json.Unmarshal(j.Payload, &pl); err != nil || pl.DeliveryID == "" || !pl.Environment.Valid() {
		return jobs.Permanent(errors.New("webhook: a delivery job without a delivery"))
	}
	plan, err := s.claim(ctx, pl)
	if err != nil || plan == nil {
		return err
	}
	out := outcome{class: ClassInterrupted}
	if !plan.interrupted {
		out = s.send(ctx, plan)
		if err := ctx.Err(); err != nil {
			// Stopped mid-attempt: the receiver may have it. A later run of
			// this job records it interrupted.
			return err
		}
	}
	return s.record(ctx, plan, out)
}

// claim reads the job's delivery and claims its next attempt; nil when
// the job has nothing to do.
func (s *Service) claim(ctx context.Context, pl deliverPayload) (*attemptPlan, error) {
	const op = "webhook.deliver"
	var plan *attemptPlan
	err := s.cfg.DeliveryRunFunc(ctx, func(st DeliveryStore) error {
		plan = nil
		d, err := st.WebhookDeliveryByID(ctx, pl.Environment, pl.DeliveryID)
		if err != nil {
			return err
		}
		switch {
		case d.Status != DeliveryPending:
			return nil
		case d.Version == pl.Version+1:
			// This job's claim committed; its outcome never did.
			plan = &attemptPlan{delivery: d, number: d.Attempts, interrupted: true, startedAt: d.LastAttemptAt}
			return nil
		case d.Version != pl.Version:
			return nil
		}
		e, err := st.WebhookEndpointByID(ctx, d.Scope.Environment, d.EndpointID)
		if err != nil {
			return err
		}
		now := st.Now()
		if e.Status != StatusEnabled {
			reason := FailedEndpointDisabled
			if e.Status == StatusDeleted {
				reason = FailedEndpointDeleted
			}
			to, err := DeliveryTransition(d.Status, DeliveryFail)
			if err != nil {
				return err
			}
			d.Status, d.FailureReason, d.NextAttemptAt, d.Version, d.UpdatedAt = to, reason, time.Time{}, d.Version+1, now
			return st.WebhookDeliveryUpdate(ctx, d)
		}
		ev, err := st.WebhookEventGet(ctx, d.Scope.Environment, d.EventID)
		if err != nil {
			return err
		}
		body, err := messageOf(ev)
		if err != nil {
			return jobs.Permanent(fault.Wrap(op, err))
		}
		secrets, err := s.openSecrets(e, now)
		if err != nil {
			return jobs.Permanent(fault.Wrap(op, err))
		}
		d.Attempts++
		d.LastAttemptAt, d.NextAttemptAt, d.Version, d.UpdatedAt = now, time.Time{}, d.Version+1, now
		if err := st.WebhookDeliveryUpdate(ctx, d); err != nil {
			return err
		}
		plan = &attemptPlan{delivery: d, number: d.Attempts, url: e.URL, secrets: secrets, body: body, eventID: ev.ID, startedAt: now}
		return nil
	})
	switch {
	case fault.Is(err, fault.Conflict):
		// Another writer moved the delivery on: this job is stale.
		return nil, nil
	case fault.Is(err, fault.NotFound):
		return nil, jobs.Permanent(fault.Wrap(op, err))
	case err != nil:
		return nil, fault.Wrap(op, err)
	}
	return plan, nil
}

// openSecrets returns the secrets that sign an attempt of e at now: the
// current one, and the previous one while its overlap lasts.
func (s *Service) openSecrets(e Endpoint, now time.Time) ([]string, error) {
	cur, err := s.cfg.Sealer.Open(e.SecretSealed, secretAAD(e.ID, e.SecretVersion))
	if err != nil {
		return nil, fmt.Errorf("webhook: open the signing secret of %s: %w", e.ID, err)
	}
	out := []string{string(cur)}
	if len(e.PreviousSecretSealed) > 0 && now.Before(e.PreviousExpiresAt) {
		prev, err := s.cfg.Sealer.Open(e.PreviousSecretSealed, secretAAD(e.ID, e.SecretVersion-1))
		if err != nil {
			return nil, fmt.Errorf("webhook: open the previous signing secret of %s: %w", e.ID, err)
		}
		out = append(out, string(prev))
	}
	return out, nil
}

// send makes the attempt: a signed POST through the endpoint's guarded
// client, bounded by the tuning's timeout, redirects not followed, at most
// MaxExcerpt bytes of the answer read.
func (s *Service) send(ctx context.Context, p *attemptPlan) outcome {
	client := s.clientFor(p.delivery.Scope.Environment, p.url)
	sig, err := Sign(p.secrets, p.eventID, p.startedAt, p.body)
	if err != nil {
		return outcome{class: ClassNetwork}
	}
	actx, cancel := context.WithTimeout(ctx, s.t.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, p.url, bytes.NewReader(p.body))
	if err != nil {
		return outcome{class: ClassURLRefused, reason: urlguard.ReasonMalformedURL}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderID, p.eventID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(p.startedAt.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	start := s.cfg.Clock.Now()
	resp, err := client.Do(req)
	latency := s.cfg.Clock.Now().Sub(start)
	if err != nil {
		out := classify(err)
		out.latency = latency
		return out
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxExcerpt))
	out := outcome{statusCode: resp.StatusCode, latency: latency, excerpt: excerpt(b)}
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
	case c >= 300 && c < 400:
		out.class = ClassRedirect
	default:
		out.class = ClassHTTPStatus
	}
	return out
}

// excerpt returns b as valid UTF-8: invalid bytes, and a character the
// bound cut, become U+FFFD.
func excerpt(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// classify names what a failed request met, without its text (which
// may name addresses).
func classify(err error) outcome {
	var dns *net.DNSError
	var ne net.Error
	var unknownCA x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	switch {
	case urlguard.Reason(err) != "":
		return outcome{class: ClassURLRefused, reason: urlguard.Reason(err)}
	case errors.As(err, &dns):
		return outcome{class: ClassUnresolvedHost}
	case errors.As(err, &unknownCA) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify) ||
		errors.As(err, &record):
		return outcome{class: ClassTLS}
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return outcome{class: ClassTimeout}
	}
	return outcome{class: ClassNetwork}
}

// clientFor returns the guarded client of an endpoint URL: the loopback
// guard of its address for a test-environment loopback endpoint the host
// allows, the endpoint policy's otherwise (which refuses anything but
// https to public addresses). Redirects are answers, never followed.
func (s *Service) clientFor(env access.Environment, raw string) *http.Client {
	g := s.guard
	if ap, ok := s.loopbackTarget(env, raw); ok {
		if lg, err := s.loopbackGuard(ap); err == nil {
			g = lg
		}
	}
	c := g.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// maxLoopbackGuards bounds the loopback guards kept; past it they are
// closed and made again as needed.
const maxLoopbackGuards = 64

// loopbackGuard returns the guard that lets exactly ap through (and plain
// http), made once per address.
func (s *Service) loopbackGuard(ap netip.AddrPort) (*urlguard.Guard, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.loopback[ap]; ok {
		return g, nil
	}
	if len(s.loopback) >= maxLoopbackGuards {
		for k, g := range s.loopback {
			g.CloseIdleConnections()
			delete(s.loopback, k)
		}
	}
	gc := s.cfg.Guard
	gc.AllowHTTP, gc.AllowLoopback, gc.Timeout, gc.ResponseHeaderTimeout = true, []netip.AddrPort{ap}, s.t.Timeout, s.t.Timeout
	g, err := urlguard.New(gc)
	if err != nil {
		return nil, err
	}
	s.loopback[ap] = g
	return g, nil
}

// loopbackTarget returns the loopback address of raw when it is a
// test-environment loopback endpoint the host allows
// (Tuning.AllowTestLoopback): env is test, the scheme http or https, no
// user info, and the host a loopback IP literal with an explicit port.
func (s *Service) loopbackTarget(env access.Environment, raw string) (netip.AddrPort, bool) {
	if !s.t.AllowTestLoopback || env != access.Test || len(raw) > MaxURLLength {
		return netip.AddrPort{}, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.Opaque != "" {
		return netip.AddrPort{}, false
	}
	ap, err := urlguard.LoopbackOf(raw)
	if err != nil || ap.Addr().Zone() != "" {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// record writes the attempt's outcome and the delivery's next step in one
// unit of work, retried when a concurrent write of the endpoint won; a
// lost race with another worker's record (see deliverJob) is no error.
func (s *Service) record(ctx context.Context, p *attemptPlan, out outcome) error {
	var err error
	for range 3 {
		err = s.cfg.DeliveryRunFunc(ctx, func(st DeliveryStore) error { return s.recordIn(ctx, st, p, out) })
		if errors.Is(err, errLost) || !fault.Is(err, fault.Conflict) {
			break
		}
	}
	switch {
	case errors.Is(err, errLost):
		s.log.Info("webhook attempt recorded by another worker", "delivery_id", p.delivery.ID, "attempt", p.number)
		return nil
	case err != nil:
		return fault.Wrap("webhook.deliver", err)
	}
	if out.class != "" {
		s.log.Info("webhook attempt failed", "delivery_id", p.delivery.ID, "endpoint_id", p.delivery.EndpointID,
			"attempt", p.number, "class", out.class, "reason", out.reason, "status", out.statusCode)
	}
	return nil
}

// recordIn is record's unit of work.
func (s *Service) recordIn(ctx context.Context, st DeliveryStore, p *attemptPlan, out outcome) error {
	d, err := st.WebhookDeliveryByID(ctx, p.delivery.Scope.Environment, p.delivery.ID)
	if err != nil {
		return err
	}
	if d.Version != p.delivery.Version || d.Status != DeliveryPending {
		return errLost
	}
	a := Attempt{DeliveryID: d.ID, Number: p.number, Manual: d.Manual, StartedAt: p.startedAt, StatusCode: out.statusCode,
		LatencyMillis: out.latency.Milliseconds(), ErrorClass: out.class, ErrorReason: out.reason, ResponseExcerpt: out.excerpt}
	if err := st.WebhookAttemptInsert(ctx, a); fault.Is(err, fault.Conflict) {
		return errLost
	} else if err != nil {
		return err
	}
	e, err := st.WebhookEndpointByID(ctx, d.Scope.Environment, d.EndpointID)
	if err != nil {
		return err
	}
	now := st.Now()
	d.Version, d.UpdatedAt = d.Version+1, now
	disable := ""
	switch {
	case out.class == "":
		if d.Status, err = DeliveryTransition(d.Status, DeliverySucceed); err != nil {
			return err
		}
		if err := st.WebhookEndpointSucceeded(ctx, e.ID, p.startedAt); err != nil {
			return err
		}
	case out.statusCode == http.StatusGone:
		d.FailureReason, disable = FailedGone, DisabledGone
	case d.Manual:
		d.FailureReason = FailedManual
	case p.number >= MaxAttempts():
		d.FailureReason = FailedExhausted
		if e.LastSuccessAt.IsZero() || e.LastSuccessAt.Before(d.CreatedAt) {
			disable = DisabledFailing
		}
	default:
		d.NextAttemptAt = now.Add(retryDelay(p.number, s.t.JitterFunc()))
	}
	if d.FailureReason != "" {
		if d.Status, err = DeliveryTransition(d.Status, DeliveryFail); err != nil {
			return err
		}
	}
	if err := st.WebhookDeliveryUpdate(ctx, d); err != nil {
		return err
	}
	if d.Status == DeliveryPending {
		if err := enqueueAttempt(ctx, st, d); err != nil {
			return err
		}
	}
	if disable != "" && e.Status == StatusEnabled {
		return s.disable(ctx, st, e, disable, d)
	}
	return nil
}

// disable disables endpoint e for reason, with the event that tells its
// owner (the workspace's endpoints that subscribe to it receive it).
func (s *Service) disable(ctx context.Context, st DeliveryStore, e Endpoint, reason string, d Delivery) error {
	to, err := Transition(e.Status, EventDisable)
	if err != nil {
		return err
	}
	e.Status, e.DisabledReason, e.Version, e.UpdatedAt = to, reason, e.Version+1, st.Now()
	if err := st.WebhookEndpointUpdate(ctx, e); err != nil {
		return err
	}
	s.log.Warn("webhook endpoint disabled", "endpoint_id", e.ID, "reason", reason, "delivery_id", d.ID)
	return emit(ctx, st, e, EventTypeDisabled, map[string]any{"reason": reason, "deliveryId": d.ID, "eventId": d.EventID})
}
