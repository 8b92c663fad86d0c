// Package openai is the adapter for OpenAI-compatible Chat Completions,
// implementing ai.Provider (reference: shared/spec/ai.md, section 1). One
// wire reaches OpenAI, OpenRouter, Ollama, vLLM, the llama.cpp server and a
// LiteLLM proxy: point Config.BaseURL at the server's /v1 root.
//
// # Wire
//
//	POST {base}/chat/completions   Complete and Stream
//	GET  {base}/models             Models
//
// The key travels only as "Authorization: Bearer <key>" (none is sent when
// Config.APIKey is empty, as Ollama allows). Requests carry model,
// messages (system, user, assistant with tool_calls, tool with
// tool_call_id), tools as functions with their JSON Schema, tool_choice,
// the output cap (max_completion_tokens, or max_tokens with
// Config.MaxTokensField), temperature, stop, and response_format:
// json_object, or json_schema (name "output", not strict) when a schema is
// given; in JSON mode a system instruction is added when no message
// mentions JSON, which json_object requires. Streams ask for
// stream_options.include_usage.
//
// # Decoding
//
// Decoding is tolerant: unknown fields (reasoning, system_fingerprint
// fp_ollama, obfuscation, OpenRouter's cost and provider, vLLM's
// max_model_len) are ignored; content may be a string, null or an array of
// text parts; counts may be numbers or numeric strings; tool-call
// arguments may be a string or an object, and a tool-call chunk without
// an index continues the last call (or starts one when it has an id). The
// executed model is the answer's "model". finish_reason stop -> completed
// (tool_calls when the answer carries tool calls), length (and max_tokens)
// -> truncated, tool_calls and function_call -> tool_calls,
// content_filter -> filtered (as does a refusal); OpenRouter's "error"
// finish is a failure. Usage: prompt_tokens (cached_tokens of
// prompt_tokens_details are a part of it), completion_tokens
// (reasoning_tokens of completion_tokens_details a part of it).
//
// A stream is complete at "data: [DONE]"; a stream that ends without it
// is accepted only when it already delivered both a finish_reason and
// usage, and is otherwise a drop. ":" lines are keep-alives (they count
// as activity for the idle deadline). A data payload with a top-level
// "error", an "event: error", or a payload that is not JSON ends the
// stream with a failure.
//
// # Errors
//
// See ai.Provider for codes and classes. Bodies {"error":{message, type,
// param, code}} are read with code a string or a number (OpenRouter,
// vLLM, llama.cpp), also flat (old vLLM) or a bare string (Ollama's native
// errors):
//
//   - 402, or 429 whose type or code is insufficient_quota (or whose
//     message speaks of quota or credits) -> PROVIDER_CREDITS_EXHAUSTED.
//   - other 429 -> RATE_LIMITED with the hint of retry-after-ms,
//     retry-after (seconds or HTTP date) or x-ratelimit-reset-* of an
//     exhausted limit.
//   - context overflow: code context_length_exceeded, llama.cpp's
//     exceed_context_size_error, vLLM's and LiteLLM's "maximum context
//     length" and ContextWindowExceededError texts -> INVALID_INPUT
//     (class context).
//   - code content_filter or content_policy_violation, LiteLLM's
//     ContentPolicyViolationError, or OpenRouter's 403 moderation flag ->
//     CONTENT_POLICY_REJECTED.
//   - 401 and other 403 -> PROVIDER_UNAVAILABLE (class auth); 404 ->
//     PROVIDER_UNAVAILABLE (class request, reason not_found).
//   - 408, 409 and 5xx -> PROVIDER_UNAVAILABLE (class server, retryable
//     unless x-should-retry: false).
//   - other 400, 413 and 422 -> INVALID_INPUT (class request).
//   - a 200 body with an "error" -> PROVIDER_UNAVAILABLE (reason
//     error_in_body); a body that does not decode -> PROVIDER_UNAVAILABLE
//     (class malformed).
//
// # Outbound policy and bounds
//
// Without Config.HTTPClient the adapter sends through a urlguard client
// (https only, public addresses only, every resolved address judged, no
// proxy from the environment), and New refuses a BaseURL the guard
// refuses; a client that is set owns that policy (tests pass a urlguard
// client that admits their simulator on loopback). Every call has a total
// deadline (Config.Timeout); a stream also an idle deadline between lines
// (Config.IdleTimeout), both PROVIDER_TIMEOUT. Bodies are bounded by
// Config.MaxResponseBytes and each stream event by 1 MiB.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/internal/wire"
	"github.com/creatormusic/platform/fault"
)

