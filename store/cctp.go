package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/web3/cctp"
)

var _ cctp.Store = (*Tx)(nil)

// cctpTransferRow is a row of cctp_transfers.
type cctpTransferRow struct {
	ID                        string    `bun:"id"`
	TenantID                  string    `bun:"tenant_id"`
	WorkspaceID               string    `bun:"workspace_id"`
	Environment               string    `bun:"environment"`
	UserID                    string    `bun:"user_id"`
	State                     string    `bun:"state"`
	Amount                    string    `bun:"amount"`
	SourceDomain              int64     `bun:"source_domain"`
	DestinationDomain         int64     `bun:"destination_domain"`
	MintRecipient             string    `bun:"mint_recipient"`
	BurnTxHash                string    `bun:"burn_tx_hash"`
	BurnLogIndex              int64     `bun:"burn_log_index"`
	BurnBlock                 int64     `bun:"burn_block"`
	Depositor                 string    `bun:"depositor"`
	MaxFee                    string    `bun:"max_fee"`
	MinFinalityThreshold      int64     `bun:"min_finality_threshold"`
	SourceMessage             []byte    `bun:"source_message"`
	Message                   []byte    `bun:"message"`
	Attestation               []byte    `bun:"attestation"`
	MessageHash               string    `bun:"message_hash"`
	Nonce                     string    `bun:"nonce"`
	FeeExecuted               string    `bun:"fee_executed"`
	FinalityThresholdExecuted int64     `bun:"finality_threshold_executed"`
	MintSignature             string    `bun:"mint_signature"`
	MintSlot                  int64     `bun:"mint_slot"`
	ReviewReason              string    `bun:"review_reason"`
	Version                   int64     `bun:"version"`
	CreatedAt                 time.Time `bun:"created_at"`
	UpdatedAt                 time.Time `bun:"updated_at"`
}

const cctpTransferSelect = `SELECT id, tenant_id, workspace_id, environment, user_id, state, CAST(amount AS TEXT) AS amount,
	source_domain, destination_domain, mint_recipient, burn_tx_hash, burn_log_index, burn_block, depositor,
	CAST(max_fee AS TEXT) AS max_fee, min_finality_threshold, source_message, message, attestation, message_hash, nonce,
	CAST(fee_executed AS TEXT) AS fee_executed, finality_threshold_executed, mint_signature, mint_slot, review_reason, version,
	created_at, updated_at FROM cctp_transfers`

// transfer is the row as a cctp.Transfer.
func (r cctpTransferRow) transfer(op string) (cctp.Transfer, error) {
	t := cctp.Transfer{ID: r.ID, State: cctp.State(r.State), SourceDomain: cctp.Domain(r.SourceDomain),
		Owner:             cctp.Owner{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment), UserID: r.UserID},
		DestinationDomain: cctp.Domain(r.DestinationDomain), BurnLogIndex: uint32(r.BurnLogIndex), BurnBlock: uint64(r.BurnBlock),
		MinFinalityThreshold: uint32(r.MinFinalityThreshold), SourceMessage: r.SourceMessage, Message: r.Message,
		Attestation: r.Attestation, FinalityThresholdExecuted: uint32(r.FinalityThresholdExecuted), MintSignature: r.MintSignature,
		MintSlot: uint64(r.MintSlot), ReviewReason: r.ReviewReason, Version: r.Version, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC()}
	var err error
	amounts := []struct {
		s   string
		dst *money.Atomic
	}{{r.Amount, &t.Amount}, {r.MaxFee, &t.MaxFee}, {r.FeeExecuted, &t.FeeExecuted}}
	for _, a := range amounts {
		if *a.dst, err = money.ParseAtomic(a.s); err != nil {
			return cctp.Transfer{}, errf(op, err)
		}
	}
	if t.MintRecipient, err = token2022.ParsePublicKey(r.MintRecipient); err != nil {
		return cctp.Transfer{}, errf(op, err)
	}
	words := []struct {
		s   string
		dst *cctp.Word
	}{{r.BurnTxHash, &t.BurnTxHash}, {r.MessageHash, &t.MessageHash}, {r.Nonce, &t.Nonce}}
	for _, w := range words {
		if w.s == "" {
			continue
		}
		if *w.dst, err = cctp.ParseWord(w.s); err != nil {
			return cctp.Transfer{}, errf(op, err)
		}
	}
	if r.Depositor != "" {
		if t.Depositor, err = cctp.ParseEVMAddress(r.Depositor); err != nil {
			return cctp.Transfer{}, errf(op, err)
		}
	}
	return t, nil
}

// wordText is a word's column text: "" for the zero word (not set yet).
func wordText(w cctp.Word) string {
	if w.IsZero() {
		return ""
	}
	return w.String()
}

