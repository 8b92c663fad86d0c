package swaptest

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/swap"
)

// storedRecord is a verification or a reconciliation as stored: its id,
// owner and time beside its JSON, as the SQL store keeps them.
type storedRecord struct {
	id        string
	owner     swap.Owner
	body      []byte
	createdAt time.Time
}

// SettleStore implements swap.OperationStore: the handle itself, so the
// records, ledger movements and jobs written through it belong to the
// same unit of work (on the store's own handle, each write commits on
// its own).
func (v *view) SettleStore() swap.SettleStore { return v }

// SwapSignatureIntent implements swap.SettleStore: the intent of the
// operation signature is bound to, whoever owns it; "" when no
// operation is bound to it (or signature is "").
func (v *view) SwapSignatureIntent(_ context.Context, signature string) (intentID string, err error) {
	if signature == "" {
		return "", nil
	}
	err = v.read(func(d *data) error {
		if id := d.sigs[signature]; id != "" {
			intentID = d.ops[id].IntentID
		}
		return nil
	})
	return intentID, err
}

// SwapVerificationInsert implements swap.SettleStore: one verification
// per operation (r.Verification.OperationID); a second, or a taken id, is
// CONFLICT.
func (v *view) SwapVerificationInsert(ctx context.Context, r swap.VerificationRecord) error {
	const op = "swaptest.SwapVerificationInsert"
	body, err := json.Marshal(r.Verification)
	if err != nil {
		return fault.Wrap(op, err)
	}
	opID := r.Verification.OperationID
	return v.write(ctx, func(d *data, _ time.Time) error {
		if err := once(op, "verification", d.verifs, d.verifIDs, opID, r.ID); err != nil {
			return err
		}
		d.verifs[opID] = storedRecord{id: r.ID, owner: r.Owner, body: body, createdAt: r.CreatedAt.UTC()}
		d.verifIDs[r.ID] = true
		return nil
	})
}

// SwapVerification implements swap.SettleStore: NOT_FOUND for another
// owner's.
func (v *view) SwapVerification(_ context.Context, owner swap.Owner, operationID string) (out swap.VerificationRecord, err error) {
	const op = "swaptest.SwapVerification"
	err = v.read(func(d *data) error {
		sr, ok := d.verifs[operationID]
		if !ok || sr.owner != owner {
			return notFound(op, "The swap verification")
		}
		out = swap.VerificationRecord{ID: sr.id, Owner: sr.owner, CreatedAt: sr.createdAt}
		return fault.Wrap(op, json.Unmarshal(sr.body, &out.Verification))
	})
	return out, err
}

// SwapSettlementInsert implements swap.SettleStore: one settlement per
// operation and per signature; a second of either, or a taken id, is
// CONFLICT. A settlement without signature is INVALID_INPUT (the SQL
// stores refuse it too).
func (v *view) SwapSettlementInsert(ctx context.Context, s swap.Settlement) error {
	const op = "swaptest.SwapSettlementInsert"
	if s.Signature == "" {
		return fault.Invalid(op, "signature", "A settlement names the signature of the transaction it settles.")
	}
	s = copySettlement(s)
	return v.write(ctx, func(d *data, _ time.Time) error {
		if err := once(op, "settlement", d.sets, d.setIDs, s.OperationID, s.ID); err != nil {
			return err
		}
		if d.setSigs[s.Signature] != "" {
			return conflict(op, "The transaction is already settled.").With("operationId", s.OperationID)
		}
		d.sets[s.OperationID] = s
		d.setIDs[s.ID] = true
		d.setSigs[s.Signature] = s.OperationID
		return nil
	})
}

// SwapSettlement implements swap.SettleStore: NOT_FOUND for another
// owner's.
func (v *view) SwapSettlement(_ context.Context, owner swap.Owner, operationID string) (out swap.Settlement, err error) {
	err = v.read(func(d *data) error {
		s, ok := d.sets[operationID]
		if !ok || s.Owner != owner {
			return notFound("swaptest.SwapSettlement", "The swap settlement")
		}
		out = copySettlement(s)
		return nil
	})
	return out, err
}

// copySettlement returns a settlement that shares nothing with s, its
// times in UTC.
func copySettlement(s swap.Settlement) swap.Settlement {
	if s.BlockTime != nil {
		t := s.BlockTime.UTC()
		s.BlockTime = &t
	}
	s.ObservedAt, s.CreatedAt = s.ObservedAt.UTC(), s.CreatedAt.UTC()
	return s
}

// SwapReconciliationInsert implements swap.SettleStore: one
// reconciliation per operation (r.Reconciliation.OperationID); a second,
// or a taken id, is CONFLICT.
func (v *view) SwapReconciliationInsert(ctx context.Context, r swap.ReconciliationRecord) error {
	const op = "swaptest.SwapReconciliationInsert"
	body, err := json.Marshal(r.Reconciliation)
	if err != nil {
		return fault.Wrap(op, err)
	}
	opID := r.Reconciliation.OperationID
	return v.write(ctx, func(d *data, _ time.Time) error {
		if err := once(op, "reconciliation", d.recs, d.recIDs, opID, r.ID); err != nil {
			return err
		}
		d.recs[opID] = storedRecord{id: r.ID, owner: r.Owner, body: body, createdAt: r.CreatedAt.UTC()}
		d.recIDs[r.ID] = true
		return nil
	})
}

// SwapReconciliation implements swap.SettleStore: NOT_FOUND for another
// owner's.
func (v *view) SwapReconciliation(_ context.Context, owner swap.Owner, operationID string) (out swap.ReconciliationRecord, err error) {
	const op = "swaptest.SwapReconciliation"
	err = v.read(func(d *data) error {
		sr, ok := d.recs[operationID]
		if !ok || sr.owner != owner {
			return notFound(op, "The swap reconciliation")
		}
		out = swap.ReconciliationRecord{ID: sr.id, Owner: sr.owner, CreatedAt: sr.createdAt}
		return fault.Wrap(op, json.Unmarshal(sr.body, &out.Reconciliation))
	})
	return out, err
}

// once refuses a second record of an operation, and a taken id, with
// CONFLICT.
func once[R any](op, what string, byOperation map[string]R, ids map[string]bool, operationID, id string) error {
	if _, ok := byOperation[operationID]; ok {
		return conflict(op, "The swap operation already has a "+what+".").With("operationId", operationID)
	}
	if ids[id] {
		return conflict(op, "The swap "+what+" already exists.").With("id", id)
	}
	return nil
}
