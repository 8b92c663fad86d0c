package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// DefaultSessionCookie is the session cookie name documented when
// Info.SessionCookie is empty.
const DefaultSessionCookie = "platform_session"

// Info describes the document as a whole.
type Info struct {
	// Title defaults to "platform API".
	Title string
	// Version is info.version; it defaults to ContractVersion.
	Version string
	// Description is Markdown shown above the operations.
	Description string
	// Servers are base URLs such as "http://127.0.0.1:8080".
	Servers []string
	// SessionCookie names the session cookie in the sessionCookie security
	// scheme; empty means DefaultSessionCookie.
	SessionCookie string
	// IdempotencyRetention is how long the host keeps idempotency records
	// (platform.Config.IdempotencyRetention); zero leaves it unstated.
	IdempotencyRetention time.Duration
	// Callbacks are the timestamp windows of the configured music
	// providers' callbacks, in the order to list them.
	Callbacks []CallbackWindow
	// Events is the catalogue of outbox event types the platform emits.
	Events []EventType
	// RateLimits, when set, are the request limits the host enforces
	// (Limiter), stated in info.description and as x-rate-limits.
	RateLimits *RateLimits
	// Realtime, when set, is the Markdown section describing the realtime
	// WebSocket endpoint (its channels, messages and close codes), which
	// is not an operation: info.description carries it before Events.
	Realtime string
}

// RateLimits are the request limits a host enforces, for the document.
type RateLimits struct {
	// Sessions are the limits of sessions and access tokens per user and
	// per workspace.
	Sessions transport.SessionLimits
	// KeyDefaults are the limits of a new API key that names none.
	KeyDefaults apikey.Limits
}

// CallbackWindow is how far a provider callback's signed timestamp may be
// from the receiving host's clock, in either direction, for the callback to
// be accepted.
type CallbackWindow struct {
	// Provider is the provider route id, such as MUSIC_PROVIDER_A.
	Provider string `json:"provider"`
	// Environment is test or live.
	Environment string `json:"environment"`
	// Skew is the window's half-width.
	Skew time.Duration `json:"-"`
}

// EventType is one row of the outbox event catalogue: an event type the
// platform writes, its payload's schema version and the aggregate whose id
// the event's aggregateId holds.
type EventType struct {
	// Type is the event's type string, as in outbox events' type.
	Type string `json:"type"`
	// SchemaVersion is the version of the payload's shape.
	SchemaVersion int `json:"schemaVersion"`
	// Aggregate names the aggregate, such as "generation operation".
	Aggregate string `json:"aggregate"`
	// AggregateIDPrefix is the prefix of the aggregate's ids, such as "op_".
	AggregateIDPrefix string `json:"aggregateIdPrefix"`
	// Description says when the event is written.
	Description string `json:"description"`
}

//go:generate go run ./internal/fielddoc/cmd/fielddoc -from ../api -o fielddoc_gen.go

// OpenAPI returns the OpenAPI 3.1.0 document of the table as indented JSON.
//
// Every route that is neither Internal nor a Page is an operation; pages are
// described in info.description, beside the rules decided in code (see the
// package doc, The document). Without Info.Servers the one server is "/",
// the host that serves the document. A gateway route (Raw ==
// nil) gets its path, query and Idempotency-Key parameters, a request body
// reflected from Route.Request, a success response wrapping Route.Response in
// the {data, meta} envelope, and one error response per status the gateway
// and Route.Errors can produce, each listing its codes from the same status
// table the runtime uses. A Raw route is documented as returning text/html,
// or, when it sets Response, JSON of Response's type without an envelope.
//
// Schemas are reflected from Go types through their json tags: a field
// without omitempty (or omitzero) is required; pointers, slices and maps that
// may encode as null are nullable; time.Time is a date-time string and
// []byte a base64 string. A field's description is its Go doc comment
// (fieldDocs, generated), unless a doc:"..." tag gives one; example:"..."
// sets its example and enum:"a,b" lists allowed strings. A
// nil pointer as Route.Response documents nullable data. The filled values of
// Route.Request and Route.Response become the media-type examples. Named
// struct types become components named after the type, qualified by package
// when two packages share a name. The output is deterministic.
func OpenAPI[T transport.Tx](routes []transport.Route[T], info Info) ([]byte, error) {
	var docs, pages []transport.Route[T]
	for _, r := range documented(routes) {
		if r.Page {
			pages = append(pages, r)
		} else {
			docs = append(docs, r)
		}
	}
	g := newSchemaGen(docTypes(docs), fieldPatches(info))
	paths := map[string]map[string]any{}
	for _, r := range docs {
		p := openAPIPath(r.Pattern)
		if strings.HasSuffix(p, "/") {
			return nil, fmt.Errorf("transport: openapi: route %s: operation path %s ends in a slash; a page for people sets Route.Page", r.OperationID, p)
		}
		op, err := operation(g, r, info)
		if err != nil {
			return nil, fmt.Errorf("transport: openapi: route %s: %w", r.OperationID, err)
		}
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		m := strings.ToLower(r.Method)
		if _, dup := paths[p][m]; dup {
			return nil, fmt.Errorf("transport: openapi: route %s: %s %s documented twice", r.OperationID, r.Method, p)
		}
		paths[p][m] = op
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info":    infoObject(info, pages),
		"servers": serverObjects(info),
		"tags":    tagObjects(),
		"paths":   paths,
		"components": map[string]any{
			"schemas":         g.components(),
			"securitySchemes": securitySchemes(info),
		},
		"x-api-key-scopes": scopeObjects(),
	}
	if len(info.Events) > 0 {
		doc["x-event-catalogue"] = info.Events
	}
	if len(info.Callbacks) > 0 {
		var cbs []map[string]any
		for _, c := range info.Callbacks {
			cbs = append(cbs, map[string]any{"provider": c.Provider, "environment": c.Environment, "skewSeconds": int64(c.Skew / time.Second)})
		}
		doc["x-provider-callbacks"] = cbs
	}
	if info.IdempotencyRetention > 0 {
		doc["x-idempotency-retention-seconds"] = int64(info.IdempotencyRetention / time.Second)
	}
	if rl := info.RateLimits; rl != nil {
		doc["x-rate-limits"] = map[string]any{"apiKeyDefaults": rl.KeyDefaults, "sessionUser": rl.Sessions.User,
			"sessionWorkspace": rl.Sessions.Workspace}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("transport: openapi: encode: %w", err)
	}
	return append(b, '\n'), nil
}