// CCTPTransferInsert implements cctp.Store.
func (tx *Tx) CCTPTransferInsert(ctx context.Context, t cctp.Transfer) error {
	const op = "store.CCTPTransferInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO cctp_transfers (id, tenant_id, workspace_id, environment, user_id, state, amount,
		source_domain, destination_domain, mint_recipient, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		t.ID, t.Owner.TenantID, t.Owner.WorkspaceID, string(t.Owner.Environment), t.Owner.UserID, string(t.State), t.Amount.String(),
		int64(t.SourceDomain), int64(t.DestinationDomain), t.MintRecipient.String(), t.Version, t.CreatedAt.UTC(), t.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The transfer exists.").With("transferId", t.ID)
	}
	return nil
}

// CCTPTransfer implements cctp.Store: the owner's user, workspace and
// environment only.
func (tx *Tx) CCTPTransfer(ctx context.Context, o cctp.Owner, id string) (cctp.Transfer, error) {
	const op = "store.CCTPTransfer"
	var r cctpTransferRow
	if err := tx.idb.NewRaw(cctpTransferSelect+` WHERE id = ? AND tenant_id = ? AND workspace_id = ? AND environment = ? AND user_id = ?`,
		id, o.TenantID, o.WorkspaceID, string(o.Environment), o.UserID).Scan(ctx, &r); err != nil {
		return cctp.Transfer{}, notFound(op, err)
	}
	return r.transfer(op)
}

// CCTPTransferIn implements cctp.Store: any tenant's, in env.
func (tx *Tx) CCTPTransferIn(ctx context.Context, env access.Environment, id string) (cctp.Transfer, error) {
	const op = "store.CCTPTransferIn"
	var r cctpTransferRow
	if err := tx.idb.NewRaw(cctpTransferSelect+` WHERE id = ? AND environment = ?`, id, string(env)).Scan(ctx, &r); err != nil {
		return cctp.Transfer{}, notFound(op, err)
	}
	return r.transfer(op)
}

// CCTPTransferUpdate implements cctp.Store: a compare-and-set on the
// version; the burn and the mint signature are unique in an environment
// (checked first, which is exact under SQLite's one writer; on PostgreSQL
// two units binding one at once meet the unique indexes).
func (tx *Tx) CCTPTransferUpdate(ctx context.Context, t cctp.Transfer, prevVersion int64) error {
	const op = "store.CCTPTransferUpdate"
	bound := fault.E(op, fault.Conflict, "The burn or the mint is bound to another transfer.").With("transferId", t.ID)
	if t.Version != prevVersion+1 {
		return fault.E(op, fault.Conflict, "The transfer's version must advance by one.").With("transferId", t.ID)
	}
	var n int
	err := tx.idb.NewRaw(`SELECT COUNT(*) FROM cctp_transfers WHERE id <> ? AND environment = ? AND
		((burn_tx_hash <> '' AND source_domain = ? AND burn_tx_hash = ? AND burn_log_index = ?) OR (mint_signature <> '' AND mint_signature = ?))`,
		t.ID, string(t.Owner.Environment), int64(t.SourceDomain), wordText(t.BurnTxHash), int64(t.BurnLogIndex), t.MintSignature).Scan(ctx, &n)
	if err != nil {
		return errf(op, err)
	}
	if n > 0 {
		return bound
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE cctp_transfers SET state = ?, burn_tx_hash = ?, burn_log_index = ?, burn_block = ?,
		depositor = ?, max_fee = ?, min_finality_threshold = ?, source_message = ?, message = ?, attestation = ?, message_hash = ?,
		nonce = ?, fee_executed = ?, finality_threshold_executed = ?, mint_signature = ?, mint_slot = ?, review_reason = ?, version = ?,
		updated_at = ? WHERE id = ? AND version = ?`,
		string(t.State), wordText(t.BurnTxHash), int64(t.BurnLogIndex), int64(t.BurnBlock), depositorText(t.Depositor), t.MaxFee.String(),
		int64(t.MinFinalityThreshold), t.SourceMessage, t.Message, t.Attestation, wordText(t.MessageHash), wordText(t.Nonce),
		t.FeeExecuted.String(), int64(t.FinalityThresholdExecuted), t.MintSignature, int64(t.MintSlot), t.ReviewReason, t.Version,
		t.UpdatedAt.UTC(), t.ID, prevVersion)
	if uniqueViolation(err) {
		return bound
	}
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The transfer changed meanwhile.").With("transferId", t.ID)
	}
	return nil
}

// depositorText is the depositor's column text: "" before the burn.
func depositorText(a cctp.EVMAddress) string {
	if a.IsZero() {
		return ""
	}
	return a.String()
}

// CCTPEvidenceInsert implements cctp.Store.
func (tx *Tx) CCTPEvidenceInsert(ctx context.Context, e cctp.Evidence) error {
	const op = "store.CCTPEvidenceInsert"
	checks, err := checksJSON(e.Checks)
	if err != nil {
		return errf(op, err)
	}
	// seq numbers a transfer's evidence in writing order: its writers are
	// serialized by the transfer's compare-and-set, and the unique index
	// refuses two of one number.
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO cctp_evidence (id, transfer_id, seq, step, outcome, reference, checks, observed_at)
		VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM cctp_evidence WHERE transfer_id = ?), ?, ?, ?, ?, ?)`,
		e.ID, e.TransferID, e.TransferID, string(e.Step), e.Outcome, e.Reference, checks, e.ObservedAt.UTC())
	if uniqueViolation(err) {
		return fault.E(op, fault.Conflict, "Evidence of the transfer was written meanwhile.").With("transferId", e.TransferID)
	}
	return errf(op, err)
}

