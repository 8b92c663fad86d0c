package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
)

// LedgerPosting is one line of a movement as the API shows it.
type LedgerPosting struct {
	// Account names the ledger account the line moves, such as workspace:credits or
	// system:grants.
	Account string `json:"account" example:"workspace:credits"`
	// AmountAtomic is the amount in atomic units: a string of an integer.
	AmountAtomic string `json:"amountAtomic" example:"500"`
	// Decimals places the decimal point of AmountAtomic.
	Decimals int `json:"decimals" example:"0"`
	// Direction is debit or credit; a movement's debits equal its credits.
	Direction string `json:"direction" enum:"debit,credit" example:"credit"`
}

// LedgerActor is who caused a movement.
type LedgerActor struct {
	// UserID is the user who caused the movement; empty for the platform itself.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// KeyID is the API key that acted, or "" for a session or the platform.
	KeyID string `json:"keyId" example:""`
}

// LedgerMovement is one durable, balanced movement.
type LedgerMovement struct {
	// ID is the movement's id.
	ID string `json:"id" example:"mov_01jd0000000000000000000000"`
	// Reference is the movement's unique business reference; a reference is posted once.
	Reference string `json:"reference" example:"grant:ws_01jd0000000000000000000000:2026-01"`
	// Ledger is the ledger moved: customer credits, provider cost, financial or rewards.
	Ledger string `json:"ledger" enum:"credits,provider_cost,financial,rewards" example:"credits"`
	// Type is what the movement does: grant, reserve, settle, release or transfer.
	Type string `json:"type" enum:"grant,reserve,settle,release,transfer" example:"grant"`
	// Postings are the movement's balanced lines.
	Postings []LedgerPosting `json:"postings"`
	// Actor is who caused the movement.
	Actor LedgerActor `json:"actor"`
	// CreatedAt is when the movement was posted.
	CreatedAt time.Time `json:"createdAt"`
}

// LedgerPage is one page of movements, newest first.
type LedgerPage struct {
	// Items are the page's movements, newest first.
	Items []LedgerMovement `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOm1vdl8wMWpk"`
}

func ledgerMovementView(m ledger.Posted) LedgerMovement {
	v := LedgerMovement{ID: m.ID, Reference: m.Reference, Ledger: string(m.Ledger), Type: string(m.Type),
		Postings: make([]LedgerPosting, len(m.Postings)), Actor: LedgerActor{UserID: m.Actor.UserID, KeyID: m.Actor.KeyID},
		CreatedAt: m.CreatedAt}
	for i, p := range m.Postings {
		v.Postings[i] = LedgerPosting{Account: p.Account, AmountAtomic: p.Amount.String(), Decimals: m.Decimals, Direction: string(p.Direction)}
	}
	return v
}

func exampleLedgerPage() LedgerPage {
	return LedgerPage{Items: []LedgerMovement{{
		ID: "mov_01jd0000000000000000000000", Reference: "grant:ws_01jd0000000000000000000000:2026-01", Ledger: "credits", Type: "grant",
		Postings: []LedgerPosting{{Account: "system:grants", AmountAtomic: "500", Decimals: 0, Direction: "debit"},
			{Account: "workspace:credits", AmountAtomic: "500", Decimals: 0, Direction: "credit"}},
		Actor:     LedgerActor{UserID: "usr_01jd0000000000000000000000"},
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}}}
}

// holds reports whether the caller holds permission p now: its authority
// grants it (denies count) and, for an API key, one of the key's scopes
// stands for it.
func holds(c *Call, p access.Permission) bool {
	if _, ok := c.Authority.Has(p); !ok {
		return false
	}
	if c.Principal.Kind != access.CredentialAPIKey {
		return true
	}
	for _, s := range c.Principal.Scopes {
		if ps, _ := access.ScopePermissions(s); len(ps) > 0 {
			for _, q := range ps {
				if q == p {
					return true
				}
			}
		}
	}
	return false
}