// documented returns the routes the public document and collection show.
func documented[T transport.Tx](routes []transport.Route[T]) []transport.Route[T] {
	var out []transport.Route[T]
	for _, r := range routes {
		if !r.Internal {
			out = append(out, r)
		}
	}
	return out
}

// docTypes returns the Go types the document reflects.
func docTypes[T transport.Tx](routes []transport.Route[T]) []reflect.Type {
	out := []reflect.Type{reflect.TypeFor[transport.ErrorEnvelope]()}
	for _, r := range routes {
		for _, v := range []any{r.Request, r.Response} {
			if v != nil {
				out = append(out, reflect.TypeOf(v))
			}
		}
	}
	return out
}

// serverObjects returns info's servers, or the one relative server "/"
// (the host that serves the document) when info names none.
func serverObjects(info Info) []map[string]any {
	if len(info.Servers) == 0 {
		return []map[string]any{{"url": "/", "description": "The host that serves this document."}}
	}
	var out []map[string]any
	for _, s := range info.Servers {
		out = append(out, map[string]any{"url": s})
	}
	return out
}

// scopeObjects returns the API key scope table (access.Scopes) as the
// document's x-api-key-scopes: each scope with the permissions it stands
// for.
func scopeObjects() []map[string]any {
	var out []map[string]any
	for _, s := range access.Scopes() {
		perms := make([]string, 0, len(s.Permissions))
		for _, p := range s.Permissions {
			perms = append(perms, string(p))
		}
		out = append(out, map[string]any{"scope": s.Scope, "permissions": perms})
	}
	return out
}

