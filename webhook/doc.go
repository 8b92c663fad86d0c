// Package webhook delivers the platform's outbox events to developers'
// endpoints: signed, retried over about three days, logged, replayable,
// and never to an address the platform may not call.
//
// The specification shows only the developer.webhook.read and
// developer.webhook.manage permissions (spec, Events 7); the routes and
// the wire follow Stripe's webhook endpoints and the Standard Webhooks
// specification (standardwebhooks.com, version 1.0.0).
//
// # Endpoints
//
// An endpoint belongs to one tenant, workspace and environment and
// receives that scope's events only, so a test event never reaches a
// live endpoint. It subscribes to event types of the platform's catalogue
// (the OpenAPI document lists them), or to "*" alone for all of them;
// webhook.test goes to the endpoint tested, whatever it subscribes to. A
// workspace holds at most Tuning.MaxEndpoints (16) endpoints per
// environment. The routes (package transport/api, webhooks.go):
//
//	GET    /api/v1/webhook-endpoints                                  list (developer.webhook.read)
//	POST   /api/v1/webhook-endpoints                                  create; the secret once (developer.webhook.manage)
//	GET    /api/v1/webhook-endpoints/{endpointId}                     read
//	PATCH  /api/v1/webhook-endpoints/{endpointId}                     url, enabledEvents, description, enabled
//	DELETE /api/v1/webhook-endpoints/{endpointId}                     delete
//	POST   /api/v1/webhook-endpoints/{endpointId}/rotate-secret       new secret once; the old one signs during the overlap
//	POST   /api/v1/webhook-endpoints/{endpointId}/test                a webhook.test event, delivered like any other
//	GET    /api/v1/webhook-endpoints/{endpointId}/deliveries          the delivery log
//	POST   /api/v1/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/redeliver
//
// Every route needs the DEVELOPER role and its permission (API keys: the
// webhooks:read and webhooks:write scopes); another workspace's or
// environment's endpoint is NOT_FOUND.
//
// # Secrets
//
// A signing secret is "whsec_" and the standard base64 of 32 random bytes
// (SecretPrefix, SecretBytes); the HMAC key is the decoded bytes. It is
// sealed at rest with AES-256-GCM (bound to the endpoint id and the
// secret's version) and returned once, by create and rotate-secret; their
// idempotency records are sealed too (transport.Route.SealResponse), so a
// replay returns it to the same principal without plaintext at rest. No
// read, event, log line or job payload carries it. Rotation keeps the
// current secret signing beside the new one for the overlap asked
// (default 24 hours, at most 7 days): every attempt in that time, retries
// of earlier events included, carries both signatures, the new one first.
// Deleting an endpoint erases its secrets.
//
// # Deliveries
//
// A delivery is one event's delivery to one endpoint, unique per pair. Its
// body is Message (the event's id, type, schemaVersion, aggregateId,
// aggregateVersion, occurredAt, environment, workspaceId and payload,
// which never carries a secret), POSTed with the Standard Webhooks
// headers: webhook-id (the event id, the same on every attempt and to
// every endpoint), webhook-timestamp (the attempt's Unix seconds) and
// webhook-signature ("v1," and the base64 HMAC-SHA256 of
// id.timestamp.body, one per signing secret, space-separated). Verify
// checks a delivery as a receiver should.
//
// An attempt succeeds on a 2xx answer. Any other status, a redirect
// (never followed), a timeout (Tuning.Timeout, 10 seconds, for the
// connection, the request and the answer's headers), a failed connection,
// or a URL the guard refuses at delivery is a failure; at most MaxExcerpt
// bytes of an answer's body are read and kept. A failed attempt of the
// automatic round is retried after RetrySchedule's delay, spread by ±10%
// jitter: 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 20 h,
// eleven attempts over about three days. When the last one fails the
// delivery fails, and when no delivery to the endpoint succeeded since
// this one began, the platform disables the endpoint (reason failing) and
// writes webhook_endpoint.disabled, which the workspace's other endpoints
// that subscribe to it receive. A 410 Gone answer fails the delivery and
// disables the endpoint at once (reason gone). A disabled or deleted
// endpoint's pending deliveries fail when their next attempt comes. A
// manual redelivery of a finished delivery makes one attempt, not
// retried. Retry-After headers are not read.
//
// # Order and concurrency
//
// Order is not guaranteed, as with Stripe: a retry is overtaken by later
// events. Each event carries its aggregate's version and its occurrence
// time, so a receiver orders what it must. Attempts are jobs of the
// outbound class (jobs.ClassOutbound) grouped by endpoint: one endpoint's
// attempts run one at a time across every host, and a slow or failing
// receiver holds back no other endpoint, nor generation or payments.
//
// # Several hosts
//
// Hosts on one PostgreSQL never make the same attempt twice. The job of
// an attempt is keyed by the delivery and its version, leased by one
// worker at a time (package jobs), and its claim is a compare-and-set of
// the delivery's version committed before anything is sent; the outcome
// is recorded by a second compare-and-set, beside a row unique per
// (delivery, attempt). A worker that stops after its claim and before its
// record (a crash, a lost lease) leaves the claim behind: the job's next
// run records that attempt interrupted, unknown whether it arrived, and
// plans the next one instead of sending it again. Delivery is therefore
// at least once, exactly once per attempt: receivers deduplicate by
// webhook-id.
//
// # Fan-out
//
// The fan-out (JobFanout, every Tuning.FanoutEvery, 1 second; Fanout)
// turns outbox events into deliveries. Outbox ids sort by the time of the
// unit of work that wrote them, taken when it began, but commit order is
// not id order: on PostgreSQL an event with a smaller id can commit after
// a reader passed it. So the fan-out keeps no "last id seen". Each pass
// reads, in id order, the events stamped no earlier than its cursor minus
// Tuning.FanoutWindow (2 minutes) that no pass has marked yet, of scopes
// that hold an endpoint; then the endpoints of their scopes (read after
// the events, so an endpoint whose creation committed before an event
// committed is seen with it); makes each matching pair's delivery (insert
// or nothing, unique per pair) and its first attempt's job; and marks the
// events. A pass that read less than a batch has caught up: it moves the
// cursor to the time it began, and forgets the marks of events stamped
// before the next window. An event that commits late is still inside the
// window of a later pass as long as its unit of work stayed open less
// than the window (less the clock skew between hosts); the platform's
// units of work last milliseconds. Passes on several hosts at once are
// harmless: each pair's delivery exists once, and its job's key is unique.
// An endpoint receives the events that occur from its creation on (by the
// platform's clock: OccurredAt no earlier than its CreatedAt); an event of
// a unit of work that overlaps the creation may or may not reach it.
//
// # The URL guard
//
// Endpoint URLs pass the URL guard (package urlguard, GuardConfig): https
// only, no credentials, a public host name or address; every address the
// name resolves to must be public. It is checked when the URL is set
// (create, update; URL_NOT_ALLOWED with the guard's reason, or
// unresolved_host) and again at every delivery, on a connection pinned to
// the addresses judged at that moment, so a name that resolves inward
// later (DNS rebinding) is refused then (error class url_refused, nothing
// sent). Tuning.AllowTestLoopback (the example host's
// -webhook-allow-loopback) also admits, for test-environment endpoints
// only, http or https to a loopback IP literal with an explicit port, so a
// person can receive test deliveries on their own machine; live endpoints
// never reach loopback, and no other private address passes.
package webhook