var _ ai.Provider = (*Client)(nil)

// Defaults of Config.
const (
	// DefaultTimeout bounds a whole call.
	DefaultTimeout = wire.DefaultTimeout
	// DefaultIdleTimeout bounds the wait for each line of a stream (and
	// for its headers).
	DefaultIdleTimeout = wire.DefaultIdleTimeout
	// DefaultMaxResponseBytes bounds an answer's body.
	DefaultMaxResponseBytes = wire.DefaultMaxResponseBytes
	// MaxEventBytes bounds one stream event.
	MaxEventBytes = wire.MaxEventBytes
)

// The output-cap fields Config.MaxTokensField takes.
const (
	// MaxCompletionTokens is OpenAI's current field (required by its
	// reasoning models).
	MaxCompletionTokens = "max_completion_tokens"
	// MaxTokens is the older field some compatible servers (Ollama) read.
	MaxTokens = "max_tokens"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the server's /v1 root (https://api.openai.com/v1,
	// https://openrouter.ai/api/v1, http://localhost:11434/v1). Required.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// HTTPClient sends the requests. Nil means a urlguard client, and
	// BaseURL must pass its guard.
	HTTPClient *http.Client
	// Timeout bounds a whole call. Zero means DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout bounds the wait for each stream line. Zero means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxResponseBytes bounds an answer's body. Zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// MaxTokensField is MaxCompletionTokens (the default) or MaxTokens.
	MaxTokensField string
	// Now tells the time for HTTP-date retry hints. Nil means time.Now.
	Now func() time.Time
}

// Client is the OpenAI-compatible adapter. It is safe for concurrent use.
type Client struct {
	w        wire.Client
	key      string
	capField string
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	const op = "openai.New"
	base, err := wire.CheckBase(op, cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	switch cfg.MaxTokensField {
	case "":
		cfg.MaxTokensField = MaxCompletionTokens
	case MaxCompletionTokens, MaxTokens:
	default:
		return nil, fault.Invalid(op, "maxTokensField", "The output cap field must be max_completion_tokens or max_tokens.")
	}
	w, err := wire.NewClient(op, wire.Options{Base: base, Key: cfg.APIKey, HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout,
		IdleTimeout: cfg.IdleTimeout, MaxResponseBytes: cfg.MaxResponseBytes, Now: cfg.Now, Refuse: refuse})
	if err != nil {
		return nil, err
	}
	return &Client{w: w, key: cfg.APIKey, capField: cfg.MaxTokensField}, nil
}

func (c *Client) header(accept string) http.Header {
	h := http.Header{"Accept": {accept}}
	if c.key != "" {
		h.Set("Authorization", "Bearer "+c.key)
	}
	return h
}

// Complete implements ai.Provider.
func (c *Client) Complete(ctx context.Context, r ai.Request) (ai.Response, error) {
	const op = "openai.Complete"
	if err := wire.Validate(op, r); err != nil {
		return ai.Response{}, err
	}
	return c.w.Complete(ctx, op, "/chat/completions", c.header("application/json"), c.body(r, false), decodeCompletion)
}

// Stream implements ai.Provider.
func (c *Client) Stream(ctx context.Context, r ai.Request) (ai.Stream, error) {
	const op = "openai.Stream"
	if err := wire.Validate(op, r); err != nil {
		return nil, err
	}
	return c.w.Stream(ctx, op, "/chat/completions", c.header("text/event-stream"), c.body(r, true), decoder{})
}

// Models implements ai.Provider.
func (c *Client) Models(ctx context.Context) ([]ai.Model, error) {
	const op = "openai.Models"
	var list struct {
		Data []struct {
			ID            string     `json:"id"`
			Created       wire.Count `json:"created"`
			OwnedBy       string     `json:"owned_by"`
			Name          string     `json:"name"`
			MaxModelLen   wire.Count `json:"max_model_len"`
			ContextLength wire.Count `json:"context_length"`
		} `json:"data"`
	}
	if err := c.w.GetJSON(ctx, op, "/models", c.header("application/json"), "model list", &list,
		func() bool { return list.Data != nil }); err != nil {
		return nil, err
	}
	out := make([]ai.Model, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID == "" {
			continue
		}
		am := ai.Model{ID: m.ID, OwnedBy: m.OwnedBy, DisplayName: m.Name, ContextWindow: int64(max(m.MaxModelLen, m.ContextLength))}
		if m.Created > 0 {
			am.Created = time.Unix(int64(m.Created), 0).UTC()
		}
		out = append(out, am)
	}
	return out, nil
}

// chatRequest is the request body.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools,omitempty"`
	ToolChoice          any             `json:"tool_choice,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	Stop                []string        `json:"stop,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function toolDeclare `json:"function"`
}

