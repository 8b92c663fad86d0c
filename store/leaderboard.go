package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/leaderboard"
	"github.com/creatormusic/platform/policy"
)

var (
	_ leaderboard.Store       = (*Tx)(nil)
	_ leaderboard.SourceStore = (*Tx)(nil)
	_ leaderboard.ReadStore   = (*Tx)(nil)
)

// leaderboardSignals are the queries of each signal's counts: the table,
// the columns naming the tenant, workspace and user the rows count for,
// the counted state and the event time (leaderboard package doc,
// Signals). Each is served by a partial index of migration 0047.
var leaderboardSignals = map[leaderboard.Signal]string{
	leaderboard.SignalSubmissionsAccepted: `SELECT submitter_tenant_id AS tenant_id, submitter_workspace_id AS workspace_id,
		submitter_user_id AS user_id, COUNT(*) AS n FROM submissions
		WHERE environment = ? AND status = 'ACCEPTED' AND reviewed_at > ? AND reviewed_at <= ?
		GROUP BY submitter_tenant_id, submitter_workspace_id, submitter_user_id`,
	leaderboard.SignalReleasesLive: `SELECT tenant_id, workspace_id, created_by_user_id AS user_id, COUNT(*) AS n FROM releases
		WHERE environment = ? AND status = 'LIVE' AND updated_at > ? AND updated_at <= ?
		GROUP BY tenant_id, workspace_id, created_by_user_id`,
	leaderboard.SignalGenerationsCompleted: `SELECT tenant_id, workspace_id, created_by_user_id AS user_id, COUNT(*) AS n
		FROM generation_operations WHERE environment = ? AND status = 'completed' AND ended_at > ? AND ended_at <= ?
		GROUP BY tenant_id, workspace_id, created_by_user_id`,
	leaderboard.SignalSoundOperationsCompleted: `SELECT tenant_id, workspace_id, created_by_user_id AS user_id, COUNT(*) AS n
		FROM sound_operations WHERE environment = ? AND status = 'completed' AND ended_at > ? AND ended_at <= ?
		GROUP BY tenant_id, workspace_id, created_by_user_id`,
}

// LeaderboardCounts implements leaderboard.SourceStore.
func (tx *Tx) LeaderboardCounts(ctx context.Context, env access.Environment, signal leaderboard.Signal, start,
	end time.Time) ([]leaderboard.Count, error) {
	const op = "store.LeaderboardCounts"
	q, ok := leaderboardSignals[signal]
	if !ok {
		return nil, fault.Invalid(op, "signal", "The store counts no such signal.").With("signal", string(signal))
	}
	var rows []struct {
		TenantID    string `bun:"tenant_id"`
		WorkspaceID string `bun:"workspace_id"`
		UserID      string `bun:"user_id"`
		N           int64  `bun:"n"`
	}
	if err := tx.idb.NewRaw(q, string(env), start.UTC(), end.UTC()).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]leaderboard.Count, 0, len(rows))
	for _, r := range rows {
		out = append(out, leaderboard.Count{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, UserID: r.UserID, N: r.N})
	}
	return out, nil
}

// leaderboardEntryBatch bounds the rows of one entries INSERT.
const leaderboardEntryBatch = 200

// LeaderboardSnapshotInsert implements leaderboard.Store: the snapshot,
// unless its environment has one of its window end, then its entries in
// batches.
func (tx *Tx) LeaderboardSnapshotInsert(ctx context.Context, s leaderboard.Snapshot, entries []leaderboard.Entry) (bool, error) {
	const op = "store.LeaderboardSnapshotInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO leaderboard_snapshots (id, environment, policy_id, policy_version, policy_hash,
		window_start, window_end, computed_at, workspaces, subjects) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		s.ID, string(s.Environment), s.Policy.ID, s.Policy.Version, s.Policy.Hash, s.WindowStart.UTC(), s.WindowEnd.UTC(),
		s.ComputedAt.UTC(), s.Workspaces, s.Subjects)
	ok, err := inserted(op, res, err)
	if err != nil || !ok {
		return false, err
	}
	for len(entries) > 0 {
		batch := entries[:min(len(entries), leaderboardEntryBatch)]
		entries = entries[len(batch):]
		args := make([]any, 0, 8*len(batch))
		for _, e := range batch {
			counts, err := json.Marshal(e.Counts)
			if err != nil {
				return false, errf(op, err)
			}
			args = append(args, s.ID, e.Scope.TenantID, e.Scope.WorkspaceID, string(e.Scope.Environment), e.UserID, string(counts),
				e.Score, e.Rank)
		}
		q := `INSERT INTO leaderboard_entries (snapshot_id, tenant_id, workspace_id, environment, user_id, counts, score, subject_rank)
			VALUES ` + strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?), ", len(batch)-1) + `(?, ?, ?, ?, ?, ?, ?, ?)`
		if _, err := tx.idb.ExecContext(ctx, q, args...); err != nil {
			return false, errf(op, err)
		}
	}
	return true, nil
}