// ledgerRoutes are the three /api/v1/ledgers reads (spec, Architecture and
// operations: "durable movements"). Each lists movements of the caller's
// tenant, workspace and environment, newest first, with cursor pagination.
//
//   - activity: the credits ledger. A caller sees the movements it caused
//     (actor = its user) unless it holds audit.read (scope audit:read for a
//     key), then the workspace's, grants by the platform included.
//   - financial: the financial and provider-cost ledgers; treasury.read
//     (scope ledger:read), which DEVELOPER never holds.
//   - rewards: the rewards ledger; treasury.read or reward.reconcile
//     (scopes ledger:read or rewards:read). The route table has one
//     Permission per route, so this route admits any member at the gateway
//     and checks the two permissions in the handler, with the same rules
//     (denies, key scopes) the evaluator applies; widening the evaluator
//     for one route would touch every route's access path.
func ledgerRoutes(svc *ledger.Service) []Route {
	read := func(r Route) Route {
		r.Method, r.Tag, r.Auth, r.Private, r.Idempotency = http.MethodGet, transport.TagArchitecture, transport.AuthSessionOrKey, true, transport.IdempotencyNone
		r.Query = []transport.Param{{Name: "limit", Description: "Page size, 1 to 100 (default 20).", Example: "20"},
			{Name: "cursor", Description: "The nextCursor of the previous page.", Example: "Y3Vyc29yOm1vdl8wMWpk"}}
		r.Response = exampleLedgerPage()
		return r
	}
	list := func(ctx context.Context, c *Call, p ledger.ListParams) (any, error) {
		limit, err := transport.PageLimit(c)
		if err != nil {
			return nil, err
		}
		before, err := transport.DecodeCursor(c, "mov_")
		if err != nil {
			return nil, err
		}
		p.Scope, p.Before, p.Limit = ledger.ScopeOf(c.Principal), before, limit
		ms, more, err := svc.List(ctx, c.Tx, p)
		if err != nil {
			return nil, err
		}
		page := LedgerPage{Items: make([]LedgerMovement, len(ms)), HasMore: more}
		for i, m := range ms {
			page.Items[i] = ledgerMovementView(m)
		}
		if more {
			page.NextCursor = transport.EncodeCursor(ms[len(ms)-1].ID)
		}
		return page, nil
	}
	return []Route{
		read(Route{Pattern: "/api/v1/ledgers/activity", OperationID: "listLedgerActivity",
			Permission: access.WorkspaceRead, Scope: access.ScopeRead,
			Summary: "List credit activity",
			Description: "Movements of the workspace's platform credits (grants, reservations, settlements, releases), newest first. " +
				"Callers holding audit.read see the whole workspace's; others see the movements they caused. Amounts are strings of atomic integers with explicit decimals.",
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p := ledger.ListParams{Ledgers: []ledger.Kind{ledger.Credits}}
				if !holds(c, access.AuditRead) {
					p.ActorUserID = c.Principal.UserID
				}
				return list(ctx, c, p)
			}}),
		read(Route{Pattern: "/api/v1/ledgers/financial", OperationID: "listLedgerFinancial",
			Permission: access.TreasuryRead, Scope: access.ScopeLedgerRead,
			Summary:     "List financial movements",
			Description: "Movements of the financial and provider-cost ledgers, newest first. Provider cost is a reconciliation signal, never a customer credit balance.",
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return list(ctx, c, ledger.ListParams{Ledgers: []ledger.Kind{ledger.Financial, ledger.ProviderCost}})
			}}),
		read(Route{Pattern: "/api/v1/ledgers/rewards", OperationID: "listLedgerRewards", AnyMember: true,
			Summary: "List reward movements",
			Description: "Movements of the rewards ledger, newest first. Needs treasury.read (API key scope ledger:read) or reward.reconcile " +
				"(scope rewards:read); either one, so the gateway admits members and this route checks the pair.",
			Handle: func(ctx context.Context, c *Call) (any, error) {
				if !holds(c, access.TreasuryRead) && !holds(c, access.RewardReconcile) {
					return nil, fault.E("transport.listLedgerRewards", fault.AccessDenied, "").
						With("permission", string(access.TreasuryRead)+"|"+string(access.RewardReconcile))
				}
				return list(ctx, c, ledger.ListParams{Ledgers: []ledger.Kind{ledger.Rewards}})
			}}),
	}
}
