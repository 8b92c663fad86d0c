package ai

// This file declares the port every model-provider adapter implements
// (ai/openai for OpenAI-compatible Chat Completions, ai/anthropic for
// Anthropic Messages), the wire-neutral request and response types, and the
// classification of provider failures. Adapters own their wire, their error
// dialect and their deviations; the rest of the package sees only these
// types.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Provider is the port a model-provider adapter implements. An adapter is
// bound to one base URL and one key at construction and is safe for
// concurrent use.
//
// Errors are *fault.Error with a code and details.class (ErrorClass):
//
//   - RATE_LIMITED (class rate_limit): the provider throttled the request;
//     details.retryAfter (whole seconds, rounded up) and details.retryAfterMs
//     carry its hint when it sent one.
//   - PROVIDER_CREDITS_EXHAUSTED (credits): the provider account is out of
//     credits or quota; never retried on the same account.
//   - INVALID_INPUT (context): the prompt does not fit the model's context
//     window; a model with a larger window may serve it. INVALID_INPUT
//     (request): the provider refused the request as built.
//   - CONTENT_POLICY_REJECTED (filter): the provider refused the content
//     before answering. A completion the provider withheld is not an error:
//     it is a Response with Finish FinishFiltered, so that its usage can be
//     settled.
//   - PROVIDER_UNAVAILABLE (server, auth, malformed, interrupted, request):
//     5xx, 408 and 409, an overload, an unreachable provider, a rejected key
//     (auth: the provider is unhealthy; the caller never sees why), an
//     answer that cannot be read, an unknown model (request, reason
//     not_found), a stream that broke after output began (interrupted).
//   - PROVIDER_TIMEOUT (server, or interrupted after output began): no
//     answer, or no stream event, within the adapter's deadlines.
//
// Details also carry retryable (bool: the same request to the same
// provider may succeed later), reason (a stable word such as dropped,
// error_event, malformed_chunk, idle_timeout), upstreamStatus (the HTTP
// status, when one came) and upstreamRequestId. No error, message or cause
// carries the key or the base URL; upstream error text appears only in the
// cause, with the key redacted. When the caller's own context ends, the
// error wraps its cause (errors.Is context.Canceled) and has no code.
type Provider interface {
	// Complete sends one request and returns the whole answer.
	Complete(ctx context.Context, r Request) (Response, error)
	// Stream sends one request and returns its answer as events. An error
	// before the first event is returned here; later ones by Stream.Next.
	// The caller must Close the stream.
	Stream(ctx context.Context, r Request) (Stream, error)
	// Models lists the models the provider serves.
	Models(ctx context.Context) ([]Model, error)
}

// Stream is a streamed answer being read. It is not safe for concurrent
// use.
type Stream interface {
	// Next returns the next event: text and tool-call deltas in the order
	// the provider sent them, then one EventDone, then io.EOF. Any other
	// error ends the stream; Response then holds what came before it.
	Next() (Event, error)
	// Response is the answer assembled from the events read so far:
	// content, tool calls assembled by index, finish, usage, the id and
	// the executed model. After an error it is the partial answer.
	Response() Response
	// Close releases the connection. It is safe to call more than once
	// and before the stream ended.
	Close() error
}

// Role is the author of a message.
type Role string

// The roles of a conversation.
const (
	// RoleSystem is an instruction from the platform.
	RoleSystem Role = "system"
	// RoleUser is the creator's turn.
	RoleUser Role = "user"
	// RoleAssistant is the model's turn, possibly proposing tool calls.
	RoleAssistant Role = "assistant"
	// RoleTool is the result of one tool call the model proposed.
	RoleTool Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	// Role is the turn's author.
	Role Role
	// Content is the turn's text. A tool turn's content is the result the
	// model sees.
	Content string
	// ToolCalls are the calls an assistant turn proposed.
	ToolCalls []ToolCall
	// ToolCallID names the call a tool turn answers. Required on tool turns.
	ToolCallID string
	// ToolError marks a tool turn whose result is an error.
	ToolError bool
}

