package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/release"
)

var _ release.Store = (*Tx)(nil)

type releaseRow struct {
	ID              string    `bun:"id"`
	TenantID        string    `bun:"tenant_id"`
	WorkspaceID     string    `bun:"workspace_id"`
	Environment     string    `bun:"environment"`
	CreatedByUserID string    `bun:"created_by_user_id"`
	TargetType      string    `bun:"target_type"`
	TargetID        string    `bun:"target_id"`
	ProjectID       string    `bun:"project_id"`
	Title           string    `bun:"title"`
	ReleaseDate     string    `bun:"release_date"`
	Territories     string    `bun:"territories"`
	Distributor     string    `bun:"distributor"`
	Status          string    `bun:"status"`
	Version         int64     `bun:"version"`
	CreatedAt       time.Time `bun:"created_at"`
	UpdatedAt       time.Time `bun:"updated_at"`
}

func (r releaseRow) release() release.Release {
	return release.Release{ID: r.ID,
		Scope:           access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		CreatedByUserID: r.CreatedByUserID, Target: release.Target{Type: release.TargetType(r.TargetType), ID: r.TargetID},
		ProjectID: r.ProjectID, Title: r.Title, ReleaseDate: r.ReleaseDate, Territories: strings.Split(r.Territories, ","),
		Distributor: r.Distributor, Status: release.Status(r.Status), Version: r.Version,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

const releaseSelect = `SELECT id, tenant_id, workspace_id, environment, created_by_user_id, target_type, target_id, project_id,
	title, release_date, territories, distributor, status, version, created_at, updated_at FROM releases`

// ReleaseInsert implements release.Store.
func (tx *Tx) ReleaseInsert(ctx context.Context, r release.Release) error {
	const op = "store.ReleaseInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO releases (id, tenant_id, workspace_id, environment, created_by_user_id,
		target_type, target_id, project_id, title, release_date, territories, distributor, status, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.ID, r.Scope.TenantID, r.Scope.WorkspaceID, string(r.Scope.Environment), r.CreatedByUserID, string(r.Target.Type),
		r.Target.ID, r.ProjectID, r.Title, r.ReleaseDate, strings.Join(r.Territories, ","), r.Distributor, string(r.Status),
		r.Version, r.CreatedAt.UTC(), r.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The release exists.").With("releaseId", r.ID)
	}
	return nil
}

// ReleaseGet implements release.Store: by id in one tenant, workspace and
// environment.
func (tx *Tx) ReleaseGet(ctx context.Context, sc access.Scope, id string) (release.Release, error) {
	var r releaseRow
	err := tx.idb.NewRaw(releaseSelect+` WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`,
		id, sc.TenantID, sc.WorkspaceID, string(sc.Environment)).Scan(ctx, &r)
	if err != nil {
		return release.Release{}, notFound("store.ReleaseGet", err)
	}
	return r.release(), nil
}

// ReleaseList implements release.Store: one tenant, workspace and
// environment, newest first.
func (tx *Tx) ReleaseList(ctx context.Context, sc access.Scope, f release.Filter, before string, limit int) ([]release.Release, error) {
	const op = "store.ReleaseList"
	q := releaseSelect + ` WHERE tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	if f.ReaderUserID != "" {
		q += ` AND created_by_user_id = ?`
		args = append(args, f.ReaderUserID)
	}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	var rows []releaseRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]release.Release, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.release())
	}
	return out, nil
}

// ReleaseSetStatus implements release.Store: a compare-and-set on version.
func (tx *Tx) ReleaseSetStatus(ctx context.Context, r release.Release) error {
	const op = "store.ReleaseSetStatus"
	res, err := tx.idb.ExecContext(ctx, `UPDATE releases SET status = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(r.Status), r.Version, r.UpdatedAt.UTC(), r.ID, r.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The release changed meanwhile.")
	}
	return nil
}
