package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
)

// ToolAuthorizer authorizes AI tool calls as direct calls of the routes
// they stand for (tool.Authorizer): it looks the tool's route up in the
// route table by operation id and has the gateway evaluate that route's
// declared access policy for the caller (transport.Gateway.Authorize).
// Its zero value refuses every call until Bind.
type ToolAuthorizer struct {
	bound atomic.Pointer[toolRoutes]
}

type toolRoutes struct {
	gw     *transport.Gateway[Tx]
	routes map[string]Route
}

var _ tool.Authorizer = (*ToolAuthorizer)(nil)

// Bind gives the authorizer the gateway and the route table. It refuses a
// catalog whose tools name a route the table does not hold, or declare
// permissions or a scope other than their route's, so a declaration never
// drifts from the policy enforced.
func (a *ToolAuthorizer) Bind(gw *transport.Gateway[Tx], routes []Route, c *tool.Catalog) error {
	b := &toolRoutes{gw: gw, routes: map[string]Route{}}
	for _, rt := range routes {
		b.routes[rt.OperationID] = rt
	}
	for _, d := range c.Declarations() {
		rt, ok := b.routes[d.Route]
		if !ok {
			return fmt.Errorf("api: tool %s stands for route %s, which the table does not hold", d.ID, d.Route)
		}
		if !slices.Equal(d.RequiredPermissions, []access.Permission{rt.Permission}) || d.Scope != rt.Scope {
			return fmt.Errorf("api: tool %s declares %v and scope %q, but route %s needs %s and scope %q",
				d.ID, d.RequiredPermissions, d.Scope, d.Route, rt.Permission, rt.Scope)
		}
	}
	a.bound.Store(b)
	return nil
}

// Authorize implements tool.Authorizer.
func (a *ToolAuthorizer) Authorize(ctx context.Context, p *access.Principal, d tool.Direct) (*access.Authority, error) {
	const op = "api.ToolAuthorizer"
	b := a.bound.Load()
	if b == nil {
		return nil, fault.Wrap(op, errors.New("the tool authorizer is not bound to the route table"))
	}
	rt, ok := b.routes[d.Route]
	if !ok {
		return nil, fault.Wrap(op, fmt.Errorf("no route %s", d.Route))
	}
	return b.gw.Authorize(ctx, rt, p, d.Path, d.Body)
}

// AIToolView is a tool a model may propose to call during an AI
// operation.
type AIToolView struct {
	// ID is the tool's id, domain.action.
	ID string `json:"id" example:"project.create_draft" enum:"project.read,project.create_draft,generation.start"`
	// Object is always "ai_tool".
	Object string `json:"object" example:"ai_tool"`
	// Name is the function name a model calls the tool by: the id with underscores.
	Name string `json:"name" example:"project_create_draft"`
	// Domain is the domain that owns the action.
	Domain string `json:"domain" example:"project" enum:"project,generation"`
	// Description says what the tool does.
	Description string `json:"description" example:"Proposes a new project owned by the user, in DRAFT."`
	// RequiredPermissions are the permissions of the tool's direct route, which a call is authorized as.
	RequiredPermissions []string `json:"requiredPermissions" example:"[\"project.update\"]"`
	// Scope is the API key scope of the tool's direct route.
	Scope string `json:"scope" example:"projects:write"`
	// Route is the operation id of the direct route the tool stands for: a call is authorized exactly as
	// the caller's call of that route, and refused with its error.
	Route string `json:"route" example:"createProject" enum:"getProject,createProject,generateMusic"`
	// Mutating tools change state: a call makes a draft artifact and does nothing else.
	Mutating bool `json:"mutating" example:"true"`
	// RequiresConfirmation tools apply only when their caller confirms the draft.
	RequiresConfirmation bool `json:"requiresConfirmation" example:"true"`
	// Parameters is the JSON Schema (2020-12) of the arguments object; extra fields are refused.
	Parameters map[string]any `json:"parameters"`
}

// AIToolList lists the tools of the catalog.
type AIToolList struct {
	// Items are the tools, in catalog order.
	Items []AIToolView `json:"items"`
}

// AIArtifactActor is who made or decided an artifact.
type AIArtifactActor struct {
	// Credential is how the principal authenticated.
	Credential string `json:"credential" example:"session" enum:"api_key,session,access_token"`
	// UserID is the user (for an API key, its creator).
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// KeyID is the API key; null for a session or access token.
	KeyID *string `json:"keyId" example:"key_01jd0000000000000000000000"`
}

// AIArtifactResult names what applying an artifact made.
type AIArtifactResult struct {
	// Type is the kind of record made.
	Type string `json:"type" example:"project" enum:"project,generation_operation"`
	// ID is its id: read it at GET /api/v1/projects/{id} or GET /api/v1/operations/{operationId}.
	ID string `json:"id" example:"prj_01jd0000000000000000000000"`
}

