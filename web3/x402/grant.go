package x402

import (
	"context"
	"encoding/json"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// Consume spends p's grant id on usedBy (what the use is, such as
// "sound_operation:snd_..."), in st's unit of work, so that the use and
// its record commit together: the route that serves the grant's kind
// calls it in its own unit of work. Errors: NOT_FOUND (details.field
// field) for a grant the caller's workspace and environment do not hold,
// INVALID_INPUT (field) for a grant of another kind, CONFLICT (details
// reason grant_consumed) for a grant spent already.
func (s *Service) Consume(ctx context.Context, st Store, p *access.Principal, field, id string, kind Kind, usedBy string) (Grant, error) {
	const op = "x402.Consume"
	scope := scopeOf(p)
	g, err := st.X402Grant(ctx, scope, id)
	if fault.Is(err, fault.NotFound) {
		return Grant{}, fault.E(op, fault.NotFound, "No such payment grant in this workspace and environment.").With("field", field)
	}
	if err != nil {
		return Grant{}, err
	}
	if g.Kind != kind {
		return Grant{}, fault.Invalid(op, field, "The payment grant is for another kind of resource.").With("kind", string(g.Kind))
	}
	spent := fault.E(op, fault.Conflict, "The payment grant was used already.").With("field", field).With("reason", "grant_consumed")
	if g.State != GrantAvailable {
		return Grant{}, spent.With("usedBy", g.UsedBy)
	}
	if err := st.X402GrantConsume(ctx, scope, id, usedBy); err != nil {
		if fault.Is(err, fault.Conflict) {
			return Grant{}, spent
		}
		return Grant{}, err
	}
	now := st.Now()
	g.State, g.UsedBy, g.ConsumedAt = GrantConsumed, usedBy, &now
	payload, _ := json.Marshal(map[string]any{"id": g.ID, "resourceId": g.ResourceID, "kind": g.Kind, "settlementId": g.SettlementID,
		"usedBy": usedBy})
	if _, err := st.OutboxInsert(ctx, outbox.Event{TenantID: scope.TenantID, WorkspaceID: scope.WorkspaceID,
		Environment: string(scope.Environment), Type: EventGrantConsumed, SchemaVersion: 1, AggregateID: g.ID, AggregateVersion: 2,
		OccurredAt: now, Payload: payload}); err != nil {
		return Grant{}, err
	}
	return g, nil
}

// changed records a settlement's event (EventType of its state) in the
// unit of work that writes it, and, when it is claimed, the watch that
// finishes it should its request not: it first runs once the request's
// wait is over.
func (s *Service) changed(ctx context.Context, st Store, set Settlement) error {
	payload, _ := json.Marshal(map[string]any{"id": set.ID, "resourceId": set.ResourceID, "state": set.State,
		"network": set.Network, "amount": set.Amount.String(), "asset": set.Asset, "payer": set.Payer, "signature": set.Signature,
		"errorReason": set.ErrorReason})
	if _, err := st.OutboxInsert(ctx, outbox.Event{TenantID: set.Scope.TenantID, WorkspaceID: set.Scope.WorkspaceID,
		Environment: string(set.Scope.Environment), Type: EventType(set.State), SchemaVersion: 1, AggregateID: set.ID,
		AggregateVersion: set.Version, OccurredAt: st.Now(), Payload: payload}); err != nil {
		return err
	}
	if set.State == StateSubmitting && set.Version == 1 {
		if err := enqueueWatch(ctx, st, set.ID, "start", st.Now().Add(s.cfg.SettleTimeout+s.cfg.WatchEvery)); err != nil {
			return err
		}
	}
	if s.cfg.WakeFunc != nil {
		st.AfterCommit(s.cfg.WakeFunc)
	}
	return nil
}
