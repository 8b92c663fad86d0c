package store

import (
	"context"
	"time"

	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/swap"
)

// swapSubmissionRow is a row of swap_submissions.
type swapSubmissionRow struct {
	Network              string `bun:"network"`
	Signature            string `bun:"signature"`
	Wire                 []byte `bun:"wire"`
	Blockhash            string `bun:"blockhash"`
	LastValidBlockHeight int64  `bun:"last_valid_block_height"`
	State                string `bun:"state"`
	SendAttempts         int    `bun:"send_attempts"`
	LastError            string `bun:"last_error"`
	ChainError           string `bun:"chain_error"`
	Slot                 int64  `bun:"slot"`
}

// SwapSubmissionInsert implements swap.SubmitStore.
func (tx *Tx) SwapSubmissionInsert(ctx context.Context, operationID string, s relay.Submission) error {
	const op = "store.SwapSubmissionInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO swap_submissions (operation_id, network, signature, wire, blockhash,
		last_valid_block_height, state, send_attempts, last_error, chain_error, slot, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		operationID, s.Network, s.Signature, s.Wire, s.Blockhash, int64(s.LastValidBlockHeight), string(s.State), s.SendAttempts,
		string(s.LastError), s.ChainError, int64(s.Slot), tx.now)
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The operation or the signature already has a submission.").With("operationId", operationID)
	}
	return nil
}

// SwapSubmission implements swap.SubmitStore.
func (tx *Tx) SwapSubmission(ctx context.Context, operationID string) (relay.Submission, error) {
	const op = "store.SwapSubmission"
	var r swapSubmissionRow
	err := tx.idb.NewRaw(`SELECT network, signature, wire, blockhash, last_valid_block_height, state, send_attempts, last_error,
		chain_error, slot FROM swap_submissions WHERE operation_id = ?`, operationID).Scan(ctx, &r)
	if err != nil {
		return relay.Submission{}, notFound(op, err)
	}
	return relay.Submission{Network: r.Network, Signature: r.Signature, Wire: r.Wire, Blockhash: r.Blockhash,
		LastValidBlockHeight: uint64(r.LastValidBlockHeight), State: relay.State(r.State), SendAttempts: r.SendAttempts,
		LastError: fault.Code(r.LastError), ChainError: r.ChainError, Slot: uint64(r.Slot)}, nil
}

// SwapSubmissionUpdate implements swap.SubmitStore.
func (tx *Tx) SwapSubmissionUpdate(ctx context.Context, operationID string, s relay.Submission, prevAttempts int, prevState relay.State) error {
	const op = "store.SwapSubmissionUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE swap_submissions SET state = ?, send_attempts = ?, last_error = ?, chain_error = ?,
		slot = ?, updated_at = ? WHERE operation_id = ? AND send_attempts = ? AND state = ?`,
		string(s.State), s.SendAttempts, string(s.LastError), s.ChainError, int64(s.Slot), tx.now, operationID, prevAttempts, string(prevState))
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The submission changed meanwhile.").With("operationId", operationID)
	}
	return nil
}

// SwapOperationByID implements swap.SubmitStore.
func (tx *Tx) SwapOperationByID(ctx context.Context, id string) (swap.Operation, error) {
	const op = "store.SwapOperationByID"
	var row swapOperationRow
	err := tx.idb.NewRaw(`SELECT id, tenant_id, workspace_id, environment, user_id, state, quote_id, intent_id, signature,
		last_error, version, created_at, updated_at FROM swap_operations WHERE id = ?`, id).Scan(ctx, &row)
	if err != nil {
		return swap.Operation{}, notFound(op, err)
	}
	return row.operation(), nil
}

// SwapOperationsExpired implements swap.SubmitStore.
func (tx *Tx) SwapOperationsExpired(ctx context.Context, now time.Time, limit int) ([]swap.Operation, error) {
	const op = "store.SwapOperationsExpired"
	var rows []swapOperationRow
	err := tx.idb.NewRaw(`SELECT o.id, o.tenant_id, o.workspace_id, o.environment, o.user_id, o.state, o.quote_id, o.intent_id,
		o.signature, o.last_error, o.version, o.created_at, o.updated_at
		FROM swap_operations o JOIN swap_quotes q ON q.id = o.quote_id
		WHERE o.state IN (?, ?, ?) AND q.expires_at <= ? ORDER BY q.expires_at, o.id LIMIT ?`,
		string(swap.StateQuoted), string(swap.StateIntentCreated), string(swap.StateAwaitingSignature), now.UTC(), limit).Scan(ctx, &rows)
	if err != nil {
		return nil, errf(op, err)
	}
	out := make([]swap.Operation, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.operation())
	}
	return out, nil
}
