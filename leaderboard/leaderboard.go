package leaderboard

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// IDPrefix prefixes snapshot ids.
const IDPrefix = "lbs_"

// Snapshot is one computation of an environment's leaderboards: every
// workspace's, under one policy version and one window.
type Snapshot struct {
	// ID is the snapshot's id (IDPrefix).
	ID string
	// Environment is the environment it ranks.
	Environment access.Environment
	// Policy is the scoring policy version it applied.
	Policy policy.Ref
	// WindowStart and WindowEnd bound the window: rows whose event time
	// is after WindowStart and at most WindowEnd count.
	WindowStart, WindowEnd time.Time
	// ComputedAt is when it was written (the unit of work's time).
	ComputedAt time.Time
	// Workspaces is how many workspaces have at least one ranked subject;
	// Subjects how many entries it holds in all.
	Workspaces, Subjects int
}

// Entry is one ranked subject of a workspace's leaderboard in a snapshot.
type Entry struct {
	// SnapshotID is the snapshot.
	SnapshotID string
	// Scope is the tenant, workspace and environment of the leaderboard.
	Scope access.Scope
	// UserID is the subject.
	UserID string
	// Counts holds the count of each of the policy's signals.
	Counts map[Signal]int64
	// Score is the weighted sum of Counts under the snapshot's policy.
	Score int64
	// Rank is the competition rank of Score in the workspace (package
	// doc, Ranking).
	Rank int
}

// Count is how many rows of one signal a user has in one workspace.
type Count struct {
	// TenantID and WorkspaceID name the workspace the rows belong to.
	TenantID, WorkspaceID string
	// UserID is the user the rows are counted for.
	UserID string
	// N is the number of rows.
	N int64
}

// Rank builds the entries of snapshot id from the counts of each signal
// under s: one entry per user of a workspace with a score above zero,
// ranked in its workspace by competition rank of score descending, and
// ordered by workspace, rank and user id. Counts of a signal s does not
// weight, and counts of zero or less, are ignored.
func Rank(id string, env access.Environment, s Scoring, counts map[Signal][]Count) []Entry {
	type key struct{ tenant, workspace, user string }
	by := map[key]map[Signal]int64{}
	for sig, cs := range counts {
		if _, ok := s.Weights[sig]; !ok {
			continue
		}
		for _, c := range cs {
			if c.N <= 0 {
				continue
			}
			k := key{c.TenantID, c.WorkspaceID, c.UserID}
			if by[k] == nil {
				by[k] = map[Signal]int64{}
			}
			by[k][sig] += c.N
		}
	}
	out := make([]Entry, 0, len(by))
	for k, cs := range by {
		full := map[Signal]int64{}
		for _, sig := range s.Counted() {
			full[sig] = cs[sig]
		}
		_, score := s.Breakdown(full)
		if score <= 0 {
			continue
		}
		out = append(out, Entry{SnapshotID: id, Scope: access.Scope{TenantID: k.tenant, WorkspaceID: k.workspace, Environment: env},
			UserID: k.user, Counts: full, Score: score})
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Scope.TenantID, b.Scope.TenantID), cmp.Compare(a.Scope.WorkspaceID, b.Scope.WorkspaceID),
			cmp.Compare(b.Score, a.Score), cmp.Compare(a.UserID, b.UserID))
	})
	// pos is the entry's place in its workspace, from 1: a rank is the
	// place of the first entry of its score.
	pos := 0
	for i := range out {
		if i == 0 || out[i-1].Scope != out[i].Scope {
			pos = 0
		}
		pos++
		if pos > 1 && out[i-1].Score == out[i].Score {
			out[i].Rank = out[i-1].Rank
		} else {
			out[i].Rank = pos
		}
	}
	return out
}

// Status says what an explanation found.
type Status string