// contractSections returns the Markdown sections of info.description that
// state the contract's rules decided in code: pages, request bodies,
// idempotency, rate limits, API key scopes, provider callbacks, the
// realtime endpoint and events.
func contractSections[T transport.Tx](info Info, pages []transport.Route[T]) string {
	var b strings.Builder
	if len(pages) > 0 {
		b.WriteString("## Pages\n\nPages for people, served as HTML beside the operations (not operations themselves):\n\n")
		for _, p := range pages {
			fmt.Fprintf(&b, "- `%s %s`: %s. %s\n", p.Method, p.Pattern, p.Summary, strings.TrimSpace(p.Description))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## Request bodies\n\nA JSON request body is at most %s unless its operation says otherwise "+
		"(`x-body-limit`, in bytes); a larger body is 413 PAYLOAD_TOO_LARGE. A request must arrive, and its answer be "+
		"taken, within the host's read and write timeouts; uploads (operations that stream their body) and content "+
		"downloads have deadlines of their own instead: %s plus %d seconds per MiB of the operation's `x-body-limit` "+
		"(uploads) or of the content (downloads), a floor of %d KiB/s.\n\n", byteSize(transport.DefaultBodyLimit),
		transport.HumanDuration(transport.TransferGrace), (1<<20)/transport.MinTransferRate, transport.MinTransferRate>>10)
	b.WriteString("## Idempotency\n\nOperations marked `x-idempotency: required` or `optional` take an `Idempotency-Key` header. " +
		"A retry with the same key and the same request replays the first response (header `Idempotent-Replayed: true`); " +
		"the same key with another request, or from another principal, is 409 IDEMPOTENCY_CONFLICT.")
	if info.IdempotencyRetention > 0 {
		fmt.Fprintf(&b, " Records are kept for %s (`x-idempotency-retention-seconds`); a key reused after that starts a new request.",
			transport.HumanDuration(info.IdempotencyRetention))
	}
	b.WriteString("\n\n## Authentication failures\n\nA 401 names the credential that failed and why: `details.credential` is " +
		"`api_key`, `access_token`, `session` or `none` (nothing was sent), and `details.reason` is `missing`, `malformed`, " +
		"`unknown`, `revoked` or `deleted` (an API key), `signed_out` (a session, or the session of an access token) or " +
		"`expired`. An expired credential is SESSION_EXPIRED whatever its kind (an API key's secret rotated out and past its " +
		"overlap, a session, an access token); every other failure is UNAUTHENTICATED. The presented credential is never echoed.")
	if rl := info.RateLimits; rl != nil {
		b.WriteString("\n\n")
		rateLimitSection(&b, *rl)
	}
	b.WriteString("\n\n## API key scopes\n\nAn API key's authority is its scopes; a key may call an operation only if it holds the " +
		"operation's `x-scope`. Each scope stands for these permissions (`x-api-key-scopes`):\n\n| Scope | Permissions |\n|---|---|\n")
	for _, s := range access.Scopes() {
		perms := make([]string, 0, len(s.Permissions))
		for _, p := range s.Permissions {
			perms = append(perms, "`"+string(p)+"`")
		}
		note := ""
		if s.Scope == access.ScopeInternal {
			note = " (issued only by the host's operator; never grantable through the API)"
		}
		fmt.Fprintf(&b, "| `%s`%s | %s |\n", s.Scope, note, strings.Join(perms, ", "))
	}
	if len(info.Callbacks) > 0 {
		b.WriteString("\n## Provider callbacks\n\nMusic providers report progress by signed callbacks to the platform. A callback " +
			"is accepted only when its signature verifies in constant time and its signed timestamp is within the provider's " +
			"window of the receiving host's clock, in either direction (`x-provider-callbacks`):\n\n| Provider | Environment | Window |\n|---|---|---|\n")
		for _, c := range info.Callbacks {
			fmt.Fprintf(&b, "| %s | %s | ±%s |\n", c.Provider, c.Environment, transport.HumanDuration(c.Skew))
		}
		b.WriteString("\nA callback is believed only as far as its signature reaches. MUSIC_PROVIDER_B signs the timestamp and the " +
			"raw body, so its verified callback is merged as delivered. MUSIC_PROVIDER_A signs only the task id and the " +
			"timestamp, so its callback is a notification: the platform confirms the task through the provider's " +
			"authenticated record query (once per claimed stage) and takes the stage, tracks, audio URLs and durations " +
			"from that record only; nothing in an A callback's body is merged or fetched. Every media URL, and every " +
			"redirect it leads to, passes the platform's URL guard (no loopback, private, link-local or metadata " +
			"address), with bounded size and time.\n")
	}
	if rt := strings.TrimSpace(info.Realtime); rt != "" {
		b.WriteString("\n" + rt + "\n")
	}
	if len(info.Events) > 0 {
		b.WriteString("\n## Events\n\nThe platform writes these outbox events in the transaction of the change they record " +
			"(`x-event-catalogue`); publishers read them through the internal outbox routes.\n\n" +
			"| Type | Schema version | Aggregate (id prefix) | Written when |\n|---|---|---|---|\n")
		for _, e := range info.Events {
			fmt.Fprintf(&b, "| `%s` | %d | %s (`%s`) | %s |\n", e.Type, e.SchemaVersion, e.Aggregate, e.AggregateIDPrefix, e.Description)
		}
	}
	return b.String()
}

// rateLimitSection writes the Rate limits section of info.description.
func rateLimitSection(b *strings.Builder, rl RateLimits) {
	b.WriteString("## Rate limits\n\nEvery authenticated request counts against the limits of its credential (`x-rate-limits`): " +
		"an API key against its own `limits` (set per key), a session or session-bound access token against those of its user " +
		"(all the user's sessions and access tokens together) and of the workspace it acts in (all its users' sessions and " +
		"access tokens together); it is admitted only when every one of them admits it. A request past a limit is 429 " +
		"RATE_LIMITED with `Retry-After` (seconds), `details.retryAfter` and `details.limit` (`requestsPerMinute`, " +
		"`maxConcurrentRequests` or `monthlyRequestBudget`), and for sessions and access tokens `details.subject` (`user` " +
		"or `workspace`). Every answer to an authenticated request carries `RateLimit-Limit`, `RateLimit-Remaining` and " +
		"`RateLimit-Reset` (seconds until the per-minute allowance is whole again) of the limit closest to refusing.\n\n" +
		"| Credential | Counted per | Requests per minute | Concurrent requests | Requests per month (UTC) |\n|---|---|---|---|---|\n")
	row := func(cred, per string, l apikey.Limits) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", cred, per, groupDigits(int64(l.RequestsPerMinute)),
			groupDigits(int64(l.MaxConcurrentRequests)), groupDigits(l.MonthlyRequestBudget))
	}
	row("API key", "key (a new key's defaults)", rl.KeyDefaults)
	row("Session or access token", "user", rl.Sessions.User)
	row("Session or access token", "workspace", rl.Sessions.Workspace)
	b.WriteString("\nThe per-minute rate is a token bucket refilled continuously. Rates and concurrency are enforced by each " +
		"host, so a deployment of N hosts admits up to N times those two; monthly budgets are counted in the database, " +
		"across hosts and restarts, and a new month starts a new budget. An API key's requests do not count against its " +
		"user's or workspace's session limits.")
}

// groupDigits writes n with thousands separators: 1,000,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + groupDigits(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// byteSize writes n bytes as "1048576 bytes (1 MiB)".
func byteSize(n int64) string {
	s := strconv.FormatInt(n, 10) + " bytes"
	if n >= 1<<20 && n%(1<<20) == 0 {
		return s + " (" + strconv.FormatInt(n>>20, 10) + " MiB)"
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return s + " (" + strconv.FormatInt(n>>10, 10) + " KiB)"
	}
	return s
}

