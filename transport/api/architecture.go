package api

import (
	"context"
	"net/http"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/architecture"
	"github.com/creatormusic/platform/fsm"
)

// architectureRoutes serve the architecture model (spec, Architecture and
// operations; architecture model v2.1): the module's domain packages, the
// authoritative-state matrix and every state machine's transition table,
// read from the rows the domains enforce. The model is the same for every
// caller; any member or key of a workspace reads it.
func architectureRoutes(m *architecture.Model) []Route {
	if m == nil {
		return nil
	}
	ex := architecture.Model{Version: architecture.ModelVersion,
		Contexts: []architecture.Context{{Package: "project", Kind: architecture.KindContext, Summary: "projects and their community submissions"}},
		Facts:    architecture.Facts()[:1],
		Machines: []architecture.Machine{architecture.NewMachine("project.project", "project", "project", "project.Moves",
			[]fsm.Row[string, string]{{From: "DRAFT", Event: "OPEN", To: "OPEN"}})}}
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/architecture", OperationID: "getArchitecture", Tag: transport.TagArchitecture,
			Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Idempotency: transport.IdempotencyNone,
			Summary: "Read the architecture model",
			Description: "The architecture model v2.1: the module's domain packages (bounded contexts and the shared kernel they build " +
				"on), the authoritative-state matrix (for each fact, the system that is its authority: database, chain, a music or AI " +
				"provider, the payment provider or the blob store, and where the platform records it) and every state machine's " +
				"transition table, converted row for row from the table its domain enforces. A pair of state and event with no row " +
				"is refused by the domain with INVALID_STATE_TRANSITION. Any member or key of a workspace reads it; it is the same " +
				"for every caller and environment.",
			Response: ex,
			Handle: func(context.Context, *Call) (any, error) {
				return m, nil
			}},
	}
}
