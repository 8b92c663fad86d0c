// Package discover is the public discovery read model (spec, Architecture
// and operations: GET /api/v1/discover): public projects, public tracks
// and creators, found from stored records only and ranked by a documented,
// deterministic formula.
//
// It is its own package, beside package creator (the profile of one
// creator found by wallet), because it ranks across domains and tenants
// (projects, submissions, wallet links) and writes nothing.
//
// # What is public
//
// A project is discoverable when its visibility is public and its status
// is OPEN, IN_PRODUCTION, REVIEW or COMPLETED (a DRAFT is not ready, an
// ARCHIVED one retired). A track is an accepted contribution that is
// audio: a submission of type audio or remix ACCEPTED into a public
// project. An asset a workspace keeps, a pending or rejected submission,
// and a submission to a workspace project are never tracks, whoever asks:
// the work became public only when a public project accepted it. A
// creator is a user with a verified wallet link (as package creator
// defines one) who owns at least one public project or has at least one
// contribution (a submission accepted into a public project).
//
// # Ranking
//
// Every list is ordered by (score descending, id descending); ids are
// time-sortable, so a tie goes to the newest record:
//
//   - project: score = the number of submissions ACCEPTED into it;
//   - track: no score (null); tracks are ranked by recency alone, newest
//     submission first;
//   - creator: score = public projects owned + contributions, both counted
//     in the caller's environment across every tenant; a tie goes to the
//     newest account.
//
// No count is estimated: each is a count of stored rows at the time of the
// read. Pages are keyset pages over (score, id): a record whose score
// changes between two pages may be skipped or seen twice, never invented.
//
// # Environment
//
// Every record is read in the caller's environment only: a test
// credential discovers test projects, tracks and the creators of test
// rows.
package discover
