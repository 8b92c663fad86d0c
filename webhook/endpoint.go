package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/urlguard"
)

// CreateInput is what an endpoint is created from (POST
// /api/v1/webhook-endpoints).
type CreateInput struct {
	// URL is where deliveries are POSTed: https to a public host.
	URL string
	// EnabledEvents are the event types to receive, or Wildcard alone.
	EnabledEvents []string
	// Description is an optional note.
	Description string
}

// UpdateInput changes an endpoint (PATCH); nil fields are unchanged.
type UpdateInput struct {
	URL           *string
	EnabledEvents []string
	Description   *string
	// Enabled disables (false) or enables (true) the endpoint.
	Enabled *bool
}

// RotateInput asks for a new signing secret.
type RotateInput struct {
	// ExpireCurrentAfterSeconds is how long the current secret keeps
	// signing beside the new one: 0 to 604800 (7 days); nil means
	// Tuning.RotationOverlap (24 hours by default).
	ExpireCurrentAfterSeconds *int64
}

// Created is an endpoint with its signing secret's plaintext, answered
// once (create, rotate); the platform keeps it sealed only.
type Created struct {
	Endpoint Endpoint
	Secret   string
}

// Prepared is a create or update whose fields, URL included (its host
// resolved and judged), were checked outside any unit of work.
type Prepared struct {
	create CreateInput
	update UpdateInput
}

// DeliveryLog is a delivery with its attempts, oldest first.
type DeliveryLog struct {
	Delivery Delivery
	Attempts []Attempt
}

// Prepare checks a creation for principal p: the URL against the
// endpoint URL policy (its host is resolved, so call it outside any unit
// of work), the enabled events against the catalogue, the description.
// Errors: URL_NOT_ALLOWED (details field url, reason) for a URL the
// platform may not call; INVALID_INPUT naming the field otherwise.
func (s *Service) Prepare(ctx context.Context, p *access.Principal, in CreateInput) (Prepared, error) {
	const op = "webhook.Create"
	events, err := s.checkEvents(op, in.EnabledEvents)
	if err != nil {
		return Prepared{}, err
	}
	in.EnabledEvents = events
	if err := checkDescription(op, in.Description); err != nil {
		return Prepared{}, err
	}
	if err := s.checkURL(ctx, op, p.Environment, in.URL); err != nil {
		return Prepared{}, err
	}
	return Prepared{create: in}, nil
}

// PrepareUpdate checks an update for principal p as Prepare checks a
// creation, each field only when present.
func (s *Service) PrepareUpdate(ctx context.Context, p *access.Principal, in UpdateInput) (Prepared, error) {
	const op = "webhook.Update"
	if in.EnabledEvents != nil {
		events, err := s.checkEvents(op, in.EnabledEvents)
		if err != nil {
			return Prepared{}, err
		}
		in.EnabledEvents = events
	}
	if in.Description != nil {
		if err := checkDescription(op, *in.Description); err != nil {
			return Prepared{}, err
		}
	}
	if in.URL != nil {
		if err := s.checkURL(ctx, op, p.Environment, *in.URL); err != nil {
			return Prepared{}, err
		}
	}
	return Prepared{update: in}, nil
}

// checkEvents returns events sorted, or INVALID_INPUT naming the entry:
// 1 to MaxEnabledEvents types of the catalogue (webhook.test aside), each
// once, or Wildcard alone.
func (s *Service) checkEvents(op string, events []string) ([]string, error) {
	if n := len(events); n == 0 || n > MaxEnabledEvents {
		return nil, fault.Invalid(op, "enabledEvents", "enabledEvents must name 1 to 64 event types, or * alone.").With("limit", MaxEnabledEvents)
	}
	for i, e := range events {
		field := "enabledEvents[" + strconv.Itoa(i) + "]"
		switch {
		case e == Wildcard && len(events) > 1:
			return nil, fault.Invalid(op, field, "* stands alone.").With("reason", "wildcard_not_alone")
		case e != Wildcard && (e == EventTypeTest || !slices.Contains(s.cfg.EventTypes, e)):
			return nil, fault.Invalid(op, field, "Not an event type of the catalogue.").With("reason", "unknown_event_type")
		case slices.Contains(events[:i], e):
			return nil, fault.Invalid(op, field, "An event type is named once.").With("reason", "duplicate")
		}
	}
	out := slices.Clone(events)
	slices.Sort(out)
	return out, nil
}

