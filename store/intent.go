package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
)

var (
	_ intent.Store       = (*Tx)(nil)
	_ intent.CreditStore = (*Tx)(nil)
)

// CreditStore implements intent.Store: the credit purchase's policy and
// ledger ports are this same unit of work.
func (tx *Tx) CreditStore() intent.CreditStore { return tx }

// intentBody is the stored JSON form of an intent.Intent (the body column of
// transaction_intents): every field under a fixed name, addresses as base58
// text, bytes as base64, times in UTC with nanoseconds. It is the source of
// truth a read returns; the table's other columns are copies of the facts
// the store queries and constrains on.
type intentBody struct {
	ID                   string             `json:"id"`
	Version              int64              `json:"version"`
	TenantID             string             `json:"tenantId"`
	WorkspaceID          string             `json:"workspaceId"`
	UserID               string             `json:"userId"`
	Environment          string             `json:"environment"`
	Purpose              string             `json:"purpose"`
	BusinessReference    string             `json:"businessReference"`
	Quantity             string             `json:"quantity"`
	Description          string             `json:"description"`
	PolicyID             string             `json:"policyId"`
	PolicyVersion        int                `json:"policyVersion"`
	PolicyHash           string             `json:"policyHash"`
	Network              string             `json:"network"`
	Payer                string             `json:"payer"`
	Source               string             `json:"source"`
	Recipient            string             `json:"recipient"`
	Destination          string             `json:"destination"`
	Mint                 string             `json:"mint"`
	TokenProgram         string             `json:"tokenProgram"`
	Decimals             uint8              `json:"decimals"`
	GrossAtomic          uint64             `json:"grossAtomic"`
	FeeAtomic            uint64             `json:"feeAtomic"`
	NetAtomic            uint64             `json:"netAtomic"`
	FeeEpoch             uint64             `json:"feeEpoch"`
	FeeScheduleEpoch     uint64             `json:"feeScheduleEpoch"`
	FeeMaximum           uint64             `json:"feeMaximum"`
	FeeBasisPoints       uint16             `json:"feeBasisPoints"`
	HasTransferFee       bool               `json:"hasTransferFee"`
	Reference            string             `json:"reference"`
	Memo                 string             `json:"memo"`
	CreatedAt            time.Time          `json:"createdAt"`
	ExpiresAt            time.Time          `json:"expiresAt"`
	EconomicsHash        string             `json:"economicsHash"`
	RequestFingerprint   string             `json:"requestFingerprint"`
	Message              []byte             `json:"message"`
	Blockhash            string             `json:"blockhash"`
	LastValidBlockHeight uint64             `json:"lastValidBlockHeight"`
	TransactionExpiresAt time.Time          `json:"transactionExpiresAt"`
	State                string             `json:"state"`
	NetworkState         string             `json:"networkState"`
	Signature            string             `json:"signature"`
	SignedTransaction    []byte             `json:"signedTransaction"`
	Origin               string             `json:"origin"`
	SendAttempts         int                `json:"sendAttempts"`
	LastError            string             `json:"lastError"`
	ChainError           string             `json:"chainError"`
	Slot                 uint64             `json:"slot"`
	Evidence             []intentMismatchJS `json:"evidence"`
	SubmittedAt          time.Time          `json:"submittedAt"`
	VerifiedAt           time.Time          `json:"verifiedAt"`
	SettledAt            time.Time          `json:"settledAt"`
	UpdatedAt            time.Time          `json:"updatedAt"`
	// Reconciliation's summary (0017); absent in bodies written before.
	ReconciliationID      string    `json:"reconciliationId,omitempty"`
	ReconciliationOutcome string    `json:"reconciliationOutcome,omitempty"`
	ReconciledAt          time.Time `json:"reconciledAt"`
	// Legs (0030) are the frozen legs of an intent whose purpose priced
	// several recipients; absent for one payment to the treasury, so those
	// bodies are written as before legs existed.
	Legs []intentLegJS `json:"legs,omitempty"`
}