// infoObject returns the document's info object with the contract's
// sections and the error-code table appended to the description.
func infoObject[T transport.Tx](info Info, pages []transport.Route[T]) map[string]any {
	title := info.Title
	if title == "" {
		title = "platform API"
	}
	version := info.Version
	if version == "" {
		version = transport.ContractVersion
	}
	desc := strings.TrimSpace(info.Description)
	if desc != "" {
		desc += "\n\n"
	}
	desc += contractSections(info, pages) + "\n"
	desc += "## Error codes\n\nFailures answer `{\"error\": {\"code\", \"message\", \"details\"}, \"meta\": {\"requestId\"}}`. " +
		"Clients branch on `error.code`; each code has one HTTP status.\n"
	byStatus := transport.CodeDescriptions()
	statuses := make([]int, 0, len(byStatus))
	for s := range byStatus {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	for _, s := range statuses {
		desc += "\n### " + strconv.Itoa(s) + " " + http.StatusText(s) + "\n\n" + transport.DescribeCodes(byStatus[s]) + "\n"
	}
	return map[string]any{"title": title, "version": version, "description": desc}
}

// tagObjects returns the document's tags with their contract versions.
func tagObjects() []map[string]any {
	var out []map[string]any
	for _, t := range transport.Tags() {
		out = append(out, map[string]any{
			"name":               t.Name,
			"description":        t.Description + " Contract version " + t.ContractVersion + ".",
			"x-contract-version": t.ContractVersion,
		})
	}
	return out
}

// securitySchemes returns the two credential schemes.
func securitySchemes(info Info) map[string]any {
	cookie := info.SessionCookie
	if cookie == "" {
		cookie = DefaultSessionCookie
	}
	return map[string]any{
		"bearerAuth": map[string]any{
			"type":   "http",
			"scheme": "bearer",
			"description": "`Authorization: Bearer <credential>`: a developer API key (`platform_test_...` in the test " +
				"environment, `platform_live_...` in live) or a session access token (`platform_at_...`). The access " +
				"token is this API's reading of the spec's \"access token\": a session-bound user credential, not an " +
				"application credential. POST /api/v1/auth/login returns it with the session cookie for clients without " +
				"cookies; it lasts one hour, acts with the signed-in user's authority, and is revoked with its session " +
				"(logout, revoke-others, password reset).",
		},
		"sessionCookie": map[string]any{
			"type":        "apiKey",
			"in":          "cookie",
			"name":        cookie,
			"description": "The signed, HTTP-only session cookie of the web and studio apps.",
		},
	}
}

// securityOf returns an operation's security requirements.
func securityOf(a transport.AuthMode) []map[string][]string {
	bearer := map[string][]string{"bearerAuth": {}}
	cookie := map[string][]string{"sessionCookie": {}}
	switch a {
	case transport.AuthSession, transport.AuthSessionOrKey:
		return []map[string][]string{cookie, bearer}
	case transport.AuthKey, transport.AuthInternal:
		return []map[string][]string{bearer}
	}
	return []map[string][]string{}
}

// routeSecurity is securityOf the route's mode; an OptionalAuth public
// route also admits the two credentials (the empty requirement first:
// anonymous calls are allowed).
func routeSecurity[T transport.Tx](r transport.Route[T]) []map[string][]string {
	if r.Auth == transport.AuthPublic && r.OptionalAuth {
		return append([]map[string][]string{{}}, securityOf(transport.AuthSessionOrKey)...)
	}
	return securityOf(r.Auth)
}

var wildcard = regexp.MustCompile(`\{([^{}]*)\}`)

// openAPIPath turns a mux pattern into an OpenAPI path: "{rest...}" becomes
// "{rest}" and "{$}" is dropped.
func openAPIPath(pattern string) string {
	return wildcard.ReplaceAllStringFunc(pattern, func(m string) string {
		name := strings.TrimSuffix(m[1:len(m)-1], "...")
		if name == "$" {
			return ""
		}
		return "{" + name + "}"
	})
}

// operation builds one operation object.
func operation[T transport.Tx](g *schemaGen, r transport.Route[T], info Info) (map[string]any, error) {
	if !slices.ContainsFunc(transport.Tags(), func(t transport.TagInfo) bool { return t.Name == r.Tag }) {
		return nil, fmt.Errorf("unknown tag %q", r.Tag)
	}
	op := map[string]any{
		"operationId":   r.OperationID,
		"tags":          []string{r.Tag},
		"summary":       r.Summary,
		"description":   operationDescription(r),
		"security":      routeSecurity(r),
		"x-maturity":    string(maturityOf(r)),
		"x-auth":        string(r.Auth),
		"x-idempotency": string(idempotencyOf(r)),
	}
	if r.Permission != "" {
		op["x-permission"] = string(r.Permission)
	}
	if r.Scope != "" {
		op["x-scope"] = r.Scope
	}
	if len(r.Roles) > 0 {
		op["x-roles"] = r.Roles
	}
	if x := r.Policy.Extension(); x != nil {
		op["x-policy"] = x
	}
	if params := parameters(r, info); len(params) > 0 {
		op["parameters"] = params
	}
	if r.Raw != nil {
		op["responses"] = rawResponses(g, r)
		return op, nil
	}
	if r.Request != nil {
		body, err := mediaType(g, r.Request, false)
		if err != nil {
			return nil, fmt.Errorf("request: %w", err)
		}
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": body}}
	}
	if len(r.RequestContentTypes) > 0 {
		op["requestBody"] = binaryRequestBody(r)
	}
	if body, ok := op["requestBody"].(map[string]any); ok {
		limit := bodyLimitOf(r)
		body["description"] = "At most " + byteSize(limit) + "; a larger body is 413 PAYLOAD_TOO_LARGE."
		op["x-body-limit"] = limit
	}
	responses, err := gatewayResponses(g, r)
	if err != nil {
		return nil, err
	}
	op["responses"] = responses
	return op, nil
}

// bodyLimitOf returns the bound of the route's request body in bytes:
// Route.BodyLimit, or DefaultBodyLimit when it is zero (as the gateway
// applies it).
func bodyLimitOf[T transport.Tx](r transport.Route[T]) int64 {
	if r.BodyLimit == 0 {
		return transport.DefaultBodyLimit
	}
	return r.BodyLimit
}

// maturityOf returns the route's maturity, Preview by default.
func maturityOf[T transport.Tx](r transport.Route[T]) transport.Maturity {
	if r.Maturity == "" {
		return transport.Preview
	}
	return r.Maturity
}

// idempotencyOf returns the route's idempotency, none by default.
func idempotencyOf[T transport.Tx](r transport.Route[T]) transport.Idempotency {
	if r.Idempotency == "" {
		return transport.IdempotencyNone
	}
	return r.Idempotency
}

// operationDescription appends the route's access rules to its description.
func operationDescription[T transport.Tx](r transport.Route[T]) string {
	var rules []string
	rules = append(rules, "**Auth:** "+string(r.Auth))
	if r.Permission != "" {
		rules = append(rules, "**Permission:** `"+string(r.Permission)+"`")
	}
	if r.Scope != "" {
		rules = append(rules, "**API key scope:** `"+r.Scope+"`")
	}
	if len(r.Roles) > 0 {
		var roles []string
		for _, role := range r.Roles {
			roles = append(roles, "`"+string(role)+"`")
		}
		rules = append(rules, "**Roles:** one of "+strings.Join(roles, ", "))
	}
	rules = append(rules, r.Policy.Rules()...)
	if r.Raw == nil {
		rules = append(rules, "**Idempotency-Key:** "+string(idempotencyOf(r)))
	}
	rules = append(rules, "**Maturity:** "+string(maturityOf(r)))
	desc := strings.TrimSpace(r.Description)
	if desc != "" {
		desc += "\n\n"
	}
	return desc + strings.Join(rules, " · ")
}

// parameters returns the path, query and header parameters of a route.
func parameters[T transport.Tx](r transport.Route[T], info Info) []map[string]any {
	var out []map[string]any
	for _, name := range transport.PatternParams(r.Pattern) {
		out = append(out, map[string]any{
			"name": name, "in": "path", "required": true,
			"schema": map[string]any{"type": "string", "minLength": 1},
		})
	}
	for _, q := range r.Query {
		p := map[string]any{"name": q.Name, "in": "query", "required": q.Required, "schema": map[string]any{"type": "string"}}
		if q.Description != "" {
			p["description"] = q.Description
		}
		if q.Example != "" {
			p["example"] = q.Example
		}
		out = append(out, p)
	}
	for _, h := range r.Headers {
		p := map[string]any{"name": h.Name, "in": "header", "required": h.Required, "schema": map[string]any{"type": "string"}}
		if h.Description != "" {
			p["description"] = h.Description
		}
		if h.Example != "" {
			p["example"] = h.Example
		}
		out = append(out, p)
	}
	if r.Raw != nil {
		return out
	}
	if idem := idempotencyOf(r); idem != transport.IdempotencyNone {
		desc := "A client-chosen unique key; a retry with the same key and request replays the first response " +
			"(header `Idempotent-Replayed: true`), the same key with another request is 409 IDEMPOTENCY_CONFLICT."
		if info.IdempotencyRetention > 0 {
			desc += " The platform keeps the key's record for " + transport.HumanDuration(info.IdempotencyRetention) + "."
		}
		out = append(out, map[string]any{
			"name": "Idempotency-Key", "in": "header", "required": idem == transport.IdempotencyRequired,
			"description": desc,
			"schema":      map[string]any{"type": "string", "minLength": 1, "maxLength": 255},
		})
	}
	out = append(out, map[string]any{
		"name": "X-Request-Id", "in": "header", "required": false,
		"description": "Echoed in the X-Request-Id header and meta.requestId when it is 1-128 characters of " +
			"[A-Za-z0-9._-]; otherwise the platform assigns one.",
		"schema": map[string]any{"type": "string"},
	})
	return out
}

// requestIDHeader documents the X-Request-Id response header.
func requestIDHeader() map[string]any {
	return map[string]any{
		"description": "The request's id, as in meta.requestId.",
		"required":    true,
		"schema":      map[string]any{"type": "string"},
	}
}

// rawResponses documents the response of a Raw route.
func rawResponses[T transport.Tx](g *schemaGen, r transport.Route[T]) map[string]any {
	content := map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}
	if r.Response != nil {
		content = map[string]any{"application/json": map[string]any{"schema": g.topSchema(r.Response)}}
	}
	return map[string]any{strconv.Itoa(successStatus(r)): map[string]any{"description": successText(r), "content": content}}
}

