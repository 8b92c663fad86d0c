package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

var _ project.Store = (*Tx)(nil)

type projectRow struct {
	ID          string    `bun:"id"`
	TenantID    string    `bun:"tenant_id"`
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	OwnerUserID string    `bun:"owner_user_id"`
	Title       string    `bun:"title"`
	Type        string    `bun:"type"`
	Description string    `bun:"description"`
	Visibility  string    `bun:"visibility"`
	Status      string    `bun:"status"`
	Version     int64     `bun:"version"`
	CreatedAt   time.Time `bun:"created_at"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

func (r projectRow) project() project.Project {
	return project.Project{ID: r.ID,
		Scope:       access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		OwnerUserID: r.OwnerUserID, Title: r.Title, Type: project.Type(r.Type), Description: r.Description,
		Visibility: project.Visibility(r.Visibility), Status: project.Status(r.Status), Version: r.Version,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

const projectSelect = `SELECT id, tenant_id, workspace_id, environment, owner_user_id, title, type, description, visibility, status,
	version, created_at, updated_at FROM projects`

// ProjectInsert implements project.Store.
func (tx *Tx) ProjectInsert(ctx context.Context, p project.Project) error {
	const op = "store.ProjectInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO projects (id, tenant_id, workspace_id, environment, owner_user_id, title, type,
		description, visibility, status, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		p.ID, p.Scope.TenantID, p.Scope.WorkspaceID, string(p.Scope.Environment), p.OwnerUserID, p.Title, string(p.Type),
		p.Description, string(p.Visibility), string(p.Status), p.Version, p.CreatedAt.UTC(), p.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The project exists.").With("projectId", p.ID)
	}
	return nil
}

// ProjectGet implements project.Store: by id in one environment, of any
// tenant (the service decides visibility).
func (tx *Tx) ProjectGet(ctx context.Context, env access.Environment, id string) (project.Project, error) {
	var r projectRow
	if err := tx.idb.NewRaw(projectSelect+` WHERE id = ? AND environment = ?`, id, string(env)).Scan(ctx, &r); err != nil {
		return project.Project{}, notFound("store.ProjectGet", err)
	}
	return r.project(), nil
}

// ProjectList implements project.Store: one tenant, workspace and
// environment, newest first.
func (tx *Tx) ProjectList(ctx context.Context, sc access.Scope, f project.Filter, before string, limit int) ([]project.Project, error) {
	q := projectSelect + ` WHERE tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	if f.ReaderUserID != "" {
		q += ` AND (owner_user_id = ? OR visibility = 'public' OR id IN
			(SELECT project_id FROM role_assignments WHERE workspace_id = ? AND user_id = ? AND project_id <> ''))`
		args = append(args, f.ReaderUserID, sc.WorkspaceID, f.ReaderUserID)
	}
	return tx.projectPage(ctx, "store.ProjectList", q, args, f, before, limit)
}

// ProjectListPublic implements project.Store (and creator.Store): the
// public projects of every tenant in env, newest first. The literal
// visibility condition lets both databases use the partial indexes
// projects_public and projects_public_owner.
func (tx *Tx) ProjectListPublic(ctx context.Context, env access.Environment, f project.Filter, before string, limit int) ([]project.Project, error) {
	q := projectSelect + ` WHERE visibility = 'public' AND environment = ?`
	return tx.projectPage(ctx, "store.ProjectListPublic", q, []any{string(env)}, f, before, limit)
}

// projectPage runs q (a projectSelect with its WHERE begun) narrowed by
// f's status, type and creator and by the keyset position before, newest
// first, and returns up to limit projects.
func (tx *Tx) projectPage(ctx context.Context, op, q string, args []any, f project.Filter, before string, limit int) ([]project.Project, error) {
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	if f.Type != "" {
		q += ` AND type = ?`
		args = append(args, string(f.Type))
	}
	if f.CreatorUserID != "" {
		q += ` AND owner_user_id = ?`
		args = append(args, f.CreatorUserID)
	}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	var rows []projectRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]project.Project, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.project())
	}
	return out, nil
}

// ProjectSetStatus implements project.Store: a compare-and-set on version.
func (tx *Tx) ProjectSetStatus(ctx context.Context, p project.Project) error {
	const op = "store.ProjectSetStatus"
	res, err := tx.idb.ExecContext(ctx, `UPDATE projects SET status = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(p.Status), p.Version, p.UpdatedAt.UTC(), p.ID, p.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The project changed meanwhile.")
	}
	return nil
}
