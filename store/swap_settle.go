package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/swap"
)

var _ swap.SettleStore = (*Tx)(nil)

// SettleStore implements swap.Store: settlement's records, the ledger and
// the job queue in the same unit of work.
func (tx *Tx) SettleStore() swap.SettleStore { return tx }

// ownerScope is the WHERE clause of an owner-scoped swap record read.
const ownerScope = ` AND tenant_id = ? AND workspace_id = ? AND environment = ? AND user_id = ?`

func ownerArgs(o swap.Owner) []any {
	return []any{o.TenantID, o.WorkspaceID, string(o.Environment), o.UserID}
}

// SwapSignatureIntent implements swap.SettleStore.
func (tx *Tx) SwapSignatureIntent(ctx context.Context, signature string) (string, error) {
	const op = "store.SwapSignatureIntent"
	if signature == "" {
		return "", nil
	}
	var ids []string
	if err := tx.idb.NewRaw(`SELECT intent_id FROM swap_operations WHERE signature = ?`, signature).Scan(ctx, &ids); err != nil {
		return "", errf(op, err)
	}
	if len(ids) == 0 {
		return "", nil
	}
	return ids[0], nil
}

// SwapVerificationInsert implements swap.SettleStore.
func (tx *Tx) SwapVerificationInsert(ctx context.Context, r swap.VerificationRecord) error {
	const op = "store.SwapVerificationInsert"
	v := r.Verification
	body, err := json.Marshal(v)
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO swap_verifications (id, operation_id, intent_id, tenant_id, workspace_id,
		environment, user_id, signature, passed, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		append(append([]any{r.ID, v.OperationID, v.IntentID}, ownerArgs(r.Owner)...), v.Signature, v.Passed(), string(body),
			r.CreatedAt.UTC())...)
	return once(op, res, err, "The swap operation already has a verification.", v.OperationID)
}

// SwapVerification implements swap.SettleStore.
func (tx *Tx) SwapVerification(ctx context.Context, owner swap.Owner, operationID string) (swap.VerificationRecord, error) {
	const op = "store.SwapVerification"
	var row struct {
		ID        string    `bun:"id"`
		Body      string    `bun:"body"`
		CreatedAt time.Time `bun:"created_at"`
	}
	err := tx.idb.NewRaw(`SELECT id, body, created_at FROM swap_verifications WHERE operation_id = ?`+ownerScope,
		append([]any{operationID}, ownerArgs(owner)...)...).Scan(ctx, &row)
	if err != nil {
		return swap.VerificationRecord{}, notFound(op, err)
	}
	r := swap.VerificationRecord{ID: row.ID, Owner: owner, CreatedAt: row.CreatedAt.UTC()}
	if err := json.Unmarshal([]byte(row.Body), &r.Verification); err != nil {
		return swap.VerificationRecord{}, errf(op, err)
	}
	return r, nil
}

// swapSettlementRow is a row of swap_settlements.
type swapSettlementRow struct {
	ID           string     `bun:"id"`
	OperationID  string     `bun:"operation_id"`
	IntentID     string     `bun:"intent_id"`
	QuoteID      string     `bun:"quote_id"`
	Signature    string     `bun:"signature"`
	FeeMint      string     `bun:"fee_mint"`
	FeeDecimals  uint8      `bun:"fee_decimals"`
	FeeRecipient string     `bun:"fee_recipient"`
	FeeAccount   string     `bun:"fee_account"`
	ServiceFee   string     `bun:"service_fee_atomic"`
	FeeReceived  string     `bun:"fee_received_atomic"`
	ActualInput  string     `bun:"actual_input_atomic"`
	ActualOutput string     `bun:"actual_output_atomic"`
	Slot         uint64     `bun:"slot"`
	BlockTime    *time.Time `bun:"block_time"`
	ObservedAt   time.Time  `bun:"observed_at"`
	MovementID   string     `bun:"movement_id"`
	CreatedAt    time.Time  `bun:"created_at"`
}

// SwapSettlementInsert implements swap.SettleStore.
func (tx *Tx) SwapSettlementInsert(ctx context.Context, s swap.Settlement) error {
	const op = "store.SwapSettlementInsert"
	var bt *time.Time
	if s.BlockTime != nil {
		t := s.BlockTime.UTC()
		bt = &t
	}
	args := append([]any{s.ID, s.OperationID, s.IntentID, s.QuoteID}, ownerArgs(s.Owner)...)
	args = append(args, s.Signature, s.FeeMint.String(), s.FeeDecimals, s.FeeRecipient.String(), s.FeeAccount.String(),
		s.ServiceFeeAtomic.String(), s.FeeReceivedAtomic.String(), s.ActualInputAtomic.String(), s.ActualOutputAtomic.String(),
		s.Slot, bt, s.ObservedAt.UTC(), s.MovementID, s.CreatedAt.UTC())
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO swap_settlements (id, operation_id, intent_id, quote_id, tenant_id,
		workspace_id, environment, user_id, signature, fee_mint, fee_decimals, fee_recipient, fee_account, service_fee_atomic,
		fee_received_atomic, actual_input_atomic, actual_output_atomic, slot, block_time, observed_at, movement_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, args...)
	return once(op, res, err, "The swap operation or its transaction is already settled.", s.OperationID)
}

