package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/discover"
	"github.com/creatormusic/platform/project"
)

var _ discover.Store = (*Tx)(nil)

// keyset appends the (score, id) keyset condition of after to a query
// over a derived table x with columns score and id.
func keyset(q string, args []any, after *discover.Position) (string, []any) {
	if after == nil {
		return q, args
	}
	return q + ` AND (x.score < ? OR (x.score = ? AND x.id < ?))`, append(args, after.Score, after.Score, after.ID)
}

// DiscoverProjects implements discover.Store: the environment's public
// projects in a discoverable status, with the count of their accepted
// submissions as score.
func (tx *Tx) DiscoverProjects(ctx context.Context, env access.Environment, q discover.Query) ([]discover.Item, error) {
	const op = "store.DiscoverProjects"
	inner := `SELECT p.id, p.title, p.type, p.status, p.owner_user_id, p.created_at,
		(SELECT COUNT(*) FROM submissions s WHERE s.project_id = p.id AND s.status = 'ACCEPTED') AS score
		FROM projects p WHERE p.visibility = 'public' AND p.environment = ? AND p.status IN (?)`
	args := []any{string(env), bun.In(discover.ProjectStatuses())}
	if q.Type != "" {
		inner += ` AND p.type = ?`
		args = append(args, q.Type)
	}
	query, args := keyset(`SELECT * FROM (`+inner+`) x WHERE 1 = 1`, args, q.After)
	query += ` ORDER BY x.score DESC, x.id DESC LIMIT ?`
	var rows []struct {
		ID        string    `bun:"id"`
		Title     string    `bun:"title"`
		Type      string    `bun:"type"`
		Status    string    `bun:"status"`
		Owner     string    `bun:"owner_user_id"`
		CreatedAt time.Time `bun:"created_at"`
		Score     int64     `bun:"score"`
	}
	if err := tx.idb.NewRaw(query, append(args, q.Limit)...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]discover.Item, 0, len(rows))
	for _, r := range rows {
		out = append(out, discover.Item{Kind: discover.KindProject, ID: r.ID, Title: r.Title, Type: r.Type, CreatorID: r.Owner,
			Score: &r.Score, Environment: env, CreatedAt: r.CreatedAt.UTC(),
			Project: &discover.ProjectFacts{ID: r.ID, Title: r.Title, Status: project.Status(r.Status), AcceptedSubmissions: r.Score}})
	}
	return out, nil
}

// DiscoverTracks implements discover.Store: the environment's ACCEPTED
// submissions of a track type whose project is public, newest first,
// through submissions_accepted_submitter's status.
func (tx *Tx) DiscoverTracks(ctx context.Context, env access.Environment, q discover.Query) ([]discover.Item, error) {
	const op = "store.DiscoverTracks"
	query := `SELECT s.id, s.title, s.type, s.submitter_user_id, s.asset_id, s.created_at, s.reviewed_at, p.id AS project_id,
		p.title AS project_title, p.status AS project_status,
		(SELECT COUNT(*) FROM submissions a WHERE a.project_id = p.id AND a.status = 'ACCEPTED') AS accepted
		FROM submissions s JOIN projects p ON p.id = s.project_id
		WHERE s.environment = ? AND s.status = 'ACCEPTED' AND p.visibility = 'public' AND s.type IN (?)`
	args := []any{string(env), bun.In(discover.TrackTypes())}
	if q.Type != "" {
		query += ` AND s.type = ?`
		args = append(args, q.Type)
	}
	if q.After != nil {
		query += ` AND s.id < ?`
		args = append(args, q.After.ID)
	}
	query += ` ORDER BY s.id DESC LIMIT ?`
	var rows []struct {
		ID            string     `bun:"id"`
		Title         string     `bun:"title"`
		Type          string     `bun:"type"`
		Submitter     string     `bun:"submitter_user_id"`
		AssetID       *string    `bun:"asset_id"`
		CreatedAt     time.Time  `bun:"created_at"`
		ReviewedAt    *time.Time `bun:"reviewed_at"`
		ProjectID     string     `bun:"project_id"`
		ProjectTitle  string     `bun:"project_title"`
		ProjectStatus string     `bun:"project_status"`
		Accepted      int64      `bun:"accepted"`
	}
	if err := tx.idb.NewRaw(query, append(args, q.Limit)...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]discover.Item, 0, len(rows))
	for _, r := range rows {
		it := discover.Item{Kind: discover.KindTrack, ID: r.ID, Title: r.Title, Type: r.Type, CreatorID: r.Submitter, Environment: env,
			CreatedAt: r.CreatedAt.UTC(), Track: &discover.TrackFacts{},
			Project: &discover.ProjectFacts{ID: r.ProjectID, Title: r.ProjectTitle, Status: project.Status(r.ProjectStatus), AcceptedSubmissions: r.Accepted}}
		if r.AssetID != nil {
			it.Track.AssetID = *r.AssetID
		}
		if r.ReviewedAt != nil {
			it.Track.AcceptedAt = r.ReviewedAt.UTC()
		}
		out = append(out, it)
	}
	return out, nil
}

// DiscoverCreators implements discover.Store: users with a verified
// wallet link, with their public projects and contributions of the
// environment counted in every tenant, kept when either is not zero.
func (tx *Tx) DiscoverCreators(ctx context.Context, env access.Environment, q discover.Query) ([]discover.Item, error) {
	const op = "store.DiscoverCreators"
	inner := `SELECT u.id, u.display_name, u.created_at,
		(SELECT l.address FROM wallet_links l WHERE l.user_id = u.id ORDER BY l.verified_at, l.id LIMIT 1) AS wallet,
		(SELECT COUNT(*) FROM projects p WHERE p.owner_user_id = u.id AND p.environment = ? AND p.visibility = 'public') AS public_projects,
		(SELECT COUNT(*) FROM submissions s JOIN projects p ON p.id = s.project_id
			WHERE s.submitter_user_id = u.id AND s.environment = ? AND s.status = 'ACCEPTED' AND p.visibility = 'public') AS contributions
		FROM users u WHERE EXISTS (SELECT 1 FROM wallet_links l WHERE l.user_id = u.id)`
	args := []any{string(env), string(env)}
	query, args := keyset(`SELECT * FROM (SELECT c.*, c.public_projects + c.contributions AS score FROM (`+inner+`) c) x WHERE x.score > 0`,
		args, q.After)
	query += ` ORDER BY x.score DESC, x.id DESC LIMIT ?`
	var rows []struct {
		ID             string    `bun:"id"`
		DisplayName    string    `bun:"display_name"`
		CreatedAt      time.Time `bun:"created_at"`
		Wallet         string    `bun:"wallet"`
		PublicProjects int64     `bun:"public_projects"`
		Contributions  int64     `bun:"contributions"`
		Score          int64     `bun:"score"`
	}
	if err := tx.idb.NewRaw(query, append(args, q.Limit)...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]discover.Item, 0, len(rows))
	for _, r := range rows {
		out = append(out, discover.Item{Kind: discover.KindCreator, ID: r.ID, Title: r.DisplayName, CreatorID: r.ID, Score: &r.Score,
			Environment: env, CreatedAt: r.CreatedAt.UTC(),
			Creator: &discover.CreatorFacts{Wallet: r.Wallet, PublicProjects: r.PublicProjects, Contributions: r.Contributions}})
	}
	return out, nil
}
