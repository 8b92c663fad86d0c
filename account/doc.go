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
// Password hashing runs outside any transaction (the service takes a read
// handle and a UnitOfWork), so the deliberately slow argon2id never holds
// SQLite's single writer.
//
// # Ports
//
// The service reads and writes through ports cut by operation, each a few
// methods, so that a fake of one is small; the store package's *Tx
// implements them all, and a route hands its unit of work over as the
// port of the operation it calls:
//
//   - SignupStore: sign-up and email verification;
//   - LoginStore: login (the throttle counters and the credential on the
//     read handle, the new session in the unit of work);
//   - SessionStore: authenticating a cookie or access token;
//   - SessionReader: the caller's session with its user;
//   - SessionAdmin: listing and revoking one's own sessions;
//   - HandoffStore: the web-to-studio handoff;
//   - ResetMailStore and ResetStore: a forgotten password's mail, and the
//     reset that consumes its code;
//   - InviteStore and JoinStore: sending and accepting an invitation;
//   - OnboardingStore: onboarding, which is JoinStore (a join is an
//     accepted invitation) with the workspace and onboarding records;
//   - AdminStore, AuditWriter and AuditReader: member administration and
//     the audit log.
//
// A step several operations share takes a small block of its own
// (CodeConsumer for ConsumeCode, SessionReader for CurrentSession,
// AuditWriter for Audit, ThrottleStore for the throttle and mail limits),
// which the ports embed; a method that operations call directly
// (UserGetByEmail, CodeInsert, SessionInsert, ...) is declared in each
// port that calls it, so that no port carries a method its operations do
// not call. No port exceeds 20 methods. Onboarding alone needs
// more than that, since creating a workspace also starts its plan: Onboard
// takes its account side as an OnboardingStore and its plan side as a
// plan.Store, two ports of the same unit of work passed separately, rather
// than one port that is both.
//
// Signup, Login and ResetPassword hash outside any transaction, so they
// take the read handle and a UnitOfWork of their own port.
//
// # Abuse limits
//
// Each argon2id hash takes its memory cost (64 MiB by default) while it
// runs, so every hash and verification (login, including the dummy hash of
// an unknown email; signup; password reset; the operator's bootstrap) runs
// through a HashPool: at most Slots at once, by default
// max(1, min(GOMAXPROCS, budget / 64 MiB)) with a budget of 256 MiB or a
// quarter of GOMEMLIMIT. A hash that finds no free slot within a second
// (HashPoolConfig.Wait) is refused with RATE_LIMITED (details.limit
// passwordHashing) and Retry-After: 1. RATE_LIMITED rather than SERVICE_UNAVAILABLE: it is a
// concurrency limit, answered as an API key's concurrency limit is, and
// clients already back off on RATE_LIMITED with Retry-After; the platform
// itself is up.
//
// Before any of that, the unauthenticated routes (signup, verification,
// login, password forgot and reset, handoff exchange) take a request from
// a per-client-address token bucket held in memory on each host
// (Config.AddressRate: 30 requests a minute, bursts of 30), refused with
// RATE_LIMITED (details.limit authRequestsPerAddress) and Retry-After. The
// client address is the connection's peer, or the first X-Forwarded-For
// entry only when Config.TrustProxy says a proxy sets it; AddressKey
// counts IPv6 addresses by their /64 network, as one host usually holds a
// whole /64.
//
// # Login throttling
//
// Failed logins are counted in the database, so every host sees them, on
// three counters (ThrottlePolicy): the pair of account (by email) and
// client address, the address on any account, and the account from any
// address. Each counter allows MaxFailures failures (5 for the pair, 30
// for the address, 20 for the account); the failure that reaches the
// limit locks the counter for 1 minute, and each further failure doubles
// the lock, up to 1 hour. Failures add up within a 15-minute window: a
// counter restarts once 15 minutes have passed since its first failure
// and since its last lock ended.
//
// An attempt is counted before any hashing: one transaction reads the
// three counters with their rows locked, refuses the attempt (changing
// nothing) when the pair or the address is locked, and otherwise counts
// it as a failure on all three. So of 40 concurrent wrong guesses from one
// address at most 5 are evaluated; the rest answer RATE_LIMITED
// (details.limit loginFailures) with Retry-After. A successful sign-in
// clears its pair's counter and takes the attempt off the address's and
// the account's; an attempt the hashing pool refused is taken off all
// three.
//
// The account's lock refuses only addresses that have failed on the
// account within the window: an address with no failure (the owner's, as
// a rule) may still try. An attacker can thus slow guessing at an account
// from many addresses (each gets one guess while the account is locked,
// and its own address counter still applies) but cannot lock the owner
// out, as a per-account lockout would let anyone do with 5 bad logins
// every 15 minutes.
//
// Mail that a request can cause is limited the same way (Config.ResetMail):
// password reset links at most 3 an hour per account, with at most 10
// forgot-password requests an hour per client address; the notice mailed
// when someone signs up with a registered address has its own counters
// with the same numbers. A request over a limit is answered exactly as any
// other and sends nothing, so the limits reveal nothing about who is
// registered.
//
// # Enumeration
//
// Signup and forgot-password answer alike whether or not an address has an
// account (the owner of a registered address is mailed a notice instead);
// login answers one UNAUTHENTICATED error for an unknown email and a wrong
// password after the same argon2id work, and reveals an unverified address
// only to someone who gave its password.
package account
