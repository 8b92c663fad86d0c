// Package leaderboard ranks the people of a workspace by the work its
// records show, in snapshots a durable job computes under a versioned
// scoring policy, and explains one caller's position (spec, Architecture
// and operations: GET /api/v1/leaderboard/me/explain, "snapshot with
// policy/window context; no score is fabricated when none exists"; Reward
// claim: "Leaderboard position ... alone create[s] no claimable
// entitlement").
//
// # Scope: per workspace and environment
//
// A leaderboard is one workspace's, in one environment: it ranks the
// users whose work that workspace's records hold, so a user who works in
// two workspaces has a position in each, read with a credential of that
// workspace, and no workspace sees another's entries. Test and live are
// computed and read apart: a test credential never sees a live
// snapshot nor the reverse. A snapshot is one computation of an
// environment (every workspace of it, under one policy version and one
// window); its entries carry the tenant, workspace and environment they
// belong to, and a read names all three.
//
// # Signals
//
// Each signal is a count of stored rows, per user, whose event time falls
// in the snapshot's window (start exclusive, end inclusive) and whose state
// at the computation is still the one counted:
//
//   - submissions_accepted: submissions ACCEPTED whose review falls in the
//     window, counted for the submitter in the workspace they submitted
//     from (the project may be another tenant's public project);
//   - releases_live: releases in status LIVE whose move to LIVE falls in
//     the window (a release taken down since counts no more), counted for
//     the release's creator;
//   - generations_completed: music generation operations completed in the
//     window, counted for the user of the principal that started them;
//   - sound_operations_completed: sound engine operations completed in the
//     window, counted likewise.
//
// Nothing else counts: no view, play, follower or engagement figure is
// held by the platform, and none is estimated. A reward is not a signal:
// rewards are the entitlements a leaderboard must never create, and
// counting them would rank by what was already paid.
//
// # The scoring policy
//
// The policy leaderboard.scoring (PolicyID) is an immutable, versioned
// document (package policy) per environment: the window in days and an
// integer weight per counted signal (Scoring). A super_admin publishes a
// new version through POST /api/v1/policies, validated by
// Scoring.Validate; the built-in default (DefaultScoring: 30 days,
// releases_live 10, submissions_accepted 5, generations_completed 1) is
// published as version 1 where an environment has none (SeedScoring, at
// start and, failing that, by the first computation). A snapshot is
// computed under the version current when it runs and records its id,
// version and hash; a later version changes the next snapshot only.
// Historical snapshots are never recomputed.
//
// # Ranking
//
// A user's score is the sum, over the policy's signals, of weight times
// count. The ranked subjects of a workspace are the users with a score
// above zero (at least one counted row: weights are at least 1); a user
// with no counted row is not ranked, never ranked with zero. Ranks are
// standard competition ranks over score descending: equal scores share a
// rank and the next rank skips as many places (1, 2, 2, 4), so no tie is
// broken by an id, a sign-up date or anything that is not a signal;
// TiedWith says how many others share a rank.
//
// # Snapshots
//
// The job JobSnapshot computes a snapshot of each environment as of the
// start of every Config.Every (a day by default) and, enqueued on demand
// (Service.Enqueue; the host operator's Platform.EnqueueLeaderboardSnapshot), of
// one environment as of the moment it was asked. The counts are read on
// the read pool; the snapshot and its entries are written in one unit of
// work. A snapshot is unique per environment and window end, so a job run
// twice (delivery is at least once) writes it once. Snapshots are kept:
// each is the record of what was ranked under which policy version. A
// snapshot is a read model of rows other domains wrote: it moves no value
// and no state, so it writes no outbox event, ledger entry or audit
// record.
//
// # Reading a position
//
// Service.Explain answers for the caller (a session's user; an API key's
// creating user), in the caller's workspace and environment, from the
// newest snapshot of the environment: StatusNoSnapshot when none was
// computed (no context, no rank, no score), StatusNotRanked when the
// caller has no entry in it (the context, and how many were ranked), and
// StatusRanked with the rank, score, ties and each signal's count, weight
// and points. It reads only; it grants, allocates or promises nothing.
//
// The package imports no transport, store or SDK; package store
// implements its ports.
package leaderboard