// successStatus returns the route's success status, 200 by default.
func successStatus[T transport.Tx](r transport.Route[T]) int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}

// successText describes the success response.
func successText[T transport.Tx](r transport.Route[T]) string {
	return http.StatusText(successStatus(r))
}

// binaryRequestBody documents a streamed request body: a binary body per
// media type, multipart/form-data as an object with one binary field.
func binaryRequestBody[T transport.Tx](r transport.Route[T]) map[string]any {
	content := map[string]any{}
	for _, ct := range r.RequestContentTypes {
		if ct == "multipart/form-data" {
			field := r.FormFileField
			if field == "" {
				field = "file"
			}
			content[ct] = map[string]any{
				"schema": map[string]any{
					"type": "object", "required": []string{field},
					"properties": map[string]any{field: map[string]any{
						"type": "string", "format": "binary", "contentMediaType": "application/octet-stream",
						"description": "The file's bytes; its part's Content-Type and filename are the declared type.",
					}},
				},
				"encoding": map[string]any{field: map[string]any{"contentType": strings.Join(append(slices.DeleteFunc(slices.Clone(r.RequestContentTypes),
					func(t string) bool { return t == ct }), "application/octet-stream"), ", ")}},
			}
			continue
		}
		content[ct] = map[string]any{"schema": map[string]any{"type": "string", "format": "binary", "contentMediaType": ct}}
	}
	return map[string]any{"required": true, "content": content}
}

// binaryResponses documents a success answered with binary content (Route.
// ResponseContentTypes) and, with Route.Ranges, its 206 and 304 answers.
func binaryResponses[T transport.Tx](r transport.Route[T]) map[string]any {
	content := map[string]any{}
	for _, ct := range r.ResponseContentTypes {
		content[ct] = map[string]any{"schema": map[string]any{"type": "string", "format": "binary", "contentMediaType": ct}}
	}
	str := map[string]any{"type": "string"}
	headers := map[string]any{
		"X-Request-Id":   requestIDHeader(),
		"Content-Length": map[string]any{"description": "The length of the body in bytes.", "schema": map[string]any{"type": "integer"}},
	}
	out := map[string]any{}
	if r.Ranges {
		headers["ETag"] = map[string]any{"description": "The quoted SHA-256 hex digest of the content.", "schema": str}
		headers["Accept-Ranges"] = map[string]any{"description": "Always bytes.", "schema": str}
		partial := map[string]any{"Content-Range": map[string]any{"description": "bytes first-last/size", "schema": str}}
		for k, v := range headers {
			partial[k] = v
		}
		out["206"] = map[string]any{"description": "Partial Content: the single byte range the Range header asked for.",
			"headers": partial, "content": content}
		out["304"] = map[string]any{"description": "Not Modified: If-None-Match names the current ETag; no body.",
			"headers": map[string]any{"X-Request-Id": requestIDHeader(), "ETag": headers["ETag"]}}
	}
	out[strconv.Itoa(successStatus(r))] = map[string]any{"description": successText(r), "headers": headers, "content": content}
	return out
}