type toolDeclare struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// body builds the request body of r.
func (c *Client) body(r ai.Request, stream bool) chatRequest {
	b := chatRequest{Model: r.Model, Temperature: r.Temperature, Stop: r.Stop}
	if r.JSON && len(r.JSONSchema) == 0 && !wire.MentionsJSON(r.Messages) {
		s := wire.JSONInstruction(nil)
		b.Messages = append(b.Messages, chatMessage{Role: "system", Content: &s})
	}
	for _, m := range r.Messages {
		content := m.Content
		cm := chatMessage{Role: string(m.Role), Content: &content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: tc.ID, Type: "function",
				Function: chatFunction{Name: tc.Name, Arguments: string(wire.Arguments(string(tc.Arguments)))}})
		}
		if m.Role == ai.RoleAssistant && len(cm.ToolCalls) > 0 && content == "" {
			cm.Content = nil
		}
		b.Messages = append(b.Messages, cm)
	}
	for _, t := range r.Tools {
		b.Tools = append(b.Tools, chatTool{Type: "function", Function: toolDeclare{Name: t.Name, Description: t.Description,
			Parameters: wire.ObjectSchema(t.Parameters)}})
	}
	switch r.ToolChoice {
	case "":
	case ai.ToolChoiceAuto, ai.ToolChoiceNone, ai.ToolChoiceRequired:
		b.ToolChoice = r.ToolChoice
	default:
		b.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": r.ToolChoice}}
	}
	if r.MaxOutputTokens > 0 {
		if c.capField == MaxTokens {
			b.MaxTokens = r.MaxOutputTokens
		} else {
			b.MaxCompletionTokens = r.MaxOutputTokens
		}
	}
	if r.JSON {
		if len(r.JSONSchema) > 0 {
			b.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: "output", Schema: r.JSONSchema}}
		} else {
			b.ResponseFormat = &responseFormat{Type: "json_object"}
		}
	}
	if stream {
		b.Stream = true
		b.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	return b
}