// intentLegJS is the stored form of an intent.Leg: addresses in base58,
// amounts as JSON numbers (a u64 round-trips through encoding/json).
type intentLegJS struct {
	Role        string `json:"role"`
	Recipient   string `json:"recipient"`
	Destination string `json:"destination"`
	GrossAtomic uint64 `json:"grossAtomic"`
	FeeAtomic   uint64 `json:"feeAtomic"`
	NetAtomic   uint64 `json:"netAtomic"`
}

// intentMismatchJS is the stored form of an intent.Mismatch.
type intentMismatchJS struct {
	Field    string `json:"field"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// newIntentBody converts it to its stored form, times in UTC.
func newIntentBody(it intent.Intent) intentBody {
	b := intentBody{ID: it.ID, Version: it.Version,
		TenantID: it.Actor.TenantID, WorkspaceID: it.Actor.WorkspaceID, UserID: it.Actor.UserID,
		Environment: string(it.Actor.Environment), Purpose: it.Purpose, BusinessReference: it.BusinessReference,
		Quantity: it.Quantity, Description: it.Description,
		PolicyID: it.Policy.ID, PolicyVersion: it.Policy.Version, PolicyHash: it.Policy.Hash, Network: it.Network,
		Payer: it.Payer.String(), Source: it.Source.String(), Recipient: it.Recipient.String(),
		Destination: it.Destination.String(), Mint: it.Mint.String(), TokenProgram: it.TokenProgram.String(),
		Decimals: it.Decimals, GrossAtomic: it.GrossAtomic, FeeAtomic: it.FeeAtomic, NetAtomic: it.NetAtomic,
		FeeEpoch: it.FeeEpoch, FeeScheduleEpoch: it.TransferFee.Epoch, FeeMaximum: it.TransferFee.MaximumFee,
		FeeBasisPoints: it.TransferFee.BasisPoints, HasTransferFee: it.HasTransferFee,
		Reference: it.Reference.String(), Memo: it.Memo, CreatedAt: it.CreatedAt.UTC(), ExpiresAt: it.ExpiresAt.UTC(),
		EconomicsHash: it.EconomicsHash, RequestFingerprint: it.RequestFingerprint,
		Message: it.Transaction.Message, Blockhash: it.Transaction.Blockhash,
		LastValidBlockHeight: it.Transaction.LastValidBlockHeight, TransactionExpiresAt: it.Transaction.ExpiresAt.UTC(),
		State: string(it.State), NetworkState: string(it.NetworkState), Signature: it.Signature,
		SignedTransaction: it.SignedTransaction, Origin: string(it.Origin), SendAttempts: it.SendAttempts,
		LastError: string(it.LastError), ChainError: it.ChainError, Slot: it.Slot,
		SubmittedAt: it.SubmittedAt.UTC(), VerifiedAt: it.VerifiedAt.UTC(), SettledAt: it.SettledAt.UTC(),
		UpdatedAt: it.UpdatedAt.UTC(), ReconciliationID: it.ReconciliationID,
		ReconciliationOutcome: string(it.ReconciliationOutcome), ReconciledAt: it.ReconciledAt.UTC()}
	if it.Evidence != nil {
		b.Evidence = make([]intentMismatchJS, len(it.Evidence))
		for i, m := range it.Evidence {
			b.Evidence[i] = intentMismatchJS{Field: m.Field, Expected: m.Expected, Actual: m.Actual}
		}
	}
	for _, l := range it.Legs {
		b.Legs = append(b.Legs, intentLegJS{Role: l.Role, Recipient: l.Recipient.String(), Destination: l.Destination.String(),
			GrossAtomic: l.GrossAtomic, FeeAtomic: l.FeeAtomic, NetAtomic: l.NetAtomic})
	}
	return b
}

// intent converts the stored form back. It fails on an address that is not
// base58 of 32 bytes.
func (b intentBody) intent() (intent.Intent, error) {
	it := intent.Intent{ID: b.ID, Version: b.Version,
		Actor: intent.Actor{TenantID: b.TenantID, WorkspaceID: b.WorkspaceID, UserID: b.UserID,
			Environment: access.Environment(b.Environment)},
		Purpose: b.Purpose, BusinessReference: b.BusinessReference, Quantity: b.Quantity, Description: b.Description,
		Policy: intent.PolicyRef{ID: b.PolicyID, Version: b.PolicyVersion, Hash: b.PolicyHash}, Network: b.Network,
		Decimals: b.Decimals, GrossAtomic: b.GrossAtomic, FeeAtomic: b.FeeAtomic, NetAtomic: b.NetAtomic, FeeEpoch: b.FeeEpoch,
		TransferFee:    token2022.TransferFee{Epoch: b.FeeScheduleEpoch, MaximumFee: b.FeeMaximum, BasisPoints: b.FeeBasisPoints},
		HasTransferFee: b.HasTransferFee, Memo: b.Memo, CreatedAt: b.CreatedAt.UTC(), ExpiresAt: b.ExpiresAt.UTC(),
		EconomicsHash: b.EconomicsHash, RequestFingerprint: b.RequestFingerprint,
		Transaction: intent.Prepared{Message: b.Message, Blockhash: b.Blockhash, LastValidBlockHeight: b.LastValidBlockHeight,
			ExpiresAt: b.TransactionExpiresAt.UTC()},
		State: intent.State(b.State), NetworkState: intent.NetworkState(b.NetworkState), Signature: b.Signature,
		SignedTransaction: b.SignedTransaction, Origin: intent.Origin(b.Origin), SendAttempts: b.SendAttempts,
		LastError: fault.Code(b.LastError), ChainError: b.ChainError, Slot: b.Slot,
		SubmittedAt: b.SubmittedAt.UTC(), VerifiedAt: b.VerifiedAt.UTC(), SettledAt: b.SettledAt.UTC(),
		UpdatedAt: b.UpdatedAt.UTC(), ReconciliationID: b.ReconciliationID,
		ReconciliationOutcome: intent.ReconciliationOutcome(b.ReconciliationOutcome), ReconciledAt: b.ReconciledAt.UTC()}
	for _, a := range []struct {
		name string
		text string
		dst  *chain.Address
	}{{"payer", b.Payer, &it.Payer}, {"source", b.Source, &it.Source}, {"recipient", b.Recipient, &it.Recipient},
		{"destination", b.Destination, &it.Destination}, {"mint", b.Mint, &it.Mint},
		{"tokenProgram", b.TokenProgram, &it.TokenProgram}, {"reference", b.Reference, &it.Reference}} {
		k, err := token2022.ParsePublicKey(a.text)
		if err != nil {
			return intent.Intent{}, fmt.Errorf("store: intent %s: %s: %w", b.ID, a.name, err)
		}
		*a.dst = k
	}
	if b.Evidence != nil {
		it.Evidence = make([]intent.Mismatch, len(b.Evidence))
		for i, m := range b.Evidence {
			it.Evidence[i] = intent.Mismatch{Field: m.Field, Expected: m.Expected, Actual: m.Actual}
		}
	}
	for i, l := range b.Legs {
		leg := intent.Leg{Role: l.Role, GrossAtomic: l.GrossAtomic, FeeAtomic: l.FeeAtomic, NetAtomic: l.NetAtomic}
		for _, a := range []struct {
			name string
			text string
			dst  *chain.Address
		}{{"recipient", l.Recipient, &leg.Recipient}, {"destination", l.Destination, &leg.Destination}} {
			k, err := token2022.ParsePublicKey(a.text)
			if err != nil {
				return intent.Intent{}, fmt.Errorf("store: intent %s: legs[%d].%s: %w", b.ID, i, a.name, err)
			}
			*a.dst = k
		}
		it.Legs = append(it.Legs, leg)
	}
	return it, nil
}

// nullString is s, or NULL when s is empty.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// InsertIntent implements intent.Store: CONFLICT when the id or the
// business reference is taken, or when its legs repeat a role or a
// recipient. The legs are in the body and, copied, in
// transaction_intent_legs (0030), one row each, written here only.
func (tx *Tx) InsertIntent(ctx context.Context, it intent.Intent) error {
	const op = "store.InsertIntent"
	body, err := json.Marshal(newIntentBody(it))
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO transaction_intents (id, environment, tenant_id, workspace_id, user_id, purpose,
		business_reference, state, network_state, version, signature, expires_at, created_at, updated_at, body)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		it.ID, string(it.Actor.Environment), it.Actor.TenantID, it.Actor.WorkspaceID, it.Actor.UserID, it.Purpose,
		it.BusinessReference, string(it.State), string(it.NetworkState), it.Version, nullString(it.Signature),
		it.ExpiresAt.UTC(), it.CreatedAt.UTC(), it.UpdatedAt.UTC(), string(body))
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The transaction intent already exists.").With("intentId", it.ID)
	}
	for i, l := range it.Legs {
		res, err := tx.idb.ExecContext(ctx, `INSERT INTO transaction_intent_legs (intent_id, leg_index, role, recipient, destination,
			gross_atomic, fee_atomic, net_atomic) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, it.ID, i, l.Role,
			l.Recipient.String(), l.Destination.String(), strconv.FormatUint(l.GrossAtomic, 10), strconv.FormatUint(l.FeeAtomic, 10),
			strconv.FormatUint(l.NetAtomic, 10))
		ok, err := inserted(op, res, err)
		if err != nil {
			return err
		}
		if !ok {
			return fault.E(op, fault.Conflict, "The intent's legs repeat a role or a recipient.").With("intentId", it.ID).With("leg", i)
		}
	}
	return nil
}

