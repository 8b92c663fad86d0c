package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

var (
	_ project.SubmissionStore = (*Tx)(nil)
	_ project.SubmitStore     = (*Tx)(nil)
	_ project.ProbeStore      = (*Tx)(nil)
)

type submissionRow struct {
	ID                   string     `bun:"id"`
	ProjectID            string     `bun:"project_id"`
	TenantID             string     `bun:"tenant_id"`
	WorkspaceID          string     `bun:"workspace_id"`
	Environment          string     `bun:"environment"`
	SubmitterUserID      string     `bun:"submitter_user_id"`
	SubmitterTenantID    string     `bun:"submitter_tenant_id"`
	SubmitterWorkspaceID string     `bun:"submitter_workspace_id"`
	SubmitterKeyID       string     `bun:"submitter_key_id"`
	Type                 string     `bun:"type"`
	Title                string     `bun:"title"`
	Description          string     `bun:"description"`
	AssetID              *string    `bun:"asset_id"`
	AssetContentType     *string    `bun:"asset_content_type"`
	AssetBytes           *int64     `bun:"asset_bytes"`
	AssetSHA256          *string    `bun:"asset_sha256"`
	RevisionOf           *string    `bun:"revision_of"`
	Status               string     `bun:"status"`
	ReviewNote           string     `bun:"review_note"`
	ReviewedByUserID     string     `bun:"reviewed_by_user_id"`
	ReviewedAt           *time.Time `bun:"reviewed_at"`
	Version              int64      `bun:"version"`
	CreatedAt            time.Time  `bun:"created_at"`
	UpdatedAt            time.Time  `bun:"updated_at"`
}

