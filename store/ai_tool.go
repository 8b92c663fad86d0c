package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/fault"
)

// Tx implements the AI tools' port (artifacts, with the project and
// generation ports it embeds).
var (
	_ tool.ReadStore  = (*Tx)(nil)
	_ tool.ApplyStore = (*Tx)(nil)
)

type aiArtifactRow struct {
	ID              string     `bun:"id"`
	TenantID        string     `bun:"tenant_id"`
	WorkspaceID     string     `bun:"workspace_id"`
	Environment     string     `bun:"environment"`
	Tool            string     `bun:"tool"`
	OperationID     string     `bun:"operation_id"`
	ToolCallID      string     `bun:"tool_call_id"`
	Arguments       string     `bun:"arguments"`
	CreatedByKind   string     `bun:"created_by_kind"`
	CreatedByUserID string     `bun:"created_by_user_id"`
	CreatedByKeyID  string     `bun:"created_by_key_id"`
	Status          string     `bun:"status"`
	ResultType      string     `bun:"result_type"`
	ResultID        string     `bun:"result_id"`
	DecidedByKind   string     `bun:"decided_by_kind"`
	DecidedByUserID string     `bun:"decided_by_user_id"`
	DecidedByKeyID  string     `bun:"decided_by_key_id"`
	DecidedAt       *time.Time `bun:"decided_at"`
	Version         int64      `bun:"version"`
	CreatedAt       time.Time  `bun:"created_at"`
	UpdatedAt       time.Time  `bun:"updated_at"`
}

func (r aiArtifactRow) artifact() tool.Artifact {
	a := tool.Artifact{ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		Tool: r.Tool, OperationID: r.OperationID, ToolCallID: r.ToolCallID, Arguments: json.RawMessage(r.Arguments),
		CreatedBy: tool.Actor{Kind: access.CredentialKind(r.CreatedByKind), UserID: r.CreatedByUserID, KeyID: r.CreatedByKeyID},
		Status:    tool.Status(r.Status), Result: tool.Result{Type: r.ResultType, ID: r.ResultID},
		DecidedBy: tool.Actor{Kind: access.CredentialKind(r.DecidedByKind), UserID: r.DecidedByUserID, KeyID: r.DecidedByKeyID},
		Version:   r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	a.DecidedAt = utcPtr(r.DecidedAt)
	return a
}

const aiArtifactSelect = `SELECT id, tenant_id, workspace_id, environment, tool, operation_id, tool_call_id, arguments, created_by_kind,
	created_by_user_id, created_by_key_id, status, result_type, result_id, decided_by_kind, decided_by_user_id, decided_by_key_id,
	decided_at, version, created_at, updated_at FROM ai_artifacts`

// AIArtifactInsert implements tool.Store.
func (tx *Tx) AIArtifactInsert(ctx context.Context, a tool.Artifact) error {
	const op = "store.AIArtifactInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO ai_artifacts (id, tenant_id, workspace_id, environment, tool, operation_id,
		tool_call_id, arguments, created_by_kind, created_by_user_id, created_by_key_id, status, result_type, result_id,
		decided_by_kind, decided_by_user_id, decided_by_key_id, decided_at, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.ID, a.Scope.TenantID, a.Scope.WorkspaceID, string(a.Scope.Environment), a.Tool, a.OperationID, a.ToolCallID,
		string(a.Arguments), string(a.CreatedBy.Kind), a.CreatedBy.UserID, a.CreatedBy.KeyID, string(a.Status), a.Result.Type,
		a.Result.ID, string(a.DecidedBy.Kind), a.DecidedBy.UserID, a.DecidedBy.KeyID, utcPtr(a.DecidedAt), a.Version,
		a.CreatedAt.UTC(), a.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The artifact exists.")
	}
	return nil
}

// AIArtifactGet implements tool.Store.
func (tx *Tx) AIArtifactGet(ctx context.Context, sc access.Scope, id string) (tool.Artifact, error) {
	var r aiArtifactRow
	err := tx.idb.NewRaw(aiArtifactSelect+` WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`,
		id, sc.TenantID, sc.WorkspaceID, string(sc.Environment)).Scan(ctx, &r)
	if err != nil {
		return tool.Artifact{}, notFound("store.AIArtifactGet", err)
	}
	return r.artifact(), nil
}

// AIArtifactUpdate implements tool.Store: a compare-and-set on version.
func (tx *Tx) AIArtifactUpdate(ctx context.Context, a tool.Artifact) error {
	const op = "store.AIArtifactUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE ai_artifacts SET status = ?, result_type = ?, result_id = ?, decided_by_kind = ?,
		decided_by_user_id = ?, decided_by_key_id = ?, decided_at = ?, version = ?, updated_at = ?
		WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ? AND version = ?`,
		string(a.Status), a.Result.Type, a.Result.ID, string(a.DecidedBy.Kind), a.DecidedBy.UserID, a.DecidedBy.KeyID,
		utcPtr(a.DecidedAt), a.Version, a.UpdatedAt.UTC(), a.ID, a.Scope.TenantID, a.Scope.WorkspaceID, string(a.Scope.Environment),
		a.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The artifact changed meanwhile.")
	}
	return nil
}