// checkDescription refuses a description over MaxDescription characters,
// not UTF-8, or with control characters other than line breaks.
func checkDescription(op, d string) error {
	bad := func(r rune) bool { return unicode.IsControl(r) && r != '\n' }
	if !utf8.ValidString(d) || utf8.RuneCountInString(d) > MaxDescription || strings.ContainsFunc(d, bad) {
		return fault.Invalid(op, "description", "description is text of at most 500 characters.").With("limit", MaxDescription)
	}
	return nil
}

// checkURL judges an endpoint URL of environment env: a test-environment
// loopback URL when the host allows them (Tuning.AllowTestLoopback), else
// the guard's full check, its lookup bounded by checkTimeout.
func (s *Service) checkURL(ctx context.Context, op string, env access.Environment, raw string) error {
	if raw == "" {
		return fault.Invalid(op, "url", "url is required.")
	}
	if _, ok := s.loopbackTarget(env, raw); ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, err := s.guard.Check(ctx, raw)
	switch {
	case err == nil:
		return nil
	case urlguard.Reason(err) != "":
		_, msg, _ := fault.Public(err)
		return fault.E(op, fault.URLNotAllowed, msg).With("field", "url").With("reason", urlguard.Reason(err))
	case errors.Is(err, context.Canceled):
		return fault.Wrap(op, err)
	}
	return fault.E(op, fault.URLNotAllowed, "The URL's host does not resolve.").With("field", "url").With("reason", "unresolved_host")
}

// secretAAD binds a sealed secret to its endpoint and version.
func secretAAD(endpointID string, version int64) []byte {
	return []byte("webhook-secret/" + endpointID + "/" + strconv.FormatInt(version, 10))
}

// Create stores the endpoint prep describes in p's workspace and
// environment with a new signing secret (sealed), and its outbox event.
// CONFLICT (details reason endpoint_limit, limit) when the scope holds
// MaxEndpoints endpoints already.
func (s *Service) Create(ctx context.Context, st Store, p *access.Principal, prep Prepared) (Created, error) {
	const op = "webhook.Create"
	in := prep.create
	if in.URL == "" {
		return Created{}, fault.Wrap(op, errors.New("webhook: Create needs a Prepared creation"))
	}
	n, err := st.WebhookEndpointCount(ctx, p.Scope())
	if err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	if n >= s.t.MaxEndpoints {
		return Created{}, fault.E(op, fault.Conflict, "The workspace has as many webhook endpoints as it may.").
			With("reason", "endpoint_limit").With("limit", s.t.MaxEndpoints)
	}
	now := st.Now()
	e := Endpoint{ID: st.NewID(EndpointPrefix), Scope: p.Scope(), URL: in.URL, Description: in.Description,
		EnabledEvents: in.EnabledEvents, Status: StatusEnabled, SecretVersion: 1, CreatedByUserID: p.UserID,
		CreatedByKeyID: p.KeyID, Version: 1, CreatedAt: now, UpdatedAt: now}
	secret := newSecret()
	e.SecretSealed = s.cfg.Sealer.Seal([]byte(secret), secretAAD(e.ID, e.SecretVersion))
	if err := st.WebhookEndpointInsert(ctx, e); err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	if err := emit(ctx, st, e, EventTypeCreated, map[string]any{"enabledEvents": e.EnabledEvents}); err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	return Created{Endpoint: e, Secret: secret}, nil
}

// List returns up to limit endpoints of p's workspace and environment,
// newest first, with ids below before.
func (s *Service) List(ctx context.Context, st Store, p *access.Principal, before string, limit int) ([]Endpoint, error) {
	out, err := st.WebhookEndpointList(ctx, p.Scope(), before, limit)
	if err != nil {
		return nil, fault.Wrap("webhook.List", err)
	}
	return out, nil
}

