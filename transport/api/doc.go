// Package api is the platform's route table: one file per area of the
// specification (identity, keys, assets, generation, sound, billing, token,
// wallet, chain payments, sale, ...), each a function that returns the
// area's Route values with named handler functions. A handler
// decodes its request, calls a domain service with the call's unit of work
// as the domain's own port, and shapes the domain's answer into the view
// the document shows; it never chooses an HTTP status (the domain's
// fault.Code does) and never evaluates access, which each route declares
// and the gateway evaluates (package transport).
//
// Routes is the whole table; the root package registers it with the
// tooling routes of transport/openapi. Routes of the spec that are not
// built yet are absent (404 ROUTE_NOT_FOUND), never stubs.
package api
