package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/web3/x402"
)

var _ x402.Store = (*Tx)(nil)

// x402SettlementColumns are the columns of x402_settlements, in the
// order x402SettlementRow scans them.
const x402SettlementColumns = `id, tenant_id, workspace_id, environment, principal, idem_key, payload_hash, message_hash,
	resource_id, network, asset, pay_to, amount_atomic, payer, payload, requirements, last_valid_block_height, attempts, state,
	signature, slot, error_reason, version, created_at, updated_at`

// x402SettlementRow is a row of x402_settlements.
type x402SettlementRow struct {
	ID                   string    `bun:"id"`
	TenantID             string    `bun:"tenant_id"`
	WorkspaceID          string    `bun:"workspace_id"`
	Environment          string    `bun:"environment"`
	Principal            string    `bun:"principal"`
	IdemKey              string    `bun:"idem_key"`
	PayloadHash          string    `bun:"payload_hash"`
	MessageHash          string    `bun:"message_hash"`
	ResourceID           string    `bun:"resource_id"`
	Network              string    `bun:"network"`
	Asset                string    `bun:"asset"`
	PayTo                string    `bun:"pay_to"`
	Amount               string    `bun:"amount_atomic"`
	Payer                string    `bun:"payer"`
	Payload              string    `bun:"payload"`
	Requirements         string    `bun:"requirements"`
	LastValidBlockHeight uint64    `bun:"last_valid_block_height"`
	Attempts             int       `bun:"attempts"`
	State                string    `bun:"state"`
	Signature            string    `bun:"signature"`
	Slot                 uint64    `bun:"slot"`
	ErrorReason          string    `bun:"error_reason"`
	Version              int64     `bun:"version"`
	CreatedAt            time.Time `bun:"created_at"`
	UpdatedAt            time.Time `bun:"updated_at"`
}

// settlement converts the row.
func (r x402SettlementRow) settlement(op string) (x402.Settlement, error) {
	amount, err := money.ParseAtomic(r.Amount)
	if err != nil {
		return x402.Settlement{}, errf(op, err)
	}
	return x402.Settlement{ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID,
		Environment: access.Environment(r.Environment)}, Principal: r.Principal, IdempotencyKey: r.IdemKey, PayloadHash: r.PayloadHash,
		MessageHash: r.MessageHash, ResourceID: r.ResourceID, Network: r.Network, Asset: r.Asset, PayTo: r.PayTo, Amount: amount,
		Payer: r.Payer, Payload: []byte(r.Payload), Requirements: []byte(r.Requirements), LastValidBlockHeight: r.LastValidBlockHeight,
		Attempts: r.Attempts, State: x402.State(r.State), Signature: r.Signature, Slot: r.Slot, ErrorReason: r.ErrorReason,
		Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}, nil
}

