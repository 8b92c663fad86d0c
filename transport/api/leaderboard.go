package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/transport"
)

// LeaderboardExplanation is the caller's position in their workspace's
// leaderboard, in the newest snapshot of the caller's environment.
type LeaderboardExplanation struct {
	// Object is always "leaderboard_explanation".
	Object string `json:"object" example:"leaderboard_explanation"`
	// Status is ranked (the caller has an entry), not_ranked (the newest snapshot holds no counted row of the caller in this workspace) or no_snapshot (none was computed in this environment yet).
	Status string `json:"status" example:"ranked" enum:"ranked,not_ranked,no_snapshot"`
	// UserID is the subject explained: the session's user, or the user who created the API key.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// WorkspaceID is the workspace whose leaderboard is read: the caller's.
	WorkspaceID string `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	// Environment is the caller's environment, the one the snapshot ranks.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Rank is the caller's competition rank in the workspace (equal scores share a rank; the next skips as many places); null unless ranked.
	Rank *int `json:"rank" example:"2"`
	// Score is the sum of the signals' points; null unless ranked, never 0 for a caller without a counted row.
	Score *int64 `json:"score" example:"15"`
	// TiedWith is how many other subjects share the caller's rank; null unless ranked.
	TiedWith *int `json:"tiedWith" example:"0"`
	// Signals is each of the snapshot's policy signals with the caller's count, its weight and its points (count times weight); null unless ranked.
	Signals []LeaderboardSignalView `json:"signals"`
	// Snapshot is the snapshot read, with its policy and window; null with status no_snapshot.
	Snapshot *LeaderboardSnapshotView `json:"snapshot"`
}

// LeaderboardSignalView is one signal's part of a score.
type LeaderboardSignalView struct {
	// Signal is the counted kind of record: submissions_accepted (submissions ACCEPTED in the window, for their submitter's workspace), releases_live (releases that went LIVE in the window and are LIVE still), generations_completed or sound_operations_completed (operations completed in the window).
	Signal string `json:"signal" example:"submissions_accepted" enum:"submissions_accepted,releases_live,generations_completed,sound_operations_completed"`
	// Count is the number of the caller's rows counted.
	Count int64 `json:"count" example:"1"`
	// Weight is the policy's integer weight of the signal.
	Weight int64 `json:"weight" example:"5"`
	// Points is count times weight.
	Points int64 `json:"points" example:"5"`
}

// LeaderboardWeightView is one signal the policy counts, with its weight.
type LeaderboardWeightView struct {
	// Signal is the counted kind of record.
	Signal string `json:"signal" example:"releases_live" enum:"submissions_accepted,releases_live,generations_completed,sound_operations_completed"`
	// Weight is its integer weight.
	Weight int64 `json:"weight" example:"10"`
}

// LeaderboardSnapshotView is a snapshot's context: when it was computed,
// over which window, under which policy version, and how many subjects
// the caller's workspace has in it.
type LeaderboardSnapshotView struct {
	// ID is the snapshot's id: one computation of the environment's leaderboards.
	ID string `json:"id" example:"lbs_01jd0000000000000000000000"`
	// Policy is the leaderboard.scoring policy version the snapshot applied (id, version, hash); later versions never change it.
	Policy PolicyRefView `json:"policy"`
	// Weights are the signals the policy counts, with their weights; no other signal counts.
	Weights []LeaderboardWeightView `json:"weights"`
	// WindowDays is the window's length in days, as the policy states it.
	WindowDays int `json:"windowDays" example:"30"`
	// WindowStart is the window's start: rows whose event time is after it count.
	WindowStart time.Time `json:"windowStart"`
	// WindowEnd is the window's end, the time the snapshot is as of: rows whose event time is at most it count.
	WindowEnd time.Time `json:"windowEnd"`
	// ComputedAt is when the snapshot was computed.
	ComputedAt time.Time `json:"computedAt"`
	// RankedSubjects is how many users the caller's workspace has ranked in the snapshot (0 when nobody had a counted row).
	RankedSubjects int `json:"rankedSubjects" example:"3"`
	// Ranking states the formula and the tie rule.
	Ranking string `json:"ranking" example:"score = sum of weight x count over the policy's signals; users with a score above 0 are ranked by score descending; equal scores share a rank (1, 2, 2, 4)"`
}

// leaderboardRanking states the ranking formula.
const leaderboardRanking = "score = sum of weight x count over the policy's signals; users with a score above 0 are ranked by score " +
	"descending; equal scores share a rank (1, 2, 2, 4)"

func leaderboardView(e leaderboard.Explanation) LeaderboardExplanation {
	v := LeaderboardExplanation{Object: "leaderboard_explanation", Status: string(e.Status), UserID: e.UserID,
		WorkspaceID: e.Scope.WorkspaceID, Environment: string(e.Scope.Environment)}
	if s := e.Snapshot; s != nil {
		sv := &LeaderboardSnapshotView{ID: s.ID, Policy: PolicyRefView{ID: s.Policy.ID, Version: s.Policy.Version, Hash: s.Policy.Hash},
			Weights: []LeaderboardWeightView{}, WindowDays: e.Scoring.WindowDays, WindowStart: s.WindowStart, WindowEnd: s.WindowEnd,
			ComputedAt: s.ComputedAt, RankedSubjects: e.Ranked, Ranking: leaderboardRanking}
		for _, sig := range e.Scoring.Counted() {
			sv.Weights = append(sv.Weights, LeaderboardWeightView{Signal: string(sig), Weight: e.Scoring.Weights[sig]})
		}
		v.Snapshot = sv
	}
	if en := e.Entry; en != nil {
		rank, score, tied := en.Rank, en.Score, e.TiedWith
		v.Rank, v.Score, v.TiedWith, v.Signals = &rank, &score, &tied, []LeaderboardSignalView{}
		for _, t := range e.Terms {
			v.Signals = append(v.Signals, LeaderboardSignalView{Signal: string(t.Signal), Count: t.Count, Weight: t.Weight, Points: t.Points})
		}
	}
	return v
}

// leaderboardRoutes serve the caller's leaderboard position (spec,
// Architecture and operations: "snapshot with policy/window context; no
// score is fabricated when none exists").
func leaderboardRoutes(svc *leaderboard.Service) []Route {
	if svc == nil {
		return nil
	}
	t := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	snap := &LeaderboardSnapshotView{ID: "lbs_01jd0000000000000000000000", WindowDays: 30, WindowStart: t.AddDate(0, 0, -30),
		WindowEnd: t, ComputedAt: t.Add(2 * time.Second), RankedSubjects: 3, Ranking: leaderboardRanking,
		Policy: PolicyRefView{ID: leaderboard.PolicyID, Version: 1, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}
	snap.Weights = []LeaderboardWeightView{{"submissions_accepted", 5}, {"releases_live", 10}, {"generations_completed", 1}}
	ex := LeaderboardExplanation{Object: "leaderboard_explanation", Status: "ranked", UserID: "usr_01jd0000000000000000000000",
		WorkspaceID: "ws_01jd0000000000000000000000", Environment: "live", Rank: new(2), Score: new(int64(15)), TiedWith: new(0),
		Signals: []LeaderboardSignalView{{Signal: "submissions_accepted", Count: 1, Weight: 5, Points: 5},
			{Signal: "releases_live", Count: 1, Weight: 10, Points: 10}, {Signal: "generations_completed", Count: 0, Weight: 1, Points: 0}},
		Snapshot: snap}
	return []Route{{Method: http.MethodGet, Pattern: "/api/v1/leaderboard/me/explain", OperationID: "explainLeaderboardPosition",
		Tag: transport.TagArchitecture, Summary: "Explain your leaderboard position",
		Description: "The caller's position in their workspace's leaderboard, in the newest snapshot of the caller's environment. " +
			"A leaderboard is per workspace and environment: it ranks the users whose work the workspace's records hold. A " +
			"snapshot is computed by a job (daily, and when the host's operator asks) under the environment's leaderboard.scoring " +
			"policy version (POST /api/v1/policies publishes a new one; the default: 30 days, releases_live 10, " +
			"submissions_accepted 5, generations_completed 1), counting stored rows only: submissions ACCEPTED in the window " +
			"(for the workspace they were submitted from), releases that went LIVE in the window and are LIVE still, and music " +
			"generations and sound operations completed in the window; no view, play or engagement figure counts. score = the " +
			"sum of weight x count; users with a score above 0 are ranked by score descending, and equal scores share a rank " +
			"(1, 2, 2, 4). status no_snapshot: none was computed yet (snapshot, rank, score and signals null); not_ranked: the " +
			"caller has no counted row in the snapshot's window (the snapshot's context, rank, score and signals null, never 0 " +
			"or a made-up rank); ranked: rank, score, ties and each signal's count, weight and points. A snapshot keeps the " +
			"policy version it applied. The caller is the session's user, or the user who created the API key (scope read); " +
			"nothing of another workspace or environment is read. The route reads only, and a position grants nothing: no " +
			"reward, allocation or claimable entitlement.",
		Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
		Response: ex,
		Handle: func(ctx context.Context, c *Call) (any, error) {
			e, err := svc.Explain(ctx, c.Tx, c.Principal)
			if err != nil {
				return nil, err
			}
			return leaderboardView(e), nil
		}}}
}
