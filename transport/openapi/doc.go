// Package openapi writes the contract of a route table: the OpenAPI 3.1
// document, the Swagger UI docs page and the client collection, from the
// same transport.Route values the gateway serves, so runtime and contract
// cannot drift.
//
// # Tooling
//
// ToolingRoutes adds the spec's tooling routes: Swagger UI 5 at /api/docs/
// (assets embedded, no CDN), the document at /api/docs/openapi.json, and the
// collection's landing page, collection.json and environment.json under
// /api/client-collection/. The two HTML pages are Route.Page routes: the
// document describes them in info.description instead of listing them as
// operations, since an operation's path never ends in a slash. Examples in
// generated artifacts are placeholders.
//
// # The document
//
// Beside the operations, the document states the rules decided in code,
// each from the code's own value: the JSON body limit
// (transport.DefaultBodyLimit, or the route's BodyLimit, as x-body-limit),
// the idempotency retention (Info.IdempotencyRetention), the rate limits of
// keys, users and workspaces (Info.RateLimits, as x-rate-limits), the API
// key scopes and the permissions each stands for (access.Scopes), the music
// providers' callback timestamp windows (Info.Callbacks) and the outbox
// event catalogue (Info.Events), in info.description and as x- extensions.
// Every schema property carries a description: the Go field's doc comment,
// copied by go generate into fielddoc_gen.go from the packages the route
// table (transport/api) reaches (package internal/fielddoc says why a
// generated file). The served document passes the Redocly CLI's
// recommended ruleset (openapilint; TestOpenAPIRedoclyLint in package e2e).
package openapi