// X402SettlementInsert implements x402.Store.
func (tx *Tx) X402SettlementInsert(ctx context.Context, s x402.Settlement) error {
	const op = "store.X402SettlementInsert"
	if s.LastValidBlockHeight > math.MaxInt64 || s.Slot > math.MaxInt64 {
		return fault.E(op, fault.InvalidInput, "A block height or slot is beyond a BIGINT.").With("settlementId", s.ID)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO x402_settlements (`+x402SettlementColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		s.ID, s.Scope.TenantID, s.Scope.WorkspaceID, string(s.Scope.Environment), s.Principal, s.IdempotencyKey, s.PayloadHash,
		s.MessageHash, s.ResourceID, s.Network, s.Asset, s.PayTo, s.Amount.String(), s.Payer, string(s.Payload), string(s.Requirements),
		s.LastValidBlockHeight, s.Attempts, string(s.State), s.Signature, s.Slot, s.ErrorReason, s.Version, s.CreatedAt.UTC(),
		s.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The transaction or the request's key is claimed already.").With("settlementId", s.ID)
	}
	return nil
}

// x402Settlement reads one settlement by a WHERE clause.
func (tx *Tx) x402Settlement(ctx context.Context, op, where string, args ...any) (x402.Settlement, error) {
	var r x402SettlementRow
	if err := tx.idb.NewRaw(`SELECT `+x402SettlementColumns+` FROM x402_settlements WHERE `+where, args...).Scan(ctx, &r); err != nil {
		return x402.Settlement{}, notFound(op, err)
	}
	return r.settlement(op)
}

// X402Settlement implements x402.Store.
func (tx *Tx) X402Settlement(ctx context.Context, id string) (x402.Settlement, error) {
	return tx.x402Settlement(ctx, "store.X402Settlement", `id = ?`, id)
}

// X402SettlementByKey implements x402.Store.
func (tx *Tx) X402SettlementByKey(ctx context.Context, sc access.Scope, key string) (x402.Settlement, error) {
	return tx.x402Settlement(ctx, "store.X402SettlementByKey", `tenant_id = ? AND workspace_id = ? AND environment = ? AND idem_key = ?`,
		sc.TenantID, sc.WorkspaceID, string(sc.Environment), key)
}

// X402SettlementByMessage implements x402.Store.
func (tx *Tx) X402SettlementByMessage(ctx context.Context, messageHash string) (x402.Settlement, error) {
	return tx.x402Settlement(ctx, "store.X402SettlementByMessage", `message_hash = ?`, messageHash)
}

// X402SettlementUpdate implements x402.Store: the moving fields, when the
// stored version is prevVersion.
func (tx *Tx) X402SettlementUpdate(ctx context.Context, s x402.Settlement, prevVersion int64) error {
	const op = "store.X402SettlementUpdate"
	if s.Version != prevVersion+1 {
		return fault.E(op, fault.Conflict, "The settlement's version must advance by one.").With("settlementId", s.ID)
	}
	if s.Slot > math.MaxInt64 {
		return fault.E(op, fault.InvalidInput, "The slot is beyond a BIGINT.").With("settlementId", s.ID)
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE x402_settlements SET attempts = ?, state = ?, signature = ?, slot = ?,
		error_reason = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		s.Attempts, string(s.State), s.Signature, s.Slot, s.ErrorReason, s.Version, s.UpdatedAt.UTC(), s.ID, prevVersion)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The settlement changed meanwhile.").With("settlementId", s.ID)
	}
	return nil
}

// x402GrantColumns are the columns of x402_grants.
const x402GrantColumns = `id, tenant_id, workspace_id, environment, resource_id, kind, settlement_id, state, used_by, created_at,
	consumed_at`

// x402GrantRow is a row of x402_grants.
type x402GrantRow struct {
	ID           string     `bun:"id"`
	TenantID     string     `bun:"tenant_id"`
	WorkspaceID  string     `bun:"workspace_id"`
	Environment  string     `bun:"environment"`
	ResourceID   string     `bun:"resource_id"`
	Kind         string     `bun:"kind"`
	SettlementID string     `bun:"settlement_id"`
	State        string     `bun:"state"`
	UsedBy       string     `bun:"used_by"`
	CreatedAt    time.Time  `bun:"created_at"`
	ConsumedAt   *time.Time `bun:"consumed_at"`
}

// grant converts the row.
func (r x402GrantRow) grant() x402.Grant {
	g := x402.Grant{ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		ResourceID: r.ResourceID, Kind: x402.Kind(r.Kind), SettlementID: r.SettlementID, State: x402.GrantState(r.State),
		UsedBy: r.UsedBy, CreatedAt: r.CreatedAt.UTC()}
	if r.ConsumedAt != nil {
		t := r.ConsumedAt.UTC()
		g.ConsumedAt = &t
	}
	return g
}

// X402GrantInsert implements x402.Store.
func (tx *Tx) X402GrantInsert(ctx context.Context, g x402.Grant) error {
	const op = "store.X402GrantInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO x402_grants (`+x402GrantColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		g.ID, g.Scope.TenantID, g.Scope.WorkspaceID, string(g.Scope.Environment), g.ResourceID, string(g.Kind), g.SettlementID,
		string(g.State), g.UsedBy, g.CreatedAt.UTC(), g.ConsumedAt)
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The settlement has its grant already.").With("settlementId", g.SettlementID)
	}
	return nil
}

// x402Grant reads one grant by a WHERE clause (the first by creation).
func (tx *Tx) x402Grant(ctx context.Context, op, where string, args ...any) (x402.Grant, error) {
	var r x402GrantRow
	if err := tx.idb.NewRaw(`SELECT `+x402GrantColumns+` FROM x402_grants WHERE `+where+` ORDER BY created_at, id LIMIT 1`,
		args...).Scan(ctx, &r); err != nil {
		return x402.Grant{}, notFound(op, err)
	}
	return r.grant(), nil
}

