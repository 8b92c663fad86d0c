package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/creatorgraph"
	"github.com/creatormusic/platform/fault"
)

var _ creatorgraph.Store = (*Tx)(nil)

// CreatorExists implements creatorgraph.ReadStore: a wallet link of the
// user, in any tenant.
func (tx *Tx) CreatorExists(ctx context.Context, userID string) (bool, error) {
	var n int
	err := tx.idb.NewRaw(`SELECT COUNT(*) FROM wallet_links WHERE user_id = ?`, userID).Scan(ctx, &n)
	return n > 0, errf("store.CreatorExists", err)
}

// publicAsset is true of an asset (the named column) that is the work of
// a submission ACCEPTED into a public project.
func publicAsset(col string) string {
	return `EXISTS (SELECT 1 FROM submissions ps JOIN projects pp ON pp.id = ps.project_id WHERE ps.asset_id = ` + col +
		` AND ps.status = 'ACCEPTED' AND pp.visibility = 'public')`
}

// GraphCollaborations implements creatorgraph.ReadStore: per project and
// other submitter, the earliest ACCEPTED submission of each, through
// submissions_accepted_submitter, newest project first; a project that is
// not public only when the viewer reads it.
func (tx *Tx) GraphCollaborations(ctx context.Context, env access.Environment, userID string, v creatorgraph.Viewer,
	limit int) ([]creatorgraph.Relation, error) {
	const op = "store.GraphCollaborations"
	var rows []struct {
		ProjectID string `bun:"project_id"`
		Other     string `bun:"other"`
		Own       string `bun:"own"`
		OtherSub  string `bun:"other_sub"`
		Public    int    `bun:"is_public"`
	}
	// The viewer's workspace's projects it reads: all of them, or, for a
	// reader narrower than the workspace, those it owns or is assigned
	// to (as ProjectList keeps them).
	held := `p.tenant_id = ? AND p.workspace_id = ?`
	args := []any{userID, string(env), v.TenantID, v.WorkspaceID}
	if v.ReaderUserID != "" {
		held += ` AND (p.owner_user_id = ? OR p.id IN
			(SELECT project_id FROM role_assignments WHERE workspace_id = ? AND user_id = ? AND project_id <> ''))`
		args = append(args, v.ReaderUserID, v.WorkspaceID, v.ReaderUserID)
	}
	err := tx.idb.NewRaw(`SELECT p.id AS project_id, b.submitter_user_id AS other, MIN(a.id) AS own, MIN(b.id) AS other_sub,
		CASE WHEN p.visibility = 'public' THEN 1 ELSE 0 END AS is_public
		FROM submissions a
		JOIN submissions b ON b.project_id = a.project_id AND b.status = 'ACCEPTED' AND b.submitter_user_id <> a.submitter_user_id
		JOIN projects p ON p.id = a.project_id
		WHERE a.submitter_user_id = ? AND a.environment = ? AND a.status = 'ACCEPTED'
			AND (p.visibility = 'public' OR (`+held+`))
		GROUP BY p.id, b.submitter_user_id, p.visibility
		ORDER BY p.id DESC, b.submitter_user_id LIMIT ?`,
		append(args, limit)...).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]creatorgraph.Relation, 0, len(rows))
	for _, r := range rows {
		out = append(out, creatorgraph.Relation{Kind: creatorgraph.KindCollaborated, Direction: creatorgraph.Mutual, OtherUserID: r.Other,
			Source: creatorgraph.Source{ProjectID: r.ProjectID, SubmissionID: r.Own, OtherSubmissionID: r.OtherSub, Public: r.Public == 1}})
	}
	return out, nil
}

// GraphRemixes implements creatorgraph.ReadStore: provenance parents
// whose provenance names another creator, both directions, through
// asset_provenance_parents_parent, newest asset first.
func (tx *Tx) GraphRemixes(ctx context.Context, env access.Environment, userID string, v creatorgraph.Viewer,
	limit int) ([]creatorgraph.Relation, error) {
	const op = "store.GraphRemixes"
	var rows []struct {
		AssetID  string `bun:"asset_id"`
		ParentID string `bun:"parent_asset_id"`
		Child    string `bun:"child_user"`
		Parent   string `bun:"parent_user"`
		Public   int    `bun:"is_public"`
	}
	public := publicAsset("c.asset_id") + ` AND ` + publicAsset("q.asset_id")
	err := tx.idb.NewRaw(`SELECT c.asset_id, pr.parent_asset_id, c.creator_user_id AS child_user, q.creator_user_id AS parent_user,
		CASE WHEN `+public+` THEN 1 ELSE 0 END AS is_public
		FROM asset_provenance c
		JOIN asset_provenance_parents pr ON pr.asset_id = c.asset_id
		JOIN asset_provenance q ON q.asset_id = pr.parent_asset_id
		WHERE c.environment = ? AND q.environment = c.environment AND c.creator_user_id IS NOT NULL AND q.creator_user_id IS NOT NULL
			AND c.creator_user_id <> q.creator_user_id AND (c.creator_user_id = ? OR q.creator_user_id = ?)
			AND ((c.tenant_id = ? AND c.workspace_id = ? AND q.tenant_id = ? AND q.workspace_id = ?) OR (`+public+`))
		ORDER BY c.asset_id DESC, pr.ordinal LIMIT ?`,
		string(env), userID, userID, v.TenantID, v.WorkspaceID, v.TenantID, v.WorkspaceID, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]creatorgraph.Relation, 0, len(rows))
	for _, r := range rows {
		rel := creatorgraph.Relation{Kind: creatorgraph.KindRemixed, Direction: creatorgraph.Outgoing, OtherUserID: r.Parent,
			Source: creatorgraph.Source{AssetID: r.AssetID, ParentAssetID: r.ParentID, Public: r.Public == 1}}
		if r.Parent == userID {
			rel.Direction, rel.OtherUserID = creatorgraph.Incoming, r.Child
		}
		out = append(out, rel)
	}
	return out, nil
}

