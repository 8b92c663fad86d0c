// Package creatorgraph is the creator graph (spec, Architecture and
// operations: GET /api/v1/creator-graph/{creatorId} and POST
// /api/v1/creator-graph/relations): who a creator is related to, each
// relation with its kind and the record it comes from.
//
// # Derived relations
//
// Two kinds are derived from stored records at read time and stored
// nowhere, so they can never disagree with the records:
//
//   - collaborated (mutual): the creator and another user each had a
//     submission ACCEPTED into the same project; one relation per other
//     user and project, its source the project and the earliest accepted
//     submission of each;
//   - remixed (outgoing: the creator remixed the other; incoming: the
//     other remixed the creator): an asset whose provenance names the
//     creator has a provenance parent whose provenance names another user;
//     its source the asset and the parent.
//
// # Declared relations
//
// A signed-in creator declares relations about themselves only: the
// declaring user is always the session's, and the body names no subject,
// so no one declares on another's behalf. The one declared kind is
// follows. A declaration is idempotent: declaring the state a relation
// already has changes nothing and writes no event. Withdrawing is the
// same call with state removed (the row is kept, its state removed; a
// later declaration makes it active again; withdrawing one never declared
// is NOT_FOUND). Following oneself is
// INVALID_INPUT; a target that is no creator (no verified wallet link) is
// NOT_FOUND; a creator holds at most MaxActiveDeclared active declared
// relations per environment (CONFLICT with details.limit past it). Each
// change writes one outbox event (creator_relation.declared or
// creator_relation.removed) in the same transaction.
//
// # What a reader sees
//
// Declared relations are public statements. A derived relation is shown
// to a caller outside the creator's workspace only when its facts are
// public: a collaboration when the project is public; a remix when both
// the asset and its parent are the work of submissions ACCEPTED into
// public projects. A caller in the workspace that holds the records (the
// project's, or both assets') sees it too, marked not public, when it
// reads those records: a collaboration of a project that is not public
// only when the caller reads that project (project.read across the
// workspace, or the project is its own or assigned to it: a MEMBER
// never assigned to it, to whom the project is NOT_FOUND, is not shown
// what it derives); a remix when the caller reads the workspace's assets.
// Every read is of the caller's environment. Each kind is bounded to MaxPerKind
// relations (newest records first); Truncated says when more exist.
//
// # Who is a creator
//
// A creator is a user with a verified wallet link, as in package
// creator; a caller may always read their own graph.
package creatorgraph