// Tool declares a function the model may propose to call.
type Tool struct {
	// Name is the function's name, [a-zA-Z0-9_-]{1,64}.
	Name string
	// Description tells the model what the function does.
	Description string
	// Parameters is the JSON Schema of the arguments object. Empty means
	// an object with no declared properties.
	Parameters json.RawMessage
}

// ToolChoice values besides a tool's name.
const (
	// ToolChoiceAuto lets the model decide (the default with tools).
	ToolChoiceAuto = "auto"
	// ToolChoiceNone forbids tool calls.
	ToolChoiceNone = "none"
	// ToolChoiceRequired makes the model call at least one tool.
	ToolChoiceRequired = "required"
)

// Request is one completion request, independent of any wire.
type Request struct {
	// Model is the provider's model id. Required.
	Model string
	// Messages is the conversation, oldest first. Required.
	Messages []Message
	// Tools are the functions the model may propose to call.
	Tools []Tool
	// ToolChoice is "", ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired
	// or the name of a declared tool the model must call.
	ToolChoice string
	// MaxOutputTokens caps the answer, reasoning included; zero means the
	// adapter's default.
	MaxOutputTokens int
	// Temperature is the sampling temperature; nil means the provider's
	// default.
	Temperature *float64
	// JSON asks for a single JSON object as the answer.
	JSON bool
	// JSONSchema, with JSON, is the schema the object should follow. The
	// provider may not enforce it: the caller validates the answer.
	JSONSchema json.RawMessage
	// Stop lists up to four sequences that end the answer.
	Stop []string
}

// ToolCall is a call the model proposed.
type ToolCall struct {
	// ID is the provider's id of the call, quoted by the tool turn that
	// answers it.
	ID string
	// Name is the function the model named; it may not be declared.
	Name string
	// Arguments is always valid JSON: the model's arguments as it sent
	// them, "{}" when it sent none, and a JSON string holding its text when
	// that text is not JSON (so that schema validation refuses it). The
	// arguments are untrusted: validate them before any use.
	Arguments json.RawMessage
}

// Finish is how an answer ended, normalized across wires.
type Finish string

// The finishes.
const (
	// FinishCompleted is a natural end or a stop sequence.
	FinishCompleted Finish = "completed"
	// FinishTruncated is an answer cut by the output cap or the context
	// window (or an Anthropic pause_turn).
	FinishTruncated Finish = "truncated"
	// FinishFiltered is an answer the provider withheld or refused by its
	// content policy; the caller maps it to CONTENT_POLICY_REJECTED.
	FinishFiltered Finish = "filtered"
	// FinishToolCalls is an answer that ends with tool calls to run.
	FinishToolCalls Finish = "tool_calls"
)

// Usage is what the provider reports a call consumed, in tokens.
type Usage struct {
	// InputTokens counts every input token, cached ones included.
	InputTokens int64
	// OutputTokens counts every output token, reasoning included.
	OutputTokens int64
	// CachedTokens is the part of InputTokens read from the provider's
	// prompt cache.
	CachedTokens int64
	// ReasoningTokens is the part of OutputTokens spent reasoning, when the
	// provider reports it.
	ReasoningTokens int64
}

// Response is a completed (or, from a broken stream, partial) answer.
type Response struct {
	// ID is the provider's id of the completion.
	ID string
	// Model is the model that executed the request, read from the
	// provider's answer, never copied from the request.
	Model string
	// Content is the answer's text.
	Content string
	// ToolCalls are the calls the model proposed, in order.
	ToolCalls []ToolCall
	// Finish is how the answer ended; empty on a partial answer.
	Finish Finish
	// Usage is the provider's report; zero unless UsageReported.
	Usage Usage
	// UsageReported is false when the provider sent no usage (a stream
	// that ended without it): the caller settles on its own estimate.
	UsageReported bool
	// UpstreamRequestID is the provider's request id (x-request-id,
	// request-id, X-Generation-Id, x-litellm-call-id), for support.
	UpstreamRequestID string
}

