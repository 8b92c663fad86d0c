package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/webhook"
)

// WebhookEndpointView is a webhook endpoint as the API shows it: never its signing secret.
type WebhookEndpointView struct {
	// ID is the endpoint's id.
	ID string `json:"id" example:"whe_01jd0000000000000000000000"`
	// Object is always "webhook_endpoint".
	Object string `json:"object" example:"webhook_endpoint"`
	// WorkspaceID is the endpoint's workspace: it receives that workspace's events only.
	WorkspaceID string `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	// Environment is the endpoint's environment (test or live): it receives that environment's events only, so test events never reach a live endpoint.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// URL is where deliveries are POSTed: https to a public host (in the test environment, on a host that allows it, http or https to a loopback address with its port).
	URL string `json:"url" example:"https://hooks.example.com/platform"`
	// Description is the owner's note, at most 500 characters.
	Description string `json:"description" example:"Order fulfilment"`
	// EnabledEvents are the event types the endpoint receives (types of the event catalogue), sorted, or * alone for every type.
	EnabledEvents []string `json:"enabledEvents" example:"[\"generation.operation.completed\"]"`
	// Status is enabled or disabled; deleted only in the delete route's answer.
	Status string `json:"status" example:"enabled" enum:"enabled,disabled,deleted"`
	// DisabledReason says why a disabled endpoint is: manual (its owner), failing (a delivery failed for the whole retry window of about three days, with no delivery succeeding meanwhile) or gone (the receiver answered 410 Gone); null while enabled.
	DisabledReason *string `json:"disabledReason" example:"failing" enum:"manual,failing,gone"`
	// PreviousSecretExpiresAt is when the secret the last rotation replaced stops signing beside the current one; null when only the current one signs.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	// LastSuccessAt is when a delivery to the endpoint last succeeded; null before the first.
	LastSuccessAt *time.Time `json:"lastSuccessAt"`
	// CreatedBy is who created the endpoint.
	CreatedBy KeyCreator `json:"createdBy"`
	// Version counts the endpoint's writes, from 1.
	Version int64 `json:"version" example:"1"`
	// CreatedAt is when the endpoint was created.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the endpoint last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// WebhookEndpointSecret is an endpoint with its signing secret, answered once by create and rotate-secret.
type WebhookEndpointSecret struct {
	// Endpoint is the endpoint.
	Endpoint WebhookEndpointView `json:"endpoint"`
	// Secret is the signing secret: whsec_ and the standard base64 of 32 random bytes, whose decoded bytes are the HMAC-SHA256 key of the webhook-signature header. It is shown only in this response (and its idempotent replay, to the same principal, from a sealed record) and never again.
	Secret string `json:"secret" example:"whsec_REPLACE_WITH_YOUR_SIGNING_SECRET"`
}

// WebhookEndpointPage is one page of endpoints, newest first.
type WebhookEndpointPage struct {
	// Items are the page's endpoints, newest first.
	Items []WebhookEndpointView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOndoZV8wMWpk"`
}

// WebhookAttemptView is one attempt of a delivery.
type WebhookAttemptView struct {
	// Number counts the delivery's attempts from 1.
	Number int `json:"number" example:"1"`
	// Manual is true for the attempt a redelivery asked for.
	Manual bool `json:"manual" example:"false"`
	// StartedAt is when the attempt started: its webhook-timestamp.
	StartedAt time.Time `json:"startedAt"`
	// StatusCode is the receiver's HTTP status; null when no answer came.
	StatusCode *int `json:"statusCode" example:"200"`
	// LatencyMs is the time from the request's start to the answer's headers, or to the failure, in milliseconds.
	LatencyMs int64 `json:"latencyMs" example:"84"`
	// ErrorClass says why the attempt failed; null when it succeeded (2xx). http_status: another status; redirect: a 3xx, never followed; timeout: no answer within 10 seconds; network: the connection failed; unresolved_host; tls: the handshake or certificate failed; url_refused: the URL guard refused the URL or an address its host resolved to at delivery, nothing was sent (errorReason says why); interrupted: the host making the attempt stopped before recording it, the receiver may have it.
	ErrorClass *string `json:"errorClass" example:"http_status" enum:"http_status,redirect,timeout,network,unresolved_host,tls,url_refused,interrupted"`
	// ErrorReason is the URL guard's reason of a url_refused attempt (private_address, scheme, ...); null otherwise.
	ErrorReason *string `json:"errorReason" example:"private_address"`
	// ResponseExcerpt is the first 1024 bytes at most of the answer's body, as UTF-8; null without one. No more of a body is kept.
	ResponseExcerpt *string `json:"responseExcerpt" example:"ok"`
}