func (tx *Tx) scanIntent(ctx context.Context, op, q string, args ...any) (intent.Intent, error) {
	var body string
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &body); err != nil {
		return intent.Intent{}, notFound(op, err)
	}
	return decodeIntent(op, body)
}

// decodeIntent decodes a body column.
func decodeIntent(op, body string) (intent.Intent, error) {
	var b intentBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return intent.Intent{}, errf(op, fmt.Errorf("store: intent body: %w", err))
	}
	it, err := b.intent()
	if err != nil {
		return intent.Intent{}, errf(op, err)
	}
	return it, nil
}

// Intent implements intent.Store.
func (tx *Tx) Intent(ctx context.Context, id string) (intent.Intent, error) {
	return tx.scanIntent(ctx, "store.Intent", `SELECT body FROM transaction_intents WHERE id = ?`, id)
}

// LockIntent implements intent.Store: the row stays locked (FOR UPDATE on
// PostgreSQL; SQLite's single writer) until the unit of work ends.
func (tx *Tx) LockIntent(ctx context.Context, id string) (intent.Intent, error) {
	return tx.scanIntent(ctx, "store.LockIntent", `SELECT body FROM transaction_intents WHERE id = ?`+tx.rowLock(), id)
}

// UpdateIntent implements intent.Store: one UPDATE guarded by the stored
// version. The frozen columns (actor, purpose, business reference, expiry,
// creation) are written once, by InsertIntent.
func (tx *Tx) UpdateIntent(ctx context.Context, it intent.Intent, prevVersion int64) error {
	const op = "store.UpdateIntent"
	if it.Version != prevVersion+1 {
		return fault.E(op, fault.Conflict, "The intent's version must advance by one.").
			With("version", it.Version).With("previousVersion", prevVersion)
	}
	body, err := json.Marshal(newIntentBody(it))
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE transaction_intents SET state = ?, network_state = ?, version = ?, signature = ?,
		updated_at = ?, body = ? WHERE id = ? AND version = ?`,
		string(it.State), string(it.NetworkState), it.Version, nullString(it.Signature), it.UpdatedAt.UTC(), string(body),
		it.ID, prevVersion)
	if err != nil {
		return errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return errf(op, err)
	}
	if n != 1 {
		return fault.E(op, fault.Conflict, "The transaction intent changed meanwhile.").With("intentId", it.ID)
	}
	return nil
}

// BindSignature implements intent.Store. The signature is the primary key
// of intent_signatures: binding the same pair again inserts nothing and
// succeeds; a signature another intent holds is CONFLICT.
func (tx *Tx) BindSignature(ctx context.Context, signature, intentID string) error {
	const op = "store.BindSignature"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO intent_signatures (signature, intent_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (signature) DO NOTHING`, signature, intentID, tx.now)
	ok, err := inserted(op, res, err)
	if err != nil || ok {
		return err
	}
	var holder string
	if err := tx.idb.NewRaw(`SELECT intent_id FROM intent_signatures WHERE signature = ?`, signature).Scan(ctx, &holder); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			// The conflicting row is gone again: treat it as a lost race.
			return fault.E(op, fault.Conflict, "The signature was bound meanwhile; retry.")
		}
		return errf(op, err)
	}
	if holder != intentID {
		return fault.E(op, fault.Conflict, "The signature belongs to another transaction intent.")
	}
	return nil
}