// Get reads endpoint id of p's workspace and environment; NOT_FOUND for
// any other (another workspace's, the other environment's, a deleted
// one).
func (s *Service) Get(ctx context.Context, st Store, p *access.Principal, id string) (Endpoint, error) {
	e, err := st.WebhookEndpointGet(ctx, p.Scope(), id)
	if err != nil {
		return Endpoint{}, fault.Wrap("webhook.Get", err)
	}
	return e, nil
}

// Update applies prep to endpoint id of p's workspace and environment,
// with an outbox event naming the fields that changed; a change that
// changes nothing writes nothing. Enabling an endpoint clears its
// disabled reason. NOT_FOUND as Get; CONFLICT when a concurrent write
// won.
func (s *Service) Update(ctx context.Context, st Store, p *access.Principal, id string, prep Prepared) (Endpoint, error) {
	const op = "webhook.Update"
	in := prep.update
	e, err := st.WebhookEndpointGet(ctx, p.Scope(), id)
	if err != nil {
		return Endpoint{}, fault.Wrap(op, err)
	}
	var changed []string
	if in.URL != nil && *in.URL != e.URL {
		e.URL, changed = *in.URL, append(changed, "url")
	}
	if in.EnabledEvents != nil && !slices.Equal(in.EnabledEvents, e.EnabledEvents) {
		e.EnabledEvents, changed = in.EnabledEvents, append(changed, "enabledEvents")
	}
	if in.Description != nil && *in.Description != e.Description {
		e.Description, changed = *in.Description, append(changed, "description")
	}
	if in.Enabled != nil && *in.Enabled != (e.Status == StatusEnabled) {
		ev, reason := EventDisable, DisabledManual
		if *in.Enabled {
			ev, reason = EventEnable, ""
		}
		to, err := Transition(e.Status, ev)
		if err != nil {
			return Endpoint{}, err
		}
		e.Status, e.DisabledReason, changed = to, reason, append(changed, "enabled")
	}
	if len(changed) == 0 {
		return e, nil
	}
	e.Version, e.UpdatedAt = e.Version+1, st.Now()
	if err := st.WebhookEndpointUpdate(ctx, e); err != nil {
		return Endpoint{}, fault.Wrap(op, err)
	}
	if err := emit(ctx, st, e, EventTypeUpdated, map[string]any{"changed": changed, "enabledEvents": e.EnabledEvents}); err != nil {
		return Endpoint{}, fault.Wrap(op, err)
	}
	return e, nil
}

// Delete deletes endpoint id of p's workspace and environment: it
// receives nothing more, its pending deliveries fail when their next
// attempt comes, and its secrets are erased. NOT_FOUND as Get.
func (s *Service) Delete(ctx context.Context, st Store, p *access.Principal, id string) (Endpoint, error) {
	const op = "webhook.Delete"
	e, err := st.WebhookEndpointGet(ctx, p.Scope(), id)
	if err != nil {
		return Endpoint{}, fault.Wrap(op, err)
	}
	to, err := Transition(e.Status, EventDelete)
	if err != nil {
		return Endpoint{}, err
	}
	e.Status, e.SecretSealed, e.PreviousSecretSealed, e.PreviousExpiresAt = to, []byte{}, nil, time.Time{}
	e.Version, e.UpdatedAt = e.Version+1, st.Now()
	if err := st.WebhookEndpointUpdate(ctx, e); err != nil {
		return Endpoint{}, fault.Wrap(op, err)
	}
	if err := emit(ctx, st, e, EventTypeDeleted, nil); err != nil {
		return Endpoint{}, fault.Wrap(op, err)
	}
	return e, nil
}

