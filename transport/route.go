package transport

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/idempotency"
)

// AuthMode says which credentials a route accepts.
type AuthMode string

const (
	// AuthPublic routes take no credential.
	AuthPublic AuthMode = "public"
	// AuthSession routes need a signed-in user (session cookie or access token).
	AuthSession AuthMode = "session"
	// AuthKey routes need a developer API key.
	AuthKey AuthMode = "key"
	// AuthSessionOrKey routes take either.
	AuthSessionOrKey AuthMode = "session_or_key"
	// AuthInternal routes need an API key holding the internal scope, issued
	// only by the host's operator.
	AuthInternal AuthMode = "internal"
)

// Idempotency says whether a route takes an Idempotency-Key header.
type Idempotency string

const (
	// IdempotencyNone routes ignore the header (reads, authentication routes).
	IdempotencyNone Idempotency = "none"
	// IdempotencyOptional routes honour the header when present.
	IdempotencyOptional Idempotency = "optional"
	// IdempotencyRequired routes answer 400 IDEMPOTENCY_KEY_REQUIRED without it.
	IdempotencyRequired Idempotency = "required"
)

// Maturity is a route's release maturity, as the spec defines it.
type Maturity string

const (
	// Preview is the default maturity of every route.
	Preview Maturity = "Preview"
	// Live routes are released for production use.
	Live Maturity = "Live"
	// Verified routes are released and verified end to end.
	Verified Maturity = "Verified"
)

// Param documents a query parameter.
type Param struct {
	Name        string
	Description string
	Required    bool
	// Example is a placeholder value of the right shape.
	Example string
}

