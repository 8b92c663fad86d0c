// Package attribution records where a signed-in user came from (spec,
// Architecture and operations: POST /api/v1/attribution, "source,
// medium, campaign, referrer attribution"; the record's fields are not
// shown there and are decided here).
//
// # What is kept
//
// One record per user and environment, never more: the first touch, kept
// as it was forever, the last touch, replaced by every later one, and a
// counter of touches. It is bounded by construction: no list of touches,
// no free-form data, nothing but the fields below, each bounded and of a
// restricted character set. The record carries the tenant and workspace
// of the principal that first recorded it (a user who has not onboarded
// yet has no workspace: ""). TouchCount counts touches up to
// MaxTouchCount and stays there: a count at the bound means at least
// that many.
//
// # A touch
//
//   - source (required), medium, campaign, term, content: the campaign
//     parameters a client read (utm_source and its siblings, or "direct"
//     when there were none). Each is 1 to MaxValue characters after
//     trimming spaces, of ASCII letters, digits, space and . _ - + ~
//     (details.reason charset otherwise); an empty optional field is
//     absent.
//   - referrer: the page the user came from, an absolute http or https
//     URL of at most MaxReferrerInput characters, with a host. It is
//     stored without its query and fragment (where tracking and session
//     parameters travel) as scheme://host[:port]/path, scheme and host
//     lower-cased, at most MaxStored characters after that. A URL with
//     user information (user:password@) is refused (details.reason
//     credentials), never stored stripped: it carried a credential.
//   - landingPath: the platform page the user landed on, a path that
//     starts with a single "/", stored without query and fragment, at
//     most MaxStored characters.
//
// Every refusal is INVALID_INPUT naming the field (details.field) and,
// beyond a missing source, a reason (details.reason: too_long, charset,
// scheme, host, credentials, not_absolute, not_a_path).
//
// # Who records
//
// A signed-in user records touches about themselves only: the body
// names no user, and the record is the session's user's in the session's
// environment. API keys do not record attribution: a key acts for an
// integration, not for the person whose visit this is.
//
// # Idempotency
//
// Idempotency-Key is optional, as Stripe makes it on every POST: a
// request sent again with the same key and body answers the first
// answer and counts no second touch; without a key each request is a
// touch. Concurrent touches of one user converge: the insert of a first
// record is unique per user and environment, and each later touch
// compare-and-sets the record's version (re-reading and retrying a few
// times within the unit of work).
//
// # Events
//
// Each recorded touch writes the outbox event attribution.recorded in
// the same unit of work (aggregate: the record, at its version); its
// payload names the user, whether the touch was the first, the touch
// count and the touch's source, medium and campaign, never the referrer
// or landing path.
//
// The package imports no transport, store or SDK; package store
// implements Store.
package attribution