// RotateSecret gives endpoint id of p's workspace and environment a new
// signing secret, returned once; the current one keeps signing beside it
// for in's overlap (a rotation during an overlap drops the secret the
// earlier rotation kept). INVALID_INPUT for an overlap outside 0..7 days;
// NOT_FOUND as Get.
func (s *Service) RotateSecret(ctx context.Context, st Store, p *access.Principal, id string, in RotateInput) (Created, error) {
	const op = "webhook.RotateSecret"
	overlap := s.t.RotationOverlap
	if in.ExpireCurrentAfterSeconds != nil {
		sec := *in.ExpireCurrentAfterSeconds
		if sec < 0 || sec > int64(MaxRotationOverlap/time.Second) {
			return Created{}, fault.Invalid(op, "expireCurrentAfterSeconds", "expireCurrentAfterSeconds must be from 0 to 604800.").
				With("max", int64(MaxRotationOverlap/time.Second))
		}
		overlap = time.Duration(sec) * time.Second
	}
	e, err := st.WebhookEndpointGet(ctx, p.Scope(), id)
	if err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	now := st.Now()
	e.PreviousSecretSealed, e.PreviousExpiresAt = nil, time.Time{}
	if overlap > 0 {
		e.PreviousSecretSealed, e.PreviousExpiresAt = e.SecretSealed, now.Add(overlap)
	}
	secret := newSecret()
	e.SecretVersion++
	e.SecretSealed = s.cfg.Sealer.Seal([]byte(secret), secretAAD(e.ID, e.SecretVersion))
	e.Version, e.UpdatedAt = e.Version+1, now
	if err := st.WebhookEndpointUpdate(ctx, e); err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	if err := emit(ctx, st, e, EventTypeSecretRotated, map[string]any{"previousSecretExpiresAt": optionalTime(e.PreviousExpiresAt)}); err != nil {
		return Created{}, fault.Wrap(op, err)
	}
	return Created{Endpoint: e, Secret: secret}, nil
}

// SendTest writes a webhook.test event of endpoint id of p's workspace
// and environment and its delivery to that endpoint alone, due at once.
// INVALID_STATE_TRANSITION (details reason endpoint_disabled) for a
// disabled endpoint; NOT_FOUND as Get.
func (s *Service) SendTest(ctx context.Context, st Store, p *access.Principal, id string) (DeliveryLog, error) {
	const op = "webhook.SendTest"
	e, err := st.WebhookEndpointGet(ctx, p.Scope(), id)
	if err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	if e.Status != StatusEnabled {
		return DeliveryLog{}, disabledError(op, e)
	}
	ev, err := emitEvent(ctx, st, e, EventTypeTest, map[string]any{"message": "A test event of the webhook endpoint."})
	if err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	d := newDelivery(st, e, ev)
	if _, err := st.WebhookDeliveryInsert(ctx, d); err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	if err := enqueueAttempt(ctx, st, d); err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	return DeliveryLog{Delivery: d, Attempts: []Attempt{}}, nil
}

// disabledError is the refusal of a test or a redelivery to a disabled
// endpoint.
func disabledError(op string, e Endpoint) error {
	return fault.E(op, fault.InvalidState, "The webhook endpoint is disabled.").With("reason", "endpoint_disabled").
		With("status", string(e.Status))
}

