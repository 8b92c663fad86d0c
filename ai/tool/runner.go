package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/project"
)

// Config configures a Runner.
type Config struct {
	// Authorizer authorizes tool calls as their direct routes. Required.
	Authorizer Authorizer
	// Projects is the project domain's service. Required.
	Projects Projects
	// Generations is the generation domain's service; nil leaves
	// generation.start out of the catalog.
	Generations Generations
	// RunFunc runs the units of work of drafts. Required.
	RunFunc RunFunc
	// ReadFunc returns the read pool, for read tools and the checks
	// before a draft. Required.
	ReadFunc ReadFunc
}

// Runner runs models' tool calls under their callers' authority and keeps
// the artifacts of mutating tools (package doc). It is safe for
// concurrent use.
type Runner struct {
	cfg     Config
	catalog *Catalog
}

// New returns a Runner over the catalog of the tools cfg's services
// serve.
func New(cfg Config) (*Runner, error) {
	if cfg.Authorizer == nil || cfg.Projects == nil || cfg.RunFunc == nil || cfg.ReadFunc == nil {
		return nil, errors.New("tool: Config needs Authorizer, Projects, RunFunc and ReadFunc")
	}
	ids := []string{ProjectRead, ProjectCreateDraft}
	if cfg.Generations != nil {
		ids = append(ids, GenerationStart)
	}
	c, err := NewCatalog(ids...)
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, catalog: c}, nil
}

// Catalog returns the tools the runner runs.
func (r *Runner) Catalog() *Catalog { return r.catalog }

// Outcome is what one tool call came to.
type Outcome struct {
	// Tool is the called tool's id; "" when the name declares none.
	Tool string
	// Content is the result the model sees next, as a JSON object: the
	// tool's result, the draft awaiting confirmation, or the refusal's
	// error (code, message, details). It never carries a secret.
	Content json.RawMessage
	// Refusal is why the call was refused, exactly the error its direct
	// route would answer with; nil when the call ran or made a draft.
	Refusal error
	// Artifact is the draft a mutating tool made; nil otherwise.
	Artifact *Artifact
}

// RunTool runs a model's tool call for p, whose AI operation operationID
// proposed it, and returns the tool turn to send the model (Role tool,
// ToolCallID the call's id, ToolError set for a refusal) and the id of
// the draft artifact when a mutating tool made one ("" otherwise). It is
// Run for the completion path; see Run.
func (r *Runner) RunTool(ctx context.Context, p *access.Principal, operationID string, call ai.ToolCall) (ai.Message, string, error) {
	o, err := r.Run(ctx, p, operationID, call)
	if err != nil {
		return ai.Message{}, "", err
	}
	msg := ai.Message{Role: ai.RoleTool, ToolCallID: call.ID, Content: string(o.Content), ToolError: o.Refusal != nil}
	id := ""
	if o.Artifact != nil {
		id = o.Artifact.ID
	}
	return msg, id, nil
}

// Run validates a model's tool call against its declaration, authorizes
// it as p's direct call of the tool's route (the same evaluator and
// route policy, p's authority as it stands now, and the owning domain's
// own checks), then runs a read tool at once, or stores a mutating
// tool's draft artifact with provenance to operationID, which applies
// only on p's confirmation (Prepare, Apply).
//
// A refused call is not an error: Outcome.Refusal holds the error the
// direct route would answer with (INVALID_INPUT for an undeclared tool or
// arguments the schema refuses, and the route's and the domain's codes),
// and Content tells the model. The error is for failures of the platform
// itself (INTERNAL) and the end of ctx.
func (r *Runner) Run(ctx context.Context, p *access.Principal, operationID string, call ai.ToolCall) (Outcome, error) {
	const op = "tool.Run"
	d, args, err := r.catalog.Validate(call)
	if err != nil {
		return refused(d.ID, err)
	}
	a, err := r.cfg.Authorizer.Authorize(ctx, p, direct(d, args))
	if err != nil {
		return refused(d.ID, err)
	}
	read := r.cfg.ReadFunc()
	switch d.ID {
	case ProjectRead:
		var in projectReadArgs
		if err := json.Unmarshal(args, &in); err != nil {
			return Outcome{}, fault.Wrap(op, err)
		}
		pr, err := r.cfg.Projects.Get(ctx, read, p, a, in.ProjectID)
		if err != nil {
			return refused(d.ID, err)
		}
		return Outcome{Tool: d.ID, Content: mustJSON(map[string]any{"project": projectResult(pr)})}, nil
	case ProjectCreateDraft:
		in, err := createRequest(args, "")
		if err != nil {
			return Outcome{}, fault.Wrap(op, err)
		}
		if err := r.cfg.Projects.CheckCreate(p, a, in); err != nil {
			return refused(d.ID, err)
		}
	case GenerationStart:
		in, err := generationRequest(args)
		if err != nil {
			return Outcome{}, fault.Wrap(op, err)
		}
		if _, err := r.cfg.Generations.Prepare(ctx, read, p, in); err != nil {
			return refused(d.ID, err)
		}
	default:
		return Outcome{}, fault.Wrap(op, fmt.Errorf("tool %s has no runner", d.ID))
	}
	art, err := r.draft(ctx, p, d, operationID, call.ID, args)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Tool: d.ID, Artifact: &art, Content: mustJSON(map[string]any{
		"status": "awaiting_confirmation", "artifactId": art.ID, "tool": d.ID,
		"message": "Nothing was done yet: the user must confirm this proposal before it is applied.",
	})}, nil
}