// Route is one entry of the route table. The same entry registers the
// handler on the mux, runs the gateway, and writes the OpenAPI operation, the
// docs page and the client collection, so runtime and contract cannot drift.
type Route[T Tx] struct {
	// Method and Pattern, in net/http.ServeMux syntax without the method:
	// "/api/v1/api-keys/{keyId}". A trailing "{$}" is added for exact paths.
	Method  string
	Pattern string
	// OperationID is unique across the document (camelCase).
	OperationID string
	// Tag is the spec's functional area; Summary and Description document it.
	Tag         string
	Summary     string
	Description string
	// Auth, Permission and Scope are the gateway's access rules. Permission is a
	// resource.action identifier checked by the access evaluator for sessions;
	// Scope is the API key scope that admits a key.
	Auth       AuthMode
	Permission access.Permission
	Scope      string
	// Roles, when set, requires one of these workspace roles (for example the
	// developer portal needs DEVELOPER).
	Roles []access.Role
	// AnyMember admits every active member of the workspace (and every key
	// of it); routes such as the auth context need no permission.
	AnyMember bool
	// SuperAdmin requires the super_admin platform role.
	SuperAdmin bool
	// AlsoInternal admits, beside the callers Permission and Scope admit,
	// an API key holding the internal scope (the host's operator), as an
	// AuthInternal route does: without workspace membership, for any
	// record of the key's environment. The handler tells the two apart
	// with Principal.HasScope(access.ScopeInternal).
	AlsoInternal bool
	// Policy declares the access steps beyond who may call the route:
	// feature, entitlement, resource scope, workflow and extra
	// verification. The gateway evaluates them with the rest, in the
	// spec's order, before the handler runs.
	Policy Policy[T]
	// SignedIn admits any authenticated user without evaluating workspace
	// authority (account routes such as the session and onboarding, which a
	// user reaches before having a workspace).
	SignedIn bool
	// Idempotency says how the route treats Idempotency-Key.
	Idempotency Idempotency
	// SealResponse marks a response that carries a one-time secret: its
	// idempotency record is sealed with AES-256-GCM.
	SealResponse bool
	// Maturity defaults to Preview.
	Maturity Maturity
	// Internal routes (provider and payment callbacks) are registered but left
	// out of the public document; they verify raw bodies themselves.
	Internal bool
	// Private routes answer with Cache-Control: private, no-store.
	Private bool
	// OptionalAuth makes an AuthPublic route authenticate a credential when
	// the request carries one (an API key, access token or session cookie;
	// a bad one is refused as on any route) and set c.Principal, without
	// evaluating workspace authority; the key's limits apply. Such a
	// route answers for the caller's environment (anonymous callers see
	// live) and, when a principal is present, with Cache-Control: private,
	// no-store.
	OptionalAuth bool
	// Query documents query parameters.
	Query []Param
	// Headers documents request headers that carry part of the request
	// (a payment payload, say), as header parameters. Their values join
	// the idempotency request hash with the body, so the same
	// Idempotency-Key with another value of one of them is 409
	// IDEMPOTENCY_CONFLICT, never a replay of the first answer.
	Headers []Param
	// Request is a value of the request body type, filled with placeholder
	// examples; nil for routes without a body.
	Request any
	// Response is a value of the success data type, filled with placeholder
	// examples. It is wrapped in the success envelope.
	Response any
	// Status is the success status; zero means 200.
	Status int
	// ExistingStatus, when set, is a second success status the route
	// answers with the same body when the request finds the record it
	// would create already there (200 beside a 201); the document lists
	// it with ExistingText.
	ExistingStatus int
	ExistingText   string
	// Outcomes are statuses beside the success status that the route
	// answers with its success body, chosen per call with Call.SetStatus,
	// for an answer that is an outcome of the request rather than an
	// error: a 402 Payment Required that carries the payment's
	// requirements or its failed settlement. Each is documented with its
	// text and headers, and an idempotent request stores and replays it
	// as it does a success.
	Outcomes []Outcome
	// Errors lists the codes the route documents beyond the gateway's own.
	Errors []string
	// BodyLimit bounds the request body in bytes; zero means the default.
	BodyLimit int64
	// Stream routes read c.Request.Body themselves: the gateway does not
	// pre-read it, wraps it in http.MaxBytesReader at BodyLimit (a larger
	// Content-Length is 413 before any read), checks its Content-Type against
	// RequestContentTypes (415 otherwise) and, for a mutation, runs the handler
	// outside a transaction with c.Tx on the read pool: the handler calls
	// c.Commit once for its unit of work, which writes the durable receipt with
	// it. A stream route takes no Idempotency-Key (hashing the body would mean
	// buffering it); its Idempotency must be IdempotencyNone.
	Stream bool
	// OwnUnitOfWork mutations get their JSON body decoded as usual but run
	// outside a transaction, with c.Tx on the read pool: the handler calls
	// c.Commit once for its unit of work (the receipt is written with it),
	// and may return an error after committing. Authentication routes use it
	// so that password hashing never holds a transaction and a failed
	// login's throttle count is kept although the call fails. A route with
	// an Idempotency-Key commits with CommitResult.
	OwnUnitOfWork bool
	// LateReplay skips the read of a completed idempotency record before
	// the handler runs: a request with a key seen before is found when its
	// own record's insert meets the key (the unit of work rolls back and
	// the recorded answer is replayed), or, when the handler fails, by the
	// read then. The answer is the same as with the read first, one read
	// fewer on the usual path of a new key. Only for a handler with no
	// effect outside its unit of work, since a retry of a completed request
	// runs it again.
	LateReplay bool
	// EventStream, on an OwnUnitOfWork route, documents that the success
	// answer may instead be a stream of server-sent events
	// (text/event-stream) when the request asks for one: the text
	// describes the events (names and data shapes) for the document. The
	// handler streams through Call.Events.
	EventStream string
	// RequestContentTypes documents (and, for Stream routes, admits) a non-JSON
	// request body: each media type is a binary body, except
	// multipart/form-data, documented as an object with one binary field named
	// FormFileField.
	RequestContentTypes []string
	// FormFileField names the binary field of a multipart/form-data body.
	FormFileField string
	// ResponseContentTypes, when set, documents the success response as binary
	// content of these media types, written by a Writer the handler returns,
	// instead of the JSON envelope.
	ResponseContentTypes []string
	// ResponseHeaders documents headers of the success response beyond
	// X-Request-Id, by name (for example Set-Cookie), with their
	// descriptions. Handlers set them through Call.Header. An idempotent
	// request's record keeps the documented headers the handler set
	// (these and the Outcomes'), and a replay answers them again.
	ResponseHeaders map[string]string
	// Ranges documents a binary response that honours Range (206 Partial
	// Content; 416 RANGE_NOT_SATISFIABLE past the end) and If-None-Match
	// (304 Not Modified) with an ETag.
	Ranges bool
	// AdmitFunc, when set, runs first, before the body is read, the caller is
	// authenticated or a transaction opens, with the request and the
	// platform's time. It refuses requests by their origin (the account
	// routes' per-address rate) or by their shape (the creator routes'
	// wallet path parameter) so a refused request costs nothing more.
	AdmitFunc func(r *http.Request, now time.Time) error
	// Handle serves the route. Nil only for routes served by Raw.
	Handle HandlerFunc[T]
	// Raw serves routes outside the JSON gateway (docs assets, internal
	// receivers that verify the raw body).
	Raw http.Handler
	// Via, when set, is a broader pattern (same method) under which the mux
	// registers this route, because net/http.ServeMux cannot hold Pattern
	// itself beside a conflicting literal route (design.md, Router note: the
	// sale views are served via "/api/v1/token-sales/{saleId}/{view}"). The
	// route keeps its own Pattern for dispatch, path values, the OpenAPI
	// document and the collection; a path under Via that no such route
	// serves is answered 404 ROUTE_NOT_FOUND.
	Via string
	// Page marks a Raw route that serves an HTML page for people at a path
	// ending in "/" (the docs page, the client collection's landing page).
	// The OpenAPI document describes pages in info.description instead of
	// listing them as operations, whose paths never end in a slash; the
	// client collection keeps them.
	Page bool
}

