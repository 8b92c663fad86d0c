package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/urlguard"
)

// Identifier prefixes.
const (
	// EndpointPrefix starts an endpoint's id.
	EndpointPrefix = "whe_"
	// DeliveryPrefix starts a delivery's id.
	DeliveryPrefix = "whd_"
)

// The outbox event types the webhook domain writes. Each names the
// endpoint as its aggregate, at the endpoint's version; none carries a
// URL or a secret.
const (
	// EventTypeTest: the owner asked for a test delivery (POST
	// /api/v1/webhook-endpoints/{id}/test). Delivered to that endpoint
	// alone, whatever it subscribes to.
	EventTypeTest = "webhook.test"
	// EventTypeCreated: an endpoint was created.
	EventTypeCreated = "webhook_endpoint.created"
	// EventTypeUpdated: an endpoint's URL, subscribed events, description
	// or enabled flag changed (payload.changed lists which).
	EventTypeUpdated = "webhook_endpoint.updated"
	// EventTypeDeleted: an endpoint was deleted.
	EventTypeDeleted = "webhook_endpoint.deleted"
	// EventTypeSecretRotated: an endpoint's signing secret was rotated;
	// payload.previousSecretExpiresAt says when the old one stops signing.
	EventTypeSecretRotated = "webhook_endpoint.secret_rotated"
	// EventTypeDisabled: the platform disabled an endpoint, because a
	// delivery failed for its whole retry window (payload.reason failing)
	// or the receiver answered 410 Gone (gone). It tells the owner: the
	// workspace's other endpoints that subscribe to it receive it.
	EventTypeDisabled = "webhook_endpoint.disabled"
)

// EventTypes lists the event types the webhook domain writes.
func EventTypes() []string {
	return []string{EventTypeTest, EventTypeCreated, EventTypeUpdated, EventTypeDeleted, EventTypeSecretRotated, EventTypeDisabled}
}

// Wildcard, alone in an endpoint's enabled events, subscribes it to every
// event type of the catalogue (webhook.test aside, which goes to the
// endpoint tested whatever it subscribes to).
const Wildcard = "*"

// Disabled reasons (Endpoint.DisabledReason).
const (
	// DisabledManual: the owner disabled it (PATCH enabled false).
	DisabledManual = "manual"
	// DisabledFailing: a delivery failed for its whole retry window and
	// no delivery to the endpoint succeeded in that time.
	DisabledFailing = "failing"
	// DisabledGone: the receiver answered 410 Gone.
	DisabledGone = "gone"
)