// draft stores a mutating tool's draft artifact with its outbox event and
// audit record, in one unit of work.
func (r *Runner) draft(ctx context.Context, p *access.Principal, d Declaration, operationID, callID string, args json.RawMessage) (Artifact, error) {
	const op = "tool.draft"
	var art Artifact
	err := r.cfg.RunFunc(ctx, func(st Store) error {
		now := st.Now()
		art = Artifact{ID: st.NewID(IDPrefix), Scope: p.Scope(), Tool: d.ID, OperationID: operationID, ToolCallID: callID,
			Arguments: args, CreatedBy: ActorOf(p), Status: StatusDraft, Version: 1, CreatedAt: now, UpdatedAt: now}
		if err := st.AIArtifactInsert(ctx, art); err != nil {
			return fault.Wrap(op, err)
		}
		if err := emit(ctx, st, art, EventTypeDrafted); err != nil {
			return err
		}
		return account.Audit(ctx, st, p, account.AuditEntry{Action: ActionDrafted, TargetType: TargetArtifact, TargetID: art.ID,
			After: map[string]any{"tool": art.Tool, "status": art.Status, "operationId": art.OperationID}})
	})
	return art, err
}

// refused returns err as the outcome of a refused call, or as the error
// of Run when it is not a refusal (INTERNAL, or the end of the context).
func refused(tool string, err error) (Outcome, error) {
	if fault.CodeOf(err) == fault.Internal || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Outcome{}, err
	}
	code, msg, details := fault.Public(err)
	body := map[string]any{"code": code, "message": msg}
	if len(details) > 0 {
		body["details"] = details
	}
	return Outcome{Tool: tool, Refusal: err, Content: mustJSON(map[string]any{"error": body})}, nil
}

// mustJSON encodes v, made of strings, numbers, booleans, maps and slices.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// projectResult is what a model sees of a project: no owner, no
// workspace, nothing it needs not.
func projectResult(pr project.Project) map[string]any {
	return map[string]any{"id": pr.ID, "title": pr.Title, "type": pr.Type, "description": pr.Description,
		"visibility": pr.Visibility, "status": pr.Status}
}

type projectReadArgs struct {
	ProjectID string `json:"projectId"`
}

type projectDraftArgs struct {
	Title       string `json:"title"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Visibility  string `json:"visibility"`
}

type generationArgs struct {
	Prompt       string `json:"prompt"`
	Instrumental bool   `json:"instrumental"`
	Model        string `json:"model"`
}

func createRequest(args json.RawMessage, requestID string) (project.CreateRequest, error) {
	var in projectDraftArgs
	if err := json.Unmarshal(args, &in); err != nil {
		return project.CreateRequest{}, err
	}
	return project.CreateRequest{Title: in.Title, Type: project.Type(in.Type), Description: in.Description,
		Visibility: project.Visibility(in.Visibility), RequestID: requestID}, nil
}

func generationRequest(args json.RawMessage) (operation.Request, error) {
	var in generationArgs
	if err := json.Unmarshal(args, &in); err != nil {
		return operation.Request{}, err
	}
	return operation.Request{Prompt: in.Prompt, Instrumental: in.Instrumental, Model: in.Model}, nil
}

// direct returns the direct call a tool call of d with args stands for.
// The arguments of the mutating tools are their route's body, field for
// field.
func direct(d Declaration, args json.RawMessage) Direct {
	switch d.ID {
	case ProjectRead:
		var in projectReadArgs
		_ = json.Unmarshal(args, &in) // validated against the schema
		return Direct{Route: d.Route, Path: map[string]string{"id": in.ProjectID}}
	default:
		return Direct{Route: d.Route, Body: args}
	}
}

// emit writes the outbox event typ of a in st's unit of work.
func emit(ctx context.Context, st Store, a Artifact, typ string) error {
	body := map[string]any{"id": a.ID, "tool": a.Tool, "status": a.Status, "operationId": a.OperationID, "toolCallId": a.ToolCallID}
	if a.Result.ID != "" {
		body["result"] = map[string]any{"type": a.Result.Type, "id": a.Result.ID}
	}
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: a.Scope.TenantID, WorkspaceID: a.Scope.WorkspaceID,
		Environment: string(a.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: a.ID,
		AggregateVersion: a.Version, OccurredAt: st.Now(), Payload: mustJSON(body)})
	return fault.Wrap("tool.emit", err)
}
