package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/swap"
)

// swapRunRow is a row of swap_registry_runs.
type swapRunRow struct {
	ID              string    `bun:"id"`
	Environment     string    `bun:"environment"`
	RegistryVersion int       `bun:"registry_version"`
	RegistryHash    string    `bun:"registry_hash"`
	Network         string    `bun:"network"`
	Unreadable      bool      `bun:"unreadable"`
	Error           string    `bun:"error"`
	Checks          string    `bun:"checks"`
	CheckedAt       time.Time `bun:"checked_at"`
}

// SwapRegistryRunInsert implements swap.Store.
func (tx *Tx) SwapRegistryRunInsert(ctx context.Context, r swap.RegistryRun) error {
	const op = "store.SwapRegistryRunInsert"
	checks := r.Checks
	if checks == nil {
		checks = []swap.MintCheck{}
	}
	b, err := json.Marshal(checks)
	if err != nil {
		return errf(op, err)
	}
	// seq follows insertion: runs are rare, and two stored at once may
	// share a number, which then leaves their order to checked_at and id.
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO swap_registry_runs (id, seq, environment, registry_version, registry_hash,
		network, unreadable, error, checks, checked_at)
		VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM swap_registry_runs), ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Environment, r.RegistryVersion, r.RegistryHash, r.Network, r.Unreadable, r.Error, string(b), r.CheckedAt.UTC())
	return errf(op, err)
}

const swapRunSelect = `SELECT id, environment, registry_version, registry_hash, network, unreadable, error, checks, checked_at
	FROM swap_registry_runs WHERE environment = ? AND registry_version = ?`

// SwapRegistryRunLatest implements swap.Store.
func (tx *Tx) SwapRegistryRunLatest(ctx context.Context, env access.Environment, version int) (swap.RegistryRun, error) {
	return tx.scanSwapRun(ctx, "store.SwapRegistryRunLatest", swapRunSelect+
		` AND unreadable = ? ORDER BY checked_at DESC, seq DESC, id DESC LIMIT 1`, string(env), version, false)
}

func (tx *Tx) scanSwapRun(ctx context.Context, op, q string, args ...any) (swap.RegistryRun, error) {
	var row swapRunRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &row); err != nil {
		return swap.RegistryRun{}, notFound(op, err)
	}
	r := swap.RegistryRun{ID: row.ID, Environment: row.Environment, RegistryVersion: row.RegistryVersion, RegistryHash: row.RegistryHash,
		Network: row.Network, Unreadable: row.Unreadable, Error: row.Error, CheckedAt: row.CheckedAt.UTC()}
	if err := json.Unmarshal([]byte(row.Checks), &r.Checks); err != nil {
		return swap.RegistryRun{}, errf(op, err)
	}
	return r, nil
}

