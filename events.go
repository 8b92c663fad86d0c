package platform

import (
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain/intent"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/transport/openapi"
)

// EventCatalogue returns every outbox event type the platform writes, with
// its payload's schema version and the aggregate its aggregateId names,
// built on each call from the emitting domains' own constants where they
// export them. The OpenAPI document lists it (info.description, Events;
// x-event-catalogue; the enum of the outbox event's type), and two tests
// keep it whole: platformtest checks every event a test system wrote
// against it (type, schema version, aggregate id prefix), and
// TestEventCatalogueNamesEveryEmitter fails when an OutboxInsert call
// appears outside the emitters listed there.
func EventCatalogue() []openapi.EventType {
	row := func(typ, aggregate, prefix, when string) openapi.EventType {
		return openapi.EventType{Type: typ, SchemaVersion: 1, Aggregate: aggregate, AggregateIDPrefix: prefix, Description: when}
	}
	const (
		key   = "API key"
		op    = "generation operation"
		snd   = "sound operation"
		sub   = "workspace subscription"
		mov   = "ledger movement"
		txi   = "transaction intent"
		keyID = "key_"
	)
	out := []openapi.EventType{
		// apikey.Service.emit: "api_key." and the past tense of the key's
		// state machine event (apikey.Moves), or created.
		row("api_key.created", key, keyID, "A key was created (by a developer, or by the host's operator for the internal scope)."),
		row("api_key.updated", key, keyID, "A key's name, scopes, metadata or limits changed."),
		row("api_key.rotated", key, keyID, "A key's secret was rotated; the old secret works until the overlap ends."),
		row("api_key.revoked", key, keyID, "A key was revoked and no longer authenticates."),
		row("api_key.deleted", key, keyID, "A key was deleted."),
		row(genop.EventCompleted, op, genop.IDPrefix, "A generation operation completed; its outputs are assets and its credits are settled."),
		row(genop.EventFailed, op, genop.IDPrefix, "A generation operation failed; payload.failureCode says why and its credits are released."),
		row(genop.EventCancelled, op, genop.IDPrefix, "A generation operation was cancelled by its owner."),
		row(genop.EventExpired, op, genop.IDPrefix, "A generation operation passed its deadline."),
		row(genop.EventCostDrift, op, genop.IDPrefix, "A provider's reported cost of an attempt differs from the expected cost by more than the configured drift."),
		row(sound.EventCompleted, snd, sound.IDPrefix, "A sound operation completed."),
		row(ledger.EventMovementPosted, mov, "mov_", "A ledger movement was posted (credits, financial, rewards or provider cost)."),
		row(billing.EventSubscriptionActivated, sub, "sub_", "A checkout's subscription became active."),
		row(billing.EventSubscriptionRenewed, sub, "sub_", "A subscription started its next period."),
		row(billing.EventSubscriptionChanged, sub, "sub_", "A subscription changed state (cancel scheduled, past due, ended)."),
	}
	// intent.Service.changed: one type per state an intent is written in.
	for _, s := range intent.States() {
		out = append(out, row(intent.EventType(s), txi, "txi_", "A transaction intent was written in state "+string(s)+"."))
	}
	return out
}