// EventKind names a stream event.
type EventKind string

// The stream events.
const (
	// EventText carries a piece of the answer's text in Event.Text.
	EventText EventKind = "text"
	// EventToolCall carries a piece of a tool call in Event.ToolCall.
	EventToolCall EventKind = "tool_call"
	// EventDone ends a stream that completed: Event.Finish and Event.Usage
	// are final (Usage is zero when the provider sent none; see
	// Response.UsageReported).
	EventDone EventKind = "done"
)

// Event is one event of a Stream.
type Event struct {
	// Kind says which fields are set.
	Kind EventKind
	// Text is an EventText's piece of text.
	Text string
	// ToolCall is an EventToolCall's piece of a call.
	ToolCall ToolCallDelta
	// Finish is EventDone's finish.
	Finish Finish
	// Usage is EventDone's usage.
	Usage Usage
}

// ToolCallDelta is a piece of a streamed tool call. Pieces of one call
// share an Index; ID and Name come with its first piece; Arguments are
// fragments to concatenate (Stream.Response does so).
type ToolCallDelta struct {
	// Index orders the answer's tool calls, from 0.
	Index int
	// ID is the call's id, on its first piece.
	ID string
	// Name is the function's name, on its first piece.
	Name string
	// Arguments is a fragment of the arguments' JSON text.
	Arguments string
}

// Model is a model a provider serves.
type Model struct {
	// ID is the provider's model id, as Request.Model takes it.
	ID string
	// DisplayName is a human name, when the provider gives one.
	DisplayName string
	// OwnedBy is the owner the provider reports (OpenAI-compatible lists).
	OwnedBy string
	// Created is when the provider says the model was created or last
	// changed; zero when unknown.
	Created time.Time
	// ContextWindow is the model's context length in tokens, when the
	// provider reports it (vLLM max_model_len, OpenRouter context_length);
	// zero when unknown.
	ContextWindow int64
}

// ErrorClass classifies a provider failure by what the caller can do about
// it (details.class of the error).
type ErrorClass string

// The error classes.
const (
	// ClassRateLimit: the provider throttled; wait retryAfter or fail over.
	ClassRateLimit ErrorClass = "rate_limit"
	// ClassCredits: the provider account is out of credits or quota; fail
	// over, never retry on the same account.
	ClassCredits ErrorClass = "credits"
	// ClassServer: the provider failed or was unreachable; back off and
	// retry (unless retryable is false) or fail over.
	ClassServer ErrorClass = "server"
	// ClassContext: the prompt exceeds the model's context window; a model
	// with a larger window may serve it.
	ClassContext ErrorClass = "context"
	// ClassAuth: the provider refused the key or the account; the provider
	// is unhealthy until an operator acts.
	ClassAuth ErrorClass = "auth"
	// ClassFilter: the provider's content policy refused the request.
	ClassFilter ErrorClass = "filter"
	// ClassMalformed: the provider's answer could not be read.
	ClassMalformed ErrorClass = "malformed"
	// ClassInterrupted: a stream broke after output began (a drop, an error
	// event, a malformed chunk, a stall); what came is in
	// Stream.Response, and the request cannot be retried transparently.
	ClassInterrupted ErrorClass = "interrupted"
	// ClassRequest: the provider refused the request as built (a
	// parameter, an unknown model).
	ClassRequest ErrorClass = "request"
)