// x402GrantScope is the WHERE clause of a scope's grants.
const x402GrantScope = `tenant_id = ? AND workspace_id = ? AND environment = ?`

// X402Grant implements x402.Store.
func (tx *Tx) X402Grant(ctx context.Context, sc access.Scope, id string) (x402.Grant, error) {
	return tx.x402Grant(ctx, "store.X402Grant", `id = ? AND `+x402GrantScope, id, sc.TenantID, sc.WorkspaceID, string(sc.Environment))
}

// X402GrantBySettlement implements x402.Store.
func (tx *Tx) X402GrantBySettlement(ctx context.Context, settlementID string) (x402.Grant, error) {
	return tx.x402Grant(ctx, "store.X402GrantBySettlement", `settlement_id = ?`, settlementID)
}

// X402GrantAvailable implements x402.Store.
func (tx *Tx) X402GrantAvailable(ctx context.Context, sc access.Scope, resourceID string) (x402.Grant, error) {
	return tx.x402Grant(ctx, "store.X402GrantAvailable", x402GrantScope+` AND resource_id = ? AND state = ?`,
		sc.TenantID, sc.WorkspaceID, string(sc.Environment), resourceID, string(x402.GrantAvailable))
}

// X402GrantConsume implements x402.Store: a compare-and-set on the
// available state.
func (tx *Tx) X402GrantConsume(ctx context.Context, sc access.Scope, id, usedBy string) error {
	const op = "store.X402GrantConsume"
	res, err := tx.idb.ExecContext(ctx, `UPDATE x402_grants SET state = ?, used_by = ?, consumed_at = ?
		WHERE id = ? AND `+x402GrantScope+` AND state = ?`,
		string(x402.GrantConsumed), usedBy, tx.now, id, sc.TenantID, sc.WorkspaceID, string(sc.Environment), string(x402.GrantAvailable))
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return errf(op, err)
	} else if n == 1 {
		return nil
	}
	if _, err := tx.X402Grant(ctx, sc, id); err != nil {
		return err
	}
	return fault.E(op, fault.Conflict, "The grant was spent already.").With("grantId", id)
}

// x402CheckRow is a row of x402_checks.
type x402CheckRow struct {
	Environment  string    `bun:"environment"`
	ConfigHash   string    `bun:"config_hash"`
	Passed       bool      `bun:"passed"`
	Reason       string    `bun:"reason"`
	Network      string    `bun:"network"`
	FeePayer     string    `bun:"fee_payer"`
	TokenProgram string    `bun:"token_program"`
	CheckedAt    time.Time `bun:"checked_at"`
}

// X402CheckSave implements x402.Store.
func (tx *Tx) X402CheckSave(ctx context.Context, c x402.Check) error {
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO x402_checks (environment, config_hash, passed, reason, network, fee_payer,
		token_program, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (environment) DO UPDATE SET config_hash = excluded.config_hash, passed = excluded.passed,
		reason = excluded.reason, network = excluded.network, fee_payer = excluded.fee_payer,
		token_program = excluded.token_program, checked_at = excluded.checked_at`,
		string(c.Environment), c.ConfigHash, c.Passed, c.Reason, c.Network, c.FeePayer, c.TokenProgram, c.CheckedAt.UTC())
	return errf("store.X402CheckSave", err)
}

// X402Check implements x402.Store.
func (tx *Tx) X402Check(ctx context.Context, env access.Environment) (x402.Check, error) {
	var r x402CheckRow
	err := tx.idb.NewRaw(`SELECT environment, config_hash, passed, reason, network, fee_payer, token_program, checked_at
		FROM x402_checks WHERE environment = ?`, string(env)).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return x402.Check{}, fault.E("store.X402Check", fault.NotFound, "")
	}
	if err != nil {
		return x402.Check{}, errf("store.X402Check", err)
	}
	return x402.Check{Environment: access.Environment(r.Environment), ConfigHash: r.ConfigHash, Passed: r.Passed, Reason: r.Reason,
		Network: r.Network, FeePayer: r.FeePayer, TokenProgram: r.TokenProgram, CheckedAt: r.CheckedAt.UTC()}, nil
}
