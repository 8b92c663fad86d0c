// Package transport is the platform's HTTP engine: the route type, the
// router, the gateway chain, the one table from error code to HTTP status,
// the response envelopes, strict JSON decoding, keyset pages and the
// credentials' limits. It knows no domain: the route table lives in
// transport/api (one file per area of the spec, named handler functions
// that call domain services) and the artifacts generated from that table
// (the OpenAPI 3.1 document, the Swagger UI docs page and the client
// collection) in transport/openapi, so that runtime and contract, built
// from the same Route values, cannot drift.
//
// # The route table
//
// Every endpoint is one Route: method, pattern, operation id, tag, summary,
// request and response example values, auth mode, permission or scope,
// idempotency, maturity, visibility and handler. NewMux registers a table;
// transport/openapi generates the contract from the same table.
// Domains never choose HTTP statuses: they return a *fault.Error whose code
// StatusOf maps to a status.
//
// # Units of work
//
// The engine is generic over the unit of work a call runs in: Route[T],
// Call[T] and Gateway[T] take a type T that satisfies Tx, the little the
// engine itself needs (authentication, limits, idempotency records and
// receipts), and a Store[T] runs T's transactions and reads. The route
// table instantiates them with its own interface (transport/api.Tx), which
// also holds every domain's port, so a handler hands c.Tx to a domain
// service as that domain's port, checked by the compiler, and the engine
// never sees the concrete store. The host adapts its store to Store[T].
//
// # Gateway order
//
// A gateway route runs the spec's order (Authentication 4): request id
// (X-Request-Id, echoed and returned as meta.requestId; see RequestID) ->
// session cookie or Authorization: Bearer (API key or access token) ->
// credential state and expiry -> workspace and project authority ->
// permission or scope -> rate, budget and concurrency limits of the
// credential (an API key's own; a session's or access token's user and
// workspace, see Limiter) -> Idempotency-Key where required -> durable
// request receipt -> domain handler -> usage completion. Raw routes (docs
// assets, receivers that verify raw bodies) skip the gateway.
//
// # Access policy
//
// A route declares its whole access policy as data, never in its handler:
// Auth, Permission, Scope, Roles, SuperAdmin and AnyMember say who may call
// it; Route.Policy declares the rest of the spec's access steps (feature
// flag, entitlement, a resource loader for own, assigned and project
// grants, the workflow transition it attempts, and a fresh sign-in). The
// gateway feeds all of it to access.Evaluate, which runs the eleven steps in
// the spec's order (Authentication 5) with the tie rule, before the body is
// decoded by the handler, the key's limits are taken or an idempotency
// record is read: a refused call writes nothing. The same declaration writes
// the operation's x-policy, its description and the codes its steps can
// answer. Request-dependent parts (an entitlement for high-resolution
// output, providers:select for a generation that names providers) are small
// functions of the call; their Policy.Note says what they read.
//
// # Envelopes
//
// Success is {"data": ..., "meta": {"requestId": "..."}} (WriteData); failure
// is {"error": {"code", "message", "details"}, "meta": {"requestId"}}
// (WriteError). Clients branch on error.code. An error without a code is
// INTERNAL: the client sees a generic message and the cause is logged with
// the request id. Both set Content-Type: application/json and X-Request-Id.
//
// # Control characters
//
// No identifier, code or name the platform stores needs a control
// character, PostgreSQL refuses U+0000 in text outright, and such input
// used to reach the database and answer 500. A request carrying one is
// refused before its handler runs with 400 INVALID_INPUT, details.field
// naming the field and details.reason "control_character":
//   - in a JSON body (Call.Decode), a string value may hold tab, line feed
//     and carriage return, which free text (descriptions, prompts, lyrics)
//     legitimately needs; every other C0 control (U+0000 to U+001F) is
//     refused, and an object key may hold none. Raw controls are already
//     invalid JSON; these arrive escaped, as \u0000 or \b.
//   - path values and the route's query parameters (ids, cursors,
//     filters) may hold no control character at all (C0, DEL or C1) and
//     must be valid UTF-8; the gateway checks them first, before the
//     credential. Query parameters a route does not declare are ignored.
//
// # Router
//
// Routes are registered on net/http.ServeMux as "METHOD PATTERN"; a pattern
// ending in "/" gets "{$}" so it matches only itself. NewMux wraps the mux in
// a fallback built from the table: an unknown path is 404 ROUTE_NOT_FOUND and
// a known path asked with another method is 405 METHOD_NOT_ALLOWED with an
// Allow header, both in the error envelope; net/http's own plain-text 404 and
// 405 never reach a client.
//
// ServeMux, not julienschmidt/httprouter v1.3.0: httprouter cannot register a
// static segment beside a wildcard at the same position, which 14 of the
// spec's 178 routes need: GET /api/v1/token-sales/current beside
// /api/v1/token-sales/:saleId, the static children of /api/v1/api-keys beside
// :keyId, /api/v1/swap/tokens beside /api/v1/swap/:intentId/..., and others.
// ServeMux (Go 1.22+) accepts them and picks the most specific pattern. It
// rejects only one pair of the spec, where neither pattern is more specific
// than the other: GET /api/v1/token-sales/access-intents/{accessIntentId} is
// registered literally, and the three sale views (disclosures, verification,
// markets) are served via GET /api/v1/token-sales/{saleId}/{view} (their
// Route.Via), which dispatches to each view's own route, so the literal wins
// and "access-intents" is a reserved sale id (design.md, Router note). The
// OpenAPI document still lists the three views as separate operations.
package transport