type leaderboardSnapshotRow struct {
	ID            string    `bun:"id"`
	Environment   string    `bun:"environment"`
	PolicyID      string    `bun:"policy_id"`
	PolicyVersion int       `bun:"policy_version"`
	PolicyHash    string    `bun:"policy_hash"`
	WindowStart   time.Time `bun:"window_start"`
	WindowEnd     time.Time `bun:"window_end"`
	ComputedAt    time.Time `bun:"computed_at"`
	Workspaces    int       `bun:"workspaces"`
	Subjects      int       `bun:"subjects"`
}

// LeaderboardLatest implements leaderboard.ReadStore: through the unique
// index on (environment, window_end).
func (tx *Tx) LeaderboardLatest(ctx context.Context, env access.Environment) (leaderboard.Snapshot, error) {
	var r leaderboardSnapshotRow
	err := tx.idb.NewRaw(`SELECT id, environment, policy_id, policy_version, policy_hash, window_start, window_end, computed_at,
		workspaces, subjects FROM leaderboard_snapshots WHERE environment = ? ORDER BY window_end DESC, id DESC LIMIT 1`,
		string(env)).Scan(ctx, &r)
	if err != nil {
		return leaderboard.Snapshot{}, notFound("store.LeaderboardLatest", err)
	}
	return leaderboard.Snapshot{ID: r.ID, Environment: access.Environment(r.Environment),
		Policy:      policy.Ref{ID: r.PolicyID, Version: r.PolicyVersion, Hash: r.PolicyHash},
		WindowStart: r.WindowStart.UTC(), WindowEnd: r.WindowEnd.UTC(), ComputedAt: r.ComputedAt.UTC(),
		Workspaces: r.Workspaces, Subjects: r.Subjects}, nil
}

// LeaderboardStanding implements leaderboard.ReadStore: the workspace's
// count of entries, the user's entry and how many share its rank, each
// read in the scope's tenant, workspace and environment.
func (tx *Tx) LeaderboardStanding(ctx context.Context, snapshotID string, sc access.Scope, userID string) (leaderboard.Standing, error) {
	const op = "store.LeaderboardStanding"
	const where = ` FROM leaderboard_entries WHERE snapshot_id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{snapshotID, sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	var out leaderboard.Standing
	if err := tx.idb.NewRaw(`SELECT COUNT(*)`+where, args...).Scan(ctx, &out.Ranked); err != nil {
		return leaderboard.Standing{}, errf(op, err)
	}
	var r struct {
		UserID string `bun:"user_id"`
		Counts string `bun:"counts"`
		Score  int64  `bun:"score"`
		Rank   int    `bun:"subject_rank"`
	}
	err := tx.idb.NewRaw(`SELECT user_id, counts, score, subject_rank`+where+` AND user_id = ?`, append(args[:len(args):len(args)], userID)...).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return leaderboard.Standing{}, errf(op, err)
	}
	e := leaderboard.Entry{SnapshotID: snapshotID, Scope: sc, UserID: r.UserID, Score: r.Score, Rank: r.Rank}
	if err := json.Unmarshal([]byte(r.Counts), &e.Counts); err != nil {
		return leaderboard.Standing{}, errf(op, err)
	}
	if err := tx.idb.NewRaw(`SELECT COUNT(*)`+where+` AND subject_rank = ? AND user_id <> ?`, append(args[:len(args):len(args)], r.Rank, userID)...).
		Scan(ctx, &out.TiedWith); err != nil {
		return leaderboard.Standing{}, errf(op, err)
	}
	out.Entry = &e
	return out, nil
}
