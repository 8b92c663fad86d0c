// Package account owns people and their sign-in: signup and email
// verification, passwords (argon2id), login with throttling, sessions and
// their access tokens, password reset, onboarding, invitations, the web to
// studio handoff, and the administration of members and roles with its
// append-only audit log (spec, "Account authentication and onboarding" and
// "Administration").
//
// Every code and credential (verification, reset, invitation and handoff
// codes, session cookies, access tokens) is random, stored only as a keyed
// digest, and single-use or revocable. Sessions act in live mode; a request
// asks for test mode with the Platform-Environment: test header, as a
// dashboard's test-mode toggle does.
//
// # Access tokens
//
// The spec's "access token" (Authentication 1) is read here as a
// session-bound user credential: login returns one ("platform_at_...", one
// hour) beside the web session cookie, for clients without cookies. It acts
// with the signed-in user's authority, not an application's, and is revoked
// with its session (logout, revoke-others, password reset). The OpenAPI
// document states the same in its bearer security scheme.
//
// # Lifetimes and limits
//
// Sessions last 30 days from sign-in (SessionLifetime), access tokens one
// hour. Single-use codes: email verification 24 hours, password reset 30
// minutes, handoff 60 seconds, invitations 7 days. Each code is consumed by
// one compare-and-set UPDATE, so of concurrent uses exactly one succeeds.
// Failed logins are counted per account and per client address in the
// database (so every host sees them): 5 failures in 15 minutes lock the
// subject for 15 minutes (ThrottlePolicy). Password hashing runs outside any
// transaction (the service takes a read handle and a UnitOfWork), so the
// deliberately slow argon2id never holds SQLite's single writer.
//
// # Enumeration
//
// Signup and forgot-password answer alike whether or not an address has an
// account (the owner of a registered address is mailed a notice instead);
// login answers one UNAUTHENTICATED error for an unknown email and a wrong
// password after the same argon2id work, and reveals an unverified address
// only to someone who gave its password.
package account
