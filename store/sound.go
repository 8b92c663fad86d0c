package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/sound"
)

var _ sound.Store = (*Tx)(nil)

type soundOperationRow struct {
	ID              string     `bun:"id"`
	TenantID        string     `bun:"tenant_id"`
	WorkspaceID     string     `bun:"workspace_id"`
	Environment     string     `bun:"environment"`
	CreatedByUserID string     `bun:"created_by_user_id"`
	CreatedByKeyID  string     `bun:"created_by_key_id"`
	Type            string     `bun:"type"`
	Status          string     `bun:"status"`
	Stage           string     `bun:"stage"`
	Progress        int        `bun:"progress"`
	InputAssetID    string     `bun:"input_asset_id"`
	Request         string     `bun:"request"`
	Capabilities    string     `bun:"capabilities"`
	Result          *string    `bun:"result"`
	FailureCode     string     `bun:"failure_code"`
	FailureMessage  string     `bun:"failure_message"`
	FailureDetails  *string    `bun:"failure_details"`
	PlanID          string     `bun:"plan_id"`
	Version         int64      `bun:"version"`
	DeadlineAt      time.Time  `bun:"deadline_at"`
	CreatedAt       time.Time  `bun:"created_at"`
	StartedAt       *time.Time `bun:"started_at"`
	UpdatedAt       time.Time  `bun:"updated_at"`
	EndedAt         *time.Time `bun:"ended_at"`
}

func (r soundOperationRow) operation() sound.Operation {
	o := sound.Operation{ID: r.ID,
		Scope:           access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		CreatedByUserID: r.CreatedByUserID, CreatedByKeyID: r.CreatedByKeyID, Type: sound.Type(r.Type), Status: sound.Status(r.Status),
		Stage: sound.Stage(r.Stage), Progress: r.Progress, InputAssetID: r.InputAssetID, Request: json.RawMessage(r.Request),
		Capabilities: json.RawMessage(r.Capabilities), FailureCode: r.FailureCode, FailureMessage: r.FailureMessage,
		Version: r.Version, DeadlineAt: r.DeadlineAt.UTC(), CreatedAt: r.CreatedAt.UTC(), StartedAt: utcPtr(r.StartedAt),
		UpdatedAt: r.UpdatedAt.UTC(), EndedAt: utcPtr(r.EndedAt), Plan: r.PlanID}
	if r.Result != nil {
		o.Result = json.RawMessage(*r.Result)
	}
	if r.FailureDetails != nil {
		o.FailureDetails = json.RawMessage(*r.FailureDetails)
	}
	return o
}

const soundOperationSelect = `SELECT id, tenant_id, workspace_id, environment, created_by_user_id, created_by_key_id, type, status,
	stage, progress, input_asset_id, request, capabilities, result, failure_code, failure_message, failure_details, plan_id, version,
	deadline_at, created_at, started_at, updated_at, ended_at FROM sound_operations`

// nullText is a JSON document for a nullable TEXT column.
func nullText(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

// SoundOperationInsert implements sound.Store.
func (tx *Tx) SoundOperationInsert(ctx context.Context, o sound.Operation) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO sound_operations (id, tenant_id, workspace_id, environment, created_by_user_id,
		created_by_key_id, type, status, stage, progress, input_asset_id, request, capabilities, result, failure_code, failure_message,
		failure_details, plan_id, version, deadline_at, created_at, started_at, updated_at, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Scope.TenantID, o.Scope.WorkspaceID, string(o.Scope.Environment), o.CreatedByUserID, o.CreatedByKeyID, string(o.Type),
		string(o.Status), string(o.Stage), o.Progress, o.InputAssetID, string(o.Request), string(o.Capabilities), nullText(o.Result),
		o.FailureCode, o.FailureMessage, nullText(o.FailureDetails), o.Plan, o.Version, o.DeadlineAt, o.CreatedAt, o.StartedAt,
		o.UpdatedAt, o.EndedAt)
	return errf("store.SoundOperationInsert", err)
}