// SignatureIntent implements intent.Store.
func (tx *Tx) SignatureIntent(ctx context.Context, signature string) (string, error) {
	var id string
	if err := tx.idb.NewRaw(`SELECT intent_id FROM intent_signatures WHERE signature = ?`, signature).Scan(ctx, &id); err != nil {
		return "", notFound("store.SignatureIntent", err)
	}
	return id, nil
}

// paymentRequestBody is the stored JSON form of an intent.PaymentRequest.
type paymentRequestBody struct {
	ID           string                 `json:"id"`
	IntentID     string                 `json:"intentId"`
	TenantID     string                 `json:"tenantId"`
	WorkspaceID  string                 `json:"workspaceId"`
	UserID       string                 `json:"userId"`
	Environment  string                 `json:"environment"`
	URI          string                 `json:"uri"`
	Recipient    string                 `json:"recipient"`
	Mint         string                 `json:"mint"`
	Reference    string                 `json:"reference"`
	Memo         string                 `json:"memo"`
	AmountAtomic uint64                 `json:"amountAtomic"`
	Amount       string                 `json:"amount"`
	NetAtomic    uint64                 `json:"netAtomic"`
	FeeAtomic    uint64                 `json:"feeAtomic"`
	Decimals     uint8                  `json:"decimals"`
	Label        string                 `json:"label"`
	Message      string                 `json:"message"`
	Network      string                 `json:"network"`
	ExpiresAt    time.Time              `json:"expiresAt"`
	CreatedAt    time.Time              `json:"createdAt"`
	Requirements []paymentRequirementJS `json:"requirements"`
}