// Outcome is a non-success status a route answers with its success body
// (Route.Outcomes).
type Outcome struct {
	// Status is the HTTP status, outside 2xx.
	Status int
	// Text describes the answer in the document.
	Text string
	// Headers documents the answer's headers beyond X-Request-Id, by
	// name, with their descriptions.
	Headers map[string]string
}

// ReplayedHeaders lists the response headers an idempotency record keeps
// of a call: every header the route documents for its answers
// (ResponseHeaders and each Outcome's Headers), canonicalized.
func (r Route[T]) ReplayedHeaders() []string {
	seen := map[string]bool{}
	var out []string
	add := func(m map[string]string) {
		for name := range m {
			k := http.CanonicalHeaderKey(name)
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	add(r.ResponseHeaders)
	for _, o := range r.Outcomes {
		add(o.Headers)
	}
	slices.Sort(out)
	return out
}

// Policy is the part of a route's access policy that the evaluator's steps
// 5, 6, 8, 9 and 10 check (spec, Authentication 5): declared here as data,
// evaluated by the gateway before the handler, never in a handler. Request
// functions read the call's principal, path values and body; the gateway
// calls them after authentication, so they never run for an anonymous or
// unauthorized caller.
type Policy[T Tx] struct {
	// Feature is a feature flag that must be on for the workspace
	// (step 5, FEATURE_DISABLED).
	Feature string
	// Entitlement is an entitlement the workspace must hold (step 6,
	// ENTITLEMENT_REQUIRED, or SUBSCRIPTION_REQUIRED for a workspace
	// without a paid plan that a paid plan would give it).
	Entitlement string
	// EntitlementFunc, for a route whose entitlement depends on what the
	// request asks (high-resolution output), returns the entitlement this
	// request needs, or "". It reads the raw body leniently: a body it
	// cannot read needs nothing here, and the handler's strict decoding
	// reports it. A route sets Entitlement or EntitlementFunc, not both.
	EntitlementFunc func(c *Call[T]) string
	// ScopesFunc returns scopes this request needs beyond the route's
	// (providers:select for a generation that chooses its providers),
	// checked at the permission step (access.Input.ExtraScopes).
	ScopesFunc func(c *Call[T]) []string
	// ResourceFunc loads the resource the call acts on, for the resource-scope
	// step (own, assigned and project grants). It returns NOT_FOUND for a
	// resource the caller's workspace and environment do not hold.
	ResourceFunc func(ctx context.Context, c *Call[T]) (*access.Resource, error)
	// TransitionFunc checks that the workflow transition the call attempts is
	// in its state table from the resource's current state (step 9,
	// INVALID_STATE_TRANSITION whatever the caller's role). The domain
	// still compare-and-sets the state when it moves it.
	TransitionFunc func(ctx context.Context, c *Call[T]) error
	// Fresh requires a recent sign-in of session principals (step 10,
	// REAUTHENTICATION_REQUIRED).
	Fresh Freshness
	// FreshEnvironmentFunc, with FreshLive, returns the environment the
	// request acts in when its body names one (a key created in live from
	// a test-mode session); "" means the principal's.
	FreshEnvironmentFunc func(c *Call[T]) access.Environment
	// Note says in a sentence, for the document, what the request
	// functions require (EntitlementFunc, ScopesFunc): the data they read
	// cannot be shown otherwise.
	Note string
}

// Codes returns the error codes the policy's steps can answer.
func (p Policy[T]) Codes() []fault.Code {
	var out []fault.Code
	if p.Feature != "" {
		out = append(out, fault.FeatureDisabled)
	}
	if p.Entitlement != "" || p.EntitlementFunc != nil {
		out = append(out, fault.EntitlementRequired, fault.SubscriptionRequired)
	}
	if p.ResourceFunc != nil || p.TransitionFunc != nil {
		out = append(out, fault.NotFound)
	}
	if p.TransitionFunc != nil {
		out = append(out, fault.InvalidState)
	}
	if p.Fresh != FreshNever {
		out = append(out, fault.ReauthenticationRequired)
	}
	return out
}

// Extension returns the policy as the document's x-policy object, nil when
// it declares nothing.
func (p Policy[T]) Extension() map[string]any {
	out := map[string]any{}
	if p.Feature != "" {
		out["feature"] = p.Feature
	}
	if p.Entitlement != "" {
		out["entitlement"] = p.Entitlement
	}
	if p.EntitlementFunc != nil {
		out["entitlement"] = "per request"
	}
	if p.ScopesFunc != nil {
		out["scopes"] = "per request"
	}
	if p.ResourceFunc != nil {
		out["resourceScope"] = true
	}
	if p.TransitionFunc != nil {
		out["workflow"] = true
	}
	if p.Fresh != FreshNever {
		out["freshSignIn"] = string(p.Fresh)
	}
	if p.Note != "" {
		out["note"] = p.Note
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Rules returns the policy's access rules for the operation's description.
func (p Policy[T]) Rules() []string {
	var out []string
	if p.Feature != "" {
		out = append(out, "**Feature:** `"+p.Feature+"` on (403 FEATURE_DISABLED)")
	}
	if p.Entitlement != "" {
		out = append(out, "**Entitlement:** `"+p.Entitlement+"` (403 SUBSCRIPTION_REQUIRED on a workspace without a paid plan that a paid plan would give it, else ENTITLEMENT_REQUIRED)")
	}
	if p.ResourceFunc != nil {
		out = append(out, "**Resource scope:** the grant must reach the resource (own, assigned, project or workspace)")
	}
	if p.TransitionFunc != nil {
		out = append(out, "**Workflow:** the move must be in the resource's state table (409 INVALID_STATE_TRANSITION)")
	}
	switch p.Fresh {
	case FreshSession:
		out = append(out, "**Fresh sign-in:** sessions need a recent sign-in (401 REAUTHENTICATION_REQUIRED)")
	case FreshLive:
		out = append(out, "**Fresh sign-in:** sessions acting in live need a recent sign-in (401 REAUTHENTICATION_REQUIRED)")
	}
	if p.Note != "" {
		out = append(out, p.Note)
	}
	return out
}

// Freshness says when a route needs a recent sign-in (the gateway's fresh
// window, 10 minutes unless configured). API-key principals are never
// subject to it: a key cannot sign in again, and its scopes bound it.
type Freshness string

const (
	// FreshNever needs no recent sign-in.
	FreshNever Freshness = ""
	// FreshSession needs a recent sign-in of every session principal, in
	// both environments (provider credential mutations).
	FreshSession Freshness = "session"
	// FreshLive needs a recent sign-in of session principals acting in the
	// live environment (live API key creation, rotation and revocation).
	FreshLive Freshness = "live"
)

// HandlerFunc serves one call. It returns the data of the success envelope,
// or an error whose fault.Code decides the status. Data that implements
// Writer writes the response itself.
type HandlerFunc[T Tx] func(ctx context.Context, c *Call[T]) (any, error)

// Writer is a handler's result that writes a non-JSON response (binary
// content, 304 Not Modified). The gateway has set X-Request-Id and the
// handler's headers (Call.Header) before it calls WriteResponse; failures
// found before that point are errors of the handler and use the error
// envelope. WriteResponse returns the status it wrote, for the request log.
type Writer interface {
	WriteResponse(w http.ResponseWriter, r *http.Request) int
}

// Call is one request as a handler sees it: the resolved principal, the path
// values, the decoded body and the unit of work to run in.
type Call[T Tx] struct {
	// Principal is the authenticated caller; nil on public routes.
	Principal *access.Principal
	// Authority is the principal's authority snapshot (for a key, its
	// creator's, loaded on this request); nil on public routes.
	Authority *access.Authority
	// RequestID is the request's id, echoed in X-Request-Id and meta.requestId.
	RequestID string
	// Tx is the unit of work: a transaction for mutations (committed with the
	// idempotency record and the receipt when the handler succeeds), the read
	// pool for reads.
	Tx T
	// Request is the underlying HTTP request (headers, query).
	Request *http.Request
	// body is the raw request body, already bounded by the route's limit.
	body []byte
	// fields resolves the JSON keys of the route's request bodies.
	fields *fieldIndex
	// status, when set by the handler, overrides Route.Status.
	status int
	// timestamp, when set by the handler, is written as meta.timestamp.
	timestamp time.Time
	// header collects response headers set by the handler.
	header http.Header
	// key is the authenticated API key, for its limits.
	key apikey.Key
	// commitFunc runs the unit of work of a Stream mutation; committed records
	// that it succeeded.
	commitFunc func(ctx context.Context, fn func(tx T) (any, error)) (any, error)
	committed  bool
	// events is the answer's event stream on a route with EventStream.
	events *EventStream
}

// Commit runs fn as the unit of work of a Stream or OwnUnitOfWork mutation:
// one transaction,
// with the durable request receipt, committed when fn succeeds; c.Tx is the
// transaction inside fn and the read pool outside. Such a mutation calls it
// exactly once; other calls already run in their unit of work and get an
// error.
func (c *Call[T]) Commit(ctx context.Context, fn func(tx T) error) error {
	_, err := c.commitResult(ctx, func(tx T) (any, error) { return nil, fn(tx) })
	return err
}

// CommitResult is Commit for routes that take an Idempotency-Key: fn's
// result is the response, stored with the idempotency record in the same
// transaction, so a retry replays exactly what was committed. When another
// request committed the same key first, CommitResult returns an error the
// gateway turns into that request's replay; the handler returns it as is.
func (c *Call[T]) CommitResult(ctx context.Context, fn func(tx T) (any, error)) (any, error) {
	return c.commitResult(ctx, fn)
}

func (c *Call[T]) commitResult(ctx context.Context, fn func(tx T) (any, error)) (any, error) {
	if c.commitFunc == nil {
		return nil, errors.New("transport: Call.Commit is only for Stream and OwnUnitOfWork mutations")
	}
	if c.committed {
		return nil, errors.New("transport: Call.Commit called twice")
	}
	return c.commitFunc(ctx, fn)
}

// Body returns the raw request body, already bounded by the route's limit
// (empty for Stream routes, whose handlers read Request.Body).
func (c *Call[T]) Body() []byte { return c.body }

// Committed reports whether the call's own unit of work (Commit,
// CommitResult) has committed.
func (c *Call[T]) Committed() bool { return c.committed }

// PathValue returns the named path wildcard.
func (c *Call[T]) PathValue(name string) string { return c.Request.PathValue(name) }

// Query returns the named query parameter.
func (c *Call[T]) Query(name string) string { return c.Request.URL.Query().Get(name) }

// SetStatus overrides the route's success status for this call.
func (c *Call[T]) SetStatus(code int) { c.status = code }

// SetTimestamp makes the success envelope carry meta.timestamp t (a read
// whose record the spec stamps, such as the network topology).
func (c *Call[T]) SetTimestamp(t time.Time) { c.timestamp = t.UTC() }

// Header returns the response headers the handler may set.
func (c *Call[T]) Header() http.Header {
	if c.header == nil {
		c.header = http.Header{}
	}
	return c.header
}

// Tx is a unit of work as the engine sees it: what authentication, the
// limits and the request records (idempotency, receipts) need of it. The
// route table instantiates the engine with its own, wider interface, which
// also holds every domain's port, so a handler passes its call's Tx to a
// domain service as that domain's port.
type Tx interface {
	apikey.AuthStore
	account.SessionStore
	access.Store
	UsageStore
	// NewID returns a new id with prefix.
	NewID(prefix string) string
	// IdempotencyGet returns the record of key at endpoint in scope
	// (idempotency.ErrNotFound when none).
	IdempotencyGet(ctx context.Context, s idempotency.Scope, endpoint, key string) (idempotency.Record, error)
	// IdempotencyInsertLater stores a completed record with the unit of
	// work; taken is returned when the key is already recorded.
	IdempotencyInsertLater(ctx context.Context, r idempotency.Record, taken error) error
	// ReceiptInsert stores a request receipt with the unit of work.
	ReceiptInsert(ctx context.Context, r idempotency.Receipt) error
	// AfterCommit registers fn to run once the unit of work has committed
	// (waking workers for work it enqueued); never on a rollback.
	AfterCommit(fn func())
}

// Clock tells the time.
type Clock interface {
	// Now is the current time.
	Now() time.Time
}

// Store runs the units of work of calls: a transaction for a mutation,
// the read pool for a read.
type Store[T Tx] interface {
	// InTx runs fn in one transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(T) error) error
	// Read returns the read pool as a unit of work.
	Read() T
	// ReadAhead returns the read pool as a unit of work whose credential
	// lookups answer from memory without waiting for other hosts' changes,
	// and confirm, which reports whether they were up to date as of the
	// call (else the caller looks again through Read); see
	// store.DB.ReadAhead.
	ReadAhead() (T, func(ctx context.Context) (bool, error))
	// Now is the platform's current time.
	Now() time.Time
}
