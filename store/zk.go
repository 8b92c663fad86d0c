package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/web3/zk"
)

var _ zk.Store = (*Tx)(nil)

type zkVerificationRow struct {
	ID             string    `bun:"id"`
	TenantID       string    `bun:"tenant_id"`
	WorkspaceID    string    `bun:"workspace_id"`
	Environment    string    `bun:"environment"`
	UserID         string    `bun:"user_id"`
	IntentID       string    `bun:"intent_id"`
	CircuitID      string    `bun:"circuit_id"`
	CircuitVersion string    `bun:"circuit_version"`
	Binding        string    `bun:"binding"`
	PublicSignals  string    `bun:"public_signals"`
	StatementHash  string    `bun:"statement_hash"`
	ProofHash      string    `bun:"proof_hash"`
	Proof          string    `bun:"proof"`
	CreatedAt      time.Time `bun:"created_at"`
}

func (r zkVerificationRow) verification(op string) (zk.Verification, error) {
	v := zk.Verification{ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID,
		Environment: access.Environment(r.Environment)}, UserID: r.UserID, IntentID: r.IntentID, CircuitID: r.CircuitID,
		CircuitVersion: r.CircuitVersion, Binding: r.Binding, StatementHash: r.StatementHash, ProofHash: r.ProofHash,
		CreatedAt: r.CreatedAt.UTC()}
	if err := json.Unmarshal([]byte(r.PublicSignals), &v.PublicSignals); err != nil {
		return zk.Verification{}, fault.Wrap(op, fmt.Errorf("zk verification %s: public signals: %w", r.ID, err))
	}
	if err := json.Unmarshal([]byte(r.Proof), &v.Proof); err != nil {
		return zk.Verification{}, fault.Wrap(op, fmt.Errorf("zk verification %s: proof: %w", r.ID, err))
	}
	return v, nil
}

const zkVerificationSelect = `SELECT id, tenant_id, workspace_id, environment, user_id, intent_id, circuit_id, circuit_version, binding,
	public_signals, statement_hash, proof_hash, proof, created_at FROM zk_verifications`

// ZKVerificationInsert implements zk.Store: CONFLICT when the id, the
// statement (tenant, environment, statement hash) or the proof hash is
// taken.
func (tx *Tx) ZKVerificationInsert(ctx context.Context, v zk.Verification) error {
	const op = "store.ZKVerificationInsert"
	signals, err := json.Marshal(v.PublicSignals)
	if err != nil {
		return fault.Wrap(op, err)
	}
	proof, err := json.Marshal(v.Proof)
	if err != nil {
		return fault.Wrap(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO zk_verifications (id, tenant_id, workspace_id, environment, user_id, intent_id,
		circuit_id, circuit_version, binding, public_signals, statement_hash, proof_hash, proof, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		v.ID, v.Scope.TenantID, v.Scope.WorkspaceID, string(v.Scope.Environment), v.UserID, v.IntentID, v.CircuitID, v.CircuitVersion,
		v.Binding, string(signals), v.StatementHash, v.ProofHash, string(proof), v.CreatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The statement or the proof was recorded already.").With("statementHash", v.StatementHash)
	}
	return nil
}

// ZKVerificationByStatement implements zk.Reader: NOT_FOUND when the
// tenant has no verification of the statement in env.
func (tx *Tx) ZKVerificationByStatement(ctx context.Context, tenantID string, env access.Environment, h string) (zk.Verification, error) {
	const op = "store.ZKVerificationByStatement"
	var r zkVerificationRow
	if err := tx.idb.NewRaw(zkVerificationSelect+` WHERE tenant_id = ? AND environment = ? AND statement_hash = ?`,
		tenantID, string(env), h).Scan(ctx, &r); err != nil {
		return zk.Verification{}, notFound(op, err)
	}
	return r.verification(op)
}
