package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/project"
)

var _ creator.Store = (*Tx)(nil)

// CreatorByWallet implements creator.Store: among the links of the
// address on the network, the reader's tenant's first, else the earliest
// verified (ties by link id), joined to its user. It reads across tenants
// through wallet_links_address.
func (tx *Tx) CreatorByWallet(ctx context.Context, q creator.Lookup) (creator.Creator, error) {
	var r struct {
		UserID      string    `bun:"user_id"`
		DisplayName string    `bun:"display_name"`
		CreatedAt   time.Time `bun:"created_at"`
		Network     string    `bun:"network"`
		Address     string    `bun:"address"`
		VerifiedAt  time.Time `bun:"verified_at"`
	}
	err := tx.idb.NewRaw(`SELECT l.user_id, u.display_name, u.created_at, l.network, l.address, l.verified_at
		FROM wallet_links l JOIN users u ON u.id = l.user_id
		WHERE l.network = ? AND l.address = ?
		ORDER BY CASE WHEN l.tenant_id = ? THEN 0 ELSE 1 END, l.verified_at, l.id
		LIMIT 1`, q.Network, q.Address, q.ReaderTenantID).Scan(ctx, &r)
	if err != nil {
		return creator.Creator{}, notFound("store.CreatorByWallet", err)
	}
	return creator.Creator{UserID: r.UserID, DisplayName: r.DisplayName, CreatedAt: r.CreatedAt.UTC(),
		Wallet: creator.Wallet{Address: r.Address, Network: r.Network, VerifiedAt: r.VerifiedAt.UTC()}}, nil
}

// CreatorCounts implements creator.Store: counts of rows, through
// projects_public_owner and submissions_accepted_submitter.
func (tx *Tx) CreatorCounts(ctx context.Context, env access.Environment, userID string) (creator.Counts, error) {
	const op = "store.CreatorCounts"
	var c creator.Counts
	err := tx.idb.NewRaw(`SELECT COUNT(*) FROM projects WHERE visibility = 'public' AND owner_user_id = ? AND environment = ?`,
		userID, string(env)).Scan(ctx, &c.PublicProjects)
	if err != nil {
		return c, errf(op, err)
	}
	err = tx.idb.NewRaw(`SELECT COUNT(*) FROM submissions WHERE submitter_user_id = ? AND environment = ? AND status = 'ACCEPTED'`+
		publicProject, userID, string(env)).Scan(ctx, &c.Contributions)
	return c, errf(op, err)
}

// ContributionList implements creator.Store: the submitter's ACCEPTED
// submissions of one environment, through submissions_accepted_submitter,
// kept when their project is public, with the projects' titles and the
// submissions' links.
func (tx *Tx) ContributionList(ctx context.Context, env access.Environment, userID string, f creator.ContributionFilter,
	before string, limit int) ([]creator.Contribution, error) {
	const op = "store.ContributionList"
	q := submissionSelect + ` WHERE submitter_user_id = ? AND environment = ? AND status = 'ACCEPTED'` + publicProject
	args := []any{userID, string(env)}
	if f.Type != "" {
		q += ` AND type = ?`
		args = append(args, string(f.Type))
	}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	var rows []submissionRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	if len(rows) == 0 {
		return []creator.Contribution{}, nil
	}
	subs := make([]project.Submission, 0, len(rows))
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		subs = append(subs, r.submission())
		ids = append(ids, r.ProjectID)
	}
	if err := tx.submissionLinks(ctx, op, subs); err != nil {
		return nil, err
	}
	var titles []struct {
		ID    string `bun:"id"`
		Title string `bun:"title"`
	}
	err := tx.idb.NewRaw(`SELECT id, title FROM projects WHERE id IN (?)`, bun.In(ids)).Scan(ctx, &titles)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	title := make(map[string]string, len(titles))
	for _, t := range titles {
		title[t.ID] = t.Title
	}
	out := make([]creator.Contribution, 0, len(subs))
	for _, s := range subs {
		out = append(out, creator.Contribution{Submission: s, ProjectTitle: title[s.ProjectID]})
	}
	return out, nil
}

// publicProject keeps the submissions (of a query over submissions) whose
// project is public.
const publicProject = ` AND EXISTS (SELECT 1 FROM projects p WHERE p.id = submissions.project_id AND p.visibility = 'public')`