// AIArtifactView is an AI artifact: what a model's call of a mutating tool
// proposed for its caller, and the caller's decision.
type AIArtifactView struct {
	// ID is the artifact's id.
	ID string `json:"id" example:"aiart_01jd0000000000000000000000"`
	// Object is always "ai_artifact".
	Object string `json:"object" example:"ai_artifact"`
	// Tool is the tool the model called.
	Tool string `json:"tool" example:"project.create_draft" enum:"project.create_draft,generation.start"`
	// Status is draft (proposed; nothing done), approved (confirmed, being applied in the same unit of work),
	// applied (done by the owning domain) or rejected (declined).
	Status string `json:"status" example:"draft" enum:"draft,approved,applied,rejected"`
	// Environment is the environment (test or live) the artifact belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// WorkspaceID is the artifact's workspace.
	WorkspaceID string `json:"workspaceId" example:"wks_01jd0000000000000000000000"`
	// OperationID is the AI operation whose model proposed the call (provenance).
	OperationID string `json:"operationId" example:"aiop_01jd0000000000000000000000"`
	// ToolCallID is the model's id of the call.
	ToolCallID string `json:"toolCallId" example:"call_01"`
	// Arguments are the proposed arguments, as validated against the tool's schema: what confirming applies.
	Arguments map[string]any `json:"arguments"`
	// CreatedBy is the principal whose request made the draft.
	CreatedBy AIArtifactActor `json:"createdBy"`
	// DecidedBy is who confirmed or rejected it; null while a draft.
	DecidedBy *AIArtifactActor `json:"decidedBy"`
	// DecidedAt is when; null while a draft.
	DecidedAt *time.Time `json:"decidedAt"`
	// Result is what applying made; null unless applied.
	Result *AIArtifactResult `json:"result"`
	// Version counts the artifact's writes, from 1.
	Version int64 `json:"version" example:"1"`
	// CreatedAt is when the draft was made.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the artifact last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

func artifactActor(a tool.Actor) AIArtifactActor {
	v := AIArtifactActor{Credential: string(a.Kind), UserID: a.UserID}
	if a.KeyID != "" {
		v.KeyID = new(a.KeyID)
	}
	return v
}

func artifactView(a tool.Artifact) AIArtifactView {
	v := AIArtifactView{ID: a.ID, Object: "ai_artifact", Tool: a.Tool, Status: string(a.Status), Environment: string(a.Scope.Environment),
		WorkspaceID: a.Scope.WorkspaceID, OperationID: a.OperationID, ToolCallID: a.ToolCallID, Arguments: map[string]any{},
		CreatedBy: artifactActor(a.CreatedBy), DecidedAt: a.DecidedAt, Version: a.Version, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	_ = json.Unmarshal(a.Arguments, &v.Arguments) // stored as validated JSON objects
	if a.DecidedBy.UserID != "" {
		v.DecidedBy = new(artifactActor(a.DecidedBy))
	}
	if a.Result.ID != "" {
		v.Result = &AIArtifactResult{Type: a.Result.Type, ID: a.Result.ID}
	}
	return v
}

func toolView(d tool.Declaration) AIToolView {
	v := AIToolView{ID: d.ID, Object: "ai_tool", Name: d.Name, Domain: d.Domain, Description: d.Description, Scope: d.Scope,
		Route: d.Route, Mutating: d.Mutating, RequiresConfirmation: d.RequiresConfirmation, Parameters: map[string]any{}}
	for _, p := range d.RequiredPermissions {
		v.RequiredPermissions = append(v.RequiredPermissions, string(p))
	}
	_ = json.Unmarshal(d.Parameters, &v.Parameters) // the catalog compiled it
	return v
}

func exampleArtifact() AIArtifactView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return AIArtifactView{ID: "aiart_01jd0000000000000000000000", Object: "ai_artifact", Tool: tool.ProjectCreateDraft, Status: "applied",
		Environment: "test", WorkspaceID: "wks_01jd0000000000000000000000", OperationID: "aiop_01jd0000000000000000000000",
		ToolCallID: "call_01", Arguments: map[string]any{"title": "Night Drive video", "type": "music_video"},
		CreatedBy: AIArtifactActor{Credential: "session", UserID: "usr_01jd0000000000000000000000"},
		DecidedBy: &AIArtifactActor{Credential: "session", UserID: "usr_01jd0000000000000000000000"}, DecidedAt: &t,
		Result: &AIArtifactResult{Type: "project", ID: "prj_01jd0000000000000000000000"}, Version: 3, CreatedAt: t, UpdatedAt: t}
}

// aiToolRoutes are the AI tool catalog and the artifact routes. Every
// member of a workspace (and every key of it) may call them; what
// confirming applies is authorized as the tool's direct route, for the
// confirming caller, at that moment.
func aiToolRoutes(svc *tool.Runner, wake func()) []Route {
	if svc == nil {
		return nil
	}
	if wake == nil {
		wake = func() {}
	}
	member := func(r Route) Route {
		r.Tag, r.Auth, r.AnyMember, r.Private, r.Maturity = transport.TagAI, transport.AuthSessionOrKey, true, true, transport.Preview
		return r
	}
	artifactErrors := []string{string(fault.NotFound), string(fault.AccessDenied)}
	decideErrors := append(slices.Clone(artifactErrors), string(fault.InvalidState))
	applyErrors := append(slices.Clone(decideErrors), string(fault.InvalidInput), string(fault.FeatureDisabled), string(fault.InsufficientCredits),
		string(fault.ProviderUnavailable))
	ex := exampleArtifact()
	return []Route{
		member(Route{Method: http.MethodGet, Pattern: "/api/v1/ai/tools", OperationID: "listAiTools", Idempotency: transport.IdempotencyNone,
			Summary: "List the AI tools",
			Description: "The platform actions a model may propose during an AI operation, each with the permissions and API key scope of " +
				"the direct route it stands for, whether it mutates and needs confirmation, and the JSON Schema of its arguments. A " +
				"model's call is validated against the schema (extra fields refused), then authorized as the caller's own call of that " +
				"route, through the same access evaluator and route policy, with the caller's authority at that moment, and refused with " +
				"exactly that route's error. A read tool runs at once; a mutating tool only makes a draft artifact, which nothing applies " +
				"but its caller's confirmation (POST /api/v1/ai/artifacts/{id}/confirm).",
			Response: AIToolList{Items: []AIToolView{toolView(svc.Catalog().Declarations()[0])}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				out := AIToolList{Items: []AIToolView{}}
				for _, d := range svc.Catalog().Declarations() {
					out.Items = append(out.Items, toolView(d))
				}
				return out, nil
			}}),
		member(Route{Method: http.MethodGet, Pattern: "/api/v1/ai/artifacts/{id}", OperationID: "getAiArtifact", Idempotency: transport.IdempotencyNone,
			Summary: "Get an AI artifact",
			Description: "A draft a model's call of a mutating tool made for the caller: the tool, the proposed arguments, the AI operation " +
				"and call it came from, and its status (draft, approved, applied, rejected) with what applying made. Only the user whose " +
				"request made it reads it (403 ACCESS_DENIED, details.reason artifact_of_another_user, for another user of the " +
				"workspace); one of another workspace or environment is 404.",
			Response: ex, Errors: artifactErrors,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				a, err := svc.Get(ctx, c.Tx, c.Principal, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return artifactView(a), nil
			}}),
		member(Route{Method: http.MethodPost, Pattern: "/api/v1/ai/artifacts/{id}/confirm", OperationID: "confirmAiArtifact",
			Idempotency: transport.IdempotencyRequired, OwnUnitOfWork: true,
			Summary: "Confirm and apply an AI artifact",
			Description: "The caller's explicit confirmation of a draft: it is approved and applied at once, by the owning domain's service " +
				"(a project created as POST /api/v1/projects creates it; a generation accepted as POST /api/v1/music/generate accepts it, " +
				"credits reserved), in one transaction with the artifact's moves, their outbox events (ai_artifact.approved, " +
				"ai_artifact.applied) and audit records, and the idempotency record. The caller's authority is checked again now, as its " +
				"own call of the tool's direct route with the proposed arguments: a role, scope, feature or entitlement taken away since " +
				"the draft refuses the confirmation with that route's error, and the draft stays as it was. Only the user whose request " +
				"made the draft confirms it (403 ACCESS_DENIED, details.reason artifact_of_another_user; nothing changes). An artifact no " +
				"longer a draft is 409 INVALID_STATE_TRANSITION; of concurrent confirmations one applies. The same Idempotency-Key " +
				"replays the first answer.",
			Response: ex, Errors: applyErrors,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				pd, err := svc.Prepare(ctx, c.Tx, c.Principal, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				defer pd.Done()
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					a, err := svc.Apply(ctx, tx, c.Principal, pd, c.RequestID)
					if err != nil {
						return nil, err
					}
					tx.AfterCommit(wake)
					return artifactView(a), nil
				})
			}}),
		member(Route{Method: http.MethodPost, Pattern: "/api/v1/ai/artifacts/{id}/reject", OperationID: "rejectAiArtifact",
			Idempotency: transport.IdempotencyOptional,
			Summary:     "Reject an AI artifact",
			Description: "Declines a draft: it becomes rejected and is never applied (outbox event ai_artifact.rejected, audit record). Only " +
				"the user whose request made it rejects it (403 ACCESS_DENIED, details.reason artifact_of_another_user); an artifact no " +
				"longer a draft is 409 INVALID_STATE_TRANSITION.",
			Response: func() AIArtifactView {
				v := exampleArtifact()
				v.Status, v.Result = "rejected", nil
				return v
			}(), Errors: decideErrors,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				a, err := svc.Reject(ctx, c.Tx, c.Principal, c.PathValue("id"), c.RequestID)
				if err != nil {
					return nil, err
				}
				return artifactView(a), nil
			}}),
	}
}
