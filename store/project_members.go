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

// Tx implements the project members port over role_assignments: a
// project's members are the project-scoped template assignments naming it.
var _ project.MemberStore = (*Tx)(nil)

type projectMemberRow struct {
	ID        string    `bun:"id"`
	ProjectID string    `bun:"project_id"`
	UserID    string    `bun:"user_id"`
	Template  string    `bun:"template"`
	CreatedAt time.Time `bun:"created_at"`
}

func (r projectMemberRow) member() project.Member {
	return project.Member{ID: r.ID, ProjectID: r.ProjectID, UserID: r.UserID, Template: access.Template(r.Template),
		AssignedAt: r.CreatedAt.UTC()}
}

const projectMemberSelect = `SELECT id, project_id, user_id, template, created_at FROM role_assignments`

// ProjectMemberList implements project.MemberStore: by user id, then
// template.
func (tx *Tx) ProjectMemberList(ctx context.Context, workspaceID, projectID, after string, limit int) ([]project.Member, error) {
	var rows []projectMemberRow
	err := tx.idb.NewRaw(projectMemberSelect+` WHERE workspace_id = ? AND project_id = ? AND user_id > ?
		ORDER BY user_id, template LIMIT ?`, workspaceID, projectID, after, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.ProjectMemberList", err)
	}
	out := make([]project.Member, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.member())
	}
	return out, nil
}

// ProjectMemberLock implements project.MemberStore. The membership row is
// locked FOR UPDATE on PostgreSQL (SQLite's single writer serializes units
// of work), so a second change of the same member waits for this one's
// commit and then reads its result: concurrent changes end in one
// assignment, never two.
func (tx *Tx) ProjectMemberLock(ctx context.Context, tenantID, workspaceID, projectID, userID string) (project.Assignee, error) {
	const op = "store.ProjectMemberLock"
	var status string
	err := tx.idb.NewRaw(`SELECT status FROM memberships WHERE workspace_id = ? AND user_id = ?
		AND user_id IN (SELECT id FROM users WHERE tenant_id = ?)`+tx.rowLock(), workspaceID, userID, tenantID).Scan(ctx, &status)
	if err != nil {
		return project.Assignee{}, notFound(op, err)
	}
	cur, err := tx.projectAssignments(ctx, workspaceID, projectID, userID)
	if err != nil {
		return project.Assignee{}, errf(op, err)
	}
	return project.Assignee{Active: status == access.MembershipActive, Roles: cur}, nil
}

// projectAssignments reads userID's assignments to projectID, oldest first.
func (tx *Tx) projectAssignments(ctx context.Context, workspaceID, projectID, userID string) ([]project.Member, error) {
	var rows []projectMemberRow
	err := tx.idb.NewRaw(projectMemberSelect+` WHERE workspace_id = ? AND user_id = ? AND project_id = ? ORDER BY created_at, id`,
		workspaceID, userID, projectID).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out := make([]project.Member, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.member())
	}
	return out, nil
}

// ProjectMemberSet implements project.MemberStore: it deletes the member's
// other assignments to the project, then assigns m.Template through
// AssignmentInsert (membership check, template validation and the
// authority version bump).
func (tx *Tx) ProjectMemberSet(ctx context.Context, workspaceID string, m project.Member) (project.Member, error) {
	const op = "store.ProjectMemberSet"
	if m.ProjectID == "" {
		return project.Member{}, fault.Invalid(op, "projectId", "A project member needs a project.")
	}
	if _, err := tx.idb.NewRaw(`DELETE FROM role_assignments WHERE workspace_id = ? AND user_id = ? AND project_id = ? AND template <> ?`,
		workspaceID, m.UserID, m.ProjectID, string(m.Template)).Exec(ctx); err != nil {
		return project.Member{}, errf(op, err)
	}
	if err := tx.AssignmentInsert(ctx, workspaceID, m.UserID, string(m.Template), m.ProjectID); err != nil {
		return project.Member{}, fault.Wrap(op, err)
	}
	cur, err := tx.projectAssignments(ctx, workspaceID, m.ProjectID, m.UserID)
	if err != nil {
		return project.Member{}, errf(op, err)
	}
	if len(cur) != 1 {
		return project.Member{}, errf(op, errors.New("the member's assignment is not alone after it was set"))
	}
	return cur[0], nil
}

// ProjectMemberDelete implements project.MemberStore through
// AssignmentDelete (which bumps the authority version).
func (tx *Tx) ProjectMemberDelete(ctx context.Context, workspaceID, projectID, userID string) error {
	const op = "store.ProjectMemberDelete"
	if projectID == "" {
		return fault.Invalid(op, "projectId", "A project member needs a project.")
	}
	cur, err := tx.projectAssignments(ctx, workspaceID, projectID, userID)
	if err != nil {
		return errf(op, err)
	}
	if len(cur) == 0 {
		return fault.E(op, fault.NotFound, "")
	}
	for _, m := range cur {
		if err := tx.AssignmentDelete(ctx, workspaceID, userID, string(m.Template), projectID); err != nil {
			return fault.Wrap(op, err)
		}
	}
	return nil
}