// paymentRequirementJS is the stored form of an intent.Requirement.
type paymentRequirementJS struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

func newPaymentRequestBody(pr intent.PaymentRequest) paymentRequestBody {
	b := paymentRequestBody{ID: pr.ID, IntentID: pr.IntentID, TenantID: pr.Actor.TenantID, WorkspaceID: pr.Actor.WorkspaceID,
		UserID: pr.Actor.UserID, Environment: string(pr.Actor.Environment), URI: pr.URI, Recipient: pr.Recipient.String(),
		Mint: pr.Mint.String(), Reference: pr.Reference.String(), Memo: pr.Memo, AmountAtomic: pr.AmountAtomic, Amount: pr.Amount,
		NetAtomic: pr.NetAtomic, FeeAtomic: pr.FeeAtomic, Decimals: pr.Decimals, Label: pr.Label, Message: pr.Message,
		Network: pr.Network, ExpiresAt: pr.ExpiresAt.UTC(), CreatedAt: pr.CreatedAt.UTC()}
	if pr.Requirements != nil {
		b.Requirements = make([]paymentRequirementJS, len(pr.Requirements))
		for i, r := range pr.Requirements {
			b.Requirements[i] = paymentRequirementJS{Field: r.Field, Value: r.Value}
		}
	}
	return b
}

func (b paymentRequestBody) paymentRequest() (intent.PaymentRequest, error) {
	pr := intent.PaymentRequest{ID: b.ID, IntentID: b.IntentID,
		Actor: intent.Actor{TenantID: b.TenantID, WorkspaceID: b.WorkspaceID, UserID: b.UserID,
			Environment: access.Environment(b.Environment)},
		URI: b.URI, Memo: b.Memo, AmountAtomic: b.AmountAtomic, Amount: b.Amount, NetAtomic: b.NetAtomic, FeeAtomic: b.FeeAtomic,
		Decimals: b.Decimals, Label: b.Label, Message: b.Message, Network: b.Network, ExpiresAt: b.ExpiresAt.UTC(),
		CreatedAt: b.CreatedAt.UTC()}
	for _, a := range []struct {
		name string
		text string
		dst  *chain.Address
	}{{"recipient", b.Recipient, &pr.Recipient}, {"mint", b.Mint, &pr.Mint}, {"reference", b.Reference, &pr.Reference}} {
		k, err := token2022.ParsePublicKey(a.text)
		if err != nil {
			return intent.PaymentRequest{}, fmt.Errorf("store: payment request %s: %s: %w", b.ID, a.name, err)
		}
		*a.dst = k
	}
	if b.Requirements != nil {
		pr.Requirements = make([]intent.Requirement, len(b.Requirements))
		for i, r := range b.Requirements {
			pr.Requirements[i] = intent.Requirement{Field: r.Field, Value: r.Value}
		}
	}
	return pr, nil
}