// The detail keys of a provider failure.
const (
	// DetailClass holds the ErrorClass.
	DetailClass = "class"
	// DetailRetryAfter holds the provider's retry hint in whole seconds,
	// rounded up (the transport's Retry-After header reads it).
	DetailRetryAfter = "retryAfter"
	// DetailRetryAfterMs holds the provider's retry hint in milliseconds.
	DetailRetryAfterMs = "retryAfterMs"
	// DetailRetryable holds whether the same request may succeed later.
	DetailRetryable = "retryable"
	// DetailReason holds a stable word for what happened.
	DetailReason = "reason"
	// DetailStatus holds the provider's HTTP status.
	DetailStatus = "upstreamStatus"
	// DetailRequestID holds the provider's request id.
	DetailRequestID = "upstreamRequestId"
)

// Failure describes a provider failure; adapters build their errors with
// it so that every adapter fills the same details.
type Failure struct {
	// Code is the platform code (see Provider).
	Code fault.Code
	// Class is what the caller can do about it.
	Class ErrorClass
	// Reason is a stable word for what happened; optional.
	Reason string
	// Status is the provider's HTTP status; zero when none came.
	Status int
	// RetryAfter is the provider's retry hint; zero when it sent none.
	RetryAfter time.Duration
	// Retryable says whether the same request may succeed later.
	Retryable bool
	// RequestID is the provider's request id; optional.
	RequestID string
	// Cause is logged, never returned to a client; it must hold neither the
	// key nor the URL.
	Cause error
}

// Err returns the failure as a *fault.Error of operation op, with a
// client-safe message chosen by its class.
func (f Failure) Err(op string) *fault.Error {
	cause := f.Cause
	if cause == nil {
		cause = errors.New(string(f.Class))
	}
	e := &fault.Error{Op: op, Code: f.Code, Message: classMessage(f.Class), Err: cause,
		Details: map[string]any{DetailClass: string(f.Class), DetailRetryable: f.Retryable}}
	if f.Reason != "" {
		e.Details[DetailReason] = f.Reason
	}
	if f.Status != 0 {
		e.Details[DetailStatus] = f.Status
	}
	if f.RetryAfter > 0 {
		e.Details[DetailRetryAfter] = int64((f.RetryAfter + time.Second - 1) / time.Second)
		e.Details[DetailRetryAfterMs] = int64((f.RetryAfter + time.Millisecond - 1) / time.Millisecond)
	}
	if f.RequestID != "" {
		e.Details[DetailRequestID] = f.RequestID
	}
	return e
}

// classMessage is the client-safe message of a class.
func classMessage(c ErrorClass) string {
	switch c {
	case ClassRateLimit:
		return "The AI provider is rate limiting requests."
	case ClassCredits:
		return "The AI provider account has no credits left."
	case ClassContext:
		return "The request does not fit the model's context window."
	case ClassFilter:
		return "The AI provider refused the content."
	case ClassRequest:
		return "The AI provider refused the request."
	case ClassInterrupted:
		return "The AI provider's answer was interrupted."
	}
	return "The AI provider is unavailable."
}

// ClassOf returns the class of the provider failure in err's chain, or ""
// when err is no provider failure.
func ClassOf(err error) ErrorClass {
	if c, ok := detail(err, DetailClass).(string); ok {
		return ErrorClass(c)
	}
	return ""
}

// RetryAfterOf returns the retry hint of the provider failure in err's
// chain, if the provider sent one.
func RetryAfterOf(err error) (time.Duration, bool) {
	if ms, ok := detail(err, DetailRetryAfterMs).(int64); ok && ms > 0 {
		return time.Duration(ms) * time.Millisecond, true
	}
	return 0, false
}

// RetryableOf reports whether the provider failure in err's chain may
// succeed if sent again to the same provider.
func RetryableOf(err error) bool {
	b, _ := detail(err, DetailRetryable).(bool)
	return b
}

// detail returns key of the first *fault.Error in err's chain that holds
// it.
func detail(err error, key string) any {
	for err != nil {
		var fe *fault.Error
		if !errors.As(err, &fe) {
			return nil
		}
		if v, ok := fe.Details[key]; ok {
			return v
		}
		err = fe.Err
	}
	return nil
}