func (r submissionRow) submission() project.Submission {
	s := project.Submission{ID: r.ID, ProjectID: r.ProjectID,
		Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		Submitter: project.Submitter{UserID: r.SubmitterUserID, TenantID: r.SubmitterTenantID, WorkspaceID: r.SubmitterWorkspaceID,
			KeyID: r.SubmitterKeyID},
		Type: project.SubmissionType(r.Type), Title: r.Title, Description: r.Description, Status: project.SubmissionStatus(r.Status),
		ReviewNote: r.ReviewNote, ReviewedByUserID: r.ReviewedByUserID, Version: r.Version,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.AssetID != nil {
		s.Asset = &project.SubmittedAsset{ID: *r.AssetID}
		if r.AssetContentType != nil {
			s.Asset.ContentType = *r.AssetContentType
		}
		if r.AssetBytes != nil {
			s.Asset.Bytes = *r.AssetBytes
		}
		if r.AssetSHA256 != nil {
			s.Asset.SHA256 = *r.AssetSHA256
		}
	}
	if r.RevisionOf != nil {
		s.RevisionOf = *r.RevisionOf
	}
	if r.ReviewedAt != nil {
		s.ReviewedAt = r.ReviewedAt.UTC()
	}
	return s
}

type submissionAssetRow struct {
	SubmissionID string     `bun:"submission_id"`
	Position     int        `bun:"position"`
	URL          string     `bun:"url"`
	Status       string     `bun:"status"`
	ContentType  string     `bun:"content_type"`
	Bytes        int64      `bun:"bytes"`
	SHA256       string     `bun:"sha256"`
	Reason       string     `bun:"reason"`
	CheckedAt    *time.Time `bun:"checked_at"`
}

func (r submissionAssetRow) link() project.AssetLink {
	l := project.AssetLink{Position: r.Position, URL: r.URL, Status: project.ProbeStatus(r.Status), ContentType: r.ContentType,
		Bytes: r.Bytes, SHA256: r.SHA256, Reason: r.Reason}
	if r.CheckedAt != nil {
		l.CheckedAt = r.CheckedAt.UTC()
	}
	return l
}

const submissionSelect = `SELECT id, project_id, tenant_id, workspace_id, environment, submitter_user_id, submitter_tenant_id,
	submitter_workspace_id, submitter_key_id, type, title, description, asset_id, asset_content_type, asset_bytes, asset_sha256,
	revision_of, status, review_note, reviewed_by_user_id, reviewed_at, version, created_at, updated_at FROM submissions`

// nullTime is t in UTC, or NULL when t is zero.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// SubmissionInsert implements project.SubmissionStore: the submission and
// its links; CONFLICT when the id is taken or the submission it revises
// is revised already (revision_of is unique).
func (tx *Tx) SubmissionInsert(ctx context.Context, s project.Submission) error {
	const op = "store.SubmissionInsert"
	var assetID, assetType, assetSHA *string
	var assetBytes *int64
	if a := s.Asset; a != nil {
		assetID, assetType, assetSHA, assetBytes = &a.ID, &a.ContentType, &a.SHA256, &a.Bytes
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO submissions (id, project_id, tenant_id, workspace_id, environment,
		submitter_user_id, submitter_tenant_id, submitter_workspace_id, submitter_key_id, type, title, description, asset_id,
		asset_content_type, asset_bytes, asset_sha256, revision_of, status, review_note, reviewed_by_user_id, reviewed_at, version,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		s.ID, s.ProjectID, s.Scope.TenantID, s.Scope.WorkspaceID, string(s.Scope.Environment), s.Submitter.UserID,
		s.Submitter.TenantID, s.Submitter.WorkspaceID, s.Submitter.KeyID, string(s.Type), s.Title, s.Description, assetID,
		assetType, assetBytes, assetSHA, nullString(s.RevisionOf), string(s.Status), s.ReviewNote, s.ReviewedByUserID,
		nullTime(s.ReviewedAt), s.Version, s.CreatedAt.UTC(), s.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		e := fault.E(op, fault.Conflict, "The submission exists, or the one it revises was revised already.").With("submissionId", s.ID)
		if s.RevisionOf != "" {
			e = e.With("field", "revisionOf")
		}
		return e
	}
	for _, l := range s.Links {
		if _, err := tx.idb.ExecContext(ctx, `INSERT INTO submission_assets (submission_id, position, url, status, content_type,
			bytes, sha256, reason, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, l.Position, l.URL, string(l.Status), l.ContentType, l.Bytes, l.SHA256, l.Reason, nullTime(l.CheckedAt)); err != nil {
			return errf(op, err)
		}
	}
	return nil
}

// SubmissionGet implements project.SubmissionStore: by id in one
// environment, of any tenant (the service decides visibility).
func (tx *Tx) SubmissionGet(ctx context.Context, env access.Environment, id string) (project.Submission, error) {
	const op = "store.SubmissionGet"
	var r submissionRow
	if err := tx.idb.NewRaw(submissionSelect+` WHERE id = ? AND environment = ?`, id, string(env)).Scan(ctx, &r); err != nil {
		return project.Submission{}, notFound(op, err)
	}
	out := []project.Submission{r.submission()}
	if err := tx.submissionLinks(ctx, op, out); err != nil {
		return project.Submission{}, err
	}
	return out[0], nil
}

// SubmissionList implements project.SubmissionStore: one project of one
// environment, newest first.
func (tx *Tx) SubmissionList(ctx context.Context, env access.Environment, projectID string, f project.SubmissionFilter,
	before string, limit int) ([]project.Submission, error) {
	const op = "store.SubmissionList"
	q := submissionSelect + ` WHERE project_id = ? AND environment = ?`
	args := []any{projectID, string(env)}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	if f.ViewerUserID != "" {
		q += ` AND (submitter_user_id = ? OR status = ?)`
		args = append(args, f.ViewerUserID, string(project.SubmissionAccepted))
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
	out := make([]project.Submission, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.submission())
	}
	if err := tx.submissionLinks(ctx, op, out); err != nil {
		return nil, err
	}
	return out, nil
}

// submissionLinks reads the links of subs in one query and sets them, in
// position order.
func (tx *Tx) submissionLinks(ctx context.Context, op string, subs []project.Submission) error {
	if len(subs) == 0 {
		return nil
	}
	ids := make([]string, len(subs))
	at := make(map[string]int, len(subs))
	for i, s := range subs {
		ids[i], at[s.ID] = s.ID, i
	}
	var rows []submissionAssetRow
	if err := tx.idb.NewRaw(`SELECT submission_id, position, url, status, content_type, bytes, sha256, reason, checked_at
		FROM submission_assets WHERE submission_id IN (?) ORDER BY submission_id, position`, bun.In(ids)).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return errf(op, err)
	}
	for _, r := range rows {
		i := at[r.SubmissionID]
		subs[i].Links = append(subs[i].Links, r.link())
	}
	return nil
}

// SubmissionSetStatus implements project.SubmissionStore: a
// compare-and-set on version.
func (tx *Tx) SubmissionSetStatus(ctx context.Context, s project.Submission) error {
	const op = "store.SubmissionSetStatus"
	res, err := tx.idb.ExecContext(ctx, `UPDATE submissions SET status = ?, review_note = ?, reviewed_by_user_id = ?, reviewed_at = ?,
		version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(s.Status), s.ReviewNote, s.ReviewedByUserID, nullTime(s.ReviewedAt), s.Version, s.UpdatedAt.UTC(), s.ID, s.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The submission changed meanwhile.")
	}
	return nil
}

// SubmissionLinkSet implements project.ProbeStore: a pending link takes
// its probe's result once.
func (tx *Tx) SubmissionLinkSet(ctx context.Context, submissionID string, l project.AssetLink) (bool, error) {
	const op = "store.SubmissionLinkSet"
	res, err := tx.idb.ExecContext(ctx, `UPDATE submission_assets SET status = ?, content_type = ?, bytes = ?, sha256 = ?, reason = ?,
		checked_at = ? WHERE submission_id = ? AND position = ? AND status = ?`,
		string(l.Status), l.ContentType, l.Bytes, l.SHA256, l.Reason, nullTime(l.CheckedAt), submissionID, l.Position,
		string(project.ProbePending))
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, errf(op, err)
	}
	return n == 1, nil
}