type relationRow struct {
	ID          string    `bun:"id"`
	TenantID    string    `bun:"tenant_id"`
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	FromUserID  string    `bun:"from_user_id"`
	ToUserID    string    `bun:"to_user_id"`
	Kind        string    `bun:"kind"`
	State       string    `bun:"state"`
	Version     int64     `bun:"version"`
	DeclaredAt  time.Time `bun:"declared_at"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

func (r relationRow) declared() creatorgraph.Declared {
	return creatorgraph.Declared{ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID,
		Environment: access.Environment(r.Environment)}, FromUserID: r.FromUserID, ToUserID: r.ToUserID, Kind: creatorgraph.Kind(r.Kind),
		State: creatorgraph.State(r.State), Version: r.Version, DeclaredAt: r.DeclaredAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

const relationSelect = `SELECT id, tenant_id, workspace_id, environment, from_user_id, to_user_id, kind, state, version, declared_at,
	updated_at FROM creator_relations`

// GraphDeclared implements creatorgraph.ReadStore: the active declared
// relations of env from or to the user, newest change first.
func (tx *Tx) GraphDeclared(ctx context.Context, env access.Environment, userID string, limit int) ([]creatorgraph.Declared, error) {
	var rows []relationRow
	err := tx.idb.NewRaw(relationSelect+` WHERE environment = ? AND state = 'active' AND (from_user_id = ? OR to_user_id = ?)
		ORDER BY updated_at DESC, id DESC LIMIT ?`, string(env), userID, userID, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.GraphDeclared", err)
	}
	out := make([]creatorgraph.Declared, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.declared())
	}
	return out, nil
}

// RelationGet implements creatorgraph.Store.
func (tx *Tx) RelationGet(ctx context.Context, env access.Environment, from string, kind creatorgraph.Kind, to string) (creatorgraph.Declared, error) {
	var r relationRow
	err := tx.idb.NewRaw(relationSelect+` WHERE environment = ? AND from_user_id = ? AND kind = ? AND to_user_id = ?`,
		string(env), from, string(kind), to).Scan(ctx, &r)
	if err != nil {
		return creatorgraph.Declared{}, notFound("store.RelationGet", err)
	}
	return r.declared(), nil
}

// RelationCountActive implements creatorgraph.Store.
func (tx *Tx) RelationCountActive(ctx context.Context, env access.Environment, from string) (int, error) {
	var n int
	err := tx.idb.NewRaw(`SELECT COUNT(*) FROM creator_relations WHERE environment = ? AND from_user_id = ? AND state = 'active'`,
		string(env), from).Scan(ctx, &n)
	return n, errf("store.RelationCountActive", err)
}

// RelationInsert implements creatorgraph.Store.
func (tx *Tx) RelationInsert(ctx context.Context, d creatorgraph.Declared) error {
	const op = "store.RelationInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO creator_relations (id, tenant_id, workspace_id, environment, from_user_id,
		to_user_id, kind, state, version, declared_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		d.ID, d.Scope.TenantID, d.Scope.WorkspaceID, string(d.Scope.Environment), d.FromUserID, d.ToUserID, string(d.Kind),
		string(d.State), d.Version, d.DeclaredAt.UTC(), d.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The relation exists.")
	}
	return nil
}

// RelationUpdate implements creatorgraph.Store: compare-and-set on the
// version.
func (tx *Tx) RelationUpdate(ctx context.Context, d creatorgraph.Declared) error {
	const op = "store.RelationUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE creator_relations SET state = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(d.State), d.Version, d.UpdatedAt.UTC(), d.ID, d.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The relation changed meanwhile.")
	}
	return nil
}