// usage is the wire's usage object.
type usage struct {
	PromptTokens        wire.Count `json:"prompt_tokens"`
	CompletionTokens    wire.Count `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens wire.Count `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens wire.Count `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u usage) usage() ai.Usage {
	out := ai.Usage{InputTokens: int64(u.PromptTokens), OutputTokens: int64(u.CompletionTokens)}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = int64(u.PromptTokensDetails.CachedTokens)
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = int64(u.CompletionTokensDetails.ReasoningTokens)
	}
	return out
}

// wireToolCall is a tool call of an answer or a chunk.
type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// envelope is what a completion and a stream chunk both carry beside
// their choices.
type envelope struct {
	ID    string          `json:"id"`
	Model string          `json:"model"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// turn is a choice's message (a completion) or delta (a chunk).
type turn struct {
	Content   json.RawMessage `json:"content"`
	Refusal   *string         `json:"refusal"`
	ToolCalls []wireToolCall  `json:"tool_calls"`
}

// refused reports whether the turn carries a refusal.
func (t turn) refused() bool { return t.Refusal != nil && *t.Refusal != "" }

// completion is the non-streamed answer.
type completion struct {
	envelope
	Choices []struct {
		Message      turn    `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// decodeCompletion reads a 200 answer.
func decodeCompletion(raw []byte) (ai.Response, *ai.Failure) {
	var cr completion
	if err := json.Unmarshal(raw, &cr); err != nil {
		f := wire.Malformed("malformed_response", fmt.Errorf("completion: %v", err))
		return ai.Response{}, &f
	}
	if !wire.Absent(cr.Error) {
		f := errorInBody(cr.Error, "error_in_body")
		return ai.Response{}, &f
	}
	if len(cr.Choices) == 0 {
		f := wire.Malformed("malformed_response", errors.New("completion without choices"))
		return ai.Response{}, &f
	}
	ch := cr.Choices[0]
	resp := ai.Response{ID: cr.ID, Model: cr.Model, Content: wire.Text(ch.Message.Content)}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		resp.ToolCalls = append(resp.ToolCalls, ai.ToolCall{ID: id, Name: tc.Function.Name,
			Arguments: wire.Arguments(wire.ArgumentsText(tc.Function.Arguments))})
	}
	reason := ""
	if ch.FinishReason != nil {
		reason = *ch.FinishReason
	}
	if reason == "error" {
		f := errorInBody(cr.Error, "error_finish")
		return ai.Response{}, &f
	}
	resp.Finish = wire.FinishWithCalls(finish(reason), len(resp.ToolCalls))
	if ch.Message.refused() {
		resp.Finish = ai.FinishFiltered
	}
	if cr.Usage != nil {
		resp.Usage, resp.UsageReported = cr.Usage.usage(), true
	}
	return resp, nil
}

// finish normalizes a finish_reason.
func finish(reason string) ai.Finish {
	switch reason {
	case "length", "max_tokens", "model_context_window_exceeded":
		return ai.FinishTruncated
	case "tool_calls", "function_call":
		return ai.FinishToolCalls
	case "content_filter":
		return ai.FinishFiltered
	}
	return ai.FinishCompleted
}

// errorInBody is the failure of an error a 200 answer (or stream) carried.
func errorInBody(raw json.RawMessage, reason string) ai.Failure {
	e := parseError(raw)
	return wire.ServerFailure(reason, fmt.Errorf("error in a 200 answer: %s/%s: %s", e.Type, e.Code, wire.Truncate(e.Message, 300)))
}

// apiError is an error body's fields, however the server shapes them.
type apiError struct {
	Message, Type, Code, Param string
	Metadata                   string
}

// parseError reads {"error":{...}}, {"error":"..."}, a flat error object,
// or the inner object itself.
func parseError(raw []byte) apiError {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   string          `json:"param"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return apiError{Message: wire.Truncate(string(raw), 300)}
	}
	if !wire.Absent(env.Error) {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return apiError{Message: s}
		}
		var inner struct {
			Message  string          `json:"message"`
			Type     string          `json:"type"`
			Code     json.RawMessage `json:"code"`
			Param    string          `json:"param"`
			Metadata json.RawMessage `json:"metadata"`
		}
		if json.Unmarshal(env.Error, &inner) == nil {
			return apiError{Message: inner.Message, Type: inner.Type, Code: wire.CodeText(inner.Code), Param: inner.Param,
				Metadata: wire.Truncate(string(inner.Metadata), 500)}
		}
	}
	return apiError{Message: env.Message, Type: env.Type, Code: wire.CodeText(env.Code), Param: env.Param}
}