// WebhookDeliveryView is one event's delivery to one endpoint, with its attempts.
type WebhookDeliveryView struct {
	// ID is the delivery's id.
	ID string `json:"id" example:"whd_01jd0000000000000000000000"`
	// Object is always "webhook_delivery".
	Object string `json:"object" example:"webhook_delivery"`
	// EndpointID is the endpoint delivered to.
	EndpointID string `json:"endpointId" example:"whe_01jd0000000000000000000000"`
	// EventID is the event delivered, also the webhook-id header of every attempt.
	EventID string `json:"eventId" example:"evt_01jd0000000000000000000000"`
	// EventType is the event's type.
	EventType string `json:"eventType" example:"generation.operation.completed"`
	// Status is pending (an attempt is due or scheduled), succeeded or failed.
	Status string `json:"status" example:"succeeded" enum:"pending,succeeded,failed"`
	// FailureReason says why a failed delivery failed: exhausted (every attempt of the schedule failed), manual_attempt_failed, gone (410 Gone; the endpoint was disabled), endpoint_disabled or endpoint_deleted (before the next attempt); null otherwise.
	FailureReason *string `json:"failureReason" example:"exhausted" enum:"exhausted,manual_attempt_failed,gone,endpoint_disabled,endpoint_deleted"`
	// AttemptCount counts the attempts made.
	AttemptCount int `json:"attemptCount" example:"1"`
	// NextAttemptAt is when the next attempt is due while pending; null otherwise.
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
	// Attempts are the delivery's attempts, oldest first.
	Attempts []WebhookAttemptView `json:"attempts"`
	// CreatedAt is when the delivery was made.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// WebhookDeliveryPage is one page of an endpoint's deliveries, newest first.
type WebhookDeliveryPage struct {
	// Items are the page's deliveries, newest first.
	Items []WebhookDeliveryView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOndoZF8wMWpk"`
}

// CreateWebhookEndpointRequest is the body of POST /api/v1/webhook-endpoints.
type CreateWebhookEndpointRequest struct {
	// URL is where deliveries are POSTed: https, no credentials, a public host whose every address is public; at most 2048 bytes.
	URL string `json:"url" example:"https://hooks.example.com/platform"`
	// EnabledEvents are 1 to 64 distinct event types of the catalogue (webhook.test aside), or * alone for every type.
	EnabledEvents []string `json:"enabledEvents" example:"[\"generation.operation.completed\"]"`
	// Description is an optional note, at most 500 characters.
	Description string `json:"description,omitempty" example:"Order fulfilment"`
}

// UpdateWebhookEndpointRequest is the body of PATCH /api/v1/webhook-endpoints/{endpointId}; absent fields are unchanged.
type UpdateWebhookEndpointRequest struct {
	// URL replaces the endpoint's URL, checked as on create.
	URL *string `json:"url,omitempty" example:"https://hooks.example.com/platform/v2"`
	// EnabledEvents replaces the subscribed event types, as on create.
	EnabledEvents []string `json:"enabledEvents,omitempty" example:"[\"*\"]"`
	// Description replaces the note.
	Description *string `json:"description,omitempty" example:"Everything"`
	// Enabled disables (false) or enables (true) the endpoint; enabling clears disabledReason.
	Enabled *bool `json:"enabled,omitempty" example:"true"`
}

// RotateWebhookSecretRequest is the optional body of POST /api/v1/webhook-endpoints/{endpointId}/rotate-secret.
type RotateWebhookSecretRequest struct {
	// ExpireCurrentAfterSeconds is how long the current secret keeps signing beside the new one (0 = stops at once), at most 604800 (7 days). Absent means 24 hours.
	ExpireCurrentAfterSeconds *int64 `json:"expireCurrentAfterSeconds,omitempty" example:"86400" minimum:"0" maximum:"604800"`
}

func webhookEndpointView(e webhook.Endpoint) WebhookEndpointView {
	v := WebhookEndpointView{ID: e.ID, Object: "webhook_endpoint", WorkspaceID: e.Scope.WorkspaceID, Environment: string(e.Scope.Environment),
		URL: e.URL, Description: e.Description, EnabledEvents: e.EnabledEvents, Status: string(e.Status),
		DisabledReason: optString(e.DisabledReason), LastSuccessAt: optTime(e.LastSuccessAt),
		CreatedBy: KeyCreator{UserID: e.CreatedByUserID, KeyID: e.CreatedByKeyID}, Version: e.Version,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if len(e.PreviousSecretSealed) > 0 {
		v.PreviousSecretExpiresAt = optTime(e.PreviousExpiresAt)
	}
	return v
}

func webhookDeliveryView(l webhook.DeliveryLog) WebhookDeliveryView {
	d := l.Delivery
	v := WebhookDeliveryView{ID: d.ID, Object: "webhook_delivery", EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Status: string(d.Status), FailureReason: optString(d.FailureReason), AttemptCount: d.Attempts,
		Attempts: []WebhookAttemptView{}, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	if d.Status == webhook.DeliveryPending {
		v.NextAttemptAt = optTime(d.NextAttemptAt)
	}
	for _, a := range l.Attempts {
		av := WebhookAttemptView{Number: a.Number, Manual: a.Manual, StartedAt: a.StartedAt, LatencyMs: a.LatencyMillis,
			ErrorClass: optString(a.ErrorClass), ErrorReason: optString(a.ErrorReason), ResponseExcerpt: optString(a.ResponseExcerpt)}
		if a.StatusCode != 0 {
			code := a.StatusCode
			av.StatusCode = &code
		}
		v.Attempts = append(v.Attempts, av)
	}
	return v
}

func exampleWebhookEndpoint() WebhookEndpointView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return webhookEndpointView(webhook.Endpoint{ID: "whe_01jd0000000000000000000000",
		Scope: access.Scope{WorkspaceID: "ws_01jd0000000000000000000000", Environment: access.Test},
		URL:   "https://hooks.example.com/platform", Description: "Order fulfilment",
		EnabledEvents: []string{"generation.operation.completed"}, Status: webhook.StatusEnabled,
		CreatedByUserID: "usr_01jd0000000000000000000000", Version: 1, CreatedAt: t, UpdatedAt: t})
}

func exampleWebhookDelivery() WebhookDeliveryView {
	t := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)
	return webhookDeliveryView(webhook.DeliveryLog{Delivery: webhook.Delivery{ID: "whd_01jd0000000000000000000000",
		EndpointID: "whe_01jd0000000000000000000000", EventID: "evt_01jd0000000000000000000000", EventType: "generation.operation.completed",
		Status: webhook.DeliverySucceeded, Attempts: 2, Version: 5, CreatedAt: t, UpdatedAt: t.Add(5 * time.Second)},
		Attempts: []webhook.Attempt{
			{Number: 1, StartedAt: t, StatusCode: 503, LatencyMillis: 120, ErrorClass: webhook.ClassHTTPStatus, ResponseExcerpt: "busy"},
			{Number: 2, StartedAt: t.Add(5 * time.Second), StatusCode: 200, LatencyMillis: 84, ResponseExcerpt: "ok"}}})
}

// webhookScheduleText describes the retry schedule, from the schedule
// itself.
func webhookScheduleText() string {
	var parts []string
	for _, d := range webhook.RetrySchedule() {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, ", ")
}

// WebhookDescription documents the delivery format and guarantees of
// webhooks for the OpenAPI document's description.
func WebhookDescription() string {
	return "Webhooks. A webhook endpoint (/api/v1/webhook-endpoints) of a workspace and environment receives, as signed HTTP POSTs, " +
		"the outbox events of that workspace and environment whose types it subscribes to (enabledEvents, or * for all), that " +
		"commit after it is created: test events never reach a live endpoint. A delivery's body is JSON: id (the event id), " +
		"type, schemaVersion, aggregateId, aggregateVersion, occurredAt, environment, workspaceId, payload (never a secret). " +
		"Each attempt is signed per the Standard Webhooks specification: headers webhook-id (the event id, the same on every " +
		"attempt: deduplicate by it), webhook-timestamp (the attempt's Unix seconds) and webhook-signature, \"v1,\" and the " +
		"base64 HMAC-SHA256 of webhook-id.webhook-timestamp.body keyed with the base64-decoded part of the endpoint's whsec_ " +
		"secret; during a secret rotation's overlap the header carries the new secret's signature and the old one's, space-" +
		"separated. Verify against the raw body, in constant time, and refuse a timestamp more than 5 minutes from your clock. " +
		"A 2xx answer within 10 seconds is success; any other status, a redirect (never followed), a timeout or a connection " +
		"failure is a failure, retried with exponential backoff and ±10% jitter after " + webhookScheduleText() + " (11 " +
		"attempts over about three days); a delivery that fails them all fails, and if no delivery to the endpoint succeeded " +
		"since it began, the endpoint is disabled and the event webhook_endpoint.disabled is written (410 Gone disables it at " +
		"once). Order is not guaranteed, as with Stripe: retries overtake, so order by occurredAt and aggregateVersion; one " +
		"endpoint's attempts run one at a time over every host, and a slow endpoint holds back no other. Deliveries are at " +
		"least once: a host stopping mid-attempt leaves the outcome unknown (errorClass interrupted) and the next attempt " +
		"follows. The URL is checked at create and update and again at every delivery on a pinned connection: https only and " +
		"public addresses only, else 422 URL_NOT_ALLOWED with details.reason (or errorClass url_refused at delivery)."
}

// webhookRoutes are the nine /api/v1/webhook-endpoints routes (spec,
// Events 7: the routes are not shown there; they follow Stripe's webhook
// endpoints). Every one needs the DEVELOPER role; reads need
// developer.webhook.read (scope webhooks:read), changes
// developer.webhook.manage (scope webhooks:write). Creating, changing and
// rotating a live endpoint from a session need a recent sign-in.
func webhookRoutes(svc *webhook.Service, wake func()) []Route {
	if svc == nil {
		return nil
	}
	read := func(r Route) Route {
		r.Tag, r.Auth, r.Roles, r.Private = transport.TagDeveloper, transport.AuthSessionOrKey, []access.Role{access.RoleDeveloper}, true
		r.Permission, r.Scope, r.Idempotency = access.DeveloperWebhookRead, access.ScopeWebhooksRead, transport.IdempotencyNone
		return r
	}
	write := func(r Route) Route {
		r = read(r)
		r.Permission, r.Scope, r.Idempotency = access.DeveloperWebhookManage, access.ScopeWebhooksWrite, transport.IdempotencyOptional
		return r
	}
	woken := func(tx Tx) {
		if wake != nil {
			tx.AfterCommit(wake)
		}
	}
	ex := exampleWebhookEndpoint()
	secret := WebhookEndpointSecret{Endpoint: ex, Secret: "whsec_REPLACE_WITH_YOUR_SIGNING_SECRET"}
	exURL, exOverlap := "https://hooks.example.com/platform/v2", int64(86400)
	const refusal = " The URL must be https with no credentials, its host a public name (at most 2048 bytes) whose every address " +
		"is public, else 422 URL_NOT_ALLOWED with details.field url and details.reason (scheme, credentials, private_address " +
		"for loopback, private, link-local and cloud metadata addresses and names resolving to them, blocked_host, " +
		"host_spelling, malformed_url, url_too_long, unresolved_host); on a host started with the test-mode loopback option " +
		"(platform.Config.Webhooks.AllowTestLoopback, the example host's -webhook-allow-loopback), a test-environment " +
		"endpoint may also be http or https to a loopback address with its port (http://127.0.0.1:8765/hook), never a live one."
	const events = " enabledEvents names 1 to 64 distinct types of the event catalogue (webhook.test aside), or * alone; " +
		"anything else is 400 INVALID_INPUT with details.field enabledEvents[i] and details.reason (unknown_event_type, " +
		"duplicate, wildcard_not_alone)."
	endpoint := func(ctx context.Context, c *Call) (webhook.Endpoint, error) {
		return svc.Get(ctx, c.Tx, c.Principal, c.PathValue("endpointId"))
	}
	return []Route{
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/webhook-endpoints", OperationID: "listWebhookEndpoints",
			Summary: "List webhook endpoints",
			Description: "The webhook endpoints of the caller's workspace and environment, newest first, with cursor pagination. " +
				"Signing secrets are never returned.",
			Query: pageQuery("Y3Vyc29yOndoZV8wMWpk"), Response: WebhookEndpointPage{Items: []WebhookEndpointView{ex}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				items, more, next, err := transport.PageOf(c, webhook.EndpointPrefix, func(before string, n int) ([]webhook.Endpoint, error) {
					return svc.List(ctx, c.Tx, c.Principal, before, n)
				}, func(e webhook.Endpoint) string { return e.ID })
				if err != nil {
					return nil, err
				}
				page := WebhookEndpointPage{Items: []WebhookEndpointView{}, HasMore: more, NextCursor: next}
				for _, e := range items {
					page.Items = append(page.Items, webhookEndpointView(e))
				}
				return page, nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/webhook-endpoints", OperationID: "createWebhookEndpoint",
			Status: http.StatusCreated, OwnUnitOfWork: true, SealResponse: true,
			Summary: "Create a webhook endpoint",
			Description: "Registers an endpoint of the caller's workspace and environment that receives the events it subscribes " +
				"to, signed with a new secret. The secret is in this response only; an idempotent replay returns it again to " +
				"the same principal, from a record sealed at rest." + refusal + events + " A workspace holds at most 16 " +
				"endpoints per environment (enabled or disabled), else 409 CONFLICT with details.reason endpoint_limit. Writes the " +
				"outbox event webhook_endpoint.created.",
			Request:  CreateWebhookEndpointRequest{URL: ex.URL, EnabledEvents: ex.EnabledEvents, Description: ex.Description},
			Response: secret, Errors: []string{string(fault.URLNotAllowed), string(fault.Conflict)},
			Policy: Policy{Fresh: transport.FreshLive},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CreateWebhookEndpointRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				prep, err := svc.Prepare(ctx, c.Principal, webhook.CreateInput{URL: in.URL, EnabledEvents: in.EnabledEvents,
					Description: in.Description})
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					cr, err := svc.Create(ctx, tx, c.Principal, prep)
					if err != nil {
						return nil, err
					}
					return WebhookEndpointSecret{Endpoint: webhookEndpointView(cr.Endpoint), Secret: cr.Secret}, nil
				})
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/webhook-endpoints/{endpointId}", OperationID: "getWebhookEndpoint",
			Summary: "Get a webhook endpoint",
			Description: "An endpoint of the caller's workspace and environment; any other (another workspace's, the other " +
				"environment's, a deleted one) is 404. Its signing secret is never returned.",
			Response: ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				e, err := endpoint(ctx, c)
				if err != nil {
					return nil, err
				}
				return webhookEndpointView(e), nil
			}}),
		write(Route{Method: http.MethodPatch, Pattern: "/api/v1/webhook-endpoints/{endpointId}", OperationID: "updateWebhookEndpoint",
			OwnUnitOfWork: true,
			Summary:       "Update a webhook endpoint",
			Description: "Changes the URL, the subscribed events, the description, or disables (enabled false) or enables the " +
				"endpoint; absent fields are unchanged, and a change that changes nothing writes nothing. A disabled endpoint " +
				"receives nothing and its pending deliveries fail (endpoint_disabled) when their next attempt comes." + refusal +
				events + " Writes the outbox event webhook_endpoint.updated, its payload.changed naming the fields.",
			Request:  UpdateWebhookEndpointRequest{URL: &exURL},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.URLNotAllowed)},
			Policy: Policy{Fresh: transport.FreshLive},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in UpdateWebhookEndpointRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				prep, err := svc.PrepareUpdate(ctx, c.Principal, webhook.UpdateInput{URL: in.URL, EnabledEvents: in.EnabledEvents,
					Description: in.Description, Enabled: in.Enabled})
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					e, err := svc.Update(ctx, tx, c.Principal, c.PathValue("endpointId"), prep)
					if err != nil {
						return nil, err
					}
					return webhookEndpointView(e), nil
				})
			}}),
		write(Route{Method: http.MethodDelete, Pattern: "/api/v1/webhook-endpoints/{endpointId}", OperationID: "deleteWebhookEndpoint",
			Summary: "Delete a webhook endpoint",
			Description: "The endpoint receives nothing more, its pending deliveries fail (endpoint_deleted) when their next " +
				"attempt comes, its signing secrets are erased, and it disappears from reads. Writes the outbox event " +
				"webhook_endpoint.deleted.",
			Response: func() WebhookEndpointView { v := ex; v.Status = "deleted"; return v }(), Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				e, err := svc.Delete(ctx, c.Tx, c.Principal, c.PathValue("endpointId"))
				if err != nil {
					return nil, err
				}
				return webhookEndpointView(e), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/webhook-endpoints/{endpointId}/rotate-secret",
			OperationID: "rotateWebhookEndpointSecret", SealResponse: true,
			Summary: "Rotate a webhook endpoint's signing secret",
			Description: "Issues a new signing secret, in this response only (an idempotent replay returns it again to the same " +
				"principal, from a sealed record). The current secret keeps signing beside it for expireCurrentAfterSeconds " +
				"(default 24 hours, at most 7 days; 0 stops it at once): every attempt meanwhile, retries of earlier events " +
				"included, carries both signatures in webhook-signature, the new one first. A rotation during an overlap drops " +
				"the secret the earlier rotation kept. Writes the outbox event webhook_endpoint.secret_rotated.",
			Request: RotateWebhookSecretRequest{ExpireCurrentAfterSeconds: &exOverlap}, Response: secret,
			Errors: []string{string(fault.NotFound)}, Policy: Policy{Fresh: transport.FreshLive},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in RotateWebhookSecretRequest
				if len(c.Body()) > 0 {
					if err := c.Decode(&in); err != nil {
						return nil, err
					}
				}
				cr, err := svc.RotateSecret(ctx, c.Tx, c.Principal, c.PathValue("endpointId"),
					webhook.RotateInput{ExpireCurrentAfterSeconds: in.ExpireCurrentAfterSeconds})
				if err != nil {
					return nil, err
				}
				return WebhookEndpointSecret{Endpoint: webhookEndpointView(cr.Endpoint), Secret: cr.Secret}, nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/webhook-endpoints/{endpointId}/test", OperationID: "testWebhookEndpoint",
			Status:  http.StatusAccepted,
			Summary: "Send a test event to a webhook endpoint",
			Description: "Writes a webhook.test event of the endpoint and its delivery to this endpoint alone (whatever it " +
				"subscribes to), due at once and signed, retried and logged like any other. A disabled endpoint is 409 " +
				"INVALID_STATE_TRANSITION with details.reason endpoint_disabled.",
			Response: func() WebhookDeliveryView {
				v := exampleWebhookDelivery()
				v.EventType, v.Status, v.AttemptCount, v.Attempts = webhook.EventTypeTest, "pending", 0, []WebhookAttemptView{}
				v.NextAttemptAt = &v.CreatedAt
				return v
			}(),
			Errors: []string{string(fault.NotFound), string(fault.InvalidState)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				l, err := svc.SendTest(ctx, c.Tx, c.Principal, c.PathValue("endpointId"))
				if err != nil {
					return nil, err
				}
				woken(c.Tx)
				return webhookDeliveryView(l), nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/webhook-endpoints/{endpointId}/deliveries", OperationID: "listWebhookDeliveries",
			Summary: "List a webhook endpoint's deliveries",
			Description: "The endpoint's delivery log, newest first: each event's delivery with its status, next attempt and " +
				"every attempt (status code, latency, error class, a response excerpt of at most 1024 bytes). An endpoint the " +
				"caller's workspace and environment do not hold is 404.",
			Query: pageQuery("Y3Vyc29yOndoZF8wMWpk"), Response: WebhookDeliveryPage{Items: []WebhookDeliveryView{exampleWebhookDelivery()}},
			Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				items, more, next, err := transport.PageOf(c, webhook.DeliveryPrefix, func(before string, n int) ([]webhook.DeliveryLog, error) {
					return svc.Deliveries(ctx, c.Tx, c.Principal, c.PathValue("endpointId"), before, n)
				}, func(l webhook.DeliveryLog) string { return l.Delivery.ID })
				if err != nil {
					return nil, err
				}
				page := WebhookDeliveryPage{Items: []WebhookDeliveryView{}, HasMore: more, NextCursor: next}
				for _, l := range items {
					page.Items = append(page.Items, webhookDeliveryView(l))
				}
				return page, nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/redeliver",
			OperationID: "redeliverWebhookDelivery", Status: http.StatusAccepted,
			Summary: "Redeliver an event to a webhook endpoint",
			Description: "Asks for one more attempt, due at once, of a succeeded or failed delivery: a manual round of one " +
				"attempt with the same webhook-id, not retried. A delivery still pending is 409 INVALID_STATE_TRANSITION " +
				"(details.from pending); a disabled endpoint 409 INVALID_STATE_TRANSITION with details.reason " +
				"endpoint_disabled; a delivery of another endpoint, or an endpoint the caller's workspace and environment do not " +
				"hold, 404.",
			Response: func() WebhookDeliveryView {
				v := exampleWebhookDelivery()
				v.Status, v.NextAttemptAt = "pending", &v.UpdatedAt
				return v
			}(),
			Errors: []string{string(fault.NotFound), string(fault.InvalidState)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				l, err := svc.Redeliver(ctx, c.Tx, c.Principal, c.PathValue("endpointId"), c.PathValue("deliveryId"))
				if err != nil {
					return nil, err
				}
				woken(c.Tx)
				return webhookDeliveryView(l), nil
			}}),
	}
}