// Deliveries returns up to limit deliveries of endpoint endpointID of p's
// workspace and environment, newest first, with ids below before, each
// with its attempts. NOT_FOUND as Get.
func (s *Service) Deliveries(ctx context.Context, st Store, p *access.Principal, endpointID, before string, limit int) ([]DeliveryLog, error) {
	const op = "webhook.Deliveries"
	if _, err := st.WebhookEndpointGet(ctx, p.Scope(), endpointID); err != nil {
		return nil, fault.Wrap(op, err)
	}
	ds, err := st.WebhookDeliveryList(ctx, p.Scope(), endpointID, before, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return withAttempts(ctx, st, op, ds)
}

// withAttempts joins deliveries with their attempts.
func withAttempts(ctx context.Context, st Store, op string, ds []Delivery) ([]DeliveryLog, error) {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	var as []Attempt
	if len(ids) > 0 {
		var err error
		if as, err = st.WebhookAttemptList(ctx, ids); err != nil {
			return nil, fault.Wrap(op, err)
		}
	}
	out := make([]DeliveryLog, len(ds))
	for i, d := range ds {
		out[i] = DeliveryLog{Delivery: d, Attempts: []Attempt{}}
		for _, a := range as {
			if a.DeliveryID == d.ID {
				out[i].Attempts = append(out[i].Attempts, a)
			}
		}
	}
	return out, nil
}

// Redeliver asks for one more attempt, due at once, of delivery
// deliveryID of endpoint endpointID of p's workspace and environment: a
// manual round of one attempt, without retries. INVALID_STATE_TRANSITION
// for a delivery still pending (details from pending), or a disabled
// endpoint (details reason endpoint_disabled); NOT_FOUND as Get, and for
// a delivery of another endpoint.
func (s *Service) Redeliver(ctx context.Context, st Store, p *access.Principal, endpointID, deliveryID string) (DeliveryLog, error) {
	const op = "webhook.Redeliver"
	e, err := st.WebhookEndpointGet(ctx, p.Scope(), endpointID)
	if err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	d, err := st.WebhookDeliveryGet(ctx, p.Scope(), endpointID, deliveryID)
	if err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	to, err := DeliveryTransition(d.Status, DeliveryRedeliver)
	if err != nil {
		return DeliveryLog{}, err
	}
	if e.Status != StatusEnabled {
		return DeliveryLog{}, disabledError(op, e)
	}
	now := st.Now()
	d.Status, d.Manual, d.NextAttemptAt, d.FailureReason = to, true, now, ""
	d.Version, d.UpdatedAt = d.Version+1, now
	if err := st.WebhookDeliveryUpdate(ctx, d); err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	if err := enqueueAttempt(ctx, st, d); err != nil {
		return DeliveryLog{}, fault.Wrap(op, err)
	}
	logs, err := withAttempts(ctx, st, op, []Delivery{d})
	if err != nil {
		return DeliveryLog{}, err
	}
	return logs[0], nil
}

// newDelivery is the first state of ev's delivery to e: pending, due at
// once.
func newDelivery(st interface {
	Now() time.Time
	NewID(string) string
}, e Endpoint, ev outbox.Event) Delivery {
	now := st.Now()
	return Delivery{ID: st.NewID(DeliveryPrefix), EndpointID: e.ID, EventID: ev.ID, EventType: ev.Type, Scope: e.Scope,
		Status: DeliveryPending, NextAttemptAt: now, Version: 1, CreatedAt: now, UpdatedAt: now}
}

// deliverPayload is a delivery job's payload: the delivery, and the
// version it had when the job was enqueued, which the job's claim
// compares and sets.
type deliverPayload struct {
	DeliveryID  string             `json:"deliveryId"`
	Environment access.Environment `json:"environment"`
	Version     int64              `json:"version"`
}

// enqueueAttempt enqueues the attempt of d at d.NextAttemptAt, keyed by
// the delivery and its version (so each write of the delivery plans at
// most one attempt) and grouped by its endpoint.
func enqueueAttempt(ctx context.Context, st jobs.Enqueuer, d Delivery) error {
	payload, err := json.Marshal(deliverPayload{DeliveryID: d.ID, Environment: d.Scope.Environment, Version: d.Version})
	if err != nil {
		return fmt.Errorf("webhook: delivery payload: %w", err)
	}
	_, err = st.JobInsert(ctx, jobs.InsertParams{Kind: JobDeliver, Payload: payload, RunAt: d.NextAttemptAt,
		UniqueKey: JobDeliver + ":" + d.ID + ":" + strconv.FormatInt(d.Version, 10), Group: d.EndpointID})
	return err
}

// emit writes an outbox event about endpoint e.
func emit(ctx context.Context, st outbox.Writer, e Endpoint, typ string, fields map[string]any) error {
	_, err := emitEvent(ctx, st, e, typ, fields)
	return err
}

// emitEvent writes an outbox event about endpoint e at its version and
// returns it: payload.endpointId and payload.status, with fields. It
// never carries the URL (whose query may hold a token) or a secret.
func emitEvent(ctx context.Context, st outbox.Writer, e Endpoint, typ string, fields map[string]any) (outbox.Event, error) {
	body := map[string]any{"endpointId": e.ID, "status": e.Status}
	for k, v := range fields {
		body[k] = v
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return outbox.Event{}, fmt.Errorf("webhook: event payload: %w", err)
	}
	return st.OutboxInsert(ctx, outbox.Event{TenantID: e.Scope.TenantID, WorkspaceID: e.Scope.WorkspaceID,
		Environment: string(e.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: e.ID, AggregateVersion: e.Version,
		Payload: payload})
}

// optionalTime is t, or nil when zero, for JSON.
func optionalTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}