// gatewayResponses documents the success envelope and the error responses.
func gatewayResponses[T transport.Tx](g *schemaGen, r transport.Route[T]) (map[string]any, error) {
	var out map[string]any
	if len(r.ResponseContentTypes) > 0 {
		out = binaryResponses(r)
	} else {
		success, err := mediaType(g, r.Response, true)
		if err != nil {
			return nil, fmt.Errorf("response: %w", err)
		}
		headers := map[string]any{"X-Request-Id": requestIDHeader()}
		for name, desc := range r.ResponseHeaders {
			headers[name] = map[string]any{"description": desc, "schema": map[string]any{"type": "string"}}
		}
		content := map[string]any{"application/json": success}
		if r.EventStream != "" {
			content[transport.EventStreamType] = map[string]any{"schema": map[string]any{"type": "string", "description": r.EventStream}}
		}
		out = map[string]any{
			strconv.Itoa(successStatus(r)): map[string]any{
				"description": successText(r),
				"headers":     headers,
				"content":     content,
			},
		}
		if r.ExistingStatus != 0 {
			out[strconv.Itoa(r.ExistingStatus)] = map[string]any{
				"description": r.ExistingText,
				"headers":     headers,
				"content":     map[string]any{"application/json": success},
			}
		}
		for _, o := range r.Outcomes {
			oh := map[string]any{"X-Request-Id": requestIDHeader()}
			for name, desc := range o.Headers {
				oh[name] = map[string]any{"description": desc, "schema": map[string]any{"type": "string"}}
			}
			out[strconv.Itoa(o.Status)] = map[string]any{
				"description": o.Text,
				"headers":     oh,
				"content":     map[string]any{"application/json": success},
			}
		}
	}
	codes, err := routeCodes(r)
	if err != nil {
		return nil, err
	}
	byStatus := map[int][]fault.Code{}
	for _, c := range codes {
		byStatus[transport.StatusOf(c)] = append(byStatus[transport.StatusOf(c)], c)
	}
	envelope := g.ref(reflect.TypeFor[transport.ErrorEnvelope]())
	for _, o := range r.Outcomes {
		if cs := byStatus[o.Status]; len(cs) > 0 {
			return nil, fmt.Errorf("outcome status %d is also the status of error codes %v", o.Status, cs)
		}
	}
	for status, cs := range byStatus {
		headers := map[string]any{"X-Request-Id": requestIDHeader()}
		switch status {
		case http.StatusTooManyRequests:
			headers["Retry-After"] = map[string]any{"description": "Seconds to wait before retrying.", "schema": map[string]any{"type": "integer"}}
		case http.StatusUnauthorized:
			headers["WWW-Authenticate"] = map[string]any{"description": "The bearer challenge.", "schema": map[string]any{"type": "string"}}
		case http.StatusRequestedRangeNotSatisfiable:
			headers["Content-Range"] = map[string]any{"description": "bytes */size: the content's length.", "schema": map[string]any{"type": "string"}}
		}
		out[strconv.Itoa(status)] = map[string]any{
			"description":   transport.DescribeCodes(cs),
			"headers":       headers,
			"content":       map[string]any{"application/json": map[string]any{"schema": envelope}},
			"x-error-codes": cs,
		}
	}
	return out, nil
}

// routeCodes returns the codes a gateway route can answer: the gateway's own
// for the route's features, then Route.Errors, sorted and deduplicated.
func routeCodes[T transport.Tx](r transport.Route[T]) ([]fault.Code, error) {
	codes := []fault.Code{fault.Internal}
	if r.Request != nil || len(r.RequestContentTypes) > 0 {
		codes = append(codes, fault.InvalidInput, fault.PayloadTooLarge, fault.UnsupportedMediaType)
	}
	if r.Ranges {
		codes = append(codes, fault.RangeNotSatisfiable)
	}
	if len(transport.PatternParams(r.Pattern)) > 0 || len(r.Query) > 0 {
		codes = append(codes, fault.InvalidInput)
	}
	if len(transport.PatternParams(r.Pattern)) > 0 {
		codes = append(codes, fault.NotFound)
	}
	if r.Auth != transport.AuthPublic {
		// Every credential has limits (Limiter): keys their own, sessions
		// and access tokens their user's and workspace's.
		codes = append(codes, fault.Unauthenticated, fault.SessionExpired, fault.AccessDenied, fault.WorkspaceAccessDenied, fault.RateLimited)
	}
	if r.Auth == transport.AuthPublic && r.OptionalAuth {
		codes = append(codes, fault.Unauthenticated, fault.SessionExpired, fault.RateLimited)
	}
	switch idempotencyOf(r) {
	case transport.IdempotencyRequired:
		codes = append(codes, fault.IdempotencyKeyRequired, fault.IdempotencyConflict, fault.IdempotencyInProgress)
	case transport.IdempotencyOptional:
		codes = append(codes, fault.IdempotencyConflict, fault.IdempotencyInProgress)
	}
	codes = append(codes, r.Policy.Codes()...)
	for _, e := range r.Errors {
		c := fault.Code(e)
		if !transport.KnownCode(c) {
			return nil, fmt.Errorf("unknown error code %q", e)
		}
		codes = append(codes, c)
	}
	return sortedCodes(codes), nil
}

