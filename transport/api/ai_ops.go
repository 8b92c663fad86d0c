package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport"
)

// AIChatMessage is one message of a conversation.
type AIChatMessage struct {
	// Role is the message's author: system (instructions), user, assistant (the model, possibly with tool calls) or tool (the
	// result of one tool call).
	Role string `json:"role" example:"user" enum:"system,user,assistant,tool"`
	// Content is the message's text (required except on an assistant message that carries tool calls).
	Content string `json:"content" example:"Suggest a title for a synth-pop track about city lights."`
	// ToolCalls are the calls an assistant message proposed, as an earlier answer returned them.
	ToolCalls []AIToolCallInput `json:"toolCalls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"toolCallId,omitempty" example:"call_000001"`
	// IsError marks a tool message whose result is an error.
	IsError bool `json:"isError,omitempty" example:"false"`
}

// AIToolCallInput is a tool call of an earlier assistant message.
type AIToolCallInput struct {
	// ID is the call's id, as the answer returned it.
	ID string `json:"id" example:"call_000001"`
	// Name is the tool's name.
	Name string `json:"name" example:"lookup_tempo"`
	// Arguments is the call's arguments object.
	Arguments json.RawMessage `json:"arguments"`
}

// AIToolDeclaration declares a function the model may propose to call;
// its calls are returned to the caller to run.
type AIToolDeclaration struct {
	// Name is 1 to 64 letters, digits, _ and -.
	Name string `json:"name" example:"lookup_tempo"`
	// Description tells the model what the function does.
	Description string `json:"description,omitempty" example:"Looks up a song's tempo in beats per minute."`
	// Parameters is the JSON Schema object of the arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// AIChatRequest is the body of POST /api/v1/ai/chat.
type AIChatRequest struct {
	// Messages is the conversation, oldest first: 1 to 100 messages, each at most 32 KiB, 128 KiB of text together.
	Messages []AIChatMessage `json:"messages"`
	// Tools are up to 32 functions the model may propose to call; their calls are returned in the answer.
	Tools []AIToolDeclaration `json:"tools,omitempty"`
	// ToolChoice is auto (the default with tools), none, required or a declared tool's name.
	ToolChoice string `json:"toolChoice,omitempty" example:"auto"`
	// MaxOutputTokens caps the answer, 1 to 8192; absent means 1024. The reservation is priced on it.
	MaxOutputTokens int `json:"maxOutputTokens,omitempty" example:"512"`
	// Temperature is 0 to 2; absent means the provider's default.
	Temperature *float64 `json:"temperature,omitempty" example:"0.7"`
	// Stream asks for the answer as server-sent events (text/event-stream) instead of one JSON answer.
	Stream bool `json:"stream,omitempty" example:"false"`
	// PlatformTools offers the model the platform's tools (GET /api/v1/ai/tools) beside the declared ones; their calls run
	// under the caller's own authority, a mutating one as a draft artifact to confirm.
	PlatformTools bool `json:"platformTools,omitempty" example:"false"`
}

// AIContextBlock is one block of context of a completion: data for the
// model, never instructions, never a credential.
type AIContextBlock struct {
	// SourceType says what the block comes from: 1 to 40 lower-case letters, digits and _ (project, asset, lyrics, brief,
	// note, text).
	SourceType string `json:"sourceType" example:"project"`
	// SourceID names the source record, at most 100 characters.
	SourceID string `json:"sourceId,omitempty" example:"prj_01jd0000000000000000000000"`
	// Priority orders the blocks, 0 to 100, highest first.
	Priority int `json:"priority" example:"50"`
	// Provenance says who wrote the content: user (the caller), platform (a platform record the caller reads) or generated
	// (an earlier model answer).
	Provenance string `json:"provenance" example:"user" enum:"user,platform,generated"`
	// Content is the block's text, at most 32 KiB.
	Content string `json:"content" example:"Working title: Neon Avenue. Mood: nostalgic, upbeat."`
}

// AICompleteRequest is the body of POST /api/v1/ai/complete.
type AICompleteRequest struct {
	// Task is the routed task: complete (default), music_brief, lyrics, prompt_enhance, project_analyze or
	// project_blueprint; its route in the routing policy chooses the model.
	Task string `json:"task,omitempty" example:"complete" enum:"complete,music_brief,lyrics,prompt_enhance,project_analyze,project_blueprint"`
	// Prompt is the request, at most 32 KiB.
	Prompt string `json:"prompt" example:"Write a two-line hook for the track."`
	// Mode is text (default) or json (one JSON object; only models with json_output serve it).
	Mode string `json:"mode,omitempty" example:"text" enum:"text,json"`
	// ProjectID names a project of the caller's workspace the caller may read, recorded on the operation; another is 404.
	ProjectID string `json:"projectId,omitempty" example:"prj_01jd0000000000000000000000"`
	// Context are up to 20 context blocks.
	Context []AIContextBlock `json:"context,omitempty"`
	// MaxOutputTokens caps the answer, 1 to 8192; absent means 1024.
	MaxOutputTokens int `json:"maxOutputTokens,omitempty" example:"256"`
	// Temperature is 0 to 2; absent means the provider's default.
	Temperature *float64 `json:"temperature,omitempty" example:"0.7"`
}

// AIAttemptView is one provider call of an operation.
type AIAttemptView struct {
	// Model is the registry model called.
	Model string `json:"model" example:"gpt-4o-mini"`
	// Provider is its provider.
	Provider string `json:"provider" example:"openai"`
	// Outcome is how the call ended.
	Outcome string `json:"outcome" example:"success" enum:"success,rate_limit,server,timeout,auth,credits,context_window,content_policy,invalid_request,cancelled"`
	// Code is the error code of a failed call; null for the answer.
	Code *string `json:"code" example:"RATE_LIMITED"`
	// LatencyMs is how long the call took, in milliseconds on the platform's clock.
	LatencyMs int64 `json:"latencyMs" example:"840"`
}

// AIRoutingRecordView is how an operation was routed.
type AIRoutingRecordView struct {
	// Policy is the routing policy version that routed it.
	Policy PolicyRefView `json:"policy"`
	// Reason is why the last model called was chosen.
	Reason string `json:"reason" example:"primary" enum:"primary,cheapest,lowest_latency,fallback:rate_limit,fallback:context_window,fallback:content_policy,fallback:outage"`
	// Model is the registry model of the last call (the one that answered, when one did).
	Model string `json:"model" example:"gpt-4o-mini"`
	// Provider is that model's provider.
	Provider string `json:"provider" example:"openai"`
	// UpstreamModel is the model the provider reported as executed; null when none answered.
	UpstreamModel *string `json:"upstreamModel" example:"gpt-4o-mini-2024-07-18"`
	// Attempts are the provider calls, in order.
	Attempts []AIAttemptView `json:"attempts"`
}

// AIUsageView is an operation's usage and credits.
type AIUsageView struct {
	// InputUnits and OutputUnits are the units (tokens) the provider reported; 0 when it reported none.
	InputUnits int64 `json:"inputUnits" example:"42"`
	// OutputUnits are the answer's units, reasoning included.
	OutputUnits int64 `json:"outputUnits" example:"17"`
	// CachedUnits is the part of the input read from the provider's prompt cache.
	CachedUnits int64 `json:"cachedUnits" example:"0"`
	// ReasoningUnits is the part of the output spent reasoning.
	ReasoningUnits int64 `json:"reasoningUnits" example:"0"`
	// Source is what the settlement was computed from: reported (the provider's usage at the executed model's prices),
	// reservation (output came without usage: the reservation was settled) or none (no output: all released); null while
	// running.
	Source *string `json:"source" example:"reported" enum:"reported,reservation,none"`
	// CreditsReserved is the platform credits reserved before the first provider call, an integer string.
	CreditsReserved string `json:"creditsReserved" example:"3"`
	// CreditsSettled is the credits consumed, an integer string; null while running.
	CreditsSettled *string `json:"creditsSettled" example:"1"`
	// CreditsReleased is the credits returned to the workspace, an integer string; null while running.
	CreditsReleased *string `json:"creditsReleased" example:"2"`
	// PricingPolicy is the ai.pricing policy version that priced the credits.
	PricingPolicy PolicyRefView `json:"pricingPolicy"`
	// LatencyMs is the operation's duration from its reservation to its end, in milliseconds; 0 while running.
	LatencyMs int64 `json:"latencyMs" example:"910"`
}

// AIOperationView is an AI operation and its usage record. It never
// holds the prompt, the context or the answer.
type AIOperationView struct {
	// ID is the operation's id.
	ID string `json:"id" example:"aiop_01jd0000000000000000000000"`
	// Object is always "ai_operation".
	Object string `json:"object" example:"ai_operation"`
	// Environment is the environment (test or live) it ran in.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Endpoint is how it was asked: chat or complete (their routes), or task (one completion of a structured task's route).
	Endpoint string `json:"endpoint" example:"chat" enum:"chat,complete,task"`
	// Task is the routed task.
	Task string `json:"task" example:"chat" enum:"chat,complete,music_brief,lyrics,prompt_enhance,project_analyze,project_blueprint"`
	// Mode is the answer's shape: text or json.
	Mode string `json:"mode" example:"text" enum:"text,json"`
	// ProjectID is the project the request named; null when none.
	ProjectID *string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// Stream is true when the answer was streamed as server-sent events.
	Stream bool `json:"stream" example:"false"`
	// Status is running, then completed, failed, cancelled (the caller left) or expired (its host stopped mid-call).
	Status string `json:"status" example:"completed" enum:"running,completed,failed,cancelled,expired"`
	// Finish is how the answer ended: completed, truncated (the output cap), filtered (content policy) or tool_calls; null
	// without an answer.
	Finish *string `json:"finish" example:"completed" enum:"completed,truncated,filtered,tool_calls"`
	// ToolCalls counts the tool calls the answer proposed.
	ToolCalls int `json:"toolCalls" example:"0"`
	// Routing is the routing record.
	Routing AIRoutingRecordView `json:"routing"`
	// Usage is the usage record.
	Usage AIUsageView `json:"usage"`
	// Failure is why a failed or expired operation ended; null otherwise.
	Failure *FailureView `json:"failure"`
	// CreatedAt is when it was asked (and its credits reserved).
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	// EndedAt is when it ended; null while running.
	EndedAt *time.Time `json:"endedAt"`
}

// AIToolResultView is what the platform's tool runner made of a call.
type AIToolResultView struct {
	// Content is the result to send back to the model as a tool message on the next turn.
	Content string `json:"content" example:"Draft project created; it waits for your confirmation."`
	// IsError is true when the call was refused or failed; Content says why.
	IsError bool `json:"isError" example:"false"`
	// ArtifactID is the draft artifact a mutating tool produced, applied only once confirmed; null when none.
	ArtifactID *string `json:"artifactId" example:"art_01jd0000000000000000000000"`
	// ArtifactStatus is that artifact's status; null without one.
	ArtifactStatus *string `json:"artifactStatus" example:"draft" enum:"draft,approved,applied,rejected"`
}

// AIToolCallView is a tool call the model proposed.
type AIToolCallView struct {
	// ID is the call's id; a tool message answering it names it.
	ID string `json:"id" example:"call_000001"`
	// Name is the tool the model named (it may not be declared: check it).
	Name string `json:"name" example:"lookup_tempo"`
	// Arguments is the model's arguments, always JSON: an object as the model sent it, or a JSON string holding text that
	// was not JSON. Untrusted: validate before use.
	Arguments json.RawMessage `json:"arguments"`
	// Result is the platform's tool runner's result for a platform tool; null for a call the caller runs (a tool it
	// declared, or any call when no runner is configured).
	Result *AIToolResultView `json:"result"`
}

// AIAnswerMessage is the model's answer.
type AIAnswerMessage struct {
	// Role is always assistant.
	Role string `json:"role" example:"assistant" enum:"assistant"`
	// Content is the answer's text (a JSON object's text in json mode).
	Content string `json:"content" example:"Neon Avenue"`
	// ToolCalls are the calls the model proposed, in order.
	ToolCalls []AIToolCallView `json:"toolCalls"`
}

// AIAnswer is the answer of POST /api/v1/ai/chat and /api/v1/ai/complete.
type AIAnswer struct {
	// OperationID is the operation; read it again at GET /api/v1/ai/operations/{id}.
	OperationID string `json:"operationId" example:"aiop_01jd0000000000000000000000"`
	// Object is ai_chat_completion or ai_completion.
	Object string `json:"object" example:"ai_chat_completion" enum:"ai_chat_completion,ai_completion"`
	// Message is the answer.
	Message AIAnswerMessage `json:"message"`
	// Finish is how it ended: completed, truncated (cut at the output cap) or tool_calls.
	Finish string `json:"finish" example:"completed" enum:"completed,truncated,tool_calls"`
	// Operation is the operation's record after it ended.
	Operation AIOperationView `json:"operation"`
}

// AIUsageTotalsView sums the usage of every record the list selects.
type AIUsageTotalsView struct {
	// Operations counts them; Completed those a model answered.
	Operations int64 `json:"operations" example:"12"`
	// Completed counts the operations a model answered.
	Completed int64 `json:"completed" example:"11"`
	// InputUnits sums the reported input units.
	InputUnits int64 `json:"inputUnits" example:"5210"`
	// OutputUnits sums the reported output units.
	OutputUnits int64 `json:"outputUnits" example:"1980"`
	// CreditsReserved sums the reservations, an integer string.
	CreditsReserved string `json:"creditsReserved" example:"40"`
	// CreditsSettled sums what was consumed of them, an integer string.
	CreditsSettled string `json:"creditsSettled" example:"14"`
}

// AIUsagePage is a page of the workspace's AI usage records.
type AIUsagePage struct {
	// Items are the usage records (operations), newest first.
	Items []AIOperationView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOmFpb3BfMDFqZA"`
	// Totals sum every record the list selects, all pages.
	Totals AIUsageTotalsView `json:"totals"`
}

// AIStreamStart is the data of a stream's operation event.
type AIStreamStart struct {
	// OperationID is the operation.
	OperationID string `json:"operationId"`
	// Model is the registry model that answers.
	Model string `json:"model"`
	// Provider is its provider.
	Provider string `json:"provider"`
	// RoutingReason is why the model was chosen.
	RoutingReason string `json:"routingReason"`
	// CreditsReserved is the reservation, an integer string.
	CreditsReserved string `json:"creditsReserved"`
}

// AIStreamToolCall is a piece of a streamed tool call.
type AIStreamToolCall struct {
	// Index orders the answer's tool calls, from 0; pieces of one call share it.
	Index int `json:"index"`
	// ID is the call's id, on its first piece.
	ID string `json:"id,omitempty"`
	// Name is the tool's name, on its first piece.
	Name string `json:"name,omitempty"`
	// Arguments is a fragment of the arguments' JSON text, to concatenate.
	Arguments string `json:"arguments"`
}

// AIStreamDelta is the data of a stream's delta event: text or a piece
// of a tool call.
type AIStreamDelta struct {
	// Text is a piece of the answer's text.
	Text *string `json:"text,omitempty"`
	// ToolCall is a piece of a tool call.
	ToolCall *AIStreamToolCall `json:"toolCall,omitempty"`
}

// aiStreamDoc documents the chat stream's events.
const aiStreamDoc = "With \"stream\": true the success answer is a stream of server-sent events (text/event-stream), each " +
	"\"event: <name>\" and one \"data: <JSON>\" line: operation (once, when the chosen model's answer begins: {operationId, " +
	"model, provider, routingReason, creditsReserved}); delta (a piece of the answer: {text} or {toolCall: {index, id, name, " +
	"arguments}}, arguments being fragments to concatenate per index); then exactly one of done (data: the whole JSON answer, " +
	"as the non-streamed route answers it: {operationId, object, message, finish, operation}) or error (data: the error " +
	"envelope, {error: {code, message, details}, meta: {requestId}}, details.operationId naming the operation). A failure " +
	"before the answer begins is an ordinary JSON error answer."

// sseEmitter forwards a streamed answer as server-sent events.
type sseEmitter struct{ es *transport.EventStream }

// Begin sends the operation event.
func (e sseEmitter) Begin(o ai.Operation) error {
	return e.es.Send("operation", AIStreamStart{OperationID: o.ID, Model: o.ModelID, Provider: o.ProviderID, RoutingReason: string(o.Reason),
		CreditsReserved: itoa(o.CreditsReserved)})
}

// Delta sends a delta event.
func (e sseEmitter) Delta(ev ai.Event) error {
	switch ev.Kind {
	case ai.EventText:
		return e.es.Send("delta", AIStreamDelta{Text: &ev.Text})
	case ai.EventToolCall:
		d := ev.ToolCall
		return e.es.Send("delta", AIStreamDelta{ToolCall: &AIStreamToolCall{Index: d.Index, ID: d.ID, Name: d.Name, Arguments: d.Arguments}})
	}
	return nil
}

// sendError sends err as a stream's error event.
func sendError(es *transport.EventStream, reqID string, err error) {
	code, msg, details := fault.Public(err)
	_ = es.Send("error", transport.ErrorEnvelope{Error: transport.ErrorBody{Code: code, Message: msg, Details: details},
		Meta: transport.Meta{RequestID: reqID}})
}

// aiOperationView is an operation's view.
func aiOperationView(o ai.Operation) AIOperationView {
	v := AIOperationView{ID: o.ID, Object: "ai_operation", Environment: string(o.Scope.Environment), Endpoint: string(o.Endpoint),
		Task: string(o.Task), Mode: string(o.Mode), ProjectID: optional(o.ProjectID), Stream: o.Stream, Status: string(o.Status),
		Finish: optional(string(o.Finish)), ToolCalls: o.ToolCalls,
		Routing: AIRoutingRecordView{Policy: PolicyRefView{ID: o.Routing.ID, Version: o.Routing.Version, Hash: o.Routing.Hash},
			Reason: string(o.Reason), Model: o.ModelID, Provider: o.ProviderID, UpstreamModel: optional(o.UpstreamModel), Attempts: []AIAttemptView{}},
		Usage: AIUsageView{InputUnits: o.InputUnits, OutputUnits: o.OutputUnits, CachedUnits: o.CachedUnits, ReasoningUnits: o.ReasoningUnits,
			Source: optional(string(o.UsageSource)), CreditsReserved: itoa(o.CreditsReserved), CreditsSettled: optItoa(o.CreditsSettled),
			PricingPolicy: PolicyRefView{ID: o.Pricing.ID, Version: o.Pricing.Version, Hash: o.Pricing.Hash}, LatencyMs: o.LatencyMillis},
		CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, EndedAt: o.EndedAt}
	if o.CreditsSettled != nil {
		v.Usage.CreditsReleased = optItoa(new(o.CreditsReserved - *o.CreditsSettled))
	}
	if (o.Status == ai.OpFailed || o.Status == ai.OpExpired) && o.FailureCode != "" {
		v.Failure = &FailureView{Code: o.FailureCode}
	}
	for _, a := range o.Attempts {
		v.Routing.Attempts = append(v.Routing.Attempts, AIAttemptView{Model: a.Model, Provider: a.Provider, Outcome: string(a.Outcome),
			Code: optional(a.Code), LatencyMs: a.LatencyMillis})
	}
	return v
}

// aiAnswer is the answer view of ended operation o.
func aiAnswer(object string, o ai.Operation, a ai.Answer) AIAnswer {
	out := AIAnswer{OperationID: o.ID, Object: object, Finish: string(a.Finish), Operation: aiOperationView(o),
		Message: AIAnswerMessage{Role: "assistant", Content: a.Content, ToolCalls: []AIToolCallView{}}}
	if out.Finish == "" {
		out.Finish = string(o.Finish)
	}
	if out.Finish == "" {
		out.Finish = string(ai.FinishCompleted)
	}
	for _, tc := range a.ToolCalls {
		v := AIToolCallView{ID: tc.Call.ID, Name: tc.Call.Name, Arguments: tc.Call.Arguments}
		if r := tc.Result; r != nil {
			v.Result = &AIToolResultView{Content: r.Content, IsError: r.IsError, ArtifactID: optional(r.ArtifactID),
				ArtifactStatus: optional(r.ArtifactStatus)}
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, v)
	}
	return out
}

// chat is the domain's chat request.
func (in AIChatRequest) chat() ai.ChatRequest {
	out := ai.ChatRequest{ToolChoice: in.ToolChoice, MaxOutputTokens: in.MaxOutputTokens, Temperature: in.Temperature, Stream: in.Stream,
		PlatformTools: in.PlatformTools}
	for _, m := range in.Messages {
		msg := ai.Message{Role: ai.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, ToolError: m.IsError}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ai.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, t := range in.Tools {
		out.Tools = append(out.Tools, ai.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// identity is the request's Idempotency-Key and canonical body.
func identity(c *Call) ai.Identity {
	canon, err := idempotency.Canonical(c.Body())
	if err != nil {
		canon = c.Body()
	}
	return ai.Identity{Key: c.Request.Header.Get(idempotency.Header), Body: canon}
}

// runAI executes a begun operation and answers it: as events when es is
// set, else as JSON. The operation's end commits with the idempotency
// record, whatever became of the caller's connection meanwhile.
func runAI(ctx context.Context, c *Call, x *ai.Pending, object string, es *transport.EventStream) (any, error) {
	if x.Replayed() {
		if err := x.ReplayErr(); err != nil {
			return nil, err
		}
		o := x.Operation()
		// A completed operation's recorded answer is replayed by the
		// gateway when this commit meets its idempotency record.
		return c.CommitResult(ctx, func(Tx) (any, error) { return aiAnswer(object, o, ai.Answer{}), nil })
	}
	var emit ai.Emitter
	if es != nil {
		emit = sseEmitter{es: es}
	}
	ans, err := x.Execute(ctx, emit)
	if err != nil {
		if es.Started() {
			sendError(es, c.RequestID, err)
		}
		return nil, err
	}
	out, err := c.CommitResult(context.WithoutCancel(ctx), func(tx Tx) (any, error) {
		o, err := x.Complete(ctx, tx)
		if err != nil {
			return nil, err
		}
		return aiAnswer(object, o, ans), nil
	})
	if es.Started() {
		if err != nil {
			sendError(es, c.RequestID, err)
		} else {
			_ = es.Send("done", out)
		}
	}
	return out, err
}

// aiOperationRoutes are the AI control plane's completion routes (spec,
// AI control plane): chat (JSON or server-sent events), task completion
// with context, an operation and the workspace's usage. Asking needs
// track.generate (scope ai:use), as it spends credits; reading an
// operation needs the same grant to reach it (own for CREATOR and
// MEMBER), and the usage list shows an own grant its holder's records
// only. Every route is Preview.
func aiOperationRoutes(svc *ai.Completions, projects *project.Service) []Route {
	if svc == nil {
		return nil
	}
	route := func(r Route) Route {
		r.Tag, r.Auth, r.Private, r.Maturity = transport.TagAI, transport.AuthSessionOrKey, true, transport.Preview
		r.Permission, r.Scope = access.TrackGenerate, access.ScopeAI
		if r.Method == "" {
			r.Method, r.Idempotency = http.MethodGet, transport.IdempotencyNone
		} else {
			r.Idempotency, r.OwnUnitOfWork, r.BodyLimit = transport.IdempotencyOptional, true, 256<<10
		}
		return r
	}
	lim := svc.Limits()
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	one, three, two, src := "1", "3", "2", "reported"
	upstream, finish := "gpt-4o-mini-2024-07-18", "completed"
	ref := PolicyRefView{ID: ai.PolicyRouting, Version: 3, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	exOp := AIOperationView{ID: "aiop_01jd0000000000000000000000", Object: "ai_operation", Environment: "test", Endpoint: "chat", Task: "chat",
		Mode: "text", Status: "completed", Finish: &finish,
		Routing: AIRoutingRecordView{Policy: ref, Reason: "primary", Model: "gpt-4o-mini", Provider: "openai", UpstreamModel: &upstream,
			Attempts: []AIAttemptView{{Model: "gpt-4o-mini", Provider: "openai", Outcome: "success", LatencyMs: 840}}},
		Usage: AIUsageView{InputUnits: 42, OutputUnits: 17, Source: &src, CreditsReserved: three, CreditsSettled: &one, CreditsReleased: &two,
			PricingPolicy: PolicyRefView{ID: ai.PolicyCredits, Version: 1, Hash: ref.Hash}, LatencyMs: 910},
		CreatedAt: t, UpdatedAt: t, EndedAt: &t}
	exAnswer := AIAnswer{OperationID: exOp.ID, Object: "ai_chat_completion", Finish: "completed", Operation: exOp,
		Message: AIAnswerMessage{Role: "assistant", Content: "Neon Avenue", ToolCalls: []AIToolCallView{}}}
	exComplete := exAnswer
	exComplete.Object = "ai_completion"
	exComplete.Operation.Endpoint, exComplete.Operation.Task = "complete", "complete"
	askErrors := []string{string(fault.InsufficientCredits), string(fault.ProviderUnavailable), string(fault.ProviderTimeout),
		string(fault.ProviderCreditsExhausted), string(fault.ContentPolicyRejected), string(fault.RateLimited)}
	common := fmt.Sprintf("Credits are reserved before any provider call, from the ai.pricing policy of the caller's environment: the "+
		"model's price in US dollars of the estimated input (a unit per three bytes of text, plus four per message and tool) and "+
		"of maxOutputTokens, times creditsPerUsd, rounded up to a whole credit and at least minimumCredits (defaults 1000 and 1), "+
		"for the most expensive model the routing policy lets the request fall back to; credits that do not cover it are 422 "+
		"INSUFFICIENT_CREDITS and no provider is called. When the call ends the credits are settled once through the ledger: "+
		"the provider's reported usage priced at the model that executed, capped at the reservation; the whole reservation when "+
		"output came without usage (a stream that broke or ended without it); nothing, all released, when no output came. "+
		"The model is routed by the task's route (GET /api/v1/ai/routing); a rate limit, server failure, timeout, refused key, "+
		"exhausted provider credits or a too-small context window before any output falls back to the next model the route "+
		"allows (reason fallback:*), and when none is left a rate-limited or failing model is retried once after a retry hint "+
		"of at most %s; at most %d provider calls, %s in all (then 504 PROVIDER_TIMEOUT). Every call's outcome is recorded "+
		"into its model's health. A failure answers its code (503 PROVIDER_UNAVAILABLE, 429 RATE_LIMITED, 402 "+
		"PROVIDER_CREDITS_EXHAUSTED, 422 CONTENT_POLICY_REJECTED, ...) with details.operationId; provider messages and keys "+
		"never appear. A caller that disconnects cancels the provider call; its operation ends cancelled and settles as above. "+
		"An Idempotency-Key (optional) makes a retry replay the first answer; while the first runs a duplicate is 409 "+
		"IDEMPOTENCY_IN_PROGRESS, and another body with the key 409 IDEMPOTENCY_CONFLICT; a failed operation's key answers "+
		"its failure again.", lim.RetryWait, lim.MaxAttempts, lim.MaxDuration)
	return []Route{
		route(Route{Method: http.MethodPost, Pattern: "/api/v1/ai/chat", OperationID: "createAiChatCompletion",
			Summary: "Chat with a model",
			Description: "Answers a conversation with the model the chat task's route chooses, as one JSON answer, or, with \"stream\": " +
				"true, as server-sent events (below). " + common + " Tool calls: the model may propose calls of the tools the request " +
				"declares and, with \"platformTools\": true, of the platform's tools (GET /api/v1/ai/tools), which run under the " +
				"caller's own authority, each refused exactly as its direct route refuses it, a mutating one as a draft artifact that " +
				"applies only on the caller's confirmation; the answer returns every call as it came, with the platform's result for " +
				"a platform tool (null for the caller's own). The model is not called again within the operation: send the results " +
				"back as tool messages on the next turn. " +
				"A replay of a streamed request answers the recorded JSON answer, not events. " + aiStreamDoc,
			Request:  AIChatRequest{Messages: []AIChatMessage{{Role: "user", Content: "Suggest a title for a synth-pop track about city lights."}}, MaxOutputTokens: 512},
			Response: exAnswer, Errors: askErrors, EventStream: aiStreamDoc,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AIChatRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				x, err := svc.BeginChat(ctx, c.Principal, in.chat(), identity(c))
				if err != nil {
					return nil, err
				}
				var es *transport.EventStream
				if in.Stream && !x.Replayed() {
					if es, err = c.Events(lim.MaxDuration + time.Minute); err != nil {
						return nil, err
					}
				}
				return runAI(ctx, c, x, "ai_chat_completion", es)
			}}),
		route(Route{Method: http.MethodPost, Pattern: "/api/v1/ai/complete", OperationID: "createAiCompletion",
			Summary: "Complete a task with context",
			Description: "Completes one task (complete, or a structured task: music_brief, lyrics, prompt_enhance, project_analyze, " +
				"project_blueprint, routed by that task's route) for a prompt with optional context blocks (sourceType, sourceId, " +
				"priority, provenance, content): the blocks reach the model as reference material, highest priority first, never as " +
				"instructions. mode json asks for one JSON object (only models with json_output serve it); the answer is returned as " +
				"the model gave it. Text that looks like a credential (a platform API key, a provider key, a private key, an " +
				"Authorization header) is refused with 400 INVALID_INPUT (details.reason credential), in the prompt and in every " +
				"block; provider secrets are never sent or returned. projectId must name a project of the caller's workspace the " +
				"caller may read (else 404); it is recorded on the operation. " + common,
			Request: AICompleteRequest{Task: "complete", Prompt: "Write a two-line hook for the track.", Context: []AIContextBlock{{
				SourceType: "project", SourceID: "prj_01jd0000000000000000000000", Priority: 50, Provenance: "user",
				Content: "Working title: Neon Avenue. Mood: nostalgic, upbeat."}}},
			Response: exComplete, Errors: append([]string{string(fault.NotFound)}, askErrors...),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AICompleteRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				if in.ProjectID != "" {
					if projects == nil {
						return nil, fault.E("transport.createAiCompletion", fault.NotFound, "No such project.")
					}
					pr, err := projects.Get(ctx, c.Tx, c.Principal, c.Authority, in.ProjectID)
					if err != nil {
						return nil, err
					}
					if pr.Scope.WorkspaceID != c.Principal.WorkspaceID || pr.Scope.TenantID != c.Principal.TenantID {
						return nil, fault.E("transport.createAiCompletion", fault.NotFound, "No such project.")
					}
				}
				req := ai.CompleteRequest{Task: ai.Task(in.Task), Prompt: in.Prompt, Mode: ai.Mode(in.Mode), ProjectID: in.ProjectID,
					MaxOutputTokens: in.MaxOutputTokens, Temperature: in.Temperature}
				for _, b := range in.Context {
					req.Context = append(req.Context, ai.ContextBlock{SourceType: b.SourceType, SourceID: b.SourceID, Priority: b.Priority,
						Provenance: b.Provenance, Content: b.Content})
				}
				x, err := svc.BeginComplete(ctx, c.Principal, req, identity(c))
				if err != nil {
					return nil, err
				}
				return runAI(ctx, c, x, "ai_completion", nil)
			}}),
		route(Route{Pattern: "/api/v1/ai/operations/{id}", OperationID: "getAiOperation",
			Summary: "Get an AI operation",
			Description: "One chat or completion operation of the caller's workspace and environment with its routing record (policy " +
				"version, reason, the model and provider that executed, every provider call) and usage record (units the provider " +
				"reported, credits reserved, settled and released, the pricing version, latency, terminal status). It never holds the " +
				"prompt, context or answer. Another workspace's or environment's operation is 404; one an own grant (CREATOR, MEMBER) does not reach is 403 ACCESS_DENIED.",
			Response: exOp, Errors: []string{string(fault.NotFound)},
			Policy: Policy{ResourceFunc: func(ctx context.Context, c *Call) (*access.Resource, error) {
				return ai.OperationResource(ctx, c.Tx, c.Principal, c.PathValue("id"))
			}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, err := ai.GetOperation(ctx, c.Tx, c.Principal, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return aiOperationView(o), nil
			}}),
		route(Route{Pattern: "/api/v1/ai/usage", OperationID: "listAiUsage",
			Summary: "List the AI usage records",
			Description: "The usage records (operations) of the caller's workspace in its environment, newest first, in keyset pages " +
				"(limit, cursor), with totals over every record the list selects: operations, those completed, reported units and " +
				"credits reserved and settled. A caller whose track.generate grant is its own (CREATOR, MEMBER, and their keys) sees " +
				"the records it asked; OWNER and ADMIN see the workspace's.",
			Query: pageQuery("Y3Vyc29yOmFpb3BfMDFqZA"),
			Response: AIUsagePage{Items: []AIOperationView{exOp}, Totals: AIUsageTotalsView{Operations: 1, Completed: 1, InputUnits: 42,
				OutputUnits: 17, CreditsReserved: "3", CreditsSettled: "1"}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				q := ai.UsageQuery{Scope: c.Principal.Scope()}
				if g, _ := c.Authority.Has(access.TrackGenerate); g != access.GrantWorkspace && g != access.GrantAny {
					q.UserID = c.Principal.UserID
				}
				var totals ai.UsageTotals
				os, more, next, err := transport.PageOf(c, ai.OperationIDPrefix, func(before string, n int) ([]ai.Operation, error) {
					q.Before, q.Limit = before, n
					os, t, err := ai.ListUsage(ctx, c.Tx, q)
					totals = t
					return os, err
				}, func(o ai.Operation) string { return o.ID })
				if err != nil {
					return nil, err
				}
				out := AIUsagePage{Items: []AIOperationView{}, HasMore: more, NextCursor: next, Totals: AIUsageTotalsView{
					Operations: totals.Operations, Completed: totals.Completed, InputUnits: totals.InputUnits, OutputUnits: totals.OutputUnits,
					CreditsReserved: strconv.FormatInt(totals.CreditsReserved, 10), CreditsSettled: strconv.FormatInt(totals.CreditsSettled, 10)}}
				for _, o := range os {
					out.Items = append(out.Items, aiOperationView(o))
				}
				return out, nil
			}}),
	}
}