// InsertPaymentRequest implements intent.Store: CONFLICT when the id is
// taken or the intent already has a request.
func (tx *Tx) InsertPaymentRequest(ctx context.Context, pr intent.PaymentRequest) error {
	const op = "store.InsertPaymentRequest"
	body, err := json.Marshal(newPaymentRequestBody(pr))
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO chain_payment_requests (id, intent_id, body, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, pr.ID, pr.IntentID, string(body), pr.CreatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The transaction intent already has a payment request.").With("intentId", pr.IntentID)
	}
	return nil
}

func (tx *Tx) scanPaymentRequest(ctx context.Context, op, q string, args ...any) (intent.PaymentRequest, error) {
	var body string
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &body); err != nil {
		return intent.PaymentRequest{}, notFound(op, err)
	}
	var b paymentRequestBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return intent.PaymentRequest{}, errf(op, fmt.Errorf("store: payment request body: %w", err))
	}
	pr, err := b.paymentRequest()
	if err != nil {
		return intent.PaymentRequest{}, errf(op, err)
	}
	return pr, nil
}

// PaymentRequest implements intent.Store.
func (tx *Tx) PaymentRequest(ctx context.Context, id string) (intent.PaymentRequest, error) {
	return tx.scanPaymentRequest(ctx, "store.PaymentRequest", `SELECT body FROM chain_payment_requests WHERE id = ?`, id)
}

// PaymentRequestByIntent implements intent.Store.
func (tx *Tx) PaymentRequestByIntent(ctx context.Context, intentID string) (intent.PaymentRequest, error) {
	return tx.scanPaymentRequest(ctx, "store.PaymentRequestByIntent",
		`SELECT body FROM chain_payment_requests WHERE intent_id = ?`, intentID)
}

// reconcilableStates is the SQL list of the pending business states
// (State.Pending), taken from the domain. Migration 0014's partial index
// covers the same list.
var reconcilableStates = func() string {
	var q []string
	for _, s := range intent.States() {
		if s.Pending() {
			q = append(q, "'"+string(s)+"'")
		}
	}
	return strings.Join(q, ", ")
}()