// The statuses of an explanation.
const (
	// StatusNoSnapshot: no snapshot of the environment was computed yet;
	// there is no context, rank or score.
	StatusNoSnapshot Status = "no_snapshot"
	// StatusNotRanked: the newest snapshot holds no entry of the caller
	// in the caller's workspace (no counted row in its window); there is
	// no rank or score.
	StatusNotRanked Status = "not_ranked"
	// StatusRanked: the caller is ranked in the newest snapshot.
	StatusRanked Status = "ranked"
)

// Statuses lists every Status.
func Statuses() []Status { return []Status{StatusNoSnapshot, StatusNotRanked, StatusRanked} }

// Standing is what a workspace's leaderboard in a snapshot holds of one
// user.
type Standing struct {
	// Ranked is how many subjects the workspace's leaderboard ranks.
	Ranked int
	// Entry is the user's entry; nil when the user is not ranked.
	Entry *Entry
	// TiedWith is how many other subjects share the user's rank.
	TiedWith int
}

// ReadStore is what an explanation reads; package store implements it on
// the read pool. Errors are *fault.Error.
type ReadStore interface {
	policy.Store
	// LeaderboardLatest returns env's newest snapshot (greatest window
	// end, then newest id); NOT_FOUND when none was computed.
	LeaderboardLatest(ctx context.Context, env access.Environment) (Snapshot, error)
	// LeaderboardStanding returns what snapshot snapshotID holds of
	// userID in sc's tenant, workspace and environment.
	LeaderboardStanding(ctx context.Context, snapshotID string, sc access.Scope, userID string) (Standing, error)
}

// Explanation is a caller's position, explained.
type Explanation struct {
	// Status says what was found.
	Status Status
	// UserID is the subject explained: the caller.
	UserID string
	// Scope is the caller's tenant, workspace and environment.
	Scope access.Scope
	// Snapshot is the newest snapshot; nil with StatusNoSnapshot.
	Snapshot *Snapshot
	// Scoring is the snapshot's policy content; zero with
	// StatusNoSnapshot.
	Scoring Scoring
	// Ranked is how many subjects the caller's workspace has in the
	// snapshot.
	Ranked int
	// Entry is the caller's entry; nil unless StatusRanked.
	Entry *Entry
	// TiedWith is how many others share the caller's rank (StatusRanked).
	TiedWith int
	// Terms is each of the policy's signals' part of the caller's score
	// (StatusRanked).
	Terms []Term
}

// Explain returns p's position in p's workspace and environment in the
// environment's newest snapshot (package doc, Reading a position). It
// reads only. UNAUTHENTICATED without a principal or user.
func (s *Service) Explain(ctx context.Context, st ReadStore, p *access.Principal) (Explanation, error) {
	const op = "leaderboard.Explain"
	if p == nil || p.UserID == "" {
		return Explanation{}, fault.E(op, fault.Unauthenticated, "")
	}
	out := Explanation{Status: StatusNoSnapshot, UserID: p.UserID, Scope: p.Scope()}
	snap, err := st.LeaderboardLatest(ctx, p.Environment)
	if fault.Is(err, fault.NotFound) {
		return out, nil
	}
	if err != nil {
		return Explanation{}, fault.Wrap(op, err)
	}
	v, err := policy.Resolve(ctx, st, policy.Scope{Environment: p.Environment}, snap.Policy)
	if err != nil {
		return Explanation{}, fault.Wrap(op, err)
	}
	scoring, err := decodeScoring(v)
	if err != nil {
		return Explanation{}, fault.Wrap(op, err)
	}
	standing, err := st.LeaderboardStanding(ctx, snap.ID, p.Scope(), p.UserID)
	if err != nil {
		return Explanation{}, fault.Wrap(op, err)
	}
	out.Snapshot, out.Scoring, out.Ranked, out.Status = &snap, scoring, standing.Ranked, StatusNotRanked
	if standing.Entry == nil {
		return out, nil
	}
	out.Status, out.Entry, out.TiedWith = StatusRanked, standing.Entry, standing.TiedWith
	out.Terms, _ = scoring.Breakdown(standing.Entry.Counts)
	return out, nil
}