func (tx *Tx) scanSound(ctx context.Context, op, q string, args ...any) (sound.Operation, error) {
	var r soundOperationRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &r); err != nil {
		return sound.Operation{}, notFound(op, err)
	}
	return r.operation(), nil
}

// SoundOperationGet implements sound.Store.
func (tx *Tx) SoundOperationGet(ctx context.Context, sc access.Scope, id string) (sound.Operation, error) {
	return tx.scanSound(ctx, "store.SoundOperationGet", soundOperationSelect+
		` WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ?`, id, sc.TenantID, sc.WorkspaceID, string(sc.Environment))
}

// SoundOperationLock implements sound.Store.
func (tx *Tx) SoundOperationLock(ctx context.Context, id string) (sound.Operation, error) {
	return tx.scanSound(ctx, "store.SoundOperationLock", soundOperationSelect+` WHERE id = ?`+tx.rowLock(), id)
}

// SoundOperationStatus implements sound.Store: one indexed column of one
// row, cheap enough to poll.
func (tx *Tx) SoundOperationStatus(ctx context.Context, id string) (sound.Status, error) {
	var st string
	err := tx.idb.QueryRowContext(ctx, `SELECT status FROM sound_operations WHERE id = ?`, id).Scan(&st)
	if err != nil {
		return "", notFound("store.SoundOperationStatus", err)
	}
	return sound.Status(st), nil
}

// SoundOperationUpdate implements sound.Store.
func (tx *Tx) SoundOperationUpdate(ctx context.Context, o sound.Operation) error {
	const op = "store.SoundOperationUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE sound_operations SET status = ?, stage = ?, progress = ?, result = ?,
		failure_code = ?, failure_message = ?, failure_details = ?, version = ?, started_at = ?, updated_at = ?, ended_at = ?
		WHERE id = ? AND version = ?`,
		string(o.Status), string(o.Stage), o.Progress, nullText(o.Result), o.FailureCode, o.FailureMessage, nullText(o.FailureDetails),
		o.Version, o.StartedAt, o.UpdatedAt, o.EndedAt, o.ID, o.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The operation changed meanwhile.")
	}
	return nil
}

// SoundOutputInsert implements sound.Store.
func (tx *Tx) SoundOutputInsert(ctx context.Context, o sound.Output) (bool, error) {
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO sound_outputs (operation_id, output, asset_id, parent_asset_id, format,
		sample_rate, bit_depth, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (operation_id, output) DO NOTHING`,
		o.OperationID, o.Name, o.AssetID, o.ParentAssetID, o.Format, o.SampleRate, o.BitDepth, o.CreatedAt)
	return inserted("store.SoundOutputInsert", res, err)
}

// SoundOutputs implements sound.Store.
func (tx *Tx) SoundOutputs(ctx context.Context, operationID string) ([]sound.Output, error) {
	var rows []struct {
		OperationID   string    `bun:"operation_id"`
		Output        string    `bun:"output"`
		AssetID       string    `bun:"asset_id"`
		ParentAssetID string    `bun:"parent_asset_id"`
		Format        string    `bun:"format"`
		SampleRate    int       `bun:"sample_rate"`
		BitDepth      int       `bun:"bit_depth"`
		CreatedAt     time.Time `bun:"created_at"`
	}
	if err := tx.idb.NewRaw(`SELECT operation_id, output, asset_id, parent_asset_id, format, sample_rate, bit_depth, created_at
		FROM sound_outputs WHERE operation_id = ? ORDER BY output`, operationID).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.SoundOutputs", err)
	}
	out := make([]sound.Output, len(rows))
	for i, r := range rows {
		out[i] = sound.Output{OperationID: r.OperationID, Name: r.Output, AssetID: r.AssetID, ParentAssetID: r.ParentAssetID,
			Format: r.Format, SampleRate: r.SampleRate, BitDepth: r.BitDepth, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}