// Endpoint is a registered webhook endpoint of one workspace and
// environment. Its secrets are sealed: the plaintext is returned once, by
// create and rotate.
type Endpoint struct {
	// ID is the endpoint's id (EndpointPrefix).
	ID string
	// Scope is its tenant, workspace and environment: it receives that
	// scope's events only.
	Scope access.Scope
	// URL is where deliveries are POSTed.
	URL string
	// Description is the owner's note, up to MaxDescription characters.
	Description string
	// EnabledEvents are the event types it receives, sorted, or Wildcard
	// alone.
	EnabledEvents []string
	// Status is where it stands (Moves); DisabledReason says why it is
	// disabled ("" otherwise).
	Status         Status
	DisabledReason string
	// SecretSealed is the current signing secret sealed with AES-256-GCM,
	// bound to the endpoint id and SecretVersion; nil once deleted.
	SecretSealed []byte
	// SecretVersion counts the endpoint's secrets, from 1; each rotation
	// adds one.
	SecretVersion int64
	// PreviousSecretSealed is the secret the last rotation replaced
	// (version SecretVersion-1), which still signs until
	// PreviousExpiresAt; nil when there is none.
	PreviousSecretSealed []byte
	PreviousExpiresAt    time.Time
	// CreatedByUserID and CreatedByKeyID name who created it (a key's
	// creator and the key; "" for a session).
	CreatedByUserID string
	CreatedByKeyID  string
	// LastSuccessAt is when a delivery to it last succeeded; zero never.
	LastSuccessAt time.Time
	// Version counts its writes, from 1.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}

// Delivery is one event's delivery to one endpoint: at most one per pair.
type Delivery struct {
	// ID is the delivery's id (DeliveryPrefix).
	ID string
	// EndpointID and EventID name the pair.
	EndpointID string
	EventID    string
	// EventType is the event's type.
	EventType string
	// Scope is the endpoint's (and the event's) scope.
	Scope access.Scope
	// Status is where it stands (DeliveryMoves).
	Status DeliveryStatus
	// Attempts counts the attempts started, from 0.
	Attempts int
	// Manual marks the current round as a manual redelivery: one attempt,
	// no retries.
	Manual bool
	// NextAttemptAt is when the next attempt is due while pending; zero
	// otherwise.
	NextAttemptAt time.Time
	// LastAttemptAt is when the last attempt started; zero before the
	// first.
	LastAttemptAt time.Time
	// FailureReason says why a failed delivery failed (exhausted,
	// manual_attempt_failed, gone, endpoint_disabled, endpoint_deleted);
	// "" otherwise.
	FailureReason string
	// Version counts its writes, from 1; attempts are claimed and recorded
	// by compare-and-set on it.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}

// Attempt is one attempt of a delivery, as its log shows it.
type Attempt struct {
	// DeliveryID and Number name it: Number counts the delivery's attempts
	// from 1.
	DeliveryID string
	Number     int
	// Manual marks an attempt a redelivery asked for.
	Manual bool
	// StartedAt is when it started (its webhook-timestamp).
	StartedAt time.Time
	// StatusCode is the receiver's HTTP status; 0 when none came.
	StatusCode int
	// LatencyMillis is the time from the request's start to the answer's
	// headers (or the failure), in milliseconds.
	LatencyMillis int64
	// ErrorClass says why it failed ("" on success): http_status,
	// redirect, timeout, network, unresolved_host, tls, url_refused or
	// interrupted.
	ErrorClass string
	// ErrorReason is the URL guard's reason of a url_refused attempt
	// (private_address, ...); "" otherwise.
	ErrorReason string
	// ResponseExcerpt is the first MaxExcerpt bytes of the answer's body
	// (valid UTF-8); "" without one.
	ResponseExcerpt string
}

// The error classes of a failed attempt (Attempt.ErrorClass).
const (
	// ClassHTTPStatus: the receiver answered with a status outside 2xx and
	// 3xx.
	ClassHTTPStatus = "http_status"
	// ClassRedirect: the receiver answered 3xx; redirects are not followed.
	ClassRedirect = "redirect"
	// ClassTimeout: no answer within the attempt's timeout.
	ClassTimeout = "timeout"
	// ClassNetwork: the connection failed or broke.
	ClassNetwork = "network"
	// ClassUnresolvedHost: the URL's host name did not resolve.
	ClassUnresolvedHost = "unresolved_host"
	// ClassTLS: the TLS handshake or the certificate's verification
	// failed.
	ClassTLS = "tls"
	// ClassURLRefused: the URL guard refused the URL or an address its
	// host resolved to at delivery (ErrorReason says why); nothing was
	// sent.
	ClassURLRefused = "url_refused"
	// ClassInterrupted: the host making the attempt stopped before its
	// outcome was recorded; whether the receiver got it is unknown, and
	// the next attempt follows the schedule.
	ClassInterrupted = "interrupted"
)

// Failure reasons of a failed delivery (Delivery.FailureReason).
const (
	// FailedExhausted: every attempt of the retry schedule failed.
	FailedExhausted = "exhausted"
	// FailedManual: the one attempt of a manual redelivery failed.
	FailedManual = "manual_attempt_failed"
	// FailedGone: the receiver answered 410 Gone; the endpoint was
	// disabled.
	FailedGone = "gone"
	// FailedEndpointDisabled: the endpoint was disabled before the next
	// attempt.
	FailedEndpointDisabled = "endpoint_disabled"
	// FailedEndpointDeleted: the endpoint was deleted before the next
	// attempt.
	FailedEndpointDeleted = "endpoint_deleted"
)

// Bounds and defaults.
const (
	// DefaultMaxEndpoints bounds the endpoints (enabled or disabled) of
	// one workspace and environment.
	DefaultMaxEndpoints = 16
	// MaxEnabledEvents bounds an endpoint's enabled events.
	MaxEnabledEvents = 64
	// MaxDescription bounds a description, in characters.
	MaxDescription = 500
	// MaxURLLength bounds an endpoint's URL, in bytes.
	MaxURLLength = 2048
	// MaxExcerpt bounds the response excerpt an attempt keeps, in bytes.
	MaxExcerpt = 1024
	// DefaultTimeout bounds one attempt: connect, send, and the answer's
	// headers and excerpt.
	DefaultTimeout = 10 * time.Second
	// DefaultRotationOverlap is how long a rotated-out secret keeps
	// signing when the request names no overlap.
	DefaultRotationOverlap = 24 * time.Hour
	// MaxRotationOverlap bounds a requested overlap: 7 days.
	MaxRotationOverlap = 7 * 24 * time.Hour
	// DefaultFanoutEvery is the period of the fan-out job.
	DefaultFanoutEvery = time.Second
	// DefaultFanoutWindow is how far behind its last complete pass the
	// fan-out reads the outbox again (package doc, Fan-out).
	DefaultFanoutWindow = 2 * time.Minute
	// fanoutBatch bounds the events one fan-out pass reads.
	fanoutBatch = 500
	// checkTimeout bounds the lookup of a URL's host at create and update.
	checkTimeout = 5 * time.Second
)

// Tuning holds the webhook domain's limits and timings; zero values take
// the documented defaults. The host sets it through platform.Config.
type Tuning struct {
	// AllowTestLoopback admits, for endpoints of the test environment
	// only, URLs (http or https) whose host is a loopback IP literal with
	// an explicit port (http://127.0.0.1:8765/hook, http://[::1]:8765/):
	// the example host's -webhook-allow-loopback, so a person can receive
	// test deliveries on their own machine. Live endpoints never reach
	// loopback, and no other private address passes. Off in production.
	AllowTestLoopback bool
	// MaxEndpoints bounds the endpoints of one workspace and environment;
	// zero means DefaultMaxEndpoints.
	MaxEndpoints int
	// Timeout bounds one delivery attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// RotationOverlap is how long a rotated-out secret keeps signing when
	// the request names none; zero means DefaultRotationOverlap.
	RotationOverlap time.Duration
	// FanoutEvery is the fan-out job's period; zero means
	// DefaultFanoutEvery.
	FanoutEvery time.Duration
	// FanoutWindow is how far behind its last complete pass the fan-out
	// reads the outbox again; zero means DefaultFanoutWindow. It must
	// exceed the longest a unit of work that writes an event stays open,
	// plus the clock skew between hosts.
	FanoutWindow time.Duration
	// JitterFunc returns a number in [0, 1) that spreads each retry over
	// ±10% of its delay; nil means a random one.
	JitterFunc func() float64
}

// withDefaults returns t with its zero fields defaulted.
func (t Tuning) withDefaults() Tuning {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if t.MaxEndpoints <= 0 {
		t.MaxEndpoints = DefaultMaxEndpoints
	}
	def(&t.Timeout, DefaultTimeout)
	def(&t.RotationOverlap, DefaultRotationOverlap)
	t.RotationOverlap = min(t.RotationOverlap, MaxRotationOverlap)
	def(&t.FanoutEvery, DefaultFanoutEvery)
	def(&t.FanoutWindow, DefaultFanoutWindow)
	if t.JitterFunc == nil {
		t.JitterFunc = rand.Float64
	}
	return t
}

// Sealer seals signing secrets at rest; secret.Keyring satisfies it.
type Sealer interface {
	// Seal encrypts plaintext bound to aad.
	Seal(plaintext, aad []byte) []byte
	// Open decrypts what Seal returned for the same aad.
	Open(sealed, aad []byte) ([]byte, error)
}

// Clock tells the time; the store's clock satisfies it.
type Clock interface {
	Now() time.Time
}

// Store is the port of the endpoint routes, bound to one unit of work (or
// the read pool for reads). Errors are *fault.Error: NOT_FOUND for a
// missing row, CONFLICT for a lost compare-and-set or a taken id.
type Store interface {
	outbox.Writer
	jobs.Enqueuer
	// Now is the unit of work's time; NewID makes an id of it.
	Now() time.Time
	NewID(prefix string) string
	// WebhookEndpointInsert stores a new endpoint. CONFLICT if its id
	// exists.
	WebhookEndpointInsert(ctx context.Context, e Endpoint) error
	// WebhookEndpointGet reads endpoint id of sc, not deleted; NOT_FOUND
	// otherwise.
	WebhookEndpointGet(ctx context.Context, sc access.Scope, id string) (Endpoint, error)
	// WebhookEndpointList returns up to limit endpoints of sc, not
	// deleted, newest first, with ids below before ("" for the newest).
	WebhookEndpointList(ctx context.Context, sc access.Scope, before string, limit int) ([]Endpoint, error)
	// WebhookEndpointCount counts the endpoints of sc that are not
	// deleted. In a transaction it first locks the workspace's row, so
	// concurrent creations count one after another.
	WebhookEndpointCount(ctx context.Context, sc access.Scope) (int, error)
	// WebhookEndpointUpdate writes e whole when the stored version is
	// e.Version-1. CONFLICT otherwise.
	WebhookEndpointUpdate(ctx context.Context, e Endpoint) error
	// WebhookDeliveryInsert stores a new delivery unless its (endpoint,
	// event) pair has one: inserted is false then, and nothing changes.
	WebhookDeliveryInsert(ctx context.Context, d Delivery) (inserted bool, err error)
	// WebhookDeliveryGet reads delivery id of endpoint endpointID in sc;
	// NOT_FOUND otherwise.
	WebhookDeliveryGet(ctx context.Context, sc access.Scope, endpointID, id string) (Delivery, error)
	// WebhookDeliveryList returns up to limit deliveries of endpoint
	// endpointID in sc, newest first, with ids below before.
	WebhookDeliveryList(ctx context.Context, sc access.Scope, endpointID, before string, limit int) ([]Delivery, error)
	// WebhookDeliveryUpdate writes d whole when the stored version is
	// d.Version-1. CONFLICT otherwise.
	WebhookDeliveryUpdate(ctx context.Context, d Delivery) error
	// WebhookAttemptList returns the attempts of the deliveries ids, by
	// delivery and number.
	WebhookAttemptList(ctx context.Context, ids []string) ([]Attempt, error)
}

// DeliveryStore is the port of the delivery job's units of work.
type DeliveryStore interface {
	outbox.Writer
	jobs.Enqueuer
	// Now is the unit of work's time; NewID makes an id of it.
	Now() time.Time
	NewID(prefix string) string
	// WebhookEndpointByID reads endpoint id of environment env, deleted
	// ones included; NOT_FOUND when none.
	WebhookEndpointByID(ctx context.Context, env access.Environment, id string) (Endpoint, error)
	// WebhookEndpointUpdate is Store's.
	WebhookEndpointUpdate(ctx context.Context, e Endpoint) error
	// WebhookEndpointSucceeded moves the endpoint's LastSuccessAt to at
	// when it is earlier (or zero); it changes nothing else, not the
	// version.
	WebhookEndpointSucceeded(ctx context.Context, id string, at time.Time) error
	// WebhookDeliveryByID reads delivery id of environment env; NOT_FOUND
	// when none.
	WebhookDeliveryByID(ctx context.Context, env access.Environment, id string) (Delivery, error)
	// WebhookDeliveryUpdate is Store's.
	WebhookDeliveryUpdate(ctx context.Context, d Delivery) error
	// WebhookAttemptInsert stores an attempt. CONFLICT when the delivery
	// has an attempt of that number.
	WebhookAttemptInsert(ctx context.Context, a Attempt) error
	// WebhookEventGet reads outbox event id of environment env; NOT_FOUND
	// when none.
	WebhookEventGet(ctx context.Context, env access.Environment, id string) (outbox.Event, error)
}

// FanoutStore is the port of the fan-out job's units of work.
type FanoutStore interface {
	jobs.Enqueuer
	// Now is the unit of work's time; NewID makes an id of it.
	Now() time.Time
	NewID(prefix string) string
	// WebhookFanoutCursor returns when the last complete pass started;
	// ok is false before the first.
	WebhookFanoutCursor(ctx context.Context) (at time.Time, ok bool, err error)
	// WebhookFanoutAdvance moves the cursor to at when it is later than
	// the stored one (or none is stored).
	WebhookFanoutAdvance(ctx context.Context, at time.Time) error
	// WebhookFanoutEvents returns up to limit outbox events, of both
	// environments, in id order, whose id is stamped at since or later
	// (event ids sort by the time of the unit of work that wrote them),
	// that no pass marked yet, and whose tenant, workspace and
	// environment hold an endpoint that is not deleted.
	WebhookFanoutEvents(ctx context.Context, since time.Time, limit int) ([]outbox.Event, error)
	// WebhookEndpointsOf returns the endpoints of sc that are not deleted.
	WebhookEndpointsOf(ctx context.Context, sc access.Scope) ([]Endpoint, error)
	// WebhookDeliveryInsert is Store's.
	WebhookDeliveryInsert(ctx context.Context, d Delivery) (inserted bool, err error)
	// WebhookFanoutMark records that a pass fanned out the events ids.
	WebhookFanoutMark(ctx context.Context, ids []string) error
	// WebhookFanoutPrune forgets the marks of events stamped before
	// before, which no pass reads again.
	WebhookFanoutPrune(ctx context.Context, before time.Time) error
}

// Config configures a Service.
type Config struct {
	// Sealer seals the signing secrets. Required.
	Sealer Sealer
	// Guard is the URL policy of endpoints (GuardConfig, with the host's
	// resolver, trusted roots and simulator allowances); the service
	// builds its guards from it. Required in effect: the zero value is
	// the strictest policy with the host's resolver.
	Guard urlguard.Config
	// EventTypes is the event catalogue: the types an endpoint may
	// subscribe to. Required.
	EventTypes []string
	// Clock is the store's clock (attempt times, latency). Required.
	Clock Clock
	// DeliveryRunFunc runs a delivery job's unit of work. Required.
	DeliveryRunFunc func(ctx context.Context, fn func(st DeliveryStore) error) error
	// FanoutRunFunc runs a fan-out pass's unit of work. Required.
	FanoutRunFunc func(ctx context.Context, fn func(st FanoutStore) error) error
	// WakeFunc, when set, wakes the job workers after a fan-out pass
	// enqueued attempts.
	WakeFunc func()
	// Tuning holds limits and timings.
	Tuning Tuning
	// Logger receives delivery failures; nil discards them. No line
	// carries a secret, a body or a URL.
	Logger *slog.Logger
}

// Service runs webhook endpoints and deliveries. It is safe for
// concurrent use.
type Service struct {
	cfg   Config
	t     Tuning
	log   *slog.Logger
	guard *urlguard.Guard
	// loopback holds the guards of test-environment loopback endpoints,
	// one per address (Tuning.AllowTestLoopback).
	mu       sync.Mutex
	loopback map[netip.AddrPort]*urlguard.Guard
}

// GuardConfig is the URL policy of webhook endpoints: https only, public
// addresses only, and allow, the exact loopback addresses of test
// servers (nil in production), let through; one attempt, redirects
// (which are not followed) and all, bounded by DefaultTimeout. The host
// sets the resolver and the trusted roots (platform.Config.Outbound).
func GuardConfig(allow []netip.AddrPort) urlguard.Config {
	return urlguard.Config{AllowLoopback: allow, MaxURLLength: MaxURLLength, Timeout: DefaultTimeout,
		ResponseHeaderTimeout: DefaultTimeout, DialTimeout: DefaultTimeout, TLSHandshakeTimeout: DefaultTimeout}
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Sealer == nil:
		return nil, errors.New("webhook: Config.Sealer is required")
	case cfg.Clock == nil:
		return nil, errors.New("webhook: Config.Clock is required")
	case cfg.DeliveryRunFunc == nil || cfg.FanoutRunFunc == nil:
		return nil, errors.New("webhook: Config.DeliveryRunFunc and Config.FanoutRunFunc are required")
	case len(cfg.EventTypes) == 0:
		return nil, errors.New("webhook: Config.EventTypes is required")
	}
	t := cfg.Tuning.withDefaults()
	gc := cfg.Guard
	gc.Timeout, gc.ResponseHeaderTimeout = t.Timeout, t.Timeout
	g, err := urlguard.New(gc)
	if err != nil {
		return nil, fmt.Errorf("webhook: the URL guard: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.EventTypes = slices.Clone(cfg.EventTypes)
	return &Service{cfg: cfg, t: t, log: log, guard: g, loopback: map[netip.AddrPort]*urlguard.Guard{}}, nil
}

// Close closes the idle connections of the service's guards.
func (s *Service) Close() {
	s.guard.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.loopback {
		g.CloseIdleConnections()
	}
}

// Jobs returns the domain's job kinds: the fan-out, periodic, of the
// maintenance class (short database work), and the delivery attempt, of
// the outbound class, grouped by endpoint so that one endpoint's
// attempts run one at a time over every host and a slow receiver holds
// back no other endpoint.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{
		{Name: JobFanout, Class: jobs.ClassMaintenance, Every: s.t.FanoutEvery, HandlerFunc: s.fanoutJob},
		{Name: JobDeliver, Class: jobs.ClassOutbound, HandlerFunc: s.deliverJob},
	}
}

// The job kinds. Rows in existing databases carry the names, so they
// never change.
const (
	// JobFanout turns new outbox events into deliveries.
	JobFanout = "webhook.fanout"
	// JobDeliver makes one attempt of one delivery.
	JobDeliver = "webhook.deliver"
)