// mediaType returns a JSON media type object for value's type, with the
// value as its example, wrapped in the success envelope when envelope is set.
func mediaType(g *schemaGen, value any, envelope bool) (map[string]any, error) {
	schema := g.topSchema(value)
	example, err := exampleOf(value)
	if err != nil {
		return nil, err
	}
	if envelope {
		schema = map[string]any{
			"type":                 "object",
			"required":             []string{"data", "meta"},
			"additionalProperties": false,
			"properties": map[string]any{
				"data": describe(schema, "The operation's result."),
				"meta": describe(g.ref(reflect.TypeFor[transport.Meta]()), "The response's metadata: the request id."),
			},
		}
		if example != nil {
			example = map[string]any{"data": example, "meta": map[string]any{"requestId": "req_0123456789abcdef0123456789abcdef"}}
		}
	}
	out := map[string]any{"schema": schema}
	if example != nil {
		out["example"] = example
	}
	return out, nil
}

// describe returns s with a description: a reference is wrapped in allOf,
// as annotate does, and s itself is never changed.
func describe(s map[string]any, text string) map[string]any {
	if _, isRef := s["$ref"]; isRef {
		return map[string]any{"allOf": []any{s}, "description": text}
	}
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	out["description"] = text
	return out
}

// exampleOf returns value as generic JSON, or nil for a nil pointer.
func exampleOf(value any) (any, error) {
	if value == nil {
		return nil, nil
	}
	if rv := reflect.ValueOf(value); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("encode example %T: %w", value, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode example %T: %w", value, err)
	}
	return out, nil
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	numberType        = reflect.TypeFor[json.Number]()
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// schemaGen reflects Go types to JSON Schema (2020-12, as OpenAPI 3.1 uses),
// collecting named struct types as components.
type schemaGen struct {
	names map[reflect.Type]string
	defs  map[string]map[string]any
	// patches holds schema keywords set on particular properties from the
	// code's values (the error codes, the event types), by struct type and
	// JSON name; they replace what reflection and tags give.
	patches map[reflect.Type]map[string]map[string]any
	// docs are the fields' doc comments (fieldDocs, generated by
	// internal/fielddoc), by "import/path.Type" and Go field name.
	docs map[string]map[string]string
}

// fieldPatches returns the properties whose allowed values come from the
// code: ErrorBody.code from the fault code table and, when info carries
// the event catalogue, outbox.Event.type from it.
func fieldPatches(info Info) map[reflect.Type]map[string]map[string]any {
	out := map[reflect.Type]map[string]map[string]any{
		reflect.TypeFor[transport.ErrorBody](): {"code": {
			"type": "string", "enum": fault.Codes(),
			"description": "The stable machine-readable error code; clients branch on it, never on the message.",
		}},
	}
	if len(info.Events) > 0 {
		types := make([]string, 0, len(info.Events))
		for _, e := range info.Events {
			types = append(types, e.Type)
		}
		out[reflect.TypeFor[outbox.Event]()] = map[string]map[string]any{"type": {
			"type": "string", "enum": types, "examples": []any{types[0]},
			"description": "The event's type, one of the event catalogue (info.description, Events; x-event-catalogue), " +
				"which gives each type's schema version and aggregate.",
		}}
	}
	return out
}

// newSchemaGen names the named struct types reachable from roots: a type's
// own name, qualified by its package when two packages share the name.
// patches (see fieldPatches) may be nil.
func newSchemaGen(roots []reflect.Type, patches map[reflect.Type]map[string]map[string]any) *schemaGen {
	g := &schemaGen{names: map[reflect.Type]string{}, defs: map[string]map[string]any{}, patches: patches,
		docs: fieldDocs()}
	seen := map[reflect.Type]bool{}
	var found []reflect.Type
	for _, t := range roots {
		collectTypes(t, seen, &found)
	}
	count := map[string]int{}
	for _, t := range found {
		count[typeName(t)]++
	}
	used := map[string]bool{}
	for _, t := range found {
		name := typeName(t)
		if count[name] > 1 {
			name = packageName(t) + "." + name
		}
		for n := 2; used[name]; n++ {
			name = fmt.Sprintf("%s.%s%d", packageName(t), typeName(t), n)
		}
		used[name] = true
		g.names[t] = name
	}
	return g
}

// collectTypes appends the named struct types reachable from t to found.
func collectTypes(t reflect.Type, seen map[reflect.Type]bool, found *[]reflect.Type) {
	if seen[t] {
		return
	}
	seen[t] = true
	if special(t) != nil {
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		collectTypes(t.Elem(), seen, found)
	case reflect.Struct:
		if t.Name() != "" {
			*found = append(*found, t)
		}
		for _, f := range transport.JSONFields(t) {
			collectTypes(f.Type, seen, found)
		}
	}
}

// typeName returns a component-safe name for a named type; generic
// instantiations become "Page_Item".
func typeName(t reflect.Type) string {
	name := t.Name()
	base, args, generic := strings.Cut(name, "[")
	if generic {
		var parts []string
		for a := range strings.SplitSeq(strings.TrimSuffix(args, "]"), ",") {
			if i := strings.LastIndexAny(a, "./*]"); i >= 0 {
				a = a[i+1:]
			}
			parts = append(parts, a)
		}
		name = base + "_" + strings.Join(parts, "_")
	}
	return sanitize(name)
}

// packageName returns the last element of t's package path.
func packageName(t reflect.Type) string {
	p := t.PkgPath()
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	return sanitize(p)
}

// sanitize keeps the characters OpenAPI allows in component names.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// components returns the collected component schemas.
func (g *schemaGen) components() map[string]any {
	out := make(map[string]any, len(g.defs))
	for k, v := range g.defs {
		out[k] = v
	}
	return out
}

// topSchema returns the schema of a route's Request or Response value: a nil
// pointer documents nullable data, a non-nil pointer its element.
func (g *schemaGen) topSchema(value any) map[string]any {
	t := reflect.TypeOf(value)
	if t == nil {
		return map[string]any{}
	}
	if rv := reflect.ValueOf(value); t.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nullable(g.schema(t.Elem()))
		}
		t = t.Elem()
	}
	return g.schema(t)
}