// IntentsToReconcile implements intent.Store: up to limit intents in a
// pending state, least recently updated first (ties by id). A limit below
// one lists nothing.
func (tx *Tx) IntentsToReconcile(ctx context.Context, limit int) ([]intent.Intent, error) {
	const op = "store.IntentsToReconcile"
	if limit < 1 {
		return nil, nil
	}
	var bodies []string
	if err := tx.idb.NewRaw(`SELECT body FROM transaction_intents WHERE state IN (`+reconcilableStates+`)
		ORDER BY updated_at, id LIMIT ?`, limit).Scan(ctx, &bodies); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]intent.Intent, 0, len(bodies))
	for _, body := range bodies {
		it, err := decodeIntent(op, body)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// reconciliationBody is the stored JSON form of an intent.Reconciliation
// (the body column of intent_reconciliations).
type reconciliationBody struct {
	ID          string                  `json:"id"`
	IntentID    string                  `json:"intentId"`
	TenantID    string                  `json:"tenantId"`
	WorkspaceID string                  `json:"workspaceId"`
	UserID      string                  `json:"userId"`
	Environment string                  `json:"environment"`
	Outcome     string                  `json:"outcome"`
	Reason      string                  `json:"reason"`
	Checks      []reconciliationCheckJS `json:"checks"`
	Signature   string                  `json:"signature"`
	Slot        uint64                  `json:"slot"`
	BlockTime   time.Time               `json:"blockTime"`
	ObservedAt  time.Time               `json:"observedAt"`
	CreatedAt   time.Time               `json:"createdAt"`
}

// reconciliationCheckJS is the stored form of an intent.Check.
type reconciliationCheckJS struct {
	Name     string `json:"check"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Passed   bool   `json:"passed"`
}

// InsertReconciliation implements intent.Store: CONFLICT when the intent
// already has a record (intent_id is unique) or the id is taken.
func (tx *Tx) InsertReconciliation(ctx context.Context, r intent.Reconciliation) error {
	const op = "store.InsertReconciliation"
	b := reconciliationBody{ID: r.ID, IntentID: r.IntentID, TenantID: r.Actor.TenantID, WorkspaceID: r.Actor.WorkspaceID,
		UserID: r.Actor.UserID, Environment: string(r.Actor.Environment), Outcome: string(r.Outcome), Reason: r.Reason,
		Checks: make([]reconciliationCheckJS, len(r.Checks)), Signature: r.Signature, Slot: r.Slot, BlockTime: r.BlockTime.UTC(),
		ObservedAt: r.ObservedAt.UTC(), CreatedAt: r.CreatedAt.UTC()}
	for i, c := range r.Checks {
		b.Checks[i] = reconciliationCheckJS{Name: c.Name, Expected: c.Expected, Actual: c.Actual, Passed: c.Passed}
	}
	body, err := json.Marshal(b)
	if err != nil {
		return errf(op, err)
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO intent_reconciliations (id, intent_id, tenant_id, workspace_id, environment,
		outcome, created_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.ID, r.IntentID, r.Actor.TenantID, r.Actor.WorkspaceID, string(r.Actor.Environment), string(r.Outcome), r.CreatedAt.UTC(),
		string(body))
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The transaction intent is already reconciled.").With("intentId", r.IntentID)
	}
	return nil
}

// Reconciliation implements intent.Store.
func (tx *Tx) Reconciliation(ctx context.Context, intentID string) (intent.Reconciliation, error) {
	const op = "store.Reconciliation"
	var body string
	if err := tx.idb.NewRaw(`SELECT body FROM intent_reconciliations WHERE intent_id = ?`, intentID).Scan(ctx, &body); err != nil {
		return intent.Reconciliation{}, notFound(op, err)
	}
	var b reconciliationBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return intent.Reconciliation{}, errf(op, fmt.Errorf("store: reconciliation body: %w", err))
	}
	r := intent.Reconciliation{ID: b.ID, IntentID: b.IntentID,
		Actor:   intent.Actor{TenantID: b.TenantID, WorkspaceID: b.WorkspaceID, UserID: b.UserID, Environment: access.Environment(b.Environment)},
		Outcome: intent.ReconciliationOutcome(b.Outcome), Reason: b.Reason, Checks: make([]intent.Check, len(b.Checks)),
		Signature: b.Signature, Slot: b.Slot, BlockTime: b.BlockTime.UTC(), ObservedAt: b.ObservedAt.UTC(), CreatedAt: b.CreatedAt.UTC()}
	for i, c := range b.Checks {
		r.Checks[i] = intent.Check{Name: c.Name, Expected: c.Expected, Actual: c.Actual, Passed: c.Passed}
	}
	return r, nil
}

// LedgerMovementsByReference returns every movement, with its postings,
// whose reference is reference in any workspace and environment of
// tenantID, in id order. It is the read behind intent settlement readers
// (a settlement reference names one intent, so more than one movement is a
// second settlement) and uses index ledger_movements_reference (0017).
func (tx *Tx) LedgerMovementsByReference(ctx context.Context, tenantID, reference string) ([]ledger.Posted, error) {
	const op = "store.LedgerMovementsByReference"
	var rows []ledgerMovementRow
	if err := tx.idb.NewRaw(`SELECT `+ledgerMovementColumns+` FROM ledger_movements WHERE tenant_id = ? AND reference = ?
		ORDER BY id`, tenantID, reference).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	ms, err := tx.ledgerWithPostings(ctx, rows)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return ms, nil
}