// SwapSettlement implements swap.SettleStore.
func (tx *Tx) SwapSettlement(ctx context.Context, owner swap.Owner, operationID string) (swap.Settlement, error) {
	const op = "store.SwapSettlement"
	var row swapSettlementRow
	err := tx.idb.NewRaw(`SELECT id, operation_id, intent_id, quote_id, signature, fee_mint, fee_decimals, fee_recipient, fee_account,
		CAST(service_fee_atomic AS TEXT) AS service_fee_atomic, CAST(fee_received_atomic AS TEXT) AS fee_received_atomic,
		CAST(actual_input_atomic AS TEXT) AS actual_input_atomic, CAST(actual_output_atomic AS TEXT) AS actual_output_atomic,
		slot, block_time, observed_at, movement_id, created_at FROM swap_settlements WHERE operation_id = ?`+ownerScope,
		append([]any{operationID}, ownerArgs(owner)...)...).Scan(ctx, &row)
	if err != nil {
		return swap.Settlement{}, notFound(op, err)
	}
	s := swap.Settlement{ID: row.ID, OperationID: row.OperationID, IntentID: row.IntentID, QuoteID: row.QuoteID, Owner: owner,
		Signature: row.Signature, FeeDecimals: row.FeeDecimals, Slot: row.Slot, ObservedAt: row.ObservedAt.UTC(),
		MovementID: row.MovementID, CreatedAt: row.CreatedAt.UTC()}
	if row.BlockTime != nil {
		t := row.BlockTime.UTC()
		s.BlockTime = &t
	}
	for _, k := range []struct {
		into *token2022.PublicKey
		text string
	}{{&s.FeeMint, row.FeeMint}, {&s.FeeRecipient, row.FeeRecipient}, {&s.FeeAccount, row.FeeAccount}} {
		if *k.into, err = token2022.ParsePublicKey(k.text); err != nil {
			return swap.Settlement{}, errf(op, err)
		}
	}
	for _, a := range []struct {
		into *money.Atomic
		text string
	}{{&s.ServiceFeeAtomic, row.ServiceFee}, {&s.FeeReceivedAtomic, row.FeeReceived}, {&s.ActualInputAtomic, row.ActualInput},
		{&s.ActualOutputAtomic, row.ActualOutput}} {
		if *a.into, err = money.ParseAtomic(a.text); err != nil {
			return swap.Settlement{}, corrupt(op, err)
		}
	}
	return s, nil
}

// SwapReconciliationInsert implements swap.SettleStore.
func (tx *Tx) SwapReconciliationInsert(ctx context.Context, r swap.ReconciliationRecord) error {
	const op = "store.SwapReconciliationInsert"
	rc := r.Reconciliation
	body, err := json.Marshal(rc)
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO swap_reconciliations (id, operation_id, intent_id, tenant_id, workspace_id,
		environment, user_id, signature, outcome, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		append(append([]any{r.ID, rc.OperationID, rc.IntentID}, ownerArgs(r.Owner)...), rc.Signature, string(rc.Outcome), string(body),
			r.CreatedAt.UTC())...)
	return once(op, res, err, "The swap operation is already reconciled.", rc.OperationID)
}

// SwapReconciliation implements swap.SettleStore.
func (tx *Tx) SwapReconciliation(ctx context.Context, owner swap.Owner, operationID string) (swap.ReconciliationRecord, error) {
	const op = "store.SwapReconciliation"
	var row struct {
		ID        string    `bun:"id"`
		Body      string    `bun:"body"`
		CreatedAt time.Time `bun:"created_at"`
	}
	err := tx.idb.NewRaw(`SELECT id, body, created_at FROM swap_reconciliations WHERE operation_id = ?`+ownerScope,
		append([]any{operationID}, ownerArgs(owner)...)...).Scan(ctx, &row)
	if err != nil {
		return swap.ReconciliationRecord{}, notFound(op, err)
	}
	r := swap.ReconciliationRecord{ID: row.ID, Owner: owner, CreatedAt: row.CreatedAt.UTC()}
	if err := json.Unmarshal([]byte(row.Body), &r.Reconciliation); err != nil {
		return swap.ReconciliationRecord{}, errf(op, err)
	}
	return r, nil
}

// once reports an INSERT ... ON CONFLICT DO NOTHING that wrote nothing as
// CONFLICT.
func once(op string, res sql.Result, err error, message, operationID string) error {
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, message).With("operationId", operationID)
	}
	return nil
}