// ref returns a reference to named struct type t's component, generating it
// on first use.
func (g *schemaGen) ref(t reflect.Type) map[string]any {
	name, ok := g.names[t]
	if !ok {
		// A type outside the pre-pass (never expected): name it now.
		name = typeName(t)
		g.names[t] = name
	}
	if _, done := g.defs[name]; !done {
		g.defs[name] = map[string]any{} // placeholder for recursive types
		g.defs[name] = g.structSchema(t)
		for field, patch := range g.patches[t] {
			if props, ok := g.defs[name]["properties"].(map[string]any); ok && props[field] != nil {
				props[field] = patch
			}
		}
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// special returns the schema of types with a fixed JSON form, or nil.
func special(t reflect.Type) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == rawMessageType:
		return map[string]any{}
	case t == numberType:
		return map[string]any{"type": "number"}
	case t.Kind() == reflect.Pointer:
		return nil
	case t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType):
		return map[string]any{} // encodes itself: any JSON
	case t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType):
		return map[string]any{"type": "string"}
	}
	return nil
}

// schema returns the schema of t.
func (g *schemaGen) schema(t reflect.Type) map[string]any {
	if s := special(t); s != nil {
		return s
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.schema(t.Elem()))
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem()), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.structSchema(t)
		}
		return g.ref(t)
	}
	return map[string]any{} // interfaces and anything else: any JSON
}

// structSchema returns the object schema of struct type t.
func (g *schemaGen) structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range transport.JSONFields(t) {
		props[f.Name] = g.fieldSchema(f)
		if !f.OmitEmpty {
			required = append(required, f.Name)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// fieldSchema returns a field's schema: nullable when its value may encode as
// null, annotated from its doc, example and enum tags.
func (g *schemaGen) fieldSchema(f transport.JSONField) map[string]any {
	var s map[string]any
	t := f.Type
	switch {
	case f.Quoted:
		s = map[string]any{"type": "string"}
		if t.Kind() == reflect.Pointer && !f.OmitEmpty {
			s = nullable(s)
		}
	case t.Kind() == reflect.Pointer && f.OmitEmpty && special(t) == nil:
		s = g.schema(t.Elem()) // nil is omitted, never null
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) && !f.OmitEmpty && special(t) == nil:
		s = nullable(g.schema(t))
	default:
		s = g.schema(t)
	}
	return annotate(s, f, g.fieldDoc(f))
}

// fieldDoc returns the doc comment of f's Go field (fieldDocs), "" when it
// has none. A generic type's fields are those of its declaration.
func (g *schemaGen) fieldDoc(f transport.JSONField) string {
	if f.Owner == nil || f.Owner.Name() == "" {
		return ""
	}
	name, _, _ := strings.Cut(f.Owner.Name(), "[")
	return g.docs[f.Owner.PkgPath()+"."+name][f.GoName]
}

// annotate adds f's description (its doc tag, else comment, the field's
// doc comment), and its example, enum, minimum and maximum tags to s.
func annotate(s map[string]any, f transport.JSONField, comment string) map[string]any {
	doc, example, enum := f.Tag.Get("doc"), f.Tag.Get("example"), f.Tag.Get("enum")
	minimum, maximum := f.Tag.Get("minimum"), f.Tag.Get("maximum")
	if doc == "" {
		doc = comment
	}
	if doc == "" && example == "" && enum == "" && minimum == "" && maximum == "" {
		return s
	}
	if _, isRef := s["$ref"]; isRef {
		s = map[string]any{"allOf": []any{s}}
	}
	if doc != "" {
		s["description"] = doc
	}
	if example != "" {
		s["examples"] = []any{tagExample(example, f.Type)}
	}
	for kw, v := range map[string]string{"minimum": minimum, "maximum": maximum} {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			s[kw] = n
		}
	}
	if enum != "" {
		values := strings.Split(enum, ",")
		if t, ok := s["type"].([]string); ok && slices.Contains(t, "null") {
			s["enum"] = append(toAny(values), nil)
		} else {
			s["enum"] = values
		}
	}
	return s
}

// toAny converts strings to a []any.
func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// tagExample converts an example tag to the field's JSON kind: strings stay
// strings, other kinds are parsed as JSON when they can be.
// An example tag on a list (other than []byte) shows one item: it becomes a
// list of that item unless it is a JSON array itself.
func tagExample(example string, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if special(t) == nil && (t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 || t.Kind() == reflect.Array) {
		var list []any
		if err := json.Unmarshal([]byte(example), &list); err == nil {
			return list
		}
		return []any{tagExample(example, t.Elem())}
	}
	if t.Kind() == reflect.String || special(t) != nil {
		return example
	}
	var v any
	if err := json.Unmarshal([]byte(example), &v); err == nil {
		return v
	}
	return example
}

// nullable returns s widened to admit null.
func nullable(s map[string]any) map[string]any {
	if len(s) == 0 {
		return s // any JSON already admits null
	}
	if typ, ok := s["type"].(string); ok {
		c := make(map[string]any, len(s))
		for k, v := range s {
			c[k] = v
		}
		c["type"] = []string{typ, "null"}
		return c
	}
	if typ, ok := s["type"].([]string); ok {
		if slices.Contains(typ, "null") {
			return s
		}
		c := make(map[string]any, len(s))
		for k, v := range s {
			c[k] = v
		}
		c["type"] = append(slices.Clone(typ), "null")
		return c
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// sortedCodes returns codes deduplicated and sorted.
func sortedCodes(codes []fault.Code) []fault.Code {
	out := slices.Clone(codes)
	slices.Sort(out)
	return slices.Compact(out)
}