// swapOperationRow is a row of swap_operations.
type swapOperationRow struct {
	ID          string    `bun:"id"`
	TenantID    string    `bun:"tenant_id"`
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	UserID      string    `bun:"user_id"`
	State       string    `bun:"state"`
	QuoteID     string    `bun:"quote_id"`
	IntentID    string    `bun:"intent_id"`
	Signature   string    `bun:"signature"`
	LastError   string    `bun:"last_error"`
	Version     int64     `bun:"version"`
	CreatedAt   time.Time `bun:"created_at"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

// SwapOperationInsert implements swap.Store.
func (tx *Tx) SwapOperationInsert(ctx context.Context, o swap.Operation) error {
	const op = "store.SwapOperationInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO swap_operations (id, tenant_id, workspace_id, environment, user_id, state,
		quote_id, intent_id, signature, last_error, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		o.ID, o.Owner.TenantID, o.Owner.WorkspaceID, string(o.Owner.Environment), o.Owner.UserID, string(o.State), o.QuoteID,
		o.IntentID, o.Signature, o.LastError, o.Version, o.CreatedAt.UTC(), o.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The swap operation already exists.").With("operationId", o.ID)
	}
	return nil
}

// SwapOperation implements swap.Store.
func (tx *Tx) SwapOperation(ctx context.Context, owner swap.Owner, id string) (swap.Operation, error) {
	const op = "store.SwapOperation"
	var row swapOperationRow
	err := tx.idb.NewRaw(`SELECT id, tenant_id, workspace_id, environment, user_id, state, quote_id, intent_id, signature,
		last_error, version, created_at, updated_at FROM swap_operations
		WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ? AND user_id = ?`,
		id, owner.TenantID, owner.WorkspaceID, string(owner.Environment), owner.UserID).Scan(ctx, &row)
	if err != nil {
		return swap.Operation{}, notFound(op, err)
	}
	return row.operation(), nil
}

// operation is the row as a swap.Operation.
func (row swapOperationRow) operation() swap.Operation {
	return swap.Operation{ID: row.ID, Owner: swap.Owner{TenantID: row.TenantID, WorkspaceID: row.WorkspaceID,
		Environment: access.Environment(row.Environment), UserID: row.UserID}, State: swap.State(row.State), QuoteID: row.QuoteID,
		IntentID: row.IntentID, Signature: row.Signature, LastError: row.LastError, Version: row.Version,
		CreatedAt: row.CreatedAt.UTC(), UpdatedAt: row.UpdatedAt.UTC()}
}

// SwapQuoteInsert implements swap.Store.
func (tx *Tx) SwapQuoteInsert(ctx context.Context, q swap.Quote) error {
	const op = "store.SwapQuoteInsert"
	body, err := json.Marshal(q)
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO swap_quotes (id, operation_id, tenant_id, workspace_id, environment, user_id,
		hash, body, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		q.ID, q.OperationID, q.Owner.TenantID, q.Owner.WorkspaceID, string(q.Owner.Environment), q.Owner.UserID, q.Hash,
		string(body), q.ExpiresAt.UTC(), q.CreatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The swap quote already exists.").With("quoteId", q.ID)
	}
	return nil
}

// SwapQuote implements swap.Store.
func (tx *Tx) SwapQuote(ctx context.Context, owner swap.Owner, id string) (swap.Quote, error) {
	const op = "store.SwapQuote"
	var body string
	err := tx.idb.NewRaw(`SELECT body FROM swap_quotes
		WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ? AND user_id = ?`,
		id, owner.TenantID, owner.WorkspaceID, string(owner.Environment), owner.UserID).Scan(ctx, &body)
	if err != nil {
		return swap.Quote{}, notFound(op, err)
	}
	var q swap.Quote
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		return swap.Quote{}, errf(op, err)
	}
	return q, nil
}

// SwapOperationUpdate implements swap.Store.
func (tx *Tx) SwapOperationUpdate(ctx context.Context, o swap.Operation, prevVersion int64) error {
	const op = "store.SwapOperationUpdate"
	if o.Version != prevVersion+1 {
		return fault.E(op, fault.Conflict, "The operation's version must advance by one.").With("operationId", o.ID)
	}
	if o.Signature != "" {
		// One writer on SQLite makes this check exact; on PostgreSQL two
		// units binding one signature at once meet the unique index.
		var n int
		if err := tx.idb.NewRaw(`SELECT COUNT(*) FROM swap_operations WHERE signature = ? AND id <> ?`, o.Signature, o.ID).
			Scan(ctx, &n); err != nil {
			return errf(op, err)
		}
		if n > 0 {
			return fault.E(op, fault.Conflict, "The signature belongs to another swap operation.").With("operationId", o.ID)
		}
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE swap_operations SET state = ?, intent_id = ?, signature = ?, last_error = ?,
		version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(o.State), o.IntentID, o.Signature, o.LastError, o.Version, o.UpdatedAt.UTC(), o.ID, prevVersion)
	if uniqueViolation(err) {
		return fault.E(op, fault.Conflict, "The signature belongs to another swap operation.").With("operationId", o.ID)
	}
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The swap operation changed meanwhile.").With("operationId", o.ID)
	}
	return nil
}

// swapPrepared is the stored form of a prepared transaction beside its
// message.
type swapPrepared struct {
	LastValidBlockHeight uint64       `json:"lastValidBlockHeight"`
	ExpiresAt            time.Time    `json:"expiresAt"`
	PriorityFeeLamports  money.Atomic `json:"priorityFeeLamports"`
	RentLamports         money.Atomic `json:"rentLamports"`
}

// SwapIntentInsert implements swap.Store.
func (tx *Tx) SwapIntentInsert(ctx context.Context, it swap.Intent, p swap.Prepared) error {
	const op = "store.SwapIntentInsert"
	body, err := json.Marshal(it)
	if err != nil {
		return errf(op, err)
	}
	prep, err := json.Marshal(swapPrepared{LastValidBlockHeight: p.LastValidBlockHeight, ExpiresAt: p.ExpiresAt.UTC(),
		PriorityFeeLamports: p.PriorityFeeLamports, RentLamports: p.RentLamports})
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO swap_intents (id, operation_id, quote_id, tenant_id, workspace_id, environment,
		user_id, hash, body, message, prepared, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		it.ID, it.OperationID, it.QuoteID, it.Owner.TenantID, it.Owner.WorkspaceID, string(it.Owner.Environment), it.Owner.UserID,
		it.Hash, string(body), p.Message, string(prep), it.ExpiresAt.UTC(), it.CreatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The quote is already bound to an intent.").With("quoteId", it.QuoteID)
	}
	return nil
}

// SwapIntent implements swap.Store.
func (tx *Tx) SwapIntent(ctx context.Context, owner swap.Owner, id string) (swap.Intent, swap.Prepared, error) {
	const op = "store.SwapIntent"
	var row struct {
		Body     string `bun:"body"`
		Message  []byte `bun:"message"`
		Prepared string `bun:"prepared"`
	}
	err := tx.idb.NewRaw(`SELECT body, message, prepared FROM swap_intents
		WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ? AND user_id = ?`,
		id, owner.TenantID, owner.WorkspaceID, string(owner.Environment), owner.UserID).Scan(ctx, &row)
	if err != nil {
		return swap.Intent{}, swap.Prepared{}, notFound(op, err)
	}
	var it swap.Intent
	if err := json.Unmarshal([]byte(row.Body), &it); err != nil {
		return swap.Intent{}, swap.Prepared{}, errf(op, err)
	}
	var sp swapPrepared
	if err := json.Unmarshal([]byte(row.Prepared), &sp); err != nil {
		return swap.Intent{}, swap.Prepared{}, errf(op, err)
	}
	return it, swap.Prepared{Message: row.Message, Unsigned: message.Unsigned(row.Message), LastValidBlockHeight: sp.LastValidBlockHeight,
		ExpiresAt: sp.ExpiresAt.UTC(), PriorityFeeLamports: sp.PriorityFeeLamports, RentLamports: sp.RentLamports}, nil
}