// checksJSON is the checks' column text ("[]" for none).
func checksJSON(cs []cctp.Check) (string, error) {
	if cs == nil {
		cs = []cctp.Check{}
	}
	b, err := json.Marshal(cs)
	return string(b), err
}

// CCTPEvidence implements cctp.Store: in writing order.
func (tx *Tx) CCTPEvidence(ctx context.Context, transferID string) ([]cctp.Evidence, error) {
	const op = "store.CCTPEvidence"
	var rows []struct {
		ID         string    `bun:"id"`
		TransferID string    `bun:"transfer_id"`
		Step       string    `bun:"step"`
		Outcome    string    `bun:"outcome"`
		Reference  string    `bun:"reference"`
		Checks     string    `bun:"checks"`
		ObservedAt time.Time `bun:"observed_at"`
	}
	if err := tx.idb.NewRaw(`SELECT id, transfer_id, step, outcome, reference, checks, observed_at FROM cctp_evidence
		WHERE transfer_id = ? ORDER BY seq`, transferID).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]cctp.Evidence, 0, len(rows))
	for _, r := range rows {
		e := cctp.Evidence{ID: r.ID, TransferID: r.TransferID, Step: cctp.Step(r.Step), Outcome: r.Outcome, Reference: r.Reference,
			ObservedAt: r.ObservedAt.UTC()}
		if err := json.Unmarshal([]byte(r.Checks), &e.Checks); err != nil {
			return nil, errf(op, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// CCTPReadinessInsert implements cctp.Store.
func (tx *Tx) CCTPReadinessInsert(ctx context.Context, r cctp.Readiness) error {
	const op = "store.CCTPReadinessInsert"
	checks, err := checksJSON(r.Checks)
	if err != nil {
		return errf(op, err)
	}
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO cctp_readiness (id, environment, config_hash, passed, unreadable, error, checks,
		checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, string(r.Environment), r.ConfigHash, r.Passed, r.Unreadable, r.Error, checks,
		r.CheckedAt.UTC())
	return errf(op, err)
}

// CCTPReadinessLatest implements cctp.Store: the newest readable run.
func (tx *Tx) CCTPReadinessLatest(ctx context.Context, env access.Environment, configHash string) (cctp.Readiness, error) {
	const op = "store.CCTPReadinessLatest"
	var row struct {
		ID          string    `bun:"id"`
		Environment string    `bun:"environment"`
		ConfigHash  string    `bun:"config_hash"`
		Passed      bool      `bun:"passed"`
		Unreadable  bool      `bun:"unreadable"`
		Error       string    `bun:"error"`
		Checks      string    `bun:"checks"`
		CheckedAt   time.Time `bun:"checked_at"`
	}
	if err := tx.idb.NewRaw(`SELECT id, environment, config_hash, passed, unreadable, error, checks, checked_at FROM cctp_readiness
		WHERE environment = ? AND config_hash = ? AND unreadable = ? ORDER BY checked_at DESC, id DESC LIMIT 1`, string(env), configHash, false).
		Scan(ctx, &row); err != nil {
		return cctp.Readiness{}, notFound(op, err)
	}
	r := cctp.Readiness{ID: row.ID, Environment: access.Environment(row.Environment), ConfigHash: row.ConfigHash, Passed: row.Passed,
		Unreadable: row.Unreadable, Error: row.Error, CheckedAt: row.CheckedAt.UTC()}
	if err := json.Unmarshal([]byte(row.Checks), &r.Checks); err != nil {
		return cctp.Readiness{}, errf(op, err)
	}
	return r, nil
}