// refuse maps a non-2xx answer (see the package doc).
func refuse(status int, _ http.Header, body []byte) ai.Failure {
	e := parseError(body)
	text := strings.ToLower(e.Type + " " + e.Code + " " + e.Message + " " + e.Metadata)
	cause := fmt.Errorf("HTTP %d %s/%s: %s", status, e.Type, e.Code, wire.Truncate(e.Message, 300))
	switch {
	case status == http.StatusTooManyRequests && quota(e, text):
		return wire.Refused(fault.ProviderCreditsExhausted, ai.ClassCredits, false, "", cause)
	case status == http.StatusPaymentRequired || status == http.StatusTooManyRequests:
		return wire.ByStatus(status, cause)
	case status >= 400 && status < 500 && contextOverflow(e, text):
		return wire.Refused(fault.InvalidInput, ai.ClassContext, false, "context_length_exceeded", cause)
	case status >= 400 && status < 500 && contentPolicy(e, text):
		return wire.Refused(fault.ContentPolicyRejected, ai.ClassFilter, false, "", cause)
	}
	return wire.ByStatus(status, cause)
}

func quota(e apiError, text string) bool {
	return e.Type == "insufficient_quota" || e.Code == "insufficient_quota" ||
		strings.Contains(text, "exceeded your current quota") || strings.Contains(text, "insufficient credits") ||
		strings.Contains(text, "insufficient_quota") || strings.Contains(text, "billing")
}

func contextOverflow(e apiError, text string) bool {
	if e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" {
		return true
	}
	for _, s := range []string{"maximum context length", "context length", "context_length", "context window",
		"contextwindowexceeded", "context size", "prompt is too long"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

func contentPolicy(e apiError, text string) bool {
	if e.Code == "content_filter" || e.Code == "content_policy_violation" || e.Type == "content_policy_violation" {
		return true
	}
	for _, s := range []string{"contentpolicyviolation", "content management policy", "content policy", "moderation", "flagged"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// decoder is the stream dialect.
type decoder struct{}

// chunk is one stream payload.
type chunk struct {
	envelope
	Choices []struct {
		Delta        turn    `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// Message implements wire.Decoder.
func (decoder) Message(m wire.Message, acc *wire.Acc) (bool, *ai.Failure) {
	data := strings.TrimSpace(m.Data)
	if data == "[DONE]" {
		if acc.Finish() == "" {
			acc.SetFinish(ai.FinishCompleted)
		}
		return true, nil
	}
	if m.Event == "error" {
		f := errorInBody(json.RawMessage(data), "error_event")
		return false, &f
	}
	var ch chunk
	if err := json.Unmarshal([]byte(data), &ch); err != nil {
		f := wire.Malformed("malformed_chunk", fmt.Errorf("stream chunk: %v", err))
		return false, &f
	}
	if !wire.Absent(ch.Error) {
		f := errorInBody(ch.Error, "error_event")
		return false, &f
	}
	acc.SetID(ch.ID)
	acc.SetModel(ch.Model)
	if len(ch.Choices) > 0 {
		c := ch.Choices[0]
		acc.Text(wire.Text(c.Delta.Content))
		for _, tc := range c.Delta.ToolCalls {
			idx := acc.ToolCallCount() - 1
			switch {
			case tc.Index != nil:
				idx = *tc.Index
			case tc.ID != "" || idx < 0:
				idx = acc.ToolCallCount()
			}
			acc.ToolCall(ai.ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: wire.ArgumentsText(tc.Function.Arguments)})
		}
		if c.Delta.refused() {
			acc.SetFinish(ai.FinishFiltered)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			if *c.FinishReason == "error" {
				f := errorInBody(ch.Error, "error_finish")
				return false, &f
			}
			if acc.Finish() != ai.FinishFiltered {
				acc.SetFinish(finish(*c.FinishReason))
			}
		}
	}
	if ch.Usage != nil {
		acc.SetUsage(ch.Usage.usage())
	}
	return false, nil
}

// EOF implements wire.Decoder: without [DONE], only a stream that already
// sent its finish and usage counts as complete.
func (decoder) EOF(acc *wire.Acc) *ai.Failure {
	if acc.Finish() != "" && acc.HasUsage() {
		return nil
	}
	f := wire.ServerFailure("dropped", errors.New("the stream ended before [DONE]"))
	return &f
}
